//! One write to several sinks (docs/model.md section 24). A write is in
//! flight from its commit until its last reply: its calls are made one at
//! a time, each at its own instant (decisions 27.18, 27.35), as scheduled
//! entries of the one schedule, so a call's fate is decided when it is
//! made (the sink's faults count calls in the order they are made across
//! writes) and a restart that abandons a delivery cancels the calls it had
//! not made yet. A call whose reply comes back at the instant it is made
//! (latency 0) is followed at once by the next, inside the same event.
//! What a run keeps is bounded by the intents and the sinks: per sink and
//! intent a net count (or a row owner) and whether the intent was ever
//! visible; per write in flight its progress; locks and waiting writes
//! only while held.
//!
//! Decisions where section 24 is silent (docs/model.md, section 24's
//! decisions): `until = "repair"` is judged at each call's instant;
//! intents are numbered for `every` in the order of their first call.

mod flight;
mod layout;
mod mixed;
mod note;
mod plain;
mod rows;
mod sink;
mod strategies;
mod trace;
mod two_phase;

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::intents::IntentSet;
use super::messages::Messages;
use super::{Core, Detail, Draws};
use crate::model::{
    CallSelector, Class, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, Scenario,
    Strategy, Totals, Write,
};
use flight::Flight;
pub(super) use flight::FlightId;
use layout::Layout;
pub use note::{WRITE_NOTES_KEPT, WriteNote};
pub use rows::VersionedRowsAtEnd;
use rows::{Applied, RowNames, RowWrite};
use sink::{Heard, SinkState};
pub use trace::{
    CallKind, LOCK_SPANS_KEPT, LockSpan, Reply, TRACE_CALLS_KEPT, TracedCall, WRITE_TRACES_KEPT,
    WriteTrace,
};
use trace::{TraceBuf, Tracer};

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

/// What a commit's write is: done at the commit instant, or in flight
/// (its delivery waits for its last reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Written {
    Done(Wrote),
    InFlight(FlightId),
}

/// A write in flight that is done: the delivery waiting for it (none for
/// an outbox row, whose delivery acked at once) learns how it went.
#[derive(Debug, Clone, Copy)]
pub(super) struct Finished {
    pub(super) owner: Option<u32>,
    pub(super) message: MessageIndex,
    /// The schedule's sequence number at its commit.
    pub(super) begun: u64,
    pub(super) key: KeyRef,
    pub(super) commit: Millis,
    pub(super) wrote: Wrote,
}

impl Finished {
    fn of(f: &Flight) -> Self {
        Finished {
            owner: f.owner,
            message: f.message,
            begun: f.begun,
            key: f.key,
            commit: f.commit,
            wrote: Wrote::default(),
        }
    }
}

/// The sinks, the writes in flight, the two-phase locks and the time
/// measures of section 24.
#[derive(Clone)]
pub(super) struct Writes {
    sinks: Vec<SinkState>,
    /// The coordinator's `intents` selector.
    crash_intents: Option<HashSet<IntentIndex>>,
    /// Writes so far, in ledger order (the coordinator's numbering).
    written: u64,
    /// The writes in flight, by id (a free slot is `None`).
    flights: Vec<Option<Box<Flight>>>,
    free: Vec<FlightId>,
    /// Flights done, kept for their buffers: at most as many as were
    /// ever in flight at once. Boxed: a flight moves between this pool
    /// and its slot as a pointer, not as its 200 bytes.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Flight>>,
    /// Two-phase: the keys whose lock is held (from the prepares to the
    /// decision).
    locks: HashSet<KeyRef>,
    /// Two-phase: per key, the writes waiting for its lock, in the order
    /// they started waiting (decision 26.7).
    waiting: HashMap<KeyRef, VecDeque<FlightId>>,
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
    /// The first [`WRITE_NOTES_KEPT`] notes, each with its write's number.
    notes: Vec<(u64, WriteNote)>,
    /// Sink calls since the engine last counted them as events.
    calls_made: u64,
    /// Scratch: the instants where a closing write's visibility changes.
    changes: Vec<(Millis, i64)>,
    /// The calls of the first writes worth a look, and the first locks.
    tracer: Tracer,
    /// Outbox relay calls scheduled and not yet made.
    relay_scheduled: usize,
    /// What the write's shape fixes for the run (`layout.rs`).
    layout: Layout,
    /// Calls to make, for the engine to schedule: (instant, write, sink).
    pub(super) due: Vec<(Millis, FlightId, u32)>,
    /// Writes in flight that are done, for the engine to end their
    /// deliveries.
    pub(super) finished: Vec<Finished>,
    /// Transitions of the writes at their own instants (a compensation
    /// call, a compensation given up, an outbox dead letter), by instant
    /// and order told: the core records each when the run reaches its
    /// instant. Empty unless something records (`telling`).
    told: BTreeMap<(Millis, u64), (Option<MessageIndex>, Detail)>,
    told_so_far: u64,
    telling: bool,
    /// Per sink, the compensations given up there.
    given_up: Vec<u64>,
    /// Per sink, the outbox rows dead-lettered there.
    dead_letters: Vec<u64>,
    /// Outbox dead letters (instant, sink) since the engine last told the
    /// alarms, when an alarm counts them in a window (`watch`).
    pub(super) dead_lettered: Vec<(Millis, u32)>,
    pub(super) watch_dead_letters: bool,
    /// With a versioned sink: the names of the rows written.
    row_names: Option<RowNames>,
    /// Per sink, the compensations applied there.
    compensations: Vec<u64>,
    /// Keys a mixed write released inside an event, and who released
    /// them: the writes waiting for them take them once the event's
    /// driving is done.
    released: Vec<(KeyRef, (MessageIndex, Option<Millis>))>,
}

