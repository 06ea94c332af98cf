//! The JSON Schema of the scenario format, for editors and for
//! `scenario-run schema`: derived by schemars from the file's types
//! (`file.rs`, `file_expect.rs`, `file_guarantees.rs`; the dataflow's
//! part is `dataflow::schema`, and `app::schema` joins the two), then
//! given what the types cannot say: the keys a
//! profile requires or refuses, a fault's or a store's shape, each
//! expected value's kind, `[sweep]` and `[[expect.point]]`. The tool's own
//! validation stays the judge; this schema refuses what it can of what the
//! tool refuses, so that an editor does not show a file green that the
//! tool will not run.

use serde_json::json;

/// The JSON Schema of a queue scenario file, tightened, with `[sweep]`
/// and `[[expect.point]]`.
pub fn queue() -> serde_json::Value {
    let schema = schemars::schema_for!(crate::scenario::file::File);
    let mut queue = serde_json::to_value(&schema).unwrap_or_default();
    drop_null(&mut queue);
    tighten(&mut queue);
    let totals: Vec<&str> = crate::model::Total::ALL.iter().map(|t| t.name()).collect();
    sweep_schema(
        &mut queue,
        json!({ "enum": totals }),
        "Expect",
        "ExpectPoint",
    );
    queue
}

/// The JSON Schema of another kind of file (the dataflow's), as schemars
/// derives it from `T`, without nulls, with `[sweep]` and points: a
/// swept column names a value as `answer` does, and the point's table
/// and its type are `expect` and `point`.
pub fn of_file<T: schemars::JsonSchema>(
    answer: serde_json::Value,
    expect: &str,
    point: &str,
) -> serde_json::Value {
    let mut file = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    drop_null(&mut file);
    sweep_schema(&mut file, answer, expect, point);
    file
}

