//! The command line: arguments and the batch run. Exit codes: 0 all
//! passed, 1 an expectation failed, 2 invalid input, a run stopped at a
//! limit, or a usage error.

pub mod batch;
mod commands;
mod golden;
mod junit;
pub mod print;
pub mod reports;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::report::golden::Verdict;
use batch::Options;
use commands::{check, new_scenario, show};
use golden::{compare_goldens, golden_collision, with_goldens};
use junit::junit_xml;
use print::{batch_human, batch_json};

pub use commands::schema;
use reports::ReportFormat;

pub const EXIT_PASSED: u8 = 0;
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_INVALID: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "scenario-run",
    version,
    about = "Simulate retries, quarantine, redrive, retention and deduplication; check expected outcomes",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
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
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Run only scenarios whose name or path contains TEXT (case-insensitive).
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// Run only scenarios that carry this tag.
    #[arg(long, value_name = "TAG")]
    tag: Option<String>,
    /// Stop at the first scenario that fails (in input order).
    #[arg(long)]
    fail_fast: bool,
    /// Run only shard I of N (1-based): the files whose position in the
    /// expanded list is I, I+N, I+2N, ... (split a batch across CI machines).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Override every scenario's seed.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
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
        value_enum,
        value_delimiter = ',',
        default_value = "markdown,html,json",
        value_name = "FORMATS"
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
    },
    /// Write a commented starter scenario to NAME (NAME.toml if it has no
    /// extension); never overwrites a file.
    New {
        #[arg(value_name = "NAME")]
        name: String,
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
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
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
    if n == 0 || i == 0 || i > n {
        return Err(format!(
            "shard {i}/{n}: I must be between 1 and N, and N at least 1"
        ));
    }
    Ok((i, n))
}

/// The files of shard `i` of `n` (1-based), in order.
pub fn shard(files: Vec<String>, i: usize, n: usize) -> Vec<String> {
    files
        .into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i - 1)
        .map(|(_, f)| f)
        .collect()
}

fn parse_duration(s: &str) -> Result<u64, String> {
    crate::duration::parse(s).map_err(|e| e.to_string())
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                EXIT_INVALID
            } else {
                EXIT_PASSED
            });
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
        Some(Command::Check { files }) => check(&files, color),
        Some(Command::Show { file, at, seed }) => show(&file, at, seed, color),
        Some(Command::New { name }) => new_scenario(&name),
        Some(Command::Schema) => {
            println!("{}", schema());
            EXIT_PASSED
        }
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "scenario-run",
                &mut std::io::stdout(),
            );
            EXIT_PASSED
        }
        None => run(&cli.run, color),
    };
    ExitCode::from(code)
}

/// Expands quoted globs; literal paths are kept as given (a missing one is
/// reported when it is read).
pub fn expand(patterns: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in patterns {
        if p.contains(['*', '?', '[']) {
            let paths = glob::glob(p).map_err(|e| format!("invalid glob pattern {p:?}: {e}"))?;
            let mut matched: Vec<String> = paths
                .filter_map(Result::ok)
                .map(|path| path.to_string_lossy().into_owned())
                .collect();
            if matched.is_empty() {
                return Err(format!("no file matches {p:?}"));
            }
            matched.sort();
            out.extend(matched);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn run(args: &RunArgs, color: bool) -> u8 {
    let files = match expand(&args.files) {
        Ok(f) => match args.shard {
            Some((i, n)) => shard(f, i, n),
            None => f,
        },
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let templates = if args.report.is_some() || args.summary_markdown.is_some() {
        match crate::report::templates::Templates::load(args.templates.as_deref()) {
            Ok(t) => Some(t),
            Err(problems) => {
                reports::ReportError::Template(problems).print(color);
                return EXIT_INVALID;
            }
        }
    } else {
        None
    };
    let mut formats = args.report_format.clone();
    formats.sort();
    formats.dedup();
    let opts = Options {
        seed: args.seed,
        filter: args.filter.clone(),
        tag: args.tag.clone(),
        fail_fast: args.fail_fast,
        full_transcript: args.format == Format::Json
            || args.golden.is_some()
            || args.report.is_some(),
        census: args.report.is_some(),
    };
    if let Some(dir) = &args.golden
        && let Some((a, b)) = golden_collision(dir, &files)
    {
        eprintln!("error: {a} and {b} would share one golden file; give them different file names");
        return EXIT_INVALID;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let progress = progress_bar(args, files.len());
    let results = batch::run_all(&files, &opts, jobs, &|| progress.inc(1));
    progress.finish_and_clear();
    let goldens = compare_goldens(args.golden.as_deref(), args.bless, &files, &results);
    let failed_golden = |i: usize| goldens[i].as_ref().is_some_and(Verdict::failed);
    let passed = (0..results.len())
        .filter(|&i| results[i].counts() && results[i].passed() && !failed_golden(i))
        .count();
    let failed = (0..results.len())
        .filter(|&i| results[i].counts() && (!results[i].passed() || failed_golden(i)))
        .count();
    let code = if results.iter().any(|r| r.is_error()) {
        EXIT_INVALID
    } else if failed > 0 {
        EXIT_FAILED
    } else {
        EXIT_PASSED
    };
    if let Some(path) = &args.junit {
        let xml = junit_xml(&files, &results);
        if let Err(e) = crate::output::write_atomic(path, &xml) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return EXIT_INVALID;
        }
    }
    if let (Some(dir), Some(t)) = (&args.report, &templates) {
        match reports::write_reports(dir, &formats, t, &files, &results) {
            Ok(written) => {
                if !args.quiet && args.format == Format::Human {
                    eprintln!(
                        "reports: wrote {} files to {}",
                        written.len(),
                        dir.display()
                    );
                }
            }
            Err(e) => {
                e.print(color);
                return EXIT_INVALID;
            }
        }
    }
    if let (Some(path), Some(t)) = (&args.summary_markdown, &templates)
        && let Err(e) = reports::append_summary(path, t, &files, &results)
    {
        e.print(color);
        return EXIT_INVALID;
    }
    let mut out = std::io::stdout().lock();
    let _ = match args.format {
        Format::Json => writeln!(out, "{}", batch_json(&files, &results, passed, failed)),
        Format::Human => {
            let mut text = batch_human(&files, &results, passed, failed, args.quiet, color);
            if let Some(dir) = &args.golden {
                text = with_goldens(text, dir, &files, &goldens, args.quiet);
            }
            write!(out, "{text}")
        }
    };
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
