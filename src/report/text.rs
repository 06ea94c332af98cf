//! The plain-text forms of a run: transition lines, the snapshot table,
//! totals, and the transcript that `show` prints. Stable and fixed-width:
//! golden-output checks compare these.

use std::fmt::Write;

use crate::duration::format as dur;
use crate::engine::{Detail, FULL_TRANSCRIPT_MESSAGES, MessageState, Outcome, Transition};
use crate::model::{MessageIndex, Millis, Scenario, State, Total, Unit};

/// What happened, in words, without time or message.
pub fn describe(s: &Scenario, d: &Detail) -> String {
    match *d {
        Detail::Delivered {
            cycle,
            cycle_receives,
            total_receives,
        } => format!(
            "delivered (cycle {cycle}, receive {cycle_receives} of the cycle, {total_receives} in all)"
        ),
        Detail::Failed { reason, class } => {
            format!(
                "failed: {} ({})",
                s.reasons[reason as usize],
                class.as_str()
            )
        }
        Detail::Committed { key, effect } => {
            format!("committed effect #{effect} (key {})", s.key_name(key))
        }
        Detail::DedupHit { key, expires_at } => format!(
            "dedup hit on key {}: stored result valid until {}, no effect",
            s.key_name(key),
            dur(expires_at)
        ),
        Detail::AckLost => "ack lost: the broker counts the delivery as failed".to_string(),
        Detail::Acked => "acked".to_string(),
        Detail::RetryScheduled { delay, due } => {
            format!("retry scheduled after {} (due {})", dur(delay), dur(due))
        }
        Detail::Quarantined {
            reason,
            class,
            depth,
        } => format!(
            "quarantined: {} ({}); DLQ depth {depth}",
            s.reasons[reason as usize],
            class.as_str()
        ),
        Detail::Inspected { step, depth } => {
            let op = &s.operators[step as usize - 1];
            format!(
                "operator step {step} inspects: DLQ depth {depth}, action {}{}",
                op.action.name(),
                if op.repair { ", repair" } else { "" }
            )
        }
        Detail::Expired { age } => format!("expired in quarantine (age {})", dur(age)),
        Detail::Repaired => "repaired: until = \"repair\" faults stop".to_string(),
        Detail::Redriven { cycle, key } => {
            format!("redriven: cycle {cycle}, key {}", s.key_name(key))
        }
        Detail::RedriveSkipped { state } => {
            format!(
                "redrive skipped: the message is {}, not in quarantine",
                state.as_str()
            )
        }
        Detail::Purged => "purged from quarantine".to_string(),
    }
}

/// One transcript line: time, message, what happened.
pub fn line(s: &Scenario, t: &Transition, id_width: usize) -> String {
    let who = t
        .message
        .map_or_else(|| "operator".to_string(), |m| s.message_id(m).into_owned());
    format!(
        "{:>10}  {:<id_width$}  {}",
        dur(t.time),
        who,
        describe(s, &t.detail)
    )
}

pub fn id_width(s: &Scenario, o: &Outcome) -> usize {
    let widest = o
        .transitions
        .iter()
        .filter_map(|t| t.message)
        .map(|m| s.message_id(m).len())
        .max()
        .unwrap_or(0);
    widest.clamp(8, 32)
}

/// A row of the snapshot table, as of `as_of`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub key: String,
    pub state: State,
    pub last_reason: Option<String>,
    pub cycle: u32,
    pub cycle_receives: u32,
    pub total_receives: u32,
    pub effects: u32,
    pub dedup_hits: u32,
    pub quarantined_at: Option<u64>,
    /// Time in quarantine as of the snapshot, while quarantined.
    pub age: Option<u64>,
}

pub fn row(s: &Scenario, o: &Outcome, m: usize) -> Row {
    row_of(s, m as MessageIndex, &o.messages[m], o.as_of)
}

