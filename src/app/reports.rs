//! `--report DIR`, `--report-format` and `--summary-markdown`: a report per
//! scenario and an index per format, rendered from the templates. Each
//! file is rendered (a JSON report serialized) straight into a staged
//! temporary file as it is made; only when every file is made are they
//! committed, so a template error leaves DIR as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{Value, context};
use serde_json::{Value as Json, json};

use super::batch::FileResult;
use super::entry::Record;
use crate::diagnostic::{Problem, render};
use crate::output::{Finished, Staged, inside, report_names, write_in_folder};
use crate::report::document::Document;
use crate::report::json::document;
use crate::report::templates::{
    DATAFLOW_HTML, DATAFLOW_MARKDOWN, INDEX_HTML, INDEX_MARKDOWN, RenderFailure, SCENARIO_HTML,
    SCENARIO_MARKDOWN, SUMMARY_MARKDOWN, SWEEP_HTML, SWEEP_MARKDOWN, Templates,
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
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Templates that do not load or render: each problem located.
    #[error("{} template problem(s)", .0.len())]
    Template(Vec<Problem>),
    /// A report's name that is not a plain file name in its folder.
    #[error(transparent)]
    Named(std::io::Error),
    /// A file that cannot be written (a full disk, a link planted at its
    /// name, a file-size limit).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The step summary that cannot be opened or appended to.
    #[error("cannot {} {}: {source}", if *.opening { "open" } else { "append to" }, path.display())]
    Summary {
        path: PathBuf,
        opening: bool,
        source: std::io::Error,
    },
}

impl ReportError {
    /// The error as printed: located template problems, or one line.
    pub fn render(&self, color: bool) -> String {
        match self {
            ReportError::Template(problems) => problems
                .iter()
                .map(|p| format!("{}\n", render(p, color)))
                .collect(),
            e => format!("error: {e}\n"),
        }
    }

