//! The consumer side: one delivery of a taken message, decided by the rules
//! of docs/model.md section 3 (with the downstream's order of section 13)
//! when it starts, and what follows when it ends (step 5). Without workers
//! and service time the start and the end are one atomic step.

use super::Engine;
use super::backoff::retry_delay;
use super::calls::Call;
use super::queue::Finish;
use super::transition::{Detail, Effect};
use crate::model::{
    Class, Fault, FaultKind, KeyRef, MessageIndex, Millis, Permanent, REASON_ACK_LOST,
    REASON_DOWNSTREAM_UNAVAILABLE, REASON_THROTTLED, ReasonIndex, State,
};

impl Engine<'_> {
    /// A worker takes message `m` now: everything section 3 decides is
    /// decided now; the broker learns the outcome when the service ends.
    pub(super) fn start_delivery(&mut self, m: MessageIndex) {
        let now = self.clock.now;
        self.measures.totals.deliveries += 1;
        let message = &mut self.messages[m as usize];
        // 1. Receive counts.
        message.cycle_receives = message.cycle_receives.saturating_add(1);
        message.total_receives = message.total_receives.saturating_add(1);
        let (cycle, cycle_receives, total_receives) = (
            message.cycle,
            message.cycle_receives,
            message.total_receives,
        );
        self.record(
            Some(m),
            Detail::Delivered {
                cycle,
                cycle_receives,
                total_receives,
            },
        );

        // 2.-5. The handler, the downstream, the store, the acknowledgement.
        let scenario = self.scenario;
        let faults = self.draws.faults(scenario, m);
        let (finish, takes) = self.decide(m, faults, total_receives);
        let service = takes.unwrap_or(self.service_time);
        let busy = &mut self.measures.totals.worker_busy;
        *busy = busy.saturating_add(service);
        if service == 0 && scenario.flow.workers.is_none() {
            // Atomic, as in sections 1-10 (decision 16.3).
            self.end_delivery(m, finish, false);
        } else {
            self.set_state(m, State::InFlight);
            self.in_flight += 1;
            self.state_changed(m);
            let end = now.saturating_add(service);
            self.broker.queue.schedule_end(end, m, finish);
        }
    }

    /// How the delivery of `m` ends, and how long a failing fault holds
    /// its worker: the message's own `fail` faults in file order, then
    /// outage windows (decision 10.2), then the store, then the
    /// downstream's capacity (section 13).
    fn decide(
        &mut self,
        m: MessageIndex,
        faults: &[Fault],
        total_receives: u32,
    ) -> (Finish, Option<Millis>) {
        let now = self.clock.now;
        let repaired = self.operator.repaired;
        if let Some(f) = faults
            .iter()
            .find(|f| f.kind == FaultKind::Fail && f.applies(total_receives as u64, repaired))
        {
            return (Finish::Failed(f.reason, f.class), f.takes);
        }
        // A delivery after the first of its cycle is a retry.
        let retry = self.messages[m as usize].cycle_receives > 1;
        if self.outages.contains(now) {
            self.calls
                .offer_during_outage(now, retry, &mut self.measures.totals);
            return (
                Finish::Failed(REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient),
                None,
            );
        }
        let key = self.messages[m as usize].key(self.scenario.intent(m));
        if let Some(expires_at) = self.broker.dedup.live(key, now) {
            let message = &mut self.messages[m as usize];
            message.dedup_hits = message.dedup_hits.saturating_add(1);
            self.measures.totals.dedup_hits += 1;
            self.record(Some(m), Detail::DedupHit { key, expires_at });
        } else {
            if self.calls.offer(now, retry, &mut self.measures.totals) == Call::Throttled {
                return (Finish::Failed(REASON_THROTTLED, Class::Transient), None);
            }
            self.broker.dedup.store(key, now);
            self.commit(m, key);
        }
        let ack_lost = faults
            .iter()
            .any(|f| f.kind == FaultKind::LoseAck && f.applies(total_receives as u64, repaired));
        (
            if ack_lost {
                Finish::AckLost
            } else {
                Finish::Acked
            },
            None,
        )
    }

    /// The delivery of `m` ends now (`in_flight`: it was held by a
    /// worker): the broker learns its outcome.
    pub(super) fn end_delivery(&mut self, m: MessageIndex, finish: Finish, in_flight: bool) {
        if in_flight {
            self.in_flight -= 1;
        }
        self.clock.last_delivery = Some(self.clock.now);
        match finish {
            Finish::Acked => {
                self.set_state(m, State::Acked);
                self.messages[m as usize].set_acked_at(self.clock.now);
                self.measures.totals.acked += 1;
                self.record(Some(m), Detail::Acked);
                self.ready.leave(m);
            }
            Finish::AckLost => {
                self.record(Some(m), Detail::AckLost);
                self.after_failure(m, REASON_ACK_LOST, Class::Transient);
            }
            Finish::Failed(reason, class) => {
                self.record(Some(m), Detail::Failed { reason, class });
                self.after_failure(m, reason, class);
            }
        }
        self.state_changed(m);
    }

    /// The effect commits: the ledger grows and is never rolled back.
    fn commit(&mut self, m: MessageIndex, key: KeyRef) {
        let intent = self.scenario.intent(m);
        let message = &mut self.messages[m as usize];
        message.effects = message.effects.saturating_add(1);
        let cycle = message.cycle;
        let effects_of_intent = &mut self.measures.effects_per_intent[intent as usize];
        *effects_of_intent = effects_of_intent.saturating_add(1);
        if *effects_of_intent > 1 {
            self.measures.totals.duplicated_effects += 1;
        }
        self.measures.totals.effects += 1;
        self.recording.effect(Effect {
            time: self.clock.now,
            message: m,
            key,
            intent,
            cycle,
        });
        let effect = self.measures.totals.effects;
        self.record(Some(m), Detail::Committed { key, effect });
    }

    /// Step 5: route permanent failures, retry within budget, or quarantine.
    fn after_failure(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        let message = &mut self.messages[m as usize];
        message.set_failure(reason, class);
        let delivery = &self.scenario.delivery;
        if class == Class::Permanent && delivery.permanent == Permanent::Quarantine {
            self.quarantine(m, reason, class);
        } else if message.cycle_receives < delivery.max_receives {
            let previous = self.prev_delays.get_mut(m as usize);
            let delay = retry_delay(delivery.retry, message, previous, &mut self.rng);
            self.set_state(m, State::Waiting);
            let due = self.clock.now.saturating_add(delay);
            let paid = &mut self.measures.totals.retry_delay_paid;
            *paid = paid.saturating_add(delay);
            self.broker.queue.put_back(due, m);
            self.measures.retries += 1;
            self.record(Some(m), Detail::RetryScheduled { delay, due });
        } else {
            self.quarantine(m, reason, class);
        }
    }

    /// The message enters quarantine with its diagnostic envelope
    /// (docs/model.md section 5), keeping the last failure's reason and class.
    fn quarantine(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        self.set_state(m, State::Quarantined);
        self.ready.leave(m);
        self.alarms.entered(self.clock.now);
        let message = &mut self.messages[m as usize];
        message.set_quarantined_at(self.clock.now);
        message.quarantine_entries += 1;
        self.broker.quarantine.push(m);
        self.measures.totals.quarantine_entries += 1;
        let depth = self.broker.depth();
        let max = &mut self.measures.totals.max_dlq_depth;
        *max = (*max).max(depth);
        self.record(
            Some(m),
            Detail::Quarantined {
                reason,
                class,
                depth,
            },
        );
    }
}
