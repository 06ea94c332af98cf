//! The source: where messages come from. A queue's traffic (its arrivals
//! are entries of the schedule, drawn before the run), or with `[log]` a
//! partitioned log (`log/`), whose records are delivered in offset order
//! per partition and whose restarts and resumes are events of their own.
//! The core asks the source through the methods here and never looks at
//! which it is.

use super::clock::Clock;
use super::log::{LogOutcome, LogState, Reach, RecordDue};
use super::{Draws, Engine, Record};
use crate::model::{IntentIndex, KeyRef, MessageIndex, Millis, Scenario, State, Totals};

/// Where messages come from.
#[derive(Clone)]
pub(super) struct Source {
    /// Poisson arrivals and each generated message's mix kind.
    pub(super) draws: Draws,
    /// `[log]`: the partitions, positions, checkpoints and restarts.
    pub(super) log: Option<Box<LogState>>,
}

impl Source {
    pub(super) fn new(scenario: &Scenario, draws: Draws) -> Self {
        Source {
            draws,
            log: scenario
                .log
                .as_ref()
                .map(|log| Box::new(LogState::new(scenario, log))),
        }
    }

    /// An event is taken at `t`: a log's run ends at its last event
    /// (decision 27.26), a queue's at its last delivery or inspection.
    #[inline(always)]
    pub(super) fn event_taken(&self, clock: &mut Clock, t: Millis) {
        if self.log.is_some() {
            clock.last_event = Some(t);
        }
    }

    /// The log record a delivery of `m` starting now takes (none for a
    /// queue).
    #[inline(always)]
    pub(super) fn record_of(&self, m: MessageIndex) -> Option<Record> {
        self.log.as_ref().map(|log| log.record_of(m))
    }

    /// A retry of `m` is due at `due` (a log keeps it, to say what a
    /// restart cancels).
    #[inline(always)]
    pub(super) fn retry_scheduled(&mut self, m: MessageIndex, due: Millis) {
        if let Some(log) = &mut self.log {
            log.retry_scheduled(m, due);
        }
    }

    /// A log partition's records appended and not done (0 for a queue).
    pub(super) fn partition_lag(&self, p: u32) -> u64 {
        self.log.as_ref().map_or(0, |log| log.partition_lag(p))
    }

    /// A log's records appended and not done, summed over its partitions
    /// (0 for a queue).
    pub(super) fn lag(&self) -> u64 {
        self.log.as_ref().map_or(0, |log| log.lag())
    }

    /// The log (the run has one).
    pub(super) fn log_mut(&mut self) -> &mut LogState {
        self.log.as_deref_mut().expect("a log run")
    }

    /// Where a redriven `m` is appended as now: a log's partition end
    /// (none for a queue).
    pub(super) fn record_appended(&self, core: &super::Core, m: MessageIndex) -> Option<Record> {
        self.log.as_ref().map(|log| log.record_appended(core, m))
    }

    /// An effect commits: a log under exactly-once keeps its sink writes
    /// in the open transaction (true); otherwise they are visible at once.
    #[inline(always)]
    pub(super) fn holds_write(
        &mut self,
        m: MessageIndex,
        key: KeyRef,
        intent: IntentIndex,
    ) -> bool {
        self.log
            .as_deref_mut()
            .is_some_and(|log| log.write(m, key, intent))
    }

    /// When a log record was appended, if a producer retry appended it (a
    /// duplicate: its own event time).
    pub(super) fn duplicate_appended_at(&self, record: Record) -> Option<Millis> {
        self.log.as_deref()?.duplicate_appended_at(record)
    }

    /// The source cycle drained: a log's drain time is its last
    /// delivery's end (decision 27.26).
    pub(super) fn drained(&mut self, last_delivery: Option<Millis>) {
        if let Some(log) = &mut self.log {
            log.drained(last_delivery);
        }
    }

    /// A delivery of `m` starts: a log counts reprocessing and, under
    /// at-most-once, commits the position past its record.
    #[inline(always)]
    pub(super) fn delivery_starts(
        &mut self,
        totals: &mut Totals,
        m: MessageIndex,
        cycle_receives: u32,
    ) {
        if let Some(log) = &mut self.log {
            log.delivery_starts(totals, m, cycle_receives);
        }
    }

    /// Messages in state `skipped` (a log's), which are not pending.
    pub(super) fn skipped_messages(&self) -> u64 {
        self.log.as_deref().map_or(0, LogState::skipped_messages)
    }

    /// A log's figures at the end.
    pub(super) fn outcome(&mut self, last_delivery: Option<Millis>) -> Option<LogOutcome> {
        Some(self.log.as_deref_mut()?.outcome(last_delivery))
    }

    /// After the instant `now`: a log's lag and its sampled positions.
    #[inline(always)]
    pub(super) fn observe(&mut self, now: Millis, totals: &mut Totals) {
        if let Some(log) = &mut self.log {
            totals.max_lag = totals.max_lag.max(log.lag());
            log.sample(now, false);
        }
    }
}

