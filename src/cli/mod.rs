//! The command line: arguments, the batch run and its output, `check` and
//! `show`. Exit codes: 0 all passed, 1 an expectation failed, 2 invalid
//! input, a run stopped at a limit, or a usage error.

pub mod batch;
pub mod reports;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;

use crate::diagnostic::render;
use crate::engine::{self, Recorder};
use crate::report::{golden, json as rjson, text};
use batch::{FileResult, Options};
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

fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
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
    let results = batch::run_all_with(&files, &opts, jobs, &|| progress.inc(1));
    progress.finish_and_clear();
    let goldens = compare_goldens(args, &files, &results);
    let failed_golden = |i: usize| goldens[i].as_ref().is_some_and(golden::Verdict::failed);
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

/// The human-readable batch output: a status line per scenario, the
/// diagnostics of failures, and the closing `N passed, N failed`.
pub fn batch_human(
    files: &[String],
    results: &[FileResult],
    passed: usize,
    failed: usize,
    quiet: bool,
    color: bool,
) -> String {
    let mut out = String::new();
    let mut skipped = 0;
    for (path, r) in files.iter().zip(results) {
        match r {
            FileResult::Ran(ran) => {
                let total = ran.verdicts.len();
                if ran.failures.is_empty() {
                    if !quiet {
                        let what = if total == 0 {
                            "no expectations".to_string()
                        } else {
                            format!("{total} expectations")
                        };
                        out.push_str(&format!(
                            "{}  {path}  {} ({what})\n",
                            paint("PASS", "32", color),
                            ran.scenario.name
                        ));
                    }
                } else {
                    out.push_str(&format!(
                        "{}  {path}  {} ({} of {total} expectations failed)\n",
                        paint("FAIL", "31", color),
                        ran.scenario.name,
                        ran.failures.len()
                    ));
                    for p in &ran.failures {
                        out.push_str(&render(p, color));
                        out.push('\n');
                    }
                }
            }
            FileResult::Invalid(inv) => {
                let n = inv.problems.len();
                out.push_str(&format!(
                    "{}  {path}  invalid scenario ({n} problem{})\n",
                    paint("FAIL", "31", color),
                    if n == 1 { "" } else { "s" }
                ));
                for p in &inv.problems {
                    out.push_str(&render(p, color));
                    out.push('\n');
                }
            }
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => {
                out.push_str(&format!(
                    "{}  {path}  {} (stopped at a limit)\n",
                    paint("FAIL", "31", color),
                    scenario.name
                ));
                out.push_str(&render(
                    &batch::limit_problem(source, scenario, limit),
                    color,
                ));
                out.push('\n');
            }
            FileResult::Skipped => skipped += 1,
            FileResult::Filtered => {}
        }
    }
    if skipped > 0 {
        out.push_str(&format!(
            "{skipped} skipped after the first failure (--fail-fast)\n"
        ));
    }
    out.push_str(&format!("{passed} passed, {failed} failed\n"));
    out
}

