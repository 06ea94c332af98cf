//! The validated scenario: the domain the engine runs. No file spans here,
//! except where an expectation remembers where it was written.

mod alarm;
mod checkpoint;
mod event;
mod expectation;
mod faults;
mod flow;
mod guarantee;
mod keys;
mod log;
mod measure;
mod question;
mod write;

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

pub use alarm::{Alarm, AlarmField, Metric};
pub use checkpoint::{
    CheckpointFailures, CheckpointField, CheckpointStatus, MAX_CHECKPOINT_FAILURES,
    MAX_CHECKPOINT_NUMBERS,
};
pub use event::{About, EventKind, KindPart, State};
pub use expectation::{
    Check, EnvelopeField, Expectation, KindField, MessageField, RowField, Takes, Target, Value,
    Verdict, describe,
};
pub use faults::{Asked, Faults};
pub use flow::{Downstream, Flow, Groups, OnLimit, Ordering, Overlap, StoppedBy, Workers};
pub use guarantee::{
    CrashAt, DedupMode, Guarantees, JETSTREAM_ACK_WAIT, JETSTREAM_MAX_ACK_PENDING, JetStream,
    MAX_ACK_BACKOFF, OnFailure, Profile, RABBITMQ_DELIVERY_LIMIT, RABBITMQ_OLDEST, Requeue,
    SQS_REDRIVE_RATE, SQS_RETENTION, SQS_VISIBILITY_TIMEOUT, Sink, SinkField, SinkKind, Sqs,
    default_sinks,
};
pub use keys::{Intents, KeyRef, Name};
pub use log::{
    DEFAULT_RETRY_BACKOFF, Guarantee, Log, MAX_LOST_APPEND_ACKS, MAX_PARTITIONS, MAX_RESTARTS,
    MAX_STORE_RESTARTS, Murmur2, PartitionField, Partitioner, Producer, Restart, RestartField,
    Resume, murmur2, own_partitions, partition_of,
};
pub use measure::{NO_TIME, Part, STATE_COUNT, Story, Total, Totals, Unit};
pub use question::Question;
pub use write::{
    CallSelector, Coordinator, DEFAULT_RELAY_ATTEMPTS, DEFAULT_RELAY_RETRY, MAX_ATTEMPTS,
    MAX_SINK_FAULTS, MAX_SINKS, Plan, PlanStep, ROWS_LISTED, RowWrite, SinkCalls, SinkFault,
    SinkFaultKind, StaleWrites, Strategy, VersionedRows, Write, WriteReasons,
};

/// Milliseconds of modeled time.
pub type Millis = u64;

/// Index of a message: explicit `[[message]]` entries first (file order),
/// then each `[[traffic]]` generator's messages in order.
pub type MessageIndex = u32;

/// Index of an application intent (a message's original key).
pub type IntentIndex = u32;

/// Index into [`Scenario::reasons`].
pub type ReasonIndex = u32;

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub seed: u64,
    pub delivery: Delivery,
    /// Quarantine retention; `None` means quarantined messages never expire.
    pub quarantine_retention: Option<Millis>,
    /// `[quarantine] expiry = "continuous"` (section 28.11): a message
    /// expires the instant its age reaches the retention, not only at an
    /// inspection.
    pub continuous_expiry: bool,
    /// `[quarantine] archive_after`: a message still in quarantine this
    /// long after entering it is archived (it stays).
    pub archive_after: Option<Millis>,
    /// Deduplication result retention; `None` means deduplication is off.
    pub dedup_retention: Option<Millis>,
    /// `[dedup] restarts` (section 28.5): when the store restarts, in time
    /// order; and whether a restart loses every entry (`persistence =
    /// "none"`).
    pub store_restarts: Vec<Millis>,
    pub store_loses_state: bool,
    pub operators: Vec<OperatorStep>,
    pub messages: Vec<MessageSpec>,
    pub traffic: Vec<Traffic>,
    pub outages: Vec<Outage>,
    pub limits: Limits,
    /// Workers, ordering, downstream capacity, what a limit does
    /// (sections 11-13).
    pub flow: Flow,
    /// Names of the `[[traffic.mix]]` kinds, distinct, in file order; a
    /// name used in several blocks is one kind.
    pub kinds: Vec<String>,
    /// `[[alarm]]`s, in file order.
    pub alarms: Vec<Alarm>,
    /// Visibility timeout, profile, store mode, quarantine on or off,
    /// sinks (sections 17-22).
    pub guarantees: Guarantees,
    /// Failure reasons, interned. The first three are fixed.
    pub reasons: Vec<String>,
    pub intents: Intents,
    pub expectations: Vec<Expectation>,
    /// `[[question]]`s, in file order.
    pub questions: Vec<Question>,
    /// `[log]`: the source is a partitioned log (section 23).
    pub log: Option<Log>,
    /// `[write]` and the sinks' calls (section 24); `None` when every
    /// effect reaches every sink at once (section 19).
    pub write: Option<Write>,
}

