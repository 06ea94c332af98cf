//! The consumer side: one delivery of a taken message, decided by the rules
//! of docs/model.md section 3, and what follows a failure (step 5).

use super::Engine;
use super::backoff::retry_delay;
use super::dedup::Lookup;
use super::transition::{Detail, Effect};
use crate::model::{
    Class, Fault, FaultKind, KeyRef, MessageIndex, Permanent, REASON_ACK_LOST,
    REASON_DOWNSTREAM_UNAVAILABLE, ReasonIndex, State,
};

impl Engine<'_> {
    /// One delivery (one receive) of message `m` now.
    pub(super) fn deliver(&mut self, m: MessageIndex) {
        let now = self.clock.now;
        self.measures.totals.deliveries += 1;
        self.clock.last_delivery = Some(now);
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

        // 2. The handler. The faults are looked up once per delivery (for a
        // generated message that means finding its generator).
        let scenario = self.scenario;
        let faults = scenario.faults(m);
        if let Some((reason, class)) = self.handler_failure(faults, total_receives) {
            self.record(Some(m), Detail::Failed { reason, class });
            self.after_failure(m, reason, class);
            return;
        }

        // 3. Commit, unless the deduplication store holds a live result.
        let key = self.messages[m as usize].key(self.scenario.intent(m));
        match self.broker.dedup.check_and_store(key, now) {
            Lookup::Hit { expires_at } => {
                let message = &mut self.messages[m as usize];
                message.dedup_hits = message.dedup_hits.saturating_add(1);
                self.measures.totals.dedup_hits += 1;
                self.record(Some(m), Detail::DedupHit { key, expires_at });
            }
            Lookup::Stored | Lookup::Off => self.commit(m, key),
        }

        // 4. Acknowledgement.
        let repaired = self.operator.repaired;
        let ack_lost = faults
            .iter()
            .any(|f| f.kind == FaultKind::LoseAck && f.applies(total_receives as u64, repaired));
        if ack_lost {
            self.record(Some(m), Detail::AckLost);
            self.after_failure(m, REASON_ACK_LOST, Class::Transient);
        } else {
            self.set_state(m, State::Acked);
            self.measures.totals.acked += 1;
            self.record(Some(m), Detail::Acked);
        }
    }

    /// Whether the handler fails at this delivery, and why: the message's
    /// own `fail` faults in file order, then outage windows (decision 10.2).
    fn handler_failure(
        &self,
        faults: &[Fault],
        total_receives: u32,
    ) -> Option<(ReasonIndex, Class)> {
        let repaired = self.operator.repaired;
        let now = self.clock.now;
        faults
            .iter()
            .find(|f| f.kind == FaultKind::Fail && f.applies(total_receives as u64, repaired))
            .map(|f| (f.reason, f.class))
            .or_else(|| {
                self.scenario
                    .outages
                    .iter()
                    .any(|o| o.contains(now))
                    .then_some((REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient))
            })
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
            let delay = retry_delay(delivery.retry, message, &mut self.rng);
            let due = self.clock.now.saturating_add(delay);
            let paid = &mut self.measures.totals.retry_delay_paid;
            *paid = paid.saturating_add(delay);
            self.broker.queue.put_back(due, m);
            self.record(Some(m), Detail::RetryScheduled { delay, due });
        } else {
            self.quarantine(m, reason, class);
        }
    }

    /// The message enters quarantine with its diagnostic envelope
    /// (docs/model.md section 5), keeping the last failure's reason and class.
    fn quarantine(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        self.set_state(m, State::Quarantined);
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
