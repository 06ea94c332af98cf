//! The geometry of the HTML report's timeline, in SVG user units: a lane
//! per message with marks for what happened, or, for runs with many
//! messages, the number of messages in each state over time. Templates only
//! draw what this computes, so a user template gets the numbers right too.

use serde_json::{Map, Value as Json, json};

use crate::duration::format as dur;
use crate::engine::{Detail, Outcome, STATE_COUNT};
use crate::model::{EventKind, Millis, Scenario, State};
use crate::report::history::Version;
use crate::report::scale::{LEFT, RIGHT, Scale, round};
use crate::words::sentence::describe;

/// Runs with more messages than this get the aggregate view.
pub const LANE_LIMIT: usize = crate::engine::HISTORY_MESSAGES as usize;

pub const WIDTH: f64 = 1000.0;
const TOP: f64 = 28.0;
const LANE: f64 = 24.0;
const AXIS: f64 = 34.0;
const AREA_HEIGHT: f64 = 260.0;

fn axis(scale: Scale, y: f64) -> Json {
    let ticks: Vec<Json> = placed(&scale)
        .into_iter()
        .map(|p| json!({ "time": p.time, "x": p.x, "label": p.label, "anchor": p.anchor }))
        .collect();
    json!({ "y": round(y), "ticks": ticks })
}

/// A tick of the time axis as drawn: its grid line at `x`, its label
/// (empty when it would overlap another) anchored so that it stays whole.
#[derive(Debug, Clone, PartialEq)]
struct Placed {
    time: Millis,
    x: f64,
    label: String,
    anchor: &'static str,
}

/// The axis's ticks with labels that never overlap or leave the chart:
/// the end of the run is labelled first, then each break's end and
/// start (a break's start label sits left of it, its end's right of it),
/// then the full-rate ticks; a label that would overlap one already
/// placed is left out (its grid line stays).
fn placed(scale: &Scale) -> Vec<Placed> {
    use crate::report::sweep_chart::label_width;
    const GAP: f64 = 4.0;
    let ticks = scale.ticks();
    let last = ticks.last().map(|(t, _)| *t);
    let rank = |t: Millis| {
        if Some(t) == last {
            0
        } else if scale.breaks().iter().any(|b| b.to == t) {
            1
        } else if scale.breaks().iter().any(|b| b.from == t) {
            2
        } else {
            3
        }
    };
    let mut out: Vec<Placed> = Vec::new();
    let mut spans: Vec<(usize, f64, f64)> = Vec::new();
    let mut order: Vec<usize> = (0..ticks.len()).collect();
    order.sort_by_key(|&i| (rank(ticks[i].0), i));
    for &i in &order {
        let (t, label) = &ticks[i];
        let (x, w) = (scale.x(*t), label_width(label));
        let mut anchor = match rank(*t) {
            1 => "start",
            2 => "end",
            _ => "middle",
        };
        let extent = |anchor: &str| match anchor {
            "start" => (x, x + w),
            "end" => (x - w, x),
            _ => (x - w / 2.0, x + w / 2.0),
        };
        if extent(anchor).1 > WIDTH {
            anchor = "end";
        }
        if extent(anchor).0 < 0.0 {
            anchor = "start";
        }
        let (from, to) = extent(anchor);
        let free = spans
            .iter()
            .all(|&(_, a, b)| to + GAP <= a || from >= b + GAP);
        if free {
            spans.push((i, from, to));
        }
        out.push(Placed {
            time: *t,
            x,
            label: if free { label.clone() } else { String::new() },
            anchor,
        });
    }
    out.sort_by_key(|p| p.time);
    out
}

/// The idle stretches drawn compressed, with what they hide.
fn breaks(scale: Scale) -> Vec<Json> {
    scale
        .breaks()
        .iter()
        .map(|b| {
            json!({
                "from": b.from,
                "to": b.to,
                "x1": scale.x(b.from),
                "x2": scale.x(b.to),
                "title": format!(
                    "nothing happens for {}, from {} to {}: drawn compressed",
                    dur(b.to - b.from),
                    dur(b.from),
                    dur(b.to)
                ),
            })
        })
        .collect()
}

