//! One write to several sinks (docs/model.md section 24). A write's calls
//! are decided at its commit instant: each call's instant follows from the
//! latencies and retry waits before it, its fate from the sink's faults
//! (counted per intent) and outage window. What a run keeps is bounded by
//! the intents and the sinks: per sink and intent a net count (or a row
//! owner) and whether the intent was ever visible; locks and in-doubt
//! writes only while held.
//!
//! Decisions this module makes where section 24 is silent (docs/model.md
//! section 28): `until = "repair"` is judged at the write's commit
//! instant for every call of that write; intents are numbered for `every`
//! in the order of their first call's write.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::Engine;
use super::messages::Messages;
use crate::model::{
    CallSelector, Class, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, Scenario,
    SinkFaultKind, SinkKind, State, Strategy, Totals, Write,
};

const NO_ROW: IntentIndex = IntentIndex::MAX;

/// What the caller heard from one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Heard {
    Ok,
    /// Nothing applied.
    Failed(ReasonIndex, Class),
    /// Applied; heard as a transient failure.
    Lost,
}

/// How one write went, for the delivery that made it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Wrote {
    /// How long the calls held the delivery (added to its service).
    pub(super) took: Millis,
    /// The failure the delivery ends with (`None`: it acks).
    pub(super) failed: Option<(ReasonIndex, Class)>,
    /// Whether the deduplication result (or DONE) is recorded.
    pub(super) stores_result: bool,
}

/// The most notes a run keeps: the first writes worth a look, which the
/// explanations and reports name.
pub const WRITE_NOTES_KEPT: usize = 200;

/// Something worth a look in one write, for the explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteNote {
    /// A call (a two-phase prepare, a saga step, a direct call) failed.
    Failed {
        at: Millis,
        message: MessageIndex,
        sink: u32,
        reason: ReasonIndex,
        class: Class,
    },
    /// A call was applied and its reply lost.
    ReplyLost {
        at: Millis,
        message: MessageIndex,
        sink: u32,
    },
    /// A compensation whose reply was lost was retried and applied again.
    OverCompensated {
        message: MessageIndex,
        sink: u32,
        lost_at: Millis,
        retried_at: Millis,
    },
    /// Every compensation call failed: the write stays visible there.
    CompensationExhausted {
        at: Millis,
        message: MessageIndex,
        sink: u32,
    },
    /// An irreversible send of a write that then failed at `failed_sink`.
    FalseNotice {
        at: Millis,
        message: MessageIndex,
        sink: u32,
        failed_sink: u32,
    },
    /// An outbox row's calls to a sink were all used up.
    DeadLettered {
        message: MessageIndex,
        sink: u32,
        first_at: Millis,
        last_at: Millis,
        attempts: u32,
    },
    /// A two-phase write waited for its key's lock.
    Waited {
        message: MessageIndex,
        key: KeyRef,
        from: Millis,
        until: Millis,
        holder: MessageIndex,
        /// When the holder's coordinator crashed (its prepare), if it did.
        holder_crashed_at: Option<Millis>,
    },
    /// The coordinator crashed after every sink prepared this write.
    Crashed {
        message: MessageIndex,
        prepared_at: Millis,
        decided_at: Millis,
    },
}

/// Per sink: its rows or counts and its call counters.
struct SinkState {
    kind: SinkKind,
    /// Increment and irreversible: applied calls minus applied
    /// compensations, per intent.
    net: Vec<i32>,
    /// Upsert: the owner intent of the row of each intent's own key.
    own_rows: Vec<IntentIndex>,
    /// Upsert: rows of fresh keys (never iterated).
    fresh_rows: HashMap<KeyRef, IntentIndex>,
    /// Upsert: rows owned per intent.
    rows_of: Vec<u32>,
    rows: i64,
    owners: i64,
    /// Whether each intent was ever visible in the sink.
    ever: Vec<bool>,
    /// The sum of `net` (increment, irreversible).
    value: i64,
    /// Per intent: calls so far, writes and compensations apart (only
    /// when a `first` selector reads them).
    calls: [Vec<u32>; 2],
    /// Per intent: its number in order of first call (only when an
    /// `every` selector reads it), writes and compensations apart.
    ordinal: [Vec<u32>; 2],
    next_ordinal: [u32; 2],
    /// Per fault: the intents an `intents` selector names.
    selected: Vec<Option<HashSet<IntentIndex>>>,
    /// Outbox: the latest application minus its row's time, at most.
    max_lag: Millis,
}

