//! Section 3: one delivery.

use super::*;

// ---- Section 3: one delivery ----

#[test]
fn first_n_counts_deliveries_over_the_whole_life() {
    let (scenario, outcome) = sim(&format!(
        "{DELIVERY}[[operator]]\naction = \"redrive_all\"\n[[message]]\nid = \"m\"\nfaults = [{{ fail = {{ first = 3 }} }}]\n"
    ));
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(m.state, State::Acked);
    assert_eq!(m.total_receives, 4);
    assert_eq!(m.cycle, 2);
    assert_eq!(m.cycle_receives, 2);
}

#[test]
fn until_repair_fails_until_the_operator_repairs() {
    let text = |repair: bool| {
        format!(
            "{DELIVERY}[[operator]]\nrepair = {repair}\naction = \"redrive_all\"\n[[message]]\nid = \"m\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n"
        )
    };
    let (scenario, outcome) = sim(&text(true));
    assert_eq!(msg(&scenario, &outcome, "m").state, State::Acked);
    let (scenario, outcome) = sim(&text(false));
    assert_eq!(msg(&scenario, &outcome, "m").state, State::Quarantined);
    assert_eq!(msg(&scenario, &outcome, "m").total_receives, 4);
}

#[test]
fn an_outage_window_includes_its_start_and_excludes_its_end() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[outage]]\nfrom = \"5s\"\nduration = \"10s\"\n\
         [[message]]\nid = \"before\"\nat = \"4s999ms\"\n[[message]]\nid = \"start\"\nat = \"5s\"\n\
         [[message]]\nid = \"last\"\nat = \"14s999ms\"\n[[message]]\nid = \"end\"\nat = \"15s\"\n",
    );
    assert_eq!(msg(&scenario, &outcome, "before").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "start").state, State::Quarantined);
    assert_eq!(
        reason(&scenario, msg(&scenario, &outcome, "start")),
        "downstream unavailable"
    );
    assert_eq!(msg(&scenario, &outcome, "last").state, State::Quarantined);
    assert_eq!(msg(&scenario, &outcome, "end").state, State::Acked);
}

#[test]
fn a_result_is_valid_strictly_before_expiry_and_a_hit_does_not_extend_it() {
    // Lost acks at 0, 10, 20, 30s; results kept 20s.
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 4\nretry_interval = \"10s\"\n[dedup]\nresult_retention = \"20s\"\n\
         [[message]]\nid = \"m\"\nfaults = [{ lose_ack = { first = 3 } }]\n",
    );
    let kinds: Vec<_> = story(&scenario, &outcome, "m")
        .into_iter()
        .filter(|(_, k)| matches!(k, EventKind::Committed | EventKind::DedupHit))
        .collect();
    // 0: commit (expires 20s). 10: hit (no extension). 20: exactly at expiry
    // executes again (expires 40s). 30: hit.
    assert_eq!(
        kinds,
        [
            (0, EventKind::Committed),
            (10_000, EventKind::DedupHit),
            (20_000, EventKind::Committed),
            (30_000, EventKind::DedupHit)
        ]
    );
    assert_eq!(msg(&scenario, &outcome, "m").state, State::Acked);
}

#[test]
fn zero_result_retention_never_hits() {
    let (_, outcome) = sim(&fixture(
        DELIVERY,
        "[dedup]\nresult_retention = \"0s\"\n",
        BASE_OP,
    ));
    assert_eq!(outcome.totals.dedup_hits, 0);
    assert_eq!(outcome.totals.effects, 6);
}

#[test]
fn a_lost_ack_keeps_the_effect_and_fails_the_delivery() {
    let (scenario, outcome) = sim(&format!(
        "{DELIVERY}[[message]]\nid = \"m\"\nfaults = [{{ lose_ack = {{ first = 1 }} }}]\n"
    ));
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(m.effects, 2);
    assert_eq!(m.state, State::Acked);
    assert_eq!(reason(&scenario, m), "ack lost");
    assert_eq!(
        story(&scenario, &outcome, "m")[..4],
        [
            (0, EventKind::Delivered),
            (0, EventKind::Committed),
            (0, EventKind::AckLost),
            (0, EventKind::RetryScheduled)
        ]
    );
}

#[test]
fn the_budget_counts_deliveries_and_quarantine_keeps_the_last_reason() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nretry_interval = \"5s\"\n[[message]]\nid = \"m\"\n\
         faults = [{ fail = { first = 2 }, reason = \"first\" }, { fail = { first = 3 }, reason = \"third\" }]\n",
    );
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(deliveries_of(&scenario, &outcome, "m"), [0, 5_000, 10_000]);
    assert_eq!(m.state, State::Quarantined);
    assert_eq!(reason(&scenario, m), "third");
    assert_eq!(m.last_quarantined_at(), Some(10_000));
}

#[test]
fn max_receives_one_never_retries() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"5s\"\n[[message]]\nid = \"m\"\nfaults = [{ fail = { first = 1 } }]\n",
    );
    assert_eq!(msg(&scenario, &outcome, "m").state, State::Quarantined);
    assert_eq!(outcome.totals.deliveries, 1);
    assert_eq!(outcome.totals.retry_delay_paid, 0);
}

#[test]
fn permanent_failures_skip_the_budget_when_routed_to_quarantine() {
    let text = |policy: &str| {
        format!(
            "[delivery]\nmax_receives = 5\nretry_interval = \"1s\"\npermanent = \"{policy}\"\n\
             [[message]]\nid = \"p\"\nfaults = [{{ fail = {{ first = 10 }}, class = \"permanent\" }}]\n\
             [[message]]\nid = \"t\"\nfaults = [{{ fail = {{ first = 10 }} }}]\n"
        )
    };
    let (scenario, outcome) = sim(&text("quarantine"));
    assert_eq!(msg(&scenario, &outcome, "p").total_receives, 1);
    assert_eq!(msg(&scenario, &outcome, "t").total_receives, 5);
    let (scenario, outcome) = sim(&text("retry"));
    assert_eq!(msg(&scenario, &outcome, "p").total_receives, 5);
}
