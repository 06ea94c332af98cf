//! The command line: arguments and the batch run. How a command ends is
//! an [`Exit`] (docs/cli.md, "Exit codes").

mod commands;
mod compare;
mod conform;
mod lab;
mod merge;
pub mod print;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::app::{
    BatchRequest, Exit, GoldenRequest, Options, ReportFormat, ReportRequest, Transcript, expand,
};
use commands::{check, new_scenario, show};
use merge::merge;
use print::{batch_github, batch_human, with_goldens, write_batch_json};

pub use crate::app::schema;

/// The files that files or quoted globs name, or the exit code of a
/// pattern that names none (said on standard error): a usage error.
fn files(patterns: &[String]) -> Result<Vec<String>, Exit> {
    expand(patterns).map_err(|e| {
        eprintln!("error: {e}");
        Exit::Usage
    })
}

#[derive(Debug, Parser)]
#[command(
    name = "scenario-run",
    version,
    about = "Simulate retries, quarantine, redrive, retention and deduplication; check expected outcomes",
    subcommand_negates_reqs = true,
    arg_required_else_help = true,
    override_usage = "scenario-run [OPTIONS] <FILES>...\n       scenario-run [--color <COLOR>] <COMMAND>"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
    /// When to colour the output; NO_COLOR turns colour off under auto.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    color: ColorChoice,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Scenario files, or quoted glob patterns such as "scenarios/*.toml".
    #[arg(required = true, value_name = "FILES")]
    files: Vec<String>,
    /// Number of scenarios run at once (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Run only scenarios whose name or path contains TEXT (case-insensitive).
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// Run only scenarios that carry one of these tags (case-insensitive;
    /// repeat the option or separate tags with commas).
    #[arg(long, value_name = "TAG", value_delimiter = ',')]
    tag: Vec<String>,
    /// Stop at the first scenario that fails (in input order).
    #[arg(long)]
    fail_fast: bool,
    /// Run only shard I of N (1-based), to split a batch across CI
    /// machines: the files at positions I, I+N, I+2N, ... of the expanded
    /// list, and every N-th point of each sweep. `merge` combines the
    /// shards' `--format json` results.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "bless")]
    shard: Option<(usize, usize)>,
    /// Override every scenario's seed (0 to 18446744073709551615; a file's
    /// `seed`, a TOML integer, goes up to 9223372036854775807).
    #[arg(long, value_name = "N", value_parser = seed_parser())]
    seed: Option<u64>,
    /// Write VALUE at PATH of every scenario, as if written in the file
    /// (repeatable): --set delivery.max_receives=5, --set traffic.1.count=100.
    /// On a swept path, fixes the sweep to that value.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_set)]
    sets: Vec<(String, String)>,
    /// Remove PATH, a key the file writes, from every scenario, as if not
    /// written (repeatable): --unset operator.1.only.
    #[arg(long = "unset", value_name = "PATH", value_parser = parse_unset)]
    unsets: Vec<(String, String)>,
    /// Print only failures and the closing line.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Compare each scenario's transcript with DIR/<file stem>.txt.
    #[arg(long, value_name = "DIR")]
    golden: Option<PathBuf>,
    /// With --golden: write the transcripts as the new golden files
    /// (also SCENARIO_RUN_BLESS=1).
    #[arg(long, requires = "golden")]
    bless: bool,
    /// Also write a JUnit XML file: a testsuite per scenario file, a
    /// testcase per expectation.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write a report per scenario and an index into DIR.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Report formats, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "markdown,html,json",
        value_name = "FORMATS",
        value_parser = report_format_parser(),
        requires = "report"
    )]
    report_format: Vec<ReportFormat>,
    /// Templates that override the built-in ones by file name
    /// (scenario.md.j2, scenario.html.j2, index.md.j2, index.html.j2,
    /// summary.md.j2).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Append a Markdown table of the batch to FILE (e.g. "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "FILE")]
    summary_markdown: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate scenario files without running them.
    Check {
        #[arg(required = true, value_name = "FILES")]
        files: Vec<String>,
        /// Write VALUE at PATH first (repeatable), as a run would.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_set)]
        sets: Vec<(String, String)>,
        /// Output format: problems for people, one JSON document, or
        /// GitHub Actions annotations.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Write a commented starter scenario to NAME (NAME.toml if it has no
    /// extension); never overwrites a file.
    New {
        #[arg(value_name = "NAME")]
        name: String,
        /// What the starter models: a queue, a partitioned log, one write
        /// to several sinks, or a dataflow snapshot.
        #[arg(long, value_enum, default_value_t = Starter::Queue)]
        kind: Starter,
    },
    /// Combine the results of the shards of a batch (`--shard I/N` runs'
    /// `--format json` output, or their reports' index.json) into one: the
    /// index files, junit.xml and reports in OUT_DIR, the status lines and
    /// the exit code of the unsharded run.
    Merge {
        /// Where the merged index files, junit.xml and reports go.
        #[arg(value_name = "OUT_DIR")]
        out_dir: PathBuf,
        /// The shards' JSON results (files or quoted globs), every shard once.
        #[arg(required = true, value_name = "SHARD_JSON")]
        inputs: Vec<String>,
        /// Formats of the index and of the reports of sweeps split across
        /// shards, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "markdown,html,json",
            value_name = "FORMATS",
            value_parser = report_format_parser()
        )]
        report_format: Vec<ReportFormat>,
        /// Templates that override the built-in ones by file name.
        #[arg(long, value_name = "DIR")]
        templates: Option<PathBuf>,
        /// Append a Markdown table of the batch to FILE (e.g. "$GITHUB_STEP_SUMMARY").
        #[arg(long, value_name = "FILE")]
        summary_markdown: Option<PathBuf>,
        /// The golden files the shards ran with (--golden DIR): the tables
        /// of sweeps whose points ran on several shards are compared here.
        #[arg(long, value_name = "DIR")]
        golden: Option<PathBuf>,
        /// Output format (json: the merged batch's record, as index.json).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Print only failures and the closing line.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Print the JSON Schema of the scenario format (for editors).
    Schema,
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print a scenario's transcript and its snapshot (at the end, or as of --at).
    Show {
        #[arg(value_name = "FILE")]
        file: String,
        /// Modeled time of the snapshot, e.g. "40s".
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        at: Option<u64>,
        /// Override the scenario's seed.
        #[arg(long, value_name = "N", value_parser = seed_parser())]
        seed: Option<u64>,
        /// Write VALUE at PATH first (repeatable); for a sweep, fix every
        /// swept path to show one point.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_set)]
        sets: Vec<(String, String)>,
        /// Remove PATH, a key the file writes, first (repeatable).
        #[arg(long = "unset", value_name = "PATH", value_parser = parse_unset)]
        unsets: Vec<(String, String)>,
    },
    /// Run two scenarios (or one with two sets of --set values) and print
    /// how their totals, messages and sinks differ; exit 0 when they do
    /// not, 1 when they do (docs/cli.md, "compare").
    Compare {
        /// Run A: a queue scenario file.
        #[arg(value_name = "A")]
        a: String,
        /// Run B (default: A again, with --set-b's values).
        #[arg(value_name = "B")]
        b: Option<String>,
        /// Write VALUE at PATH in both runs (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_set)]
        sets: Vec<(String, String)>,
        /// Write VALUE at PATH in run A only (repeatable; after --set).
        #[arg(long = "set-a", value_name = "PATH=VALUE", value_parser = parse_set)]
        set_a: Vec<(String, String)>,
        /// Write VALUE at PATH in run B only (repeatable; after --set).
        #[arg(long = "set-b", value_name = "PATH=VALUE", value_parser = parse_set)]
        set_b: Vec<(String, String)>,
        /// Override both scenarios' seed.
        #[arg(long, value_name = "N", value_parser = seed_parser())]
        seed: Option<u64>,
        /// Output format: the differences for people, or one JSON document.
        #[arg(long, value_enum, default_value_t = CompareFormat::Human)]
        format: CompareFormat,
        /// Also write compare.html (both timelines on one time axis),
        /// compare.md and compare.json into DIR.
        #[arg(long, value_name = "DIR")]
        report: Option<PathBuf>,
        /// Templates that override the built-in ones by file name.
        #[arg(long, value_name = "DIR")]
        templates: Option<PathBuf>,
    },
    /// Serve an interactive lab on 127.0.0.1: each scenario's HTML page
    /// with an experiment panel; a changed value runs it again, as --set
    /// would. Stops on Ctrl-C.
    Lab {
        /// Scenario files or quoted globs.
        #[arg(required = true, value_name = "FILES")]
        files: Vec<String>,
        /// The port on 127.0.0.1 (default: a free one, printed).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Open the lab's index in the default browser.
        #[arg(long)]
        open: bool,
        /// Override every scenario's seed.
        #[arg(long, value_name = "N", value_parser = seed_parser())]
        seed: Option<u64>,
        /// Templates that override the built-in ones by file name.
        #[arg(long, value_name = "DIR")]
        templates: Option<PathBuf>,
    },
    /// Run each file's messages through a real broker with a consumer
    /// that applies the file's faults, and compare what the broker did
    /// with the model's run (docs/conformance.md). Needs a build with
    /// `--features conform`.
    Conform {
        /// The broker: amqp://HOST:PORT for RabbitMQ.
        #[arg(long, value_name = "URL")]
        broker: String,
        /// Scenario files or quoted globs.
        #[arg(required = true, value_name = "FILES")]
        files: Vec<String>,
        /// Modeled milliseconds per real millisecond (default: per file,
        /// so that its run takes about 3 s).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        time_scale: Option<u64>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ConformFormat::Human)]
        format: ConformFormat,
        /// Also write a JUnit XML file: a testsuite per file, a testcase
        /// per message.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Also write conformance.html and conformance.json into DIR.
        #[arg(long, value_name = "DIR")]
        report: Option<PathBuf>,
        /// Templates that override the built-in ones by file name.
        #[arg(long, value_name = "DIR")]
        templates: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompareFormat {
    /// The differences, a table per section.
    Human,
    /// One JSON document: both runs, the counts, every difference kept.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ConformFormat {
    /// Status lines and differences.
    Human,
    /// One JSON document: each message as modeled and as observed.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Status lines and diagnostics, for people.
    Human,
    /// One JSON document.
    Json,
    /// Status lines and GitHub Actions `::error` annotations.
    Github,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("expected I/N such as 1/4, got {s:?}"))?;
    let i: usize = i
        .trim()
        .parse()
        .map_err(|_| format!("{i:?} is not a shard number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("{n:?} is not a shard count"))?;
    let most = crate::app::shards::MAX_SHARDS;
    if n == 0 || i == 0 || i > n || n > most {
        return Err(format!(
            "shard {i}/{n}: I must be between 1 and N, and N between 1 and {most}"
        ));
    }
    Ok((i, n))
}

/// `--seed`: any u64 (model decision 16.13: a file's `seed` is a TOML
/// integer, so it stops at 2^63 - 1; the command line has no such limit).
fn seed_parser() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=u64::MAX)
}