impl SinkState {
    fn new(scenario: &Scenario, k: usize, write: &Write) -> Self {
        let intents = scenario.intent_count();
        let calls = &write.sinks[k];
        let kind = scenario.guarantees.sinks[k].kind;
        let wants = |compensation: bool, first: bool| {
            let n = calls.faults.iter().any(|f| {
                f.compensation == compensation
                    && match f.selector {
                        CallSelector::First(_) => first,
                        CallSelector::Every(_) => !first,
                        _ => false,
                    }
            });
            vec![0u32; if n { intents } else { 0 }]
        };
        let upsert = kind == SinkKind::Upsert;
        SinkState {
            kind,
            net: vec![0; if upsert { 0 } else { intents }],
            own_rows: vec![NO_ROW; if upsert { intents } else { 0 }],
            fresh_rows: HashMap::default(),
            rows_of: vec![0; if upsert { intents } else { 0 }],
            rows: 0,
            owners: 0,
            ever: vec![false; intents],
            value: 0,
            calls: [wants(false, true), wants(true, true)],
            ordinal: [wants(false, false), wants(true, false)],
            next_ordinal: [0; 2],
            selected: (calls.faults.iter())
                .map(|f| match &f.selector {
                    CallSelector::Intents(ms) => {
                        Some(ms.iter().map(|&m| scenario.intent(m)).collect())
                    }
                    _ => None,
                })
                .collect(),
            max_lag: 0,
        }
    }

    /// Counts a call of `intent` (a compensation or a write): its number
    /// among the intent's calls and the intent's number in first-call order.
    fn count(&mut self, intent: IntentIndex, compensation: bool) -> (u64, u64) {
        let i = compensation as usize;
        let n = match self.calls[i].get_mut(intent as usize) {
            Some(n) => {
                *n = n.saturating_add(1);
                *n as u64
            }
            None => 0,
        };
        let ordinal = match self.ordinal[i].get_mut(intent as usize) {
            Some(o) => {
                if *o == 0 {
                    self.next_ordinal[i] += 1;
                    *o = self.next_ordinal[i];
                }
                *o as u64
            }
            None => 0,
        };
        (n, ordinal)
    }

    /// The write of `intent` under `key` is applied.
    fn apply(&mut self, key: KeyRef, intent: IntentIndex) {
        self.ever[intent as usize] = true;
        if self.kind != SinkKind::Upsert {
            let n = &mut self.net[intent as usize];
            *n = n.saturating_add(1);
            self.value += 1;
            return;
        }
        let row = self.row(key);
        if *row != NO_ROW {
            return;
        }
        *row = intent;
        self.rows += 1;
        let owned = &mut self.rows_of[intent as usize];
        if *owned == 0 {
            self.owners += 1;
        }
        *owned = owned.saturating_add(1);
    }

    /// A compensation of `intent`'s write under `key` is applied: an
    /// increment decremented, an upsert's row deleted if `intent` owns it.
    fn compensate(&mut self, key: KeyRef, intent: IntentIndex) {
        if self.kind != SinkKind::Upsert {
            let n = &mut self.net[intent as usize];
            *n = n.saturating_sub(1);
            self.value -= 1;
            return;
        }
        let row = self.row(key);
        if *row != intent {
            return;
        }
        *row = NO_ROW;
        self.rows -= 1;
        let owned = &mut self.rows_of[intent as usize];
        *owned -= 1;
        if *owned == 0 {
            self.owners -= 1;
        }
    }

    fn row(&mut self, key: KeyRef) -> &mut IntentIndex {
        if key.generation == 0 {
            &mut self.own_rows[key.intent as usize]
        } else {
            self.fresh_rows.entry(key).or_insert(NO_ROW)
        }
    }

    /// `[value, visible_duplicates, missing, max_per_intent]` over the
    /// intents that `arrived`.
    fn finish(&self, arrived: &[bool]) -> [i64; 4] {
        let missing = (arrived.iter().zip(&self.ever))
            .filter(|&(&a, &e)| a && !e)
            .count() as i64;
        if self.kind == SinkKind::Upsert {
            let most = self.rows_of.iter().copied().max().unwrap_or(0) as i64;
            return [self.rows, self.rows - self.owners, missing, most];
        }
        let positive = self.net.iter().filter(|&&n| n > 0).count() as i64;
        let most = self.net.iter().copied().max().unwrap_or(0).max(0) as i64;
        [self.value, self.value - positive, missing, most]
    }
}

