//! `[write]`, `[coordinator]` and the sinks' call keys (`latency`,
//! `faults`, `outage`, `prepare`) as written, validated into a
//! [`Write`] (docs/model.md section 24, decisions 26.13 and 27.21-28).

use std::ops::Range;

use super::file::{
    self, CoordinatorTable, LogPoint, Recovery, S, SinkFaultTable, SinkSelector, StrategyName,
};
use super::messages::intern;
use super::problems::{MAX_REASON, Problems, unknown_message};
use crate::model::*;

/// The tables section 24 reads.
pub(super) struct Raw<'a> {
    pub sink: &'a [S<file::SinkTable>],
    pub write: Option<&'a S<file::WriteTable>>,
    pub coordinator: Option<&'a S<CoordinatorTable>>,
}

/// The file's `[write]` and sink calls, or `None` when it writes none of
/// their keys (section 19 as it is). Reasons are interned into
/// `scenario.reasons`.
pub(super) fn write(
    problems: &mut Problems,
    raw: Raw<'_>,
    scenario: &mut Scenario,
) -> Option<Write> {
    if raw.sink.len() > MAX_SINKS {
        problems.error_help(
            Some(raw.sink[MAX_SINKS].span()),
            format!("a file may have at most {MAX_SINKS} sinks"),
            "one too many",
            "sinks beyond this many are refused so that a write's calls stay bounded",
        );
        return None;
    }
    let calls_written = raw.sink.iter().any(|s| {
        let s = s.get_ref();
        s.latency.is_some()
            || !s.faults.is_empty()
            || s.outage.is_some()
            || s.becomes.is_some()
            || s.versioned.is_some()
            || s.stale_writes.is_some()
            || s.strategy.is_some()
    });
    if raw.write.is_none() && !calls_written {
        if let Some(c) = raw.coordinator {
            problems.error_help(
                Some(c.span()),
                "[coordinator] goes with strategy = \"two_phase\"",
                "no two-phase commit",
                "add [write] strategy = \"two_phase\", or remove [coordinator]",
            );
        }
        return None;
    }
    let table = raw.write.map(|w| w.get_ref());
    let strategy = match table
        .and_then(|w| w.strategy.as_ref())
        .map(|s| *s.get_ref())
    {
        None | Some(StrategyName::Direct) => Strategy::Direct,
        Some(StrategyName::Outbox) => Strategy::Outbox,
        Some(StrategyName::TwoPhase) => Strategy::TwoPhase,
        Some(StrategyName::Saga) => Strategy::Saga,
    };
    // Each sink's strategy (section 28.1), the file's by default.
    let strategies: Vec<Strategy> = match raw.sink.is_empty() {
        true => vec![strategy],
        false => (raw.sink.iter())
            .map(|s| {
                s.get_ref()
                    .strategy
                    .as_ref()
                    .map_or(strategy, |n| of(*n.get_ref()))
            })
            .collect(),
    };
    if let Some(log) = &scenario.log
        && log.guarantee == Guarantee::ExactlyOnce
    {
        let span = table
            .and_then(|w| w.strategy.as_ref().map(|s| s.span()))
            .or_else(|| raw.write.map(|w| w.span()))
            .or_else(|| raw.sink.first().map(|s| s.span()));
        let versioned = (raw.sink.iter())
            .find(|s| (s.get_ref().versioned.as_ref()).is_some_and(|v| *v.get_ref()));
        let span = versioned
            .and_then(|s| s.get_ref().versioned.as_ref().map(|v| v.span()))
            .or_else(|| {
                (raw.sink.iter())
                    .filter_map(|s| s.get_ref().strategy.as_ref())
                    .find(|n| of(*n.get_ref()) != Strategy::Direct)
                    .map(|n| n.span())
            })
            .or(span);
        let message = if versioned.is_some() {
            "a versioned sink is not modeled inside an exactly_once transaction"
        } else if strategies.iter().all(|&s| s == Strategy::Direct) {
            "sink latency, faults and outages are not modeled inside an exactly_once transaction"
        } else {
            "only strategy = \"direct\" works with guarantee = \"exactly_once\""
        };
        problems.error_help(
            span,
            message,
            "with an exactly_once log",
            "the log's transaction covers the sink writes (decision 26.13); use at_least_once or at_most_once to study a fan-out",
        );
    }
    let reasons = WriteReasons {
        sink_error: intern(&mut scenario.reasons, "sink error"),
        reply_lost: intern(&mut scenario.reasons, "reply lost"),
        sink_unavailable: intern(&mut scenario.reasons, "sink unavailable"),
    };
    let mut write = Write {
        strategy,
        relay_retry: DEFAULT_RELAY_RETRY,
        relay_attempts: DEFAULT_RELAY_ATTEMPTS,
        step_attempts: 1,
        idempotent_compensation: true,
        coordinator: None,
        sinks: Vec::new(),
        reasons,
        rows: None,
        plan: None,
    };
    if let Some(w) = table {
        write_keys(problems, w, &mut write, &strategies);
    }
    write.coordinator = coordinator(problems, raw.coordinator, &strategies, scenario);
    write.sinks = if raw.sink.is_empty() {
        // The implicit counter can prepare (decision 27.28).
        vec![SinkCalls {
            strategy,
            prepare: true,
            ..SinkCalls::default()
        }]
    } else {
        (raw.sink.iter().zip(&strategies))
            .map(|(s, &k)| sink_calls(problems, s, k, scenario, &reasons))
            .collect()
    };
    write.plan = plan(problems, table, raw.sink, &write);
    Some(write)
}