pub const REASON_HANDLER_ERROR: ReasonIndex = 0;
pub const REASON_DOWNSTREAM_UNAVAILABLE: ReasonIndex = 1;
pub const REASON_ACK_LOST: ReasonIndex = 2;
pub const REASON_THROTTLED: ReasonIndex = 3;
pub const REASON_IN_FLIGHT_ELSEWHERE: ReasonIndex = 4;
pub const REASON_CONSUMER_CRASHED: ReasonIndex = 5;
pub const REASON_VISIBILITY_TIMEOUT: ReasonIndex = 6;
pub const FIXED_REASONS: [&str; 7] = [
    "handler error",
    "downstream unavailable",
    "ack lost",
    "throttled",
    "in flight elsewhere",
    "consumer crashed",
    "visibility timeout",
];

/// `max_receives = "unlimited"`: no quarantine by budget.
pub const UNLIMITED_RECEIVES: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct Delivery {
    pub queue: String,
    pub max_receives: u32,
    /// Whether the file wrote `max_receives` (else it is the profile's
    /// default): a live check leaves a default to the broker's own.
    pub max_receives_written: bool,
    pub retry: Retry,
    pub permanent: Permanent,
    /// A retry budget by elapsed time (section 28.3): a retry due more
    /// than this after the cycle's first delivery started is not
    /// scheduled; the message is quarantined instead.
    pub max_elapsed: Option<Millis>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    Fixed(Millis),
    Backoff {
        base: Millis,
        cap: Option<Millis>,
        jitter: Jitter,
    },
}

