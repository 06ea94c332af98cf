//! From the file as written to the model: defaults, ranges, references.
//! Collects every problem rather than stopping at the first.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::file::{self, S};
use super::problems::{Problems, unknown_message};
use crate::diagnostic::{Problem, Source};
use crate::model::*;

pub(super) fn validate(
    source: &Source,
    raw: file::File,
    stem: &str,
) -> Result<Scenario, Vec<Problem>> {
    let mut problems = Problems {
        source,
        list: Vec::new(),
    };

    let meta = raw.scenario.map(|s| s.into_inner());
    let name = meta
        .as_ref()
        .and_then(|m| m.name.as_ref().map(|n| n.get_ref().clone()))
        .unwrap_or_else(|| stem.to_string());
    let seed = match meta.as_ref().and_then(|m| m.seed.as_ref()) {
        Some(s) => problems.count(s, "seed", 0, i64::MAX).unwrap_or(0),
        None => 0,
    };

    let delivery = delivery(&mut problems, raw.delivery);
    let quarantine_retention = raw
        .quarantine
        .and_then(|q| q.into_inner().retention.map(|r| r.into_inner().0));
    let dedup_retention = raw.dedup.and_then(|d| {
        let d = d.into_inner();
        if d.enabled == Some(false) {
            None
        } else {
            // No result_retention: stored results never expire.
            Some(d.result_retention.map_or(u64::MAX, |r| r.into_inner().0))
        }
    });

    let limits = limits(&mut problems, raw.limits);

    let mut reasons: Vec<String> = FIXED_REASONS.iter().map(|s| s.to_string()).collect();
    let mut ids: BTreeMap<String, Range<usize>> = BTreeMap::new();
    let mut messages = Vec::new();
    for m in raw.message {
        let m = m.into_inner();
        let id = m.id.get_ref().clone();
        if id.is_empty() {
            problems.error(m.id.span(), "a message id cannot be empty", "empty id");
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
        let faults = faults(&mut problems, &m.faults, &mut reasons);
        messages.push(MessageSpec {
            key: m.key.map_or_else(|| id.clone(), |k| k.into_inner()),
            id,
            at: m.at.map_or(0, |a| a.into_inner().0),
            payload: m.payload,
            faults,
        });
    }

    let mut traffic = Vec::new();
    let mut next_index: u64 = messages.len() as u64;
    for t in &raw.traffic {
        let t_ref = t.get_ref();
        if let Some(a) = &t_ref.arrival
            && *a.get_ref() == file::Arrival::Poisson
        {
            problems.error_help(
                Some(a.span()),
                "Poisson arrivals are not supported yet",
                "not supported yet",
                "use arrival = \"even\" (the default)",
            );
        }
        let count = problems
            .count(&t_ref.count, "count", 0, i64::MAX)
            .unwrap_or(0);
        let prefix = t_ref
            .id_prefix
            .as_ref()
            .map_or_else(|| "msg-".to_string(), |p| p.get_ref().clone());
        let faults = faults(&mut problems, &t_ref.faults, &mut reasons);
        traffic.push(Traffic {
            count,
            over: t_ref.over.get_ref().0,
            id_prefix: prefix,
            faults,
            first_index: next_index.min(u32::MAX as u64) as MessageIndex,
        });
        next_index = next_index.saturating_add(count);
    }
    if next_index > limits.max_messages {
        let span = raw.traffic.first().map(|t| t.get_ref().count.span());
        problems.error_help(
            span,
            format!(
                "this scenario has {next_index} messages; the limit is {} ([limits] max_messages)",
                limits.max_messages
            ),
            "too many messages",
            "lower the generator's count, or raise [limits] max_messages (at most 4000000000)",
        );
    }
    generated_id_collisions(&mut problems, &raw.traffic, &traffic, &ids);

    let outages = raw
        .outage
        .iter()
        .map(|o| Outage {
            from: o.get_ref().from.get_ref().0,
            duration: o.get_ref().duration.get_ref().0,
        })
        .collect();

    let mut scenario = Scenario {
        name,
        summary: meta.as_ref().and_then(|m| m.summary.clone()),
        description: meta.as_ref().and_then(|m| m.description.clone()),
        tags: meta.as_ref().map(|m| m.tags.clone()).unwrap_or_default(),
        seed,
        delivery: delivery.unwrap_or(Delivery {
            queue: String::new(),
            max_receives: 1,
            retry: Retry::Fixed(0),
            permanent: Permanent::Retry,
        }),
        quarantine_retention,
        dedup_retention,
        operators: Vec::new(),
        messages,
        traffic,
        outages,
        limits,
        reasons,
        intents: Intents::default(),
        expectations: Vec::new(),
    };
    if !problems.list.is_empty() {
        return Err(problems.list);
    }
    scenario.intents = intents(&scenario);
    scenario.operators = operators(&mut problems, raw.operator, &scenario);
    if let Some(e) = raw.expect {
        scenario.expectations = super::expect::expectations(&mut problems, e, &scenario);
    }
    if problems.list.is_empty() {
        Ok(scenario)
    } else {
        Err(problems.list)
    }
}

fn delivery(problems: &mut Problems, raw: Option<S<file::Delivery>>) -> Option<Delivery> {
    let Some(raw) = raw else {
        problems.error_help(
            None,
            "missing [delivery] table",
            "",
            "add a [delivery] table naming max_receives and retry_interval (or backoff), e.g.\n\
             [delivery]\nmax_receives = 2\nretry_interval = \"10s\"",
        );
        return None;
    };
    let span = raw.span();
    let d = raw.into_inner();
    let max_receives = match &d.max_receives {
        None => {
            problems.error_help(
                Some(span.clone()),
                "[delivery] needs `max_receives`",
                "max_receives missing",
                "max_receives counts deliveries per cycle, the first included: add e.g. max_receives = 2",
            );
            None
        }
        Some(m) if *m.get_ref() == 0 => {
            problems.error_help(
                Some(m.span()),
                "`max_receives` must be at least 1",
                "0 would never deliver",
                "max_receives counts deliveries per cycle, the first included",
            );
            None
        }
        Some(m) => problems
            .count(m, "max_receives", 1, u32::MAX as i64)
            .map(|n| n as u32),
    };
    let retry = match (&d.retry_interval, &d.backoff) {
        (Some(i), None) => Some(Retry::Fixed(i.get_ref().0)),
        (None, Some(b)) => {
            let bb = b.get_ref();
            let base = bb.base.get_ref().0;
            let cap = bb.cap.as_ref().map(|c| c.get_ref().0);
            if let (Some(c), Some(cs)) = (cap, &bb.cap)
                && c < base
            {
                problems.error(
                    cs.span(),
                    format!(
                        "backoff cap ({}) is smaller than its base ({})",
                        crate::duration::format(c),
                        crate::duration::format(base)
                    ),
                    "cap below base",
                );
            }
            let jitter = match bb.jitter.as_ref().map(|j| *j.get_ref()) {
                None | Some(file::Jitter::None) => Jitter::None,
                Some(file::Jitter::Full) => Jitter::Full,
                Some(file::Jitter::Equal) => Jitter::Equal,
                Some(file::Jitter::Decorrelated) => Jitter::Decorrelated,
            };
            Some(Retry::Backoff { base, cap, jitter })
        }
        (Some(i), Some(_)) => {
            problems.error_help(
                Some(i.span()),
                "[delivery] names both `retry_interval` and `backoff`",
                "choose one",
                "keep either a fixed retry_interval or an exponential backoff",
            );
            None
        }
        (None, None) => {
            problems.error_help(
                Some(span),
                "[delivery] needs `retry_interval` or `backoff`",
                "no retry delay",
                "add retry_interval = \"10s\", or backoff = { base = \"1s\", cap = \"30s\", jitter = \"full\" }",
            );
            None
        }
    };
    let permanent = match d.permanent.as_ref().map(|p| *p.get_ref()) {
        Some(file::Permanent::Quarantine) => Permanent::Quarantine,
        _ => Permanent::Retry,
    };
    Some(Delivery {
        queue: d.queue.unwrap_or_else(|| "source".to_string()),
        max_receives: max_receives?,
        retry: retry?,
        permanent,
    })
}

fn limits(problems: &mut Problems, raw: Option<S<file::Limits>>) -> Limits {
    let mut limits = Limits::default();
    if let Some(l) = raw {
        let l = l.into_inner();
        if let Some(e) = &l.max_events {
            limits.max_events = problems
                .count(e, "max_events", 1, i64::MAX)
                .unwrap_or(limits.max_events);
        }
        if let Some(t) = l.max_time {
            limits.max_time = t.into_inner().0;
        }
        if let Some(m) = &l.max_messages {
            limits.max_messages = problems
                .count(m, "max_messages", 0, 4_000_000_000)
                .unwrap_or(limits.max_messages);
        }
    }
    limits
}

fn faults(
    problems: &mut Problems,
    raw: &[S<file::Fault>],
    reasons: &mut Vec<String>,
) -> Vec<Fault> {
    let mut out = Vec::new();
    for f in raw {
        let span = f.span();
        let f = f.get_ref();
        let (kind, sel) = match (&f.fail, &f.lose_ack) {
            (Some(s), None) => (FaultKind::Fail, s),
            (None, Some(s)) => (FaultKind::LoseAck, s),
            (Some(_), Some(_)) => {
                problems.error_help(
                    Some(span),
                    "a fault names both `fail` and `lose_ack`",
                    "one kind per fault",
                    "write two faults: one with fail = {...}, one with lose_ack = {...}",
                );
                continue;
            }
            (None, None) => {
                problems.error_help(
                    Some(span),
                    "a fault needs `fail` or `lose_ack`",
                    "what fails?",
                    "e.g. { fail = { first = 2 }, reason = \"upstream timeout\" } or { lose_ack = { until = \"repair\" } }",
                );
                continue;
            }
        };
        let selector = match (&sel.get_ref().first, &sel.get_ref().until) {
            (Some(n), None) => match problems.count(n, "first", 0, i64::MAX) {
                Some(n) => Selector::First(n),
                None => continue,
            },
            (None, Some(_)) => Selector::UntilRepair,
            _ => {
                problems.error_help(
                    Some(sel.span()),
                    "a fault selector needs exactly one of `first` or `until`",
                    "choose one selector",
                    "first = N fails the first N deliveries; until = \"repair\" fails until the operator repairs",
                );
                continue;
            }
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
            (Some(r), FaultKind::Fail) => intern(reasons, r.get_ref()),
            (_, FaultKind::LoseAck) => REASON_ACK_LOST,
            (None, FaultKind::Fail) => REASON_HANDLER_ERROR,
        };
        let class = match f.class.as_ref().map(|c| *c.get_ref()) {
            Some(file::Class::Permanent) if kind == FaultKind::Fail => Class::Permanent,
            _ => Class::Transient,
        };
        out.push(Fault {
            kind,
            selector,
            reason,
            class,
        });
    }
    out
}

fn intern(reasons: &mut Vec<String>, r: &str) -> ReasonIndex {
    match reasons.iter().position(|x| x == r) {
        Some(i) => i as ReasonIndex,
        None => {
            reasons.push(r.to_string());
            (reasons.len() - 1) as ReasonIndex
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Generated ids must not collide with explicit ids or with each other.
fn generated_id_collisions(
    problems: &mut Problems,
    raw: &[S<file::Traffic>],
    traffic: &[Traffic],
    ids: &BTreeMap<String, Range<usize>>,
) {
    for (gi, g) in traffic.iter().enumerate() {
        let span = raw[gi]
            .get_ref()
            .id_prefix
            .as_ref()
            .map_or_else(|| raw[gi].span(), |p| p.span());
        for (id, id_span) in ids {
            if generated_number(id, &g.id_prefix, g.count).is_some() {
                problems.error_help(
                    Some(id_span.clone()),
                    format!("message id \"{id}\" is also generated by a [[traffic]] generator"),
                    "collides with a generated id",
                    format!(
                        "the generator with id_prefix \"{}\" makes ids {}1 to {}{}; rename this message or change the prefix",
                        g.id_prefix, g.id_prefix, g.id_prefix, g.count
                    ),
                );
            }
        }
        for other in &traffic[..gi] {
            if generators_collide(&other.id_prefix, other.count, &g.id_prefix, g.count) {
                problems.error_help(
                    Some(span.clone()),
                    format!(
                        "generated ids with prefix \"{}\" collide with those of prefix \"{}\"",
                        g.id_prefix, other.id_prefix
                    ),
                    "ids would repeat",
                    "give each [[traffic]] generator a distinct id_prefix that is not a prefix of another",
                );
            }
        }
    }
}

fn generators_collide(a: &str, a_count: u64, b: &str, b_count: u64) -> bool {
    if a_count == 0 || b_count == 0 {
        return false;
    }
    if a == b {
        return true;
    }
    // Ids of the longer prefix are `short + rest + j`; they collide with the
    // shorter generator's ids when `rest + j` is one of its numbers.
    let (short, short_count, long) = if a.len() < b.len() {
        (a, a_count, b)
    } else {
        (b, b_count, a)
    };
    let Some(rest) = long.strip_prefix(short) else {
        return false;
    };
    if rest.starts_with('0') || !rest.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    match rest
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(10))
        .and_then(|n| n.checked_add(1))
    {
        Some(smallest) => smallest <= short_count,
        None => false,
    }
}

fn intents(s: &Scenario) -> Intents {
    let mut intents = Intents::default();
    for m in &s.messages {
        let i = *intents.by_name.entry(m.key.clone()).or_insert_with(|| {
            intents.explicit.push(m.key.clone());
            (intents.explicit.len() - 1) as IntentIndex
        });
        intents.of_explicit.push(i);
    }
    for (name, &i) in &intents.by_name {
        for g in &s.traffic {
            if let Some(j) = generated_number(name, &g.id_prefix, g.count) {
                intents
                    .generated_aliases
                    .insert(g.first_index + (j - 1) as MessageIndex, i);
            }
        }
    }
    intents.has_derived_lookalikes = intents.by_name.keys().any(|k| k.contains("~r"));
    intents
}

fn operators(
    problems: &mut Problems,
    raw: Vec<S<file::Operator>>,
    s: &Scenario,
) -> Vec<OperatorStep> {
    let mut steps = Vec::new();
    for op in raw {
        let span = op.span();
        let op = op.into_inner();
        let Some(action) = &op.action else {
            problems.error_help(
                Some(span),
                "an [[operator]] step needs an `action`",
                "action missing",
                "action = \"hold\" | \"redrive_all\" | \"redrive\" (with only = [...]) | \"purge\"",
            );
            continue;
        };
        let action = match (*action.get_ref(), &op.only) {
            (file::Action::Redrive, Some(only)) => {
                let mut seen = BTreeSet::new();
                let mut ids = Vec::new();
                for id in only.get_ref() {
                    match s.find_message(id.get_ref()) {
                        Some(m) => {
                            if !seen.insert(m) {
                                problems.error(
                                    id.span(),
                                    format!("\"{}\" is named twice in `only`", id.get_ref()),
                                    "named again here",
                                );
                            }
                            ids.push(m);
                        }
                        None => unknown_message(problems, s, id),
                    }
                }
                Action::Redrive(ids)
            }
            (file::Action::Redrive, None) => {
                problems.error_help(
                    Some(action.span()),
                    "action \"redrive\" needs `only = [ids]`",
                    "redrive which messages?",
                    "name the messages, e.g. only = [\"poison\"], or use action = \"redrive_all\"",
                );
                continue;
            }
            (other, Some(only)) => {
                problems.error_help(
                    Some(only.span()),
                    "`only` goes with action = \"redrive\"",
                    "not used by this action",
                    format!("remove `only`, or change the action from {other:?} to \"redrive\"")
                        .to_lowercase(),
                );
                continue;
            }
            (file::Action::Hold, None) => Action::Hold,
            (file::Action::RedriveAll, None) => Action::RedriveAll,
            (file::Action::Purge, None) => Action::Purge,
        };
        steps.push(OperatorStep {
            wait: op.wait.map_or(0, |w| w.into_inner().0),
            repair: op.repair.unwrap_or(false),
            action,
            identity: match op.identity.map(|i| i.into_inner()) {
                Some(file::Identity::New) => Identity::New,
                _ => Identity::Stable,
            },
        });
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::generators_collide;

    #[test]
    fn generator_prefix_collisions() {
        assert!(generators_collide("m", 10, "m", 1));
        assert!(generators_collide("m", 11, "m1", 1)); // m11
        assert!(!generators_collide("m", 10, "m1", 5)); // m11.. > 10
        assert!(!generators_collide("a", 100, "b", 100));
        assert!(!generators_collide("m", 100, "m-", 100));
        assert!(!generators_collide("m", 0, "m", 5));
    }
}
