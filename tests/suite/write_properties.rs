//! Property tests of one write to several sinks (model section 24) over
//! generated scenarios: without sink faults every strategy reaches the
//! sinks as section 19 does; an outbox never shows an upsert row twice;
//! tracked compensations never take an intent below zero; two-phase commit
//! leaves every write in every sink or in none.

use proptest::prelude::*;
use scenario_run::engine::{self, Outcome, Recorder};
use scenario_run::model::{Scenario, SinkField};
use scenario_run::scenario::load_str;

/// The three sink kinds, in this order in every generated file.
const SINKS: [(&str, &str); 3] = [
    ("rows", "upsert"),
    ("counts", "increment"),
    ("texts", "irreversible"),
];

/// One explicit message: arrival, maybe a shared key (k0..k3), and
/// faults counted by receive (never by time), so that its fate does not
/// depend on how long its calls take.
pub(crate) fn message(i: usize) -> impl Strategy<Value = String> {
    (
        0u64..20,
        proptest::option::of(0usize..4),
        proptest::option::of((1u32..4, any::<bool>())),
        proptest::option::of(1u32..3),
    )
        .prop_map(move |(at, key, fail, lose_ack)| {
            let mut faults = Vec::new();
            if let Some((first, permanent)) = fail {
                let class = if permanent { "permanent" } else { "transient" };
                faults.push(format!(
                    "{{ fail = {{ first = {first} }}, class = \"{class}\" }}"
                ));
            }
            if let Some(first) = lose_ack {
                faults.push(format!("{{ lose_ack = {{ first = {first} }} }}"));
            }
            let key = key.map_or(String::new(), |k| format!("key = \"k{k}\"\n"));
            format!(
                "[[message]]\nid = \"m{i}\"\nat = \"{at}s\"\n{key}faults = [{}]\n",
                faults.join(", ")
            )
        })
}

prop_compose! {
    /// `[delivery]` and the messages.
    fn traffic()(n in 1usize..9)(
        messages in (0..n).map(message).collect::<Vec<_>>(),
        receives in 1u32..5,
        retry in 1u64..5,
    ) -> String {
        format!(
            "[delivery]\nmax_receives = {receives}\nretry_interval = \"{retry}s\"\n{}",
            messages.concat()
        )
    }
}

/// A sink fault: `(lose_reply, selector)`.
fn sink_fault() -> impl Strategy<Value = (bool, String)> {
    let selector = prop_oneof![
        (1u32..4).prop_map(|n| format!("first = {n}")),
        (1u32..4).prop_map(|n| format!("every = {n}")),
        Just("intents = [\"m0\"]".to_string()),
    ];
    (any::<bool>(), selector)
}

/// Per sink: a latency (ms) and up to two faults.
fn sink_calls() -> impl Strategy<Value = Vec<(u64, Vec<(bool, String)>)>> {
    proptest::collection::vec((0u64..30, proptest::collection::vec(sink_fault(), 0..3)), 3)
}

/// The `[[sink]]` tables; `faults` filters each sink's faults (by
/// `lose_reply`) and says whether they select compensation calls.
fn sink_tables(
    calls: &[(u64, Vec<(bool, String)>)],
    prepare: bool,
    keep: impl Fn(bool) -> Option<bool>,
) -> String {
    let mut t = String::new();
    for ((name, kind), (latency, faults)) in SINKS.iter().zip(calls) {
        t.push_str(&format!(
            "[[sink]]\nname = \"{name}\"\nkind = \"{kind}\"\nlatency = \"{latency}ms\"\n"
        ));
        if prepare {
            t.push_str("prepare = true\n");
        }
        let faults: Vec<String> = faults
            .iter()
            .filter_map(|(lose, selector)| {
                let compensation = keep(*lose)?;
                let what = if *lose { "lose_reply" } else { "fail" };
                let tail = if compensation {
                    ", compensation = true"
                } else {
                    ""
                };
                Some(format!("{{ {what} = {{ {selector} }}{tail} }}"))
            })
            .collect();
        t.push_str(&format!("faults = [{}]\n", faults.join(", ")));
    }
    t
}

fn run(text: &str) -> (Scenario, Outcome) {
    let (scenario, _) = load_str("p.toml", text)
        .unwrap_or_else(|e| panic!("generated scenarios are valid: {e:?}\n{text}"));
    let outcome = engine::run(&scenario, Recorder::Off).expect("generated runs finish");
    (scenario, outcome)
}

