//! One test per rule of the nats-jetstream profile (docs/model.md
//! section 21, decided by this project and checked against a real
//! nats-server): MaxDeliver, AckWait, the BackOff list, nak with and
//! without a delay, term, and a message given up in the stream.

use super::*;

const JS: &str = "[delivery]\nprofile = \"nats-jetstream\"\n";

const POISON: &str = "[[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" }, reason = \"bad payload\" }]\n";

#[test]
fn s21j_ack_backoff_waits_per_delivery_and_its_last_value_repeats() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 5\nack_backoff = [\"100ms\", \"200ms\", \"400ms\"]\n\
         on_failure = \"no_ack\"\n{POISON}"
    ));
    // Gaps of 100, 200, 400 and 400 ms: the n-th delivery waits the
    // n-th value, the last repeating.
    assert_eq!(
        deliveries_of(&scenario, &outcome, "p"),
        [0, 100, 300, 700, 1100]
    );
    assert_eq!(retry_delays(&scenario, &outcome, "p"), [100, 200, 400, 400]);
}

#[test]
fn s21j_a_message_that_used_max_deliver_is_given_up_when_its_next_delivery_was_due() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 5\nack_backoff = [\"100ms\", \"200ms\", \"400ms\"]\n\
         on_failure = \"no_ack\"\n{POISON}"
    ));
    // The fifth delivery started at 1.1 s and waits 400 ms: no sixth
    // delivery, the message stays in the stream (quarantine) at 1.5 s,
    // with the handler's reason, not "visibility timeout".
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [1500]
    );
    let p = msg(&scenario, &outcome, "p");
    assert_eq!((p.state, p.total_receives), (State::Quarantined, 5));
    assert_eq!(reason(&scenario, p), "bad payload");
    assert_eq!(retry_delays(&scenario, &outcome, "p").len(), 4);
    assert_eq!(outcome.totals.end_time, 1500);
}

#[test]
fn s21j_without_ack_backoff_every_delivery_waits_the_ack_wait_default_30s() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\non_failure = \"no_ack\"\n{POISON}"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 30_000, 60_000]);
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [90_000]
    );
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 2\nvisibility_timeout = \"5s\"\non_failure = \"no_ack\"\n{POISON}"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 5_000]);
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [10_000]
    );
}

#[test]
fn s21j_ack_wait_counts_from_the_delivery_start_not_its_end() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nvisibility_timeout = \"1s\"\non_failure = \"no_ack\"\n\
         [workers]\ncount = 1\nservice_time = \"300ms\"\n{POISON}"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 1000, 2000]);
    assert_eq!(retry_delays(&scenario, &outcome, "p"), [700, 700]);
}

#[test]
fn s21j_a_nak_redelivers_at_once_and_ack_backoff_does_not_apply_to_it() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nack_backoff = [\"10s\"]\n\
         [workers]\ncount = 1\nservice_time = \"50ms\"\n{POISON}"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 50, 100]);
    // With a plain nak the next delivery is due at the end: given up then.
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [150]
    );
}

#[test]
fn s21j_a_nak_with_a_delay_waits_from_the_end_and_the_last_one_gives_up_after_it() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nretry_interval = \"250ms\"\n\
         [workers]\ncount = 1\nservice_time = \"50ms\"\n{POISON}"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 300, 600]);
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [900]
    );
    assert_eq!(retry_delays(&scenario, &outcome, "p").len(), 2);
}

#[test]
fn s21j_a_lost_ack_waits_the_ack_wait_even_when_failures_nak() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 2\nack_backoff = [\"1s\"]\n\
         [[message]]\nid = \"l\"\nfaults = [{{ lose_ack = {{ until = \"repair\" }} }}]\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "l"), [0, 1000]);
    assert_eq!(
        times(&scenario, &outcome, "l", EventKind::Quarantined),
        [2000]
    );
    let l = msg(&scenario, &outcome, "l");
    assert_eq!(reason(&scenario, l), "ack lost");
    assert_eq!(outcome.totals.effects, 2);
}

#[test]
fn s21j_term_ends_delivery_at_once() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 5\npermanent = \"quarantine\"\non_failure = \"no_ack\"\n\
         [workers]\ncount = 1\nservice_time = \"20ms\"\n\
         [[message]]\nid = \"t\"\nfaults = [{{ fail = {{ until = \"repair\" }}, reason = \"bad schema\", class = \"permanent\" }}]\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "t"), [0]);
    assert_eq!(
        times(&scenario, &outcome, "t", EventKind::Quarantined),
        [20]
    );
    let text = crate::report::text::transcript(&scenario, &outcome);
    assert!(text.contains("terminated with term"), "{text}");
}

