//! Dataflow scenarios (model section 25) through the file format: property
//! tests over random topologies, sends and snapshot times, determinism,
//! and the JSON report's shape.

mod common;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use scenario_run::dataflow::outcome::AttemptOutcome;
use scenario_run::dataflow::{self, Dataflow};

use common::{code, run, stdout};

fn loaded(text: &str) -> Dataflow {
    assert!(scenario_run::scenario::is_dataflow(text));
    match dataflow::load("t.toml", text, &[]) {
        Ok((f, _)) => f,
        Err(inv) => panic!("{:?}\n{text}", inv.problems),
    }
}

/// A random dataflow file: `n` nodes, some channels (latency 0-4ms, 1-3
/// partitions, maybe a down window), transfers only, and snapshot
/// attempts; the first is initiated by every node, so it always
/// completes.
/// From, to, latency (ms), partitions, a down window (from, duration).
type ChannelCase = (usize, usize, u64, u32, Option<(u64, u64)>);

#[derive(Debug, Clone)]
struct Case {
    nodes: Vec<i64>,
    channels: Vec<ChannelCase>,
    sends: Vec<(u64, usize, i64, u32)>,
    snapshots: Vec<(u64, Vec<usize>, Option<u64>)>,
}

impl Case {
    fn toml(&self, markers: &str) -> String {
        let mut s = String::new();
        for (i, state) in self.nodes.iter().enumerate() {
            s.push_str(&format!("[[node]]\nname = \"n{i}\"\nstate = {state}\n\n"));
        }
        for &(from, to, latency, partitions, down) in &self.channels {
            s.push_str(&format!(
                "[[channel]]\nfrom = \"n{from}\"\nto = \"n{to}\"\nlatency = \"{latency}ms\"\npartitions = {partitions}\n"
            ));
            if let Some((from, duration)) = down {
                s.push_str(&format!(
                    "down = {{ from = \"{from}ms\", duration = \"{duration}ms\" }}\n"
                ));
            }
            s.push('\n');
        }
        for &(at, channel, value, partition) in &self.sends {
            let (from, to, _, partitions, _) = self.channels[channel];
            s.push_str(&format!(
                "[[send]]\nat = \"{at}ms\"\nfrom = \"n{from}\"\nto = \"n{to}\"\nvalue = {value}\npartition = {}\nkind = \"transfer\"\n\n",
                partition % partitions
            ));
        }
        for (at, initiators, timeout) in &self.snapshots {
            let names: Vec<String> = initiators.iter().map(|i| format!("\"n{i}\"")).collect();
            s.push_str(&format!(
                "[[snapshot]]\nat = \"{at}ms\"\ninitiators = [{}]\nmarkers = \"{markers}\"\n",
                names.join(", ")
            ));
            if let Some(t) = timeout {
                s.push_str(&format!("timeout = \"{t}ms\"\n"));
            }
            s.push('\n');
        }
        s
    }
}

