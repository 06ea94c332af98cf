//! A dataflow file's `[expect]` and `[[question]]`: what each names
//! (an attempt, a node, a channel partition) checked against the file,
//! every problem located.

use crate::scenario::spanned::S;

use super::file;
use super::model::*;
use crate::diagnostic::did_you_mean;
use crate::model::Check;
use crate::scenario::expect::{Kind, check};
use crate::scenario::problems::Problems;

/// The forms a dataflow answer can take, for help texts.
const FORMS: &str = "`snapshot.N.outcome` (or completed_at, consistent, max_recorded, \
    aborted_at, missing_participants), `snapshot.N.node.NAME.recorded_state` (or status), \
    `snapshot.N.channel.FROM->TO.recorded`, `node.NAME.state`, `channel.FROM->TO.lost` (or late)";

pub(super) fn questions(
    problems: &mut Problems,
    raw: &[S<crate::scenario::questions::QuestionTable>],
    flow: &Dataflow,
    broken: &[(String, String)],
) -> Vec<Question> {
    crate::scenario::questions::read_questions(
        problems,
        raw,
        "split the lesson into several files",
        |problems, text| answer(problems, flow, text, broken, "answer"),
    )
}

/// What a column of a sweep's table names (`[sweep] columns`): the same
/// forms as a question's answer.
pub(super) fn column(problems: &mut Problems, flow: &Dataflow, name: &S<String>) -> Option<Target> {
    answer(problems, flow, name, &[], "column")
}

/// The value a question's `answer` names, or a located problem.
fn answer(
    problems: &mut Problems,
    flow: &Dataflow,
    raw: &S<String>,
    broken: &[(String, String)],
    what: &str,
) -> Option<Target> {
    let text = raw.get_ref().trim();
    let unquote = |s: &str| s.trim_matches('"').to_string();
    let wrong = |problems: &mut Problems, why: String| {
        problems.error_help(
            Some(raw.span()),
            why,
            if what == "answer" {
                "not an answer"
            } else {
                "not a column"
            },
            format!("a dataflow {what} is {FORMS}"),
        );
        None
    };
    let node = |problems: &mut Problems, name: &str| {
        let name = S::new(raw.span(), unquote(name));
        let found = flow.nodes.iter().position(|n| n.name == *name.get_ref());
        if found.is_none() {
            unknown_node(problems, &flow.nodes, &name, &format!("this {what}"));
        }
        found.map(|n| n as u32)
    };
    if let Some(rest) = text.strip_prefix("node.") {
        let Some(name) = rest.strip_suffix(".state") else {
            return wrong(
                problems,
                format!("`{text}` names no field of a node: write node.NAME.state"),
            );
        };
        return node(problems, name).map(Target::State);
    }
    if let Some(rest) = text.strip_prefix("channel.") {
        let (name, field) = match rest.rsplit_once('.') {
            Some((name, "lost")) => (name, Target::Lost as fn(ChannelIndex) -> Target),
            Some((name, "late")) => (name, Target::Late as fn(ChannelIndex) -> Target),
            _ => {
                return wrong(
                    problems,
                    format!(
                        "`{text}` names no field of a channel: write channel.FROM->TO.lost or .late"
                    ),
                );
            }
        };
        let name = S::new(raw.span(), unquote(name));
        return channel_named(problems, flow, &name, broken).map(field);
    }
    let Some(rest) = text.strip_prefix("snapshot.") else {
        return wrong(problems, format!("unknown {what} `{text}`"));
    };
    let (n, rest) = rest.split_once('.').unwrap_or((rest, ""));
    let attempt = match n.parse::<usize>() {
        Ok(k) if (1..=flow.snapshots.len()).contains(&k) => (k - 1) as u32,
        _ => return wrong(problems, format!("there is no snapshot attempt {n}")),
    };
    match rest {
        "outcome" => return Some(Target::Outcome(attempt)),
        "completed_at" => return Some(Target::CompletedAt(attempt)),
        "consistent" => return Some(Target::Consistent(attempt)),
        "max_recorded" => return Some(Target::MaxRecorded(attempt)),
        "aborted_at" => return Some(Target::AbortedAt(attempt)),
        "missing_participants" => return Some(Target::MissingParticipants(attempt)),
        _ => {}
    }
    if let Some(rest) = rest.strip_prefix("node.") {
        if let Some(name) = rest.strip_suffix(".recorded_state") {
            return node(problems, name).map(|n| Target::RecordedState(attempt, n));
        }
        if let Some(name) = rest.strip_suffix(".status") {
            return node(problems, name).map(|n| Target::Status(attempt, n));
        }
        return wrong(
            problems,
            format!("`{text}` names no field of a node in a snapshot"),
        );
    }
    if let Some(rest) = rest.strip_prefix("channel.") {
        let Some(name) = rest.strip_suffix(".recorded") else {
            return wrong(
                problems,
                format!("`{text}` names no field of a channel: write .recorded"),
            );
        };
        let name = S::new(raw.span(), unquote(name));
        return partition_named(problems, flow, &name, broken)
            .map(|(c, p)| Target::Recorded(attempt, c, p));
    }
    wrong(problems, format!("`{text}` names no field of a snapshot"))
}

