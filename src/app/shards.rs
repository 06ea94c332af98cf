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

/// The most shards a batch may be split into (`--shard I/N`, and what
/// `merge` accepts a shard to say).
pub const MAX_SHARDS: usize = 10_000;

/// The inputs are the shards of one batch, each once, none missing; or a
/// single unsharded result.
pub fn check_shards(records: &[(PathBuf, Record)]) -> Result<(), String> {
    let Some((first_path, first)) = records.first() else {
        return Err("no shard results given".to_string());
    };
    let Some(shape) = &first.shard else {
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
        let Some(s) = &r.shard else {
            return Err(format!(
                "{} is the result of a whole batch (run without --shard), not of a shard",
                path.display()
            ));
        };
        if s.count == 0 || s.count > MAX_SHARDS || s.index == 0 || s.index > s.count {
            return Err(format!(
                "{} says it is shard {}/{}: a shard is I/N with I from 1 to N and N at most {MAX_SHARDS}",
                path.display(),
                s.index,
                s.count
            ));
        }
        if s.batch != shape.batch {
            return Err(format!(
                "{} and {} are shards of different batches (other files, --seed, --set, --filter, --tag or --fail-fast): \
                 every shard must run the same command",
                path.display(),
                first_path.display()
            ));
        }
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
    // Listed up to 20; N is at most MAX_SHARDS, so counting is cheap.
    let missing = shape.count - seen.len();
    let listed: Vec<String> = (1..=shape.count)
        .filter(|i| !seen.contains_key(i))
        .take(20)
        .map(|i| format!("{i}/{}", shape.count))
        .collect();
    let more = match missing - listed.len() {
        0 => String::new(),
        n => format!(" and {n} more ({missing} in all)"),
    };
    if missing == 0 {
        Ok(())
    } else {
        Err(format!(
            "the results of shard{} {}{more} are missing: a merge of part of a batch would pass what never ran",
            if missing == 1 { "" } else { "s" },
            listed.join(", ")
        ))
    }
}

/// The entries of every shard in batch order, the parts of each split
/// sweep joined.
pub fn combine(records: Vec<Record>, golden: Option<&Path>) -> Result<Record, String> {
    let mut by_position: BTreeMap<usize, Vec<Entry>> = BTreeMap::new();
    for record in records {
        for e in record.scenarios {
            by_position.entry(e.position).or_default().push(e);
        }
    }
    let mut entries = Vec::with_capacity(by_position.len());
    for (_, parts) in by_position {
        entries.push(join(parts, golden)?);
    }
    Ok(Record::new(entries, None))
}

/// One file's entry from the shards' parts: a file that is not a sweep
/// has one; a sweep has one per shard that ran some of its points.
fn join(mut parts: Vec<Entry>, golden: Option<&Path>) -> Result<Entry, String> {
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
        .map(|g| match golden {
            Some(dir) => compare(&entry, &sweep.header, points, sweep.points_total, dir),
            None => Verdict::Error(
                PathBuf::from(&g.file),
                "its points ran on several shards: give merge --golden DIR to compare the table they make"
                    .to_string(),
            ),
        });
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

/// Compares a sweep's reassembled table with its golden file in `dir`,
/// named from the scenario file's stem as a batch names it (never a path
/// the shard's data gives; never written here: blessing is done by a
/// whole run on one machine).
fn compare(
    entry: &Entry,
    header: &[String],
    points: &[PointPart],
    total: usize,
    dir: &Path,
) -> Verdict {
    let path = golden::path_for(dir, &entry.file);
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
    golden::check_only(&path, &transcript)
}

/// A sweep's JSON document from the shards' parts: the points and rows
/// in point order, the status and problems of the merged entry. A part
/// that is not shaped as a sweep's document is refused, never indexed
/// blindly.
pub fn join_docs(mut docs: Vec<Json>, entry: &Entry) -> Result<Json, String> {
    let not_a_sweep = || {
        format!(
            "a shard's JSON document of {} is not a sweep's (no \"sweep\".\"rows\" and \"points\" lists)",
            entry.file
        )
    };
    let mut points: Vec<(u64, Json, Json)> = Vec::new();
    for doc in &mut docs {
        let fields = doc.as_object_mut().ok_or_else(not_a_sweep)?;
        let rows = fields
            .get_mut("sweep")
            .and_then(Json::as_object_mut)
            .and_then(|s| s.get_mut("rows"))
            .map(Json::take);
        let ps = fields.get_mut("points").map(Json::take);
        let (Some(Json::Array(rows)), Some(Json::Array(ps))) = (rows, ps) else {
            return Err(not_a_sweep());
        };
        for (row, point) in rows.into_iter().zip(ps) {
            points.push((point["index"].as_u64().unwrap_or(0), point, row));
        }
    }
    points.sort_by_key(|(index, _, _)| *index);
    // The parts differ only in their points (and seed: the first point's).
    let Some(mut doc) = docs.into_iter().next() else {
        return Err(not_a_sweep());
    };
    let (points, rows): (Vec<Json>, Vec<Json>) = points.into_iter().map(|(_, p, r)| (p, r)).unzip();
    let fields = doc.as_object_mut().ok_or_else(not_a_sweep)?;
    fields.insert("seed".into(), serde_json::json!(entry.seed));
    fields.insert("points".into(), Json::Array(points));
    if let Some(sweep) = fields.get_mut("sweep").and_then(Json::as_object_mut) {
        sweep.insert("rows".into(), Json::Array(rows));
    }
    fields.insert("status".into(), serde_json::json!(entry.status));
    fields.insert("problems".into(), serde_json::json!(entry.problems));
    // A report's document carries no golden verdict (the index does).
    fields.remove("golden");
    Ok(doc)
}
