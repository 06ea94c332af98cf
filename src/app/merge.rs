//! `scenario-run merge OUT_DIR SHARD_JSON...`: the results of the shards
//! of a batch (`--shard I/N` runs with `--format json`, or their
//! `index.json`) combined into the batch an unsharded run gives: the same
//! index, JUnit file, step summary and exit code. A sweep whose points
//! ran on several shards becomes one entry again, its points in order,
//! and its golden table is compared here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::entry::{Entry, Record};
use super::reports::{self, ReportFormat};
use super::shard_text;
use super::shards::{check_shards, combine, join_docs};
use crate::report::templates::Templates;

/// A shard's result is read up to this size (the `--format json` output
/// of a batch of 1,000 scenarios of 1,000 messages is about 150 MB).
pub const MAX_SHARD_BYTES: u64 = 1 << 30;

/// The most memory `merge` holds per byte of its inputs, whatever they
/// hold (measured on forged 100 MB shards, release build: a sweep's 33
/// million one-character cells 15.7 bytes per byte, the worst shape
/// found; an entry's 2.6 million empty testcases 10.7; 5,000 whole
/// entries 9.7). `tests/resources.rs` holds it to this.
pub const MEMORY_PER_INPUT_BYTE: usize = 32;

/// What `merge` is asked to do.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// Where the index files and `junit.xml` go.
    pub out_dir: PathBuf,
    /// The shards' JSON results.
    pub inputs: Vec<PathBuf>,
    pub formats: Vec<ReportFormat>,
    pub templates: Option<PathBuf>,
    /// Where to append the batch's Markdown table.
    pub summary_markdown: Option<PathBuf>,
    /// The golden files, for the tables of sweeps whose points ran on
    /// several shards.
    pub golden: Option<PathBuf>,
}

/// A merged batch and the files written.
pub struct Merged {
    pub record: Record,
    pub written: Vec<PathBuf>,
}

/// Why `merge` wrote nothing (or stopped writing), as printed.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A shard's result that cannot be used: unreadable, not a result of
    /// this version, shards of different batches, a shard missing.
    #[error("{0}")]
    Shards(String),
    /// Templates that do not load or render: their located problems,
    /// rendered colour-free.
    #[error("{0}")]
    Templates(String),
    /// A file that cannot be copied or written.
    #[error("{0}")]
    Write(String),
}

impl MergeError {
    /// A report error, rendered colour-free.
    fn of(e: reports::ReportError) -> MergeError {
        match e {
            reports::ReportError::Template(_) => MergeError::Templates(e.render(false)),
            _ => MergeError::Write(e.to_string()),
        }
    }

    /// How `merge` ends.
    pub fn exit(&self) -> super::Exit {
        match self {
            MergeError::Shards(_) | MergeError::Templates(_) => super::Exit::Invalid,
            MergeError::Write(_) => super::Exit::Io,
        }
    }
}

