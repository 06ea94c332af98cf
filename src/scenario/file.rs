//! The scenario file as written: serde types that keep the byte span of
//! every value, so that validation and expectations can point into the file.
//! Nothing outside `scenario/` and `expect/` sees these types.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::duration::Duration;

pub use super::spanned::S;

/// The top-level keys of a scenario file, as in [`File`].
pub const TABLES: [&str; 22] = [
    "scenario",
    "delivery",
    "quarantine",
    "dedup",
    "operator",
    "message",
    "traffic",
    "outage",
    "workers",
    "downstream",
    "alarm",
    "sink",
    "write",
    "coordinator",
    "log",
    "restart",
    "checkpoint_failure",
    "producer",
    "limits",
    "sweep",
    "question",
    "expect",
];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// Name, summary, description (Markdown), tags and seed.
    pub scenario: Option<S<ScenarioMeta>>,
    /// The source queue: receives per cycle and the wait between them.
    pub delivery: Option<S<Delivery>>,
    /// The dead-letter queue (quarantine).
    pub quarantine: Option<S<Quarantine>>,
    /// The deduplication store of committed results.
    pub dedup: Option<S<Dedup>>,
    #[serde(default)]
    /// Operator steps, in order; each runs `wait` after the previous cycle drains.
    pub operator: Vec<S<Operator>>,
    #[serde(default)]
    /// Explicit messages, delivered in file order when they arrive together.
    pub message: Vec<S<Message>>,
    #[serde(default)]
    /// Generated messages, evenly spaced.
    pub traffic: Vec<S<Traffic>>,
    #[serde(default)]
    /// Windows in which every delivery fails with "downstream unavailable".
    pub outage: Vec<S<Outage>>,
    /// A pool of workers with a service time (default: unlimited, zero).
    pub workers: Option<S<WorkersTable>>,
    /// A downstream that accepts at most `limit` calls per window.
    pub downstream: Option<S<DownstreamTable>>,
    #[serde(default)]
    /// Alarms on the queues: each fires when its metric reaches `at_least`.
    pub alarm: Vec<S<super::alarms::AlarmTable>>,
    #[serde(default)]
    /// Where effects land: increment, upsert or irreversible (default: one increment sink, "counter").
    pub sink: Vec<S<SinkTable>>,
    /// How one write reaches several sinks: direct, outbox, two_phase or saga.
    pub write: Option<S<WriteTable>>,
    /// Two-phase commit's coordinator: a crash after prepare.
    pub coordinator: Option<S<CoordinatorTable>>,
    /// The source is a partitioned log: partitions, guarantee, checkpoints.
    pub log: Option<S<LogTable>>,
    #[serde(default)]
    /// Restarts of the log's consumer, in time order.
    pub restart: Vec<S<RestartTable>>,
    /// With `[log]`: the producer that appends the records, and its retries.
    pub producer: Option<S<ProducerTable>>,
    #[serde(default)]
    /// Log checkpoints that fail: a window of time, or checkpoint numbers.
    pub checkpoint_failure: Vec<S<CheckpointFailureTable>>,
    #[serde(default)]
    /// Questions a report asks before revealing the answer, computed from the run.
    pub question: Vec<S<super::questions::QuestionTable>>,
    /// Where a run that would not end is stopped.
    pub limits: Option<S<Limits>>,
    /// Expected outcomes: totals, per message (`[expect.message.ID]`) and events.
    pub expect: Option<S<Expect>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioMeta {
    /// Shown in output and reports (default: the file name).
    pub name: Option<S<String>>,
    /// One line shown under the name.
    pub summary: Option<String>,
    /// Markdown, shown in reports.
    pub description: Option<String>,
    #[serde(default)]
    /// Select scenarios with --tag.
    pub tags: Vec<String>,
    /// Seed of the scenario's one RNG (jitter draws). Default 0.
    #[schemars(range(min = 0))]
    pub seed: Option<S<i64>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::file_shapes::delivery_profiles)]
