//! A test per rule of model section 25 and its decisions, on dataflows
//! built in code.

use super::model::*;
use super::outcome::{AttemptOutcome as O, MarkerFate, NodeStatus as N, Outcome};
use super::world::run;

/// A dataflow of `nodes` (name, state) and `channels` (from, to, latency
/// ms, partitions), nothing sent, no snapshot.
pub(crate) fn flow(nodes: &[(&str, i64)], channels: &[(&str, &str, u64, u32)]) -> Dataflow {
    let index = |name: &str| nodes.iter().position(|n| n.0 == name).unwrap() as u32;
    Dataflow {
        name: "t".into(),
        summary: None,
        description: None,
        tags: Vec::new(),
        seed: 0,
        nodes: nodes
            .iter()
            .map(|&(name, state)| Node {
                name: name.into(),
                state,
                participates: true,
            })
            .collect(),
        channels: channels
            .iter()
            .map(|&(from, to, latency, partitions)| Channel {
                from: index(from),
                to: index(to),
                latency,
                partitions,
                lose_markers: 0,
                down: None,
                lose_data: 0,
                late_data: None,
            })
            .collect(),
        sends: Vec::new(),
        snapshots: Vec::new(),
        limits: Limits::default(),
        expectations: Vec::new(),
        questions: Vec::new(),
    }
}

impl Dataflow {
    fn node(&self, name: &str) -> u32 {
        self.nodes.iter().position(|n| n.name == name).unwrap() as u32
    }

    fn chan(&self, from: &str, to: &str) -> u32 {
        let (f, t) = (self.node(from), self.node(to));
        self.channels
            .iter()
            .position(|c| c.from == f && c.to == t)
            .unwrap() as u32
    }

    pub(crate) fn send(
        mut self,
        at: u64,
        from: &str,
        to: &str,
        value: i64,
        kind: SendKind,
        partition: u32,
    ) -> Self {
        let channel = self.chan(from, to);
        self.sends.push(Send {
            at,
            channel,
            partition,
            value,
            kind,
        });
        self
    }

    pub(crate) fn snapshot(
        mut self,
        at: u64,
        initiators: &[&str],
        timeout: Option<u64>,
        markers: Markers,
    ) -> Self {
        let initiators = initiators.iter().map(|n| self.node(n)).collect();
        self.snapshots.push(Snapshot {
            at,
            initiators,
            timeout,
            markers,
            participants: None,
            timeout_from: TimeoutFrom::Attempt,
        });
        self
    }
}

fn recorded(
    f: &Dataflow,
    o: &Outcome,
    attempt: u32,
    from: &str,
    to: &str,
    p: u32,
) -> Option<Vec<i64>> {
    o.recorded(f, attempt, f.chan(from, to), p)
        .map(<[i64]>::to_vec)
}

fn node(f: &Dataflow, o: &Outcome, attempt: u32, name: &str) -> (N, Option<i64>) {
    let n = &o.attempts[attempt as usize].nodes[f.node(name) as usize];
    (n.status, n.recorded_state)
}

const ALL: Markers = Markers::EveryPartition;
const FIRST: Markers = Markers::FirstPartition;
use SendKind::{Add, Transfer};

fn seed_first() -> Dataflow {
    flow(
        &[("A", 10), ("B", 5), ("C", 2)],
        &[("A", "B", 1, 1), ("A", "C", 1, 1), ("B", "C", 3, 1)],
    )
    .send(0, "B", "C", 7, Add, 0)
    .snapshot(0, &["A"], None, ALL)
}

