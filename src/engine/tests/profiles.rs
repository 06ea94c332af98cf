//! docs/model.md sections 19 (sinks), 20 (canary redrive), 21 (broker
//! profiles) and decisions 22.4-22.6 and 22.12-22.15.

use super::*;

fn kinds(outcome: &Outcome, kind: EventKind) -> Vec<(Millis, Option<MessageIndex>)> {
    outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == kind)
        .map(|t| (t.time, t.message))
        .collect()
}

fn sink(outcome: &Outcome, k: u32) -> [i64; 2] {
    [
        outcome.sink_value(k, SinkField::Value),
        outcome.sink_value(k, SinkField::VisibleDuplicates),
    ]
}

const SINKS: &str = "[[sink]]\nname = \"ledger\"\nkind = \"increment\"\n\
                     [[sink]]\nname = \"rows\"\nkind = \"upsert\"\n\
                     [[sink]]\nname = \"sms\"\nkind = \"irreversible\"\n";

#[test]
fn s19_every_effect_reaches_every_sink_and_an_upsert_hides_a_same_key_duplicate() {
    let (_, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n{SINKS}\
         [[message]]\nid = \"a\"\nfaults = [{{ lose_ack = {{ first = 1 }} }}]\n\
         [[message]]\nid = \"b\"\n"
    ));
    // a commits twice under its one key, b once.
    assert_eq!(outcome.totals.effects, 3);
    assert_eq!(sink(&outcome, 0), [3, 1]);
    assert_eq!(sink(&outcome, 1), [2, 0]);
    assert_eq!(sink(&outcome, 2), [3, 1]);
}

#[test]
fn s19_a_new_identity_on_redrive_defeats_an_upsert() {
    let (_, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n{SINKS}\
         [[operator]]\nrepair = true\naction = \"redrive_all\"\nidentity = \"new\"\n\
         [[message]]\nid = \"p\"\nfaults = [{{ lose_ack = {{ until = \"repair\" }} }}]\n"
    ));
    // Rows p and p~r1, both of intent p: one visible duplicate.
    assert_eq!(outcome.totals.effects, 2);
    assert_eq!(sink(&outcome, 1), [2, 1]);
    assert_eq!(sink(&outcome, 2), [2, 1]);
}

#[test]
fn s19_each_new_identity_is_a_row_of_its_own() {
    // Two redrives under new keys: rows p, p~r1 and p~r2, all of
    // intent p: two visible duplicates.
    let (_, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n{SINKS}\
         [[operator]]\naction = \"redrive_all\"\nidentity = \"new\"\n\
         [[operator]]\nrepair = true\naction = \"redrive_all\"\nidentity = \"new\"\n\
         [[message]]\nid = \"p\"\nfaults = [{{ lose_ack = {{ until = \"repair\" }} }}]\n"
    ));
    assert_eq!(outcome.totals.effects, 3);
    assert_eq!(sink(&outcome, 0), [3, 2]);
    assert_eq!(sink(&outcome, 1), [3, 2]);
}

#[test]
fn s19_a_run_that_records_nothing_counts_the_same_rows() {
    // A quiet run takes the engine's shortest path where it can; an
    // upsert sink's rows must come out as in a recorded run.
    for text in [
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n{SINKS}\
             [[message]]\nid = \"a\"\nfaults = [{{ lose_ack = {{ first = 1 }} }}]\n\
             [[message]]\nid = \"b\"\n[[message]]\nid = \"c\"\nkey = \"b\"\n"
        ),
        format!(
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n{SINKS}\
             [[traffic]]\ncount = 50\nover = \"10s\"\nid_prefix = \"g\"\n\
             faults = [{{ lose_ack = {{ first = 1 }} }}]\n"
        ),
    ] {
        let (scenario, recorded) = sim(&text);
        let quiet = run(&scenario, Recorder::Off).unwrap();
        for k in 0..3 {
            assert_eq!(sink(&quiet, k), sink(&recorded, k), "sink {k} of {text}");
        }
        assert!(
            sink(&recorded, 1)[0] < recorded.totals.effects as i64,
            "{text}"
        );
    }
}