/// A key's two-phase lock.
#[derive(Debug, Clone, Copy)]
struct Lock {
    release: Millis,
    holder: MessageIndex,
    /// When the holder prepared, if its coordinator crashed.
    crashed_at: Option<Millis>,
}

/// The sinks, the two-phase locks and the time measures of section 24.
pub(super) struct Writes {
    sinks: Vec<SinkState>,
    /// The coordinator's `intents` selector.
    crash_intents: Option<HashSet<IntentIndex>>,
    /// Writes so far, in ledger order (the coordinator's numbering).
    written: u64,
    /// Two-phase: per key, its lock (only while held).
    locks: HashMap<KeyRef, Lock>,
    /// The lock map's size after its last pruning.
    locks_kept: usize,
    /// Two-phase: +1 at a prepare, -1 at its decision, for instants not
    /// yet folded into `in_doubt`.
    in_doubt_changes: BTreeMap<Millis, i64>,
    in_doubt: i64,
    /// The latest outbox relay call.
    relay_end: Option<Millis>,
    /// partial_visible: closed time, and the writes partial until the end
    /// with the sum of their starts.
    partial_closed: u64,
    partial_open: u64,
    partial_open_starts: u128,
    /// Scratch: per sink of the write in hand, when it showed the write
    /// and until when (`Millis::MAX`: still).
    shows: Vec<Option<(Millis, Millis)>>,
    /// The first [`WRITE_NOTES_KEPT`] notes.
    notes: Vec<WriteNote>,
    /// The message whose write is in hand.
    message: MessageIndex,
}

impl Writes {
    pub(super) fn new(scenario: &Scenario) -> Option<Self> {
        let write = scenario.write.as_ref()?;
        let sinks = (0..write.sinks.len())
            .map(|k| SinkState::new(scenario, k, write))
            .collect();
        let crash_intents = match write.coordinator.as_ref().map(|c| &c.crash) {
            Some(CallSelector::Intents(ms)) => {
                Some(ms.iter().map(|&m| scenario.intent(m)).collect())
            }
            _ => None,
        };
        Some(Writes {
            sinks,
            crash_intents,
            written: 0,
            locks: HashMap::default(),
            locks_kept: 0,
            in_doubt_changes: BTreeMap::new(),
            in_doubt: 0,
            relay_end: None,
            partial_closed: 0,
            partial_open: 0,
            partial_open_starts: 0,
            shows: vec![None; write.sinks.len()],
            notes: Vec::new(),
            message: 0,
        })
    }

    /// A call to sink `k` for `intent` at `at`.
    fn call(
        &mut self,
        write: &Write,
        k: usize,
        intent: IntentIndex,
        at: Millis,
        compensation: bool,
        repaired: bool,
    ) -> Heard {
        let sink = &mut self.sinks[k];
        let (n, ordinal) = sink.count(intent, compensation);
        let calls = &write.sinks[k];
        for (i, f) in calls.faults.iter().enumerate() {
            if f.compensation != compensation {
                continue;
            }
            let selected = match &f.selector {
                CallSelector::First(first) => n <= *first,
                CallSelector::Intents(_) => {
                    (sink.selected[i].as_ref()).is_some_and(|s| s.contains(&intent))
                }
                CallSelector::Every(every) => ordinal.is_multiple_of(*every),
                CallSelector::UntilRepair => !repaired,
            };
            if selected {
                return match f.kind {
                    SinkFaultKind::Fail(reason, class) => Heard::Failed(reason, class),
                    SinkFaultKind::LoseReply => Heard::Lost,
                };
            }
        }
        if let Some((from, duration)) = calls.outage
            && at >= from
            && at - from < duration
        {
            return Heard::Failed(write.reasons.sink_unavailable, Class::Transient);
        }
        Heard::Ok
    }

    fn note(&mut self, note: WriteNote) {
        if self.notes.len() < WRITE_NOTES_KEPT {
            self.notes.push(note);
        }
    }

    /// A call's failure worth a note.
    fn note_heard(&mut self, heard: Heard, k: usize, at: Millis) {
        let (message, sink) = (self.message, k as u32);
        match heard {
            Heard::Ok => {}
            Heard::Failed(reason, class) => self.note(WriteNote::Failed {
                at,
                message,
                sink,
                reason,
                class,
            }),
            Heard::Lost => self.note(WriteNote::ReplyLost { at, message, sink }),
        }
    }