impl Engine<'_> {
    /// Message `m` is due from the source (its arrival, a retry, a
    /// redrive): it becomes ready in a queue; a log appends or continues
    /// its record.
    #[inline(always)]
    pub(super) fn message_due(&mut self, m: MessageIndex, sequence: u64) {
        if self.source.log.is_none() {
            return self.becomes_ready(m, sequence);
        }
        if self.consumer.settling.at_once
            && sequence < self.core.scenario.message_count()
            && self.settle_record_at_once(m)
        {
            return;
        }
        self.log_ready(m, sequence);
    }

    /// A log entry is due: an arrival appends a record; a retry or a
    /// record made due continues its partition.
    pub(super) fn log_ready(&mut self, m: MessageIndex, sequence: u64) {
        let count = self.core.scenario.message_count();
        match self.source.log_mut().ready(m, sequence, count) {
            RecordDue::Arrived => {
                self.core.set_state(m, State::Ready);
                self.core.state_changed(m);
                self.append(m);
                self.source.log_mut().append_ack_lost(&mut self.core, m);
            }
            RecordDue::Retry(m) => self.start_delivery(m),
            RecordDue::Start(p) => self.start_record(p),
            RecordDue::Nothing => {}
        }
    }

    /// The arrival of `m` in a run that allows settling at once
    /// ([`super::Settling::at_once`]): when its partition is idle with
    /// nothing pending, and its first delivery acks at once (no fault, no
    /// outage, no live result), what appending, starting, delivering and
    /// moving on would do. False when it is not such a one (nothing is
    /// changed then): the full path takes it.
    #[inline(always)]
    pub(super) fn settle_record_at_once(&mut self, m: MessageIndex) -> bool {
        if !self.source.draws.faults(self.core.scenario, m).is_empty()
            || self.downstream.outages.contains(self.core.clock.now)
        {
            return false;
        }
        let log = self.source.log.as_deref().expect("a log run");
        let Some(p) = log.idle_for(&self.core, m) else {
            return false;
        };
        if !self.ack_at_once(m) {
            return false;
        }
        self.source.log_mut().settled_at_once(m, p);
        true
    }

    /// `m` is appended to its partition now (its arrival, or a redrive:
    /// decision 26.12); an idle partition starts it at once.
    pub(super) fn append(&mut self, m: MessageIndex) {
        if let Some(p) = self.source.log_mut().append(&self.core, m) {
            self.start_record(p);
        }
    }

    /// The producer's retry of `m`'s append is due (section 28.6).
    pub(super) fn append_again(&mut self, m: MessageIndex) {
        let (starts, again) = self.source.log_mut().append_again(&mut self.core, m);
        if let Some(p) = starts {
            self.start_record(p);
        }
        if again {
            super::log::schedule_append_retry(&mut self.core, m);
        }
    }

    /// Partition `p` starts the record at its position: a message
    /// processed again leaves its outcome, and a fresh attempt counts its
    /// receives from zero.
    fn start_record(&mut self, p: usize) {
        let Some(begin) = self.source.log_mut().start_record(&mut self.core, p) else {
            return;
        };
        let m = begin.message;
        if let Some(state) = begin.reopened {
            self.reopen(m, state);
        }
        if begin.fresh && self.core.messages.cycle_receives(m) > 0 {
            self.core.messages.update(m, |s| s.cycle_receives = 0);
            if let Some(previous) = self.consumer.prev_delays.get_mut(m as usize) {
                *previous = 0;
            }
        }
        self.start_delivery(m);
    }

    /// A final message whose record is processed again is pending again.
    fn reopen(&mut self, m: MessageIndex, state: State) {
        if matches!(state, State::Quarantined | State::Expired | State::Purged) {
            self.operator.leaves_quarantine(&self.core.messages, m);
        }
        let totals = &mut self.core.measures.totals;
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
        self.core.set_state(m, State::Ready);
    }

    /// `m` is acked, quarantined or dropped: a log's partition moves past
    /// its record.
    #[inline(always)]
    pub(super) fn source_moves_past(&mut self, m: MessageIndex) {
        if let Some(log) = self.source.log.as_deref_mut() {
            log.record_done(&mut self.core, m);
        }
    }

    /// The instants before `t` that the source keeps: a log's checkpoints
    /// and the positions its stale resumes will read.
    #[inline(always)]
    pub(super) fn source_instants_before(&mut self, t: Millis) {
        if let Some(log) = self.source.log.as_deref_mut() {
            log.instants_before(&mut self.core, &mut self.downstream.sinks, t);
        }
    }

    /// Drops the scheduled entries at the front that a log's restart
    /// cancelled: they are not events.
    #[inline(always)]
    pub(super) fn drop_cancelled_entries(&mut self) {
        loop {
            if let Some(log) = self.source.log.as_deref() {
                let writes = self.downstream.writes.as_mut();
                log.drop_cancelled(&mut self.core, &mut self.consumer.receipts, writes);
            }
            if !self.consumer.drop_void_timer(&mut self.core) {
                return;
            }
        }
    }

    /// The source's own event, due now: a log's restart, or its resume.
    pub(super) fn source_event(&mut self, resume: bool) {
        let reach = Reach {
            sinks: &mut self.downstream.sinks,
            quarantine: &mut self.quarantine,
            in_flight: &mut self.consumer.in_flight,
        };
        let log = self.source.log.as_deref_mut().expect("a log run");
        log.event(&mut self.core, reach, resume);
    }

    /// The run ends at `end`.
    pub(super) fn source_close(&mut self, end: Millis) {
        if let Some(log) = self.source.log.as_deref_mut() {
            log.close(&mut self.core, &mut self.downstream.sinks, end);
        }
    }
}
