//! Settling a delivery at its start never changes a run: over generated
//! files that use every part of the queue world (a queue or a log, workers
//! and ordering, a visibility timeout, the nats-jetstream and RabbitMQ
//! profiles (MaxAckPending among them), the deduplication store in both modes,
//! sinks with and without `[write]`, outages, a call limit, the operator
//! with canaries, alarms, questions asked of a time, limits), a run to its
//! end with the shortcuts every part allows gives exactly the outcome of
//! the same run stepped through delivery by delivery
//! (`engine::run_stepped`), or the same limit error.

use proptest::prelude::*;
use scenario_run::engine::{self, Recorder};
use scenario_run::scenario::load_str;

/// The traffic: a few explicit messages, and maybe a block of plain ones
/// (the deliveries a run settles).
fn traffic() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(0usize..1, 0..6),
        proptest::option::of((10u64..300, 1u64..20, any::<bool>())),
    )
        .prop_flat_map(|(n, block)| {
            // The explicit messages of the write properties' files: an
            // arrival, maybe a shared key, faults counted by receive.
            let messages = (0..n.len())
                .map(super::write_properties::message)
                .collect::<Vec<_>>();
            (messages, Just(block))
        })
        .prop_map(|(messages, block)| {
            let mut t = messages.concat();
            if let Some((count, over, poisson)) = block {
                let arrival = if poisson { "poisson" } else { "even" };
                t.push_str(&format!(
                    "[[traffic]]\ncount = {count}\nover = \"{over}s\"\narrival = \"{arrival}\"\n"
                ));
            }
            if t.is_empty() {
                t.push_str("[[message]]\nid = \"only\"\n");
            }
            t
        })
}

/// Which source, consumer and broker rules the file has.
fn shape() -> impl Strategy<Value = String> {
    prop_oneof![
        // A queue, delivered directly.
        Just(String::new()),
        // Workers, maybe ordered.
        (1u64..4, 0u64..3, 0usize..3).prop_map(|(count, service, ordering)| {
            let ordering = ["none", "fifo", "per_key"][ordering];
            format!(
                "[workers]\ncount = {count}\nservice_time = \"{service}s\"\n@delivery ordering = \"{ordering}\"\n"
            )
        }),
        // A visibility timeout shorter than some deliveries.
        (1u64..3).prop_map(|s| {
            format!("[workers]\ncount = 8\nservice_time = \"{s}s\"\n@delivery visibility_timeout = \"2s\"\n")
        }),
        // A broker profile: nats-jetstream with a MaxAckPending that
        // binds, or a RabbitMQ queue.
        (0usize..3, 1u64..4).prop_map(|(profile, pending)| match profile {
            0 => format!(
                "@delivery profile = \"nats-jetstream\"\n@delivery max_ack_pending = {pending}\n"
            ),
            1 => "@delivery profile = \"rabbitmq-quorum\"\n".to_string(),
            _ => "@delivery profile = \"rabbitmq-classic\"\n".to_string(),
        }),
        // A partitioned log.
        (
            (1u32..4, 0usize..3, 0u64..2, proptest::option::of((0u64..20, 0u64..3))),
            (proptest::option::of(1u64..6), any::<bool>()),
        )
            .prop_map(|((partitions, guarantee, service, restart), (failed, idempotence))| {
                let guarantee = ["at_least_once", "at_most_once", "exactly_once"][guarantee];
                let checkpoint = match guarantee {
                    "at_most_once" => String::new(),
                    _ => "checkpoint_interval = \"3s\"\n".into(),
                };
                let mut t = format!(
                    "[log]\npartitions = {partitions}\nguarantee = \"{guarantee}\"\n{checkpoint}service_time = \"{service}s\"\n\
                     [producer]\nidempotence = {idempotence}\n"
                );
                if let Some((at, down)) = restart {
                    t.push_str(&format!("[[restart]]\nat = \"{at}s\"\ndown_for = \"{down}s\"\n"));
                }
                // Checkpoints that fail (section 28.7).
                if let (Some(k), false) = (failed, checkpoint.is_empty()) {
                    t.push_str(&format!("[[checkpoint_failure]]\nnumbers = [{k}, {}]\n", k + 1));
                }
                t
            }),
    ]
}