#[test]
fn the_seeds_first_run_captures_the_seven_in_flight() {
    let f = seed_first();
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!(a.outcome, O::Complete);
    assert_eq!(a.completed_at, Some(4));
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(10)));
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(5)));
    assert_eq!(node(&f, &o, 0, "C"), (N::Complete, Some(2)));
    assert_eq!(a.nodes[1].recorded_at, Some(1));
    assert_eq!(a.nodes[2].recorded_at, Some(1));
    assert_eq!(recorded(&f, &o, 0, "B", "C", 0), Some(vec![7]));
    assert_eq!(recorded(&f, &o, 0, "A", "C", 0), Some(vec![]));
    assert_eq!(recorded(&f, &o, 0, "A", "B", 0), Some(vec![]));
    // Adds are not conserved: no consistency check.
    assert_eq!(a.consistent, None);
    assert_eq!(a.max_recorded, 1);
    // The add reached C: 2 + 7.
    assert_eq!(o.states, [10, 5, 9]);
    assert_eq!(o.end, 4);
}

fn seed_second() -> Dataflow {
    flow(
        &[("A", 10), ("B", 5), ("C", 1)],
        &[("A", "C", 1, 1), ("B", "C", 3, 1)],
    )
    .snapshot(0, &["A"], Some(5), ALL)
    .snapshot(10, &["A", "B"], None, ALL)
}

#[test]
fn the_seeds_second_run_aborts_at_the_timeout_and_retries_clean() {
    let f = seed_second();
    let o = run(&f).unwrap();
    let first = &o.attempts[0];
    assert_eq!(first.outcome, O::Aborted);
    assert_eq!(first.aborted_at, Some(5));
    assert_eq!(first.completed_at, None);
    // A has no incoming channel: complete when it records, and keeps it.
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(10)));
    // B is no initiator and nothing reaches it: never records.
    assert_eq!(node(&f, &o, 0, "B"), (N::NotRecorded, None));
    // C recorded 1 at 1ms, waited for B->C, and was discarded.
    assert_eq!(node(&f, &o, 0, "C"), (N::Aborted, None));
    assert_eq!(first.nodes[2].discarded_state, Some(1));
    assert_eq!(recorded(&f, &o, 0, "A", "C", 0), None);
    let second = &o.attempts[1];
    assert_eq!(second.outcome, O::Complete);
    assert_eq!(second.completed_at, Some(13));
    assert_eq!(node(&f, &o, 1, "C"), (N::Complete, Some(1)));
    assert_eq!(recorded(&f, &o, 1, "A", "C", 0), Some(vec![]));
    assert_eq!(recorded(&f, &o, 1, "B", "C", 0), Some(vec![]));
}

#[test]
fn without_a_timeout_an_unreachable_node_leaves_the_attempt_incomplete() {
    let f = flow(
        &[("A", 10), ("B", 5), ("C", 1)],
        &[("A", "C", 1, 1), ("B", "C", 3, 1)],
    )
    .snapshot(0, &["A"], None, ALL);
    let o = run(&f).unwrap();
    assert_eq!(o.attempts[0].outcome, O::Incomplete);
    assert_eq!(node(&f, &o, 0, "C"), (N::Waiting, Some(1)));
    assert_eq!(node(&f, &o, 0, "B"), (N::NotRecorded, None));
    // Decision 9: a node with no incoming channel, not an initiator.
    assert_eq!(recorded(&f, &o, 0, "B", "C", 0), Some(vec![]));
}

/// The format's example: the 7 is sent before A records, and reaches C
/// ahead of A's marker on partition 0.
#[test]
fn sends_come_before_snapshots_at_an_instant() {
    let f = flow(&[("A", 10), ("C", 2)], &[("A", "C", 1, 2)])
        .send(0, "A", "C", 7, Transfer, 0)
        .snapshot(0, &["A"], Some(5), ALL);
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!(a.outcome, O::Complete);
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(3)));
    assert_eq!(node(&f, &o, 0, "C"), (N::Complete, Some(9)));
    assert_eq!(recorded(&f, &o, 0, "A", "C", 0), Some(vec![]));
    assert_eq!(recorded(&f, &o, 0, "A", "C", 1), Some(vec![]));
    assert_eq!(a.consistent, Some(true));
    assert_eq!(a.recorded_total, 12);
}

