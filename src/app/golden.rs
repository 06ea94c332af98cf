//! Golden transcripts (`--golden DIR`): each scenario's stable text
//! transcript compared with a committed file, so that a model change that
//! moves any number is seen.

use std::path::{Path, PathBuf};

use similar::TextDiff;

use super::batch::FileResult;
use crate::diagnostic::Located;
use crate::engine::{self, LimitReached, Outcome, Recorder};
use crate::model::{Millis, Scenario};
use crate::output::write_in_folder;
use crate::report::text::golden_transcript;

/// The run a golden transcript (and `show`) reads: every transition up to
/// `FULL_TRANSCRIPT_MESSAGES` messages; past that none (drains, totals
/// and the snapshot's head), so that showing ten million messages costs
/// what running them does. Stopped at `at` when given (`show --at`).
pub fn transcript_run(scenario: &Scenario, at: Option<Millis>) -> Result<Outcome, LimitReached> {
    let recorder = if scenario.message_count() <= engine::FULL_TRANSCRIPT_MESSAGES {
        Recorder::All
    } else {
        Recorder::Off
    };
    match at {
        Some(t) => engine::run_until(scenario, recorder, t),
        None => engine::run(scenario, recorder),
    }
}

/// Where a scenario's golden file lives: `DIR/<file stem>.txt`.
pub fn path_for(dir: &Path, scenario_path: &str) -> PathBuf {
    let stem = Path::new(scenario_path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".to_string());
    dir.join(format!("{stem}.txt"))
}

/// The word of a golden comparison left to `merge`.
pub const GOLDEN_AT_MERGE: &str = "merge";

/// The result of comparing one transcript with its golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Same(PathBuf),
    /// Written: blessed, or missing outside CI.
    Written(PathBuf),
    /// Missing under CI.
    Missing(PathBuf),
    /// Different: a unified diff from golden to actual.
    Differs(PathBuf, String),
    /// The file could not be read or written.
    Error(PathBuf, String),
    /// Left to `merge`: this shard ran only some of the sweep's points, so
    /// `merge` compares the table it reassembles.
    AtMerge(PathBuf),
}

impl Verdict {
    pub fn failed(&self) -> bool {
        matches!(
            self,
            Verdict::Missing(_) | Verdict::Differs(..) | Verdict::Error(..)
        )
    }
}

impl Verdict {
    /// The golden file.
    pub fn path(&self) -> &Path {
        let (Verdict::Same(p)
        | Verdict::Written(p)
        | Verdict::Missing(p)
        | Verdict::Differs(p, _)
        | Verdict::Error(p, _)
        | Verdict::AtMerge(p)) = self;
        p
    }

    /// The word JSON and the index use: same, written, missing, differs
    /// or error.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Same(_) => "same",
            Verdict::Written(_) => "written",
            Verdict::Missing(_) => "missing",
            Verdict::Differs(..) => "differs",
            Verdict::Error(..) => "error",
            Verdict::AtMerge(_) => GOLDEN_AT_MERGE,
        }
    }

    /// Why the comparison failed, as the status line says it.
    pub fn why(&self) -> Option<&'static str> {
        why(self.word())
    }

    /// A failed comparison as a problem of the scenario file (about the
    /// file as a whole: no line), its text the diff or the reason.
    pub fn problem(&self, file: &str) -> Option<Located> {
        let (message, text) = match self {
            Verdict::Missing(p) => (
                format!("golden transcript {} is missing", p.display()),
                "CI=true: not written; run with --bless to write it\n".to_string(),
            ),
            Verdict::Differs(p, diff) => (
                format!("the transcript differs from {}", p.display()),
                format!("{diff}\n"),
            ),
            Verdict::Error(p, e) => (format!("cannot use {}: {e}", p.display()), String::new()),
            Verdict::Same(_) | Verdict::Written(_) | Verdict::AtMerge(_) => return None,
        };
        Some(Located {
            file: file.to_string(),
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            text: format!("  × {message}\n{text}"),
            message,
            label: None,
            help: None,
        })
    }

    /// The verdict in JSON: `{"file": ..., "status": ...}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({ "file": self.path().display().to_string(), "status": self.word() })
    }
}

/// Why a comparison with this word (see [`Verdict::word`]) failed, as
/// the status line says it.
pub fn why(word: &str) -> Option<&'static str> {
    match word {
        "missing" => Some("its golden transcript is missing"),
        "differs" => Some("its transcript differs from the golden one"),
        "error" => Some("its golden transcript cannot be used"),
        _ => None,
    }
}