impl Writes {
    pub(super) fn new(scenario: &Scenario) -> Option<Self> {
        let write = scenario.write.as_ref()?;
        let sinks = (0..write.sinks.len())
            .map(|k| SinkState::new(scenario, k, write))
            .collect();
        let crash_intents = match write.coordinator.as_ref().and_then(|c| c.crash.as_ref()) {
            Some(CallSelector::Intents(ms)) => {
                Some(ms.iter().map(|&m| scenario.intent(m)).collect())
            }
            _ => None,
        };
        Some(Writes {
            sinks,
            crash_intents,
            written: 0,
            flights: Vec::new(),
            free: Vec::new(),
            spare: Vec::new(),
            locks: HashSet::default(),
            waiting: HashMap::default(),
            in_doubt_changes: BTreeMap::new(),
            in_doubt: 0,
            relay_end: None,
            partial_closed: 0,
            partial_open: 0,
            partial_open_starts: 0,
            notes: Vec::new(),
            calls_made: 0,
            changes: Vec::with_capacity(2 * write.sinks.len()),
            tracer: Tracer::default(),
            relay_scheduled: 0,
            layout: Layout::of(write),
            due: Vec::new(),
            finished: Vec::new(),
            told: BTreeMap::new(),
            told_so_far: 0,
            telling: false,
            given_up: vec![0; write.sinks.len()],
            dead_letters: vec![0; write.sinks.len()],
            dead_lettered: Vec::new(),
            watch_dead_letters: false,
            row_names: write.rows.is_some().then(RowNames::default),
            compensations: vec![0; write.sinks.len()],
            released: Vec::new(),
        })
    }

    /// Whether the write transitions are told (something records them):
    /// then each sink's change of write mode (section 28.8) is told at its
    /// instant, recorded if the run reaches it.
    pub(super) fn tell_transitions(&mut self, telling: bool, write: &Write) {
        self.telling = telling;
        for (k, calls) in write.sinks.iter().enumerate() {
            if let Some((at, kind)) = calls.becomes {
                self.tell_about(
                    None,
                    at,
                    Detail::SinkChanged {
                        sink: k as u32,
                        kind,
                    },
                );
            }
        }
    }

    /// A transition of `f`'s message at `at`.
    fn tell(&mut self, f: &Flight, at: Millis, detail: Detail) {
        self.tell_about(Some(f.message), at, detail);
    }

    fn tell_about(&mut self, message: Option<MessageIndex>, at: Millis, detail: Detail) {
        if self.telling {
            self.told_so_far += 1;
            self.told.insert((at, self.told_so_far), (message, detail));
        }
    }

    /// The next told transition at or before `t`, if any.
    pub(super) fn told_until(
        &mut self,
        t: Millis,
    ) -> Option<(Millis, Option<MessageIndex>, Detail)> {
        let entry = self.told.first_entry()?;
        if entry.key().0 > t {
            return None;
        }
        let ((at, _), (m, detail)) = entry.remove_entry();
        Some((at, m, detail))
    }

