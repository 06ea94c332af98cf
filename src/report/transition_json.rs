//! One transition as the JSON report writes it: `time`, `message`, `kind`,
//! the fields of its kind, and (in the report) its sentence as the text
//! transcript says it. Written straight to the serializer, with no JSON
//! tree in between: a report of a million transitions costs one
//! transition's memory.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::engine::{Detail, Transition};
use crate::model::Scenario;
use crate::words::sentence::Sentence;

/// A transition ready to be written.
pub struct TransitionJson<'a> {
    pub scenario: &'a Scenario,
    pub transition: &'a Transition,
    /// Whether to add `text`, the transcript's sentence.
    pub with_text: bool,
}

/// How many fields the kind of `d` adds.
fn detail_fields(d: &Detail) -> usize {
    match d {
        Detail::AckLost | Detail::Acked | Detail::Repaired | Detail::Purged => 0,
        Detail::Expired { .. }
        | Detail::RedriveSkipped { .. }
        | Detail::VisibleAgain { .. }
        | Detail::CanaryPassed { .. }
        | Detail::AlarmCleared { .. } => 1,
        Detail::Failed { .. }
        | Detail::Dropped { .. }
        | Detail::Committed { .. }
        | Detail::DedupHit { .. }
        | Detail::DoneRecorded { .. }
        | Detail::RetryScheduled { .. }
        | Detail::Inspected { .. }
        | Detail::Crashed { .. }
        | Detail::CanaryFailed { .. }
        | Detail::AlarmFired { .. } => 2,
        Detail::Claimed { lapsed, .. } => 2 + usize::from(lapsed.is_some()),
        Detail::Delivered { record, .. } => 3 + 2 * usize::from(record.is_some()),
        Detail::Redriven { record, .. } => 2 + 2 * usize::from(record.is_some()),
        Detail::Quarantined { elapsed, .. } => 3 + 3 * usize::from(elapsed.is_some()),
        Detail::ReceiptExpired { .. } => 3,
        Detail::Contention { .. } => 4,
        Detail::Restarted { .. } => 4,
        Detail::DeliveryAbandoned { .. } | Detail::RetryCancelled { .. } => 3,
        Detail::RecordSkipped { .. } | Detail::Resumed { .. } => 2,
        Detail::CompensationSent { .. } => 4,
        Detail::CompensationGivenUp { .. } | Detail::OutboxDeadLettered { .. } => 2,
        Detail::Archived { .. } => 1,
        Detail::StoreRestarted { .. } => 2,
        Detail::ReplayEnded { .. } => 3,
        Detail::CheckpointCompleted { .. } => 3,
        Detail::CheckpointFailed { .. } => 2,
        Detail::AppendRetried { .. } => 3,
        Detail::CoordinatorRecovered { .. } => 2,
        Detail::SinkChanged { .. } => 2,
        Detail::StaleOverwrite { .. } => 4,
        Detail::WriteFailedLate { .. } => 1,
    }
}

/// The lapsed lease a `claimed` transition took over.
struct LapsedJson<'a> {
    scenario: &'a Scenario,
    lapsed: crate::engine::Lapsed,
}

impl Serialize for LapsedJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let l = &self.lapsed;
        let mut fields = serializer.serialize_struct("Lapsed", 4)?;
        fields.serialize_field("holder", &self.scenario.message_id(l.holder))?;
        fields.serialize_field("claimed_at", &l.claimed_at)?;
        fields.serialize_field("crashed", &l.crashed)?;
        fields.serialize_field("expired_at", &l.expired_at)?;
        fields.end()
    }
}

