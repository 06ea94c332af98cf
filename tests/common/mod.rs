//! What the integration tests share: running the binary, scratch folders,
//! and the check that a run played again reads what a kept run keeps.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scenario-run"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env_remove("NO_COLOR");
    c.env_remove("CI");
    c.env_remove("SCENARIO_RUN_BLESS");
    c
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8 output")
}

pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

/// An empty scratch folder of this test's own, removed when the test ends
/// (passed or failed: it is removed when the value is dropped, also while
/// a failed assertion unwinds), so that tests leave nothing in the
/// temporary folder.
pub fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("scenario-run-it-{name}"))
}

/// A folder under the temporary folder, removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    /// An empty `<temp>/<prefix>-<pid>`.
    pub fn new(prefix: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch folder");
        Scratch(d)
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    /// Removes the folder. A browser killed just before may still be
    /// writing its profile into it (seen: a playback test's folder left
    /// behind with `profile/` in it), so a failed removal is tried again,
    /// for up to 2 s.
    fn drop(&mut self) {
        for _ in 0..40 {
            match std::fs::remove_dir_all(&self.0) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                _ => return,
            }
        }
        eprintln!("warning: could not remove {}", self.0.display());
    }
}

/// Files directly in `dir`, sorted.
pub fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Runs FILES quietly with `--report DIR --report-format FORMATS`.
pub fn report(dir: &std::path::Path, formats: &str, files: &[&str]) -> Output {
    let mut args = vec![
        "--quiet",
        "--report",
        dir.to_str().expect("UTF-8 path"),
        "--report-format",
        formats,
    ];
    args.extend(files);
    run(&args)
}

/// Whether a tool a test needs is present. Without it the test is skipped
/// with a message, except under `CI=true` (`.ci/run` installs it), where
/// that is a failure.
pub fn available<T>(tool: Option<T>, what: &str) -> Option<T> {
    if tool.is_none() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{what} is missing; .ci/run installs it");
        }
        eprintln!("SKIPPED: {what} is missing (see .ci/run)");
    }
    tool
}

/// A snapshot row as the HTML table's cells show it.
pub fn cells(r: scenario_run::words::line::Row) -> Vec<String> {
    let d = |v: Option<u64>| v.map_or("-".to_string(), scenario_run::duration::format);
    vec![
        r.id,
        r.key,
        r.state.as_str().to_string(),
        r.last_reason.unwrap_or_else(|| "-".into()),
        r.cycle.to_string(),
        r.cycle_receives.to_string(),
        r.total_receives.to_string(),
        r.effects.to_string(),
        r.dedup_hits.to_string(),
        d(r.last_quarantined_at),
        d(r.age),
    ]
}

/// The cells of a row as the HTML page shows them: a waiting message is
/// "not arrived" before its first delivery and "waiting for retry" after.
#[allow(dead_code)]
pub fn page_cells(r: scenario_run::words::line::Row) -> Vec<String> {
    let shown = match (r.state.as_str(), r.total_receives) {
        ("waiting", 0) => "not arrived",
        ("waiting", _) => "waiting for retry",
        (state, _) => state,
    }
    .to_string();
    let mut cells = cells(r);
    cells[2] = shown;
    cells
}

/// The address `scenario-run lab` prints on its first line
/// (`lab: http://127.0.0.1:PORT/ (...)`), read from its output.
pub fn lab_url(out: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    out.read_line(&mut line).expect("the lab's first line");
    line.split_whitespace()
        .nth(1)
        .expect("lab: URL")
        .to_string()
}

/// Chromium: `SCENARIO_RUN_CHROMIUM`, or the first on PATH.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SCENARIO_RUN_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Played again (as a JSON document writes it), the run records what a
/// run that keeps everything (`all`) kept; counted and not kept
/// (`Recorder::Replayed`), it keeps no transition, drops alike and keeps
/// the same ledger and totals.
pub fn replays_alike(
    scenario: &scenario_run::model::Scenario,
    all: &scenario_run::engine::Outcome,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prop_assert_eq;
    use scenario_run::engine::{self, Recorder};
    let replayed: Vec<_> = engine::Replay::new(scenario).collect();
    prop_assert_eq!(&replayed, &all.transitions);
    let counted = engine::run(scenario, Recorder::Replayed).expect("a run that finished before");
    proptest::prop_assert!(counted.transitions.is_empty());
    prop_assert_eq!(&counted.ledger, &all.ledger);
    prop_assert_eq!(&counted.totals, &all.totals);
    prop_assert_eq!(counted.transitions_dropped, all.transitions_dropped);
    Ok(())
}

/// How many scenario files are bundled (`scenarios/*.toml`).
pub fn bundled_files() -> usize {
    std::fs::read_dir("scenarios")
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count()
}

/// The timeline legend of an HTML report page: its `<ul class="legend">`
/// up to its end.
pub fn legend(page: &str) -> &str {
    let at = page.find("<ul class=\"legend\">").expect("a legend");
    &page[at..at + page[at..].find("</ul>").expect("the legend's end")]
}
