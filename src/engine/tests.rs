//! One test per rule of model.md sections 1-6 and decision of section 10.
//! Each builds a small scenario, runs it with every transition recorded,
//! and asserts what the rule says must happen.

use super::*;
use crate::model::*;
use crate::scenario::load_str;
use census::CENSUS_STEPS;
use rand::RngExt;

fn sim(text: &str) -> (Scenario, Outcome) {
    let (scenario, _) = match load_str("test.toml", text) {
        Ok(ok) => ok,
        Err(inv) => panic!(
            "invalid test scenario: {:?}",
            inv.problems
                .iter()
                .map(|p| p.message.clone())
                .collect::<Vec<_>>()
        ),
    };
    let outcome = run(&scenario, Recorder::All).expect("run finishes");
    (scenario, outcome)
}

fn msg<'a>(scenario: &Scenario, outcome: &'a Outcome, id: &str) -> &'a MessageState {
    &outcome.messages[scenario.find_message(id).expect("message exists") as usize]
}

/// (time, kind) of a message's transitions.
fn story(scenario: &Scenario, outcome: &Outcome, id: &str) -> Vec<(Millis, EventKind)> {
    let m = scenario.find_message(id);
    outcome
        .transitions
        .iter()
        .filter(|t| t.message == m)
        .map(|t| (t.time, t.detail.kind()))
        .collect()
}

fn deliveries_of(scenario: &Scenario, outcome: &Outcome, id: &str) -> Vec<Millis> {
    story(scenario, outcome, id)
        .into_iter()
        .filter(|(_, k)| *k == EventKind::Delivered)
        .map(|(t, _)| t)
        .collect()
}

fn retry_delays(scenario: &Scenario, outcome: &Outcome, id: &str) -> Vec<Millis> {
    let m = scenario.find_message(id);
    outcome
        .transitions
        .iter()
        .filter(|t| t.message == m)
        .filter_map(|t| match t.detail {
            Detail::RetryScheduled { delay, .. } => Some(delay),
            _ => None,
        })
        .collect()
}

fn reason(scenario: &Scenario, state: &MessageState) -> String {
    state
        .last_reason()
        .map(|r| scenario.reasons[r as usize].clone())
        .unwrap_or_default()
}

const DELIVERY: &str = "[delivery]\nmax_receives = 2\nretry_interval = \"10s\"\n";

/// The four-message fixture with the acceptance baseline, plus `extra`
/// tables and the given operator step.
fn fixture(delivery: &str, extra: &str, operator: &str) -> String {
    format!(
        r#"{delivery}
{extra}
{operator}
[[message]]
id = "healthy"
[[message]]
id = "transient"
faults = [{{ fail = {{ first = 2 }}, reason = "upstream timeout" }}]
[[message]]
id = "poison"
faults = [{{ fail = {{ until = "repair" }}, reason = "schema", class = "permanent" }}]
[[message]]
id = "uncertain"
faults = [{{ lose_ack = {{ until = "repair" }} }}]
"#
    )
}

const BASE_EXTRA: &str =
    "[quarantine]\nretention = \"120s\"\n[dedup]\nresult_retention = \"60s\"\n";
const BASE_OP: &str = "[[operator]]\nwait = \"30s\"\nrepair = true\naction = \"redrive_all\"\n";

// ---- Section 1: time and order ----

#[test]
fn arrival_at_t_runs_before_a_retry_due_at_t() {
    let (scenario, outcome) = sim(&format!(
        "{DELIVERY}[[message]]\nid = \"a\"\nfaults = [{{ fail = {{ first = 1 }} }}]\n[[message]]\nid = \"b\"\nat = \"10s\"\n"
    ));
    let at_10: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.time == 10_000 && t.detail.kind() == EventKind::Delivered)
        .map(|t| scenario.message_id(t.message.unwrap()).into_owned())
        .collect();
    assert_eq!(at_10, ["b", "a"]);
}

#[test]
fn initial_deliveries_run_in_time_then_file_order() {
    let (scenario, outcome) = sim(&format!(
        "{DELIVERY}[[message]]\nid = \"late\"\nat = \"1s\"\n[[message]]\nid = \"first\"\n[[message]]\nid = \"second\"\n"
    ));
    let order: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == EventKind::Delivered)
        .map(|t| scenario.message_id(t.message.unwrap()).into_owned())
        .collect();
    assert_eq!(order, ["first", "second", "late"]);
}

