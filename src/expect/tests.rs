//! Judging expectations against a run, and what a failure says.

use super::*;
use crate::diagnostic::render;
use crate::engine::{Recorder, run};
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
    let outcome = run(&scenario, Recorder::Off).unwrap();
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
fn event_expectations_are_judged_without_keeping_the_transcript() {
    // A crash loop of 100,000 deliveries: the expectation is judged from
    // counts kept while the run goes, with nothing recorded.
    let text = "[delivery]\nmax_receives = 100000\nretry_interval = \"1s\"\n\
                [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
                [[expect.event]]\nkind = \"failed\"\nmessage = \"p\"\nat = \"99999s\"\n\
                [[expect.event]]\nkind = \"acked\"\nnever = true\n";
    let (scenario, _) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    assert!(outcome.transitions.is_empty());
    let verdicts = judge(&scenario, &outcome);
    assert!(verdicts.iter().all(|v| v.passed), "{verdicts:?}");
    assert_eq!(outcome.events_seen[&0].count, 100_000);
    assert_eq!(
        outcome.events_seen[&0].times.len(),
        crate::engine::EVENT_TIMES_KEPT
    );
    assert_eq!(outcome.events_seen[&1].count, 0);
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
        let outcome = run(&scenario, Recorder::Off).unwrap();
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

#[test]
fn a_large_run_records_just_the_messages_its_failures_name() {
    let text = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"probe\"\n[[message]]\nid = \"other\"\n\
         [[traffic]]\ncount = 10000\nover = \"1h\"\n\
         [expect.message.probe]\nstate = \"quarantined\"\n\
         [[expect.event]]\nkind = \"failed\"\nmessage = \"other\"\n\
         [[expect.event]]\nkind = \"failed\"\n";
    let (scenario, source) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    let verdicts = judge(&scenario, &outcome);
    assert!(verdicts.iter().all(|v| !v.passed));
    let failed: Vec<&Verdict> = verdicts.iter().collect();
    let probe = scenario.find_message("probe").unwrap();
    let other = scenario.find_message("other").unwrap();
    let wanted = recorder_for_failures(&scenario, &outcome, &failed);
    assert_eq!(wanted, Recorder::Only([probe, other].into()));
    // The explanation shows the message's own transitions.
    let rerun = run(&scenario, wanted).unwrap();
    let text = render(&failure(&source, &scenario, &rerun, &verdicts[0]), false);
    assert!(text.contains("Its transitions"), "{text}");
    assert!(text.contains("delivered"), "{text}");
    // A small run records everything.
    let (small, _) = load_str("t.toml", &std::fs::read_to_string(FOUR).unwrap()).unwrap();
    assert_eq!(recorder_for_failures(&small, &outcome, &[]), Recorder::All);
}

/// A large log run whose sink shows duplicates records, on the rerun,
/// just the example intents' messages: the explanation gives each one's
/// first delivery beside the restart that processed it again.
#[test]
fn a_large_log_run_explains_a_duplicate_with_its_first_delivery() {
    let text = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"1m\"\n\
         [[restart]]\nat = \"30m\"\nresume = \"stale\"\ncheckpoint_age = \"5m\"\n\
         [[sink]]\nname = \"rows\"\nkind = \"increment\"\n\
         [[traffic]]\ncount = 12000\nover = \"1h\"\nid_prefix = \"r\"\n\
         [expect.sink.rows]\nvisible_duplicates = 0\n";
    let (scenario, source) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    let verdicts = judge(&scenario, &outcome);
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed).collect();
    assert_eq!(failed.len(), 1);
    let wanted = recorder_for_failures(&scenario, &outcome, &failed);
    let Recorder::Only(named) = &wanted else {
        panic!("{wanted:?}")
    };
    assert_eq!(named.len(), 5);
    let rerun = run(&scenario, wanted.clone()).unwrap();
    let text = render(&failure(&source, &scenario, &rerun, failed[0]), false);
    // r_j arrives at (j-1) x 300ms and is handled at once: the checkpoint
    // of 25m (5 minutes before the restart) holds position 5001 (r5001
    // arrived at 25m itself), so r5002, at offset 5001, is the first
    // record processed again.
    assert!(
        text.contains("r5002 (arrived 25m300ms, first delivered 25m300ms): 2 writes"),
        "{text}"
    );
    assert!(
        text.contains("from the checkpoint of 25m at position 5001"),
        "{text}"
    );
}

