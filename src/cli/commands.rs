//! The subcommands besides running: `check`, `show`, `new`, `schema`.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;

use super::Format;
use super::print::{annotation, emit, paint};
use super::{EXIT_FAILED, EXIT_INVALID, EXIT_PASSED};
use crate::app::Loaded;
use crate::app::result::{FileResult, Options};
use crate::app::{LoadError, batch, load_file, sweep};
use crate::diagnostic::Source;
use crate::diagnostic::{Problem, render};
use crate::engine::{self, Recorder};
use crate::report::text;

/// `check`: validates each file without running it; prints each file's
/// status and problems as `format` asks.
pub(super) fn check(
    patterns: &[String],
    sets: &[(String, String)],
    format: Format,
    color: bool,
) -> u8 {
    let files = match super::files(patterns) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // Each file, its problems, and its points when it is a sweep.
    let checked: Vec<(&String, Vec<Problem>, Option<usize>)> = files
        .iter()
        .map(|path| match load_file(path, sets) {
            Ok((Loaded::Sweep(sweep), _)) => (path, Vec::new(), Some(sweep.points.len())),
            Ok((Loaded::DataflowSweep(sweep), _)) => (path, Vec::new(), Some(sweep.points.len())),
            Ok(_) => (path, Vec::new(), None),
            Err(e) => (path, e.into_invalid(path).problems, None),
        })
        .collect();
    let invalid = checked.iter().filter(|(_, p, _)| !p.is_empty()).count();
    let valid = checked.len() - invalid;
    let out = match format {
        Format::Json => {
            let files: Vec<_> = checked
                .iter()
                .map(|(file, problems, points)| {
                    json!({
                        "file": file,
                        "status": if problems.is_empty() { "valid" } else { "invalid" },
                        "points": points,
                        "problems": problems.iter().map(Problem::located).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let doc = json!({
                "format_version": crate::report::json::REPORT_FORMAT_VERSION,
                "files": files,
                "valid": valid,
                "invalid": invalid,
            });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            )
        }
        Format::Human | Format::Github => {
            let mut out = String::new();
            for (path, problems, points) in &checked {
                if problems.is_empty() {
                    let sweep =
                        points.map_or(String::new(), |n| format!("  (a sweep of {n} points)"));
                    out += &format!("{}  {path}{sweep}\n", paint("OK", "32", color));
                    continue;
                }
                out += &format!("{}  {path}\n", paint("INVALID", "31", color));
                for p in problems {
                    out += &match format {
                        Format::Github => annotation(&p.located(), path),
                        _ => format!("{}\n", render(p, color)),
                    };
                }
            }
            out + &format!("{valid} valid, {invalid} invalid\n")
        }
    };
    emit(&out);
    if invalid > 0 {
        EXIT_INVALID
    } else {
        EXIT_PASSED
    }
}

/// `show`: a scenario's transcript and snapshot. A sweep shows its table
/// of points; `--set` fixing each swept path shows one point.
pub(super) fn show(
    path: &str,
    sets: &[(String, String)],
    at: Option<u64>,
    seed: Option<u64>,
    color: bool,
) -> u8 {
    let (mut scenario, source) = match load_file(path, sets) {
        Ok((Loaded::One(scenario), source)) => (*scenario, source),
        Ok((Loaded::Dataflow(flow), source)) => return show_dataflow(&source, &flow, at, color),
        Ok((Loaded::DataflowSweep(mut sweep), source)) if sweep.points.len() == 1 => {
            let flow = sweep.points.remove(0).flow;
            return show_dataflow(&source, &flow, at, color);
        }
        Ok((Loaded::DataflowSweep(sweep), source)) => {
            let values: Vec<&[String]> = sweep.points.iter().map(|p| &p.values[..]).collect();
            let command = to_fix(path, &sweep.keys, &values, sets, at);
            return show_sweep(path, command, seed, |opts| {
                sweep::run_dataflow_sweep(source, sweep, &|_| true, opts)
            });
        }
        Ok((Loaded::Sweep(mut sweep), source)) if sweep.points.len() == 1 => {
            (sweep.points.remove(0).scenario, source)
        }
        Ok((Loaded::Sweep(sweep), source)) => {
            let values: Vec<&[String]> = sweep.points.iter().map(|p| &p.values[..]).collect();
            let command = to_fix(path, &sweep.keys, &values, sets, at);
            return show_sweep(path, command, seed, |opts| {
                sweep::run_sweep(source, sweep, &|_| true, opts, &batch::run_scenario)
            });
        }
        Err(LoadError::Unreadable(e)) => {
            eprintln!("error: cannot read {path}: {e}");
            return EXIT_INVALID;
        }
        Err(LoadError::Invalid(inv)) => {
            for p in &inv.problems {
                eprintln!("{}", render(p, color));
            }
            return EXIT_INVALID;
        }
    };
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    // The same text as the golden transcript: every transition up to
    // FULL_TRANSCRIPT_MESSAGES messages; past that drains, totals and the
    // snapshot's head, so that showing ten million messages costs what
    // running them does.
    let recorder = if scenario.message_count() <= engine::FULL_TRANSCRIPT_MESSAGES {
        Recorder::All
    } else {
        Recorder::Off
    };
    let result = match at {
        Some(t) => engine::run_until(&scenario, recorder, t),
        None => engine::run(&scenario, recorder),
    };
    match result {
        Ok(outcome) => {
            let mut out = super::print::Stdout::new();
            let _ = text::write_golden_transcript(&mut out, &scenario, &outcome);
            out.flush();
            EXIT_PASSED
        }
        Err(limit) => {
            eprintln!(
                "{}",
                render(&batch::limit_problem(&source, &scenario, &limit), color)
            );
            EXIT_INVALID
        }
    }
}

/// `show` of a dataflow file: its transcript (up to `at`) and cuts.
fn show_dataflow(
    source: &Source,
    flow: &crate::dataflow::Dataflow,
    at: Option<u64>,
    color: bool,
) -> u8 {
    let run = match at {
        Some(t) => crate::dataflow::world::run_until(flow, t),
        None => crate::dataflow::run(flow),
    };
    match run {
        Ok(outcome) => {
            super::print::emit(&crate::dataflow::text::transcript(flow, &outcome, at));
            EXIT_PASSED
        }
        Err(stop) => {
            eprintln!(
                "{}",
                render(&crate::dataflow::stop_problem(source, &stop), color)
            );
            EXIT_INVALID
        }
    }
}

/// The `--set` arguments that show one point of a sweep: those given,
/// then one per swept path that still varies (a `--set` may have fixed
/// some). `--at` shows one point only: an error that says which to fix.
fn to_fix(
    path: &str,
    keys: &[String],
    values: &[&[String]],
    sets: &[(String, String)],
    at: Option<u64>,
) -> Result<String, u8> {
    let fix: Vec<String> = (keys.iter().enumerate())
        .filter(|&(i, _)| values.iter().any(|v| v[i] != values[0][i]))
        .map(|(_, k)| format!("--set {k}=VALUE"))
        .collect();
    if at.is_some() {
        eprintln!(
            "error: {path} sweeps {} points; --at shows one: fix each swept path with {}",
            values.len(),
            fix.join(" ")
        );
        return Err(EXIT_INVALID);
    }
    let given = sets.iter().map(|(k, v)| format!("--set {k}={v} "));
    Ok(format!("{}{}", given.collect::<String>(), fix.join(" ")))
}

/// `show` of a sweep: its table of points (the text of its golden file),
/// and how to show one point (`command`, or the exit code of its error).
/// Exits as the batch would for this file.
fn show_sweep(
    path: &str,
    command: Result<String, u8>,
    seed: Option<u64>,
    run: impl FnOnce(&Options) -> FileResult,
) -> u8 {
    let sets = match command {
        Ok(command) => command,
        Err(code) => return code,
    };
    let opts = Options {
        seed,
        ..Options::default()
    };
    let result = run(&opts);
    let FileResult::Swept(run) = &result else {
        return EXIT_INVALID;
    };
    use std::fmt::Write as _;
    let mut out = super::print::Stdout::new();
    let _ = write!(
        out,
        "{}\nshow one point: scenario-run show {path} {sets}\n",
        run.transcript(),
    );
    out.flush();
    if run.stopped() {
        EXIT_INVALID
    } else if run.passed() {
        EXIT_PASSED
    } else {
        EXIT_FAILED
    }
}

/// The JSON Schema of the scenario format: a queue scenario or a dataflow
/// file (one with `[[node]]` entries).
pub fn schema() -> String {
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
    let mut flow = serde_json::to_value(schemars::schema_for!(crate::dataflow::file::File))
        .unwrap_or_default();
    drop_null(&mut flow);
    flow["required"] = json!(["node"]);
    flow["properties"]["node"]["minItems"] = json!(1);
    // A dataflow's column names a value in the form of a question's answer.
    let answer = json!({
        "type": "string",
        "pattern": "^(snapshot\\.[0-9]+\\..+|node\\..+\\.state)$"
    });
    sweep_schema(&mut flow, answer, "ExpectTable", "DataflowExpectPoint");
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
    let one_of_keys = |keys: &[&str]| {
        json!(
            keys.iter()
                .map(|k| json!({ "required": [k] }))
                .collect::<Vec<_>>()
        )
    };
    schema["required"] = json!(["delivery"]);
    let defs = &mut schema["$defs"];
    // The profile decides what [delivery] needs (decision 22.5): the
    // model wants max_receives and one retry delay; rabbitmq-quorum has
    // defaults for both; sqs-standard retries at the visibility timeout.
    let profile = |name: &str| json!({ "required": ["profile"], "properties": { "profile": { "const": name } } });
    let retry_keys =
        json!({ "anyOf": [{ "required": ["retry_interval"] }, { "required": ["backoff"] }] });
    // `max_receives = 0` is the delivery limit 0 under rabbitmq-quorum,
    // and refused under the others.
    let no_zero = json!({ "properties": { "max_receives": { "not": { "const": 0 } } } });
    // Consumer settings of one profile: `ack_backoff` (JetStream),
    // `visibility_heartbeat` (SQS), `broker_version` (RabbitMQ);
    // `on_failure` takes JetStream's values or SQS's.
    let without = |key: &str| json!({ "not": { "required": [key] } });
    let on_failure =
        |values: &[&str]| json!({ "properties": { "on_failure": { "enum": values } } });
    let (no_backoff_list, no_heartbeat, no_version, no_on_failure) = (
        without("ack_backoff"),
        without("visibility_heartbeat"),
        without("broker_version"),
        without("on_failure"),
    );
    let change_visibility = json!({ "required": ["on_failure"], "properties": { "on_failure": { "const": "change_visibility" } } });
    defs["Delivery"]["anyOf"] = json!([
        {
            "not": { "anyOf": [profile("sqs-standard"), profile("rabbitmq-quorum"), profile("nats-jetstream")] },
            "required": ["max_receives"],
            "oneOf": one_of_keys(&["retry_interval", "backoff"]),
            "allOf": [no_zero, no_backoff_list, no_heartbeat, no_version, no_on_failure]
        },
        { "allOf": [profile("rabbitmq-quorum"), no_backoff_list, no_heartbeat, no_on_failure], "not": { "required": ["retry_interval", "backoff"] } },
        {
            "allOf": [profile("sqs-standard"), no_zero, no_backoff_list, no_version],
            "required": ["max_receives"],
            "anyOf": [
                { "allOf": [on_failure(&["no_ack"])], "not": retry_keys },
                { "allOf": [change_visibility], "oneOf": one_of_keys(&["retry_interval", "backoff"]) }
            ]
        },
        { "allOf": [profile("nats-jetstream"), no_zero, no_heartbeat, no_version, on_failure(&["nak", "no_ack"])], "not": { "required": ["retry_interval", "backoff"] } }
    ]);
    defs["Delivery"]["properties"]["ack_backoff"]["minItems"] = json!(1);
    defs["Delivery"]["properties"]["broker_version"]["pattern"] =
        json!("^[0-9]{1,4}\\.[0-9]{1,4}(\\.[0-9]{1,4})?$");
    defs["Delivery"]["properties"]["ack_backoff"]["maxItems"] =
        json!(crate::model::MAX_ACK_BACKOFF);
    defs["Operator"]["required"] = json!(["action"]);
    defs["Message"]["required"] = json!(["id"]);
    defs["Selector"]["oneOf"] = one_of_keys(&["first", "until"]);
    defs["Selector"]["properties"]["first"]["minimum"] = json!(0);
    defs["Traffic"]["properties"]["count"]["minimum"] = json!(0);
    defs["Traffic"]["properties"]["groups"]["minimum"] = json!(1);
    defs["Mix"]["properties"]["share"]["minimum"] = json!(0);
    defs["Mix"]["properties"]["share"]["maximum"] = json!(1);
    defs["WorkersTable"]["properties"]["count"]["minimum"] = json!(1);
    defs["DownstreamTable"]["properties"]["limit"]["minimum"] = json!(1);
    defs["ScenarioMeta"]["properties"]["seed"]["minimum"] = json!(0);
    for limit in ["max_events", "max_messages"] {
        defs["Limits"]["properties"][limit]["minimum"] = json!(0);
    }
    defs["ExpectEvent"]["required"] = json!(["kind"]);
    // A lost acknowledgement has no reason or class of its own; a crash
    // says where it happens and holds its worker for the service time.
    defs["Fault"]["oneOf"] = json!([
        { "required": ["fail"], "not": { "required": ["at"] } },
        { "required": ["lose_ack"], "not": { "anyOf": [{ "required": ["reason"] }, { "required": ["class"] }, { "required": ["takes"] }, { "required": ["at"] }] } },
        { "required": ["crash", "at"], "not": { "required": ["takes"] } }
    ]);
    // lease and renew are write-intent keys; write-intent needs a lease.
    defs["Dedup"]["anyOf"] = json!([
        { "required": ["mode", "lease"], "properties": { "mode": { "const": "write_intent" } } },
        {
            "properties": { "mode": { "const": "result" } },
            "not": { "anyOf": [{ "required": ["lease"] }, { "required": ["renew"] }] }
        }
    ]);
    defs["Operator"]["properties"]["canary"]["minimum"] = json!(1);
    defs["Operator"]["properties"]["redrive_rate"]["minimum"] = json!(1);
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
    for total in crate::model::Total::ALL {
        let check = match total.unit() {
            crate::model::Unit::Count => "CountCheck",
            crate::model::Unit::Time => "TimeCheck",
            crate::model::Unit::MaybeTime => "TimeOrNeverCheck",
            crate::model::Unit::Stop => "StopCheck",
        };
        defs["Expect"]["properties"][total.name()] = json!({
            "description": total.doc(),
            "$ref": format!("#/$defs/{check}"),
        });
    }
    for field in crate::model::MessageField::ALL {
        use crate::model::MessageField as F;
        let check = match field {
            F::State => "StateCheck",
            F::Key | F::LastReason | F::Group => "TextCheck",
            F::LastQuarantinedAt | F::ArrivedAt | F::AckedAt | F::Latency => "TimeOrNeverCheck",
            F::QueueWait => "TimeCheck",
            F::Cycle | F::CycleReceives | F::TotalReceives | F::Effects | F::DedupHits => {
                "CountCheck"
            }
        };
        defs["ExpectMessage"]["properties"][field.name()] =
            json!({ "$ref": format!("#/$defs/{check}") });
    }
    defs["BoolCheck"] = check_schema(&json!({ "type": "boolean" }), false);
    for field in crate::model::AlarmField::ALL {
        use crate::model::AlarmField as A;
        let check = match field {
            A::Fired | A::FiringAtEnd => "BoolCheck",
            A::FirstFiredAt => "TimeOrNeverCheck",
            A::TimesFired => "CountCheck",
        };
        defs["ExpectAlarm"]["properties"][field.name()] =
            json!({ "$ref": format!("#/$defs/{check}") });
    }
    for field in crate::model::KindField::ALL {
        defs["ExpectKind"]["properties"][field.name()] = json!({ "$ref": "#/$defs/CountCheck" });
    }
    // Under [write] compensations can take a sink's value and visible
    // duplicates below zero.
    defs["SignedCheck"] = check_schema(&json!({ "type": "integer" }), true);
    for field in crate::model::SinkField::ALL {
        use crate::model::SinkField as K;
        let check = match field {
            K::Value | K::VisibleDuplicates => "SignedCheck",
            _ => "CountCheck",
        };
        defs["ExpectSink"]["properties"][field.name()] =
            json!({ "$ref": format!("#/$defs/{check}") });
    }
    defs["ExpectSink"]["properties"]["max_lag"] = json!({
        "description": "Outbox: the latest application minus its row's time, at most (a duration).",
        "$ref": "#/$defs/TimeCheck",
    });
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

const STARTER: &str = include_str!("starter.toml");

/// `new NAME`: a commented starter scenario that passes as written.
pub(super) fn new_scenario(name: &str) -> u8 {
    let stem = std::path::Path::new(name).file_stem();
    if name.trim().is_empty() || name.chars().any(char::is_control) || stem.is_none() {
        eprintln!(
            "error: {name:?} is not a usable file name: give a name such as incident or scenarios/incident.toml, without control characters"
        );
        return EXIT_INVALID;
    }
    let path = if std::path::Path::new(name).extension().is_some() {
        PathBuf::from(name)
    } else {
        PathBuf::from(format!("{name}.toml"))
    };
    let title = path
        .file_stem()
        .map(|s| s.to_string_lossy().replace(['-', '_'], " "))
        .unwrap_or_else(|| "New scenario".into());
    let text = STARTER
        .replace("{name}", &toml::Value::String(title).to_string())
        .replace("{file}", &shell_quoted(&path.display().to_string()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match file.and_then(|mut f| f.write_all(text.as_bytes())) {
        Ok(()) => {
            emit(&format!(
                "wrote {}; run it with: scenario-run {}\n",
                path.display(),
                shell_quoted(&path.display().to_string())
            ));
            EXIT_PASSED
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!("error: {} already exists; not overwritten", path.display());
            EXIT_INVALID
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            if let Some(folder) = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty() && !p.exists())
            {
                eprintln!(
                    "help: the folder does not exist; create it first: mkdir -p {}",
                    shell_quoted(&folder.display().to_string())
                );
            }
            EXIT_INVALID
        }
    }
}

/// A path as a shell reads it back: as is when it is plain, otherwise in
/// single quotes.
fn shell_quoted(path: &str) -> String {
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./+@%:,".contains(c));
    if plain && !path.is_empty() {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}
