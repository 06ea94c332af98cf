//! What a batch prints: a status line per scenario and the diagnostics of
//! failures (human), or one JSON document.

use serde_json::json;

use std::path::Path;

use crate::app::batch::{self, FileResult};
use crate::app::entry::{Entry, Record};
use crate::app::golden::{self, Verdict};
use crate::app::sweep::SweepRun;
use crate::diagnostic::{Located, Problem, render};
use crate::report::document::Document;
use crate::report::json as rjson;

/// The first failed write to standard output, other than to a reader that
/// has gone away: `main` reports it and exits 5, so that output cut short
/// by a full disk or a file-size limit is never taken for a whole one.
static WRITE_FAILED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Notes the outcome of a write to standard output. A reader that has gone
/// away (`show | head`) ends the output quietly, as it should; any other
/// error is kept for [`write_failure`].
pub(super) fn wrote(result: std::io::Result<()>) {
    if let Err(e) = result
        && e.kind() != std::io::ErrorKind::BrokenPipe
        && let Ok(mut failed) = WRITE_FAILED.lock()
    {
        failed.get_or_insert_with(|| e.to_string());
    }
}

/// The first write to standard output that failed (see [`wrote`]).
pub(super) fn write_failure() -> Option<String> {
    WRITE_FAILED.lock().ok().and_then(|f| f.clone())
}

/// Writes `text` to standard output (see [`wrote`]).
pub(super) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    wrote(out.write_all(text.as_bytes()).and_then(|()| out.flush()));
}

/// Standard output as a `fmt::Write`, buffered: text written as it is
/// made (`show`), never whole in memory. Errors as with [`emit`].
pub(super) struct Stdout {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    /// Set by the first failed write: the rest is not attempted.
    failed: bool,
}

impl Stdout {
    pub fn new() -> Stdout {
        Stdout {
            out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
            failed: false,
        }
    }

    pub fn flush(&mut self) {
        use std::io::Write;
        if !self.failed {
            wrote(self.out.flush());
        }
    }
}

impl std::fmt::Write for Stdout {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        use std::io::Write;
        if self.failed {
            return Err(std::fmt::Error);
        }
        let result = self.out.write_all(s.as_bytes());
        self.failed = result.is_err();
        wrote(result);
        if self.failed {
            Err(std::fmt::Error)
        } else {
            Ok(())
        }
    }
}

pub(super) fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The human-readable batch output: a status line per scenario, the
/// diagnostics of failures, and the closing `N passed, N failed`. A
/// scenario whose expectations pass but whose golden transcript fails is
/// a FAIL on its own line.
pub fn batch_human(results: &[FileResult], record: &Record, quiet: bool, color: bool) -> String {
    let mut out = String::new();
    for e in &record.scenarios {
        out.push_str(&status_line(e, quiet, color));
        let more = match &results[e.position] {
            FileResult::Ran(ran) => diagnostics(&ran.failures, color),
            FileResult::Dataflow(d) => match &d.run {
                Ok(_) => diagnostics(&d.failures, color),
                Err(stop) => diagnostics(&[crate::dataflow::stop_problem(&d.source, stop)], color),
            },
            FileResult::Swept(sweep) => sweep_diagnostics(sweep, color),
            FileResult::Invalid(inv) => diagnostics(&inv.problems, color),
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => diagnostics(&[batch::limit_problem(source, scenario, limit)], color),
            _ => String::new(),
        };
        out.push_str(&more);
    }
    let skipped = results
        .iter()
        .filter(|r| matches!(r, FileResult::Skipped))
        .count();
    if skipped > 0 {
        out.push_str(&format!(
            "{skipped} skipped after the first failure (--fail-fast)\n"
        ));
    }
    out.push_str(&closing(record));
    out
}

/// A merged batch for people: each scenario's status line and the
/// colour-free diagnostics of its problems (golden comparisons included).
pub fn record_human(record: &Record, quiet: bool, color: bool) -> String {
    let mut out = String::new();
    for e in &record.scenarios {
        out.push_str(&status_line(e, quiet, color));
        if !e.passed() {
            for p in &e.problems {
                out.push_str(&format!("{}\n", p.text));
            }
        }
    }
    out.push_str(&closing(record));
    out
}

/// `N passed, N failed`.
fn closing(record: &Record) -> String {
    let failed = record.scenarios.len() - record.passed;
    format!("{} passed, {failed} failed\n", record.passed)
}

