//! The HTML report's log lanes (docs/model.md section 23): per partition
//! (the first [`SAMPLED_PARTITIONS`]), its position and log end against time,
//! each checkpoint as a tick, each restart as a gap with an arrow from the
//! position it left to the one it resumed from, the reprocessed and the
//! skipped offsets shaded; and the consumer's lag as a chart. Drawn from
//! the run's samples, so bounded whatever its size.

use serde_json::{Value as Json, json};

use crate::duration::format as dur;
use crate::engine::{Outcome, SAMPLED_PARTITIONS};
use crate::model::{Millis, Scenario};

const LEFT: f64 = 70.0;
const RIGHT: f64 = 880.0;
const LANE: f64 = 70.0;
const GAP: f64 = 34.0;
const TOP: f64 = 24.0;
/// The most checkpoint ticks drawn per lane.
const TICKS: u64 = 200;

fn r1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The geometry, or none for a run without a log (or without samples).
pub fn log_chart(scenario: &Scenario, outcome: &Outcome) -> Option<Json> {
    let (spec, log) = (scenario.log.as_ref()?, outcome.log.as_ref()?);
    let samples = &log.samples;
    let end = samples.last()?.at.max(1);
    let x = |t: Millis| r1(LEFT + (RIGHT - LEFT) * t.min(end) as f64 / end as f64);
    let shown = log.partitions.len().min(SAMPLED_PARTITIONS);
    let ticks: Vec<f64> = match spec.checkpoint_interval {
        Some(i) if i > 0 && end / i <= TICKS => (1..=end / i).map(|k| x(k * i)).collect(),
        _ => Vec::new(),
    };
    let lanes: Vec<Json> = (0..shown)
        .map(|p| {
            let top = TOP + p as f64 * (LANE + GAP);
            let most = log.partitions[p].0.max(1);
            let y = |off: u64| r1(top + LANE - LANE * off.min(most) as f64 / most as f64);
            let line = |pick: &dyn Fn(usize) -> u64| {
                (samples.iter().enumerate())
                    .map(|(i, s)| format!("{},{}", x(s.at), y(pick(i))))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let mut restarts = Vec::new();
            for (r, record) in log.restarts.iter().enumerate() {
                let Some(k) = record.partitions.iter().position(|&q| q as usize == p) else {
                    continue;
                };
                let (before, resume) = (record.positions_before[k], record.resume_positions[k]);
                let back_at = record.at.saturating_add(spec.restarts[r].down_for);
                // The shaded offsets: processed again until the position
                // passes where it was, or passed over for good.
                let (band, until) = if resume < before {
                    let crossed = (samples.iter())
                        .find(|s| s.at >= back_at && s.positions[p] >= before)
                        .map_or(end, |s| s.at);
                    ("reprocessed", crossed)
                } else {
                    ("skipped", end)
                };
                restarts.push(json!({
                    "restart": r + 1,
                    "x": x(record.at),
                    "x_back": x(back_at),
                    "y_before": y(before),
                    "y_resume": y(resume),
                    "band": if before == resume { "" } else { band },
                    "band_x": x(record.at),
                    "band_width": r1((x(until) - x(record.at)).max(1.0)),
                    "band_y": y(before.max(resume)),
                    "band_height": r1((y(before.min(resume)) - y(before.max(resume))).max(1.0)),
                    "title": format!(
                        "restart {} at {}: position {before} -> {resume}{}",
                        r + 1,
                        dur(record.at),
                        match resume.cmp(&before) {
                            std::cmp::Ordering::Less => format!(", {} processed again", before - resume),
                            std::cmp::Ordering::Greater => format!(", {} passed over", resume - before),
                            std::cmp::Ordering::Equal => String::new(),
                        }
                    ),
                }));
            }
            json!({
                "partition": p,
                "top": top,
                "bottom": r1(top + LANE),
                "most": log.partitions[p].0,
                "position": line(&|i| samples[i].positions[p]),
                "end": line(&|i| samples[i].ends[p]),
                "restarts": restarts,
            })
        })
        .collect();
    let lag_top = TOP + shown as f64 * (LANE + GAP);
    let most_lag = samples.iter().map(|s| s.lag).max().unwrap_or(0).max(1);
    let lag_y = |l: u64| r1(lag_top + LANE - LANE * l as f64 / most_lag as f64);
    let lag = (samples.iter())
        .map(|s| format!("{},{}", x(s.at), lag_y(s.lag)))
        .collect::<Vec<_>>()
        .join(" ");
    Some(json!({
        "left": LEFT,
        "right": RIGHT,
        "height": r1(lag_top + LANE + 30.0),
        "lanes": lanes,
        "partitions": log.partitions.len(),
        "ticks": ticks,
        "lag": lag,
        "lag_top": lag_top,
        "lag_bottom": r1(lag_top + LANE),
        "most_lag": samples.iter().map(|s| s.lag).max().unwrap_or(0),
        "end": dur(end),
        "end_ms": end,
        "top": TOP,
        "samples": samples.len(),
    }))
}