#[test]
fn the_rng_is_chacha8_pinned() {
    // Changing the generator or the draw method changes golden outputs.
    // The published vector for ChaCha8 seeded with 42 (32-bit draws) ...
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let draws: Vec<i32> = (0..3).map(|_| rng.random_range(0..1000)).collect();
    assert_eq!(draws, [224, 681, 146]);
    // ... and the 64-bit draws the engine makes, pinned with rand 0.10.0.
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let draws: Vec<u64> = (0..3).map(|_| rng.random_range(0..1000u64)).collect();
    assert_eq!(draws, [681, 950, 427]);
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let text = |seed: u64| {
        format!(
            "[scenario]\nseed = {seed}\n[delivery]\nmax_receives = 6\nbackoff = {{ base = \"1s\", cap = \"1m\", jitter = \"full\" }}\n[[traffic]]\ncount = 50\nover = \"1s\"\nfaults = [{{ fail = {{ first = 5 }} }}]\n"
        )
    };
    let (_, a) = sim(&text(1));
    let (_, b) = sim(&text(1));
    let (_, c) = sim(&text(2));
    assert_eq!(a.transitions, b.transitions);
    assert_ne!(a.totals.retry_delay_paid, c.totals.retry_delay_paid);
}

// ---- Section 2: keys, effects, ledger ----

#[test]
fn duplicated_effects_count_per_intent_across_messages() {
    let (_, outcome) = sim(&format!(
        "{DELIVERY}[[message]]\nid = \"a\"\nkey = \"order-1\"\n[[message]]\nid = \"b\"\nkey = \"order-1\"\n[[message]]\nid = \"c\"\n"
    ));
    assert_eq!(outcome.totals.effects, 3);
    assert_eq!(outcome.totals.duplicated_effects, 1);
    assert_eq!(outcome.ledger.len(), 3);
    assert_eq!(outcome.ledger[1].intent, outcome.ledger[0].intent);
}

#[test]
fn the_ledger_is_never_rolled_back() {
    let (_, outcome) = sim(&fixture(
        DELIVERY,
        "[quarantine]\nretention = \"10s\"\n",
        "[[operator]]\nwait = \"30s\"\naction = \"purge\"\n",
    ));
    // uncertain committed twice (no dedup), then expired: its effects stay.
    assert_eq!(outcome.totals.expired, 3);
    assert_eq!(outcome.totals.effects, 3);
    assert_eq!(outcome.ledger.len(), 3);
}

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
    assert_eq!(m.quarantined_at(), Some(10_000));
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

// ---- Section 4: retry delay ----

fn backoff_run(backoff: &str, receives: u32, seed: u64) -> (Scenario, Outcome) {
    sim(&format!(
        "[scenario]\nseed = {seed}\n[delivery]\nmax_receives = {receives}\nbackoff = {backoff}\n\
         [[message]]\nid = \"m\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n"
    ))
}

#[test]
fn exponential_backoff_doubles_and_caps() {
    let (scenario, outcome) = backoff_run("{ base = \"1s\", cap = \"5s\" }", 6, 0);
    assert_eq!(
        retry_delays(&scenario, &outcome, "m"),
        [1_000, 2_000, 4_000, 5_000, 5_000]
    );
    assert_eq!(outcome.totals.retry_delay_paid, 17_000);
    let (scenario, outcome) = backoff_run("{ base = \"1s\" }", 6, 0);
    assert_eq!(
        retry_delays(&scenario, &outcome, "m"),
        [1_000, 2_000, 4_000, 8_000, 16_000]
    );
}

#[test]
fn fixed_interval_is_the_same_every_time() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 4\nretry_interval = \"250ms\"\n[[message]]\nid = \"m\"\nfaults = [{ fail = { first = 9 } }]\n",
    );
    assert_eq!(retry_delays(&scenario, &outcome, "m"), [250, 250, 250]);
}