#[test]
fn s21j_max_deliver_defaults_to_unlimited() {
    let (scenario, outcome) = sim(&format!(
        "{JS}[[message]]\nid = \"a\"\nfaults = [{{ fail = {{ first = 25 }} }}]\n"
    ));
    let a = msg(&scenario, &outcome, "a");
    assert_eq!((a.state, a.total_receives), (State::Acked, 26));
}

#[test]
fn s21j_a_delivery_outliving_its_ack_wait_is_delivered_again_and_its_ack_still_counts() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nvisibility_timeout = \"1s\"\n\
         [workers]\ncount = 2\nservice_time = \"1500ms\"\n[[message]]\nid = \"s\"\n"
    ));
    // Delivered again at 1 s while the first delivery runs; JetStream
    // takes an ack per message, so the first delivery's ack at 1.5 s
    // acks it, and the second's end changes nothing.
    assert_eq!(deliveries_of(&scenario, &outcome, "s"), [0, 1000]);
    assert_eq!(times(&scenario, &outcome, "s", EventKind::Acked), [1500]);
    assert_eq!(outcome.totals.concurrent_deliveries, 2);
    assert_eq!(outcome.totals.expired_receipts, 1);
    assert_eq!(outcome.totals.effects, 2);
    let text = crate::report::text::transcript(&scenario, &outcome);
    assert!(
        text.contains("ended after an earlier delivery's answer"),
        "{text}"
    );
}

#[test]
fn s21j_a_superseded_delivery_that_naks_the_last_delivery_gives_the_message_up() {
    // Checked against nats-server 2.9: the first delivery's nak at 500 ms
    // reaches the message while the second (its last) runs, and the
    // server gives it up then, not when the second's wait ends at 600 ms.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 2\nvisibility_timeout = \"300ms\"\n\
         [[message]]\nid = \"s\"\nfaults = [{{ fail = {{ until = \"repair\" }}, takes = \"500ms\" }}]\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "s"), [0, 300]);
    assert_eq!(
        times(&scenario, &outcome, "s", EventKind::Quarantined),
        [500]
    );
    // Not the last: the nak redelivers at once, beside the running one.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 4\nvisibility_timeout = \"300ms\"\n\
         [[message]]\nid = \"s\"\nfaults = [{{ fail = {{ first = 2 }}, takes = \"500ms\" }}]\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "s"), [0, 300, 500]);
    assert_eq!(times(&scenario, &outcome, "s", EventKind::Acked), [500]);
    // Left unacknowledged (no_ack), a superseded failure reaches nothing.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 2\nvisibility_timeout = \"300ms\"\non_failure = \"no_ack\"\n\
         [[message]]\nid = \"s\"\nfaults = [{{ fail = {{ until = \"repair\" }}, takes = \"500ms\" }}]\n"
    ));
    assert_eq!(
        times(&scenario, &outcome, "s", EventKind::Quarantined),
        [600]
    );
}

#[test]
fn s21j_a_superseded_term_ends_the_message_while_a_later_delivery_runs() {
    // The first delivery fails permanently after 500 ms; the second,
    // started at 300 ms when the ack wait ended, runs until 800 ms. The
    // term at 500 ms ends the message; the second's ack changes nothing.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 5\nvisibility_timeout = \"300ms\"\npermanent = \"quarantine\"\n\
         [workers]\ncount = 2\nservice_time = \"500ms\"\n\
         [[message]]\nid = \"t\"\nfaults = [{{ fail = {{ first = 1 }}, class = \"permanent\" }}]\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "t"), [0, 300]);
    assert_eq!(
        times(&scenario, &outcome, "t", EventKind::Quarantined),
        [500]
    );
    assert!(times(&scenario, &outcome, "t", EventKind::Acked).is_empty());
    assert_eq!(outcome.totals.expired_receipts, 1);
}

#[test]
fn s21j_a_crash_is_redelivered_when_its_ack_wait_ends() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nack_backoff = [\"2s\", \"3s\"]\n\
         [[message]]\nid = \"c\"\nfaults = [{{ crash = {{ first = 2 }}, at = \"before_effect\" }}]\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "c"), [0, 2000, 5000]);
    assert_eq!(msg(&scenario, &outcome, "c").state, State::Acked);
}

#[test]
fn s21j_without_an_advisory_listener_the_message_is_dropped_at_the_same_instant() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 2\nack_backoff = [\"1s\"]\non_failure = \"no_ack\"\n\
         [quarantine]\nenabled = false\n{POISON}"
    ));
    assert_eq!(times(&scenario, &outcome, "p", EventKind::Dropped), [2000]);
    assert_eq!(outcome.totals.dropped, 1);
}

