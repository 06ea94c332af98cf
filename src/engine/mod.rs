//! The event engine: modeled time, one seeded RNG, the delivery rules of
//! docs/model.md sections 3-6. It knows nothing of files or terminals; it turns a
//! [`Scenario`] into an [`Outcome`].
//!
//! The parts, one module each:
//! - [`clock`]: modeled time, the event count and the limits;
//! - the broker side ([`broker`]): the source queue ([`queue`], fed by
//!   [`arrivals`]), the quarantine and the deduplication store ([`dedup`]);
//! - the consumer side ([`consumer`]): one delivery of a taken message, and
//!   the retry delay after a failure ([`backoff`]);
//! - the [`operator`]: drains, inspections, expiry, repair, redrive, purge;
//! - the measures: [`Totals`] (defined in `model::measure`) and the
//!   [`census`];
//! - the [`recorder`]: transitions, the ledger and the state after every
//!   change, kept only when something will read them.
//!
//! One event is one call of [`Engine::step`]: the clock moves to the next
//! due time, the queue gives the message due then (or the operator
//! inspects), and the consumer decides its delivery.

mod arrivals;
mod backoff;
mod broker;
mod census;
mod clock;
mod consumer;
mod dedup;
mod operator;
mod outcome;
mod queue;
mod recorder;
mod state;
mod transition;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use crate::model::{STATE_COUNT, Totals};
pub use census::{CENSUS_SAMPLES, Census, census_step_after};
pub use outcome::{Limit, LimitReached, Outcome};
pub use recorder::{FULL_TRANSCRIPT_MESSAGES, HISTORY_MESSAGES, Recorder, StateChange};
pub use state::MessageState;
pub use transition::{Detail, Effect, Transition};

use crate::model::{MessageIndex, Millis, Scenario, State};
use broker::Broker;
use census::CensusTaker;
use clock::Clock;
use operator::Operator;
use recorder::Recording;

/// Runs a scenario to its end.
pub fn run(scenario: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut engine = Engine::new(scenario, recorder);
    while engine.step()? {}
    Ok(engine.finish(None))
}

/// Runs a scenario to its end and also takes its [`Census`]: how many
/// messages are in each state over modeled time, at any scale.
pub fn run_with_census(scenario: &Scenario, recorder: Recorder) -> Result<Outcome, LimitReached> {
    let mut engine = Engine::new(scenario, recorder);
    engine.measures.census = Some(CensusTaker::new(scenario.message_count()));
    while engine.step()? {}
    Ok(engine.finish(None))
}

/// Runs a scenario up to and including modeled time `t`.
pub fn run_until(
    scenario: &Scenario,
    recorder: Recorder,
    t: Millis,
) -> Result<Outcome, LimitReached> {
    let mut engine = Engine::new(scenario, recorder);
    while engine.next_time().is_some_and(|next| next <= t) {
        engine.step()?;
    }
    let done = engine.next_time().is_none();
    Ok(engine.finish(if done { None } else { Some(t) }))
}

/// The run's measures as they accumulate.
struct Measures {
    totals: Totals,
    /// Effects committed per intent (duplicated effects are the surplus).
    effects_per_intent: Vec<u32>,
    /// Taken by [`run_with_census`].
    census: Option<CensusTaker>,
}

struct Engine<'s> {
    scenario: &'s Scenario,
    clock: Clock,
    messages: Vec<MessageState>,
    broker: Broker,
    /// The scenario's one generator; drawn in event order.
    rng: ChaCha8Rng,
    operator: Operator,
    measures: Measures,
    recording: Recording,
}

impl<'s> Engine<'s> {
    fn new(scenario: &'s Scenario, recorder: Recorder) -> Self {
        let count = scenario.message_count();
        Engine {
            scenario,
            clock: Clock::default(),
            messages: vec![MessageState::new(); count as usize],
            broker: Broker::new(scenario),
            rng: ChaCha8Rng::seed_from_u64(scenario.seed),
            operator: Operator::default(),
            measures: Measures {
                totals: Totals {
                    messages: count,
                    ..Totals::default()
                },
                effects_per_intent: vec![0; scenario.intent_count()],
                census: None,
            },
            recording: Recording::new(recorder, count),
        }
    }

    /// Time of the next event, if any (settling a drain first).
    fn next_time(&mut self) -> Option<Millis> {
        match self.broker.queue.next_due() {
            Some(t) => Some(t),
            None => {
                self.settle_drain();
                self.operator.inspection_due
            }
        }
    }

    /// Processes one event; false when the run has ended.
    fn step(&mut self) -> Result<bool, LimitReached> {
        let Some(t) = self.next_time() else {
            return Ok(false);
        };
        self.clock
            .advance(t, &self.scenario.limits)
            .map_err(|limit| self.limit_reached(limit))?;
        if let Some(census) = &mut self.measures.census {
            census.advance(t);
        }
        match self.broker.queue.take(t) {
            Some(taken) => {
                if taken.arrival {
                    self.set_state(taken.message, State::Pending);
                }
                self.deliver(taken.message);
                self.state_changed(taken.message);
            }
            None => self.inspect(),
        }
        Ok(true)
    }

    fn limit_reached(&self, limit: Limit) -> LimitReached {
        LimitReached {
            limit,
            at: self.clock.now,
            deliveries: self.measures.totals.deliveries,
            pending: self.broker.queue.pending(),
        }
    }

    /// A message changes state: keeps the census's counts current.
    #[inline]
    fn set_state(&mut self, m: MessageIndex, to: State) {
        let message = &mut self.messages[m as usize];
        if let Some(census) = &mut self.measures.census {
            census.moved(message.state, to);
        }
        message.state = to;
    }

    /// Records a transition now.
    #[inline]
    fn record(&mut self, message: Option<MessageIndex>, detail: Detail) {
        self.recording.transition(self.clock.now, message, detail);
    }

    /// Records message `m`'s state after an event changed it.
    #[inline]
    fn state_changed(&mut self, m: MessageIndex) {
        self.recording
            .state_change(self.clock.now, m, &self.messages[m as usize]);
    }

    fn finish(self, as_of: Option<Millis>) -> Outcome {
        let end = self.clock.quiet_since();
        let mut totals = self.measures.totals;
        totals.quarantined = self.broker.depth();
        totals.final_dlq_depth = self.broker.depth();
        totals.drain_time = self.operator.drains.first().copied().unwrap_or(end);
        totals.end_time = end;
        let census = self
            .measures
            .census
            .map(|c| c.finish(self.clock.now.max(end)));
        Outcome {
            totals,
            messages: self.messages,
            transitions: self.recording.transitions,
            ledger: self.recording.ledger,
            state_changes: self.recording.state_changes,
            recorder: self.recording.recorder,
            drains: self.operator.drains,
            as_of: as_of.unwrap_or(end),
            finished: as_of.is_none(),
            census,
        }
    }
}

#[cfg(test)]
mod tests;