    /// Outbox relay calls scheduled and not yet made: the relay's, not
    /// the consumer's.
    pub(super) fn relay_calls_scheduled(&self) -> usize {
        self.relay_scheduled
    }

    /// Writes in flight now.
    pub(super) fn in_flight(&self) -> usize {
        self.flights.len() - self.free.len()
    }

    /// The message of write `id` in flight, if its calls are the
    /// consumer's (a direct or saga write, which a restart that abandons
    /// its delivery cancels); `None` for a relay's or a coordinator's.
    pub(super) fn consumer_call_of(&self, id: FlightId) -> Option<MessageIndex> {
        let f = self.flights[id as usize].as_ref()?;
        f.consumer_calls().then_some(f.message)
    }

    /// Write `id` was cancelled with its delivery (a log's restart): its
    /// later calls are never made. Returns its delivery's receipt.
    pub(super) fn cancel(&mut self, id: FlightId) -> Option<u32> {
        let f = self.flights[id as usize].take()?;
        self.free.push(id);
        let mut f = f;
        self.close_write(&mut f);
        f.owner
    }

    /// The delivery of write `id` has its receipt `slot`.
    pub(super) fn set_owner(&mut self, id: FlightId, slot: u32) {
        if let Some(f) = self.flights[id as usize].as_mut() {
            f.owner = Some(slot);
        }
    }

    /// A compensation of sink `k` was given up.
    fn given_up(&mut self, k: usize, totals: &mut Totals) {
        totals.compensations_given_up += 1;
        self.given_up[k] += 1;
    }

    /// A call of `f` to sink `k` at `at` (a compensation or a write),
    /// counted against the run's event limit.
    #[inline(always)]
    fn call(
        &mut self,
        write: &Write,
        f: &mut Flight,
        k: usize,
        at: Millis,
        compensation: bool,
        repaired: bool,
    ) -> Heard {
        self.calls_made += 1;
        let unavailable = write.reasons.sink_unavailable;
        let heard = self.sinks[k].call(
            &write.sinks[k],
            f.intent,
            at,
            compensation,
            repaired,
            unavailable,
        );
        let Some(trace) = f.trace.as_deref_mut() else {
            return heard;
        };
        let kind = match (compensation, write.sinks[k].strategy) {
            (true, _) => CallKind::Compensation,
            (false, Strategy::Direct | Strategy::Saga) => CallKind::Call,
            (false, Strategy::Outbox) => CallKind::Relay,
            (false, Strategy::TwoPhase) => CallKind::Prepare,
        };
        let reply = reply_of(heard);
        trace.call(TracedCall {
            sink: k as u32,
            kind,
            at,
            heard_at: at.saturating_add(write.sinks[k].latency),
            reply,
            applied: !matches!(heard, Heard::Failed(..)) && kind != CallKind::Prepare,
        });
        heard
    }

    /// `f`'s call to sink `k` at `at`: applied unless it failed (the sink
    /// shows the write from then), and noted when it failed or lost its
    /// reply and `noted`.
    #[inline(always)]
    fn attempt(
        &mut self,
        write: &Write,
        f: &mut Flight,
        k: usize,
        at: Millis,
        repaired: bool,
        noted: bool,
    ) -> Heard {
        let heard = self.call(write, f, k, at, false, repaired);
        if !matches!(heard, Heard::Failed(..)) && self.apply(f, k, at) {
            f.applied(self.sinks[k].kind_at(at), k, at);
        }
        if noted {
            self.note_heard(f, heard, k, at);
        }
        heard
    }

    /// `f`'s write is applied to sink `k` at `at`; false when a
    /// versioned sink rejected it as stale (the sink does not show it). A
    /// stale overwrite is told.
    #[inline(always)]
    fn apply(&mut self, f: &Flight, k: usize, at: Millis) -> bool {
        match self.sinks[k].apply(f.key, f.intent, at, f.row) {
            Applied::Fresh => true,
            Applied::StaleRejected => false,
            Applied::StaleOverwrite { held } => {
                let written = f.row.map_or(0, |r| r.version);
                let detail = Detail::StaleOverwrite {
                    sink: k as u32,
                    message: f.message,
                    key: f.key,
                    written,
                    held,
                };
                self.tell(f, at, detail);
                true
            }
        }
    }

    /// Sink calls made since the last time this was asked.
    pub(super) fn take_calls_made(&mut self) -> u64 {
        std::mem::take(&mut self.calls_made)
    }

