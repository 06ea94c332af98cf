//! The JSON form of a run. Times are integer milliseconds; field order is
//! fixed, so the same run always gives the same bytes.

use serde_json::{Map, Value as Json, json};

use crate::diagnostic::Located;
use crate::engine::Outcome;
use crate::model::{
    Check, KindField, Millis, Scenario, State, Target, Total, Value, Verdict, describe,
};
use crate::report::document::{Document, List, Listed, Run};
use crate::report::transition_json::TransitionJson;

fn value(v: &Value) -> Json {
    v.to_json()
}

fn check(c: &Check) -> Json {
    match c {
        Check::Equals(v) => json!({ "equals": value(v) }),
        Check::AtLeast(v) => json!({ "at_least": value(v) }),
        Check::AtMost(v) => json!({ "at_most": value(v) }),
        Check::Between(a, b) => json!({ "between": [value(a), value(b)] }),
        Check::Occurs => json!({ "occurs": true }),
    }
}

pub fn expectations(scenario: &Scenario, verdicts: &[Verdict]) -> Json {
    Json::Array(
        verdicts
            .iter()
            .map(|v| {
                let e = &scenario.expectations[v.index];
                let (expected, expected_text) = match &e.target {
                    Target::Event { never, .. } => (
                        json!({ "occurs": !never }),
                        if *never { "never" } else { "to occur" }.to_string(),
                    ),
                    _ => (check(&e.check), e.check.to_string()),
                };
                json!({
                    "expectation": describe(scenario, e),
                    "description": e.description,
                    "expected": expected,
                    "expected_text": expected_text,
                    "actual": value(&v.actual),
                    "actual_text": v.actual.to_string(),
                    "passed": v.passed,
                })
            })
            .collect(),
    )
}

pub use super::document::{LARGE_RUN_MESSAGES, listed};

/// The snapshot rows of the first [`listed`] messages.
pub fn snapshot(scenario: &Scenario, outcome: &Outcome) -> Json {
    listed_json(List::Messages, scenario, outcome)
}

/// The transitions (without their sentences), as JSON.
pub fn transitions(scenario: &Scenario, outcome: &Outcome) -> Json {
    Json::Array(
        outcome
            .transitions
            .iter()
            .map(|transition| {
                serde_json::to_value(TransitionJson {
                    scenario,
                    transition,
                    with_text: false,
                })
                .unwrap_or_default()
            })
            .collect(),
    )
}

/// The ledger, as JSON.
pub fn ledger(scenario: &Scenario, outcome: &Outcome) -> Json {
    listed_json(List::Ledger, scenario, outcome)
}

fn listed_json(list: List, scenario: &Scenario, outcome: &Outcome) -> Json {
    serde_json::to_value(Listed {
        list,
        scenario,
        outcome,
    })
    .unwrap_or_default()
}

/// The measures the run lists (see [`Total::listed`]): counts and
/// milliseconds as numbers, an absent value as null, a stop reason as text.
pub fn totals(scenario: &Scenario, outcome: &Outcome) -> Json {
    let mut map = Map::new();
    map.insert("messages".into(), json!(outcome.totals.messages));
    for total in Total::listed(scenario) {
        map.insert(total.name().into(), value(&outcome.totals.get(total)));
    }
    Json::Object(map)
}

/// Rows of the calls table in Markdown and HTML reports.
pub const CALLS_TABLE_ROWS: usize = 40;

