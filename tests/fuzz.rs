//! A standing fuzz harness that runs on stable, in every `cargo test`:
//! files from a corpus (the bundled scenarios, tests/bad and
//! tests/failing) mutated a few ways at once (bytes inserted, lines
//! dropped, repeated or borrowed from another file, values swapped for
//! boundary values), then read, validated, run under small limits and
//! judged, with every output a user can ask for: the terminal (human,
//! JSON, GitHub), golden transcripts, JUnit, the step summary, and
//! Markdown, HTML and JSON reports.
//!
//! Whatever the input, nothing may panic or hang, every output must be
//! free of control characters other than newline and tab (a file cannot
//! drive the reader's terminal), and no HTML report may carry a
//! `javascript:` link.
//!
//! `FUZZ_CASES=50000 cargo test --release --test fuzz` runs it longer; a
//! failing case is shrunk and saved by proptest
//! (tests/fuzz.proptest-regressions), then replayed by every run. A case
//! that makes the tool hold more than 2 GiB ends the process ("memory
//! allocation ... failed") instead of the machine's memory; rerun with
//! `FUZZ_LOG=case.toml` and the file holds the case that did it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, refusing to hold more than [`MEMORY_CAP`].
struct Capped;

const MEMORY_CAP: usize = 2 << 30;
static HELD: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > MEMORY_CAP {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;

use proptest::prelude::*;
use scenario_run::app::{self, GoldenRequest, ReportFormat, ReportRequest};
use scenario_run::cli::print;

/// The corpus: every file of scenarios/, tests/bad and tests/failing,
/// read once.
fn corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["scenarios", "tests/bad", "tests/failing"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            paths.sort();
            for p in paths {
                let bytes = std::fs::read(&p).unwrap();
                files.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        assert!(files.len() > 60, "the corpus is the bundled and test files");
        files
    })
}

/// Values a mutation puts in place of a key's value: limits, zero,
/// negatives, huge numbers, wrong types, hostile text.
const BOUNDARY: &[&str] = &[
    "0",
    "1",
    "-1",
    "4000000000",
    "18446744073709551615",
    "1e308",
    "nan",
    "true",
    "\"0s\"",
    "\"1ms\"",
    "\"999999999d\"",
    "\" 1s \"",
    "\"unlimited\"",
    "\"\"",
    "[]",
    "{}",
    "\"javascript:alert(1)\"",
    "\"[x](javascript:alert(1))\"",
    "\"a|b\\nc\"",
    "\"\\u001b[31mred\"",
    "\"\\u0007\\r\"",
    "\"<script>alert(1)</script>\"",
    "\"{{ 7 * 7 }}\"",
    "\"poisson\"",
    "\"per_key\"",
    "\"write_intent\"",
    "\"sqs-standard\"",
    "\"rabbitmq-quorum\"",
];

