//! Validated expectations: what a scenario says the run must show.

use std::ops::Range;

use super::{EventKind, MessageIndex, Millis, Scenario, Total};
/// One expectation, validated, with the span of its value in the file;
/// generic over what it reads (a queue scenario's [`Target`] by default,
/// a dataflow's own target for a dataflow file).
#[derive(Debug, Clone)]
pub struct Expectation<T = Target> {
    pub target: T,
    pub check: Check,
    pub span: Range<usize>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Total(Total),
    Message(MessageIndex, MessageField),
    /// `[expect.kind."NAME"]`: index into [`Scenario::kinds`].
    Kind(u32, KindField),
    /// `[expect.alarm."NAME"]`: index into [`Scenario::alarms`].
    Alarm(u32, super::AlarmField),
    /// `[expect.sink."NAME"]`: index into the scenario's sinks.
    Sink(u32, super::SinkField),
    /// `[expect.partition.N]`: a log partition (0-based).
    Partition(u32, super::PartitionField),
    /// `[expect.restart.N]`: index into the log's restarts (0-based here,
    /// 1-based in the file).
    Restart(u32, super::RestartField),
    /// `[expect.checkpoint.K]` (section 28.7): the log's checkpoint
    /// numbered K (from 1).
    Checkpoint(u64, super::CheckpointField),
    /// `[expect.message.ID.envelope]` (section 28.2): a field of the
    /// message's dead-letter envelope.
    Envelope(MessageIndex, EnvelopeField),
    /// `[expect.sink."NAME".row."ROW"]` (section 28.9): a field of a
    /// versioned sink's row.
    Row {
        sink: u32,
        row: String,
        field: RowField,
    },
    Event {
        kind: EventKind,
        message: Option<MessageIndex>,
        at: Option<Millis>,
        /// Only transitions that name this log partition.
        partition: Option<u32>,
        /// Only transitions that name this sink (a write's kinds).
        sink: Option<u32>,
        never: bool,
    },
}

/// A field of a versioned sink's row (section 28.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowField {
    Value,
    Version,
}

impl RowField {
    pub fn name(self) -> &'static str {
        match self {
            RowField::Value => "value",
            RowField::Version => "version",
        }
    }
}

/// A field of a dead-letter envelope (sections 5 and 28.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EnvelopeField {
    Partition,
    Offset,
    EventTime,
    QuarantinedAt,
    FirstDelivery,
    SchemaVersion,
    Reason,
    Class,
    CycleReceives,
    TotalReceives,
    DeadLetterCause,
}

impl EnvelopeField {
    pub const ALL: [EnvelopeField; 11] = [
        EnvelopeField::Partition,
        EnvelopeField::Offset,
        EnvelopeField::EventTime,
        EnvelopeField::QuarantinedAt,
        EnvelopeField::FirstDelivery,
        EnvelopeField::SchemaVersion,
        EnvelopeField::Reason,
        EnvelopeField::Class,
        EnvelopeField::CycleReceives,
        EnvelopeField::TotalReceives,
        EnvelopeField::DeadLetterCause,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EnvelopeField::Partition => "partition",
            EnvelopeField::Offset => "offset",
            EnvelopeField::EventTime => "event_time",
            EnvelopeField::QuarantinedAt => "quarantined_at",
            EnvelopeField::FirstDelivery => "first_delivery",
            EnvelopeField::SchemaVersion => "schema_version",
            EnvelopeField::Reason => "reason",
            EnvelopeField::Class => "class",
            EnvelopeField::CycleReceives => "cycle_receives",
            EnvelopeField::TotalReceives => "total_receives",
            EnvelopeField::DeadLetterCause => "dead_letter_cause",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MessageField {
    State,
    Key,
    Cycle,
    CycleReceives,
    TotalReceives,
    Effects,
    DedupHits,
    LastReason,
    LastQuarantinedAt,
    ArrivedAt,
    AckedAt,
    Latency,
    QueueWait,
    Group,
    /// `archive_after` (section 28.11): copied to the archive at least once.
    Archived,
}

/// The kind of value an expected field takes in a file: each field says
/// its own (`takes`), and the JSON Schema gives each kind one check
/// (`scenario::schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A number of things, never below zero.
    Count,
    /// A number that compensations can take below zero (a sink under
    /// `[write]`).
    Signed,
    /// A duration.
    Time,
    /// A duration, or `"never"` for no value.
    TimeOrNever,
    /// A message's state.
    State,
    /// Any text: a key, a reason, a group.
    Text,
    Bool,
    /// Why the run ended.
    Stop,
}

impl Total {
    /// What an expectation of this measure takes.
    pub fn takes(self) -> Takes {
        match self.unit() {
            super::Unit::Count => Takes::Count,
            super::Unit::Time => Takes::Time,
            super::Unit::MaybeTime => Takes::TimeOrNever,
            super::Unit::Stop => Takes::Stop,
        }
    }
}

impl MessageField {
    /// What an expectation of this field takes.
    pub fn takes(self) -> Takes {
        use MessageField as F;
        match self {
            F::State => Takes::State,
            F::Key | F::LastReason | F::Group => Takes::Text,
            F::LastQuarantinedAt | F::ArrivedAt | F::AckedAt | F::Latency => Takes::TimeOrNever,
            F::QueueWait => Takes::Time,
            F::Archived => Takes::Bool,
            F::Cycle | F::CycleReceives | F::TotalReceives | F::Effects | F::DedupHits => {
                Takes::Count
            }
        }
    }