    fn note(&mut self, f: &Flight, note: WriteNote) {
        if self.notes.len() < WRITE_NOTES_KEPT {
            self.notes.push((f.number, note));
        }
    }

    /// A call's failure worth a note.
    fn note_heard(&mut self, f: &Flight, heard: Heard, k: usize, at: Millis) {
        let (message, sink) = (f.message, k as u32);
        match heard {
            Heard::Ok => {}
            Heard::Failed(reason, class) => self.note(
                f,
                WriteNote::Failed {
                    at,
                    message,
                    sink,
                    reason,
                    class,
                },
            ),
            Heard::Lost => self.note(f, WriteNote::ReplyLost { at, message, sink }),
        }
    }

    /// The notes kept, in the order the writes were made (each write's in
    /// the order they were noted).
    pub(super) fn take_notes(&mut self) -> Vec<WriteNote> {
        let mut notes = std::mem::take(&mut self.notes);
        notes.sort_by_key(|(number, _)| *number);
        notes.into_iter().map(|(_, note)| note).collect()
    }

    /// The traced writes and the locks kept, in the order they were made.
    pub(super) fn take_traces(&mut self) -> (Vec<WriteTrace>, Vec<LockSpan>) {
        std::mem::take(&mut self.tracer).into_parts()
    }

