//! One write to several sinks (docs/model.md section 24). A write's calls
//! are decided at its commit instant: each call's instant follows from the
//! latencies and retry waits before it, its fate from the sink's faults
//! (counted per intent) and outage window. What a run keeps is bounded by
//! the intents and the sinks: per sink and intent a net count (or a row
//! owner) and whether the intent was ever visible; locks and in-doubt
//! writes only while held.
//!
//! Decisions where section 24 is silent (docs/model.md, section 24's
//! decisions): `until = "repair"` is judged at the write's commit instant
//! for every call of that write; intents are numbered for `every` in the
//! order of their first call's write.

mod note;
mod sink;
mod strategies;
mod trace;

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::intents::IntentSet;
use super::messages::Messages;
use super::{Detail, Engine};
use crate::model::{
    CallSelector, Class, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, Scenario,
    SinkKind, Strategy, Totals, Write,
};
pub use note::{WRITE_NOTES_KEPT, WriteNote};
use sink::{Heard, SinkState};
use trace::Tracer;
pub use trace::{
    CallKind, LOCK_SPANS_KEPT, LockSpan, Reply, TRACE_CALLS_KEPT, TracedCall, WRITE_TRACES_KEPT,
    WriteTrace,
};

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

/// A key's two-phase lock.
#[derive(Debug, Clone, Copy)]
struct Lock {
    release: Millis,
    holder: MessageIndex,
    /// When the holder prepared, if its coordinator crashed.
    crashed_at: Option<Millis>,
}

