//! The runs of the queue world: to its end ([`run`], settling what every
//! part allows, and again step by step when a limit falls between a
//! settled start and its end), with nothing settled ([`run_stepped`]),
//! with a census ([`run_with_census`]) or to a modeled time
//! ([`run_until`]); and [`Stepper`], the same run one event at a time for
//! a caller that watches it between events (the queue world's
//! `sim::World`). Each is a loop over `Engine::step` (`step.rs`).

use super::census::CensusTaker;
use super::{Engine, LimitReached, Outcome, Recorder};
use crate::model::{Millis, Scenario};

/// Runs a scenario to its end.
pub fn run(scenario: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut engine = Engine::new(scenario, recorder.clone());
    engine.settle_from_now(true);
    let ended = engine.run_to_end();
    if engine.core.must_step_instead(&ended) {
        engine = Engine::new(scenario, recorder);
        engine.run_to_end()?;
    } else {
        ended?;
    }
    Ok(engine.finish(None))
}

/// Runs a scenario to its end stepping through every delivery: nothing is
/// settled at its start (`settling.rs`). The outcome is [`run`]'s; the
/// property tests hold every shortcut to it.
pub fn run_stepped(scenario: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut engine = Engine::new(scenario, recorder);
    engine.consumer.settling = super::settling::Settling::NOTHING;
    engine.run_to_end()?;
    Ok(engine.finish(None))
}

/// Runs a scenario to its end and also takes its `Census`: how many
/// messages are in each state over modeled time, at any scale.
pub fn run_with_census(scenario: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut engine = Engine::new(scenario, recorder);
    let mut census = CensusTaker::new(scenario.message_count());
    for outage in &scenario.outages {
        census.mark(outage.from, "outage starts");
        census.mark(outage.from.saturating_add(outage.duration), "outage ends");
    }
    engine.take_census(census);
    if engine.asks_questions() {
        engine.run_answering()?;
    } else {
        while engine.step()? {}
    }
    Ok(engine.finish(None))
}

/// Runs a scenario up to and including modeled time `t`.
pub fn run_until(
    scenario: &Scenario,
    recorder: Recorder,
    t: Millis,
) -> Result<Outcome, LimitReached> {
    let mut stepper = Stepper::new(scenario, recorder);
    crate::sim::run_until(&mut stepper, Some(t))?;
    Ok(stepper.finish(t))
}

/// A run of the queue world taken one event at a time, for a caller that
/// watches or stops it between events: [`run`] and [`run_until`] are
/// loops over what it does. It gives exactly their outcomes (the
/// questions answered in passing included).
#[derive(Clone)]
pub struct Stepper<'s> {
    pub(super) engine: Engine<'s>,
    /// A step said the run has ended.
    ended: bool,
}

impl<'s> Stepper<'s> {
    pub fn new(scenario: &'s Scenario, recorder: Recorder) -> Self {
        Stepper {
            engine: Engine::new(scenario, recorder),
            ended: false,
        }
    }

    /// The modeled time of the next event (or inspection); `None` when
    /// the run has nothing left to do, or stopped at a limit.
    pub fn next_time(&mut self) -> Option<Millis> {
        if self.ended {
            return None;
        }
        let next = self.engine.next_time();
        self.engine.answer_passed_questions(next);
        next
    }

    /// Processes one event: false when the run has ended (drained, or
    /// stopped at a limit under `on_limit = "stop"`); an error when a limit
    /// fails it.
    pub fn step(&mut self) -> Result<bool, LimitReached> {
        if self.next_time().is_none() {
            // Ended, or nothing left: what `Engine::step` says then.
            return Ok(false);
        }
        let more = self.engine.step()?;
        self.ended = !more;
        Ok(more)
    }

    /// The outcome: of the whole run when it has ended, else as of
    /// `as_of` (not before now; the states' ages and the measures taken
    /// then), as [`run_until`] of that time gives it.
    pub fn finish(mut self, as_of: Millis) -> Outcome {
        let as_of = as_of.max(self.engine.core.clock.now);
        let done = self.ended || self.next_time().is_none();
        self.engine.finish(if done { None } else { Some(as_of) })
    }
}

/// The outcomes of one run stopped at times asked for in order, each
/// exactly as [`run_until`] of that time gives it: the run is stepped
/// forward and copied at each time, so that a test comparing a reading
/// with the run at every instant costs one run, not one per instant.
/// Every 64th time is also checked against [`run_until`] from the start.
#[cfg(test)]
pub(crate) struct Stops<'s> {
    scenario: &'s Scenario,
    stepper: Stepper<'s>,
    last: Millis,
    asked: usize,
}

#[cfg(test)]
impl<'s> Stops<'s> {
    pub(crate) fn new(scenario: &'s Scenario) -> Self {
        Stops {
            scenario,
            stepper: Stepper::new(scenario, Recorder::Off),
            last: 0,
            asked: 0,
        }
    }

    /// The run stopped at `t`, no earlier than the time asked before.
    pub(crate) fn at(&mut self, t: Millis) -> Outcome {
        assert!(t >= self.last, "times are asked for in order");
        self.last = t;
        crate::sim::run_until(&mut self.stepper, Some(t)).expect("the run finishes");
        let at = self.stepper.clone().finish(t);
        if self.asked.is_multiple_of(64) {
            let fresh = run_until(self.scenario, Recorder::Off, t).expect("the run finishes");
            assert_eq!(
                format!("{:?}", fresh.messages),
                format!("{:?}", at.messages),
                "the run stepped to {t} differs from a run to {t}"
            );
        }
        self.asked += 1;
        at
    }
}

/// The queue world on the scheduling core.
impl crate::sim::World for Stepper<'_> {
    type Stop = LimitReached;

    fn next_time(&mut self) -> Option<Millis> {
        Stepper::next_time(self)
    }

    fn step(&mut self) -> Result<bool, LimitReached> {
        Stepper::step(self)
    }
}
