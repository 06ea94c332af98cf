//! Validating the `[expect]` table into [`Expectation`]s that remember
//! where each expected value was written.

use super::file::{self, S};
use super::problems::{
    Problems, find_alarm, find_checkpoint, find_kind, find_partition, find_restart, find_sink,
    unknown_message,
};
use crate::diagnostic::did_you_mean;
use crate::model::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Count,
    /// A signed whole number.
    Int,
    /// A signed whole number, or the word "never" (no value).
    IntOrNever,
    /// A list of whole numbers.
    Ints,
    /// A list of whole numbers, or the word "never" (nothing recorded).
    IntsOrNever,
    /// A list of names.
    Names,
    Time,
    Text,
    State,
    /// A time, or the word "never".
    TimeOrNever,
    /// Why a run ended.
    Stop,
    /// true or false.
    Bool,
    /// A checkpoint's status (section 28.7), or "never".
    CheckpointStatus,
}

pub(super) fn expectations(
    problems: &mut Problems,
    raw: S<file::Expect>,
    scenario: &Scenario,
) -> Vec<Expectation> {
    let e = raw.into_inner();
    let mut out = Vec::new();
    for (value, total) in e.totals() {
        let kind = match total.unit() {
            Unit::Time => Kind::Time,
            Unit::Count => Kind::Count,
            Unit::MaybeTime => Kind::TimeOrNever,
            Unit::Stop => Kind::Stop,
        };
        if let Some(v) = value
            && let Some((check, description)) = check(problems, v, kind, total.name())
        {
            out.push(Expectation {
                target: Target::Total(total),
                check,
                span: v.span(),
                description: description.or_else(|| e.description.clone()),
            });
        }
    }

    for (id, m) in &e.message {
        out.extend(message_expectations(problems, scenario, id, m.get_ref()));
    }
    for (name, k) in &e.kind {
        out.extend(kind_expectations(problems, scenario, name, k.get_ref()));
    }
    for (name, a) in &e.alarm {
        out.extend(alarm_expectations(problems, scenario, name, a.get_ref()));
    }
    for (name, k) in &e.sink {
        out.extend(sink_expectations(problems, scenario, name, k.get_ref()));
    }
    for (n, p) in &e.partition {
        out.extend(partition_expectations(problems, scenario, n, p.get_ref()));
    }
    for (n, r) in &e.restart {
        out.extend(restart_expectations(problems, scenario, n, r.get_ref()));
    }
    for (n, c) in &e.checkpoint {
        out.extend(checkpoint_expectations(problems, scenario, n, c.get_ref()));
    }
    for ev in &e.event {
        out.extend(event_expectation(problems, scenario, ev));
    }
    out.sort_by_key(|e| e.span.start);
    // Descriptions are echoed in diagnostics and reports: plain text
    // (each checked once, at its first expectation).
    let mut checked = std::collections::BTreeSet::new();
    for x in &out {
        if let Some(d) = &x.description
            && checked.insert(d.clone())
        {
            let what = "the description of this expectation";
            problems.plain(
                d,
                x.span.clone(),
                what,
                true,
                super::problems::MAX_DESCRIPTION,
            );
        }
    }
    for x in &mut out {
        if let Some(d) = &mut x.description {
            *d = super::problems::lines(d);
        }
    }
    out
}

