//! The source as a partitioned log (docs/model.md section 23, decisions
//! 26 and 27.9-27.17): records appended per partition in offset order,
//! each partition processing one record at a time (retries in place, a
//! quarantined record moves it on), positions committed at checkpoints
//! (or before processing under at-most-once), restarts that resume each
//! partition from a position and reprocess from there (`restart.rs`), and
//! the exactly-once transaction of sink writes.
//!
//! A record's processing is a delivery of `consumer.rs`; the log decides
//! which record a partition delivers next and when. What it keeps is four
//! bytes per record (its message and its status), the positions per
//! partition, and positions per restart: O(records + partitions x
//! restarts). Checkpoints cost nothing each: between two events every
//! checkpoint instant sees the same positions, so they are taken together
//! (the partitions whose position moved are copied, nothing else).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::Engine;
mod checkpoints;
mod producer;
mod restart;
mod samples;

use super::Record;
use super::schedule::Due;
use crate::model::{
    Guarantee, IntentIndex, KeyRef, Log, MessageIndex, Millis, Partitioner, Resume, Scenario, State,
};
use restart::Replay;
pub use restart::RestartRecord;
use samples::Samples;
pub use samples::{OFFSET_SAMPLES, OffsetSample, SAMPLED_PARTITIONS};

/// A record not yet done (never processed, or processing).
const PENDING: u8 = 0;
/// Acked or quarantined.
const DONE: u8 = 1;
/// Below a resume position and never done.
const SKIPPED: u8 = 2;
/// Done once, and being processed again after a restart.
const AGAIN: u8 = 3;

/// Where a record's status sits in its entry, above its message.
const STATUS_SHIFT: u32 = 30;
const MESSAGE_BITS: u32 = (1 << STATUS_SHIFT) - 1;
const _: () = assert!(crate::model::MAX_MESSAGES_CEILING <= MESSAGE_BITS as u64);

#[derive(Debug, Default, Clone)]
struct Partition {
    /// Each offset's record: its message in the low 30 bits (messages
    /// number at most `MAX_MESSAGES_CEILING`, 50,000,000), its status
    /// (`PENDING`, `DONE`, `SKIPPED`, `AGAIN`) in the top two: four bytes
    /// a record, written once as it is appended.
    records: Vec<u32>,
    /// The offset of the next record to process.
    position: u64,
    /// The last checkpoint's position (at-most-once: the committed one).
    committed: u64,
    /// The record at `position` has started its attempt: it is in flight
    /// or waiting for its retry.
    busy: bool,
    /// The record at `position` is due now (an event is scheduled).
    kicked: bool,
    /// Down after a restart, until its resume.
    down: bool,
    /// When the record at `position` is due again, while it waits for a
    /// retry (what a restart cancels).
    retry_due: Millis,
    /// A replay under way (section 28.10): at position `until` the
    /// partition goes on from `back_to`, where it was before the restart
    /// (restart `restart`, its `k`-th partition, records the jump).
    replay: Option<Replay>,
    resume_at: Option<Millis>,
    /// Moved since the last checkpoint.
    dirty: bool,
}

impl Partition {
    fn end(&self) -> u64 {
        self.records.len() as u64
    }

    /// The message of the record at `offset`, if there is one.
    fn message(&self, offset: u64) -> Option<MessageIndex> {
        let entry = self.records.get(offset as usize)?;
        Some(entry & MESSAGE_BITS)
    }

    /// The message of the record at `offset` (which must exist).
    fn message_at(&self, offset: u64) -> MessageIndex {
        self.records[offset as usize] & MESSAGE_BITS
    }

    /// The status of the record at `offset` (which must exist).
    fn status(&self, offset: u64) -> u8 {
        (self.records[offset as usize] >> STATUS_SHIFT) as u8
    }

    fn set_status(&mut self, offset: u64, status: u8) {
        let entry = &mut self.records[offset as usize];
        *entry = (*entry & MESSAGE_BITS) | (u32::from(status) << STATUS_SHIFT);
    }