/// In flight across the cut: a transfer sent before the sender records
/// and arriving after the receiver records is the channel's state.
#[test]
fn a_transfer_in_flight_is_recorded_on_its_channel_and_the_cut_balances() {
    let f = flow(
        &[("A", 100), ("B", 0)],
        &[("A", "B", 5, 1), ("B", "A", 1, 1)],
    )
    .send(0, "A", "B", 30, Transfer, 0)
    .snapshot(0, &["B"], None, ALL);
    let o = run(&f).unwrap();
    // B records 0 at 0; its marker reaches A at 1 (A records 70); A's
    // marker reaches B at 6, after the 30 (at 5): recorded on A->B.
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(0)));
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(70)));
    assert_eq!(recorded(&f, &o, 0, "A", "B", 0), Some(vec![30]));
    assert_eq!(o.attempts[0].completed_at, Some(6));
    assert_eq!(o.attempts[0].consistent, Some(true));
}

/// One marker per multi-partition channel: a transfer sent after the
/// sender's cut on partition 1 arrives while the receiver still records
/// that partition, and is counted twice.
#[test]
fn first_partition_markers_count_a_transfer_on_partition_one_twice() {
    let f = flow(
        &[("A", 50), ("B", 50)],
        &[("A", "B", 2, 2), ("B", "A", 1, 1)],
    )
    .send(1, "A", "B", 10, Transfer, 1)
    .snapshot(0, &["A"], None, FIRST);
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    // A records 50 at 0; B records at 2 (50) and sends its marker to A
    // (arrives 3); the 10 leaves A at 1 (A's cut is before it) and
    // reaches B at 3 on partition 1, which B still records: B's state has
    // not changed, but the channel shows 10 that A's state never lost.
    assert_eq!(a.outcome, O::Complete);
    assert_eq!(a.completed_at, Some(3));
    assert_eq!(recorded(&f, &o, 0, "A", "B", 1), Some(vec![10]));
    assert_eq!(a.consistent, Some(false));
    assert_eq!(a.recorded_total, 110);
    // The same run with a marker on every partition: partition 1's marker
    // comes before the 10, so nothing is recorded and the cut balances.
    let mut every = f.clone();
    every.snapshots[0].markers = ALL;
    let o = run(&every).unwrap();
    assert_eq!(o.attempts[0].consistent, Some(true));
    assert_eq!(recorded(&every, &o, 0, "A", "B", 1), Some(vec![]));
}

#[test]
fn a_timeout_at_the_instant_a_marker_arrives_is_in_time() {
    let f = flow(&[("A", 1), ("B", 2)], &[("A", "B", 5, 1)]).snapshot(0, &["A"], Some(5), ALL);
    let o = run(&f).unwrap();
    assert_eq!(o.attempts[0].outcome, O::Complete);
    assert_eq!(o.attempts[0].completed_at, Some(5));
    let late = flow(&[("A", 1), ("B", 2)], &[("A", "B", 6, 1)]).snapshot(0, &["A"], Some(5), ALL);
    let o = run(&late).unwrap();
    assert_eq!(o.attempts[0].outcome, O::Aborted);
    // B had not recorded: it is not_recorded, not aborted; A keeps 1.
    assert_eq!(node(&late, &o, 0, "B"), (N::NotRecorded, None));
    assert_eq!(node(&late, &o, 0, "A"), (N::Complete, Some(1)));
    // The marker arrives at 6, after the abort, and is ignored.
    assert_eq!(
        o.attempts[0].partitions[0].marker,
        MarkerFate::Late { at: 6, held: None }
    );
}

