//! The queue world: the delivery rules of docs/model.md (sections 1-24
//! and 26-28 but the dataflow's 25) on the scheduling core of `sim/`. It
//! knows nothing of files or terminals; it turns a [`Scenario`] into an
//! [`Outcome`].
//!
//! `Engine` is a small core and the parts that own their state (docs/
//! architecture.md, "The engine", has the table and the glossary). The
//! core (`Core`) owns the scenario, time, the schedule, the one seeded
//! generator, and what every part reads: each message's record
//! (`messages`, `state`), the measures ([`Totals`], defined in
//! `model::measure`, and the `census`) and the observers (the `recorder`:
//! transitions, the ledger and the state after every change, kept only
//! when something will read them, a [`Replay`] playing a run again to read
//! its transcript without keeping it; and the questions asked of a time).
//! The parts:
//! - the source (`source`): a queue's traffic (`arrivals`, `traffic`), or
//!   a partitioned log (`log`);
//! - the consumer (`consumer`): workers, the ready set (`ready`),
//!   MaxAckPending (`ack_pending`), deliveries with a receipt each
//!   (`receipts`), the retry delay (`backoff`), the nats-jetstream
//!   profile's failures (`jetstream`), and what the run settles at a
//!   delivery's start (`settling`);
//! - the quarantine (`quarantine`) and the deduplication store (`dedup`);
//! - the downstream: capacity (`calls`), outages (`outages`), the sinks
//!   (`sinks`, section 19) and one write to several sinks (`write`,
//!   section 24);
//! - the `operator`: drains, inspections, expiry, repair, redrive, purge;
//! - the `alarms`.
//!
//! A part's rules are its own methods, taking the core and any other part
//! they touch as explicit borrows; what it cannot do alone it returns.
//! `Engine`'s own methods, the order in which parts are asked, are in
//! three files: this one (the world's start and end), `step` (one event
//! is one call of `Engine::step`: the clock moves to the next due time,
//! the schedule gives what is due then, or the operator inspects, and the
//! part it belongs to takes it) and `delivery` (a delivery across the
//! parts). The loops that run a scenario, and the public step by step,
//! are in `run`.

mod ack_pending;
mod alarms;
mod arrivals;
mod backoff;
mod calls;
mod census;
mod clock;
mod consumer;
mod dedup;
mod delivery;
mod intents;
mod jetstream;
mod log;
mod messages;
mod operator;
mod outages;
mod outcome;
mod pages;
mod quarantine;
mod ready;
mod receipts;
mod recorder;
mod replay;
mod run;
mod schedule;
mod settling;
mod sinks;
mod source;
mod state;
mod step;
mod traffic;
mod transition;
mod watch;
mod write;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use crate::model::{STATE_COUNT, Totals};
pub use alarms::{ALARM_CHANGES_KEPT, AlarmChange, AlarmRecord};
pub use calls::{CALL_SERIES_ROWS, CallRow, CallSeries};
pub use census::{
    CENSUS_MARKS, CENSUS_SAMPLES, Census, Mark, PANE_SAMPLE_ROWS, PaneRow, Panes, Progress,
    QUARANTINE_PANE, SOURCE_PANE, census_step_after,
};
pub use log::{LogOutcome, RestartRecord};
pub use log::{OFFSET_SAMPLES, OffsetSample, SAMPLED_PARTITIONS};
pub use messages::Messages;
pub use operator::{CANARIES_LISTED, CanaryRecord};
pub use outcome::{DeadLetters, FirstDeliveries, Limit, LimitReached, Outcome};
pub use receipts::EXTRA_DELIVERIES_IN_FLIGHT;
pub use recorder::{
    FULL_TRANSCRIPT_MESSAGES, HISTORY_MESSAGES, Recorder, StateChange, TRANSITIONS_KEPT,
};
pub use replay::Replay;
#[cfg(test)]
pub(crate) use run::Stops;
pub use run::{Stepper, run, run_stepped, run_until, run_with_census};
pub use state::MessageState;
pub use traffic::{Draws, Offsets};
pub use transition::{Detail, Effect, Lapsed, Record, Transition};
pub use watch::{EVENT_TIMES_KEPT, EventSeen};
pub use write::{
    CallKind, LOCK_SPANS_KEPT, LockSpan, Reply, TRACE_CALLS_KEPT, TracedCall, WRITE_NOTES_KEPT,
    WRITE_TRACES_KEPT, WriteNote, WriteTrace,
};

