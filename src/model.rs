//! The validated scenario: the domain the engine runs. No file spans here,
//! except where an expectation remembers where it was written.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

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
    /// Deduplication result retention; `None` means deduplication is off.
    pub dedup_retention: Option<Millis>,
    pub operators: Vec<OperatorStep>,
    pub messages: Vec<MessageSpec>,
    pub traffic: Vec<Traffic>,
    pub outages: Vec<Outage>,
    pub limits: Limits,
    /// Failure reasons, interned. The first three are fixed.
    pub reasons: Vec<String>,
    pub intents: Intents,
    pub expectations: Vec<Expectation>,
}

pub const REASON_HANDLER_ERROR: ReasonIndex = 0;
pub const REASON_DOWNSTREAM_UNAVAILABLE: ReasonIndex = 1;
pub const REASON_ACK_LOST: ReasonIndex = 2;
pub const FIXED_REASONS: [&str; 3] = ["handler error", "downstream unavailable", "ack lost"];

#[derive(Debug, Clone)]
pub struct Delivery {
    pub queue: String,
    pub max_receives: u32,
    pub retry: Retry,
    pub permanent: Permanent,
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
    pub at: Millis,
    pub payload: Option<toml::Table>,
    pub faults: Vec<Fault>,
}

#[derive(Debug, Clone)]
pub struct Traffic {
    pub count: u64,
    pub over: Millis,
    pub id_prefix: String,
    pub faults: Vec<Fault>,
    /// Index of this generator's first message.
    pub first_index: MessageIndex,
}

impl Traffic {
    /// Arrival time of the j-th generated message (j from 1): even spacing.
    pub fn arrival(&self, j: u64) -> Millis {
        even_arrival(j, self.over, self.count)
    }
}

/// Even spacing (model.md 10.16): message j of `count` (j from 1) arrives
/// at floor((j - 1) * over / count).
pub fn even_arrival(j: u64, over: Millis, count: u64) -> Millis {
    match (j - 1).checked_mul(over) {
        Some(product) => product / count,
        None => ((j - 1) as u128 * over as u128 / count as u128) as Millis,
    }
}

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

/// The application intents (original keys) and how generated messages map
/// onto them without storing a key per generated message.
#[derive(Debug, Clone, Default)]
pub struct Intents {
    /// Names of the explicit messages' intents, interned in file order.
    pub explicit: Vec<String>,
    /// Intent of each explicit message.
    pub of_explicit: Vec<IntentIndex>,
    /// Generated messages whose id equals an explicit key share its intent.
    pub generated_aliases: BTreeMap<MessageIndex, IntentIndex>,
    /// Explicit intents by name, for derived keys that collide with one.
    pub by_name: BTreeMap<String, IntentIndex>,
    /// Whether some explicit key looks like a derived key (`x~r1`).
    pub has_derived_lookalikes: bool,
}

/// The message's current deduplication key: its intent, and the redrive
/// number whose fresh identity it carries (0 = the intent's own key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyRef {
    pub intent: IntentIndex,
    pub generation: u32,
}

/// What kind of transition happened; also what `[[expect.event]]` names.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Delivered,
    Failed,
    Committed,
    DedupHit,
    AckLost,
    Acked,
    RetryScheduled,
    Quarantined,
    Inspected,
    Expired,
    Repaired,
    Redriven,
    RedriveSkipped,
    Purged,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Delivered => "delivered",
            EventKind::Failed => "failed",
            EventKind::Committed => "committed",
            EventKind::DedupHit => "dedup_hit",
            EventKind::AckLost => "ack_lost",
            EventKind::Acked => "acked",
            EventKind::RetryScheduled => "retry_scheduled",
            EventKind::Quarantined => "quarantined",
            EventKind::Inspected => "inspected",
            EventKind::Expired => "expired",
            EventKind::Repaired => "repaired",
            EventKind::Redriven => "redriven",
            EventKind::RedriveSkipped => "redrive_skipped",
            EventKind::Purged => "purged",
        }
    }
}

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not yet arrived.
    Waiting,
    /// A delivery is pending.
    Pending,
    Acked,
    Quarantined,
    Expired,
    Purged,
}

impl State {
    /// Every state, in declaration order (`State as usize` indexes it).
    pub const ALL: [State; 6] = [
        State::Waiting,
        State::Pending,
        State::Acked,
        State::Quarantined,
        State::Expired,
        State::Purged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Pending => "pending",
            State::Acked => "acked",
            State::Quarantined => "quarantined",
            State::Expired => "expired",
            State::Purged => "purged",
        }
    }
}

