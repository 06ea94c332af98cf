//! What a run produces ([`Outcome`]), and the error of a run stopped at one
//! of the scenario's `[limits]`.

use super::census::Census;
use super::messages::Messages;
use super::recorder::{Recorder, StateChange};
use super::traffic::Draws;
use super::transition::{Effect, Transition};
use crate::model::{
    AlarmField, KeyRef, KindField, MessageField, MessageIndex, Millis, NO_TIME, PartitionField,
    RestartField, Scenario, SinkField, State, Target, Totals, Value,
};

/// The result of a run: what reports and expectations read.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub totals: Totals,
    pub messages: Messages,
    /// Kept according to the [`Recorder`].
    pub transitions: Vec<Transition>,
    /// The effect ledger; kept with [`Recorder::All`].
    pub ledger: Vec<Effect>,
    /// Each message's state after every change, in execution order; kept
    /// with [`Recorder::All`] for runs of at most
    /// [`super::HISTORY_MESSAGES`] messages (the HTML scrubber reads it).
    pub state_changes: Vec<StateChange>,
    /// Transitions the recorder wanted past [`super::TRANSITIONS_KEPT`]:
    /// counted, not kept.
    pub transitions_dropped: u64,
    /// Whether `state_changes` is complete (a history past the limit is
    /// dropped whole).
    pub history_complete: bool,
    /// What each event expectation saw, by expectation index.
    pub events_seen: std::collections::BTreeMap<usize, super::EventSeen>,
    pub recorder: Recorder,
    /// Drain time of each cycle: the source cycle, then one per operator step
    /// that has run.
    pub drains: Vec<Millis>,
    /// The modeled time the snapshot describes (the end, or `--at`).
    pub as_of: Millis,
    /// Whether the run reached its end (false for a snapshot at a time).
    pub finished: bool,
    /// Taken by [`super::run_with_census`].
    pub census: Option<Census>,
    /// Poisson arrivals and each generated message's mix kind.
    pub draws: super::Draws,
    /// Retries scheduled (each delivery is a first one, a redrive's or a
    /// retry's).
    pub retries: u64,
    /// Messages that have arrived (each arrives once, and becomes ready
    /// then): what [`Messages::arrived`] counts, without reading every
    /// message.
    pub arrived: u64,
    /// Per mix kind: its messages, acked, quarantined and deliveries (in
    /// the order of [`KindField::ALL`]).
    pub kind_counts: Vec<[u64; 4]>,
    /// Calls offered and accepted per window.
    pub calls: super::CallSeries,
    /// What each `[[alarm]]` did, in file order.
    pub alarms: Vec<super::AlarmRecord>,
    /// Each message's time ready but not taken, summed over its
    /// deliveries; empty (all zero) without workers and ordering.
    pub queue_waits: Vec<Millis>,
    /// Per sink (file order, or the default counter): its value, visible
    /// duplicates, missing intents and most writes of one intent (in the
    /// order of [`SinkField::ALL`]).
    pub sinks: Vec<[i64; 4]>,
    /// With `[write] strategy = "outbox"`, per sink: the latest
    /// application minus its row's time, at most (empty otherwise).
    pub sink_lags: Vec<Millis>,
    /// With `[write]`, per sink: the compensations given up there (empty
    /// otherwise).
    pub sink_given_up: Vec<u64>,
    /// Per sink with `becomes` (section 28.8), its kind at the end and
    /// the write calls applied after the change; empty without one.
    pub sink_becomes: Vec<(crate::model::SinkKind, u64)>,
    /// Per sink, its versioned rows at the end (section 28.9; `None` for
    /// an unversioned sink); empty without a versioned sink.
    pub sink_rows: Vec<Option<super::write::VersionedRowsAtEnd>>,
    /// With `[write]`, per sink: the compensations applied there
    /// (section 28.1); empty otherwise.
    pub sink_compensations: Vec<u64>,
    /// What the run keeps of each message's time in quarantine beyond its
    /// state: its envelope's record and cause, and its archive.
    pub dead_letters: DeadLetters,
    /// With `[write]`: the first writes worth a look (failed calls, lost
    /// replies, compensations, dead letters, lock waits, crashes).
    pub write_notes: Vec<super::WriteNote>,
    /// With `[write]`: the calls of the first write and of the first
    /// writes worth a look (at most [`super::WRITE_TRACES_KEPT`]).
    pub write_traces: Vec<super::WriteTrace>,
    /// With two-phase commit: the first locks, per sink and write (at most
    /// [`super::LOCK_SPANS_KEPT`]).
    pub lock_spans: Vec<super::LockSpan>,
    /// Every canary redrive, in the order they decided.
    pub canaries: Vec<super::CanaryRecord>,
    /// With `[log]`: the partitions, checkpoints and restarts.
    pub log: Option<super::LogOutcome>,
    /// Per `[[question]]` (file order), its answer as of its `at`, read
    /// while the run passed that time (`None`: asked of the end, or a time
    /// this run did not pass; see `report::questions`).
    pub answers: Vec<Option<crate::model::Value>>,
}

