//! The queue world's clock: the core's modeled time and limits
//! ([`crate::sim::Clock`]), and the marks that say when a run ended.

use super::outcome::Limit;
use crate::model::{Limits, Millis};
use crate::sim;

impl sim::Limits for Limits {
    fn max_time(&self) -> Millis {
        self.max_time
    }
    fn max_events(&self) -> u64 {
        self.max_events
    }
}

/// The core's clock ([`crate::sim::Clock`]: time, events, limits) and
/// what the queue world marks on it to know when a run ended.
#[derive(Debug, Default, Clone)]
pub(super) struct Clock {
    core: sim::Clock,
    pub(super) last_delivery: Option<Millis>,
    pub(super) last_inspection: Option<Millis>,
    /// A log's last event (an arrival, a restart, a resume): a log run
    /// ends at its last event (decision 27.16).
    pub(super) last_event: Option<Millis>,
    /// The latest end of a delivery settled at its start
    /// (`settling/writes.rs`): the run is not quiet before it.
    pub(super) last_settled_end: Option<Millis>,
    /// The last event of a part that is neither a delivery nor an
    /// inspection (a continuous expiry in quarantine, section 28.11; a
    /// store restart, 28.5): it extends the run, not a cycle's drain.
    pub(super) last_part_event: Option<Millis>,
    /// Where `on_limit = "stop"` ended the run.
    stopped_at: Option<Millis>,
}

impl std::ops::Deref for Clock {
    type Target = sim::Clock;
    fn deref(&self) -> &sim::Clock {
        &self.core
    }
}

impl std::ops::DerefMut for Clock {
    fn deref_mut(&mut self) -> &mut sim::Clock {
        &mut self.core
    }
}

impl Clock {
    /// Moves to the next event (or inspection) at `t`, unless a limit
    /// stops the run ([`sim::Clock::advance`]). An event is a message
    /// becoming ready or a delivery ending; inspections are not events
    /// (decision 16.9).
    #[inline]
    pub(super) fn advance(&mut self, t: Millis, limits: &Limits, event: bool) -> Result<(), Limit> {
        self.core
            .advance(t, limits, event)
            .map_err(|limit| match limit {
                sim::Limit::Events(n) => Limit::Events(n),
                sim::Limit::Time(t) => Limit::Time(t),
            })
    }

    /// The run stops at `t` (a limit under `on_limit = "stop"`).
    pub(super) fn stop_at(&mut self, t: Millis) {
        self.stopped_at = Some(t);
    }

    /// The end of the run: where it stopped, or when it fell quiet.
    pub(super) fn end(&self) -> Millis {
        self.stopped_at
            .unwrap_or_else(|| self.quiet_since().max(self.last_part_event.unwrap_or(0)))
    }

    /// Since when nothing has happened: the latest of the last delivery
    /// (a settled one's end included) and the last inspection (0 before
    /// any).
    pub(super) fn quiet_since(&self) -> Millis {
        [
            self.last_delivery,
            self.last_settled_end,
            self.last_inspection,
            self.last_event,
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
    }

    /// A delivery settled at its start ends at `end`.
    pub(super) fn settled_end(&mut self, end: Millis) {
        self.last_settled_end = Some(self.last_settled_end.map_or(end, |l| l.max(end)));
    }
}
