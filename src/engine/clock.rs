//! Modeled time: the clock moves from event to event, counts them, and
//! stops the run at the scenario's `[limits]`.

use super::outcome::Limit;
use crate::model::{Limits, Millis};

#[derive(Debug, Default, Clone)]
pub(super) struct Clock {
    pub(super) now: Millis,
    /// Events so far.
    events: u64,
    pub(super) last_delivery: Option<Millis>,
    pub(super) last_inspection: Option<Millis>,
    /// A log's last event (an arrival, a restart, a resume): a log run
    /// ends at its last event (decision 27.16).
    pub(super) last_event: Option<Millis>,
    /// Where `on_limit = "stop"` ended the run.
    stopped_at: Option<Millis>,
}

impl Clock {
    /// Moves to the next event (or inspection) at `t`, unless a limit
    /// stops the run: anything after `max_time` (one exactly at it still
    /// runs), or one event more than `max_events`. An event is a message
    /// becoming ready or a delivery ending; inspections are not events
    /// (decision 16.9).
    pub(super) fn advance(&mut self, t: Millis, limits: &Limits, event: bool) -> Result<(), Limit> {
        if t > limits.max_time {
            return Err(Limit::Time(limits.max_time));
        }
        if event {
            self.events += 1;
            if self.events > limits.max_events {
                return Err(Limit::Events(limits.max_events));
            }
        }
        self.now = t;
        Ok(())
    }

    /// `n` more events happened inside the current one (a write's sink
    /// calls, section 24): the next event is refused once the run is over
    /// `max_events`.
    pub(super) fn add_events(&mut self, n: u64) {
        self.events = self.events.saturating_add(n);
    }

    /// Events the run may still process before `max_events` stops it.
    pub(super) fn events_left(&self, limits: &Limits) -> u64 {
        limits.max_events.saturating_sub(self.events)
    }

    /// Moves to an event at `t` that the caller knows to be within the
    /// limits: at or before `max_time`, and within
    /// [`events_left`](Self::events_left).
    #[inline]
    pub(super) fn advance_within(&mut self, t: Millis) {
        self.events += 1;
        self.now = t;
    }

    /// The run stops at `t` (a limit under `on_limit = "stop"`).
    pub(super) fn stop_at(&mut self, t: Millis) {
        self.stopped_at = Some(t);
    }

    /// The end of the run: where it stopped, or when it fell quiet.
    pub(super) fn end(&self) -> Millis {
        self.stopped_at.unwrap_or_else(|| self.quiet_since())
    }

    /// Since when nothing has happened: the later of the last delivery and
    /// the last inspection (0 before any).
    pub(super) fn quiet_since(&self) -> Millis {
        let quiet = match (self.last_delivery, self.last_inspection) {
            (Some(d), Some(i)) => d.max(i),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => 0,
        };
        self.last_event.map_or(quiet, |e| quiet.max(e))
    }
}