#[test]
fn d22_12_an_upsert_row_belongs_to_the_intent_of_its_first_write() {
    // b shares a's key: one row, first written by a's intent; b's
    // effect under the same key writes no row.
    let (_, outcome) = sim(&format!(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n{SINKS}\
         [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\nkey = \"a\"\nat = \"1s\"\n"
    ));
    assert_eq!(outcome.totals.effects, 2);
    assert_eq!(sink(&outcome, 1), [1, 0]);
}

#[test]
fn s19_without_sinks_the_one_sink_is_the_counter() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ lose_ack = { first = 1 } }]\n\
         [expect.sink.counter]\nvalue = 2\nvisible_duplicates = 1\n");
    assert_eq!(scenario.guarantees.sinks, default_sinks());
    assert_eq!(sink(&outcome, 0), [2, 1]);
    let verdicts = crate::expect::judge(&scenario, &outcome);
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts.iter().all(|v| v.passed));
}

const FOUR_POISON: &str = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
    [[message]]\nid = \"m1\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
    [[message]]\nid = \"m2\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
    [[message]]\nid = \"m3\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
    [[message]]\nid = \"m4\"\nfaults = [{ fail = { until = \"repair\" } }]\n";

#[test]
fn s20_a_canary_that_passes_redrives_the_rest_at_that_instant() {
    let (scenario, outcome) = sim(&format!(
        "{FOUR_POISON}[[operator]]\nwait = \"1m\"\nrepair = true\naction = \"redrive_all\"\ncanary = 2\n"
    ));
    let id = |m: Option<MessageIndex>| scenario.message_id(m.unwrap()).into_owned();
    let redriven: Vec<_> = kinds(&outcome, EventKind::Redriven)
        .into_iter()
        .map(|(t, m)| (t, id(m)))
        .collect();
    assert_eq!(
        redriven,
        [
            (60_000, "m1".into()),
            (60_000, "m2".into()),
            (60_000, "m3".into()),
            (60_000, "m4".into())
        ]
    );
    // The rest are redriven after the second canary's ack.
    let position = |kind: EventKind, id: &str| {
        let m = scenario.find_message(id);
        outcome
            .transitions
            .iter()
            .position(|t| t.detail.kind() == kind && (id.is_empty() || t.message == m))
            .unwrap()
    };
    let passed = position(EventKind::CanaryPassed, "");
    assert!(position(EventKind::Acked, "m2") < passed);
    assert!(passed < position(EventKind::Redriven, "m3"));
    assert!(matches!(
        outcome.transitions[passed].detail,
        Detail::CanaryPassed { rest: 2 }
    ));
    assert_eq!(outcome.totals.acked, 4);
    assert_eq!(outcome.drains, [0, 60_000]);
}

#[test]
fn s20_a_failed_canary_leaves_the_rest_in_quarantine() {
    let (scenario, outcome) = sim(&format!(
        "{FOUR_POISON}[[operator]]\nwait = \"1m\"\naction = \"redrive_all\"\ncanary = 2\n"
    ));
    let failed: Vec<_> = outcome
        .transitions
        .iter()
        .filter_map(|t| match t.detail {
            Detail::CanaryFailed { acked, canaries } => Some((t.time, acked, canaries)),
            _ => None,
        })
        .collect();
    assert_eq!(failed, [(60_000, 0, 2)]);
    assert_eq!(kinds(&outcome, EventKind::Redriven).len(), 2);
    let m3 = msg(&scenario, &outcome, "m3");
    assert_eq!((m3.state, m3.cycle), (State::Quarantined, 1));
    assert_eq!(outcome.totals.quarantined, 4);
    // Quarantine order: the rest kept their places, the canaries came back.
    let order: Vec<Millis> = ["m1", "m2", "m3", "m4"]
        .iter()
        .map(|id| msg(&scenario, &outcome, id).last_quarantined_at().unwrap())
        .collect();
    assert_eq!(order, [60_000, 60_000, 0, 0]);
}