impl Outcome {
    /// The value a target other than an event has in this outcome (what
    /// an expectation compares, and what a question's answer names).
    pub fn value(&self, scenario: &Scenario, target: &Target) -> Value {
        let outcome = self;
        match *target {
            Target::Total(t) => outcome.totals.get(t),
            Target::Message(m, field) => {
                let state = outcome.messages.get(m);
                match field {
                    MessageField::State => Value::Text(state.state.as_str().to_string()),
                    MessageField::Key => Value::Text(scenario.key_name(outcome.key(scenario, m))),
                    MessageField::Cycle => Value::Count(state.cycle as u64),
                    MessageField::CycleReceives => Value::Count(state.cycle_receives as u64),
                    MessageField::TotalReceives => Value::Count(state.total_receives as u64),
                    MessageField::Effects => Value::Count(state.effects as u64),
                    MessageField::DedupHits => Value::Count(state.dedup_hits as u64),
                    MessageField::LastReason => state.last_reason().map_or(Value::Never, |r| {
                        Value::Text(scenario.reasons[r as usize].clone())
                    }),
                    MessageField::LastQuarantinedAt => state
                        .last_quarantined_at()
                        .map_or(Value::Never, Value::Time),
                    MessageField::ArrivedAt => outcome
                        .arrived_at(scenario, m)
                        .map_or(Value::Never, Value::Time),
                    MessageField::AckedAt => state.acked_at().map_or(Value::Never, Value::Time),
                    MessageField::Latency => outcome
                        .latency(scenario, m)
                        .map_or(Value::Never, Value::Time),
                    MessageField::QueueWait => Value::Time(outcome.queue_wait(m)),
                    MessageField::Archived => {
                        Value::Bool(outcome.dead_letters.archived.contains(&m))
                    }
                    MessageField::Group => {
                        Value::Text(scenario.group_name(scenario.group(m)).into())
                    }
                }
            }
            Target::Envelope(m, field) => outcome.envelope_value(scenario, m, field),
            Target::Row {
                sink,
                ref row,
                field,
            } => {
                let rows = outcome
                    .sink_rows
                    .get(sink as usize)
                    .and_then(Option::as_ref);
                match rows.and_then(|r| r.row(row)) {
                    None => Value::Never,
                    Some(r) => Value::Int(match field {
                        crate::model::RowField::Value => r.value,
                        crate::model::RowField::Version => r.version.min(i64::MAX as u64) as i64,
                    }),
                }
            }
            Target::Kind(kind, field) => Value::Count(outcome.kind_count(kind, field)),
            Target::Sink(sink, field) => {
                let n = outcome.sink_value(sink, field);
                match field {
                    SinkField::MaxLag => Value::Time(n as Millis),
                    SinkField::KindAtEnd => Value::Text(
                        (outcome.sink_becomes.get(sink as usize))
                            .map_or("", |(kind, _)| kind.as_str())
                            .to_string(),
                    ),
                    // Compensations can take a fan-out's counts below zero.
                    SinkField::Value | SinkField::VisibleDuplicates if scenario.write.is_some() => {
                        Value::Int(n)
                    }
                    _ => Value::Count(n.max(0) as u64),
                }
            }
            Target::Partition(p, field) => {
                let (end, committed) = outcome
                    .log
                    .as_ref()
                    .and_then(|l| l.partitions.get(p as usize).copied())
                    .unwrap_or_default();
                Value::Count(match field {
                    PartitionField::EndOffset => end,
                    PartitionField::Committed => committed,
                })
            }
            Target::Checkpoint(k, crate::model::CheckpointField::Status) => {
                let status = (outcome.log.as_ref())
                    .zip(scenario.log.as_ref())
                    .and_then(|(run, log)| run.checkpoint_status(log, k));
                status.map_or(Value::Never, |s| Value::Text(s.as_str().to_string()))
            }
            Target::Restart(r, field) => {
                let record = outcome
                    .log
                    .as_ref()
                    .and_then(|l| l.restarts.get(r as usize));
                match (field, record) {
                    (_, None) => Value::Never,
                    (RestartField::ResumePositions, Some(record)) => Value::Ints(
                        (record.resume_positions.iter())
                            .map(|&p| p.min(i64::MAX as u64) as i64)
                            .collect(),
                    ),
                    (RestartField::CheckpointTime, Some(record)) => {
                        record.checkpoint_time.map_or(Value::Never, Value::Time)
                    }
                    (RestartField::ReplayedUntil, Some(record)) => {
                        let jumped: Vec<i64> = (record.replayed_until.iter().flatten())
                            .map(|&p| p.min(i64::MAX as u64) as i64)
                            .collect();
                        match jumped.is_empty() {
                            true => Value::Never,
                            false => Value::Ints(jumped),
                        }
                    }
                }
            }
            Target::Alarm(a, field) => {
                let r = outcome.alarms.get(a as usize).cloned().unwrap_or_default();
                match field {
                    AlarmField::Fired => Value::Bool(r.times_fired > 0),
                    AlarmField::FirstFiredAt => r.first_fired_at.map_or(Value::Never, Value::Time),
                    AlarmField::TimesFired => Value::Count(r.times_fired),
                    AlarmField::FiringAtEnd => Value::Bool(r.firing),
                }
            }
            Target::Event { .. } => Value::Never,
        }
    }

