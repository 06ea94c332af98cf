//! A dataflow run as JSON: the same head as a queue scenario's report
//! (file, name, status, expectations, problems), then the dataflow's own
//! parts. Times are integer milliseconds; field order is fixed.

use serde_json::{Map, Value as Json, json};

use super::Ran;
use super::model::{Dataflow, describe};
use super::outcome::{Happened, Outcome};
use crate::diagnostic::Located;
use crate::model::{Check, Verdict};

/// The few figures the batch index shows of a run.
pub fn totals(flow: &Dataflow, outcome: &Outcome) -> Json {
    let count = |o: super::outcome::AttemptOutcome| {
        outcome.attempts.iter().filter(|a| a.outcome == o).count()
    };
    json!({
        "nodes": flow.nodes.len(),
        "channels": flow.channels.len(),
        "sends": flow.sends.len(),
        "snapshots": outcome.attempts.len(),
        "complete": count(super::outcome::AttemptOutcome::Complete),
        "aborted": count(super::outcome::AttemptOutcome::Aborted),
        "incomplete": count(super::outcome::AttemptOutcome::Incomplete),
        "events": outcome.events,
        "end": outcome.end,
    })
}

fn check(c: &Check) -> Json {
    match c {
        Check::Equals(v) => json!({ "equals": v.to_json() }),
        Check::AtLeast(v) => json!({ "at_least": v.to_json() }),
        Check::AtMost(v) => json!({ "at_most": v.to_json() }),
        Check::Between(a, b) => json!({ "between": [a.to_json(), b.to_json()] }),
        Check::Occurs => json!({ "occurs": true }),
    }
}

pub fn expectations(flow: &Dataflow, verdicts: &[Verdict]) -> Json {
    Json::Array(
        verdicts
            .iter()
            .map(|v| {
                let e = &flow.expectations[v.index];
                json!({
                    "expectation": describe(flow, e),
                    "description": e.description,
                    "expected": check(&e.check),
                    "expected_text": e.check.to_string(),
                    "actual": v.actual.to_json(),
                    "actual_text": v.actual.to_string(),
                    "passed": v.passed,
                })
            })
            .collect(),
    )
}

/// The dataflow as the file gave it.
pub fn parameters(flow: &Dataflow) -> Json {
    let nodes: Vec<Json> = flow
        .nodes
        .iter()
        .map(|n| {
            let mut node = json!({ "name": n.name, "state": n.state });
            if !n.participates {
                node["participates"] = json!(false);
            }
            node
        })
        .collect();
    let channels: Vec<Json> = (0..flow.channels.len() as u32)
        .map(|c| {
            let ch = &flow.channels[c as usize];
            let mut channel = json!({
                "channel": flow.channel_name(c),
                "from": flow.nodes[ch.from as usize].name,
                "to": flow.nodes[ch.to as usize].name,
                "latency": ch.latency,
                "partitions": ch.partitions,
                "lose_markers": ch.lose_markers,
                "down": ch.down.map(|w| json!({ "from": w.from, "until": w.until })),
            });
            if ch.lose_data > 0 {
                channel["lose_data"] = json!(ch.lose_data);
            }
            if let Some((first, by)) = ch.late_data {
                channel["late_data"] = json!({ "first": first, "by": by });
            }
            channel
        })
        .collect();
    let snapshots: Vec<Json> = flow
        .snapshots
        .iter()
        .map(|s| {
            let mut snap = json!({
                "at": s.at,
                "initiators": s.initiators.iter().map(|&n| &flow.nodes[n as usize].name).collect::<Vec<_>>(),
                "timeout": s.timeout,
                "markers": s.markers.as_str(),
            });
            if let Some(listed) = &s.participants {
                snap["participants"] = json!(listed.iter().map(|&n| &flow.nodes[n as usize].name).collect::<Vec<_>>());
            }
            if s.timeout_from == super::model::TimeoutFrom::FirstMarker {
                snap["timeout_from"] = json!("first_marker");
            }
            snap
        })
        .collect();
    json!({
        "nodes": nodes,
        "channels": channels,
        "sends": flow.sends.len(),
        "transfers_only": flow.transfers_only(),
        "total": flow.total() as i64,
        "snapshots": snapshots,
    })
}

/// Each attempt in brief, as a sweep's point gives it: its outcome, its
/// times, whether its cut is consistent, and the most values one node held
/// recorded.
pub fn attempts(outcome: &Outcome) -> Json {
    let list = (outcome.attempts.iter().enumerate()).map(|(k, a)| Json::Object(brief(k, a, false)));
    Json::Array(list.collect())
}

/// An attempt's number, outcome, times, consistency (and, with `total`,
/// what its cut recorded in all) and `max_recorded`, in that order.
fn brief(k: usize, a: &super::outcome::Attempt, total: bool) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("attempt".into(), json!(k + 1));
    m.insert("outcome".into(), json!(a.outcome.as_str()));
    if let Some(t) = a.completed_at {
        m.insert("completed_at".into(), json!(t));
    }
    if let Some(t) = a.aborted_at {
        m.insert("aborted_at".into(), json!(t));
    }
    if let Some(c) = a.consistent {
        m.insert("consistent".into(), json!(c));
        if total {
            m.insert("recorded_total".into(), json!(a.recorded_total as i64));
        }
    }
    m.insert("max_recorded".into(), json!(a.max_recorded));
    m
}

