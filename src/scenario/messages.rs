//! The messages of a file: explicit `[[message]]` entries, `[[traffic]]`
//! generators, their faults, and the intents they carry.

use std::collections::BTreeMap;
use std::ops::Range;

use super::file::{self, S};
use super::problems::{MAX_ID, MAX_REASON, Problems};
use crate::model::*;

/// The `[[message]]` entries, and where each id is written.
pub(super) fn explicit_messages(
    problems: &mut Problems,
    raw: Vec<S<file::Message>>,
    reasons: &mut Vec<String>,
) -> (Vec<MessageSpec>, BTreeMap<String, Range<usize>>) {
    let mut ids: BTreeMap<String, Range<usize>> = BTreeMap::new();
    let mut messages = Vec::new();
    for m in raw {
        let m = m.into_inner();
        let id = m.id.get_ref().clone();
        if id.is_empty() {
            problems.error(m.id.span(), "a message id cannot be empty", "empty id");
        }
        problems.plain_spanned(&m.id, "a message id", MAX_ID);
        if let Some(key) = &m.key {
            problems.plain_spanned(key, "a key", MAX_ID);
        }
        if let Some(first) = ids.get(&id) {
            let first = first.clone();
            problems.error_help(
                Some(m.id.span()),
                format!("duplicate message id \"{id}\""),
                "used again here",
                format!(
                    "ids must be unique; \"{id}\" is first used on line {}",
                    line_of(&problems.source.text, first.start)
                ),
            );
        } else {
            ids.insert(id.clone(), m.id.span());
        }
        let faults = faults(problems, &m.faults, reasons);
        let lost_append_acks = lost_append_acks(problems, &m.faults, true);
        if let Some(group) = &m.group {
            problems.plain_spanned(group, "a group", MAX_ID);
        }
        messages.push(MessageSpec {
            key: m.key.map_or_else(|| id.clone(), |k| k.into_inner()),
            group: m.group.map(|g| g.into_inner()),
            id,
            at: m.at.map_or(0, |a| a.into_inner().0),
            payload: m.payload,
            faults: faults.into(),
            lost_append_acks,
            partition: m
                .partition
                .map(|p| p.into_inner().clamp(0, u32::MAX as i64) as u32),
            schema_version: schema_version(problems, m.schema_version),
        });
    }

    (messages, ids)
}

/// A schema version (section 28.2): plain text of 1 to 64 characters.
fn schema_version(problems: &mut Problems, raw: Option<S<String>>) -> Option<String> {
    let raw = raw?;
    let span = raw.span();
    let text = raw.into_inner();
    if text.is_empty() || text.chars().count() > MAX_SCHEMA_VERSION {
        problems.error(
            span,
            format!("a schema_version has 1 to {MAX_SCHEMA_VERSION} characters"),
            "empty or too long",
        );
        return None;
    }
    let before = problems.list.len();
    problems.plain(&text, span, "a schema_version", false, MAX_SCHEMA_VERSION);
    (problems.list.len() == before).then_some(text)
}

/// The longest schema version.
const MAX_SCHEMA_VERSION: usize = 64;