/// The JSON Schema of the scenario format: a queue scenario (`queue`) or
/// a dataflow file (`flow`, one with `[[node]]` entries), their shared
/// definitions the queue's.
pub fn combined(mut queue: serde_json::Value, mut flow: serde_json::Value) -> String {
    let mut defs = queue
        .as_object_mut()
        .and_then(|q| q.remove("$defs"))
        .unwrap_or_default();
    if let Some(more) = flow.as_object_mut().and_then(|f| f.remove("$defs"))
        && let (Some(defs), serde_json::Value::Object(more)) = (defs.as_object_mut(), more)
    {
        for (name, def) in more {
            // Shared types (the scenario table, durations, checks) are the
            // queue's, tightened.
            defs.entry(name).or_insert(def);
        }
    }
    let (Some(queue_map), Some(flow_map)) = (queue.as_object_mut(), flow.as_object_mut()) else {
        return String::new();
    };
    let schema_uri = queue_map.remove("$schema");
    for m in [&mut *queue_map, &mut *flow_map] {
        m.remove("$schema");
        m.remove("title");
    }
    defs["QueueFile"] = serde_json::Value::Object(queue_map.clone());
    defs["DataflowFile"] = serde_json::Value::Object(flow_map.clone());
    defs["QueueFile"]["description"] = json!(
        "A queue scenario: messages, faults, retries, quarantine, operator steps, deduplication and expected outcomes."
    );
    defs["DataflowFile"]["description"] = json!(
        "A dataflow scenario: nodes, FIFO channel partitions, sends and Chandy-Lamport snapshot attempts (a file with [[node]] entries)."
    );
    let schema = json!({
        "$schema": schema_uri,
        "title": "scenario-run scenario file",
        "description": "A scenario for scenario-run (TOML): a queue scenario (messages, faults, retries, \
             quarantine, operator steps, deduplication) or a dataflow scenario (nodes, channels, \
             snapshots), with expected outcomes.",
        "anyOf": [
            { "$ref": "#/$defs/QueueFile" },
            { "$ref": "#/$defs/DataflowFile" }
        ],
        "$defs": defs,
    });
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// `[sweep]` and `[[expect.point]]`, which the tool reads before the file's
/// types (each swept value is checked where it goes, not here).
fn sweep_schema(
    schema: &mut serde_json::Value,
    column: serde_json::Value,
    expect: &str,
    point: &str,
) {
    schema["properties"]["sweep"] = json!({
        "description": "Run the scenario once per point of the cartesian product of these values: a dotted path (\"delivery.max_receives\", \"traffic.1.mix.1.share\", \"channel.2.latency\": list entries by 1-based position) to a list of values; `columns` names the measures of the table of points, each once.",
        "type": "object",
        "properties": {
            "columns": { "type": "array", "items": column, "uniqueItems": true }
        },
        "additionalProperties": { "type": "array", "minItems": 1 }
    });
    let defs = &mut schema["$defs"];
    let mut entry = defs[expect].clone();
    entry["properties"]["where"] = json!({
        "description": "The points these expectations apply to: swept paths and their values.",
        "type": "object",
        "minProperties": 1
    });
    entry["required"] = json!(["where"]);
    defs[point] = entry;
    defs[expect]["properties"]["point"] = json!({
        "description": "Expectations for the points of a sweep that `where` selects.",
        "type": "array",
        "items": { "$ref": format!("#/$defs/{point}") }
    });
}

/// What validation requires beyond the serde types (which keep keys
/// optional so that the tool can say precisely what is missing): the
/// schema says it too, so an editor does not show green for a file the tool
/// refuses. What a schema cannot say (unique ids, references between
/// tables, sizes) stays with the tool.
fn tighten(schema: &mut serde_json::Value) {
    schema["required"] = json!(["delivery"]);
    let defs = &mut schema["$defs"];
    // Optional in the types, so that the tool can say which is missing.
    defs["Operator"]["required"] = json!(["action"]);
    defs["Message"]["required"] = json!(["id"]);
    defs["ExpectEvent"]["required"] = json!(["kind"]);
    // Each expected value takes its own kind of value.
    let count = json!({ "type": "integer", "minimum": 0 });
    let time = json!({ "$ref": "#/$defs/Duration" });
    let states =
        json!({ "enum": crate::model::State::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>() });
    let stopped_by = json!({ "enum": crate::model::StoppedBy::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>() });
    let text = json!({ "type": "string" });
    let time_or_never = json!({ "anyOf": [time, { "const": "never" }] });
    defs["CountCheck"] = check_schema(&count, true);
    defs["TimeCheck"] = check_schema(&time, true);
    defs["StateCheck"] = check_schema(&states, false);
    defs["TextCheck"] = check_schema(&text, false);
    defs["TimeOrNeverCheck"] = check_schema(&time_or_never, true);
    defs["StopCheck"] = check_schema(&stopped_by, false);
    defs["BoolCheck"] = check_schema(&json!({ "type": "boolean" }), false);
    // Under [write] compensations can take a sink's value and visible
    // duplicates below zero.
    defs["SignedCheck"] = check_schema(&json!({ "type": "integer" }), true);
    // Each field says what it takes; each kind has one check.
    let check = |takes: crate::model::Takes| {
        use crate::model::Takes as T;
        let name = match takes {
            T::Count => "CountCheck",
            T::Signed => "SignedCheck",
            T::Time => "TimeCheck",
            T::TimeOrNever => "TimeOrNeverCheck",
            T::State => "StateCheck",
            T::Text => "TextCheck",
            T::Bool => "BoolCheck",
            T::Stop => "StopCheck",
        };
        format!("#/$defs/{name}")
    };
    for total in crate::model::Total::ALL {
        defs["Expect"]["properties"][total.name()] = json!({
            "description": total.doc(),
            "$ref": check(total.takes()),
        });
    }
    for field in crate::model::MessageField::ALL {
        defs["ExpectMessage"]["properties"][field.name()] = json!({ "$ref": check(field.takes()) });
    }
    for field in crate::model::AlarmField::ALL {
        defs["ExpectAlarm"]["properties"][field.name()] = json!({ "$ref": check(field.takes()) });
    }
    for field in crate::model::KindField::ALL {
        defs["ExpectKind"]["properties"][field.name()] = json!({ "$ref": check(field.takes()) });
    }
    for field in crate::model::SinkField::ALL {
        defs["ExpectSink"]["properties"][field.name()] = json!({ "$ref": check(field.takes()) });
    }
    let max_lag = crate::model::SinkField::MaxLag;
    defs["ExpectSink"]["properties"][max_lag.name()] = json!({
        "description": "Outbox: the latest application minus its row's time, at most (a duration).",
        "$ref": check(max_lag.takes()),
    });
    let given_up = crate::model::SinkField::CompensationsGivenUp;
    defs["ExpectSink"]["properties"][given_up.name()] = json!({
        "description": "Saga: the compensations given up in this sink.",
        "$ref": check(given_up.takes()),
    });
    for (field, description) in [
        (
            crate::model::SinkField::WritesAfterChange,
            "With `becomes`: write calls applied at or after the change.",
        ),
        (
            crate::model::SinkField::KindAtEnd,
            "With `becomes`: the kind writes apply by at the end, \"increment\" or \"upsert\".",
        ),
        (
            crate::model::SinkField::Compensations,
            "Saga: the compensations applied to this sink.",
        ),
        (
            crate::model::SinkField::StaleOverwrites,
            "With `versioned`: writes older than their row that overwrote it.",
        ),
        (
            crate::model::SinkField::StaleRejections,
            "With `versioned`: writes older than their row that it rejected.",
        ),
    ] {
        defs["ExpectSink"]["properties"][field.name()] = json!({
            "description": description,
            "$ref": check(field.takes()),
        });
    }
    if let Some(defs) = defs.as_object_mut() {
        defs.remove("Check");
    }
    printable_texts(defs);
    let kinds: Vec<String> = crate::model::EventKind::ALL
        .iter()
        .map(|k| format!("{}: {}", k.as_str(), k.doc()))
        .collect();
    defs["EventKind"]["description"] = json!(format!("What happened. {}.", kinds.join("; ")));
}

/// The texts the tool prints are printable and of a bounded length, with
/// the limits validation applies (`scenario::MAX_*`).
fn printable_texts(defs: &mut serde_json::Value) {
    use crate::scenario::{MAX_DESCRIPTION, MAX_ID, MAX_NAME, MAX_REASON, MAX_SUMMARY};
    // A control character (Unicode category Cc); a description may hold
    // tabs and line breaks.
    let one_line = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";
    let lines = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$";
    let texts: [(&str, &str, usize, &str); 9] = [
        ("ScenarioMeta", "name", MAX_NAME, one_line),
        ("ScenarioMeta", "summary", MAX_SUMMARY, one_line),
        ("ScenarioMeta", "description", MAX_DESCRIPTION, lines),
        ("Delivery", "queue", MAX_ID, one_line),
        ("Message", "id", MAX_ID, one_line),
        ("Message", "key", MAX_ID, one_line),
        ("Traffic", "id_prefix", MAX_ID, one_line),
        ("Fault", "reason", MAX_REASON, one_line),
        ("SinkTable", "name", MAX_ID, one_line),
    ];
    for (table, key, max, pattern) in texts {
        let property = &mut defs[table]["properties"][key];
        property["maxLength"] = json!(max);
        property["pattern"] = json!(pattern);
    }
    let tags = &mut defs["ScenarioMeta"]["properties"]["tags"]["items"];
    tags["maxLength"] = json!(MAX_ID);
    tags["pattern"] = json!(one_line);
}

/// An expected value: `value`, or a table with one comparison (and an
/// optional description). Only numbers and times compare by order.
fn check_schema(value: &serde_json::Value, ordered: bool) -> serde_json::Value {
    let mut comparisons = json!({
        "equals": value,
        "description": { "type": "string" },
    });
    if ordered {
        comparisons["at_least"] = value.clone();
        comparisons["at_most"] = value.clone();
        comparisons["between"] =
            json!({ "type": "array", "items": value, "minItems": 2, "maxItems": 2 });
    }
    json!({
        "description": "An exact value, or a comparison table.",
        "anyOf": [
            value,
            { "type": "object", "additionalProperties": false, "minProperties": 1, "properties": comparisons }
        ]
    })
}

/// TOML has no null (an absent key is the only "none"): removes the null
/// alternative schemars gives every `Option`.
fn drop_null(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type") != Some(&json!("null")));
                if any.len() == 1 {
                    let only = any.remove(0);
                    map.remove("anyOf");
                    if let serde_json::Value::Object(only) = only {
                        for (k, val) in only {
                            map.entry(k).or_insert(val);
                        }
                    }
                }
            }
            if let Some(serde_json::Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let t = types.remove(0);
                    map.insert("type".into(), t);
                }
            }
            map.values_mut().for_each(drop_null);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}
