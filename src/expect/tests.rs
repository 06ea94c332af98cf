//! Judging expectations against a run, and what a failure says.

use super::*;
use crate::diagnostic::render;
use crate::engine::run;
use crate::scenario::load_str;

const FOUR: &str = "scenarios/02-repair-and-redrive.toml";

/// The bundled repair-and-redrive scenario (poison is redriven at 40s)
/// with these expectations instead of its own.
fn judged(expect: &str) -> (Scenario, Outcome, Vec<Verdict>, crate::diagnostic::Source) {
    let text = std::fs::read_to_string(FOUR).unwrap();
    let text = match text.find("[expect]") {
        Some(i) => &text[..i],
        None => &text,
    };
    let (scenario, source) = load_str("t.toml", &format!("{text}\n{expect}")).unwrap();
    let outcome = run(&scenario, recorder_for(&scenario)).unwrap();
    let verdicts = judge(&scenario, &outcome);
    (scenario, outcome, verdicts, source)
}

#[test]
fn a_positive_event_expectation_fails_when_it_happens_at_another_time() {
    let (scenario, outcome, verdicts, source) =
        judged("[[expect.event]]\nkind = \"redriven\"\nmessage = \"poison\"\nat = \"41s\"\n");
    assert_eq!(verdicts.len(), 1);
    assert!(!verdicts[0].passed);
    assert_eq!(
        verdicts[0].actual,
        Value::Text("happened only at 40s".into())
    );
    let problem = failure(&source, &scenario, &outcome, &verdicts[0]);
    let text = render(&problem, false);
    assert!(
        text.contains(
            "expected event redriven of \"poison\" at 41s happens, but it happened only at 40s"
        ),
        "{text}"
    );
}

#[test]
fn a_positive_event_expectation_fails_when_it_never_happens() {
    let (_, _, verdicts, _) = judged("[[expect.event]]\nkind = \"purged\"\nmessage = \"poison\"\n");
    assert!(!verdicts[0].passed);
    assert_eq!(verdicts[0].actual, Value::Text("never happened".into()));
}

#[test]
fn event_expectations_pass_at_the_right_time_and_never_inverts() {
    let (_, _, verdicts, _) = judged(
        "[[expect.event]]\nkind = \"redriven\"\nmessage = \"poison\"\nat = \"40s\"\n\
         [[expect.event]]\nkind = \"redriven\"\n\
         [[expect.event]]\nkind = \"redriven\"\nmessage = \"poison\"\nnever = true\n\
         [[expect.event]]\nkind = \"purged\"\nnever = true\n",
    );
    let passed: Vec<bool> = verdicts.iter().map(|v| v.passed).collect();
    assert_eq!(passed, [true, true, false, true]);
}

#[test]
fn comparisons_hold_as_written() {
    let (_, outcome, verdicts, _) = judged(
        "[expect]\neffects = { at_least = 4 }\ndeliveries = { at_most = 1 }\n\
         drain_time = { between = [\"10s\", \"10s\"] }\nend_time = { equals = \"40s\" }\n",
    );
    assert_eq!(outcome.totals.drain_time, 10_000);
    let by_name: Vec<(String, bool)> = verdicts
        .iter()
        .map(|v| (v.actual.to_string(), v.passed))
        .collect();
    // In file order: effects (4 >= 4), deliveries (not <= 1), drain, end.
    assert_eq!(
        by_name,
        [
            ("4".to_string(), true),
            (outcome.totals.deliveries.to_string(), false),
            ("10s".to_string(), true),
            ("40s".to_string(), true),
        ]
    );
}

#[test]
fn never_compares_only_by_equality() {
    assert!(Check::Equals(Value::Never).holds(&Value::Never));
    assert!(!Check::AtLeast(Value::Time(0)).holds(&Value::Never));
    assert!(!Check::AtMost(Value::Time(u64::MAX)).holds(&Value::Never));
    assert!(!Check::Between(Value::Time(0), Value::Time(u64::MAX)).holds(&Value::Never));
    assert!(Check::Between(Value::Count(2), Value::Count(4)).holds(&Value::Count(4)));
    assert!(!Check::Between(Value::Count(2), Value::Count(4)).holds(&Value::Count(5)));
}

#[test]
fn the_recorder_follows_the_event_expectations() {
    let (scenario, _, _, _) = judged("[expect]\neffects = 4\n");
    assert_eq!(recorder_for(&scenario), Recorder::Off);
    let (scenario, _, _, _) = judged("[[expect.event]]\nkind = \"acked\"\nmessage = \"healthy\"\n");
    let healthy = scenario.find_message("healthy").unwrap();
    assert_eq!(recorder_for(&scenario), Recorder::Only([healthy].into()));
    let (scenario, _, _, _) = judged("[[expect.event]]\nkind = \"acked\"\n");
    assert_eq!(recorder_for(&scenario), Recorder::All);
}

#[test]
fn an_event_seen_more_than_eight_times_says_how_many_more() {
    let text = |receives: u32| {
        format!(
            "[delivery]\nmax_receives = {receives}\nretry_interval = \"1s\"\n\
             [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
             [[expect.event]]\nkind = \"delivered\"\nmessage = \"p\"\nat = \"1h\"\n"
        )
    };
    let actual = |receives: u32| {
        let (scenario, _) = load_str("t.toml", &text(receives)).unwrap();
        let outcome = run(&scenario, recorder_for(&scenario)).unwrap();
        judge(&scenario, &outcome).remove(0).actual
    };
    assert_eq!(
        actual(8),
        Value::Text("happened only at 0s, 1s, 2s, 3s, 4s, 5s, 6s, 7s".into())
    );
    assert_eq!(
        actual(9),
        Value::Text("happened only at 0s, 1s, 2s, 3s, 4s, 5s, 6s, 7s and 1 more".into())
    );
}
