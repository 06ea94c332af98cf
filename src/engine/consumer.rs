//! The consumer side: one delivery of a taken message, decided by the rules
//! of docs/model.md section 3 (with the downstream's order of section 13)
//! when it starts, and what follows when it ends (step 5). Without workers
//! and service time the start and the end are one atomic step.

use super::ack_pending::AckPending;
use super::backoff::retry_delay;
use super::calls::Call;
use super::dedup::Claim;
use super::jetstream::Superseded;
use super::pages;
use super::ready::ReadySet;
use super::receipts::Decision;
use super::receipts::Receipts;
use super::receipts::Writing;
use super::receipts::{QUARANTINED_BIT, Record};
use super::schedule::Finish;
use super::settling::EndsAhead;
use super::settling::Settling;
use super::transition::{Detail, Effect};
use super::write::{FlightId, Written, Wrote};
use super::{Core, Draws, Engine};
use crate::model::{
    Asked, Class, CrashAt, DedupMode, FaultKind, Faults, IntentIndex, KeyRef, MessageIndex, Millis,
    Profile, REASON_ACK_LOST, REASON_CONSUMER_CRASHED, REASON_DOWNSTREAM_UNAVAILABLE,
    REASON_IN_FLIGHT_ELSEWHERE, REASON_THROTTLED, REASON_VISIBILITY_TIMEOUT, ReasonIndex, Requeue,
    Scenario, State,
};

/// The consumer: its workers, the ready set they take from, the
/// deliveries in flight and their ends.
#[derive(Clone)]
pub(super) struct Consumer {
    /// Ready messages not yet taken, and which may be taken.
    pub(super) ready: ReadySet,
    /// nats-jetstream's MaxAckPending, when it can bind: messages held in
    /// the stream while as many are pending.
    pub(super) ack_pending: Option<AckPending>,
    /// Unlimited workers and no ordering: a ready message is taken at
    /// once, and the ready set is never used.
    pub(super) direct: bool,
    /// What the run settles at a delivery's start, as every part allows
    /// (`settling.rs`).
    pub(super) settling: Settling,
    /// Deliveries settled at their start, for the tests that show which
    /// path a run took.
    #[cfg(test)]
    pub(super) settled: u64,
    /// The ends of settled deliveries still in flight.
    pub(super) ends_ahead: EndsAhead,
    /// Workers delivering now.
    pub(super) busy_workers: u64,
    /// Deliveries in flight (with a service time).
    pub(super) in_flight: u64,
    pub(super) service_time: Millis,
    /// Per message, time ready but not taken; only with workers,
    /// ordering or a MaxAckPending that can bind (otherwise nothing ever
    /// waits).
    pub(super) queue_waits: Vec<Millis>,
    /// Per message, decorrelated jitter's previous delay in its cycle;
    /// only with decorrelated jitter.
    pub(super) prev_delays: Vec<Millis>,
    /// Per message, when its cycle's first delivery started; only with
    /// `max_elapsed` (section 28.3).
    pub(super) cycle_starts: Vec<Millis>,
    /// The first deliveries that came after their message's arrival, for
    /// the dead-letter envelope's `first_delivery` (decision 10.12).
    pub(super) first_deliveries: super::FirstDeliveries,
    /// The `max_elapsed` quarantine in hand: the retry's due time and the
    /// cycle's start, for its transition.
    pub(super) over_elapsed: Option<(Millis, Millis)>,
    /// Whether each delivery keeps a receipt of its own (the file uses
    /// sections 17-22, or `[write]`): only the latest reaches the broker.
    pub(super) with_receipts: bool,
    /// The deliveries in flight, one receipt each.
    pub(super) receipts: Receipts,
    /// The most deliveries in flight at once the run keeps (sections
    /// 17-22): one per message, and [`super::receipts::EXTRA_DELIVERIES_IN_FLIGHT`].
    pub(super) in_flight_cap: u64,
}