    /// Every field of `[expect.message.ID]`.
    pub const ALL: [MessageField; 15] = [
        MessageField::State,
        MessageField::Key,
        MessageField::Cycle,
        MessageField::CycleReceives,
        MessageField::TotalReceives,
        MessageField::Effects,
        MessageField::DedupHits,
        MessageField::LastReason,
        MessageField::LastQuarantinedAt,
        MessageField::ArrivedAt,
        MessageField::AckedAt,
        MessageField::Latency,
        MessageField::QueueWait,
        MessageField::Group,
        MessageField::Archived,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MessageField::State => "state",
            MessageField::Key => "key",
            MessageField::Cycle => "cycle",
            MessageField::CycleReceives => "cycle_receives",
            MessageField::TotalReceives => "total_receives",
            MessageField::Effects => "effects",
            MessageField::DedupHits => "dedup_hits",
            MessageField::LastReason => "last_reason",
            MessageField::LastQuarantinedAt => "last_quarantined_at",
            MessageField::ArrivedAt => "arrived_at",
            MessageField::AckedAt => "acked_at",
            MessageField::Latency => "latency",
            MessageField::QueueWait => "queue_wait",
            MessageField::Group => "group",
            MessageField::Archived => "archived",
        }
    }
}

/// A field of `[expect.kind."NAME"]`: the messages of one mix kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KindField {
    Messages,
    Acked,
    Quarantined,
    Deliveries,
}

impl KindField {
    /// What an expectation of this field takes: every field is a count.
    pub fn takes(self) -> Takes {
        Takes::Count
    }

    pub const ALL: [KindField; 4] = [
        KindField::Messages,
        KindField::Acked,
        KindField::Quarantined,
        KindField::Deliveries,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KindField::Messages => "messages",
            KindField::Acked => "acked",
            KindField::Quarantined => "quarantined",
            KindField::Deliveries => "deliveries",
        }
    }
}

/// A value an expectation compares: a count, a time, or a text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    Count(u64),
    Time(Millis),
    Text(String),
    /// No value: a message never quarantined, never failed.
    Never,
    Bool(bool),
    /// A signed number: a dataflow node's state.
    Int(i64),
    /// A list of numbers: a dataflow channel's recorded values.
    Ints(Vec<i64>),
    /// A list of names: a dataflow snapshot's missing participants.
    Texts(Vec<String>),
}

