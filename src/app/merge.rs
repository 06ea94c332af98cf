//! `scenario-run merge OUT_DIR SHARD_JSON...`: the results of the shards
//! of a batch (`--shard I/N` runs with `--format json`, or their
//! `index.json`) combined into the batch an unsharded run gives: the same
//! index, JUnit file, step summary and exit code. A sweep whose points
//! ran on several shards becomes one entry again, its points in order,
//! and its golden table is compared here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::entry::{Entry, Golden, PointPart, Record, golden_case};
use super::golden::{self, GOLDEN_AT_MERGE, Verdict};
use super::reports::{self, ReportFormat};
use crate::report::templates::Templates;

/// A shard's result is read up to this size (the `--format json` output
/// of a batch of 1,000 scenarios of 1,000 messages is about 150 MB).
pub const MAX_SHARD_BYTES: u64 = 1 << 30;

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
}

/// A merged batch and the files written.
pub struct Merged {
    pub record: Record,
    pub written: Vec<PathBuf>,
}

/// Reads, checks and combines the shards' results, then writes the index
/// files and `junit.xml` into `out_dir` (and appends the step summary).
/// Nothing is written unless every input is a shard of one batch and
/// every shard is there.
pub fn merge(request: &MergeRequest) -> Result<Merged, String> {
    let templates = Templates::load(request.templates.as_deref()).map_err(|problems| {
        problems
            .iter()
            .map(|p| crate::diagnostic::render(p, false))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let mut records = Vec::new();
    let mut parts: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for path in &request.inputs {
        let (record, docs) = read(path)?;
        records.push((path.clone(), record));
        for doc in docs {
            let file = doc["file"].as_str().unwrap_or_default().to_string();
            parts.entry(file).or_default().push(doc);
        }
    }
    check_shards(&records)?;
    let record = combine(records.into_iter().map(|(_, r)| r).collect())?;
    let mut formats = request.formats.clone();
    formats.sort();
    formats.dedup();
    let template_error = |problems| reports::ReportError::Template(problems).render(false);
    let mut outputs =
        reports::index_files(&formats, &templates, &record).map_err(template_error)?;
    for entry in &record.scenarios {
        let (Some(name), Some(docs)) = (&entry.report, parts.remove(&entry.file)) else {
            continue;
        };
        let doc = join_docs(docs, entry);
        for &format in &formats {
            let text = reports::sweep_report(&templates, format, &doc)
                .map_err(|p| template_error(vec![*p]))?;
            outputs.push((format!("{name}.{}", format.extension()), text));
        }
    }
    outputs.push((
        "junit.xml".to_string(),
        super::junit::junit_xml(&record.scenarios),
    ));
    let written = reports::write_all(&request.out_dir, outputs).map_err(|e| e.render(false))?;
    if let Some(path) = &request.summary_markdown {
        reports::append_summary(path, &templates, &record).map_err(|e| e.render(false))?;
    }
    Ok(Merged { record, written })
}

/// One shard's record: the `batch` of a `--format json` result, or an
/// `index.json`; and the JSON documents of the sweeps it ran part of (a
/// `--format json` result has them), from which `merge` writes the
/// sweeps' reports.
fn read(path: &Path) -> Result<(Record, Vec<Json>), String> {
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
    let mut doc: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{shown} is not JSON: {e}"))?;
    let mut docs = Vec::new();
    if let Some(batch) = doc.get_mut("batch") {
        let batch = batch.take();
        if let Some(Json::Array(all)) = doc.get_mut("scenarios") {
            docs = all.drain(..).filter(is_part_of_sweep).collect();
        }
        doc = batch;
    }
    let version = doc
        .get("format_version")
        .and_then(serde_json::Value::as_u64);
    let ours = u64::from(crate::report::json::REPORT_FORMAT_VERSION);
    if version != Some(ours) {
        return Err(format!(
            "{shown} is not a result of this version of scenario-run (format_version {}, expected {ours}): \
             give the output of `scenario-run --shard I/N --format json` or its report's index.json",
            version.map_or("absent".to_string(), |v| v.to_string())
        ));
    }
    let record =
        serde_json::from_value(doc).map_err(|e| format!("{shown} is not a batch result: {e}"))?;
    Ok((record, docs))
}

/// Whether a scenario's JSON document is a sweep of which this shard ran
/// only some points.
fn is_part_of_sweep(doc: &Json) -> bool {
    let ran = doc["points"].as_array().map_or(0, Vec::len);
    doc["sweep"]["points_total"]
        .as_u64()
        .is_some_and(|total| (ran as u64) < total)
}

/// A sweep's JSON document from the shards' parts: the points and rows
/// in point order, the status and problems of the merged entry.
fn join_docs(mut docs: Vec<Json>, entry: &Entry) -> Json {
    let mut points: Vec<(u64, Json, Json)> = Vec::new();
    for doc in &mut docs {
        let rows = doc["sweep"]["rows"].take();
        let ps = doc["points"].take();
        if let (Json::Array(rows), Json::Array(ps)) = (rows, ps) {
            for (row, point) in rows.into_iter().zip(ps) {
                points.push((point["index"].as_u64().unwrap_or(0), point, row));
            }
        }
    }
    points.sort_by_key(|(index, _, _)| *index);
    // The parts differ only in their points (and seed: the first point's).
    let mut doc = docs.swap_remove(0);
    let (points, rows): (Vec<Json>, Vec<Json>) = points.into_iter().map(|(_, p, r)| (p, r)).unzip();
    doc["seed"] = serde_json::json!(entry.seed);
    doc["points"] = Json::Array(points);
    doc["sweep"]["rows"] = Json::Array(rows);
    doc["status"] = serde_json::json!(entry.status);
    doc["problems"] = serde_json::json!(entry.problems);
    // A report's document carries no golden verdict (the index does).
    if let Some(fields) = doc.as_object_mut() {
        fields.remove("golden");
    }
    doc
}

/// The inputs are the shards of one batch, each once, none missing; or a
/// single unsharded result.
fn check_shards(records: &[(PathBuf, Record)]) -> Result<(), String> {
    let Some((first_path, first)) = records.first() else {
        return Err("no shard results given".to_string());
    };
    let Some(shape) = first.shard else {
        return match records.len() {
            1 => Ok(()),
            _ => Err(format!(
                "{} is the result of a whole batch (run without --shard), not of a shard",
                first_path.display()
            )),
        };
    };
    let mut seen: BTreeMap<usize, &Path> = BTreeMap::new();
    for (path, r) in records {
        let Some(s) = r.shard else {
            return Err(format!(
                "{} is the result of a whole batch (run without --shard), not of a shard",
                path.display()
            ));
        };
        if s.count != shape.count || s.files != shape.files {
            return Err(format!(
                "{} is shard {}/{} of a batch of {} files, {} shard {}/{} of {} files: \
                 every shard must run the same files with the same N",
                path.display(),
                s.index,
                s.count,
                s.files,
                first_path.display(),
                shape.index,
                shape.count,
                shape.files
            ));
        }
        if let Some(other) = seen.insert(s.index, path) {
            return Err(format!(
                "shard {}/{} is given twice: {} and {}",
                s.index,
                s.count,
                other.display(),
                path.display()
            ));
        }
    }
    let missing: Vec<String> = (1..=shape.count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{}", shape.count))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the results of shard{} {} are missing: a merge of part of a batch would pass what never ran",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ))
    }
}

