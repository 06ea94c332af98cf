//! From a dataflow file's tables to a [`Dataflow`], every problem of
//! meaning located and reported in one pass.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::scenario::spanned::S;

use super::file::{self, File};
use super::model::*;
use crate::diagnostic::{Problem, Source, did_you_mean};
use crate::model::Millis;
use crate::scenario::problems::{MAX_ID, Problems};

/// Reads a parsed dataflow document into the model; `points` are the
/// `[[expect.point]]` tables of a sweep that apply (without `where`),
/// each read as an `[expect]`.
pub(crate) fn read<'i>(
    source: &Source,
    mut root: toml::Spanned<toml::de::DeTable<'i>>,
    stem: &str,
    points: Vec<toml::Spanned<toml::de::DeValue<'i>>>,
) -> Result<Dataflow, Vec<Problem>> {
    use serde::Deserialize;
    let mut problems = Problems {
        source,
        list: Vec::new(),
    };
    // A queue's tables do not apply to a dataflow: each is named where it
    // is, and the rest of the file is still read.
    let foreign: Vec<_> = root
        .get_ref()
        .iter()
        .filter(|(k, _)| !file::TABLES.contains(&k.get_ref().as_ref()))
        .map(|(k, _)| k.clone())
        .collect();
    for k in &foreign {
        let name = k.get_ref().as_ref();
        let help = if crate::scenario::file::TABLES.contains(&name) {
            format!(
                "a file with [[node]] entries is a dataflow scenario; [{name}] belongs to queue scenarios (remove it, or the [[node]] entries)"
            )
        } else {
            match did_you_mean(name, file::TABLES) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("a dataflow file has: {}", file::TABLES.join(", ")),
            }
        };
        problems.error_help(
            Some(k.span()),
            format!("`{name}` does not apply to a dataflow scenario"),
            "not a dataflow table",
            help,
        );
        root.get_mut().remove(k);
    }
    let raw = match File::deserialize(toml::de::Deserializer::from(root.clone())) {
        Ok(raw) => raw,
        Err(e) => {
            // Every table and entry read on its own: each one's first
            // mistake is reported, not only the file's first.
            let mut each = types(source, &root);
            if each.is_empty() {
                each.push(crate::scenario::toml_errors::toml_problem(source, &e));
            }
            problems.list.extend(each);
            return Err(sorted(problems.list));
        }
    };
    let mut point_tables = Vec::new();
    for fields in points {
        let span = fields.span();
        match file::ExpectTable::deserialize(toml::de::ValueDeserializer::from(fields)) {
            Ok(t) => point_tables.push(S::new(span, t)),
            Err(e) => problems
                .list
                .push(crate::scenario::toml_errors::toml_problem(source, &e)),
        }
    }
    let flow = validate(&mut problems, raw, stem, point_tables);
    match flow {
        Some(f) if problems.list.is_empty() => Ok(f),
        _ => Err(sorted(problems.list)),
    }
}

/// The type problems of each table and of each entry of an array of
/// tables, read on its own.
fn types(source: &Source, root: &toml::Spanned<toml::de::DeTable<'_>>) -> Vec<Problem> {
    use crate::scenario::file::ScenarioMeta;
    use crate::scenario::questions::QuestionTable;
    type V<'i> = toml::Spanned<toml::de::DeValue<'i>>;
    fn one<'i, T: serde::Deserialize<'i>>(source: &Source, v: &V<'i>, out: &mut Vec<Problem>) {
        if let Err(e) = T::deserialize(toml::de::ValueDeserializer::from(v.clone())) {
            out.push(crate::scenario::toml_errors::toml_problem(source, &e));
        }
    }
    fn entries<'i, T: serde::Deserialize<'i>>(source: &Source, v: &V<'i>, out: &mut Vec<Problem>) {
        match v.get_ref() {
            toml::de::DeValue::Array(items) => {
                for item in items.iter() {
                    one::<T>(source, item, out);
                }
            }
            _ => one::<Vec<T>>(source, v, out),
        }
    }
    let mut out = Vec::new();
    for (key, v) in root.get_ref().iter() {
        match key.get_ref().as_ref() {
            "scenario" => one::<ScenarioMeta>(source, v, &mut out),
            "limits" => one::<file::LimitsTable>(source, v, &mut out),
            "expect" => one::<file::ExpectTable>(source, v, &mut out),
            "node" => entries::<file::NodeTable>(source, v, &mut out),
            "channel" => entries::<file::ChannelTable>(source, v, &mut out),
            "send" => entries::<file::SendTable>(source, v, &mut out),
            "snapshot" => entries::<file::SnapshotTable>(source, v, &mut out),
            "question" => entries::<QuestionTable>(source, v, &mut out),
            _ => {}
        }
    }
    out
}