#[test]
fn full_jitter_draws_from_zero_to_the_exponential_delay() {
    for seed in 0..20 {
        let (scenario, outcome) = backoff_run(
            "{ base = \"1s\", cap = \"8s\", jitter = \"full\" }",
            6,
            seed,
        );
        let caps = [1_000, 2_000, 4_000, 8_000, 8_000];
        for (d, cap) in retry_delays(&scenario, &outcome, "m").iter().zip(caps) {
            assert!(*d <= cap, "seed {seed}: {d} > {cap}");
        }
    }
    // Exactly the engine's draw: uniform{0..=1000} then {0..=2000} from ChaCha8(3).
    let (scenario, outcome) = backoff_run("{ base = \"1s\", jitter = \"full\" }", 3, 3);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let expected = [
        rng.random_range(0..=1_000u64),
        rng.random_range(0..=2_000u64),
    ];
    assert_eq!(retry_delays(&scenario, &outcome, "m"), expected);
}

#[test]
fn equal_jitter_keeps_half_and_draws_the_other_half() {
    let (scenario, outcome) = backoff_run("{ base = \"1s\", jitter = \"equal\" }", 4, 5);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let expected: Vec<u64> = [1_000u64, 2_000, 4_000]
        .iter()
        .map(|d| d / 2 + rng.random_range(0..=d / 2))
        .collect();
    assert_eq!(retry_delays(&scenario, &outcome, "m"), expected);
    for (d, e) in expected.iter().zip([1_000u64, 2_000, 4_000]) {
        assert!(*d >= e / 2 && *d <= e);
    }
}

#[test]
fn decorrelated_jitter_grows_from_the_previous_delay_and_caps() {
    let (scenario, outcome) = backoff_run(
        "{ base = \"1s\", cap = \"10s\", jitter = \"decorrelated\" }",
        8,
        11,
    );
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut previous = 1_000u64;
    let mut expected = Vec::new();
    for _ in 0..7 {
        let d = rng.random_range(1_000..=previous * 3).min(10_000);
        expected.push(d);
        previous = d;
    }
    assert_eq!(retry_delays(&scenario, &outcome, "m"), expected);
}

#[test]
fn the_backoff_exponent_restarts_on_redrive() {
    let (scenario, outcome) = sim(
        "[delivery]\nmax_receives = 3\nbackoff = { base = \"1s\" }\n[[operator]]\naction = \"redrive_all\"\n\
         [[message]]\nid = \"m\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    );
    assert_eq!(
        retry_delays(&scenario, &outcome, "m"),
        [1_000, 2_000, 1_000, 2_000]
    );
}

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
    assert_eq!(p.quarantined_at(), Some(50_000));
    assert_eq!(p.quarantine_entries, 2);
    assert_eq!(outcome.totals.end_time, 50_000);
}

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
    assert_eq!(t.quarantined_at(), Some(10_000));
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
    assert_eq!(scenario.arrival(scenario.find_message("g2").unwrap()), 333);
    assert_eq!(scenario.arrival(scenario.find_message("g3").unwrap()), 666);
    let order: Vec<_> = outcome
        .transitions
        .iter()
        .filter(|t| t.detail.kind() == EventKind::Delivered)
        .map(|t| scenario.message_id(t.message.unwrap()).into_owned())
        .collect();
    assert_eq!(order, ["x", "g1", "g2", "g3"]);
}

// ---- Limits and snapshots ----