fn inspections(scenario: &Scenario, outcome: &Outcome, scale: Scale) -> Vec<Json> {
    let all = &outcome.transitions;
    all.iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let Detail::Inspected { step, .. } = t.detail else {
                return None;
            };
            let x = scale.x(t.time);
            let did = what_it_did(scenario, step, t.time, &all[i + 1..]);
            Some(json!({
                "time": t.time,
                "x": x,
                // Near the right edge the label goes to the line's left.
                "anchor": if x > RIGHT - 40.0 { "end" } else { "start" },
                "label": format!("step {step}: {did}"),
                "title": format!("{}: {}; {did}", dur(t.time), describe(scenario, &t.detail)),
            }))
        })
        .collect()
}

/// What operator step `step` did at its inspection, from the transitions
/// that follow it at the same instant: "expire 3, repair, redrive 2".
fn what_it_did(
    scenario: &Scenario,
    step: u32,
    t0: Millis,
    after: &[crate::engine::Transition],
) -> String {
    use crate::model::Action;
    let mut counts = [0u64; 3];
    for t in after
        .iter()
        .take_while(|t| t.time == t0 && !matches!(t.detail, Detail::Inspected { .. }))
    {
        match t.detail.kind() {
            EventKind::Expired => counts[0] += 1,
            EventKind::Redriven => counts[1] += 1,
            EventKind::Purged => counts[2] += 1,
            _ => {}
        }
    }
    let Some(spec) = scenario.operators.get(step as usize - 1) else {
        return String::new();
    };
    let mut parts = Vec::new();
    if counts[0] > 0 {
        parts.push(format!("expire {}", counts[0]));
    }
    if spec.repair {
        parts.push("repair".to_string());
    }
    parts.push(match spec.action {
        Action::Hold => "hold".to_string(),
        Action::RedriveAll | Action::Redrive(_) => format!("redrive {}", counts[1]),
        Action::Purge => format!("purge {}", counts[2]),
    });
    parts.join(", ")
}

/// Each alarm's fire and clear instants (at most
/// [`crate::engine::ALARM_CHANGES_KEPT`] per alarm), as marks on the axis.
fn alarm_marks(scenario: &Scenario, outcome: &Outcome, scale: Scale) -> Vec<Json> {
    scenario
        .alarms
        .iter()
        .zip(&outcome.alarms)
        .flat_map(|(alarm, record)| {
            record.changes.iter().map(move |c| {
                let what = if c.fired { "fired" } else { "cleared" };
                let value = match c.value {
                    None => "none".to_string(),
                    Some(v) if alarm.metric.is_time() => dur(v),
                    Some(v) => v.to_string(),
                };
                json!({
                    "time": c.time,
                    "x": scale.x(c.time),
                    "fired": c.fired,
                    "title": format!(
                        "{}: alarm \"{}\" {what} ({} {value})",
                        dur(c.time),
                        alarm.name,
                        alarm.metric.name()
                    ),
                })
            })
        })
        .collect()
}

/// What every view shares: its mode, size, plot edges, axis, the
/// operator inspections and the alarms' instants. `bottom` is the plot's
/// lower edge.
fn frame(
    scenario: &Scenario,
    outcome: &Outcome,
    scale: Scale,
    mode: &str,
    bottom: f64,
) -> Map<String, Json> {
    let v = json!({
        "mode": mode,
        "width": WIDTH,
        "height": round(bottom + AXIS),
        "left": LEFT,
        "right": RIGHT,
        "top": TOP,
        "bottom": round(bottom),
        "end": scale.end,
        "axis": axis(scale, bottom),
        "inspections": inspections(scenario, outcome, scale),
        "alarms": alarm_marks(scenario, outcome, scale),
        "outages": super::flow_chart::outages(scenario, scale),
        "breaks": breaks(scale),
        "pieces": scale.pieces().iter().map(|&(a, b, x0, x1)| json!([a, b, round(x0), round(x1)])).collect::<Vec<_>>(),
    });
    let mut map = match v {
        Json::Object(map) => map,
        _ => Map::new(),
    };
    // Workers, ordering, capacity: the calls chart under the timeline.
    if scenario.flow.extended
        && let Some(calls) = super::flow_chart::calls(scenario, outcome, scale)
    {
        map.insert("calls".into(), calls);
    }
    map
}

/// The timeline of a run. `versions` (each message's rows over time) gives
/// the lane view; without it, or above [`LANE_LIMIT`] messages, the census
/// gives the aggregate view. Returns `null` when neither is available.
pub fn chart(scenario: &Scenario, outcome: &Outcome, versions: Option<&[Vec<Version>]>) -> Json {
    let mut activity = activity(outcome, versions);
    activity.sort_unstable();
    activity.dedup();
    let scale = Scale::compressing(outcome.totals.end_time, activity);
    chart_on(scenario, outcome, versions, scale)
}