#[test]
fn an_event_explanation_lists_the_transitions_of_its_kind() {
    let (scenario, _, verdicts, source) =
        judged("[[expect.event]]\nkind = \"redriven\"\nnever = true\n");
    assert!(!verdicts[0].passed);
    let recorded = run(&scenario, Recorder::All).unwrap();
    let text = render(&failure(&source, &scenario, &recorded, &verdicts[0]), false);
    assert!(text.contains("redriven transitions in this run:"), "{text}");
    let listed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("redriven transitions in this run:"))
        .skip(1)
        .filter(|l| l.contains(" 40s "))
        .collect();
    assert_eq!(listed.len(), 3, "{text}");
    assert!(!text.contains("delivered"), "{text}");
}

#[test]
fn explanations_show_at_most_24_lines_and_count_the_rest() {
    let explained = |receives: u32| {
        let text = format!(
            "[delivery]\nmax_receives = {receives}\nretry_interval = \"1s\"\n\
             [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
             [[expect.event]]\nkind = \"delivered\"\nat = \"1h\"\n"
        );
        let (scenario, source) = load_str("t.toml", &text).unwrap();
        let outcome = run(&scenario, Recorder::All).unwrap();
        let verdict = judge(&scenario, &outcome).remove(0);
        render(&failure(&source, &scenario, &outcome, &verdict), false)
    };
    let full = explained(24);
    assert!(!full.contains("... and"), "{full}");
    assert!(full.contains(" 23s "), "{full}");
    let cut = explained(25);
    assert!(cut.contains("... and 1 more"), "{cut}");
    assert!(!cut.contains(" 24s "), "{cut}");
}

/// A run too large to keep its ledger: 10,000 generated messages that never
/// succeed, and one that does.
fn large_without_ledger(expect: &str) -> String {
    let text = format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"probe\"\n\
         [[traffic]]\ncount = 10000\nover = \"1h\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
         {expect}"
    );
    let (scenario, source) = load_str("t.toml", &text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    assert!(outcome.ledger.is_empty());
    let verdict = judge(&scenario, &outcome).remove(0);
    assert!(!verdict.passed);
    render(&failure(&source, &scenario, &outcome, &verdict), false)
}

#[test]
fn without_a_ledger_effects_are_explained_by_the_messages_that_have_them() {
    let text = large_without_ledger("[expect]\neffects = 2\n");
    assert!(text.contains("1 effect committed; by message:"), "{text}");
    assert!(text.contains("probe            1 effect\n"), "{text}");
    assert!(!text.contains("msg-1 "), "{text}");
}

/// Every measure's explanation, for scenarios where each has something to
/// say: a failing expectation (the actual value plus one) on every measure.
#[test]
fn every_measure_explains_itself() {
    let mut all = String::new();
    for file in [
        "scenarios/04-new-identity-duplicates.toml",
        "scenarios/07-quarantine-expiry.toml",
        "scenarios/15-purge.toml",
        "scenarios/03-redrive-without-repair.toml",
        "scenarios/12-full-jitter-backoff.toml",
    ] {
        let text = std::fs::read_to_string(file).unwrap();
        let (mut scenario, source) = load_str(file, &text).unwrap();
        // Expecting every measure, the latencies included, then saying
        // each is one more than it is.
        scenario.expectations = Total::ALL
            .iter()
            .map(|&total| Expectation {
                target: Target::Total(total),
                check: Check::Equals(Value::Count(0)),
                span: 0..1,
                description: None,
            })
            .collect();
        let outcome = run(&scenario, Recorder::All).unwrap();
        scenario.expectations = Total::ALL
            .iter()
            .map(|&total| {
                // A time with no value ("never") is wrong as 0s.
                let n = outcome.totals.number(total);
                let wrong = if n == crate::model::NO_TIME { 0 } else { n + 1 };
                Expectation {
                    target: Target::Total(total),
                    check: Check::Equals(match total.unit() {
                        Unit::Count => Value::Count(wrong),
                        Unit::Time | Unit::MaybeTime => Value::Time(wrong),
                        Unit::Stop => Value::Text("max_events".into()),
                    }),
                    span: 0..1,
                    description: None,
                }
            })
            .collect();
        for verdict in judge(&scenario, &outcome) {
            assert!(!verdict.passed);
            let problem = failure(&source, &scenario, &outcome, &verdict);
            all.push_str(&format!(
                "== {file}: {}\n{}\n",
                problem.message,
                problem.help.as_deref().unwrap_or("")
            ));
        }
    }
    insta::assert_snapshot!("every_measure", all);
}