#[test]
fn a_run_that_cannot_drain_stops_at_a_limit() {
    let (scenario, _) = load_str(
        "t.toml",
        "[delivery]\nmax_receives = 4000000000\nretry_interval = \"1s\"\n[limits]\nmax_events = 1000\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let err = run(&scenario, Recorder::Off).unwrap_err();
    assert_eq!(err.limit, Limit::Events(1000));
    assert_eq!(err.deliveries, 1000);
}

#[test]
fn a_run_past_max_time_stops() {
    let (scenario, _) = load_str(
        "t.toml",
        "[delivery]\nmax_receives = 100\nretry_interval = \"1h\"\n[limits]\nmax_time = \"10h\"\n\
         [[message]]\nid = \"p\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    )
    .unwrap();
    let err = run(&scenario, Recorder::Off).unwrap_err();
    assert_eq!(err.limit, Limit::Time(36_000_000));
}

#[test]
fn a_snapshot_at_t_includes_every_event_at_t() {
    let (scenario, _) = load_str("t.toml", &fixture(DELIVERY, BASE_EXTRA, BASE_OP)).unwrap();
    let outcome = run_until(&scenario, Recorder::All, 10_000).unwrap();
    assert!(!outcome.finished);
    assert_eq!(outcome.as_of, 10_000);
    assert_eq!(outcome.totals.quarantine_entries, 3);
    assert!(outcome.transitions.iter().all(|t| t.time <= 10_000));
    let outcome = run_until(&scenario, Recorder::All, 9_999).unwrap();
    assert_eq!(outcome.totals.quarantine_entries, 0);
    let p = &outcome.messages[scenario.find_message("poison").unwrap() as usize];
    assert_eq!(p.state, State::Pending);
}

#[test]
fn recording_does_not_change_the_run() {
    let (scenario, _) = load_str("t.toml", &fixture(DELIVERY, BASE_EXTRA, BASE_OP)).unwrap();
    let all = run(&scenario, Recorder::All).unwrap();
    let off = run(&scenario, Recorder::Off).unwrap();
    assert_eq!(all.totals, off.totals);
    assert_eq!(all.messages, off.messages);
    assert!(off.transitions.is_empty());
}

fn state_counts(outcome: &Outcome) -> [u64; STATE_COUNT] {
    let mut c = [0; STATE_COUNT];
    for message in &outcome.messages {
        c[message.state as usize] += 1;
    }
    c
}

#[test]
fn the_census_matches_a_snapshot_at_every_sample() {
    // Long enough (hours) that the census halves its resolution many times.
    let text = format!(
        "{}{}[[operator]]\nwait = \"2h\"\naction = \"redrive_all\"\nrepair = true\n\
         [[operator]]\nwait = \"1h\"\naction = \"purge\"\n\
         [[traffic]]\ncount = 300\nover = \"3h\"\nid_prefix = \"t-\"\n\
         faults = [{{ fail = {{ first = 1 }} }}]\n\
         [[outage]]\nfrom = \"1h\"\nduration = \"20m\"\n",
        DELIVERY, BASE_EXTRA
    );
    let (scenario, _) = load_str("t.toml", &fixture("", &text, "")).unwrap();
    let outcome = run_with_census(&scenario, Recorder::Off).unwrap();
    let c = outcome.census.as_ref().expect("census taken");
    assert!(c.step >= 10_000, "step {} did not grow", c.step);
    assert!(
        CENSUS_STEPS.contains(&c.step),
        "step {} is not readable",
        c.step
    );
    assert!(c.samples.len() < CENSUS_SAMPLES);
    assert!(c.samples.len() >= CENSUS_SAMPLES / 5);
    assert_eq!(c.end, outcome.totals.end_time);
    assert_eq!(c.last, state_counts(&outcome));
    assert_eq!(
        outcome.totals,
        run(&scenario, Recorder::Off).unwrap().totals
    );
    for k in (0..c.samples.len()).step_by(7) {
        let t = k as Millis * c.step;
        let at = run_until(&scenario, Recorder::Off, t).unwrap();
        assert_eq!(c.samples[k], state_counts(&at), "sample {k} at {t} ms");
        if t + c.step / 2 < c.end {
            assert_eq!(c.at(t + c.step / 2), c.samples[k]);
            assert_eq!(c.sample_time(t + c.step / 2), t);
        }
    }
    let total: u64 = c.samples[0].iter().sum();
    assert_eq!(total, outcome.totals.messages);
}

#[test]
fn census_steps_are_a_chain_of_multiples() {
    for w in CENSUS_STEPS.windows(2) {
        assert_eq!(w[1] % w[0], 0, "{} is not a multiple of {}", w[1], w[0]);
    }
    assert_eq!(census_step_after(86_400_000), 172_800_000);
    assert_eq!(census_step_after(3), 10);
}

#[test]
fn census_counts_are_indexed_by_state_all() {
    for (i, state) in State::ALL.into_iter().enumerate() {
        assert_eq!(state as usize, i, "{}", state.as_str());
    }
}