#[test]
fn s21j_retention_is_the_streams_max_age_counted_from_the_publish() {
    // Published at 0, given up at 2 s; inspected at 2.5 s with a 2 s
    // retention: 2.5 s old, expired (the model would count 0.5 s).
    let text = format!(
        "{JS}max_receives = 2\nack_backoff = [\"1s\"]\non_failure = \"no_ack\"\n\
         [quarantine]\nretention = \"2s\"\n\
         [[operator]]\nwait = \"500ms\"\naction = \"hold\"\n{POISON}"
    );
    let (scenario, outcome) = sim(&text);
    assert_eq!(times(&scenario, &outcome, "p", EventKind::Expired), [2500]);
    let model = text.replace("profile = \"nats-jetstream\"\n", "").replace(
        "ack_backoff = [\"1s\"]\non_failure = \"no_ack\"\n",
        "retry_interval = \"1s\"\n",
    );
    let (scenario, outcome) = sim(&model);
    assert!(times(&scenario, &outcome, "p", EventKind::Expired).is_empty());
}

#[test]
fn s21j_a_redrive_starts_a_new_cycle_and_the_backoff_list_from_its_first_value() {
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nack_backoff = [\"1s\", \"5s\"]\non_failure = \"no_ack\"\n\
         [[operator]]\nwait = \"1s\"\naction = \"redrive_all\"\n{POISON}"
    ));
    // Cycle 1: 0, 1 s and 6 s, given up at 11 s; inspected and redriven
    // at 12 s: 12 s, 13 s and 18 s, given up at 23 s.
    assert_eq!(
        deliveries_of(&scenario, &outcome, "p"),
        [0, 1000, 6000, 12_000, 13_000, 18_000]
    );
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [11_000, 23_000]
    );
}

#[test]
fn s21j_the_files_jetstream_settings_are_checked_as_the_server_checks_them() {
    let cases = [
        (
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\nack_backoff = [\"1s\"]\n",
            "`ack_backoff` goes with profile = \"nats-jetstream\"",
        ),
        (
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_receives = 3\non_failure = \"nak\"\n",
            "`on_failure` goes with profile = \"nats-jetstream\"",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\nmax_receives = 3\nack_backoff = [\"1s\", \"2s\", \"3s\"]\n",
            "`ack_backoff` must list fewer values than `max_receives`",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\nack_backoff = []\n",
            "`ack_backoff` lists 1 to 64 durations",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\nack_backoff = [\"1s\", \"0s\"]\n",
            "every `ack_backoff` value must be at least 1ms",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\non_failure = \"no_ack\"\nretry_interval = \"1s\"\n",
            "with on_failure = \"no_ack\" a failed delivery is redelivered when its ack wait ends",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\nmax_receives = 0\n",
            "`max_receives` must be at least 1",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\nmax_ack_pending = 0\n",
            "`max_ack_pending` must be between 1 and 50000000, got 0",
        ),
        (
            "[delivery]\nprofile = \"nats-jetstream\"\nmax_ack_pending = \"all\"\n",
            "`max_ack_pending` is a number or \"unlimited\", got \"all\"",
        ),
        (
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nmax_ack_pending = 1\n",
            "`max_ack_pending` goes with profile = \"nats-jetstream\"",
        ),
    ];
    for (delivery, message) in cases {
        let problems = invalid(&format!("{delivery}[[message]]\nid = \"a\"\n"));
        assert!(
            problems.iter().any(|p| p == message),
            "{delivery}: {problems:?}"
        );
    }
    // Unlimited MaxDeliver takes any BackOff list.
    let ok = "[delivery]\nprofile = \"nats-jetstream\"\nack_backoff = [\"1s\", \"2s\", \"3s\"]\n\
              [[message]]\nid = \"a\"\n";
    assert!(load_str("t.toml", ok).is_ok());
}

#[test]
fn s21j_max_ack_pending_holds_a_new_message_while_a_retried_one_keeps_its_slot() {
    // MaxAckPending 1: the poison is pending through its nak delays, so
    // `b` (published at 0) is held until the advisory gives it up at
    // 600 ms; `c` (published at 100 ms) waits behind `b`.
    let text = format!(
        "{JS}max_receives = 3\nretry_interval = \"200ms\"\nmax_ack_pending = 1\n{POISON}\
         [[message]]\nid = \"b\"\n\
         [[message]]\nid = \"c\"\nat = \"100ms\"\n"
    );
    let (scenario, outcome) = sim(&text);
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 200, 400]);
    assert_eq!(
        times(&scenario, &outcome, "p", EventKind::Quarantined),
        [600]
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "b"), [600]);
    assert_eq!(deliveries_of(&scenario, &outcome, "c"), [600]);
    assert_eq!(outcome.totals.max_queue_depth, 2);
    assert_eq!(outcome.totals.max_queue_wait, 600);
    // b's ack frees the slot c takes, at the same instant, after it.
    let story: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.time == 600 && matches!(t.detail, Detail::Delivered { .. }))
        .map(|t| t.message)
        .collect();
    assert_eq!(
        story,
        [scenario.find_message("b"), scenario.find_message("c")]
    );
    // Unlimited (and the default 1000 for three messages): b at 0.
    for pending in ["max_ack_pending = \"unlimited\"\n", ""] {
        let (scenario, outcome) = sim(&text.replace("max_ack_pending = 1\n", pending));
        assert_eq!(deliveries_of(&scenario, &outcome, "b"), [0]);
        assert_eq!(outcome.totals.max_queue_wait, 0);
    }
}

