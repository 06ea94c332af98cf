//! Modeled time: the clock moves from event to event, counts them, and
//! stops a run at the file's `[limits]`.

use crate::model::Millis;

/// The two limits every world has: `[limits] max_time` and `max_events`.
pub trait Limits {
    fn max_time(&self) -> Millis;
    fn max_events(&self) -> u64;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// One event more than `max_events`.
    Events(u64),
    /// An event after `max_time`.
    Time(Millis),
}

#[derive(Debug, Default, Clone)]
pub struct Clock {
    /// The time of the last event.
    pub now: Millis,
    /// Events so far.
    events: u64,
}

impl Clock {
    /// Moves to the next event (or a step that is not an event, when
    /// `event` is false) at `t`, unless a limit stops the run: anything
    /// after `max_time` (one exactly at it still runs), or one event more
    /// than `max_events`. A refused step leaves the time where it was.
    #[inline]
    pub fn advance(&mut self, t: Millis, limits: &impl Limits, event: bool) -> Result<(), Limit> {
        if t > limits.max_time() {
            return Err(Limit::Time(limits.max_time()));
        }
        if event {
            self.events += 1;
            if self.events > limits.max_events() {
                return Err(Limit::Events(limits.max_events()));
            }
        }
        self.now = t;
        Ok(())
    }

    /// `n` more events happened inside the current one (a write's sink
    /// calls, section 24): the next event is refused once the run is over
    /// `max_events`.
    pub fn add_events(&mut self, n: u64) {
        self.events = self.events.saturating_add(n);
    }

    /// Events so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Events the run may still process before `max_events` stops it.
    pub fn events_left(&self, limits: &impl Limits) -> u64 {
        limits.max_events().saturating_sub(self.events)
    }

    /// Moves to an event at `t` that the caller knows to be within the
    /// limits: at or before `max_time`, and within
    /// [`events_left`](Self::events_left).
    #[inline]
    pub fn advance_within(&mut self, t: Millis) {
        self.events += 1;
        self.now = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Both(u64, Millis);

    impl Limits for Both {
        fn max_time(&self) -> Millis {
            self.1
        }
        fn max_events(&self) -> u64 {
            self.0
        }
    }

    fn limits(max_events: u64, max_time: Millis) -> Both {
        Both(max_events, max_time)
    }

    #[test]
    fn an_event_exactly_at_max_time_runs_and_one_after_it_stops_the_run() {
        let mut clock = Clock::default();
        assert_eq!(clock.advance(100, &limits(10, 100), true), Ok(()));
        assert_eq!(
            clock.advance(101, &limits(10, 100), true),
            Err(Limit::Time(100))
        );
        assert_eq!(clock.now, 100, "a refused step leaves the time");
    }

    #[test]
    fn the_event_after_max_events_stops_the_run_and_steps_that_are_not_events_do_not_count() {
        let mut clock = Clock::default();
        let l = limits(2, 1000);
        assert_eq!(clock.advance(1, &l, true), Ok(()));
        assert_eq!(clock.advance(2, &l, false), Ok(()));
        assert_eq!(clock.advance(3, &l, true), Ok(()));
        assert_eq!(clock.events_left(&l), 0);
        assert_eq!(clock.advance(4, &l, true), Err(Limit::Events(2)));
        assert_eq!(clock.now, 3);
        let mut busy = Clock::default();
        busy.add_events(2);
        assert_eq!(busy.advance(1, &l, true), Err(Limit::Events(2)));
    }
}
