//! Dataflow scenarios (model section 25) through the file format: property
//! tests over random topologies, sends and snapshot times, determinism,
//! and the JSON report's shape.

use crate::common;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use scenario_run::dataflow::outcome::AttemptOutcome;
use scenario_run::dataflow::{self, Dataflow};

use common::{code, run, stderr, stdout};

fn loaded(text: &str) -> Dataflow {
    assert!(scenario_run::scenario::is_dataflow(text));
    match dataflow::load_one("t.toml", text, &[]) {
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

/// Three nodes, a transfer on the slow link B->C and a snapshot by A, its
/// timeout and B->C's latency swept (scenario 54's shape, smaller).
const SWEPT: &str = r#"
[[node]]
name = "A"
state = 100
[[node]]
name = "B"
state = 50
[[node]]
name = "C"
[[channel]]
from = "A"
to = "B"
[[channel]]
from = "A"
to = "C"
[[channel]]
from = "B"
to = "C"
latency = "4ms"
[[send]]
from = "B"
to = "C"
value = 20
kind = "transfer"
[[snapshot]]
initiators = ["A"]
timeout = "5ms"
[sweep]
"channel.3.latency" = ["4ms", "9ms"]
"snapshot.1.timeout" = ["2ms", "5ms", "10ms"]
[[expect.point]]
where = { "snapshot.1.timeout" = "10ms" }
snapshot.1.outcome = "complete"
[[expect.point]]
where = { "channel.3.latency" = "9ms", "snapshot.1.timeout" = "10ms" }
snapshot.1.completed_at = "10ms"
"#;

fn swept(text: &str, sets: &[(String, String)]) -> dataflow::sweep::Sweep {
    match dataflow::load("t.toml", text, sets) {
        Ok((dataflow::Loaded::Sweep(s), _)) => s,
        Ok(_) => panic!("not a sweep"),
        Err(inv) => panic!("{:?}", inv.problems),
    }
}

#[test]
fn a_dataflow_sweep_has_a_point_per_combination_each_with_its_values_and_expectations() {
    let sweep = swept(SWEPT, &[]);
    assert_eq!(sweep.keys, ["channel.3.latency", "snapshot.1.timeout"]);
    // The first key varies slowest; each point's dataflow has its values.
    let seen: Vec<(u64, Option<u64>, usize)> = sweep
        .points
        .iter()
        .map(|p| {
            let f = &p.flow;
            (
                f.channels[2].latency,
                f.snapshots[0].timeout,
                f.expectations.len(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (4, Some(2), 0),
            (4, Some(5), 0),
            (4, Some(10), 1),
            (9, Some(2), 0),
            (9, Some(5), 0),
            (9, Some(10), 2),
        ]
    );
    assert_eq!(sweep.points[5].values, ["\"9ms\"", "\"10ms\""]);
    // Unlisted columns: the attempt's outcome, consistency (transfers
    // only) and max_recorded.
    assert_eq!(
        sweep.columns,
        [
            "snapshot.1.outcome",
            "snapshot.1.consistent",
            "snapshot.1.max_recorded"
        ]
    );
    // A --set of a swept path fixes it: one value, three points.
    let fixed = swept(SWEPT, &[("channel.3.latency".into(), "\"9ms\"".into())]);
    assert_eq!(fixed.points.len(), 3);
    assert!(fixed.points.iter().all(|p| p.flow.channels[2].latency == 9));
}

#[test]
fn default_columns_follow_the_file() {
    let cols = |text: &str| dataflow::sweep::default_columns(&loaded(text));
    let two =
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[channel]]\nfrom = \"A\"\nto = \"B\"\n";
    // No attempt: the nodes' final states.
    assert_eq!(cols(two), ["node.A.state", "node.B.state"]);
    // Adds: no consistency to show.
    let adds = format!(
        "{two}[[send]]\nfrom = \"A\"\nto = \"B\"\nvalue = 1\n[[snapshot]]\ninitiators = [\"A\"]\n[[snapshot]]\nat = \"5ms\"\ninitiators = [\"B\"]\n"
    );
    assert_eq!(
        cols(&adds),
        [
            "snapshot.1.outcome",
            "snapshot.1.max_recorded",
            "snapshot.2.outcome",
            "snapshot.2.max_recorded"
        ]
    );
}

#[test]
fn a_dataflow_sweep_runs_reports_and_explains_like_a_queue_sweep() {
    let d = common::scratch("dataflow-sweep");
    let file = d.join("wait.toml");
    // The 9ms link with a 5ms timeout is expected, wrongly, to complete.
    let text = format!(
        "{SWEPT}[[expect.point]]\nwhere = {{ \"channel.3.latency\" = \"9ms\", \"snapshot.1.timeout\" = \"5ms\" }}\nsnapshot.1.outcome = \"complete\"\n"
    );
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let o = run(&["--color", "never", path]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("(1 of 6 points failed)"), "{out}");
    assert!(
        out.contains(
            r#"at channel.3.latency = "9ms", snapshot.1.timeout = "5ms": expected snapshot"#
        ),
        "{out}"
    );
    assert!(
        out.contains(r#"expected "complete", got "aborted""#),
        "{out}"
    );
    assert!(
        out.contains("B->C: it arrived at 10ms, after the abort"),
        "{out}"
    );
    let o = run(&["--format", "json", path]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let s = &doc["scenarios"][0];
    assert_eq!(s["kind"], "dataflow");
    assert_eq!(s["status"], "failed");
    let rows = s["sweep"]["rows"].as_array().unwrap();
    // 4ms: aborted at 2ms; complete at 5ms (the marker at exactly the
    // timeout is in time), with the 20 recorded in flight.
    assert_eq!(rows[0][4], "aborted");
    assert_eq!(rows[1][4], "complete");
    assert_eq!(rows[1][6], "1");
    assert_eq!(rows[4][4], "aborted");
    assert_eq!(rows[5][2], "passed");
    let point = &s["points"][1];
    assert_eq!(point["snapshots"][0]["completed_at"], 5);
    assert_eq!(point["snapshots"][0]["consistent"], true);
    assert_eq!(point["totals"]["complete"], 1);
    assert_eq!(s["points"][4]["expectations_failed"], 1);
    // show: the table, and one point's transcript once both paths are set.
    let o = run(&["show", path]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("sweep: 6 points"), "{}", stdout(&o));
    let o = run(&[
        "show",
        path,
        "--set",
        "channel.3.latency=\"4ms\"",
        "--set",
        "snapshot.1.timeout=\"5ms\"",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("C receives 20 on B->C, recorded in flight"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_point_stopped_at_a_limit_is_a_row_of_dashes_and_stops_the_sweep() {
    let d = common::scratch("dataflow-sweep-stop");
    let file = d.join("stop.toml");
    let text = SWEPT.replace(
        "[sweep]\n",
        "[limits]\nmax_events = 1000\n[sweep]\n\"limits.max_events\" = [3, 1000]\n",
    );
    std::fs::write(&file, text).unwrap();
    let o = run(&["--color", "never", "show", file.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(code(&o), 4, "{out}");
    let stopped = out.lines().filter(|l| l.contains(" stopped ")).count();
    assert_eq!(stopped, 6, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("3 ") && l.contains("stopped  -")),
        "{out}"
    );
}

#[test]
fn a_long_recorded_list_is_cut_in_its_cell() {
    // A's marker to B is lost and there is no timeout: B, recording from
    // 1ms, records all twelve values A sends on A->B.
    let mut text = String::from(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[node]]\nname = \"C\"\n\
         [[channel]]\nfrom = \"A\"\nto = \"B\"\nlose_markers = { first = 1 }\n\
         [[channel]]\nfrom = \"C\"\nto = \"B\"\n\
         [[snapshot]]\ninitiators = [\"A\", \"C\"]\n",
    );
    for t in 1..=12 {
        text += &format!("[[send]]\nat = \"{t}ms\"\nfrom = \"A\"\nto = \"B\"\nvalue = {t}\n");
    }
    text += "[sweep]\n\"channel.2.latency\" = [\"1ms\", \"2ms\"]\ncolumns = [\"snapshot.1.channel.\\\"A->B\\\".recorded\"]\n";
    let d = common::scratch("dataflow-sweep-cell");
    let file = d.join("cell.toml");
    std::fs::write(&file, text).unwrap();
    let o = run(&["show", file.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("[1, 2, 3, 4, 5, 6, 7, 8, ... 12 values]"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_sweep_path_that_leads_nowhere_is_located_with_a_dataflow_example() {
    let text = SWEPT.replace("\"channel.3.latency\"", "\"channel.7.latency\"");
    let Err(inv) = dataflow::load("t.toml", &text, &[]) else {
        panic!("loaded")
    };
    let p = &inv.problems[0];
    assert_eq!(
        p.message,
        "cannot sweep `channel.7.latency`: `channel` has 3 entries; position 7 does not exist (position 4 adds one)"
    );
    assert!(
        p.help.as_deref().unwrap().ends_with("node.1.state"),
        "{:?}",
        p.help
    );
}

#[test]
fn a_sweep_lists_at_most_64_columns() {
    let columns: Vec<String> = (0..65)
        .map(|k| format!("\"snapshot.1.node.A.status{k}\""))
        .collect();
    let text = SWEPT.replace(
        "[sweep]\n",
        &format!("[sweep]\ncolumns = [{}]\n", columns.join(", ")),
    );
    let Err(inv) = dataflow::load("t.toml", &text, &[]) else {
        panic!("loaded")
    };
    assert_eq!(
        inv.problems[0].message,
        "a sweep lists 65 columns; the limit is 64"
    );
}

/// 27.29: a node that aborted keeps no channel recording, and an
/// expectation writes that `recorded = "never"` (it was refused as a
/// wrong type, while the diagnostic of a list said "never").
#[test]
fn an_aborted_nodes_channel_is_expected_as_recorded_never() {
    let d = common::scratch("recorded-never");
    let base = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/38-chandy-lamport-abort-and-retry.toml"),
    )
    .unwrap();
    // Scenario 38 as `text` makes it: its exit code and what it printed.
    let run_as = |name: &str, text: String| {
        let file = d.join(name);
        std::fs::write(&file, text).unwrap();
        let o = run(&[file.to_str().unwrap()]);
        (code(&o), format!("{}{}", stdout(&o), stderr(&o)))
    };
    let attempt_1 = |recorded: &str| {
        format!("{base}\n[expect.snapshot.1.channel.\"A->C\"]\nrecorded = {recorded}\n")
    };
    // C aborted in attempt 1: its incoming channel recorded nothing.
    let (c, out) = run_as("never.toml", attempt_1("\"never\""));
    assert_eq!(c, 0, "{out}");
    // A list is a failed expectation that says "never", not a type error.
    let (c, out) = run_as("list.toml", attempt_1("[10]"));
    assert_eq!(c, 1, "{out}");
    assert!(out.contains("got never"), "{out}");
    // Any other word is still refused, located.
    let (c, out) = run_as("word.toml", attempt_1("\"none\""));
    assert_eq!(c, 3, "{out}");
    assert!(out.contains("or \"never\""), "{out}");
    // A completed node's channel is not "never".
    let complete = base.replacen(
        "[expect.snapshot.2.channel.\"A->C\"]\nrecorded = []",
        "[expect.snapshot.2.channel.\"A->C\"]\nrecorded = \"never\"",
        1,
    );
    let (c, out) = run_as("complete.toml", complete);
    assert_eq!(c, 1, "{out}");
    // The schema takes the word too.
    let schema: serde_json::Value = serde_json::from_str(&stdout(&run(&["schema"]))).unwrap();
    let recorded = &schema["$defs"]["Recorded"]["anyOf"];
    assert!(
        recorded
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["const"] == "never"),
        "{recorded}"
    );
}