/// The row of message `m` in state `st`, as of `as_of`.
pub fn row_of(s: &Scenario, m: MessageIndex, st: &MessageState, as_of: Millis) -> Row {
    Row {
        id: s.message_id(m).into_owned(),
        key: s.key_name(st.key(s.intent(m))),
        state: st.state,
        last_reason: st.last_reason().map(|r| s.reasons[r as usize].clone()),
        cycle: st.cycle,
        cycle_receives: st.cycle_receives,
        total_receives: st.total_receives,
        effects: st.effects,
        dedup_hits: st.dedup_hits,
        quarantined_at: st.quarantined_at(),
        age: st.quarantine_age(as_of),
    }
}

/// The snapshot table. Shows at most `limit` messages.
pub fn snapshot(s: &Scenario, o: &Outcome, limit: usize) -> String {
    let header = [
        "id",
        "key",
        "state",
        "cycle",
        "cycle rcv",
        "total rcv",
        "effects",
        "dedup",
        "quarantined",
        "age",
        "last reason",
    ];
    let rows: Vec<[String; 11]> = (0..o.messages.len().min(limit))
        .map(|m| {
            let r = row(s, o, m);
            [
                r.id,
                r.key,
                r.state.as_str().to_string(),
                r.cycle.to_string(),
                r.cycle_receives.to_string(),
                r.total_receives.to_string(),
                r.effects.to_string(),
                r.dedup_hits.to_string(),
                r.quarantined_at.map_or("-".into(), dur),
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
    if o.messages.len() > limit {
        let _ = writeln!(out, "... and {} more messages", o.messages.len() - limit);
    }
    out
}

pub fn totals(o: &Outcome) -> String {
    let t = &o.totals;
    let mut out = String::new();
    let _ = writeln!(out, "{:<20}{}", "messages", t.messages);
    for &total in Total::ALL {
        let n = t.number(total);
        let value = match total.unit() {
            Unit::Count => n.to_string(),
            Unit::Time => dur(n),
        };
        let _ = writeln!(out, "{:<20}{value}", total.name());
    }
    out
}

/// The whole transcript: transitions, snapshot, totals.
pub fn transcript(s: &Scenario, o: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "scenario: {}", s.name);
    let _ = writeln!(out, "seed: {}", s.seed);
    out.push_str("\ntransitions:\n");
    let w = id_width(s, o);
    for t in &o.transitions {
        out.push_str(&line(s, t, w));
        out.push('\n');
    }
    if o.finished {
        out.push_str("\nfinal snapshot:\n");
    } else {
        let _ = writeln!(out, "\nsnapshot as of {}:", dur(o.as_of));
    }
    out.push_str(&snapshot(s, o, usize::MAX));
    if o.finished {
        out.push_str("\ntotals:\n");
        out.push_str(&totals(o));
    }
    out
}

/// Runs up to [`FULL_TRANSCRIPT_MESSAGES`] get every transition in their
/// golden transcript; larger ones get totals, drains and the snapshot's head.
const LARGE_SNAPSHOT_ROWS: usize = 50;

/// The golden transcript of a finished run.
pub fn golden_transcript(s: &Scenario, o: &Outcome) -> String {
    if s.message_count() <= FULL_TRANSCRIPT_MESSAGES {
        return transcript(s, o);
    }
    let mut out = format!(
        "scenario: {}\nseed: {}\n\ntransitions: omitted ({} messages, more than {FULL_TRANSCRIPT_MESSAGES})\n\n",
        s.name,
        s.seed,
        s.message_count()
    );
    out.push_str("drains:");
    for d in &o.drains {
        out.push(' ');
        out.push_str(&crate::duration::format(*d));
    }
    out.push_str("\n\nfinal snapshot (first messages):\n");
    out.push_str(&snapshot(s, o, LARGE_SNAPSHOT_ROWS));
    out.push_str("\ntotals:\n");
    out.push_str(&totals(o));
    out
}
