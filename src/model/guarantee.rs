//! What the broker and the consumer guarantee (docs/model.md sections
//! 17-22): a visibility timeout, the broker profile, consumer crashes, the
//! deduplication store's mode, quarantine on or off, and the sinks the
//! effects reach. A scenario without these keys has none of them: sections
//! 1-16 unchanged.

use super::{Millis, Scenario, UNLIMITED_RECEIVES};

/// `[delivery] profile`: whose rules the broker follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Every rule of the model as written.
    #[default]
    Model,
    /// Amazon SQS standard queue with a redrive policy (section 21).
    SqsStandard,
    /// RabbitMQ quorum queue with a delivery limit (section 21).
    RabbitmqQuorum,
    /// RabbitMQ classic queue: no delivery limit, a requeued message back
    /// at its original position (section 21, decided by this project).
    RabbitmqClassic,
    /// A NATS JetStream stream with a durable consumer and explicit acks
    /// (docs/model.md section 21, decided by this project).
    NatsJetstream,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Model => "model",
            Profile::SqsStandard => "sqs-standard",
            Profile::RabbitmqQuorum => "rabbitmq-quorum",
            Profile::RabbitmqClassic => "rabbitmq-classic",
            Profile::NatsJetstream => "nats-jetstream",
        }
    }

    /// Whether quarantine retention counts from the message's latest
    /// enqueue rather than from entering quarantine: SQS keeps a message's
    /// age through the move, and a JetStream stream's max age counts from
    /// the publish.
    pub fn retention_from_enqueue(self) -> bool {
        matches!(self, Profile::SqsStandard | Profile::NatsJetstream)
    }

    /// Whether the broker is RabbitMQ (a quorum or a classic queue), which
    /// writes `x-death` on a dead letter.
    pub fn is_rabbitmq(self) -> bool {
        matches!(self, Profile::RabbitmqQuorum | Profile::RabbitmqClassic)
    }
}

/// The visibility timeout sqs-standard uses when the file gives none.
pub const SQS_VISIBILITY_TIMEOUT: Millis = 30_000;
/// The quarantine retention sqs-standard uses when the file gives none.
pub const SQS_RETENTION: Millis = 4 * 86_400_000;
/// Messages a redrive moves per second under sqs-standard by default.
pub const SQS_REDRIVE_RATE: u64 = 500;
/// rabbitmq-quorum's delivery limit when the file gives none.
pub const RABBITMQ_DELIVERY_LIMIT: u32 = 20;
/// Where a quorum queue puts a message that a nack with requeue returns
/// (rabbitmq-quorum, by `broker_version`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Requeue {
    /// Behind what is already due (section 21, rabbitmq-quorum 2).
    #[default]
    Back,
    /// Ahead of every ready message: the head of the queue (RabbitMQ 3.10
    /// to 4.2 with a delivery limit) or its returns queue (4.3 and later).
    /// With prefetch-1 workers the two give the same order: each return
    /// frees the worker that takes it at once.
    Front,
    /// At its original position: ahead of every ready message published
    /// after it, behind those published before it (rabbitmq-classic).
    Original,
}

/// The oldest `broker_version` rabbitmq-quorum takes: quorum queues got
/// their delivery limit in RabbitMQ 3.8.
pub const RABBITMQ_OLDEST: (u32, u32) = (3, 8);

/// The ack wait nats-jetstream uses when the file gives no
/// `visibility_timeout` (JetStream's default AckWait).
pub const JETSTREAM_ACK_WAIT: Millis = 30_000;
/// The most values `ack_backoff` may list.
pub const MAX_ACK_BACKOFF: usize = 64;
/// The MaxAckPending nats-jetstream uses when the file gives no
/// `max_ack_pending` (the server's default for a consumer).
pub const JETSTREAM_MAX_ACK_PENDING: u64 = 1_000;

/// What a nats-jetstream consumer does with a failed delivery.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// Nak it: redelivered at its end plus the retry delay (a nak with a
    /// delay when `retry_interval` or `backoff` is given).
    #[default]
    Nak,
    /// Leave it unacknowledged: redelivered when its ack wait ends.
    NoAck,
    /// sqs-standard: ChangeMessageVisibility to the retry delay, so that
    /// it is received again at its end plus that delay.
    ChangeVisibility,
}

impl OnFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Nak => "nak",
            OnFailure::NoAck => "no_ack",
            OnFailure::ChangeVisibility => "change_visibility",
        }
    }
}

/// The consumer settings of an sqs-standard file beyond its timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sqs {
    /// `[delivery] visibility_heartbeat`: while the handler runs, it
    /// extends the visibility timeout every this long (below the timeout).
    pub heartbeat: Option<Millis>,
    /// `[delivery] on_failure = "change_visibility"`: a failed delivery
    /// sets its visibility to the retry delay.
    pub change_visibility: bool,
}

