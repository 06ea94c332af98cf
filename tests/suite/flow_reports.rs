//! The reports of workers, ordering and capacity: outage windows shaded on
//! every chart, the calls chart with the downstream's limit, the queue and
//! DLQ depth chart, and the messages worth a look, each checked against
//! the run's own numbers in the JSON report.

use crate::common;

use common::{code, report, scratch};
use serde_json::Value;

fn read(dir: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn json(dir: &std::path::Path, name: &str) -> Value {
    serde_json::from_str(&read(dir, name)).unwrap()
}

#[test]
fn the_retry_storm_shows_its_outage_and_its_calls_against_the_limit() {
    let d = scratch("flow-storm");
    let o = report(
        &d,
        "html,json",
        &["scenarios/22-retry-storm-no-jitter.toml"],
    );
    assert_eq!(code(&o), 0);
    let html = read(&d, "22-retry-storm-no-jitter.html");
    let doc = json(&d, "22-retry-storm-no-jitter.json");
    // One outage: shaded on the swimlanes and on the calls chart.
    assert_eq!(
        html.matches("<rect class=\"outage outage-over\"").count(),
        1
    );
    assert_eq!(html.matches("<rect class=\"outage\" x=").count(), 1);
    assert!(html.contains("outage from 0s to 5s: deliveries fail (downstream unavailable)"));
    // The calls chart: offered and accepted lines, the limit of 8 a second,
    // and the busiest window the totals report.
    assert!(html.contains("Calls offered and accepted per 1s window"));
    assert!(html.contains("the downstream accepts at most 8 calls here"));
    let peak = doc["totals"]["peak_offered"].as_u64().unwrap();
    assert_eq!(peak, 200);
    assert!(html.contains(&format!("offered (the most: {peak})")));
    assert_eq!(
        html.matches("class=\"flow-line calls-accepted\" d=\"M")
            .count(),
        1
    );
    // 200 messages: the lane view, no depth chart; more than 100: the
    // messages worth a look, the quarantined first.
    assert!(!html.contains("Queue depth (ready) and DLQ depth"));
    let picks = doc["interesting"].as_array().unwrap();
    assert_eq!(picks[0]["why"], "quarantined");
    assert_eq!(picks[0]["state"], "quarantined");
    assert!(html.contains("<table id=\"interesting\">"));
}

#[test]
fn a_large_run_charts_its_queue_and_dlq_depth_and_lists_what_to_read_first() {
    let d = scratch("flow-depth");
    let o = report(
        &d,
        "html,json,markdown",
        &["scenarios/17-outage-100k-per-hour.toml"],
    );
    assert_eq!(code(&o), 0);
    let html = read(&d, "17-outage-100k-per-hour.html");
    let doc = json(&d, "17-outage-100k-per-hour.json");
    let dlq = doc["totals"]["max_dlq_depth"].as_u64().unwrap();
    assert_eq!(dlq, 12_472);
    assert!(html.contains("Queue depth (ready) and DLQ depth, sampled every"));
    assert!(html.contains(&format!("DLQ depth (the most: {dlq})")));
    // The outage, on the stacked areas and on the depth chart.
    assert_eq!(
        html.matches("<rect class=\"outage outage-over\"").count(),
        1
    );
    assert_eq!(html.matches("<rect class=\"outage\" x=").count(), 1);
    // No workers or capacity: no calls chart.
    assert!(!html.contains("Calls offered and accepted"));
    // Ten quarantined messages, then those that waited longest (none: no
    // workers, no ordering), then the ten slowest to be acked.
    let picks = doc["interesting"].as_array().unwrap();
    let why: Vec<&str> = picks.iter().map(|p| p["why"].as_str().unwrap()).collect();
    assert_eq!(why[..10], ["quarantined"; 10]);
    assert_eq!(why[10..], ["slowest"; 10]);
    let latencies: Vec<u64> = picks[10..]
        .iter()
        .map(|p| p["latency"].as_u64().unwrap())
        .collect();
    assert!(latencies.windows(2).all(|w| w[0] >= w[1]), "{latencies:?}");
    // The slowest acked message needed every retry: 31s of backoff.
    assert!(latencies[0] >= 31_000, "{latencies:?}");
    let md = read(&d, "17-outage-100k-per-hour.md");
    assert!(md.contains("## Messages worth a look"));
    assert_eq!(md.matches("| slowest | `order-").count(), 10);
}

#[test]
fn a_small_run_lists_every_message_and_needs_no_picks() {
    let d = scratch("flow-small");
    let o = report(
        &d,
        "json,markdown",
        &["scenarios/01-dlq-is-not-proof-nothing-happened.toml"],
    );
    assert_eq!(code(&o), 0);
    let doc = json(&d, "01-dlq-is-not-proof-nothing-happened.json");
    assert!(doc["interesting"].is_null());
    assert!(!read(&d, "01-dlq-is-not-proof-nothing-happened.md").contains("worth a look"));
}

#[test]
fn the_head_that_blocked_its_group_is_marked_on_its_lane() {
    let d = scratch("flow-heads");
    let o = report(
        &d,
        "html",
        &[
            "scenarios/19-fifo-poison-receive-budget.toml",
            "scenarios/20-per-key-confines-the-poison.toml",
            "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
        ],
    );
    assert_eq!(code(&o), 0);
    // FIFO: one queue, the poison blocks all 20 others until its budget
    // quarantines it. Per key: only the 4 of its own group.
    for (file, waited) in [
        ("19-fifo-poison-receive-budget.html", 20),
        ("20-per-key-confines-the-poison.html", 4),
    ] {
        let html = read(&d, file);
        assert_eq!(
            html.matches("held its group&#x27;s head for").count(),
            1,
            "{file}"
        );
        assert!(
            html.contains(&format!(
                "<title>poison held its group&#x27;s head for 15s250ms, from 0s to 15s250ms, while {waited} messages of its group waited behind it"
            )),
            "{file}"
        );
        assert!(html.contains("held its group's head while others waited</li>"));
    }
    // Without ordering, no mark and no legend entry.
    let plain = read(&d, "01-dlq-is-not-proof-nothing-happened.html");
    assert!(!plain.contains("head-mark\""));
    assert!(!plain.contains("held its group"));
}
