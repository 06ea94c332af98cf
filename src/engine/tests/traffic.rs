//! docs/model.md section 11 (traffic at scale) and decisions 16.1-16.2.

use super::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const D: &str = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n";

fn arrivals(scenario: &Scenario, outcome: &Outcome, prefix: &str, count: u64) -> Vec<Millis> {
    (1..=count)
        .map(|j| arrived(scenario, outcome, &format!("{prefix}{j}")).unwrap())
        .collect()
}

/// Block k's stream, drawn here independently of the engine.
fn stream(seed: u64, k: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(k);
    rng
}

#[test]
fn s11_even_arrivals_start_at_start() {
    let (scenario, outcome) = sim(&format!(
        "{D}[[traffic]]\ncount = 4\nstart = \"5s\"\nover = \"2s\"\nid_prefix = \"e\"\n"
    ));
    assert_eq!(
        arrivals(&scenario, &outcome, "e", 4),
        [5_000, 5_500, 6_000, 6_500]
    );
}

#[test]
fn s11_poisson_offsets_are_drawn_uniformly_then_sorted() {
    let text = format!(
        "[scenario]\nseed = 42\n{D}[[traffic]]\ncount = 50\nstart = \"1s\"\nover = \"10s\"\n\
         arrival = \"poisson\"\nid_prefix = \"p\"\n"
    );
    let (scenario, outcome) = sim(&text);
    let mut rng = stream(42, 1);
    let mut expected: Vec<Millis> = (0..50)
        .map(|_| 1_000 + rng.random_range(0..10_000u64))
        .collect();
    expected.sort();
    assert_eq!(arrivals(&scenario, &outcome, "p", 50), expected);
}

#[test]
fn s11_each_block_has_its_own_stream_and_jitter_keeps_stream_0() {
    let jitter = "[delivery]\nmax_receives = 3\nbackoff = { base = \"1s\", jitter = \"full\" }\n\
                  [[message]]\nid = \"j\"\nfaults = [{ fail = { first = 2 } }]\n";
    let poisson =
        "[[traffic]]\ncount = 20\nover = \"1m\"\narrival = \"poisson\"\nid_prefix = \"a\"\n";
    let other = "[[traffic]]\ncount = 7\nover = \"1m\"\narrival = \"poisson\"\nid_prefix = \"b\"\n";
    let (s1, o1) = sim(&format!("{jitter}{poisson}"));
    let (s2, o2) = sim(&format!("{jitter}{poisson}{other}"));
    // Adding block 2 shifts neither block 1's arrivals nor the jitter.
    assert_eq!(arrivals(&s1, &o1, "a", 20), arrivals(&s2, &o2, "a", 20));
    assert_eq!(story(&s1, &o1, "j"), story(&s2, &o2, "j"));
    assert_eq!(o1.totals.retry_delay_paid, o2.totals.retry_delay_paid);
    // Block 2 draws from stream 2.
    let mut rng = stream(0, 2);
    let mut expected: Vec<Millis> = (0..7).map(|_| rng.random_range(0..60_000u64)).collect();
    expected.sort();
    assert_eq!(arrivals(&s2, &o2, "b", 7), expected);
}

#[test]
fn s11_mix_draws_follow_the_offsets_and_own_consecutive_ranges() {
    let text = format!(
        "[scenario]\nseed = 7\n{D}[[traffic]]\ncount = 40\nover = \"4s\"\narrival = \"poisson\"\n\
         id_prefix = \"m\"\n\
         [[traffic.mix]]\nname = \"slow\"\nshare = 0.25\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
         [[traffic.mix]]\nname = \"bad\"\nshare = 0.5\n\
         faults = [{{ fail = {{ until = \"repair\" }}, class = \"permanent\" }}]\n"
    );
    let (scenario, outcome) = sim(&text);
    let mut rng = stream(7, 1);
    for _ in 0..40 {
        let _: u64 = rng.random_range(0..4_000u64);
    }
    for j in 1..=40u64 {
        let u: u64 = rng.random_range(0..1_000_000u64);
        let want = if u < 250_000 {
            Some("slow")
        } else if u < 750_000 {
            Some("bad")
        } else {
            None
        };
        let m = scenario.find_message(&format!("m{j}")).unwrap();
        let kind = outcome
            .draws
            .kind(&scenario, m)
            .map(|k| scenario.kinds[k as usize].as_str());
        assert_eq!(kind, want, "m{j} drew {u}");
        let state = outcome.messages.state(m);
        assert_eq!(state == State::Acked, want.is_none(), "m{j}");
    }
}

#[test]
fn s11_a_kind_gets_its_faults_after_the_blocks_own() {
    let (scenario, outcome) = sim(&format!(
        "{D}[[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"k\"\n\
         faults = [{{ fail = {{ first = 1 }}, reason = \"block\" }}]\n\
         [[traffic.mix]]\nname = \"all\"\nshare = 1\nfaults = [{{ fail = {{ first = 1 }}, reason = \"kind\" }}]\n"
    ));
    for j in 1..=3 {
        let m = msg(&scenario, &outcome, &format!("k{j}"));
        assert_eq!(scenario.reasons[m.last_reason().unwrap() as usize], "block");
    }
}