fn field(outcome: &Outcome, field: SinkField) -> [i64; 3] {
    [0, 1, 2].map(|k| outcome.sink_value(k, field))
}

const STRATEGIES: [&str; 4] = ["direct", "outbox", "two_phase", "saga"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// With no sink faults, latency 0 and no outage, every strategy gives
    /// the sinks what section 19 gives them (every effect to every sink),
    /// and the ledger, receives and final states are those of the file
    /// without `[write]`.
    #[test]
    fn without_sink_faults_every_strategy_is_section_19(t in traffic()) {
        let calls = vec![(0, Vec::new()); 3];
        let (scenario, plain) = run(&format!("{t}{}", sink_tables(&calls, false, |_| None)));
        for strategy in STRATEGIES {
            let text = format!(
                "{t}[write]\nstrategy = \"{strategy}\"\n{}",
                sink_tables(&calls, strategy == "two_phase", |_| None)
            );
            let (_, written) = run(&text);
            for f in [SinkField::Value, SinkField::VisibleDuplicates, SinkField::Missing, SinkField::MaxPerIntent] {
                prop_assert_eq!(field(&plain, f), field(&written, f), "{} {:?}", strategy, f);
            }
            prop_assert_eq!(plain.totals.effects, written.totals.effects, "{}", strategy);
            prop_assert_eq!(plain.totals.acked, written.totals.acked, "{}", strategy);
            for m in 0..scenario.message_count() as u32 {
                let (a, b) = (plain.messages.get(m), written.messages.get(m));
                prop_assert_eq!(a.state, b.state, "{} message {}", strategy, m);
                prop_assert_eq!(a.total_receives, b.total_receives, "{} message {}", strategy, m);
            }
            prop_assert_eq!(written.totals.compensations, 0);
            prop_assert_eq!(written.totals.false_notices, 0);
            prop_assert_eq!(written.totals.outbox_dead_letters, 0);
            prop_assert_eq!(written.totals.partial_visible, 0, "{}", strategy);
        }
    }

    /// An outbox relay retries until a call is heard to succeed: a lost
    /// reply applies a row again, and an upsert absorbs it. Whatever the
    /// faults, latencies and relay settings, no upsert sink shows a row
    /// twice, and no row is applied more often than the relay called.
    #[test]
    fn an_outbox_never_shows_an_upsert_row_twice(
        t in traffic(),
        calls in sink_calls(),
        attempts in 1u32..5,
        retry in 0u64..3,
    ) {
        let text = format!(
            "{t}[write]\nstrategy = \"outbox\"\nrelay_attempts = {attempts}\nrelay_retry = \"{retry}s\"\n{}",
            sink_tables(&calls, false, |_| Some(false))
        );
        let (_, outcome) = run(&text);
        prop_assert_eq!(outcome.sink_value(0, SinkField::VisibleDuplicates), 0);
        prop_assert!(outcome.sink_value(0, SinkField::MaxPerIntent) <= 1);
        prop_assert!(outcome.totals.outbox_dead_letters <= 3 * outcome.totals.effects);
    }

    /// Tracked compensations (`idempotent_compensation = true`) apply once
    /// per write and sink however often they are retried: nothing is
    /// over-compensated, and with no lost reply on the writes themselves no
    /// intent of the counter is taken below zero (its visible duplicates,
    /// value minus the intents still counted, are never negative).
    #[test]
    fn tracked_compensation_never_takes_an_increment_below_its_intents(
        t in traffic(),
        calls in sink_calls(),
        steps in 1u32..3,
        attempts in 1u32..4,
    ) {
        // Failures on the writes, lost replies on the compensations.
        let text = format!(
            "{t}[write]\nstrategy = \"saga\"\nstep_attempts = {steps}\nrelay_attempts = {attempts}\nrelay_retry = \"1s\"\n{}",
            sink_tables(&calls, false, Some)
        );
        let (_, outcome) = run(&text);
        prop_assert_eq!(outcome.totals.over_compensations, 0);
        prop_assert!(outcome.sink_value(1, SinkField::Value) >= 0);
        prop_assert!(outcome.sink_value(1, SinkField::VisibleDuplicates) >= 0);
        prop_assert_eq!(outcome.sink_value(0, SinkField::VisibleDuplicates), 0);

        // The same file untracked: every second application is counted.
        let untracked = text.replace("[write]\n", "[write]\nidempotent_compensation = false\n");
        let (_, loose) = run(&untracked);
        prop_assert!(loose.totals.compensations >= outcome.totals.compensations);
        prop_assert_eq!(
            loose.totals.compensations - loose.totals.over_compensations,
            outcome.totals.compensations
        );
    }

    /// Two-phase commit is all or nothing: once the run ends each write is
    /// in every sink or in none, so every sink misses the same intents and
    /// the two row-keeping sinks hold the same rows.
    #[test]
    fn two_phase_leaves_no_write_in_some_sinks_only(
        t in traffic(),
        calls in sink_calls(),
        crash in proptest::option::of((1u32..3, 1u64..20)),
    ) {
        let mut text = format!(
            "{t}[write]\nstrategy = \"two_phase\"\n{}",
            sink_tables(&calls, true, |_| Some(false))
        );
        if let Some((every, recovers)) = crash {
            text.push_str(&format!(
                "[coordinator]\ncrash = {{ every = {every} }}\nrecovers_after = \"{recovers}s\"\n"
            ));
        }
        let (_, outcome) = run(&text);
        let missing = field(&outcome, SinkField::Missing);
        prop_assert!(missing[0] == missing[1] && missing[1] == missing[2], "missing {:?}", missing);
        prop_assert_eq!(outcome.totals.partial_visible, 0);
        prop_assert_eq!(outcome.totals.compensations, 0);
    }
}