/// Calls offered and accepted per window, in at most `max_rows` rows (each
/// row a span of windows, its busiest window's count kept).
pub fn calls(scenario: &Scenario, outcome: &Outcome, max_rows: usize) -> Json {
    let series = &outcome.calls;
    let mut windows = series.windows_per_row.max(1);
    let mut rows = series.rows.clone();
    while rows.len() > max_rows {
        windows *= 2;
        let span = series.per.saturating_mul(windows).max(1);
        let mut merged: Vec<crate::engine::CallRow> = Vec::new();
        for row in rows {
            let start = row.start - row.start % span;
            match merged.last_mut() {
                Some(m) if m.start == start => {
                    m.offered += row.offered;
                    m.accepted += row.accepted;
                    m.busiest = m.busiest.max(row.busiest);
                }
                _ => merged.push(crate::engine::CallRow { start, ..row }),
            }
        }
        rows = merged;
    }
    json!({
        "per": series.per,
        "limit": scenario.flow.downstream.map(|d| d.limit),
        "windows_per_row": windows,
        "peak_window": series.peak_window,
        "peak_retries": series.peak_retries,
        "rows": rows.iter().map(|r| json!({
            "start": r.start,
            "offered": r.offered,
            "accepted": r.accepted,
            "busiest": r.busiest,
        })).collect::<Vec<_>>(),
    })
}

/// Per `[[alarm]]`: its definition and what it did.
pub fn alarms(scenario: &Scenario, outcome: &Outcome) -> Json {
    Json::Array(
        scenario
            .alarms
            .iter()
            .zip(&outcome.alarms)
            .map(|(a, r)| {
                json!({
                    "name": a.name,
                    "metric": a.metric.name(),
                    "at_least": a.at_least,
                    "window": match a.metric { crate::model::Metric::DlqArrivals { window } => Some(window), _ => None },
                    "for": a.fire_for,
                    "clear_for": a.clear_for,
                    "fired": r.times_fired > 0,
                    "first_fired_at": r.first_fired_at,
                    "times_fired": r.times_fired,
                    "firing_at_end": r.firing,
                    "peak": r.peak,
                    "changes": r.changes.iter().map(|c| json!({
                        "time": c.time,
                        "state": if c.fired { "fired" } else { "cleared" },
                        "value": c.value,
                    })).collect::<Vec<_>>(),
                    "changes_dropped": r.changes_dropped,
                })
            })
            .collect(),
    )
}

/// Per `[[traffic.mix]]` kind: its messages and what became of them.
pub fn kinds(scenario: &Scenario, outcome: &Outcome) -> Json {
    Json::Array(
        (0..scenario.kinds.len() as u32)
            .map(|k| {
                let mut map = Map::new();
                map.insert("name".into(), json!(scenario.kinds[k as usize]));
                for field in KindField::ALL {
                    let n = outcome.kind_count(k, field);
                    map.insert(field.name().into(), json!(n));
                }
                Json::Object(map)
            })
            .collect(),
    )
}

/// Version of the JSON report's shape (docs/reports.md, "The JSON report").
pub const REPORT_FORMAT_VERSION: u32 = 2;

/// The whole run as one document: the JSON report, and the data every
/// report template receives as `report`.
/// `problems` are the rendered, colour-free diagnostics of the failed
/// expectations.
pub fn document(file: &str, run: &Run, verdicts: &[Verdict], problems: &[Located]) -> Document {
    let (scenario, outcome) = (&*run.scenario, &*run.outcome);
    let passed = verdicts.iter().filter(|v| v.passed).count();
    let mut doc = json!({
        "format_version": REPORT_FORMAT_VERSION,
        "file": file,
        "name": scenario.name,
        "summary": scenario.summary,
        "description": scenario.description,
        "tags": scenario.tags,
        "seed": scenario.seed,
        "status": if passed == verdicts.len() { "passed" } else { "failed" },
        "expectations_passed": passed,
        "expectations_failed": verdicts.len() - passed,
        "parameters": super::parameters::parameters(scenario),
        "expectations": expectations(scenario, verdicts),
        "problems": problems,
        "totals": totals(scenario, outcome),
        "flow": flow(outcome),
        "drains": outcome.drains,
        "census": census(outcome),
        "message_count": outcome.messages.len(),
        "messages_listed": listed(outcome),
        // The lists are written from the run (`Document`).
        "messages": Json::Null,
        "interesting": super::interesting::interesting(scenario, outcome),
        "transitions_recorded": matches!(
            outcome.recorder,
            crate::engine::Recorder::All | crate::engine::Recorder::Replayed
        ),
        "transitions": Json::Null,
        "ledger": Json::Null,
    });
    if !scenario.kinds.is_empty() {
        doc["kinds"] = kinds(scenario, outcome);
    }
    if !scenario.alarms.is_empty() {
        doc["alarms"] = alarms(scenario, outcome);
    }
    if !scenario.questions.is_empty() {
        doc["questions"] = super::questions::answers(scenario, outcome, verdicts);
    }
    super::guarantee_json::add(&mut doc, scenario, outcome);
    super::log_json::add(&mut doc, scenario, outcome);
    if scenario.flow.extended {
        doc["calls"] = calls(scenario, outcome, crate::engine::CALL_SERIES_ROWS);
        doc["calls_table"] = calls(scenario, outcome, CALLS_TABLE_ROWS);
    }
    if outcome.transitions_dropped > 0 {
        doc["transitions_dropped"] = json!(outcome.transitions_dropped);
    }
    Document {
        head: doc,
        run: Some(run.clone()),
    }
}