pub struct Delivery {
    /// Source queue name, shown in quarantine envelopes. Default "source".
    pub queue: Option<String>,
    /// Receives per cycle, the first delivery included (at least 1), or
    /// "unlimited"; under rabbitmq-quorum the delivery limit (0 allowed).
    pub max_receives: Option<S<Receives>>,
    /// A fixed wait between receives, e.g. "10s". Or use `backoff`.
    pub retry_interval: Option<S<Duration>>,
    /// A retry budget by elapsed time: a retry due more than this after
    /// the cycle's first delivery started is not scheduled, the message is
    /// quarantined instead (at least 1ms; default none).
    pub max_elapsed: Option<S<Duration>>,
    /// Exponential backoff: base * 2^(n-1), capped, with jitter.
    pub backoff: Option<S<Backoff>>,
    /// "retry" (default): permanent failures use the budget; "quarantine": they go straight to quarantine.
    pub permanent: Option<S<Permanent>>,
    /// none (default) | fifo (one group) | per_key (a group per key or `group`).
    pub ordering: Option<S<Ordering>>,
    /// A delivery still running this long after it started: the message is visible again.
    pub visibility_timeout: Option<S<Duration>>,
    /// model (default) | sqs-standard | rabbitmq-quorum | rabbitmq-classic |
    /// nats-jetstream.
    pub profile: Option<S<ProfileName>>,
    /// nats-jetstream: the consumer's BackOff, e.g. ["1s", "5s", "30s"]:
    /// the ack wait of a cycle's n-th delivery, the last value repeating.
    #[schemars(length(min = 1, max = crate::model::MAX_ACK_BACKOFF))]
    pub ack_backoff: Option<S<Vec<Duration>>>,
    /// nats-jetstream: "nak" (default; redelivered at the delivery's end
    /// plus the retry delay) or "no_ack" (redelivered when the ack wait
    /// ends); sqs-standard: "no_ack" (default) or "change_visibility" (the
    /// visibility set to the retry delay at the failure).
    pub on_failure: Option<S<OnFailureName>>,
    /// nats-jetstream: the consumer's MaxAckPending, how many messages may
    /// be delivered and not yet acked or given up at once (default 1000),
    /// or "unlimited"; 1 delivers the stream one message at a time.
    pub max_ack_pending: Option<S<Receives>>,
    /// sqs-standard: while the handler runs it extends the visibility
    /// timeout every this long (ChangeMessageVisibility), e.g. "10s".
    pub visibility_heartbeat: Option<S<Duration>>,
    /// rabbitmq-quorum: the RabbitMQ version whose rules apply, "3.8" and
    /// later, e.g. "3.10": where a requeued message goes and the default
    /// delivery limit. Without it: section 21 as written.
    #[schemars(regex(pattern = r"^[0-9]{1,4}\.[0-9]{1,4}(\.[0-9]{1,4})?$"))]
    pub broker_version: Option<S<String>>,
}

/// `max_receives` and `max_ack_pending`: a count, or "unlimited".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receives {
    Count(i64),
    /// Any other text: only "unlimited" is valid.
    Text(String),
}

