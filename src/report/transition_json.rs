//! One transition as the JSON report writes it: `time`, `message`, `kind`,
//! the fields of its kind, and (in the report) its sentence as the text
//! transcript says it. Written straight to the serializer, with no JSON
//! tree in between: a report of a million transitions costs one
//! transition's memory.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::engine::{Detail, Transition};
use crate::model::Scenario;
use crate::report::sentence::Sentence;

/// A transition ready to be written.
pub struct TransitionJson<'a> {
    pub scenario: &'a Scenario,
    pub transition: &'a Transition,
    /// Whether to add `text`, the transcript's sentence.
    pub with_text: bool,
}

/// The lapsed lease a `claimed` transition took over.
struct LapsedJson<'a> {
    scenario: &'a Scenario,
    lapsed: crate::engine::Lapsed,
}

impl Serialize for LapsedJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let l = &self.lapsed;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("holder", &self.scenario.message_id(l.holder))?;
        map.serialize_entry("claimed_at", &l.claimed_at)?;
        map.serialize_entry("crashed", &l.crashed)?;
        map.serialize_entry("expired_at", &l.expired_at)?;
        map.end()
    }
}

impl Serialize for TransitionJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let s = self.scenario;
        let t = self.transition;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("time", &t.time)?;
        map.serialize_entry("message", &t.message.map(|m| s.name_of_message(m)))?;
        map.serialize_entry("kind", t.detail.kind().as_str())?;
        match t.detail {
            Detail::Delivered {
                cycle,
                cycle_receives,
                total_receives,
            } => {
                map.serialize_entry("cycle", &cycle)?;
                map.serialize_entry("cycle_receives", &cycle_receives)?;
                map.serialize_entry("total_receives", &total_receives)?;
            }
            Detail::Failed { reason, class } | Detail::Dropped { reason, class } => {
                map.serialize_entry("reason", &s.reasons[reason as usize])?;
                map.serialize_entry("class", class.as_str())?;
            }
            Detail::Quarantined {
                reason,
                class,
                depth,
            } => {
                map.serialize_entry("reason", &s.reasons[reason as usize])?;
                map.serialize_entry("class", class.as_str())?;
                map.serialize_entry("dlq_depth", &depth)?;
            }
            Detail::Committed { key, effect } => {
                map.serialize_entry("key", &s.name_of_key(key))?;
                map.serialize_entry("effect", &effect)?;
            }
            Detail::DedupHit { key, expires_at } | Detail::DoneRecorded { key, expires_at } => {
                map.serialize_entry("key", &s.name_of_key(key))?;
                map.serialize_entry("expires_at", &expires_at)?;
            }
            Detail::RetryScheduled { delay, due } => {
                map.serialize_entry("delay", &delay)?;
                map.serialize_entry("due", &due)?;
            }
            Detail::Inspected { step, depth } => {
                map.serialize_entry("step", &step)?;
                map.serialize_entry("dlq_depth", &depth)?;
            }
            Detail::Expired { age } => map.serialize_entry("age", &age)?,
            Detail::Redriven { cycle, key } => {
                map.serialize_entry("cycle", &cycle)?;
                map.serialize_entry("key", &s.name_of_key(key))?;
            }
            Detail::RedriveSkipped { state } => map.serialize_entry("state", state.as_str())?,
            Detail::AckLost | Detail::Acked | Detail::Repaired | Detail::Purged => {}
            Detail::ReceiptExpired {
                started,
                latest,
                quarantined,
            } => {
                map.serialize_entry("started", &started)?;
                map.serialize_entry("latest", &latest)?;
                map.serialize_entry("by_quarantine", &quarantined)?;
            }
            Detail::Crashed { at, started } => {
                map.serialize_entry("at", at.as_str())?;
                map.serialize_entry("started", &started)?;
            }
            Detail::VisibleAgain { started } => map.serialize_entry("started", &started)?,
            Detail::Contention {
                key,
                lease_expires,
                holder,
                claimed_at,
            } => {
                map.serialize_entry("key", &s.name_of_key(key))?;
                map.serialize_entry("lease_expires", &lease_expires)?;
                map.serialize_entry("holder", &s.name_of_message(holder))?;
                map.serialize_entry("claimed_at", &claimed_at)?;
            }
            Detail::Claimed {
                key,
                lease_expires,
                lapsed,
            } => {
                map.serialize_entry("key", &s.name_of_key(key))?;
                map.serialize_entry("lease_expires", &lease_expires)?;
                if let Some(lapsed) = lapsed {
                    map.serialize_entry(
                        "lapsed",
                        &LapsedJson {
                            scenario: s,
                            lapsed,
                        },
                    )?;
                }
            }
            Detail::CanaryPassed { rest } => map.serialize_entry("rest", &rest)?,
            Detail::CanaryFailed { acked, canaries } => {
                map.serialize_entry("acked", &acked)?;
                map.serialize_entry("canaries", &canaries)?;
            }
            Detail::AlarmFired { alarm, value } => {
                map.serialize_entry("alarm", &s.alarms[alarm as usize].name)?;
                map.serialize_entry("value", &value)?;
            }
            Detail::AlarmCleared { alarm } => {
                map.serialize_entry("alarm", &s.alarms[alarm as usize].name)?;
            }
        }
        if self.with_text {
            map.serialize_entry("text", &Sentence(s, &t.detail))?;
        }
        map.end()
    }
}
