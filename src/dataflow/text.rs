//! A dataflow run as text: the transcript (`show`, golden transcripts)
//! and each attempt's recorded cut as tables. Colour-free and fixed-width.

use super::model::{Dataflow, SendKind};
use super::outcome::{Happened, Outcome};
use crate::duration::format as dur;
use crate::padded::table;
use crate::words::plural;

/// One happening as a sentence.
pub fn sentence(flow: &Dataflow, outcome: &Outcome, what: &Happened) -> String {
    let part = |p: u32| {
        let (c, k) = outcome.channel_of(p);
        flow.partition_name(c, k)
    };
    let held = |h: bool| if h { " (held by a down window)" } else { "" };
    // "A transfers 3 on A->B": a send's sender, verb, value and partition.
    let sent = |send: u32, partition: u32| {
        let s = &flow.sends[send as usize];
        let verb = match s.kind {
            SendKind::Add => "sends",
            SendKind::Transfer => "transfers",
        };
        format!(
            "{} {verb} {} on {}",
            flow.nodes[flow.channels[s.channel as usize].from as usize].name,
            s.value,
            part(partition)
        )
    };
    match *what {
        Happened::Sent {
            send,
            partition,
            arrives,
            held: h,
            late,
        } => format!(
            "{}, arriving at {}{}{}",
            sent(send, partition),
            dur(arrives),
            held(h),
            if late {
                " (late: late_data delays it)"
            } else {
                ""
            }
        ),
        Happened::DataLost { send, partition } => format!(
            "{}, and the channel loses it (lose_data): it never arrives",
            sent(send, partition)
        ),
        Happened::Received {
            send,
            partition,
            recorded,
        } => {
            let s = &flow.sends[send as usize];
            format!(
                "{} receives {} on {}{}",
                flow.nodes[flow.channels[s.channel as usize].to as usize].name,
                s.value,
                part(partition),
                if recorded { ", recorded in flight" } else { "" }
            )
        }
        Happened::Started { attempt } => {
            let names: Vec<&str> = flow.snapshots[attempt as usize]
                .initiators
                .iter()
                .map(|&n| flow.nodes[n as usize].name.as_str())
                .collect();
            format!(
                "snapshot {} starts, initiated by {}",
                attempt + 1,
                names.join(", ")
            )
        }
        Happened::Recorded {
            attempt,
            node,
            state,
        } => format!(
            "{} records its state {} (snapshot {})",
            flow.nodes[node as usize].name,
            state,
            attempt + 1
        ),
        Happened::MarkerSent {
            attempt,
            partition,
            arrives,
            held: h,
        } => format!(
            "marker {} sent on {}, arriving at {}{}",
            attempt + 1,
            part(partition),
            dur(arrives),
            held(h)
        ),
        Happened::MarkerLost { attempt, partition } => {
            format!("marker {} lost on {}", attempt + 1, part(partition))
        }
        Happened::MarkerReceived { attempt, partition } => {
            format!("marker {} arrives on {}", attempt + 1, part(partition))
        }
        Happened::MarkerIgnored { attempt, partition } => format!(
            "marker {} arrives on {} after its attempt ended: ignored",
            attempt + 1,
            part(partition)
        ),
        Happened::MarkerDropped { attempt, partition } => {
            let (c, _) = outcome.channel_of(partition);
            format!(
                "marker {} arrives on {} at {}, which does not take part in snapshots: dropped",
                attempt + 1,
                part(partition),
                flow.nodes[flow.channels[c as usize].to as usize].name
            )
        }
        Happened::NodeAborted { attempt, node } => format!(
            "{} is not complete at its own deadline and aborts, discarding its recording (snapshot {})",
            flow.nodes[node as usize].name,
            attempt + 1
        ),
        Happened::NodeComplete { attempt, node } => format!(
            "{} is complete (snapshot {})",
            flow.nodes[node as usize].name,
            attempt + 1
        ),
        Happened::Completed { attempt } => format!("snapshot {} is complete", attempt + 1),
        Happened::Aborted { attempt, discarded } => format!(
            "snapshot {} times out and aborts: {} node{} discard{} {} recording",
            attempt + 1,
            discarded,
            if discarded == 1 { "" } else { "s" },
            if discarded == 1 { "s" } else { "" },
            if discarded == 1 { "its" } else { "their" }
        ),
    }
}