#[test]
fn lose_markers_counts_every_partition_and_attempt_in_send_order() {
    let mut f = flow(&[("A", 1), ("B", 2)], &[("A", "B", 1, 2)])
        .snapshot(0, &["A"], Some(3), ALL)
        .snapshot(10, &["A"], Some(3), ALL);
    f.channels[0].lose_markers = 3;
    let o = run(&f).unwrap();
    // Attempt 1 sends markers 1 and 2 (both lost), attempt 2 sends 3
    // (lost, partition 0) and 4 (partition 1, arrives).
    assert_eq!(
        o.attempts[0].partitions[0].marker,
        MarkerFate::Lost { at: 0 }
    );
    assert_eq!(
        o.attempts[0].partitions[1].marker,
        MarkerFate::Lost { at: 0 }
    );
    assert_eq!(
        o.attempts[1].partitions[0].marker,
        MarkerFate::Lost { at: 10 }
    );
    assert_eq!(
        o.attempts[1].partitions[1].marker,
        MarkerFate::Arrived { at: 11 }
    );
    assert_eq!(o.attempts[0].outcome, O::Aborted);
    // Attempt 2: B records on partition 1's marker and waits for partition 0.
    assert_eq!(o.attempts[1].outcome, O::Aborted);
    assert_eq!(node(&f, &o, 1, "B"), (N::Aborted, None));
}

#[test]
fn a_down_window_holds_data_and_markers_in_send_order() {
    let mut f = flow(&[("A", 0), ("B", 0)], &[("A", "B", 2, 1)])
        .send(1, "A", "B", 5, Add, 0)
        .snapshot(2, &["A"], None, ALL)
        .send(3, "A", "B", 6, Add, 0);
    f.channels[0].down = Some(Window { from: 0, until: 10 });
    let o = run(&f).unwrap();
    // Everything leaves at 10 in send order (5, marker, 6) and arrives at
    // 12: B's state has the 5 when it records, the 6 comes after.
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(5)));
    assert_eq!(o.attempts[0].completed_at, Some(12));
    assert_eq!(o.states, [0, 11]);
    // A send at the window's end is not held.
    let mut g = flow(&[("A", 0), ("B", 0)], &[("A", "B", 2, 1)]).send(10, "A", "B", 5, Add, 0);
    g.channels[0].down = Some(Window { from: 0, until: 10 });
    let o = run(&g).unwrap();
    assert_eq!(o.end, 12);
}

#[test]
fn zero_latency_arrives_at_the_same_instant_after_what_was_scheduled() {
    let f = flow(&[("A", 4), ("B", 0)], &[("A", "B", 0, 1)])
        .send(0, "A", "B", 4, Transfer, 0)
        .snapshot(0, &["A"], Some(1), ALL);
    let o = run(&f).unwrap();
    // The transfer arrives at 0 before the marker (scheduled first).
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(0)));
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(4)));
    assert_eq!(o.attempts[0].completed_at, Some(0));
    assert_eq!(o.attempts[0].consistent, Some(true));
}

#[test]
fn an_aborted_node_takes_the_next_attempts_marker_as_a_fresh_first_marker() {
    let f = flow(
        &[("A", 3), ("B", 4), ("C", 5)],
        &[("A", "C", 1, 1), ("B", "C", 50, 1)],
    )
    .snapshot(0, &["A", "B"], Some(10), ALL)
    .snapshot(20, &["A", "B"], None, ALL);
    let o = run(&f).unwrap();
    assert_eq!(o.attempts[0].outcome, O::Aborted);
    assert_eq!(node(&f, &o, 0, "C"), (N::Aborted, None));
    // The first attempt's marker on B->C arrives at 50, during the second
    // attempt: it is ignored, and the second attempt waits for its own
    // (sent at 20, arriving at 70).
    assert_eq!(
        o.attempts[0].partitions[1].marker,
        MarkerFate::Late { at: 50, held: None }
    );
    assert_eq!(o.attempts[1].outcome, O::Complete);
    assert_eq!(o.attempts[1].completed_at, Some(70));
    assert_eq!(node(&f, &o, 1, "C"), (N::Complete, Some(5)));
}

#[test]
fn max_recorded_is_the_peak_a_node_buffered_discarded_recordings_included() {
    let mut f = flow(
        &[("A", 0), ("B", 0), ("C", 0)],
        &[("A", "C", 1, 1), ("B", "C", 1, 1)],
    );
    for t in 1..=7 {
        f = f.send(t, "B", "C", 1, Add, 0);
    }
    let f = f.snapshot(0, &["A"], Some(20), ALL);
    let o = run(&f).unwrap();
    // C records at 1 and buffers the 7 values on B->C (arriving 2..=8);
    // B never records, so the attempt aborts at 20 and discards them.
    assert_eq!(o.attempts[0].outcome, O::Aborted);
    assert_eq!(o.attempts[0].max_recorded, 7);
    assert_eq!(recorded(&f, &o, 0, "B", "C", 0), None);
}