impl<'de> Deserialize<'de> for Receives {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Receives;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number, or \"unlimited\"")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Receives, E> {
                Ok(Receives::Count(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Receives, E> {
                Ok(Receives::Count(v.try_into().unwrap_or(i64::MAX)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Receives, E> {
                Ok(Receives::Text(v.to_string()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl JsonSchema for Receives {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Receives".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "oneOf": [
                { "type": "integer", "minimum": 0, "maximum": 4294967294u64 },
                { "const": "unlimited" }
            ]
        })
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ordering {
    None,
    Fifo,
    PerKey,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkersTable {
    /// How many deliveries run at once (at least 1).
    #[schemars(range(min = 1))]
    pub count: S<i64>,
    /// How long a delivery holds its worker (default "0s").
    pub service_time: Option<S<Duration>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogTable {
    /// How many partitions (default 1, at most 1024).
    pub partitions: Option<S<i64>>,
    /// at_least_once (default) | at_most_once | exactly_once.
    pub guarantee: Option<S<GuaranteeName>>,
    /// How often positions are committed (required unless at_most_once).
    pub checkpoint_interval: Option<S<Duration>>,
    /// How long processing one record takes (default "0s").
    pub service_time: Option<S<Duration>>,
    /// A record not done when a restart comes keeps its receive count
    /// (default false: a fresh attempt).
    pub carry_attempts: Option<bool>,
    /// Every completed checkpoint is a transition (default false; on with
    /// `[[checkpoint_failure]]`).
    pub checkpoint_events: Option<bool>,
}

/// `[producer]`: how the log's producer retries an append whose
/// acknowledgement was lost (section 28.6).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProducerTable {
    /// true (default, Kafka 3.0 and later): the broker recognises a retry
    /// and appends nothing; false: each retry appends a duplicate record.
    pub idempotence: Option<bool>,
    /// How long the producer waits before appending again (default "100ms").
    pub retry_backoff: Option<S<Duration>>,
}

/// `[[checkpoint_failure]]`: checkpoints that commit nothing.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointFailureTable {
    /// With `duration`: every checkpoint instant in [from, from + duration) fails.
    pub from: Option<S<Duration>>,
    pub duration: Option<S<Duration>>,
    /// Instead of a window: the checkpoints that fail, numbered from 1.
    pub numbers: Option<S<Vec<i64>>>,
    /// failed (default) | aborted: a label; both commit nothing.
    pub status: Option<S<CheckpointStatusName>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointStatusName {
    Failed,
    Aborted,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuaranteeName {
    AtLeastOnce,
    AtMostOnce,
    ExactlyOnce,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestartTable {
    /// When the consumer restarts.
    pub at: S<Duration>,
    /// How long it stays down (default "0s").
    pub down_for: Option<S<Duration>>,
    /// committed (default) | stale | earliest | latest.
    pub resume: Option<S<ResumeName>>,
    /// With resume = "stale": how old the restored checkpoint is.
    pub checkpoint_age: Option<S<Duration>>,
    /// Records skipped past the resume position (an offset-tracking bug).
    pub skip: Option<S<i64>>,
    /// Only this partition restarts (default: every partition).
    pub partition: Option<S<i64>>,
    /// With resume = "offsets": the offset each restarted partition
    /// resumes at, in partition order.
    pub offsets: Option<S<Vec<i64>>>,
    /// With resume = "offsets": where each partition's replay ends, above
    /// its offset; it then goes on where it was before the restart.
    pub replay_until: Option<S<Vec<i64>>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResumeName {
    Committed,
    Stale,
    Earliest,
    Latest,
    Offsets,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownstreamTable {
    /// Calls accepted per window (at least 1).
    #[schemars(range(min = 1))]
    pub limit: S<i64>,
    /// The window's length (default "1s").
    pub per: Option<S<Duration>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Backoff {
    /// The first wait, e.g. "1s".
    pub base: S<Duration>,
    /// The longest wait.
    pub cap: Option<S<Duration>>,
    /// none (default) | full | equal | decorrelated.
    pub jitter: Option<S<Jitter>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Permanent {
    Retry,
    Quarantine,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quarantine {
    /// How long a message stays in quarantine, measured from entering it. Absent: forever.
    pub retention: Option<S<Duration>>,
    /// false: no dead-letter queue; a message that exhausts its budget is dropped.
    pub enabled: Option<bool>,
    /// at_inspection (default): retention is applied when the operator
    /// looks; continuous: a message expires the instant its age reaches
    /// the retention (needs `retention`).
    pub expiry: Option<S<ExpiryName>>,
    /// A message still in quarantine this long after entering it is copied
    /// to an archive (it stays in quarantine); below `retention`.
    pub archive_after: Option<S<Duration>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExpiryName {
    AtInspection,
    Continuous,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::file_shapes::dedup_modes)]
pub struct Dedup {
    /// Whether the store is used (default true when the table is present).
    pub enabled: Option<bool>,
    /// How long a committed result is kept; valid strictly before it expires.
    pub result_retention: Option<S<Duration>>,
    /// result (default) | write_intent (INTENT claims with a lease, then DONE).
    pub mode: Option<S<DedupModeName>>,
    /// write_intent: how long an INTENT claim lives.
    pub lease: Option<S<Duration>>,
    /// write_intent: renew the claim this often while its delivery runs.
    pub renew: Option<S<Duration>>,
    /// durable (default): a store restart loses nothing; none: it loses
    /// every result, claim and DONE (a Redis without persistence).
    pub persistence: Option<S<PersistenceName>>,
    /// When the store restarts: durations, strictly increasing, at most 100.
    pub restarts: Option<S<Vec<S<Duration>>>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PersistenceName {
    Durable,
    None,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Operator {
    /// Wait after the previous cycle drains before inspecting.
    pub wait: Option<S<Duration>>,
    /// Repair the handler: `until = "repair"` faults stop applying.
    pub repair: Option<bool>,
    /// hold | redrive_all | redrive (with `only`) | purge.
    pub action: Option<S<Action>>,
    /// With action = "redrive": the message ids to redrive.
    pub only: Option<S<Vec<S<String>>>>,
    /// stable (keep the key) | new (a fresh key `<key>~rN`).
    pub identity: Option<S<Identity>>,
    /// Redrive the first N retained messages first; the rest follow only if all N are acked.
    #[schemars(range(min = 1))]
    pub canary: Option<S<i64>>,
    /// sqs-standard: messages a redrive moves per second (default 500).
    #[schemars(range(min = 1))]
    pub redrive_rate: Option<S<i64>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Hold,
    RedriveAll,
    Redrive,
    Purge,
}

impl Action {
    /// The word the file writes.
    pub fn word(self) -> &'static str {
        match self {
            Action::Hold => "hold",
            Action::RedriveAll => "redrive_all",
            Action::Redrive => "redrive",
            Action::Purge => "purge",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    Stable,
    New,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Unique message id.
    pub id: S<String>,
    /// Deduplication key (default: the id).
    pub key: Option<S<String>>,
    /// Arrival time (default "0s").
    pub at: Option<S<Duration>>,
    /// Ordering group under ordering = "per_key" (default: the key).
    pub group: Option<S<String>>,
    /// With `[log]`: the partition (0-based; default: Kafka's partition of the key).
    pub partition: Option<S<i64>>,
    /// Shown in the quarantine envelope.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub payload: Option<toml::Table>,
    /// Carried untouched into every envelope, like `payload` (1 to 64
    /// characters).
    pub schema_version: Option<S<String>>,
    /// The row the message writes in versioned sinks (default: its current key).
    pub row: Option<S<String>>,
    /// The version it writes in versioned sinks (default: its first arrival in ms).
    #[schemars(range(min = 0))]
    pub version: Option<S<i64>>,
    /// The value it writes in versioned sinks (default: its version).
    pub value: Option<S<i64>>,
    #[serde(default)]
    /// What goes wrong, checked in file order at each delivery.
    pub faults: Vec<S<Fault>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::file_shapes::fault_kinds)]
pub struct Fault {
    /// The handler fails: { first = N } or { until = "repair" }.
    pub fail: Option<S<Selector>>,
    /// The handler commits but the acknowledgement is lost: { first = N } or { until = "repair" }.
    pub lose_ack: Option<S<Selector>>,
    /// The consumer is killed during the delivery: { first = N } or { until = "repair" }, with `at`.
    pub crash: Option<S<Selector>>,
    /// With `[log]`: the message's first N appends lose their acknowledgement
    /// and the producer appends again: { first = N }.
    pub lose_append_ack: Option<S<Selector>>,
    /// With `crash`: before_effect | after_effect | after_done.
    pub at: Option<S<CrashAtName>>,
    /// Failure reason (default "handler error").
    pub reason: Option<S<String>>,
    /// transient (default) | permanent.
    pub class: Option<S<Class>>,
    /// With `fail`: how long the failing delivery holds its worker, e.g. "30s".
    pub takes: Option<S<Duration>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::file_shapes::selector_kinds)]
pub struct Selector {
    /// The first N deliveries over the message's whole life.
    #[schemars(range(min = 0))]
    pub first: Option<S<i64>>,
    /// Every delivery until an operator step repairs.
    pub until: Option<S<Until>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    /// How many messages.
    #[schemars(range(min = 0))]
    pub count: S<i64>,
    /// The first arrival (default "0s").
    pub start: Option<S<Duration>>,
    /// The messages arrive over this long.
    pub over: S<Duration>,
    /// Ids are `<prefix>1` .. `<prefix>N`.
    pub id_prefix: Option<S<String>>,
    /// even (default) | poisson.
    pub arrival: Option<S<Arrival>>,
    /// With ordering = "per_key": the messages share N groups `<prefix>g1` .. `<prefix>gN`.
    #[schemars(range(min = 1))]
    pub groups: Option<S<i64>>,
    /// With `[log]`: every record of the block goes to this partition (default: the partition of each key).
    pub partition: Option<S<i64>>,
    /// Every generated message's schema version, carried into its
    /// envelope (1 to 64 characters).
    pub schema_version: Option<S<String>>,
    /// The row every generated message writes in versioned sinks (default: each message's key).
    pub row: Option<S<String>>,
    #[serde(default)]
    /// Faults of every generated message.
    pub faults: Vec<S<Fault>>,
    #[serde(default)]
    /// Kinds of message, each drawn with its share and given its faults.
    pub mix: Vec<S<Mix>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    /// The kind's name, for `[expect.kind."NAME"]` and reports.
    pub name: S<String>,
    /// The fraction of the block's messages, in [0, 1].
    #[schemars(with = "f64")]
    #[schemars(range(min = 0, max = 1))]
    pub share: S<Share>,
    #[serde(default)]
    /// Faults of this kind, after the block's own.
    pub faults: Vec<S<Fault>>,
}

/// A share: a number, integer or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share(pub f64);

impl<'de> Deserialize<'de> for Share {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Share;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number between 0 and 1, e.g. 0.02")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Share, E> {
                Ok(Share(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Share, E> {
                Ok(Share(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Share, E> {
                Ok(Share(v as f64))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    Even,
    Poisson,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Default 100,000,000.
    #[schemars(range(min = 0))]
    pub max_events: Option<S<i64>>,
    /// Modeled time; default "365d".
    pub max_time: Option<S<Duration>>,
    /// Default 20,000,000.
    #[schemars(range(min = 0))]
    pub max_messages: Option<S<i64>>,
    /// fail (default): a run that hits a limit is an error; stop: it ends there and is judged.
    pub on_limit: Option<S<OnLimit>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnLimit {
    Fail,
    Stop,
}

pub use super::file_expect::*;
pub use super::file_guarantees::*;
