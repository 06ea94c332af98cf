//! Deliveries with a receipt each (docs/model.md sections 17-22): with a
//! visibility timeout a message may have several deliveries in flight, and
//! only the latest started (the current one) reaches the broker; a crash
//! ends a delivery without an ack; a write-intent claim is turned into
//! DONE when its delivery ends. Each delivery in flight has a record in a
//! slab, freed when its end and its visibility timer (if any) have fired,
//! so memory follows the deliveries in flight, not the run's length.
//!
//! Files without sections 17-22 never come here: their deliveries keep
//! the compact path of `consumer.rs`.

use super::jetstream::Superseded;
use super::schedule::{Due, Finish};
use super::transition::Detail;
use super::{Core, Engine};
use crate::model::{
    Class, CrashAt, KeyRef, MessageIndex, Millis, REASON_ACK_LOST, REASON_CONSUMER_CRASHED,
    REASON_VISIBILITY_TIMEOUT, State,
};

/// One delivery, from its start until its end and its visibility timer
/// have fired.
#[derive(Debug, Clone, Copy)]
pub(super) struct Record {
    pub(super) message: MessageIndex,
    /// The message's total receives at its start: the delivery is current
    /// while no later one has started.
    pub(super) receive: u32,
    pub(super) start: Millis,
    /// Its ack wait (visibility timeout), `Millis::MAX` without one.
    pub(super) wait: Millis,
    pub(super) finish: Finish,
    pub(super) crash: Option<CrashAt>,
    /// Write-intent: the key whose DONE this delivery writes at its end.
    pub(super) done_key: Option<KeyRef>,
    /// Whether it holds a worker (not atomic).
    pub(super) in_flight: bool,
    /// nats-jetstream: a record for a nak's timer alone (its redelivery,
    /// or the instant the message is given up), not a delivery.
    pub(super) nak: bool,
    /// A delivery whose write is in flight: how it ends is known at the
    /// write's last reply.
    pub(super) writing: Option<Writing>,
    /// Its visibility timer, scheduled before its end was known, turned
    /// out not to be wanted: it does nothing when it fires.
    timer_void: bool,
    /// Scheduled events still to fire (its end, its visibility timer).
    refs: u8,
}

/// What a delivery whose write is in flight decided at its start, for
/// its end (`write_heard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Writing {
    pub(super) flight: super::write::FlightId,
    /// A `lose_ack` fault applies: a write that succeeds ends as ack lost.
    pub(super) ack_lost: bool,
    /// Write-intent mode: the delivery writes DONE at its end if the
    /// write stores its result.
    pub(super) lease: bool,
}

/// How a delivery with a receipt's start decided it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Decision {
    pub(super) finish: Finish,
    pub(super) takes: Option<Millis>,
    pub(super) crash: Option<CrashAt>,
    pub(super) done_key: Option<KeyRef>,
    /// How long the write's sink calls held the delivery (section 24).
    pub(super) calls: Millis,
    /// The write is in flight: `finish`, `done_key` and `calls` are
    /// known at its last reply.
    pub(super) writing: Option<Writing>,
}

#[derive(Default, Clone)]
pub(super) struct Receipts {
    /// Visibility timers scheduled and found not wanted (`timer_void`).
    void_timers: usize,
    slots: Vec<Record>,
    free: Vec<u32>,
    /// With a visibility timeout: deliveries in flight per message
    /// (without one a message has at most one).
    per_message: Vec<u32>,
    /// With a visibility timeout: per message, when its latest delivery
    /// started or (high bit set) when it was quarantined as it became
    /// visible again, for the story of an expired receipt.
    latest: Vec<Millis>,
}

const QUARANTINED_BIT: Millis = 1 << 63;

/// Deliveries in flight at once beyond one per message: each visibility
/// timeout that passes while a long delivery runs starts another, so a
/// file could otherwise fill memory with them before any other limit
/// stops it. About 40 MB of records.
pub const EXTRA_DELIVERIES_IN_FLIGHT: u64 = 1_000_000;

impl Receipts {
    /// Visibility timers still scheduled that will do nothing: not
    /// pending events.
    pub(super) fn void_timers(&self) -> usize {
        self.void_timers
    }

    /// Deliveries in flight now (records still open).
    pub(super) fn open_count(&self) -> u64 {
        (self.slots.len() - self.free.len()) as u64
    }

    pub(super) fn new(scenario: &crate::model::Scenario) -> Self {
        let timed = scenario.guarantees.visibility_timeout.is_some();
        let per_message = if timed {
            scenario.message_count() as usize
        } else {
            0
        };
        Receipts {
            latest: super::pages::zeroed(per_message),
            per_message: super::pages::zeroed(per_message),
            ..Receipts::default()
        }
    }

