//! Judging a dataflow run against its expectations, and explaining a
//! failure from the run: which markers never came and why, which transfer
//! a cut counted twice or missed, what arrived around a recording window.

use super::model::{Dataflow, Expectation, Markers, SendKind, Target, TimeoutFrom};
use super::outcome::{AttemptOutcome, MarkerFate, NodeStatus, Outcome, Recording, Watch};
use super::world;
use crate::diagnostic::{Problem, Source};
use crate::duration::format as dur;
use crate::model::{Value, Verdict};

/// What an expectation reads from the run.
pub fn actual(flow: &Dataflow, outcome: &Outcome, target: Target) -> Value {
    let attempt = |a: u32| &outcome.attempts[a as usize];
    match target {
        Target::Outcome(a) => Value::Text(attempt(a).outcome.as_str().to_string()),
        Target::CompletedAt(a) => attempt(a).completed_at.map_or(Value::Never, Value::Time),
        Target::Consistent(a) => attempt(a).consistent.map_or(Value::Never, Value::Bool),
        Target::MaxRecorded(a) => Value::Count(attempt(a).max_recorded),
        Target::RecordedState(a, n) => attempt(a).nodes[n as usize]
            .recorded_state
            .map_or(Value::Never, Value::Int),
        Target::Status(a, n) => Value::Text(attempt(a).status(n).as_str().to_string()),
        Target::Recorded(a, c, p) => outcome
            .recorded(flow, a, c, p)
            .map_or(Value::Never, |v| Value::Ints(v.to_vec())),
        Target::State(n) => Value::Int(outcome.states[n as usize]),
        Target::AbortedAt(a) => attempt(a).aborted_at.map_or(Value::Never, Value::Time),
        Target::MissingParticipants(a) => Value::Texts(
            (attempt(a).missing_participants.iter())
                .map(|&n| flow.nodes[n as usize].name.clone())
                .collect(),
        ),
        Target::Lost(c) => Value::Count(outcome.lost[c as usize]),
        Target::Late(c) => Value::Count(outcome.late[c as usize]),
    }
}

/// Every expectation's verdict, in file order.
pub fn judge(flow: &Dataflow, outcome: &Outcome) -> Vec<Verdict> {
    flow.expectations
        .iter()
        .enumerate()
        .map(|(index, e)| {
            let actual = actual(flow, outcome, e.target);
            Verdict {
                index,
                passed: e.check.holds(&actual),
                actual,
            }
        })
        .collect()
}

/// The diagnostics of the failed expectations, each explained from the
/// run (and, where an explanation needs what the run did not keep, from a
/// second run of the same file watching for it).
pub fn failures(
    source: &Source,
    flow: &Dataflow,
    outcome: &Outcome,
    failed: &[&Verdict],
) -> Vec<Problem> {
    let mut reruns = 0;
    failed
        .iter()
        .map(|v| {
            let e = &flow.expectations[v.index];
            // An explanation that needs a second run (the transfers at
            // fault, a partition's arrivals) gets one for the first
            // failures only: a file of many such failures costs a few
            // runs, not one each.
            let rerun = matches!(e.target, Target::Consistent(_) | Target::Recorded(..))
                && reruns < MAX_RERUNS;
            if rerun {
                reruns += 1;
            }
            let message = format!(
                "expected {}, got {}",
                super::model::describe(flow, e),
                v.actual
            );
            let label = format!("expected {}, got {}", e.check, v.actual);
            let mut help = String::new();
            if let Some(d) = &e.description {
                help.push_str(d.trim());
                help.push_str("\n\n");
            }
            help.push_str(&explain(flow, outcome, e, rerun));
            Problem::new(source, Some(e.span.clone()), message, label).with_help(help.trim_end())
        })
        .collect()
}

/// The failures of a file whose explanations run the file again (see
/// [`failures`]).
pub const MAX_RERUNS: usize = 4;

/// What an explanation says instead of what a second run would show.
fn not_rerun() -> String {
    format!(
        "(a file's first {MAX_RERUNS} such failures are explained from a second run; fix those first)"
    )
}

