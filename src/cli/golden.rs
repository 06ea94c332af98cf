//! `--golden DIR`: each scenario's transcript against its golden file, and
//! what the batch output says about the differences.

use std::path::Path;

use super::batch::FileResult;
use crate::report::golden;

pub(super) fn golden_collision(dir: &Path, files: &[String]) -> Option<(String, String)> {
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

/// Compares each scenario that ran with its golden file in `dir`.
pub(super) fn compare_goldens(
    dir: Option<&Path>,
    bless: bool,
    files: &[String],
    results: &[FileResult],
) -> Vec<Option<golden::Verdict>> {
    let Some(dir) = dir else {
        return results.iter().map(|_| None).collect();
    };
    let bless = bless || std::env::var("SCENARIO_RUN_BLESS").is_ok_and(|v| v == "1");
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
pub(super) fn with_goldens(
    text: String,
    dir: &Path,
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
