//! Sections 5 and 6: quarantine and the operator.

use super::*;

// ---- Section 5: quarantine ----

#[test]
fn retention_expires_at_exactly_its_age() {
    let text = |retention: &str| {
        fixture(
            DELIVERY,
            &format!(
                "[quarantine]\nretention = \"{retention}\"\n[dedup]\nresult_retention = \"60s\"\n"
            ),
            "[[operator]]\nwait = \"60s\"\nrepair = true\naction = \"redrive_all\"\n",
        )
    };
    // Quarantined at 10s, inspected at 70s: age 60s.
    let (_, outcome) = sim(&text("60s"));
    assert_eq!(outcome.totals.expired, 3);
    let (_, outcome) = sim(&text("60s1ms"));
    assert_eq!(outcome.totals.expired, 0);
    assert_eq!(outcome.totals.acked, 4);
}

#[test]
fn dlq_depth_keeps_its_maximum_and_final_value() {
    let (_, outcome) = sim(&fixture(
        DELIVERY,
        BASE_EXTRA,
        "[[operator]]\nwait = \"30s\"\naction = \"redrive\"\nonly = [\"poison\"]\nrepair = true\n",
    ));
    assert_eq!(outcome.totals.max_dlq_depth, 3);
    assert_eq!(outcome.totals.final_dlq_depth, 2);
    assert_eq!(outcome.totals.quarantined, 2);
}

// ---- Section 6: the operator ----

#[test]
fn the_operator_inspects_wait_after_the_last_delivery() {
    let (_, outcome) = sim(&fixture(DELIVERY, BASE_EXTRA, BASE_OP));
    let inspected: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == EventKind::Inspected)
        .map(|t| t.time)
        .collect();
    assert_eq!(inspected, [40_000]);
    assert_eq!(outcome.totals.drain_time, 10_000);
    assert_eq!(outcome.drains, [10_000, 40_000]);
}

#[test]
fn redrive_starts_a_new_cycle_and_keeps_total_receives() {
    let (scenario, outcome) = sim(&fixture(DELIVERY, BASE_EXTRA, BASE_OP));
    let p = msg(&scenario, &outcome, "poison");
    assert_eq!((p.cycle, p.cycle_receives, p.total_receives), (2, 1, 3));
}

#[test]
fn a_new_identity_is_derived_from_the_intent_and_never_chained() {
    let (scenario, outcome) = sim(&format!(
        "{DELIVERY}[dedup]\nresult_retention = \"1h\"\n\
         [[operator]]\naction = \"redrive_all\"\nidentity = \"new\"\n\
         [[operator]]\naction = \"redrive_all\"\nidentity = \"new\"\nrepair = true\n\
         [[message]]\nid = \"m\"\nkey = \"order-7\"\nfaults = [{{ lose_ack = {{ until = \"repair\" }} }}]\n"
    ));
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(
        scenario.key_name(outcome.key(&scenario, scenario.find_message("m").unwrap())),
        "order-7~r2"
    );
    // Three keys, three effects for one intent.
    assert_eq!(m.effects, 3);
    assert_eq!(outcome.totals.duplicated_effects, 2);
}

#[test]
fn stable_identity_keeps_a_fresh_key_given_earlier() {
    let (scenario, outcome) = sim(&format!(
        "{DELIVERY}[[operator]]\naction = \"redrive_all\"\nidentity = \"new\"\n\
         [[operator]]\naction = \"redrive_all\"\n\
         [[message]]\nid = \"m\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n"
    ));
    assert_eq!(
        scenario.key_name(outcome.key(&scenario, scenario.find_message("m").unwrap())),
        "m~r1"
    );
}

#[test]
fn a_failed_redrive_returns_to_quarantine_once() {
    let (scenario, outcome) = sim(&fixture(
        DELIVERY,
        BASE_EXTRA,
        "[[operator]]\nwait = \"30s\"\naction = \"redrive_all\"\n",
    ));
    let p = msg(&scenario, &outcome, "poison");
    assert_eq!(p.state, State::Quarantined);
    assert_eq!(p.last_quarantined_at(), Some(50_000));
    assert_eq!(p.quarantine_entries, 2);
    assert_eq!(outcome.totals.end_time, 50_000);
}

#[test]
fn inspections_touch_only_what_they_change_and_keep_quarantine_order() {
    // m1..m6 enter quarantine at 0s..5s. Step 1 (at 5s + 2s = 7s) expires
    // those at least 4s old (m1..m4, aged 7s, 6s, 5s and 4s), then
    // redrives the named ones still there in quarantine order (m5, m6)
    // and reports m2 as skipped; step 2 finds nothing left to purge.
    let mut text = String::from(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[quarantine]\nretention = \"4s\"\n\
         [[operator]]\nwait = \"2s\"\nrepair = true\naction = \"redrive\"\nonly = [\"m6\", \"m5\", \"m2\"]\n\
         [[operator]]\naction = \"purge\"\n",
    );
    for i in 1..=6 {
        text.push_str(&format!(
            "[[message]]\nid = \"m{i}\"\nat = \"{}s\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n",
            i - 1
        ));
    }
    let (scenario, outcome) = sim(&text);
    let of = |kind: EventKind| order_of(&scenario, &outcome, kind);
    assert_eq!(of(EventKind::Expired), ["m1", "m2", "m3", "m4"]);
    assert_eq!(of(EventKind::Redriven), ["m5", "m6"]);
    assert_eq!(of(EventKind::RedriveSkipped), ["m2"]);
    assert!(of(EventKind::Purged).is_empty());
    assert_eq!(outcome.totals.acked, 2);
    assert_eq!(outcome.totals.final_dlq_depth, 0);
}