    /// A message's current deduplication key.
    pub fn key(&self, scenario: &Scenario, m: MessageIndex) -> KeyRef {
        self.messages.key(m, scenario.intent(m))
    }

    /// When message `m` first arrived, if it has.
    pub fn arrived_at(&self, scenario: &Scenario, m: MessageIndex) -> Option<Millis> {
        self.messages
            .get(m)
            .has_arrived()
            .then(|| self.draws.arrival(scenario, m))
    }

    /// A field of message `m`'s dead-letter envelope (section 28.2), as
    /// the JSON report gives it: `never` for every field of a message
    /// that has none (not in quarantine, expired or purged).
    pub fn envelope_value(
        &self,
        scenario: &Scenario,
        m: MessageIndex,
        field: crate::model::EnvelopeField,
    ) -> Value {
        use crate::model::EnvelopeField as F;
        let Some(state) = self.envelope_state(m) else {
            return Value::Never;
        };
        let record = self.dead_letters.records.get(&m);
        let int =
            |n: Option<u64>| n.map_or(Value::Never, |n| Value::Int(n.min(i64::MAX as u64) as i64));
        let text = |s: Option<&str>| s.map_or(Value::Never, |s| Value::Text(s.to_string()));
        match field {
            F::Partition => int(record.map(|r| u64::from(r.partition))),
            F::Offset => int(record.map(|r| r.offset)),
            F::EventTime => self
                .event_time(scenario, m)
                .map_or(Value::Never, Value::Time),
            F::FirstDelivery => self
                .first_delivery(scenario, m)
                .map_or(Value::Never, Value::Time),
            F::QuarantinedAt => state
                .last_quarantined_at()
                .map_or(Value::Never, Value::Time),
            F::SchemaVersion => text(scenario.schema_version(m)),
            F::Reason => text(
                state
                    .last_reason()
                    .map(|r| scenario.reasons[r as usize].as_str()),
            ),
            F::Class => Value::Text(state.last_class().as_str().to_string()),
            F::CycleReceives => int(Some(u64::from(state.cycle_receives))),
            F::TotalReceives => int(Some(u64::from(state.total_receives))),
            F::DeadLetterCause => text(self.dead_letter_cause(scenario, m)),
        }
    }