#[test]
fn d16_2_widths_round_halves_away_from_zero() {
    // 0.0000005 * 1e6 = 0.5 rounds to 1: the kind owns the draw value 0.
    let (scenario, _) = sim(&format!(
        "{D}[[traffic]]\ncount = 1\nover = \"1s\"\n[[traffic.mix]]\nname = \"x\"\nshare = 0.0000005\n"
    ));
    assert_eq!(scenario.traffic[0].mix[0].width, 1);
    let (scenario, _) = sim(&format!(
        "{D}[[traffic]]\ncount = 1\nover = \"1s\"\n[[traffic.mix]]\nname = \"x\"\nshare = 0.02\n"
    ));
    assert_eq!(scenario.traffic[0].mix[0].width, 20_000);
}

#[test]
fn d16_1_even_arrivals_without_a_mix_draw_nothing() {
    // A block that draws nothing leaves the next block's stream alone
    // either way; and even arrivals with a mix draw only the mix.
    let mix = "[[traffic.mix]]\nname = \"x\"\nshare = 0.5\n";
    let (scenario, outcome) = sim(&format!(
        "{D}[[traffic]]\ncount = 10\nover = \"1s\"\nid_prefix = \"q\"\n{mix}"
    ));
    let mut rng = stream(0, 1);
    for j in 1..=10u64 {
        let u: u64 = rng.random_range(0..1_000_000u64);
        let m = scenario.find_message(&format!("q{j}")).unwrap();
        assert_eq!(outcome.kind(&scenario, m).is_some(), u < 500_000);
    }
}

#[test]
fn s11_kind_expectations_count_the_kinds_messages() {
    let (scenario, outcome) = sim(&format!(
        "{D}[[traffic]]\ncount = 100\nover = \"10s\"\nid_prefix = \"t\"\n\
         [[traffic.mix]]\nname = \"poison\"\nshare = 0.1\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n\
         [[traffic]]\ncount = 100\nover = \"10s\"\nid_prefix = \"u\"\n\
         [[traffic.mix]]\nname = \"poison\"\nshare = 0.1\nfaults = [{{ fail = {{ until = \"repair\" }} }}]\n"
    ));
    // One name in two blocks is one kind.
    assert_eq!(scenario.kinds, ["poison"]);
    let count = |f| outcome.kind_count(0, f);
    let poisoned = outcome
        .messages
        .iter()
        .filter(|m| m.state == State::Quarantined)
        .count() as u64;
    assert!(poisoned > 0);
    assert_eq!(count(KindField::Messages), poisoned);
    assert_eq!(count(KindField::Quarantined), poisoned);
    assert_eq!(count(KindField::Acked), 0);
    assert_eq!(count(KindField::Deliveries), poisoned);
}

#[test]
fn s11_arrivals_in_message_order_equal_each_messages_arrival() {
    // Explicit messages, even blocks whose spacing has a remainder (and one
    // spacing below a millisecond), a Poisson block and an empty block.
    let (scenario, outcome) = sim(&format!(
        "[scenario]\nseed = 9\n{D}[[message]]\nid = \"x\"\nat = \"3s\"\n[[message]]\nid = \"y\"\n\
         [[traffic]]\ncount = 7\nstart = \"1s\"\nover = \"10s\"\nid_prefix = \"a\"\n\
         [[traffic]]\ncount = 13\nover = \"5ms\"\nid_prefix = \"b\"\n\
         [[traffic]]\ncount = 0\nover = \"1s\"\nid_prefix = \"c\"\n\
         [[traffic]]\ncount = 20\nstart = \"2s\"\nover = \"1h\"\narrival = \"poisson\"\nid_prefix = \"d\"\n\
         [[traffic]]\ncount = 3\nover = \"3ms\"\nid_prefix = \"e\"\n"
    ));
    let each: Vec<Millis> = (0..outcome.messages.len() as MessageIndex)
        .map(|m| outcome.draws.arrival(&scenario, m))
        .collect();
    let walked: Vec<Millis> = outcome.draws.arrivals(&scenario).collect();
    assert_eq!(walked, each);
    // Driven by `fold` (each block's walk in one loop), as the latency
    // measures drive it.
    let mut folded = Vec::new();
    outcome
        .draws
        .arrivals(&scenario)
        .for_each(|at| folded.push(at));
    assert_eq!(folded, each);
    assert_eq!(each.len(), 2 + 7 + 13 + 20 + 3);
    // Every message was acked (one delivery each, no faults): the
    // latencies are those of each message in turn.
    let latencies: Vec<(MessageIndex, Millis)> = outcome.latencies(&scenario).collect();
    let expected: Vec<(MessageIndex, Millis)> = (0..each.len() as MessageIndex)
        .map(|m| (m, outcome.latency(&scenario, m).unwrap()))
        .collect();
    assert_eq!(latencies, expected);
}