fn of(name: StrategyName) -> Strategy {
    match name {
        StrategyName::Direct => Strategy::Direct,
        StrategyName::Outbox => Strategy::Outbox,
        StrategyName::TwoPhase => Strategy::TwoPhase,
        StrategyName::Saga => Strategy::Saga,
    }
}

/// `outbox_dead_letter` and `irreversible_last`, and the steps of a write
/// whose sinks do not share one strategy or that asks for either
/// (section 28.1); `None` for section 24 as it is.
fn plan(
    problems: &mut Problems,
    table: Option<&file::WriteTable>,
    raw: &[S<file::SinkTable>],
    write: &Write,
) -> Option<Plan> {
    let compensate = table
        .and_then(|w| w.outbox_dead_letter.as_ref())
        .filter(|d| *d.get_ref() == file::OutboxDeadLetterName::Compensate);
    if let Some(d) = compensate
        && !(write.uses(Strategy::Outbox) && write.uses(Strategy::Saga))
    {
        problems.error_help(
            Some(d.span()),
            "outbox_dead_letter = \"compensate\" needs an outbox sink and a saga sink",
            "nothing to compensate, or no dead letter",
            "an outbox row's dead letter fails the write only for the saga sinks to compensate: give one sink strategy = \"outbox\" and one strategy = \"saga\"",
        );
    }
    let last = table
        .and_then(|w| w.irreversible_last.as_ref())
        .filter(|l| *l.get_ref());
    let irreversible = |k: usize| {
        raw.get(k)
            .is_some_and(|s| *s.get_ref().kind.get_ref() == file::SinkKindName::Irreversible)
    };
    if let Some(l) = last {
        let n = write.sinks.len();
        if !(0..n).any(irreversible) {
            problems.error_help(
                Some(l.span()),
                "irreversible_last needs an irreversible sink",
                "no irreversible sink",
                "it moves irreversible sinks after the others; give a sink kind = \"irreversible\", or remove it",
            );
        } else if write.uses(Strategy::Outbox)
            && (0..n).any(|k| irreversible(k) && write.sinks[k].strategy != Strategy::Outbox)
        {
            problems.error_help(
                Some(l.span()),
                "with an outbox sink, irreversible_last needs every irreversible sink to be outbox too",
                "an irreversible sink called before the outbox row",
                "a synchronous step comes before the outbox row is written: give the irreversible sinks strategy = \"outbox\", so the relay can call them last",
            );
        }
    }
    let mixed = write.sinks.iter().any(|k| k.strategy != write.strategy);
    if !mixed && compensate.is_none() && last.is_none() {
        return None;
    }
    let n = write.sinks.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    if last.is_some() {
        // Irreversible sinks last, in their file order.
        order.sort_by_key(|&k| irreversible(k as usize));
    }
    let (mut steps, mut two_phase, mut outbox, mut gated) = (Vec::new(), 0u64, 0u64, 0u64);
    for &k in &order {
        match write.sinks[k as usize].strategy {
            Strategy::Direct | Strategy::Saga => steps.push(PlanStep::Call(k)),
            Strategy::TwoPhase => {
                if two_phase == 0 {
                    steps.push(PlanStep::TwoPhase);
                }
                two_phase |= 1 << k;
            }
            Strategy::Outbox => {
                outbox |= 1 << k;
                if last.is_some() && irreversible(k as usize) {
                    gated |= 1 << k;
                }
            }
        }
    }
    Some(Plan {
        steps,
        order,
        two_phase,
        outbox,
        gated,
        compensate_on_dead_letter: compensate.is_some(),
    })
}

