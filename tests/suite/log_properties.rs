//! Property tests of the partitioned log (model section 23) over generated
//! scenarios: without restarts a log changes when records are processed,
//! never what happens to them; exactly_once with resumes from the committed
//! checkpoint never shows an intent twice in a sink; at_least_once resuming
//! from the committed checkpoint never skips a record.

use proptest::prelude::*;
use scenario_run::engine::{self, Outcome, Recorder};
use scenario_run::model::{Scenario, SinkField};
use scenario_run::scenario::load_str;

/// One explicit message: arrival, key (k0..k4), maybe a partition, and
/// failures counted by receive (never by time), so that its fate does not
/// depend on when it is delivered.
fn message(i: usize) -> impl Strategy<Value = String> {
    (
        0u64..20,
        0usize..5,
        proptest::option::of(0u32..4),
        proptest::option::of((1u32..5, any::<bool>())),
        any::<bool>(),
    )
        .prop_map(move |(at, key, partition, fail, until_repair)| {
            let mut faults = Vec::new();
            if let Some((first, permanent)) = fail {
                let class = if permanent { "permanent" } else { "transient" };
                faults.push(format!(
                    "{{ fail = {{ first = {first} }}, class = \"{class}\" }}"
                ));
            }
            if until_repair {
                faults.push("{ fail = { until = \"repair\" } }".into());
            }
            let partition = partition.map_or(String::new(), |p| format!("partition = {p}\n"));
            format!(
                "[[message]]\nid = \"m{i}\"\nat = \"{at}s\"\nkey = \"k{key}\"\n{partition}faults = [{}]\n",
                faults.join(", ")
            )
        })
}

/// A generated file: its `[delivery]`, sinks and operator, then its
/// messages (with `partition` lines a queue file leaves out).
#[derive(Debug, Clone)]
struct Parts {
    common: String,
    messages: Vec<String>,
}

impl Parts {
    /// Rewrites each line of the messages: `edit` gives the new line, or
    /// None to drop it.
    fn edit_lines(&mut self, edit: impl Fn(&str) -> Option<String>) {
        for m in &mut self.messages {
            *m = m.lines().filter_map(&edit).collect::<Vec<_>>().join("\n") + "\n";
        }
    }

    /// Each named partition taken modulo `partitions`, so that it exists.
    fn partitions_below(&mut self, partitions: u32) {
        self.edit_lines(|l| {
            Some(match l.strip_prefix("partition = ") {
                Some(n) => format!("partition = {}", n.parse::<u32>().unwrap() % partitions),
                None => l.to_string(),
            })
        });
    }

    fn queue(&self) -> String {
        let mut t = self.common.clone();
        for m in &self.messages {
            let kept: Vec<&str> = m.lines().filter(|l| !l.starts_with("partition")).collect();
            t.push_str(&kept.join("\n"));
            t.push('\n');
        }
        t
    }

    fn log(&self, log: &str) -> String {
        let mut t = format!("{}{log}", self.common);
        for m in &self.messages {
            t.push_str(m);
        }
        t
    }
}

prop_compose! {
    fn parts()(n in 1usize..9)(
        messages in (0..n).map(message).collect::<Vec<_>>(),
        receives in 1u32..5,
        retry in 1u64..5,
        permanent in prop_oneof![Just("retry"), Just("quarantine")],
        operator in any::<bool>(),
    ) -> Parts {
        let mut common = format!(
            "[delivery]\nmax_receives = {receives}\nretry_interval = \"{retry}s\"\npermanent = \"{permanent}\"\n\
             [[sink]]\nname = \"rows\"\nkind = \"upsert\"\n[[sink]]\nname = \"counts\"\nkind = \"increment\"\n"
        );
        if operator {
            common.push_str("[[operator]]\nwait = \"5s\"\nrepair = true\naction = \"redrive_all\"\n");
        }
        Parts { common, messages }
    }
}

/// Restarts in time order: at, down_for, skip, and the partition (None:
/// every partition).
fn restarts(partitions: u32) -> impl Strategy<Value = Vec<(u64, u64, u64, Option<u32>)>> {
    proptest::collection::vec(
        (
            0u64..40,
            0u64..5,
            0u64..3,
            proptest::option::of(0..partitions),
        ),
        0..4,
    )
    .prop_map(|mut r| {
        r.sort();
        r
    })
}

fn restart_tables(restarts: &[(u64, u64, u64, Option<u32>)], partitions: bool) -> String {
    let mut t = String::new();
    for &(at, down, skip, partition) in restarts {
        t.push_str(&format!(
            "[[restart]]\nat = \"{at}s\"\ndown_for = \"{down}s\"\nskip = {skip}\n"
        ));
        if let (true, Some(p)) = (partitions, partition) {
            t.push_str(&format!("partition = {p}\n"));
        }
    }
    t
}