/// The consumer settings of a nats-jetstream file beyond its ack wait.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JetStream {
    /// `[delivery] ack_backoff` (JetStream's BackOff): the ack wait of a
    /// cycle's n-th delivery is its n-th value, the last one repeating;
    /// empty: `visibility_timeout` (AckWait) for every delivery.
    pub ack_backoff: Vec<Millis>,
    /// `[delivery] on_failure`.
    pub on_failure: OnFailure,
    /// `[delivery] max_ack_pending` (JetStream's MaxAckPending): how many
    /// messages may be pending (delivered in their cycle, not yet acked or
    /// given up) at once; `None`: unlimited.
    pub max_ack_pending: Option<u64>,
}

/// Where a `crash` fault kills the consumer (section 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashAt {
    /// Before the call: no effect (a claim made stays as INTENT).
    BeforeEffect,
    /// After the effect, before DONE is recorded.
    AfterEffect,
    /// After the effect and DONE.
    AfterDone,
}

impl CrashAt {
    pub fn as_str(self) -> &'static str {
        match self {
            CrashAt::BeforeEffect => "before_effect",
            CrashAt::AfterEffect => "after_effect",
            CrashAt::AfterDone => "after_done",
        }
    }
}

/// `[dedup] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DedupMode {
    /// A result per key (section 3.3).
    #[default]
    Result,
    /// INTENT claims with a lease, then DONE (section 18).
    WriteIntent {
        lease: Millis,
        /// Renew the claim every this long while its delivery runs.
        renew: Option<Millis>,
    },
}

/// `[[sink]] kind` (section 19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SinkKind {
    /// Adds one per effect.
    Increment,
    /// A row per key: the same key again changes nothing.
    Upsert,
    /// A send: every effect reaches a person.
    Irreversible,
}

impl SinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SinkKind::Increment => "increment",
            SinkKind::Upsert => "upsert",
            SinkKind::Irreversible => "irreversible",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sink {
    pub name: String,
    pub kind: SinkKind,
}

/// The sink a file without `[[sink]]` has: the ledger as a counter.
pub fn default_sinks() -> Vec<Sink> {
    vec![Sink {
        name: "counter".to_string(),
        kind: SinkKind::Increment,
    }]
}

/// A field of `[expect.sink."NAME"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SinkField {
    Value,
    VisibleDuplicates,
    /// Intents of arrived messages never visible in the sink.
    Missing,
    /// The most visible writes of one intent.
    MaxPerIntent,
    /// Outbox: the latest application minus its row's time, at most (a
    /// duration; not in [`SinkField::ALL`], which lists the counts).
    MaxLag,
    /// Saga: the compensations given up in this sink (not in
    /// [`SinkField::ALL`]: listed for saga files).
    CompensationsGivenUp,
    /// `becomes` (section 28.8): write calls applied at or after the
    /// change (not in [`SinkField::ALL`]).
    WritesAfterChange,
    /// `becomes`: the kind the sink applies writes by at the end, a text
    /// (not in [`SinkField::ALL`]).
    KindAtEnd,
    /// `versioned` (section 28.9): writes older than their row that
    /// overwrote it (not in [`SinkField::ALL`]).
    StaleOverwrites,
    /// `versioned`: writes older than their row that it rejected (not in
    /// [`SinkField::ALL`]).
    StaleRejections,
    /// A mixed write (section 28.1): the compensations applied to this
    /// sink (not in [`SinkField::ALL`]).
    Compensations,
}

impl SinkField {
    /// What an expectation of this field takes: compensations can take a
    /// value and its visible duplicates below zero.
    pub fn takes(self) -> super::Takes {
        match self {
            SinkField::Value | SinkField::VisibleDuplicates => super::Takes::Signed,
            SinkField::Missing
            | SinkField::MaxPerIntent
            | SinkField::CompensationsGivenUp
            | SinkField::WritesAfterChange
            | SinkField::StaleOverwrites
            | SinkField::StaleRejections
            | SinkField::Compensations => super::Takes::Count,
            SinkField::MaxLag => super::Takes::Time,
            SinkField::KindAtEnd => super::Takes::Text,
        }
    }

    pub const ALL: [SinkField; 4] = [
        SinkField::Value,
        SinkField::VisibleDuplicates,
        SinkField::Missing,
        SinkField::MaxPerIntent,
    ];

    /// Every field a `[[question]]` may ask of a sink: the counts, and the
    /// fields listed only for some files.
    pub const ASKED: [SinkField; 11] = [
        SinkField::Value,
        SinkField::VisibleDuplicates,
        SinkField::Missing,
        SinkField::MaxPerIntent,
        SinkField::MaxLag,
        SinkField::CompensationsGivenUp,
        SinkField::WritesAfterChange,
        SinkField::KindAtEnd,
        SinkField::StaleOverwrites,
        SinkField::StaleRejections,
        SinkField::Compensations,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SinkField::Value => "value",
            SinkField::VisibleDuplicates => "visible_duplicates",
            SinkField::Missing => "missing",
            SinkField::MaxPerIntent => "max_per_intent",
            SinkField::MaxLag => "max_lag",
            SinkField::CompensationsGivenUp => "compensations_given_up",
            SinkField::WritesAfterChange => "writes_after_change",
            SinkField::KindAtEnd => "kind_at_end",
            SinkField::StaleOverwrites => "stale_overwrites",
            SinkField::StaleRejections => "stale_rejections",
            SinkField::Compensations => "compensations",
        }
    }
}

