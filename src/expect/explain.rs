//! Explanations for failed expectations, drawn from the run: for a message,
//! its transitions; for a total, the messages that contributed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::Verdict;
use crate::duration::format as dur;
use crate::engine::{Detail, FULL_TRANSCRIPT_MESSAGES, Outcome, Recorder};
use crate::model::*;
use crate::report::text;

/// Lines of contributors or transitions shown in one explanation.
const MAX_LINES: usize = 24;

/// The recorder for a rerun that explains these failures.
pub fn recorder_for_failures(s: &Scenario, failed: &[&Verdict]) -> Recorder {
    if s.message_count() <= FULL_TRANSCRIPT_MESSAGES {
        return Recorder::All;
    }
    let mut named = BTreeSet::new();
    for v in failed {
        match s.expectations[v.index].target {
            Target::Message(m, _) => {
                named.insert(m);
            }
            Target::Event {
                message: Some(m), ..
            } => {
                named.insert(m);
            }
            _ => {}
        }
    }
    Recorder::Only(named)
}

pub fn explain(s: &Scenario, o: &Outcome, target: &Target) -> String {
    match *target {
        Target::Message(m, _) => message_story(s, o, m),
        Target::Event { message, kind, .. } => {
            let mut out = String::new();
            if let Some(m) = message {
                out.push_str(&message_story(s, o, m));
            } else {
                let _ = writeln!(out, "{} transitions in this run:", kind.as_str());
                let w = text::id_width(s, o);
                let lines: Vec<String> = o
                    .transitions
                    .iter()
                    .filter(|t| t.detail.kind() == kind)
                    .map(|t| text::line(s, t, w))
                    .collect();
                push_limited(&mut out, &lines);
                if lines.is_empty() {
                    out.push_str("  (none)\n");
                }
            }
            out
        }
        Target::Total(t) => total_story(s, o, t),
    }
}

fn push_limited(out: &mut String, lines: &[String]) {
    for l in lines.iter().take(MAX_LINES) {
        let _ = writeln!(out, "  {}", l.trim_end());
    }
    if lines.len() > MAX_LINES {
        let _ = writeln!(out, "  ... and {} more", lines.len() - MAX_LINES);
    }
}

fn message_story(s: &Scenario, o: &Outcome, m: MessageIndex) -> String {
    let mut out = String::new();
    let r = text::row(s, o, m as usize);
    let _ = writeln!(
        out,
        "message \"{}\" ended {} (key {}, cycle {}, {} receives in this cycle, {} in all, {} effects, {} dedup hits{}).",
        r.id,
        r.state.as_str(),
        r.key,
        r.cycle,
        r.cycle_receives,
        r.total_receives,
        r.effects,
        r.dedup_hits,
        r.last_reason
            .map_or(String::new(), |x| format!(", last failure: {x}")),
    );
    let w = text::id_width(s, o);
    let lines: Vec<String> = o
        .transitions
        .iter()
        .filter(|t| t.message == Some(m) || t.message.is_none())
        .map(|t| text::line(s, t, w))
        .collect();
    if !lines.is_empty() {
        out.push_str("Its transitions (and the operator's):\n");
        push_limited(&mut out, &lines);
    }
    out
}

fn ids_where(
    s: &Scenario,
    o: &Outcome,
    pred: impl Fn(&crate::engine::MessageState) -> Option<String>,
) -> Vec<String> {
    o.messages
        .iter()
        .enumerate()
        .filter_map(|(m, st)| {
            pred(st).map(|what| format!("{:<16} {what}", s.message_id(m as MessageIndex)))
        })
        .collect()
}

fn total_story(s: &Scenario, o: &Outcome, total: Total) -> String {
    let mut out = String::new();
    let (title, lines) = match total.story() {
        Story::Ledger => ledger_story(s, o),
        Story::PerIntent => per_intent_story(s, o),
        Story::FinalState(want) => final_state_story(s, o, want),
        Story::DedupHits => dedup_story(s, o),
        Story::Receives => receives_story(s, o),
        Story::QuarantineEntries => quarantine_story(s, o),
        Story::RetryDelays => retry_delay_story(s, o),
        Story::Drains => drains_story(s, o),
    };
    let _ = writeln!(out, "In this run: {title}");
    push_limited(&mut out, &lines);
    if lines.is_empty() {
        out.push_str("  (none)\n");
    }
    out
}