    /// The notes kept, in the order the writes were made.
    pub(super) fn take_notes(&mut self) -> Vec<WriteNote> {
        std::mem::take(&mut self.notes)
    }

    fn shown(&mut self, k: usize, at: Millis) {
        if self.shows[k].is_none() {
            self.shows[k] = Some((at, Millis::MAX));
        }
    }

    fn hidden(&mut self, k: usize, at: Millis) {
        if let Some((_, until)) = &mut self.shows[k]
            && *until == Millis::MAX
        {
            *until = at;
        }
    }

    /// The write in hand is done: its partial visibility (at least one
    /// and not every sink shows it) is added, and `shows` cleared.
    fn close_write(&mut self) {
        let n = self.shows.len();
        let mut changes: Vec<(Millis, i64)> = Vec::with_capacity(2 * n);
        for (from, until) in self.shows.iter_mut().filter_map(Option::take) {
            changes.push((from, 1));
            if until != Millis::MAX {
                changes.push((until, -1));
            }
        }
        if n < 2 || changes.is_empty() {
            return;
        }
        changes.sort_unstable();
        let (mut showing, mut since) = (0i64, 0);
        let partial = |c: i64| c >= 1 && c < n as i64;
        for (t, delta) in changes {
            if partial(showing) {
                self.partial_closed += t - since;
            }
            showing += delta;
            since = t;
        }
        if partial(showing) {
            self.partial_open += 1;
            self.partial_open_starts += since as u128;
        }
    }

    /// The most writes in doubt after any instant before `now`.
    fn fold_in_doubt(&mut self, now: Millis, totals: &mut Totals) {
        while let Some(entry) = self.in_doubt_changes.first_entry() {
            if *entry.key() >= now {
                break;
            }
            self.in_doubt += entry.remove();
            totals.max_in_doubt = totals.max_in_doubt.max(self.in_doubt.max(0) as u64);
        }
    }

    /// The lock map loses released locks when it has doubled.
    fn prune_locks(&mut self, now: Millis) {
        if self.locks.len() > 2 * self.locks_kept.max(64) {
            self.locks.retain(|_, lock| lock.release > now);
            self.locks_kept = self.locks.len();
        }
    }

    /// At the run's end `end`: the time measures, and each sink's
    /// `[value, visible_duplicates, missing, max_per_intent]` and its
    /// outbox `max_lag`.
    pub(super) fn finish(
        &mut self,
        scenario: &Scenario,
        messages: &Messages,
        end: Millis,
        totals: &mut Totals,
    ) -> (Vec<[i64; 4]>, Vec<Millis>) {
        self.fold_in_doubt(Millis::MAX, totals);
        let open =
            (self.partial_open as u128 * end as u128).saturating_sub(self.partial_open_starts);
        totals.partial_visible = self
            .partial_closed
            .saturating_add(open.min(u64::MAX as u128) as u64);
        let mut arrived = vec![false; scenario.intent_count()];
        for (m, state) in messages.iter().enumerate() {
            if state.state != State::Waiting || state.total_receives > 0 {
                arrived[scenario.intent(m as MessageIndex) as usize] = true;
            }
        }
        let values = self.sinks.iter().map(|s| s.finish(&arrived)).collect();
        let lags = self.sinks.iter().map(|s| s.max_lag).collect();
        (values, lags)
    }

    /// The latest outbox relay call, if any.
    pub(super) fn relay_end(&self) -> Option<Millis> {
        self.relay_end
    }
}

impl Engine<'_> {
    /// The effect of `m` (its `intent`, under `key`) committed now: its
    /// write goes to the sinks by the file's strategy.
    pub(super) fn fan_out(&mut self, m: MessageIndex, key: KeyRef, intent: IntentIndex) -> Wrote {
        let scenario = self.scenario;
        let write = scenario.write.as_ref().expect("a file with [write]");
        let mut writes = self.writes.take().expect("a file with [write]");
        let now = self.clock.now;
        let repaired = self.operator.repaired;
        let totals = &mut self.measures.totals;
        writes.written += 1;
        writes.message = m;
        let wrote = match write.strategy {
            Strategy::Direct => writes.direct(write, key, intent, now, repaired),
            Strategy::Saga => writes.saga(write, key, intent, now, repaired, totals),
            Strategy::Outbox => writes.outbox(write, key, intent, now, repaired, totals),
            Strategy::TwoPhase => writes.two_phase(write, key, intent, now, repaired, totals),
        };
        writes.close_write();
        self.writes = Some(writes);
        wrote
    }
}