fn sorted(mut list: Vec<Problem>) -> Vec<Problem> {
    list.sort_by_key(Problem::offset);
    list
}

fn validate(
    problems: &mut Problems,
    raw: File,
    stem: &str,
    points: Vec<S<file::ExpectTable>>,
) -> Option<Dataflow> {
    let meta_span = raw.scenario.as_ref().map_or(0..0, |s| s.span());
    let meta = raw.scenario.map(|s| s.into_inner());
    if let Some(m) = &meta {
        crate::scenario::validate::printable_texts(problems, m, meta_span);
    }
    let name = meta
        .as_ref()
        .and_then(|m| m.name.as_ref().map(|n| n.get_ref().clone()))
        .unwrap_or_else(|| stem.to_string());
    let seed = match meta.as_ref().and_then(|m| m.seed.as_ref()) {
        Some(s) => problems.count(s, "seed", 0, i64::MAX).unwrap_or(0),
        None => 0,
    };

    let nodes = nodes(problems, &raw.node);
    let by_name: BTreeMap<&str, NodeIndex> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect();
    let node_of = |problems: &mut Problems, name: &S<String>, what: &str| -> Option<NodeIndex> {
        let found = by_name.get(name.get_ref().as_str()).copied();
        if found.is_none() {
            super::expect::unknown_node(problems, &nodes, name, what);
        }
        found
    };

    let mut channels: Vec<Channel> = Vec::new();
    let mut channel_spans: Vec<Range<usize>> = Vec::new();
    let mut total_partitions = 0u64;
    if raw.channel.len() > MAX_CHANNELS {
        problems.error(
            raw.channel[MAX_CHANNELS].span(),
            format!("a dataflow has at most {MAX_CHANNELS} channels"),
            "too many channels",
        );
    }
    // The pairs of channels that could not be read: a send or an
    // expectation naming one is an echo, not a problem of its own.
    let mut broken: Vec<(String, String)> = Vec::new();
    for c in raw.channel.iter().take(MAX_CHANNELS) {
        let t = c.get_ref();
        let from = node_of(problems, &t.from, "`from`");
        let to = node_of(problems, &t.to, "`to`");
        let latency = t.latency.as_ref().map_or(1, |l| l.get_ref().0);
        let partitions = match &t.partitions {
            Some(p) => problems
                .count(p, "partitions", 1, MAX_PARTITIONS as i64)
                .map(|n| n as u32),
            None => Some(1),
        };
        let lose_markers = match &t.lose_markers {
            Some(l) => problems.count(&l.get_ref().first, "lose_markers.first", 0, i64::MAX),
            None => Some(0),
        };
        let down = t.down.as_ref().map(|d| {
            let d = d.get_ref();
            let from = d.from.get_ref().0;
            Window {
                from,
                until: from.saturating_add(d.duration.get_ref().0),
            }
        });
        let lose_data = match &t.lose_data {
            Some(l) => problems.count(&l.get_ref().first, "lose_data.first", 1, i64::MAX),
            None => Some(0),
        };
        let late_data = match &t.late_data {
            Some(l) => {
                let l = l.get_ref();
                let first = problems.count(&l.first, "late_data.first", 1, i64::MAX);
                let by = l.by.get_ref().0;
                if by == 0 {
                    problems.error_help(
                        Some(l.by.span()),
                        "late data is at least 1ms late",
                        "zero",
                        "give `by` a duration such as \"5ms\", or remove late_data",
                    );
                }
                first.filter(|_| by > 0).map(|n| Some((n, by)))
            }
            None => Some(None),
        };
        let (
            Some(from),
            Some(to),
            Some(partitions),
            Some(lose_markers),
            Some(lose_data),
            Some(late_data),
        ) = (from, to, partitions, lose_markers, lose_data, late_data)
        else {
            broken.push((t.from.get_ref().clone(), t.to.get_ref().clone()));
            continue;
        };
        if from == to {
            problems.error_help(
                Some(c.span()),
                format!("channel {} goes from a node to itself", t.from.get_ref()),
                "a loop",
                "a channel joins two different nodes",
            );
            continue;
        }
        if let Some(i) = channels.iter().position(|o| o.from == from && o.to == to) {
            problems.error_help(
                Some(c.span()),
                format!(
                    "a second channel {}->{}",
                    t.from.get_ref(),
                    t.to.get_ref()
                ),
                "a second channel for one pair",
                format!(
                    "there is at most one channel per ordered pair of nodes; the first is at byte {}: give it more partitions instead",
                    channel_spans[i].start
                ),
            );
            continue;
        }
        total_partitions += partitions as u64;
        channels.push(Channel {
            from,
            to,
            latency,
            partitions,
            lose_markers,
            down,
            lose_data,
            late_data,
        });
        channel_spans.push(c.span());
    }
    if total_partitions > MAX_TOTAL_PARTITIONS {
        problems.error(
            raw.channel.last().map_or(0..0, |c| c.span()),
            format!(
                "the channels have {total_partitions} partitions in all; a dataflow has at most {MAX_TOTAL_PARTITIONS}"
            ),
            "too many partitions",
        );
    }
    let channel_of = |from: NodeIndex, to: NodeIndex| {
        channels
            .iter()
            .position(|c| c.from == from && c.to == to)
            .map(|c| c as u32)
    };

    let mut sends = Vec::with_capacity(raw.send.len());
    for s in &raw.send {
        let t = s.get_ref();
        let from = node_of(problems, &t.from, "`from`");
        let to = node_of(problems, &t.to, "`to`");
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        let Some(channel) = channel_of(from, to) else {
            let pair = (t.from.get_ref().clone(), t.to.get_ref().clone());
            if !broken.contains(&pair) {
                problems.error_help(
                    Some(s.span()),
                    format!(
                        "no channel {}->{} to send on",
                        t.from.get_ref(),
                        t.to.get_ref()
                    ),
                    "no such channel",
                    format!(
                        "add a [[channel]] with from = \"{}\" and to = \"{}\"",
                        t.from.get_ref(),
                        t.to.get_ref()
                    ),
                );
            }
            continue;
        };
        let partitions = channels[channel as usize].partitions;
        let partition = match &t.partition {
            Some(p) if *p.get_ref() < 0 || *p.get_ref() >= partitions as i64 => {
                problems.error_help(
                    Some(p.span()),
                    format!(
                        "partition {} is not a partition of {}->{}",
                        p.get_ref(),
                        t.from.get_ref(),
                        t.to.get_ref()
                    ),
                    "no such partition",
                    format!(
                        "the channel has {partitions} partition{}, numbered from 0",
                        if partitions == 1 { "" } else { "s" }
                    ),
                );
                continue;
            }
            Some(p) => *p.get_ref() as u32,
            None => 0,
        };
        let value = *t.value.get_ref();
        if value.unsigned_abs() > MAX_VALUE as u64 {
            problems.error(
                t.value.span(),
                format!("a value is at most {MAX_VALUE} either way"),
                "too large",
            );
            continue;
        }
        sends.push(Send {
            at: t.at.as_ref().map_or(0, |a| a.get_ref().0),
            channel,
            partition,
            value,
            kind: match t.kind.as_ref().map(|k| *k.get_ref()) {
                Some(file::SendKindName::Transfer) => SendKind::Transfer,
                _ => SendKind::Add,
            },
        });
    }

    if raw.snapshot.len() > MAX_SNAPSHOTS {
        problems.error(
            raw.snapshot[MAX_SNAPSHOTS].span(),
            format!("a dataflow has at most {MAX_SNAPSHOTS} snapshot attempts"),
            "too many attempts",
        );
    }
    if (raw.snapshot.len().min(MAX_SNAPSHOTS) as u64).saturating_mul(total_partitions)
        > MAX_ATTEMPT_PARTITIONS
    {
        problems.error_help(
            raw.snapshot.last().map(|s| s.span()),
            format!(
                "{} snapshot attempts over {total_partitions} partitions keep {} partition records; the limit is {MAX_ATTEMPT_PARTITIONS}",
                raw.snapshot.len(),
                raw.snapshot.len() as u64 * total_partitions
            ),
            "too many records",
            "every attempt keeps a record per channel partition: use fewer attempts or fewer partitions",
        );
    }
    let mut snapshots = Vec::new();
    let mut last_at: Option<(Millis, Range<usize>)> = None;
    for s in raw.snapshot.iter().take(MAX_SNAPSHOTS) {
        let t = s.get_ref();
        let at = t.at.as_ref().map_or(0, |a| a.get_ref().0);
        if let Some((before, _)) = &last_at
            && at < *before
        {
            problems.error_help(
                Some(t.at.as_ref().map_or(s.span(), |a| a.span())),
                format!(
                    "this attempt starts at {}, before the one above it ({})",
                    crate::duration::format(at),
                    crate::duration::format(*before)
                ),
                "out of order",
                "list [[snapshot]] attempts in time order: they are numbered in file order",
            );
        }
        last_at = Some((at, s.span()));
        let mut initiators: Vec<NodeIndex> = Vec::new();
        if t.initiators.get_ref().is_empty() {
            problems.error_help(
                Some(t.initiators.span()),
                "a snapshot attempt needs at least one initiator",
                "no initiator",
                "name the nodes that record first: initiators = [\"A\"]",
            );
        }
        for name in t.initiators.get_ref() {
            if let Some(n) = node_of(problems, name, "an initiator") {
                if !nodes[n as usize].participates {
                    problems.error_help(
                        Some(name.span()),
                        format!("node {} does not take part in snapshots", name.get_ref()),
                        "participates = false",
                        "an initiator records first and sends the markers: name a participating node, or remove participates = false",
                    );
                } else if initiators.contains(&n) {
                    problems.error(
                        name.span(),
                        format!("\"{}\" is named twice", name.get_ref()),
                        "named twice",
                    );
                } else {
                    initiators.push(n);
                }
            }
        }
        let timeout = match &t.timeout {
            Some(d) if d.get_ref().0 == 0 => {
                problems.error_help(
                    Some(d.span()),
                    "a snapshot's timeout is at least 1ms",
                    "zero",
                    "leave `timeout` out for an attempt that waits until the run ends",
                );
                None
            }
            Some(d) => Some(d.get_ref().0),
            None => None,
        };
        let participants = t.participants.as_ref().map(|list| {
            let mut named: Vec<NodeIndex> = Vec::new();
            for name in list.get_ref() {
                let Some(n) = node_of(problems, name, "a participant") else {
                    continue;
                };
                if named.contains(&n) {
                    problems.error(
                        name.span(),
                        format!("\"{}\" is named twice", name.get_ref()),
                        "named twice",
                    );
                } else {
                    named.push(n);
                }
            }
            for &i in &initiators {
                if !named.contains(&i) {
                    problems.error_help(
                        Some(list.span()),
                        format!(
                            "the registry leaves out the initiator \"{}\"",
                            nodes[i as usize].name
                        ),
                        "an initiator missing",
                        "the coordinator's registry lists every node it waits for, the initiators first among them",
                    );
                }
            }
            named
        });
        let timeout_from = match &t.timeout_from {
            Some(f) if t.timeout.is_none() => {
                problems.error_help(
                    Some(f.span()),
                    "`timeout_from` goes with `timeout`",
                    "no timeout",
                    "give the attempt a timeout, or remove timeout_from",
                );
                TimeoutFrom::Attempt
            }
            Some(f) if *f.get_ref() == file::TimeoutFromName::FirstMarker => {
                TimeoutFrom::FirstMarker
            }
            _ => TimeoutFrom::Attempt,
        };
        snapshots.push(Snapshot {
            at,
            initiators,
            participants,
            timeout_from,
            timeout,
            markers: match t.markers.as_ref().map(|m| *m.get_ref()) {
                Some(file::MarkersName::FirstPartition) => Markers::FirstPartition,
                _ => Markers::EveryPartition,
            },
        });
    }

    let limits = limits(problems, raw.limits);
    let mut flow = Dataflow {
        name,
        summary: meta.as_ref().and_then(|m| m.summary.clone()),
        description: meta.as_ref().and_then(|m| {
            m.description
                .as_deref()
                .map(crate::scenario::problems::lines)
        }),
        tags: meta.as_ref().map(|m| m.tags.clone()).unwrap_or_default(),
        seed,
        nodes,
        channels,
        sends,
        snapshots,
        limits,
        expectations: Vec::new(),
        questions: Vec::new(),
    };
    for e in raw.expect.into_iter().chain(points) {
        let more = super::expect::expectations(problems, e, &flow, &broken);
        flow.expectations.extend(more);
    }
    flow.expectations.sort_by_key(|e| e.span.start);
    flow.questions = super::expect::questions(problems, &raw.question, &flow, &broken);
    Some(flow)
}