/// The `[write]` keys, each refused where no sink's strategy uses it
/// (decision 27.28, read over the sinks' strategies).
fn write_keys(
    problems: &mut Problems,
    w: &file::WriteTable,
    write: &mut Write,
    strategies: &[Strategy],
) {
    let strategy = write.strategy;
    let any = |s: Strategy| strategies.contains(&s);
    let mixed = strategies.iter().any(|&s| s != strategy);
    let uses = |key: &str| match key {
        "relay_retry" | "relay_attempts" => any(Strategy::Outbox) || any(Strategy::Saga),
        _ => any(Strategy::Saga),
    };
    let unused = |problems: &mut Problems, span: Range<usize>, key: &str| {
        if uses(key) {
            return false;
        }
        let goes_with = match key {
            "relay_retry" | "relay_attempts" => "strategy = \"outbox\" or \"saga\"",
            _ => "strategy = \"saga\"",
        };
        problems.error_help(
            Some(span),
            format!("`{key}` goes with {goes_with}"),
            match mixed {
                true => "no sink's strategy uses it".to_string(),
                false => format!("not used by {}", strategy.as_str()),
            },
            "remove it, or choose a strategy that uses it",
        );
        true
    };
    if let Some(r) = &w.relay_retry
        && !unused(problems, r.span(), "relay_retry")
    {
        write.relay_retry = r.get_ref().0;
    }
    let max = MAX_ATTEMPTS as i64;
    if let Some(n) = &w.relay_attempts
        && !unused(problems, n.span(), "relay_attempts")
        && let Some(n) = problems.count(n, "relay_attempts", 1, max)
    {
        write.relay_attempts = n as u32;
    }
    if let Some(n) = &w.step_attempts
        && !unused(problems, n.span(), "step_attempts")
        && let Some(n) = problems.count(n, "step_attempts", 1, max)
    {
        write.step_attempts = n as u32;
    }
    if let Some(b) = &w.idempotent_compensation
        && !unused(problems, b.span(), "idempotent_compensation")
    {
        write.idempotent_compensation = *b.get_ref();
    }
}