pub(super) fn expectations(
    problems: &mut Problems,
    raw: S<file::ExpectTable>,
    flow: &Dataflow,
    broken: &[(String, String)],
) -> Vec<Expectation> {
    let raw = raw.into_inner();
    let mut out = Vec::new();
    let mut add = |problems: &mut Problems,
                   target: Target,
                   v: &Option<S<toml::Value>>,
                   kind: Kind,
                   field: &str| {
        if let Some(v) = v
            && let Some((check, description)) = check(problems, v, kind, field)
        {
            out.push(Expectation {
                target,
                check,
                span: v.span(),
                description,
            });
        }
    };
    let node_named = |problems: &mut Problems, name: &S<String>| {
        let found = flow.nodes.iter().position(|n| &n.name == name.get_ref());
        if found.is_none() {
            unknown_node(problems, &flow.nodes, name, "this expectation");
        }
        found.map(|n| n as u32)
    };
    for (n, table) in &raw.snapshot {
        let attempt = match n.get_ref().parse::<usize>() {
            Ok(k) if (1..=flow.snapshots.len()).contains(&k) => (k - 1) as u32,
            _ => {
                problems.error_help(
                    Some(n.span()),
                    format!("there is no snapshot attempt {}", n.get_ref()),
                    "no such attempt",
                    match flow.snapshots.len() {
                        0 => "the file has no [[snapshot]]".to_string(),
                        1 => "the file's one attempt is [expect.snapshot.1]".to_string(),
                        k => format!("attempts are numbered 1 to {k}, in file order"),
                    },
                );
                continue;
            }
        };
        let t = table.get_ref();
        add(
            problems,
            Target::Outcome(attempt),
            &t.outcome,
            Kind::Text,
            "outcome",
        );
        words(problems, &t.outcome, &OUTCOMES, "outcome");
        add(
            problems,
            Target::CompletedAt(attempt),
            &t.completed_at,
            Kind::TimeOrNever,
            "completed_at",
        );
        add(
            problems,
            Target::Consistent(attempt),
            &t.consistent,
            Kind::Bool,
            "consistent",
        );
        add(
            problems,
            Target::MaxRecorded(attempt),
            &t.max_recorded,
            Kind::Count,
            "max_recorded",
        );
        add(
            problems,
            Target::AbortedAt(attempt),
            &t.aborted_at,
            Kind::TimeOrNever,
            "aborted_at",
        );
        if let (Some(v), None) = (
            &t.missing_participants,
            &flow.snapshots[attempt as usize].participants,
        ) {
            problems.error_help(
                Some(v.span()),
                "`missing_participants` goes with `participants`",
                "this attempt has no registry",
                "without a registry the coordinator knows only the participating nodes, and misses none: add participants = [...] to the [[snapshot]], or remove the expectation",
            );
        } else {
            add(
                problems,
                Target::MissingParticipants(attempt),
                &t.missing_participants,
                Kind::Names,
                "missing_participants",
            );
        }
        for (name, nt) in &t.node {
            let Some(node) = node_named(problems, name) else {
                continue;
            };
            let nt = nt.get_ref();
            add(
                problems,
                Target::RecordedState(attempt, node),
                &nt.recorded_state,
                Kind::IntOrNever,
                "recorded_state",
            );
            add(
                problems,
                Target::Status(attempt, node),
                &nt.status,
                Kind::Text,
                "status",
            );
            words(problems, &nt.status, &STATUSES, "status");
        }
        for (name, ct) in &t.channel {
            let Some((c, p)) = partition_named(problems, flow, name, broken) else {
                continue;
            };
            add(
                problems,
                Target::Recorded(attempt, c, p),
                &ct.get_ref().recorded,
                // An aborted node keeps no recording (27.29): "never".
                Kind::IntsOrNever,
                "recorded",
            );
        }
    }
    for (name, ct) in &raw.channel {
        let Some(c) = channel_named(problems, flow, name, broken) else {
            continue;
        };
        let ct = ct.get_ref();
        add(problems, Target::Lost(c), &ct.lost, Kind::Count, "lost");
        add(problems, Target::Late(c), &ct.late, Kind::Count, "late");
    }
    for (name, nt) in &raw.node {
        if let Some(node) = node_named(problems, name) {
            add(
                problems,
                Target::State(node),
                &nt.get_ref().state,
                Kind::Int,
                "state",
            );
        }
    }
    if let Some(d) = raw.description {
        for e in out.iter_mut().filter(|e| e.description.is_none()) {
            e.description = Some(d.clone());
        }
    }
    out.sort_by_key(|e| e.span.start);
    // A `status` or `outcome` that is not one of its words was reported
    // by `words`: its expectation cannot pass, and is dropped.
    out.retain(|e| match (&e.target, &e.check) {
        (Target::Outcome(_), Check::Equals(crate::model::Value::Text(w))) => {
            OUTCOMES.contains(&w.as_str())
        }
        (Target::Status(..), Check::Equals(crate::model::Value::Text(w))) => {
            STATUSES.contains(&w.as_str())
        }
        _ => true,
    });
    out
}