/// `[expect.message.ID]`: each field written, against that message.
fn message_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    id: &S<String>,
    m: &file::ExpectMessage,
) -> Vec<Expectation> {
    let Some(index) = scenario.find_message(id.get_ref()) else {
        unknown_message(problems, scenario, id);
        return Vec::new();
    };
    let fields: [(&file::CheckValue, MessageField, Kind); 15] = [
        (&m.state, MessageField::State, Kind::State),
        (&m.key, MessageField::Key, Kind::Text),
        (&m.cycle, MessageField::Cycle, Kind::Count),
        (&m.cycle_receives, MessageField::CycleReceives, Kind::Count),
        (&m.total_receives, MessageField::TotalReceives, Kind::Count),
        (&m.effects, MessageField::Effects, Kind::Count),
        (&m.dedup_hits, MessageField::DedupHits, Kind::Count),
        (&m.last_reason, MessageField::LastReason, Kind::Text),
        (
            &m.last_quarantined_at,
            MessageField::LastQuarantinedAt,
            Kind::TimeOrNever,
        ),
        (&m.arrived_at, MessageField::ArrivedAt, Kind::TimeOrNever),
        (&m.acked_at, MessageField::AckedAt, Kind::TimeOrNever),
        (&m.latency, MessageField::Latency, Kind::TimeOrNever),
        (&m.queue_wait, MessageField::QueueWait, Kind::Time),
        (&m.group, MessageField::Group, Kind::Text),
        (&m.archived, MessageField::Archived, Kind::Bool),
    ];
    let fields = fields.map(|(v, f, kind)| (v, Target::Message(index, f), kind, f.name()));
    let mut out = table_expectations(problems, fields, &m.description);
    if let Some(e) = &m.envelope {
        use crate::model::EnvelopeField as F;
        let fields = [
            (&e.partition, F::Partition, Kind::IntOrNever),
            (&e.offset, F::Offset, Kind::IntOrNever),
            (&e.event_time, F::EventTime, Kind::TimeOrNever),
            (&e.quarantined_at, F::QuarantinedAt, Kind::TimeOrNever),
            (&e.first_delivery, F::FirstDelivery, Kind::TimeOrNever),
            (&e.schema_version, F::SchemaVersion, Kind::Text),
            (&e.reason, F::Reason, Kind::Text),
            (&e.class, F::Class, Kind::Text),
            (&e.cycle_receives, F::CycleReceives, Kind::IntOrNever),
            (&e.total_receives, F::TotalReceives, Kind::IntOrNever),
            (&e.dead_letter_cause, F::DeadLetterCause, Kind::Text),
        ];
        let fields = fields.map(|(v, f, kind)| (v, Target::Envelope(index, f), kind, f.name()));
        out.extend(table_expectations(problems, fields, &m.description));
    }
    out
}

/// The values written in one table of `[expect]`: each checked as its
/// kind, against its target, with the table's description unless the
/// value has its own.
fn table_expectations<'a>(
    problems: &mut Problems,
    fields: impl IntoIterator<Item = (&'a file::CheckValue, Target, Kind, &'static str)>,
    table_description: &Option<String>,
) -> Vec<Expectation> {
    let mut out = Vec::new();
    for (value, target, kind, name) in fields {
        if let Some(v) = value
            && let Some((check, description)) = check(problems, v, kind, name)
        {
            out.push(Expectation {
                target,
                check,
                span: v.span(),
                description: description.or_else(|| table_description.clone()),
            });
        }
    }
    out
}

/// `[expect.kind."NAME"]`: each field written, against that mix kind.
fn kind_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    name: &S<String>,
    k: &file::ExpectKind,
) -> Vec<Expectation> {
    let Some(index) = find_kind(problems, scenario, name) else {
        return Vec::new();
    };
    let fields = [
        (&k.messages, KindField::Messages),
        (&k.acked, KindField::Acked),
        (&k.quarantined, KindField::Quarantined),
        (&k.deliveries, KindField::Deliveries),
    ];
    let fields = fields.map(|(v, f)| (v, Target::Kind(index, f), Kind::Count, f.name()));
    table_expectations(problems, fields, &k.description)
}