/// `[coordinator]`: only with two_phase; `recovers_after` required with
/// `crash` and refused without it, as `crash_at` is (section 28.15).
fn coordinator(
    problems: &mut Problems,
    raw: Option<&S<CoordinatorTable>>,
    strategies: &[Strategy],
    scenario: &mut Scenario,
) -> Option<Coordinator> {
    let raw = raw?;
    if !strategies.contains(&Strategy::TwoPhase) {
        let (label, help) = match strategies {
            [first, rest @ ..] if rest.iter().all(|s| s == first) => (
                format!("the strategy is {}", first.as_str()),
                "only two-phase commit has a coordinator; remove [coordinator] or set strategy = \"two_phase\"",
            ),
            _ => (
                "no two_phase sink".to_string(),
                "only two-phase commit has a coordinator; remove [coordinator] or give a sink strategy = \"two_phase\"",
            ),
        };
        problems.error_help(
            Some(raw.span()),
            "[coordinator] goes with strategy = \"two_phase\"",
            label,
            help,
        );
        return None;
    }
    let c = raw.get_ref();
    let commit_round_trip = c.commit_round_trip.as_ref().is_some_and(|b| *b.get_ref());
    let Some(crash) = &c.crash else {
        for (key, span) in [
            (
                "recovers_after",
                c.recovers_after.as_ref().map(|r| r.span()),
            ),
            ("crash_at", c.crash_at.as_ref().map(|r| r.span())),
        ] {
            if let Some(span) = span {
                problems.error_help(
                    Some(span),
                    format!("`{key}` goes with `crash`"),
                    "no crash",
                    "only a coordinator that crashes recovers: add crash = { first = 1 }, or remove the key",
                );
            }
        }
        return Some(Coordinator {
            crash: None,
            recovers_after: None,
            before_log: None,
            commit_round_trip,
        });
    };
    let crash = selector(problems, crash, scenario);
    let Some(recovers_after) = &c.recovers_after else {
        problems.error_help(
            Some(raw.span()),
            "[coordinator] needs `recovers_after`",
            "recovers_after missing",
            "how long after the prepare does the recovered coordinator read its log and decide? e.g. recovers_after = \"30s\", or \"never\"",
        );
        return None;
    };
    let recovers_after = match recovers_after.get_ref() {
        Recovery::After(d) => Some(d.0),
        Recovery::Never => None,
    };
    let before_log = match (&c.crash_at, recovers_after) {
        (Some(at), None) if *at.get_ref() == LogPoint::BeforeLog => {
            problems.error_help(
                Some(at.span()),
                "`crash_at` needs a coordinator that recovers",
                "recovers_after = \"never\"",
                "a coordinator that never recovers decides nothing, logged or not: give recovers_after a duration, or remove crash_at",
            );
            None
        }
        (Some(at), Some(_)) if *at.get_ref() == LogPoint::BeforeLog => Some(intern(
            &mut scenario.reasons,
            "coordinator crashed before deciding",
        )),
        _ => None,
    };
    Some(Coordinator {
        crash: Some(crash?),
        recovers_after,
        before_log,
        commit_round_trip,
    })
}

/// One `[[sink]]`'s call keys.
fn sink_calls(
    problems: &mut Problems,
    raw: &S<file::SinkTable>,
    strategy: Strategy,
    scenario: &mut Scenario,
    reasons: &WriteReasons,
) -> SinkCalls {
    let s = raw.get_ref();
    let prepare = s.prepare.as_ref().is_some_and(|p| *p.get_ref());
    if strategy == Strategy::TwoPhase && !prepare {
        problems.error_help(
            Some(raw.span()),
            format!(
                "sink \"{}\" cannot take part in two-phase commit",
                s.name.get_ref()
            ),
            "no prepare = true",
            "two-phase commit needs every sink to prepare: add prepare = true if it can hold a prepared write, or choose outbox or saga",
        );
    }
    if s.faults.len() > MAX_SINK_FAULTS {
        problems.error(
            s.faults[MAX_SINK_FAULTS].span(),
            format!("a sink may list at most {MAX_SINK_FAULTS} faults"),
            "one too many",
        );
    }
    let faults = (s.faults.iter().take(MAX_SINK_FAULTS))
        .filter_map(|f| sink_fault(problems, f, strategy, scenario, reasons))
        .collect();
    let corrective_notice = match &s.corrective_notice {
        Some(c) if *c.get_ref() => {
            let irreversible = *s.kind.get_ref() == file::SinkKindName::Irreversible;
            if !irreversible || strategy != Strategy::Saga {
                problems.error_help(
                    Some(c.span()),
                    "`corrective_notice` goes with an irreversible sink under strategy = \"saga\"",
                    if irreversible {
                        format!("the strategy is {}", strategy.as_str())
                    } else {
                        "not an irreversible sink".to_string()
                    },
                    "a corrective notice follows a notice a saga cannot take back: only an irreversible sink of a saga sends one",
                );
            }
            irreversible && strategy == Strategy::Saga
        }
        _ => false,
    };
    SinkCalls {
        strategy,
        latency: s.latency.as_ref().map_or(0, |l| l.get_ref().0),
        faults,
        outage: s.outage.as_ref().map(|o| {
            let o = o.get_ref();
            (o.from.get_ref().0, o.duration.get_ref().0)
        }),
        prepare,
        corrective_notice,
        becomes: becomes(problems, s),
        versioned: versioned(problems, s),
    }
}