#[test]
fn overlapping_attempts_record_independently() {
    let f = flow(
        &[("A", 10), ("B", 0)],
        &[("A", "B", 5, 1), ("B", "A", 5, 1)],
    )
    .snapshot(0, &["A"], None, ALL)
    .snapshot(1, &["B"], None, ALL)
    .send(2, "A", "B", 4, Transfer, 0);
    let o = run(&f).unwrap();
    // Attempt 1: A records 10 at 0, B at 5 (has 0; the 4 arrives at 7).
    // B's marker back reaches A at 10. The 4 was sent after A's cut and
    // arrived after B's: in neither state nor channel. Consistent: 10.
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(10)));
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(0)));
    assert_eq!(o.attempts[0].consistent, Some(true));
    // Attempt 2: B records 0 at 1, A at 6 (6 after sending 4), A's
    // marker reaches B at 11; the 4 arrives at 7 while B records A->B.
    assert_eq!(node(&f, &o, 1, "B"), (N::Complete, Some(0)));
    assert_eq!(node(&f, &o, 1, "A"), (N::Complete, Some(6)));
    assert_eq!(recorded(&f, &o, 1, "A", "B", 0), Some(vec![4]));
    assert_eq!(o.attempts[1].consistent, Some(true));
}

#[test]
fn an_attempt_that_never_started_reports_every_node_not_recorded() {
    let mut f = flow(&[("A", 1)], &[]).snapshot(5, &["A"], None, ALL);
    f.limits.max_time = 4;
    assert!(run(&f).is_err());
    f.limits.max_time = 5;
    let o = run(&f).unwrap();
    assert_eq!(o.attempts[0].outcome, O::Complete);
}

#[test]
fn a_run_stopped_at_a_time_shows_the_attempt_as_it_was() {
    let f = seed_first();
    let o = super::world::run_until(&f, 3).unwrap();
    let a = &o.attempts[0];
    // B's marker arrives at 4ms: at 3ms C still waits, with the 7 recorded.
    assert_eq!(a.outcome, O::Incomplete);
    assert_eq!(node(&f, &o, 0, "C"), (N::Waiting, Some(2)));
    assert_eq!(recorded(&f, &o, 0, "B", "C", 0), Some(vec![7]));
    assert_eq!(o.states, [10, 5, 9]);
    let o = super::world::run_until(&f, 2).unwrap();
    assert_eq!(recorded(&f, &o, 0, "B", "C", 0), Some(vec![]));
    assert_eq!(o.states, [10, 5, 2]);
    // At the end it is the whole run.
    let whole = run(&f).unwrap();
    let o = super::world::run_until(&f, 4).unwrap();
    assert_eq!(o.attempts[0].outcome, whole.attempts[0].outcome);
    assert_eq!(o.events, whole.events);
}

#[test]
fn only_a_files_first_failures_run_it_again_to_explain() {
    use crate::model::{Check, Value, Verdict};
    let mut f = seed_first();
    let bc = f.chan("B", "C");
    for _ in 0..6 {
        f.expectations.push(Expectation {
            target: Target::Recorded(0, bc, 0),
            check: Check::Equals(Value::Ints(vec![99])),
            span: 0..0,
            description: None,
        });
    }
    let o = run(&f).unwrap();
    let verdicts = super::judge::judge(&f, &o);
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed).collect();
    assert_eq!(failed.len(), 6);
    let source = crate::diagnostic::Source::new("t.toml", "");
    let problems = super::judge::failures(&source, &f, &o, &failed);
    let rerun =
        |p: &crate::diagnostic::Problem| p.help.as_deref().unwrap().contains("arrivals on B->C");
    assert_eq!(
        problems.iter().filter(|p| rerun(p)).count(),
        super::judge::MAX_RERUNS
    );
    assert!(
        problems[5]
            .help
            .as_deref()
            .unwrap()
            .contains("first 4 such failures")
    );
}