    fn push(&mut self, m: MessageIndex, status: u8) {
        self.records.push(m | (u32::from(status) << STATUS_SHIFT));
    }
}

/// The log at the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogOutcome {
    /// Per partition: its end offset and committed position.
    pub partitions: Vec<(u64, u64)>,
    pub restarts: Vec<RestartRecord>,
    /// Checkpoints completed, and the time of the last (section 28.7).
    pub checkpoints: u64,
    pub last_checkpoint: Option<Millis>,
    /// Checkpoints failed or aborted (`[[checkpoint_failure]]`): numbers
    /// 1 to `checkpoints + checkpoints_failed` were taken.
    pub checkpoints_failed: u64,
    /// Each message's partition: its latest record's, or for a message
    /// never appended its own key's. At most `MAX_PARTITIONS` (1,024), so
    /// two bytes a message.
    pub partition_of: Vec<u16>,
    /// When the source cycle's last delivery ended.
    pub drain_time: Millis,
    /// The lag and the first partitions' positions and ends, sampled over
    /// the run (the last sample at its end).
    pub samples: Vec<OffsetSample>,
}

impl LogOutcome {
    /// Checkpoint `k`'s status (section 28.7); none when the run ended
    /// before it.
    pub fn checkpoint_status(&self, log: &Log, k: u64) -> Option<crate::model::CheckpointStatus> {
        let taken = self.checkpoints + self.checkpoints_failed;
        (k >= 1 && k <= taken).then(|| log.checkpoint_failures.status(k))
    }
}

/// The sink writes of exactly-once: the records done since the last
/// checkpoint, and each partition's record in progress.
#[derive(Debug, Default, Clone)]
struct Transaction {
    done: Vec<(KeyRef, IntentIndex)>,
    current: Vec<Vec<(KeyRef, IntentIndex)>>,
}

#[derive(Clone)]
pub(super) struct LogState {
    guarantee: Guarantee,
    interval: Option<Millis>,
    parts: Vec<Partition>,
    /// Each message's partition (of its latest record), two bytes a
    /// message (at most `MAX_PARTITIONS`, 1,024).
    partition_of: Vec<u16>,
    records: u64,
    positions: u64,
    /// The partitions whose position moved since the last checkpoint.
    moved: Vec<u32>,
    /// The next checkpoint instant not yet taken.
    next_checkpoint: Millis,
    /// Checkpoints completed, and the last one's time; checkpoints
    /// failed (section 28.7).
    checkpoints: u64,
    last_checkpoint: Option<Millis>,
    checkpoints_failed: u64,
    /// Positions to keep for stale resumes: (instant, restart index),
    /// in time order, and the next one to take.
    wanted: Vec<(Millis, usize)>,
    next_wanted: usize,
    /// Per restart, the positions kept for it (stale resumes).
    kept: Vec<Option<Vec<u64>>>,
    next_restart: usize,
    /// Pending resumes: when, and which partitions.
    resumes: BTreeMap<Millis, Vec<u32>>,
    /// Entries of a restarted partition's record scheduled before its
    /// restart (a delivery's end, a retry, the record due) are cancelled:
    /// by message, the first sequence still valid.
    valid_from: FxHashMap<MessageIndex, u64>,
    /// Done records processed again and not done again yet: each
    /// message's outcome before, which it keeps if a later restart resumes
    /// past the record (decision 27.31). An entry is made when such a
    /// record starts and leaves when it is done or passed over: at most
    /// one a partition, and one more a partition per restart.
    reopened: FxHashMap<MessageIndex, State>,
    /// `carry_attempts` (section 28.4): a record not done when a restart
    /// comes keeps its receive count.
    carry_attempts: bool,
    /// The messages whose count a restart carried, at least once: at
    /// most one a record.
    carried: rustc_hash::FxHashSet<MessageIndex>,
    /// The producer's retries (section 28.6).
    producer: producer::Retries,
    /// Messages in state `skipped` (a message's records may be several
    /// with a producer's duplicates, so not the skipped records' count).
    skipped_messages: u64,
    transaction: Option<Transaction>,
    /// Exactly-once: writes visible in the sinks (committed), per intent.
    visible_per_intent: Vec<u32>,
    visible: u64,
    restart_records: Vec<RestartRecord>,
    drain_time: Option<Millis>,
    partitioner: Partitioner,
    /// Positions and lag sampled over time, for the reports.
    samples: Samples,
}