/// A sink's `versioned` and `stale_writes` (section 28.9): an upsert that
/// keeps its write mode; `stale_writes` only with `versioned`.
fn versioned(problems: &mut Problems, s: &file::SinkTable) -> Option<StaleWrites> {
    let on = s.versioned.as_ref().filter(|v| *v.get_ref());
    let stale = match s.stale_writes.as_ref().map(|w| (w.span(), *w.get_ref())) {
        Some((_, file::StaleWritesName::Reject)) => StaleWrites::Reject,
        _ => StaleWrites::Overwrite,
    };
    if let (Some(w), None) = (&s.stale_writes, on) {
        problems.error_help(
            Some(w.span()),
            "`stale_writes` goes with versioned = true",
            "this sink holds no versions",
            "only a versioned sink can tell a stale write: add versioned = true, or remove stale_writes",
        );
    }
    let on = on?;
    if *s.kind.get_ref() != file::SinkKindName::Upsert {
        problems.error_help(
            Some(on.span()),
            "`versioned` goes with kind = \"upsert\"",
            "not an upsert sink",
            "only an upsert holds a row per key to version; an increment or a send has none",
        );
        return None;
    }
    if let Some(b) = &s.becomes {
        problems.error_help(
            Some(b.span()),
            "a versioned sink cannot change its write mode",
            "with versioned = true",
            "a versioned upsert keeps its rows' versions; `becomes` models an upsert that loses its key: remove one of them",
        );
        return None;
    }
    Some(stale)
}

/// A sink's `becomes` (section 28.8): towards an increment or an upsert,
/// from a kind that can change (not irreversible) and is not the new one.
fn becomes(problems: &mut Problems, s: &file::SinkTable) -> Option<(Millis, SinkKind)> {
    let b = s.becomes.as_ref()?;
    let (own, to) = (*s.kind.get_ref(), *b.get_ref().kind.get_ref());
    let refuse = |problems: &mut Problems, message: &str, label: &str, help: &str| {
        problems.error_help(Some(b.span()), message, label, help);
    };
    if own == file::SinkKindName::Irreversible {
        refuse(
            problems,
            "an irreversible sink cannot change its write mode",
            "irreversible",
            "`becomes` models an upsert downgraded to an append (or the reverse): use it on an increment or upsert sink",
        );
        return None;
    }
    let kind = match to {
        file::SinkKindName::Irreversible => {
            refuse(
                problems,
                "a sink cannot become irreversible",
                "kind = \"irreversible\"",
                "`becomes` takes kind = \"increment\" or \"upsert\"",
            );
            return None;
        }
        _ if to == own => {
            refuse(
                problems,
                "`becomes` names the sink's own kind",
                "no change",
                "give the kind it changes to, or remove `becomes`",
            );
            return None;
        }
        file::SinkKindName::Increment => SinkKind::Increment,
        file::SinkKindName::Upsert => SinkKind::Upsert,
    };
    Some((b.get_ref().at.get_ref().0, kind))
}

