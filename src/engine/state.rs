//! A message's state in full: what readers of a run see. The engine
//! stores it compactly ([`super::messages::Messages`]) and assembles one
//! of these when asked.

use crate::model::{Class, IntentIndex, KeyRef, Millis, ReasonIndex, State};

/// A message's state. Values that may be absent (a quarantine time, a last
/// failure, a fresh key's intent) are kept as sentinels and read through
/// accessors that turn them into `Option`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageState {
    /// Latest time of entering quarantine, kept as history; `NEVER` if none.
    quarantined_at: Millis,
    /// When it was acked; `NEVER` if it was not.
    acked_at: Millis,
    pub cycle: u32,
    pub cycle_receives: u32,
    pub total_receives: u32,
    pub effects: u32,
    pub dedup_hits: u32,
    /// Redrive number whose fresh key the message carries (0: its intent).
    key_generation: u32,
    /// The key's intent when it differs from the message's own (a fresh
    /// key that an explicit message already uses); `OWN_INTENT` otherwise.
    key_intent: IntentIndex,
    last_reason: ReasonIndex,
    pub quarantine_entries: u32,
    pub state: State,
    last_class: Class,
}

const NEVER: Millis = Millis::MAX;
const NO_REASON: ReasonIndex = ReasonIndex::MAX;
const OWN_INTENT: IntentIndex = IntentIndex::MAX;

impl Default for MessageState {
    fn default() -> Self {
        Self::new()
    }
}

impl MessageState {
    /// A message that has not arrived yet.
    pub fn new() -> Self {
        MessageState {
            quarantined_at: NEVER,
            acked_at: NEVER,
            cycle: 1,
            cycle_receives: 0,
            total_receives: 0,
            effects: 0,
            dedup_hits: 0,
            key_generation: 0,
            key_intent: OWN_INTENT,
            last_reason: NO_REASON,
            quarantine_entries: 0,
            state: State::Waiting,
            last_class: Class::Transient,
        }
    }

    /// The current deduplication key, given the message's own intent.
    pub fn key(&self, own_intent: IntentIndex) -> KeyRef {
        KeyRef {
            intent: if self.key_intent == OWN_INTENT {
                own_intent
            } else {
                self.key_intent
            },
            generation: self.key_generation,
        }
    }

    /// Whether the key is the message's intent itself (never changed by a
    /// redrive).
    pub fn has_own_key(&self) -> bool {
        self.key_intent == OWN_INTENT && self.key_generation == 0
    }

    /// When the message last entered quarantine, if ever.
    pub fn last_quarantined_at(&self) -> Option<Millis> {
        (self.quarantined_at != NEVER).then_some(self.quarantined_at)
    }

    /// How long the message has been in quarantine as of `t`, while it is.
    pub fn quarantine_age(&self, t: Millis) -> Option<Millis> {
        (self.state == State::Quarantined).then(|| t.saturating_sub(self.quarantined_at))
    }

    /// Whether the message has arrived: an arrived message is never
    /// waiting without a delivery (it is ready, or has been delivered).
    pub fn has_arrived(&self) -> bool {
        !(self.state == State::Waiting && self.total_receives == 0)
    }

    /// When the message was acked, if it was.
    pub fn acked_at(&self) -> Option<Millis> {
        (self.acked_at != NEVER).then_some(self.acked_at)
    }

    /// Whether the message is still going round: not arrived, waiting
    /// for a retry, ready or in flight.
    pub fn is_pending(&self) -> bool {
        matches!(self.state, State::Waiting | State::Ready | State::InFlight)
    }

    /// The reason of the last failure, if any.
    pub fn last_reason(&self) -> Option<ReasonIndex> {
        (self.last_reason != NO_REASON).then_some(self.last_reason)
    }

    /// The class of the last failure (transient before any).
    pub fn last_class(&self) -> Class {
        self.last_class
    }

    pub(super) fn set_failure(&mut self, reason: ReasonIndex, class: Class) {
        self.last_reason = reason;
        self.last_class = class;
    }

    pub(super) fn set_acked_at(&mut self, t: Millis) {
        self.acked_at = t;
    }

    pub(super) fn set_quarantined_at(&mut self, t: Millis) {
        self.quarantined_at = t;
    }

    pub(super) fn set_key(&mut self, key: KeyRef) {
        self.key_intent = key.intent;
        self.key_generation = key.generation;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_read_as_absent() {
        let mut state = MessageState::new();
        assert_eq!(state.last_quarantined_at(), None);
        assert_eq!(state.last_reason(), None);
        assert_eq!(state.quarantine_age(5), None);
        assert_eq!(
            state.key(7),
            KeyRef {
                intent: 7,
                generation: 0
            }
        );
        state.set_quarantined_at(10);
        state.state = State::Quarantined;
        state.set_failure(3, Class::Permanent);
        assert_eq!(state.last_quarantined_at(), Some(10));
        assert_eq!(state.quarantine_age(25), Some(15));
        assert_eq!(state.last_reason(), Some(3));
        assert_eq!(state.last_class(), Class::Permanent);
    }
}
