//! Tests of the json module.

use super::*;
use crate::engine::{Recorder, run_until, run_with_census};

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
        for r in rows {
            let t = r["time"].as_u64().unwrap();
            let at = run_until(&scenario, Recorder::Off, t).unwrap();
            for state in State::ALL {
                let n = at.messages.iter().filter(|m| m.state == state).count() as u64;
                if state == State::Dropped && r.get("dropped").is_none() {
                    // A column only when the run dropped some.
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
