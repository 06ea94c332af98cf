//! `--report DIR`, `--report-format` and `--summary-markdown`: a report per
//! scenario and an index per format, rendered from the templates. Every
//! file is rendered before any is written, and each is written atomically,
//! so a template error leaves DIR as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{Value, context};
use serde_json::{Value as Json, json};

use super::batch::FileResult;
use super::golden::{self, Verdict};
use crate::diagnostic::{Problem, render};
use crate::output::{inside, report_names, write_atomic};
use crate::report::json::{REPORT_FORMAT_VERSION, document};
use crate::report::templates::{
    INDEX_HTML, INDEX_MARKDOWN, SCENARIO_HTML, SCENARIO_MARKDOWN, SUMMARY_MARKDOWN, SWEEP_HTML,
    SWEEP_MARKDOWN, Templates,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReportFormat {
    Markdown,
    Html,
    Json,
}

impl ReportFormat {
    /// Every format, as `--report-format` names them.
    pub const ALL: [(&'static str, ReportFormat); 3] = [
        ("markdown", ReportFormat::Markdown),
        ("html", ReportFormat::Html),
        ("json", ReportFormat::Json),
    ];

    pub fn from_name(name: &str) -> Option<ReportFormat> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    fn extension(self) -> &'static str {
        match self {
            ReportFormat::Markdown => "md",
            ReportFormat::Html => "html",
            ReportFormat::Json => "json",
        }
    }
}

/// What went wrong while producing reports.
pub enum ReportError {
    Template(Vec<Problem>),
    Io(String),
}

impl ReportError {
    /// The error as printed: located template problems, or one line.
    pub fn render(&self, color: bool) -> String {
        match self {
            ReportError::Template(problems) => problems
                .iter()
                .map(|p| format!("{}\n", render(p, color)))
                .collect(),
            ReportError::Io(e) => format!("error: {e}\n"),
        }
    }
}

/// The data the index and summary templates receive as `batch`.
/// `goldens` holds each file's golden verdict (`None` without `--golden`):
/// a golden transcript that does not match makes the scenario failed.
pub fn batch_context(
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
    names: &[Option<String>],
) -> Json {
    let statuses: Vec<&str> = results
        .iter()
        .zip(goldens)
        .map(|(r, g)| golden::status(r, g.as_ref()))
        .collect();
    let count = |status: &str| statuses.iter().filter(|s| **s == status).count();
    let scenarios: Vec<Json> = files
        .iter()
        .zip(results)
        .zip(goldens)
        .zip(names)
        .filter(|(((_, r), _), _)| r.counts())
        .map(|(((file, r), golden), name)| {
            let golden = golden.as_ref();
            let scenario = r.scenario();
            let ran = match r {
                FileResult::Ran(ran) => Some(ran),
                _ => None,
            };
            let sweep = match r {
                FileResult::Swept(sweep) => Some(sweep),
                _ => None,
            };
            json!({
                "file": file,
                "name": scenario.map_or(file.as_str(), |s| s.name.as_str()),
                "summary": scenario.and_then(|s| s.summary.as_deref()),
                "seed": scenario.map(|s| s.seed),
                "status": golden::status(r, golden),
                "golden": golden.map(Verdict::json),
                "report": name,
                "expectations_total": ran.map_or(0, |r| r.verdicts.len()),
                "expectations_passed": ran.map_or(0, |r| r.verdicts.iter().filter(|v| v.passed).count()),
                "totals": ran.map(|r| crate::report::json::totals(&r.scenario, &r.outcome)),
                "points": sweep.map(|s| s.points.len()),
                "points_passed": sweep.map(|s| s.points.iter().filter(|p| p.result.passed()).count()),
                "problems": golden::problems(file, r, golden),
            })
        })
        .collect();
    json!({
        "format_version": REPORT_FORMAT_VERSION,
        "passed": count("passed"),
        "failed": count("failed"),
        "errors": count("invalid") + count("stopped"),
        "scenarios": scenarios,
    })
}

/// Renders every report of the batch, then writes them into `dir`.
/// Returns the files written.
pub fn write_reports(
    dir: &Path,
    formats: &[ReportFormat],
    templates: &Templates,
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
) -> Result<Vec<PathBuf>, ReportError> {
    let all_names = report_names(files);
    let names: Vec<Option<String>> = results
        .iter()
        .zip(all_names)
        .map(|(r, n)| matches!(r, FileResult::Ran(_) | FileResult::Swept(_)).then_some(n))
        .collect();
    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut broken: Vec<Problem> = Vec::new();
    for (((file, r), golden), name) in files.iter().zip(results).zip(goldens).zip(&names) {
        let Some(name) = name else { continue };
        let golden = golden.as_ref();
        let problems = golden::problems(file, r, golden);
        // One document per file, whatever the formats.
        let mut doc = match r {
            FileResult::Ran(ran) => {
                document(file, &ran.scenario, &ran.outcome, &ran.verdicts, &problems)
            }
            FileResult::Swept(sweep) => {
                let mut doc = sweep.json(file);
                doc["problems"] = json!(problems);
                doc
            }
            _ => continue,
        };
        doc["status"] = json!(golden::status(r, golden));
        for &format in formats {
            let rendered = match r {
                FileResult::Ran(ran) => scenario_report(templates, format, ran, &doc),
                FileResult::Swept(sweep) => sweep_report(templates, format, sweep, &doc),
                _ => continue,
            };
            match rendered {
                Ok(text) => outputs.push((format!("{name}.{}", format.extension()), text)),
                Err(p) => broken.push(*p),
            }
        }
        if !broken.is_empty() {
            // One broken template breaks every scenario alike: say it once.
            break;
        }
    }
    let batch = batch_context(files, results, goldens, &names);
    for &format in formats {
        let index = match format {
            ReportFormat::Markdown => INDEX_MARKDOWN,
            ReportFormat::Html => INDEX_HTML,
            ReportFormat::Json => {
                outputs.push(("index.json".to_string(), json_file(&batch)));
                continue;
            }
        };
        match templates.render(index, context! { batch => Value::from(Serde(&batch)) }) {
            Ok(text) => outputs.push((format!("index.{}", format.extension()), text)),
            Err(p) => broken.push(*p),
        }
    }
    if !broken.is_empty() {
        return Err(ReportError::Template(broken));
    }
    let mut written = Vec::new();
    for (file, text) in outputs {
        let path = inside(dir, &file).map_err(|e| ReportError::Io(e.to_string()))?;
        write_atomic(&path, &text)
            .map_err(|e| ReportError::Io(format!("cannot write {}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// One scenario's report in one format.
fn scenario_report(
    templates: &Templates,
    format: ReportFormat,
    ran: &super::Ran,
    doc: &Json,
) -> Result<String, Box<Problem>> {
    match format {
        ReportFormat::Json => Ok(json_file(doc)),
        ReportFormat::Markdown => templates.render(
            SCENARIO_MARKDOWN,
            context! { report => Value::from(Serde(doc)) },
        ),
        ReportFormat::Html => {
            let (chart, scrub) = crate::report::timeline(&ran.scenario, &ran.outcome);
            templates.render(
                SCENARIO_HTML,
                context! {
                    report => Value::from(Serde(doc)),
                    chart => Value::from(Serde(&chart)),
                    scrub => Value::from(Serde(&scrub)),
                },
            )
        }
    }
}

/// One sweep's report in one format: the table of points (and, in HTML,
/// the chart of its first column).
fn sweep_report(
    templates: &Templates,
    format: ReportFormat,
    sweep: &super::sweep::SweepRun,
    doc: &Json,
) -> Result<String, Box<Problem>> {
    match format {
        ReportFormat::Json => Ok(json_file(doc)),
        ReportFormat::Markdown => templates.render(
            SWEEP_MARKDOWN,
            context! { report => Value::from(Serde(doc)) },
        ),
        ReportFormat::Html => templates.render(
            SWEEP_HTML,
            context! {
                report => Value::from(Serde(doc)),
                chart => Value::from(Serde(&sweep.chart())),
            },
        ),
    }
}

/// A JSON file's text: pretty, with a final newline.
fn json_file(v: &Json) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Appends the batch table to `path` (for `$GITHUB_STEP_SUMMARY`).
pub fn append_summary(
    path: &Path,
    templates: &Templates,
    files: &[String],
    results: &[FileResult],
    goldens: &[Option<Verdict>],
) -> Result<(), ReportError> {
    let names: Vec<Option<String>> = results.iter().map(|_| None).collect();
    let batch = batch_context(files, results, goldens, &names);
    let text = templates
        .render(
            SUMMARY_MARKDOWN,
            context! { batch => Value::from(Serde(&batch)) },
        )
        .map_err(|p| ReportError::Template(vec![*p]))?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ReportError::Io(format!("cannot open {}: {e}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(|e| ReportError::Io(format!("cannot append to {}: {e}", path.display())))
}
