//! Explanations of one write to several sinks (docs/model.md section 24):
//! the strategy, and the writes worth a look that the run noted: the call
//! that failed and what the strategy did next, a lost reply, a
//! compensation applied twice, a false notice, a dead-lettered outbox row,
//! a write waiting for a lock and the coordinator's crash behind it.

use crate::duration::format as dur;
use crate::engine::{Outcome, WRITE_NOTES_KEPT, WriteNote};
use crate::model::*;

use crate::words::plural;

/// The measures of section 24 and every noted write.
pub(super) fn writes_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let Some(write) = &scenario.write else {
        return ("no [write]".to_string(), Vec::new());
    };
    let t = &outcome.totals;
    let title = match write.strategy {
        _ if write.strategy_name() == "mixed" => format!(
            "strategies per sink: synchronous steps in order, then an outbox row for the outbox sinks; {}, {} dead-lettered, {} withheld; {} visible in some sinks and not all; noted writes:",
            plural(t.compensations, "compensation", "compensations"),
            plural(t.outbox_dead_letters, "row", "rows"),
            plural(
                t.notices_withheld,
                "irreversible send",
                "irreversible sends"
            ),
            dur(t.partial_visible)
        ),
        Strategy::Direct => format!(
            "strategy direct: calls in file order inside the delivery; {} visible in some sinks and not all; noted writes:",
            dur(t.partial_visible)
        ),
        Strategy::Outbox => format!(
            "strategy outbox: a relay applies each row to each sink (every {}, at most {} calls); {} dead-lettered; noted writes:",
            dur(write.relay_retry),
            write.relay_attempts,
            plural(t.outbox_dead_letters, "row", "rows")
        ),
        Strategy::TwoPhase => format!(
            "strategy two_phase: locks held {} in all, {} at most, {} in doubt at most; noted writes:",
            dur(t.lock_held),
            dur(t.max_lock),
            plural(t.max_in_doubt, "write", "writes")
        ),
        Strategy::Saga => format!(
            "strategy saga: {}, {} over-compensated, {} given up, {}; {} visible in some sinks and not all; noted writes:",
            plural(t.compensations, "compensation", "compensations"),
            t.over_compensations,
            t.compensations_given_up,
            plural(t.false_notices, "false notice", "false notices"),
            dur(t.partial_visible)
        ),
    };
    let mut lines: Vec<String> = (outcome.write_notes.iter())
        .map(|n| note_line(scenario, write, n))
        .collect();
    if outcome.write_notes.len() == WRITE_NOTES_KEPT {
        lines.push(format!(
            "(the run notes its first {WRITE_NOTES_KEPT} writes worth a look)"
        ));
    }
    (title, lines)
}

/// A fan-out sink's value and what it counts, then the noted writes that
/// touched it; for `missing`, the failed calls (at any sink) that kept a
/// write from it and its dead-lettered outbox rows.
pub(super) fn sink_story(
    scenario: &Scenario,
    outcome: &Outcome,
    k: u32,
    field: SinkField,
) -> String {
    let sink = &scenario.guarantees.sinks[k as usize];
    let value = outcome.sink_value(k, SinkField::Value);
    let what = match sink.kind {
        SinkKind::Increment => "applied calls minus applied compensations",
        SinkKind::Upsert => "rows: one per distinct key written and not deleted",
        SinkKind::Irreversible => "sends: one per applied call",
    };
    let mut out = format!(
        "sink \"{}\" ({}): value {value}, {what}; {} visible duplicates; {} missing, at most {} of one intent ({} effects in the ledger).\n",
        sink.name,
        sink.kind.as_str(),
        outcome.sink_value(k, SinkField::VisibleDuplicates),
        plural(
            outcome.sink_value(k, SinkField::Missing).max(0) as u64,
            "intent",
            "intents"
        ),
        plural(
            outcome.sink_value(k, SinkField::MaxPerIntent).max(0) as u64,
            "write",
            "writes"
        ),
        outcome.totals.effects,
    );
    let Some(write) = &scenario.write else {
        return out;
    };
    let missing = field == SinkField::Missing;
    let mine: Vec<&WriteNote> = (outcome.write_notes.iter())
        .filter(|n| match n {
            // A failed call ends (direct) or fails (saga) the write before
            // the sinks after it, and aborts it everywhere (two_phase).
            WriteNote::Failed { sink, .. } if missing => {
                *sink <= k || write.strategy_of(*sink as usize) == Strategy::TwoPhase
            }
            WriteNote::DeadLettered { sink, .. } => *sink == k,
            _ if missing => false,
            _ => note_sink(n) == Some(k),
        })
        .collect();
    if missing && !mine.is_empty() {
        out.push_str(&format!(
            "  the calls that kept writes from \"{}\" ({} strategy):\n",
            sink.name,
            write.strategy_of(k as usize).as_str()
        ));
    }
    for n in mine.iter().take(EXAMPLES) {
        out.push_str(&format!("  {}\n", note_line(scenario, write, n)));
    }
    if mine.len() > EXAMPLES {
        out.push_str(&format!(
            "  ... and {} more noted writes\n",
            mine.len() - EXAMPLES
        ));
    }
    out.push_str(&versioned_story(scenario, outcome, k, None));
    out
}