/// Why the run shows what it shows for an expectation's target; `rerun`:
/// whether it may run the file again to show what the run did not keep.
pub fn explain(flow: &Dataflow, outcome: &Outcome, e: &Expectation, rerun: bool) -> String {
    match e.target {
        Target::Outcome(a)
        | Target::CompletedAt(a)
        | Target::AbortedAt(a)
        | Target::MissingParticipants(a) => attempt_story(flow, outcome, a),
        Target::Lost(c) | Target::Late(c) => channel_data_story(flow, outcome, c),
        Target::Status(a, n) | Target::RecordedState(a, n) => {
            if outcome.attempts[a as usize].status(n) == NodeStatus::NotRecorded {
                return attempt_story(flow, outcome, a);
            }
            let mut s = node_story(flow, outcome, a, n);
            s.push('\n');
            s.push_str(&attempt_story(flow, outcome, a));
            s
        }
        Target::Consistent(a) => cut_story(flow, outcome, a, rerun),
        Target::MaxRecorded(a) => {
            let at = &outcome.attempts[a as usize];
            let mut s = format!(
                "the most values one node held recorded in snapshot {} was {}",
                a + 1,
                at.max_recorded
            );
            if let Some((n, node)) = at
                .nodes
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|(_, n)| n.buffered)
                .filter(|(_, n)| n.buffered > 0)
            {
                s.push_str(&format!(
                    " ({} recorded {} in all)",
                    flow.nodes[n].name, node.buffered
                ));
            }
            s.push('\n');
            s.push_str(&attempt_story(flow, outcome, a));
            s
        }
        Target::Recorded(a, c, p) => window_story(flow, outcome, a, c, p, rerun),
        Target::State(n) => format!(
            "{} started at {} and ended at {}",
            flow.nodes[n as usize].name, flow.nodes[n as usize].state, outcome.states[n as usize]
        ),
    }
}

fn attempt_story(flow: &Dataflow, outcome: &Outcome, a: u32) -> String {
    let at = &outcome.attempts[a as usize];
    let snap = &flow.snapshots[a as usize];
    let mut s = match at.outcome {
        AttemptOutcome::Complete => format!(
            "snapshot {} started at {} and completed at {}",
            a + 1,
            dur(snap.at),
            dur(at.completed_at.unwrap_or(0))
        ),
        AttemptOutcome::Aborted if snap.timeout_from == TimeoutFrom::FirstMarker => format!(
            "snapshot {} started at {} and aborted at {}, when a node was not complete at its own deadline ({} after it recorded, timeout_from = \"first_marker\")",
            a + 1,
            dur(snap.at),
            dur(at.aborted_at.unwrap_or(0)),
            dur(snap.timeout.unwrap_or(0))
        ),
        AttemptOutcome::Aborted => format!(
            "snapshot {} started at {} and aborted at its timeout, {}",
            a + 1,
            dur(snap.at),
            dur(at.aborted_at.unwrap_or(0))
        ),
        AttemptOutcome::Incomplete => format!(
            "snapshot {} started at {} and was still unfinished when the run ended at {} (it has no timeout)",
            a + 1,
            dur(snap.at),
            dur(outcome.end)
        ),
    };
    if let Some(listed) = &snap.participants {
        let names: Vec<String> = (at.missing_participants.iter())
            .map(|&n| {
                let node = &flow.nodes[n as usize];
                match node.participates {
                    false => format!("{} (it does not take part in snapshots)", node.name),
                    true => node.name.clone(),
                }
            })
            .collect();
        if !names.is_empty() {
            s.push_str(&format!(
                "; of the registry's {} nodes, never recorded: {}",
                listed.len(),
                names.join(", ")
            ));
        }
    }
    if at.outcome == AttemptOutcome::Complete {
        return s;
    }
    let missing = missing_markers(flow, outcome, a);
    if !missing.is_empty() {
        s.push_str("; markers that never came:");
        for line in missing.iter().take(10) {
            s.push_str("\n  ");
            s.push_str(line);
        }
        if missing.len() > 10 {
            s.push_str(&format!("\n  and {} more", missing.len() - 10));
        }
    }
    let unrecorded: Vec<u32> = (0..flow.nodes.len() as u32)
        .filter(|&n| at.status(n) == NodeStatus::NotRecorded)
        .collect();
    for &n in unrecorded.iter().take(5) {
        s.push('\n');
        s.push_str(&node_story(flow, outcome, a, n));
    }
    if unrecorded.len() > 5 {
        s.push_str(&format!(
            "\nand {} more nodes never recorded",
            unrecorded.len() - 5
        ));
    }
    s
}