/// A file's status with its golden verdict: a scenario whose expectations
/// all pass but whose golden transcript does not match has failed.
pub fn status(result: &FileResult, verdict: Option<&Verdict>) -> &'static str {
    match result.status() {
        "passed" if verdict.is_some_and(Verdict::failed) => "failed",
        other => other,
    }
}

/// A file's problems, its golden comparison's included.
pub fn problems(file: &str, result: &FileResult, verdict: Option<&Verdict>) -> Vec<Located> {
    let mut all = result.problems();
    all.extend(verdict.and_then(|v| v.problem(file)));
    all
}

/// A diff shows at most this many lines.
pub const MAX_DIFF_LINES: usize = 400;

/// The diff from a golden file to the actual transcript: unified, with 3
/// lines of context; its search stops after a second (then it is coarser,
/// never wrong) and it shows at most [`MAX_DIFF_LINES`] lines, saying where
/// the first difference is and how many lines were left out.
fn diff(path: &Path, golden: &str, actual: &str) -> String {
    let name = path.display().to_string();
    let text = TextDiff::configure()
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(golden, actual)
        .unified_diff()
        .context_radius(3)
        .header(&name, "actual run")
        .to_string();
    // A golden file is text from outside: what it holds reaches the
    // terminal, annotations and reports, never as a control character.
    let text = crate::diagnostic::visible(&text);
    let total = text.lines().count();
    if total <= MAX_DIFF_LINES {
        return text;
    }
    let first = golden
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| golden.lines().count().min(actual.lines().count()))
        + 1;
    let mut shown: String = text
        .lines()
        .take(MAX_DIFF_LINES)
        .flat_map(|l| [l, "\n"])
        .collect();
    shown.push_str(&format!(
        "... {} more lines of diff not shown; the transcripts first differ at line {first}\n",
        total - MAX_DIFF_LINES
    ));
    shown
}

/// Compares (or writes) one golden file. The folder is one a repository
/// holds, so what is at `path` is data: it is read only if it is a regular
/// file of at most [`MAX_GOLDEN_BYTES`] (a link, a FIFO or a device is
/// refused, never followed, waited on or read), and written only as a
/// new regular file, never through a link.
pub fn check(path: &Path, actual: &str, bless: bool, ci: bool) -> Verdict {
    if bless {
        return write(path, actual);
    }
    match check_only(path, actual) {
        Verdict::Missing(_) if !ci => write(path, actual),
        verdict => verdict,
    }
}

/// Writes a golden file (blessed, or missing outside CI).
fn write(path: &Path, actual: &str) -> Verdict {
    match write_in_folder(path, actual) {
        Ok(()) => Verdict::Written(path.to_path_buf()),
        Err(e) => Verdict::Error(path.to_path_buf(), e.to_string()),
    }
}

/// Compares `actual` with the golden file `path` without ever writing it
/// (`merge`: blessing is done by a whole run on one machine); the file is
/// read as [`check`] says, and one that is not there is missing.
pub fn check_only(path: &Path, actual: &str) -> Verdict {
    match read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(golden) if golden == actual => Verdict::Same(path.to_path_buf()),
            Ok(golden) => Verdict::Differs(path.to_path_buf(), diff(path, &golden, actual)),
            Err(_) => Verdict::Error(path.to_path_buf(), "not UTF-8 text".to_string()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Verdict::Missing(path.to_path_buf()),
        Err(e) => Verdict::Error(path.to_path_buf(), e.to_string()),
    }
}

/// The bytes of the golden file `path`, read only if it is a regular file
/// of at most [`MAX_GOLDEN_BYTES`]: a link (wherever it leads), a FIFO, a
/// device or a larger file is refused with a message that says which,
/// never followed, waited on or read.
fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let refused = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(refused(format!(
            "it is {}, not a regular file: a golden file is read only as a regular file in its \
             folder, never through a link or from a special file",
            crate::output::what_is(&meta)
        )));
    }
    if meta.len() > MAX_GOLDEN_BYTES {
        return Err(refused(format!(
            "it is {} bytes, more than the {} MiB a golden file may hold",
            meta.len(),
            MAX_GOLDEN_BYTES >> 20
        )));
    }
    // Opened without following a link and without waiting, in case the
    // file was swapped since it was looked at.
    crate::output::read_regular(path, MAX_GOLDEN_BYTES)
}

