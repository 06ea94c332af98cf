//! A message's row in the JSON report's snapshot (and in its list of the
//! messages worth a look): its final state, the envelope it carries in
//! quarantine, and with the flow totals its times, group and mix kind.
//! Written straight to the serializer: the snapshot of 10,000 messages
//! builds no JSON tree.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value as Json;

use crate::engine::{MessageState, Outcome};
use crate::model::{Class, MessageIndex, Millis, Permanent, Scenario};

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

    /// How many fields the row has: six more with the flow measures, one
    /// more with an archive.
    fn fields(&self) -> usize {
        let flow = if self.scenario.flow.extended { 18 } else { 12 };
        flow + usize::from(self.scenario.archive_after.is_some())
    }
}

/// How many fields an envelope has (one more, `broker`, under
/// rabbitmq-quorum and rabbitmq-classic: [`envelope_fields`]).
const ENVELOPE_FIELDS: usize = 15;

/// The fields of an envelope under `scenario`'s profile.
fn envelope_fields(scenario: &Scenario) -> usize {
    ENVELOPE_FIELDS + usize::from(scenario.guarantees.profile.is_rabbitmq())
}

/// RabbitMQ records death history per message from 3.13 on: a message a
/// client publishes again (a redrive) starts with none.
const DEATHS_RESTART_ON_PUBLISH: (u32, u32) = (3, 13);

/// The `x-death` entry RabbitMQ writes on the dead-lettered copy of a
/// message in quarantine under `rabbitmq-quorum` (docs/model.md,
/// rabbitmq-quorum 4) and `rabbitmq-classic`, where only a reject
/// dead-letters: one entry for the dead-lettering that put it there. The
/// broker's reason is `rejected` for a permanent failure routed to
/// quarantine (a reject) and `delivery_limit` for every other entry (the
/// limit used up); the handler's own reason, the failure's class, the
/// cycle and the key are only the application's. The time has the
/// header's resolution, whole seconds (in milliseconds from the run's
/// start).
pub struct XDeath<'a> {
    pub queue: &'a str,
    pub reason: &'static str,
    /// `None` where the model cannot know it: before 3.13 a redriver that
    /// copies the headers adds the cycles up per reason, which the model
    /// does not keep.
    pub count: Option<u32>,
    pub time: Millis,
}

impl<'a> XDeath<'a> {
    /// The entry of a message as `class` (its last failure's class) and
    /// `quarantine_entries` (so far) say, quarantined at `quarantined_at`;
    /// `None` under a profile that writes none.
    pub fn of(
        scenario: &'a Scenario,
        class: Class,
        quarantine_entries: u32,
        quarantined_at: Millis,
    ) -> Option<Self> {
        if !scenario.guarantees.profile.is_rabbitmq() {
            return None;
        }
        let rejected =
            class == Class::Permanent && scenario.delivery.permanent == Permanent::Quarantine;
        // One entry per cycle's dead-lettering: exact from 3.13 on (a
        // redrive is a new publish), and for a message dead-lettered once.
        let restarts = scenario
            .guarantees
            .broker_version
            .is_none_or(|v| v >= DEATHS_RESTART_ON_PUBLISH);
        let known = restarts || quarantine_entries <= 1;
        Some(XDeath {
            queue: &scenario.delivery.queue,
            reason: if rejected {
                "rejected"
            } else {
                "delivery_limit"
            },
            count: known.then_some(1),
            time: quarantined_at - quarantined_at % 1_000,
        })
    }

    /// The entry of the latest dead-lettering of a message whose state is
    /// `state`; `None` if it was never quarantined or the profile writes
    /// none.
    pub fn of_state(scenario: &'a Scenario, state: &MessageState) -> Option<Self> {
        let at = state.last_quarantined_at()?;
        XDeath::of(scenario, state.last_class(), state.quarantine_entries, at)
    }
}

/// As the lab's quarantine pane and `show --at` list it: `x-death
/// delivery_limit, count 1, time 3s` (`count ?` where unknown).
impl std::fmt::Display for XDeath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.count.map_or("?".to_string(), |c| c.to_string());
        write!(
            f,
            "x-death {}, count {count}, time {}",
            self.reason,
            crate::duration::Dur(self.time)
        )
    }
}

/// The broker's headers of a dead letter: its `x-death` entry and the
/// `x-first-death-*` headers (unknown where the count is).
struct DeadLetterHeaders<'a>(XDeath<'a>);

impl Serialize for DeadLetterHeaders<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let x = &self.0;
        let entry = serde_json::json!({
            "queue": x.queue,
            "reason": x.reason,
            "count": x.count,
            "time": x.time,
        });
        let mut fields = serializer.serialize_struct("DeadLetterHeaders", 3)?;
        fields.serialize_field("x-death", &[entry])?;
        let first = x.count.is_some().then_some((x.queue, x.reason));
        fields.serialize_field("x-first-death-queue", &first.map(|f| f.0))?;
        fields.serialize_field("x-first-death-reason", &first.map(|f| f.1))?;
        fields.end()
    }
}

