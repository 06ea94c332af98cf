//! docs/model.md sections 17 (visibility timeout) and 18 (write-intent
//! idempotency, consumer crashes), with decisions 22.1-22.3 and 22.7-22.11.

use super::*;

fn reason_of(scenario: &Scenario, state: MessageState) -> String {
    state
        .last_reason()
        .map_or(String::new(), |r| scenario.reasons[r as usize].clone())
}

const SLOW: &str = "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n\
                    visibility_timeout = \"30s\"\n[workers]\ncount = 2\nservice_time = \"1m\"\n";

#[test]
fn s17_a_delivery_outliving_its_timeout_is_delivered_again_and_its_receipt_expires() {
    let (scenario, outcome) = sim(&format!("{SLOW}[[message]]\nid = \"a\"\n"));
    // Each delivery is overtaken 30s after its start; the third
    // becoming visible again exhausts the budget of 3 (decision 22.8).
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 30_000, 60_000]);
    let visible = times(&scenario, &outcome, "a", EventKind::VisibleAgain);
    assert_eq!(visible, [30_000, 60_000, 90_000]);
    let expired = times(&scenario, &outcome, "a", EventKind::ReceiptExpired);
    assert_eq!(expired, [60_000, 90_000, 120_000]);
    let a = msg(&scenario, &outcome, "a");
    assert_eq!(a.state, State::Quarantined);
    assert_eq!(a.last_quarantined_at(), Some(90_000));
    assert_eq!(reason_of(&scenario, a), "visibility timeout");
    let t = outcome.totals;
    assert_eq!((t.effects, t.duplicated_effects), (3, 2));
    assert_eq!((t.concurrent_deliveries, t.expired_receipts), (2, 3));
    // The superseded ends count for the drain moment and the end.
    assert_eq!((t.drain_time, t.end_time), (120_000, 120_000));
}

#[test]
fn d22_7_a_delivery_ending_exactly_at_its_timeout_ended_in_time() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\nvisibility_timeout = \"30s\"\n\
         [workers]\ncount = 2\nservice_time = \"30s\"\n[[message]]\nid = \"a\"\n",
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0]);
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(30_000));
    let t = outcome.totals;
    assert_eq!((t.concurrent_deliveries, t.expired_receipts), (1, 0));
}

#[test]
fn s17_without_a_service_time_the_timeout_never_applies() {
    let base = "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\n";
    let file = "[[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 } }]\n";
    let (_, plain) = sim(&format!("{base}{file}"));
    let (_, timed) = sim(&format!("{base}visibility_timeout = \"1ms\"\n{file}"));
    assert_eq!(plain.transitions, timed.transitions);
    assert_eq!(timed.totals.expired_receipts, 0);
    assert_eq!(timed.totals.concurrent_deliveries, 1);
}

#[test]
fn d22_1_takes_without_workers_lets_a_timeout_overtake_a_delivery() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nretry_interval = \"10s\"\nvisibility_timeout = \"30s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ fail = { first = 1 }, takes = \"1m\" }]\n",
    );
    // The hanging first delivery is overtaken at 30s; the second (no
    // service time) acks at once; the first ends at 1m, superseded.
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 30_000]);
    assert_eq!(msg(&scenario, &outcome, "a").acked_at(), Some(30_000));
    let expired = times(&scenario, &outcome, "a", EventKind::ReceiptExpired);
    assert_eq!(expired, [60_000]);
    // A failure of a superseded delivery schedules nothing.
    assert!(times(&scenario, &outcome, "a", EventKind::RetryScheduled).is_empty());
    assert_eq!(outcome.totals.concurrent_deliveries, 2);
    assert_eq!(outcome.totals.end_time, 60_000);
}