impl Consumer {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let count = scenario.message_count();
        let flow = &scenario.flow;
        let waits = flow.workers.is_some() || flow.ordering != crate::model::Ordering::None;
        let decorrelated = matches!(
            scenario.delivery.retry,
            crate::model::Retry::Backoff {
                jitter: crate::model::Jitter::Decorrelated,
                ..
            }
        );
        let per_message = |wanted: bool| pages::zeroed(if wanted { count as usize } else { 0 });
        let ack_pending = AckPending::new(scenario);
        // A queue whose messages wait for a worker, a group or MaxAckPending
        // keeps one per message, as it keeps their waits; a log only those
        // of records that waited for a busy or stopped partition.
        let first_deliveries = match (waits || ack_pending.is_some(), &scenario.log) {
            (true, _) => super::FirstDeliveries::Dense(per_message(true)),
            (false, Some(_)) => super::FirstDeliveries::Sparse(Default::default()),
            (false, None) => super::FirstDeliveries::AtArrival,
        };
        Consumer {
            ready: ReadySet::new(scenario),
            queue_waits: per_message(waits || ack_pending.is_some()),
            ack_pending,
            direct: !waits,
            settling: Settling::NOTHING,
            #[cfg(test)]
            settled: 0,
            ends_ahead: EndsAhead::default(),
            busy_workers: 0,
            in_flight: 0,
            service_time: match &scenario.log {
                Some(log) => log.service_time,
                None => scenario.flow.workers.map_or(0, |w| w.service_time),
            },
            prev_delays: per_message(decorrelated),
            cycle_starts: per_message(scenario.delivery.max_elapsed.is_some()),
            first_deliveries,
            over_elapsed: None,
            with_receipts: scenario.guarantees.extended || scenario.write.is_some(),
            receipts: Receipts::new(scenario),
            in_flight_cap: count.saturating_add(super::receipts::EXTRA_DELIVERIES_IN_FLIGHT),
        }
    }

    /// `m`'s first delivery ever starts now: kept when it waited.
    #[cold]
    fn first_delivery_waited(&mut self, core: &Core, draws: &Draws, m: MessageIndex) {
        let now = core.clock.now;
        if now > draws.arrival(core.scenario, m) {
            match &mut self.first_deliveries {
                super::FirstDeliveries::Dense(all) => all[m as usize] = now,
                super::FirstDeliveries::Sparse(some) => {
                    some.insert(m, now);
                }
                super::FirstDeliveries::AtArrival => {}
            }
        }
    }

    /// `m`'s cycle began now when this is its first delivery (`max_elapsed`
    /// budgets count from there).
    #[inline(always)]
    pub(super) fn cycle_starts(&mut self, core: &Core, m: MessageIndex, cycle_receives: u32) {
        if cycle_receives == 1
            && let Some(start) = self.cycle_starts.get_mut(m as usize)
        {
            *start = core.clock.now;
        }
    }

    /// Whether a retry of `m` due at `due` is past its cycle's
    /// `max_elapsed` budget (section 28.3: due exactly at the budget's end
    /// is within it); if so, the quarantine that follows is told so and
    /// counted.
    pub(super) fn over_elapsed(&mut self, core: &mut Core, m: MessageIndex, due: Millis) -> bool {
        let Some(budget) = core.scenario.delivery.max_elapsed else {
            return false;
        };
        let began = self.cycle_starts[m as usize];
        if due.saturating_sub(began) <= budget {
            return false;
        }
        self.over_elapsed = Some((due, began));
        core.measures.totals.elapsed_exhausted += 1;
        true
    }
}

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
            message: m,
            receive,
            start: now,
            wait: visible.map_or(Millis::MAX, |at| at - now),
            finish: decision.finish,
            crash: decision.crash,
            done_key: decision.done_key,
            in_flight: !atomic,
            nak: false,
            writing: None,
            timer_void: false,
            refs: 1 + timer.is_some() as u8,
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
                    if self
                        .downstream
                        .calls
                        .offer(now, retry, &mut self.core.measures.totals)
                        == Call::Throttled
                    {
                        return failed(REASON_THROTTLED, Class::Transient, None);
                    }
                    match self.commit_write(m, key, intent) {
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
                    if self
                        .downstream
                        .calls
                        .offer(now, retry, &mut self.core.measures.totals)
                        == Call::Throttled
                    {
                        return failed(REASON_THROTTLED, Class::Transient, None);
                    }
                    match self.commit_write(m, key, intent) {
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
        let finished = writes.after_event(&mut self.core, &mut self.alarms);
        for done in &finished {
            if let Some(slot) = done.owner {
                let log = self.source.log.as_deref();
                (self.consumer).write_heard(&mut self.core, log, &mut self.store, slot, done);
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
        let relay = writes.call_due(&mut self.core, log, self.operator.repaired, (id, sink));
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
            self.core.measures.retries += 1;
            let delay = due - now;
            let paid = &mut self.core.measures.totals.retry_delay_paid;
            *paid = paid.saturating_add(delay);
            self.core.record_retry(m, delay, due);
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
            let paid = &mut self.core.measures.totals.retry_delay_paid;
            *paid = paid.saturating_add(delay);
            let requeue = self.core.scenario.requeue();
            let at_once = delivery.retry == crate::model::Retry::Fixed(0);
            if at_once && requeue != Requeue::Back && !self.consumer.direct {
                // rabbitmq-quorum by broker_version: ahead of the queue.
                self.core.measures.retries += 1;
                self.core.record_retry(m, delay, due);
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
            self.core.measures.retries += 1;
            self.core.record_retry(m, delay, due);
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
}