/// The instants something happens in the run's timeline: whenever a row
/// changes (lane view), or on both sides of a change of the census.
fn activity(outcome: &Outcome, versions: Option<&[Vec<Version>]>) -> Vec<Millis> {
    match versions {
        Some(v) if v.len() <= LANE_LIMIT => v.iter().flatten().filter_map(|x| x.time).collect(),
        _ => match &outcome.census {
            Some(c) => {
                let points = c.points();
                let changes = points.windows(2).filter(|w| w[0].1 != w[1].1);
                // A change lies between two samples: neither side is idle.
                changes.flat_map(|w| [w[0].0, w[1].0]).collect()
            }
            None => Vec::new(),
        },
    }
}

/// [`chart`] on a given time axis.
fn chart_on(
    scenario: &Scenario,
    outcome: &Outcome,
    versions: Option<&[Vec<Version>]>,
    scale: Scale,
) -> Json {
    match versions {
        Some(v) if v.len() <= LANE_LIMIT => lanes(scenario, outcome, v, scale),
        _ => match &outcome.census {
            Some(c) => aggregate(scenario, outcome, c, scale),
            None => Json::Null,
        },
    }
}

/// Runs of more messages than this are compared by their states over
/// time (the aggregate view), which keeps the two timelines short enough
/// to read one above the other.
pub const COMPARED_LANES: usize = 40;

/// The timelines of two runs on one time axis (`compare`): it ends at the
/// later end, and an idle stretch is compressed only where both runs are
/// idle. Both are lane views, or both aggregate views when either run has
/// more than [`COMPARED_LANES`] messages.
pub fn shared(a: (&Scenario, &Outcome), b: (&Scenario, &Outcome)) -> (Json, Json) {
    let lanes = a.1.messages.len().max(b.1.messages.len()) <= COMPARED_LANES;
    let versions = |(s, o): (&Scenario, &Outcome)| super::history::versions(s, o).filter(|_| lanes);
    let (va, vb) = (versions(a), versions(b));
    let mut together = activity(a.1, va.as_deref());
    together.extend(activity(b.1, vb.as_deref()));
    together.sort_unstable();
    together.dedup();
    let end = a.1.totals.end_time.max(b.1.totals.end_time);
    let scale = Scale::compressing(end, together);
    (
        chart_on(a.0, a.1, va.as_deref(), scale),
        chart_on(b.0, b.1, vb.as_deref(), scale),
    )
}

/// The mark kinds of the lane view, in legend order.
pub const MARKS: [EventKind; 9] = [
    EventKind::Delivered,
    EventKind::Failed,
    EventKind::Committed,
    EventKind::DedupHit,
    EventKind::AckLost,
    EventKind::Quarantined,
    EventKind::Expired,
    EventKind::Redriven,
    EventKind::Purged,
];

/// The marks drawn on a lane's line (the others sit above or below it).
const ON_THE_LINE: [EventKind; 6] = [
    EventKind::Delivered,
    EventKind::Failed,
    EventKind::Quarantined,
    EventKind::Expired,
    EventKind::Redriven,
    EventKind::Purged,
];

/// How far apart marks of one instant on one line are drawn.
const SPREAD: f64 = 7.0;

/// The lane lines' states, in legend order.
const LEGEND_STATES: [State; 9] = [
    State::Waiting,
    State::Ready,
    State::InFlight,
    State::Quarantined,
    State::Acked,
    State::Expired,
    State::Purged,
    State::Dropped,
    State::Skipped,
];

/// A lane's line: the message's state from one time to the next, with
/// consecutive versions in one state joined; nothing while it waits.
fn segments(vs: &[Version], end: Millis) -> Vec<(State, Millis, Millis)> {
    let mut out: Vec<(State, Millis, Millis)> = Vec::new();
    for (k, v) in vs.iter().enumerate() {
        let Some(from) = v.time else { continue };
        // Only the last state of an instant is drawn (the others are
        // playback's, transition by transition).
        if vs.get(k + 1).and_then(|n| n.time) == Some(from) {
            continue;
        }
        let to = vs.get(k + 1).and_then(|n| n.time).unwrap_or(end).max(from);
        match out.last_mut() {
            Some(last) if last.0 == v.row.state => last.2 = to,
            // Not arrived yet: nothing to draw.
            _ if v.row.state == State::Waiting && v.row.total_receives == 0 => {}
            _ => out.push((v.row.state, from, to)),
        }
    }
    out
}

