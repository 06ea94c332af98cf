//! The source: where messages come from. A queue's traffic (its arrivals
//! are entries of the schedule, drawn before the run), or with `[log]` a
//! partitioned log (`log/`), whose records are delivered in offset order
//! per partition and whose restarts and resumes are events of their own.
//! The core asks the source through the methods here and never looks at
//! which it is.

use super::clock::Clock;
use super::log::{LogOutcome, LogState};
use super::{Draws, Engine, Record};
use crate::model::{MessageIndex, Millis, Scenario, Totals};

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
            && sequence < self.scenario.message_count()
            && self.settle_record_at_once(m)
        {
            return;
        }
        self.log_ready(m, sequence);
    }

    /// `m` is acked, quarantined or dropped: a log's partition moves past
    /// its record.
    #[inline(always)]
    pub(super) fn source_moves_past(&mut self, m: MessageIndex) {
        if self.source.log.is_some() {
            self.record_done(m);
        }
    }

    /// The instants before `t` that the source keeps: a log's checkpoints
    /// and the positions its stale resumes will read.
    #[inline(always)]
    pub(super) fn source_instants_before(&mut self, t: Millis) {
        if self.source.log.is_some() {
            self.log_instants_before(t);
        }
    }

    /// Drops the scheduled entries at the front that a log's restart
    /// cancelled: they are not events.
    #[inline(always)]
    pub(super) fn drop_cancelled_entries(&mut self) {
        loop {
            if self.source.log.is_some() {
                self.drop_log_entries_cancelled();
            }
            if !self.drop_void_timer() {
                return;
            }
        }
    }

    /// The source's own event, due now: a log's restart, or its resume.
    pub(super) fn source_event(&mut self, resume: bool) {
        self.log_event(resume);
    }

    /// The run ends at `end`.
    pub(super) fn source_close(&mut self, end: Millis) {
        if self.source.log.is_some() {
            self.log_close(end);
        }
    }

    /// A log's figures at the end.
    pub(super) fn source_outcome(&mut self) -> Option<LogOutcome> {
        self.log_outcome()
    }
}
