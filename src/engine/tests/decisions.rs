//! Section 10: the decisions that settle the fine print.

use super::*;

// ---- Section 10: decisions ----

#[test]
fn d2_own_faults_win_in_file_order_then_outages() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n[[outage]]\nfrom = \"0s\"\nduration = \"1h\"\n\
         [[message]]\nid = \"m\"\nfaults = [{ fail = { first = 1 }, reason = \"A\" }, { fail = { first = 2 }, reason = \"B\", class = \"permanent\" }]\n",
    );
    let reasons: Vec<String> = outcome
        .transitions
        .iter()
        .filter_map(|t| match t.detail {
            Detail::Failed { reason, class } => Some(format!(
                "{}/{}",
                scenario.reasons[reason as usize],
                class.as_str()
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "A/transient",
            "B/permanent",
            "downstream unavailable/transient"
        ]
    );
}

#[test]
fn d3_outages_and_lost_acks_are_transient_and_defaults_apply() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
         [[outage]]\nfrom = \"0s\"\nduration = \"500ms\"\n\
         [[message]]\nid = \"o\"\n[[message]]\nid = \"l\"\nat = \"1s\"\nfaults = [{ lose_ack = { first = 1 } }]\n\
         [[message]]\nid = \"d\"\nat = \"1s\"\nfaults = [{ fail = { first = 1 } }]\n",
    );
    assert_eq!(msg(&scenario, &outcome, "o").total_receives, 2);
    assert_eq!(msg(&scenario, &outcome, "l").total_receives, 2);
    assert_eq!(msg(&scenario, &outcome, "d").total_receives, 2);
    assert_eq!(msg(&scenario, &outcome, "d").last_class(), Class::Transient);
    assert_eq!(
        reason(&scenario, msg(&scenario, &outcome, "d")),
        "handler error"
    );
}

#[test]
fn d4_a_failing_handler_never_hits_and_a_hit_can_lose_its_ack() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n[dedup]\nresult_retention = \"1h\"\n\
         [[message]]\nid = \"a\"\nkey = \"k\"\n\
         [[message]]\nid = \"b\"\nkey = \"k\"\nfaults = [{ fail = { first = 1 } }, { lose_ack = { first = 2 } }]\n",
    );
    let b: Vec<_> = story(&scenario, &outcome, "b")
        .into_iter()
        .map(|(_, k)| k)
        .collect();
    use EventKind::*;
    assert_eq!(
        b,
        [
            Delivered,
            Failed,
            RetryScheduled,
            Delivered,
            DedupHit,
            AckLost,
            RetryScheduled,
            Delivered,
            DedupHit,
            Acked
        ]
    );
    // d5: hits count for the delivering message; the store is keyed by key.
    assert_eq!(msg(&scenario, &outcome, "b").dedup_hits, 2);
    assert_eq!(msg(&scenario, &outcome, "a").dedup_hits, 0);
    assert_eq!(outcome.totals.effects, 1);
}

#[test]
fn d6_repair_leaves_first_n_and_outages_alone_and_first_zero_never_fails() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
         [[operator]]\nrepair = true\naction = \"redrive_all\"\n\
         [[outage]]\nfrom = \"0s\"\nduration = \"1h\"\n\
         [[message]]\nid = \"n\"\nat = \"2h\"\nfaults = [{ fail = { first = 2 } }]\n\
         [[message]]\nid = \"o\"\n\
         [[message]]\nid = \"z\"\nat = \"2h\"\nfaults = [{ fail = { first = 0 } }]\n");
    assert_eq!(msg(&scenario, &outcome, "n").state, State::Quarantined);
    assert_eq!(msg(&scenario, &outcome, "n").total_receives, 2);
    // "o" arrives in the outage and is redriven at 2h (the drain), outside it.
    assert_eq!(msg(&scenario, &outcome, "o").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "z").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "z").total_receives, 1);
}

#[test]
fn d9_a_later_step_counts_from_the_later_of_delivery_and_inspection() {
    // Step 1 holds: drained at its own inspection (40s). Step 2 inspects at 40s + 5s.
    let (_, outcome) = sim(&fixture(
        DELIVERY,
        BASE_EXTRA,
        "[[operator]]\nwait = \"30s\"\naction = \"hold\"\n[[operator]]\nwait = \"5s\"\nrepair = true\naction = \"redrive_all\"\n",
    ));
    assert_eq!(outcome.drains, [10_000, 40_000, 45_000]);
    assert_eq!(outcome.totals.end_time, 45_000);
    assert_eq!(outcome.totals.acked, 4);
}