    /// Write `f` is done: its partial visibility (at least one and not
    /// every sink shows it) is added.
    fn close_write(&mut self, f: &mut Flight) {
        let n = f.shows.len();
        if f.shows
            .iter()
            .flatten()
            .all(|&(_, until)| until == Millis::MAX)
        {
            // No sink hid the write (the common case): sinks only came to
            // show it, so it was partial from the first to the last of
            // them, and still is if some sink never showed it.
            let (mut shown, mut first, mut last) = (0, Millis::MAX, 0);
            for (from, _) in f.shows.iter_mut().filter_map(Option::take) {
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
        for (from, until) in f.shows.iter_mut().filter_map(Option::take) {
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
        self.never_decided(end, totals);
        // Writes still in flight (a run stopped at a limit, or in doubt):
        // their time so far.
        for id in 0..self.flights.len() {
            if let Some(mut f) = self.flights[id].take() {
                self.close_write(&mut f);
                // Its calls so far are worth a look (a write in doubt).
                if let Some(trace) = f.trace.take() {
                    self.tracer.finish(*trace, f.number, f.message, f.commit);
                }
            }
        }
        self.fold_in_doubt(Millis::MAX, totals);
        totals.uncorrected_false_notices = totals.false_notices - totals.corrective_notices;
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

    /// Per sink, its kind at `end` and the write calls applied after its
    /// change, when some sink has `becomes` (empty otherwise).
    pub(super) fn becomes_at_end(&self, end: Millis) -> Vec<(crate::model::SinkKind, u64)> {
        if !self.sinks.iter().any(|s| s.changes()) {
            return Vec::new();
        }
        (self.sinks.iter())
            .map(|s| (s.kind_at_end(end), s.writes_after_change))
            .collect()
    }

    /// Per sink, its versioned rows at the end (`None` for an unversioned
    /// sink), when some sink is versioned (empty otherwise): the first
    /// [`ROWS_LISTED`](crate::model::ROWS_LISTED) by name, and the rows
    /// the file's expectations name.
    pub(super) fn versioned_at_end(&self, scenario: &Scenario) -> Vec<Option<VersionedRowsAtEnd>> {
        let Some(names) = &self.row_names else {
            return Vec::new();
        };
        (self.sinks.iter().enumerate())
            .map(|(k, s)| {
                let wanted: Vec<&str> = (scenario.expectations.iter())
                    .filter_map(|e| match &e.target {
                        crate::model::Target::Row { sink, row, .. } if *sink as usize == k => {
                            Some(row.as_str())
                        }
                        _ => None,
                    })
                    .collect();
                let listed = crate::model::ROWS_LISTED;
                s.versioned
                    .as_ref()
                    .map(|v| v.at_end(names, listed, &wanted))
            })
            .collect()
    }

    /// The least time a write's delivery waits for its calls.
    pub(in crate::engine) fn least_took(&self) -> Millis {
        self.layout.least_took
    }

    /// Whether a write's result is stored in the event of its last call,
    /// made at the instant the result is seen (that call takes no time,
    /// an earlier one does): an event of that instant scheduled before
    /// the call does not see it.
    pub(in crate::engine) fn result_seen_at_a_call(&self) -> bool {
        self.layout.seen_at_a_call
    }

    /// Per sink, the compensations applied there (none but a saga
    /// sink's).
    pub(super) fn compensations_per_sink(&self) -> Vec<u64> {
        self.compensations.clone()
    }

    /// Per sink, the outbox rows dead-lettered so far.
    pub(super) fn dead_letters(&self) -> &[u64] {
        &self.dead_letters
    }

    /// When the latest outbox relay call's reply is heard, if any.
    pub(super) fn relay_end(&self) -> Option<Millis> {
        self.relay_end
    }
}

impl Writes {
    /// The effect of `m` (its `intent`, under `key`) committed now: its
    /// write goes to the sinks by the file's strategy, its first calls
    /// made now (what follows is the engine's `after_writes`).
    pub(super) fn fan_out(
        &mut self,
        core: &mut Core,
        draws: &Draws,
        repaired: bool,
        (m, key, intent): (MessageIndex, KeyRef, IntentIndex),
    ) -> Written {
        let scenario = core.scenario;
        let write = scenario.write.as_ref().expect("a file with [write]");
        let now = core.clock.now;
        let begun = core.schedule.take_sequence();
        let row = self.row_names.as_mut().map(|names| {
            let arrival = draws.arrival(scenario, m);
            let (version, value) = scenario.row_version(m, arrival);
            RowWrite {
                row: names.id(&scenario.row_name(m, key)),
                version,
                value,
            }
        });
        self.begin(
            write,
            (m, key, intent, row),
            now,
            begun,
            repaired,
            &mut core.measures.totals,
        )
    }

    /// Write `id`'s call to `sink` (or its decision) is due now (a call of
    /// a write begun at a sequence a log's restart `cancelled` is not
    /// made). True when it was an outbox relay's call.
    pub(super) fn call_due(
        &mut self,
        core: &mut Core,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
        repaired: bool,
        (id, sink): (FlightId, u32),
    ) -> bool {
        let write = core.scenario.write.as_ref().expect("a file with [write]");
        let now = core.clock.now;
        // The relay's entries: an outbox row's calls, and a mixed write's
        // once its row is written (its calls and late compensations).
        let relay = self.flights[id as usize]
            .as_ref()
            .is_some_and(|f| f.relayed);
        if relay {
            self.relay_scheduled -= 1;
        }
        let totals = &mut core.measures.totals;
        self.resume(write, id, sink, now, repaired, totals, cancelled);
        // This entry was the event of its first call.
        let calls = self.take_calls_made();
        core.clock.add_events(calls.saturating_sub(1));
        relay
    }

    /// What the writes did in an event, for the engine's `after_writes`:
    /// their calls scheduled, the events they made counted, their
    /// transitions of this instant recorded, and each outbox dead letter
    /// (its time and sink) told to `dead_lettered` (the alarms). Returns
    /// the writes done (the deliveries waiting for them end next); give
    /// the list back with [`finished_heard`](Self::finished_heard).
    pub(super) fn after_event(
        &mut self,
        core: &mut Core,
        mut dead_lettered: impl FnMut(Millis, u32),
    ) -> Vec<Finished> {
        let now = core.clock.now;
        for (at, id, sink) in self.due.drain(..) {
            core.schedule.schedule_call(now, at, id, sink);
        }
        // Every sink call counts against `max_events`: retries and
        // compensations cannot make a run's work unbounded.
        core.clock.add_events(self.take_calls_made());
        let finished = std::mem::take(&mut self.finished);
        for (t, sink) in self.dead_lettered.drain(..) {
            dead_lettered(t, sink);
        }
        while let Some((at, m, detail)) = self.told_until(now) {
            (core.observers.recording).transition(at, m, detail, &core.messages);
        }
        finished
    }

    /// The list [`after_event`](Self::after_event) returned, read: kept
    /// for the next event (its allocation reused).
    pub(super) fn finished_heard(&mut self, mut finished: Vec<Finished>) {
        finished.clear();
        self.finished = finished;
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

/// What a trace and a transition say the caller heard.
fn reply_of(heard: Heard) -> Reply {
    match heard {
        Heard::Ok => Reply::Ok,
        Heard::Failed(reason, _) => Reply::Failed(reason),
        Heard::Lost => Reply::Lost,
    }
}