/// One expectation, validated, with the span of its value in the file.
#[derive(Debug, Clone)]
pub struct Expectation {
    pub target: Target,
    pub check: Check,
    pub span: Range<usize>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Total(Total),
    Message(MessageIndex, MessageField),
    Event {
        kind: EventKind,
        message: Option<MessageIndex>,
        at: Option<Millis>,
        never: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Total {
    Deliveries,
    Acked,
    Quarantined,
    Expired,
    Purged,
    Effects,
    DuplicatedEffects,
    DedupHits,
    QuarantineEntries,
    RetryDelayPaid,
    MaxDlqDepth,
    FinalDlqDepth,
    DrainTime,
    EndTime,
}

impl Total {
    pub const ALL: [(&'static str, Total, bool); 14] = [
        ("deliveries", Total::Deliveries, false),
        ("acked", Total::Acked, false),
        ("quarantined", Total::Quarantined, false),
        ("expired", Total::Expired, false),
        ("purged", Total::Purged, false),
        ("effects", Total::Effects, false),
        ("duplicated_effects", Total::DuplicatedEffects, false),
        ("dedup_hits", Total::DedupHits, false),
        ("quarantine_entries", Total::QuarantineEntries, false),
        ("retry_delay_paid", Total::RetryDelayPaid, true),
        ("max_dlq_depth", Total::MaxDlqDepth, false),
        ("final_dlq_depth", Total::FinalDlqDepth, false),
        ("drain_time", Total::DrainTime, true),
        ("end_time", Total::EndTime, true),
    ];

    pub fn name(self) -> &'static str {
        Total::ALL
            .iter()
            .find(|(_, t, _)| *t == self)
            .map(|(n, _, _)| *n)
            .unwrap_or("?")
    }

    pub fn is_time(self) -> bool {
        Total::ALL.iter().any(|(_, t, time)| *t == self && *time)
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
    QuarantinedAt,
}

impl MessageField {
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
            MessageField::QuarantinedAt => "quarantined_at",
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
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Count(n) => write!(f, "{n}"),
            Value::Time(ms) => write!(f, "{}", crate::duration::format(*ms)),
            Value::Text(s) => write!(f, "\"{s}\""),
            Value::Never => write!(f, "never"),
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

impl Scenario {
    /// Total number of messages, explicit and generated.
    pub fn message_count(&self) -> u64 {
        self.messages.len() as u64 + self.traffic.iter().map(|t| t.count).sum::<u64>()
    }

    /// The generator that produced message `m`, with its 1-based number.
    pub fn generated(&self, m: MessageIndex) -> Option<(&Traffic, u64)> {
        if (m as usize) < self.messages.len() {
            return None;
        }
        let g = self
            .traffic
            .iter()
            .rev()
            .find(|t| t.first_index <= m)
            .expect("generated index belongs to a generator");
        Some((g, (m - g.first_index) as u64 + 1))
    }

    pub fn message_id(&self, m: MessageIndex) -> Cow<'_, str> {
        match self.generated(m) {
            None => Cow::Borrowed(&self.messages[m as usize].id),
            Some((g, j)) => Cow::Owned(format!("{}{}", g.id_prefix, j)),
        }
    }

    /// Finds a message by id, explicit or generated.
    pub fn find_message(&self, id: &str) -> Option<MessageIndex> {
        if let Some(i) = self.messages.iter().position(|m| m.id == id) {
            return Some(i as MessageIndex);
        }
        for g in &self.traffic {
            if let Some(j) = generated_number(id, &g.id_prefix, g.count) {
                return Some(g.first_index + (j - 1) as MessageIndex);
            }
        }
        None
    }

    pub fn faults(&self, m: MessageIndex) -> &[Fault] {
        match self.generated(m) {
            None => &self.messages[m as usize].faults,
            Some((g, _)) => &g.faults,
        }
    }

    pub fn arrival(&self, m: MessageIndex) -> Millis {
        match self.generated(m) {
            None => self.messages[m as usize].at,
            Some((g, j)) => g.arrival(j),
        }
    }

    pub fn payload(&self, m: MessageIndex) -> Option<&toml::Table> {
        match self.generated(m) {
            None => self.messages[m as usize].payload.as_ref(),
            Some(_) => None,
        }
    }

    pub fn intent(&self, m: MessageIndex) -> IntentIndex {
        if (m as usize) < self.messages.len() {
            return self.intents.of_explicit[m as usize];
        }
        if let Some(&i) = self.intents.generated_aliases.get(&m) {
            return i;
        }
        self.intents.explicit.len() as IntentIndex + (m - self.messages.len() as MessageIndex)
    }

    pub fn intent_count(&self) -> usize {
        self.intents.explicit.len() + (self.message_count() as usize - self.messages.len())
    }

    pub fn intent_name(&self, i: IntentIndex) -> Cow<'_, str> {
        let explicit = self.intents.explicit.len() as IntentIndex;
        if i < explicit {
            Cow::Borrowed(&self.intents.explicit[i as usize])
        } else {
            self.message_id(self.messages.len() as MessageIndex + (i - explicit))
        }
    }

    pub fn key_name(&self, k: KeyRef) -> String {
        if k.generation == 0 {
            self.intent_name(k.intent).into_owned()
        } else {
            derived_key(&self.intent_name(k.intent), k.generation)
        }
    }

    /// The key a redrive with a fresh identity gives: `<intent>~r<N>`. If an
    /// explicit message already uses that key, it is the same key.
    pub fn fresh_key(&self, intent: IntentIndex, redrives: u32) -> KeyRef {
        if self.intents.has_derived_lookalikes {
            let name = derived_key(&self.intent_name(intent), redrives);
            if let Some(&i) = self.intents.by_name.get(&name) {
                return KeyRef {
                    intent: i,
                    generation: 0,
                };
            }
        }
        KeyRef {
            intent,
            generation: redrives,
        }
    }
}

pub fn derived_key(intent: &str, redrives: u32) -> String {
    format!("{intent}~r{redrives}")
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