#[test]
fn s17_a_message_visible_again_stays_its_groups_head() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 5\nretry_interval = \"10s\"\nvisibility_timeout = \"30s\"\n\
         ordering = \"fifo\"\n[workers]\ncount = 2\nservice_time = \"1s\"\n\
         [[message]]\nid = \"slow\"\nfaults = [{ fail = { first = 1 }, takes = \"45s\" }]\n\
         [[message]]\nid = \"behind\"\n",
    );
    // slow is visible again at 30s and delivered again by the free
    // worker, ahead of `behind`, which waits for slow's ack at 31s.
    assert_eq!(deliveries_of(&scenario, &outcome, "slow"), [0, 30_000]);
    assert_eq!(deliveries_of(&scenario, &outcome, "behind"), [31_000]);
    assert_eq!(msg(&scenario, &outcome, "behind").acked_at(), Some(32_000));
    // The first delivery's failure at 45s reaches nobody.
    let slow = msg(&scenario, &outcome, "slow");
    assert_eq!((slow.state, slow.acked_at()), (State::Acked, Some(31_000)));
    assert_eq!(outcome.totals.expired_receipts, 1);
}

#[test]
fn s17_the_current_delivery_ending_while_visible_again_decides() {
    // One worker: slow becomes visible at 30s but the worker is busy
    // until its own delivery fails at 45s; that delivery is still
    // current, so its failure schedules the retry (the message leaves
    // the ready set).
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 5\nretry_interval = \"10s\"\nvisibility_timeout = \"30s\"\n\
         [workers]\ncount = 1\nservice_time = \"1s\"\n\
         [[message]]\nid = \"slow\"\nfaults = [{ fail = { first = 1 }, takes = \"45s\" }]\n",
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "slow"), [0, 55_000]);
    let retries = retry_delays(&scenario, &outcome, "slow");
    assert_eq!(retries, [10_000]);
    assert_eq!(outcome.totals.expired_receipts, 0);
    assert_eq!(outcome.totals.max_queue_depth, 1);
}

#[test]
fn d22_8_a_crash_counts_toward_the_budget_and_quarantines_when_visible() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 2\nretry_interval = \"1h\"\nvisibility_timeout = \"10s\"\n\
         [workers]\ncount = 1\nservice_time = \"1s\"\n[[message]]\nid = \"a\"\n\
         faults = [{ crash = { first = 5 }, at = \"after_effect\" }]\n",
    );
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 10_000]);
    let crashed = times(&scenario, &outcome, "a", EventKind::Crashed);
    assert_eq!(crashed, [1_000, 11_000]);
    let a = msg(&scenario, &outcome, "a");
    assert_eq!(
        (a.state, a.last_quarantined_at()),
        (State::Quarantined, Some(20_000))
    );
    assert_eq!(reason_of(&scenario, a), "consumer crashed");
    let t = outcome.totals;
    assert_eq!((t.crashes, t.effects, t.expired_receipts), (2, 2, 0));
    // Nothing is pending once the message is quarantined at 20s.
    assert_eq!((t.drain_time, t.end_time), (20_000, 20_000));
}

const SEED: &str = "[delivery]\nmax_receives = 5\nretry_interval = \"10m\"\n\
                    [workers]\ncount = 1\nservice_time = \"1s\"\n\
                    [dedup]\nmode = \"write_intent\"\nlease = \"15m\"\nresult_retention = \"1h\"\n\
                    [[message]]\nid = \"w\"\nfaults = [{ crash = { first = 1 }, at = \"after_effect\" }]\n";

#[test]
fn s18_the_seeds_demonstration_a_crash_after_the_effect_then_contention_then_a_second_effect() {
    let (scenario, outcome) = sim(SEED);
    // Without a timeout the crash fails the delivery at its end.
    assert_eq!(times(&scenario, &outcome, "w", EventKind::Crashed), [1_000]);
    assert_eq!(
        deliveries_of(&scenario, &outcome, "w"),
        [0, 601_000, 1_202_000]
    );
    // At 10m1s the lease (until 15m) is live: contention, no effect.
    let contention = times(&scenario, &outcome, "w", EventKind::Contention);
    assert_eq!(contention, [601_000]);
    // At 20m2s it has expired: a second effect for one intent.
    let committed = times(&scenario, &outcome, "w", EventKind::Committed);
    assert_eq!(committed, [0, 1_202_000]);
    let done = times(&scenario, &outcome, "w", EventKind::DoneRecorded);
    assert_eq!(done, [1_203_000]);
    let t = outcome.totals;
    assert_eq!(
        (t.effects, t.duplicated_effects, t.contentions, t.crashes),
        (2, 1, 1, 1)
    );
    let w = msg(&scenario, &outcome, "w");
    assert_eq!(reason_of(&scenario, w), "in flight elsewhere");
}