/// A dataflow file read as a user writes it.
fn file(text: &str) -> Dataflow {
    match super::load_one("t.toml", text, &[]) {
        Ok((flow, _)) => flow,
        Err(invalid) => panic!("{:?}", invalid.problems),
    }
}

/// `text` is refused, one of its problems saying `says`.
fn refused(text: &str, says: &str) {
    let Err(invalid) = super::load_one("t.toml", text, &[]) else {
        panic!("{text} is refused");
    };
    let problems: Vec<&String> = invalid.problems.iter().map(|p| &p.message).collect();
    assert!(
        problems.iter().any(|p| p.contains(says)),
        "{text}: {problems:?}"
    );
}

/// 28.14's first worked example: the seed's topology with B, a legacy
/// service that does not understand markers.
fn legacy(snapshot: &str) -> Dataflow {
    file(&format!(
        "[[node]]\nname = \"A\"\nstate = 10\n[[node]]\nname = \"B\"\nstate = 5\nparticipates = false\n\
         [[node]]\nname = \"C\"\nstate = 2\n\
         [[channel]]\nfrom = \"A\"\nto = \"B\"\n[[channel]]\nfrom = \"A\"\nto = \"C\"\n\
         [[channel]]\nfrom = \"B\"\nto = \"C\"\n\
         [[send]]\nfrom = \"A\"\nto = \"B\"\nvalue = 3\nkind = \"transfer\"\n\
         [[snapshot]]\ninitiators = [\"A\"]\n{snapshot}"
    ))
}

#[test]
fn s28_14_a_non_participant_is_left_out_of_a_cut_that_completes_without_it() {
    let f = legacy("");
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!(a.outcome, O::Complete);
    assert_eq!(a.completed_at, Some(1));
    assert_eq!(node(&f, &o, 0, "B"), (N::NotParticipating, None));
    assert_eq!(node(&f, &o, 0, "A"), (N::Complete, Some(7)));
    assert_eq!(node(&f, &o, 0, "C"), (N::Complete, Some(2)));
    // B got the 3 and dropped the marker; C waited on A->C only.
    assert_eq!(o.states[f.node("B") as usize], 8);
    assert_eq!(recorded(&f, &o, 0, "B", "C", 0), None, "an outside input");
    assert_eq!(a.recorded_total, 9);
    assert_eq!(a.consistent, Some(false));
    let pr = &a.partitions[o.partition(f.chan("A", "B"), 0)];
    assert_eq!(pr.marker, MarkerFate::Dropped { at: 1 });
    assert!(a.missing_participants.is_empty());
    let story = super::judge::explain(
        &f,
        &o,
        &Expectation {
            target: Target::Consistent(0),
            check: crate::model::Check::Equals(crate::model::Value::Bool(true)),
            span: 0..0,
            description: None,
        },
        false,
    );
    assert!(
        story.contains("recorded 9, the system holds 17: node B is not in the cut"),
        "{story}"
    );
}

#[test]
fn s28_14_a_registry_naming_a_non_participant_never_completes() {
    let f = legacy("participants = [\"A\", \"B\", \"C\"]\n");
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!(a.outcome, O::Incomplete);
    assert_eq!(a.missing_participants, vec![f.node("B")]);
    assert_eq!(node(&f, &o, 0, "A").0, N::Complete);
    assert_eq!(node(&f, &o, 0, "C").0, N::Complete);
    let value = super::judge::actual(&f, &o, Target::MissingParticipants(0));
    assert_eq!(value, crate::model::Value::Texts(vec!["B".into()]));
    // With a timeout: aborted at it, though no recorded node is left
    // incomplete (29.2.12).
    let f = legacy("participants = [\"A\", \"B\", \"C\"]\ntimeout = \"5ms\"\n");
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!((a.outcome, a.aborted_at), (O::Aborted, Some(5)));
    assert_eq!(a.missing_participants, vec![f.node("B")]);
    assert_eq!(node(&f, &o, 0, "C").0, N::Complete, "C was complete: kept");
    // A participating node not listed is not waited for: with A alone
    // listed, the attempt completes at 0, before A's marker reaches C.
    let f = legacy("participants = [\"A\"]\n");
    let o = run(&f).unwrap();
    assert_eq!(o.attempts[0].completed_at, Some(0));
    assert_eq!(node(&f, &o, 0, "C"), (N::NotRecorded, None));
}