#[test]
fn d22_4_and_13_a_canary_larger_than_the_quarantine_and_an_empty_one() {
    let (_, outcome) = sim(&format!(
        "{FOUR_POISON}[[operator]]\nrepair = true\naction = \"redrive_all\"\ncanary = 10\n\
         [[operator]]\nwait = \"1m\"\naction = \"redrive_all\"\ncanary = 1\n"
    ));
    let passed: Vec<_> = outcome
        .transitions
        .iter()
        .filter_map(|t| match t.detail {
            Detail::CanaryPassed { rest } => Some((t.time, rest)),
            _ => None,
        })
        .collect();
    // All four are canaries and are acked; the second step finds nothing
    // retained and passes at its inspection.
    assert_eq!(passed, [(0, 0), (60_000, 0)]);
    assert_eq!(outcome.totals.acked, 4);
}

#[test]
fn s21_rabbitmq_quorum_allows_the_delivery_limit_plus_one_requeued_at_once() {
    let file = |delivery: &str| {
        format!(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\n{delivery}\
             [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n"
        )
    };
    let (scenario, outcome) = sim(&file("max_receives = 3\n"));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 0, 0, 0]);
    assert_eq!(msg(&scenario, &outcome, "p").state, State::Quarantined);
    let (scenario, outcome) = sim(&file(""));
    assert_eq!(deliveries_of(&scenario, &outcome, "p").len(), 21);
    let (scenario, outcome) = sim(&file("max_receives = 2\nretry_interval = \"1s\"\n"));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 1_000, 2_000]);
    // "unlimited" stays unlimited.
    let (scenario, outcome) = sim(
        "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = \"unlimited\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { first = 30 } }]\n",
    );
    assert_eq!(msg(&scenario, &outcome, "p").total_receives, 31);
    assert_eq!(outcome.totals.acked, 1);
}

#[test]
fn s21_rabbitmq_quorum_takes_a_delivery_limit_of_0_as_one_delivery() {
    // x-delivery-limit = 0 is valid in RabbitMQ: the first return exceeds
    // it. Elsewhere max_receives = 0 stays refused.
    let (scenario, outcome) = sim(
        "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 0\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { first = 1 } }]\n[[message]]\nid = \"ok\"\n",
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0]);
    assert_eq!(msg(&scenario, &outcome, "p").state, State::Quarantined);
    assert_eq!(msg(&scenario, &outcome, "ok").state, State::Acked);
    let refused = crate::scenario::load_str(
        "t.toml",
        "[delivery]\nmax_receives = 0\nretry_interval = \"1s\"\n[[message]]\nid = \"p\"\n",
    );
    assert!(refused.is_err());
}

#[test]
fn d22_15_a_requeue_runs_behind_the_events_already_at_that_instant() {
    let (scenario, outcome) = sim(
        "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 1\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n[[message]]\nid = \"b\"\n",
    );
    let order: Vec<String> = kinds(&outcome, EventKind::Delivered)
        .into_iter()
        .map(|(_, m)| scenario.message_id(m.unwrap()).into_owned())
        .collect();
    assert_eq!(order, ["a", "b", "a"]);
}

#[test]
fn d22_6_without_quarantine_an_exhausted_message_is_dropped() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
         [quarantine]\nenabled = false\n\
         [[operator]]\naction = \"redrive_all\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"b\"\nfaults = [{ fail = { first = 1 }, class = \"permanent\" }]\n\
         [[message]]\nid = \"c\"\n",
    );
    assert_eq!(msg(&scenario, &outcome, "a").state, State::Dropped);
    assert_eq!(msg(&scenario, &outcome, "b").state, State::Dropped);
    let t = outcome.totals;
    assert_eq!((t.dropped, t.quarantined, t.acked, t.pending), (2, 0, 1, 0));
    assert_eq!((t.quarantine_entries, t.max_dlq_depth), (0, 0));
    assert!(kinds(&outcome, EventKind::Redriven).is_empty());
    assert_eq!(kinds(&outcome, EventKind::Dropped).len(), 2);
}

#[test]
fn s21_sqs_retries_when_the_visibility_timeout_ends() {
    let (scenario, outcome) = sim("[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 5\n\
         [workers]\ncount = 1\nservice_time = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 2 } }]\n");
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 30_000, 60_000]);
    assert_eq!(retry_delays(&scenario, &outcome, "a"), [29_000, 29_000]);
    assert_eq!(outcome.totals.retry_delay_paid, 58_000);
}