#[test]
fn duplicated_effects_name_only_the_messages_that_committed() {
    let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nkey = \"k\"\n\
         [[message]]\nid = \"b\"\nkey = \"k\"\n\
         [[message]]\nid = \"c\"\nkey = \"k\"\nfaults = [{ fail = { first = 1 } }]\n\
         [expect]\nduplicated_effects = 0\n";
    let (scenario, source) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::All).unwrap();
    let verdict = judge(&scenario, &outcome).remove(0);
    let text = render(&failure(&source, &scenario, &outcome, &verdict), false);
    assert!(
        text.contains("intent k         2 effects, 1 duplicated (messages a, b)"),
        "{text}"
    );
}

#[test]
fn a_messages_transitions_are_shown_once_however_many_of_its_expectations_fail() {
    let (scenario, _, verdicts, source) = judged(
        "[expect.message.poison]\nstate = \"quarantined\"\ntotal_receives = 1\neffects = 5\n",
    );
    let outcome = run(&scenario, Recorder::All).unwrap();
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed).collect();
    assert_eq!(failed.len(), 3);
    let texts: Vec<String> = failures(&source, &scenario, &outcome, &failed)
        .iter()
        .map(|p| render(p, false))
        .collect();
    let shown = |t: &str| t.contains("Its transitions (and the operator's):");
    assert!(shown(&texts[0]), "{}", texts[0]);
    // The expectations below name the line of the first ("state", line 2
    // of the [expect] text appended after the scenario).
    let first_line = source.text[..scenario.expectations[0].span.start]
        .matches('\n')
        .count()
        + 1;
    for t in &texts[1..] {
        assert!(!shown(t), "{t}");
        assert!(
            t.contains(&format!(
                "Its transitions are shown under the expectation on line {first_line}."
            )),
            "{t}"
        );
        // Each keeps its own one-line summary of the message.
        assert!(t.contains("message \"poison\" ended acked"), "{t}");
    }
    // One failure alone still shows them.
    assert!(shown(&render(
        &failure(&source, &scenario, &outcome, failed[1]),
        false
    )));
}

#[test]
fn drain_time_names_the_last_delivery_and_max_dlq_depth_its_first_peak() {
    let (scenario, _, verdicts, source) =
        judged("[expect]\ndrain_time = \"1s\"\nmax_dlq_depth = 9\n");
    let outcome = run(&scenario, Recorder::All).unwrap();
    let text = |i: usize| render(&failure(&source, &scenario, &outcome, &verdicts[i]), false);
    let drain = text(0);
    let last = outcome
        .transitions
        .iter()
        .rfind(|t| {
            t.time == outcome.drains[0] && t.detail.kind() == crate::model::EventKind::Delivered
        })
        .and_then(|t| t.message)
        .unwrap();
    assert!(
        drain.contains(&format!(
            "source cycle drained at {} (last delivery: {})",
            crate::duration::format(outcome.drains[0]),
            scenario.message_id(last)
        )),
        "{drain}"
    );
    // The help wraps at the rendering's width: compare words.
    let peak = text(1).split_whitespace().collect::<Vec<_>>().join(" ");
    let first = outcome
        .transitions
        .iter()
        .find(|t| {
            matches!(t.detail, crate::engine::Detail::Quarantined { depth, .. } if depth == outcome.totals.max_dlq_depth)
        })
        .unwrap();
    assert!(
        peak.contains(&format!(
            "maximum DLQ depth {} (first reached at {}, when {} entered)",
            outcome.totals.max_dlq_depth,
            crate::duration::format(first.time),
            scenario.message_id(first.message.unwrap())
        )),
        "{peak}"
    );
}

