//! nats-jetstream's MaxAckPending (docs/model.md section 21,
//! nats-jetstream rule 9): at most N messages are pending at once, each
//! from the instant it becomes ready for the first delivery of its cycle
//! (the server hands it to the consumer) until it is acked, given up or
//! terminated. A message that becomes ready while N are pending is held in
//! the stream, in publish order, and is handed over when one leaves.
//!
//! Costs: one bit per message, and one entry per held message (at most
//! the file's messages, since a message is held at most once at a time).

use std::collections::VecDeque;

use crate::model::{MessageIndex, Millis, Scenario};

#[derive(Clone)]
pub(super) struct AckPending {
    /// MaxAckPending.
    limit: u64,
    /// Messages pending now.
    pending: u64,
    /// One bit per message: pending now.
    admitted: Vec<u64>,
    /// Held messages, in the order they became ready, with that time.
    held: VecDeque<(MessageIndex, Millis)>,
}

impl AckPending {
    /// The window of a nats-jetstream run whose MaxAckPending can bind:
    /// `None` without the profile, when unlimited, or when it is at least
    /// the file's messages (never more than those are pending at once).
    pub(super) fn new(scenario: &Scenario) -> Option<Self> {
        let limit = scenario.guarantees.jetstream.as_ref()?.max_ack_pending?;
        let count = scenario.message_count();
        (limit < count).then(|| AckPending {
            limit,
            pending: 0,
            admitted: vec![0; (count as usize).div_ceil(64)],
            held: VecDeque::new(),
        })
    }

    fn is_admitted(&self, m: MessageIndex) -> bool {
        self.admitted[m as usize / 64] & (1 << (m % 64)) != 0
    }

    fn set(&mut self, m: MessageIndex, on: bool) {
        let word = &mut self.admitted[m as usize / 64];
        match on {
            true => *word |= 1 << (m % 64),
            false => *word &= !(1 << (m % 64)),
        }
    }

    /// Message `m` becomes ready at `now`: true when it may be delivered
    /// (pending already, or a slot was free and it takes it); false when
    /// it is held.
    pub(super) fn admit(&mut self, m: MessageIndex, now: Millis) -> bool {
        if self.is_admitted(m) {
            return true;
        }
        if self.pending < self.limit {
            self.pending += 1;
            self.set(m, true);
            return true;
        }
        self.held.push_back((m, now));
        false
    }

    /// Message `m` is acked, given up (quarantined or dropped) or
    /// terminated: its slot frees when it had one.
    pub(super) fn leave(&mut self, m: MessageIndex) {
        if self.is_admitted(m) {
            self.set(m, false);
            self.pending -= 1;
        }
    }

    /// The held message that takes a free slot, in publish order, with
    /// the time it became ready; `None` while every slot is taken or
    /// nothing is held.
    pub(super) fn take_held(&mut self) -> Option<(MessageIndex, Millis)> {
        if self.pending >= self.limit {
            return None;
        }
        let (m, since) = self.held.pop_front()?;
        self.pending += 1;
        self.set(m, true);
        Some((m, since))
    }
}