    fn open(&mut self, record: Record) -> u32 {
        if let Some(n) = self.per_message.get_mut(record.message as usize) {
            *n += 1;
        }
        if let Some(latest) = self.latest.get_mut(record.message as usize) {
            *latest = record.start;
        }
        self.slot_for(record)
    }

    /// Deliveries of `m` in flight now.
    fn of(&self, m: MessageIndex) -> u32 {
        self.per_message.get(m as usize).copied().unwrap_or(0)
    }

    fn ended(&mut self, m: MessageIndex) {
        if let Some(n) = self.per_message.get_mut(m as usize) {
            *n -= 1;
        }
    }

    /// The message of the delivery in `slot`.
    pub(super) fn message_of(&self, slot: u32) -> MessageIndex {
        self.slots[slot as usize].message
    }

    /// The delivery in `slot` was abandoned (a log's restart): its end
    /// will not fire.
    pub(super) fn abandon(&mut self, slot: u32) {
        let record = self.release(slot);
        self.ended(record.message);
    }

    /// nats-jetstream: the server acts on the nak of the delivery of `m`
    /// that started at `start` and ended now with `finish` at `due`: it
    /// redelivers the message, or gives it up when it used its last
    /// delivery (the engine's `visible` decides, unless a later
    /// delivery or an ack came first).
    pub(super) fn nak_timer(
        &mut self,
        core: &mut Core,
        m: MessageIndex,
        start: Millis,
        due: Millis,
        finish: Finish,
    ) {
        let slot = self.open_timer(Record {
            message: m,
            receive: core.messages.get(m).total_receives,
            start,
            wait: Millis::MAX,
            finish,
            crash: None,
            done_key: None,
            in_flight: false,
            nak: true,
            writing: None,
            timer_void: false,
            refs: 1,
        });
        let now = core.clock.now;
        core.schedule.schedule_visible(now, due, slot);
    }

    /// A record for a nak's timer alone (nats-jetstream): not a delivery
    /// in flight.
    fn open_timer(&mut self, record: Record) -> u32 {
        self.slot_for(Record {
            refs: 1,
            nak: true,
            ..record
        })
    }

    /// A free slot (or a new one) holding `record`.
    fn slot_for(&mut self, record: Record) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = record;
                slot
            }
            None => {
                self.slots.push(record);
                self.slots.len() as u32 - 1
            }
        }
    }

    /// One of the slot's events fired; the slot is reused after the last.
    fn release(&mut self, slot: u32) -> Record {
        let record = &mut self.slots[slot as usize];
        record.refs -= 1;
        let copy = *record;
        if copy.refs == 0 {
            self.free.push(slot);
        }
        copy
    }
}