fn case() -> impl Strategy<Value = Case> {
    (2usize..6).prop_flat_map(|n| {
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        let channels =
            proptest::sample::subsequence(pairs.clone(), 1..=pairs.len()).prop_flat_map(|chosen| {
                let k = chosen.len();
                (
                    Just(chosen),
                    proptest::collection::vec(
                        (
                            0u64..5,
                            1u32..4,
                            proptest::option::weighted(0.2, (0u64..20, 1u64..15)),
                        ),
                        k,
                    ),
                )
            });
        (
            proptest::collection::vec(0i64..100, n),
            channels,
            proptest::collection::vec(
                (0u64..40, any::<prop::sample::Index>(), 1i64..20, 0u32..3),
                0..25,
            ),
            proptest::collection::vec(
                (
                    0u64..40,
                    proptest::collection::vec(0..n, 1..=n),
                    proptest::option::of(1u64..15),
                ),
                0..3,
            ),
            0u64..30,
        )
            .prop_map(move |(nodes, (chosen, props), sends, more, first_at)| {
                let channels: Vec<_> = chosen
                    .iter()
                    .zip(props)
                    .map(|(&(a, b), (latency, partitions, down))| (a, b, latency, partitions, down))
                    .collect();
                let sends = sends
                    .into_iter()
                    .map(|(at, c, v, p)| (at, c.index(channels.len()), v, p))
                    .collect();
                let mut snapshots = vec![(first_at, (0..n).collect::<Vec<_>>(), None)];
                let mut more: Vec<_> = more
                    .into_iter()
                    .map(|(at, mut init, timeout)| {
                        init.sort();
                        init.dedup();
                        (at.max(first_at), init, timeout)
                    })
                    .collect();
                more.sort_by_key(|s| s.0);
                snapshots.extend(more);
                Case {
                    nodes,
                    channels,
                    sends,
                    snapshots,
                }
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// FIFO channels, a marker on every partition and transfers only:
    /// every complete snapshot adds up to the system's total, and the
    /// first (initiated everywhere, no timeout, nothing lost) completes.
    #[test]
    fn every_complete_snapshot_of_transfers_is_consistent(c in case()) {
        let flow = loaded(&c.toml("every_partition"));
        let o = dataflow::run(&flow).unwrap();
        prop_assert_eq!(o.attempts[0].outcome, AttemptOutcome::Complete);
        for (k, a) in o.attempts.iter().enumerate() {
            if a.outcome == AttemptOutcome::Complete {
                prop_assert_eq!(a.consistent, Some(true), "attempt {}", k + 1);
                prop_assert_eq!(a.recorded_total, flow.total());
            }
        }
        // Transfers conserve the total at the end too.
        let end: i128 = o.states.iter().map(|&s| s as i128).sum();
        prop_assert_eq!(end, flow.total());
    }

    /// The same file gives the same JSON, byte for byte.
    #[test]
    fn a_dataflow_run_is_deterministic(c in case()) {
        let text = c.toml("first_partition");
        let a = dataflow::json::document("t.toml", &dataflow::run_and_judge(
            scenario_run::diagnostic::Source::new("t.toml", text.as_str()), loaded(&text)), &[]);
        let b = dataflow::json::document("t.toml", &dataflow::run_and_judge(
            scenario_run::diagnostic::Source::new("t.toml", text.as_str()), loaded(&text)), &[]);
        prop_assert_eq!(a.to_string(), b.to_string());
    }
}

/// With one marker per multi-partition channel, random runs find cuts
/// that do not add up (the property above would fail for them).
#[test]
fn first_partition_markers_give_inconsistent_cuts() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = case();
    let (mut complete, mut inconsistent) = (0, 0);
    for _ in 0..400 {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        let flow = loaded(&c.toml("first_partition"));
        let o = dataflow::run(&flow).unwrap();
        for a in &o.attempts {
            if a.outcome == AttemptOutcome::Complete {
                complete += 1;
                if a.consistent == Some(false) {
                    inconsistent += 1;
                }
            }
        }
    }
    assert!(complete > 400, "{complete} complete attempts");
    assert!(
        inconsistent > 10,
        "{inconsistent} of {complete} inconsistent"
    );
}

#[test]
fn a_dataflow_file_is_a_status_line_json_and_a_junit_case_like_any_other() {
    let d = common::scratch("dataflow-batch");
    let junit = d.join("junit.xml");
    let o = run(&[
        "--color",
        "never",
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
        "scenarios/37-chandy-lamport-in-flight.toml",
        "scenarios/01-dlq-is-not-proof-nothing-happened.toml",
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let first = &doc["scenarios"][0];
    assert_eq!(first["kind"], "dataflow");
    assert_eq!(first["status"], "passed");
    let snap = &first["snapshots"][0];
    assert_eq!(snap["outcome"], "complete");
    assert_eq!(snap["completed_at"], 4);
    assert_eq!(snap["nodes"][2]["recorded_state"], 2);
    let bc = snap["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["channel"] == "B->C")
        .unwrap();
    assert_eq!(bc["recorded"], serde_json::json!([7]));
    assert_eq!(first["states"]["C"], 9);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("snapshot 1 channel &quot;B-&gt;C&quot; recorded = [7]"),
        "{xml}"
    );
}

#[test]
fn show_prints_a_dataflow_transcript_up_to_a_time() {
    let o = run(&[
        "show",
        "--at",
        "3ms",
        "scenarios/37-chandy-lamport-in-flight.toml",
    ]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(
        out.contains("3ms  C receives 7 on B->C, recorded in flight"),
        "{out}"
    );
    assert!(!out.contains("4ms  marker 1 arrives on B->C"), "{out}");
}

#[test]
fn a_run_that_would_buffer_past_the_recording_budget_stops_and_says_so() {
    // B records A->B forever (its marker is lost, no timeout): more
    // values than the budget stop the run with a message naming it.
    let mut f = loaded(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[node]]\nname = \"C\"\n\
         [[channel]]\nfrom = \"A\"\nto = \"B\"\nlose_markers = { first = 1 }\n\
         [[channel]]\nfrom = \"C\"\nto = \"B\"\n\
         [[snapshot]]\ninitiators = [\"A\", \"C\"]\n",
    );
    let budget = scenario_run::dataflow::model::MAX_RECORDED_VALUES;
    for t in 0..=budget {
        f.sends.push(scenario_run::dataflow::model::Send {
            at: 1 + t,
            channel: 0,
            partition: 0,
            value: 1,
            kind: scenario_run::dataflow::model::SendKind::Add,
        });
    }
    let stop = dataflow::run(&f).unwrap_err();
    assert!(stop.to_string().contains("recording budget"), "{stop}");
    f.sends.pop();
    assert!(dataflow::run(&f).is_ok());
}

#[test]
fn questions_are_answered_from_the_run_and_as_of_their_time() {
    let o = run(&[
        "--format",
        "json",
        "scenarios/37-chandy-lamport-in-flight.toml",
    ]);
    assert_eq!(code(&o), 0);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let q = &doc["scenarios"][0]["questions"];
    // At 2ms the 7 is still on its way: nothing recorded yet on B->C.
    assert_eq!(q[0]["at"], 2);
    assert_eq!(q[0]["value"], serde_json::json!([]));
    assert_eq!(q[1]["value"], 2);
}

/// The Markdown report draws the graph as a Mermaid flowchart: at most 40
/// nodes and the channels between them, every name escaped, and it says
/// what it left out.
#[test]
fn the_markdown_graph_is_bounded_and_escapes_names() {
    let d = common::scratch("dataflow-graph");
    let mut text = String::new();
    for i in 0..45 {
        text.push_str(&format!("[[node]]\nname = 'n{i}\"]`'\n\n"));
    }
    for i in 0..45 {
        text.push_str(&format!(
            "[[channel]]\nfrom = 'n{i}\"]`'\nto = 'n{}\"]`'\nlatency = \"2ms\"\npartitions = 2\n\n",
            (i + 1) % 45
        ));
    }
    text.push_str("[[snapshot]]\nat = \"1ms\"\ninitiators = ['n0\"]`']\n");
    let file = d.join("ring.toml");
    std::fs::write(&file, text).unwrap();
    let out = d.join("out");
    let o = common::report(&out, "markdown", &[file.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", common::stderr(&o));
    let md = std::fs::read_to_string(out.join("ring.md")).unwrap();
    assert!(md.contains("The first 40 nodes of 45 are drawn."), "{md}");
    // n39 -> n40 .. n44 -> n0: 6 channels reach a node not drawn.
    assert!(md.contains("6 of 45 channels are not drawn"), "{md}");
    let graph = &md[md.find("```mermaid\n").unwrap()..];
    let graph = &graph[..graph[3..].find("```").unwrap() + 3];
    assert!(graph.contains("    n7[\"n7#34;#93;#96;\"]\n"), "{graph}");
    assert!(
        graph.contains("    n7 -->|\"2ms, 2 partitions\"| n8\n"),
        "{graph}"
    );
    assert!(!graph.contains("n40"), "{graph}");
    assert_eq!(graph.matches("-->").count(), 39, "{graph}");
}