/// `--set PATH=VALUE`: split at the first `=`.
fn parse_set(s: &str) -> Result<(String, String), String> {
    let (path, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected PATH=VALUE such as delivery.max_receives=5, got {s:?}"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(format!("{s:?} names no path"));
    }
    Ok((path.to_string(), value.trim().to_string()))
}

/// `--unset PATH`: a set that removes PATH.
fn parse_unset(s: &str) -> Result<(String, String), String> {
    let path = s.trim();
    if path.is_empty() || path.contains('=') {
        return Err(format!(
            "expected a PATH such as operator.1.only, got {s:?}"
        ));
    }
    Ok((path.to_string(), crate::app::UNSET.to_string()))
}

fn parse_duration(s: &str) -> Result<u64, String> {
    crate::duration::parse(s).map_err(|e| e.to_string())
}

pub fn main() -> ExitCode {
    // A file-size limit (`ulimit -f`) makes a write fail with an error the
    // run reports, instead of killing the process half-way through a file.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" before any thread
    // starts; no handler runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(
                if e.use_stderr() {
                    Exit::Usage
                } else {
                    Exit::Passed
                }
                .code(),
            );
        }
    };
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let code = match cli.command {
        Some(Command::Check {
            files,
            sets,
            format,
        }) => check(&files, &sets, format, color),
        Some(Command::Show {
            file,
            at,
            seed,
            sets,
            unsets,
        }) => show(&file, &[sets, unsets].concat(), at, seed, color),
        Some(Command::New { name, kind }) => new_scenario(&name, kind),
        Some(Command::Lab {
            files,
            port,
            open,
            seed,
            templates,
        }) => lab::lab(&files, port, open, seed, templates.as_deref(), color),
        Some(Command::Compare {
            a,
            b,
            sets,
            set_a,
            set_b,
            seed,
            format,
            report,
            templates,
        }) => {
            let b = b.unwrap_or_else(|| a.clone());
            let with = |own: Vec<(String, String)>| sets.iter().cloned().chain(own).collect();
            compare::compare(&compare::Request {
                sides: [(a.as_str(), with(set_a)), (b.as_str(), with(set_b))],
                seed,
                json: format == CompareFormat::Json,
                report: report.as_deref(),
                templates: templates.as_deref(),
                color,
            })
        }
        Some(Command::Conform {
            broker,
            files,
            time_scale,
            format,
            junit,
            report,
            templates,
        }) => conform::conform(&conform::Request {
            url: &broker,
            patterns: &files,
            time_scale,
            json: format == ConformFormat::Json,
            junit: junit.as_deref(),
            report: report.as_deref(),
            templates: templates.as_deref(),
            color,
        }),
        Some(Command::Merge {
            out_dir,
            inputs,
            report_format,
            templates,
            summary_markdown,
            golden,
            format,
            quiet,
        }) => {
            let inputs = match files(&inputs) {
                Ok(files) => files.into_iter().map(PathBuf::from).collect(),
                Err(exit) => return ExitCode::from(exit.code()),
            };
            let request = crate::app::merge::MergeRequest {
                out_dir,
                inputs,
                formats: report_format,
                templates,
                summary_markdown,
                golden,
            };
            merge(&request, format, quiet, color)
        }
        Some(Command::Schema) => {
            print::emit(&format!("{}\n", schema()));
            Exit::Passed
        }
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "scenario-run", &mut script);
            let mut script = String::from_utf8_lossy(&script).into_owned();
            if shell == clap_complete::Shell::Bash {
                // clap_complete 4.6 names a subcommand's state
                // `scenario__run__subcmd__show` where it dispatches but
                // `scenario__subcmd__run__subcmd__show` in the case labels
                // (the `-` of the name read as a separator), so no subcommand
                // completed. One spelling for both.
                script = script.replace("scenario__subcmd__run", "scenario__run");
            }
            print::emit(&script);
            Exit::Passed
        }
        None => run(&cli.run, color),
    };
    if let Some(e) = print::write_failure() {
        eprintln!("error: cannot write to standard output: {e}");
        return ExitCode::from(Exit::Io.code());
    }
    ExitCode::from(code.code())
}