/// 28.14's second worked example: a reordering channel, and a lossy one.
fn reordering(channel: &str) -> Dataflow {
    file(&format!(
        "[[node]]\nname = \"A\"\nstate = 100\n[[node]]\nname = \"B\"\n\
         [[channel]]\nfrom = \"A\"\nto = \"B\"\n{channel}\
         [[send]]\nfrom = \"A\"\nto = \"B\"\nvalue = 10\nkind = \"transfer\"\n\
         [[snapshot]]\ninitiators = [\"A\"]\n"
    ))
}

#[test]
fn s28_14_late_data_is_overtaken_by_a_marker_and_lost_data_never_arrives() {
    let f = reordering("late_data = { first = 1, by = \"5ms\" }\n");
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!((a.outcome, a.completed_at), (O::Complete, Some(1)));
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(0)));
    assert_eq!((a.recorded_total, a.consistent), (90, Some(false)));
    assert_eq!(o.states[1], 10, "the 10 arrives at 6ms");
    assert_eq!((o.lost[0], o.late[0]), (0, 1));
    let received = o
        .log
        .iter()
        .find(|e| matches!(e.what, super::outcome::Happened::Received { .. }));
    assert_eq!(received.map(|e| e.at), Some(6));
    // On time, the 10 arrives at 1ms ahead of the marker.
    let f = reordering("");
    let o = run(&f).unwrap();
    assert_eq!(node(&f, &o, 0, "B"), (N::Complete, Some(10)));
    assert_eq!(o.attempts[0].consistent, Some(true));
    // Lost: B ends at 0, the system holds 90.
    let f = reordering("lose_data = { first = 1 }\n");
    let o = run(&f).unwrap();
    assert_eq!((o.states[0], o.states[1]), (90, 0));
    assert_eq!((o.lost[0], o.late[0]), (1, 0));
    assert_eq!(o.attempts[0].consistent, Some(false));
    let story = super::judge::explain(
        &f,
        &o,
        &Expectation {
            target: Target::Consistent(0),
            check: crate::model::Check::Equals(crate::model::Value::Bool(true)),
            span: 0..0,
            description: None,
        },
        false,
    );
    assert!(story.contains("so the system now holds 90"), "{story}");
    assert!(
        story.contains("the transfer of 10 from A at 0s on A->B was lost"),
        "{story}"
    );
}

/// A late message at the instant another message sent after it arrives on
/// time comes after it (28.14: after anything not late).
#[test]
fn s28_14_late_data_comes_after_what_arrives_on_time_at_its_instant() {
    let f = file(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n\
         [[channel]]\nfrom = \"A\"\nto = \"B\"\nlate_data = { first = 1, by = \"2ms\" }\n\
         [[send]]\nfrom = \"A\"\nto = \"B\"\nvalue = 1\n\
         [[send]]\nat = \"2ms\"\nfrom = \"A\"\nto = \"B\"\nvalue = 2\n",
    );
    let o = run(&f).unwrap();
    let order: Vec<(u64, i64)> = (o.log.iter())
        .filter_map(|e| match e.what {
            super::outcome::Happened::Received { send, .. } => {
                Some((e.at, f.sends[send as usize].value))
            }
            _ => None,
        })
        .collect();
    assert_eq!(order, vec![(3, 2), (3, 1)]);
}

/// 28.14's third worked example: per-node clocks.
fn clocks(timeout_from: &str) -> Dataflow {
    file(&clocks_text(timeout_from))
}