/// Each partition a recorded node waited for in vain, with why.
fn missing_markers(flow: &Dataflow, outcome: &Outcome, a: u32) -> Vec<String> {
    let at = &outcome.attempts[a as usize];
    let snap = &flow.snapshots[a as usize];
    let mut out = Vec::new();
    for (c, ch) in flow.channels.iter().enumerate() {
        let c = c as u32;
        // Nodes not recorded are told by the nodes that wait for them; a
        // non-participant's channel is not waited for.
        if at.status(ch.to) != NodeStatus::Waiting && at.status(ch.to) != NodeStatus::Aborted
            || !flow.participates(ch.from)
        {
            continue;
        }
        let waited = match snap.markers {
            Markers::EveryPartition => ch.partitions,
            Markers::FirstPartition => 1,
        };
        for p in 0..waited {
            if let Some(why) = fate(flow, outcome, a, c, p) {
                out.push(format!("{}: {why}", flow.partition_name(c, p)));
            }
        }
    }
    out
}

/// What became of attempt `a`'s marker on a partition, when it did not
/// arrive in time.
fn fate(flow: &Dataflow, outcome: &Outcome, a: u32, c: u32, p: u32) -> Option<String> {
    let at = &outcome.attempts[a as usize];
    let ch = &flow.channels[c as usize];
    let end = at.aborted_at.unwrap_or(outcome.end);
    let from = &flow.nodes[ch.from as usize].name;
    let pr = &at.partitions[outcome.partition(c, p)];
    Some(match pr.marker {
        MarkerFate::Arrived { .. } => return None,
        MarkerFate::Dropped { at: t } => format!(
            "{} does not take part in snapshots and dropped it at {}",
            flow.nodes[ch.to as usize].name,
            dur(t)
        ),
        MarkerFate::NotSent => match at.status(ch.from) {
            NodeStatus::NotRecorded if flow.incoming(ch.from).next().is_none() => format!(
                "{from} never recorded: it is not an initiator and no channel leads to it, so no marker can reach it"
            ),
            NodeStatus::NotRecorded => {
                format!(
                    "{from} never recorded: no marker reached it by {}",
                    dur(end)
                )
            }
            NodeStatus::NotParticipating => {
                format!("{from} does not take part in snapshots: it sends no marker")
            }
            _ => format!("{from} sent no marker on it (markers = \"first_partition\")"),
        },
        MarkerFate::Lost { at: t } => format!(
            "the channel lost it at {} (lose_markers = {{ first = {} }})",
            dur(t),
            ch.lose_markers
        ),
        MarkerFate::InFlight {
            sent_at,
            departs,
            arrives,
        } if departs > sent_at => format!(
            "sent at {}, held by the channel's down window until {}, it would arrive at {}",
            dur(sent_at),
            dur(departs),
            dur(arrives)
        ),
        MarkerFate::InFlight {
            sent_at, arrives, ..
        } => format!(
            "sent at {}, it would arrive at {}, after the timeout",
            dur(sent_at),
            dur(arrives)
        ),
        MarkerFate::Late {
            at: t,
            held: Some(until),
        } => format!(
            "held by the channel's down window until {}, it arrived at {}, after the abort",
            dur(until),
            dur(t)
        ),
        MarkerFate::Late { at: t, held: None } => {
            format!("it arrived at {}, after the abort", dur(t))
        }
    })
}

fn node_story(flow: &Dataflow, outcome: &Outcome, a: u32, n: u32) -> String {
    let at = &outcome.attempts[a as usize];
    let node = &at.nodes[n as usize];
    let name = &flow.nodes[n as usize].name;
    match node.status {
        NodeStatus::NotRecorded => {
            let mut s = format!("{name} never recorded in snapshot {}", a + 1);
            let incoming: Vec<u32> = flow.incoming(n).collect();
            if incoming.is_empty() {
                s.push_str(": it is not an initiator and no channel leads to it");
            }
            for c in incoming {
                for p in 0..flow.channels[c as usize].partitions {
                    if let Some(why) = fate(flow, outcome, a, c, p) {
                        s.push_str(&format!("\n  {}: {why}", flow.partition_name(c, p)));
                    }
                }
            }
            s
        }
        NodeStatus::Waiting => format!(
            "{name} recorded {} at {} and was still waiting for markers",
            node.recorded_state.unwrap_or(0),
            dur(node.recorded_at.unwrap_or(0))
        ),
        NodeStatus::Complete => format!(
            "{name} recorded {} at {} and completed",
            node.recorded_state.unwrap_or(0),
            dur(node.recorded_at.unwrap_or(0))
        ),
        NodeStatus::Aborted => format!(
            "{name} recorded {} at {}, was not complete at the timeout, and discarded its recording",
            node.discarded_state.unwrap_or(0),
            dur(node.recorded_at.unwrap_or(0))
        ),
        NodeStatus::NotParticipating => format!(
            "{name} does not take part in snapshots (participates = false): it never records and drops every marker"
        ),
    }
}