/// A versioned sink's stale writes (section 28.9), and the stale
/// overwrites the transcript holds (of `row` only, when given).
fn versioned_story(scenario: &Scenario, outcome: &Outcome, k: u32, row: Option<&str>) -> String {
    let Some(rows) = outcome.sink_rows.get(k as usize).and_then(Option::as_ref) else {
        return String::new();
    };
    let reject = (scenario.write.as_ref())
        .and_then(|w| w.sinks.get(k as usize))
        .is_some_and(|s| s.versioned == Some(StaleWrites::Reject));
    let mut out = format!(
        "  versioned, stale_writes = \"{}\": {}, {} in all; {}.\n",
        if reject { "reject" } else { "overwrite" },
        plural(rows.stale_overwrites, "stale overwrite", "stale overwrites"),
        plural(rows.stale_rejections, "stale rejection", "stale rejections"),
        plural(rows.rows_held, "row", "rows"),
    );
    let overwrites = (outcome.transitions.iter()).filter(|t| match t.detail {
        crate::engine::Detail::StaleOverwrite {
            sink, message, key, ..
        } => sink == k && row.is_none_or(|r| scenario.row_name(message, key) == r),
        _ => false,
    });
    for t in overwrites.take(EXAMPLES) {
        out.push_str(&format!(
            "  at {}: {}\n",
            dur(t.time),
            crate::words::sentence::Sentence(scenario, &t.detail)
        ));
    }
    out
}

/// A versioned sink's row (section 28.9): what it holds at the end, the
/// write that put it there, and the stale overwrites of it.
pub(super) fn row_story(scenario: &Scenario, outcome: &Outcome, k: u32, row: &str) -> String {
    let sink = &scenario.guarantees.sinks[k as usize].name;
    let rows = outcome.sink_rows.get(k as usize).and_then(Option::as_ref);
    let mut out = match rows.and_then(|r| r.row(row)) {
        None => format!(
            "sink \"{sink}\" holds no row \"{row}\" at the end: no write of it applied, or a compensation deleted it.\n"
        ),
        Some(r) => format!(
            "sink \"{sink}\" row \"{row}\": value {}, version {}, written by intent \"{}\"; {} on it.\n",
            r.value,
            r.version,
            scenario.intent_name(r.intent),
            plural(r.stale as u64, "stale write", "stale writes"),
        ),
    };
    out.push_str(&versioned_story(scenario, outcome, k, Some(row)));
    out
}

/// How many noted writes a sink story names.
const EXAMPLES: usize = 5;

fn note_sink(n: &WriteNote) -> Option<u32> {
    match *n {
        WriteNote::Failed { sink, .. }
        | WriteNote::ReplyLost { sink, .. }
        | WriteNote::OverCompensated { sink, .. }
        | WriteNote::CompensationExhausted { sink, .. }
        | WriteNote::DeadLettered { sink, .. } => Some(sink),
        WriteNote::FalseNotice { sink, .. } => Some(sink),
        WriteNote::Waited { .. } | WriteNote::Crashed { .. } => None,
    }
}

