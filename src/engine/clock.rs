//! Modeled time: the clock moves from event to event, counts them, and
//! stops the run at the scenario's `[limits]`.

use super::outcome::Limit;
use crate::model::{Limits, Millis};

#[derive(Debug, Default)]
pub(super) struct Clock {
    pub(super) now: Millis,
    /// Events so far: deliveries plus inspections.
    events: u64,
    pub(super) last_delivery: Option<Millis>,
    pub(super) last_inspection: Option<Millis>,
}

impl Clock {
    /// Moves to the next event at `t`, unless a limit stops the run: an
    /// event after `max_time` (one exactly at it still runs), or one event
    /// more than `max_events`.
    pub(super) fn advance(&mut self, t: Millis, limits: &Limits) -> Result<(), Limit> {
        if t > limits.max_time {
            return Err(Limit::Time(limits.max_time));
        }
        self.events += 1;
        if self.events > limits.max_events {
            return Err(Limit::Events(limits.max_events));
        }
        self.now = t;
        Ok(())
    }

    /// Since when nothing has happened: the later of the last delivery and
    /// the last inspection (0 before any).
    pub(super) fn quiet_since(&self) -> Millis {
        match (self.last_delivery, self.last_inspection) {
            (Some(d), Some(i)) => d.max(i),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => 0,
        }
    }
}
