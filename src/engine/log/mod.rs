//! The source as a partitioned log (docs/model.md section 23, decisions
//! 26 and 27.9-27.17): records appended per partition in offset order,
//! each partition processing one record at a time (retries in place, a
//! quarantined record moves it on), positions committed at checkpoints
//! (or before processing under at-most-once), restarts that resume each
//! partition from a position and reprocess from there (`restart.rs`), and
//! the exactly-once transaction of sink writes.
//!
//! A record's processing is a delivery (`delivery.rs`); the log decides
//! which record a partition delivers next and when. What it keeps is four
//! bytes per record (its message and its status), the positions per
//! partition, and positions per restart: O(records + partitions x
//! restarts). Checkpoints cost nothing each: between two events every
//! checkpoint instant sees the same positions, so they are taken together
//! (the partitions whose position moved are copied, nothing else).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::Core;
use super::sinks::Sinks;
mod checkpoints;
mod producer;
mod restart;
mod samples;

use super::Record;
use crate::model::{
    Guarantee, IntentIndex, KeyRef, Log, MessageIndex, Millis, Partitioner, Resume, Scenario, State,
};
pub(in crate::engine) use producer::schedule_append_retry;
pub(in crate::engine) use restart::Reach;
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

/// What partition `p` does as it starts the record at its position
/// ([`LogState::start_record`]): the message whose delivery starts, the
/// outcome it had if it is processed again, and whether its attempt is a
/// fresh one (a record done before, or not carried by a restart).
pub(in crate::engine) struct Begin {
    pub(in crate::engine) message: MessageIndex,
    pub(in crate::engine) reopened: Option<State>,
    pub(in crate::engine) fresh: bool,
}

/// What the log does with an entry that became due
/// ([`LogState::ready`]).
pub(in crate::engine) enum RecordDue {
    /// An arrival: the message is appended (its state ready).
    Arrived,
    /// A retry of the record in progress: its delivery starts.
    Retry,
    /// Partition `p` starts the record at its position.
    Start(usize),
    /// Nothing (the partition is down, or moved on).
    Nothing,
}

impl LogState {
    /// Whether a resume is still to come at `at` (a resume whose
    /// partitions all restarted again since is not).
    pub(in crate::engine) fn resumes_at(&self, at: Millis) -> bool {
        self.resumes.contains_key(&at)
    }

    /// The record `m` is appended as now (its partition's end): a redrive
    /// says where it goes.
    pub(in crate::engine) fn record_appended(&self, core: &Core, m: MessageIndex) -> Record {
        let partition = self.partition_for(core, m);
        let offset = self.parts[partition as usize].end();
        Record { partition, offset }
    }

    /// The partition of `m`'s current key (or the one its file names).
    #[inline]
    fn partition_for(&self, core: &Core, m: MessageIndex) -> u32 {
        if self.parts.len() == 1 {
            return 0;
        }
        if !core.messages.has_side_state(m) {
            // Its own key, placed before the run (`model::own_partitions`).
            return u32::from(self.partition_of[m as usize]);
        }
        self.partition_of_key(core, m)
    }

