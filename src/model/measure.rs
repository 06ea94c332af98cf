//! The measures of a run, defined once. Each entry of `for_each_measure!`
//! names a measure's field, its unit, how a failed expectation on it is
//! explained and what it means. From that one list follow the [`Totals`]
//! the engine fills, the [`Total`] an expectation targets, the `[expect]`
//! keys of the file format (and so its JSON Schema), the JSON report's
//! `totals`, the transcript's totals block and the explanations. Adding a
//! measure is one entry here plus its computation in the engine.

use super::{Millis, State, StoppedBy, Value};

/// What a measure counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A number of things.
    Count,
    /// Modeled milliseconds, written as a duration.
    Time,
    /// A duration that may have no value (a percentile with nothing acked).
    MaybeTime,
    /// Why the run ended ([`StoppedBy`]).
    Stop,
}

/// Which part of the model a measure belongs to: `Core` measures are
/// listed for every run, `Flow` ones (sections 11-13) for files that use
/// those sections. Every measure can be expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Core,
    Flow,
    /// Sections 17-22: listed for files that use them.
    Guarantee,
    /// Section 23: listed for files with `[log]`.
    Log,
    /// Section 24: listed for files with `[write]` or sink calls.
    Write,
    /// Section 28.3: listed for files with `[delivery] max_elapsed`.
    Elapsed,
    /// Section 28.11: listed for files with `[quarantine] archive_after`.
    Archive,
    /// Section 28.5: listed for files with `[dedup] restarts`.
    Store,
    /// Section 28.7: listed for files with `[[checkpoint_failure]]` or
    /// `[log] checkpoint_events`.
    Checkpoint,
    /// Section 28.6: listed for files with `[producer]` or a
    /// `lose_append_ack` fault.
    Producer,
    /// Section 28.15: listed for files whose coordinator never recovers.
    Coordinator,
    /// Section 28.16: listed for files with a `corrective_notice` sink.
    Corrective,
    /// Section 28.1: listed for files with `irreversible_last`.
    Withheld,
}

/// A `MaybeTime` measure's raw number when it has no value.
pub const NO_TIME: Millis = Millis::MAX;

/// How a failed expectation on a measure is explained from the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Story {
    /// The effect ledger, by message.
    Ledger,
    /// Effects per intent, the intents with more than one.
    PerIntent,
    /// The messages whose final state is this one.
    FinalState(State),
    /// Deduplication hits by message.
    DedupHits,
    /// Receives by message.
    Receives,
    /// The messages that entered quarantine.
    QuarantineEntries,
    /// The retry delays scheduled, by message.
    RetryDelays,
    /// Each cycle's drain and each operator step's inspection.
    Drains,
    /// The acked message at a latency rank (100: the maximum).
    Latency(u8),
    /// The messages that waited longest for a worker.
    QueueWait,
    /// Deliveries in flight and the service they took.
    Workers,
    /// Calls per window, offered and accepted.
    Calls,
    /// The messages not final at the stop.
    Pending,
    /// Crashes, overlapping deliveries, expired receipts, contention.
    Overlaps,
    /// The log's restarts: where each resumed, what it reprocessed and
    /// skipped.
    Restarts,
    /// The writes to several sinks: strategy, failed calls, locks and
    /// compensations.
    Writes,
    /// A log's checkpoints: completed, and the failed ones (section 28.7).
    Checkpoints,
    /// The producer's retried appends, by message and block (section 28.6).
    Producer,
}

