//! Running a sweep: every point in parallel, each with the file's seed,
//! judged on its own; the sweep passes when every point does.

use rayon::prelude::*;

use super::result::{FileResult, Options, Transcript};
pub use super::result::{PointRun, SweepRun};
use crate::diagnostic::Source;
use crate::engine::Outcome;
use crate::model::{Scenario, Total};
use crate::report::text;
use crate::scenario::Sweep;

/// The measures a sweep's table shows when `[sweep] columns` lists none.
pub const DEFAULT_COLUMNS: [Total; 5] = [
    Total::Acked,
    Total::Quarantined,
    Total::Effects,
    Total::DuplicatedEffects,
    Total::EndTime,
];

impl SweepRun {
    /// `[sweep] columns`, or [`DEFAULT_COLUMNS`].
    pub fn shown_columns(&self) -> Vec<Total> {
        if self.columns.is_empty() {
            DEFAULT_COLUMNS.to_vec()
        } else {
            self.columns.clone()
        }
    }

    /// Each point's row: its values, its status, its expectations held,
    /// and the columns' measures (`-` for a point stopped at a limit).
    pub fn rows(&self) -> Vec<Vec<String>> {
        let columns = self.shown_columns();
        self.points
            .iter()
            .map(|p| {
                let mut row = p.values.clone();
                row.push(p.result.status().to_string());
                match &p.result {
                    FileResult::Ran(ran) => {
                        let held = ran.verdicts.iter().filter(|v| v.passed).count();
                        row.push(format!("{held} of {}", ran.verdicts.len()));
                        row.extend(columns.iter().map(|&t| text::shown_total(&ran.outcome, t)));
                    }
                    _ => row.extend(std::iter::repeat_n("-".to_string(), columns.len() + 1)),
                }
                row
            })
            .collect()
    }

    /// The header of [`SweepRun::rows`].
    pub fn header(&self) -> Vec<String> {
        let mut header = self.keys.clone();
        header.push("status".into());
        header.push("expectations".into());
        header.extend(self.shown_columns().iter().map(|t| t.name().to_string()));
        header
    }

    /// A sweep's transcript, and its golden file: the table of points.
    pub fn transcript(&self) -> String {
        let (name, seed) = self
            .scenario()
            .map_or(("", 0), |s| (s.name.as_str(), s.seed));
        transcript(name, seed, &self.header(), &self.rows())
    }
}

/// The transcript of a sweep: its name, seed and table of points (`merge`
/// writes it from the rows of several shards).
pub fn transcript(name: &str, seed: u64, header: &[String], rows: &[Vec<String>]) -> String {
    format!(
        "scenario: {name}\nseed: {seed}\nsweep: {} points\n\n{}",
        rows.len(),
        text::table(header, rows)
    )
}

impl SweepRun {
    /// The sweep in JSON: `sweep` (`keys`, `columns`) and `points`, each
    /// with its `values` (path to value), `status`, expectations, problems
    /// and totals (kinds, alarms and sinks when the file has them).
    pub fn json(&self, file: &str) -> serde_json::Value {
        use crate::report::json as rjson;
        use serde_json::json;
        let points: Vec<serde_json::Value> = self
            .points
            .iter()
            .map(|p| {
                let values: serde_json::Map<String, serde_json::Value> = self
                    .keys
                    .iter()
                    .zip(&p.values)
                    .map(|(k, v)| (k.clone(), toml_to_json(v)))
                    .collect();
                let mut point = json!({
                    "index": p.index,
                    "values": values,
                    "measure": self.measure(p),
                    "status": p.result.status(),
                    "problems": p.result.problems(),
                });
                if let FileResult::Ran(ran) = &p.result {
                    let passed = ran.verdicts.iter().filter(|v| v.passed).count();
                    point["expectations_passed"] = json!(passed);
                    point["expectations_failed"] = json!(ran.verdicts.len() - passed);
                    point["expectations"] = rjson::expectations(&ran.scenario, &ran.verdicts);
                    point["totals"] = rjson::totals(&ran.scenario, &ran.outcome);
                    if !ran.scenario.kinds.is_empty() {
                        point["kinds"] = rjson::kinds(&ran.scenario, &ran.outcome);
                    }
                    if !ran.scenario.alarms.is_empty() {
                        point["alarms"] = rjson::alarms(&ran.scenario, &ran.outcome);
                    }
                    if ran.scenario.guarantees.sinks_written {
                        point["sinks"] =
                            crate::report::guarantee_json::sinks(&ran.scenario, &ran.outcome);
                    }
                }
                point
            })
            .collect();
        let scenario = self.scenario();
        json!({
            "format_version": rjson::REPORT_FORMAT_VERSION,
            "file": file,
            "name": scenario.map(|s| &s.name),
            "summary": scenario.and_then(|s| s.summary.as_ref()),
            "description": scenario.and_then(|s| s.description.as_ref()),
            "tags": scenario.map(|s| &s.tags),
            "seed": scenario.map(|s| s.seed),
            "status": if self.stopped() { "stopped" } else if self.passed() { "passed" } else { "failed" },
            "sweep": {
                "keys": self.keys,
                "columns": self.shown_columns().iter().map(|t| t.name()).collect::<Vec<_>>(),
                "header": self.header(),
                "rows": self.rows(),
                "points_total": self.points_total,
            },
            "points": points,
            "problems": self.problems(),
        })
    }
}

