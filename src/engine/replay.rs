//! A run played again to read its transitions as they are recorded.
//!
//! The same file and seed make the same run, step for step (section 1), so
//! a writer need not keep a transcript to write it: a run under
//! [`Recorder::Replayed`] counts its transitions and keeps none, and the
//! writer plays it again here, reading each step's transitions and
//! dropping them before the next step. Memory stays that of the run plus
//! one step's transitions, however long the transcript.

use super::transition::Transition;
use super::{Engine, Recorder};
use crate::model::Scenario;

/// A scenario run again from the start with every transition recorded,
/// read one step at a time: an iterator over the run's transitions, in
/// the order it records them, at most [`super::TRANSITIONS_KEPT`] (as a
/// run that keeps them; the replay ends there, the rest of the run is
/// not played).
pub struct Replay<'s> {
    engine: Engine<'s>,
    /// How many of the current step's transitions have been read.
    read: usize,
    /// The run has ended and its last instant is closed.
    ended: bool,
}

impl<'s> Replay<'s> {
    pub fn new(scenario: &'s Scenario) -> Self {
        let mut engine = Engine::new(scenario, Recorder::All);
        engine.core.observers.recording.for_replay();
        Replay {
            engine,
            read: 0,
            ended: false,
        }
    }
}

impl Iterator for Replay<'_> {
    type Item = Transition;

    /// The next transition, stepping the run until there is one.
    fn next(&mut self) -> Option<Transition> {
        loop {
            if let Some(&t) = self
                .engine
                .core
                .observers
                .recording
                .transitions
                .get(self.read)
            {
                self.read += 1;
                return Some(t);
            }
            // Past the cap no transition is kept: nothing more to read.
            if self.ended || self.engine.core.observers.recording.full() {
                return None;
            }
            self.engine.core.observers.recording.transitions.clear();
            self.read = 0;
            // A run that reached a limit under `on_limit = "fail"` has no
            // transcript to write; one that stops there ends as its run did.
            if !matches!(self.engine.step(), Ok(true)) {
                self.engine.close();
                self.ended = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::one_message;
    use crate::engine::{TRANSITIONS_KEPT, run};

    /// Every bundled scenario of up to 10,000 messages: the replay reads
    /// what a run that keeps everything keeps; a replayed run keeps the
    /// same ledger and counts what it drops alike.
    #[test]
    fn a_replay_reads_what_a_recorded_run_keeps() {
        let mut compared = 0;
        for (path, scenario) in crate::scenario::bundled() {
            if scenario.message_count() > crate::engine::FULL_TRANSCRIPT_MESSAGES {
                continue;
            }
            let Ok(kept) = run(&scenario, Recorder::All) else {
                continue;
            };
            let replayed = run(&scenario, Recorder::Replayed).unwrap();
            assert!(replayed.transitions.is_empty());
            assert_eq!(replayed.ledger, kept.ledger, "{path:?}");
            assert_eq!(replayed.totals, kept.totals, "{path:?}");
            assert_eq!(replayed.transitions_dropped, kept.transitions_dropped);
            let transitions: Vec<Transition> = Replay::new(&scenario).collect();
            assert_eq!(transitions, kept.transitions, "{path:?}");
            compared += 1;
        }
        assert!(compared >= 20, "{compared} scenarios compared");
    }

    #[test]
    fn a_replay_stops_where_a_run_stops_keeping() {
        // One message failing 400,000 times: 1.2 million transitions.
        let scenario = one_message(400_000, "fail");
        let replayed = run(&scenario, Recorder::Replayed).unwrap();
        assert_eq!(
            replayed.transitions_dropped,
            1_200_000 - TRANSITIONS_KEPT as u64
        );
        let kept = run(&scenario, Recorder::All).unwrap();
        let mut count = 0;
        for (read, kept) in Replay::new(&scenario).zip(&kept.transitions) {
            assert_eq!(&read, kept);
            count += 1;
        }
        assert_eq!(count, TRANSITIONS_KEPT);
        assert_eq!(Replay::new(&scenario).count(), TRANSITIONS_KEPT);
    }
}
