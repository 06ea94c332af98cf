//! A message's row in the JSON report's snapshot (and in its list of the
//! messages worth a look): its final state, the envelope it carries in
//! quarantine, and with the flow totals its times, group and mix kind.
//! Written straight to the serializer: the snapshot of 10,000 messages
//! builds no JSON tree.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value as Json;

use crate::engine::{MessageState, Outcome};
use crate::model::{MessageIndex, Scenario, State};

/// Message `m`'s snapshot row, as a JSON value (for the few rows that get
/// more fields, [`super::interesting`]).
pub fn row(scenario: &Scenario, outcome: &Outcome, m: usize) -> Json {
    serde_json::to_value(MessageRow::new(scenario, outcome, m as MessageIndex)).unwrap_or_default()
}

/// Message `m`'s snapshot row, ready to be written.
pub struct MessageRow<'a> {
    scenario: &'a Scenario,
    outcome: &'a Outcome,
    m: MessageIndex,
    state: MessageState,
}

impl<'a> MessageRow<'a> {
    pub fn new(scenario: &'a Scenario, outcome: &'a Outcome, m: MessageIndex) -> Self {
        MessageRow {
            scenario,
            outcome,
            m,
            state: outcome.messages.get(m),
        }
    }
}

impl Serialize for MessageRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (scenario, outcome, m, s) = (self.scenario, self.outcome, self.m, &self.state);
        let len = if scenario.flow.extended { 18 } else { 12 };
        let mut map = serializer.serialize_struct("Message", len)?;
        map.serialize_field("id", &scenario.name_of_message(m))?;
        map.serialize_field("key", &scenario.name_of_key(s.key(scenario.intent(m))))?;
        map.serialize_field("state", s.state.as_str())?;
        map.serialize_field(
            "last_reason",
            &s.last_reason().map(|r| &scenario.reasons[r as usize]),
        )?;
        map.serialize_field("cycle", &s.cycle)?;
        map.serialize_field("cycle_receives", &s.cycle_receives)?;
        map.serialize_field("total_receives", &s.total_receives)?;
        map.serialize_field("effects", &s.effects)?;
        map.serialize_field("dedup_hits", &s.dedup_hits)?;
        map.serialize_field("last_quarantined_at", &s.last_quarantined_at())?;
        map.serialize_field("quarantine_age", &s.quarantine_age(outcome.as_of))?;
        map.serialize_field("envelope", &Envelope(self))?;
        if scenario.flow.extended {
            map.serialize_field("arrived_at", &outcome.arrived_at(scenario, m))?;
            map.serialize_field("acked_at", &s.acked_at())?;
            map.serialize_field("latency", &outcome.latency(scenario, m))?;
            map.serialize_field("queue_wait", &outcome.queue_wait(m))?;
            map.serialize_field("group", &scenario.group_name(scenario.group(m)))?;
            map.serialize_field(
                "kind",
                &outcome
                    .kind(scenario, m)
                    .map(|k| &scenario.kinds[k as usize]),
            )?;
        }
        map.end()
    }
}

/// The diagnostic record a message carries while in quarantine (and after
/// it expires or is purged): nothing changes it between entry and exit.
/// `null` for a message that never stayed in quarantine.
struct Envelope<'a>(&'a MessageRow<'a>);

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let MessageRow {
            scenario,
            outcome,
            m,
            state,
        } = self.0;
        let (scenario, m) = (*scenario, *m);
        if !matches!(
            state.state,
            State::Quarantined | State::Expired | State::Purged
        ) {
            return serializer.serialize_none();
        }
        let mut map = serializer.serialize_struct("Envelope", 10)?;
        map.serialize_field("queue", &scenario.delivery.queue)?;
        map.serialize_field("quarantined_at", &state.last_quarantined_at())?;
        map.serialize_field(
            "reason",
            &state.last_reason().map(|r| &scenario.reasons[r as usize]),
        )?;
        map.serialize_field("class", state.last_class().as_str())?;
        map.serialize_field("cycle", &state.cycle)?;
        map.serialize_field("cycle_receives", &state.cycle_receives)?;
        map.serialize_field("total_receives", &state.total_receives)?;
        map.serialize_field("key", &scenario.name_of_key(outcome.key(scenario, m)))?;
        map.serialize_field("first_delivery", &outcome.arrived_at(scenario, m))?;
        map.serialize_field(
            "payload",
            &scenario.payload(m).map_or(Json::Null, |p| {
                serde_json::to_value(p).unwrap_or(Json::Null)
            }),
        )?;
        map.end()
    }
}