/// The starters `new` writes, each a commented file that passes as
/// written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Starter {
    /// Messages on a queue: retries, quarantine, the operator's redrive
    /// and deduplication.
    Queue,
    /// A partitioned log: records retried in place, a dead-letter topic,
    /// checkpoints.
    Log,
    /// One write to several sinks under a strategy (direct, outbox,
    /// two-phase commit, saga).
    Write,
    /// Operators joined by channels and a Chandy-Lamport snapshot.
    Dataflow,
}

/// The arguments. `--color` goes before or after a subcommand; an option of
/// a batch run given with a subcommand is refused rather than ignored.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches, parser::ValueSource};
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(std::env::args_os())?;
    if let Some((name, _)) = matches.subcommand() {
        let misplaced = command
            .get_arguments()
            .filter(|a| !a.is_global_set())
            .find(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine));
        if let Some(arg) = misplaced {
            let option = arg
                .get_long()
                .map_or_else(|| arg.get_id().to_string(), |l| format!("--{l}"));
            return Err(command.error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{option} applies to running scenarios, not to `{name}`"),
            ));
        }
    }
    Cli::from_arg_matches(&matches)
}

/// `--report-format` values: the names `ReportFormat` knows, listed in
/// clap's errors and help.
fn report_format_parser() -> impl clap::builder::TypedValueParser<Value = ReportFormat> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(ReportFormat::ALL.map(|(name, _)| name))
        .try_map(|name: String| ReportFormat::from_name(&name).ok_or("unknown report format"))
}

