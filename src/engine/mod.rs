//! The event engine: modeled time, one seeded RNG, the delivery rules of
//! docs/model.md sections 3-6. It knows nothing of files or terminals; it turns a
//! [`Scenario`] into an [`Outcome`].
//!
//! The parts, one module each:
//! - `clock`: modeled time, the event count and the limits;
//! - the broker side (`broker`): the source queue (`queue`, fed by
//!   `arrivals`), the quarantine and the deduplication store (`dedup`);
//! - the consumer side (`consumer`): one delivery of a taken message, and
//!   the retry delay after a failure (`backoff`);
//! - the `operator`: drains, inspections, expiry, repair, redrive, purge;
//! - the sinks effects reach (`sinks`, section 19) and, with `[write]`,
//!   one write to several sinks whose calls can fail (`write`, section 24);
//! - the measures: [`Totals`] (defined in `model::measure`) and the
//!   `census`;
//! - the `recorder`: transitions, the ledger and the state after every
//!   change, kept only when something will read them; a [`Replay`] plays
//!   a run again to read its transcript without keeping it.
//!
//! One event is one call of `Engine::step` (`step`, with the loops
//! that run a scenario): the clock moves to the next due time, the queue
//! gives the message due then (or the operator inspects), and the
//! consumer decides its delivery.

mod ack_pending;
mod alarms;
mod arrivals;
mod backoff;
mod broker;
mod calls;
mod census;
mod clock;
mod consumer;
mod dedup;
mod intents;
mod jetstream;
mod log;
mod log_lanes;
mod messages;
mod one_write;
mod operator;
mod outages;
mod outcome;
mod pages;
mod quarantine;
mod queue;
mod radix;
mod ready;
mod recorder;
mod replay;
mod settled;
mod sinks;
mod state;
mod step;
mod tracked;
mod traffic;
mod transition;
mod watch;
mod write;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use crate::model::{STATE_COUNT, Totals};
pub use alarms::{ALARM_CHANGES_KEPT, AlarmChange, AlarmRecord};
pub use calls::{CALL_SERIES_ROWS, CallRow, CallSeries};
pub use census::{CENSUS_MARKS, CENSUS_SAMPLES, Census, Mark, census_step_after};
pub use log::{LogOutcome, RestartRecord};
pub use log_lanes::{LANE_PARTITIONS, LANE_SAMPLES, LaneSample};
pub use messages::Messages;
pub use operator::{CANARIES_LISTED, CanaryRecord};
pub use outcome::{Limit, LimitReached, Outcome};
pub use recorder::{
    FULL_TRANSCRIPT_MESSAGES, HISTORY_MESSAGES, Recorder, StateChange, TRANSITIONS_KEPT,
};
pub use replay::Replay;
pub use state::MessageState;
#[cfg(test)]
pub(crate) use step::Stops;
pub use step::{Stepper, run, run_until, run_with_census};
pub use tracked::EXTRA_DELIVERIES_IN_FLIGHT;
pub use traffic::{Draws, Offsets};
pub use transition::{Detail, Effect, Lapsed, Transition};
pub use watch::{EVENT_TIMES_KEPT, EventSeen};
pub use write::{
    CallKind, LOCK_SPANS_KEPT, LockSpan, Reply, TRACE_CALLS_KEPT, TracedCall, WRITE_NOTES_KEPT,
    WRITE_TRACES_KEPT, WriteNote, WriteTrace,
};

use crate::model::{IntentIndex, MessageIndex, Millis, Scenario, State, StoppedBy};
use broker::Broker;
use calls::Calls;
use census::CensusTaker;
use clock::Clock;
use intents::IntentSet;
use operator::Operator;
use ready::ReadySet;
use recorder::Recording;

/// The run's measures as they accumulate.
#[derive(Clone)]
struct Measures {
    totals: Totals,
    /// The intents with an effect committed (any later effect of one is
    /// a duplicate).
    intents_with_effects: IntentSet,
    /// Taken by [`run_with_census`].
    census: Option<CensusTaker>,
    /// Retries scheduled.
    retries: u64,
}

impl Measures {
    /// An effect of `intent` commits: counted, and counted as a duplicate
    /// when the intent has one already. Returns its number.
    #[inline(always)]
    fn count_effect(&mut self, intent: IntentIndex) -> u64 {
        if self.intents_with_effects.insert(intent) {
            self.totals.duplicated_effects += 1;
        }
        self.totals.effects += 1;
        self.totals.effects
    }
}