impl LogState {
    pub(super) fn new(scenario: &Scenario, log: &Log) -> Self {
        let guarantee = log.guarantee;
        let interval = log.checkpoint_interval;
        let mut wanted = Vec::new();
        for (r, restart) in log.restarts.iter().enumerate() {
            if let Resume::Stale(age) = restart.resume
                && let Some(t) = restart.at.checked_sub(age)
            {
                let instant = match interval {
                    // The completed checkpoint at or before t (k >= 1).
                    Some(i) => log.checkpoint_failures.completed_at_or_before(t / i) * i,
                    None => t,
                };
                if interval.is_none() || instant > 0 {
                    wanted.push((instant, r));
                }
            }
        }
        wanted.sort();
        let exactly_once = guarantee == Guarantee::ExactlyOnce;
        // Each message's partition under its own key, placed before the
        // run in one pass (a record appended later reads it); each
        // partition's records reserved up front to the count placed there:
        // growing by doubling would copy and clear twice the pages.
        let partitioner = Partitioner::new(log.partitions);
        let mut partition_of = vec![0; scenario.message_count() as usize];
        super::pages::large_pages(&partition_of);
        let mut shares = vec![0usize; log.partitions.max(1) as usize];
        if log.partitions > 1 {
            crate::model::own_partitions(scenario, partitioner, &mut partition_of);
            for &p in &partition_of {
                shares[p as usize] += 1;
            }
        } else {
            shares[0] = partition_of.len();
        }
        let parts: Vec<Partition> = shares
            .iter()
            .map(|&share| {
                let mut part = Partition {
                    records: Vec::with_capacity(share),
                    ..Partition::default()
                };
                // Filled as records arrive: in 2 MB pages where they fit.
                super::pages::large_pages(part.records.spare_capacity_mut());
                part
            })
            .collect();
        LogState {
            guarantee,
            interval,
            parts,
            partition_of,
            records: 0,
            positions: 0,
            moved: Vec::new(),
            next_checkpoint: interval.unwrap_or(Millis::MAX),
            checkpoints: 0,
            last_checkpoint: None,
            checkpoints_failed: 0,
            wanted,
            next_wanted: 0,
            kept: vec![None; log.restarts.len()],
            next_restart: 0,
            resumes: BTreeMap::new(),
            valid_from: FxHashMap::default(),
            reopened: FxHashMap::default(),
            carry_attempts: log.carry_attempts,
            carried: Default::default(),
            producer: producer::Retries::default(),
            skipped_messages: 0,
            transaction: exactly_once.then(|| Transaction {
                done: Vec::new(),
                current: vec![Vec::new(); log.partitions as usize],
            }),
            visible_per_intent: if exactly_once {
                vec![0; scenario.intent_count()]
            } else {
                Vec::new()
            },
            visible: 0,
            restart_records: Vec::new(),
            drain_time: None,
            partitioner,
            samples: Samples::new(),
        }
    }

    /// The record a delivery of `m` starting now takes: its partition's
    /// record at the position (a partition processes one at a time).
    pub(super) fn record_of(&self, m: MessageIndex) -> Record {
        let partition = self.partition_of[m as usize] as u32;
        Record {
            partition,
            offset: self.parts[partition as usize].position,
        }
    }

    /// The record of `m` waits for a retry due at `due`.
    pub(super) fn retry_scheduled(&mut self, m: MessageIndex, due: Millis) {
        let p = self.partition_of[m as usize] as usize;
        self.parts[p].retry_due = due;
    }

    /// Partition `p`'s records appended and not done.
    pub(super) fn partition_lag(&self, p: u32) -> u64 {
        self.parts
            .get(p as usize)
            .map_or(0, |part| part.end() - part.position)
    }

    /// Records appended and not done, summed over partitions.
    pub(super) fn lag(&self) -> u64 {
        self.records - self.positions
    }

