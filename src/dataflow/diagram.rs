//! The space-time diagram of a dataflow run, as SVG: one line per node,
//! time running right, each send and marker an arrow from its sender's
//! line at the send to its receiver's line at the arrival, and each
//! attempt's cut drawn through the instants its nodes recorded. Values
//! recorded in flight are highlighted. Every text from the file is
//! escaped; the picture has a fixed size whatever the run.

use std::fmt::Write;

use super::model::Dataflow;
use super::outcome::{Happened, Outcome};
use crate::duration::format as dur;

/// Arrows drawn at most (the first ones of the run); the rest are counted
/// under the picture.
pub const MAX_ARROWS: usize = 2_000;

/// Nodes drawn at most, in the diagram and in the graph (the first ones of
/// the file).
pub const MAX_NODES_DRAWN: usize = 40;

/// Channels the graph of a Markdown report draws at most (Mermaid, which
/// renders it on GitHub, refuses a flowchart of more than 500 edges).
pub const MAX_GRAPH_CHANNELS: usize = 200;

const LEFT: f64 = 90.0;
const WIDTH: f64 = 900.0;
const LANE: f64 = 56.0;
const TOP: f64 = 30.0;

/// Colours of the attempts' cuts, in turn.
const CUTS: [&str; 5] = ["#7b3fb0", "#1f7a4d", "#b8570b", "#2260a8", "#a0224e"];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The graph of nodes and channels a Markdown report draws (as a Mermaid
/// flowchart): the first [`MAX_NODES_DRAWN`] nodes, each with its index,
/// and the first [`MAX_GRAPH_CHANNELS`] channels between them, each with
/// the indices of its ends; and how many of each were left out. Names stay
/// as the file wrote them; the template escapes them.
pub fn graph(flow: &Dataflow) -> serde_json::Value {
    let nodes = flow.nodes.len().min(MAX_NODES_DRAWN);
    let mut channels = Vec::new();
    let mut left_out = 0usize;
    for (c, ch) in flow.channels.iter().enumerate() {
        let drawn = (ch.from as usize) < nodes && (ch.to as usize) < nodes;
        if !drawn || channels.len() >= MAX_GRAPH_CHANNELS {
            left_out += 1;
            continue;
        }
        let mut channel = serde_json::json!({
            "channel": flow.channel_name(c as u32),
            "from": ch.from,
            "to": ch.to,
            "latency": ch.latency,
            "partitions": ch.partitions,
            "lose_markers": ch.lose_markers,
            "down": ch.down.map(|w| serde_json::json!({ "from": w.from, "until": w.until })),
        });
        if ch.lose_data > 0 {
            channel["lose_data"] = serde_json::json!(ch.lose_data);
        }
        if let Some((first, by)) = ch.late_data {
            channel["late_data"] = serde_json::json!({ "first": first, "by": by });
        }
        channels.push(channel);
    }
    serde_json::json!({
        "nodes": flow.nodes.iter().take(nodes).enumerate()
            .map(|(i, n)| serde_json::json!({ "index": i, "name": n.name }))
            .collect::<Vec<_>>(),
        "channels": channels,
        "nodes_left_out": flow.nodes.len() - nodes,
        "channels_left_out": left_out,
    })
}

/// The diagram, and how many arrows were left out.
pub fn svg(flow: &Dataflow, outcome: &Outcome) -> (String, usize) {
    let nodes = flow.nodes.len().min(MAX_NODES_DRAWN);
    let end = outcome.end.max(1) as f64;
    let x = |t: u64| LEFT + (t as f64 / end) * (WIDTH - LEFT - 20.0);
    let y = |n: u32| TOP + LANE * n as f64;
    let height = TOP + LANE * nodes.saturating_sub(1) as f64 + 50.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg id="dataflow-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="space-time diagram">"#
    );
    s.push_str(r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>"##);
    for (i, node) in flow.nodes.iter().take(nodes).enumerate() {
        let yy = y(i as u32);
        let _ = write!(
            s,
            r#"<g class="node-lane"><text x="8" y="{:.1}" class="node-name">{}</text><line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" class="lane-line"/></g>"#,
            yy + 4.0,
            escape(&node.name),
            WIDTH - 20.0
        );
    }
    // Time ticks: the start, the end and three between.
    let bottom = height - 20.0;
    for k in 0..=4u64 {
        let t = outcome.end * k / 4;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{bottom:.1}" class="tick">{}</text>"#,
            x(t),
            dur(t)
        );
    }
    let mut drawn = 0usize;
    let mut left_out = 0usize;
    let lane_of = |p: u32| {
        let (c, _) = outcome.channel_of(p);
        let ch = &flow.channels[c as usize];
        (ch.from, ch.to)
    };
    // Sends: from their send to their receipt.
    let mut sent_at: std::collections::BTreeMap<u32, u64> = std::collections::BTreeMap::new();
    for e in &outcome.log {
        match e.what {
            Happened::Sent { send, .. } => {
                sent_at.insert(send, e.at);
            }
            Happened::Received {
                send,
                partition,
                recorded,
            } => {
                let (from, to) = lane_of(partition);
                let Some(start) = sent_at.remove(&send) else {
                    continue;
                };
                if drawn >= MAX_ARROWS || from as usize >= nodes || to as usize >= nodes {
                    left_out += 1;
                    continue;
                }
                drawn += 1;
                let class = if recorded { "send recorded" } else { "send" };
                let _ = write!(
                    s,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" class="{class}" marker-end="url(#arrow)"><title>{} at {}, arriving at {}{}</title></line>"#,
                    x(start),
                    y(from),
                    x(e.at),
                    y(to),
                    flow.sends[send as usize].value,
                    dur(start),
                    dur(e.at),
                    if recorded { ": recorded in flight" } else { "" }
                );
            }
            Happened::MarkerSent {
                attempt,
                partition,
                arrives,
                ..
            } => {
                let (from, to) = lane_of(partition);
                if drawn >= MAX_ARROWS || from as usize >= nodes || to as usize >= nodes {
                    left_out += 1;
                    continue;
                }
                drawn += 1;
                let _ = write!(
                    s,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" class="marker" stroke="{}" marker-end="url(#arrow)"><title>marker {} sent at {}, arriving at {}</title></line>"#,
                    x(e.at),
                    y(from),
                    x(arrives),
                    y(to),
                    CUTS[attempt as usize % CUTS.len()],
                    attempt + 1,
                    dur(e.at),
                    dur(arrives)
                );
            }
            Happened::MarkerLost { attempt, partition } => {
                let (from, to) = lane_of(partition);
                if from as usize >= nodes || to as usize >= nodes {
                    continue;
                }
                let (x0, y0) = (x(e.at), y(from));
                let y1 = y0 + (y(to) - y0) * 0.3;
                let _ = write!(
                    s,
                    r#"<g class="lost"><line x1="{x0:.1}" y1="{y0:.1}" x2="{x0:.1}" y2="{y1:.1}" class="marker" stroke="{}"/><text x="{:.1}" y="{:.1}" class="lost-mark">×</text><title>marker {} lost at {}</title></g>"#,
                    CUTS[attempt as usize % CUTS.len()],
                    x0 - 4.0,
                    y1 + 4.0,
                    attempt + 1,
                    dur(e.at)
                );
            }
            _ => {}
        }
    }
    // Each attempt's cut, through the instants its nodes recorded.
    for (k, a) in outcome.attempts.iter().enumerate() {
        let points: Vec<String> = a
            .nodes
            .iter()
            .enumerate()
            .take(nodes)
            .filter_map(|(n, r)| {
                r.recorded_at
                    .map(|t| format!("{:.1},{:.1}", x(t), y(n as u32)))
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let dash = if a.outcome == super::outcome::AttemptOutcome::Complete {
            ""
        } else {
            r#" stroke-dasharray="6 4""#
        };
        let _ = write!(
            s,
            r#"<polyline points="{}" class="cut" stroke="{}"{dash}><title>snapshot {}: {}</title></polyline>"#,
            points.join(" "),
            CUTS[k % CUTS.len()],
            k + 1,
            a.outcome.as_str()
        );
        for (n, r) in a.nodes.iter().enumerate().take(nodes) {
            if let Some(t) = r.recorded_at {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}" class="record"><title>{} records {} (snapshot {})</title></circle>"#,
                    x(t),
                    y(n as u32),
                    CUTS[k % CUTS.len()],
                    escape(&flow.nodes[n].name),
                    r.recorded_state
                        .or(r.discarded_state)
                        .map_or("-".to_string(), |v| v.to_string()),
                    k + 1
                );
            }
        }
    }
    let _ = write!(
        s,
        r#"<line id="dataflow-cursor" x1="{LEFT}" y1="10" x2="{LEFT}" y2="{:.1}" class="cursor"/>"#,
        bottom - 12.0
    );
    s.push_str("</svg>");
    (s, left_out + outcome.log_dropped as usize)
}

/// Where time `t` falls on the diagram's axis (for the scrubber).
pub fn axis(outcome: &Outcome) -> (f64, f64, u64) {
    (LEFT, WIDTH - 20.0, outcome.end.max(1))
}