impl Serialize for MessageRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (scenario, outcome, m, s) = (self.scenario, self.outcome, self.m, &self.state);
        let mut fields = serializer.serialize_struct("Message", self.fields())?;
        fields.serialize_field("id", &scenario.name_of_message(m))?;
        fields.serialize_field("key", &scenario.name_of_key(s.key(scenario.intent(m))))?;
        fields.serialize_field("state", s.state.as_str())?;
        fields.serialize_field(
            "last_reason",
            &s.last_reason().map(|r| &scenario.reasons[r as usize]),
        )?;
        fields.serialize_field("cycle", &s.cycle)?;
        fields.serialize_field("cycle_receives", &s.cycle_receives)?;
        fields.serialize_field("total_receives", &s.total_receives)?;
        fields.serialize_field("effects", &s.effects)?;
        fields.serialize_field("dedup_hits", &s.dedup_hits)?;
        fields.serialize_field("last_quarantined_at", &s.last_quarantined_at())?;
        fields.serialize_field("quarantine_age", &s.quarantine_age(outcome.as_of))?;
        fields.serialize_field("envelope", &Envelope(self))?;
        if scenario.archive_after.is_some() {
            // Copied to the archive at least once (section 28.11).
            fields.serialize_field("archived", &outcome.dead_letters.archived.contains(&m))?;
        }
        if scenario.flow.extended {
            fields.serialize_field("arrived_at", &outcome.arrived_at(scenario, m))?;
            fields.serialize_field("acked_at", &s.acked_at())?;
            fields.serialize_field("latency", &outcome.latency(scenario, m))?;
            fields.serialize_field("queue_wait", &outcome.queue_wait(m))?;
            fields.serialize_field("group", &scenario.group_name(scenario.group(m)))?;
            fields.serialize_field(
                "kind",
                &outcome
                    .kind(scenario, m)
                    .map(|k| &scenario.kinds[k as usize]),
            )?;
        }
        fields.end()
    }
}

/// The diagnostic record a message carries while in quarantine (and after
/// it expires or is purged): nothing changes it between entry and exit,
/// and a message redriven keeps the one it left with (decision 10.12).
/// `null` for a message that never was in quarantine.
struct Envelope<'a>(&'a MessageRow<'a>);

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let MessageRow {
            scenario,
            outcome,
            m,
            ..
        } = self.0;
        let (scenario, m) = (*scenario, *m);
        // The state it was dead-lettered with (decision 10.12).
        let Some(state) = outcome.envelope_state(m) else {
            return serializer.serialize_none();
        };
        let state = &state;
        let mut fields = serializer.serialize_struct("Envelope", envelope_fields(scenario))?;
        fields.serialize_field("queue", &scenario.delivery.queue)?;
        fields.serialize_field("quarantined_at", &state.last_quarantined_at())?;
        fields.serialize_field(
            "reason",
            &state.last_reason().map(|r| &scenario.reasons[r as usize]),
        )?;
        fields.serialize_field("class", state.last_class().as_str())?;
        fields.serialize_field("cycle", &state.cycle)?;
        fields.serialize_field("cycle_receives", &state.cycle_receives)?;
        fields.serialize_field("total_receives", &state.total_receives)?;
        fields.serialize_field("key", &scenario.name_of_key(state.key(scenario.intent(m))))?;
        fields.serialize_field("first_delivery", &outcome.first_delivery(scenario, m))?;
        fields.serialize_field(
            "payload",
            &scenario.payload(m).map_or(Json::Null, |p| {
                serde_json::to_value(p).unwrap_or(Json::Null)
            }),
        )?;
        // Section 28.2: the record it was dead-lettered from (a log's),
        // its event time, schema version and why.
        let record = outcome.dead_letters.records.get(&m);
        fields.serialize_field("partition", &record.map(|r| r.partition))?;
        fields.serialize_field("offset", &record.map(|r| r.offset))?;
        fields.serialize_field("event_time", &outcome.event_time(scenario, m))?;
        fields.serialize_field("schema_version", &scenario.schema_version(m))?;
        fields.serialize_field("dead_letter_cause", &outcome.dead_letter_cause(scenario, m))?;
        if scenario.guarantees.profile.is_rabbitmq() {
            fields.serialize_field(
                "broker",
                &XDeath::of_state(scenario, state).map(DeadLetterHeaders),
            )?;
        }
        fields.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lengths a row and an envelope announce are the numbers of
    /// fields they write, for every message of the bundled scenarios,
    /// with and without the flow measures.
    #[test]
    fn announce_as_many_fields_as_they_write() {
        let (mut flow, mut envelopes) = (std::collections::BTreeSet::new(), 0);
        for (path, scenario) in crate::scenario::bundled() {
            let Ok(outcome) = crate::engine::run(&scenario, crate::engine::Recorder::Off) else {
                continue;
            };
            for m in 0..outcome.messages.len().min(2_000) {
                let row = MessageRow::new(&scenario, &outcome, m as MessageIndex);
                let json = serde_json::to_value(&row).unwrap();
                assert_eq!(
                    json.as_object().unwrap().len(),
                    row.fields(),
                    "{path:?}: {json}"
                );
                if let Some(envelope) = json["envelope"].as_object() {
                    assert_eq!(
                        envelope.len(),
                        envelope_fields(&scenario),
                        "{path:?}: {json}"
                    );
                    envelopes += 1;
                }
            }
            flow.insert(scenario.flow.extended);
        }
        assert_eq!(flow.len(), 2, "rows with and without the flow measures");
        assert!(envelopes > 0);
    }
}