use crate::model::{IntentIndex, MessageIndex, Millis, Scenario, State, StoppedBy};
use calls::Calls;
use census::CensusTaker;
use clock::Clock;
use consumer::Consumer;
use dedup::DedupStore;
use intents::IntentSet;
use operator::Operator;
use quarantine::Quarantine;
use recorder::Recording;
use schedule::Schedule;
use source::Source;

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

/// The queue world: a core that owns time, order, randomness and what
/// every part reads, and the parts that own their state
/// (docs/architecture.md, "The queue world").
#[derive(Clone)]
struct Engine<'s> {
    core: Core<'s>,
    /// Where messages come from: the queue's traffic, or the log.
    source: Source,
    consumer: Consumer,
    quarantine: Quarantine,
    /// The deduplication store.
    store: DedupStore,
    /// What a delivery's handler calls: its capacity, outages and sinks.
    downstream: Downstream,
    operator: Operator,
    alarms: alarms::Alarms,
}

/// What every part shares: the scenario, modeled time, the schedule of
/// what is due, the one seeded generator, why the run stopped, each
/// message's state, the measures and the observers. A part's own rules
/// take it by `&mut` beside their own state (explicit borrows, no
/// `Engine`).
#[derive(Clone)]
struct Core<'s> {
    scenario: &'s Scenario,
    clock: Clock,
    /// Arrivals, retries, ends of deliveries and visibility timeouts.
    schedule: Schedule,
    /// The jitter's generator, stream 0 of the scenario's seed; drawn in
    /// event order.
    rng: ChaCha8Rng,
    stopped_by: StoppedBy,
    messages: Messages,
    measures: Measures,
    observers: Observers,
}

/// What a delivery's handler reaches.
#[derive(Clone)]
struct Downstream {
    calls: Calls,
    outages: outages::Outages,
    sinks: sinks::Sinks,
    /// `[write]` and the sinks' calls (section 24).
    writes: Option<write::Writes>,
}

impl Downstream {
    /// Whether only an outbox relay's calls are scheduled (beside `void`
    /// visibility timers that will do nothing): they are not the
    /// consumer's, so a queue with nothing else to do has drained
    /// (decision 26.14).
    fn relay_only(&self, schedule: &mut Schedule, void: usize) -> bool {
        schedule.arrival_due().is_none()
            && (self.writes.as_ref())
                .is_some_and(|w| w.relay_calls_scheduled() + void == schedule.scheduled_len())
    }

    /// The outbox's dead letters so far, each its time (for the alarms).
    fn outbox_dead_letters(&self) -> &[u64] {
        self.writes.as_ref().map_or(&[], |w| w.dead_letters())
    }
}

/// What reads the run as it goes: the recording, and the questions asked
/// of a time before the end.
#[derive(Clone)]
struct Observers {
    recording: Recording,
    /// The `at` of the scenario's questions not yet passed, earliest last
    /// (see `step::Engine::answer_passed_questions`), and the answers read.
    question_times: Vec<Millis>,
    answers: Vec<Option<crate::model::Value>>,
}

/// Whether an expectation or a question reads a dead-letter envelope.
fn reads_envelopes(scenario: &Scenario) -> bool {
    use crate::model::Target;
    let envelope = |t: &Target| matches!(t, Target::Envelope(..));
    scenario.expectations.iter().any(|e| envelope(&e.target))
        || scenario.questions.iter().any(|q| envelope(&q.answer))
}