#[derive(Clone)]
struct Engine<'s> {
    scenario: &'s Scenario,
    clock: Clock,
    messages: Messages,
    broker: Broker,
    /// Ready messages not yet taken, and which may be taken.
    ready: ReadySet,
    /// nats-jetstream's MaxAckPending, when it can bind: messages held in
    /// the stream while as many are pending.
    ack_pending: Option<ack_pending::AckPending>,
    /// Unlimited workers and no ordering: a ready message is taken at
    /// once, and the ready set is never used.
    direct: bool,
    /// Whether a first delivery without faults outside an outage can be
    /// settled in one write ([`Engine::one_write_settle`]): deliveries
    /// are direct and untracked, no call can be refused, no sink keeps
    /// rows, and no census, transcript, ledger or watch reads the steps in
    /// between.
    one_write: bool,
    /// Whether a write delivery that acks is settled at its start
    /// ([`Engine::settle_write`]); only [`run`] turns it on.
    settles_writes: bool,
    /// The ends of settled deliveries still in flight.
    settled: settled::SettledEnds,
    /// Workers delivering now; `None`: unlimited.
    busy_workers: u64,
    /// Deliveries in flight (with a service time).
    in_flight: u64,
    service_time: Millis,
    calls: Calls,
    outages: outages::Outages,
    /// Poisson arrivals and each generated message's mix kind.
    draws: Draws,
    /// Per message, time ready but not taken; only with workers,
    /// ordering or a MaxAckPending that can bind (otherwise nothing ever
    /// waits).
    queue_waits: Vec<Millis>,
    /// Per message, decorrelated jitter's previous delay in its cycle;
    /// only with decorrelated jitter.
    prev_delays: Vec<Millis>,
    /// The jitter's generator, stream 0 of the scenario's seed; drawn in
    /// event order.
    rng: ChaCha8Rng,
    operator: Operator,
    measures: Measures,
    recording: Recording,
    alarms: alarms::Alarms,
    stopped_by: StoppedBy,
    /// Whether deliveries are tracked one by one (the file uses sections
    /// 17-22).
    tracked: bool,
    deliveries: tracked::Deliveries,
    /// The most deliveries in flight at once the run keeps (sections
    /// 17-22): one per message, and [`tracked::EXTRA_DELIVERIES_IN_FLIGHT`].
    in_flight_cap: u64,
    sinks: sinks::Sinks,
    /// `[log]`: the partitions, positions, checkpoints and restarts.
    log: Option<Box<log::LogState>>,
    /// `[write]` and the sinks' calls (section 24).
    writes: Option<write::Writes>,
    /// The `at` of the scenario's questions not yet passed, earliest last
    /// (see `step::Engine::answer_passed_questions`), and the answers read.
    question_times: Vec<Millis>,
    answers: Vec<Option<crate::model::Value>>,
}

impl<'s> Engine<'s> {
    fn new(scenario: &'s Scenario, recorder: Recorder) -> Self {
        let count = scenario.message_count();
        let draws = traffic::draw(scenario);
        let flow = &scenario.flow;
        let waits = flow.workers.is_some() || flow.ordering != crate::model::Ordering::None;
        let decorrelated = matches!(
            scenario.delivery.retry,
            crate::model::Retry::Backoff {
                jitter: crate::model::Jitter::Decorrelated,
                ..
            }
        );
        let per_message = |wanted: bool| pages::zeroed(if wanted { count as usize } else { 0 });
        let ack_pending = ack_pending::AckPending::new(scenario);
        let mut engine = Engine {
            scenario,
            clock: Clock::default(),
            messages: Messages::new(count as usize),
            broker: Broker::new(scenario, draws.offsets.clone()),
            ready: ReadySet::new(scenario),
            queue_waits: per_message(waits || ack_pending.is_some()),
            ack_pending,
            direct: !waits,
            one_write: false,
            settles_writes: false,
            settled: settled::SettledEnds::default(),
            busy_workers: 0,
            in_flight: 0,
            service_time: match &scenario.log {
                Some(log) => log.service_time,
                None => scenario.flow.workers.map_or(0, |w| w.service_time),
            },
            calls: Calls::new(scenario),
            outages: outages::Outages::new(&scenario.outages),
            draws,
            prev_delays: per_message(decorrelated),
            rng: ChaCha8Rng::seed_from_u64(scenario.seed),
            operator: Operator {
                enqueued: match scenario.guarantees.profile.retention_from_enqueue() {
                    true => vec![Millis::MAX; count as usize],
                    false => Vec::new(),
                },
                ..Operator::default()
            },
            measures: Measures {
                totals: Totals {
                    messages: count,
                    ..Totals::default()
                },
                intents_with_effects: IntentSet::new(scenario.intent_count()),
                census: None,
                retries: 0,
            },
            recording: Recording::new(recorder, count, watch::Watches::new(scenario)),
            alarms: alarms::Alarms::new(scenario),
            stopped_by: StoppedBy::Drained,
            tracked: scenario.guarantees.extended || scenario.write.is_some(),
            deliveries: tracked::Deliveries::new(scenario),
            in_flight_cap: scenario
                .message_count()
                .saturating_add(tracked::EXTRA_DELIVERIES_IN_FLIGHT),
            sinks: sinks::Sinks::new(scenario),
            log: scenario
                .log
                .as_ref()
                .map(|log| Box::new(log::LogState::new(scenario, log))),
            writes: write::Writes::new(scenario),
            question_times: {
                let mut times: Vec<Millis> =
                    scenario.questions.iter().filter_map(|q| q.at).collect();
                times.sort_unstable_by(|a, b| b.cmp(a));
                times.dedup();
                times
            },
            answers: vec![None; scenario.questions.len()],
        };
        // A log's record settles in one write too, unless a transaction
        // holds its sink writes (exactly-once) or a service time keeps its
        // partition busy.
        let log_allows = scenario.log.as_ref().is_none_or(|l| {
            l.guarantee != crate::model::Guarantee::ExactlyOnce && l.service_time == 0
        });
        engine.one_write = engine.direct
            && log_allows
            && engine.ack_pending.is_none()
            && !engine.tracked
            && !engine.calls.limited()
            && !engine.sinks.keeps_rows()
            && engine.recording.quiet();
        engine
    }

