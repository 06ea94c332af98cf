//! The JSON report's parts of sections 17-22: each `[[sink]]` with its
//! value and visible duplicates, and each canary redrive with its
//! canaries' fates. Only files that write sinks or redrive with a canary
//! get them, so other reports keep their bytes.

use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::Scenario;

/// Adds `sinks` and `canaries` to the report `doc` when the run has them.
pub fn add(doc: &mut Json, scenario: &Scenario, outcome: &Outcome) {
    if scenario.guarantees.sinks_written {
        doc["sinks"] = sinks(scenario, outcome);
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
/// most writes of one intent and, under an outbox, `max_lag` (ms).
pub fn sinks(scenario: &Scenario, outcome: &Outcome) -> Json {
    let outbox =
        (scenario.write.as_ref()).is_some_and(|w| w.strategy == crate::model::Strategy::Outbox);
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
                if outbox {
                    sink["max_lag"] = json!(outcome.sink_value(k as u32, crate::model::SinkField::MaxLag));
                }
                sink
            })
            .collect(),
    )
}