/// The scenario's settings as (name, value) pairs, named as in the file.
/// How messages moved between states, from the totals alone (so it holds
/// at any scale). Every quarantine entry ends one way: still quarantined,
/// expired, purged or redriven; every delivery is an arrival, a redrive or a
/// retry.
pub fn flow(outcome: &Outcome) -> Json {
    let t = &outcome.totals;
    let redriven = t
        .quarantine_entries
        .saturating_sub(t.quarantined + t.expired + t.purged);
    let arrived = outcome.arrived;
    json!({
        "arrived": arrived,
        "retries": outcome.retries,
        "acked": t.acked,
        "quarantine_entries": t.quarantine_entries,
        "redriven": redriven,
        "expired": t.expired,
        "purged": t.purged,
        "still_quarantined": t.quarantined,
        "effects": t.effects,
        "duplicated_effects": t.duplicated_effects,
        "dedup_hits": t.dedup_hits,
    })
}

/// At most this many rows in the census table (besides the end).
const CENSUS_ROWS: u64 = 12;

/// Messages per state at readable times (a multiple of the census's step,
/// so every row is exact), then at the end; `null` without a census.
pub fn census(outcome: &Outcome) -> Json {
    let Some(c) = &outcome.census else {
        return Json::Null;
    };
    let mut every = c.step;
    while c.end / every > CENSUS_ROWS {
        every = crate::engine::census_step_after(every);
    }
    // `dropped` and `skipped` are columns only for runs where some
    // message was in that state.
    let shown = State::ALL.map(|s| c.shows(s));
    let row = |t: Millis, counts: [u64; crate::engine::STATE_COUNT]| {
        let mut r = Map::new();
        r.insert("time".into(), json!(t));
        for state in State::ALL {
            if !shown[state as usize] {
                continue;
            }
            r.insert(state.as_str().into(), json!(counts[state as usize]));
        }
        Json::Object(r)
    };
    // Round times, the marked instants (inspections, outage edges) and the
    // end, in time order; a marked instant says what happened then.
    let mut at: std::collections::BTreeMap<
        Millis,
        (Option<&str>, [u64; crate::engine::STATE_COUNT]),
    > = (0..=c.end / every)
        .map(|k| k * every)
        .filter(|&t| t < c.end)
        .map(|t| (t, (None, c.at(t))))
        .collect();
    for m in c.marks.iter().filter(|m| m.time < c.end) {
        at.insert(m.time, (Some(m.label.as_str()), m.counts));
    }
    let end_label = c
        .marks
        .iter()
        .find(|m| m.time == c.end)
        .map(|m| m.label.as_str());
    at.insert(c.end, (end_label, c.last));
    let rows: Vec<Json> = at
        .into_iter()
        .map(|(t, (label, counts))| {
            let mut r = row(t, counts);
            r["why"] = json!(label);
            r
        })
        .collect();
    json!({ "step": c.step, "every": every, "rows": rows })
}

#[cfg(test)]
mod tests;