/// `[expect.sink."NAME"]`: each field written, against that sink.
fn sink_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    name: &S<String>,
    k: &file::ExpectSink,
) -> Vec<Expectation> {
    let Some(index) = find_sink(problems, scenario, name) else {
        return Vec::new();
    };
    let strategy = (scenario.write.as_ref()).map(|w| w.strategy_of(index as usize));
    let outbox = strategy == Some(Strategy::Outbox);
    if let (Some(lag), false) = (&k.max_lag, outbox) {
        problems.error_help(
            Some(lag.span()),
            "a sink's `max_lag` goes with [write] strategy = \"outbox\"",
            "no outbox relay",
            "only an outbox relay applies a write after its row's time",
        );
    }
    let saga = strategy == Some(Strategy::Saga);
    for (field, name) in [
        (&k.compensations_given_up, "compensations_given_up"),
        (&k.compensations, "compensations"),
    ] {
        if let (Some(v), false) = (field, saga) {
            problems.error_help(
                Some(v.span()),
                format!("a sink's `{name}` goes with [write] strategy = \"saga\""),
                "no saga",
                "only a saga compensates",
            );
        }
    }
    let changes = (scenario.write.as_ref())
        .and_then(|w| w.sinks.get(index as usize))
        .is_some_and(|s| s.becomes.is_some());
    for (field, name) in [
        (&k.writes_after_change, "writes_after_change"),
        (&k.kind_at_end, "kind_at_end"),
    ] {
        if let (Some(v), false) = (field, changes) {
            problems.error_help(
                Some(v.span()),
                format!("a sink's `{name}` goes with its `becomes`"),
                "this sink never changes its write mode",
                "add becomes = { kind = \"increment\", at = \"...\" } to the sink, or remove the expectation",
            );
        }
    }
    let versioned = (scenario.write.as_ref())
        .and_then(|w| w.sinks.get(index as usize))
        .is_some_and(|s| s.versioned.is_some());
    for (field, name) in [
        (&k.stale_overwrites, "stale_overwrites"),
        (&k.stale_rejections, "stale_rejections"),
    ] {
        if let (Some(v), false) = (field, versioned) {
            problems.error_help(
                Some(v.span()),
                format!("a sink's `{name}` goes with versioned = true"),
                "this sink holds no versions",
                "add versioned = true to the (upsert) sink, or remove the expectation",
            );
        }
    }
    let mut rows = Vec::new();
    for (row, r) in &k.row {
        if !versioned {
            problems.error_help(
                Some(row.span()),
                "`[expect.sink.NAME.row.ROW]` goes with versioned = true",
                "this sink holds no versions",
                "add versioned = true to the (upsert) sink, or remove the expectation",
            );
            continue;
        }
        // Echoed in diagnostics and reports: plain text, as a row is.
        problems.plain_spanned(row, "a row", super::problems::MAX_ID);
        let r = r.get_ref();
        let fields = [(&r.value, RowField::Value), (&r.version, RowField::Version)];
        let fields = fields.map(|(v, field)| {
            let target = Target::Row {
                sink: index,
                row: row.get_ref().clone(),
                field,
            };
            (v, target, Kind::IntOrNever, field.name())
        });
        let description = r.description.clone().or_else(|| k.description.clone());
        rows.extend(table_expectations(problems, fields, &description));
    }
    // Compensations can take a fan-out's counts below zero.
    let signed = if scenario.write.is_some() {
        Kind::Int
    } else {
        Kind::Count
    };
    let fields = [
        (&k.value, SinkField::Value, signed),
        (&k.visible_duplicates, SinkField::VisibleDuplicates, signed),
        (&k.missing, SinkField::Missing, Kind::Count),
        (&k.max_per_intent, SinkField::MaxPerIntent, Kind::Count),
        (&k.max_lag, SinkField::MaxLag, Kind::Time),
        (
            &k.compensations_given_up,
            SinkField::CompensationsGivenUp,
            Kind::Count,
        ),
        (
            &k.writes_after_change,
            SinkField::WritesAfterChange,
            Kind::Count,
        ),
        (&k.kind_at_end, SinkField::KindAtEnd, Kind::Text),
        (&k.stale_overwrites, SinkField::StaleOverwrites, Kind::Count),
        (&k.stale_rejections, SinkField::StaleRejections, Kind::Count),
        (&k.compensations, SinkField::Compensations, Kind::Count),
    ];
    let fields = fields.map(|(v, f, kind)| (v, Target::Sink(index, f), kind, f.name()));
    let mut out = table_expectations(problems, fields, &k.description);
    out.extend(rows);
    out
}