/// Calls `$callback!` with every measure, in the order the file format,
/// the transcript and the JSON report list them:
/// `field Variant Unit story, "what it means";`.
#[macro_export]
macro_rules! for_each_measure {
    ($callback:ident) => {
        $callback! {
            deliveries Deliveries Count Core $crate::model::Story::Receives,
                "deliveries (worker attempts), every cycle included";
            acked Acked Count Core $crate::model::Story::FinalState($crate::model::State::Acked),
                "messages whose final state is acked";
            quarantined Quarantined Count Core
                $crate::model::Story::FinalState($crate::model::State::Quarantined),
                "messages still in quarantine at the end";
            expired Expired Count Core $crate::model::Story::FinalState($crate::model::State::Expired),
                "messages that expired in quarantine";
            purged Purged Count Core $crate::model::Story::FinalState($crate::model::State::Purged),
                "messages the operator purged";
            effects Effects Count Core $crate::model::Story::Ledger,
                "committed effects (the ledger's length)";
            duplicated_effects DuplicatedEffects Count Core $crate::model::Story::PerIntent,
                "effects beyond the first of each intent";
            dedup_hits DedupHits Count Core $crate::model::Story::DedupHits,
                "deliveries answered from the deduplication store";
            quarantine_entries QuarantineEntries Count Core $crate::model::Story::QuarantineEntries,
                "times a message entered quarantine";
            retry_delay_paid RetryDelayPaid Time Core $crate::model::Story::RetryDelays,
                "the sum of every scheduled retry delay";
            max_dlq_depth MaxDlqDepth Count Core $crate::model::Story::QuarantineEntries,
                "the most messages in quarantine at once";
            final_dlq_depth FinalDlqDepth Count Core $crate::model::Story::QuarantineEntries,
                "messages in quarantine at the end";
            drain_time DrainTime Time Core $crate::model::Story::Drains,
                "when the source cycle drained (its last delivery)";
            end_time EndTime Time Core $crate::model::Story::Drains,
                "the last event, inspections included";
            latency_p50 LatencyP50 MaybeTime Flow $crate::model::Story::Latency(50),
                "median latency of acked messages (nearest rank)";
            latency_p95 LatencyP95 MaybeTime Flow $crate::model::Story::Latency(95),
                "95th percentile latency of acked messages (nearest rank)";
            latency_p99 LatencyP99 MaybeTime Flow $crate::model::Story::Latency(99),
                "99th percentile latency of acked messages (nearest rank)";
            latency_max LatencyMax MaybeTime Flow $crate::model::Story::Latency(100),
                "the longest latency of an acked message";
            max_queue_wait MaxQueueWait Time Flow $crate::model::Story::QueueWait,
                "the longest time one message spent ready but not taken";
            max_queue_depth MaxQueueDepth Count Flow $crate::model::Story::QueueWait,
                "the most ready messages not taken, after an instant";
            max_in_flight MaxInFlight Count Flow $crate::model::Story::Workers,
                "the most deliveries in flight, after an instant";
            worker_busy WorkerBusy Time Flow $crate::model::Story::Workers,
                "the sum of every delivery's service time";
            calls_offered CallsOffered Count Flow $crate::model::Story::Calls,
                "calls offered to the downstream";
            calls_accepted CallsAccepted Count Flow $crate::model::Story::Calls,
                "calls the downstream accepted";
            throttled Throttled Count Flow $crate::model::Story::Calls,
                "calls refused because their window was full";
            peak_offered PeakOffered Count Flow $crate::model::Story::Calls,
                "the most calls offered in one window";
            pending Pending Count Flow $crate::model::Story::Pending,
                "messages not final when the run stopped";
            stopped_by StoppedBy Stop Flow $crate::model::Story::Pending,
                "why the run ended: drained, max_time or max_events";
            concurrent_deliveries ConcurrentDeliveries Count Guarantee $crate::model::Story::Overlaps,
                "the most deliveries of one message in flight at once";
            expired_receipts ExpiredReceipts Count Guarantee $crate::model::Story::Overlaps,
                "superseded deliveries that ended without crashing: outcome lost";
            crashes Crashes Count Guarantee $crate::model::Story::Overlaps,
                "deliveries whose consumer crashed";
            contentions Contentions Count Guarantee $crate::model::Story::Overlaps,
                "deliveries that found a live INTENT claim on their key";
            dropped Dropped Count Guarantee $crate::model::Story::FinalState($crate::model::State::Dropped),
                "messages dropped with quarantine disabled";
            reprocessed Reprocessed Count Log $crate::model::Story::Restarts,
                "deliveries of log records already done once";
            skipped Skipped Count Log $crate::model::Story::Restarts,
                "log records below a resume position never done";
            aborted_effects AbortedEffects Count Log $crate::model::Story::Restarts,
                "effects of exactly-once transactions a restart aborted";
            attempts_carried AttemptsCarried Count Log $crate::model::Story::Restarts,
                "log records whose receive count a restart carried (carry_attempts)";
            max_lag MaxLag Count Log $crate::model::Story::Restarts,
                "the most records appended and not yet done, after an instant";
            checkpoints_completed CheckpointsCompleted Count Checkpoint $crate::model::Story::Checkpoints,
                "log checkpoints that committed the positions (up to the run's end)";
            checkpoints_failed CheckpointsFailed Count Checkpoint $crate::model::Story::Checkpoints,
                "log checkpoints that failed or were aborted: nothing committed";
            last_checkpoint_at LastCheckpointAt MaybeTime Checkpoint $crate::model::Story::Checkpoints,
                "the last completed checkpoint's time, or never";
            producer_retries ProducerRetries Count Producer $crate::model::Story::Producer,
                "appends the producer made again after losing their acknowledgement";
            appended_duplicates AppendedDuplicates Count Producer $crate::model::Story::Producer,
                "duplicate records those retries appended (without idempotence)";
            outbox_dead_letters OutboxDeadLetters Count Write $crate::model::Story::Writes,
                "outbox rows whose relay calls to a sink were all used up, per sink";
            lock_held LockHeld Time Write $crate::model::Story::Writes,
                "two-phase locks held, summed over sinks and writes";
            max_lock MaxLock Time Write $crate::model::Story::Writes,
                "the longest two-phase lock of one write in one sink";
            max_in_doubt MaxInDoubt Count Write $crate::model::Story::Writes,
                "the most writes prepared everywhere and not yet decided, after an instant";
            in_doubt_at_end InDoubtAtEnd Count Coordinator $crate::model::Story::Writes,
                "two-phase writes whose coordinator crashed and never recovered: in doubt at the end";
            blocked_at_end BlockedAtEnd Count Coordinator $crate::model::Story::Writes,
                "two-phase writes still waiting at the end for a lock such a write holds";
            compensations Compensations Count Write $crate::model::Story::Writes,
                "saga compensations applied (a repeated one counts again)";
            over_compensations OverCompensations Count Write $crate::model::Story::Writes,
                "saga compensations applied a second time to one write in one sink";
            compensations_given_up CompensationsGivenUp Count Write $crate::model::Story::Writes,
                "saga compensations whose relay_attempts calls all failed: the write stays visible there";
            false_notices FalseNotices Count Write $crate::model::Story::Writes,
                "irreversible sends of writes a saga then compensated";
            corrective_notices CorrectiveNotices Count Corrective $crate::model::Story::Writes,
                "corrective notices heard to succeed after a false notice (corrective_notice)";
            uncorrected_false_notices UncorrectedFalseNotices Count Corrective $crate::model::Story::Writes,
                "false notices without a corrective notice";
            notices_withheld NoticesWithheld Count Withheld $crate::model::Story::Writes,
                "irreversible relay calls never made because another outbox sink dead-lettered the row (irreversible_last)";
            partial_visible PartialVisible Time Write $crate::model::Story::Writes,
                "summed over writes, the time some sinks and not all showed the write";
            elapsed_exhausted ElapsedExhausted Count Elapsed $crate::model::Story::QuarantineEntries,
                "quarantine entries because the next retry would be due past max_elapsed";
            archived Archived Count Archive $crate::model::Story::QuarantineEntries,
                "quarantined messages copied to the archive (archive_after), each entry once";
            store_restarts StoreRestarts Count Store $crate::model::Story::DedupHits,
                "restarts of the deduplication store";
            entries_lost EntriesLost Count Store $crate::model::Story::DedupHits,
                "store entries live at a restart of a store without persistence";
        }
    };
}