#[test]
fn d22_14_sqs_a_failure_after_the_timeout_is_retried_at_once() {
    let (scenario, outcome) = sim(
        "[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 5\nvisibility_timeout = \"10s\"\n\
         [workers]\ncount = 1\nservice_time = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 }, takes = \"15s\" }]\n",
    );
    // Visible again at 10s but the one worker is busy until 15s: the
    // failure's retry is due at 10s, already past, so it is taken at once.
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 15_000]);
    assert_eq!(retry_delays(&scenario, &outcome, "a"), [0]);
    assert_eq!(outcome.totals.expired_receipts, 0);
}

#[test]
fn s21_sqs_a_visibility_heartbeat_keeps_a_slow_handler_invisible_until_it_stops() {
    // 30s timeout, extended every 10s while the 45s handler runs: calls at
    // 10, 20, 30 and 40s, so no second delivery at 30s; the failure is
    // received again when the last extension runs out, at 40 + 30 = 70s.
    // A crash at 45s stops the calls the same way.
    let file = |heartbeat: &str| {
        format!(
            "[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 3\n{heartbeat}\
             [workers]\ncount = 4\nservice_time = \"45s\"\n\
             [[message]]\nid = \"slow\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n\
             [[message]]\nid = \"crash\"\nfaults = [{{ crash = {{ first = 1 }}, at = \"before_effect\" }}]\n"
        )
    };
    let (scenario, outcome) = sim(&file("visibility_heartbeat = \"10s\"\n"));
    assert_eq!(deliveries_of(&scenario, &outcome, "slow"), [0, 70_000]);
    assert_eq!(deliveries_of(&scenario, &outcome, "crash"), [0, 70_000]);
    assert_eq!(outcome.totals.concurrent_deliveries, 1);
    assert_eq!(outcome.totals.expired_receipts, 0);
    // Without it, both are delivered again at 30s while still running.
    let (scenario, outcome) = sim(&file(""));
    assert_eq!(deliveries_of(&scenario, &outcome, "slow")[..2], [0, 30_000]);
    assert_eq!(outcome.totals.concurrent_deliveries, 2);
    // A handler done before its first call extends nothing: 30s.
    let (scenario, outcome) = sim(&file("visibility_heartbeat = \"10s\"\n").replace("45s", "10s"));
    assert_eq!(deliveries_of(&scenario, &outcome, "slow"), [0, 30_000]);
}

#[test]
fn s21_sqs_change_visibility_on_failure_retries_after_the_backoff() {
    let (scenario, outcome) = sim("[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 3\n\
         on_failure = \"change_visibility\"\nbackoff = { base = \"1s\", cap = \"10s\" }\n\
         [workers]\ncount = 1\nservice_time = \"500ms\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n");
    // Each failure sets the visibility to 1s, then 2s, from its end.
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 1_500, 4_000]);
    assert_eq!(msg(&scenario, &outcome, "p").state, State::Quarantined);
}

#[test]
fn s21_sqs_consumer_patterns_are_checked() {
    let refused = |delivery: &str| match crate::scenario::load_str(
        "t.toml",
        &format!("[delivery]\n{delivery}[[message]]\nid = \"p\"\n"),
    ) {
        Ok(_) => panic!("{delivery} refused"),
        Err(inv) => inv.problems[0].message.clone(),
    };
    let sqs = "profile = \"sqs-standard\"\nmax_receives = 3\n";
    assert_eq!(
        refused(&format!("{sqs}visibility_heartbeat = \"30s\"\n")),
        "`visibility_heartbeat` must be at least 1ms and below `visibility_timeout`"
    );
    assert_eq!(
        refused(&format!("{sqs}on_failure = \"change_visibility\"\n")),
        "on_failure = \"change_visibility\" needs `retry_interval` or `backoff`"
    );
    assert_eq!(
        refused(&format!("{sqs}on_failure = \"nak\"\n")),
        "`on_failure = \"nak\"` goes with profile = \"nats-jetstream\""
    );
    // Without change_visibility the retry keys stay refused (section 21.1).
    assert_eq!(
        refused(&format!("{sqs}retry_interval = \"1s\"\n")),
        "with profile = \"sqs-standard\" a failed delivery is retried when its visibility timeout ends"
    );
    assert_eq!(
        refused("max_receives = 3\nretry_interval = \"1s\"\nvisibility_heartbeat = \"1s\"\n"),
        "`visibility_heartbeat` goes with profile = \"sqs-standard\""
    );
    assert_eq!(
        refused("profile = \"nats-jetstream\"\non_failure = \"change_visibility\"\n"),
        "`on_failure = \"change_visibility\"` goes with profile = \"sqs-standard\""
    );
}