impl SweepRun {
    /// The number the chart draws for a point: its first column's
    /// measure (`None` when it has none: stopped, or never happened).
    fn measure(&self, point: &PointRun) -> Option<u64> {
        use crate::model::{NO_TIME, Unit};
        let measure = *self.shown_columns().first()?;
        let FileResult::Ran(ran) = &point.result else {
            return None;
        };
        let n = ran.outcome.totals.number(measure);
        match measure.unit() {
            Unit::Stop => None,
            Unit::MaybeTime if n == NO_TIME => None,
            _ => Some(n),
        }
    }
}

/// The HTML chart of a sweep's JSON document (see [`SweepRun::json`]):
/// the first column against the first swept key.
pub fn chart(doc: &serde_json::Value) -> Option<crate::report::sweep_chart::SweepChart> {
    use crate::model::Unit;
    use crate::report::sweep_chart::{ChartPoint, sweep_chart};
    let sweep = &doc["sweep"];
    let keys: Vec<String> = serde_json::from_value(sweep["keys"].clone()).ok()?;
    let rows: Vec<Vec<String>> = serde_json::from_value(sweep["rows"].clone()).ok()?;
    let name = sweep["columns"].get(0)?.as_str()?;
    let measure = Total::from_name(name)?;
    let time = matches!(measure.unit(), Unit::Time | Unit::MaybeTime);
    let shown = keys.len() + 2;
    let points: Vec<ChartPoint> = rows
        .iter()
        .zip(doc["points"].as_array()?)
        .filter(|(row, _)| row.len() > shown)
        .map(|(row, point)| ChartPoint {
            values: &row[..keys.len()],
            measure: point["measure"].as_u64(),
            shown: row[shown].clone(),
        })
        .collect();
    sweep_chart(&keys, name, &points, time)
}

/// A value as TOML writes it, in JSON (`3`, `0.05`, `"1s"`).
fn toml_to_json(v: &str) -> serde_json::Value {
    format!("x = {v}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("x").cloned())
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or_else(|| serde_json::Value::String(v.to_string()))
}

/// How one point runs: the batch's way of running a scenario.
pub type RunPoint = dyn Fn(Source, Scenario, &Options) -> FileResult + Sync;

/// Runs the points of a sweep that `mine` picks (by their 0-based
/// position; under `--shard`, this shard's), in parallel, results in
/// point order, with `run`.
pub fn run_sweep(
    source: Source,
    sweep: Sweep,
    mine: &(dyn Fn(usize) -> bool + Sync),
    opts: &Options,
    run: &RunPoint,
) -> FileResult {
    let keys = sweep.keys;
    let points_total = sweep.points.len();
    let points: Vec<PointRun> = sweep
        .points
        .into_par_iter()
        .enumerate()
        .filter(|(index, _)| mine(*index))
        .map(|(index, point)| {
            let mut scenario = point.scenario;
            if let Some(seed) = opts.seed {
                scenario.seed = seed;
            }
            let at = crate::scenario::describe_point(&keys, &point.values);
            let point_opts = Options {
                transcript: Transcript::None,
                census: false,
                ..opts.clone()
            };
            let mut result = run(source.clone(), scenario, &point_opts);
            if let FileResult::Ran(ran) = &mut result {
                for p in &mut ran.failures {
                    p.message = format!("at {at}: {}", p.message);
                }
                // Just made: the only holder.
                if let Some(outcome) = std::sync::Arc::get_mut(&mut ran.outcome) {
                    lighten(outcome);
                }
            }
            PointRun {
                index,
                values: point.values,
                result,
            }
        })
        .collect();
    FileResult::Swept(Box::new(SweepRun {
        source,
        keys,
        columns: sweep.columns,
        points,
        points_total,
    }))
}

/// Drops what a point's result is not read for (per-message state,
/// transitions, the ledger, draws), keeping totals, kinds, alarms, calls.
fn lighten(outcome: &mut Outcome) {
    outcome.messages = Default::default();
    outcome.transitions = Vec::new();
    outcome.ledger = Vec::new();
    outcome.state_changes = Vec::new();
    outcome.queue_waits = Vec::new();
    outcome.census = None;
    outcome.draws = Default::default();
}