    /// The state message `m`'s dead-letter envelope was made from: its
    /// own while in quarantine (or expired or purged from there), else the
    /// one it left quarantine with (decision 10.12); none if it never was
    /// in quarantine.
    pub fn envelope_state(&self, m: MessageIndex) -> Option<super::MessageState> {
        let state = self.messages.get(m);
        match state.state {
            State::Quarantined | State::Expired | State::Purged => Some(state),
            _ => self.dead_letters.left.get(&m).copied(),
        }
    }

    /// When message `m` was first delivered (decision 10.12): its arrival
    /// unless it waited.
    pub fn first_delivery(&self, scenario: &Scenario, m: MessageIndex) -> Option<Millis> {
        match self.dead_letters.first_deliveries.waited(m) {
            Some(t) => Some(t),
            None => self.arrived_at(scenario, m),
        }
    }

    /// The event time of message `m`'s dead-letter envelope (section
    /// 28.2): its record's append time, the message's first arrival unless
    /// it was dead-lettered from a producer's duplicate (28.6).
    pub fn event_time(&self, scenario: &Scenario, m: MessageIndex) -> Option<Millis> {
        match self.dead_letters.event_times.get(&m) {
            Some(&t) => Some(t),
            None => self.arrived_at(scenario, m),
        }
    }

    /// Why message `m` was last dead-lettered (section 28.2):
    /// `"max_elapsed"`, `"permanent"` (routed to quarantine),
    /// `"visibility timeout"` or `"max_receives"`; none if it never was.
    pub fn dead_letter_cause(&self, scenario: &Scenario, m: MessageIndex) -> Option<&'static str> {
        let state = self.messages.get(m);
        state.last_quarantined_at()?;
        let routed = state.last_class() == crate::model::Class::Permanent
            && scenario.delivery.permanent == crate::model::Permanent::Quarantine;
        Some(if self.dead_letters.by_elapsed.contains(&m) {
            "max_elapsed"
        } else if routed {
            "permanent"
        } else if state.last_reason() == Some(crate::model::REASON_VISIBILITY_TIMEOUT) {
            "visibility timeout"
        } else {
            "max_receives"
        })
    }

    /// An acked message's latency: from its first arrival to its ack.
    pub fn latency(&self, scenario: &Scenario, m: MessageIndex) -> Option<Millis> {
        let acked = self.messages.acked_at(m)?;
        Some(acked.saturating_sub(self.draws.arrival(scenario, m)))
    }

    /// Every acked message's latency, in message order.
    pub fn latencies<'a>(
        &'a self,
        scenario: &'a Scenario,
    ) -> impl Iterator<Item = (MessageIndex, Millis)> + 'a {
        latencies(scenario, &self.messages, &self.draws)
    }

    /// Message `m`'s time ready but not taken, over all its deliveries.
    pub fn queue_wait(&self, m: MessageIndex) -> Millis {
        self.queue_waits.get(m as usize).copied().unwrap_or(0)
    }

    /// A measure of the messages of one mix kind (index into
    /// [`Scenario::kinds`]), counted once at the end of the run.
    pub fn kind_count(&self, kind: u32, field: KindField) -> u64 {
        self.kind_counts
            .get(kind as usize)
            .map_or(0, |counts| counts[field as usize])
    }

    /// A sink's value or visible duplicates (sink index into the
    /// scenario's sinks).
    pub fn sink_value(&self, sink: u32, field: SinkField) -> i64 {
        if field == SinkField::MaxLag {
            let lag = self.sink_lags.get(sink as usize).copied().unwrap_or(0);
            return lag.min(i64::MAX as Millis) as i64;
        }
        if matches!(field, SinkField::WritesAfterChange | SinkField::KindAtEnd) {
            let (kind, after) = self
                .sink_becomes
                .get(sink as usize)
                .copied()
                .unwrap_or((crate::model::SinkKind::Increment, 0));
            return match field {
                SinkField::KindAtEnd => kind as i64,
                _ => after.min(i64::MAX as u64) as i64,
            };
        }
        if matches!(
            field,
            SinkField::StaleOverwrites | SinkField::StaleRejections
        ) {
            let rows = self.sink_rows.get(sink as usize).and_then(Option::as_ref);
            let n = rows.map_or(0, |r| match field {
                SinkField::StaleOverwrites => r.stale_overwrites,
                _ => r.stale_rejections,
            });
            return n.min(i64::MAX as u64) as i64;
        }
        if field == SinkField::Compensations {
            let n = self
                .sink_compensations
                .get(sink as usize)
                .copied()
                .unwrap_or(0);
            return n.min(i64::MAX as u64) as i64;
        }
        if field == SinkField::CompensationsGivenUp {
            let n = self.sink_given_up.get(sink as usize).copied().unwrap_or(0);
            return n.min(i64::MAX as u64) as i64;
        }
        self.sinks
            .get(sink as usize)
            .map_or(0, |values| values[field as usize])
    }

    /// The mix kind (index into [`Scenario::kinds`]) of message `m`.
    pub fn kind(&self, scenario: &Scenario, m: MessageIndex) -> Option<u32> {
        self.draws.kind(scenario, m)
    }
}

