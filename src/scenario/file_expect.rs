//! `[expect]` as written: each expected value kept raw with its span, so
//! that validation can say precisely what is wrong with it. Part of the
//! file format (see `file.rs`).

use crate::scenario::spanned::S;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

use crate::duration::Duration;
use crate::model::EventKind;

/// An expected value as written: an exact value or a comparison table
/// (`{ at_least = 3 }`). Kept as a raw value so that validation can say
/// precisely what is wrong with it.
pub type CheckValue = Option<S<toml::Value>>;

/// The JSON Schema of an expected value (see [`CheckValue`]).
pub struct CheckSchema;

impl JsonSchema for CheckSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Check".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let value = schemars::json_schema!({
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string", "description": "a duration such as \"10s\", a state, a key or a reason" }
            ]
        });
        schemars::json_schema!({
            "description": "An exact value, or a comparison table.",
            "anyOf": [
                value,
                {
                    "type": "object",
                    "additionalProperties": false,
                    "minProperties": 1,
                    "maxProperties": 1,
                    "properties": {
                        "equals": value,
                        "at_least": value,
                        "at_most": value,
                        "between": { "type": "array", "items": value, "minItems": 2, "maxItems": 2 }
                    }
                }
            ]
        })
    }
}

macro_rules! define_expect {
    ($($field:ident $variant:ident $unit:ident $part:ident $story:expr, $doc:literal;)*) => {
        // `[expect]`: a key per measure (see `model::measure`), then the
        // per-message tables and the event expectations. (A doc comment
        // here would become the schema's description.)
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct Expect {
            pub description: Option<String>,
            $(
                #[schemars(with = "Option<CheckSchema>")]
                pub $field: CheckValue,
            )*
            #[serde(default)]
            pub message: BTreeMap<S<String>, S<ExpectMessage>>,
            #[serde(default)]
            pub kind: BTreeMap<S<String>, S<ExpectKind>>,
            #[serde(default)]
            pub alarm: BTreeMap<S<String>, S<ExpectAlarm>>,
            #[serde(default)]
            pub sink: BTreeMap<S<String>, S<ExpectSink>>,
            #[serde(default)]
            pub partition: BTreeMap<S<String>, S<ExpectPartition>>,
            #[serde(default)]
            pub restart: BTreeMap<S<String>, S<ExpectRestart>>,
            #[serde(default)]
            pub checkpoint: BTreeMap<S<String>, S<ExpectCheckpoint>>,
            #[serde(default)]
            pub event: Vec<S<ExpectEvent>>,
        }

        impl Expect {
            /// The expected value written for each measure, in order.
            pub fn totals(&self) -> Vec<(&CheckValue, crate::model::Total)> {
                vec![$((&self.$field, crate::model::Total::$variant),)*]
            }
        }
    };
}

crate::for_each_measure!(define_expect);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectMessage {
    pub description: Option<String>,
    #[schemars(with = "Option<CheckSchema>")]
    pub state: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub key: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub cycle: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub cycle_receives: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub total_receives: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub effects: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub dedup_hits: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub last_reason: CheckValue,
    /// When the message last entered quarantine. `quarantined_at`, its
    /// name before 0.2, is still read.
    #[serde(alias = "quarantined_at")]
    #[schemars(with = "Option<CheckSchema>")]
    pub last_quarantined_at: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub arrived_at: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub acked_at: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub latency: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub queue_wait: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub group: CheckValue,
    /// With `archive_after`: copied to the archive at least once.
    #[schemars(with = "Option<CheckSchema>")]
    pub archived: CheckValue,
    /// The dead-letter envelope's fields (section 28.2).
    pub envelope: Option<ExpectEnvelope>,
}

/// `[expect.message.ID.envelope]`: the message's dead-letter envelope;
/// every field is "never" for a message that has none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectEnvelope {
    /// A log record's partition.
    #[schemars(with = "Option<CheckSchema>")]
    pub partition: CheckValue,
    /// A log record's offset.
    #[schemars(with = "Option<CheckSchema>")]
    pub offset: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub event_time: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub quarantined_at: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub first_delivery: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub schema_version: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub reason: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub class: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub cycle_receives: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub total_receives: CheckValue,
    /// max_receives, max_elapsed, permanent or visibility timeout.
    #[schemars(with = "Option<CheckSchema>")]
    pub dead_letter_cause: CheckValue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectAlarm {
    pub description: Option<String>,
    #[schemars(with = "Option<CheckSchema>")]
    pub fired: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub first_fired_at: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub times_fired: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub firing_at_end: CheckValue,
}