/// Why a cut does not add up: the transfers it counted twice or missed.
fn cut_story(flow: &Dataflow, outcome: &Outcome, a: u32, rerun: bool) -> String {
    let at = &outcome.attempts[a as usize];
    let Some(false) = at.consistent else {
        return match at.consistent {
            Some(true) => format!(
                "snapshot {} recorded {}, the system's total",
                a + 1,
                at.recorded_total
            ),
            _ if at.outcome != AttemptOutcome::Complete => attempt_story(flow, outcome, a),
            _ => "consistency is checked only when every send is a transfer (an add creates value)"
                .to_string(),
        };
    };
    let mut s = format!(
        "snapshot {} recorded {}, the system holds {}",
        a + 1,
        at.recorded_total,
        flow.total()
    );
    let outside: Vec<&str> = (flow.nodes.iter())
        .filter(|n| !n.participates)
        .map(|n| n.name.as_str())
        .collect();
    match outside.as_slice() {
        [] => {}
        [one] => s.push_str(&format!(": node {one} is not in the cut")),
        many => s.push_str(&format!(": nodes {} are not in the cut", many.join(", "))),
    }
    let lost = lost_transfers(flow);
    if !lost.is_empty() {
        let gone: i128 = lost.iter().map(|&i| flow.sends[i].value as i128).sum();
        s.push_str(&format!(
            "; the channels lost transfers worth {gone}, so the system now holds {}:",
            flow.total() - gone
        ));
        for &i in lost.iter().take(10) {
            let send = &flow.sends[i];
            let ch = &flow.channels[send.channel as usize];
            s.push_str(&format!(
                "\n  the transfer of {} from {} at {} on {} was lost (lose_data): it left {} and reached nobody",
                send.value,
                flow.nodes[ch.from as usize].name,
                dur(send.at),
                flow.partition_name(send.channel, send.partition),
                flow.nodes[ch.from as usize].name,
            ));
        }
        if lost.len() > 10 {
            s.push_str(&format!("\n  and {} more lost", lost.len() - 10));
        }
    }
    if !rerun {
        s.push('\n');
        s.push_str(&not_rerun());
        return s;
    }
    let Ok(watched) = world::run_watching(
        flow,
        Watch {
            cut: Some(a),
            arrivals: None,
        },
    ) else {
        return s;
    };
    for d in &watched.watched.defects {
        let send = &flow.sends[d.send as usize];
        let ch = &flow.channels[send.channel as usize];
        let (from, to) = (
            &flow.nodes[ch.from as usize].name,
            &flow.nodes[ch.to as usize].name,
        );
        let name = flow.partition_name(send.channel, send.partition);
        let lead = format!(
            "\n  the transfer of {} from {from} at {} on {name}, arriving at {}",
            send.value,
            dur(send.at),
            dur(d.arrived)
        );
        let what = match (d.twice, d.in_channel) {
            (true, true) => format!(
                "counted twice: it left {from} after {from} recorded, so {from}'s recorded state still holds it, and {to} recorded it on {name} as in flight"
            ),
            (true, false) => format!(
                "counted twice: it left {from} after {from} recorded, so {from}'s recorded state still holds it, and it reached {to} before {to} recorded"
            ),
            (false, _) => format!(
                "missed: it left {from} before {from} recorded, and reached {to} after {to} recorded, when {name} was no longer recorded"
            ),
        };
        s.push_str(&format!("{lead}: {what}"));
    }
    let more = watched.watched.defects_total - watched.watched.defects.len() as u64;
    if more > 0 {
        s.push_str(&format!("\n  and {more} more"));
    }
    if flow.snapshots[a as usize].markers == Markers::FirstPartition {
        s.push_str(
            "\nwith markers = \"first_partition\" only partition 0 carries a marker, so a partition above 0 has no boundary between before and after the cut; markers = \"every_partition\" gives each partition its own",
        );
    }
    s
}