/// A run stopped by one of the scenario's `[limits]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitReached {
    pub limit: Limit,
    /// Modeled time when the run stopped.
    pub at: Millis,
    pub deliveries: u64,
    /// Messages not final when it stopped (waiting, ready or in flight).
    pub pending: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Events(u64),
    Time(Millis),
    /// More deliveries in flight at once than the run may keep (sections
    /// 17-22: messages + [`super::receipts::EXTRA_DELIVERIES_IN_FLIGHT`]).
    InFlight(u64),
}

impl std::fmt::Display for LimitReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.limit {
            Limit::Events(n) => write!(
                f,
                "the run stopped at the event limit ([limits] max_events = {n})"
            ),
            Limit::Time(t) => write!(
                f,
                "the run stopped at the modeled-time limit ([limits] max_time = \"{}\")",
                crate::duration::format(t)
            ),
            Limit::InFlight(n) => write!(
                f,
                "the run stopped with more than {n} deliveries in flight at once, the most it keeps"
            ),
        }
    }
}

/// Every acked message's latency (from its first arrival to its ack), in
/// message order, walking the arrivals alongside the messages.
pub(super) fn latencies<'a>(
    scenario: &'a Scenario,
    messages: &'a Messages,
    draws: &'a Draws,
) -> impl Iterator<Item = (MessageIndex, Millis)> + 'a {
    // Consumers drive it with `for_each` or `fold`, which the chain of
    // blocks below runs as plain loops.
    draws
        .arrivals(scenario)
        .enumerate()
        .filter_map(|(m, arrived)| {
            let m = m as MessageIndex;
            Some((m, messages.acked_at(m)?.saturating_sub(arrived)))
        })
}

/// The `count` values of `values` (one latency per acked message) in a
/// vector allocated once, driven by `for_each` so that the blocks' walk
/// runs as plain loops.
pub(super) fn gather<T>(values: impl Iterator<Item = T>, count: u64) -> Vec<T> {
    let mut gathered = Vec::with_capacity(count as usize);
    values.for_each(|v| gathered.push(v));
    gathered
}

/// The nearest-rank 50th, 95th, 99th and 100th percentiles, selecting the
/// highest rank first and each lower one left of it.
pub(super) fn ranks<T: Ord + Copy + Into<u64>>(mut values: Vec<T>) -> [Millis; 4] {
    let n = values.len() as u64;
    if n == 0 {
        return [NO_TIME; 4];
    }
    let mut out = [NO_TIME; 4];
    let mut end = values.len();
    for (slot, p) in [(3, 100u64), (2, 99), (1, 95), (0, 50)] {
        let index = ((p * n).div_ceil(100)).max(1) as usize - 1;
        let (_, v, _) = values[..end].select_nth_unstable(index);
        out[slot] = (*v).into();
        end = index + 1;
    }
    out
}