/// `[expect.sink."NAME"]` (the default sink is "counter").
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSink {
    pub description: Option<String>,
    /// increment: effects; upsert: distinct keys written; irreversible: sends.
    #[schemars(with = "Option<CheckSchema>")]
    pub value: CheckValue,
    /// The value minus the distinct intents among it.
    #[schemars(with = "Option<CheckSchema>")]
    pub visible_duplicates: CheckValue,
    /// Intents of arrived messages never visible in the sink.
    #[schemars(with = "Option<CheckSchema>")]
    pub missing: CheckValue,
    /// The most visible writes of one intent.
    #[schemars(with = "Option<CheckSchema>")]
    pub max_per_intent: CheckValue,
    /// Outbox: the latest application minus its row's time, at most (a duration).
    #[schemars(with = "Option<CheckSchema>")]
    pub max_lag: CheckValue,
    /// Saga: the compensations given up in this sink.
    #[schemars(with = "Option<CheckSchema>")]
    pub compensations_given_up: CheckValue,
    /// Saga: the compensations applied to this sink.
    #[schemars(with = "Option<CheckSchema>")]
    pub compensations: CheckValue,
    /// With `becomes`: write calls applied at or after the change.
    #[schemars(with = "Option<CheckSchema>")]
    pub writes_after_change: CheckValue,
    /// With `becomes`: the kind writes apply by at the end, "increment" or "upsert".
    #[schemars(with = "Option<CheckSchema>")]
    pub kind_at_end: CheckValue,
    /// With `versioned`: writes older than their row that overwrote it.
    #[schemars(with = "Option<CheckSchema>")]
    pub stale_overwrites: CheckValue,
    /// With `versioned`: writes older than their row that it rejected.
    #[schemars(with = "Option<CheckSchema>")]
    pub stale_rejections: CheckValue,
    /// With `versioned`: `[expect.sink."NAME".row."ROW"]`, a row's value and version at the end.
    #[serde(default)]
    pub row: BTreeMap<S<String>, S<ExpectRow>>,
}

/// `[expect.sink."NAME".row."ROW"]`: a versioned sink's row at the end;
/// "never" for a row it does not hold.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectRow {
    pub description: Option<String>,
    /// The value the row holds.
    #[schemars(with = "Option<CheckSchema>")]
    pub value: CheckValue,
    /// The version the row holds.
    #[schemars(with = "Option<CheckSchema>")]
    pub version: CheckValue,
}

/// `[expect.partition.N]`: a log partition, numbered from 0.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectPartition {
    pub description: Option<String>,
    /// Records appended to the partition (its next offset).
    #[schemars(with = "Option<CheckSchema>")]
    pub end_offset: CheckValue,
    /// The position of the last checkpoint (at_most_once: the committed position).
    #[schemars(with = "Option<CheckSchema>")]
    pub committed: CheckValue,
}

/// `[expect.restart.N]`: the N-th `[[restart]]`, numbered from 1.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectRestart {
    pub description: Option<String>,
    /// Each restarted partition's resume position, in partition order.
    #[schemars(with = "Option<Vec<u64>>")]
    pub resume_positions: CheckValue,
    /// When the checkpoint it resumed from was taken, or "never".
    #[schemars(with = "Option<CheckSchema>")]
    pub checkpoint_time: CheckValue,
    /// Where its replays jumped back (replay_until), or "never".
    #[schemars(with = "Option<ReplayedSchema>")]
    pub replayed_until: CheckValue,
}

/// `[expect.checkpoint.K]`: the log's K-th checkpoint (at K x interval),
/// numbered from 1 (section 28.7).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectCheckpoint {
    pub description: Option<String>,
    /// "completed", "failed", "aborted", or "never" (the run ended before it).
    #[schemars(with = "Option<String>")]
    pub status: CheckValue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectKind {
    pub description: Option<String>,
    #[schemars(with = "Option<CheckSchema>")]
    pub messages: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub acked: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub quarantined: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub deliveries: CheckValue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectEvent {
    /// The transition kind.
    pub kind: S<EventKind>,
    /// The message it concerns (any message if absent).
    pub message: Option<S<String>>,
    /// The exact modeled time.
    pub at: Option<S<Duration>>,
    /// The log partition the transition names (log kinds and deliveries
    /// of a log record).
    pub partition: Option<S<u32>>,
    /// The sink the transition names (compensation_sent,
    /// compensation_given_up, outbox_dead_lettered).
    pub sink: Option<S<String>>,
    #[serde(default)]
    /// The transition must not occur.
    pub never: bool,
    pub description: Option<String>,
}

/// The JSON Schema of an expected `replayed_until`: a list of offsets, or
/// "never" when no replay ended with a jump (section 28.10).
pub struct ReplayedSchema;

impl JsonSchema for ReplayedSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Replayed".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The offsets where the replays jumped back, or \"never\".",
            "anyOf": [
                { "type": "array", "items": { "type": "integer", "minimum": 0 } },
                { "const": "never" }
            ]
        })
    }
}