/// An `outcome` or `status` is one of its words.
fn words(problems: &mut Problems, v: &Option<S<toml::Value>>, allowed: &[&str], field: &str) {
    let Some(v) = v else { return };
    let word = match v.get_ref() {
        toml::Value::String(s) => s.as_str(),
        toml::Value::Table(t) => match t.get("equals").and_then(toml::Value::as_str) {
            Some(s) => s,
            None => return,
        },
        _ => return,
    };
    if !allowed.contains(&word) {
        let help = match did_you_mean(word, allowed.iter().copied()) {
            Some(c) => format!("did you mean \"{c}\"?"),
            None => format!(
                "one of {}",
                allowed
                    .iter()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        problems.error_help(
            Some(v.span()),
            format!("unknown {field} \"{word}\""),
            format!("unknown {field}"),
            help,
        );
    }
}

/// "B->C": a channel of the file (a partition's name is refused: lost and
/// late data count every partition together).
fn channel_named(
    problems: &mut Problems,
    flow: &Dataflow,
    name: &S<String>,
    broken: &[(String, String)],
) -> Option<ChannelIndex> {
    let (c, p) = partition_named(problems, flow, name, broken)?;
    if p > 0 {
        problems.error_help(
            Some(name.span()),
            format!("\"{}\" names a partition", name.get_ref()),
            "a partition, not a channel",
            format!(
                "lost and late data count every partition of a channel together: name the channel, \"{}\"",
                flow.channel_name(c)
            ),
        );
        return None;
    }
    Some(c)
}

/// "B->C" or "B->C.p1": a channel of the file and one of its partitions.
fn partition_named(
    problems: &mut Problems,
    flow: &Dataflow,
    name: &S<String>,
    broken: &[(String, String)],
) -> Option<(ChannelIndex, u32)> {
    let text = name.get_ref();
    let (channel, partition) = match text.rsplit_once(".p") {
        Some((c, p)) if p.parse::<u32>().is_ok_and(|k| k > 0) => (c, p.parse::<u32>().ok()?),
        _ => (text.as_str(), 0),
    };
    let found = (0..flow.channels.len() as u32).find(|&c| flow.channel_name(c) == channel);
    let Some(c) = found else {
        let echo = broken.iter().any(|(f, t)| format!("{f}->{t}") == channel);
        if !echo {
            let names: Vec<String> = (0..flow.channels.len() as u32)
                .map(|c| flow.channel_name(c))
                .collect();
            let help = match did_you_mean(channel, names.iter().map(String::as_str)) {
                Some(s) => format!("did you mean \"{s}\"?"),
                None if names.len() <= 20 => format!("channels: {}", names.join(", ")),
                None => "name a channel as FROM->TO".to_string(),
            };
            problems.error_help(
                Some(name.span()),
                format!("there is no channel \"{channel}\""),
                "no such channel",
                help,
            );
        }
        return None;
    };
    let partitions = flow.channels[c as usize].partitions;
    if partition >= partitions {
        problems.error_help(
            Some(name.span()),
            format!("{channel} has no partition {partition}"),
            "no such partition",
            format!(
                "its partitions are numbered 0 to {}; partition 0 is \"{channel}\"",
                partitions - 1
            ),
        );
        return None;
    }
    Some((c, partition))
}

/// A name that is no node of the file: a located problem with the closest
/// name, or the nodes when there are few.
pub(super) fn unknown_node(problems: &mut Problems, nodes: &[Node], name: &S<String>, what: &str) {
    let help = match did_you_mean(name.get_ref(), nodes.iter().map(|n| n.name.as_str())) {
        Some(c) => format!("did you mean \"{c}\"?"),
        None if nodes.len() <= 20 => format!(
            "known nodes: {}",
            nodes
                .iter()
                .map(|n| format!("\"{}\"", n.name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "name a [[node]] of the file".to_string(),
    };
    problems.error_help(
        Some(name.span()),
        format!("{what} names no node: \"{}\"", name.get_ref()),
        "no such node",
        help,
    );
}