impl Core<'_> {
    /// A message changes state: keeps the census's counts current.
    #[inline]
    fn set_state(&mut self, m: MessageIndex, to: State) {
        if let Some(census) = &mut self.measures.census {
            let (from, was) = (self.messages.state(m), self.messages.has_arrived(m));
            self.messages.set_state(m, to);
            census.moved(m, from, was, to, self.messages.has_arrived(m));
            return;
        }
        self.messages.set_state(m, to);
    }

    /// A retry of `m` is scheduled `delay` from now, at `due`: counted,
    /// its delay paid, recorded, and told to the census (its source pane
    /// shows when a message waiting for a retry is due).
    fn retry_scheduled(&mut self, m: MessageIndex, delay: Millis, due: Millis) {
        self.measures.retries += 1;
        let paid = &mut self.measures.totals.retry_delay_paid;
        *paid = paid.saturating_add(delay);
        self.record(Some(m), Detail::RetryScheduled { delay, due });
        if let Some(census) = &mut self.measures.census {
            census.retry_due(m, due, self.messages.get(m).total_receives);
        }
    }

    /// Records a transition now.
    #[inline]
    fn record(&mut self, message: Option<MessageIndex>, detail: Detail) {
        self.observers
            .recording
            .transition(self.clock.now, message, detail, &self.messages);
    }

    /// Whether a failure of `class` is retried: not a permanent failure
    /// routed to quarantine, and within the cycle's budget.
    fn retries(&self, m: MessageIndex, class: crate::model::Class) -> bool {
        let scenario = self.scenario;
        let routed = class == crate::model::Class::Permanent
            && scenario.delivery.permanent == crate::model::Permanent::Quarantine;
        !routed && self.messages.cycle_receives(m) < scenario.budget()
    }

    /// Records message `m`'s state after an event changed it.
    #[inline]
    fn state_changed(&mut self, m: MessageIndex) {
        self.observers
            .recording
            .state_change(self.clock.now, m, &self.messages);
    }
}

impl<'s> Engine<'s> {
    fn new(scenario: &'s Scenario, recorder: Recorder) -> Self {
        let count = scenario.message_count();
        let draws = traffic::draw(scenario);
        let keeps_left = recorder != Recorder::Off || reads_envelopes(scenario);
        let mut engine = Engine {
            core: Core {
                scenario,
                clock: Clock::default(),
                schedule: Schedule::new(scenario, draws.offsets.clone()),
                rng: ChaCha8Rng::seed_from_u64(scenario.seed),
                stopped_by: StoppedBy::Drained,
                messages: Messages::new(count as usize),
                measures: Measures {
                    totals: Totals {
                        messages: count,
                        // No checkpoint until one completes (section 28.7).
                        last_checkpoint_at: crate::model::NO_TIME,
                        ..Totals::default()
                    },
                    intents_with_effects: IntentSet::new(scenario.intent_count()),
                    census: None,
                    retries: 0,
                },
                observers: Observers {
                    recording: Recording::new(recorder, count, watch::Watches::new(scenario)),
                    question_times: {
                        let mut times: Vec<Millis> =
                            scenario.questions.iter().filter_map(|q| q.at).collect();
                        times.sort_unstable_by(|a, b| b.cmp(a));
                        times.dedup();
                        times
                    },
                    answers: vec![None; scenario.questions.len()],
                },
            },
            consumer: Consumer::new(scenario),
            quarantine: Quarantine::default(),
            store: DedupStore::new(scenario),
            downstream: Downstream {
                calls: Calls::new(scenario),
                outages: outages::Outages::new(&scenario.outages),
                sinks: sinks::Sinks::new(scenario),
                writes: write::Writes::new(scenario),
            },
            source: Source::new(scenario, draws),
            operator: Operator {
                keeps_left,
                enqueued: match scenario.guarantees.profile.retention_from_enqueue() {
                    true => vec![Millis::MAX; count as usize],
                    false => Vec::new(),
                },
                ..Operator::default()
            },
            alarms: alarms::Alarms::new(scenario),
        };
        let telling = !engine.core.observers.recording.quiet();
        if let (Some(writes), Some(write)) = (&mut engine.downstream.writes, &scenario.write) {
            writes.tell_transitions(telling, write);
            writes.watch_dead_letters = engine.alarms.wants_dead_letters;
        }
        // A log's restarts are its own events, after the others of their
        // instant (a resume due then included, decision 27.32), in file
        // order.
        if let Some(log) = &scenario.log {
            for (r, restart) in log.restarts.iter().enumerate() {
                engine
                    .core
                    .schedule
                    .schedule_source_event(restart.at, false, 1 << 32 | r as u64);
            }
        }
        engine.settle_from_now(false);
        engine
    }

