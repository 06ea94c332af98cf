//! A delivery across the parts (docs/model.md sections 3, 5 and 17-24):
//! a taken message's delivery starts (the consumer's receive counts),
//! its handler is decided (its faults, an outage, the deduplication store,
//! the downstream's capacity, the writes), and when it ends the broker
//! learns its outcome: an ack, a retry, or the quarantine. A delivery with
//! a receipt (sections 17-22) also has a visibility timer; a write in
//! flight ends its delivery at its last reply. Where every part allows it
//! (`settling/`), a delivery is settled at its start instead.
//!
//! Each part's own rules are its own (`consumer.rs`, `receipts.rs`,
//! `jetstream.rs`, `dedup.rs`, `write/`, `quarantine.rs`); what is here is
//! the order in which a delivery asks them.

use super::Engine;
use super::backoff::retry_delay;
use super::calls::Call;
use super::dedup::Claim;
use super::jetstream::Superseded;
use super::receipts::Decision;
use super::receipts::Writing;
use super::receipts::{QUARANTINED_BIT, Record};
use super::schedule::Finish;
use super::settling::Settled;
use super::transition::{Detail, Effect};
use super::write::{FlightId, Written, Wrote};
use crate::model::{
    Asked, Class, CrashAt, DedupMode, FaultKind, Faults, IntentIndex, KeyRef, MessageIndex, Millis,
    Profile, REASON_ACK_LOST, REASON_CONSUMER_CRASHED, REASON_DOWNSTREAM_UNAVAILABLE,
    REASON_IN_FLIGHT_ELSEWHERE, REASON_THROTTLED, REASON_VISIBILITY_TIMEOUT, ReasonIndex, Requeue,
    State,
};