/// One mutation, applied to a file's lines.
#[derive(Debug, Clone)]
enum Mutation {
    /// Text inserted at a byte offset (moved to a character boundary).
    Insert(usize, String),
    DropLine(usize),
    RepeatLine(usize),
    /// A line of another corpus file, inserted before a line.
    Borrow {
        file: usize,
        line: usize,
        at: usize,
    },
    /// The value of a `key = value` line replaced.
    Value(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    // Boundary values find the most: twice as likely as the others.
    prop_oneof![
        1 => (any::<usize>(), "[ -~\n]{0,16}").prop_map(|(at, s)| Mutation::Insert(at, s)),
        1 => any::<usize>().prop_map(Mutation::DropLine),
        1 => any::<usize>().prop_map(Mutation::RepeatLine),
        1 => (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(file, line, at)| Mutation::Borrow { file, line, at }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(line, v)| Mutation::Value(line, v)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let corpus = corpus();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match m {
        Mutation::Insert(at, s) => {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            return format!("{}{s}{}", &text[..at], &text[at..]);
        }
        Mutation::DropLine(i) if !lines.is_empty() => {
            lines.remove(i % n);
        }
        Mutation::RepeatLine(i) if !lines.is_empty() => {
            let line = lines[i % n].clone();
            lines.insert(i % n, line);
        }
        Mutation::Borrow { file, line, at } => {
            let other: Vec<&str> = corpus[file % corpus.len()].lines().collect();
            if !other.is_empty() {
                lines.insert(
                    at % (lines.len() + 1),
                    other[line % other.len()].to_string(),
                );
            }
        }
        Mutation::Value(i, v) => {
            // The i-th `key = value` line, counting round the file.
            let assignments: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains(" = "))
                .collect();
            if !assignments.is_empty() {
                let k = assignments[i % assignments.len()];
                let key = lines[k].split(" = ").next().unwrap_or("").to_string();
                lines[k] = format!("{key} = {}", BOUNDARY[v % BOUNDARY.len()]);
            }
        }
        _ => {}
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A character that would drive a terminal or break a line-based format.
fn control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn check_output(what: &str, text: &str) -> Result<(), TestCaseError> {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| control(c)) {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(60)
            .map_or(0, |(i, _)| i);
        return Err(TestCaseError::fail(format!(
            "{what}: control character {c:?} at byte {at}: {:?}",
            &text[from..(at + 8).min(text.len())]
        )));
    }
    if what.ends_with(".html") && text.to_lowercase().contains("href=\"javascript:") {
        return Err(TestCaseError::fail(format!("{what}: a javascript: link")));
    }
    Ok(())
}

/// Runs one file through everything the command line can do with it,
/// under small limits, and checks every output.
fn everything(text: &str) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("case.toml");
    std::fs::write(&file, text).unwrap();
    let file = file.display().to_string();
    let request = app::BatchRequest {
        files: vec![file],
        options: app::Options {
            transcript: app::Transcript::Kept,
            census: true,
            // Small limits: the engine runs whatever the mutation asked
            // for, and stops soon.
            sets: vec![
                ("limits.max_events".into(), "20000".into()),
                ("limits.max_messages".into(), "50000".into()),
            ],
            ..app::Options::default()
        },
        jobs: Some(1),
        golden: Some(GoldenRequest {
            dir: dir.path().join("golden"),
            bless: true,
        }),
        junit: Some(dir.path().join("junit.xml")),
        report: Some(ReportRequest {
            dir: dir.path().join("reports"),
            formats: vec![
                ReportFormat::Markdown,
                ReportFormat::Html,
                ReportFormat::Json,
            ],
        }),
        summary_markdown: Some(dir.path().join("summary.md")),
        templates: None,
    };
    let batch = match app::run_batch(&request, &|| {}) {
        Ok(b) => b,
        Err(e @ app::BatchError::Usage(_)) => return check_output("usage error", &e.to_string()),
        Err(e) => return check_output("output error", &e.render(false)),
    };
    check_output(
        "terminal",
        &print::batch_human(&batch.results, &batch.record, false, false),
    )?;
    check_output("github", &print::batch_github(&batch.record, false))?;
    // JSON escapes what it carries; it must parse.
    let json = print::batch_json(&batch.files, &batch.results, &batch.goldens, &batch.record);
    let kept: serde_json::Value = serde_json::from_str(&json).expect("the JSON output parses");
    // `--format json` alone plays the run again for its transitions:
    // each scenario's transitions, ledger and totals are the ones a kept
    // transcript gives, whatever the mutation (limits, stops) did.
    let replayed_request = app::BatchRequest {
        options: app::Options {
            transcript: app::Transcript::Replayed,
            census: false,
            ..request.options.clone()
        },
        golden: None,
        junit: None,
        report: None,
        summary_markdown: None,
        ..request
    };
    if let Ok(replayed) = app::run_batch(&replayed_request, &|| {}) {
        let json = print::batch_json(
            &replayed.files,
            &replayed.results,
            &replayed.goldens,
            &replayed.record,
        );
        let replayed: serde_json::Value = serde_json::from_str(&json).unwrap();
        // The census and the golden verdict are the kept run's alone.
        for (r, k) in replayed["scenarios"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(kept["scenarios"].as_array().into_iter().flatten())
        {
            for list in [
                "transitions_recorded",
                "transitions",
                "transitions_dropped",
                "ledger",
                "totals",
            ] {
                prop_assert_eq!(&r[list], &k[list], "{}", list);
            }
        }
    }
    for written in std::fs::read_dir(dir.path().join("reports"))
        .into_iter()
        .flatten()
        .chain(
            std::fs::read_dir(dir.path().join("golden"))
                .into_iter()
                .flatten(),
        )
    {
        let path = written.unwrap().path();
        let out = std::fs::read_to_string(&path).unwrap();
        check_output(&path.display().to_string(), &out)?;
    }
    for extra in ["junit.xml", "summary.md"] {
        if let Ok(out) = std::fs::read_to_string(dir.path().join(extra)) {
            check_output(extra, &out)?;
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(48)
}

#[test]
fn every_corpus_file_goes_through_everything() {
    for (i, text) in corpus().iter().enumerate() {
        if let Err(e) = everything(text) {
            panic!("corpus file {i}: {e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_files_never_break_the_tool_or_its_outputs(
        file in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        let corpus = corpus();
        let mut text = corpus[file % corpus.len()].clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        if let Ok(path) = std::env::var("FUZZ_LOG") {
            std::fs::write(path, &text).unwrap();
        }
        everything(&text)?;
    }
}
