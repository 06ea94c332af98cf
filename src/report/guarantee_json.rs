//! The JSON report's parts of sections 17-22: each `[[sink]]` with its
//! value and visible duplicates, and each canary redrive with its
//! canaries' fates. Only files that write sinks or redrive with a canary
//! get them, so other reports keep their bytes.

use serde_json::{Value as Json, json};

use crate::engine::{Outcome, Reply};
use crate::model::{Scenario, Write};

/// Adds `sinks` and `canaries` to the report `doc` when the run has them.
pub fn add(doc: &mut Json, scenario: &Scenario, outcome: &Outcome) {
    if scenario.guarantees.sinks_written {
        doc["sinks"] = sinks(scenario, outcome);
    }
    if let Some(write) = &scenario.write {
        doc["write"] = writes(scenario, write, outcome);
    }
    if !outcome.canaries.is_empty() {
        doc["canaries"] = Json::Array(
            outcome
                .canaries
                .iter()
                .map(|c| {
                    json!({
                        "inspected_at": c.inspected_at,
                        "decided_at": c.decided_at,
                        "passed": c.passed,
                        "canaries": c.canaries,
                        "listed": c.listed.iter().map(|&(m, state)| json!({
                            "message": scenario.message_id(m),
                            "state": state.as_str(),
                        })).collect::<Vec<_>>(),
                        "rest": c.rest,
                    })
                })
                .collect(),
        );
    }
}

/// Per `[[sink]]`: its kind, value, visible duplicates, missing intents,
/// most writes of one intent and, under an outbox, `max_lag` (ms); under
/// a saga, its compensations given up.
pub fn sinks(scenario: &Scenario, outcome: &Outcome) -> Json {
    let write = scenario.write.as_ref();
    let mixed = write.is_some_and(|w| w.plan.is_some());
    let strategy_of = |k: usize| write.map(|w| w.strategy_of(k));
    Json::Array(
        scenario
            .guarantees
            .sinks
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let mut sink = json!({
                    "name": s.name,
                    "kind": s.kind.as_str(),
                    "value": outcome.sink_value(k as u32, crate::model::SinkField::Value),
                    "visible_duplicates": outcome.sink_value(k as u32, crate::model::SinkField::VisibleDuplicates),
                    "missing": outcome.sink_value(k as u32, crate::model::SinkField::Missing),
                    "max_per_intent": outcome.sink_value(k as u32, crate::model::SinkField::MaxPerIntent),
                });
                if strategy_of(k) == Some(crate::model::Strategy::Outbox) {
                    sink["max_lag"] = json!(outcome.sink_value(k as u32, crate::model::SinkField::MaxLag));
                }
                if mixed && let Some(w) = write {
                    sink["strategy"] = json!(w.strategy_of(k).as_str());
                    sink["compensations"] = json!(outcome.sink_value(k as u32, crate::model::SinkField::Compensations));
                }
                if strategy_of(k) == Some(crate::model::Strategy::Saga) {
                    sink["compensations_given_up"] = json!(outcome.sink_value(k as u32, crate::model::SinkField::CompensationsGivenUp));
                }
                if let Some((kind, after)) = outcome.sink_becomes.get(k) {
                    sink["kind_at_end"] = json!(kind.as_str());
                    sink["writes_after_change"] = json!(after);
                }
                if let Some(Some(rows)) = outcome.sink_rows.get(k) {
                    sink["stale_overwrites"] = json!(rows.stale_overwrites);
                    sink["stale_rejections"] = json!(rows.stale_rejections);
                    sink["rows_held"] = json!(rows.rows_held);
                    let listed: Vec<Json> = (rows.rows.iter().take(crate::model::ROWS_LISTED))
                        .map(|(name, r)| {
                            json!({
                                "row": name,
                                "value": r.value,
                                "version": r.version,
                                "intent": scenario.name_of_intent(r.intent),
                                "stale_writes": r.stale,
                            })
                        })
                        .collect();
                    sink["rows"] = Json::Array(listed);
                }
                sink
            })
            .collect(),
    )
}

/// A fan-out's strategy, the calls of the writes the run traced (its
/// first, then the first worth a look) and the first two-phase locks.
fn writes(scenario: &Scenario, write: &Write, outcome: &Outcome) -> Json {
    let traces: Vec<Json> = (outcome.write_traces.iter())
        .map(|t| {
            let calls: Vec<Json> = (t.calls.iter())
                .map(|c| {
                    let (reply, reason) = match c.reply {
                        Reply::Ok => ("ok", None),
                        Reply::Failed(r) => ("failed", Some(&scenario.reasons[r as usize])),
                        Reply::Lost => ("lost", None),
                        Reply::Decided => ("decided", None),
                    };
                    json!({
                        "sink": scenario.guarantees.sinks[c.sink as usize].name,
                        "sink_index": c.sink,
                        "kind": c.kind.as_str(),
                        "at": c.at,
                        "heard_at": c.heard_at,
                        "reply": reply,
                        "reason": reason,
                        "applied": c.applied,
                    })
                })
                .collect();
            json!({
                "message": scenario.message_id(t.message),
                "at": t.at,
                "waited_until": t.waited_until,
                "crashed": t.crashed,
                "calls": calls,
                "calls_dropped": t.calls_dropped,
                "false_notices": (t.false_notices.iter())
                    .map(|&k| json!({
                        "sink": scenario.guarantees.sinks[k as usize].name,
                        "sink_index": k,
                    }))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut spans: Vec<_> = outcome.lock_spans.iter().collect();
    spans.sort_by_key(|l| (l.sink, l.from, l.until));
    let locks: Vec<Json> = (spans.into_iter())
        .map(|l| {
            json!({
                "sink": scenario.guarantees.sinks[l.sink as usize].name,
                "sink_index": l.sink,
                "message": scenario.message_id(l.message),
                "from": l.from,
                "until": l.until,
                "crashed": l.crashed,
            })
        })
        .collect();
    json!({
        "strategy": write.strategy_name(),
        "traces": traces,
        "locks": locks,
    })
}