/// Reads, checks and combines the shards' results, then writes the index
/// files and `junit.xml` into `out_dir` (and appends the step summary).
/// Nothing is written unless every input is a shard of one batch and
/// every shard is there.
pub fn merge(request: &MergeRequest) -> Result<Merged, MergeError> {
    let templates = Templates::load(request.templates.as_deref()).map_err(|problems| {
        MergeError::Templates(
            problems
                .iter()
                .map(|p| crate::diagnostic::render(p, false))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    })?;
    let mut records = Vec::new();
    let mut parts: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    let mut copies = Vec::new();
    // Read in parallel, taken in input order.
    let read_all: Vec<Result<ShardResult, String>> = {
        use rayon::prelude::*;
        request.inputs.par_iter().map(|p| read(p)).collect()
    };
    for (path, shard) in request.inputs.iter().zip(read_all) {
        let shard = shard.map_err(MergeError::Shards)?;
        if let Some(dir) = &shard.reports {
            copies.extend(reports_to_copy(dir, &shard.record).map_err(MergeError::Shards)?);
        }
        for doc in shard.sweep_parts {
            let file = doc["file"].as_str().unwrap_or_default().to_string();
            parts.entry(file).or_default().push(doc);
        }
        records.push((path.clone(), shard.record));
    }
    check_shards(&records).map_err(MergeError::Shards)?;
    let record = combine(
        records.into_iter().map(|(_, r)| r).collect(),
        request.golden.as_deref(),
    )
    .map_err(MergeError::Shards)?;
    let mut formats = request.formats.clone();
    formats.sort();
    formats.dedup();
    let template_error = |problems| MergeError::of(reports::ReportError::Template(problems));
    // Rendered first, written only when all rendered; the index last.
    // A killed run's temporaries go first (not the index's, staged now).
    crate::output::remove_stale_temporaries(&request.out_dir);
    let existed = request.out_dir.exists();
    let index =
        reports::index_files(&request.out_dir, &formats, &templates, &record).map_err(|e| {
            // The staged files are gone; a folder made for them goes too.
            if !existed {
                let _ = std::fs::remove_dir(&request.out_dir);
            }
            MergeError::of(e)
        })?;
    let mut outputs = Vec::new();
    for entry in &record.scenarios {
        let (Some(name), Some(docs)) = (&entry.report, parts.remove(&entry.file)) else {
            continue;
        };
        let doc = join_docs(docs, entry).map_err(MergeError::Shards)?;
        for &format in &formats {
            let text = reports::sweep_report(&templates, format, &doc)
                .map_err(|p| template_error(vec![*p]))?;
            outputs.push((format!("{name}.{}", format.extension()), text));
        }
    }
    let mut written = copy_reports(&request.out_dir, &copies).map_err(MergeError::Write)?;
    outputs.push((
        "junit.xml".to_string(),
        super::junit::junit_xml(&record.scenarios),
    ));
    written.extend(reports::write_all(&request.out_dir, outputs).map_err(MergeError::of)?);
    written.extend(reports::commit_all(index).map_err(MergeError::of)?);
    if let Some(path) = &request.summary_markdown {
        reports::append_summary(path, &templates, &record).map_err(MergeError::of)?;
    }
    Ok(Merged { record, written })
}

/// The report files a shard wrote next to its `index.json` for the files
/// it ran whole (a split sweep's are written from the joined document).
/// A name that is not a plain file name (`../x`, `a/b`) is never joined
/// to a path; a link, a FIFO or a device is never read.
fn reports_to_copy(dir: &Path, record: &Record) -> Result<Vec<(PathBuf, String)>, String> {
    let mut copies = Vec::new();
    for name in record
        .scenarios
        .iter()
        .filter(|e| !is_part(e))
        .filter_map(|e| e.report.as_ref())
    {
        for (_, format) in ReportFormat::ALL {
            let file = format!("{name}.{}", format.extension());
            let from = crate::output::inside(dir, &file)
                .map_err(|e| format!("{}: a report name in index.json: {e}", dir.display()))?;
            // A report in a format the shard did not write is not there.
            match std::fs::symlink_metadata(&from) {
                Ok(m) if m.file_type().is_file() => copies.push((from, file)),
                Ok(_) => {
                    return Err(format!(
                        "{} is not a regular file (a link, a folder or a device): not copied",
                        from.display()
                    ));
                }
                Err(_) => {}
            }
        }
    }
    Ok(copies)
}

/// Copies the shards' report files into `out_dir`, each atomically.
fn copy_reports(out_dir: &Path, copies: &[(PathBuf, String)]) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (from, name) in copies {
        let to = crate::output::inside(out_dir, name).map_err(|e| e.to_string())?;
        if to == *from {
            continue;
        }
        let mut source = crate::output::open_regular(from)
            .map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        crate::output::write_in_folder_with(&to, |w| std::io::copy(&mut source, w).map(|_| ()))
            .map_err(|e| format!("cannot write {}: {e}", to.display()))?;
        written.push(to);
    }
    Ok(written)
}

/// One shard's result, as read: its record, the JSON documents of the
/// sweeps it ran only some points of (from which `merge` writes those
/// sweeps' reports whole), and, for an `index.json`, the folder of the
/// shard's reports (which `merge` copies).
struct ShardResult {
    record: Record,
    sweep_parts: Vec<Json>,
    reports: Option<PathBuf>,
}

