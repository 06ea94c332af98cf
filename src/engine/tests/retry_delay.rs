//! Section 4: the retry delay.

use super::*;
use rand::SeedableRng;

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

#[test]
fn a_zero_base_stays_zero_however_many_failures() {
    // 2^(n-1) overflows after 64 failures; 0 times anything is still 0.
    let (scenario, outcome) = backoff_run("{ base = \"0s\" }", 70, 0);
    let delays = retry_delays(&scenario, &outcome, "m");
    assert_eq!(delays.len(), 69);
    assert!(delays.iter().all(|&d| d == 0), "{delays:?}");
    // A non-zero base saturates instead of wrapping.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut message = MessageState::new();
    let delay = |base: Millis, n: u32, message: &mut MessageState, rng: &mut _| {
        message.cycle_receives = n;
        let retry = Retry::Backoff {
            base,
            cap: None,
            jitter: Jitter::None,
        };
        backoff::retry_delay(retry, message.cycle_receives, None, rng)
    };
    assert_eq!(delay(1, 64, &mut message, &mut rng), 1 << 63);
    assert_eq!(delay(3, 64, &mut message, &mut rng), Millis::MAX);
    assert_eq!(delay(1, 65, &mut message, &mut rng), Millis::MAX);
    assert_eq!(delay(0, 65, &mut message, &mut rng), 0);
}

/// 28.3's worked example: a retry budget by elapsed time since the
/// cycle's first delivery. A retry due past it is not scheduled: the
/// message is quarantined at the failure, keeping its reason, and the
/// delay is not paid; a retry due exactly at the budget's end is.
#[test]
fn s28_3_a_retry_due_past_max_elapsed_quarantines_instead() {
    let text = |budget: &str, rest: &str| {
        format!(
            "[delivery]\nmax_receives = 10\nbackoff = {{ base = \"1s\" }}\nmax_elapsed = \"{budget}\"\n\
             [[message]]\nid = \"m\"\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n{rest}"
        )
    };
    // 0 (d 1s), 1s (2s), 3s (4s), 7s (8s), 15s (16s: due 31s > 20s).
    let (scenario, outcome) = sim(&text("20s", ""));
    let m = msg(&scenario, &outcome, "m");
    assert_eq!((m.state, m.total_receives), (State::Quarantined, 5));
    assert_eq!(m.last_quarantined_at(), Some(15_000));
    assert_eq!(outcome.totals.retry_delay_paid, 15_000);
    assert_eq!(outcome.totals.elapsed_exhausted, 1);
    assert_eq!(
        scenario.reasons[m.last_reason().unwrap() as usize],
        "handler error",
        "the last failure's reason"
    );
    let index = scenario.find_message("m").unwrap();
    assert_eq!(
        outcome.envelope_value(&scenario, index, EnvelopeField::DeadLetterCause),
        Value::Text("max_elapsed".into()),
        "28.2's cause"
    );
    let quarantined = outcome
        .transitions
        .iter()
        .find(|t| t.detail.kind() == EventKind::Quarantined)
        .unwrap();
    assert_eq!(
        crate::words::sentence::describe(&scenario, &quarantined.detail),
        "quarantined: handler error (transient); DLQ depth 1; \
         max_elapsed 20s: next retry due at 31s (31s after the cycle began)"
    );
    // 31s: the retry due at 31s is scheduled; at 31s d = 32s, due 63s.
    let (scenario, outcome) = sim(&text("31s", ""));
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(
        (m.total_receives, m.last_quarantined_at()),
        (6, Some(31_000))
    );
    assert_eq!(outcome.totals.retry_delay_paid, 31_000);
    // A redrive starts a new cycle and a new budget.
    let step = "[[operator]]\nwait = \"29s\"\naction = \"redrive_all\"\n";
    let (scenario, outcome) = sim(&text("31s", step));
    let m = msg(&scenario, &outcome, "m");
    assert_eq!((m.cycle, m.cycle_receives), (2, 6));
    assert_eq!(m.last_quarantined_at(), Some(91_000));
    assert_eq!(outcome.totals.elapsed_exhausted, 2);
    // Without the key nothing changes: ten receives.
    let plain = "[delivery]\nmax_receives = 10\nbackoff = { base = \"1s\" }\n\
                 [[message]]\nid = \"m\"\nfaults = [{ fail = { until = \"repair\" } }]\n";
    let (scenario, outcome) = sim(plain);
    assert_eq!(msg(&scenario, &outcome, "m").total_receives, 10);
    assert_eq!(outcome.totals.elapsed_exhausted, 0);
}

/// 28.3 under sqs-standard: the retry is the visibility timeout's end,
/// and the same budget applies to it.
#[test]
fn s28_3_max_elapsed_budgets_a_visibility_timeout_retry() {
    let (scenario, outcome) = sim(
        "[delivery]\nprofile = \"sqs-standard\"\nmax_receives = 10\n\
         visibility_timeout = \"10s\"\nmax_elapsed = \"25s\"\n\
         [[message]]\nid = \"m\"\nfaults = [{ fail = { until = \"repair\" } }]\n",
    );
    // Deliveries at 0s, 10s, 20s; the next would be due at 30s > 25s.
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(
        (m.total_receives, m.last_quarantined_at()),
        (3, Some(20_000))
    );
    assert_eq!(outcome.totals.elapsed_exhausted, 1);
}

/// 28.3 under nats-jetstream: a nak's redelivery is checked when it comes
/// due, and past the budget the message is given up then.
#[test]
fn s28_3_max_elapsed_gives_up_a_jetstream_redelivery_when_it_comes_due() {
    let (scenario, outcome) = sim("[delivery]\nprofile = \"nats-jetstream\"\n\
         max_receives = \"unlimited\"\nretry_interval = \"1s\"\nmax_elapsed = \"2s\"\n\
         [[message]]\nid = \"m\"\nfaults = [{ fail = { until = \"repair\" } }]\n");
    // Deliveries at 0s, 1s, 2s; the redelivery due at 3s is past 2s.
    let m = msg(&scenario, &outcome, "m");
    assert_eq!(
        (m.total_receives, m.last_quarantined_at()),
        (3, Some(3_000))
    );
    assert_eq!(outcome.totals.elapsed_exhausted, 1);
}