impl Engine<'_> {
    /// A worker takes message `m` now: everything section 3 decides is
    /// decided now; the broker learns the outcome when the service ends.
    pub(super) fn start_delivery(&mut self, m: MessageIndex) {
        let now = self.core.clock.now;
        self.core.measures.totals.deliveries += 1;
        // 1. Receive counts.
        let (cycle, cycle_receives, total_receives) = self.core.messages.receive(m);
        self.consumer.cycle_starts(&self.core, m, cycle_receives);
        if total_receives == 1
            && self.consumer.first_deliveries != super::FirstDeliveries::AtArrival
        {
            (self.consumer).first_delivery_waited(&self.core, &self.source.draws, m);
        }
        let record = self.source.record_of(m);
        self.core.record(
            Some(m),
            Detail::Delivered {
                cycle,
                cycle_receives,
                total_receives,
                record,
            },
        );
        (self.source).delivery_starts(&mut self.core.measures.totals, m, cycle_receives);

        if self.consumer.with_receipts {
            return self.start_with_receipt(m, total_receives);
        }
        // 2.-5. The handler, the downstream, the store, the acknowledgement.
        let scenario = self.core.scenario;
        let faults = self.source.draws.faults(scenario, m);
        let (finish, takes) = self.decide(m, faults, total_receives);
        let service = takes.unwrap_or(self.consumer.service_time);
        let busy = &mut self.core.measures.totals.worker_busy;
        *busy = busy.saturating_add(service);
        if service == 0 && scenario.flow.workers.is_none() {
            // Atomic, as in sections 1-10 (decision 16.3).
            self.end_delivery(m, finish, false, now);
        } else {
            self.core.set_state(m, State::InFlight);
            self.consumer.in_flight += 1;
            self.core.state_changed(m);
            let end = now.saturating_add(service);
            self.core.schedule.schedule_end(now, end, m, finish);
        }
    }

    /// A worker takes message `m` now (its receive counts are updated and
    /// recorded): decide the delivery, then schedule its end and, when the
    /// visibility timeout can overtake it, its timer.
    pub(super) fn start_with_receipt(&mut self, m: MessageIndex, receive: u32) {
        let now = self.core.clock.now;
        let scenario = self.core.scenario;
        let concurrent = 1 + self.consumer.receipts.of(m) as u64;
        let most = &mut self.core.measures.totals.concurrent_deliveries;
        *most = (*most).max(concurrent);
        let faults = self.source.draws.faults(scenario, m);
        let decision = self.decide_with_receipt(m, faults, receive);
        if let Some(writing) = decision.writing {
            let writes = self.downstream.writes.as_mut();
            let core = &mut self.core;
            return (self.consumer).start_writing(core, writes, m, receive, decision, writing);
        }
        let service = match decision.crash {
            Some(_) => self.consumer.service_time,
            None => decision.takes.unwrap_or(self.consumer.service_time),
        }
        .saturating_add(decision.calls);
        let busy = &mut self.core.measures.totals.worker_busy;
        *busy = busy.saturating_add(service);
        let n = self.core.messages.cycle_receives(m);
        let visible = scenario.visible_again_at(now, now.saturating_add(service), n);
        // nats-jetstream: a delivery that ends unacknowledged is redelivered
        // (or its message given up) when its ack wait ends.
        let unacked = match decision.finish {
            Finish::Acked => false,
            Finish::AckLost => scenario.waits_for_ack_wait(true),
            Finish::Failed(..) => scenario.waits_for_ack_wait(false),
        };
        let end = now.saturating_add(service);
        let timer = visible.filter(|&at| decision.crash.is_some() || end > at || unacked);
        let atomic = service == 0 && scenario.flow.workers.is_none();
        let quiet_until_end =
            visible.is_none() && decision.crash.is_none() && decision.done_key.is_none();
        if !atomic && self.settle_write(m, decision.finish, end, quiet_until_end) {
            return;
        }
        let slot = self.consumer.receipts.open(Record {
            in_flight: !atomic,
            ..Record::delivery(m, receive, now, visible, &decision, timer.is_some())
        });
        if atomic {
            self.end_of_receipt(slot);
        } else {
            self.core.set_state(m, State::InFlight);
            self.consumer.in_flight += 1;
            self.core.state_changed(m);
            self.core
                .schedule
                .schedule_end_of(now, now.saturating_add(service), slot);
        }
        if let Some(at) = timer {
            self.core.schedule.schedule_visible(now, at, slot);
        }
    }

    /// How the delivery of `m` ends, and how long a failing fault holds
    /// its worker: the message's own `fail` faults in file order, then
    /// outage windows (decision 10.2), then the store, then the
    /// downstream's capacity (section 13).
    fn decide(
        &mut self,
        m: MessageIndex,
        faults: &Faults,
        total_receives: u32,
    ) -> (Finish, Option<Millis>) {
        let now = self.core.clock.now;
        let repaired = self.operator.repaired;
        let receive = total_receives as u64;
        if let Some(f) = faults.first_fault(Asked::Fail, receive, repaired) {
            return (Finish::Failed(f.reason, f.class), f.takes);
        }
        // A delivery after the first of its cycle is a retry.
        let retry = self.core.messages.cycle_receives(m) > 1;
        if self.downstream.outages.contains(now) {
            self.downstream
                .calls
                .offer_during_outage(now, retry, &mut self.core.measures.totals);
            return (
                Finish::Failed(REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient),
                None,
            );
        }
        let intent = self.core.scenario.intent(m);
        let key = self.core.messages.key(m, intent);
        if let Some(expires_at) = self.store.live(key, now) {
            self.core.messages.add_dedup_hit(m);
            self.core.measures.totals.dedup_hits += 1;
            self.core
                .record(Some(m), Detail::DedupHit { key, expires_at });
        } else {
            if self
                .downstream
                .calls
                .offer(now, retry, &mut self.core.measures.totals)
                == Call::Throttled
            {
                return (Finish::Failed(REASON_THROTTLED, Class::Transient), None);
            }
            self.store.store(key, now);
            self.commit(m, key, intent);
        }
        let ack_lost = faults.first(Asked::LoseAck, receive, repaired).is_some();
        (
            if ack_lost {
                Finish::AckLost
            } else {
                Finish::Acked
            },
            None,
        )
    }

    /// A delivery with a receipt's decision (sections 17-22): the first applying
    /// `fail` or `crash` in file order decides (a crash listed after an
    /// applying `lose_ack` does not apply, decision 22.2); a crash before
    /// the effect consults the store and makes no call; a crash after it
    /// happens once the effect committed or the store answered, while a
    /// delivery that fails before that (an outage, contention, a refused
    /// call) fails as usual. In write-intent mode the store holds claims.
    pub(super) fn decide_with_receipt(
        &mut self,
        m: MessageIndex,
        faults: &Faults,
        receive: u32,
    ) -> Decision {
        let now = self.core.clock.now;
        let repaired = self.operator.repaired;
        let failed = |reason, class, takes| Decision {
            finish: Finish::Failed(reason, class),
            takes,
            crash: None,
            done_key: None,
            calls: 0,
            writing: None,
        };
        // The first applying crash decides when no applying fail or
        // lose_ack comes before it; else the first applying fail does.
        let r = receive as u64;
        let fail = faults.first(Asked::Fail, r, repaired);
        let lose_ack = faults.first(Asked::LoseAck, r, repaired);
        let crash = faults
            .first(Asked::Crash, r, repaired)
            .filter(|&c| fail.is_none_or(|f| c < f) && lose_ack.is_none_or(|l| c < l))
            .and_then(|c| match faults[c].kind {
                FaultKind::Crash(at) => Some(at),
                _ => None,
            });
        if crash.is_none()
            && let Some(f) = fail.map(|p| &faults[p])
        {
            return failed(f.reason, f.class, f.takes);
        }
        let crashed = |done_key, calls| Decision {
            finish: Finish::Failed(REASON_CONSUMER_CRASHED, Class::Transient),
            takes: None,
            crash,
            done_key,
            calls,
            writing: None,
        };
        let intent = self.core.scenario.intent(m);
        let key = self.core.messages.key(m, intent);
        let retry = self.core.messages.cycle_receives(m) > 1;
        let lease = match self.core.scenario.guarantees.dedup_mode {
            DedupMode::WriteIntent { lease, renew } => Some((lease, renew)),
            DedupMode::Result => None,
        };
        if crash == Some(CrashAt::BeforeEffect) {
            match lease {
                Some((lease, _)) => {
                    if let Claim::Free(lapsed) = self.store.consult(&mut self.core, m, key) {
                        let expires = now.saturating_add(lease);
                        (self.store).claim_for(&mut self.core, m, key, expires, true, lapsed);
                    }
                }
                None => {
                    self.store.hit_if_live(&mut self.core, m, key);
                }
            }
            return crashed(None, 0);
        }
        if self.downstream.outages.contains(now) {
            self.downstream
                .calls
                .offer_during_outage(now, retry, &mut self.core.measures.totals);
            return failed(REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient, None);
        }
        let mut done_key = None;
        let mut wrote = Wrote::default();
        let mut writing = None;
        match lease {
            None => {
                if !self.store.hit_if_live(&mut self.core, m, key) {
                    let Some(written) = self.call_and_commit(m, key, intent, retry) else {
                        return failed(REASON_THROTTLED, Class::Transient, None);
                    };
                    match written {
                        Written::Done(w) => {
                            wrote = w;
                            if wrote.stores_result {
                                let heard = now.saturating_add(wrote.took);
                                self.store.store_seen_from(key, now, heard);
                            }
                        }
                        Written::InFlight(flight) => writing = Some(flight),
                    }
                }
            }
            Some((lease, renew)) => match self.store.consult(&mut self.core, m, key) {
                Claim::Done(_) => {}
                Claim::Intent(..) => {
                    return failed(REASON_IN_FLIGHT_ELSEWHERE, Class::Transient, None);
                }
                Claim::Free(lapsed) => {
                    // Renewed every `renew` from the start while the
                    // delivery runs; a crashed consumer renews nothing.
                    let renewed = match (renew, crash) {
                        (Some(r), None) => self.consumer.service_time / r * r,
                        _ => 0,
                    };
                    let lease_expires = now.saturating_add(renewed).saturating_add(lease);
                    let core = &mut self.core;
                    (self.store).claim_for(core, m, key, lease_expires, crash.is_some(), lapsed);
                    let Some(written) = self.call_and_commit(m, key, intent, retry) else {
                        return failed(REASON_THROTTLED, Class::Transient, None);
                    };
                    match written {
                        Written::Done(w) => {
                            wrote = w;
                            let done = matches!(crash, None | Some(CrashAt::AfterDone));
                            if done && wrote.stores_result {
                                done_key = Some(key);
                            }
                        }
                        Written::InFlight(flight) => writing = Some(flight),
                    }
                }
            },
        }
        if let Some(flight) = writing {
            // The write is in flight: how the delivery ends is known at
            // its last reply (`receipts.rs`, `write_heard`).
            return Decision {
                writing: Some(Writing {
                    flight,
                    ack_lost: lose_ack.is_some(),
                    lease: lease.is_some(),
                }),
                ..crashed(None, 0)
            };
        }
        if crash.is_some() {
            return crashed(done_key, wrote.took);
        }
        if let Some((reason, class)) = wrote.failed {
            return Decision {
                calls: wrote.took,
                ..failed(reason, class, None)
            };
        }
        let ack_lost = lose_ack.is_some();
        Decision {
            finish: if ack_lost {
                Finish::AckLost
            } else {
                Finish::Acked
            },
            takes: None,
            crash: None,
            done_key,
            calls: wrote.took,
            writing: None,
        }
    }

    /// The downstream is called now (`retry`: by a retry): unless the
    /// call is throttled (None), the effect commits and its write goes out
    /// ([`commit_write`](Self::commit_write)).
    fn call_and_commit(
        &mut self,
        m: MessageIndex,
        key: KeyRef,
        intent: IntentIndex,
        retry: bool,
    ) -> Option<Written> {
        let (now, totals) = (self.core.clock.now, &mut self.core.measures.totals);
        if self.downstream.calls.offer(now, retry, totals) == Call::Throttled {
            return None;
        }
        Some(self.commit_write(m, key, intent))
    }

    /// The effect commits, and with `[write]` its write goes to the
    /// sinks (section 24); without, every sink has it at once.
    fn commit_write(&mut self, m: MessageIndex, key: KeyRef, intent: IntentIndex) -> Written {
        self.commit(m, key, intent);
        if let Some(writes) = &mut self.downstream.writes {
            let (core, draws) = (&mut self.core, &self.source.draws);
            let written = writes.fan_out(core, draws, self.operator.repaired, (m, key, intent));
            self.after_writes();
            written
        } else {
            Written::Done(Wrote {
                stores_result: true,
                ..Wrote::default()
            })
        }
    }

    /// What the writes did in an event: their calls scheduled, their
    /// transitions of this instant recorded, the deliveries whose writes
    /// are done ended (after their service time).
    pub(super) fn after_writes(&mut self) {
        let Some(writes) = self.downstream.writes.as_mut() else {
            return;
        };
        let (alarms, scenario) = (&mut self.alarms, self.core.scenario);
        let told = |t, sink| alarms.dead_lettered(scenario, t, sink);
        let finished = writes.after_event(&mut self.core, told);
        for done in &finished {
            if let Some(slot) = done.owner {
                let log = self.source.log.as_deref();
                let abandoned = log.is_some_and(|log| log.cancelled(done.message, done.begun));
                let (core, store) = (&mut self.core, &mut self.store);
                (self.consumer).write_heard(core, abandoned, store, slot, done);
            }
        }
        if let Some(writes) = self.downstream.writes.as_mut() {
            writes.finished_heard(finished);
        }
    }

    /// Write `id`'s call to `sink` (or its decision) is due now. True when
    /// it was an outbox relay's call.
    pub(super) fn write_call_due(&mut self, id: FlightId, sink: u32) -> bool {
        let writes = (self.downstream.writes.as_mut()).expect("a file with [write]");
        let log = self.source.log.as_deref();
        let cancelled = |m, begun| log.is_some_and(|log| log.cancelled(m, begun));
        let relay = writes.call_due(
            &mut self.core,
            &cancelled,
            self.operator.repaired,
            (id, sink),
        );
        self.after_writes();
        relay
    }

    /// The delivery of `m` that started at `start` ends now (`in_flight`:
    /// it was held by a worker): the broker learns its outcome.
    #[inline(always)]
    pub(super) fn end_delivery(
        &mut self,
        m: MessageIndex,
        finish: Finish,
        in_flight: bool,
        start: Millis,
    ) {
        if in_flight {
            self.consumer.in_flight -= 1;
        }
        self.core.clock.last_delivery = Some(self.core.clock.now);
        match finish {
            Finish::Acked => {
                self.core.set_state(m, State::Acked);
                self.core.messages.set_acked_at(m, self.core.clock.now);
                self.core.measures.totals.acked += 1;
                self.core.record(Some(m), Detail::Acked);
                self.leaves(m);
                self.canary_settled(m, true);
            }
            Finish::AckLost => {
                // The row after the transition shows its reason.
                self.core
                    .messages
                    .set_failure(m, REASON_ACK_LOST, Class::Transient);
                self.core.record(Some(m), Detail::AckLost);
                match self.core.scenario.guarantees.jetstream {
                    Some(_) => self.after_jetstream_failure(m, finish, start),
                    None => self.after_failure(m, REASON_ACK_LOST, Class::Transient, start),
                }
            }
            Finish::Failed(reason, class) => {
                self.core.messages.set_failure(m, reason, class);
                self.core.record(Some(m), Detail::Failed { reason, class });
                match self.core.scenario.guarantees.jetstream {
                    Some(_) => self.after_jetstream_failure(m, finish, start),
                    None => self.after_failure(m, reason, class, start),
                }
            }
        }
        self.core.state_changed(m);
    }

    /// A delivery with a receipt ends now.
    pub(super) fn end_of_receipt(&mut self, slot: u32) {
        let now = self.core.clock.now;
        let d = self.consumer.receipts.release(slot);
        let m = d.message;
        if d.in_flight {
            self.consumer.in_flight -= 1;
        }
        self.consumer.receipts.ended(m);
        self.core.clock.last_delivery = Some(now);
        if let Some(key) = d.done_key {
            let expires_at = self.store.done(key, now);
            self.core
                .record(Some(m), Detail::DoneRecorded { key, expires_at });
        }
        let message = self.core.messages.get(m);
        let current = d.receive == message.total_receives
            && !matches!(
                message.state,
                State::Quarantined | State::Dropped | State::Acked
            );
        if let Some(at) = d.crash {
            self.core.measures.totals.crashes += 1;
            self.core.record(
                Some(m),
                Detail::Crashed {
                    at,
                    started: d.start,
                },
            );
        }
        if !current {
            if d.crash.is_none() && super::jetstream::reaches_server(&self.core, m, d.finish) {
                // JetStream takes an ack, a nak or a term per message,
                // whichever delivery sends it.
                let core = &mut self.core;
                match (self.consumer).superseded_jetstream(core, m, d.finish, d.start) {
                    Superseded::Ends => self.end_delivery(m, d.finish, false, d.start),
                    Superseded::GivenUp(reason, class) => {
                        self.quarantine(m, reason, class);
                        self.core.state_changed(m);
                    }
                    Superseded::Done => {}
                }
                return;
            }
            // Superseded: the outcome never reaches the broker.
            if d.crash.is_none() {
                self.core.measures.totals.expired_receipts += 1;
                let latest = self
                    .consumer
                    .receipts
                    .latest
                    .get(m as usize)
                    .copied()
                    .unwrap_or(now);
                let detail = Detail::ReceiptExpired {
                    started: d.start,
                    latest: latest & !QUARANTINED_BIT,
                    quarantined: latest & QUARANTINED_BIT != 0,
                };
                self.core.record(Some(m), detail);
            }
            return;
        }
        if d.crash.is_some() {
            match d.wait {
                // The broker learns nothing: the message stays invisible
                // until its timeout (unless it is visible already).
                Millis::MAX => {
                    let (reason, class) = (REASON_CONSUMER_CRASHED, Class::Transient);
                    self.core.messages.set_failure(m, reason, class);
                    self.after_failure(m, reason, class, d.start);
                }
                vt if now < d.start.saturating_add(vt) => self.core.set_state(m, State::Waiting),
                _ => {}
            }
            self.core.state_changed(m);
            return;
        }
        let visible = d.in_flight && self.core.messages.state(m) == State::Ready;
        if visible && !super::receipts::stays_visible(&self.core, m, d.finish) {
            // Visible again after its timeout and not taken since: it
            // leaves the ready set (the current delivery decides).
            self.consumer.ready.withdraw(m);
        }
        self.end_delivery(m, d.finish, false, d.start);
    }

    /// The visibility timer of a delivery with a receipt fires now.
    pub(super) fn visible(&mut self, slot: u32, sequence: u64) {
        let d = self.consumer.receipts.release(slot);
        if d.timer_void {
            self.consumer.receipts.void_timers -= 1;
            return;
        }
        let m = d.message;
        let message = self.core.messages.get(m);
        let current = d.receive == message.total_receives
            && matches!(message.state, State::InFlight | State::Waiting);
        if !current {
            return;
        }
        let now = self.core.clock.now;
        let exhausted = message.cycle_receives >= self.core.scenario.budget()
            // Ready again now, within its cycle: past max_elapsed (28.3)?
            || self.consumer.over_elapsed(&mut self.core, m, now);
        // nats-jetstream: a delivery that already ended unacknowledged
        // keeps its own reason when its message is given up.
        let ended = d.nak
            || message.state == State::Waiting && self.core.scenario.guarantees.jetstream.is_some();
        if !d.nak {
            self.core
                .record(Some(m), Detail::VisibleAgain { started: d.start });
        }
        if exhausted {
            // Decision 22.8: the budget is checked when it becomes visible.
            let (reason, class) = match (d.crash, d.finish) {
                (Some(_), _) => (REASON_CONSUMER_CRASHED, Class::Transient),
                (None, Finish::Failed(reason, class)) if ended => (reason, class),
                (None, Finish::AckLost) if ended => (REASON_ACK_LOST, Class::Transient),
                _ => (REASON_VISIBILITY_TIMEOUT, Class::Transient),
            };
            self.core.messages.set_failure(m, reason, class);
            self.core.clock.last_delivery = Some(self.core.clock.now);
            if let Some(latest) = self.consumer.receipts.latest.get_mut(m as usize) {
                *latest = self.core.clock.now | QUARANTINED_BIT;
            }
            self.quarantine(m, reason, class);
            self.core.state_changed(m);
            return;
        }
        self.becomes_ready(m, sequence);
    }

    /// The effect of `m` (of its own `intent`) commits under `key`: the
    /// ledger grows and is never rolled back.
    #[inline(always)]
    fn commit(&mut self, m: MessageIndex, key: KeyRef, intent: IntentIndex) {
        let cycle = self.core.messages.add_effect(m);
        let effect = self.core.measures.count_effect(intent);
        if self.downstream.writes.is_none() && !self.source.holds_write(m, key, intent) {
            self.downstream.sinks.effect(key, intent);
        }
        self.core.observers.recording.effect(Effect {
            time: self.core.clock.now,
            message: m,
            key,
            intent,
            cycle,
        });
        self.core.record(Some(m), Detail::Committed { key, effect });
    }

    /// Step 5 after the delivery that started at `start` failed (its
    /// reason and class already set): route permanent failures, retry
    /// within budget, or quarantine.
    pub(super) fn after_failure(
        &mut self,
        m: MessageIndex,
        reason: ReasonIndex,
        class: Class,
        start: Millis,
    ) {
        if !self.core.retries(m, class) {
            self.quarantine(m, reason, class);
            return;
        }
        let now = self.core.clock.now;
        let guarantees = &self.core.scenario.guarantees;
        let change_visibility = guarantees.sqs.is_some_and(|s| s.change_visibility);
        if let (Profile::SqsStandard, Some(vt), false) = (
            guarantees.profile,
            guarantees.visibility_timeout,
            change_visibility,
        ) {
            // Retried when the visibility timeout ends (section 21.1), or
            // with a heartbeat the last extension's timeout.
            let visible = self
                .core
                .scenario
                .visible_again_at(start, now, 1)
                .unwrap_or(start.saturating_add(vt));
            let due = visible.max(now);
            if self.consumer.over_elapsed(&mut self.core, m, due) {
                self.quarantine(m, reason, class);
                return;
            }
            self.core.retry_scheduled(m, due - now, due);
            // A delivery that outlived its timeout left the message
            // visible (ready) already; otherwise it waits until then.
            if visible >= now {
                self.core.set_state(m, State::Waiting);
                self.core.schedule.put_back(now, due, m);
            }
            return;
        }
        {
            let delivery = &self.core.scenario.delivery;
            let previous = self.consumer.prev_delays.get_mut(m as usize);
            let n = self.core.messages.cycle_receives(m);
            let delay = retry_delay(delivery.retry, n, previous, &mut self.core.rng);
            let due = self.core.clock.now.saturating_add(delay);
            if self.consumer.over_elapsed(&mut self.core, m, due) {
                // The delay was drawn (the random stream goes on as
                // without the budget) and is not paid.
                self.quarantine(m, reason, class);
                return;
            }
            let requeue = self.core.scenario.requeue();
            let at_once = delivery.retry == crate::model::Retry::Fixed(0);
            if at_once && requeue != Requeue::Back && !self.consumer.direct {
                // rabbitmq-quorum by broker_version: ahead of the queue.
                self.core.retry_scheduled(m, delay, due);
                self.core.set_state(m, State::Ready);
                match requeue {
                    Requeue::Original => self.consumer.ready.add_original(m, self.core.clock.now),
                    _ => self.consumer.ready.add_front(m, self.core.clock.now),
                }
                return;
            }
            self.core.set_state(m, State::Waiting);
            if delivery.retry.is_drawn() {
                self.core
                    .schedule
                    .put_back_drawn(self.core.clock.now, due, m);
            } else {
                self.core.schedule.put_back(self.core.clock.now, due, m);
            }
            self.core.retry_scheduled(m, delay, due);
            self.source.retry_scheduled(m, due);
        }
    }

    /// nats-jetstream's step 5 (`jetstream.rs`): a message it gives up is
    /// quarantined.
    fn after_jetstream_failure(&mut self, m: MessageIndex, finish: Finish, start: Millis) {
        let core = &mut self.core;
        if let Some((reason, class)) =
            (self.consumer).after_jetstream_failure(core, m, finish, start)
        {
            self.quarantine(m, reason, class);
        }
    }

    /// The message enters quarantine with its diagnostic envelope
    /// (docs/model.md section 5), keeping the last failure's reason and class.
    pub(super) fn quarantine(&mut self, m: MessageIndex, reason: ReasonIndex, class: Class) {
        let elapsed = self.consumer.over_elapsed.take();
        // The envelope's record and cause (section 28.2), before the
        // partition moves past it.
        // A fresh envelope (decision 10.12).
        if !self.operator.dead_letters.left.is_empty() {
            self.operator.dead_letters.left.remove(&m);
        }
        if let Some(record) = self.source.record_of(m) {
            self.operator.dead_letters.records.insert(m, record);
            // A producer's duplicate has its own event time (28.6).
            let appended = self.source.duplicate_appended_at(record);
            let letters = &mut self.operator.dead_letters;
            match appended {
                Some(at) => letters.event_times.insert(m, at),
                None => letters.event_times.remove(&m),
            };
        }
        if self.core.scenario.delivery.max_elapsed.is_some() {
            match elapsed {
                Some(_) => self.operator.dead_letters.by_elapsed.insert(m),
                None => self.operator.dead_letters.by_elapsed.remove(&m),
            };
        }
        self.leaves(m);
        if !self.core.scenario.guarantees.quarantine_enabled {
            // No dead-letter queue: the message is dropped (final).
            self.core.set_state(m, State::Dropped);
            self.core.measures.totals.dropped += 1;
            self.core.record(Some(m), Detail::Dropped { reason, class });
            self.canary_settled(m, false);
            return;
        }
        debug_assert_ne!(
            self.core.messages.state(m),
            State::Quarantined,
            "entered twice"
        );
        self.core.set_state(m, State::Quarantined);
        self.alarms.entered(self.core.clock.now);
        self.core.messages.enter_quarantine(m, self.core.clock.now);
        if let Some(after) = self.core.scenario.archive_after {
            let now = self.core.clock.now;
            (self.operator.archives).push_back((now.saturating_add(after), m, now));
        }
        match self.operator.enqueued.get(m as usize) {
            None => self.quarantine.push(m),
            Some(&at) => {
                let at = match at {
                    Millis::MAX => self.source.draws.arrival(self.core.scenario, m),
                    at => at,
                };
                self.quarantine.push_enqueued(m, at);
            }
        }
        self.core.measures.totals.quarantine_entries += 1;
        let depth = self.quarantine.len();
        let max = &mut self.core.measures.totals.max_dlq_depth;
        *max = (*max).max(depth);
        self.core.record(
            Some(m),
            Detail::Quarantined {
                reason,
                class,
                depth,
                elapsed,
            },
        );
        self.canary_settled(m, false);
    }

    /// A delivery of message `m` now, in a run that allows the one-write
    /// path, when the message has no faults: acked in one write outside an
    /// outage ([`ack_at_once`](Self::ack_at_once)), failed
    /// during one ([`outage_failure_delivery`](Self::outage_failure_delivery)).
    /// `None` when it is not such a one (nothing is changed then): the
    /// full path takes it.
    #[inline(always)]
    pub(in crate::engine) fn settle_at_once(&mut self, m: MessageIndex) -> Option<Settled> {
        if !self.source.draws.faults(self.core.scenario, m).is_empty() {
            return None;
        }
        if self.downstream.outages.contains(self.core.clock.now) {
            self.outage_failure_delivery(m);
            return Some(Settled::Failed);
        }
        self.ack_at_once(m).then_some(Settled::Acked)
    }

    /// The first delivery of a message without faults, outside an outage,
    /// in a run that allows it ([`crate::engine::settling::Settling::at_once`]):
    /// what becoming ready and [`start_delivery`](Self::start_delivery)
    /// would do for it, in one write of its record. It receives, commits
    /// its effect (the call is accepted; the store, if it keeps results,
    /// keeps this one under the message's own key) and acks; no
    /// transition, census or sink row records any of it. The message was
    /// never quarantined, so no canary waits for it, and with direct
    /// deliveries it is in no ordering group. False when the record is
    /// not a first delivery's, or when the store holds a live result for
    /// its key (a hit, which the full path takes): nothing is changed
    /// then.
    #[inline(always)]
    pub(in crate::engine) fn ack_at_once(&mut self, m: MessageIndex) -> bool {
        let now = self.core.clock.now;
        let (intent, key) = self.first_delivery_key(m);
        if self.store.live(key, now).is_some() || !self.core.messages.ack_first_delivery(m, now) {
            return false;
        }
        self.store.store(key, now);
        #[cfg(test)]
        {
            self.consumer.settled += 1;
        }
        self.core.measures.count_effect(intent);
        let totals = &mut self.core.measures.totals;
        totals.deliveries += 1;
        self.downstream.calls.offer(now, false, totals);
        totals.acked += 1;
        self.core.clock.last_delivery = Some(now);
        true
    }

    /// The intent of `m` and the key of its first delivery: its own
    /// intent's (only a redrive gives another).
    #[inline(always)]
    pub(in crate::engine) fn first_delivery_key(&self, m: MessageIndex) -> (IntentIndex, KeyRef) {
        let intent = self.core.scenario.intent(m);
        let key = KeyRef {
            intent,
            generation: 0,
        };
        (intent, key)
    }

    /// Whether the run takes runs of arrivals through
    /// [`take_run_of_arrivals`](Self::take_run_of_arrivals).
    pub(in crate::engine) fn takes_runs_of_arrivals(&self) -> bool {
        self.consumer.settling.runs_of_arrivals
    }

    /// A delivery of a message without faults during an outage, in a run
    /// that allows settling at once: it fails as
    /// [`start_delivery`](Self::start_delivery) would fail it (the outage
    /// comes after the message's own faults, decision 10.2, and it has
    /// none), and what follows the failure is the full path's
    /// [`after_failure`](Self::after_failure).
    #[inline(always)]
    fn outage_failure_delivery(&mut self, m: MessageIndex) {
        let now = self.core.clock.now;
        // Ready, then in flight for no time: `after_failure` sets the state
        // that follows (waiting, quarantined or dropped).
        self.core.measures.totals.deliveries += 1;
        let (_, cycle_receives, _) = self.core.messages.receive(m);
        self.consumer.cycle_starts(&self.core, m, cycle_receives);
        let retry = cycle_receives > 1;
        self.downstream
            .calls
            .offer_during_outage(now, retry, &mut self.core.measures.totals);
        self.core.clock.last_delivery = Some(now);
        let (reason, class) = (REASON_DOWNSTREAM_UNAVAILABLE, Class::Transient);
        self.core.messages.set_failure(m, reason, class);
        self.after_failure(m, reason, class, now);
    }

    /// A delivery with a receipt of `m` that started now and ends at `end`,
    /// decided as `finish`: settled now if the run allows it and the
    /// delivery acks with nothing left to happen before its end (no
    /// crash, no DONE to write, no visibility timer, a canary waiting for
    /// no one). True when it was settled.
    #[inline(always)]
    pub(in crate::engine) fn settle_write(
        &mut self,
        m: MessageIndex,
        finish: Finish,
        end: Millis,
        quiet_until_end: bool,
    ) -> bool {
        if !self.consumer.settling.writes
            || finish != Finish::Acked
            || !quiet_until_end
            || self.operator.canary.is_some()
        {
            return false;
        }
        self.core.set_state(m, State::Acked);
        self.core.messages.set_acked_at(m, end);
        self.settled_at(m, end);
        true
    }

    /// `m`'s delivery, acked in its record as of `end`, is settled: its
    /// end is counted now as the event it would have been (a run that
    /// then goes over `max_events` is run again step by step) and kept
    /// until it has happened.
    #[inline(always)]
    fn settled_at(&mut self, m: MessageIndex, end: Millis) {
        #[cfg(test)]
        {
            self.consumer.settled += 1;
        }
        self.core.clock.add_events(1);
        self.consumer.ends_ahead.push(self.core.clock.now, end);
        self.core.clock.settled_end(end);
        self.core.measures.totals.acked += 1;
        self.leaves(m);
    }

    /// The first delivery of `m`, now, in a run that settles writes, when
    /// its write is plain ([`Writes::plain_took`]): the message has no
    /// faults, no outage is on, the store holds no live result for its
    /// key, no canary waits, and the delivery takes some time. What
    /// [`start_delivery`](Self::start_delivery) and then
    /// [`settle_write`](Self::settle_write) would do for it, without the
    /// steps between: its record is written once (received, one effect,
    /// acked as of its end), the write is made and the delivery settled.
    /// False when it is not such a one (nothing is changed then): the
    /// full path takes it.
    ///
    /// [`Writes::plain_took`]: crate::engine::write::Writes::plain_took
    #[inline(always)]
    pub(in crate::engine) fn settle_plain_write(&mut self, m: MessageIndex) -> bool {
        let scenario = self.core.scenario;
        let now = self.core.clock.now;
        let (intent, key) = self.first_delivery_key(m);
        if self.operator.canary.is_some()
            || !self.source.draws.faults(scenario, m).is_empty()
            || self.downstream.outages.contains(now)
            || self.store.live(key, now).is_some()
        {
            return false;
        }
        let (Some(write), Some(writes)) = (&scenario.write, &mut self.downstream.writes) else {
            return false;
        };
        // A delivery that takes no time is never settled (below): not
        // looked at.
        if self.consumer.service_time == 0 && writes.least_took() == 0 {
            return false;
        }
        // Its result stored in its last call's event, ahead of which an
        // event of that instant (a retry, an arrival) may look the key up
        // and miss: a pending result seen from that instant would answer
        // it (decision 27.37 and section 1). The full path takes it.
        if writes.result_seen_at_a_call() && self.store.keeps_results() {
            return false;
        }
        let Some(took) = writes.plain_took(write, intent, key, now, self.operator.repaired) else {
            return false;
        };
        let service = self.consumer.service_time.saturating_add(took);
        let end = now.saturating_add(service);
        // A delivery that takes no time ends at once (decision 16.3), and
        // only a fresh record is written in one go.
        if service == 0 || !self.core.messages.ack_first_delivery(m, end) {
            return false;
        }
        writes.write_plain(write, key, intent, now);
        let calls = writes.take_calls_made();
        self.core.clock.add_events(calls);
        let totals = &mut self.core.measures.totals;
        totals.deliveries += 1;
        totals.concurrent_deliveries = totals.concurrent_deliveries.max(1);
        totals.worker_busy = totals.worker_busy.saturating_add(service);
        // Unlimited (the run settles writes): always accepted.
        self.downstream.calls.offer(now, false, totals);
        self.core.measures.count_effect(intent);
        self.core.observers.recording.effect(Effect {
            time: now,
            message: m,
            key,
            intent,
            cycle: 1,
        });
        self.store
            .store_seen_from(key, now, now.saturating_add(took));
        self.settled_at(m, end);
        true
    }
}