macro_rules! define_measures {
    ($($field:ident $variant:ident $unit:ident $part:ident $story:expr, $doc:literal;)*) => {
        /// A run's measures. `messages` is the scenario's size, not a
        /// measure an expectation can name.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
        pub struct Totals {
            pub messages: u64,
            $(#[doc = $doc] pub $field: u64,)*
        }

        /// A measure an expectation can name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Total {
            $($variant,)*
        }

        impl Total {
            /// Every measure, in order.
            pub const ALL: &'static [Total] = &[$(Total::$variant,)*];

            /// The name in the file, the JSON report and the transcript.
            pub fn name(self) -> &'static str {
                match self {
                    $(Total::$variant => stringify!($field),)*
                }
            }

            pub fn unit(self) -> Unit {
                match self {
                    $(Total::$variant => Unit::$unit,)*
                }
            }

            pub fn part(self) -> Part {
                match self {
                    $(Total::$variant => Part::$part,)*
                }
            }

            pub fn story(self) -> Story {
                match self {
                    $(Total::$variant => $story,)*
                }
            }

            /// What the measure means, in a few words.
            pub fn doc(self) -> &'static str {
                match self {
                    $(Total::$variant => $doc,)*
                }
            }
        }

        impl Totals {
            /// The measure's raw number (a count, or milliseconds).
            pub fn number(&self, t: Total) -> u64 {
                match t {
                    $(Total::$variant => self.$field,)*
                }
            }
        }
    };
}