/// The JSON batch document.
pub fn batch_json(
    files: &[String],
    results: &[FileResult],
    passed: usize,
    failed: usize,
) -> String {
    let scenarios: Vec<serde_json::Value> = files
        .iter()
        .zip(results)
        .filter(|(_, r)| r.counts())
        .map(|(path, r)| match r {
            FileResult::Ran(ran) => {
                let s = &ran.scenario;
                json!({
                    "file": path,
                    "name": s.name,
                    "seed": s.seed,
                    "status": if ran.failures.is_empty() { "passed" } else { "failed" },
                    "expectations": rjson::expectations(s, &ran.verdicts),
                    "totals": rjson::totals(&ran.outcome),
                    "drains": ran.outcome.drains,
                    "messages_listed": rjson::listed(&ran.outcome),
                    "messages": rjson::snapshot(s, &ran.outcome),
                    "transitions": rjson::transitions(s, &ran.outcome),
                    "ledger": rjson::ledger(s, &ran.outcome),
                    "problems": ran.failures.iter().map(|p| render(p, false)).collect::<Vec<_>>(),
                })
            }
            FileResult::Invalid(inv) => json!({
                "file": path,
                "status": "invalid",
                "problems": inv.problems.iter().map(|p| render(p, false)).collect::<Vec<_>>(),
            }),
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => json!({
                "file": path,
                "name": scenario.name,
                "seed": scenario.seed,
                "status": "stopped",
                "problems": [render(&batch::limit_problem(source, scenario, limit), false)],
            }),
            FileResult::Filtered | FileResult::Skipped => json!(null),
        })
        .collect();
    let doc = json!({
        "format_version": 1,
        "scenarios": scenarios,
        "passed": passed,
        "failed": failed,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn check(patterns: &[String], color: bool) -> u8 {
    let files = match expand(patterns) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let (mut valid, mut invalid) = (0, 0);
    for path in &files {
        let loaded = std::fs::read(path)
            .map_err(|e| e.to_string())
            .map(|bytes| crate::scenario::load_bytes(path, &bytes));
        match loaded {
            Ok(Ok(_)) => {
                valid += 1;
                println!("{}  {path}", paint("OK", "32", color));
            }
            Ok(Err(inv)) => {
                invalid += 1;
                println!("{}  {path}", paint("INVALID", "31", color));
                for p in &inv.problems {
                    println!("{}", render(p, color));
                }
            }
            Err(e) => {
                invalid += 1;
                println!(
                    "{}  {path}: cannot read: {e}",
                    paint("INVALID", "31", color)
                );
            }
        }
    }
    println!("{valid} valid, {invalid} invalid");
    if invalid > 0 {
        EXIT_INVALID
    } else {
        EXIT_PASSED
    }
}

fn show(path: &str, at: Option<u64>, seed: Option<u64>, color: bool) -> u8 {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return EXIT_INVALID;
        }
    };
    let (mut s, source) = match crate::scenario::load_bytes(path, &bytes) {
        Ok(ok) => ok,
        Err(inv) => {
            for p in &inv.problems {
                eprintln!("{}", render(p, color));
            }
            return EXIT_INVALID;
        }
    };
    if let Some(seed) = seed {
        s.seed = seed;
    }
    let result = match at {
        Some(t) => engine::run_until(&s, Recorder::All, t),
        None => engine::run(&s, Recorder::All),
    };
    match result {
        Ok(o) => {
            print!("{}", text::transcript(&s, &o));
            EXIT_PASSED
        }
        Err(limit) => {
            eprintln!(
                "{}",
                render(&batch::limit_problem(&source, &s, &limit), color)
            );
            EXIT_INVALID
        }
    }
}

fn golden_collision(dir: &std::path::Path, files: &[String]) -> Option<(String, String)> {
    let mut seen = std::collections::BTreeMap::new();
    for f in files {
        if let Some(other) = seen.insert(golden::path_for(dir, f), f.clone())
            && &other != f
        {
            return Some((other, f.clone()));
        }
    }
    None
}

/// Compares each scenario that ran with its golden file.
fn compare_goldens(
    args: &RunArgs,
    files: &[String],
    results: &[FileResult],
) -> Vec<Option<golden::Verdict>> {
    let Some(dir) = &args.golden else {
        return results.iter().map(|_| None).collect();
    };
    let bless = args.bless || std::env::var("SCENARIO_RUN_BLESS").is_ok_and(|v| v == "1");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    files
        .iter()
        .zip(results)
        .map(|(f, r)| match r {
            FileResult::Ran(ran) => {
                let actual = golden::transcript(&ran.scenario, &ran.outcome);
                Some(golden::check(&golden::path_for(dir, f), &actual, bless, ci))
            }
            _ => None,
        })
        .collect()
}

/// Inserts the golden verdicts before the closing line, and the command
/// that accepts the changes.
fn with_goldens(
    text: String,
    dir: &std::path::Path,
    files: &[String],
    goldens: &[Option<golden::Verdict>],
    quiet: bool,
) -> String {
    let (body, closing) = match text.trim_end_matches('\n').rsplit_once('\n') {
        Some((body, closing)) => (format!("{body}\n"), closing.to_string()),
        None => (String::new(), text.trim_end().to_string()),
    };
    let mut out = body;
    let mut to_bless = Vec::new();
    for (f, g) in files.iter().zip(goldens) {
        match g {
            Some(golden::Verdict::Written(p)) if !quiet => {
                out.push_str(&format!("golden  {f}: wrote {}\n", p.display()));
            }
            Some(golden::Verdict::Missing(p)) => {
                out.push_str(&format!(
                    "GOLDEN  {f}: missing {} (CI=true: not written)\n",
                    p.display()
                ));
                to_bless.push(f.clone());
            }
            Some(golden::Verdict::Differs(p, diff)) => {
                out.push_str(&format!(
                    "GOLDEN  {f}: the transcript differs from {}\n{diff}\n",
                    p.display()
                ));
                to_bless.push(f.clone());
            }
            Some(golden::Verdict::Error(p, e)) => {
                out.push_str(&format!("GOLDEN  {f}: cannot use {}: {e}\n", p.display()));
            }
            _ => {}
        }
    }
    if !to_bless.is_empty() {
        out.push_str(&format!(
            "to accept the new transcripts: scenario-run --golden {} --bless {}\n",
            dir.display(),
            to_bless.join(" ")
        ));
    }
    out.push_str(&closing);
    out.push('\n');
    out
}

/// The JUnit document of a batch.
fn junit_xml(files: &[String], results: &[FileResult]) -> String {
    use crate::report::junit::{Suite, document, failure_text};
    let suites: Vec<Suite> = files
        .iter()
        .zip(results)
        .filter_map(|(f, r)| match r {
            FileResult::Ran(ran) => {
                let mut failures = ran.failures.iter();
                let cases = ran
                    .verdicts
                    .iter()
                    .map(|v| {
                        let name = crate::expect::describe(
                            &ran.scenario,
                            &ran.scenario.expectations[v.index],
                        );
                        let failure = if v.passed {
                            None
                        } else {
                            failures.next().map(failure_text)
                        };
                        (name, failure)
                    })
                    .collect();
                Some(Suite {
                    name: ran.scenario.name.clone(),
                    file: f.clone(),
                    cases,
                })
            }
            FileResult::Invalid(inv) => Some(Suite {
                name: f.clone(),
                file: f.clone(),
                cases: vec![(
                    "valid scenario file".to_string(),
                    Some(
                        inv.problems
                            .iter()
                            .map(failure_text)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                )],
            }),
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => Some(Suite {
                name: scenario.name.clone(),
                file: f.clone(),
                cases: vec![(
                    "run finishes within its limits".to_string(),
                    Some(failure_text(&batch::limit_problem(source, scenario, limit))),
                )],
            }),
            FileResult::Filtered | FileResult::Skipped => None,
        })
        .collect();
    document(&suites)
}

/// The JSON Schema of the scenario format.
pub fn schema() -> String {
    let schema = schemars::schema_for!(crate::scenario::file::File);
    let mut schema = serde_json::to_value(&schema).unwrap_or_default();
    drop_null(&mut schema);
    schema["title"] = json!("scenario-run scenario file");
    schema["description"] = json!(
        "A scenario for scenario-run (TOML): messages, faults, retries, quarantine, \
         operator steps, deduplication and expected outcomes."
    );
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// TOML has no null (an absent key is the only "none"): removes the null
/// alternative schemars gives every `Option`.
fn drop_null(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type") != Some(&json!("null")));
                if any.len() == 1 {
                    let only = any.remove(0);
                    map.remove("anyOf");
                    if let serde_json::Value::Object(only) = only {
                        for (k, val) in only {
                            map.entry(k).or_insert(val);
                        }
                    }
                }
            }
            if let Some(serde_json::Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let t = types.remove(0);
                    map.insert("type".into(), t);
                }
            }
            map.values_mut().for_each(drop_null);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

const STARTER: &str = include_str!("starter.toml");

/// `new NAME`: a commented starter scenario that passes as written.
fn new_scenario(name: &str) -> u8 {
    let path = if std::path::Path::new(name).extension().is_some() {
        PathBuf::from(name)
    } else {
        PathBuf::from(format!("{name}.toml"))
    };
    let title = path
        .file_stem()
        .map(|s| s.to_string_lossy().replace(['-', '_'], " "))
        .unwrap_or_else(|| "New scenario".into());
    let text = STARTER
        .replace("{name}", &toml::Value::String(title).to_string())
        .replace("{file}", &path.display().to_string());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match file.and_then(|mut f| f.write_all(text.as_bytes())) {
        Ok(()) => {
            println!(
                "wrote {}; run it with: scenario-run {}",
                path.display(),
                path.display()
            );
            EXIT_PASSED
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!("error: {} already exists; not overwritten", path.display());
            EXIT_INVALID
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            EXIT_INVALID
        }
    }
}
