//! `scenario-run compare`: two runs side by side. The differences it
//! reports are those of the two runs' JSON reports, found here
//! independently; the text is a snapshot; the pages draw both timelines
//! on one time axis.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::common::{code, run, scratch, stderr, stdout};

const STORM: &str = "scenarios/22-retry-storm-no-jitter.toml";
const FULL: &str = "delivery.backoff.jitter=\"full\"";

/// The scenario document of `scenario-run --format json FILE [--set ...]`.
fn report(file: &str, sets: &[&str]) -> Json {
    let mut args = vec!["--format", "json", file];
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = run(&args);
    let doc: Json = serde_json::from_str(&stdout(&o)).expect("JSON");
    doc["scenarios"][0].clone()
}

/// The differences of two JSON reports, as (section, item, field, a, b):
/// totals by measure, messages by id and sinks by name, the envelope aside.
/// A measure only one side has is no difference, nor is a field that only
/// one side gives an item both list; an item only one side lists differs
/// in every field.
fn expected(a: &Json, b: &Json) -> Vec<(String, String, String, Json, Json)> {
    let mut out = Vec::new();
    let empty = serde_json::Map::new();
    let (ta, tb) = (
        a["totals"].as_object().unwrap(),
        b["totals"].as_object().unwrap(),
    );
    let mut measures: Vec<&String> = ta.keys().collect();
    measures.extend(tb.keys().filter(|k| !ta.contains_key(*k)));
    for m in measures {
        let (va, vb) = (ta.get(m).cloned(), tb.get(m).cloned());
        if va.is_none() || vb.is_none() {
            continue;
        }
        if va != vb {
            let null = |v: Option<Json>| v.unwrap_or(Json::Null);
            out.push((
                "totals".into(),
                m.clone(),
                String::new(),
                null(va),
                null(vb),
            ));
        }
    }
    for (list, name) in [("messages", "id"), ("sinks", "name")] {
        let index = |doc: &Json| -> BTreeMap<String, Json> {
            doc[list]
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(|i| (i[name].as_str().unwrap().to_string(), i.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (ia, ib) = (index(a), index(b));
        let order: Vec<String> = a[list]
            .as_array()
            .into_iter()
            .flatten()
            .chain(b[list].as_array().into_iter().flatten())
            .map(|i| i[name].as_str().unwrap().to_string())
            .fold(Vec::new(), |mut seen, n| {
                if !seen.contains(&n) {
                    seen.push(n);
                }
                seen
            });
        for item in order {
            let oa = ia.get(&item).and_then(Json::as_object).unwrap_or(&empty);
            let ob = ib.get(&item).and_then(Json::as_object).unwrap_or(&empty);
            let mut fields: Vec<&String> = oa.keys().collect();
            fields.extend(ob.keys().filter(|k| !oa.contains_key(*k)));
            let both = ia.contains_key(&item) && ib.contains_key(&item);
            for f in fields {
                if ["id", "name", "envelope"].contains(&f.as_str()) {
                    continue;
                }
                if both && (!oa.contains_key(f) || !ob.contains_key(f)) {
                    continue;
                }
                // An item one side lacks has null for every field.
                let va = oa.get(f).cloned().unwrap_or(Json::Null);
                let vb = ob.get(f).cloned().unwrap_or(Json::Null);
                if va != vb {
                    out.push((list.into(), item.clone(), f.clone(), va, vb));
                }
            }
        }
    }
    out
}

fn reported(doc: &Json) -> Vec<(String, String, String, Json, Json)> {
    doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["section"].as_str().unwrap().to_string(),
                d["item"].as_str().unwrap().to_string(),
                d["field"].as_str().unwrap_or("").to_string(),
                d["a"].clone(),
                d["b"].clone(),
            )
        })
        .collect()
}