#[test]
fn s18_with_a_timeout_a_crash_leaves_the_message_invisible_until_it_passes() {
    let text = SEED.replace(
        "retry_interval = \"10m\"",
        "retry_interval = \"10m\"\nvisibility_timeout = \"5m\"",
    );
    let (scenario, outcome) = sim(&text);
    // Visible again at 5m (no retry delay: the broker learned nothing);
    // the lease is live then: contention, a failure that retries 10m
    // after its end; at 15m1s the lease has expired.
    assert_eq!(
        deliveries_of(&scenario, &outcome, "w"),
        [0, 300_000, 901_000]
    );
    assert_eq!(
        times(&scenario, &outcome, "w", EventKind::VisibleAgain),
        [300_000]
    );
    assert_eq!(retry_delays(&scenario, &outcome, "w"), [600_000]);
    assert_eq!(outcome.totals.effects, 2);
}

#[test]
fn s18_renewal_keeps_a_slow_claim_and_without_it_a_second_delivery_claims_again() {
    let file = |renew: &str| {
        format!(
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\nvisibility_timeout = \"15s\"\n\
             [workers]\ncount = 2\nservice_time = \"20s\"\n\
             [dedup]\nmode = \"write_intent\"\nlease = \"10s\"\n{renew}result_retention = \"1h\"\n\
             [[message]]\nid = \"a\"\n"
        )
    };
    // Renewed every 4s: the claim lasts until 0 + floor(20 / 4) * 4 + 10.
    let (scenario, outcome) = sim(&file("renew = \"4s\"\n"));
    let m = scenario.find_message("a");
    let claims: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.message == m)
        .filter_map(|t| match t.detail {
            Detail::Claimed { lease_expires, .. } => Some((t.time, lease_expires)),
            _ => None,
        })
        .collect();
    assert_eq!(claims, [(0, 30_000)]);
    let t = outcome.totals;
    assert_eq!((t.effects, t.contentions, t.expired_receipts), (1, 1, 2));
    // The superseded first delivery still writes DONE at its end.
    assert_eq!(
        times(&scenario, &outcome, "a", EventKind::DoneRecorded),
        [20_000]
    );
    // Without renewal the lease lapses at 10s, under the slow delivery.
    let (_, outcome) = sim(&file(""));
    assert_eq!((outcome.totals.effects, outcome.totals.contentions), (2, 0));
    assert_eq!(outcome.totals.duplicated_effects, 1);
}

#[test]
fn d22_11_a_lease_is_live_strictly_before_it_expires() {
    let file = |retry: &str| {
        format!(
            "[delivery]\nmax_receives = 5\nretry_interval = \"{retry}\"\n\
             [dedup]\nmode = \"write_intent\"\nlease = \"10s\"\n\
             [[message]]\nid = \"a\"\nfaults = [{{ crash = {{ first = 1 }}, at = \"before_effect\" }}]\n"
        )
    };
    // The crash before the effect leaves its claim (until 10s).
    let (scenario, outcome) = sim(&file("10s"));
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 10_000]);
    assert_eq!(outcome.totals.contentions, 0);
    assert_eq!(outcome.totals.effects, 1);
    let (scenario, outcome) = sim(&file("9s"));
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 9_000, 18_000]);
    assert_eq!(outcome.totals.contentions, 1);
    assert_eq!(outcome.totals.effects, 1);
}