/// The largest value a send or a state may hold either way, so that no
/// sum of a run can overflow.
pub const MAX_VALUE: i64 = 1_000_000_000_000;

fn nodes(problems: &mut Problems, raw: &[S<file::NodeTable>]) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut seen: BTreeMap<String, Range<usize>> = BTreeMap::new();
    if raw.len() > MAX_NODES {
        problems.error(
            raw[MAX_NODES].span(),
            format!("a dataflow has at most {MAX_NODES} nodes"),
            "too many nodes",
        );
    }
    for n in raw.iter().take(MAX_NODES) {
        let t = n.get_ref();
        let name = t.name.get_ref();
        problems.plain_spanned(&t.name, "a node's name", MAX_ID);
        if name.is_empty() || name.contains("->") || name.contains('.') {
            problems.error_help(
                Some(t.name.span()),
                format!("\"{name}\" cannot name a node"),
                "not a node name",
                "a node's name is not empty and has no \"->\" or \".\": channels are named FROM->TO and partitions FROM->TO.pK",
            );
        }
        if let Some(first) = seen.get(name) {
            problems.error_help(
                Some(t.name.span()),
                format!("a second node named \"{name}\""),
                "named twice",
                format!(
                    "node names are distinct; the first is at byte {}",
                    first.start
                ),
            );
            continue;
        }
        seen.insert(name.clone(), t.name.span());
        let state = t.state.as_ref().map_or(0, |s| *s.get_ref());
        if state.unsigned_abs() > MAX_VALUE as u64 {
            problems.error(
                t.state.as_ref().map_or(n.span(), |s| s.span()),
                format!("a state is at most {MAX_VALUE} either way"),
                "too large",
            );
        }
        nodes.push(Node {
            name: name.clone(),
            state,
            participates: t.participates.as_ref().is_none_or(|p| *p.get_ref()),
        });
    }
    nodes
}

fn limits(problems: &mut Problems, raw: Option<S<file::LimitsTable>>) -> Limits {
    let mut limits = Limits::default();
    if let Some(l) = raw {
        let l = l.into_inner();
        if let Some(n) = &l.max_events {
            limits.max_events = problems
                .count(n, "max_events", 1, i64::MAX)
                .unwrap_or(limits.max_events);
        }
        if let Some(t) = l.max_time {
            limits.max_time = t.into_inner().0;
        }
    }
    limits
}