/// The entries of every shard in batch order, the parts of each split
/// sweep joined.
fn combine(records: Vec<Record>) -> Result<Record, String> {
    let mut by_position: BTreeMap<usize, Vec<Entry>> = BTreeMap::new();
    for record in records {
        for e in record.scenarios {
            by_position.entry(e.position).or_default().push(e);
        }
    }
    let mut entries = Vec::with_capacity(by_position.len());
    for (_, parts) in by_position {
        entries.push(join(parts)?);
    }
    Ok(Record::new(entries, None))
}

/// One file's entry from the shards' parts: a file that is not a sweep
/// has one; a sweep has one per shard that ran some of its points.
fn join(mut parts: Vec<Entry>) -> Result<Entry, String> {
    // The part with the sweep's first point speaks for the file (its seed
    // and name are the first point's, as in an unsharded run).
    parts.sort_by_key(|e| {
        e.sweep
            .as_ref()
            .and_then(|s| s.points.first())
            .map_or(0, |p| p.index)
    });
    let mut entry = parts.remove(0);
    let Some(mut sweep) = entry.sweep.take() else {
        return match parts.is_empty() {
            true => Ok(entry),
            false => Err(format!("{} appears in several shards' results", entry.file)),
        };
    };
    for part in parts {
        match part.sweep {
            Some(s) if part.file == entry.file && s.header == sweep.header => {
                sweep.points.extend(s.points);
            }
            _ => {
                return Err(format!(
                    "{} appears in several shards' results, not as parts of one sweep",
                    entry.file
                ));
            }
        }
    }
    sweep.points.sort_by_key(|p| p.index);
    if sweep.points.windows(2).any(|w| w[0].index == w[1].index) {
        return Err(format!(
            "a point of the sweep {} appears in several shards' results",
            entry.file
        ));
    }
    let points = &sweep.points;
    let passed = points.iter().filter(|p| p.status == "passed").count();
    let mut status = if points.iter().any(|p| p.status == "stopped") {
        "stopped"
    } else if passed == points.len() {
        "passed"
    } else {
        "failed"
    };
    let verdict = entry
        .golden
        .as_ref()
        .filter(|g| g.status == GOLDEN_AT_MERGE)
        .map(|g| compare(&entry, &sweep.header, points, sweep.points_total, &g.file));
    entry.problems = points.iter().flat_map(|p| p.problems.clone()).collect();
    entry.cases = points.iter().flat_map(|p| p.cases.clone()).collect();
    if let Some(v) = &verdict {
        if status == "passed" && v.failed() {
            status = "failed";
        }
        entry.problems.extend(v.problem(&entry.file));
        entry.cases.push(golden_case(v.problem(&entry.file)));
        entry.golden = Some(Golden {
            file: v.path().display().to_string(),
            status: v.word().to_string(),
        });
    }
    entry.status = status.to_string();
    entry.points = Some(points.len());
    entry.points_passed = Some(passed);
    entry.sweep = Some(sweep);
    Ok(entry)
}

/// Compares a sweep's reassembled table with its golden file (never
/// written here: blessing is done by a whole run on one machine).
fn compare(
    entry: &Entry,
    header: &[String],
    points: &[PointPart],
    total: usize,
    file: &str,
) -> Verdict {
    let path = PathBuf::from(file);
    if points.len() < total {
        return Verdict::Error(
            path,
            format!(
                "only {} of the sweep's {total} points ran (a shard stopped early), so its table is incomplete",
                points.len()
            ),
        );
    }
    let rows: Vec<Vec<String>> = points.iter().map(|p| p.row.clone()).collect();
    let transcript = super::sweep::transcript(&entry.name, entry.seed.unwrap_or(0), header, &rows);
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    golden::check(&path, &transcript, false, ci)
}