#[test]
fn s21_sqs_retention_counts_from_the_latest_enqueue() {
    let file = |profile: &str| {
        format!(
            "[delivery]\n{profile}max_receives = 3\n\
             [quarantine]\nretention = \"2d\"\n\
             [[operator]]\nwait = \"1d23h59m30s\"\naction = \"hold\"\n\
             [[message]]\nid = \"a\"\nat = \"1m\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n"
        )
    };
    // Arrives at 1m, delivered at 1m, 1m30s and 2m (30s apart in both
    // files) and quarantined at 2m; inspected at 2d1m30s: 2d30s after the
    // first arrival, 1d23h59m30s after entering quarantine.
    let (scenario, outcome) = sim(&file("profile = \"sqs-standard\"\n"));
    assert_eq!(msg(&scenario, &outcome, "a").state, State::Expired);
    let (scenario, outcome) = sim(&file("retry_interval = \"30s\"\n"));
    assert_eq!(msg(&scenario, &outcome, "a").state, State::Quarantined);
}

#[test]
fn s21_sqs_a_redrive_moves_its_rate_per_second() {
    let (scenario, outcome) = sim("[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 1\n\
         [[operator]]\nrepair = true\naction = \"redrive_all\"\nredrive_rate = 2\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"b\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[message]]\nid = \"c\"\nfaults = [{ fail = { until = \"repair\" } }]\n");
    for (id, t) in [("a", 0), ("b", 500), ("c", 1_000)] {
        assert_eq!(deliveries_of(&scenario, &outcome, id), [0, t], "{id}");
    }
}

#[test]
fn s21_sqs_expiry_takes_the_messages_enqueued_longest_ago_in_entry_order() {
    // "z" arrives at 0 and holds its group until it fails at 50s; "y"
    // (same group) arrives at 1s and fails right after it; "x" (another
    // group) arrives at 10s and fails at once. One delivery each, so entry
    // order x, z, y and enqueue order z, y, x. The source drains at 50s.
    let file = |wait: &str| {
        format!(
            "[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 1\n\
             visibility_timeout = \"2m\"\nordering = \"per_key\"\n\
             [workers]\ncount = 4\nservice_time = \"0s\"\n\
             [quarantine]\nretention = \"2m\"\n\
             [[operator]]\nwait = \"{wait}\"\naction = \"hold\"\n\
             [[message]]\nid = \"z\"\nkey = \"g\"\n\
             faults = [{{ fail = {{ first = 1 }}, takes = \"50s\" }}]\n\
             [[message]]\nid = \"y\"\nkey = \"g\"\nat = \"1s\"\n\
             faults = [{{ fail = {{ first = 1 }} }}]\n\
             [[message]]\nid = \"x\"\nkey = \"h\"\nat = \"10s\"\n\
             faults = [{{ fail = {{ first = 1 }} }}]\n"
        )
    };
    let expired = |wait: &str| {
        let (scenario, outcome) = sim(&file(wait));
        outcome
            .transitions
            .iter()
            .filter(|t| t.detail.kind() == EventKind::Expired)
            .map(|t| scenario.message_id(t.message.unwrap()).into_owned())
            .collect::<Vec<_>>()
    };
    // At 2m5s "z" and "y" are 2m past their enqueue; "x", which entered
    // first, is not.
    assert_eq!(expired("75s"), ["z", "y"]);
    // At 5m50s all three, in entry order.
    assert_eq!(expired("5m"), ["x", "z", "y"]);
}