    /// Whether a scheduled entry (its sequence, for message `m`) was
    /// cancelled by a restart.
    pub(in crate::engine) fn cancelled(&self, m: MessageIndex, sequence: u64) -> bool {
        self.valid_from.get(&m).is_some_and(|&from| sequence < from)
    }

    /// Exactly-once: the writes visible, and per intent.
    pub(super) fn visible(&self) -> Option<(u64, &[u32])> {
        self.transaction
            .as_ref()
            .map(|_| (self.visible, self.visible_per_intent.as_slice()))
    }

    /// A sample of the lag and the first partitions after instant `at`
    /// (`force`: whatever the spacing, the run's end).
    #[inline]
    pub(super) fn sample(&mut self, at: Millis, force: bool) {
        if !force && !self.samples.due(at) {
            return;
        }
        let (parts, lag) = (&self.parts, self.records - self.positions);
        self.samples.take(at, force, || {
            let first = &parts[..parts.len().min(SAMPLED_PARTITIONS)];
            OffsetSample {
                at,
                lag,
                positions: first.iter().map(|p| p.position).collect(),
                ends: first.iter().map(Partition::end).collect(),
            }
        });
    }

    #[inline(always)]
    fn set_position(&mut self, p: usize, to: u64) {
        let part = &mut self.parts[p];
        self.positions = self.positions - part.position + to;
        part.position = to;
        if !std::mem::replace(&mut part.dirty, true) {
            self.moved.push(p as u32);
        }
    }
}