#[test]
fn a_new_identity_that_is_a_generated_id_is_that_message_s_key() {
    // Generated message m~r1's key is its id; m's first fresh key is the
    // same string, so the store holds one key and m's redrive is a hit.
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[dedup]\nresult_retention = \"1h\"\n\
         [[operator]]\naction = \"redrive_all\"\nidentity = \"new\"\nrepair = true\n\
         [[message]]\nid = \"m\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
         [[traffic]]\ncount = 2\nover = \"2s\"\nid_prefix = \"m~r\"\n",
    );
    let m = scenario.find_message("m").unwrap();
    let generated = scenario.find_message("m~r1").unwrap();
    assert_eq!(outcome.key(&scenario, m), outcome.key(&scenario, generated));
    assert_eq!(scenario.key_name(outcome.key(&scenario, m)), "m~r1");
    assert_eq!(msg(&scenario, &outcome, "m").state, State::Acked);
    assert_eq!(msg(&scenario, &outcome, "m").effects, 0);
    assert_eq!(outcome.totals.dedup_hits, 1);
    assert_eq!(outcome.totals.effects, 2);
}

/// 28.11's worked example: retention applied continuously, and an archive
/// step before expiry.
#[test]
fn s28_11_quarantine_expires_continuously_and_archives_first() {
    let text = |expiry: &str, op: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\npermanent = \"quarantine\"\n\
             [quarantine]\nretention = \"3d\"\nexpiry = \"{expiry}\"\narchive_after = \"2d\"\n\
             [[message]]\nid = \"m1\"\nat = \"10s\"\n\
             faults = [{{ fail = {{ until = \"repair\" }}, class = \"permanent\" }}]\n\
             [[message]]\nid = \"m2\"\nat = \"1h\"\n\
             faults = [{{ fail = {{ until = \"repair\" }}, class = \"permanent\" }}]\n\
             [[operator]]\n{op}\n\
             [[alarm]]\nname = \"dlq not empty\"\nmetric = \"dlq_depth\"\nat_least = 1\n"
        )
    };
    const D: Millis = 86_400_000;
    const H: Millis = 3_600_000;
    let (scenario, outcome) = sim(&text("continuous", "wait = \"7d\"\naction = \"hold\""));
    let story = |id: &str| -> Vec<(Millis, EventKind)> {
        story(&scenario, &outcome, id)
            .into_iter()
            .filter(|(_, k)| matches!(k, EventKind::Archived | EventKind::Expired))
            .collect()
    };
    assert_eq!(
        story("m1"),
        [
            (2 * D + 10_000, EventKind::Archived),
            (3 * D + 10_000, EventKind::Expired)
        ]
    );
    assert_eq!(
        story("m2"),
        [
            (2 * D + H, EventKind::Archived),
            (3 * D + H, EventKind::Expired)
        ]
    );
    assert_eq!((outcome.totals.archived, outcome.totals.expired), (2, 2));
    assert_eq!(outcome.totals.end_time, 7 * D + H);
    let m2 = scenario.find_message("m2").unwrap();
    assert!(
        outcome.dead_letters.archived.contains(&m2),
        "the archive copy remains"
    );
    let target = Target::Message(m2, MessageField::Archived);
    assert_eq!(outcome.value(&scenario, &target), Value::Bool(true));
    let alarm = &outcome.alarms[0];
    assert_eq!(alarm.first_fired_at, Some(10_000));
    // The alarm reads the depth at the expiry instant: cleared at 3d1h.
    let cleared: Vec<Millis> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::AlarmCleared)
        .map(|t| t.time)
        .collect();
    assert_eq!(cleared, [3 * D + H]);
    // At inspection (the default): both expire at the inspection, 7d1h;
    // archived all the same (time-driven in both modes).
    let (scenario, outcome) = sim(&text("at_inspection", "wait = \"7d\"\naction = \"hold\""));
    let m1 = msg(&scenario, &outcome, "m1");
    assert_eq!(m1.state, State::Expired);
    assert_eq!((outcome.totals.archived, outcome.totals.expired), (2, 2));
    let expired_at: Vec<Millis> = (outcome.transitions.iter())
        .filter(|t| t.detail.kind() == EventKind::Expired)
        .map(|t| t.time)
        .collect();
    assert_eq!(expired_at, [7 * D + H, 7 * D + H]);
    // An inspection at 2d12h: both archived, both still in quarantine and
    // redriven.
    let (scenario, outcome) = sim(&text(
        "continuous",
        "wait = \"2d11h\"\nrepair = true\naction = \"redrive_all\"",
    ));
    assert_eq!(outcome.totals.archived, 2);
    assert_eq!(outcome.totals.expired, 0);
    assert_eq!(msg(&scenario, &outcome, "m1").state, State::Acked);
    // Continuous expiry needs a retention; an archive comes before it.
    for (bad, says) in [
        (
            "[quarantine]\nexpiry = \"continuous\"\n",
            "needs a `retention`",
        ),
        (
            "[quarantine]\nretention = \"1d\"\narchive_after = \"1d\"\n",
            "below the quarantine's `retention`",
        ),
    ] {
        let file = format!(
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n{bad}[[message]]\nid = \"a\"\n"
        );
        refused(&file, says);
    }
}