/// `[expect.partition.N]`: each field written, against that partition.
fn partition_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
    p: &file::ExpectPartition,
) -> Vec<Expectation> {
    let Some(index) = find_partition(problems, scenario, n) else {
        return Vec::new();
    };
    let fields = [
        (&p.end_offset, PartitionField::EndOffset),
        (&p.committed, PartitionField::Committed),
    ];
    let fields = fields.map(|(v, f)| (v, Target::Partition(index, f), Kind::Count, f.name()));
    table_expectations(problems, fields, &p.description)
}

/// `[expect.restart.N]`: each field written, against that restart.
fn restart_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
    r: &file::ExpectRestart,
) -> Vec<Expectation> {
    let Some(index) = find_restart(problems, scenario, n) else {
        return Vec::new();
    };
    let fields = [
        (
            &r.resume_positions,
            RestartField::ResumePositions,
            Kind::Ints,
        ),
        (
            &r.checkpoint_time,
            RestartField::CheckpointTime,
            Kind::TimeOrNever,
        ),
        (
            &r.replayed_until,
            RestartField::ReplayedUntil,
            Kind::IntsOrNever,
        ),
    ];
    let fields = fields.map(|(v, f, kind)| (v, Target::Restart(index, f), kind, f.name()));
    table_expectations(problems, fields, &r.description)
}

/// `[expect.checkpoint.K]`: its status (section 28.7).
fn checkpoint_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    n: &S<String>,
    c: &file::ExpectCheckpoint,
) -> Vec<Expectation> {
    let Some(k) = find_checkpoint(problems, scenario, n) else {
        return Vec::new();
    };
    let fields = [(&c.status, CheckpointField::Status)];
    let fields = fields.map(|(v, f)| {
        (
            v,
            Target::Checkpoint(k, f),
            Kind::CheckpointStatus,
            f.name(),
        )
    });
    table_expectations(problems, fields, &c.description)
}

/// `[expect.alarm."NAME"]`: each field written, against that alarm.
fn alarm_expectations(
    problems: &mut Problems,
    scenario: &Scenario,
    name: &S<String>,
    a: &file::ExpectAlarm,
) -> Vec<Expectation> {
    let Some(index) = find_alarm(problems, scenario, name) else {
        return Vec::new();
    };
    let fields = [
        (&a.fired, AlarmField::Fired, Kind::Bool),
        (
            &a.first_fired_at,
            AlarmField::FirstFiredAt,
            Kind::TimeOrNever,
        ),
        (&a.times_fired, AlarmField::TimesFired, Kind::Count),
        (&a.firing_at_end, AlarmField::FiringAtEnd, Kind::Bool),
    ];
    let fields = fields.map(|(v, f, kind)| (v, Target::Alarm(index, f), kind, f.name()));
    table_expectations(problems, fields, &a.description)
}