    /// A file that cannot be written at `path`.
    pub fn write(path: &Path, source: std::io::Error) -> ReportError {
        ReportError::Write {
            path: path.to_path_buf(),
            source,
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
        .map(|(r, n)| {
            let ran = matches!(r, FileResult::Ran(_) | FileResult::Swept(_))
                || matches!(r, FileResult::Dataflow(d) if d.run.is_ok());
            ran.then_some(n)
        })
        .collect()
}

/// Renders every report of the batch into `dir`, each straight into a
/// staged file as it is made; when all are made, commits them in order
/// (the index last). A template problem leaves `dir` as it was. Returns
/// the files written.
pub fn write_reports(
    dir: &Path,
    formats: &[ReportFormat],
    templates: &Templates,
    results: &[FileResult],
    record: &Record,
) -> Result<Vec<PathBuf>, ReportError> {
    crate::output::remove_stale_temporaries(dir);
    let existed = dir.exists();
    let mut staged: Vec<(PathBuf, Finished)> = Vec::new();
    let mut broken: Vec<Problem> = Vec::new();
    for entry in &record.scenarios {
        let Some(name) = &entry.report else { continue };
        let (file, r, problems) = (&entry.file, &results[entry.position], &entry.problems);
        // One document per file, whatever the formats.
        let Some(doc) = report_document(file, r, problems, &entry.status) else {
            continue;
        };
        for &format in formats {
            let path = inside(dir, &format!("{name}.{}", format.extension()))
                .map_err(ReportError::Named)?;
            let mut out = Staged::in_folder(&path).map_err(|e| ReportError::write(&path, e))?;
            let made = render_report(templates, format, r, &doc, out.writer());
            match made.and_then(|()| out.finish().map_err(RenderFailure::Io)) {
                Ok(finished) => staged.push((path, finished)),
                Err(RenderFailure::Template(p)) => broken.push(*p),
                Err(RenderFailure::Io(e)) => return Err(ReportError::write(&path, e)),
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
    let index = match index_files(dir, &index_formats, templates, record) {
        Ok(index) => index,
        Err(ReportError::Template(problems)) => {
            broken.extend(problems);
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    if !broken.is_empty() {
        // The staged files are dropped, and with them their temporaries;
        // a folder made for them goes too.
        drop(staged);
        drop(index);
        if !existed {
            let _ = std::fs::remove_dir(dir);
        }
        return Err(ReportError::Template(broken));
    }
    // Every file is staged (its name checked) before any is committed,
    // the index's too: a link planted at one leaves the folder as it was.
    let mut written = commit_all(staged)?;
    written.extend(commit_all(index)?);
    Ok(written)
}

/// The document every format of a file's report reads: its JSON report,
/// with the batch's `status` and `problems`; none for a file that did not
/// run.
pub fn report_document(
    file: &str,
    r: &FileResult,
    problems: &[crate::diagnostic::Located],
    status: &str,
) -> Option<Document> {
    let mut doc = match r {
        FileResult::Ran(ran) => document(file, &ran.run(), &ran.verdicts, problems),
        FileResult::Swept(sweep) => {
            let mut doc = sweep.json(file);
            doc["problems"] = json!(problems);
            Document::plain(doc)
        }
        FileResult::Dataflow(d) if d.run.is_ok() => {
            Document::plain(crate::dataflow::json::document(file, d, problems))
        }
        _ => return None,
    };
    doc.head["status"] = json!(status);
    Some(doc)
}

/// One file's report in one format, from its document, written to `out`
/// as it is made.
pub fn render_report(
    templates: &Templates,
    format: ReportFormat,
    r: &FileResult,
    doc: &Document,
    out: &mut dyn Write,
) -> Result<(), RenderFailure> {
    match (r, format) {
        (_, ReportFormat::Json) => doc.write_json(out).map_err(RenderFailure::Io),
        (FileResult::Ran(ran), _) => scenario_report(templates, format, ran, doc, out),
        (FileResult::Swept(_), _) => sweep_report_to(templates, format, &doc.head, out),
        (FileResult::Dataflow(d), _) => dataflow_report(templates, format, d, doc, out),
        _ => Ok(()),
    }
}

/// The index files of a batch, one per format, rendered from its record
/// straight into staged files of `dir` (`index.json` serialized as it
/// goes, never whole in memory), to be committed last. A template
/// problem is returned with the others found; a file that cannot be
/// staged (a link planted at its name, a full disk) is an error.
pub fn index_files(
    dir: &Path,
    formats: &[ReportFormat],
    templates: &Templates,
    record: &Record,
) -> Result<Vec<(PathBuf, Finished)>, ReportError> {
    // What the templates receive, made once and only for them.
    let batch = std::cell::OnceCell::new();
    let mut staged = Vec::new();
    let mut broken = Vec::new();
    for &format in formats {
        let path =
            inside(dir, &format!("index.{}", format.extension())).map_err(ReportError::Named)?;
        let mut out = Staged::in_folder(&path).map_err(|e| ReportError::write(&path, e))?;
        let template = match format {
            ReportFormat::Markdown => Some(INDEX_MARKDOWN),
            ReportFormat::Html => Some(INDEX_HTML),
            ReportFormat::Json => None,
        };
        let made = match template {
            Some(index) => {
                let batch = batch.get_or_init(|| Value::from(Serde(record))).clone();
                templates.render_to(index, context! { batch => batch }, out.writer())
            }
            None => {
                let w = out.writer();
                serde_json::to_writer_pretty(&mut *w, record)
                    .map_err(std::io::Error::from)
                    .and_then(|()| w.write_all(b"\n"))
                    .map_err(RenderFailure::Io)
            }
        };
        match made.and_then(|()| out.finish().map_err(RenderFailure::Io)) {
            Ok(finished) => staged.push((path, finished)),
            Err(RenderFailure::Template(p)) => broken.push(*p),
            Err(RenderFailure::Io(e)) => return Err(ReportError::write(&path, e)),
        }
    }
    if broken.is_empty() {
        Ok(staged)
    } else {
        Err(ReportError::Template(broken))
    }
}

/// Commits staged files in order; returns their paths.
pub fn commit_all(staged: Vec<(PathBuf, Finished)>) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    for (path, out) in staged {
        out.commit().map_err(|e| ReportError::write(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes rendered files into `dir`, each atomically and never through
/// what is at its name, in order (the caller commits the index after
/// them, so that an index is never newer than its reports). Returns the
/// paths.
pub fn write_all(dir: &Path, outputs: Vec<(String, String)>) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    for (file, text) in outputs {
        let path = inside(dir, &file).map_err(ReportError::Named)?;
        write_in_folder(&path, &text).map_err(|e| ReportError::write(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// One scenario's report in one format, written to `out` as it is made.
/// The Markdown or HTML report of a dataflow file (its JSON is the
/// document itself).
fn dataflow_report(
    templates: &Templates,
    format: ReportFormat,
    ran: &crate::dataflow::Ran,
    doc: &Document,
    out: &mut dyn Write,
) -> Result<(), RenderFailure> {
    let report = Value::from(Serde(&doc.head));
    match format {
        ReportFormat::Json => Ok(()),
        ReportFormat::Markdown => {
            let graph = crate::dataflow::diagram::graph(&ran.flow);
            templates.render_to(
                DATAFLOW_MARKDOWN,
                context! { report => report, graph => Value::from(Serde(&graph)) },
                out,
            )
        }
        ReportFormat::Html => {
            let Ok(outcome) = &ran.run else {
                return Ok(());
            };
            let (diagram, left_out) = crate::dataflow::diagram::svg(&ran.flow, outcome);
            let axis = crate::dataflow::diagram::axis(outcome);
            let own = crate::scenario::sweep::without_sets(&ran.source.text);
            let page = crate::report::page::page(own, doc);
            templates.render_to(
                DATAFLOW_HTML,
                context! {
                    report => report,
                    diagram => Value::from_safe_string(diagram),
                    left_out => left_out,
                    nodes_left_out => ran.flow.nodes.len().saturating_sub(crate::dataflow::diagram::MAX_NODES_DRAWN),
                    max_nodes => crate::dataflow::diagram::MAX_NODES_DRAWN,
                    max_arrows => crate::dataflow::diagram::MAX_ARROWS,
                    axis => vec![Value::from(axis.0), Value::from(axis.1), Value::from(axis.2)],
                    page => Value::from(Serde(&page)),
                },
                out,
            )
        }
    }
}

fn scenario_report(
    templates: &Templates,
    format: ReportFormat,
    ran: &super::Ran,
    doc: &Document,
    out: &mut dyn Write,
) -> Result<(), RenderFailure> {
    match format {
        ReportFormat::Json => doc.write_json(out).map_err(RenderFailure::Io),
        ReportFormat::Markdown => templates.render_to(
            SCENARIO_MARKDOWN,
            context! { report => doc.template_value() },
            out,
        ),
        ReportFormat::Html => {
            let (chart, scrub) = crate::report::timeline(&ran.scenario, &ran.outcome);
            // The file's own version, whatever `--set` values the run had:
            // a baseline taken under one set of values is kept under another.
            let own = crate::scenario::sweep::without_sets(&ran.source.text);
            let page = crate::report::page::page(own, doc);
            templates.render_to(
                SCENARIO_HTML,
                context! {
                    report => doc.template_value(),
                    chart => Value::from(Serde(&chart)),
                    scrub_json => Value::from_safe_string(crate::report::page::script_json(&scrub)),
                    scrub => crate::report::page::lazy(scrub),
                    page => Value::from(Serde(&page)),
                    log_chart => Value::from(Serde(&crate::report::log_chart::log_chart(&ran.scenario, &ran.outcome))),
                },
                out,
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
    crate::report::templates::in_memory(|out| sweep_report_to(templates, format, doc, out))
}

/// [`sweep_report`] written to `out` as it is made.
pub fn sweep_report_to(
    templates: &Templates,
    format: ReportFormat,
    doc: &Json,
    out: &mut dyn Write,
) -> Result<(), RenderFailure> {
    match format {
        ReportFormat::Json => out
            .write_all(json_file(doc).as_bytes())
            .map_err(RenderFailure::Io),
        ReportFormat::Markdown => templates.render_to(
            SWEEP_MARKDOWN,
            context! { report => Value::from(Serde(doc)) },
            out,
        ),
        ReportFormat::Html => templates.render_to(
            SWEEP_HTML,
            context! {
                report => Value::from(Serde(doc)),
                chart => Value::from(Serde(&super::sweep::chart(doc))),
            },
            out,
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
        .map_err(|source| ReportError::Summary {
            path: path.to_path_buf(),
            opening: true,
            source,
        })?;
    f.write_all(text.as_bytes())
        .map_err(|source| ReportError::Summary {
            path: path.to_path_buf(),
            opening: false,
            source,
        })
}
