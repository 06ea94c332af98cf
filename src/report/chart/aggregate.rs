//! The aggregate view of a run too large for a lane per message: the
//! messages per state over time as stacked areas, from the census, the
//! waiting told apart (those waiting for a retry, and on top those that
//! have not arrived).

use serde_json::{Value as Json, json};

use super::{AREA_HEIGHT, TOP, frame};
use crate::engine::{Census, Outcome, STATE_COUNT};
use crate::model::{Millis, Scenario, State};
use crate::report::flow_chart;
use crate::report::scale::{Scale, round};

/// The aggregate view's layers: one per state (the waiting ones those
/// waiting for a retry), and the messages that have not arrived.
const LAYER_COUNT: usize = STATE_COUNT + 1;
const NOT_ARRIVED: usize = STATE_COUNT;

/// How the pages name a layer: a state's own name, but the two kinds of
/// waiting told apart.
fn layer_label(name: &str) -> String {
    match name {
        "waiting" => "waiting for retry".into(),
        _ => name.replace('_', " "),
    }
}

/// Bottom-to-top order of the aggregate view's stacked areas (below the
/// messages that have not arrived, the top layer).
const STACK: [State; STATE_COUNT] = [
    State::Acked,
    State::Dropped,
    State::Skipped,
    State::Expired,
    State::Purged,
    State::Quarantined,
    State::InFlight,
    State::Ready,
    State::Waiting,
];

pub(super) fn aggregate(scenario: &Scenario, outcome: &Outcome, c: &Census, scale: Scale) -> Json {
    let total = outcome.totals.messages.max(1) as f64;
    let bottom = TOP + AREA_HEIGHT;
    let y = |count: u64| round(bottom - count as f64 / total * AREA_HEIGHT);
    // A layer per state, the waiting apart: those waiting for a retry,
    // then on top those that have not arrived.
    let points: Vec<(Millis, [u64; LAYER_COUNT])> = (c.points().into_iter())
        .zip(c.not_arrived_points())
        .map(|((t, counts), (_, not_arrived))| {
            let mut layers = [0; LAYER_COUNT];
            layers[..STATE_COUNT].copy_from_slice(&counts);
            layers[State::Waiting as usize] -= not_arrived;
            layers[NOT_ARRIVED] = not_arrived;
            (t, layers)
        })
        .collect();
    let last = points.last().map_or([0; LAYER_COUNT], |(_, l)| *l);
    let mut below = vec![0u64; points.len()];
    let mut areas = Vec::new();
    // `dropped` and `skipped` are layers only for runs where some message
    // was in that state.
    let stack = (STACK.iter().filter(|&&s| c.shows(s)))
        .map(|&s| (s as usize, s.as_str()))
        .chain([(NOT_ARRIVED, "not_arrived")])
        .collect::<Vec<_>>();
    for &(layer, name) in &stack {
        let above: Vec<u64> = points
            .iter()
            .zip(&below)
            .map(|((_, counts), b)| b + counts[layer])
            .collect();
        let mut outline: Vec<String> = points
            .iter()
            .zip(&above)
            .map(|((t, _), a)| format!("{},{}", scale.x(*t), y(*a)))
            .collect();
        outline.extend(
            points
                .iter()
                .zip(&below)
                .rev()
                .map(|((t, _), b)| format!("{},{}", scale.x(*t), y(*b))),
        );
        let peak = points
            .iter()
            .map(|(_, counts)| counts[layer])
            .max()
            .unwrap_or(0);
        areas.push(json!({
            "state": name,
            "label": layer_label(name),
            "points": outline.join(" "),
            "peak": peak,
            "final": last[layer],
        }));
        below = above;
    }
    let y_ticks: Vec<Json> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|f| {
            let count = (total * f).round() as u64;
            json!({ "y": y(count), "label": count })
        })
        .collect();
    let samples: Vec<Json> = points
        .iter()
        .map(|(t, counts)| {
            let mut row = serde_json::Map::new();
            row.insert("time".into(), json!(t));
            for &(layer, name) in &stack {
                row.insert(name.into(), json!(counts[layer]));
            }
            Json::Object(row)
        })
        .collect();
    let mut view = frame(scenario, outcome, scale, "aggregate", bottom);
    view.insert("depth".into(), flow_chart::depth(c, scale));
    view.insert("areas".into(), json!(areas));
    view.insert("y_ticks".into(), json!(y_ticks));
    view.insert("samples".into(), json!(samples));
    Json::Object(view)
}