/// Each attempt: its outcome, times, per node status and recorded state,
/// per channel partition what was recorded.
pub fn snapshots(flow: &Dataflow, outcome: &Outcome) -> Json {
    let list: Vec<Json> = outcome
        .attempts
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let mut m = brief(k, a, true);
            if flow.snapshots[k].participants.is_some() {
                let missing: Vec<&str> = (a.missing_participants.iter())
                    .map(|&n| flow.nodes[n as usize].name.as_str())
                    .collect();
                m.insert("missing_participants".into(), json!(missing));
            }
            let nodes: Vec<Json> = flow
                .nodes
                .iter()
                .enumerate()
                .map(|(n, node)| {
                    let r = &a.nodes[n];
                    let mut o = Map::new();
                    o.insert("name".into(), json!(node.name));
                    o.insert("status".into(), json!(r.status.as_str()));
                    if let Some(s) = r.recorded_state {
                        o.insert("recorded_state".into(), json!(s));
                    }
                    if let Some(t) = r.recorded_at {
                        o.insert("recorded_at".into(), json!(t));
                    }
                    Json::Object(o)
                })
                .collect();
            m.insert("nodes".into(), Json::Array(nodes));
            let mut channels = Vec::new();
            for (c, ch) in flow.channels.iter().enumerate() {
                for p in 0..ch.partitions {
                    if let Some(values) = outcome.recorded(flow, k as u32, c as u32, p) {
                        channels.push(json!({
                            "channel": flow.channel_name(c as u32),
                            "partition": p,
                            "recorded": values,
                        }));
                    }
                }
            }
            m.insert("channels".into(), Json::Array(channels));
            Json::Object(m)
        })
        .collect();
    Json::Array(list)
}

/// The happenings the run kept, as data.
pub fn log(flow: &Dataflow, outcome: &Outcome) -> Json {
    let list: Vec<Json> = outcome
        .log
        .iter()
        .map(|e| {
            let kind = match e.what {
                Happened::Sent { .. } => "sent",
                Happened::DataLost { .. } => "data_lost",
                Happened::MarkerDropped { .. } => "marker_dropped",
                Happened::NodeAborted { .. } => "node_aborted",
                Happened::Received { .. } => "received",
                Happened::Started { .. } => "started",
                Happened::Recorded { .. } => "recorded",
                Happened::MarkerSent { .. } => "marker_sent",
                Happened::MarkerLost { .. } => "marker_lost",
                Happened::MarkerReceived { .. } => "marker_received",
                Happened::MarkerIgnored { .. } => "marker_ignored",
                Happened::NodeComplete { .. } => "node_complete",
                Happened::Completed { .. } => "completed",
                Happened::Aborted { .. } => "aborted",
            };
            json!({
                "at": e.at,
                "kind": kind,
                "text": super::text::sentence(flow, outcome, &e.what),
            })
        })
        .collect();
    Json::Array(list)
}

/// Each question with its answer, computed from the run (a question with
/// `at` from a run stopped then: at most one run per question, and a file
/// asks at most 20).
pub fn questions(flow: &Dataflow, outcome: &Outcome) -> Json {
    let list: Vec<Json> = flow
        .questions
        .iter()
        .map(|q| {
            let value = match q.at {
                Some(t) if t < outcome.end => super::world::run_until(flow, t)
                    .ok()
                    .map(|o| super::judge::actual(flow, &o, q.answer)),
                _ => Some(super::judge::actual(flow, outcome, q.answer)),
            };
            json!({
                "ask": q.ask,
                "at": q.at,
                "answer": q.answer_name,
                "value": value.as_ref().map_or(Json::Null, |v| v.to_json()),
                "value_text": value.as_ref().map_or("-".to_string(), |v| v.to_string()),
                "explain": q.explain,
            })
        })
        .collect();
    Json::Array(list)
}

/// The whole document of a dataflow file (a run that stopped has no
/// snapshots).
pub fn document(file: &str, ran: &Ran, problems: &[Located]) -> Json {
    let flow = &*ran.flow;
    let passed = ran.verdicts.iter().filter(|v| v.passed).count();
    let mut doc = json!({
        "format_version": crate::report::json::REPORT_FORMAT_VERSION,
        "file": file,
        "kind": "dataflow",
        "name": flow.name,
        "summary": flow.summary,
        "description": flow.description,
        "tags": flow.tags,
        "seed": flow.seed,
        "status": ran.status(),
        "expectations_passed": passed,
        "expectations_failed": ran.verdicts.len() - passed,
        "parameters": parameters(flow),
        "expectations": expectations(flow, &ran.verdicts),
        "problems": problems,
    });
    if let Ok(outcome) = &ran.run {
        doc["totals"] = totals(flow, outcome);
        doc["snapshots"] = snapshots(flow, outcome);
        let states: Map<String, Json> = flow
            .nodes
            .iter()
            .zip(&outcome.states)
            .map(|(n, s)| (n.name.clone(), json!(s)))
            .collect();
        doc["states"] = Json::Object(states);
        let faulty = |c: &super::model::Channel| c.lose_data > 0 || c.late_data.is_some();
        if flow.channels.iter().any(faulty) {
            let data: Vec<Json> = (0..flow.channels.len())
                .filter(|&c| faulty(&flow.channels[c]))
                .map(|c| {
                    json!({
                        "channel": flow.channel_name(c as u32),
                        "lost": outcome.lost[c],
                        "late": outcome.late[c],
                    })
                })
                .collect();
            doc["channel_data"] = Json::Array(data);
        }
        doc["log"] = log(flow, outcome);
        doc["log_dropped"] = json!(outcome.log_dropped);
        if !flow.questions.is_empty() {
            doc["questions"] = questions(flow, outcome);
        }
    }
    doc
}
