//! rabbitmq-quorum's `broker_version` (docs/model.md section 21,
//! rabbitmq-quorum 3): the default delivery limit before 4.0, and where a
//! message requeued at once goes.

use super::*;

/// One consumer (prefetch 1) and a poison message ahead of two orders.
fn one_consumer(delivery: &str) -> String {
    format!(
        "[delivery]\nprofile = \"rabbitmq-quorum\"\n{delivery}\
         [workers]\ncount = 1\nservice_time = \"10ms\"\n\
         [[message]]\nid = \"poison\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
         [[message]]\nid = \"order-2\"\n[[message]]\nid = \"order-3\"\n"
    )
}

#[test]
fn s21_rabbitmq_3_10_with_a_limit_returns_a_nacked_message_to_the_head() {
    // Measured on RabbitMQ 3.10.8: poison x 6, then the two orders.
    let (scenario, outcome) = sim(&one_consumer(
        "max_receives = 5\nbroker_version = \"3.10\"\n",
    ));
    let order = order_of(&scenario, &outcome, EventKind::Delivered);
    assert_eq!(
        order,
        [
            "poison", "poison", "poison", "poison", "poison", "poison", "order-2", "order-3"
        ]
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "order-2"), [60]);
    // Section 21 as written (no broker_version): behind what is due.
    let (scenario, outcome) = sim(&one_consumer("max_receives = 5\n"));
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Delivered)[..4],
        ["poison", "order-2", "order-3", "poison"]
    );
    // Without a limit RabbitMQ 3.10 returns it to the back.
    let (scenario, outcome) = sim(&one_consumer(
        "max_receives = \"unlimited\"\nbroker_version = \"3.10.8\"\n",
    )
    .replace("until = \"repair\"", "first = 2"));
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Delivered),
        ["poison", "order-2", "order-3", "poison", "poison"]
    );
}

#[test]
fn s21_rabbitmq_4_3_serves_returned_messages_first_with_or_without_a_limit() {
    let (scenario, outcome) = sim(&one_consumer(
        "max_receives = \"unlimited\"\nbroker_version = \"4.3\"\n",
    )
    .replace("until = \"repair\"", "first = 2"));
    assert_eq!(
        order_of(&scenario, &outcome, EventKind::Delivered),
        ["poison", "poison", "poison", "order-2", "order-3"]
    );
}

#[test]
fn s21_rabbitmq_before_4_0_has_no_default_delivery_limit() {
    let file = |version: &str| {
        format!(
            "[delivery]\nprofile = \"rabbitmq-quorum\"\nbroker_version = \"{version}\"\n\
             [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ first = 25 }} }}]\n"
        )
    };
    let (scenario, outcome) = sim(&file("3.13"));
    let p = msg(&scenario, &outcome, "p");
    assert_eq!((p.state, p.total_receives), (State::Acked, 26));
    let (scenario, outcome) = sim(&file("4.0"));
    let p = msg(&scenario, &outcome, "p");
    assert_eq!((p.state, p.total_receives), (State::Quarantined, 21));
}

#[test]
fn s21_broker_version_is_a_rabbitmq_version_from_3_8() {
    let refused = |delivery: &str| match crate::scenario::load_str(
        "t.toml",
        &format!("{delivery}[[message]]\nid = \"p\"\n"),
    ) {
        Ok(_) => panic!("{delivery} refused"),
        Err(inv) => inv.problems[0].message.clone(),
    };
    let quorum = "[delivery]\nprofile = \"rabbitmq-quorum\"\n";
    assert_eq!(
        refused(&format!("{quorum}broker_version = \"3.7\"\n")),
        "`broker_version` must be 3.8 or later"
    );
    for bad in ["4", "four", "4.1.2.3", "4.x", ".1"] {
        assert_eq!(
            refused(&format!("{quorum}broker_version = \"{bad}\"\n")),
            "`broker_version` is MAJOR.MINOR or MAJOR.MINOR.PATCH",
            "{bad}"
        );
    }
    assert_eq!(
        refused(
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\nbroker_version = \"4.1\"\n"
        ),
        "`broker_version` goes with profile = \"rabbitmq-quorum\""
    );
}