impl Writes {
    /// Calls in file order; the first failure ends the write.
    fn direct(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
    ) -> Wrote {
        let mut at = t;
        for k in 0..write.sinks.len() {
            let heard = self.call(write, k, intent, at, false, repaired);
            if !matches!(heard, Heard::Failed(..)) {
                self.sinks[k].apply(key, intent);
                self.shown(k, at);
            }
            self.note_heard(heard, k, at);
            at = at.saturating_add(write.sinks[k].latency);
            if let Some(failed) = failure(heard, write) {
                return Wrote {
                    took: at - t,
                    failed: Some(failed),
                    stores_result: false,
                };
            }
        }
        Wrote {
            took: at - t,
            failed: None,
            stores_result: true,
        }
    }

    /// Calls in file order, each step tried `step_attempts` times on
    /// transient failures; a failed write compensates, in reverse order,
    /// every sink whose call it heard succeed.
    fn saga(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        let mut at = t;
        let mut heard_ok: u64 = 0;
        let mut failed = None;
        let mut failed_sink = 0;
        'steps: for k in 0..write.sinks.len() {
            let latency = write.sinks[k].latency;
            for attempt in 1..=write.step_attempts {
                let heard = self.call(write, k, intent, at, false, repaired);
                if !matches!(heard, Heard::Failed(..)) {
                    self.sinks[k].apply(key, intent);
                    self.shown(k, at);
                }
                self.note_heard(heard, k, at);
                failed_sink = k as u32;
                at = at.saturating_add(latency);
                match failure(heard, write) {
                    None => {
                        heard_ok |= 1 << k;
                        continue 'steps;
                    }
                    Some(f @ (_, Class::Permanent)) => {
                        failed = Some(f);
                        break 'steps;
                    }
                    Some(f) if attempt == write.step_attempts => {
                        failed = Some(f);
                        break 'steps;
                    }
                    Some(_) => at = at.saturating_add(write.relay_retry),
                }
            }
        }
        let Some(failed) = failed else {
            return Wrote {
                took: at - t,
                failed: None,
                stores_result: true,
            };
        };
        for k in (0..write.sinks.len()).rev() {
            if heard_ok & (1 << k) == 0 {
                continue;
            }
            if self.sinks[k].kind == SinkKind::Irreversible {
                totals.false_notices += 1;
                let sent_at = self.shows[k].map_or(t, |(from, _)| from);
                self.note(WriteNote::FalseNotice {
                    at: sent_at,
                    message: self.message,
                    sink: k as u32,
                    failed_sink,
                });
                continue;
            }
            at = self.compensate(write, k, key, intent, at, repaired, totals);
        }
        Wrote {
            took: at - t,
            // Compensated after a permanent failure, the saga is finished
            // and the delivery acks.
            failed: (failed.1 == Class::Transient).then_some(failed),
            stores_result: false,
        }
    }

    /// Sink `k`'s compensation calls from `at`, until one is heard to
    /// succeed or `relay_attempts` are made; returns when the last reply
    /// is heard.
    #[allow(clippy::too_many_arguments)]
    fn compensate(
        &mut self,
        write: &Write,
        k: usize,
        key: KeyRef,
        intent: IntentIndex,
        mut at: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Millis {
        let latency = write.sinks[k].latency;
        let mut applied = false;
        let mut lost_at = None;
        for attempt in 1..=write.relay_attempts {
            let heard = self.call(write, k, intent, at, true, repaired);
            if !matches!(heard, Heard::Failed(..)) && (!applied || !write.idempotent_compensation) {
                if applied {
                    totals.over_compensations += 1;
                    self.note(WriteNote::OverCompensated {
                        message: self.message,
                        sink: k as u32,
                        lost_at: lost_at.unwrap_or(at),
                        retried_at: at,
                    });
                }
                totals.compensations += 1;
                self.sinks[k].compensate(key, intent);
                self.hidden(k, at);
                applied = true;
            }
            if heard == Heard::Lost {
                lost_at = Some(at);
            }
            at = at.saturating_add(latency);
            if heard == Heard::Ok {
                break;
            }
            if attempt < write.relay_attempts {
                at = at.saturating_add(write.relay_retry);
            } else if !applied {
                self.note(WriteNote::CompensationExhausted {
                    at,
                    message: self.message,
                    sink: k as u32,
                });
            }
        }
        at
    }

    /// The delivery writes a row and acks; the relay applies the row to
    /// each sink on its own, retrying, until a call is heard to succeed or
    /// `relay_attempts` are made (then the row is dead-lettered there).
    fn outbox(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        for k in 0..write.sinks.len() {
            let latency = write.sinks[k].latency;
            let mut at = t;
            let mut last_applied = None;
            for attempt in 1..=write.relay_attempts {
                let heard = self.call(write, k, intent, at, false, repaired);
                if !matches!(heard, Heard::Failed(..)) {
                    self.sinks[k].apply(key, intent);
                    self.shown(k, at);
                    last_applied = Some(at);
                }
                self.relay_end = Some(self.relay_end.map_or(at, |e| e.max(at)));
                if heard == Heard::Ok {
                    break;
                }
                if attempt == write.relay_attempts {
                    totals.outbox_dead_letters += 1;
                    self.note(WriteNote::DeadLettered {
                        message: self.message,
                        sink: k as u32,
                        first_at: t,
                        last_at: at,
                        attempts: attempt,
                    });
                } else {
                    at = at.saturating_add(latency).saturating_add(write.relay_retry);
                }
            }
            if let Some(applied) = last_applied {
                let lag = &mut self.sinks[k].max_lag;
                *lag = (*lag).max(applied - t);
            }
        }
        Wrote {
            took: 0,
            failed: None,
            stores_result: true,
        }
    }

    /// Prepare everywhere once the key's lock is free; commit everywhere
    /// when every prepare is heard to succeed, else abort everywhere. The
    /// decision comes with the last prepare reply, or at the coordinator's
    /// recovery when it crashes.
    fn two_phase(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        self.fold_in_doubt(t, totals);
        let start = match self.locks.get(&key) {
            Some(lock) if lock.release > t => {
                let lock = *lock;
                self.note(WriteNote::Waited {
                    message: self.message,
                    key,
                    from: t,
                    until: lock.release,
                    holder: lock.holder,
                    holder_crashed_at: lock.crashed_at,
                });
                lock.release
            }
            _ => t,
        };
        let mut failed = None;
        let mut prepared = 0u64;
        let mut largest = 0;
        for k in 0..write.sinks.len() {
            let heard = self.call(write, k, intent, start, false, repaired);
            self.note_heard(heard, k, start);
            largest = largest.max(write.sinks[k].latency);
            if !matches!(heard, Heard::Failed(..)) {
                prepared += 1;
            }
            if failed.is_none() {
                failed = failure(heard, write);
            }
        }
        let crashed = failed.is_none()
            && write.coordinator.as_ref().is_some_and(|c| match &c.crash {
                CallSelector::First(n) => self.written <= *n,
                CallSelector::Every(n) => self.written.is_multiple_of(*n),
                CallSelector::Intents(_) => {
                    (self.crash_intents.as_ref()).is_some_and(|s| s.contains(&intent))
                }
                CallSelector::UntilRepair => !repaired,
            });
        let wait = match (crashed, &write.coordinator) {
            (true, Some(c)) => largest.max(c.recovers_after),
            _ => largest,
        };
        let decision = start.saturating_add(wait);
        if prepared > 0 {
            let held = decision - start;
            totals.lock_held = totals
                .lock_held
                .saturating_add(held.saturating_mul(prepared));
            totals.max_lock = totals.max_lock.max(held);
            let lock = Lock {
                release: decision,
                holder: self.message,
                crashed_at: crashed.then_some(start),
            };
            self.locks.insert(key, lock);
            self.prune_locks(t);
        }
        if crashed {
            self.note(WriteNote::Crashed {
                message: self.message,
                prepared_at: start,
                decided_at: decision,
            });
        }
        if failed.is_none() {
            if decision > start {
                *self.in_doubt_changes.entry(start).or_default() += 1;
                *self.in_doubt_changes.entry(decision).or_default() -= 1;
            }
            for k in 0..write.sinks.len() {
                self.sinks[k].apply(key, intent);
                self.shown(k, decision);
            }
        }
        Wrote {
            took: decision - t,
            failed,
            stores_result: failed.is_none(),
        }
    }
}

/// The failure a caller hears from a call, if any.
fn failure(heard: Heard, write: &Write) -> Option<(ReasonIndex, Class)> {
    match heard {
        Heard::Ok => None,
        Heard::Failed(reason, class) => Some((reason, class)),
        Heard::Lost => Some((write.reasons.reply_lost, Class::Transient)),
    }
}