/// A scenario's status line (nothing for a pass under `--quiet`): what
/// ran, how many expectations or points failed, and why a golden
/// comparison failed.
pub fn status_line(e: &Entry, quiet: bool, color: bool) -> String {
    let (path, name) = (&e.file, &e.name);
    let fail = paint("FAIL", "31", color);
    let why = e.golden.as_ref().and_then(|g| golden::why(&g.status));
    let (total, failed, what) = match &e.sweep {
        _ if e.status == "invalid" => {
            let n = e.problems.len();
            let s = if n == 1 { "" } else { "s" };
            return format!("{fail}  {path}  invalid scenario ({n} problem{s})\n");
        }
        None if e.status == "stopped" => {
            return format!("{fail}  {path}  {name} (stopped at a limit)\n");
        }
        None => (
            e.expectations_total,
            e.expectations_total - e.expectations_passed,
            "expectations",
        ),
        Some(sweep) => {
            let ran = sweep.points.len();
            let passed = sweep.points.iter().filter(|p| p.status == "passed").count();
            // "1 point", but "1 of 3 points" in a shard's share.
            let one = ran == 1 && sweep.points_total <= 1;
            (ran, ran - passed, if one { "point" } else { "points" })
        }
    };
    // A shard's share of a sweep says of how many points.
    let of = match &e.sweep {
        Some(s) if s.points.len() < s.points_total => format!(" of {}", s.points_total),
        _ => String::new(),
    };
    if failed > 0 {
        return format!("{fail}  {path}  {name} ({failed} of {total}{of} {what} failed)\n");
    }
    if let Some(why) = why {
        return format!("{fail}  {path}  {name} ({total}{of} {what} passed; {why})\n");
    }
    if quiet {
        return String::new();
    }
    let counted = if total == 0 && e.sweep.is_none() {
        "no expectations".to_string()
    } else {
        format!("{total}{of} {what}")
    };
    format!(
        "{}  {path}  {name} ({counted})\n",
        paint("PASS", "32", color)
    )
}

/// Each problem's diagnostic, followed by an empty line.
fn diagnostics(problems: &[Problem], color: bool) -> String {
    problems
        .iter()
        .map(|p| format!("{}\n", render(p, color)))
        .collect()
}

/// The diagnostics of a sweep's failed points, each naming the point's
/// values.
fn sweep_diagnostics(sweep: &SweepRun, color: bool) -> String {
    let mut out = String::new();
    for point in sweep.points.iter().filter(|p| !p.result.passed()) {
        match &point.result {
            FileResult::Ran(ran) => out.push_str(&diagnostics(&ran.failures, color)),
            FileResult::Stopped {
                source,
                scenario,
                limit,
            } => {
                out.push_str(&format!(
                    "  at {}: stopped at a limit\n",
                    sweep.describe(point)
                ));
                out.push_str(&diagnostics(
                    &[batch::limit_problem(source, scenario, limit)],
                    color,
                ));
            }
            FileResult::Dataflow(d) => match &d.run {
                Ok(_) => out.push_str(&diagnostics(&d.failures, color)),
                Err(stop) => {
                    out.push_str(&format!(
                        "  at {}: stopped at a limit\n",
                        sweep.describe(point)
                    ));
                    let problem = crate::dataflow::stop_problem(&d.source, stop);
                    out.push_str(&diagnostics(&[problem], color));
                }
            },
            _ => {}
        }
    }
    out
}

/// The JSON batch document: each scenario that ran is its JSON report,
/// with its golden comparison (`golden`, with `--golden`) and the status
/// and problems that comparison adds; `batch` is the batch's record, as
/// `index.json` holds it and `merge` reads it. Written as it is made, one
/// scenario's document at a time, its long lists item by item.
pub fn write_batch_json(
    out: &mut dyn std::io::Write,
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    record: &crate::app::entry::Record,
) -> std::io::Result<()> {
    let batch = BatchJson {
        files,
        results,
        goldens,
        record,
    };
    let mut out = std::io::BufWriter::with_capacity(crate::report::JSON_CHUNK, out);
    serde_json::to_writer_pretty(&mut out, &batch)?;
    std::io::Write::flush(&mut out)
}

/// [`write_batch_json`] as a string.
pub fn batch_json(
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    record: &crate::app::entry::Record,
) -> String {
    let mut bytes = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_batch_json(&mut bytes, files, results, goldens, record);
    String::from_utf8(bytes).unwrap_or_default()
}

struct BatchJson<'a> {
    files: &'a [String],
    results: &'a [FileResult],
    goldens: &'a [Option<Verdict>],
    record: &'a crate::app::entry::Record,
}

/// The scenarios of the batch, each made when it is written.
struct ScenariosJson<'a>(&'a BatchJson<'a>);

impl serde::Serialize for BatchJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("format_version", &rjson::REPORT_FORMAT_VERSION)?;
        map.serialize_entry("scenarios", &ScenariosJson(self))?;
        map.serialize_entry("passed", &self.record.passed)?;
        map.serialize_entry(
            "failed",
            &(self.record.scenarios.len() - self.record.passed),
        )?;
        map.serialize_entry("batch", &self.record.json())?;
        map.end()
    }
}

impl serde::Serialize for ScenariosJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let b = self.0;
        let mut seq = serializer.serialize_seq(None)?;
        for ((path, r), golden) in b.files.iter().zip(b.results).zip(b.goldens) {
            if r.counts() {
                seq.serialize_element(&scenario_json(path, r, golden.as_ref()))?;
            }
        }
        seq.end()
    }
}