/// The sinks, the two-phase locks and the time measures of section 24.
#[derive(Clone)]
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
    /// When the latest outbox relay call's reply is heard.
    relay_end: Option<Millis>,
    /// partial_visible: closed time, and the writes partial until the end
    /// with the sum of their starts.
    partial_closed: u64,
    partial_open: u64,
    partial_open_starts: u128,
    /// Scratch: per sink of the write in hand, when it showed the write
    /// and until when (`Millis::MAX`: still).
    shows: Vec<Option<(Millis, Millis)>>,
    /// Scratch: per sink, the write in hand's net count there (its applied
    /// calls, one at most for an upsert, minus its applied compensations):
    /// the sink shows the write while it is above 0 (decision 27.38).
    nets: Vec<i64>,
    /// The first [`WRITE_NOTES_KEPT`] notes.
    notes: Vec<WriteNote>,
    /// The message whose write is in hand.
    message: MessageIndex,
    /// Sink calls since the engine last counted them as events.
    calls_made: u64,
    /// Scratch: the instants where the write in hand's visibility changes.
    changes: Vec<(Millis, i64)>,
    /// The calls of the first writes worth a look, and the first locks.
    tracer: Tracer,
    /// Transitions of the writes at their own instants (a compensation
    /// call, a compensation given up, an outbox dead letter), by instant
    /// and order told. The calls are decided at the commit, ahead of the
    /// clock: the core records each when the run reaches its instant, so
    /// this holds at most the told transitions of the writes in flight.
    /// Empty unless something records (`telling`).
    told: BTreeMap<(Millis, u64), (MessageIndex, Detail)>,
    told_so_far: u64,
    telling: bool,
    /// Per sink, the compensations given up there.
    given_up: Vec<u64>,
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
            nets: vec![0; write.sinks.len()],
            notes: Vec::new(),
            message: 0,
            calls_made: 0,
            changes: Vec::with_capacity(2 * write.sinks.len()),
            tracer: Tracer::default(),
            told: BTreeMap::new(),
            told_so_far: 0,
            telling: false,
            given_up: vec![0; write.sinks.len()],
        })
    }

    /// Whether the write transitions are told (something records them).
    pub(super) fn tell_transitions(&mut self, telling: bool) {
        self.telling = telling;
    }

    /// A transition of the write in hand at `at`.
    fn tell(&mut self, at: Millis, detail: Detail) {
        if self.telling {
            self.told_so_far += 1;
            self.told
                .insert((at, self.told_so_far), (self.message, detail));
        }
    }

    /// The next told transition at or before `t`, if any.
    pub(super) fn told_until(&mut self, t: Millis) -> Option<(Millis, MessageIndex, Detail)> {
        let entry = self.told.first_entry()?;
        if entry.key().0 > t {
            return None;
        }
        let ((at, _), (m, detail)) = entry.remove_entry();
        Some((at, m, detail))
    }

    /// A compensation of the write in hand to sink `k` was given up.
    fn given_up(&mut self, k: usize, totals: &mut Totals) {
        totals.compensations_given_up += 1;
        self.given_up[k] += 1;
    }

    /// A call to sink `k` for `intent` at `at` (a compensation or a
    /// write), counted against the run's event limit.
    #[inline(always)]
    fn call(
        &mut self,
        write: &Write,
        k: usize,
        intent: IntentIndex,
        at: Millis,
        compensation: bool,
        repaired: bool,
    ) -> Heard {
        self.calls_made += 1;
        let unavailable = write.reasons.sink_unavailable;
        let heard = self.sinks[k].call(
            &write.sinks[k],
            intent,
            at,
            compensation,
            repaired,
            unavailable,
        );
        if !self.tracer.open() {
            // The traces are full: nothing more to describe.
            return heard;
        }
        let kind = match (compensation, write.strategy) {
            (true, _) => CallKind::Compensation,
            (false, Strategy::Direct | Strategy::Saga) => CallKind::Call,
            (false, Strategy::Outbox) => CallKind::Relay,
            (false, Strategy::TwoPhase) => CallKind::Prepare,
        };
        let reply = match heard {
            Heard::Ok => Reply::Ok,
            Heard::Failed(reason, _) => Reply::Failed(reason),
            Heard::Lost => Reply::Lost,
        };
        self.tracer.call(TracedCall {
            sink: k as u32,
            kind,
            at,
            heard_at: at.saturating_add(write.sinks[k].latency),
            reply,
            applied: !matches!(heard, Heard::Failed(..)) && kind != CallKind::Prepare,
        });
        heard
    }

    /// A write's call to sink `k` at `at`: applied unless it failed (the
    /// sink shows the write from then), and noted when it failed or lost
    /// its reply and `noted`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn attempt(
        &mut self,
        write: &Write,
        k: usize,
        key: KeyRef,
        intent: IntentIndex,
        at: Millis,
        repaired: bool,
        noted: bool,
    ) -> Heard {
        let heard = self.call(write, k, intent, at, false, repaired);
        if !matches!(heard, Heard::Failed(..)) {
            self.sinks[k].apply(key, intent);
            self.applied(k, at);
        }
        if noted {
            self.note_heard(heard, k, at);
        }
        heard
    }

    /// Sink calls made since the last time this was asked.
    pub(super) fn take_calls_made(&mut self) -> u64 {
        std::mem::take(&mut self.calls_made)
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

    /// The traced writes and the locks kept, in the order they were made.
    pub(super) fn take_traces(&mut self) -> (Vec<WriteTrace>, Vec<LockSpan>) {
        let tracer = std::mem::take(&mut self.tracer);
        (tracer.traces, tracer.locks)
    }

    /// The write in hand is applied to sink `k` at `at`: counted, and
    /// shown from then if it was not.
    #[inline]
    fn applied(&mut self, k: usize, at: Millis) {
        let net = &mut self.nets[k];
        *net = match self.sinks[k].kind {
            // An upsert absorbs a repeat: one row, however often written.
            SinkKind::Upsert => 1,
            _ => *net + 1,
        };
        self.shown(k, at);
    }

    #[inline]
    fn shown(&mut self, k: usize, at: Millis) {
        if self.shows[k].is_none() {
            self.shows[k] = Some((at, Millis::MAX));
        }
    }

    /// A compensation of the write in hand is applied to sink `k` at
    /// `at`: the sink stops showing the write once its net count there is
    /// no longer above 0 (an increment applied twice and compensated once
    /// still shows it).
    fn compensated(&mut self, k: usize, at: Millis) {
        self.nets[k] -= 1;
        if self.nets[k] > 0 {
            return;
        }
        if let Some((_, until)) = &mut self.shows[k]
            && *until == Millis::MAX
        {
            *until = at;
        }
    }

    /// The write in hand is done: its partial visibility (at least one
    /// and not every sink shows it) is added, and `shows` cleared.
    fn close_write(&mut self) {
        self.nets.fill(0);
        let n = self.shows.len();
        if self
            .shows
            .iter()
            .flatten()
            .all(|&(_, until)| until == Millis::MAX)
        {
            // No sink hid the write (the common case): sinks only came to
            // show it, so it was partial from the first to the last of
            // them, and still is if some sink never showed it.
            let (mut shown, mut first, mut last) = (0, Millis::MAX, 0);
            for (from, _) in self.shows.iter_mut().filter_map(Option::take) {
                shown += 1;
                first = first.min(from);
                last = last.max(from);
            }
            if n >= 2 && shown > 0 {
                self.partial_closed += last - first;
                if shown < n {
                    self.partial_open += 1;
                    self.partial_open_starts += last as u128;
                }
            }
            return;
        }
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        for (from, until) in self.shows.iter_mut().filter_map(Option::take) {
            changes.push((from, 1));
            if until != Millis::MAX {
                changes.push((until, -1));
            }
        }
        if n < 2 || changes.is_empty() {
            self.changes = changes;
            return;
        }
        changes.sort_unstable();
        let (mut showing, mut since) = (0i64, 0);
        let partial = |c: i64| c >= 1 && c < n as i64;
        for &(t, delta) in &changes {
            if partial(showing) {
                self.partial_closed += t - since;
            }
            showing += delta;
            since = t;
        }
        self.changes = changes;
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
    /// `[value, visible_duplicates, missing, max_per_intent]`, its outbox
    /// `max_lag` and its compensations given up.
    pub(super) fn finish(
        &mut self,
        scenario: &Scenario,
        messages: &Messages,
        end: Millis,
        totals: &mut Totals,
    ) -> (Vec<[i64; 4]>, Vec<Millis>, Vec<u64>) {
        self.fold_in_doubt(Millis::MAX, totals);
        let open =
            (self.partial_open as u128 * end as u128).saturating_sub(self.partial_open_starts);
        totals.partial_visible = self
            .partial_closed
            .saturating_add(open.min(u64::MAX as u128) as u64);
        let mut arrived = IntentSet::new(scenario.intent_count());
        for m in 0..messages.len() as MessageIndex {
            if messages.has_arrived(m) {
                arrived.insert(scenario.intent(m));
            }
        }
        let values = self.sinks.iter().map(|s| s.finish(&arrived)).collect();
        let lags = self.sinks.iter().map(|s| s.max_lag).collect();
        (values, lags, self.given_up.clone())
    }

    /// When the latest outbox relay call's reply is heard, if any.
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
        // Borrowed in place: moving the whole state out and back copied it
        // twice per write (8% of a million-write run).
        let writes = self
            .downstream
            .writes
            .as_mut()
            .expect("a file with [write]");
        let now = self.core.clock.now;
        let repaired = self.operator.repaired;
        let totals = &mut self.measures.totals;
        writes.written += 1;
        writes.message = m;
        writes.tracer.start(writes.written == 1);
        let wrote = match write.strategy {
            Strategy::Direct => writes.direct(write, key, intent, now, repaired),
            Strategy::Saga => writes.saga(write, key, intent, now, repaired, totals),
            Strategy::Outbox => writes.outbox(write, key, intent, now, repaired, totals),
            Strategy::TwoPhase => writes.two_phase(write, key, intent, now, repaired, totals),
        };
        writes.close_write();
        writes.tracer.finish(m, now);
        // What the write told for this instant is recorded now; the rest
        // when the run reaches it.
        while let Some((at, m, detail)) = writes.told_until(now) {
            self.observers
                .recording
                .transition(at, Some(m), detail, &self.messages);
        }
        // Every sink call counts against `max_events`: retries and
        // compensations cannot make a run's work unbounded.
        self.core.clock.add_events(writes.take_calls_made());
        wrote
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
