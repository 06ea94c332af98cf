//! A dataflow file as written: serde types that keep the byte span of
//! every value, so that validation and expectations can point into it.

use std::collections::BTreeMap;

use crate::scenario::spanned::S;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::duration::Duration;
use crate::scenario::file::{CheckSchema, CheckValue, ScenarioMeta};

/// The top-level keys of a dataflow file.
pub const TABLES: [&str; 9] = [
    "scenario", "node", "channel", "send", "snapshot", "limits", "expect", "question", "sweep",
];

/// A dataflow scenario: nodes joined by channels, values sent between
/// them and Chandy-Lamport snapshot attempts (model section 25).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// Name, summary, description (Markdown), tags and seed.
    pub scenario: Option<S<ScenarioMeta>>,
    /// The nodes, each with a state (an integer).
    pub node: Vec<S<NodeTable>>,
    #[serde(default)]
    /// FIFO channels between nodes, each of one or more partitions.
    pub channel: Vec<S<ChannelTable>>,
    #[serde(default)]
    /// Values sent on a channel at a time.
    pub send: Vec<S<SendTable>>,
    #[serde(default)]
    /// Snapshot attempts, in time order.
    pub snapshot: Vec<S<SnapshotTable>>,
    /// Where a run stops.
    pub limits: Option<S<LimitsTable>>,
    /// What the run must show.
    pub expect: Option<S<ExpectTable>>,
    #[serde(default)]
    /// Questions a report asks before revealing the answer, computed from
    /// the run: `answer` names `snapshot.N.FIELD`,
    /// `snapshot.N.node.NAME.FIELD`, `snapshot.N.channel.NAME.recorded` or
    /// `node.NAME.state`.
    pub question: Vec<S<crate::scenario::questions::QuestionTable>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeTable {
    pub name: S<String>,
    /// Default 0.
    pub state: Option<S<i64>>,
    /// Default true; false: a service that does not understand markers (it applies data and sends as usual, never records, drops every marker).
    pub participates: Option<S<bool>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelTable {
    /// The sending node.
    pub from: S<String>,
    /// The receiving node.
    pub to: S<String>,
    /// Default "1ms"; may be "0ms".
    pub latency: Option<S<Duration>>,
    /// Default 1: each partition is FIFO on its own.
    pub partitions: Option<S<i64>>,
    /// Drop the channel's first N markers (every partition and attempt together).
    pub lose_markers: Option<S<LoseMarkers>>,
    /// Hold everything sent in the window until its end.
    pub down: Option<S<DownTable>>,
    /// Lose the channel's first N data messages (every partition, in send order): they never arrive.
    pub lose_data: Option<S<LoseMarkers>>,
    /// The channel's first N data messages arrive `by` later than their latency says: a marker sent after one can overtake it.
    pub late_data: Option<S<LateData>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LateData {
    /// How many data messages, at least 1.
    pub first: S<i64>,
    /// How much later, at least "1ms".
    pub by: S<Duration>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoseMarkers {
    pub first: S<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownTable {
    pub from: S<Duration>,
    pub duration: S<Duration>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SendKindName {
    /// The receiver's state grows by the value; the sender is unchanged.
    Add,
    /// The value leaves the sender at the send and reaches the receiver at receipt.
    Transfer,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendTable {
    /// Default "0s".
    pub at: Option<S<Duration>>,
    pub from: S<String>,
    pub to: S<String>,
    pub value: S<i64>,
    /// Default 0.
    pub partition: Option<S<i64>>,
    /// add (default) or transfer.
    pub kind: Option<S<SendKindName>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkersName {
    /// A marker on every partition, waited for on every partition.
    EveryPartition,
    /// One marker per channel, on partition 0 only.
    FirstPartition,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotTable {
    /// Default "0s".
    pub at: Option<S<Duration>>,
    /// The nodes that record first, distinct.
    pub initiators: S<Vec<S<String>>>,
    /// At least "1ms": when it passes, the attempt aborts and nodes not complete discard their recording.
    pub timeout: Option<S<Duration>>,
    /// every_partition (default) or first_partition.
    pub markers: Option<S<MarkersName>>,
    /// A registry: the nodes the coordinator waits for (every initiator among them); without it, every participating node.
    pub participants: Option<S<Vec<S<String>>>>,
    /// With `timeout`: "attempt" (default: one deadline from the start) or "first_marker" (each node's own, from when it recorded).
    pub timeout_from: Option<S<TimeoutFromName>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutFromName {
    /// One deadline for the attempt, from its start.
    Attempt,
    /// Each node aborts on its own clock, from when it recorded.
    FirstMarker,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsTable {
    /// Default 100,000,000.
    pub max_events: Option<S<i64>>,
    /// Modeled time; default "365d".
    pub max_time: Option<S<Duration>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectTable {
    pub description: Option<String>,
    /// `[expect.snapshot.N]`, N from 1 in file order.
    #[serde(default)]
    pub snapshot: BTreeMap<S<String>, S<ExpectSnapshot>>,
    /// `[expect.node.NAME]`: a node's state at the end.
    #[serde(default)]
    pub node: BTreeMap<S<String>, S<ExpectNode>>,
    /// `[expect.channel."A->B"]`: a channel's lost and late data messages.
    #[serde(default)]
    pub channel: BTreeMap<S<String>, S<ExpectChannelData>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectChannelData {
    /// Data messages the channel lost (`lose_data`).
    #[schemars(with = "Option<CheckSchema>")]
    pub lost: CheckValue,
    /// Data messages the channel delivered late (`late_data`).
    #[schemars(with = "Option<CheckSchema>")]
    pub late: CheckValue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSnapshot {
    /// complete, aborted or incomplete.
    #[schemars(with = "Option<OutcomeName>")]
    pub outcome: CheckValue,
    /// A duration, "never", or a comparison table.
    #[schemars(with = "Option<CheckSchema>")]
    pub completed_at: CheckValue,
    #[schemars(with = "Option<bool>")]
    pub consistent: CheckValue,
    #[schemars(with = "Option<CheckSchema>")]
    pub max_recorded: CheckValue,
    /// When the attempt aborted (with `timeout_from = "first_marker"`: its first node's abort), or "never".
    #[schemars(with = "Option<CheckSchema>")]
    pub aborted_at: CheckValue,
    /// With `participants`: the listed nodes that never recorded, in the registry's order (a list of names).
    #[schemars(with = "Option<Vec<String>>")]
    pub missing_participants: CheckValue,
    #[serde(default)]
    pub node: BTreeMap<S<String>, S<ExpectSnapshotNode>>,
    /// By channel name, "A->B", with ".pK" for partition K > 0.
    #[serde(default)]
    pub channel: BTreeMap<S<String>, S<ExpectChannel>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSnapshotNode {
    /// A whole number, "never", or a comparison table.
    #[schemars(with = "Option<IntCheckSchema>")]
    pub recorded_state: CheckValue,
    /// complete, aborted, not_recorded, waiting or not_participating.
    #[schemars(with = "Option<StatusName>")]
    pub status: CheckValue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectChannel {
    /// The values recorded in flight, in arrival order: a list, or
    /// "never" for a channel whose receiving node aborted.
    #[schemars(with = "Option<RecordedSchema>")]
    pub recorded: CheckValue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectNode {
    /// A whole number or a comparison table.
    #[schemars(with = "Option<IntCheckSchema>")]
    pub state: CheckValue,
}

/// How an attempt ended, in an expectation.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum OutcomeName {
    Complete,
    Aborted,
    Incomplete,
}

/// A node's status in an attempt, in an expectation.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum StatusName {
    Complete,
    Aborted,
    NotRecorded,
    Waiting,
    NotParticipating,
}

/// The JSON Schema of an expected channel recording: a list of whole
/// numbers, or "never" for a channel whose receiving node aborted (27.29).
pub struct RecordedSchema;

impl JsonSchema for RecordedSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Recorded".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The values recorded in flight, in arrival order, or \"never\".",
            "anyOf": [
                { "type": "array", "items": { "type": "integer" } },
                { "const": "never" }
            ]
        })
    }
}

/// The JSON Schema of an expected signed number (a state): exact, "never"
/// where no value is the answer, or a comparison table.
pub struct IntCheckSchema;

impl JsonSchema for IntCheckSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IntCheck".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let value = schemars::json_schema!({
            "anyOf": [{ "type": "integer" }, { "const": "never" }]
        });
        schemars::json_schema!({
            "description": "A whole number, \"never\", or a comparison table.",
            "anyOf": [
                value,
                {
                    "type": "object",
                    "additionalProperties": false,
                    "minProperties": 1,
                    "maxProperties": 2,
                    "properties": {
                        "equals": value,
                        "at_least": { "type": "integer" },
                        "at_most": { "type": "integer" },
                        "between": { "type": "array", "items": { "type": "integer" }, "minItems": 2, "maxItems": 2 },
                        "description": { "type": "string" }
                    }
                }
            ]
        })
    }
}
