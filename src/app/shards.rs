//! Checking and joining the shards of a batch for `merge`: the inputs
//! must be every shard of one batch, once; each file's entry is taken from
//! its shard, and a sweep whose points ran on several shards is joined
//! into one entry (its points in order, its golden table compared) and one
//! JSON document.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::entry::{Entry, Golden, PointPart, Record, golden_case};
use super::golden::{self, GOLDEN_AT_MERGE, Verdict};

/// The inputs are the shards of one batch, each once, none missing; or a
/// single unsharded result.
pub fn check_shards(records: &[(PathBuf, Record)]) -> Result<(), String> {
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
pub fn combine(records: Vec<Record>) -> Result<Record, String> {
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
    entry.cases = Vec::new();
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

/// A sweep's JSON document from the shards' parts: the points and rows
/// in point order, the status and problems of the merged entry.
pub fn join_docs(mut docs: Vec<Json>, entry: &Entry) -> Json {
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