#[test]
fn s18_a_refused_call_leaves_its_intent_until_the_lease_expires() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 10\nretry_interval = \"1s\"\n[downstream]\nlimit = 1\n\
         [dedup]\nmode = \"write_intent\"\nlease = \"5s\"\n\
         [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n",
    );
    // b claims at 0, its call is refused (a took the window's one call);
    // the INTENT blocks b's own retries until 5s.
    assert_eq!(
        deliveries_of(&scenario, &outcome, "b"),
        [0, 1_000, 2_000, 3_000, 4_000, 5_000]
    );
    assert_eq!(
        times(&scenario, &outcome, "b", EventKind::Contention).len(),
        4
    );
    assert_eq!(
        times(&scenario, &outcome, "b", EventKind::Committed),
        [5_000]
    );
    assert_eq!(outcome.totals.throttled, 1);
}

#[test]
fn d22_2_a_crash_decides_only_when_listed_before_an_applying_lose_ack() {
    let file = |faults: &str| {
        format!(
            "[delivery]\nmax_receives = 3\nretry_interval = \"1s\"\n\
             [[message]]\nid = \"a\"\nfaults = [{faults}]\n"
        )
    };
    let crash = "{ crash = { first = 1 }, at = \"after_effect\" }";
    let lose = "{ lose_ack = { first = 1 } }";
    let (scenario, outcome) = sim(&file(&format!("{lose}, {crash}")));
    assert_eq!(outcome.totals.crashes, 0);
    assert_eq!(times(&scenario, &outcome, "a", EventKind::AckLost), [0]);
    let (scenario, outcome) = sim(&file(&format!("{crash}, {lose}")));
    assert_eq!(outcome.totals.crashes, 1);
    assert!(times(&scenario, &outcome, "a", EventKind::AckLost).is_empty());
    // A fail listed before the crash decides.
    let fail = "{ fail = { first = 1 }, reason = \"boom\" }";
    let (scenario, outcome) = sim(&file(&format!("{fail}, {crash}")));
    assert_eq!(outcome.totals.crashes, 0);
    assert_eq!(outcome.totals.effects, 1);
    assert_eq!(deliveries_of(&scenario, &outcome, "a"), [0, 1_000]);
}

#[test]
fn d22_10_a_crash_is_a_receive_that_first_counts() {
    let (scenario, outcome) = sim("[delivery]\nmax_receives = 5\nretry_interval = \"1s\"\n\
         [[message]]\nid = \"a\"\nfaults = [{ crash = { first = 2 }, at = \"before_effect\" }]\n");
    let a = msg(&scenario, &outcome, "a");
    assert_eq!((a.total_receives, a.effects, a.state), (3, 1, State::Acked));
    assert_eq!(outcome.totals.crashes, 2);
    assert_eq!(reason_of(&scenario, a), "consumer crashed");
}

#[test]
fn s18_a_crash_after_done_records_done_so_the_redelivery_is_a_hit() {
    let file = |at: &str| {
        format!(
            "[delivery]\nmax_receives = 5\nretry_interval = \"1s\"\n\
             [dedup]\nmode = \"write_intent\"\nlease = \"1h\"\n\
             [[message]]\nid = \"a\"\nfaults = [{{ crash = {{ first = 1 }}, at = \"{at}\" }}]\n"
        )
    };
    let (_, outcome) = sim(&file("after_done"));
    let t = outcome.totals;
    assert_eq!((t.effects, t.dedup_hits, t.contentions), (1, 1, 0));
    // After the effect but before DONE: the claim blocks for its hour,
    // four retries of contention exhaust the budget of 5.
    let (scenario, outcome) = sim(&file("after_effect"));
    let t = outcome.totals;
    assert_eq!((t.effects, t.dedup_hits, t.contentions), (1, 0, 4));
    assert_eq!(msg(&scenario, &outcome, "a").state, State::Quarantined);
}

#[test]
fn s18_in_result_mode_a_crash_after_the_effect_stores_the_result() {
    let (_, outcome) = sim(
        "[delivery]\nmax_receives = 5\nretry_interval = \"1s\"\n[dedup]\n\
         [[message]]\nid = \"a\"\nfaults = [{ crash = { first = 1 }, at = \"after_effect\" }]\n",
    );
    let t = outcome.totals;
    assert_eq!((t.effects, t.dedup_hits, t.crashes, t.acked), (1, 1, 1, 1));
}