/// The deduplication store and the sinks: none, results, write-intent
/// claims; sinks that keep rows; one write to several sinks.
fn store_and_sinks() -> impl Strategy<Value = String> {
    (
        0usize..3,
        0usize..4,
        0u64..3,
        proptest::option::of(1u32..4),
    )
        .prop_map(|(store, sinks, latency, fault)| {
            let mut t = match store {
                0 => String::new(),
                1 => "[dedup]\nresult_retention = \"5s\"\n".into(),
                _ => "[dedup]\nmode = \"write_intent\"\nlease = \"3s\"\n".into(),
            };
            let fault = fault.map_or(String::new(), |n| {
                format!("faults = [{{ lose_reply = {{ first = {n} }} }}]\n")
            });
            match sinks {
                0 => {}
                1 => t.push_str("[[sink]]\nname = \"rows\"\nkind = \"upsert\"\n[[sink]]\nname = \"n\"\nkind = \"increment\"\n"),
                strategy => {
                    let strategy = ["direct", "outbox"][strategy - 2];
                    let relay = match strategy {
                        "outbox" => "relay_retry = \"1s\"\n",
                        _ => "",
                    };
                    t.push_str(&format!(
                        "[write]\nstrategy = \"{strategy}\"\n{relay}\
                         [[sink]]\nname = \"rows\"\nkind = \"upsert\"\nlatency = \"{latency}s\"\n{fault}\
                         [[sink]]\nname = \"n\"\nkind = \"increment\"\nlatency = \"1s\"\n"
                    ));
                }
            }
            t
        })
}

/// What surrounds the run: an outage, a call limit, operator steps (a
/// canary among them), an alarm, a question asked of a time, limits.
fn surroundings() -> impl Strategy<Value = String> {
    (
        proptest::option::of((0u64..15, 1u64..8)),
        proptest::option::of(1u64..5),
        proptest::collection::vec((0u64..20, any::<bool>(), 0u32..3), 0..3),
        proptest::option::of(0usize..3),
        proptest::option::of(0u64..25),
        proptest::option::of((proptest::option::of(1u64..300), any::<bool>())),
    )
        .prop_map(|(outage, limit, steps, alarm, question, limits)| {
            let mut t = String::new();
            if let Some((from, duration)) = outage {
                t.push_str(&format!(
                    "[[outage]]\nfrom = \"{from}s\"\nduration = \"{duration}s\"\n"
                ));
            }
            if let Some(n) = limit {
                t.push_str(&format!("[downstream]\nlimit = {n}\n"));
            }
            for (wait, repair, canary) in steps {
                t.push_str(&format!(
                    "[[operator]]\nwait = \"{wait}s\"\nrepair = {repair}\naction = \"redrive_all\"\n"
                ));
                if canary > 0 {
                    t.push_str(&format!("canary = {canary}\n"));
                }
            }
            if let Some(a) = alarm {
                let (metric, at_least) = [("dlq_depth", "1"), ("queue_depth", "2"), ("oldest_age", "\"3s\"")][a];
                t.push_str(&format!(
                    "[[alarm]]\nname = \"a\"\nmetric = \"{metric}\"\nat_least = {at_least}\n"
                ));
            }
            if let Some(at) = question {
                t.push_str(&format!(
                    "[[question]]\nask = \"How many effects by then?\"\nat = \"{at}s\"\nanswer = \"effects\"\n"
                ));
            }
            if let Some((max_events, stop)) = limits {
                let on_limit = if stop { "stop" } else { "fail" };
                t.push_str(&format!("[limits]\non_limit = \"{on_limit}\"\n"));
                if let Some(n) = max_events {
                    t.push_str(&format!("max_events = {n}\n"));
                }
            }
            t
        })
}