    /// Every part of the queue world that holds state, read off the
    /// engine's fields: a new field must be listed (or left out here with
    /// the reason) before this compiles.
    fn parts(&self) -> [&dyn settling::Part; 9] {
        let Engine {
            core:
                Core {
                    // Read by every part's answer.
                    scenario: _,
                    // Time, the schedule and the generator: settling moves
                    // none of them but by the rules each shortcut follows.
                    clock: _,
                    schedule: _,
                    rng: _,
                    stopped_by: _,
                    // The records a settled delivery writes in one go.
                    messages: _,
                    measures,
                    observers,
                },
            source,
            consumer,
            quarantine,
            store,
            downstream,
            operator,
            alarms,
        } = self;
        [
            source, consumer, quarantine, store, downstream, operator, alarms, measures, observers,
        ]
    }

    /// What this run may settle from now on. `to_end`: the run goes on to
    /// its end (only [`crate::engine::run`]); a run that may stop at a time or be
    /// copied part-way (`run_until`, the stepper, a census) never settles
    /// writes, whose ends lie ahead of the settling instant.
    pub(super) fn settle_from_now(&mut self, to_end: bool) {
        let [a, b, c, d, e, f, g, h, i] = self.parts();
        let run = settling::RunMode { to_end };
        let parts: [&dyn settling::Part; 10] = [a, b, c, d, e, f, g, h, i, &run];
        self.consumer.settling = settling::Settling::agreed(self.core.scenario, &parts);
    }

    /// Takes the census from now on (which reads every state change).
    fn take_census(&mut self, census: CensusTaker) {
        self.core.measures.census = Some(census);
        self.settle_from_now(false);
    }

    /// Message `m` becomes ready now (in a queue; a log's record is
    /// `source::Engine::message_due`'s). Without workers or ordering it is
    /// taken at once.
    #[inline(always)]
    pub(super) fn becomes_ready(&mut self, m: MessageIndex, sequence: u64) {
        if let Some(window) = &mut self.consumer.ack_pending
            && !window.admit(m, self.core.clock.now)
        {
            return self.held(m);
        }
        if self.consumer.settling.at_once && self.settle_at_once(m).is_some() {
            return;
        }
        self.becomes_ready_in_full(m, sequence);
    }

    /// Message `m` becomes ready now, step by step.
    #[inline(always)]
    fn becomes_ready_in_full(&mut self, m: MessageIndex, sequence: u64) {
        self.core.set_state(m, State::Ready);
        if self.consumer.direct {
            self.start_delivery(m);
        } else {
            if self.consumer.ready.requeues_in_place() && self.core.messages.cycle_receives(m) > 0 {
                // A delayed retry returns to its original position.
                self.consumer.ready.add_original(m, self.core.clock.now);
            } else {
                self.consumer.ready.add(m, self.core.clock.now, sequence);
            }
            self.core.state_changed(m);
        }
    }

    /// Message `m` is ready but held in the stream: as many messages as
    /// MaxAckPending allows are pending. It counts in the queue depth.
    #[cold]
    fn held(&mut self, m: MessageIndex) {
        self.core.set_state(m, State::Ready);
        self.consumer.ready.depth += 1;
        self.core.state_changed(m);
    }

