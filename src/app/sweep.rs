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
    /// Each point's row: its values, its status, its expectations held,
    /// and the columns' measures (`-` for a point stopped at a limit).
    pub fn rows(&self) -> Vec<Vec<String>> {
        self.points
            .iter()
            .map(|p| {
                let mut row = p.values.clone();
                row.push(p.result.status().to_string());
                let verdicts = match &p.result {
                    FileResult::Ran(ran) => Some(&ran.verdicts),
                    FileResult::Dataflow(d) if d.run.is_ok() => Some(&d.verdicts),
                    _ => None,
                };
                match verdicts {
                    Some(verdicts) if p.cells.len() == self.columns.len() => {
                        let held = verdicts.iter().filter(|v| v.passed).count();
                        row.push(format!("{held} of {}", verdicts.len()));
                        row.extend(p.cells.iter().cloned());
                    }
                    _ => row.extend(std::iter::repeat_n("-".to_string(), self.columns.len() + 1)),
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
        header.extend(self.columns.iter().cloned());
        header
    }

    /// A sweep's transcript, and its golden file: the table of points.
    pub fn transcript(&self) -> String {
        let (name, seed) = self.meta().map_or(("", 0), |m| (m.name, m.seed));
        transcript(name, seed, &self.header(), &self.rows())
    }
}

/// The transcript of a sweep: its name, seed and table of points (`merge`
/// writes it from the rows of several shards).
pub fn transcript(name: &str, seed: u64, header: &[String], rows: &[Vec<String>]) -> String {
    format!(
        "scenario: {name}\nseed: {seed}\nsweep: {} points\n\n{}",
        rows.len(),
        crate::padded::table(header, rows)
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
                    "measure": p.measure,
                    "status": p.result.status(),
                    "problems": p.result.problems(),
                });
                if let FileResult::Dataflow(d) = &p.result
                    && let Ok(outcome) = &d.run
                {
                    use crate::dataflow::json as djson;
                    let passed = d.verdicts.iter().filter(|v| v.passed).count();
                    point["expectations_passed"] = json!(passed);
                    point["expectations_failed"] = json!(d.verdicts.len() - passed);
                    point["expectations"] = djson::expectations(&d.flow, &d.verdicts);
                    point["totals"] = djson::totals(&d.flow, outcome);
                    point["snapshots"] = djson::attempts(outcome);
                }
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
        let meta = self.meta();
        let mut doc = json!({
            "format_version": rjson::REPORT_FORMAT_VERSION,
            "file": file,
            "name": meta.map(|m| m.name),
            "summary": meta.and_then(|m| m.summary),
            "description": meta.and_then(|m| m.description),
            "tags": meta.map(|m| m.tags),
            "seed": meta.map(|m| m.seed),
            "status": if self.stopped() { "stopped" } else if self.passed() { "passed" } else { "failed" },
            "sweep": {
                "keys": self.keys,
                "columns": self.columns,
                "header": self.header(),
                "rows": self.rows(),
                "points_total": self.points_total,
            },
            "points": points,
            "problems": self.problems(),
        });
        if matches!(self.points.first(), Some(p) if matches!(p.result, FileResult::Dataflow(_))) {
            doc["kind"] = json!("dataflow");
        }
        doc
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
    let time = match Total::from_name(name) {
        Some(measure) => matches!(measure.unit(), Unit::Time | Unit::MaybeTime),
        None => crate::dataflow::sweep::is_time(name),
    };
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

/// Runs the points of a queue scenario's sweep that `mine` picks (by
/// their 0-based position; under `--shard`, this shard's), in parallel,
/// results in point order, with `run`.
pub fn run_sweep(
    source: Source,
    sweep: Sweep,
    mine: &(dyn Fn(usize) -> bool + Sync),
    opts: &Options,
    run: &RunPoint,
) -> FileResult {
    let columns = if sweep.columns.is_empty() {
        DEFAULT_COLUMNS.to_vec()
    } else {
        sweep.columns.clone()
    };
    let names = columns.iter().map(|t| t.name().to_string()).collect();
    let points = sweep.points.into_iter().map(|p| (p.values, p.scenario));
    run_points(
        source,
        sweep.keys,
        names,
        points.collect(),
        mine,
        opts,
        &|source, mut scenario, opts, at| {
            if let Some(seed) = opts.seed {
                scenario.seed = seed;
            }
            let mut result = run(source, scenario, opts);
            let (mut cells, mut measure) = (Vec::new(), None);
            if let FileResult::Ran(ran) = &mut result {
                for p in &mut ran.failures {
                    p.message = format!("at {at}: {}", p.message);
                }
                // Just made: the only holder.
                if let Some(outcome) = std::sync::Arc::get_mut(&mut ran.outcome) {
                    lighten(outcome);
                }
                cells = (columns.iter())
                    .map(|&t| text::shown_total(&ran.outcome, t))
                    .collect();
                measure = columns.first().and_then(|&t| number(&ran.outcome, t));
            }
            (result, cells, measure)
        },
    )
}

/// Runs the points of a dataflow's sweep that `mine` picks, as
/// [`run_sweep`] does.
pub fn run_dataflow_sweep(
    source: Source,
    sweep: crate::dataflow::sweep::Sweep,
    mine: &(dyn Fn(usize) -> bool + Sync),
    opts: &Options,
) -> FileResult {
    use crate::dataflow::sweep::{cell, measure};
    let points = sweep
        .points
        .into_iter()
        .map(|p| (p.values, (p.flow, p.columns)));
    run_points(
        source,
        sweep.keys,
        sweep.columns,
        points.collect(),
        mine,
        opts,
        &|source, (mut flow, columns), opts, at| {
            if let Some(seed) = opts.seed {
                flow.seed = seed;
            }
            let mut ran = crate::dataflow::run_and_judge(source, flow);
            for p in &mut ran.failures {
                p.message = format!("at {at}: {}", p.message);
            }
            let (mut cells, mut first) = (Vec::new(), None);
            if let Ok(outcome) = &ran.run {
                cells = (columns.iter())
                    .map(|&t| cell(&ran.flow, outcome, t))
                    .collect();
                first = columns
                    .first()
                    .and_then(|&t| measure(&ran.flow, outcome, t));
            }
            ran.lighten();
            (FileResult::Dataflow(Box::new(ran)), cells, first)
        },
    )
}

/// A point's result, its cells and its chart measure.
type PointResult = (FileResult, Vec<String>, Option<u64>);

/// Runs the points that `mine` picks, in parallel, each with `run` (given
/// the point's description, "delivery.max_receives = 3"), results in
/// point order.
fn run_points<P: Send>(
    source: Source,
    keys: Vec<String>,
    columns: Vec<String>,
    points: Vec<(Vec<String>, P)>,
    mine: &(dyn Fn(usize) -> bool + Sync),
    opts: &Options,
    run: &(dyn Fn(Source, P, &Options, &str) -> PointResult + Sync),
) -> FileResult {
    let points_total = points.len();
    let point_opts = Options {
        transcript: Transcript::None,
        census: false,
        ..opts.clone()
    };
    let points: Vec<PointRun> = points
        .into_par_iter()
        .enumerate()
        .filter(|(index, _)| mine(*index))
        .map(|(index, (values, point))| {
            let at = crate::scenario::describe_point(&keys, &values);
            let (result, cells, measure) = run(source.clone(), point, &point_opts, &at);
            PointRun {
                index,
                values,
                result,
                cells,
                measure,
            }
        })
        .collect();
    FileResult::Swept(Box::new(SweepRun {
        source,
        keys,
        columns,
        points,
        points_total,
    }))
}

/// The number the chart draws for a measure (`None` when it has none:
/// never happened, or not a number).
fn number(outcome: &Outcome, measure: Total) -> Option<u64> {
    use crate::model::{NO_TIME, Unit};
    let n = outcome.totals.number(measure);
    match measure.unit() {
        Unit::Stop => None,
        Unit::MaybeTime if n == NO_TIME => None,
        _ => Some(n),
    }
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