/// A golden file is read up to this size; a larger one is refused, not
/// read. A transcript keeps at most `engine::TRANSITIONS_KEPT` transitions
/// (a line each, about 90 bytes), and a sweep's table of 1,000 points is
/// well under a megabyte, so no golden file the tool writes comes near.
pub const MAX_GOLDEN_BYTES: u64 = 256 << 20;

/// Two files of the batch that would share one golden file.
pub fn collision(dir: &Path, files: &[String]) -> Option<(String, String)> {
    let mut seen = std::collections::BTreeMap::new();
    for f in files {
        if let Some(other) = seen.insert(path_for(dir, f), f.clone())
            && &other != f
        {
            return Some((other, f.clone()));
        }
    }
    None
}

/// Compares each scenario that ran with its golden file in `dir` (or
/// writes it: blessed, or missing outside CI).
pub fn compare(
    dir: &Path,
    bless: bool,
    files: &[String],
    results: &[FileResult],
) -> Vec<Option<Verdict>> {
    let bless = bless || std::env::var("SCENARIO_RUN_BLESS").is_ok_and(|v| v == "1");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    files
        .iter()
        .zip(results)
        .map(|(f, r)| match r {
            FileResult::Ran(ran) => {
                let actual = golden_transcript(&ran.scenario, &ran.outcome);
                Some(check(&path_for(dir, f), &actual, bless, ci))
            }
            FileResult::Dataflow(d) => d.run.as_ref().ok().map(|outcome| {
                let actual = crate::dataflow::text::transcript(&d.flow, outcome, None);
                check(&path_for(dir, f), &actual, bless, ci)
            }),
            FileResult::Swept(sweep) if sweep.points.len() < sweep.points_total => {
                Some(Verdict::AtMerge(path_for(dir, f)))
            }
            FileResult::Swept(sweep) => {
                Some(check(&path_for(dir, f), &sweep.transcript(), bless, ci))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::write_atomic;

    fn dir(name: &str) -> crate::output::TestDir {
        crate::output::TestDir::new(&format!("scenario-run-golden-{name}"))
    }

    #[test]
    fn missing_is_written_outside_ci_and_fails_in_ci() {
        let d = dir("missing");
        let p = d.join("a.txt");
        assert_eq!(check(&p, "x\n", false, true), Verdict::Missing(p.clone()));
        assert!(!p.exists());
        assert_eq!(check(&p, "x\n", false, false), Verdict::Written(p.clone()));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x\n");
        assert_eq!(check(&p, "x\n", false, true), Verdict::Same(p.clone()));
    }

    #[test]
    fn a_difference_is_a_unified_diff_and_bless_accepts_it() {
        let d = dir("diff");
        let p = d.join("a.txt");
        write_atomic(&p, "one\ntwo\nthree\n").unwrap();
        match check(&p, "one\n2\nthree\n", false, false) {
            Verdict::Differs(_, diff) => {
                assert!(diff.contains("-two\n"), "{diff}");
                assert!(diff.contains("+2\n"), "{diff}");
                assert!(diff.contains("+++ actual run"), "{diff}");
            }
            other => panic!("expected a diff, got {other:?}"),
        }
        assert_eq!(
            check(&p, "one\n2\nthree\n", true, true),
            Verdict::Written(p.clone())
        );
        assert_eq!(
            check(&p, "one\n2\nthree\n", false, true),
            Verdict::Same(p.clone())
        );
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }

    #[test]
    fn a_large_difference_is_cut_and_says_where_it_starts() {
        let golden: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let actual: String = (0..20_000)
            .map(|i| {
                if i < 5 {
                    format!("line {i}\n")
                } else {
                    format!("other {i}\n")
                }
            })
            .collect();
        let shown = diff(Path::new("g.txt"), &golden, &actual);
        assert_eq!(shown.lines().count(), MAX_DIFF_LINES + 1);
        assert!(
            shown.ends_with("not shown; the transcripts first differ at line 6\n"),
            "{}",
            &shown[shown.len() - 200..]
        );
    }

    #[test]
    fn golden_files_are_named_for_the_scenario_file() {
        assert_eq!(
            path_for(Path::new("reports/golden"), "scenarios/02-repair.toml"),
            Path::new("reports/golden/02-repair.txt")
        );
    }
}