fn clocks_text(timeout_from: &str) -> String {
    format!(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[node]]\nname = \"C\"\n\
         [[channel]]\nfrom = \"A\"\nto = \"B\"\nlatency = \"10ms\"\n\
         [[channel]]\nfrom = \"B\"\nto = \"C\"\nlatency = \"10ms\"\n\
         [[channel]]\nfrom = \"A\"\nto = \"C\"\nlatency = \"8ms\"\n\
         [[snapshot]]\ninitiators = [\"A\"]\ntimeout = \"15ms\"\n{timeout_from}"
    )
}

#[test]
fn s28_14_with_per_node_clocks_each_node_times_out_from_when_it_recorded() {
    let f = clocks("");
    let o = run(&f).unwrap();
    assert_eq!(
        (o.attempts[0].outcome, o.attempts[0].aborted_at),
        (O::Aborted, Some(15))
    );
    assert_eq!(node(&f, &o, 0, "C").0, N::Aborted);
    let f = clocks("timeout_from = \"first_marker\"\n");
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!(
        (a.outcome, a.completed_at, a.aborted_at),
        (O::Complete, Some(20), None)
    );
    // With 5ms: C's deadline is 8 + 5 = 13ms, before B's marker at
    // 20ms: C aborts then, and the attempt is aborted from then; B
    // records at 10ms (complete at once), so nothing is left waiting.
    let text = |t: &str| t.replace("timeout = \"15ms\"", "timeout = \"5ms\"");
    let f = file(&text(&clocks_text("timeout_from = \"first_marker\"\n")));
    let o = run(&f).unwrap();
    let a = &o.attempts[0];
    assert_eq!((a.outcome, a.aborted_at), (O::Aborted, Some(13)));
    assert_eq!(node(&f, &o, 0, "C").0, N::Aborted);
    assert_eq!(node(&f, &o, 0, "B").0, N::Complete);
    let pr = &a.partitions[o.partition(f.chan("B", "C"), 0)];
    assert_eq!(
        pr.marker,
        MarkerFate::Late { at: 20, held: None },
        "ended at 13ms"
    );
}

#[test]
fn s28_14_refusals_are_located() {
    let two =
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[channel]]\nfrom = \"A\"\nto = \"B\"\n";
    refused(
        &format!("{two}[[snapshot]]\ninitiators = [\"A\"]\ntimeout_from = \"first_marker\"\n"),
        "`timeout_from` goes with `timeout`",
    );
    refused(
        "[[node]]\nname = \"A\"\nparticipates = false\n[[snapshot]]\ninitiators = [\"A\"]\n",
        "node A does not take part in snapshots",
    );
    refused(
        &format!("{two}[[snapshot]]\ninitiators = [\"A\"]\nparticipants = [\"B\"]\n"),
        "the registry leaves out the initiator \"A\"",
    );
    refused(
        &format!("{two}[[snapshot]]\ninitiators = [\"A\"]\nparticipants = [\"A\", \"A\"]\n"),
        "\"A\" is named twice",
    );
    refused(
        &format!("{two}[[snapshot]]\ninitiators = [\"A\"]\nparticipants = [\"A\", \"Z\"]\n"),
        "names no node",
    );
    refused(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[channel]]\nfrom = \"A\"\nto = \"B\"\nlose_data = { first = 0 }\n",
        "lose_data.first",
    );
    refused(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[channel]]\nfrom = \"A\"\nto = \"B\"\nlate_data = { first = 1, by = \"0ms\" }\n",
        "late data is at least 1ms late",
    );
    refused(
        &format!(
            "{two}[[snapshot]]\ninitiators = [\"A\"]\n[expect.snapshot.1]\nmissing_participants = []\n"
        ),
        "`missing_participants` goes with `participants`",
    );
    refused(
        "[[node]]\nname = \"A\"\n[[node]]\nname = \"B\"\n[[channel]]\nfrom = \"A\"\nto = \"B\"\npartitions = 2\n[expect.channel.\"A->B.p1\"]\nlost = 0\n",
        "names a partition",
    );
}