/// The transcript: what happened (up to `until`, when given), then each
/// attempt's cut and the nodes' states at the end.
pub fn transcript(flow: &Dataflow, outcome: &Outcome, until: Option<u64>) -> String {
    let mut out = String::new();
    let partitions: u32 = flow.channels.iter().map(|c| c.partitions).sum();
    let n = |k: usize, one: &str, many: &str| plural(k as u64, one, many);
    out.push_str(&format!(
        "dataflow {}: {}, {} ({}), {}, {}\n\n",
        flow.name,
        n(flow.nodes.len(), "node", "nodes"),
        n(flow.channels.len(), "channel", "channels"),
        plural(partitions, "partition", "partitions"),
        n(flow.sends.len(), "send", "sends"),
        n(
            flow.snapshots.len(),
            "snapshot attempt",
            "snapshot attempts"
        ),
    ));
    let width = outcome
        .log
        .iter()
        .map(|e| dur(e.at).len())
        .max()
        .unwrap_or(2);
    for e in &outcome.log {
        if until.is_some_and(|t| e.at > t) {
            break;
        }
        out.push_str(&format!(
            "{:>width$}  {}\n",
            dur(e.at),
            sentence(flow, outcome, &e.what)
        ));
    }
    if outcome.log_dropped > 0 && until.is_none_or(|t| t >= outcome.end) {
        out.push_str(&format!(
            "... and {} more (a transcript keeps the first {})\n",
            outcome.log_dropped,
            super::outcome::MAX_LOG
        ));
    }
    out.push('\n');
    if let Some(t) = until {
        out.push_str(&format!(
            "as of {} (an attempt not finished by then shows as incomplete):\n",
            dur(t)
        ));
    }
    out.push_str(&cuts(flow, outcome, until.unwrap_or(outcome.end)));
    out
}

/// Each attempt's outcome and recorded cut, and the nodes' states as of
/// `as_of` (the run's end, or the `--at` it was stopped at).
pub fn cuts(flow: &Dataflow, outcome: &Outcome, as_of: u64) -> String {
    let mut out = String::new();
    for (k, a) in outcome.attempts.iter().enumerate() {
        let when = match (a.completed_at, a.aborted_at) {
            (Some(t), _) => format!(" at {}", dur(t)),
            (_, Some(t)) => format!(" at {}", dur(t)),
            _ => String::new(),
        };
        let consistent = match a.consistent {
            Some(true) => format!(
                ", consistent (recorded {} of {})",
                a.recorded_total,
                flow.total()
            ),
            Some(false) => format!(
                ", INCONSISTENT: recorded {}, the system holds {}",
                a.recorded_total,
                flow.total()
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "snapshot {}: {}{when}{consistent}, max_recorded {}\n",
            k + 1,
            a.outcome.as_str(),
            a.max_recorded
        ));
        let rows: Vec<Vec<String>> = flow
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| {
                let r = &a.nodes[n];
                vec![
                    node.name.clone(),
                    r.status.as_str().to_string(),
                    r.recorded_state.map_or("-".into(), |s| s.to_string()),
                    r.recorded_at.map_or("-".into(), dur),
                ]
            })
            .collect();
        let header = ["node", "status", "recorded_state", "recorded_at"].map(String::from);
        out.push_str(&indent(&table(&header, &rows)));
        if flow.snapshots[k].participants.is_some() && !a.missing_participants.is_empty() {
            let names: Vec<&str> = (a.missing_participants.iter())
                .map(|&n| flow.nodes[n as usize].name.as_str())
                .collect();
            out.push_str(&format!(
                "  missing participants (listed, never recorded): {}\n",
                names.join(", ")
            ));
        }
        let mut rows = Vec::new();
        for (c, ch) in flow.channels.iter().enumerate() {
            for p in 0..ch.partitions {
                let Some(values) = outcome.recorded(flow, k as u32, c as u32, p) else {
                    continue;
                };
                let list: Vec<String> = values.iter().map(i64::to_string).collect();
                let shown = if list.len() > 20 {
                    format!("[{}, ... {} values]", list[..20].join(", "), list.len())
                } else {
                    format!("[{}]", list.join(", "))
                };
                rows.push(vec![flow.partition_name(c as u32, p), shown]);
            }
        }
        if !rows.is_empty() {
            out.push_str(&indent(&table(
                &["channel".to_string(), "recorded".to_string()],
                &rows,
            )));
        }
        out.push('\n');
    }
    for (c, ch) in flow.channels.iter().enumerate() {
        if ch.lose_data > 0 || ch.late_data.is_some() {
            out.push_str(&format!(
                "channel {}: {} lost, {} late\n",
                flow.channel_name(c as u32),
                outcome.lost[c],
                outcome.late[c]
            ));
        }
    }
    let states: Vec<String> = flow
        .nodes
        .iter()
        .zip(&outcome.states)
        .map(|(n, s)| format!("{} {}", n.name, s))
        .collect();
    out.push_str(&format!(
        "states at {}: {}\n",
        dur(as_of),
        states.join(", ")
    ));
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