/// What the runs record of their transcript: golden files and the
/// Markdown and HTML reports read it more than once; JSON (the output and
/// the JSON report) writes it once, as the run is played again.
fn transcript(args: &RunArgs) -> Transcript {
    let report = args.report.is_some();
    let templated = report && args.report_format.iter().any(|&f| f != ReportFormat::Json);
    if args.golden.is_some() || templated {
        Transcript::Kept
    } else if args.format == Format::Json || report {
        Transcript::Replayed
    } else {
        Transcript::None
    }
}

/// What the arguments ask the application to do.
fn request(args: &RunArgs, files: Vec<String>) -> BatchRequest {
    BatchRequest {
        files,
        options: Options {
            seed: args.seed,
            filter: args.filter.clone(),
            tag: args.tag.clone(),
            fail_fast: args.fail_fast,
            transcript: transcript(args),
            census: args.report.is_some(),
            sets: [args.sets.clone(), args.unsets.clone()].concat(),
            shard: args.shard,
        },
        jobs: args.jobs.map(usize::from),
        golden: args.golden.clone().map(|dir| GoldenRequest {
            dir,
            bless: args.bless,
        }),
        junit: args.junit.clone(),
        report: args.report.clone().map(|dir| ReportRequest {
            dir,
            formats: args.report_format.clone(),
        }),
        summary_markdown: args.summary_markdown.clone(),
        templates: args.templates.clone(),
    }
}