impl Value {
    /// As JSON: counts and times (milliseconds) as numbers, no value as
    /// `null`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Count(n) => serde_json::json!(n),
            Value::Time(ms) => serde_json::json!(ms),
            Value::Text(s) => serde_json::json!(s),
            Value::Never => serde_json::Value::Null,
            Value::Bool(b) => serde_json::json!(b),
            Value::Int(n) => serde_json::json!(n),
            Value::Ints(v) => serde_json::json!(v),
            Value::Texts(v) => serde_json::json!(v),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Count(n) => write!(f, "{n}"),
            Value::Time(ms) => write!(f, "{}", crate::duration::format(*ms)),
            Value::Text(s) => write!(f, "\"{s}\""),
            Value::Never => write!(f, "never"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Ints(v) => {
                let items: Vec<String> = v.iter().map(i64::to_string).collect();
                write!(f, "[{}]", items.join(", "))
            }
            Value::Texts(v) => {
                let items: Vec<String> = v.iter().map(|s| format!("\"{s}\"")).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Equals(Value),
    AtLeast(Value),
    AtMost(Value),
    Between(Value, Value),
    /// An event expectation: happens (or never happens).
    Occurs,
}

impl Check {
    pub fn holds(&self, actual: &Value) -> bool {
        match self {
            Check::Equals(v) => actual == v,
            Check::AtLeast(v) => actual != &Value::Never && actual >= v,
            Check::AtMost(v) => actual != &Value::Never && actual <= v,
            Check::Between(lo, hi) => actual != &Value::Never && actual >= lo && actual <= hi,
            Check::Occurs => true,
        }
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Check::Equals(v) => write!(f, "{v}"),
            Check::AtLeast(v) => write!(f, "at least {v}"),
            Check::AtMost(v) => write!(f, "at most {v}"),
            Check::Between(a, b) => write!(f, "between {a} and {b}"),
            Check::Occurs => write!(f, "to occur"),
        }
    }
}

/// One expectation's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Index into [`Scenario::expectations`].
    pub index: usize,
    pub passed: bool,
    pub actual: Value,
}

/// What the expectation says, e.g. `effects = 4` or `message "poison" state = "acked"`.
pub fn describe(scenario: &Scenario, e: &Expectation) -> String {
    match &e.target {
        Target::Total(t) => format!("{} {}", t.name(), check_words(&e.check)),
        Target::Message(m, f) => {
            format!(
                "message \"{}\" {} {}",
                scenario.message_id(*m),
                f.name(),
                check_words(&e.check)
            )
        }
        Target::Envelope(m, f) => format!(
            "message \"{}\" envelope {} {}",
            scenario.message_id(*m),
            f.name(),
            check_words(&e.check)
        ),
        Target::Row { sink, row, field } => format!(
            "sink \"{}\" row \"{row}\" {} {}",
            scenario.guarantees.sinks[*sink as usize].name,
            field.name(),
            check_words(&e.check)
        ),
        Target::Alarm(a, f) => format!(
            "alarm \"{}\" {} {}",
            scenario.alarms[*a as usize].name,
            f.name(),
            check_words(&e.check)
        ),
        Target::Sink(k, f) => format!(
            "sink \"{}\" {} {}",
            scenario.guarantees.sinks[*k as usize].name,
            f.name(),
            check_words(&e.check)
        ),
        Target::Partition(p, f) => format!("partition {p} {} {}", f.name(), check_words(&e.check)),
        Target::Restart(r, f) => {
            format!("restart {} {} {}", r + 1, f.name(), check_words(&e.check))
        }
        Target::Checkpoint(k, f) => {
            format!("checkpoint {k} {} {}", f.name(), check_words(&e.check))
        }
        Target::Kind(k, f) => format!(
            "kind \"{}\" {} {}",
            scenario.kinds[*k as usize],
            f.name(),
            check_words(&e.check)
        ),
        Target::Event {
            kind,
            message,
            at,
            partition,
            sink,
            never,
        } => {
            let who = message.map_or(String::new(), |m| {
                format!(" of \"{}\"", scenario.message_id(m))
            });
            let who = match partition {
                Some(p) => format!("{who} on partition {p}"),
                None => who,
            };
            let who = match sink {
                Some(k) => format!(
                    "{who} to sink \"{}\"",
                    scenario.guarantees.sinks[*k as usize].name
                ),
                None => who,
            };
            let when = at.map_or(String::new(), |a| {
                format!(" at {}", crate::duration::format(a))
            });
            let verb = if *never { "never happens" } else { "happens" };
            format!("event {}{who}{when} {verb}", kind.as_str())
        }
    }
}

fn check_words(c: &Check) -> String {
    match c {
        Check::Equals(v) => format!("= {v}"),
        other => format!("is {other}"),
    }
}
