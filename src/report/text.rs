//! The plain-text forms of a run: transition lines, the snapshot table,
//! totals, and the transcript that `show` prints. Stable and fixed-width:
//! golden-output checks compare these.

use std::fmt::Write;

use crate::duration::format as dur;
use crate::engine::{FULL_TRANSCRIPT_MESSAGES, Outcome};
use crate::model::{Scenario, Total, Value};
use crate::words::line::{Line, id_width, row};

/// The snapshot table. Shows at most `limit` messages.
pub fn snapshot(scenario: &Scenario, outcome: &Outcome, limit: usize) -> String {
    let header = [
        "id",
        "key",
        "state",
        "cycle",
        "cycle rcv",
        "total rcv",
        "effects",
        "dedup",
        "last quarantined",
        "age",
        "last reason",
    ];
    let rows: Vec<[String; 11]> = (0..outcome.messages.len().min(limit))
        .map(|m| {
            let r = row(scenario, outcome, m);
            [
                r.id,
                r.key,
                r.state.as_str().to_string(),
                r.cycle.to_string(),
                r.cycle_receives.to_string(),
                r.total_receives.to_string(),
                r.effects.to_string(),
                r.dedup_hits.to_string(),
                r.last_quarantined_at.map_or("-".into(), dur),
                r.age.map_or("-".into(), dur),
                r.last_reason.unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let fmt_row = |cells: Vec<&str>| -> String {
        let mut line = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        line.trim_end().to_string()
    };
    out.push_str(&fmt_row(header.to_vec()));
    out.push('\n');
    for r in &rows {
        out.push_str(&fmt_row(r.iter().map(|c| c.as_str()).collect()));
        out.push('\n');
    }
    if outcome.messages.len() > limit {
        let _ = writeln!(
            out,
            "... and {} more messages",
            outcome.messages.len() - limit
        );
    }
    out
}

pub fn totals(scenario: &Scenario, outcome: &Outcome) -> String {
    let t = &outcome.totals;
    let mut out = String::new();
    // 20 columns, wider when a listed name needs more.
    let w = Total::listed(scenario)
        .map(|t| t.name().len() + 2)
        .fold(20, usize::max);
    let _ = writeln!(out, "{:<w$}{}", "messages", t.messages);
    for total in Total::listed(scenario) {
        let _ = writeln!(out, "{:<w$}{}", total.name(), shown_total(outcome, total));
    }
    out
}

/// The whole transcript: transitions, snapshot, totals.
pub fn transcript(scenario: &Scenario, outcome: &Outcome) -> String {
    in_memory(|out| write_transcript(out, scenario, outcome))
}

/// What a writer of text writes, as a string.
fn in_memory(write: impl FnOnce(&mut String) -> std::fmt::Result) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write(&mut out);
    out
}

/// Writes the whole transcript to `out` as it goes, a transition a line.
pub fn write_transcript(
    out: &mut dyn Write,
    scenario: &Scenario,
    outcome: &Outcome,
) -> std::fmt::Result {
    writeln!(out, "scenario: {}", scenario.name)?;
    writeln!(out, "seed: {}", scenario.seed)?;
    out.write_str("\ntransitions:\n")?;
    let w = id_width(scenario, outcome);
    for t in &outcome.transitions {
        writeln!(out, "{}", Line(scenario, t, w))?;
    }
    if outcome.transitions_dropped > 0 {
        writeln!(
            out,
            "... and {} more transitions, not kept (a run keeps at most {})",
            outcome.transitions_dropped,
            crate::engine::TRANSITIONS_KEPT
        )?;
    }
    writeln!(out, "\n{}:", snapshot_heading(outcome))?;
    out.write_str(&snapshot(scenario, outcome, usize::MAX))?;
    if !outcome.finished {
        out.write_str(&super::live::text(scenario, outcome))?;
    }
    if outcome.finished {
        out.write_str("\ntotals:\n")?;
        out.write_str(&totals(scenario, outcome))?;
        out.write_str(&super::log_text::log_section(scenario, outcome))?;
        out.write_str(&super::row_text::versioned_section(scenario, outcome))?;
    }
    Ok(())
}

/// What a transcript's snapshot is of: "final snapshot", or "snapshot as
/// of T" for a run stopped at T (`show --at`).
fn snapshot_heading(outcome: &Outcome) -> String {
    match outcome.finished {
        true => "final snapshot".to_string(),
        false => format!("snapshot as of {}", dur(outcome.as_of)),
    }
}

/// Runs up to [`FULL_TRANSCRIPT_MESSAGES`] get every transition in their
/// golden transcript; larger ones get totals, drains and the snapshot's head.
const LARGE_SNAPSHOT_ROWS: usize = 50;

/// The golden transcript of a finished run.
pub fn golden_transcript(scenario: &Scenario, outcome: &Outcome) -> String {
    in_memory(|out| write_golden_transcript(out, scenario, outcome))
}

/// Writes the golden transcript to `out` as it goes (what `show` prints).
pub fn write_golden_transcript(
    out: &mut dyn Write,
    scenario: &Scenario,
    outcome: &Outcome,
) -> std::fmt::Result {
    if scenario.message_count() <= FULL_TRANSCRIPT_MESSAGES {
        return write_transcript(out, scenario, outcome);
    }
    write!(
        out,
        "scenario: {}\nseed: {}\n\ntransitions: omitted ({} messages, more than {FULL_TRANSCRIPT_MESSAGES})\n\n",
        scenario.name,
        scenario.seed,
        scenario.message_count()
    )?;
    out.write_str("drains:")?;
    for d in &outcome.drains {
        out.write_char(' ')?;
        out.write_str(&crate::duration::format(*d))?;
    }
    writeln!(out, "\n\n{} (first messages):", snapshot_heading(outcome))?;
    out.write_str(&snapshot(scenario, outcome, LARGE_SNAPSHOT_ROWS))?;
    if !outcome.finished {
        out.write_str(&super::live::text(scenario, outcome))?;
    }
    out.write_str("\ntotals:\n")?;
    out.write_str(&totals(scenario, outcome))?;
    out.write_str(&super::log_text::log_section(scenario, outcome))?;
    out.write_str(&super::row_text::versioned_section(scenario, outcome))
}

/// A measure's value as the transcript writes it (`1m30s`, `12`, `-`).
pub fn shown_total(outcome: &Outcome, total: Total) -> String {
    shown(outcome.totals.get(total))
}

/// A value as the transcript and the reports write it: texts without
/// quotes, times as durations, no value as `-`.
pub fn shown(value: Value) -> String {
    match value {
        Value::Count(n) => n.to_string(),
        Value::Time(ms) => dur(ms),
        Value::Text(s) => s,
        Value::Never => "-".to_string(),
        Value::Bool(b) => b.to_string(),
        v @ (Value::Int(_) | Value::Ints(_) | Value::Texts(_)) => v.to_string(),
    }
}
