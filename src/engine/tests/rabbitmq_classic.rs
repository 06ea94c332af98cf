//! rabbitmq-classic (docs/model.md section 21, decided by this project and
//! checked against RabbitMQ 3.10 with `scenario-run conform`): no delivery
//! limit, a nacked message back at its original position, and only a
//! reject dead-letters.

use super::*;

const CLASSIC: &str = "[delivery]\nprofile = \"rabbitmq-classic\"\n";

/// One consumer (prefetch 1) and a poison message ahead of two orders.
fn one_consumer(delivery: &str, poison: &str) -> String {
    format!(
        "{CLASSIC}{delivery}[workers]\ncount = 1\nservice_time = \"10ms\"\n\
         [[message]]\nid = \"poison\"\nfaults = [{{ fail = {poison} }}]\n\
         [[message]]\nid = \"order-2\"\n[[message]]\nid = \"order-3\"\n"
    )
}

#[test]
fn s21c_a_nacked_message_returns_to_its_place_and_has_no_limit() {
    // Nine failures and no limit: the poison message is delivered ten
    // times before either order, and acked at the tenth.
    let (scenario, outcome) = sim(&one_consumer("", "{ first = 9 }"));
    let order = order_of(&scenario, &outcome, EventKind::Delivered);
    assert_eq!(order[..10], ["poison"; 10]);
    assert_eq!(order[10..], ["order-2", "order-3"]);
    assert_eq!(deliveries_of(&scenario, &outcome, "order-2"), [100]);
    assert_eq!(outcome.totals.quarantined, 0);
    assert_eq!(scenario.delivery.max_receives, UNLIMITED_RECEIVES);
    // The quorum queue of RabbitMQ 3.10 without a limit: to the back.
    let quorum = one_consumer("broker_version = \"3.10\"\n", "{ first = 2 }")
        .replace("rabbitmq-classic", "rabbitmq-quorum");
    let (scenario, outcome) = sim(&quorum);
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Delivered),
        ["poison", "order-2", "order-3", "poison", "poison"]
    );
}

#[test]
fn s21c_a_poison_message_that_always_fails_loops_until_a_limit_stops_the_run() {
    let text = one_consumer("", "{ until = \"repair\" }")
        .replace("[workers]", "[limits]\nmax_events = 1000\n[workers]");
    let (scenario, _) = load_str("t.toml", &text).expect("valid");
    let stopped = crate::engine::run(&scenario, crate::engine::Recorder::Off);
    let limit = stopped.expect_err("a poison message without a limit never ends");
    assert_eq!(limit.pending, 3);
    assert!(limit.deliveries >= 100, "{}", limit.deliveries);
}

#[test]
fn s21c_a_delayed_retry_also_returns_to_its_original_position() {
    // One consumer of 100 ms; `a` fails once and is nacked 50 ms later
    // (the consumer's own delay): at 150 ms it goes back ahead of `c`,
    // published after it, and is taken at 200 ms when `b` is acked.
    let text = format!(
        "{CLASSIC}retry_interval = \"50ms\"\n[workers]\ncount = 1\nservice_time = \"100ms\"\n\
         [[message]]\nid = \"a\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n\
         [[message]]\nid = \"b\"\n[[message]]\nid = \"c\"\n"
    );
    let (scenario, outcome) = sim(&text);
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Delivered),
        ["a", "b", "a", "c"]
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 200]);
    // Its wait counts from 150 ms, when it was ready again, not from its
    // first arrival; `c` waited from 0 to 300 ms.
    let a = scenario.find_message("a").unwrap();
    assert_eq!(outcome.queue_wait(a), 50);
    assert_eq!(outcome.totals.max_queue_wait, 300);
    assert_eq!(deliveries_of(&scenario, &outcome, "c"), [300]);
    // A quorum queue puts it behind `c`.
    let (scenario, outcome) = sim(&text.replace("rabbitmq-classic", "rabbitmq-quorum"));
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Delivered),
        ["a", "b", "c", "a"]
    );
}

#[test]
fn s21c_only_a_reject_dead_letters_and_the_envelope_says_rejected() {
    let text = format!(
        "{CLASSIC}queue = \"orders\"\npermanent = \"quarantine\"\n\
         [[message]]\nid = \"bad\"\nfaults = [{{ fail = {{ first = 1 }}, class = \"permanent\", reason = \"schema\" }}]\n\
         [[message]]\nid = \"busy\"\nfaults = [{{ fail = {{ first = 3 }}, reason = \"busy\" }}]\n"
    );
    let (scenario, outcome) = sim(&text);
    assert_eq!(
        times(&scenario, &outcome, "bad", EventKind::Quarantined),
        [0]
    );
    let busy = msg(&scenario, &outcome, "busy");
    assert_eq!((busy.state, busy.total_receives), (State::Acked, 4));
    let snapshot = crate::report::json::snapshot(&scenario, &outcome);
    let bad = scenario.find_message("bad").unwrap() as usize;
    assert_eq!(
        snapshot[bad]["envelope"]["broker"],
        serde_json::json!({
            "x-death": [{ "queue": "orders", "reason": "rejected", "count": 1, "time": 0 }],
            "x-first-death-queue": "orders",
            "x-first-death-reason": "rejected",
        })
    );
}

#[test]
fn s21c_the_files_classic_queue_settings_are_checked() {
    let cases = [
        (
            "max_receives = 5\n",
            "a classic queue has no delivery limit: `max_receives` is \"unlimited\"",
        ),
        (
            "max_receives = 0\n",
            "a classic queue has no delivery limit: `max_receives` is \"unlimited\"",
        ),
        (
            "broker_version = \"3.10\"\n",
            "`broker_version` goes with profile = \"rabbitmq-quorum\"",
        ),
        (
            "ack_backoff = [\"1s\"]\n",
            "`ack_backoff` goes with profile = \"nats-jetstream\"",
        ),
    ];
    for (delivery, message) in cases {
        let problems = invalid(&format!("{CLASSIC}{delivery}[[message]]\nid = \"a\"\n"));
        assert!(
            problems.iter().any(|p| p == message),
            "{delivery}: {problems:?}"
        );
    }
    let ok = format!("{CLASSIC}max_receives = \"unlimited\"\n[[message]]\nid = \"a\"\n");
    assert!(load_str("t.toml", &ok).is_ok());
}

#[test]
fn s21c_the_transcript_says_where_a_returned_message_goes() {
    let said = |text: &str| -> Vec<String> {
        let (scenario, outcome) = sim(text);
        outcome
            .transitions
            .iter()
            .filter(|t| t.detail.kind() == EventKind::RetryScheduled)
            .map(|t| crate::words::sentence::describe(&scenario, &t.detail))
            .collect()
    };
    let classic = one_consumer("", "{ first = 1 }");
    assert_eq!(
        said(&classic),
        ["requeued at 10ms to its original position (RabbitMQ classic queue)"]
    );
    let quorum = classic.replace(
        "rabbitmq-classic\"\n",
        "rabbitmq-quorum\"\nbroker_version = \"4.3\"\n",
    );
    assert_eq!(
        said(&quorum),
        ["requeued at 10ms to the front of the queue (RabbitMQ 4.3)"]
    );
    // A quorum queue without broker_version: behind what is due.
    let back = classic.replace("rabbitmq-classic", "rabbitmq-quorum");
    assert_eq!(said(&back), ["retry scheduled after 0s (due 10ms)"]);
}
