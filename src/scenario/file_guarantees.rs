//! The keys of sections 17-22 as written: `[[sink]]`, `profile`, `[dedup]
//! mode` and a crash's `at`. Part of the file format (see `file.rs`);
//! validated in `guarantees.rs`.

use crate::scenario::spanned::S;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::duration::Duration;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkTable {
    /// Unique; `[expect.sink."NAME"]` names it.
    pub name: S<String>,
    /// increment | upsert | irreversible.
    pub kind: S<SinkKindName>,
    /// A call's round trip, e.g. "5ms" (default 0ms).
    pub latency: Option<S<Duration>>,
    /// Calls that fail or lose their reply, in file order.
    #[serde(default)]
    pub faults: Vec<S<SinkFaultTable>>,
    /// A window in which every call fails with "sink unavailable".
    pub outage: Option<S<Outage>>,
    /// direct | outbox | two_phase | saga: how a write reaches this sink (default: [write] strategy, section 28.1).
    pub strategy: Option<S<StrategyName>>,
    /// Whether the sink can take part in two-phase commit (default false).
    pub prepare: Option<S<bool>>,
    /// true: a saga that compensates a write sent to this irreversible sink sends it a corrective notice, a call retried like a compensation (section 28.16).
    pub corrective_notice: Option<S<bool>>,
    /// { kind = "increment" | "upsert", at = "3h" }: from `at` on, the sink applies writes by the new kind (section 28.8: an upsert silently downgraded to an append, or the reverse).
    pub becomes: Option<S<BecomesTable>>,
    /// true: an upsert that holds a value and a version per row; a write older than its row is stale (section 28.9).
    pub versioned: Option<S<bool>>,
    /// With `versioned`: "overwrite" (default: last writer wins) or "reject" (a conditional write keeps the newer row).
    pub stale_writes: Option<S<StaleWritesName>>,
}

/// `[[sink]] stale_writes`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StaleWritesName {
    Overwrite,
    Reject,
}

/// A sink fault: `{ fail = SELECTOR, reason, class }` or
/// `{ lose_reply = SELECTOR }`, optionally `compensation = true`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkFaultTable {
    /// The call fails and nothing is applied.
    pub fail: Option<S<SinkSelector>>,
    /// The write is applied and the caller hears a failure.
    pub lose_reply: Option<S<SinkSelector>>,
    /// With `fail`: the reason (default "sink error").
    pub reason: Option<S<String>>,
    /// With `fail`: transient (default) | permanent.
    pub class: Option<S<Class>>,
    /// Select a saga's compensation calls instead of its writes.
    pub compensation: Option<S<bool>>,
}

/// Which calls a sink fault selects (exactly one key).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkSelector {
    /// Each intent's first N calls to the sink.
    pub first: Option<S<i64>>,
    /// Every call for the intents of these message ids.
    pub intents: Option<S<Vec<S<String>>>>,
    /// Every call for each N-th intent (in the order of their first call).
    #[schemars(range(min = 1))]
    pub every: Option<S<i64>>,
    /// Every call until an operator step repairs.
    pub until: Option<S<Until>>,
}

/// `[write]`: how one write reaches several sinks.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteTable {
    /// direct (default) | outbox | two_phase | saga.
    pub strategy: Option<S<StrategyName>>,
    /// outbox and saga: the wait after a failed call's reply (default "1s").
    pub relay_retry: Option<S<Duration>>,
    /// outbox and saga: the most calls per sink for a row or a compensation (default 10).
    pub relay_attempts: Option<S<i64>>,
    /// saga: a step's tries in a row on transient failures (default 1).
    pub step_attempts: Option<S<i64>>,
    /// saga: compensations applied once however often retried (default true).
    pub idempotent_compensation: Option<S<bool>>,
    /// "keep" (default) or "compensate": an outbox row dead-lettered for an outbox sink fails the write, and the relay compensates its saga sinks (section 28.1).
    pub outbox_dead_letter: Option<S<OutboxDeadLetterName>>,
    /// true: irreversible sinks are called last (the relay calls an irreversible outbox sink only once every other outbox sink succeeded).
    pub irreversible_last: Option<S<bool>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutboxDeadLetterName {
    Keep,
    Compensate,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StrategyName {
    Direct,
    Outbox,
    TwoPhase,
    Saga,
}

/// `[coordinator]`: two-phase commit's coordinator.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoordinatorTable {
    /// Which writes it crashes on after every sink prepared: { first = N }, { every = N }, { intents = [...] } or { until = "repair" }.
    pub crash: Option<S<SinkSelector>>,
    /// How long after the prepare the crashed coordinator recovers and decides, or "never" (the write stays in doubt to the end). Required with `crash`.
    pub recovers_after: Option<S<Recovery>>,
    /// "after_log" (default: the decision was logged, the recovered coordinator commits) or "before_log" (presumed abort: it aborts and the delivery fails). Only with `crash`.
    pub crash_at: Option<S<LogPoint>>,
    /// true: the decision is a second call to every prepared sink, each sink's lock released when its reply is heard; the delivery ends with the last reply.
    pub commit_round_trip: Option<S<bool>>,
}

/// A sink's `becomes`: the kind it applies writes by from `at` on.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BecomesTable {
    /// "increment" or "upsert" (not the sink's own kind).
    pub kind: S<SinkKindName>,
    /// When the change takes effect: writes applied at or after it.
    pub at: S<Duration>,
}

/// When a crashed coordinator recovers: a duration, or "never".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    After(Duration),
    Never,
}

impl<'de> Deserialize<'de> for Recovery {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Recovery;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration string such as \"30s\", or \"never\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Recovery, E> {
                if v == "never" {
                    return Ok(Recovery::Never);
                }
                crate::duration::parse(v)
                    .map(|ms| Recovery::After(Duration(ms)))
                    .map_err(|e| {
                        E::custom(format!(
                            "{e}; or \"never\", for a coordinator that never recovers"
                        ))
                    })
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Recovery {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Recovery".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let duration = generator.subschema_for::<Duration>();
        schemars::json_schema!({
            "oneOf": [duration, { "const": "never" }]
        })
    }
}

/// The coordinator's `crash_at`: whether it logged its decision before
/// it crashed.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogPoint {
    AfterLog,
    BeforeLog,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SinkKindName {
    Increment,
    Upsert,
    Irreversible,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileName {
    Model,
    SqsStandard,
    RabbitmqQuorum,
    RabbitmqClassic,
    NatsJetstream,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnFailureName {
    Nak,
    NoAck,
    ChangeVisibility,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DedupModeName {
    Result,
    WriteIntent,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CrashAtName {
    BeforeEffect,
    AfterEffect,
    AfterDone,
}

// Until when a fault selects (a message's or a sink's).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    Repair,
}

// A fault's class: a transient failure is retried, a permanent one
// quarantines at once.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Transient,
    Permanent,
}

// A window in which the downstream (or a sink) fails every call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    /// Start of the window (included).
    pub from: S<Duration>,
    /// Length of the window (its end is excluded).
    pub duration: S<Duration>,
}
