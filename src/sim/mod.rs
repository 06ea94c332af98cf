//! The scheduling core every world of the model runs on: modeled time
//! and the `[limits]` that stop a run ([`Clock`]), a schedule of what is
//! due, ordered by time, class and scheduling sequence ([`Schedule`]), and
//! the loop that takes a world one event at a time ([`World`],
//! [`run_until`]).
//!
//! A world is one model over that core:
//! - the queue world (`engine`): messages, deliveries, quarantine,
//!   redrive, deduplication and the sinks (sections 1-22 and 24); the
//!   partitioned log of section 23 is a source it takes in place of the
//!   queue (`engine::log`);
//! - the dataflow world (`dataflow::world`): channels and Chandy-Lamport
//!   snapshots (section 25).
//!
//! Nothing here reads a clock or draws a random number: a world's seeded
//! generator is its own, drawn in event order.

mod agenda;
mod clock;
mod radix;
mod schedule;

pub use agenda::{Agenda, MAX_FIFOS};
pub use clock::{Clock, Limit, Limits};
pub use radix::Timed;
pub use schedule::Schedule;

use crate::model::Millis;

/// A model taken one event at a time.
pub trait World {
    /// Why a run stopped short of its end.
    type Stop;

    /// The modeled time of the next event; `None` when nothing is left.
    fn next_time(&mut self) -> Option<Millis>;

    /// Processes the next event: false when the run has ended.
    fn step(&mut self) -> Result<bool, Self::Stop>;
}

/// Takes `world` up to and including modeled time `until` (`None`: to its
/// end): every event of that instant runs, none after it.
pub fn run_until<W: World>(world: &mut W, until: Option<Millis>) -> Result<(), W::Stop> {
    while let Some(next) = world.next_time() {
        if until.is_some_and(|u| next > u) || !world.step()? {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A world of ticks at the given times, each an event.
    struct Ticks {
        due: Vec<Millis>,
        seen: Vec<Millis>,
    }

    impl World for Ticks {
        type Stop = ();
        fn next_time(&mut self) -> Option<Millis> {
            self.due.first().copied()
        }
        fn step(&mut self) -> Result<bool, ()> {
            let t = self.due.remove(0);
            self.seen.push(t);
            Ok(!self.due.is_empty())
        }
    }

    #[test]
    fn run_until_takes_every_event_of_its_instant_and_none_after() {
        let mut w = Ticks {
            due: vec![1, 5, 5, 9],
            seen: Vec::new(),
        };
        run_until(&mut w, Some(5)).unwrap();
        assert_eq!(w.seen, [1, 5, 5]);
        run_until(&mut w, None).unwrap();
        assert_eq!(w.seen, [1, 5, 5, 9]);
    }
}