/// The `[[traffic]]` generators; their messages are numbered after the
/// explicit ones. Refuses a scenario above `[limits] max_messages`. Mix
/// kinds are named in `kinds` (a name used by several blocks is one kind).
pub(super) fn generators(
    problems: &mut Problems,
    raw: &[S<file::Traffic>],
    messages: &[MessageSpec],
    reasons: &mut Vec<String>,
    limits: &Limits,
    kinds: &mut Vec<String>,
) -> Vec<Traffic> {
    let mut traffic = Vec::new();
    let mut next_index: u64 = messages.len() as u64;
    for (k, t) in raw.iter().enumerate() {
        let t_ref = t.get_ref();
        let arrival = match t_ref.arrival.as_ref().map(|a| *a.get_ref()) {
            Some(file::Arrival::Poisson) => Arrival::Poisson,
            _ => Arrival::Even,
        };
        if arrival == Arrival::Poisson && t_ref.over.get_ref().0 == 0 {
            problems.error_help(
                Some(t_ref.over.span()),
                "Poisson arrivals need a window longer than 0s",
                "over = \"0s\" with arrival = \"poisson\"",
                "offsets are drawn from 0 to over - 1ms: give `over` a length, or use arrival = \"even\"",
            );
        }
        let count = problems
            .count(&t_ref.count, "count", 0, i64::MAX)
            .unwrap_or(0);
        if let Some(p) = &t_ref.id_prefix {
            problems.plain_spanned(p, "an id prefix", MAX_ID);
        }
        let groups = t_ref
            .groups
            .as_ref()
            .and_then(|g| problems.count(g, "groups", 1, i64::MAX))
            // Message j is in group (j - 1) % groups + 1: past `count`
            // groups are empty, and would only cost memory.
            .map(|n| n.min(count.max(1)));
        let prefix = t_ref
            .id_prefix
            .as_ref()
            .map_or_else(|| "msg-".to_string(), |p| p.get_ref().clone());
        let faults = faults(problems, &t_ref.faults, reasons);
        let mix = mix(problems, &t_ref.mix, &faults, reasons, kinds);
        traffic.push(Traffic {
            count,
            start: t_ref.start.as_ref().map_or(0, |s| s.get_ref().0),
            over: t_ref.over.get_ref().0,
            arrival,
            id_prefix: prefix,
            faults: faults.into(),
            lost_append_acks: lost_append_acks(problems, &t_ref.faults, true),
            groups,
            // Checked against [log] partitions in scenario/log.rs.
            partition: t_ref
                .partition
                .as_ref()
                .and_then(|p| u32::try_from(*p.get_ref()).ok()),
            schema_version: schema_version(problems, t_ref.schema_version.clone()),
            mix,
            first_index: next_index.min(u32::MAX as u64) as MessageIndex,
            stream: k as u64 + 1,
        });
        next_index = next_index.saturating_add(count);
    }
    if next_index > limits.max_messages {
        let span = raw.first().map(|t| t.get_ref().count.span());
        problems.error_help(
            span,
            format!(
                "this scenario has {next_index} messages; the limit is {} ([limits] max_messages)",
                limits.max_messages
            ),
            "too many messages",
            format!(
                "lower the generator's count, or raise [limits] max_messages (at most {MAX_MESSAGES_CEILING}: about 110 bytes of memory each)"
            ),
        );
    }
    traffic
}

/// The most `[[traffic.mix]]` kinds one block may have.
pub const MAX_MIX_KINDS: usize = 255;

