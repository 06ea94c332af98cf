//! The scenario file as written: serde types that keep the byte span of
//! every value, so that validation and expectations can point into the file.
//! Nothing outside `scenario/` and `expect/` sees these types.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

use crate::duration::Duration;
use crate::model::EventKind;

pub type S<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub scenario: Option<S<ScenarioMeta>>,
    pub delivery: Option<S<Delivery>>,
    pub quarantine: Option<S<Quarantine>>,
    pub dedup: Option<S<Dedup>>,
    #[serde(default)]
    pub operator: Vec<S<Operator>>,
    #[serde(default)]
    pub message: Vec<S<Message>>,
    #[serde(default)]
    pub traffic: Vec<S<Traffic>>,
    #[serde(default)]
    pub outage: Vec<S<Outage>>,
    pub limits: Option<S<Limits>>,
    pub expect: Option<S<Expect>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioMeta {
    pub name: Option<S<String>>,
    pub summary: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub seed: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delivery {
    pub queue: Option<String>,
    pub max_receives: Option<S<i64>>,
    pub retry_interval: Option<S<Duration>>,
    pub backoff: Option<S<Backoff>>,
    pub permanent: Option<S<Permanent>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backoff {
    pub base: S<Duration>,
    pub cap: Option<S<Duration>>,
    pub jitter: Option<S<Jitter>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Permanent {
    Retry,
    Quarantine,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quarantine {
    pub retention: Option<S<Duration>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dedup {
    pub enabled: Option<bool>,
    pub result_retention: Option<S<Duration>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operator {
    pub wait: Option<S<Duration>>,
    pub repair: Option<bool>,
    pub action: Option<S<Action>>,
    pub only: Option<S<Vec<S<String>>>>,
    pub identity: Option<S<Identity>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Hold,
    RedriveAll,
    Redrive,
    Purge,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    Stable,
    New,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub id: S<String>,
    pub key: Option<S<String>>,
    pub at: Option<S<Duration>>,
    pub payload: Option<toml::Table>,
    #[serde(default)]
    pub faults: Vec<S<Fault>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    pub fail: Option<S<Selector>>,
    pub lose_ack: Option<S<Selector>>,
    pub reason: Option<S<String>>,
    pub class: Option<S<Class>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    pub first: Option<S<i64>>,
    pub until: Option<S<Until>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    Repair,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Transient,
    Permanent,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    pub count: S<i64>,
    pub over: S<Duration>,
    pub id_prefix: Option<S<String>>,
    pub arrival: Option<S<Arrival>>,
    #[serde(default)]
    pub faults: Vec<S<Fault>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    Even,
    Poisson,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub from: S<Duration>,
    pub duration: S<Duration>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_events: Option<S<i64>>,
    pub max_time: Option<S<Duration>>,
    pub max_messages: Option<S<i64>>,
}

/// An expected value as written: an exact value or a comparison table
/// (`{ at_least = 3 }`). Kept as a raw value so that validation can say
/// precisely what is wrong with it.
pub type CheckValue = Option<S<toml::Value>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub description: Option<String>,
    pub deliveries: CheckValue,
    pub acked: CheckValue,
    pub quarantined: CheckValue,
    pub expired: CheckValue,
    pub purged: CheckValue,
    pub effects: CheckValue,
    pub duplicated_effects: CheckValue,
    pub dedup_hits: CheckValue,
    pub quarantine_entries: CheckValue,
    pub retry_delay_paid: CheckValue,
    pub max_dlq_depth: CheckValue,
    pub final_dlq_depth: CheckValue,
    pub drain_time: CheckValue,
    pub end_time: CheckValue,
    #[serde(default)]
    pub message: BTreeMap<S<String>, S<ExpectMessage>>,
    #[serde(default)]
    pub event: Vec<S<ExpectEvent>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectMessage {
    pub description: Option<String>,
    pub state: CheckValue,
    pub key: CheckValue,
    pub cycle: CheckValue,
    pub cycle_receives: CheckValue,
    pub total_receives: CheckValue,
    pub effects: CheckValue,
    pub dedup_hits: CheckValue,
    pub last_reason: CheckValue,
    pub quarantined_at: CheckValue,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectEvent {
    pub kind: S<EventKind>,
    pub message: Option<S<String>>,
    pub at: Option<S<Duration>>,
    #[serde(default)]
    pub never: bool,
    pub description: Option<String>,
}
