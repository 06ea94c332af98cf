//! Deliveries with a receipt each (docs/model.md sections 17-22): with a
//! visibility timeout a message may have several deliveries in flight, and
//! only the latest started (the current one) reaches the broker; a crash
//! ends a delivery without an ack; a write-intent claim is turned into
//! DONE when its delivery ends. Each delivery in flight has a record in a
//! slab, freed when its end and its visibility timer (if any) have fired,
//! so memory follows the deliveries in flight, not the run's length.
//!
//! Files without sections 17-22 never come here: their deliveries keep
//! the compact path of `delivery.rs`.

use super::Core;
use super::schedule::Finish;
use crate::model::{Class, CrashAt, KeyRef, MessageIndex, Millis};

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
    pub(super) timer_void: bool,
    /// Scheduled events still to fire (its end, its visibility timer).
    pub(super) refs: u8,
}

impl Record {
    /// The receipt of a delivery of `m` (its `receive`-th receive) that
    /// starts at `start`, as `decision` decided it, in flight; its
    /// visibility timeout ends at `visible` (if it has one), and its timer
    /// is scheduled when `timer`.
    pub(super) fn delivery(
        m: MessageIndex,
        receive: u32,
        start: Millis,
        visible: Option<Millis>,
        decision: &Decision,
        timer: bool,
    ) -> Record {
        Record {
            message: m,
            receive,
            start,
            wait: visible.map_or(Millis::MAX, |at| at - start),
            finish: decision.finish,
            crash: decision.crash,
            done_key: decision.done_key,
            in_flight: true,
            nak: false,
            writing: None,
            timer_void: false,
            refs: 1 + timer as u8,
        }
    }
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
    pub(super) void_timers: usize,
    pub(super) slots: Vec<Record>,
    free: Vec<u32>,
    /// With a visibility timeout: deliveries in flight per message
    /// (without one a message has at most one).
    per_message: Vec<u32>,
    /// With a visibility timeout: per message, when its latest delivery
    /// started or (high bit set) when it was quarantined as it became
    /// visible again, for the story of an expired receipt.
    pub(super) latest: Vec<Millis>,
}

pub(super) const QUARANTINED_BIT: Millis = 1 << 63;

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

    pub(super) fn open(&mut self, record: Record) -> u32 {
        if let Some(n) = self.per_message.get_mut(record.message as usize) {
            *n += 1;
        }
        if let Some(latest) = self.latest.get_mut(record.message as usize) {
            *latest = record.start;
        }
        self.slot_for(record)
    }

    /// Deliveries of `m` in flight now.
    pub(super) fn of(&self, m: MessageIndex) -> u32 {
        self.per_message.get(m as usize).copied().unwrap_or(0)
    }

    pub(super) fn ended(&mut self, m: MessageIndex) {
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
    pub(super) fn release(&mut self, slot: u32) -> Record {
        let record = &mut self.slots[slot as usize];
        record.refs -= 1;
        let copy = *record;
        if copy.refs == 0 {
            self.free.push(slot);
        }
        copy
    }
}

/// Under sqs-standard (and for a nats-jetstream delivery left
/// unacknowledged) a failed delivery whose message is already visible
/// again and within its budget stays visible (its retry is due at its
/// start plus the timeout, which has passed).
pub(super) fn stays_visible(core: &Core, m: MessageIndex, finish: Finish) -> bool {
    let (class, waits) = match finish {
        Finish::Acked => return false,
        Finish::AckLost => (Class::Transient, core.scenario.waits_for_ack_wait(true)),
        Finish::Failed(_, class) => (class, core.scenario.waits_for_ack_wait(false)),
    };
    let sqs = core.scenario.guarantees.sqs;
    (sqs.is_some_and(|s| !s.change_visibility) || waits) && core.retries(m, class)
}