#[test]
fn d10_expiry_only_at_inspections_and_quarantined_counts_the_final_depth() {
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        "[quarantine]\nretention = \"1s\"\n",
        "[[operator]]\naction = \"redrive_all\"\n",
    ));
    // Inspected at 10s, age 0: nothing expires. poison and uncertain return at
    // 20s and stay quarantined whatever their age.
    assert_eq!(outcome.totals.expired, 0);
    assert_eq!(msg(&scenario, &outcome, "poison").state, State::Quarantined);
    assert_eq!(outcome.totals.quarantined, 2);
    assert_eq!(outcome.totals.quarantine_entries, 5);
}

#[test]
fn d11_redrive_follows_quarantine_order_and_records_skips() {
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        BASE_EXTRA,
        "[[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive\"\nonly = [\"uncertain\", \"healthy\", \"transient\"]\n",
    ));
    let redriven: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| {
            matches!(
                t.detail.kind(),
                EventKind::Redriven | EventKind::RedriveSkipped
            )
        })
        .map(|t| {
            (
                scenario.message_id(t.message.unwrap()).into_owned(),
                t.detail.kind(),
            )
        })
        .collect();
    assert_eq!(
        redriven,
        [
            ("transient".to_string(), EventKind::Redriven),
            ("uncertain".to_string(), EventKind::Redriven),
            ("healthy".to_string(), EventKind::RedriveSkipped),
        ]
    );
    // Redriven messages leave the DLQ before their deliveries.
    let first_delivery_after = outcome
        .transitions
        .iter()
        .position(|t| t.time == 40_000 && t.detail.kind() == EventKind::Delivered)
        .unwrap();
    let last_redrive = outcome
        .transitions
        .iter()
        .rposition(|t| t.detail.kind() == EventKind::Redriven)
        .unwrap();
    assert!(last_redrive < first_delivery_after);
}

#[test]
fn d11_purge_happens_after_expiry() {
    let (_, outcome) = sim(&fixture(
        DELIVERY,
        "[quarantine]\nretention = \"30s\"\n",
        "[[operator]]\nwait = \"30s\"\naction = \"purge\"\n",
    ));
    assert_eq!(outcome.totals.expired, 3);
    assert_eq!(outcome.totals.purged, 0);
}

#[test]
fn d12_requarantine_gets_a_fresh_time_and_history_is_kept() {
    let (scenario, outcome) = sim(&fixture(DELIVERY, BASE_EXTRA, BASE_OP));
    let t = msg(&scenario, &outcome, "transient");
    assert_eq!(t.state, State::Acked);
    assert_eq!(t.last_quarantined_at(), Some(10_000));
    assert_eq!(reason(&scenario, t), "upstream timeout");
}

#[test]
fn d13_end_time_includes_a_final_hold() {
    let (_, outcome) = sim(&fixture(
        DELIVERY,
        BASE_EXTRA,
        "[[operator]]\nwait = \"1m\"\naction = \"hold\"\n",
    ));
    assert_eq!(outcome.totals.drain_time, 10_000);
    assert_eq!(outcome.totals.end_time, 70_000);
}

#[test]
fn d15_no_operator_ends_at_the_drain() {
    let (_, outcome) = sim(&fixture(DELIVERY, "", ""));
    assert_eq!(outcome.totals.end_time, 10_000);
    assert_eq!(outcome.totals.quarantined, 3);
    // No [dedup]: off.
    assert_eq!(outcome.totals.dedup_hits, 0);
}

#[test]
fn d16_even_arrivals_follow_explicit_messages() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[traffic]]\ncount = 3\nover = \"1s\"\nid_prefix = \"g\"\n\
         [[message]]\nid = \"x\"\n",
    );
    let arrived = |id| arrived(&scenario, &outcome, id);
    assert_eq!(arrived("g2"), Some(333));
    assert_eq!(arrived("g3"), Some(666));
    let order: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == EventKind::Delivered)
        .map(|t| scenario.message_id(t.message.unwrap()).into_owned())
        .collect();
    assert_eq!(order, ["x", "g1", "g2", "g3"]);
}