/// The top of a shard's result: a `--format json` output has `batch` (the
/// record) and `scenarios` (every scenario's document); an `index.json` is
/// the record itself. Documents are kept raw: only those of split sweeps
/// are parsed.
#[derive(serde::Deserialize)]
struct Top<'a> {
    format_version: Option<u64>,
    #[serde(borrow)]
    batch: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    scenarios: Option<&'a serde_json::value::RawValue>,
}

/// Reads one shard's result: the `--format json` output of a `--shard`
/// run, or the `index.json` of its reports.
fn read(path: &Path) -> Result<ShardResult, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_SHARD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_SHARD_BYTES {
        return Err(format!(
            "{shown} is larger than {} MiB, more than any shard's result",
            MAX_SHARD_BYTES >> 20
        ));
    }
    shard_text::no_controls(&shown.to_string(), &bytes)?;
    let top: Top =
        serde_json::from_slice(&bytes).map_err(|e| format!("{shown} is not JSON: {e}"))?;
    let ours = u64::from(crate::report::json::REPORT_FORMAT_VERSION);
    if top.format_version != Some(ours) {
        return Err(format!(
            "{shown} is not a result of this version of scenario-run (format_version {}, expected {ours}): \
             give the output of `scenario-run --shard I/N --format json` or its report's index.json",
            top.format_version
                .map_or("absent".to_string(), |v| v.to_string())
        ));
    }
    let not_batch = |e: serde_json::Error| format!("{shown} is not a batch result: {e}");
    let forged = |e: String| format!("{shown} {e}: not the result of a run");
    let Some(batch) = top.batch else {
        shard_text::forged_line(&bytes).map_err(forged)?;
        let record: Record = serde_json::from_slice(&bytes).map_err(not_batch)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        // A split sweep's points are in its JSON report: without it the
        // sweep cannot be joined, so a missing or broken one is an error.
        let mut sweep_parts = Vec::new();
        for e in record.scenarios.iter().filter(|e| is_part(e)) {
            let part = e.report.as_ref().ok_or_else(|| {
                format!(
                    "{shown}: the sweep {} has no report to read its points from",
                    e.file
                )
            })?;
            let at = crate::output::inside(&dir, &format!("{part}.json"))
                .map_err(|err| format!("{shown}: a report name: {err}"))?;
            let bytes = crate::output::read_regular(&at, MAX_SHARD_BYTES).map_err(|err| {
                format!(
                    "cannot read {} (the points of {} in {shown}): {err}",
                    at.display(),
                    e.file
                )
            })?;
            shard_text::no_controls(&at.display().to_string(), &bytes)?;
            let doc: Json = serde_json::from_slice(&bytes).map_err(|err| {
                format!(
                    "{} (the points of {} in {shown}) is not a sweep's JSON report: {err}",
                    at.display(),
                    e.file
                )
            })?;
            sweep_parts.push(doc);
        }
        return Ok(ShardResult {
            record,
            sweep_parts,
            reports: Some(dir),
        });
    };
    shard_text::forged_line(batch.get().as_bytes()).map_err(forged)?;
    let record: Record = serde_json::from_str(batch.get()).map_err(not_batch)?;
    let docs: Vec<&serde_json::value::RawValue> = match top.scenarios {
        Some(raw) => serde_json::from_str(raw.get()).map_err(not_batch)?,
        None => Vec::new(),
    };
    // The documents are those of the record's entries, in the same order.
    let sweep_parts = record
        .scenarios
        .iter()
        .zip(docs)
        .filter(|(e, _)| is_part(e))
        .map(|(_, doc)| serde_json::from_str(doc.get()).map_err(not_batch))
        .collect::<Result<_, _>>()?;
    Ok(ShardResult {
        record,
        sweep_parts,
        reports: None,
    })
}

/// Whether an entry is a sweep of which the shard ran only some points.
fn is_part(e: &Entry) -> bool {
    e.sweep
        .as_ref()
        .is_some_and(|s| s.points.len() < s.points_total)
}