#[test]
fn s21j_held_messages_take_freed_slots_in_publish_order() {
    // MaxAckPending 2 and a handler of 100 ms each: two at a time.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\nmax_ack_pending = 2\n\
         [workers]\ncount = 10\nservice_time = \"100ms\"\n\
         [[traffic]]\ncount = 5\nover = \"1ms\"\nid_prefix = \"m\"\n"
    ));
    let firsts: Vec<_> = (1..=5)
        .map(|i| deliveries_of(&scenario, &outcome, &format!("m{i}"))[0])
        .collect();
    assert_eq!(firsts, [0, 0, 100, 100, 200]);
    assert_eq!(outcome.totals.acked, 5);
    assert_eq!(outcome.totals.max_queue_depth, 3);
}

#[test]
fn s21j_a_term_a_drop_and_a_redrive_each_free_or_take_a_slot() {
    // Terms (permanent failures routed to quarantine) free p's slot at
    // 100 ms and q's at 200 ms. The redrive publishes both again at the
    // inspection (350 ms), each needing a slot of its own: q waits for
    // p's ack.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 3\npermanent = \"quarantine\"\nmax_ack_pending = 1\n\
         [workers]\ncount = 4\nservice_time = \"100ms\"\n\
         [[operator]]\nwait = \"50ms\"\nrepair = true\naction = \"redrive_all\"\n\
         [[message]]\nid = \"p\"\n\
         faults = [{{ fail = {{ until = \"repair\" }}, class = \"permanent\", reason = \"bad\" }}]\n\
         [[message]]\nid = \"q\"\n\
         faults = [{{ fail = {{ until = \"repair\" }}, class = \"permanent\", reason = \"bad\" }}]\n\
         [[message]]\nid = \"b\"\n"
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "p"), [0, 350]);
    assert_eq!(deliveries_of(&scenario, &outcome, "q"), [100, 450]);
    assert_eq!(deliveries_of(&scenario, &outcome, "b"), [200]);
    assert_eq!(outcome.totals.acked, 3);
    // Without a dead-letter stream the drop frees the slot the same way.
    let (scenario, outcome) = sim(&format!(
        "{JS}max_receives = 1\nmax_ack_pending = 1\n[quarantine]\nenabled = false\n\
         {POISON}[[message]]\nid = \"b\"\n"
    ));
    assert_eq!(times(&scenario, &outcome, "p", EventKind::Dropped), [0]);
    assert_eq!(deliveries_of(&scenario, &outcome, "b"), [0]);
}

#[test]
fn s21j_max_ack_pending_defaults_to_the_servers_1000() {
    // 1,001 messages published at 0 whose first delivery naks with a
    // 1 s delay: 1,000 are pending, the last is held until the first ack.
    let text = format!(
        "{JS}max_receives = 3\nretry_interval = \"1s\"\n\
         [[traffic]]\ncount = 1001\nover = \"1ms\"\nid_prefix = \"m\"\n\
         faults = [{{ fail = {{ first = 1 }}, reason = \"busy\" }}]\n"
    );
    let (scenario, outcome) = sim(&text);
    assert_eq!(deliveries_of(&scenario, &outcome, "m1000"), [0, 1000]);
    assert_eq!(deliveries_of(&scenario, &outcome, "m1001"), [1000, 2000]);
    let (scenario, outcome) = sim(&text.replace(
        "retry_interval = \"1s\"\n",
        "retry_interval = \"1s\"\nmax_ack_pending = 1001\n",
    ));
    assert_eq!(deliveries_of(&scenario, &outcome, "m1001"), [0, 1000]);
}
