//! Validating sections 11-13 of a file: `[workers]`, `[downstream]`,
//! `[delivery] ordering`, `[limits] on_limit`, and the ordering groups of
//! explicit and generated messages.

use std::collections::BTreeMap;

use super::file::{self, S};
use super::problems::Problems;
use crate::model::*;

/// The parts of the file [`flow`] reads.
pub(super) struct FlowTables<'a> {
    pub workers: Option<&'a S<file::WorkersTable>>,
    pub downstream: Option<&'a S<file::DownstreamTable>>,
    pub ordering: Option<&'a S<file::Ordering>>,
    pub on_limit: Option<&'a S<file::OnLimit>>,
    pub traffic: &'a [S<file::Traffic>],
    pub message: &'a [S<file::Message>],
    /// Whether another key of sections 11-13 is used (`max_receives =
    /// "unlimited"`, `takes`, a Poisson or shifted or mixed traffic block).
    pub other_keys: bool,
}

/// Everything but the groups, which need the intents ([`groups`]).
pub(super) fn flow(problems: &mut Problems, t: &FlowTables) -> Flow {
    let workers = t.workers.and_then(|w| {
        let w = w.get_ref();
        if *w.count.get_ref() == 0 {
            problems.error_help(
                Some(w.count.span()),
                "a pool of workers needs at least 1 worker",
                "no worker would ever take a message",
                "remove [workers] for unlimited workers with no service time, or set count = 1 or more",
            );
            return None;
        }
        let count = problems.count(&w.count, "count", 1, i64::MAX)?;
        Some(Workers {
            count,
            service_time: w.service_time.as_ref().map_or(0, |s| s.get_ref().0),
        })
    });
    let mut call_window = 1_000;
    let downstream = t.downstream.and_then(|d| {
        let d = d.get_ref();
        if let Some(per) = &d.per {
            if per.get_ref().0 == 0 {
                problems.error_help(
                    Some(per.span()),
                    "a downstream window cannot be 0s long",
                    "per = \"0s\"",
                    "calls are counted per window: e.g. per = \"1s\"",
                );
            } else {
                call_window = per.get_ref().0;
            }
        }
        if *d.limit.get_ref() == 0 {
            problems.error_help(
                Some(d.limit.span()),
                "a downstream limit of 0 would accept no call",
                "no call accepted",
                "remove [downstream] for unlimited capacity, or set limit = 1 or more",
            );
            return None;
        }
        let limit = problems.count(&d.limit, "limit", 1, i64::MAX)?;
        Some(Downstream { limit })
    });
    let ordering = match t.ordering.map(|o| *o.get_ref()) {
        Some(file::Ordering::Fifo) => Ordering::Fifo,
        Some(file::Ordering::PerKey) => Ordering::PerKey,
        _ => Ordering::None,
    };
    if ordering != Ordering::PerKey {
        groups_need_per_key(problems, t, ordering);
    }
    Flow {
        workers,
        ordering,
        downstream,
        call_window,
        on_limit: match t.on_limit.map(|o| *o.get_ref()) {
            Some(file::OnLimit::Stop) => OnLimit::Stop,
            _ => OnLimit::Fail,
        },
        groups: Groups::default(),
        extended: t.other_keys
            || t.workers.is_some()
            || t.downstream.is_some()
            || t.ordering.is_some()
            || t.on_limit.is_some()
            || t.traffic.iter().any(|b| b.get_ref().groups.is_some())
            || t.message.iter().any(|m| m.get_ref().group.is_some()),
        columns: Vec::new(),
    }
}

/// `groups` and `group` only mean something under `per_key` ordering.
fn groups_need_per_key(problems: &mut Problems, t: &FlowTables, ordering: Ordering) {
    let spans = t
        .traffic
        .iter()
        .filter_map(|b| b.get_ref().groups.as_ref().map(|g| (g.span(), "groups")))
        .chain(
            t.message
                .iter()
                .filter_map(|m| m.get_ref().group.as_ref().map(|g| (g.span(), "group"))),
        );
    for (span, key) in spans {
        problems.error_help(
            Some(span),
            format!("`{key}` needs [delivery] ordering = \"per_key\""),
            format!("ordering is \"{}\"", ordering.as_str()),
            "groups decide which messages queue behind each other; add ordering = \"per_key\" to [delivery], or remove this key",
        );
    }
}