/// A whole file: `[delivery]` first (with the keys `shape` puts under it,
/// marked `@delivery`), then the rest.
fn file() -> impl Strategy<Value = String> {
    (
        1u32..4,
        1u64..3,
        any::<bool>(),
        prop::option::of(1u64..6),
        shape(),
        store_and_sinks(),
        surroundings(),
        traffic(),
    )
        .prop_map(
            |(receives, retry, jitter, elapsed, shape, store, around, traffic)| {
                let retry = match jitter {
                    true => format!("backoff = {{ base = \"{retry}s\", jitter = \"full\" }}"),
                    false => format!("retry_interval = \"{retry}s\""),
                };
                let mut delivery = format!("[delivery]\nmax_receives = {receives}\n{retry}\n");
                // A retry budget by elapsed time (28.3), now and then.
                if let Some(seconds) = elapsed {
                    delivery.push_str(&format!("max_elapsed = \"{seconds}s\"\n"));
                }
                let mut rest = String::new();
                for line in shape.lines() {
                    match line.strip_prefix("@delivery ") {
                        Some(key) => {
                            delivery.push_str(key);
                            delivery.push('\n');
                        }
                        None => {
                            rest.push_str(line);
                            rest.push('\n');
                        }
                    }
                }
                // A log's backlog is its consumer lag (queue_depth is refused),
                // and its position is its acknowledgement (no lose_ack): a
                // lost acknowledgement there is the producer's (28.6).
                let (around, traffic) = match rest.contains("[log]") {
                    true => (
                        around.replace("\"queue_depth\"", "\"consumer_lag\""),
                        traffic.replace("lose_ack = {", "lose_append_ack = {"),
                    ),
                    false => (around, traffic),
                };
                format!("{delivery}{rest}{store}{around}{traffic}")
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Settled and stepped, the same outcome: every total, state, call,
    /// sink, alarm, answer and log figure, or the same limit error.
    #[test]
    fn settling_at_the_start_gives_the_outcome_of_stepping_through(text in file()) {
        // A combination the format refuses (a log with a visibility
        // timeout, say) is no case.
        let Ok((scenario, _)) = load_str("s.toml", &text) else {
            return Ok(());
        };
        let settled = engine::run(&scenario, Recorder::Off);
        let stepped = engine::run_stepped(&scenario, Recorder::Off);
        match (settled, stepped) {
            (Ok(settled), Ok(stepped)) => {
                prop_assert_eq!(format!("{settled:?}"), format!("{stepped:?}"), "{}", text);
            }
            (settled, stepped) => prop_assert_eq!(settled.err(), stepped.err(), "{}", text),
        }
    }
}

/// The generator reaches the parts it is meant to: most files are valid,
/// and the valid ones include every part that has a shortcut to refuse.
#[test]
fn the_generated_files_use_every_part() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut valid, mut seen) = (0, std::collections::BTreeSet::new());
    for _ in 0..1000 {
        let text = file().new_tree(&mut runner).unwrap().current();
        if load_str("s.toml", &text).is_err() {
            continue;
        }
        valid += 1;
        for part in [
            "[log]",
            "[workers]",
            "ordering",
            "visibility_timeout",
            "write_intent",
            "result_retention",
            "[write]",
            "kind = \"upsert\"",
            "[[outage]]",
            "[downstream]",
            "canary",
            "[[alarm]]",
            "[[question]]",
            "[limits]",
            "[[traffic]]",
            "jitter",
            "consumer_lag",
            "max_ack_pending",
            "rabbitmq",
            "max_elapsed",
            "checkpoint_failure",
            "lose_append_ack",
        ] {
            if text.contains(part) {
                seen.insert(part);
            }
        }
    }
    assert!(valid >= 500, "{valid} of 1000 generated files are valid");
    assert_eq!(seen.len(), 22, "{seen:?}");
}
