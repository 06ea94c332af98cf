//! Tests of the json module.

use super::*;
use crate::engine::{Recorder, run_with_census};

/// Every census row is exact: the counts of a run stopped at its time.
#[test]
fn census_rows_are_the_counts_at_their_times() {
    let mut rows_checked = 0;
    let mut marked = 0;
    for (path, scenario) in crate::scenario::bundled() {
        let outcome = run_with_census(&scenario, Recorder::Off).unwrap();
        let table = census(&outcome);
        let rows = table["rows"].as_array().unwrap();
        let census = outcome.census.as_ref().unwrap();
        let marks = census.marks.len() as u64;
        assert!(
            rows.len() as u64 <= CENSUS_ROWS + 2 + marks,
            "{}",
            path.display()
        );
        // Each inspection and outage edge of the run has its row.
        let inspections = scenario.operators.len().min(outcome.drains.len());
        let edges = scenario
            .outages
            .iter()
            .flat_map(|o| [o.from, o.from + o.duration])
            .filter(|&t| t <= outcome.totals.end_time)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        assert!(
            census.marks.len() >= inspections.max(edges),
            "{}",
            path.display()
        );
        for m in &census.marks {
            assert!(
                rows.iter()
                    .any(|r| r["time"] == m.time && r["why"] == m.label.as_str()),
                "{}: {m:?}",
                path.display()
            );
            marked += 1;
        }
        assert_eq!(rows.last().unwrap()["time"], outcome.totals.end_time);
        let mut stops = crate::engine::Stops::new(&scenario);
        for r in rows {
            let t = r["time"].as_u64().unwrap();
            let at = stops.at(t);
            for state in State::ALL {
                let n = at.messages.iter().filter(|m| m.state == state).count() as u64;
                if matches!(state, State::Dropped | State::Skipped)
                    && r.get(state.as_str()).is_none()
                {
                    // A column only when the run had some.
                    assert_eq!(n, 0);
                    continue;
                }
                assert_eq!(
                    r[state.as_str()],
                    n,
                    "{} {} at {t}",
                    path.display(),
                    state.as_str()
                );
            }
            rows_checked += 1;
        }
    }
    assert!(rows_checked > 50, "{rows_checked}");
    assert!(marked >= 10, "{marked}");
}

#[test]
fn the_envelope_is_the_latest_quarantine() {
    // poison, redriven with a new identity and not repaired, returns to
    // quarantine at 50s in cycle 2.
    let text = std::fs::read_to_string("scenarios/04-new-identity-duplicates.toml").unwrap();
    let (scenario, _) = crate::scenario::load_str("s.toml", &text).unwrap();
    let mut scenario = scenario;
    scenario.operators[0].repair = false;
    let outcome = crate::engine::run(&scenario, Recorder::All).unwrap();
    let poison = scenario.find_message("poison").unwrap() as usize;
    let envelope = &snapshot(&scenario, &outcome)[poison]["envelope"];
    assert_eq!(envelope["queue"], scenario.delivery.queue);
    assert_eq!(envelope["quarantined_at"], 50_000);
    assert_eq!(envelope["cycle"], 2);
    assert_eq!(envelope["cycle_receives"], 2);
    assert_eq!(envelope["total_receives"], 4);
    assert_eq!(envelope["key"], "poison~r1");
    assert_eq!(envelope["class"], "permanent");
    assert_eq!(envelope["first_delivery"], 0);
    let healthy = scenario.find_message("healthy").unwrap() as usize;
    assert_eq!(
        snapshot(&scenario, &outcome)[healthy]["envelope"],
        Json::Null
    );
}

/// Under rabbitmq-quorum the envelope also says what the broker records
/// on the dead letter: `x-death` with the broker's reason (a reject or
/// the delivery limit, not the handler's words), the time in whole
/// seconds, and a count that is exact once the cycles' history is known.
#[test]
fn under_rabbitmq_quorum_the_envelope_says_what_the_broker_records() {
    let file = |version: &str| {
        format!(
            "[delivery]\nqueue = \"orders\"\nprofile = \"rabbitmq-quorum\"\nmax_receives = 1\n\
             permanent = \"quarantine\"\n{version}\
             [[message]]\nid = \"poison\"\nat = \"1500ms\"\n\
             faults = [{{ fail = {{ until = \"repair\" }}, reason = \"timeout\" }}]\n\
             [[message]]\nid = \"bad\"\nfaults = [{{ fail = {{ first = 1 }}, class = \"permanent\", reason = \"schema\" }}]\n\
             [[message]]\nid = \"ok\"\n\
             [[operator]]\nwait = \"2s\"\naction = \"redrive_all\"\n"
        )
    };
    let broker = |version: &str, id: &str| {
        let (scenario, _) = crate::scenario::load_str("s.toml", &file(version)).unwrap();
        let outcome = crate::engine::run(&scenario, Recorder::Off).unwrap();
        let m = scenario.find_message(id).unwrap() as usize;
        snapshot(&scenario, &outcome)[m]["envelope"]["broker"].clone()
    };
    // The poison message: two deliveries (a limit of 1), dead-lettered at
    // 1.5 s, redriven at 3.5 s, dead-lettered again at 3.5 s.
    let poison = broker("", "poison");
    assert_eq!(
        poison,
        serde_json::json!({
            "x-death": [{ "queue": "orders", "reason": "delivery_limit", "count": 1, "time": 3_000 }],
            "x-first-death-queue": "orders",
            "x-first-death-reason": "delivery_limit",
        })
    );
    // Before 3.13 a redriver copying the headers would add the two
    // dead-letterings up: the model does not say how many.
    let old = broker("broker_version = \"3.10\"\n", "poison");
    assert_eq!(old["x-death"][0]["count"], Json::Null);
    assert_eq!(old["x-first-death-reason"], Json::Null);
    // `bad` is rejected at its first delivery (then redriven and acked:
    // no envelope); here it is not redriven.
    let (scenario, _) = crate::scenario::load_str(
        "s.toml",
        &file("").replace("action = \"redrive_all\"", "action = \"hold\""),
    )
    .unwrap();
    let outcome = crate::engine::run(&scenario, Recorder::Off).unwrap();
    let bad = scenario.find_message("bad").unwrap() as usize;
    let envelope = &snapshot(&scenario, &outcome)[bad]["envelope"];
    assert_eq!(envelope["reason"], "schema", "the handler's reason");
    assert_eq!(envelope["broker"]["x-death"][0]["reason"], "rejected");
    assert_eq!(envelope["broker"]["x-death"][0]["count"], 1);
    assert_eq!(envelope["broker"]["x-death"][0]["time"], 0);
    // Under another profile there is no broker record.
    let (scenario, _) = crate::scenario::load_str(
        "s.toml",
        &file("")
            .replace(
                "profile = \"rabbitmq-quorum\"\n",
                "retry_interval = \"1s\"\n",
            )
            .replace("action = \"redrive_all\"", "action = \"hold\""),
    )
    .unwrap();
    let outcome = crate::engine::run(&scenario, Recorder::Off).unwrap();
    let envelope = &snapshot(&scenario, &outcome)[bad]["envelope"];
    assert!(
        envelope.is_object() && envelope.get("broker").is_none(),
        "{envelope}"
    );
}