impl Engine<'_> {
    fn log_mut(&mut self) -> &mut LogState {
        self.source.log.as_deref_mut().expect("a log run")
    }

    /// Drops the scheduled entries at the front that a restart cancelled:
    /// they are not events (decision 27.26).
    pub(super) fn drop_log_entries_cancelled(&mut self) {
        loop {
            let Some((at, sequence, due)) = self.core.schedule.peek_scheduled() else {
                return;
            };
            if self.core.schedule.arrival_due().is_some_and(|a| a <= at) {
                return;
            }
            let m = match due {
                Due::Ready { message, .. } | Due::End { message, .. } => message,
                Due::EndOf { slot } => self.consumer.receipts.message_of(slot),
                // A direct or saga write's next call is the consumer's; a
                // relay's or a coordinator's is not cancelled.
                Due::Call { flight, .. } => {
                    let writes = self.downstream.writes.as_ref();
                    match writes.and_then(|w| w.consumer_call_of(flight)) {
                        Some(m) => m,
                        None => return,
                    }
                }
                // The producer's: no restart of the consumer cancels it.
                Due::Visible { .. } | Due::Source { resume: false } | Due::Append { .. } => return,
                // A resume whose partitions all restarted again since.
                Due::Source { resume: true } => {
                    let log = self.source.log.as_deref().expect("a log run");
                    if log.resumes.contains_key(&at) {
                        return;
                    }
                    self.core.schedule.pop_scheduled();
                    continue;
                }
            };
            let log = self.source.log.as_deref().expect("a log run");
            if !log.cancelled(m, sequence) {
                return;
            }
            self.core.schedule.pop_scheduled();
            match due {
                Due::EndOf { slot } => self.consumer.receipts.abandon(slot),
                Due::Call { flight, .. } => {
                    // Its later calls are never made (decision 27.35).
                    let writes = self.downstream.writes.as_mut().expect("a write");
                    if let Some(slot) = writes.cancel(flight) {
                        self.consumer.receipts.abandon(slot);
                    }
                }
                _ => {}
            }
        }
    }

    /// The record `m` is appended as now, in a log run (its partition's
    /// end): a redrive says where it goes.
    pub(super) fn record_appended(&mut self, m: MessageIndex) -> Option<Record> {
        self.source.log.as_ref()?;
        let partition = self.partition_for(m);
        let offset = self.log_mut().parts[partition as usize].end();
        Some(Record { partition, offset })
    }

    /// The partition of `m`'s current key (or the one its file names).
    #[inline]
    fn partition_for(&mut self, m: MessageIndex) -> u32 {
        let log = self.source.log.as_deref().expect("a log run");
        if log.parts.len() == 1 {
            return 0;
        }
        if !self.messages.has_side_state(m) {
            // Its own key, placed before the run (`model::own_partitions`).
            return u32::from(log.partition_of[m as usize]);
        }
        self.partition_of_key(m)
    }

    /// [`partition_for`](Self::partition_for) of a message that may have
    /// a key other than its own (a redrive gave it one).
    #[cold]
    #[inline(never)]
    fn partition_of_key(&mut self, m: MessageIndex) -> u32 {
        let scenario = self.scenario;
        let own = scenario.intent(m);
        let key = self.messages.key(m, own);
        if key.generation == 0 {
            if key.intent == own {
                // Placed before the run (`model::own_partitions`).
                return u32::from(self.log_mut().partition_of[m as usize]);
            }
            let named = match scenario.messages.get(m as usize) {
                Some(spec) => spec.partition,
                None => scenario.generated(m).and_then(|(block, _)| block.partition),
            };
            if let Some(p) = named {
                return p;
            }
        }
        // A key of its own since a redrive: hashed in place.
        let hash = scenario.name_of_key(key).murmur2();
        self.log_mut().partitioner.of_hash(hash)
    }

    /// A log entry is due: an arrival appends a record; a retry or a
    /// record made due continues its partition.
    pub(super) fn log_ready(&mut self, m: MessageIndex, sequence: u64) {
        if sequence < self.scenario.message_count() {
            self.set_state(m, State::Ready);
            self.state_changed(m);
            self.append(m);
            self.append_ack_lost(m);
            return;
        }
        let p = self.log_mut().partition_of[m as usize] as usize;
        let part = &mut self.log_mut().parts[p];
        part.kicked = false;
        if part.down || part.message(part.position) != Some(m) {
            return;
        }
        if part.busy {
            // A retry: the attempt goes on.
            self.start_delivery(m);
        } else {
            self.start_record(p);
        }
    }

    /// The arrival of `m` in a run that allows settling at once
    /// ([`super::Settling::at_once`]): when its partition is idle with nothing
    /// pending, and its first delivery acks at once (no fault, no outage,
    /// no live result), what appending, starting, delivering and moving
    /// on would do, in one write of its record and one of the partition.
    /// False when it is not such a one (nothing is changed then): the
    /// full path takes it.
    #[inline(always)]
    pub(super) fn settle_record_at_once(&mut self, m: MessageIndex) -> bool {
        if !self.source.draws.faults(self.scenario, m).is_empty()
            || self.downstream.outages.contains(self.core.clock.now)
        {
            return false;
        }
        let p = self.partition_for(m) as usize;
        let part = &self.log_mut().parts[p];
        if part.down || part.busy || part.kicked || part.position != part.end() {
            return false;
        }
        if !self.ack_at_once(m) {
            return false;
        }
        let log = self.log_mut();
        log.partition_of[m as usize] = p as u16;
        log.records += 1;
        let at_most_once = log.guarantee == Guarantee::AtMostOnce;
        let part = &mut log.parts[p];
        part.push(m, DONE);
        let position = part.position;
        if at_most_once {
            // Committed when the delivery started, past the record.
            part.committed = position + 1;
        }
        log.set_position(p, position + 1);
        true
    }

    /// `m` is appended to its partition now (its arrival, or a redrive:
    /// decision 26.12); an idle partition starts it at once.
    pub(super) fn append(&mut self, m: MessageIndex) {
        let p = self.partition_for(m);
        self.append_to(m, p);
    }

    /// `m` is appended to partition `p` now.
    fn append_to(&mut self, m: MessageIndex, p: u32) {
        let log = self.log_mut();
        log.partition_of[m as usize] = p as u16;
        log.records += 1;
        let part = &mut log.parts[p as usize];
        part.push(m, PENDING);
        let idle = !part.down && !part.busy && !part.kicked;
        if idle && part.position + 1 == part.end() {
            self.start_record(p as usize);
        }
    }

    /// The partition's record at its position is due later in this
    /// instant, as an event of its own (partitions interleave by event
    /// order).
    fn kick(&mut self, p: usize) {
        let now = self.core.clock.now;
        let part = &mut self.log_mut().parts[p];
        if part.down || part.busy || part.kicked || part.position >= part.end() {
            return;
        }
        part.kicked = true;
        let m = part.message_at(part.position);
        self.core.schedule.put_back(now, now, m);
    }

    /// Partition `p` starts the record at its position: a fresh attempt
    /// (a record done before is processed again, decision 27.14).
    fn start_record(&mut self, p: usize) {
        let log = self.log_mut();
        let part = &mut log.parts[p];
        let offset = part.position;
        let m = part.message_at(offset);
        let status = part.status(offset);
        let state = self.messages.state(m);
        let final_state = matches!(
            state,
            State::Acked | State::Quarantined | State::Expired | State::Purged | State::Dropped
        );
        if status == DONE && !final_state {
            // An older record of a message redriven to a later offset and
            // pending there: passed over (the message is processed there).
            self.move_on(p);
            return;
        }
        // A skipped record is made pending again by the restart that
        // resumes below it (27.30), never reached while skipped.
        debug_assert_ne!(status, SKIPPED, "a partition reached a skipped record");
        let log = self.log_mut();
        log.partition_of[m as usize] = p as u16;
        let part = &mut log.parts[p];
        part.busy = true;
        if status == DONE {
            part.set_status(offset, AGAIN);
        }
        if status == DONE {
            self.log_mut().reopened.insert(m, state);
            self.reopen(m, state);
        }
        if status == PENDING && final_state {
            // A producer's duplicate of a message whose earlier record is
            // done (section 28.6): the message is processed again, its
            // state that of this record once done.
            self.reopen(m, state);
        }
        if status == PENDING && state == State::Skipped {
            // A duplicate of a message whose earlier record was skipped:
            // processed here, the message is skipped no more.
            self.log_mut().skipped_messages -= 1;
        }
        // A record not done keeps the count a restart carried (28.4); a
        // done one, or a duplicate after a done one, starts a fresh attempt.
        let carried = self.log_mut().carry_attempts && status != DONE && !final_state;
        if !carried && self.messages.cycle_receives(m) > 0 {
            self.messages.update(m, |s| s.cycle_receives = 0);
            if let Some(previous) = self.consumer.prev_delays.get_mut(m as usize) {
                *previous = 0;
            }
        }
        self.start_delivery(m);
    }

    /// A final message whose record is processed again is pending again.
    fn reopen(&mut self, m: MessageIndex, state: State) {
        if matches!(state, State::Quarantined | State::Expired | State::Purged) {
            self.leaves_quarantine(m);
        }
        let totals = &mut self.measures.totals;
        match state {
            State::Acked => totals.acked -= 1,
            State::Quarantined => {
                self.quarantine.remove(m);
            }
            State::Expired => totals.expired -= 1,
            State::Purged => totals.purged -= 1,
            State::Dropped => totals.dropped -= 1,
            _ => {}
        }
        self.set_state(m, State::Ready);
    }

    /// A delivery of a log record starts: counted as reprocessing for a
    /// record done before; under at-most-once the first delivery of the
    /// attempt commits the position past it.
    pub(super) fn log_delivery_starts(&mut self, m: MessageIndex, cycle_receives: u32) {
        let log = self.log_mut();
        let p = log.partition_of[m as usize] as usize;
        let part = &mut log.parts[p];
        if part.message(part.position).is_some() && part.status(part.position) == AGAIN {
            self.measures.totals.reprocessed += 1;
        }
        let log = self.log_mut();
        if log.guarantee == Guarantee::AtMostOnce && cycle_receives == 1 {
            let part = &mut log.parts[p];
            part.committed = part.position + 1;
        }
    }

    /// The record of `m` at its partition's position is done (acked,
    /// quarantined or dropped): the partition moves past it.
    pub(super) fn record_done(&mut self, m: MessageIndex) {
        let log = self.log_mut();
        let p = log.partition_of[m as usize] as usize;
        let part = &log.parts[p];
        if part.busy && part.message(part.position) == Some(m) {
            self.move_on(p);
        }
    }

    /// Partition `p` moves past the record at its position, and its next
    /// record is due.
    fn move_on(&mut self, p: usize) {
        let log = self.log_mut();
        let position = log.parts[p].position;
        if log.parts[p].status(position) == AGAIN && !log.reopened.is_empty() {
            let m = log.parts[p].message_at(position);
            log.reopened.remove(&m);
        }
        log.parts[p].set_status(position, DONE);
        log.parts[p].busy = false;
        log.set_position(p, position + 1);
        if log.parts[p].replay.is_some_and(|r| position + 1 >= r.until) {
            self.replay_ends(p);
        }
        let log = self.log_mut();
        if let Some(t) = &mut log.transaction {
            let writes = std::mem::take(&mut t.current[p]);
            t.done.extend(writes);
        }
        self.kick(p);
    }

    /// An effect commits: its sink writes, visible at once, or (exactly
    /// once) part of the open transaction.
    pub(super) fn log_write(&mut self, m: MessageIndex, key: KeyRef, intent: IntentIndex) -> bool {
        let Some(log) = self.source.log.as_deref_mut() else {
            return false;
        };
        let Some(t) = &mut log.transaction else {
            return false;
        };
        let p = log.partition_of[m as usize] as usize;
        t.current[p].push((key, intent));
        true
    }

    /// Exactly-once: the writes of done records become visible.
    fn commit_writes(&mut self, all: bool) {
        let log = self.source.log.as_deref_mut().expect("a log run");
        let Some(t) = &mut log.transaction else {
            return;
        };
        let mut writes = std::mem::take(&mut t.done);
        if all {
            for current in &mut t.current {
                writes.append(current);
            }
        }
        for &(key, intent) in &writes {
            log.visible += 1;
            let n = &mut log.visible_per_intent[intent as usize];
            *n = n.saturating_add(1);
            self.downstream.sinks.effect(key, intent);
        }
    }

    /// The source cycle drained: its drain time is its last delivery's
    /// end (decision 27.26).
    pub(super) fn log_drained(&mut self) {
        let last = self.core.clock.last_delivery.unwrap_or(0);
        let log = self.log_mut();
        log.drain_time.get_or_insert(last);
    }

    /// The end of the run: checkpoints up to and including it, and the
    /// open transaction commits.
    pub(super) fn log_close(&mut self, end: Millis) {
        self.log_instants_before(end.saturating_add(1));
        self.commit_writes(true);
        self.measures.totals.attempts_carried = self.log_mut().carried.len() as u64;
        let log = self.log_mut();
        let (completed, failed, last) =
            (log.checkpoints, log.checkpoints_failed, log.last_checkpoint);
        let totals = &mut self.measures.totals;
        totals.checkpoints_completed = completed;
        totals.checkpoints_failed = failed;
        totals.last_checkpoint_at = last.unwrap_or(crate::model::NO_TIME);
        self.log_mut().sample(end, true);
    }

    /// Messages in state `skipped`, which are not pending.
    pub(super) fn skipped_messages(&self) -> u64 {
        self.source
            .log
            .as_deref()
            .map_or(0, |log| log.skipped_messages)
    }

    pub(super) fn log_outcome(&mut self) -> Option<LogOutcome> {
        let last_delivery = self.core.clock.last_delivery.unwrap_or(0);
        let log = self.source.log.as_deref_mut()?;
        Some(LogOutcome {
            partitions: log.parts.iter().map(|p| (p.end(), p.committed)).collect(),
            restarts: std::mem::take(&mut log.restart_records),
            checkpoints: log.checkpoints,
            last_checkpoint: log.last_checkpoint,
            checkpoints_failed: log.checkpoints_failed,
            partition_of: std::mem::take(&mut log.partition_of),
            drain_time: log.drain_time.unwrap_or(last_delivery),
            samples: std::mem::take(&mut log.samples.taken),
        })
    }
}