impl Engine<'_> {
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
            return self.start_writing(m, receive, decision, writing);
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

    /// A delivery of `m` whose write is in flight starts now: it holds its
    /// worker until the write's last reply and its service time after it
    /// (`write_heard`). Its visibility timer is scheduled now when it does
    /// not move with heartbeats (whether it is wanted is known at the
    /// write's last reply), else then.
    fn start_writing(
        &mut self,
        m: MessageIndex,
        receive: u32,
        decision: Decision,
        writing: Writing,
    ) {
        let now = self.core.clock.now;
        let scenario = self.core.scenario;
        let heartbeats = scenario
            .guarantees
            .sqs
            .is_some_and(|s| s.heartbeat.is_some());
        let n = self.core.messages.cycle_receives(m);
        let visible = scenario.visible_again_at(now, now, n);
        let timer = visible.filter(|_| !heartbeats);
        let slot = self.consumer.receipts.open(Record {
            message: m,
            receive,
            start: now,
            wait: visible.map_or(Millis::MAX, |at| at - now),
            finish: decision.finish,
            crash: decision.crash,
            done_key: None,
            in_flight: true,
            nak: false,
            writing: Some(writing),
            timer_void: false,
            refs: 1 + timer.is_some() as u8,
        });
        self.core.set_state(m, State::InFlight);
        self.consumer.in_flight += 1;
        self.core.state_changed(m);
        if let Some(writes) = self.downstream.writes.as_mut() {
            writes.set_owner(writing.flight, slot);
        }
        if let Some(at) = timer {
            self.core.schedule.schedule_visible(now, at, slot);
        }
    }

    /// The write of the delivery in `slot` is done (`done`): how the
    /// delivery ends follows, and its end is scheduled after its service
    /// time. A delivery that a restart abandoned meanwhile is let go.
    pub(super) fn write_heard(&mut self, slot: u32, done: &super::write::Finished) {
        let now = self.core.clock.now;
        let abandoned =
            (self.source.log.as_deref()).is_some_and(|log| log.cancelled(done.message, done.begun));
        if abandoned {
            self.consumer.receipts.abandon(slot);
            return;
        }
        let scenario = self.core.scenario;
        let wrote = done.wrote;
        let heard = done.commit.saturating_add(wrote.took);
        let record = &mut self.consumer.receipts.slots[slot as usize];
        let Some(writing) = record.writing.take() else {
            return;
        };
        record.finish = match (record.crash, wrote.failed) {
            (Some(_), _) => Finish::Failed(REASON_CONSUMER_CRASHED, Class::Transient),
            (None, Some((reason, class))) => Finish::Failed(reason, class),
            (None, None) if writing.ack_lost => Finish::AckLost,
            (None, None) => Finish::Acked,
        };
        let stores = wrote.stores_result;
        if writing.lease {
            if matches!(record.crash, None | Some(CrashAt::AfterDone)) && stores {
                record.done_key = Some(done.key);
            }
        } else if stores {
            self.store.store_seen_from(done.key, done.commit, heard);
        }
        let record = self.consumer.receipts.slots[slot as usize];
        let end = heard.saturating_add(self.consumer.service_time);
        let busy = &mut self.core.measures.totals.worker_busy;
        *busy = busy.saturating_add(end - record.start);
        let unacked = match record.finish {
            Finish::Acked => false,
            Finish::AckLost => scenario.waits_for_ack_wait(true),
            Finish::Failed(..) => scenario.waits_for_ack_wait(false),
        };
        let wanted = |at: Millis| record.crash.is_some() || end > at || unacked;
        if record.wait != Millis::MAX {
            let heartbeats = scenario
                .guarantees
                .sqs
                .is_some_and(|s| s.heartbeat.is_some());
            if heartbeats {
                let n = self.core.messages.cycle_receives(record.message);
                let visible = scenario.visible_again_at(record.start, end, n);
                if let Some(at) = visible.filter(|&at| wanted(at)) {
                    self.consumer.receipts.slots[slot as usize].refs += 1;
                    self.core.schedule.schedule_visible(now, at.max(now), slot);
                }
            } else if !wanted(record.start.saturating_add(record.wait)) {
                self.consumer.receipts.slots[slot as usize].timer_void = true;
                self.consumer.receipts.void_timers += 1;
            }
        }
        self.core.schedule.schedule_end_of(now, end, slot);
    }

    /// Drops the visibility timer at the front of the schedule if it
    /// turned out not to be wanted (`write_heard`): it is no event. True
    /// when one was dropped.
    pub(super) fn drop_void_timer(&mut self) -> bool {
        if self.consumer.receipts.void_timers == 0 {
            return false;
        }
        let Some((_, _, Due::Visible { slot, sequence })) = self.core.schedule.peek_scheduled()
        else {
            return false;
        };
        if !self.consumer.receipts.slots[slot as usize].timer_void {
            return false;
        }
        self.core.schedule.pop_scheduled();
        self.visible(slot, sequence);
        true
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
        if visible && !self.stays_visible(m, d.finish) {
            // Visible again after its timeout and not taken since: it
            // leaves the ready set (the current delivery decides).
            self.consumer.ready.withdraw(m);
        }
        self.end_delivery(m, d.finish, false, d.start);
    }

    /// Under sqs-standard (and for a nats-jetstream delivery left
    /// unacknowledged) a failed delivery whose message is already visible
    /// again and within its budget stays visible (its retry is due at its
    /// start plus the timeout, which has passed).
    fn stays_visible(&self, m: MessageIndex, finish: Finish) -> bool {
        let (class, waits) = match finish {
            Finish::Acked => return false,
            Finish::AckLost => (
                Class::Transient,
                self.core.scenario.waits_for_ack_wait(true),
            ),
            Finish::Failed(_, class) => (class, self.core.scenario.waits_for_ack_wait(false)),
        };
        let sqs = self.core.scenario.guarantees.sqs;
        (sqs.is_some_and(|s| !s.change_visibility) || waits) && self.core.retries(m, class)
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
        let exhausted = message.cycle_receives >= self.core.scenario.budget()
            // Ready again now, within its cycle: past max_elapsed (28.3)?
            || self.over_elapsed(m, self.core.clock.now);
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
}