/// Per message, what its dead-letter envelope and its archive say beyond
/// its state (sections 28.2 and 28.11): entries only for the messages they
/// concern.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeadLetters {
    /// In a log run, the record each quarantined message was
    /// dead-lettered from (its latest quarantine).
    pub records: std::collections::BTreeMap<MessageIndex, super::Record>,
    /// The messages whose latest quarantine was `max_elapsed`'s.
    pub by_elapsed: std::collections::BTreeSet<MessageIndex>,
    /// With `archive_after`: the messages copied to the archive at least
    /// once.
    pub archived: std::collections::BTreeSet<MessageIndex>,
    /// The messages that left quarantine to be delivered again (a
    /// redrive, a log's reprocessing): their state as they left, which
    /// their envelope keeps (decision 10.12, section 28.2) until they
    /// enter quarantine again. One entry a message at most.
    pub left: std::collections::BTreeMap<MessageIndex, super::MessageState>,
    /// The first deliveries ever that came after their message's arrival
    /// (the envelope's `first_delivery`, decision 10.12).
    pub first_deliveries: FirstDeliveries,
    /// The messages dead-lettered from a producer's duplicate record
    /// (section 28.6): its own append time, the envelope's event time.
    pub event_times: std::collections::BTreeMap<MessageIndex, Millis>,
}

/// The measures read from every message at the end: the messages still
/// pending, and the latency percentiles (nearest rank over acked
/// messages: the value at rank ceil(p * n / 100) of the ascending
/// latencies), gathered in four bytes each when the run is short enough
/// and selected in linear time.
pub(super) fn flow_measures(
    scenario: &Scenario,
    totals: &mut Totals,
    messages: &Messages,
    draws: &Draws,
    skipped_messages: u64,
) {
    // Every message is final (acked, quarantined, expired, purged),
    // skipped by a log's restart (its record passed over; counted as
    // messages, a producer's duplicates making records and messages
    // differ), or still going round.
    totals.pending = totals.messages
        - (totals.acked
            + totals.quarantined
            + totals.expired
            + totals.purged
            + totals.dropped
            + skipped_messages);
    let latencies = latencies(scenario, messages, draws).map(|(_, l)| l);
    let [p50, p95, p99, max] = if !scenario.wants_latency() {
        [NO_TIME; 4]
    } else if totals.end_time <= u32::MAX as Millis {
        ranks(gather(latencies.map(|l| l as u32), totals.acked))
    } else {
        ranks(gather(latencies, totals.acked))
    };
    totals.latency_p50 = p50;
    totals.latency_p95 = p95;
    totals.latency_p99 = p99;
    totals.latency_max = max;
}

/// Every mix kind's counts, in one pass over the generated messages of the
/// blocks that have a mix.
pub(super) fn kind_counts(
    scenario: &Scenario,
    messages: &Messages,
    draws: &Draws,
) -> Vec<[u64; 4]> {
    let mut counts = vec![[0u64; 4]; scenario.kinds.len()];
    for g in scenario.traffic.iter().filter(|g| !g.mix.is_empty()) {
        for m in g.first_index..g.first_index + g.count as MessageIndex {
            let Some(kind) = draws.kind(scenario, m) else {
                continue;
            };
            let state = messages.get(m);
            let c = &mut counts[kind as usize];
            c[KindField::Messages as usize] += 1;
            c[KindField::Acked as usize] += (state.state == State::Acked) as u64;
            c[KindField::Quarantined as usize] += (state.state == State::Quarantined) as u64;
            c[KindField::Deliveries as usize] += state.total_receives as u64;
        }
    }
    counts
}

/// The first deliveries ever that came after their message's arrival.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum FirstDeliveries {
    /// No message waits before its first delivery (a queue taken
    /// directly).
    #[default]
    AtArrival,
    /// Per message (0: at its arrival): where many may wait.
    Dense(Vec<Millis>),
    /// Those that waited: a log's records behind a busy or stopped
    /// partition.
    Sparse(rustc_hash::FxHashMap<MessageIndex, Millis>),
}

impl FirstDeliveries {
    /// Message `m`'s first delivery, if it came after its arrival.
    pub fn waited(&self, m: MessageIndex) -> Option<Millis> {
        match self {
            FirstDeliveries::AtArrival => None,
            FirstDeliveries::Dense(all) => all.get(m as usize).copied().filter(|&t| t > 0),
            FirstDeliveries::Sparse(some) => some.get(&m).copied(),
        }
    }
}