    /// Takes the census from now on (which reads every state change).
    fn take_census(&mut self, census: CensusTaker) {
        self.measures.census = Some(census);
        self.one_write = false;
    }

    /// Message `m` becomes ready now. Without workers or ordering it is
    /// taken at once.
    #[inline(always)]
    pub(super) fn becomes_ready(&mut self, m: MessageIndex, sequence: u64) {
        if let Some(window) = &mut self.ack_pending
            && !window.admit(m, self.clock.now)
        {
            return self.held(m);
        }
        if self.log.is_some() {
            if self.one_write && sequence < self.scenario.message_count() && self.log_one_write(m) {
                return;
            }
            return self.log_ready(m, sequence);
        }
        if self.one_write && self.one_write_settle(m).is_some() {
            return;
        }
        self.becomes_ready_in_full(m, sequence);
    }

    /// Message `m` becomes ready now, step by step.
    #[inline(always)]
    fn becomes_ready_in_full(&mut self, m: MessageIndex, sequence: u64) {
        self.set_state(m, State::Ready);
        if self.direct {
            self.start_delivery(m);
        } else {
            if self.ready.requeues_in_place() && self.messages.cycle_receives(m) > 0 {
                // A delayed retry returns to its original position.
                self.ready.add_original(m, self.clock.now);
            } else {
                self.ready.add(m, self.clock.now, sequence);
            }
            self.state_changed(m);
        }
    }

    /// Message `m` is ready but held in the stream: as many messages as
    /// MaxAckPending allows are pending. It counts in the queue depth.
    #[cold]
    fn held(&mut self, m: MessageIndex) {
        self.set_state(m, State::Ready);
        self.ready.depth += 1;
        self.state_changed(m);
    }

    /// Under MaxAckPending, `m` left its slot: the held messages that take
    /// the free slots become ready behind this instant's events, in
    /// publish order.
    #[cold]
    fn release_slots(&mut self, m: MessageIndex) {
        let now = self.clock.now;
        let Some(window) = &mut self.ack_pending else {
            return;
        };
        window.leave(m);
        while let Some((next, since)) = window.take_held() {
            self.ready.depth -= 1;
            if let Some(total) = self.queue_waits.get_mut(next as usize) {
                *total = total.saturating_add(now - since);
            }
            self.broker.queue.put_back(now, now, next);
        }
    }

    /// Taking (section 12): while a worker is free, it takes the eligible
    /// message that became ready first.
    #[inline]
    fn take_ready(&mut self) {
        if self.direct {
            // Nothing ever waits in the ready set.
            return;
        }
        let limit = self.scenario.flow.workers.map(|w| w.count);
        while limit.is_none_or(|count| self.busy_workers < count) {
            let Some((m, ready_at)) = self.ready.take() else {
                break;
            };
            let wait = self.clock.now.saturating_sub(ready_at);
            if let Some(total) = self.queue_waits.get_mut(m as usize) {
                *total = total.saturating_add(wait);
            }
            if limit.is_some() {
                self.busy_workers += 1;
            }
            self.start_delivery(m);
        }
    }

    /// A message changes state: keeps the census's counts current.
    #[inline]
    fn set_state(&mut self, m: MessageIndex, to: State) {
        if let Some(census) = &mut self.measures.census {
            census.moved(self.messages.state(m), to);
            let was = self.messages.has_arrived(m);
            self.messages.set_state(m, to);
            census.arrival_changed(was, self.messages.has_arrived(m));
            return;
        }
        self.messages.set_state(m, to);
    }