#[test]
fn past_24_messages_an_explanation_groups_them_by_cause() {
    let explained = |timeouts: u32, schema: u32| {
        let text = format!(
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
             [[traffic]]\ncount = {timeouts}\nover = \"10s\"\nid_prefix = \"order-\"\n\
             faults = [{{ fail = {{ until = \"repair\" }}, reason = \"timeout\" }}]\n\
             [[traffic]]\ncount = {schema}\nover = \"10s\"\nid_prefix = \"bad-\"\n\
             faults = [{{ fail = {{ until = \"repair\" }}, reason = \"schema\", class = \"permanent\" }}]\n\
             [expect]\nquarantined = 0\n"
        );
        let (scenario, source) = load_str("t.toml", &text).unwrap();
        let outcome = run(&scenario, Recorder::Off).unwrap();
        let verdict = judge(&scenario, &outcome).remove(0);
        let text = render(&failure(&source, &scenario, &outcome, &verdict), false);
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    // 24 fit: one line each.
    let each = explained(20, 4);
    assert!(each.contains("order-20 last failure: timeout"), "{each}");
    assert!(each.contains("bad-4 last failure: schema"), "{each}");
    assert!(!each.contains("messages: last failure"), "{each}");
    // 25 do not: one line per cause, with its count, first and last.
    let grouped = explained(5000, 100);
    assert!(
        grouped.contains(
            "5000 messages: last failure: timeout (first \"order-1\", last \"order-5000\") \
             100 messages: last failure: schema (first \"bad-1\", last \"bad-100\")"
        ),
        "{grouped}"
    );
    assert!(!grouped.contains("... and"), "{grouped}");
}

#[test]
fn quarantined_at_is_still_read_as_last_quarantined_at() {
    let (_, _, new_name, _) = judged("[expect.message.poison]\nlast_quarantined_at = \"10s\"\n");
    let (scenario, _, old_name, _) = judged("[expect.message.poison]\nquarantined_at = \"10s\"\n");
    assert_eq!(new_name, old_name);
    assert_eq!(new_name[0].actual, Value::Time(10_000));
    assert_eq!(
        describe(&scenario, &scenario.expectations[0]),
        "message \"poison\" last_quarantined_at = 10s"
    );
}

#[test]
fn an_event_of_a_large_run_is_not_said_to_be_missing_from_it() {
    // 10,001 messages: transitions are not kept, and the explanation says
    // so instead of listing "(none)".
    let text = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
                [[traffic]]\ncount = 10001\nover = \"1h\"\n\
                [[expect.event]]\nkind = \"acked\"\nnever = true\n";
    let (scenario, source) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    let verdicts = judge(&scenario, &outcome);
    assert!(!verdicts[0].passed);
    let failed: Vec<&Verdict> = verdicts.iter().collect();
    assert_eq!(
        recorder_for_failures(&scenario, &outcome, &failed),
        Recorder::Off
    );
    let shown = render(&failure(&source, &scenario, &outcome, &verdicts[0]), false);
    assert!(shown.contains("and 9993 more"), "{shown}");
    assert!(!shown.contains("(none)"), "{shown}");
    assert!(
        shown.contains("acked transitions are not kept for runs of more than 10000 messages (this one has 10001)"),
        "{shown}"
    );
}

#[test]
fn a_capped_list_counts_the_messages_left_out_not_its_lines() {
    // 5,000 messages quarantined at 5,000 different instants: 5,000
    // causes, of which the explanation keeps 1,000 and shows 23.
    let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                [[traffic]]\ncount = 5000\nover = \"5000s\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
                [expect]\nquarantine_entries = 0\n";
    let (scenario, source) = load_str("t.toml", text).unwrap();
    let outcome = run(&scenario, Recorder::Off).unwrap();
    let verdicts = judge(&scenario, &outcome);
    let shown = render(&failure(&source, &scenario, &outcome, &verdicts[0]), false);
    assert!(
        shown.contains("... and 4977 more messages (5000 in all)"),
        "{shown}"
    );
    assert!(!shown.contains("977 more\n"), "{shown}");
}

/// The explanations of section 24, over the bundled two-phase and outbox
/// files and a small untracked saga: a lock wait naming its holder and
/// the coordinator's crash and recovery, a dead-lettered row, a sink's
/// lost replies, an over-compensation naming the lost compensation and
/// its retry, a false notice naming the sink that failed after the send,
/// a missing write naming the call that failed and the strategy.
#[test]
fn a_write_to_several_sinks_explains_its_calls() {
    let saga = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
        [write]\nstrategy = \"saga\"\nidempotent_compensation = false\n\
        [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\n\
        [[sink]]\nname = \"metrics\"\nkind = \"increment\"\n\
        faults = [{ lose_reply = { first = 1 }, compensation = true }]\n\
        [[sink]]\nname = \"olap\"\nkind = \"upsert\"\nlatency = \"5ms\"\n\
        faults = [{ fail = { intents = [\"p2\"] }, reason = \"constraint violation\", class = \"permanent\" }]\n\
        [[message]]\nid = \"p1\"\n[[message]]\nid = \"p2\"\nat = \"1s\"\n\
        [expect]\nlock_held = \"0s\"\nover_compensations = 0\nfalse_notices = 0\n\
        [expect.sink.metrics]\nvalue = 1\n";
    // A direct write that OLAP rejects never reaches the lake after it.
    let direct = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
        [[sink]]\nname = \"metrics\"\nkind = \"increment\"\n\
        [[sink]]\nname = \"olap\"\nkind = \"upsert\"\n\
        faults = [{ fail = { intents = [\"p2\"] }, reason = \"constraint violation\", class = \"permanent\" }]\n\
        [[sink]]\nname = \"lake\"\nkind = \"upsert\"\n\
        [[message]]\nid = \"p1\"\n[[message]]\nid = \"p2\"\nat = \"1s\"\n\
        [expect.sink.metrics]\nmissing = 1\n[expect.sink.lake]\nmissing = 0\n";
    let mut all = String::new();
    let files = [
        (
            "scenarios/49-two-phase-coordinator-crash-holds-locks.toml".to_string(),
            None,
        ),
        (
            "scenarios/50-outbox-poisoned-row-and-lost-reply.toml".to_string(),
            None,
        ),
        ("saga.toml".to_string(), Some(saga.to_string())),
        ("direct.toml".to_string(), Some(direct.to_string())),
    ];
    for (file, text) in files {
        let text = text.unwrap_or_else(|| std::fs::read_to_string(&file).unwrap());
        // The bundled files pass: each is asked for a figure one off.
        let text = text
            .replace("max_in_doubt = 2", "max_in_doubt = 3")
            .replace("outbox_dead_letters = 1", "outbox_dead_letters = 0")
            .replace("value = 20\n", "value = 10\n");
        let (scenario, source) = load_str(&file, &text).unwrap();
        let outcome = run(&scenario, Recorder::Off).unwrap();
        for verdict in judge(&scenario, &outcome).iter().filter(|v| !v.passed) {
            let problem = failure(&source, &scenario, &outcome, verdict);
            all.push_str(&format!(
                "== {file}: {}\n{}\n",
                problem.message,
                problem.help.as_deref().unwrap_or("")
            ));
        }
    }
    insta::assert_snapshot!("write_to_several_sinks", all);
}

/// A failed expectation on a checkpoint measure lists the failed
/// checkpoints; one on a producer measure the messages and blocks whose
/// appends lost their acknowledgement.
#[test]
fn checkpoint_and_producer_measures_explain_themselves() {
    let explain = |text: &str| {
        let (scenario, source) = load_str("t.toml", text).unwrap();
        let outcome = run(&scenario, Recorder::All).unwrap();
        let verdict = judge(&scenario, &outcome).remove(0);
        assert!(!verdict.passed);
        render(&failure(&source, &scenario, &outcome, &verdict), false)
    };
    let text = explain(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"1m\"\n\
         [[traffic]]\ncount = 30\nover = \"300s\"\n\
         [[checkpoint_failure]]\nfrom = \"2m\"\nduration = \"2m\"\n\
         [[checkpoint_failure]]\nnumbers = [1]\nstatus = \"aborted\"\n\
         [expect]\ncheckpoints_failed = 2\n",
    );
    assert!(
        text.contains("1 checkpoint completed (the last at 4m), 3 failed"),
        "{text}"
    );
    assert!(text.contains("checkpoint 1 (at 1m): aborted"), "{text}");
    assert!(
        text.contains("checkpoints 2 to 3 (at 2m to 3m): failed"),
        "{text}"
    );
    let text = explain(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
         [log]\ncheckpoint_interval = \"1m\"\n[producer]\nidempotence = false\n\
         [[message]]\nid = \"o1\"\nfaults = [{ lose_append_ack = { first = 2 } }]\n\
         [[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"t-\"\n\
         faults = [{ lose_append_ack = { first = 1 } }]\n\
         [expect]\nproducer_retries = 4\n",
    );
    assert!(
        text.contains("5 appends retried, 5 duplicate records appended"),
        "{text}"
    );
    assert!(
        text.contains("o1               2 append acknowledgements lost: 2 retries"),
        "{text}"
    );
    assert!(
        text.contains("traffic block 1 (t-*, 3 messages): 1 retry each"),
        "{text}"
    );
}