/// Numbers the ordering groups (see [`Groups`]): intents first, then the
/// groups of blocks that set `groups`, then names only explicit messages
/// use. A group name resolves, in this order, to the explicit key of that
/// name, the generated id of that name (a generated message's intent is
/// named by its id), the block group of that name, or a name of its own.
/// An explicit message's id is not a group name: `group = "m1"` does not
/// join message m1 unless m1's own group is named "m1".
pub(super) fn groups(scenario: &Scenario) -> Groups {
    let intents = scenario.intent_count() as u64;
    let mut next = intents;
    let mut block_base = Vec::new();
    let mut aliases = BTreeMap::new();
    let mut overlaps = BTreeMap::new();
    // A prefix `<P>g<D>` (D the digits after its last `g`, maybe none)
    // names the block of prefix P that sets `groups`, if there is one.
    let grouped: BTreeMap<&str, usize> = scenario
        .traffic
        .iter()
        .enumerate()
        .filter(|(_, g)| g.groups.is_some())
        .map(|(block, g)| (g.id_prefix.as_str(), block))
        .collect();
    for other in &scenario.traffic {
        let digits_from = other
            .id_prefix
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .len();
        let (head, digits) = other.id_prefix.split_at(digits_from);
        if let Some(&block) = head.strip_suffix('g').and_then(|p| grouped.get(p)) {
            overlaps
                .entry((block, digits.to_string()))
                .or_insert(Overlap {
                    first_index: other.first_index,
                    count: other.count,
                });
        }
    }
    for (block, g) in scenario.traffic.iter().enumerate() {
        block_base.push(next);
        if let Some(n) = g.groups {
            // Block group names that are also explicit keys join them.
            for (name, &intent) in &scenario.intents.by_name {
                if let Some(j) = block_group_number(name, &g.id_prefix, n) {
                    aliases.insert((block, j), intent as u64);
                }
            }
            next = next.saturating_add(n);
        }
    }
    let named_base = next;
    let mut named: Vec<String> = Vec::new();
    let mut of_explicit = Vec::with_capacity(scenario.messages.len());
    for (i, m) in scenario.messages.iter().enumerate() {
        let group = match &m.group {
            None => scenario.intent(i as MessageIndex) as u64,
            Some(name) => {
                if let Some(&intent) = scenario.intents.by_name.get(name) {
                    intent as u64
                } else if let Some(found) = scenario.find_generated(name) {
                    scenario.intent(found) as u64
                } else if let Some(block_group) = named_block_group(scenario, &block_base, name) {
                    block_group
                } else {
                    let k = match named.iter().position(|n| n == name) {
                        Some(k) => k,
                        None => {
                            named.push(name.clone());
                            named.len() - 1
                        }
                    };
                    named_base + k as u64
                }
            }
        };
        of_explicit.push(group);
    }
    Groups {
        of_explicit,
        block_base,
        aliases,
        overlaps,
        count: named_base + named.len() as u64,
        named,
        named_base,
    }
}

/// If `name` is `<prefix>g<j>` with 1 <= j <= groups, j.
fn block_group_number(name: &str, prefix: &str, groups: u64) -> Option<u64> {
    let rest = name.strip_prefix(prefix)?.strip_prefix('g')?;
    generated_number(rest, "", groups)
}

/// The block group an explicit message names, if it names one.
fn named_block_group(scenario: &Scenario, block_base: &[u64], name: &str) -> Option<u64> {
    scenario
        .traffic
        .iter()
        .zip(block_base)
        .find_map(|(g, &base)| Some(base + block_group_number(name, &g.id_prefix, g.groups?)? - 1))
}
