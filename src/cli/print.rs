//! What a batch prints: a status line per scenario and the diagnostics of
//! failures (human), or one JSON document.

use serde_json::json;

use std::path::Path;

use crate::app::batch::{self, FileResult};
use crate::app::golden::{self, Verdict};
use crate::app::sweep::SweepRun;
use crate::diagnostic::{Located, Problem, render};
use crate::report::json as rjson;

/// Writes `text` to standard output. A reader that has gone away (`show |
/// head`) ends the output quietly: the error is dropped, never a panic.
pub(super) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

pub(super) fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The human-readable batch output: a status line per scenario, the
/// diagnostics of failures, and the closing `N passed, N failed`.
/// `goldens` holds each file's golden verdict (empty without `--golden`):
/// a scenario whose expectations pass but whose golden transcript fails is
/// a FAIL on its own line.
pub fn batch_human(
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    passed: usize,
    failed: usize,
    quiet: bool,
    color: bool,
) -> String {
    let mut out = String::new();
    let mut skipped = 0;
    for (i, (path, r)) in files.iter().zip(results).enumerate() {
        let golden = goldens.get(i).and_then(Option::as_ref);
        match r {
            FileResult::Ran(ran) => out.push_str(&ran_lines(path, ran, golden, quiet, color)),
            FileResult::Swept(sweep) => {
                out.push_str(&swept_lines(path, sweep, golden, quiet, color));
            }
            FileResult::Invalid(inv) => {
                let n = inv.problems.len();
                out.push_str(&format!(
                    "{}  {path}  invalid scenario ({n} problem{})\n",
                    paint("FAIL", "31", color),
                    if n == 1 { "" } else { "s" }
                ));
                out.push_str(&diagnostics(&inv.problems, color));
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
                out.push_str(&diagnostics(
                    &[batch::limit_problem(source, scenario, limit)],
                    color,
                ));
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

/// The status line of a scenario that ran, and the diagnostics of its
/// failures.
fn ran_lines(
    path: &str,
    ran: &crate::app::Ran,
    golden: Option<&Verdict>,
    quiet: bool,
    color: bool,
) -> String {
    let mut out = String::new();
    let total = ran.verdicts.len();
    if let Some(why) = golden.and_then(Verdict::why)
        && ran.failures.is_empty()
    {
        out.push_str(&format!(
            "{}  {path}  {} ({total} expectations passed; {why})\n",
            paint("FAIL", "31", color),
            ran.scenario.name
        ));
    } else if ran.failures.is_empty() {
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
        out.push_str(&diagnostics(&ran.failures, color));
    }
    out
}

/// Each problem's diagnostic, followed by an empty line.
fn diagnostics(problems: &[Problem], color: bool) -> String {
    problems
        .iter()
        .map(|p| format!("{}\n", render(p, color)))
        .collect()
}

/// The status line of a sweep ("27 points"), and the diagnostics of its
/// failed points, each naming the point's values.
fn swept_lines(
    path: &str,
    sweep: &SweepRun,
    golden: Option<&Verdict>,
    quiet: bool,
    color: bool,
) -> String {
    let mut out = String::new();
    let name = sweep.scenario().map_or("", |s| s.name.as_str());
    let total = sweep.points.len();
    let failed: Vec<_> = sweep.points.iter().filter(|p| !p.result.passed()).collect();
    let points = if total == 1 { "point" } else { "points" };
    if failed.is_empty() {
        if let Some(why) = golden.and_then(Verdict::why) {
            out.push_str(&format!(
                "{}  {path}  {name} ({total} {points} passed; {why})\n",
                paint("FAIL", "31", color)
            ));
        } else if !quiet {
            out.push_str(&format!(
                "{}  {path}  {name} ({total} {points})\n",
                paint("PASS", "32", color)
            ));
        }
        return out;
    }
    out.push_str(&format!(
        "{}  {path}  {name} ({} of {total} {points} failed)\n",
        paint("FAIL", "31", color),
        failed.len()
    ));
    for point in failed {
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
            _ => {}
        }
    }
    out
}

/// The JSON batch document: each scenario that ran is its JSON report,
/// with its golden comparison (`golden`, with `--golden`) and the status
/// and problems that comparison adds.
pub fn batch_json(
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    passed: usize,
    failed: usize,
) -> String {
    let scenarios: Vec<serde_json::Value> = files
        .iter()
        .zip(results)
        .zip(goldens)
        .filter(|((_, r), _)| r.counts())
        .map(|((path, r), golden)| {
            let golden = golden.as_ref();
            let problems = golden::problems(path, r, golden);
            let mut doc = match r {
                FileResult::Swept(sweep) => sweep.json(path),
                // The same document as the JSON report.
                FileResult::Ran(ran) => {
                    rjson::document(path, &ran.scenario, &ran.outcome, &ran.verdicts, &problems)
                }
                _ => json!({
                    "file": path,
                    "name": r.scenario().map(|s| &s.name),
                    "seed": r.scenario().map(|s| s.seed),
                    "status": r.status(),
                    "problems": problems,
                }),
            };
            doc["status"] = json!(golden::status(r, golden));
            if let Some(g) = golden {
                doc["golden"] = g.json();
            }
            doc
        })
        .collect();
    let doc = json!({
        "format_version": rjson::REPORT_FORMAT_VERSION,
        "scenarios": scenarios,
        "passed": passed,
        "failed": failed,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
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
            shaping.push_str(&format!(
                "--set {} ",
                shell_word(&format!("{path}={value}"))
            ));
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
pub fn batch_github(
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    passed: usize,
    failed: usize,
    quiet: bool,
) -> String {
    let mut out = String::new();
    for ((path, r), golden) in files.iter().zip(results).zip(goldens) {
        if !r.counts() {
            continue;
        }
        let status = golden::status(r, golden.as_ref());
        let name = r.scenario().map_or(path.as_str(), |s| s.name.as_str());
        if status == "passed" {
            if !quiet {
                out.push_str(&format!("PASS  {path}  {name}\n"));
            }
            continue;
        }
        out.push_str(&format!("FAIL  {path}  {name} ({status})\n"));
        for p in golden::problems(path, r, golden.as_ref()) {
            out.push_str(&annotation(&p, name));
        }
    }
    out.push_str(&format!("{passed} passed, {failed} failed\n"));
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

/// A word as a POSIX shell reads it back: as is when it holds only safe
/// characters, else in single quotes.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
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