impl Retry {
    /// Whether the delay is drawn at random (any jitter).
    pub fn is_drawn(self) -> bool {
        matches!(self, Retry::Backoff { jitter, .. } if jitter != Jitter::None)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Permanent {
    Retry,
    Quarantine,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Transient,
    Permanent,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::Permanent => "permanent",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The handler fails: nothing is committed.
    Fail,
    /// The handler succeeds but the acknowledgement is lost.
    LoseAck,
    /// The consumer is killed during the delivery (section 18).
    Crash(CrashAt),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector {
    /// The first N deliveries over the message's whole life.
    First(u64),
    /// Every delivery until the operator repairs.
    UntilRepair,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub selector: Selector,
    pub reason: ReasonIndex,
    pub class: Class,
    /// How long a failing delivery holds its worker (a handler that hangs
    /// until its timeout); `None`: the service time.
    pub takes: Option<Millis>,
}

impl Fault {
    /// Whether this fault applies at a delivery that is the message's
    /// `total_receives`-th, given whether the operator has repaired.
    pub fn applies(&self, total_receives: u64, repaired: bool) -> bool {
        match self.selector {
            Selector::First(n) => total_receives <= n,
            Selector::UntilRepair => !repaired,
        }
    }
}

#[derive(Debug, Clone)]
pub struct MessageSpec {
    pub id: String,
    pub key: String,
    /// The ordering group, when the file names one (default: the key).
    pub group: Option<String>,
    pub at: Millis,
    pub payload: Option<toml::Table>,
    pub faults: Faults,
    /// With `[log]`: how many of its first appends lose their
    /// acknowledgement (`lose_append_ack`, section 28.6): the producer's
    /// retries, kept apart from the delivery faults.
    pub lost_append_acks: u64,
    /// With `[log]`: the partition the file names (default: the key's).
    pub partition: Option<u32>,
    /// Carried into every envelope (section 28.2).
    pub schema_version: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Traffic {
    pub count: u64,
    pub start: Millis,
    pub over: Millis,
    pub arrival: Arrival,
    pub id_prefix: String,
    pub faults: Faults,
    /// Every generated message's lost append acknowledgements (section
    /// 28.6).
    pub lost_append_acks: u64,
    /// `groups = N`: per-key groups `<id_prefix>g1` .. `<id_prefix>gN`.
    pub groups: Option<u64>,
    /// With `[log]`: the partition of every record of the block (default:
    /// each key's).
    pub partition: Option<u32>,
    /// Every generated message's schema version (section 28.2).
    pub schema_version: Option<String>,
    /// The `[[traffic.mix]]` kinds, in file order.
    pub mix: Vec<MixKind>,
    /// Index of this generator's first message.
    pub first_index: MessageIndex,
    /// The block's random stream: its 1-based position in the file.
    pub stream: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    Even,
    Poisson,
}

/// One kind of a traffic mix.
#[derive(Debug, Clone)]
pub struct MixKind {
    /// Index into [`Scenario::kinds`].
    pub kind: u32,
    /// How many of the 1,000,000 draw values it owns: round(share * 1e6).
    pub width: u32,
    /// The block's own faults, then the kind's.
    pub faults: Faults,
}

impl Traffic {
    /// Arrival time of the j-th generated message (j from 1) with even
    /// spacing; Poisson arrivals are drawn by the engine.
    pub fn arrival(&self, j: u64) -> Millis {
        self.start
            .saturating_add(even_arrival(j, self.over, self.count))
    }
}

/// Even spacing (docs/model.md 10.16): message j of `count` (j from 1) arrives
/// at floor((j - 1) * over / count).
pub fn even_arrival(j: u64, over: Millis, count: u64) -> Millis {
    match (j - 1).checked_mul(over) {
        Some(product) => product / count,
        None => ((j - 1) as u128 * over as u128 / count as u128) as Millis,
    }
}

/// Every even arrival of a block in order: [`even_arrival`] for j = 1, 2,
/// ..., `count`, by adding the quotient and carrying the remainder instead
/// of a division per message.
#[derive(Debug, Clone)]
pub struct EvenArrivals {
    /// The next arrival, floor((j - 1) * over / count).
    at: Millis,
    /// ((j - 1) * over) mod count.
    carried: u64,
    step: Millis,
    remainder: u64,
    count: u64,
    left: u64,
}

impl EvenArrivals {
    pub fn new(over: Millis, count: u64) -> Self {
        let divisor = count.max(1);
        EvenArrivals {
            at: 0,
            carried: 0,
            step: over / divisor,
            remainder: over % divisor,
            count: divisor,
            left: count,
        }
    }
}

impl Iterator for EvenArrivals {
    type Item = Millis;

    #[inline]
    fn next(&mut self) -> Option<Millis> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = self.at;
        // carried < count and remainder < count: the sum fits in a u64
        // when count does not exceed 2^63, and counts are far below that.
        self.carried += self.remainder;
        self.at += self.step;
        if self.carried >= self.count {
            self.carried -= self.count;
            self.at += 1;
        }
        Some(at)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for EvenArrivals {}

#[derive(Debug, Clone, Copy)]
pub struct Outage {
    pub from: Millis,
    pub duration: Millis,
}

impl Outage {
    pub fn contains(&self, t: Millis) -> bool {
        t >= self.from && t - self.from < self.duration
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_events: u64,
    pub max_time: Millis,
    pub max_messages: u64,
}

/// The highest `[limits] max_messages` a file may set: a run costs 12 to
/// 25 bytes a message (about 60 with workers, ordering and Poisson
/// arrivals, and 56 more for a message redriven or past the compact
/// record's range), so this keeps any file within about 6 GB.
pub const MAX_MESSAGES_CEILING: u64 = 50_000_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: 100_000_000,
            max_time: 365 * 86_400_000,
            max_messages: 20_000_000,
        }
    }
}

#[derive(Debug, Clone)]
pub struct OperatorStep {
    pub wait: Millis,
    pub repair: bool,
    pub action: Action,
    pub identity: Identity,
    /// Redrive only the first N retained messages first (section 20).
    pub canary: Option<u32>,
    /// sqs-standard: messages moved per second (default 500).
    pub redrive_rate: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Hold,
    RedriveAll,
    /// Redrive only these messages (in file order of `only`).
    Redrive(Vec<MessageIndex>),
    Purge,
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Hold => "hold",
            Action::RedriveAll => "redrive_all",
            Action::Redrive(_) => "redrive",
            Action::Purge => "purge",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    Stable,
    New,
}

impl Scenario {
    /// Total number of messages, explicit and generated.
    pub fn message_count(&self) -> u64 {
        self.messages.len() as u64 + self.traffic.iter().map(|t| t.count).sum::<u64>()
    }

    /// The generator that produced message `m`, with its 1-based number.
    /// How many of message `m`'s first appends lose their acknowledgement
    /// (section 28.6): its producer's retries.
    pub fn lost_append_acks(&self, m: MessageIndex) -> u64 {
        match self.messages.get(m as usize) {
            Some(spec) => spec.lost_append_acks,
            None => self
                .generated(m)
                .map_or(0, |(block, _)| block.lost_append_acks),
        }
    }

    pub fn generated(&self, m: MessageIndex) -> Option<(&Traffic, u64)> {
        if (m as usize) < self.messages.len() {
            return None;
        }
        // Blocks are in index order: the last one starting at or before m
        // (O(log n) in the number of blocks).
        crate::meter::search(self.traffic.len());
        let after = self.traffic.partition_point(|t| t.first_index <= m);
        let g = &self.traffic[after
            .checked_sub(1)
            .expect("generated index belongs to a generator")];
        Some((g, (m - g.first_index) as u64 + 1))
    }

    pub fn message_id(&self, m: MessageIndex) -> Cow<'_, str> {
        self.name_of_message(m).as_cow()
    }

    /// Finds a message by id, explicit or generated.
    pub fn find_message(&self, id: &str) -> Option<MessageIndex> {
        if let Some(i) = self.messages.iter().position(|m| m.id == id) {
            return Some(i as MessageIndex);
        }
        self.find_generated(id)
    }

    /// Finds a generated message by id.
    pub fn find_generated(&self, id: &str) -> Option<MessageIndex> {
        self.traffic.iter().find_map(|g| {
            generated_number(id, &g.id_prefix, g.count)
                .map(|j| g.first_index + (j - 1) as MessageIndex)
        })
    }

    /// Message `m`'s schema version, carried into its envelope.
    pub fn schema_version(&self, m: MessageIndex) -> Option<&str> {
        match self.generated(m) {
            None => self.messages[m as usize].schema_version.as_deref(),
            Some((block, _)) => block.schema_version.as_deref(),
        }
    }

    pub fn payload(&self, m: MessageIndex) -> Option<&toml::Table> {
        match self.generated(m) {
            None => self.messages[m as usize].payload.as_ref(),
            Some(_) => None,
        }
    }
}

/// If `id` is `<prefix><j>` with 1 <= j <= count (no leading zero), j.
pub fn generated_number(id: &str, prefix: &str, count: u64) -> Option<u64> {
    let rest = id.strip_prefix(prefix)?;
    if rest.is_empty() || rest.starts_with('0') || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let j: u64 = rest.parse().ok()?;
    (j >= 1 && j <= count).then_some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_arrivals_walked_in_order_equal_the_formula() {
        // Spacings with and without a remainder, below a millisecond, and
        // products (j - 1) * over past 2^64.
        let cases = [
            (10_000, 7),
            (5, 13),
            (0, 4),
            (3_600_000, 10_000_000),
            (360_000_000, 1),
            (u64::MAX / 3, 9),
            (u64::MAX, 1_000),
            (1 << 41, 10_000_007),
        ];
        for (over, count) in cases {
            let walked = EvenArrivals::new(over, count);
            assert_eq!(walked.len(), count as usize, "{over} over {count}");
            for (j, at) in (1..=count.min(1_000)).zip(walked) {
                assert_eq!(
                    at,
                    even_arrival(j, over, count),
                    "{over} over {count}, j = {j}"
                );
            }
            // The last arrivals of long blocks too.
            if count > 1_000 {
                let walked = EvenArrivals::new(over, count).skip(count as usize - 5);
                for (j, at) in (count - 4..=count).zip(walked) {
                    assert_eq!(
                        at,
                        even_arrival(j, over, count),
                        "{over} over {count}, j = {j}"
                    );
                }
            }
        }
        assert_eq!(EvenArrivals::new(100, 0).next(), None);
    }
}
