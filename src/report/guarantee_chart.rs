//! The timeline's geometry for sections 17-22: each delivery's span on its
//! message's lane (overlapping deliveries on separate tracks), the key's
//! INTENT and DONE intervals, and each canary redrive as a phase of its
//! operator step. Only files that use those sections get them, so other
//! reports keep their bytes.

use serde_json::{Value as Json, json};

use crate::duration::format as dur;
use crate::engine::{Detail, Outcome};
use crate::model::{MessageIndex, Millis, Scenario};
use crate::words::sentence::describe;

/// At most this many tracks of overlapping deliveries on one lane.
const TRACKS: usize = 3;

/// Per message: its deliveries' spans and its key's claims, both as JSON
/// arrays, for the lanes of `count` messages.
/// `x` maps modeled time onto the plot; `end` is the run's end.
pub fn lane_spans(
    scenario: &Scenario,
    outcome: &Outcome,
    x: impl Fn(Millis) -> f64,
    end: Millis,
    count: usize,
) -> Vec<(Vec<Json>, Vec<Json>)> {
    let mut open: Vec<Vec<Millis>> = vec![Vec::new(); count];
    let mut deliveries: Vec<Vec<(Millis, Millis)>> = vec![Vec::new(); count];
    let mut claims: Vec<Vec<(&str, Millis, Millis, String)>> = vec![Vec::new(); count];
    for t in &outcome.transitions {
        let Some(m) = t.message else { continue };
        let m = m as usize;
        if m >= count {
            continue;
        }
        let started = match t.detail {
            Detail::Delivered { .. } => {
                open[m].push(t.time);
                None
            }
            Detail::ReceiptExpired { started, .. } | Detail::Crashed { started, .. } => {
                Some(started)
            }
            Detail::Acked | Detail::AckLost | Detail::Failed { .. } => open[m].last().copied(),
            Detail::Claimed { lease_expires, .. } => {
                claims[m].push(("intent", t.time, lease_expires.min(end), text(scenario, t)));
                None
            }
            Detail::DoneRecorded { expires_at, .. } => {
                claims[m].push(("done", t.time, expires_at.min(end), text(scenario, t)));
                None
            }
            _ => None,
        };
        if let Some(s) = started
            && let Some(k) = open[m].iter().position(|&o| o == s)
        {
            open[m].remove(k);
            if t.time > s {
                deliveries[m].push((s, t.time));
            }
        }
    }
    (0..count)
        .map(|m| {
            let spans = tracks(&deliveries[m])
                .into_iter()
                .map(|(track, (from, to))| {
                    let id = scenario.message_id(m as MessageIndex);
                    json!({
                        "track": track,
                        "x1": x(from),
                        "x2": x(to),
                        "title": format!("{id}: a delivery in flight from {} to {}", dur(from), dur(to)),
                    })
                })
                .collect();
            let claims = claims[m]
                .iter()
                .enumerate()
                .map(|(k, &(kind, from, to, ref title))| {
                    // An interval ends where the key's next claim or DONE
                    // on this lane begins.
                    let to = claims[m].get(k + 1).map_or(to, |n| to.min(n.1)).max(from);
                    json!({ "kind": kind, "x1": x(from), "x2": x(to), "title": title })
                })
                .collect();
            (spans, claims)
        })
        .collect()
}

fn text(scenario: &Scenario, t: &crate::engine::Transition) -> String {
    let who = t
        .message
        .map_or(String::new(), |m| scenario.message_id(m).into_owned());
    format!("{}  {who}: {}", dur(t.time), describe(scenario, &t.detail))
}

/// Overlapping spans on separate tracks (at most [`TRACKS`]; deeper
/// overlaps share the last).
fn tracks(spans: &[(Millis, Millis)]) -> Vec<(usize, (Millis, Millis))> {
    let mut sorted = spans.to_vec();
    sorted.sort();
    let mut busy_until: Vec<Millis> = Vec::new();
    sorted
        .into_iter()
        .map(|(from, to)| {
            let track = match busy_until.iter().position(|&u| u <= from) {
                Some(k) => k,
                None if busy_until.len() < TRACKS => {
                    busy_until.push(0);
                    busy_until.len() - 1
                }
                None => TRACKS - 1,
            };
            busy_until[track] = busy_until[track].max(to);
            (track, (from, to))
        })
        .collect()
}

/// Each canary redrive: from its step's inspection to the instant the
/// canaries decided, with the outcome.
pub fn canary_phases(
    scenario: &Scenario,
    outcome: &Outcome,
    x: impl Fn(Millis) -> f64,
) -> Vec<Json> {
    let mut inspected = 0;
    let mut out = Vec::new();
    for t in &outcome.transitions {
        match t.detail {
            Detail::Inspected { .. } => inspected = t.time,
            Detail::CanaryPassed { .. } | Detail::CanaryFailed { .. } => {
                let passed = matches!(t.detail, Detail::CanaryPassed { .. });
                out.push(json!({
                    "x1": x(inspected),
                    "x2": x(t.time).max(x(inspected) + 2.0),
                    "passed": passed,
                    "label": if passed { "canary passed" } else { "canary failed" },
                    "title": format!(
                        "canary from {} to {}: {}",
                        dur(inspected),
                        dur(t.time),
                        describe(scenario, &t.detail)
                    ),
                }));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_deliveries_take_separate_tracks() {
        let placed = tracks(&[(0, 45), (30, 75), (60, 105), (80, 90), (50, 200), (85, 95)]);
        let track_of = |from| placed.iter().find(|(_, s)| s.0 == from).unwrap().0;
        assert_eq!(track_of(0), 0);
        assert_eq!(track_of(30), 1);
        // The first track is free again at 45.
        assert_eq!(track_of(50), 0);
        assert_eq!(track_of(60), 2);
        assert_eq!(track_of(80), 1);
        // Every track busy: the last one is shared.
        assert_eq!(track_of(85), 2);
    }
}