/// One `[[expect.event]]`.
fn event_expectation(
    problems: &mut Problems,
    scenario: &Scenario,
    ev: &S<file::ExpectEvent>,
) -> Option<Expectation> {
    let span = ev.span();
    let ev = ev.get_ref();
    let kind = *ev.kind.get_ref();
    let log_kind = kind.is_log_kind();
    let partitions = scenario.log.as_ref().map(|l| l.partitions);
    if log_kind && partitions.is_none() {
        problems.error_help(
            Some(ev.kind.span()),
            format!("event kind \"{}\" happens only in a log run", kind.as_str()),
            "no [log]",
            "restarts, resumes, abandoned deliveries, cancelled retries and skipped records are a partitioned log's ([log] and [[restart]])",
        );
        return None;
    }
    if kind == EventKind::CheckpointCompleted
        && scenario.log.as_ref().is_some_and(|l| !l.checkpoint_events)
    {
        problems.error_help(
            Some(ev.kind.span()),
            "this file writes no checkpoint_completed transitions",
            "never written",
            "set [log] checkpoint_events = true (completed checkpoints are written only then, or with [[checkpoint_failure]])",
        );
        return None;
    }
    let needs = match kind {
        EventKind::CompensationSent | EventKind::CompensationGivenUp => Some(Strategy::Saga),
        EventKind::OutboxDeadLettered | EventKind::WriteFailedLate => Some(Strategy::Outbox),
        EventKind::CoordinatorRecovered => Some(Strategy::TwoPhase),
        _ => None,
    };
    if let Some(needed) = needs
        && !scenario.write.as_ref().is_some_and(|w| w.uses(needed))
    {
        problems.error_help(
            Some(ev.kind.span()),
            format!(
                "event kind \"{}\" happens only with [write] strategy = \"{}\"",
                kind.as_str(),
                needed.as_str()
            ),
            "no such write",
            "a saga compensates; an outbox relay dead-letters rows",
        );
        return None;
    }
    if let Some(id) = &ev.message
        && !kind.has_message()
    {
        problems.error_help(
            Some(id.span()),
            format!(
                "event kind \"{}\" concerns no single message",
                kind.as_str()
            ),
            "no message here",
            "leave `message` out: such a transition names none, so it could never match",
        );
        return None;
    }
    let partition = match (&ev.partition, partitions) {
        (None, _) => None,
        (Some(p), None) => {
            problems.error_help(
                Some(p.span()),
                "`partition` on an event expectation needs [log]",
                "no [log]",
                "only a partitioned log's transitions name a partition",
            );
            return None;
        }
        (Some(p), Some(_)) if !kind.names_partition() => {
            problems.error_help(
                Some(p.span()),
                format!("event kind \"{}\" names no partition", kind.as_str()),
                "no partition here",
                "`partition` goes with delivered, redriven, append_retried and the restart kinds (restarted, delivery_abandoned, retry_cancelled, record_skipped, resumed, replay_ended)",
            );
            return None;
        }
        (Some(p), Some(n)) if *p.get_ref() >= n => {
            problems.error(
                p.span(),
                format!(
                    "partition {} is not in the log: it has {n} (0 to {})",
                    p.get_ref(),
                    n - 1
                ),
                "no such partition",
            );
            return None;
        }
        (Some(p), Some(_)) => Some(*p.get_ref()),
    };
    let sink = match &ev.sink {
        None => None,
        Some(name) if !kind.is_write_kind() => {
            problems.error_help(
                Some(name.span()),
                format!("event kind \"{}\" names no sink", kind.as_str()),
                "no sink here",
                "`sink` goes with the kinds of a write to several sinks: compensation_sent, compensation_given_up, outbox_dead_lettered",
            );
            return None;
        }
        Some(name) => Some(super::problems::find_sink(problems, scenario, name)?),
    };
    let message = match &ev.message {
        Some(id) => match scenario.find_message(id.get_ref()) {
            Some(m) => Some(m),
            None => {
                unknown_message(problems, scenario, id);
                return None;
            }
        },
        None => None,
    };
    Some(Expectation {
        target: Target::Event {
            kind,
            message,
            at: ev.at.as_ref().map(|a| a.get_ref().0),
            partition,
            sink,
            never: ev.never,
        },
        check: Check::Occurs,
        span,
        description: ev.description.clone(),
    })
}

fn kind_hint(kind: Kind) -> &'static str {
    match kind {
        Kind::Count => "a whole number such as 4, or a table such as { at_least = 3 }",
        Kind::Int => "a whole number such as -4, or a table such as { at_least = 3 }",
        Kind::IntOrNever => "a whole number such as -4, or \"never\"",
        Kind::Ints => "a list of whole numbers such as [7] or []",
        Kind::IntsOrNever => "a list of whole numbers such as [7] or [], or \"never\"",
        Kind::Names => "a list of names such as [\"B\"] or []",
        Kind::Time => "a duration such as \"40s\", or a table such as { at_most = \"1m\" }",
        Kind::Text => "a string",
        Kind::State => {
            "one of \"acked\", \"quarantined\", \"expired\", \"purged\", \"waiting\", \"ready\", \"in_flight\""
        }
        Kind::Stop => "one of \"drained\", \"max_time\", \"max_events\"",
        Kind::CheckpointStatus => "one of \"completed\", \"failed\", \"aborted\", \"never\"",
        Kind::Bool => "true or false",
        Kind::TimeOrNever => "a duration such as \"20s\", or \"never\"",
    }
}

