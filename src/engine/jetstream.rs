//! Step 5 under the nats-jetstream profile (docs/model.md section 21): a
//! failed delivery is nakked (redelivered at its end plus the nak delay)
//! or left unacknowledged (redelivered when its ack wait ends, which the
//! delivery's timer in `receipts.rs` brings about); a permanent failure
//! routed to quarantine is a `term`; and a message that used its last
//! delivery (MaxDeliver) is given up only at the instant its next delivery
//! would have been due, where the server publishes its max-deliveries
//! advisory. There is no dead-letter queue: quarantine stands for "left in
//! the stream with an advisory".

use super::Engine;
use super::backoff::retry_delay;
use super::schedule::Finish;
use super::transition::Detail;
use crate::model::{Class, MessageIndex, Millis, OnFailure, Permanent, State};

impl Engine<'_> {
    /// The delivery of `m` that started at `start` ended now with
    /// `finish` (a failure or a lost ack; its reason already set).
    pub(super) fn after_jetstream_failure(
        &mut self,
        m: MessageIndex,
        finish: Finish,
        start: Millis,
    ) {
        let (reason, class) = match finish {
            Finish::Failed(reason, class) => (reason, class),
            Finish::AckLost => (crate::model::REASON_ACK_LOST, Class::Transient),
            Finish::Acked => return,
        };
        let permanent = &self.core.scenario.delivery.permanent;
        if class == Class::Permanent && *permanent == Permanent::Quarantine {
            // `term`: the server stops delivering it at once.
            self.quarantine(m, reason, class);
            return;
        }
        let now = self.core.clock.now;
        let exhausted = !self.retries(m, class);
        let nak = matches!(finish, Finish::Failed(..))
            && self
                .core
                .scenario
                .guarantees
                .jetstream
                .as_ref()
                .map(|js| js.on_failure)
                == Some(OnFailure::Nak);
        if nak {
            let n = self.core.messages.cycle_receives(m);
            let previous = self.consumer.prev_delays.get_mut(m as usize);
            let delay = retry_delay(
                self.core.scenario.delivery.retry,
                n,
                previous,
                &mut self.core.rng,
            );
            let due = now.saturating_add(delay);
            if exhausted && delay == 0 {
                self.quarantine(m, reason, class);
                return;
            }
            if !exhausted {
                self.retry_at(m, delay, due);
            }
            // A timer, not the queue: an ack of an earlier delivery may
            // still come first (`superseded_jetstream`).
            self.core.set_state(m, State::Waiting);
            self.nak_timer(m, start, due, finish);
            return;
        }
        // Unacknowledged: the delivery's timer, due at start + its ack
        // wait, redelivers the message or gives it up (`visible`). A
        // delivery that outlived its wait left the message visible already.
        let n = self.core.messages.cycle_receives(m);
        let wait = self.core.scenario.ack_wait(n).unwrap_or(Millis::MAX);
        let due = start.saturating_add(wait);
        if due >= now {
            self.core.set_state(m, State::Waiting);
        }
        if !exhausted {
            self.retry_at(m, due.max(now) - now, due.max(now));
        }
    }

    /// Whether the end of a superseded delivery of `m` with `finish`
    /// reaches a JetStream server: an ack, a nak or a term of a message
    /// still pending there (not one left unacknowledged).
    pub(super) fn reaches_jetstream(&self, m: MessageIndex, finish: Finish) -> bool {
        let Some(js) = &self.core.scenario.guarantees.jetstream else {
            return false;
        };
        let pending = matches!(
            self.core.messages.state(m),
            State::InFlight | State::Waiting | State::Ready
        );
        pending
            && match finish {
                Finish::Acked => true,
                Finish::AckLost => false,
                Finish::Failed(_, class) => js.on_failure == OnFailure::Nak || self.routed(class),
            }
    }

    fn routed(&self, class: Class) -> bool {
        class == Class::Permanent && self.core.scenario.delivery.permanent == Permanent::Quarantine
    }

    /// A superseded delivery of `m` (started at `start`) ended now with an
    /// ack, a nak or a term, which the server applies to the message
    /// whatever delivery is current: an ack acks it, a term ends it, a nak
    /// redelivers it after the nak's delay (while the current delivery
    /// may still run) or gives it up.
    pub(super) fn superseded_jetstream(&mut self, m: MessageIndex, finish: Finish, start: Millis) {
        let state = self.core.messages.state(m);
        let leaves = match finish {
            Finish::Failed(_, class) if !self.routed(class) => !self.retries(m, class),
            _ => true,
        };
        if state == State::Ready && leaves {
            self.consumer.ready.withdraw(m);
        }
        let Finish::Failed(reason, class) = finish else {
            self.end_delivery(m, finish, false, start);
            return;
        };
        self.core.clock.last_delivery = Some(self.core.clock.now);
        self.core.messages.set_failure(m, reason, class);
        self.core.record(Some(m), Detail::Failed { reason, class });
        if self.routed(class) {
            self.quarantine(m, reason, class);
        } else {
            let now = self.core.clock.now;
            let n = self.core.messages.cycle_receives(m);
            let previous = self.consumer.prev_delays.get_mut(m as usize);
            let delay = retry_delay(
                self.core.scenario.delivery.retry,
                n,
                previous,
                &mut self.core.rng,
            );
            let due = now.saturating_add(delay);
            if leaves && delay == 0 {
                self.quarantine(m, reason, class);
            } else if state != State::Ready || leaves {
                if !leaves {
                    self.retry_at(m, delay, due);
                }
                self.nak_timer(m, start, due, finish);
            }
        }
        self.core.state_changed(m);
    }

    /// A retry of `m` is scheduled `delay` from now, at `due`.
    fn retry_at(&mut self, m: MessageIndex, delay: Millis, due: Millis) {
        self.core.measures.retries += 1;
        let paid = &mut self.core.measures.totals.retry_delay_paid;
        *paid = paid.saturating_add(delay);
        self.core.record_retry(m, delay, due);
    }
}