    /// Under MaxAckPending, `m` left its slot: the held messages that take
    /// the free slots become ready behind this instant's events, in
    /// publish order.
    #[cold]
    fn release_slots(&mut self, m: MessageIndex) {
        let now = self.core.clock.now;
        let Some(window) = &mut self.consumer.ack_pending else {
            return;
        };
        window.leave(m);
        while let Some((next, since)) = window.take_held() {
            self.consumer.ready.depth -= 1;
            if let Some(total) = self.consumer.queue_waits.get_mut(next as usize) {
                *total = total.saturating_add(now - since);
            }
            self.core.schedule.put_back(now, now, next);
        }
    }

    /// Taking (section 12): while a worker is free, it takes the eligible
    /// message that became ready first.
    #[inline]
    fn take_ready(&mut self) {
        if self.consumer.direct {
            // Nothing ever waits in the ready set.
            return;
        }
        let limit = self.core.scenario.flow.workers.map(|w| w.count);
        while limit.is_none_or(|count| self.consumer.busy_workers < count) {
            let Some((m, ready_at)) = self.consumer.ready.take() else {
                break;
            };
            let wait = self.core.clock.now.saturating_sub(ready_at);
            if let Some(total) = self.consumer.queue_waits.get_mut(m as usize) {
                *total = total.saturating_add(wait);
            }
            if limit.is_some() {
                self.consumer.busy_workers += 1;
            }
            self.start_delivery(m);
        }
    }

    /// The run's last instant is over: its measures, and the alarms up to
    /// the end. Returns the end.
    fn close(&mut self) -> Millis {
        self.observe_instant();
        let mut end = self.core.clock.end();
        // An outbox run ends when no relay call is pending, its reply heard
        // (decisions 26.14 and 27.36).
        if let Some(relay) = self.downstream.writes.as_ref().and_then(|w| w.relay_end())
            && self.core.stopped_by == StoppedBy::Drained
        {
            end = end.max(relay);
        }
        self.observe_alarms(end);
        self.source_close(end);
        self.record_told(end);
        self.operator.archive_until(&mut self.core, end);
        end
    }

    /// The writes' transitions told for instants up to `t` are recorded
    /// (`write/mod.rs`): the run has reached them.
    #[inline]
    fn record_told(&mut self, t: Millis) {
        let Some(writes) = &mut self.downstream.writes else {
            return;
        };
        while let Some((at, m, detail)) = writes.told_until(t) {
            self.core
                .observers
                .recording
                .transition(at, m, detail, &self.core.messages);
        }
    }

    /// Leaves the ready set and, in a log, moves its partition on: `m` is
    /// acked, quarantined or dropped.
    #[inline(always)]
    fn leaves(&mut self, m: MessageIndex) {
        self.consumer.ready.leave(m);
        if self.consumer.ack_pending.is_some() {
            self.release_slots(m);
        }
        self.source_moves_past(m);
    }

