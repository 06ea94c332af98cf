//! A message's row in the JSON report's snapshot (and in its list of the
//! messages worth a look): its final state, the envelope it carries in
//! quarantine, and with the flow totals its times, group and mix kind.

use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::{MessageIndex, Scenario, State};
use crate::report::text;

/// Message `m`'s snapshot row.
pub fn row(scenario: &Scenario, outcome: &Outcome, m: usize) -> Json {
    let r = text::row(scenario, outcome, m);
    let envelope = envelope(scenario, outcome, m);
    let mut row = json!({
        "id": r.id,
        "key": r.key,
        "state": r.state.as_str(),
        "last_reason": r.last_reason,
        "cycle": r.cycle,
        "cycle_receives": r.cycle_receives,
        "total_receives": r.total_receives,
        "effects": r.effects,
        "dedup_hits": r.dedup_hits,
        "last_quarantined_at": r.last_quarantined_at,
        "quarantine_age": r.age,
        "envelope": envelope,
    });
    if scenario.flow.extended {
        let state = outcome.messages.get(m as MessageIndex);
        let m32 = m as MessageIndex;
        row["arrived_at"] = json!(outcome.arrived_at(scenario, m32));
        row["acked_at"] = json!(state.acked_at());
        row["latency"] = json!(outcome.latency(scenario, m32));
        row["queue_wait"] = json!(outcome.queue_wait(m32));
        row["group"] = json!(scenario.group_name(scenario.group(m32)));
        row["kind"] = json!(
            outcome
                .kind(scenario, m32)
                .map(|k| &scenario.kinds[k as usize])
        );
    }
    row
}

/// The diagnostic record a message carries while in quarantine (and after
/// it expires or is purged): nothing changes it between entry and exit.
fn envelope(scenario: &Scenario, outcome: &Outcome, m: usize) -> Json {
    let state = outcome.messages.get(m as MessageIndex);
    if !matches!(
        state.state,
        State::Quarantined | State::Expired | State::Purged
    ) {
        return Json::Null;
    }
    let m32 = m as MessageIndex;
    json!({
        "queue": scenario.delivery.queue,
        "quarantined_at": state.last_quarantined_at(),
        "reason": state.last_reason().map(|r| scenario.reasons[r as usize].clone()),
        "class": state.last_class().as_str(),
        "cycle": state.cycle,
        "cycle_receives": state.cycle_receives,
        "total_receives": state.total_receives,
        "key": scenario.key_name(outcome.key(scenario, m32)),
        "first_delivery": outcome.arrived_at(scenario, m32),
        "payload": scenario.payload(m32).map_or(Json::Null, |p| serde_json::to_value(p).unwrap_or(Json::Null)),
    })
}