/// The settings of sections 17-22, resolved (profile defaults applied).
#[derive(Debug, Clone, Default)]
pub struct Guarantees {
    pub profile: Profile,
    /// `[delivery] visibility_timeout` (sqs-standard: 30s by default).
    pub visibility_timeout: Option<Millis>,
    pub dedup_mode: DedupMode,
    /// nats-jetstream's consumer settings (None under other profiles).
    pub jetstream: Option<JetStream>,
    /// sqs-standard's consumer settings (None under other profiles).
    pub sqs: Option<Sqs>,
    /// rabbitmq-quorum's `broker_version` (major, minor): None follows
    /// section 21 as written.
    pub broker_version: Option<(u32, u32)>,
    /// `[quarantine] enabled` (default true): false drops instead.
    pub quarantine_enabled: bool,
    /// `[[sink]]` entries, or the default counter.
    pub sinks: Vec<Sink>,
    /// Whether the file wrote `[[sink]]` (reports then list the sinks).
    pub sinks_written: bool,
    /// Whether the file uses any of sections 17-22, so that their
    /// measures are listed in its outputs.
    pub extended: bool,
}

impl Scenario {
    /// Receives a cycle may have before the message is quarantined: the
    /// `max_receives` budget, or the delivery limit plus one under
    /// rabbitmq-quorum ("unlimited" stays unlimited).
    pub fn budget(&self) -> u32 {
        let max = self.delivery.max_receives;
        if self.guarantees.profile == Profile::RabbitmqQuorum && max != UNLIMITED_RECEIVES {
            max.saturating_add(1)
        } else {
            max
        }
    }

    /// Where a failed delivery requeued at once goes (rabbitmq-quorum with
    /// a `broker_version`): before 4.3 a queue with a delivery limit puts
    /// it at its head and one without at its back; from 4.3 a returns
    /// queue serves returned messages first.
    pub fn requeue(&self) -> Requeue {
        if self.guarantees.profile == Profile::RabbitmqClassic {
            return Requeue::Original;
        }
        let limited = self.delivery.max_receives != UNLIMITED_RECEIVES;
        match self.guarantees.broker_version {
            Some(v) if self.guarantees.profile == Profile::RabbitmqQuorum => {
                if v >= (4, 3) || limited {
                    Requeue::Front
                } else {
                    Requeue::Back
                }
            }
            _ => Requeue::Back,
        }
    }

    /// The ack wait (visibility timeout) of a cycle's `n`-th delivery
    /// (from 1): nats-jetstream's `ack_backoff` when given, else the
    /// visibility timeout.
    pub fn ack_wait(&self, n: u32) -> Option<Millis> {
        match &self.guarantees.jetstream {
            Some(js) if !js.ack_backoff.is_empty() => {
                let i = (n.max(1) as usize).min(js.ack_backoff.len()) - 1;
                Some(js.ack_backoff[i])
            }
            _ => self.guarantees.visibility_timeout,
        }
    }

    /// When a delivery of the cycle's `n`-th receive that started at
    /// `start` and runs until `end` is visible again unless acked: start
    /// plus its wait, or under sqs-standard with a visibility heartbeat,
    /// the last extension the handler made before `end` (every heartbeat
    /// from `start`) plus the timeout.
    pub fn visible_again_at(&self, start: Millis, end: Millis, n: u32) -> Option<Millis> {
        let wait = self.ack_wait(n)?;
        let last = match self.guarantees.sqs.and_then(|s| s.heartbeat) {
            Some(h) => start + end.saturating_sub(start).saturating_sub(1) / h * h,
            None => start,
        };
        Some(last.saturating_add(wait))
    }

    /// Whether a failure that ends a delivery unacknowledged waits for its
    /// ack wait before the broker acts on it (nats-jetstream: a lost ack
    /// always, a failure under `on_failure = "no_ack"`).
    pub fn waits_for_ack_wait(&self, lost_ack: bool) -> bool {
        self.guarantees
            .jetstream
            .as_ref()
            .is_some_and(|js| lost_ack || js.on_failure == OnFailure::NoAck)
    }

    /// Whether a delivery with this service time can be overtaken by its
    /// visibility timeout (decision 22.7: only if strictly longer).
    pub fn overtaken(&self, service: Millis) -> bool {
        self.guarantees
            .visibility_timeout
            .is_some_and(|vt| service > vt)
    }
}