for_each_measure!(define_measures);

/// Number of states; `State as usize` indexes arrays of this length.
pub const STATE_COUNT: usize = State::ALL.len();

impl Total {
    /// A measure by its name in the file.
    pub fn from_name(name: &str) -> Option<Total> {
        Total::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// The measures a run lists: the core ones, the flow ones when the
    /// scenario uses sections 11-13, those of sections 17-22 when it uses
    /// them.
    pub fn listed(scenario: &super::Scenario) -> impl Iterator<Item = Total> {
        let (flow, guarantee) = (scenario.flow.extended, scenario.guarantees.extended);
        let log = scenario.log.is_some();
        let write = scenario.write.is_some();
        let elapsed = scenario.delivery.max_elapsed.is_some();
        let archive = scenario.archive_after.is_some();
        let store = !scenario.store_restarts.is_empty();
        let checkpoint = scenario.log.as_ref().is_some_and(|l| l.checkpoint_events);
        let producer = scenario.log.as_ref().is_some_and(|l| l.producer.written);
        let corrective =
            (scenario.write.as_ref()).is_some_and(|w| w.sinks.iter().any(|s| s.corrective_notice));
        let withheld = (scenario.write.as_ref())
            .and_then(|w| w.plan.as_ref())
            .is_some_and(|p| p.gated != 0);
        let coordinator = (scenario.write.as_ref())
            .and_then(|w| w.coordinator.as_ref())
            .is_some_and(|c| c.crash.is_some() && c.recovers_after.is_none());
        Total::ALL.iter().copied().filter(move |t| match t.part() {
            Part::Core => true,
            Part::Flow => flow,
            Part::Guarantee => guarantee,
            Part::Log => log,
            Part::Write => write,
            Part::Elapsed => elapsed,
            Part::Archive => archive,
            Part::Store => store,
            Part::Checkpoint => checkpoint,
            Part::Producer => producer,
            Part::Coordinator => coordinator,
            Part::Corrective => corrective,
            Part::Withheld => withheld,
        })
    }
}

impl Totals {
    /// The measure as an expectation compares it.
    pub fn get(&self, t: Total) -> Value {
        let n: Millis = self.number(t);
        match t.unit() {
            Unit::Count => Value::Count(n),
            Unit::Time => Value::Time(n),
            Unit::MaybeTime if n == NO_TIME => Value::Never,
            Unit::MaybeTime => Value::Time(n),
            Unit::Stop => Value::Text(
                StoppedBy::ALL
                    .get(n as usize)
                    .copied()
                    .unwrap_or_default()
                    .as_str()
                    .to_string(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_serialised_in_order() {
        let mut totals = Totals::default();
        for (i, t) in Total::ALL.iter().enumerate() {
            assert_eq!(Total::from_name(t.name()), Some(*t));
            // Each field reads its own slot.
            match *t {
                Total::Deliveries => totals.deliveries = i as u64 + 1,
                Total::Acked => totals.acked = i as u64 + 1,
                Total::Quarantined => totals.quarantined = i as u64 + 1,
                Total::Expired => totals.expired = i as u64 + 1,
                Total::Purged => totals.purged = i as u64 + 1,
                Total::Effects => totals.effects = i as u64 + 1,
                Total::DuplicatedEffects => totals.duplicated_effects = i as u64 + 1,
                Total::DedupHits => totals.dedup_hits = i as u64 + 1,
                Total::QuarantineEntries => totals.quarantine_entries = i as u64 + 1,
                Total::RetryDelayPaid => totals.retry_delay_paid = i as u64 + 1,
                Total::MaxDlqDepth => totals.max_dlq_depth = i as u64 + 1,
                Total::FinalDlqDepth => totals.final_dlq_depth = i as u64 + 1,
                Total::DrainTime => totals.drain_time = i as u64 + 1,
                Total::EndTime => totals.end_time = i as u64 + 1,
                Total::LatencyP50 => totals.latency_p50 = i as u64 + 1,
                Total::LatencyP95 => totals.latency_p95 = i as u64 + 1,
                Total::LatencyP99 => totals.latency_p99 = i as u64 + 1,
                Total::LatencyMax => totals.latency_max = i as u64 + 1,
                Total::MaxQueueWait => totals.max_queue_wait = i as u64 + 1,
                Total::MaxQueueDepth => totals.max_queue_depth = i as u64 + 1,
                Total::MaxInFlight => totals.max_in_flight = i as u64 + 1,
                Total::WorkerBusy => totals.worker_busy = i as u64 + 1,
                Total::CallsOffered => totals.calls_offered = i as u64 + 1,
                Total::CallsAccepted => totals.calls_accepted = i as u64 + 1,
                Total::Throttled => totals.throttled = i as u64 + 1,
                Total::PeakOffered => totals.peak_offered = i as u64 + 1,
                Total::Pending => totals.pending = i as u64 + 1,
                Total::StoppedBy => totals.stopped_by = i as u64 + 1,
                Total::ConcurrentDeliveries => totals.concurrent_deliveries = i as u64 + 1,
                Total::ExpiredReceipts => totals.expired_receipts = i as u64 + 1,
                Total::Crashes => totals.crashes = i as u64 + 1,
                Total::Contentions => totals.contentions = i as u64 + 1,
                Total::Dropped => totals.dropped = i as u64 + 1,
                Total::Reprocessed => totals.reprocessed = i as u64 + 1,
                Total::Skipped => totals.skipped = i as u64 + 1,
                Total::AbortedEffects => totals.aborted_effects = i as u64 + 1,
                Total::AttemptsCarried => totals.attempts_carried = i as u64 + 1,
                Total::MaxLag => totals.max_lag = i as u64 + 1,
                Total::CheckpointsCompleted => totals.checkpoints_completed = i as u64 + 1,
                Total::CheckpointsFailed => totals.checkpoints_failed = i as u64 + 1,
                Total::LastCheckpointAt => totals.last_checkpoint_at = i as u64 + 1,
                Total::ProducerRetries => totals.producer_retries = i as u64 + 1,
                Total::AppendedDuplicates => totals.appended_duplicates = i as u64 + 1,
                Total::OutboxDeadLetters => totals.outbox_dead_letters = i as u64 + 1,
                Total::LockHeld => totals.lock_held = i as u64 + 1,
                Total::MaxLock => totals.max_lock = i as u64 + 1,
                Total::MaxInDoubt => totals.max_in_doubt = i as u64 + 1,
                Total::InDoubtAtEnd => totals.in_doubt_at_end = i as u64 + 1,
                Total::BlockedAtEnd => totals.blocked_at_end = i as u64 + 1,
                Total::Compensations => totals.compensations = i as u64 + 1,
                Total::OverCompensations => totals.over_compensations = i as u64 + 1,
                Total::CompensationsGivenUp => totals.compensations_given_up = i as u64 + 1,
                Total::FalseNotices => totals.false_notices = i as u64 + 1,
                Total::CorrectiveNotices => totals.corrective_notices = i as u64 + 1,
                Total::UncorrectedFalseNotices => totals.uncorrected_false_notices = i as u64 + 1,
                Total::NoticesWithheld => totals.notices_withheld = i as u64 + 1,
                Total::PartialVisible => totals.partial_visible = i as u64 + 1,
                Total::ElapsedExhausted => totals.elapsed_exhausted = i as u64 + 1,
                Total::Archived => totals.archived = i as u64 + 1,
                Total::StoreRestarts => totals.store_restarts = i as u64 + 1,
                Total::EntriesLost => totals.entries_lost = i as u64 + 1,
            }
        }
        for (i, t) in Total::ALL.iter().enumerate() {
            assert_eq!(totals.number(*t), i as u64 + 1, "{}", t.name());
        }
        let json = serde_json::to_value(totals).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut expected = vec!["messages"];
        expected.extend(Total::ALL.iter().map(|t| t.name()));
        assert_eq!(keys, expected);
    }

    #[test]
    fn units_decide_the_value() {
        let totals = Totals {
            drain_time: 5,
            effects: 5,
            ..Totals::default()
        };
        assert_eq!(totals.get(Total::DrainTime), Value::Time(5));
        assert_eq!(totals.get(Total::Effects), Value::Count(5));
    }
}