    /// Records a transition now.
    #[inline]
    fn record(&mut self, message: Option<MessageIndex>, detail: Detail) {
        self.recording
            .transition(self.clock.now, message, detail, &self.messages);
    }

    /// Records message `m`'s state after an event changed it.
    #[inline]
    fn state_changed(&mut self, m: MessageIndex) {
        self.recording
            .state_change(self.clock.now, m, &self.messages);
    }

    /// The run's last instant is over: its measures, and the alarms up to
    /// the end. Returns the end.
    fn close(&mut self) -> Millis {
        self.observe_instant();
        let mut end = self.clock.end();
        // An outbox run ends when no relay call is pending (decision 26.14).
        if let Some(relay) = self.writes.as_ref().and_then(|w| w.relay_end())
            && self.stopped_by == StoppedBy::Drained
        {
            end = end.max(relay);
        }
        self.observe_alarms(end);
        if self.log.is_some() {
            self.log_close(end);
        }
        end
    }

    /// Leaves the ready set and, in a log, moves its partition on: `m` is
    /// acked, quarantined or dropped.
    #[inline(always)]
    fn leaves(&mut self, m: MessageIndex) {
        self.ready.leave(m);
        if self.ack_pending.is_some() {
            self.release_slots(m);
        }
        if self.log.is_some() {
            self.record_done(m);
        }
    }

    fn finish(mut self, as_of: Option<Millis>) -> Outcome {
        let end = self.close();
        let mut totals = self.measures.totals;
        if !self.tracked && totals.deliveries > 0 {
            // Without a visibility timeout a message has one delivery in
            // flight at a time.
            totals.concurrent_deliveries = 1;
        }
        totals.quarantined = self.broker.depth();
        totals.final_dlq_depth = self.broker.depth();
        totals.drain_time = self.operator.drains.first().copied().unwrap_or(end);
        totals.end_time = end;
        let log = self.log_outcome();
        if let Some(log) = &log {
            totals.drain_time = log.drain_time;
        }
        debug_assert_eq!(self.broker.queue.arrived(), self.messages.arrived());
        debug_assert_eq!(
            totals.acked,
            (0..self.messages.len() as MessageIndex)
                .filter(|&m| self.messages.state(m) == State::Acked)
                .count() as u64
        );
        debug_assert_eq!(
            (totals.quarantined, totals.dropped),
            (0..self.messages.len() as MessageIndex).fold((0, 0), |(q, d), m| {
                match self.messages.state(m) {
                    State::Quarantined => (q + 1, d),
                    State::Dropped => (q, d + 1),
                    _ => (q, d),
                }
            })
        );
        outcome::flow_measures(self.scenario, &mut totals, &self.messages, &self.draws);
        totals.max_queue_wait = self.queue_waits.iter().copied().max().unwrap_or(0);
        totals.stopped_by = self.stopped_by as u64;
        let kind_counts = outcome::kind_counts(self.scenario, &self.messages, &self.draws);
        let calls = self.calls.finish(&mut totals);
        let (sinks, sink_lags) = match &mut self.writes {
            Some(writes) => writes.finish(self.scenario, &self.messages, end, &mut totals),
            None => {
                let visible = self.log.as_deref().and_then(|l| l.visible());
                let sinks = self
                    .sinks
                    .finish(self.scenario, &totals, &self.messages, visible);
                let signed = |v: [u64; 4]| v.map(|n| n.min(i64::MAX as u64) as i64);
                (sinks.into_iter().map(signed).collect(), Vec::new())
            }
        };
        let write_notes = self.writes.as_mut().map_or(Vec::new(), |w| w.take_notes());
        let (write_traces, lock_spans) = self
            .writes
            .as_mut()
            .map_or((Vec::new(), Vec::new()), |w| w.take_traces());
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
            transitions_dropped: self.recording.dropped,
            history_complete: self.recording.history_complete,
            events_seen: self.recording.watches.finish(),
            recorder: self.recording.recorder,
            drains: self.operator.drains,
            as_of: as_of.unwrap_or(end),
            finished: as_of.is_none(),
            census,
            draws: self.draws,
            queue_waits: self.queue_waits,
            retries: self.measures.retries,
            arrived: self.broker.queue.arrived(),
            alarms: self.alarms.records,
            calls,
            kind_counts,
            sinks,
            sink_lags,
            write_notes,
            write_traces,
            lock_spans,
            canaries: self.operator.canary_records,
            log,
            answers: self.answers,
        }
    }
}

#[cfg(test)]
mod tests;