/// One expected value: exact or a comparison table.
pub(crate) fn check(
    problems: &mut Problems,
    v: &S<toml::Value>,
    kind: Kind,
    field: &str,
) -> Option<(Check, Option<String>)> {
    let span = v.span();
    match v.get_ref() {
        toml::Value::Table(t) => comparison(problems, t, span, kind, field),
        other => scalar(problems, other, kind, field, &span).map(|v| (Check::Equals(v), None)),
    }
}

/// A comparison table: `{ at_least = 3 }`, `{ between = [a, b] }`, ...,
/// with an optional `description`.
fn comparison(
    problems: &mut Problems,
    t: &toml::Table,
    span: std::ops::Range<usize>,
    kind: Kind,
    field: &str,
) -> Option<(Check, Option<String>)> {
    let mut description = None;
    let mut found: Vec<Check> = Vec::new();
    for (k, val) in t {
        let parsed = match k.as_str() {
            "description" => {
                match val.as_str() {
                    Some(d) => description = Some(d.to_string()),
                    None => problems.error(
                        span.clone(),
                        "`description` must be a string",
                        "not a string",
                    ),
                }
                continue;
            }
            "equals" => scalar(problems, val, kind, field, &span).map(Check::Equals),
            "at_least" | "at_most" | "between"
                if matches!(
                    kind,
                    Kind::Text
                        | Kind::State
                        | Kind::Stop
                        | Kind::CheckpointStatus
                        | Kind::Bool
                        | Kind::Ints
                        | Kind::IntsOrNever
                        | Kind::Names
                ) =>
            {
                problems.error(
                    span.clone(),
                    format!("`{k}` does not apply to `{field}`, which is not a number or a time"),
                    "not comparable",
                );
                None
            }
            "at_least" => scalar(problems, val, kind, field, &span).map(Check::AtLeast),
            "at_most" => scalar(problems, val, kind, field, &span).map(Check::AtMost),
            "between" => between(problems, val, &span, kind, field),
            other => {
                let keys = ["equals", "at_least", "at_most", "between", "description"];
                let help = did_you_mean(other, keys)
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        "use equals, at_least, at_most, between or description".into()
                    });
                problems.error_help(
                    Some(span.clone()),
                    format!("unknown comparison `{other}` in `{field}`"),
                    "unknown comparison",
                    help,
                );
                None
            }
        };
        if let Some(c) = parsed {
            found.push(c);
        }
    }
    match found.len() {
        1 => Some((found.remove(0), description)),
        0 => {
            if problems.list.is_empty() {
                problems.error_help(
                    Some(span),
                    format!("`{field}` names no comparison"),
                    "nothing to compare",
                    "write equals, at_least, at_most or between",
                );
            }
            None
        }
        _ => {
            problems.error_help(
                Some(span),
                format!("`{field}` names more than one comparison"),
                "choose one",
                "use between = [low, high] for a range",
            );
            None
        }
    }
}

/// `between = [low, high]`, lowest first.
fn between(
    problems: &mut Problems,
    val: &toml::Value,
    span: &std::ops::Range<usize>,
    kind: Kind,
    field: &str,
) -> Option<Check> {
    match val.as_array().map(|a| a.as_slice()) {
        Some([lo, hi]) => {
            let lo = scalar(problems, lo, kind, field, span);
            let hi = scalar(problems, hi, kind, field, span);
            match (lo, hi) {
                (Some(lo), Some(hi)) if lo <= hi => Some(Check::Between(lo, hi)),
                (Some(lo), Some(hi)) => {
                    problems.error(
                        span.clone(),
                        format!("`between` is empty: {lo} is above {hi}"),
                        "lower bound first",
                    );
                    None
                }
                _ => None,
            }
        }
        _ => {
            problems.error(
                span.clone(),
                "`between` takes two values, lowest first: between = [12, 14]",
                "expected [low, high]",
            );
            None
        }
    }
}

