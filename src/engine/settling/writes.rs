//! Writes settled at their commit: in a run where nothing reads the steps
//! of a delivery one by one, a write delivery whose calls were all heard
//! (section 24) acks when its last reply comes back, and nothing else can
//! happen to its message in between. Such a delivery is settled when it
//! starts: its message is acked as of its end, its end is counted as the
//! event it would have been, and the run keeps only the end's time, for
//! the two things that still read it: the deliveries in flight after each
//! instant (`max_in_flight`) and when the run falls quiet.
//!
//! Which runs may settle writes is what every part allows
//! (`settling/mod.rs`, [`crate::engine::settling::Settling::writes`]);
//! the settling itself is the delivery's (`Engine::settle_write` and
//! `settle_plain_write` in `delivery.rs`). Here: the ends ahead, and the
//! rule that a settled end a limit would have refused makes the whole run
//! go again step by step (`Core::must_step_instead`, read by
//! [`crate::engine::run`]): a limit is the one thing that could stop the
//! run between a settled delivery's start and its end.

use crate::engine::LimitReached;
use crate::model::{Millis, StoppedBy};
use crate::sim::Agenda;

/// At most this many delivery durations get a first-in, first-out queue
/// of their own; ends after any other duration go to the heap.
const FIFOS: usize = 4;

/// The ends of the settled deliveries still in flight, in an agenda: an
/// end `d` after its start joins the queue of duration `d` (starts never
/// go back, so a queue's ends come in order; a write's duration is its
/// sinks' latencies, so most writes share one or two), and ends of other
/// durations wait in the heap. At most one end per message in flight.
#[derive(Clone)]
pub(in crate::engine) struct EndsAhead {
    ends: Agenda<Millis>,
}

impl Default for EndsAhead {
    fn default() -> Self {
        EndsAhead {
            ends: Agenda::new(FIFOS),
        }
    }
}

impl EndsAhead {
    /// Settled deliveries still in flight after instant `now`: their ends
    /// at or before `now` have happened.
    #[inline]
    pub(in crate::engine) fn in_flight_after(&mut self, now: Millis) -> u64 {
        self.ends.pass(now) as u64
    }

    /// A delivery that started at `start` ends at `end`.
    #[inline(always)]
    pub(in crate::engine) fn push(&mut self, start: Millis, end: Millis) {
        self.ends.add(start, end, true);
    }
}