/// The arrivals on a partition around its recording window.
fn window_story(flow: &Dataflow, outcome: &Outcome, a: u32, c: u32, p: u32, rerun: bool) -> String {
    let at = &outcome.attempts[a as usize];
    let ch = &flow.channels[c as usize];
    let name = flow.partition_name(c, p);
    let receiver = &at.nodes[ch.to as usize];
    let to = &flow.nodes[ch.to as usize].name;
    let pr = &at.partitions[outcome.partition(c, p)];
    let mut s = match (receiver.status, receiver.recorded_at) {
        (NodeStatus::NotRecorded, _) => {
            format!("{to} never recorded, so {name} was never recorded")
        }
        (NodeStatus::Aborted, Some(t)) => format!(
            "{to} recorded at {} and discarded its recording at the abort, {}",
            dur(t),
            dur(at.aborted_at.unwrap_or(0))
        ),
        (_, t) => {
            let end = match pr.marker {
                MarkerFate::Arrived { at: m } if pr.recording == Recording::Stopped => {
                    format!("until its marker arrived at {}", dur(m))
                }
                _ => match at.completed_at.or(at.aborted_at) {
                    Some(e) => format!(
                        "until the attempt ended at {} (no marker of its own)",
                        dur(e)
                    ),
                    None => "until the run ended (no marker of its own)".to_string(),
                },
            };
            format!(
                "{to} recorded at {}; {name} was recorded from then {end}",
                dur(t.unwrap_or(0))
            )
        }
    };
    if !rerun {
        s.push('\n');
        s.push_str(&not_rerun());
        return s;
    }
    let part = outcome.partition(c, p) as u32;
    let Ok(watched) = world::run_watching(
        flow,
        Watch {
            cut: None,
            arrivals: Some((a, part)),
        },
    ) else {
        return s;
    };
    let arrivals = &watched.watched.arrivals;
    if arrivals.is_empty() {
        s.push_str(&format!("\nnothing arrived on {name} in the whole run"));
        return s;
    }
    s.push_str(&format!("\narrivals on {name}:"));
    for arrival in arrivals {
        let send = &flow.sends[arrival.send as usize];
        s.push_str(&format!(
            "\n  {} {} (sent at {}){}",
            dur(arrival.at),
            arrival.value,
            dur(send.at),
            if arrival.recorded { "  recorded" } else { "" }
        ));
    }
    let more = watched.watched.arrivals_total - arrivals.len() as u64;
    if more > 0 {
        s.push_str(&format!("\n  and {more} more"));
    }
    s
}

/// The transfers the channels lose (`lose_data`), as indexes into the
/// sends, in send order: each channel's first N data messages.
fn lost_transfers(flow: &Dataflow) -> Vec<usize> {
    if flow.channels.iter().all(|c| c.lose_data == 0) {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..flow.sends.len()).collect();
    order.sort_by_key(|&i| flow.sends[i].at);
    let mut sent = vec![0u64; flow.channels.len()];
    let mut lost = Vec::new();
    for i in order {
        let c = flow.sends[i].channel as usize;
        if sent[c] < flow.channels[c].lose_data && flow.sends[i].kind == SendKind::Transfer {
            lost.push(i);
        }
        sent[c] += 1;
    }
    lost
}

/// A channel's lost and late data messages.
fn channel_data_story(flow: &Dataflow, outcome: &Outcome, c: u32) -> String {
    let ch = &flow.channels[c as usize];
    let mut s = format!(
        "{} lost {} and delivered {} late",
        flow.channel_name(c),
        crate::words::plural(outcome.lost[c as usize], "data message", "data messages"),
        outcome.late[c as usize]
    );
    if ch.lose_data > 0 {
        s.push_str(&format!(
            "; lose_data = {{ first = {} }} loses its first {} data messages, every partition together, in send order",
            ch.lose_data, ch.lose_data
        ));
    }
    if let Some((first, by)) = ch.late_data {
        s.push_str(&format!(
            "; late_data = {{ first = {first}, by = \"{}\" }} delays its first {first} by {}",
            dur(by),
            dur(by)
        ));
    }
    let sent = flow.sends.iter().filter(|x| x.channel == c).count();
    s.push_str(&format!("; the file sends {sent} on it"));
    s
}
