//! Step 5 under the nats-jetstream profile (docs/model.md section 21): a
//! failed delivery is nakked (redelivered at its end plus the nak delay)
//! or left unacknowledged (redelivered when its ack wait ends, which the
//! delivery's timer in `tracked.rs` brings about); a permanent failure
//! routed to quarantine is a `term`; and a message that used its last
//! delivery (MaxDeliver) is given up only at the instant its next delivery
//! would have been due, where the server publishes its max-deliveries
//! advisory. There is no dead-letter queue: quarantine stands for "left in
//! the stream with an advisory".

use super::Engine;
use super::backoff::retry_delay;
use super::queue::Finish;
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
        let permanent = &self.scenario.delivery.permanent;
        if class == Class::Permanent && *permanent == Permanent::Quarantine {
            // `term`: the server stops delivering it at once.
            self.quarantine(m, reason, class);
            return;
        }
        let now = self.clock.now;
        let exhausted = !self.retries(m, class);
        let nak = matches!(finish, Finish::Failed(..))
            && self
                .scenario
                .guarantees
                .jetstream
                .as_ref()
                .map(|js| js.on_failure)
                == Some(OnFailure::Nak);
        if nak {
            let n = self.messages.cycle_receives(m);
            let previous = self.prev_delays.get_mut(m as usize);
            let delay = retry_delay(self.scenario.delivery.retry, n, previous, &mut self.rng);
            let due = now.saturating_add(delay);
            if exhausted {
                if delay == 0 {
                    self.quarantine(m, reason, class);
                } else {
                    self.give_up_at(m, start, due, finish);
                }
                return;
            }
            self.retry_at(m, delay, due);
            self.set_state(m, State::Waiting);
            if self.scenario.delivery.retry.is_drawn() {
                self.broker.queue.put_back_drawn(now, due, m);
            } else {
                self.broker.queue.put_back(now, due, m);
            }
            return;
        }
        // Unacknowledged: the delivery's timer, due at start + its ack
        // wait, redelivers the message or gives it up (`visible`). A
        // delivery that outlived its wait left the message visible already.
        let n = self.messages.cycle_receives(m);
        let wait = self.scenario.ack_wait(n).unwrap_or(Millis::MAX);
        let due = start.saturating_add(wait);
        if due >= now {
            self.set_state(m, State::Waiting);
        }
        if !exhausted {
            self.retry_at(m, due.max(now) - now, due.max(now));
        }
    }

    /// A retry of `m` is scheduled `delay` from now, at `due`.
    fn retry_at(&mut self, m: MessageIndex, delay: Millis, due: Millis) {
        self.measures.retries += 1;
        let paid = &mut self.measures.totals.retry_delay_paid;
        *paid = paid.saturating_add(delay);
        self.record(Some(m), Detail::RetryScheduled { delay, due });
    }
}