/// One scenario's document in the batch.
fn scenario_json(path: &str, r: &FileResult, golden: Option<&Verdict>) -> Document {
    let problems = golden::problems(path, r, golden);
    let mut doc = match r {
        FileResult::Swept(sweep) => Document::plain(sweep.json(path)),
        // The same document as the JSON report.
        FileResult::Ran(ran) => rjson::document(path, &ran.run(), &ran.verdicts, &problems),
        FileResult::Dataflow(d) => {
            Document::plain(crate::dataflow::json::document(path, d, &problems))
        }
        _ => Document::plain(json!({
            "file": path,
            "name": r.meta().map(|m| m.name),
            "seed": r.meta().map(|m| m.seed),
            "status": r.status(),
            "problems": problems,
        })),
    };
    doc.head["status"] = json!(golden::status(r, golden));
    if let Some(g) = golden {
        doc.head["golden"] = g.json();
    }
    doc
}

/// Inserts the golden verdicts before the closing line, and the command
/// that accepts the changes.
/// `seed` and `sets` are the `--seed` and `--set` that shaped the run: the
/// command that accepts the changes repeats them, so that it blesses the
/// same transcripts.
pub(super) fn with_goldens(
    text: String,
    dir: &Path,
    files: &[String],
    goldens: &[Option<Verdict>],
    quiet: bool,
    seed: Option<u64>,
    sets: &[(String, String)],
) -> String {
    let (body, closing) = match text.trim_end_matches('\n').rsplit_once('\n') {
        Some((body, closing)) => (format!("{body}\n"), closing.to_string()),
        None => (String::new(), text.trim_end().to_string()),
    };
    let mut out = body;
    let mut to_bless = Vec::new();
    for (f, g) in files.iter().zip(goldens) {
        match g {
            Some(Verdict::Written(p)) if !quiet => {
                out.push_str(&format!("golden  {f}: wrote {}\n", p.display()));
            }
            Some(Verdict::Missing(p)) => {
                out.push_str(&format!(
                    "GOLDEN  {f}: missing {} (CI=true: not written)\n",
                    p.display()
                ));
                to_bless.push(f.clone());
            }
            Some(Verdict::Differs(p, diff)) => {
                out.push_str(&format!(
                    "GOLDEN  {f}: the transcript differs from {}\n{diff}\n",
                    p.display()
                ));
                to_bless.push(f.clone());
            }
            Some(Verdict::Error(p, e)) => {
                out.push_str(&format!("GOLDEN  {f}: cannot use {}: {e}\n", p.display()));
            }
            _ => {}
        }
    }
    if !to_bless.is_empty() {
        let mut shaping = seed.map_or(String::new(), |s| format!("--seed {s} "));
        for (path, value) in sets {
            match value == crate::app::UNSET {
                true => shaping.push_str(&format!("--unset {}", crate::shell::word(path))),
                false => shaping.push_str(&crate::shell::set(path, value)),
            }
            shaping.push(' ');
        }
        out.push_str(&format!(
            "to accept the new transcripts: scenario-run {shaping}--golden {} --bless {}\n",
            dir.display(),
            to_bless.join(" ")
        ));
    }
    out.push_str(&closing);
    out.push('\n');
    out
}

/// The batch for GitHub Actions (`--format github`): a status line per
/// scenario and, for every problem (failed expectation, invalid input,
/// limit, golden transcript), an `::error` workflow command that puts the
/// problem on its line of the scenario file in a pull request.
pub fn batch_github(record: &Record, quiet: bool) -> String {
    let mut out = String::new();
    for e in &record.scenarios {
        let (path, name) = (&e.file, &e.name);
        if e.passed() {
            if !quiet {
                out.push_str(&format!("PASS  {path}  {name}\n"));
            }
            continue;
        }
        out.push_str(&format!("FAIL  {path}  {name} ({})\n", e.status));
        for p in &e.problems {
            out.push_str(&annotation(p, name));
        }
    }
    out.push_str(&closing(record));
    out
}

/// One `::error` workflow command for a problem, titled with `title`.
pub fn annotation(problem: &Located, title: &str) -> String {
    let mut properties = vec![format!("file={}", property(&problem.file))];
    let numbers = [
        ("line", problem.line),
        ("col", problem.column),
        ("endLine", problem.end_line),
        ("endColumn", problem.end_column),
    ];
    for (key, value) in numbers {
        if let Some(v) = value {
            properties.push(format!("{key}={v}"));
        }
    }
    properties.push(format!("title={}", property(title)));
    let message = match &problem.help {
        Some(help) => format!("{}\n{help}", problem.message),
        None => problem.message.clone(),
    };
    format!("::error {}::{}\n", properties.join(","), data(&message))
}

/// A workflow command's message, escaped as the Actions runner reads it.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: [`data`] plus `:` and `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_escape_what_the_runner_would_read_as_syntax() {
        let problem = Located {
            file: "a,b:c%.toml".to_string(),
            line: Some(3),
            column: None,
            end_line: None,
            end_column: None,
            message: "50% of\r\nthe calls".to_string(),
            label: None,
            help: Some("x::y".to_string()),
            text: String::new(),
        };
        assert_eq!(
            annotation(&problem, "t: 1, 2"),
            "::error file=a%2Cb%3Ac%25.toml,line=3,title=t%3A 1%2C 2::50%25 of%0D%0Athe calls%0Ax::y\n"
        );
    }
}