fn sink_fault(
    problems: &mut Problems,
    raw: &S<SinkFaultTable>,
    strategy: Strategy,
    scenario: &mut Scenario,
    reasons: &WriteReasons,
) -> Option<SinkFault> {
    let f = raw.get_ref();
    let (sel, fail) = match (&f.fail, &f.lose_reply) {
        (Some(sel), None) => (sel, true),
        (None, Some(sel)) => (sel, false),
        _ => {
            problems.error_help(
                Some(raw.span()),
                "a sink fault needs exactly one of `fail` or `lose_reply`",
                "choose one",
                "fail = { ... } fails the call; lose_reply = { ... } applies the write and loses the reply",
            );
            return None;
        }
    };
    let compensation = f.compensation.as_ref().is_some_and(|c| *c.get_ref());
    if let Some(c) = f
        .compensation
        .as_ref()
        .filter(|_| strategy != Strategy::Saga)
    {
        problems.error_help(
            Some(c.span()),
            "a compensation fault goes with strategy = \"saga\"",
            format!("{} never compensates", strategy.as_str()),
            "only a saga makes compensation calls; remove `compensation`",
        );
    }
    if !fail {
        for (key, span) in [
            ("reason", f.reason.as_ref().map(|r| r.span())),
            ("class", f.class.as_ref().map(|c| c.span())),
        ] {
            if let Some(span) = span {
                problems.error_help(
                    Some(span),
                    format!("a lost reply has no `{key}` of its own"),
                    "not allowed on lose_reply",
                    "a lost reply is heard as \"reply lost\", transient; remove it",
                );
            }
        }
    }
    let selector = selector(problems, sel, scenario)?;
    let kind = if fail {
        let reason = match &f.reason {
            Some(r) => {
                problems.plain_spanned(r, "a failure reason", MAX_REASON);
                intern(&mut scenario.reasons, r.get_ref())
            }
            None => reasons.sink_error,
        };
        let class = match f.class.as_ref().map(|c| *c.get_ref()) {
            Some(file::Class::Permanent) => Class::Permanent,
            _ => Class::Transient,
        };
        SinkFaultKind::Fail(reason, class)
    } else {
        SinkFaultKind::LoseReply
    };
    Some(SinkFault {
        kind,
        selector,
        compensation,
    })
}

/// `{ first = N }`, `{ intents = [...] }`, `{ every = N }` or
/// `{ until = "repair" }`: exactly one.
fn selector(
    problems: &mut Problems,
    sel: &S<SinkSelector>,
    scenario: &Scenario,
) -> Option<CallSelector> {
    let s = sel.get_ref();
    let written = [
        s.first.is_some(),
        s.intents.is_some(),
        s.every.is_some(),
        s.until.is_some(),
    ];
    if written.iter().filter(|&&w| w).count() != 1 {
        problems.error_help(
            Some(sel.span()),
            "a sink selector needs exactly one of `first`, `intents`, `every` or `until`",
            "choose one selector",
            "first = N: each intent's first N calls; intents = [\"id\"]: every call for those messages' intents; every = N: every call for each N-th intent; until = \"repair\"",
        );
        return None;
    }
    if let Some(n) = &s.first {
        return problems
            .count(n, "first", 0, i64::MAX)
            .map(CallSelector::First);
    }
    if let Some(n) = &s.every {
        return problems
            .count(n, "every", 1, i64::MAX)
            .map(CallSelector::Every);
    }
    if let Some(ids) = &s.intents {
        let mut found = Vec::new();
        let before = problems.list.len();
        for id in ids.get_ref() {
            match scenario.find_message(id.get_ref()) {
                Some(m) => found.push(m),
                None => unknown_message(problems, scenario, id),
            }
        }
        return (problems.list.len() == before).then_some(CallSelector::Intents(found));
    }
    Some(CallSelector::UntilRepair)
}
