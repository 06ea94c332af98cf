//! What a run records: transitions, committed effects, per-message state.

use crate::model::{
    Class, EventKind, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, State,
};

/// One step of the run, at a modeled time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    pub time: Millis,
    /// `None` for operator transitions that concern no single message.
    pub message: Option<MessageIndex>,
    pub detail: Detail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    Delivered {
        cycle: u32,
        cycle_receives: u32,
        total_receives: u32,
    },
    Failed {
        reason: ReasonIndex,
        class: Class,
    },
    Committed {
        key: KeyRef,
        /// 1-based position in the effect ledger.
        effect: u64,
    },
    DedupHit {
        key: KeyRef,
        expires_at: Millis,
    },
    AckLost,
    Acked,
    RetryScheduled {
        delay: Millis,
        due: Millis,
    },
    Quarantined {
        reason: ReasonIndex,
        class: Class,
        depth: u64,
    },
    Inspected {
        /// 1-based operator step.
        step: u32,
        depth: u64,
    },
    Expired {
        age: Millis,
    },
    Repaired,
    Redriven {
        cycle: u32,
        key: KeyRef,
    },
    RedriveSkipped {
        state: State,
    },
    Purged,
}

impl Detail {
    pub fn kind(&self) -> EventKind {
        match self {
            Detail::Delivered { .. } => EventKind::Delivered,
            Detail::Failed { .. } => EventKind::Failed,
            Detail::Committed { .. } => EventKind::Committed,
            Detail::DedupHit { .. } => EventKind::DedupHit,
            Detail::AckLost => EventKind::AckLost,
            Detail::Acked => EventKind::Acked,
            Detail::RetryScheduled { .. } => EventKind::RetryScheduled,
            Detail::Quarantined { .. } => EventKind::Quarantined,
            Detail::Inspected { .. } => EventKind::Inspected,
            Detail::Expired { .. } => EventKind::Expired,
            Detail::Repaired => EventKind::Repaired,
            Detail::Redriven { .. } => EventKind::Redriven,
            Detail::RedriveSkipped { .. } => EventKind::RedriveSkipped,
            Detail::Purged => EventKind::Purged,
        }
    }
}

/// One committed effect in the ledger. Never rolled back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect {
    pub time: Millis,
    pub message: MessageIndex,
    pub key: KeyRef,
    pub intent: IntentIndex,
    pub cycle: u32,
}

/// A message's state, compact: the engine keeps one per message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageState {
    /// Latest time of entering quarantine, kept as history; `NEVER` if none.
    pub quarantined_at: Millis,
    /// Decorrelated jitter's previous delay in this cycle.
    pub prev_delay: Millis,
    pub cycle: u32,
    pub cycle_receives: u32,
    pub total_receives: u32,
    pub effects: u32,
    pub dedup_hits: u32,
    /// Redrive number whose fresh key the message carries (0: its intent).
    pub key_generation: u32,
    /// The key's intent when it differs from the message's own (a fresh
    /// key that an explicit message already uses); `OWN_INTENT` otherwise.
    pub key_intent: IntentIndex,
    pub last_reason: ReasonIndex,
    pub quarantine_entries: u32,
    pub state: State,
    pub last_class: Class,
}

pub const NEVER: Millis = Millis::MAX;
pub const NO_REASON: ReasonIndex = ReasonIndex::MAX;
pub const OWN_INTENT: IntentIndex = IntentIndex::MAX;

impl Default for MessageState {
    fn default() -> Self {
        Self::new()
    }
}

impl MessageState {
    pub fn new() -> Self {
        MessageState {
            quarantined_at: NEVER,
            prev_delay: 0,
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

    pub fn quarantined_at(&self) -> Option<Millis> {
        (self.quarantined_at != NEVER).then_some(self.quarantined_at)
    }

    pub fn last_reason(&self) -> Option<ReasonIndex> {
        (self.last_reason != NO_REASON).then_some(self.last_reason)
    }
}
