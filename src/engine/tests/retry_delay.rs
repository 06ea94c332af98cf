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