    /// [`partition_for`](Self::partition_for) of a message that may have
    /// a key other than its own (a redrive gave it one).
    #[cold]
    #[inline(never)]
    fn partition_of_key(&self, core: &Core, m: MessageIndex) -> u32 {
        let scenario = core.scenario;
        let own = scenario.intent(m);
        let key = core.messages.key(m, own);
        if key.generation == 0 {
            if key.intent == own {
                // Placed before the run (`model::own_partitions`).
                return u32::from(self.partition_of[m as usize]);
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
        self.partitioner.of_hash(hash)
    }

    /// A log entry of `m` is due: an arrival (its `sequence` below the
    /// message count) is appended; a retry or a record made due continues
    /// its partition.
    pub(in crate::engine) fn ready(
        &mut self,
        m: MessageIndex,
        sequence: u64,
        count: u64,
    ) -> RecordDue {
        if sequence < count {
            return RecordDue::Arrived;
        }
        let p = self.partition_of[m as usize] as usize;
        let part = &mut self.parts[p];
        part.kicked = false;
        if part.down || part.message(part.position) != Some(m) {
            return RecordDue::Nothing;
        }
        match part.busy {
            // A retry: the attempt goes on.
            true => RecordDue::Retry,
            false => RecordDue::Start(p),
        }
    }

    /// The partition the arrival of `m` would be settled at once in
    /// ([`crate::engine::settling::Settling::at_once`]): one idle with nothing pending.
    #[inline(always)]
    pub(in crate::engine) fn idle_for(&self, core: &Core, m: MessageIndex) -> Option<usize> {
        let p = self.partition_for(core, m) as usize;
        let part = &self.parts[p];
        let idle = !(part.down || part.busy || part.kicked || part.position != part.end());
        idle.then_some(p)
    }

    /// The arrival of `m`, settled at once in idle partition `p` (its
    /// first delivery acked): what appending, starting, delivering and
    /// moving on would do, in one write of its record and one of the
    /// partition.
    #[inline(always)]
    pub(in crate::engine) fn settled_at_once(&mut self, m: MessageIndex, p: usize) {
        self.partition_of[m as usize] = p as u16;
        self.records += 1;
        let at_most_once = self.guarantee == Guarantee::AtMostOnce;
        let part = &mut self.parts[p];
        part.push(m, DONE);
        let position = part.position;
        if at_most_once {
            // Committed when the delivery started, past the record.
            part.committed = position + 1;
        }
        self.set_position(p, position + 1);
    }

    /// `m` is appended to its partition now (its arrival, or a redrive:
    /// decision 26.12). Returns the partition if it was idle and starts
    /// the record at once.
    pub(in crate::engine) fn append(&mut self, core: &Core, m: MessageIndex) -> Option<usize> {
        let p = self.partition_for(core, m);
        self.append_to(m, p)
    }

    /// `m` is appended to partition `p` now; returns `p` if it starts the
    /// record at once (it was idle).
    fn append_to(&mut self, m: MessageIndex, p: u32) -> Option<usize> {
        self.partition_of[m as usize] = p as u16;
        self.records += 1;
        let part = &mut self.parts[p as usize];
        part.push(m, PENDING);
        let idle = !part.down && !part.busy && !part.kicked;
        (idle && part.position + 1 == part.end()).then_some(p as usize)
    }

    /// The partition's record at its position is due later in this
    /// instant, as an event of its own (partitions interleave by event
    /// order).
    fn kick(&mut self, core: &mut Core, p: usize) {
        let now = core.clock.now;
        let part = &mut self.parts[p];
        if part.down || part.busy || part.kicked || part.position >= part.end() {
            return;
        }
        part.kicked = true;
        let m = part.message_at(part.position);
        core.schedule.put_back(now, now, m);
    }

    /// Partition `p` starts the record at its position: a fresh attempt
    /// (a record done before is processed again, decision 27.14). None
    /// when the record is passed over.
    pub(in crate::engine) fn start_record(&mut self, core: &mut Core, p: usize) -> Option<Begin> {
        let part = &mut self.parts[p];
        let offset = part.position;
        let m = part.message_at(offset);
        let status = part.status(offset);
        let state = core.messages.state(m);
        let final_state = matches!(
            state,
            State::Acked | State::Quarantined | State::Expired | State::Purged | State::Dropped
        );
        if status == DONE && !final_state {
            // An older record of a message redriven to a later offset and
            // pending there: passed over (the message is processed there).
            self.move_on(core, p);
            return None;
        }
        // A skipped record is made pending again by the restart that
        // resumes below it (27.30), never reached while skipped.
        debug_assert_ne!(status, SKIPPED, "a partition reached a skipped record");
        self.partition_of[m as usize] = p as u16;
        let part = &mut self.parts[p];
        part.busy = true;
        if status == DONE {
            part.set_status(offset, AGAIN);
            self.reopened.insert(m, state);
        }
        // A producer's duplicate of a message whose earlier record is
        // done (section 28.6) is processed again too, its state that of
        // this record once done.
        let reopened = (status == DONE || (status == PENDING && final_state)).then_some(state);
        if status == PENDING && state == State::Skipped {
            // A duplicate of a message whose earlier record was skipped:
            // processed here, the message is skipped no more.
            self.skipped_messages -= 1;
        }
        // A record not done keeps the count a restart carried (28.4); a
        // done one, or a duplicate after a done one, starts a fresh attempt.
        let carried = self.carry_attempts && status != DONE && !final_state;
        Some(Begin {
            message: m,
            reopened,
            fresh: !carried,
        })
    }

    /// A delivery of a log record starts: counted as reprocessing for a
    /// record done before; under at-most-once the first delivery of the
    /// attempt commits the position past it.
    pub(in crate::engine) fn delivery_starts(
        &mut self,
        totals: &mut crate::model::Totals,
        m: MessageIndex,
        cycle_receives: u32,
    ) {
        let p = self.partition_of[m as usize] as usize;
        let part = &mut self.parts[p];
        if part.message(part.position).is_some() && part.status(part.position) == AGAIN {
            totals.reprocessed += 1;
        }
        if self.guarantee == Guarantee::AtMostOnce && cycle_receives == 1 {
            let part = &mut self.parts[p];
            part.committed = part.position + 1;
        }
    }

    /// The record of `m` at its partition's position is done (acked,
    /// quarantined or dropped): the partition moves past it.
    pub(in crate::engine) fn record_done(&mut self, core: &mut Core, m: MessageIndex) {
        let p = self.partition_of[m as usize] as usize;
        let part = &self.parts[p];
        if part.busy && part.message(part.position) == Some(m) {
            self.move_on(core, p);
        }
    }

    /// Partition `p` moves past the record at its position, and its next
    /// record is due.
    fn move_on(&mut self, core: &mut Core, p: usize) {
        let position = self.parts[p].position;
        if self.parts[p].status(position) == AGAIN && !self.reopened.is_empty() {
            let m = self.parts[p].message_at(position);
            self.reopened.remove(&m);
        }
        self.parts[p].set_status(position, DONE);
        self.parts[p].busy = false;
        self.set_position(p, position + 1);
        if self.parts[p]
            .replay
            .is_some_and(|r| position + 1 >= r.until)
        {
            self.replay_ends(core, p);
        }
        if let Some(t) = &mut self.transaction {
            let writes = std::mem::take(&mut t.current[p]);
            t.done.extend(writes);
        }
        self.kick(core, p);
    }

    /// An effect commits: under exactly-once it is part of the open
    /// transaction (true); otherwise its sink writes are visible at once
    /// (false).
    pub(in crate::engine) fn write(
        &mut self,
        m: MessageIndex,
        key: KeyRef,
        intent: IntentIndex,
    ) -> bool {
        let Some(t) = &mut self.transaction else {
            return false;
        };
        let p = self.partition_of[m as usize] as usize;
        t.current[p].push((key, intent));
        true
    }

    /// Exactly-once: the writes of done records (`all`: and those in
    /// progress, at the end) become visible in the sinks.
    fn commit_writes(&mut self, sinks: &mut Sinks, all: bool) {
        let Some(t) = &mut self.transaction else {
            return;
        };
        let mut writes = std::mem::take(&mut t.done);
        if all {
            for current in &mut t.current {
                writes.append(current);
            }
        }
        for &(key, intent) in &writes {
            self.visible += 1;
            let n = &mut self.visible_per_intent[intent as usize];
            *n = n.saturating_add(1);
            sinks.effect(key, intent);
        }
    }

    /// The source cycle drained: its drain time is its last delivery's
    /// end (decision 27.26).
    pub(in crate::engine) fn drained(&mut self, last_delivery: Option<Millis>) {
        self.drain_time.get_or_insert(last_delivery.unwrap_or(0));
    }

    /// The end of the run: checkpoints up to and including it, and the
    /// open transaction commits.
    pub(in crate::engine) fn close(&mut self, core: &mut Core, sinks: &mut Sinks, end: Millis) {
        self.instants_before(core, sinks, end.saturating_add(1));
        self.commit_writes(sinks, true);
        let totals = &mut core.measures.totals;
        totals.attempts_carried = self.carried.len() as u64;
        totals.checkpoints_completed = self.checkpoints;
        totals.checkpoints_failed = self.checkpoints_failed;
        totals.last_checkpoint_at = self.last_checkpoint.unwrap_or(crate::model::NO_TIME);
        self.sample(end, true);
    }

    /// Messages in state `skipped`, which are not pending.
    pub(in crate::engine) fn skipped_messages(&self) -> u64 {
        self.skipped_messages
    }

    pub(in crate::engine) fn outcome(&mut self, last_delivery: Option<Millis>) -> LogOutcome {
        LogOutcome {
            partitions: self.parts.iter().map(|p| (p.end(), p.committed)).collect(),
            restarts: std::mem::take(&mut self.restart_records),
            checkpoints: self.checkpoints,
            last_checkpoint: self.last_checkpoint,
            checkpoints_failed: self.checkpoints_failed,
            partition_of: std::mem::take(&mut self.partition_of),
            drain_time: self.drain_time.unwrap_or(last_delivery.unwrap_or(0)),
            samples: std::mem::take(&mut self.samples.taken),
        }
    }
}
