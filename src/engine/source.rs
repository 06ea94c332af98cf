//! The source: where messages come from. A queue's traffic (its arrivals
//! are entries of the schedule, drawn before the run), or with `[log]` a
//! partitioned log (`log/`), whose records are delivered in offset order
//! per partition and whose restarts and resumes are events of their own.
//! The core asks the source through the methods here and never looks at
//! which it is.

use super::clock::Clock;
use super::log::{LogOutcome, LogState};
use super::{Draws, Record};
use crate::model::{IntentIndex, KeyRef, MessageIndex, Millis, Scenario, Totals};

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