impl Serialize for TransitionJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let s = self.scenario;
        let t = self.transition;
        let len = 3 + detail_fields(&t.detail) + usize::from(self.with_text);
        let mut fields = serializer.serialize_struct("Transition", len)?;
        fields.serialize_field("time", &t.time)?;
        fields.serialize_field("message", &t.message.map(|m| s.name_of_message(m)))?;
        fields.serialize_field("kind", t.detail.kind().as_str())?;
        match t.detail {
            Detail::Delivered {
                cycle,
                cycle_receives,
                total_receives,
                record,
            } => {
                fields.serialize_field("cycle", &cycle)?;
                fields.serialize_field("cycle_receives", &cycle_receives)?;
                fields.serialize_field("total_receives", &total_receives)?;
                if let Some(r) = record {
                    fields.serialize_field("partition", &r.partition)?;
                    fields.serialize_field("offset", &r.offset)?;
                }
            }
            Detail::Restarted {
                restart,
                partition,
                checkpoint,
                position,
            } => {
                fields.serialize_field("restart", &(restart + 1))?;
                fields.serialize_field("partition", &partition)?;
                fields.serialize_field("checkpoint_time", &checkpoint)?;
                fields.serialize_field("resume_position", &position)?;
            }
            Detail::DeliveryAbandoned { record, aborted } => {
                fields.serialize_field("partition", &record.partition)?;
                fields.serialize_field("offset", &record.offset)?;
                fields.serialize_field("write_aborted", &aborted)?;
            }
            Detail::RetryCancelled { record, due } => {
                fields.serialize_field("partition", &record.partition)?;
                fields.serialize_field("offset", &record.offset)?;
                fields.serialize_field("due", &due)?;
            }
            Detail::RecordSkipped { record } => {
                fields.serialize_field("partition", &record.partition)?;
                fields.serialize_field("offset", &record.offset)?;
            }
            Detail::CompensationSent {
                sink,
                reply,
                applied,
            } => {
                use crate::engine::Reply;
                fields.serialize_field("sink", &s.guarantees.sinks[sink as usize].name)?;
                let (heard, reason) = match reply {
                    Reply::Ok | Reply::Decided => ("ok", None),
                    Reply::Failed(r) => ("failed", Some(s.reasons[r as usize].as_str())),
                    Reply::Lost => ("lost", None),
                };
                fields.serialize_field("reply", heard)?;
                fields.serialize_field("reason", &reason)?;
                fields.serialize_field("applied", &applied)?;
            }
            Detail::Archived { entered } => fields.serialize_field("entered_at", &entered)?,
            Detail::ReplayEnded {
                partition,
                from,
                to,
            } => {
                fields.serialize_field("partition", &partition)?;
                fields.serialize_field("from", &from)?;
                fields.serialize_field("to", &to)?;
            }
            Detail::CheckpointCompleted {
                number,
                partitions,
                position,
            } => {
                fields.serialize_field("number", &number)?;
                fields.serialize_field("partitions", &partitions)?;
                fields.serialize_field("position", &position)?;
            }
            Detail::AppendRetried { record } => {
                fields.serialize_field("partition", &record.map(|r| r.partition))?;
                fields.serialize_field("offset", &record.map(|r| r.offset))?;
                fields.serialize_field("duplicate", &record.is_some())?;
            }
            Detail::CheckpointFailed { number, status } => {
                fields.serialize_field("number", &number)?;
                fields.serialize_field("status", status.as_str())?;
            }
            Detail::StoreRestarted { live, lost } => {
                fields.serialize_field("live_entries", &live)?;
                fields.serialize_field("lost", &lost)?;
            }
            Detail::StaleOverwrite {
                sink,
                message,
                key,
                written,
                held,
            } => {
                fields.serialize_field("sink", &s.guarantees.sinks[sink as usize].name)?;
                fields.serialize_field("row", &s.row_name(message, key))?;
                fields.serialize_field("version", &written)?;
                fields.serialize_field("held", &held)?;
            }
            Detail::WriteFailedLate { sink } => {
                fields.serialize_field("sink", &s.guarantees.sinks[sink as usize].name)?;
            }
            Detail::SinkChanged { sink, kind } => {
                fields.serialize_field("sink", &s.guarantees.sinks[sink as usize].name)?;
                fields.serialize_field("becomes", kind.as_str())?;
            }
            Detail::CoordinatorRecovered {
                prepared_at,
                committed,
            } => {
                fields.serialize_field("prepared_at", &prepared_at)?;
                fields.serialize_field("decision", if committed { "commit" } else { "abort" })?;
            }
            Detail::CompensationGivenUp { sink, calls }
            | Detail::OutboxDeadLettered { sink, calls } => {
                fields.serialize_field("sink", &s.guarantees.sinks[sink as usize].name)?;
                fields.serialize_field("calls", &calls)?;
            }
            Detail::Resumed {
                partition,
                position,
            } => {
                fields.serialize_field("partition", &partition)?;
                fields.serialize_field("position", &position)?;
            }
            Detail::Failed { reason, class } | Detail::Dropped { reason, class } => {
                fields.serialize_field("reason", &s.reasons[reason as usize])?;
                fields.serialize_field("class", class.as_str())?;
            }
            Detail::Quarantined {
                reason,
                class,
                depth,
                elapsed,
            } => {
                fields.serialize_field("reason", &s.reasons[reason as usize])?;
                fields.serialize_field("class", class.as_str())?;
                fields.serialize_field("dlq_depth", &depth)?;
                if let Some((due, began)) = elapsed {
                    fields.serialize_field("cause", "max_elapsed")?;
                    fields.serialize_field("retry_due", &due)?;
                    fields.serialize_field("cycle_began", &began)?;
                }
            }
            Detail::Committed { key, effect } => {
                fields.serialize_field("key", &s.name_of_key(key))?;
                fields.serialize_field("effect", &effect)?;
            }
            Detail::DedupHit { key, expires_at } | Detail::DoneRecorded { key, expires_at } => {
                fields.serialize_field("key", &s.name_of_key(key))?;
                fields.serialize_field("expires_at", &expires_at)?;
            }
            Detail::RetryScheduled { delay, due } => {
                fields.serialize_field("delay", &delay)?;
                fields.serialize_field("due", &due)?;
            }
            Detail::Inspected { step, depth } => {
                fields.serialize_field("step", &step)?;
                fields.serialize_field("dlq_depth", &depth)?;
            }
            Detail::Expired { age } => fields.serialize_field("age", &age)?,
            Detail::Redriven { cycle, key, record } => {
                fields.serialize_field("cycle", &cycle)?;
                fields.serialize_field("key", &s.name_of_key(key))?;
                if let Some(r) = record {
                    fields.serialize_field("partition", &r.partition)?;
                    fields.serialize_field("offset", &r.offset)?;
                }
            }
            Detail::RedriveSkipped { state } => fields.serialize_field("state", state.as_str())?,
            Detail::AckLost | Detail::Acked | Detail::Repaired | Detail::Purged => {}
            Detail::ReceiptExpired {
                started,
                latest,
                quarantined,
            } => {
                fields.serialize_field("started", &started)?;
                fields.serialize_field("latest", &latest)?;
                fields.serialize_field("by_quarantine", &quarantined)?;
            }
            Detail::Crashed { at, started } => {
                fields.serialize_field("at", at.as_str())?;
                fields.serialize_field("started", &started)?;
            }
            Detail::VisibleAgain { started } => fields.serialize_field("started", &started)?,
            Detail::Contention {
                key,
                lease_expires,
                holder,
                claimed_at,
            } => {
                fields.serialize_field("key", &s.name_of_key(key))?;
                fields.serialize_field("lease_expires", &lease_expires)?;
                fields.serialize_field("holder", &s.name_of_message(holder))?;
                fields.serialize_field("claimed_at", &claimed_at)?;
            }
            Detail::Claimed {
                key,
                lease_expires,
                lapsed,
            } => {
                fields.serialize_field("key", &s.name_of_key(key))?;
                fields.serialize_field("lease_expires", &lease_expires)?;
                if let Some(lapsed) = lapsed {
                    fields.serialize_field(
                        "lapsed",
                        &LapsedJson {
                            scenario: s,
                            lapsed,
                        },
                    )?;
                }
            }
            Detail::CanaryPassed { rest } => fields.serialize_field("rest", &rest)?,
            Detail::CanaryFailed { acked, canaries } => {
                fields.serialize_field("acked", &acked)?;
                fields.serialize_field("canaries", &canaries)?;
            }
            Detail::AlarmFired { alarm, value } => {
                fields.serialize_field("alarm", &s.alarms[alarm as usize].name)?;
                fields.serialize_field("value", &value)?;
            }
            Detail::AlarmCleared { alarm } => {
                fields.serialize_field("alarm", &s.alarms[alarm as usize].name)?;
            }
        }
        if self.with_text {
            fields.serialize_field("text", &Sentence(s, &t.detail))?;
        }
        fields.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The length a transition's struct announces is the number of
    /// fields it writes, for every transition of the bundled scenarios
    /// (with and without the sentence).
    #[test]
    fn announces_as_many_fields_as_it_writes() {
        let mut kinds = std::collections::BTreeSet::new();
        for (path, scenario) in crate::scenario::bundled() {
            let Ok(outcome) = crate::engine::run(&scenario, crate::engine::Recorder::All) else {
                continue;
            };
            for transition in &outcome.transitions {
                for with_text in [false, true] {
                    let json = serde_json::to_value(TransitionJson {
                        scenario: &scenario,
                        transition,
                        with_text,
                    })
                    .unwrap();
                    let written = json.as_object().unwrap().len();
                    let announced = 3 + detail_fields(&transition.detail) + usize::from(with_text);
                    assert_eq!(written, announced, "{path:?}: {json}");
                }
                kinds.insert(transition.detail.kind().as_str());
            }
        }
        assert!(kinds.len() >= 24, "{kinds:?}");
    }
}