/// Per sink: a latency long enough to overlap arrivals, retries and the
/// operator's steps (0 to 3 s), and up to two faults.
fn long_sink_calls() -> impl Strategy<Value = Vec<(u64, Vec<(bool, String)>)>> {
    proptest::collection::vec(
        (
            prop_oneof![Just(0u64), Just(500), Just(1000), Just(2500), Just(3000)],
            proptest::collection::vec(sink_fault(), 0..3),
        ),
        3,
    )
}

/// What else a file around a write may have: an outage of the
/// downstream, operator steps (a canary redrive among them), limits and
/// a deduplication store.
fn surroundings() -> impl Strategy<Value = String> {
    (
        proptest::option::of(1u64..30),
        proptest::option::of((0u64..15, 1u64..8)),
        proptest::collection::vec((0u64..20, any::<bool>(), any::<bool>(), 0u32..3), 0..3),
        proptest::option::of((
            proptest::option::of(1u64..60),
            proptest::option::of(0u64..25_000),
            any::<bool>(),
        )),
    )
        .prop_map(|(retention, outage, steps, limits)| {
            let mut t = String::new();
            if let Some(seconds) = retention {
                t.push_str(&format!(
                    "[dedup]\nenabled = true\nresult_retention = \"{seconds}s\"\n"
                ));
            }
            if let Some((from, duration)) = outage {
                t.push_str(&format!(
                    "[[outage]]\nfrom = \"{from}s\"\nduration = \"{duration}s\"\n"
                ));
            }
            for (wait, repair, fresh, canary) in steps {
                let identity = if fresh { "new" } else { "stable" };
                t.push_str(&format!(
                    "[[operator]]\nwait = \"{wait}s\"\nrepair = {repair}\naction = \"redrive_all\"\nidentity = \"{identity}\"\n"
                ));
                if canary > 0 {
                    t.push_str(&format!("canary = {canary}\n"));
                }
            }
            if let Some((max_events, max_time, stop)) = limits {
                let on_limit = if stop { "stop" } else { "fail" };
                t.push_str(&format!("[limits]\non_limit = \"{on_limit}\"\n"));
                if let Some(n) = max_events {
                    t.push_str(&format!("max_events = {n}\n"));
                }
                if let Some(ms) = max_time {
                    t.push_str(&format!("max_time = \"{ms}ms\"\n"));
                }
            }
            t
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// A write delivery that acks is settled at its start in an
    /// unrecorded run (`engine/settled.rs`); a recorded run steps through
    /// its end. Whatever the strategy, faults, latencies, outage, operator
    /// steps and limits, the two runs agree on everything they report: the
    /// same totals (max_in_flight and the end time included), states,
    /// calls, drains, sinks, notes, traces, locks and canaries, or the
    /// same limit error.
    #[test]
    fn settling_writes_at_their_start_never_changes_the_outcome(
        t in traffic(),
        calls in long_sink_calls(),
        strategy in 0usize..5,
        around in surroundings(),
        extra in 0usize..5,
        mix in proptest::collection::vec(0usize..4, 3),
    ) {
        // 4: a strategy per sink (section 28.1).
        let mixed = strategy == 4;
        let strategy = STRATEGIES.get(strategy).copied().unwrap_or("direct");
        let relayed = mix.iter().any(|&i| matches!(STRATEGIES[i], "outbox" | "saga"));
        let retry = match strategy {
            "outbox" | "saga" => "relay_retry = \"1s\"\n",
            _ if mixed && relayed => "relay_retry = \"1s\"\nrelay_attempts = 3\n",
            _ => "",
        };
        let mut sinks = sink_tables(&calls, strategy == "two_phase" || mixed, |_| Some(false));
        let mut extra_mixed = String::new();
        if mixed {
            // Each sink its own strategy; a compensating dead letter and
            // irreversible sinks last where the file allows them.
            let mine: Vec<&str> = mix.iter().map(|&i| STRATEGIES[i]).collect();
            let mut parts: Vec<String> = sinks.split("[[sink]]\n").map(String::from).collect();
            for (part, s) in parts.iter_mut().skip(1).zip(&mine) {
                part.push_str(&format!("strategy = \"{s}\"\n"));
            }
            sinks = parts.join("[[sink]]\n");
            if mine.contains(&"outbox") && mine.contains(&"saga") && extra % 2 == 1 {
                extra_mixed.push_str("outbox_dead_letter = \"compensate\"\n");
            }
            let irreversible = SINKS.iter().zip(&mine).filter(|((_, kind), _)| *kind == "irreversible");
            if extra >= 3 && irreversible.clone().all(|(_, s)| !mine.contains(&"outbox") || *s == "outbox") {
                extra_mixed.push_str("irreversible_last = true\n");
            }
        }
        // Section 28.15 and 28.16's keys: a coordinator's round trip,
        // crashes that never recover or recover without a logged
        // decision, corrective notices, outbox dead-letter alarms.
        let extra = match (strategy, extra) {
            ("two_phase", 1) => "[coordinator]\ncommit_round_trip = true\n",
            ("two_phase", 2) => "[coordinator]\ncrash = { first = 1 }\nrecovers_after = \"never\"\n",
            ("two_phase", 3) => "[coordinator]\ncrash = { every = 2 }\nrecovers_after = \"2s\"\ncrash_at = \"before_log\"\ncommit_round_trip = true\n",
            ("two_phase", 4) => "[coordinator]\ncrash = { first = 2 }\nrecovers_after = \"1s\"\n",
            ("saga", e) if e % 2 == 1 => {
                sinks = sinks.replace(
                    "kind = \"irreversible\"\n",
                    "kind = \"irreversible\"\ncorrective_notice = true\n",
                );
                ""
            }
            ("outbox", e) if e > 0 => "[[alarm]]\nname = \"dead\"\nmetric = \"outbox_dead_letter_arrivals\"\nwindow = \"2s\"\nat_least = 1\n",
            _ => "",
        };
        let text = format!(
            "{t}{around}[write]\nstrategy = \"{strategy}\"\n{retry}{extra_mixed}{sinks}{extra}"
        );
        let (scenario, _) = load_str("p.toml", &text)
            .unwrap_or_else(|e| panic!("generated scenarios are valid: {e:?}\n{text}"));
        let all = engine::run(&scenario, Recorder::All);
        let off = engine::run(&scenario, Recorder::Off);
        match (all, off) {
            (Ok(all), Ok(off)) => {
                prop_assert_eq!(&all.totals, &off.totals);
                prop_assert_eq!(&all.messages, &off.messages);
                prop_assert_eq!(&all.calls, &off.calls);
                prop_assert_eq!(&all.drains, &off.drains);
                prop_assert_eq!(all.as_of, off.as_of);
                prop_assert_eq!(&all.sinks, &off.sinks);
                prop_assert_eq!(&all.sink_lags, &off.sink_lags);
                prop_assert_eq!(&all.write_notes, &off.write_notes);
                prop_assert_eq!(&all.write_traces, &off.write_traces);
                prop_assert_eq!(&all.lock_spans, &off.lock_spans);
                prop_assert_eq!(&all.canaries, &off.canaries);
            }
            (all, off) => prop_assert_eq!(all.err(), off.err()),
        }
    }
}