fn lanes(scenario: &Scenario, outcome: &Outcome, versions: &[Vec<Version>], scale: Scale) -> Json {
    let mut marks: Vec<Vec<Json>> = vec![Vec::new(); versions.len()];
    let mut seen = [false; MARKS.len()];
    // Per lane: the instant of its latest mark drawn on the line, and how
    // many were drawn then; each further one moves right so none hides
    // another (a delivery, its failure and its quarantine at one instant).
    let mut on_line: Vec<(Millis, u32)> = vec![(Millis::MAX, 0); versions.len()];
    for t in &outcome.transitions {
        let Some(m) = t.message else { continue };
        let kind = t.detail.kind();
        if let Some(k) = MARKS.iter().position(|&x| x == kind) {
            seen[k] = true;
            let mut x = scale.x(t.time);
            if ON_THE_LINE.contains(&kind) {
                let (at, n) = &mut on_line[m as usize];
                if *at == t.time {
                    x = round(x + SPREAD * *n as f64);
                    *n += 1;
                } else {
                    (*at, *n) = (t.time, 1);
                }
            }
            marks[m as usize].push(json!({
                "time": t.time,
                "x": x,
                "kind": kind.as_str(),
                "title": format!("{}  {}: {}", dur(t.time), scenario.message_id(m), describe(scenario, &t.detail)),
            }));
        }
    }
    let extended = scenario.guarantees.extended;
    let mut spans = if extended {
        super::guarantee_chart::lane_spans(
            scenario,
            outcome,
            |t| scale.x(t),
            scale.end,
            versions.len(),
        )
    } else {
        Vec::new()
    }
    .into_iter();
    let mut heads = super::flow_chart::heads(scenario, outcome, versions.len()).into_iter();
    let mut states_seen = [false; STATE_COUNT];
    let lanes: Vec<Json> = versions
        .iter()
        .zip(marks)
        .enumerate()
        .map(|(i, (vs, marks))| {
            let y = round(TOP + LANE * i as f64 + LANE / 2.0);
            let segments: Vec<Json> = segments(vs, scale.end)
                .into_iter()
                .map(|(state, from, to)| {
                    states_seen[state as usize] = true;
                    json!({
                        "state": state.as_str(),
                        "from": from,
                        "to": to,
                        "x1": scale.x(from),
                        "x2": scale.x(to),
                    })
                })
                .collect();
            let mut lane = json!({
                "id": vs.first().map(|v| v.row.id.clone()).unwrap_or_default(),
                "y": y,
                "segments": segments,
                "marks": marks,
            });
            if let Some(Some(holds)) = heads.next() {
                lane["holds"] = json!(holds);
            }
            if let Some((deliveries, claims)) = spans.next() {
                lane["deliveries"] = json!(deliveries);
                lane["claims"] = json!(claims);
            }
            lane
        })
        .collect();
    let mut view = frame(
        scenario,
        outcome,
        scale,
        "lanes",
        TOP + LANE * versions.len() as f64,
    );
    view.insert("lanes".into(), json!(lanes));
    if extended {
        let canaries = super::guarantee_chart::canary_phases(scenario, outcome, |t| scale.x(t));
        view.insert("canaries".into(), json!(canaries));
        let write_intent = matches!(
            scenario.guarantees.dedup_mode,
            crate::model::DedupMode::WriteIntent { .. }
        );
        view.insert("write_intent".into(), json!(write_intent));
    }
    // The legend lists only what the lanes show.
    let marks: Vec<&str> = MARKS
        .iter()
        .zip(seen)
        .filter(|(_, seen)| *seen)
        .map(|(k, _)| k.as_str())
        .collect();
    view.insert("marks".into(), json!(marks));
    let states: Vec<&str> = LEGEND_STATES
        .iter()
        .filter(|&&s| states_seen[s as usize])
        .map(|s| s.as_str())
        .collect();
    view.insert("states".into(), json!(states));
    Json::Object(view)
}

mod aggregate;
use aggregate::aggregate;

#[cfg(test)]
mod tests;