    fn finish(mut self, as_of: Option<Millis>) -> Outcome {
        let end = self.close();
        let mut totals = self.core.measures.totals;
        if !self.consumer.with_receipts && totals.deliveries > 0 {
            // Without a visibility timeout a message has one delivery in
            // flight at a time.
            totals.concurrent_deliveries = 1;
        }
        totals.quarantined = self.quarantine.len();
        totals.final_dlq_depth = self.quarantine.len();
        totals.drain_time = self.operator.drains.first().copied().unwrap_or(end);
        totals.end_time = end;
        let log = self.source.outcome(self.core.clock.last_delivery);
        if let Some(log) = &log {
            totals.drain_time = log.drain_time;
        }
        debug_assert_eq!(self.core.schedule.arrived(), self.core.messages.arrived());
        debug_assert_eq!(
            totals.acked,
            (0..self.core.messages.len() as MessageIndex)
                .filter(|&m| self.core.messages.state(m) == State::Acked)
                .count() as u64
        );
        debug_assert_eq!(
            (totals.quarantined, totals.dropped),
            (0..self.core.messages.len() as MessageIndex).fold((0, 0), |(q, d), m| {
                match self.core.messages.state(m) {
                    State::Quarantined => (q + 1, d),
                    State::Dropped => (q, d + 1),
                    _ => (q, d),
                }
            })
        );
        debug_assert_eq!(
            self.source.skipped_messages(),
            (0..self.core.messages.len() as MessageIndex)
                .filter(|&m| self.core.messages.state(m) == State::Skipped)
                .count() as u64
        );
        outcome::flow_measures(
            self.core.scenario,
            &mut totals,
            &self.core.messages,
            &self.source.draws,
            self.source.skipped_messages(),
        );
        totals.max_queue_wait = self.consumer.queue_waits.iter().copied().max().unwrap_or(0);
        totals.stopped_by = self.core.stopped_by as u64;
        let kind_counts =
            outcome::kind_counts(self.core.scenario, &self.core.messages, &self.source.draws);
        let calls = self.downstream.calls.finish(&mut totals);
        let (sinks, sink_lags, sink_given_up) = match &mut self.downstream.writes {
            Some(writes) => {
                writes.finish(self.core.scenario, &self.core.messages, end, &mut totals)
            }
            None => {
                let visible = self.source.log.as_deref().and_then(|l| l.visible());
                let sinks = self.downstream.sinks.finish(
                    self.core.scenario,
                    &totals,
                    &self.core.messages,
                    visible,
                );
                let signed = |v: [u64; 4]| v.map(|n| n.min(i64::MAX as u64) as i64);
                let sinks = sinks.into_iter().map(signed).collect();
                (sinks, Vec::new(), Vec::new())
            }
        };
        let sink_becomes =
            (self.downstream.writes.as_ref()).map_or(Vec::new(), |w| w.becomes_at_end(end));
        let sink_rows = (self.downstream.writes.as_ref())
            .map_or(Vec::new(), |w| w.versioned_at_end(self.core.scenario));
        let sink_compensations =
            (self.downstream.writes.as_ref()).map_or(Vec::new(), |w| w.compensations_per_sink());
        let write_notes = self
            .downstream
            .writes
            .as_mut()
            .map_or(Vec::new(), |w| w.take_notes());
        let (write_traces, lock_spans) = self
            .downstream
            .writes
            .as_mut()
            .map_or((Vec::new(), Vec::new()), |w| w.take_traces());
        let census = self.core.measures.census.map(|c| {
            c.finish(
                self.core.clock.now.max(end),
                census::Progress::of(&totals),
                &self.core.messages,
            )
        });
        Outcome {
            totals,
            messages: self.core.messages,
            transitions: self.core.observers.recording.transitions,
            ledger: self.core.observers.recording.ledger,
            state_changes: self.core.observers.recording.state_changes,
            transitions_dropped: self.core.observers.recording.dropped,
            history_complete: self.core.observers.recording.history_complete,
            events_seen: self.core.observers.recording.watches.finish(),
            recorder: self.core.observers.recording.recorder,
            drains: self.operator.drains,
            as_of: as_of.unwrap_or(end),
            finished: as_of.is_none(),
            census,
            draws: self.source.draws,
            queue_waits: self.consumer.queue_waits,
            retries: self.core.measures.retries,
            arrived: self.core.schedule.arrived(),
            alarms: self.alarms.records,
            calls,
            kind_counts,
            sinks,
            sink_lags,
            sink_given_up,
            sink_becomes,
            sink_rows,
            sink_compensations,
            dead_letters: DeadLetters {
                first_deliveries: std::mem::take(&mut self.consumer.first_deliveries),
                ..std::mem::take(&mut self.operator.dead_letters)
            },
            write_notes,
            write_traces,
            lock_spans,
            canaries: self.operator.canary_records,
            log,
            answers: self.core.observers.answers,
        }
    }
}

#[cfg(test)]
mod tests;