/// Runs a batch: the arguments become a request, the application runs it,
/// and what it returns is printed.
fn run(args: &RunArgs, color: bool) -> Exit {
    if args.templates.is_some() && args.report.is_none() && args.summary_markdown.is_none() {
        eprintln!("error: --templates does nothing without --report or --summary-markdown");
        return Exit::Usage;
    }
    let files = match files(&args.files) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let request = request(args, files);
    let progress = progress_bar(args, request.files.len());
    let outcome = crate::app::run_batch(&request, &|| progress.inc(1));
    progress.finish_and_clear();
    let batch = match outcome {
        Ok(batch) => batch,
        Err(e) => {
            eprint!("{}", e.render(color));
            return e.exit();
        }
    };
    if let Some(report) = &request.report
        && !args.quiet
        && args.format == Format::Human
    {
        eprintln!(
            "reports: wrote {} files to {}",
            batch.reports_written.len(),
            report.dir.display()
        );
    }
    let code = merge::record_code(&batch.record);
    let (files, results) = (&batch.files, &batch.results);
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => write_batch_json(&mut out, files, results, &batch.goldens, &batch.record)
            .and_then(|()| writeln!(out)),
        Format::Github => write!(out, "{}", batch_github(&batch.record, args.quiet)),
        Format::Human => {
            let mut text = batch_human(results, &batch.record, args.quiet, color);
            if let Some(dir) = &args.golden {
                text = with_goldens(
                    text,
                    dir,
                    files,
                    &batch.goldens,
                    args.quiet,
                    args.seed,
                    &[args.sets.clone(), args.unsets.clone()].concat(),
                );
            }
            write!(out, "{text}")
        }
    };
    print::wrote(written.and_then(|()| out.flush()));
    code
}

/// A progress bar on stderr for batches of several files, only when stderr
/// is a terminal and the output is for people.
fn progress_bar(args: &RunArgs, files: usize) -> indicatif::ProgressBar {
    if files < 2 || args.quiet || args.format != Format::Human || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} scenarios  {elapsed}")
    {
        bar.set_style(style);
    }
    bar
}