/// `n` millionths as a decimal: 1000110 is "1.00011".
fn millionths(n: u64) -> String {
    let text = format!("{}.{:06}", n / 1_000_000, n % 1_000_000);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How far over 1 the shares of a mix may add up as written: the sum of
/// floating-point fractions such as 255 times 1/255.
pub const MIX_SUM_TOLERANCE: f64 = 1e-9;

/// A block's `[[traffic.mix]]`: widths round(share * 1e6) (decision 16.2),
/// summing to at most 1,000,000; each kind's faults come after the block's.
fn mix(
    problems: &mut Problems,
    raw: &[S<file::Mix>],
    block_faults: &[Fault],
    reasons: &mut Vec<String>,
    kinds: &mut Vec<String>,
) -> Vec<MixKind> {
    if raw.len() > MAX_MIX_KINDS {
        problems.error(
            raw[MAX_MIX_KINDS].span(),
            format!("a [[traffic]] block has at most {MAX_MIX_KINDS} mix kinds"),
            "one kind too many",
        );
    }
    let mut total: u64 = 0;
    let mut passes_at = None;
    // The shares as written, summed.
    let mut written = 0.0;
    let mut out = Vec::new();
    for entry in raw.iter().take(MAX_MIX_KINDS) {
        let e = entry.get_ref();
        let name = e.name.get_ref();
        problems.plain_spanned(&e.name, "a kind's name", MAX_ID);
        if name.is_empty() {
            problems.error(e.name.span(), "a kind's name cannot be empty", "empty name");
        }
        let share = e.share.get_ref().0;
        let width = if (0.0..=1.0).contains(&share) {
            (share * 1_000_000.0).round() as u32
        } else {
            problems.error_help(
                Some(e.share.span()),
                format!("a share is a fraction between 0 and 1, got {share}"),
                "out of range",
                "a poison rate of 2% is share = 0.02",
            );
            0
        };
        total += width as u64;
        written += share.clamp(0.0, 1.0);
        if total > 1_000_000 && total - (width as u64) <= 1_000_000 {
            passes_at = Some(e.share.span());
        }
        let kind = match kinds.iter().position(|k| k == name) {
            Some(i) => i,
            None => {
                kinds.push(name.clone());
                kinds.len() - 1
            }
        };
        let mut all = block_faults.to_vec();
        all.extend(faults(problems, &e.faults, reasons));
        lost_append_acks(problems, &e.faults, false);
        out.push(MixKind {
            kind: kind as u32,
            width,
            faults: all.into(),
        });
    }
    // Shares that add up to 1 or less as written (within 1e-9) are taken
    // even when their rounded widths pass 1,000,000 (255 kinds of 1/255:
    // 3,922 each, 1,000,110 in all): the draws stop at 999,999, so the
    // last kinds' ranges are cut there (decision 16.2 in docs/model.md).
    if let Some(span) = passes_at
        && written > 1.0 + MIX_SUM_TOLERANCE
    {
        problems.error_help(
            Some(span),
            format!(
                "the shares of this block's mix add up to more than 1: {}",
                millionths(total)
            ),
            "the total passes 1 here",
            "the kinds share one draw per message; the rest of the messages are plain",
        );
    }
    out
}

pub(super) fn faults(
    problems: &mut Problems,
    raw: &[S<file::Fault>],
    reasons: &mut Vec<String>,
) -> Vec<Fault> {
    let mut out = Vec::new();
    for f in raw {
        let span = f.span();
        let f = f.get_ref();
        let written: Vec<(&str, &S<file::Selector>)> = [
            ("fail", &f.fail),
            ("lose_ack", &f.lose_ack),
            ("crash", &f.crash),
            ("lose_append_ack", &f.lose_append_ack),
        ]
        .into_iter()
        .filter_map(|(name, sel)| sel.as_ref().map(|s| (name, s)))
        .collect();
        let (kind, sel) = match written.as_slice() {
            // The producer's, not a delivery's: `lost_append_acks`.
            [("lose_append_ack", _)] => continue,
            [("fail", s)] => (FaultKind::Fail, *s),
            [("lose_ack", s)] => (FaultKind::LoseAck, *s),
            [(_, s)] => match super::guarantees::crash_at(problems, span.clone(), f) {
                Some(at) => (FaultKind::Crash(at), *s),
                None => continue,
            },
            [] => {
                problems.error_help(
                    Some(span),
                    "a fault needs `fail`, `lose_ack` or `crash`",
                    "what fails?",
                    "e.g. { fail = { first = 2 }, reason = \"upstream timeout\" } or { lose_ack = { until = \"repair\" } }",
                );
                continue;
            }
            [(a, _), (b, _), ..] => {
                problems.error_help(
                    Some(span),
                    format!("a fault names both `{a}` and `{b}`"),
                    "one kind per fault",
                    format!(
                        "write one fault per kind: one with {a} = {{...}}, one with {b} = {{...}}"
                    ),
                );
                continue;
            }
        };
        if let (Some(at), false) = (&f.at, matches!(kind, FaultKind::Crash(_))) {
            problems.error_help(
                Some(at.span()),
                "`at` goes with a `crash` fault",
                "not allowed here",
                "at = \"before_effect\" | \"after_effect\" | \"after_done\" says where a crash kills the consumer",
            );
        }
        let Some(selector) = selector(problems, sel) else {
            continue;
        };
        if kind == FaultKind::LoseAck {
            if let Some(r) = &f.reason {
                problems.error_help(
                    Some(r.span()),
                    "a lost acknowledgement has no reason of its own",
                    "not allowed on lose_ack",
                    "the broker records a lost acknowledgement as \"ack lost\"; remove `reason`",
                );
            }
            if let Some(c) = &f.class {
                problems.error_help(
                    Some(c.span()),
                    "a lost acknowledgement is always transient",
                    "not allowed on lose_ack",
                    "remove `class`; only `fail` faults have a class",
                );
            }
        }
        let reason = match (&f.reason, kind) {
            (Some(r), FaultKind::Fail) => {
                problems.plain_spanned(r, "a failure reason", MAX_REASON);
                intern(reasons, r.get_ref())
            }
            (_, FaultKind::LoseAck) => REASON_ACK_LOST,
            (_, FaultKind::Crash(_)) => REASON_CONSUMER_CRASHED,
            (None, FaultKind::Fail) => REASON_HANDLER_ERROR,
        };
        let class = match f.class.as_ref().map(|c| *c.get_ref()) {
            Some(file::Class::Permanent) if kind == FaultKind::Fail => Class::Permanent,
            _ => Class::Transient,
        };
        if let (Some(t), FaultKind::LoseAck | FaultKind::Crash(_)) = (&f.takes, kind) {
            problems.error_help(
                Some(t.span()),
                "`takes` goes with a `fail` fault",
                "not allowed on lose_ack or crash",
                "a lost acknowledgement or a crash holds its worker for the service time; `takes` says how long a failing handler hangs",
            );
        }
        out.push(Fault {
            kind,
            selector,
            reason,
            class,
            takes: f.takes.as_ref().map(|t| t.get_ref().0),
        });
    }
    out
}

/// The appends of a message that lose their acknowledgement: its
/// `lose_append_ack = { first = N }` fault (section 28.6), at most one,
/// with nothing else in it; refused in a mix kind (`allowed` false), whose
/// messages are drawn, not produced apart.
pub(super) fn lost_append_acks(
    problems: &mut Problems,
    raw: &[S<file::Fault>],
    allowed: bool,
) -> u64 {
    let mut found = 0;
    let mut seen = false;
    for f in raw {
        let span = f.span();
        let f = f.get_ref();
        let Some(sel) = &f.lose_append_ack else {
            continue;
        };
        if !allowed {
            problems.error_help(
                Some(sel.span()),
                "`lose_append_ack` goes on a [[message]] or a [[traffic]] block, not a mix kind",
                "in a mix kind",
                "the producer appends every message of the block alike: put the fault on the block",
            );
            continue;
        }
        if std::mem::replace(&mut seen, true) {
            problems.error_help(
                Some(sel.span()),
                "a message has one `lose_append_ack` fault",
                "a second one",
                "say how many of its first appends lose their acknowledgement once: { first = N }",
            );
            continue;
        }
        let extra = [
            ("reason", f.reason.as_ref().map(|v| v.span())),
            ("class", f.class.as_ref().map(|v| v.span())),
            ("takes", f.takes.as_ref().map(|v| v.span())),
            ("at", f.at.as_ref().map(|v| v.span())),
        ];
        for (key, at) in extra {
            if let Some(at) = at {
                problems.error_help(
                    Some(at),
                    format!("`{key}` does not go with `lose_append_ack`"),
                    "not allowed on lose_append_ack",
                    "a lost append acknowledgement only makes the producer append again; remove it",
                );
            }
        }
        match (&sel.get_ref().first, &sel.get_ref().until) {
            (Some(n), None) => {
                let limit = crate::model::MAX_LOST_APPEND_ACKS as i64;
                if let Some(n) = problems.count(n, "first", 1, limit) {
                    found = n;
                }
            }
            _ => problems.error_help(
                Some(span),
                "`lose_append_ack` takes { first = N }",
                "which appends?",
                "the message's first N appends lose their acknowledgement: e.g. { lose_append_ack = { first = 1 } }",
            ),
        }
    }
    found
}

/// `{ first = N }` or `{ until = "repair" }`.
fn selector(problems: &mut Problems, sel: &S<file::Selector>) -> Option<Selector> {
    match (&sel.get_ref().first, &sel.get_ref().until) {
        (Some(n), None) => problems.count(n, "first", 0, i64::MAX).map(Selector::First),
        (None, Some(_)) => Some(Selector::UntilRepair),
        _ => {
            problems.error_help(
                Some(sel.span()),
                "a fault selector needs exactly one of `first` or `until`",
                "choose one selector",
                "first = N fails the first N deliveries; until = \"repair\" fails until the operator repairs",
            );
            None
        }
    }
}

pub(super) fn intern(reasons: &mut Vec<String>, r: &str) -> ReasonIndex {
    match reasons.iter().position(|x| x == r) {
        Some(i) => i as ReasonIndex,
        None => {
            reasons.push(r.to_string());
            (reasons.len() - 1) as ReasonIndex
        }
    }
}

pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Generated ids must not collide with explicit ids or with each other.
pub(super) fn intents(scenario: &Scenario) -> Intents {
    let mut intents = Intents::default();
    for m in &scenario.messages {
        let i = *intents.by_name.entry(m.key.clone()).or_insert_with(|| {
            intents.explicit.push(m.key.clone());
            (intents.explicit.len() - 1) as IntentIndex
        });
        intents.of_explicit.push(i);
    }
    for (name, &i) in &intents.by_name {
        for g in &scenario.traffic {
            if let Some(j) = generated_number(name, &g.id_prefix, g.count) {
                intents
                    .generated_aliases
                    .insert(g.first_index + (j - 1) as MessageIndex, i);
            }
        }
    }
    intents.has_derived_lookalikes = intents.by_name.keys().any(|k| k.contains("~r"))
        || scenario.traffic.iter().any(|g| g.id_prefix.contains("~r"));
    intents
}

#[cfg(test)]
mod mix_tests {
    use super::super::load_str;

    fn problems(text: &str) -> Vec<(String, String)> {
        match load_str("t.toml", text) {
            Ok(_) => Vec::new(),
            Err(invalid) => invalid
                .problems
                .iter()
                .map(|p| (p.message.clone(), p.help.clone().unwrap_or_default()))
                .collect(),
        }
    }

    fn mix(shares: &[f64]) -> String {
        let mut text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                        [[traffic]]\ncount = 10\nover = \"1s\"\n"
            .to_string();
        for (i, share) in shares.iter().enumerate() {
            text += &format!("[[traffic.mix]]\nname = \"k{i}\"\nshare = {share:?}\n");
        }
        text
    }

    #[test]
    fn shares_of_1_as_written_are_taken_when_their_rounding_passes_1() {
        // 255 kinds of 1/255 round to 3,922 millionths each: 1.00011 in
        // all, and the shares add up to 1 as written.
        assert!(problems(&mix(&[1.0 / 255.0; 255])).is_empty());
        assert!(problems(&mix(&[1.0 / 3.0; 3])).is_empty());
        // Shares over 1 as written say the sum.
        let found = problems(&mix(&[0.6, 0.5]));
        assert_eq!(
            found[0].0,
            "the shares of this block's mix add up to more than 1: 1.1"
        );
        // Just over 1 as written (past the tolerance) is refused too.
        assert_eq!(problems(&mix(&[0.5, 0.500001])).len(), 1);
        // Shares that add up to 1 exactly are taken as written.
        assert!(problems(&mix(&[0.25, 0.75])).is_empty());
        assert_eq!(super::millionths(1_000_110), "1.00011");
        assert_eq!(super::millionths(2_000_000), "2");
    }
}