fn scalar(
    problems: &mut Problems,
    v: &toml::Value,
    kind: Kind,
    field: &str,
    span: &std::ops::Range<usize>,
) -> Option<Value> {
    let wrong = |problems: &mut Problems| {
        problems.error_help(
            Some(span.clone()),
            format!("wrong type for `{field}`: expected {}", kind_hint(kind)),
            "wrong type",
            "",
        );
        None
    };
    match (kind, v) {
        (Kind::Count, toml::Value::Integer(n)) if *n >= 0 => Some(Value::Count(*n as u64)),
        (Kind::Count, toml::Value::Integer(_)) => {
            problems.error(
                span.clone(),
                format!("`{field}` cannot be negative"),
                "negative",
            );
            None
        }
        (Kind::Time | Kind::TimeOrNever, toml::Value::String(s)) => {
            if kind == Kind::TimeOrNever && s == "never" {
                return Some(Value::Never);
            }
            match crate::duration::parse(s) {
                Ok(ms) => Some(Value::Time(ms)),
                Err(e) => {
                    problems.error(span.clone(), e.to_string(), "not a duration");
                    None
                }
            }
        }
        (Kind::Time | Kind::TimeOrNever, toml::Value::Integer(n)) => {
            problems.error_help(
                Some(span.clone()),
                format!("`{field}` is a duration and needs a unit"),
                "bare number",
                format!("write \"{n}s\" or \"{n}ms\""),
            );
            None
        }
        (Kind::Text, toml::Value::String(s)) => {
            // Echoed in diagnostics and reports: plain text, like the
            // ids, keys and reasons it is compared with.
            let what = format!("an expected `{field}`");
            let before = problems.list.len();
            problems.plain(s, span.clone(), &what, false, super::problems::MAX_REASON);
            (problems.list.len() == before).then(|| Value::Text(s.clone()))
        }
        (Kind::Bool, toml::Value::Boolean(b)) => Some(Value::Bool(*b)),
        (Kind::Int | Kind::IntOrNever, toml::Value::Integer(n)) => Some(Value::Int(*n)),
        (Kind::IntOrNever, toml::Value::String(s)) if s == "never" => Some(Value::Never),
        (Kind::IntsOrNever, toml::Value::String(s)) if s == "never" => Some(Value::Never),
        (Kind::Names, toml::Value::Array(items)) => {
            let names: Option<Vec<String>> =
                items.iter().map(|v| v.as_str().map(String::from)).collect();
            match names {
                Some(names) => {
                    let what = format!("an expected `{field}`");
                    let before = problems.list.len();
                    for name in &names {
                        problems.plain(name, span.clone(), &what, false, super::problems::MAX_ID);
                    }
                    (problems.list.len() == before).then_some(Value::Texts(names))
                }
                None => wrong(problems),
            }
        }
        (Kind::Ints | Kind::IntsOrNever, toml::Value::Array(items)) => {
            let values: Option<Vec<i64>> = items.iter().map(toml::Value::as_integer).collect();
            match values {
                Some(v) => Some(Value::Ints(v)),
                None => wrong(problems),
            }
        }
        (Kind::CheckpointStatus, toml::Value::String(s)) if s == "never" => Some(Value::Never),
        (Kind::State | Kind::Stop | Kind::CheckpointStatus, toml::Value::String(s)) => {
            let names: Vec<&str> = match kind {
                Kind::State => State::ALL.iter().map(|s| s.as_str()).collect(),
                Kind::CheckpointStatus => {
                    let mut names: Vec<&str> =
                        CheckpointStatus::ALL.iter().map(|s| s.as_str()).collect();
                    names.push("never");
                    names
                }
                _ => StoppedBy::ALL.iter().map(|s| s.as_str()).collect(),
            };
            if names.contains(&s.as_str()) {
                Some(Value::Text(s.clone()))
            } else {
                let what = match kind {
                    Kind::State => "state",
                    Kind::CheckpointStatus => "checkpoint status",
                    _ => "stop reason",
                };
                let help = did_you_mean(s, names)
                    .map(|c| format!("did you mean \"{c}\"?"))
                    .unwrap_or_else(|| kind_hint(kind).to_string());
                problems.error_help(
                    Some(span.clone()),
                    format!("unknown {what} \"{s}\""),
                    format!("unknown {what}"),
                    help,
                );
                None
            }
        }
        _ => wrong(problems),
    }
}