fn run(text: &str) -> (Scenario, Outcome) {
    let (scenario, _) = load_str("p.toml", text)
        .unwrap_or_else(|e| panic!("generated scenarios are valid: {e:?}\n{text}"));
    let outcome = engine::run(&scenario, Recorder::Off).expect("generated runs finish");
    (scenario, outcome)
}

fn sinks(outcome: &Outcome, field: SinkField) -> [i64; 2] {
    [outcome.sink_value(0, field), outcome.sink_value(1, field)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Without restarts every record is processed once, from its first
    /// delivery on, as a queue would deliver it: the same final states,
    /// receives and effects, whatever the partitions, guarantee and
    /// service time (only the times differ).
    #[test]
    fn without_restarts_a_log_run_has_the_queue_run_s_outcomes(
        p in parts(),
        partitions in 1u32..5,
        guarantee in prop_oneof![Just("at_least_once"), Just("at_most_once"), Just("exactly_once")],
        service in 0u64..3,
    ) {
        let interval = if guarantee == "at_most_once" { "" } else { "checkpoint_interval = \"3s\"\n" };
        let mut p = p;
        // A message's partition must exist.
        p.partitions_below(partitions);
        let log = format!(
            "[log]\npartitions = {partitions}\nguarantee = \"{guarantee}\"\n{interval}service_time = \"{service}s\"\n"
        );
        let (scenario, queue) = run(&p.queue());
        let (_, logged) = run(&p.log(&log));
        for m in 0..scenario.message_count() as u32 {
            let (a, b) = (queue.messages.get(m), logged.messages.get(m));
            prop_assert_eq!(a.state, b.state, "message {}", m);
            prop_assert_eq!(a.effects, b.effects, "message {}", m);
            prop_assert_eq!(a.total_receives, b.total_receives, "message {}", m);
            prop_assert_eq!(a.cycle, b.cycle, "message {}", m);
        }
        prop_assert_eq!(queue.totals.effects, logged.totals.effects);
        prop_assert_eq!(queue.totals.deliveries, logged.totals.deliveries);
        prop_assert_eq!(logged.totals.reprocessed, 0);
        prop_assert_eq!(logged.totals.skipped, 0);
        for field in [SinkField::Value, SinkField::Missing, SinkField::MaxPerIntent] {
            prop_assert_eq!(sinks(&queue, field), sinks(&logged, field), "{:?}", field);
        }
    }

    /// exactly_once resuming from the committed checkpoint: every write
    /// since the checkpoint is aborted with the transaction, so no intent
    /// is ever visible twice in any sink, whatever the restarts, skips and
    /// service time.
    #[test]
    fn exactly_once_never_shows_an_intent_twice(
        p in parts(),
        partitions in 1u32..4,
        service in 0u64..3,
        interval in 1u64..6,
        r in restarts(4),
    ) {
        // Each record its own intent (its key is its id), so that any
        // intent written twice is a record written twice.
        let mut p = p;
        p.edit_lines(|l| (!l.starts_with("partition") && !l.starts_with("key")).then(|| l.to_string()));
        let log = format!(
            "[log]\npartitions = {partitions}\nguarantee = \"exactly_once\"\ncheckpoint_interval = \"{interval}s\"\nservice_time = \"{service}s\"\n{}",
            restart_tables(&r, false)
        );
        let (_, outcome) = run(&p.log(&log));
        let most = sinks(&outcome, SinkField::MaxPerIntent);
        prop_assert!(most[0] <= 1 && most[1] <= 1, "max_per_intent {:?}", most);
        prop_assert_eq!(sinks(&outcome, SinkField::VisibleDuplicates), [0, 0]);
    }

    /// Every message's latest record is on its key's partition: the one it
    /// names while it keeps its own key, else murmur2's placement of the key
    /// (its own, or `<key>~r<N>` after a redrive with a new identity), for
    /// explicit keys and generated ids alike. The partitions of the messages'
    /// own keys are placed before the run; this says they are the ones the
    /// key gives.
    #[test]
    fn every_message_sits_on_its_key_s_partition(
        p in parts(),
        partitions in 1u32..7,
        new_identity in any::<bool>(),
        generated in 0u64..40,
    ) {
        let mut p = p;
        p.partitions_below(partitions);
        let mut text = p.log(&format!("[log]\npartitions = {partitions}\ncheckpoint_interval = \"1s\"\n"));
        if new_identity {
            text = text.replace("action = \"redrive_all\"\n", "action = \"redrive_all\"\nidentity = \"new\"\n");
        }
        text.push_str(&format!("[[traffic]]\ncount = {generated}\nover = \"10s\"\nid_prefix = \"g-\"\n"));
        let (scenario, outcome) = run(&text);
        let log = outcome.log.as_ref().expect("a log run");
        for m in 0..scenario.message_count() as u32 {
            let key = outcome.key(&scenario, m);
            let named = scenario.messages.get(m as usize).and_then(|spec| spec.partition);
            let want = match (key.generation, named) {
                (0, Some(named)) => named,
                _ => scenario_run::model::partition_of(&scenario.key_name(key), partitions),
            };
            prop_assert_eq!(u32::from(log.partition_of[m as usize]), want, "message {}", scenario.message_id(m));
        }
    }

    /// at_least_once resuming from the committed checkpoint without `skip`
    /// goes back, never forward: nothing is ever skipped, and every
    /// message's record is processed (duplicates allowed).
    #[test]
    fn at_least_once_resuming_committed_never_skips(
        p in parts(),
        partitions in 1u32..4,
        service in 0u64..3,
        interval in 1u64..6,
        r in restarts(3),
    ) {
        let mut p = p;
        p.edit_lines(|l| (!l.starts_with("partition")).then(|| l.to_string()));
        let r: Vec<_> = r
            .into_iter()
            .map(|(at, down, _, part)| (at, down, 0, part.map(|q| q % partitions)))
            .collect();
        let log = format!(
            "[log]\npartitions = {partitions}\ncheckpoint_interval = \"{interval}s\"\nservice_time = \"{service}s\"\n{}",
            restart_tables(&r, true)
        );
        let (_, outcome) = run(&p.log(&log));
        prop_assert_eq!(outcome.totals.skipped, 0);
        prop_assert_eq!(outcome.totals.pending, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A log run that nothing records settles its faultless arrivals in
    /// one write (an idle partition, a first delivery that acks at once):
    /// the same outcome as the run that records every step, whatever the
    /// partitions, guarantee, checkpoints, outage, restarts and operator.
    #[test]
    fn the_one_write_path_changes_nothing_in_a_log_run(
        partitions in 1u32..5,
        at_most_once in any::<bool>(),
        interval in 1u64..20,
        count in 1u64..60,
        over in 0u64..60,
        failing in proptest::option::of((1u32..4, any::<bool>())),
        outage in proptest::option::of((0u64..60, 1u64..20)),
        r in restarts(4),
        resume in prop_oneof![Just("committed"), Just("earliest"), Just("latest"), Just("stale")],
        operator in any::<bool>(),
        explicit in proptest::collection::vec((0u64..60, 0usize..4), 0..4),
    ) {
        let mut t = String::from("[delivery]\nmax_receives = 3\nretry_interval = \"2s\"\n");
        let interval = if at_most_once {
            "guarantee = \"at_most_once\"\n".to_string()
        } else {
            format!("checkpoint_interval = \"{interval}s\"\n")
        };
        t.push_str(&format!("[log]\npartitions = {partitions}\n{interval}"));
        for &(at, down, skip, partition) in &r {
            t.push_str(&format!("[[restart]]\nat = \"{at}s\"\ndown_for = \"{down}s\"\nskip = {skip}\nresume = \"{resume}\"\n"));
            if resume == "stale" {
                t.push_str("checkpoint_age = \"5s\"\n");
            }
            if let Some(p) = partition.filter(|_| !at_most_once || resume != "stale") {
                t.push_str(&format!("partition = {}\n", p % partitions));
            }
        }
        if let Some((from, d)) = outage {
            t.push_str(&format!("[[outage]]\nfrom = \"{from}s\"\nduration = \"{d}s\"\n"));
        }
        if operator {
            t.push_str("[[operator]]\nwait = \"5s\"\nrepair = true\naction = \"redrive_all\"\n");
        }
        for (i, &(at, key)) in explicit.iter().enumerate() {
            t.push_str(&format!("[[message]]\nid = \"m{i}\"\nat = \"{at}s\"\nkey = \"k{key}\"\n"));
        }
        let faults = match failing {
            Some((first, true)) => format!("faults = [{{ fail = {{ first = {first} }} }}]\n"),
            Some((first, false)) => format!("faults = [{{ fail = {{ first = {first} }}, class = \"permanent\" }}]\n"),
            None => String::new(),
        };
        t.push_str(&format!("[[traffic]]\ncount = {count}\nover = \"{over}s\"\nid_prefix = \"g\"\n{faults}"));
        t.push_str(&format!("[[traffic]]\ncount = {count}\nover = \"{over}s\"\nid_prefix = \"h\"\n"));
        let (scenario, _) = load_str("p.toml", &t).unwrap_or_else(|e| panic!("{e:?}\n{t}"));
        let all = engine::run(&scenario, Recorder::All).expect("generated runs finish");
        let off = engine::run(&scenario, Recorder::Off).expect("generated runs finish");
        prop_assert_eq!(&all.totals, &off.totals, "{}", t);
        prop_assert_eq!(&all.messages, &off.messages, "{}", t);
        prop_assert_eq!(&all.log, &off.log, "{}", t);
    }
}
