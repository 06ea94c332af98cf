//! `--report DIR`, `--report-format` and `--summary-markdown`: a report per
//! scenario and an index per format, rendered from the templates. Every
//! file is rendered before any is written, and each is written atomically,
//! so a template error leaves DIR as it was. JSON reports, which no
//! template shapes, are not rendered ahead: serde writes them into their
//! file from the run as it goes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use minijinja::value::Serde;
use minijinja::{Value, context};
use serde_json::{Value as Json, json};

use super::batch::FileResult;
use super::entry::Record;
use crate::diagnostic::{Problem, render};
use crate::output::{inside, report_names, write_atomic, write_atomic_with};
use crate::report::document::Document;
use crate::report::json::document;
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

    pub fn extension(self) -> &'static str {
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

/// The report names of the files whose reports are written (those that
/// ran), computed over the whole file list so that every shard of a batch
/// names a file's report alike.
pub fn report_names_for(files: &[String], results: &[FileResult]) -> Vec<Option<String>> {
    results
        .iter()
        .zip(report_names(files))
        .map(|(r, n)| matches!(r, FileResult::Ran(_) | FileResult::Swept(_)).then_some(n))
        .collect()
}

/// A report file's contents: rendered text, or a document that serde
/// writes to the file as it goes (a JSON report of a million transitions
/// is never one string).
pub enum Body {
    Text(String),
    Json(Rc<Document>),
}

impl From<String> for Body {
    fn from(text: String) -> Body {
        Body::Text(text)
    }
}

/// Renders every report of the batch, then writes them into `dir`.
/// Returns the files written.
pub fn write_reports(
    dir: &Path,
    formats: &[ReportFormat],
    templates: &Templates,
    results: &[FileResult],
    record: &Record,
) -> Result<Vec<PathBuf>, ReportError> {
    let mut outputs: Vec<(String, Body)> = Vec::new();
    let mut broken: Vec<Problem> = Vec::new();
    for entry in &record.scenarios {
        let Some(name) = &entry.report else { continue };
        let (file, r, problems) = (&entry.file, &results[entry.position], &entry.problems);
        // One document per file, whatever the formats.
        let mut doc = match r {
            FileResult::Ran(ran) => document(file, &ran.run(), &ran.verdicts, problems),
            FileResult::Swept(sweep) => {
                let mut doc = sweep.json(file);
                doc["problems"] = json!(problems);
                Document::plain(doc)
            }
            _ => continue,
        };
        doc.head["status"] = json!(entry.status);
        let doc = Rc::new(doc);
        for &format in formats {
            let file_name = format!("{name}.{}", format.extension());
            let rendered = match (r, format) {
                (_, ReportFormat::Json) => Ok(Body::Json(Rc::clone(&doc))),
                (FileResult::Ran(ran), _) => {
                    scenario_report(templates, format, ran, &doc).map(Body::Text)
                }
                (FileResult::Swept(_), _) => {
                    sweep_report(templates, format, &doc.head).map(Body::Text)
                }
                _ => continue,
            };
            match rendered {
                Ok(body) => outputs.push((file_name, body)),
                Err(p) => broken.push(*p),
            }
        }
        if !broken.is_empty() {
            // One broken template breaks every scenario alike: say it once.
            break;
        }
    }
    // A shard's index.json is what `merge` reads: always written.
    let mut index_formats = formats.to_vec();
    if record.shard.is_some() && !index_formats.contains(&ReportFormat::Json) {
        index_formats.push(ReportFormat::Json);
    }
    match index_files(&index_formats, templates, record) {
        Ok(index) => outputs.extend(index.into_iter().map(|(f, t)| (f, t.into()))),
        Err(problems) => broken.extend(problems),
    }
    if !broken.is_empty() {
        return Err(ReportError::Template(broken));
    }
    write_all(dir, outputs)
}

/// The index files of a batch, one per format, rendered from its record.
pub fn index_files(
    formats: &[ReportFormat],
    templates: &Templates,
    record: &Record,
) -> Result<Vec<(String, String)>, Vec<Problem>> {
    // What the templates receive, made once and only for them.
    let batch = std::cell::OnceCell::new();
    let mut outputs = Vec::new();
    let mut broken = Vec::new();
    for &format in formats {
        let index = match format {
            ReportFormat::Markdown => INDEX_MARKDOWN,
            ReportFormat::Html => INDEX_HTML,
            ReportFormat::Json => {
                let text = serde_json::to_string_pretty(record).unwrap_or_default();
                outputs.push(("index.json".to_string(), format!("{text}\n")));
                continue;
            }
        };
        let batch = batch.get_or_init(|| Value::from(Serde(record))).clone();
        match templates.render(index, context! { batch => batch }) {
            Ok(text) => outputs.push((format!("index.{}", format.extension()), text)),
            Err(p) => broken.push(*p),
        }
    }
    if broken.is_empty() {
        Ok(outputs)
    } else {
        Err(broken)
    }
}

/// Writes rendered files into `dir`, each atomically, in order (the
/// index last, so that an index is never newer than its reports);
/// temporary files a killed run left there go first. Returns the paths.
pub fn write_all(dir: &Path, outputs: Vec<(String, Body)>) -> Result<Vec<PathBuf>, ReportError> {
    crate::output::remove_stale_temporaries(dir);
    let mut written = Vec::new();
    for (file, body) in outputs {
        let path = inside(dir, &file).map_err(|e| ReportError::Io(e.to_string()))?;
        match body {
            Body::Text(text) => write_atomic(&path, &text),
            Body::Json(doc) => write_atomic_with(&path, |w| doc.write_json(w)),
        }
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
    doc: &Document,
) -> Result<String, Box<Problem>> {
    match format {
        ReportFormat::Json => Ok(doc.json_text()),
        ReportFormat::Markdown => templates.render(
            SCENARIO_MARKDOWN,
            context! { report => doc.template_value() },
        ),
        ReportFormat::Html => {
            let (chart, scrub) = crate::report::timeline(&ran.scenario, &ran.outcome);
            let page = crate::report::page::page(&ran.source.text, doc);
            templates.render(
                SCENARIO_HTML,
                context! {
                    report => doc.template_value(),
                    chart => Value::from(Serde(&chart)),
                    scrub => Value::from(Serde(&scrub)),
                    page => Value::from(Serde(&page)),
                },
            )
        }
    }
}

/// One sweep's report in one format, from its JSON document: the table
/// of points (and, in HTML, the chart of its first column).
pub fn sweep_report(
    templates: &Templates,
    format: ReportFormat,
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
                chart => Value::from(Serde(&super::sweep::chart(doc))),
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
    record: &Record,
) -> Result<(), ReportError> {
    let batch = Value::from(Serde(record));
    let text = templates
        .render(SUMMARY_MARKDOWN, context! { batch => batch })
        .map_err(|p| ReportError::Template(vec![*p]))?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ReportError::Io(format!("cannot open {}: {e}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(|e| ReportError::Io(format!("cannot append to {}: {e}", path.display())))
}