/// One noted write, in words.
pub fn note_line(scenario: &Scenario, write: &Write, n: &WriteNote) -> String {
    let id = |m: MessageIndex| scenario.message_id(m).into_owned();
    let sink = |k: u32| scenario.guarantees.sinks[k as usize].name.as_str();
    match *n {
        WriteNote::Failed {
            at,
            message,
            sink: k,
            reason,
            class,
        } => {
            let next = match (write.strategy_of(k as usize), class) {
                (Strategy::Direct, _) => {
                    "direct: the write ends there (later sinks not called) and the delivery fails"
                }
                (Strategy::TwoPhase, _) => "two_phase: the write aborts everywhere",
                (Strategy::Saga, Class::Permanent) => {
                    "saga: the write fails and what applied is compensated"
                }
                (Strategy::Saga, Class::Transient) => {
                    "saga: retried up to step_attempts, then compensated"
                }
                (Strategy::Outbox, _) => "outbox: the relay retries",
            };
            format!(
                "{} at {}: the call to \"{}\" failed ({}, {}); {next}",
                id(message),
                dur(at),
                sink(k),
                scenario.reasons[reason as usize],
                class.as_str()
            )
        }
        WriteNote::ReplyLost {
            at,
            message,
            sink: k,
        } => {
            let kind = scenario.guarantees.sinks[k as usize].kind;
            let effect = match kind {
                SinkKind::Upsert => "an upsert absorbs a second write",
                _ => "a second call counts again",
            };
            format!(
                "{} at {}: \"{}\" applied the write and its reply was lost (heard as a failure); {effect}",
                id(message),
                dur(at),
                sink(k)
            )
        }
        WriteNote::OverCompensated {
            message,
            sink: k,
            lost_at,
            retried_at,
        } => format!(
            "{}: the compensation of \"{}\" at {} applied and its reply was lost; its retry at {} applied again (idempotent_compensation = false): an over-compensation",
            id(message),
            sink(k),
            dur(lost_at),
            dur(retried_at)
        ),
        WriteNote::CompensationExhausted {
            at,
            message,
            sink: k,
        } => format!(
            "{}: every compensation call to \"{}\" failed by {} ({} calls): the write stays visible there",
            id(message),
            sink(k),
            dur(at),
            write.relay_attempts
        ),
        WriteNote::FalseNotice {
            at,
            message,
            sink: k,
            failed_sink,
        } => format!(
            "{}: \"{}\" sent at {}, then the call to \"{}\" failed: an irreversible send cannot be compensated (a false notice); place irreversible sinks last",
            id(message),
            sink(k),
            dur(at),
            sink(failed_sink)
        ),
        WriteNote::DeadLettered {
            message,
            sink: k,
            first_at,
            last_at,
            attempts,
        } => format!(
            "{}: the outbox row's {} to \"{}\" ({} to {}) all failed: dead-lettered for that sink, the other sinks unaffected",
            id(message),
            plural(attempts as u64, "call", "calls"),
            sink(k),
            dur(first_at),
            dur(last_at)
        ),
        WriteNote::Waited {
            message,
            key,
            from,
            until,
            holder,
            holder_crashed_at,
        } => {
            let why = match holder_crashed_at {
                Some(c) => format!(
                    ", whose coordinator crashed after prepare at {} and recovered at {}",
                    dur(c),
                    dur(until)
                ),
                None => String::new(),
            };
            format!(
                "{} waited from {} to {} for the lock on key \"{}\", held by {}{why}",
                id(message),
                dur(from),
                dur(until),
                scenario.key_name(key),
                id(holder)
            )
        }
        WriteNote::Crashed {
            message,
            prepared_at,
            decided_at,
            committed,
        } => {
            let then = match (decided_at, committed) {
                (Some(d), true) => {
                    format!(
                        "every lock held until it recovered and committed at {}",
                        dur(d)
                    )
                }
                (Some(d), false) => format!(
                    "every lock held until it recovered at {}, found no decision in its log and aborted",
                    dur(d)
                ),
                (None, _) => {
                    "it never recovered: the write stayed in doubt, every lock held, to the end"
                        .to_string()
                }
            };
            format!(
                "{}: the coordinator crashed after every sink prepared at {}; {then}",
                id(message),
                dur(prepared_at)
            )
        }
    }
}