impl crate::engine::Core<'_> {
    /// Whether a run that `ended` so must go again step by step: it
    /// settled a delivery, and a limit stopped it or would have refused a
    /// settled end (one after `max_time`, or one event more than
    /// `max_events`: the ends were counted when they settled). A limit
    /// may fall between a settled delivery's start and its end.
    pub(in crate::engine) fn must_step_instead(&self, ended: &Result<(), LimitReached>) -> bool {
        let limits = &self.scenario.limits;
        self.clock.last_settled_end.is_some_and(|end| {
            ended.is_err()
                || self.stopped_by != StoppedBy::Drained
                || end > limits.max_time
                || self.clock.events() > limits.max_events
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Engine, Outcome, Recorder, run};
    use crate::model::Scenario;
    use crate::scenario::load_str;

    /// A file of one write sink `latency` slow, `strategy` and `rest`.
    fn file(strategy: &str, latency: &str, rest: &str) -> Scenario {
        let text = format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
             [write]\nstrategy = \"{strategy}\"\n\
             [[sink]]\nname = \"a\"\nkind = \"increment\"\n\
             [[sink]]\nname = \"b\"\nkind = \"upsert\"\nlatency = \"{latency}\"\n{rest}"
        );
        load_str("t.toml", &text).unwrap().0
    }

    /// Runs `scenario` settling what it may, as `run` does before it
    /// looks back: the engine, and whether it must step instead.
    fn settling(scenario: &Scenario) -> (Engine<'_>, bool) {
        let mut engine = Engine::new(scenario, Recorder::Off);
        engine.settle_from_now(true);
        assert!(engine.consumer.settling.writes);
        let ended = engine.run_to_end();
        assert!(
            engine.core.clock.last_settled_end.is_some(),
            "nothing settled"
        );
        let step_instead = engine.core.must_step_instead(&ended);
        (engine, step_instead)
    }

    /// The settling run of a file that needs no second run, checked
    /// against the stepped run (the same totals, states and sinks).
    fn settled_as_stepped(scenario: &Scenario) -> Outcome {
        let (engine, step_instead) = settling(scenario);
        assert!(!step_instead);
        let settled = engine.finish(None);
        let stepped = run(scenario, Recorder::All).unwrap();
        assert_eq!(settled.totals, stepped.totals);
        assert_eq!(settled.messages, stepped.messages);
        assert_eq!(settled.sinks, stepped.sinks);
        settled
    }

    /// A saga over two sinks, one slow: every write that is heard acks
    /// when its last reply comes back, and is settled at its start; the
    /// run's totals are the stepped run's.
    #[test]
    fn a_write_that_acks_is_settled_at_its_start() {
        let scenario = file("saga", "5ms", "[[traffic]]\ncount = 100\nover = \"10ms\"\n");
        let settled = settled_as_stepped(&scenario);
        // Ten arrivals a millisecond, each in flight for 5 ms.
        assert_eq!(settled.totals.max_in_flight, 50);
    }

    /// A plain write (every call heard to succeed, not the run's first,
    /// which is traced) is settled in one write of its message's record,
    /// and it stores the result: a later message under the same key,
    /// within the retention, is a hit and writes nothing.
    #[test]
    fn a_plain_write_stores_its_result_for_the_next_message_of_its_key() {
        let messages = "[dedup]\nenabled = true\nresult_retention = \"20s\"\n\
            [[message]]\nid = \"first\"\n\
            [[message]]\nid = \"m0\"\nat = \"1s\"\nkey = \"k\"\n\
            [[message]]\nid = \"m1\"\nat = \"5s\"\nkey = \"k\"\n";
        let settled = settled_as_stepped(&file("direct", "500ms", messages));
        assert_eq!((settled.totals.effects, settled.totals.dedup_hits), (2, 1));
    }

    /// A write whose last call takes no time while an earlier one does
    /// stores its result in that call's event: a retry of the same key due
    /// at that instant, scheduled before the call, runs first and misses
    /// it (section 1), also when the run settles what it may.
    #[test]
    fn a_retry_due_at_the_instant_of_the_last_call_runs_before_it() {
        let text = "[delivery]\nmax_receives = 2\nretry_interval = \"1500ms\"\n\
            [dedup]\nenabled = true\nresult_retention = \"20s\"\n\
            [[message]]\nid = \"first\"\n\
            [[message]]\nid = \"a\"\nkey = \"k\"\nfaults = [{ fail = { first = 1 } }]\n\
            [[message]]\nid = \"b\"\nat = \"1s\"\nkey = \"k\"\n\
            [write]\nstrategy = \"direct\"\n\
            [[sink]]\nname = \"x\"\nkind = \"increment\"\nlatency = \"500ms\"\n\
            [[sink]]\nname = \"y\"\nkind = \"upsert\"\n";
        let scenario = load_str("t.toml", text).unwrap().0;
        let settled = run(&scenario, Recorder::Off).unwrap();
        let stepped = run(&scenario, Recorder::All).unwrap();
        assert_eq!(settled.totals, stepped.totals);
        // b's call to y is made at 1.5 s, scheduled at 1 s; a's retry at
        // 1.5 s was scheduled at 0 s.
        assert_eq!((settled.totals.effects, settled.totals.dedup_hits), (3, 0));
    }

    /// A settled end after `max_time` (or one event past `max_events`) is
    /// one the stepped run never reaches: the run sees it and goes again
    /// step by step, and stops at the limit as the stepped run does, with
    /// the message in flight.
    #[test]
    fn a_settled_end_past_a_limit_runs_the_file_again_step_by_step() {
        let message = "[[message]]\nid = \"m0\"\nat = \"10s\"\n";
        // The arrival is event 1 and its two sink calls events 2 and 3:
        // the end would be event 4, past `max_events`.
        for limits in ["max_time = \"11s\"", "max_events = 2"] {
            let rest = format!("{message}[limits]\n{limits}\non_limit = \"stop\"\n");
            let scenario = file("direct", "3s", &rest);
            let (_, step_instead) = settling(&scenario);
            assert!(step_instead, "{limits}");
            let outcome = run(&scenario, Recorder::Off).unwrap();
            let stepped = run(&scenario, Recorder::All).unwrap();
            assert_eq!(outcome.totals, stepped.totals, "{limits}");
            assert_eq!(outcome.totals.acked, 0, "{limits}");
        }
    }

    /// Ends in queues (one per duration, up to four) and in the heap (the
    /// rest) count as in flight until their instant has passed.
    #[test]
    fn settled_ends_are_in_flight_until_their_instant() {
        let mut ends = super::EndsAhead::default();
        // Durations 5, 7, 1, 2 take the four queues; 9 and 3 the heap.
        for (start, end) in [(0, 5), (0, 7), (1, 2), (1, 3), (2, 11), (2, 5), (3, 8)] {
            ends.push(start, end);
        }
        assert_eq!(ends.in_flight_after(1), 7);
        assert_eq!(ends.in_flight_after(2), 6);
        assert_eq!(ends.in_flight_after(5), 3);
        assert_eq!(ends.in_flight_after(7), 2);
        assert_eq!(ends.in_flight_after(8), 1);
        assert_eq!(ends.in_flight_after(11), 0);
    }

    /// The ends that have happened are given back: a long run of writes
    /// 10 ms long, one a millisecond, keeps the 10 in flight and no more.
    #[test]
    fn only_the_ends_in_flight_are_kept() {
        let mut ends = super::EndsAhead::default();
        for start in 0..100_000 {
            ends.push(start, start + 10);
            let in_flight = ends.in_flight_after(start);
            assert_eq!(in_flight, (start + 1).min(10), "after {start}");
            assert_eq!(ends.ends.len() as u64, in_flight, "after {start}");
        }
    }
}