#[test]
fn the_differences_are_those_of_the_two_json_reports() {
    // The retry-storm lesson: no jitter against full jitter.
    let o = run(&["compare", STORM, "--set-b", FULL, "--format", "json"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let doc: Json = serde_json::from_str(&stdout(&o)).unwrap();
    let want = expected(&report(STORM, &[]), &report(STORM, &[FULL]));
    assert!(want.len() > 1_000, "{}", want.len());
    assert_eq!(reported(&doc), want);
    assert_eq!(doc["compared"]["differences"], want.len());
    assert_eq!(doc["b"]["sets"][0], FULL);
    // Two files with sinks: the identity lesson's scenarios, and a
    // fan-out whose sinks differ.
    let (a, b) = (
        "scenarios/02-repair-and-redrive.toml",
        "scenarios/04-new-identity-duplicates.toml",
    );
    let o = run(&["compare", a, b, "--format", "json"]);
    let doc: Json = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(reported(&doc), expected(&report(a, &[]), &report(b, &[])));
    let sinks = "scenarios/50-outbox-poisoned-row-and-lost-reply.toml";
    let once = "write.relay_attempts=1";
    let o = run(&["compare", sinks, "--set-b", once, "--format", "json"]);
    let doc: Json = serde_json::from_str(&stdout(&o)).unwrap();
    let got = reported(&doc);
    assert_eq!(got, expected(&report(sinks, &[]), &report(sinks, &[once])));
    assert!(got.iter().any(|d| d.0 == "sinks"), "{got:?}");
}

#[test]
fn the_identity_lesson_reads_as_a_table_of_differences() {
    let o = run(&[
        "compare",
        "scenarios/02-repair-and-redrive.toml",
        "scenarios/04-new-identity-duplicates.toml",
    ]);
    assert_eq!(code(&o), 1);
    insta::assert_snapshot!("compare_identity", stdout(&o));
}

#[test]
fn a_run_compared_with_itself_has_no_difference_and_exits_0() {
    let o = run(&[
        "compare",
        "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).ends_with("\nno difference\n"), "{}", stdout(&o));
}

#[test]
fn what_cannot_be_compared_is_said_with_its_exit_code() {
    // A sweep names the paths to fix.
    let o = run(&["compare", "scenarios/28-poison-lab-sweep.toml"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(
        err.contains("run A: scenarios/28-poison-lab-sweep.toml is a sweep of"),
        "{err}"
    );
    assert!(err.contains("with --set-a"), "{err}");
    // A dataflow is not a queue run.
    let o = run(&["compare", "scenarios/37-chandy-lamport-in-flight.toml"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("is a dataflow"), "{}", stderr(&o));
    // A bad value is located as --set locates it.
    let o = run(&[
        "compare",
        STORM,
        "--set-b",
        "delivery.max_receives=0",
        "--color",
        "never",
    ]);
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("`max_receives` must be at least 1"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn the_report_draws_both_timelines_on_one_time_axis() {
    let d = scratch("compare-report");
    let dir = d.join("out");
    let o = run(&[
        "compare",
        STORM,
        "--set-b",
        FULL,
        "--report",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("compare.html")).unwrap();
    let md = std::fs::read_to_string(dir.join("compare.md")).unwrap();
    let json: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("compare.json")).unwrap()).unwrap();
    assert_eq!(json["compared"]["totals_differing"], 18);
    assert!(md.contains("| `acked` | 40 | 200 |"), "{md}");
    // Two timelines whose axes carry the same ticks: A ends at 2m4s, B at
    // 1m12s, and both are drawn up to the later end.
    let axis = |svg: &str| -> Vec<String> {
        let start = html.find(&format!("<svg id=\"{svg}\"")).expect(svg);
        let body = &html[start..start + html[start..].find("</svg>").unwrap()];
        body.split("<text class=\"tick\" x=\"")
            .skip(1)
            .map(|t| t.split('<').next().unwrap().to_string())
            .collect()
    };
    let (a, b) = (axis("timeline-a"), axis("timeline-b"));
    assert!(a.len() > 5, "{a:?}");
    let ticks =
        |v: &[String]| -> Vec<String> { v.iter().filter(|t| t.contains('s')).cloned().collect() };
    assert_eq!(ticks(&a), ticks(&b));
    assert!(a.iter().any(|t| t.ends_with(">2m3s")), "{a:?}");
}

/// A measure one side has and the other does not (a log's against a
/// queue's) is named as measured by one side, not counted as a
/// difference of value (it once made "19 of 34 measures differ" out of 5).
#[test]
fn a_measure_only_one_side_has_is_not_a_difference() {
    let (log, queue) = (
        "scenarios/46-poison-record-blocks-one-partition.toml",
        "scenarios/10-redrive-only-poison.toml",
    );
    let o = run(&["compare", log, queue, "--format", "json"]);
    let doc: Json = serde_json::from_str(&stdout(&o)).unwrap();
    let (a, b) = (report(log, &[]), report(queue, &[]));
    assert_eq!(reported(&doc), expected(&a, &b));
    let (ta, tb) = (
        a["totals"].as_object().unwrap(),
        b["totals"].as_object().unwrap(),
    );
    let only_a: Vec<&String> = ta.keys().filter(|k| !tb.contains_key(*k)).collect();
    assert!(only_a.iter().any(|k| *k == "max_lag"), "{only_a:?}");
    let one_sided: Vec<(String, String)> = doc["one_sided"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["measure"].as_str().unwrap().into(),
                o["side"].as_str().unwrap().into(),
            )
        })
        .collect();
    for m in &only_a {
        assert!(
            one_sided.contains(&(m.to_string(), "A".into())),
            "{m}: {one_sided:?}"
        );
    }
    let both = ta.keys().filter(|k| tb.contains_key(*k)).count();
    assert_eq!(doc["compared"]["totals"], both);
    assert!(
        reported(&doc)
            .iter()
            .all(|d| d.0 != "totals" || (ta.contains_key(&d.1) && tb.contains_key(&d.1)))
    );
    let o = run(&["compare", log, queue]);
    let text = stdout(&o);
    assert!(
        text.contains("  measured by A only, not compared: "),
        "{text}"
    );
    assert!(text.contains("max_lag"), "{text}");
}

/// Every message of two runs is compared, however many (not only those a
/// JSON report lists), with a true count; two log runs also compare their
/// partitions and their restarts' resume positions and checkpoint times.
/// A 10-minute against a 1-minute stale checkpoint: the 1,200 records done
/// twice under the older one are the messages that differ.
#[test]
fn every_message_and_a_log_s_restarts_are_compared() {
    let file = "scenarios/43-stale-checkpoint-duplicates-and-gaps.toml";
    let recent = "restart.1.checkpoint_age=\"1m\"";
    let o = run(&["compare", file, "--set-b", recent, "--format", "json"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let doc: Json = serde_json::from_str(&stdout(&o)).unwrap();
    let (a, b) = (report(file, &[]), report(file, &[recent]));
    let messages = a["message_count"].as_u64().unwrap();
    assert!(messages > 10_000, "past the JSON report's full listing");
    let compared = &doc["compared"];
    assert_eq!(compared["messages"], messages);
    // Each record done twice under A has one more receive and effect.
    let twice = a["totals"]["duplicated_effects"].as_u64().unwrap()
        - b["totals"]["duplicated_effects"].as_u64().unwrap();
    assert_eq!(compared["messages_differing"], twice);
    let differences = reported(&doc);
    let receives = differences
        .iter()
        .filter(|d| d.0 == "messages" && d.2 == "total_receives")
        .count() as u64;
    assert_eq!(receives, twice);
    // The restart resumed elsewhere, from another checkpoint.
    let restart: Vec<_> = differences.iter().filter(|d| d.0 == "restarts").collect();
    let log = |doc: &Json, f: &str| doc["log"]["restarts"][0][f].clone();
    assert_eq!(
        restart
            .iter()
            .map(|d| (d.1.as_str(), d.2.as_str(), d.3.clone(), d.4.clone()))
            .collect::<Vec<_>>(),
        [
            (
                "1",
                "resume_positions",
                log(&a, "resume_positions"),
                log(&b, "resume_positions")
            ),
            (
                "1",
                "checkpoint_time",
                log(&a, "checkpoint_time"),
                log(&b, "checkpoint_time")
            ),
        ]
    );
    assert_eq!(compared["partitions"], 2);
    assert_eq!(compared["restarts"], 1);
    let text = stdout(&run(&["compare", file, "--set-b", recent]));
    assert!(
        text.contains(&format!("messages: {twice} of {messages} messages differ")),
        "{text}"
    );
    assert!(text.contains("  1        checkpoint_time   3h"), "{text}");
}