fn plural(n: u32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn ledger_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    (
    format!("{} effects committed; by message:", o.totals.effects),
    if o.ledger.is_empty() {
        ids_where(s, o, |st| {
            (st.effects > 0).then(|| plural(st.effects, "effect", "effects"))
        })
    } else {
        let mut by_message: BTreeMap<MessageIndex, Vec<String>> = BTreeMap::new();
        for e in &o.ledger {
            by_message.entry(e.message).or_default().push(format!(
                "{} (cycle {}, key {})",
                dur(e.time),
                e.cycle,
                s.key_name(e.key)
            ));
        }
        by_message
            .into_iter()
            .map(|(m, v)| {
                format!(
                    "{:<16} {} at {}",
                    s.message_id(m),
                    plural(v.len() as u32, "effect", "effects"),
                    v.join(", ")
                )
            })
            .collect()
    },

    )
}

fn per_intent_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    let mut per_intent: BTreeMap<String, (u32, Vec<String>)> = BTreeMap::new();
    for (m, st) in o.messages.iter().enumerate() {
        if st.effects > 0 {
            let e = per_intent
                .entry(s.intent_name(s.intent(m as MessageIndex)).into_owned())
                .or_default();
            e.0 += st.effects;
            e.1.push(s.message_id(m as MessageIndex).into_owned());
        }
    }
    (
        format!(
            "{} duplicated effects (effects beyond the first per intent); intents with more than one:",
            o.totals.duplicated_effects
        ),
        per_intent
            .into_iter()
            .filter(|(_, (n, _))| *n > 1)
            .map(|(k, (n, ms))| {
                format!(
                    "intent {k:<9} {n} effects, {} duplicated (messages {})",
                    n - 1,
                    ms.join(", ")
                )
            })
            .collect(),
    )

}

fn final_state_story(s: &Scenario, o: &Outcome, want: State) -> (String, Vec<String>) {
    let counts = state_counts(o);
    (
        format!("final states: {counts}; {} messages:", want.as_str()),
        ids_where(s, o, |st| {
            (st.state == want).then(|| match st.last_reason() {
                Some(r) if want != State::Acked => {
                    format!("last failure: {}", s.reasons[r as usize])
                }
                _ => format!("cycle {}, {} receives in all", st.cycle, st.total_receives),
            })
        }),
    )

}

fn dedup_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    (
    format!("{} deduplication hits; by message:", o.totals.dedup_hits),
    ids_where(s, o, |st| {
        (st.dedup_hits > 0).then(|| plural(st.dedup_hits, "hit", "hits"))
    }),

    )
}

fn receives_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    (
    format!("{} deliveries; receives by message:", o.totals.deliveries),
    ids_where(s, o, |st| {
        Some(plural(st.total_receives, "receive", "receives"))
    }),

    )
}

fn quarantine_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    (
    format!(
        "{} quarantine entries, maximum DLQ depth {}, final depth {}; messages that entered quarantine:",
        o.totals.quarantine_entries, o.totals.max_dlq_depth, o.totals.final_dlq_depth
    ),
    ids_where(s, o, |st| {
        (st.quarantine_entries > 0).then(|| {
            format!(
                "{} (latest at {}), now {}",
                plural(st.quarantine_entries, "entry", "entries"),
                st.quarantined_at().map_or_else(|| "-".to_string(), dur),
                st.state.as_str()
            )
        })
    }),

    )
}

fn retry_delay_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    let mut per: BTreeMap<MessageIndex, Vec<String>> = BTreeMap::new();
    for t in &o.transitions {
        if let (Some(m), Detail::RetryScheduled { delay, .. }) = (t.message, t.detail) {
            per.entry(m).or_default().push(dur(delay));
        }
    }
    (
        format!(
            "{} of retry delay scheduled; by message:",
            dur(o.totals.retry_delay_paid)
        ),
        per.into_iter()
            .map(|(m, v)| format!("{:<16} {}", s.message_id(m), v.join(" + ")))
            .collect(),
    )

}

fn drains_story(s: &Scenario, o: &Outcome) -> (String, Vec<String>) {
    let mut lines = Vec::new();
    for (i, d) in o.drains.iter().enumerate() {
        let what = if i == 0 {
            "source cycle".to_string()
        } else {
            format!("cycle after operator step {i}")
        };
        lines.push(format!("{what} drained at {}", dur(*d)));
        if let Some(op) = s.operators.get(i) {
            lines.push(format!(
                "operator step {} inspects at {} (+ wait {})",
                i + 1,
                dur(d.saturating_add(op.wait)),
                dur(op.wait)
            ));
        }
    }
    (
        format!(
            "drain time {} (the source cycle's last delivery); end time {} (the last event, inspections included):",
            dur(o.totals.drain_time),
            dur(o.totals.end_time)
        ),
        lines,
    )

}

fn state_counts(o: &Outcome) -> String {
    let t = &o.totals;
    format!(
        "{} acked, {} quarantined, {} expired, {} purged",
        t.acked, t.quarantined, t.expired, t.purged
    )
}
