//! Explanations for failed expectations, drawn from the run: for a message,
//! its transitions; for a total, the messages that contributed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::Verdict;
use crate::duration::format as dur;
use crate::engine::{Detail, FULL_TRANSCRIPT_MESSAGES, Outcome, Recorder};
use crate::model::*;
use crate::words::line as text;
use crate::words::plural;

/// Lines of contributors or transitions shown in one explanation.
const MAX_LINES: usize = 24;

/// Causes told apart when an explanation groups messages by cause.
const MAX_CAUSES: usize = 1_000;

/// The recorder for a rerun that explains these failures of the run
/// `outcome`: every transition of a small run; of a large one, those of
/// the messages the explanations name (a message's or event's own, a log
/// sink's example intents, whose first delivery they give).
pub fn recorder_for_failures(
    scenario: &Scenario,
    outcome: &Outcome,
    failed: &[&Verdict],
) -> Recorder {
    if scenario.message_count() <= FULL_TRANSCRIPT_MESSAGES {
        return Recorder::All;
    }
    let mut named = BTreeSet::new();
    for v in failed {
        match scenario.expectations[v.index].target {
            Target::Message(m, _) => {
                named.insert(m);
            }
            Target::Event {
                message: Some(m), ..
            } => {
                named.insert(m);
            }
            Target::Sink(k, field) if outcome.log.is_some() => {
                named.extend(super::guarantee_stories::sink_examples(
                    scenario, outcome, k, field,
                ));
            }
            _ => {}
        }
    }
    if named.is_empty() {
        // Nothing to record: no rerun.
        Recorder::Off
    } else {
        Recorder::Only(named)
    }
}

/// `told`: the messages whose transitions an earlier diagnostic showed
/// (then this one refers to it); `line`: this expectation's line.
pub fn explain(
    scenario: &Scenario,
    outcome: &Outcome,
    target: &Target,
    told: &mut super::Told,
    line: usize,
) -> String {
    match *target {
        Target::Message(m, _) | Target::Envelope(m, _) => {
            message_story(scenario, outcome, m, told, line)
        }
        Target::Kind(k, _) => super::flow_stories::kind_story(scenario, outcome, k),
        Target::Alarm(a, _) => super::flow_stories::alarm_story(scenario, outcome, a),
        Target::Sink(k, field) => super::guarantee_stories::sink_story(scenario, outcome, k, field),
        Target::Row { sink, ref row, .. } => {
            super::write_stories::row_story(scenario, outcome, sink, row)
        }
        Target::Partition(p, _) => super::log_stories::partition_story(scenario, outcome, p),
        Target::Restart(r, _) => super::log_stories::restart_story(scenario, outcome, r),
        Target::Checkpoint(k, _) => super::log_stories::checkpoint_story(scenario, outcome, k),
        Target::Event { message, kind, .. } => {
            let mut out = String::new();
            if let Some(m) = message {
                out.push_str(&message_story(scenario, outcome, m, told, line));
            } else {
                if outcome.recorder != Recorder::All {
                    let _ = writeln!(
                        out,
                        "{} transitions are not kept for runs of more than {FULL_TRANSCRIPT_MESSAGES} \
                         messages (this one has {}); the count and first times are above",
                        kind.as_str(),
                        scenario.message_count()
                    );
                    return out;
                }
                let _ = writeln!(out, "{} transitions in this run:", kind.as_str());
                let w = text::id_width(scenario, outcome);
                let lines: Vec<String> = outcome
                    .transitions
                    .iter()
                    .filter(|t| t.detail.kind() == kind)
                    .map(|t| text::line(scenario, t, w))
                    .collect();
                push_limited(&mut out, &lines);
                if lines.is_empty() {
                    out.push_str("  (none)\n");
                }
                if matches!(kind, EventKind::CanaryPassed | EventKind::CanaryFailed) {
                    let canaries = super::guarantee_stories::canary_story(scenario, outcome);
                    push_limited(&mut out, &canaries);
                }
            }
            out
        }
        Target::Total(t) => total_story(scenario, outcome, t),
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

fn message_story(
    scenario: &Scenario,
    outcome: &Outcome,
    m: MessageIndex,
    told: &mut super::Told,
    line: usize,
) -> String {
    let mut out = String::new();
    let r = text::row(scenario, outcome, m as usize);
    let _ = writeln!(
        out,
        "message \"{}\" ended {} (key {}, cycle {}, {} in this cycle, {} in all, {}, {}{}).",
        r.id,
        r.state.as_str(),
        r.key,
        r.cycle,
        plural(r.cycle_receives, "receive", "receives"),
        r.total_receives,
        plural(r.effects, "effect", "effects"),
        plural(r.dedup_hits, "dedup hit", "dedup hits"),
        r.last_reason
            .map_or(String::new(), |x| format!(", last failure: {x}")),
    );
    if let Some(first) = told.get(&m) {
        let _ = writeln!(
            out,
            "Its transitions are shown under the expectation on line {first}."
        );
        return out;
    }
    told.insert(m, line);
    let w = text::id_width(scenario, outcome);
    let lines: Vec<String> = outcome
        .transitions
        .iter()
        .filter(|t| t.message == Some(m) || t.message.is_none())
        .map(|t| text::line(scenario, t, w))
        .collect();
    if !lines.is_empty() {
        out.push_str("Its transitions (and the operator's):\n");
        push_limited(&mut out, &lines);
    }
    out.push_str(&super::flow_stories::waiting_story(scenario, outcome, m));
    out
}

/// A line per message that `pred` says something about, while they fit in
/// one explanation ([`MAX_LINES`]); past that, a line per cause (what
/// `pred` says) with its count and its first and last message, in order of
/// first appearance, so that 10,000 identical lines read as one. Holds at
/// most [`MAX_LINES`] + 1 lines and [`MAX_CAUSES`] causes at a time.
fn ids_where(
    scenario: &Scenario,
    outcome: &Outcome,
    pred: impl Fn(&crate::engine::MessageState) -> Option<String>,
) -> Vec<String> {
    let id = |m: usize| scenario.message_id(m as MessageIndex);
    let mut each: Vec<(usize, String)> = Vec::new();
    let mut causes: Vec<(String, u64, usize, usize)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut other = 0u64;
    for (m, state) in outcome.messages.iter().enumerate() {
        let Some(what) = pred(&state) else { continue };
        if each.len() <= MAX_LINES {
            each.push((m, what.clone()));
        }
        match index.get(&what) {
            Some(&i) => {
                causes[i].1 += 1;
                causes[i].3 = m;
            }
            None if causes.len() < MAX_CAUSES => {
                index.insert(what.clone(), causes.len());
                causes.push((what, 1, m, m));
            }
            None => other += 1,
        }
    }
    if each.len() <= MAX_LINES {
        return each
            .into_iter()
            .map(|(m, what)| format!("{:<16} {what}", id(m)))
            .collect();
    }
    // Past one explanation's lines, the rest is counted in messages (not
    // in cause lines, of which only [`MAX_CAUSES`] are kept).
    let listed = causes.len() + usize::from(other > 0);
    let summary = (listed > MAX_LINES).then(|| {
        let total = causes.iter().map(|c| c.1).sum::<u64>() + other;
        causes.truncate(MAX_LINES - 1);
        let shown = causes.iter().map(|c| c.1).sum::<u64>();
        format!(
            "... and {} ({total} in all)",
            plural(total - shown, "more message", "more messages")
        )
    });
    let mut lines: Vec<String> = causes
        .into_iter()
        .map(|(what, n, first, last)| match n {
            1 => format!("{:<16} {what}", id(first)),
            n => format!(
                "{n} messages: {what} (first \"{}\", last \"{}\")",
                id(first),
                id(last)
            ),
        })
        .collect();
    match summary {
        Some(summary) => lines.push(summary),
        None if other > 0 => lines.push(format!(
            "{} with other causes",
            plural(other, "message", "messages")
        )),
        None => {}
    }
    lines
}

fn total_story(scenario: &Scenario, outcome: &Outcome, total: Total) -> String {
    let mut out = String::new();
    let (title, lines) = match total.story() {
        Story::Ledger => ledger_story(scenario, outcome),
        Story::PerIntent => per_intent_story(scenario, outcome),
        Story::FinalState(want) => final_state_story(scenario, outcome, want),
        Story::DedupHits => dedup_story(scenario, outcome),
        Story::Receives => receives_story(scenario, outcome),
        Story::QuarantineEntries => quarantine_story(scenario, outcome),
        Story::RetryDelays => retry_delay_story(scenario, outcome),
        Story::Drains => drains_story(scenario, outcome),
        Story::Latency(p) => super::flow_stories::latency_story(scenario, outcome, p),
        Story::QueueWait => super::flow_stories::queue_wait_story(scenario, outcome),
        Story::Workers => super::flow_stories::workers_story(scenario, outcome),
        Story::Calls => super::flow_stories::calls_story(scenario, outcome),
        Story::Pending => super::flow_stories::pending_story(scenario, outcome),
        Story::Overlaps => super::guarantee_stories::overlaps_story(scenario, outcome),
        Story::Restarts => super::log_stories::restarts_story(scenario, outcome),
        Story::Writes => super::write_stories::writes_story(scenario, outcome),
        Story::Checkpoints => super::log_stories::checkpoints_story(scenario, outcome),
        Story::Producer => super::log_stories::producer_story(scenario, outcome),
    };
    let mut lines = lines;
    if matches!(total.story(), Story::Ledger | Story::PerIntent) {
        lines.extend(super::guarantee_stories::lapsed_claims(scenario, outcome));
    }
    let _ = writeln!(out, "In this run: {title}");
    push_limited(&mut out, &lines);
    if lines.is_empty() {
        out.push_str("  (none)\n");
    }
    out
}

fn ledger_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    (
        format!(
            "{} committed; by message:",
            plural(outcome.totals.effects, "effect", "effects")
        ),
        if outcome.ledger.is_empty() {
            ids_where(scenario, outcome, |state| {
                (state.effects > 0).then(|| plural(state.effects, "effect", "effects"))
            })
        } else {
            let mut by_message: BTreeMap<MessageIndex, Vec<String>> = BTreeMap::new();
            for e in &outcome.ledger {
                by_message.entry(e.message).or_default().push(format!(
                    "{} (cycle {}, key {})",
                    dur(e.time),
                    e.cycle,
                    scenario.key_name(e.key)
                ));
            }
            by_message
                .into_iter()
                .map(|(m, v)| {
                    format!(
                        "{:<16} {} at {}",
                        scenario.message_id(m),
                        plural(v.len() as u64, "effect", "effects"),
                        v.join(", ")
                    )
                })
                .collect()
        },
    )
}

fn per_intent_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let mut per_intent: BTreeMap<String, (u32, Vec<String>)> = BTreeMap::new();
    for (m, state) in outcome.messages.iter().enumerate() {
        if state.effects > 0 {
            let e = per_intent
                .entry(
                    scenario
                        .intent_name(scenario.intent(m as MessageIndex))
                        .into_owned(),
                )
                .or_default();
            e.0 += state.effects;
            e.1.push(scenario.message_id(m as MessageIndex).into_owned());
        }
    }
    (
        format!(
            "{} (effects beyond the first per intent); intents with more than one:",
            plural(
                outcome.totals.duplicated_effects,
                "duplicated effect",
                "duplicated effects"
            )
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

fn final_state_story(scenario: &Scenario, outcome: &Outcome, want: State) -> (String, Vec<String>) {
    let counts = state_counts(outcome);
    (
        format!("final states: {counts}; {} messages:", want.as_str()),
        ids_where(scenario, outcome, |state| {
            (state.state == want).then(|| match state.last_reason() {
                Some(r) if want != State::Acked => {
                    format!("last failure: {}", scenario.reasons[r as usize])
                }
                _ => format!(
                    "cycle {}, {} in all",
                    state.cycle,
                    plural(state.total_receives, "receive", "receives")
                ),
            })
        }),
    )
}

fn dedup_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    (
        format!(
            "{}; by message:",
            plural(
                outcome.totals.dedup_hits,
                "deduplication hit",
                "deduplication hits"
            )
        ),
        ids_where(scenario, outcome, |state| {
            (state.dedup_hits > 0).then(|| plural(state.dedup_hits, "hit", "hits"))
        }),
    )
}

fn receives_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    (
        format!(
            "{}; receives by message:",
            plural(outcome.totals.deliveries, "delivery", "deliveries")
        ),
        ids_where(scenario, outcome, |state| {
            Some(plural(state.total_receives, "receive", "receives"))
        }),
    )
}

fn quarantine_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    (
        format!(
            "{}, maximum DLQ depth {}{}, final depth {}; messages that entered quarantine:",
            plural(
                outcome.totals.quarantine_entries,
                "quarantine entry",
                "quarantine entries"
            ),
            outcome.totals.max_dlq_depth,
            peak_dlq(scenario, outcome),
            outcome.totals.final_dlq_depth
        ),
        ids_where(scenario, outcome, |state| {
            (state.quarantine_entries > 0).then(|| {
                format!(
                    "{} (latest at {}), now {}",
                    plural(state.quarantine_entries, "entry", "entries"),
                    state
                        .last_quarantined_at()
                        .map_or_else(|| "-".to_string(), dur),
                    state.state.as_str()
                )
            })
        }),
    )
}

/// When the DLQ first reached its maximum depth, and whose entry did it,
/// as " (first reached at T, when ID entered)"; empty when the
/// transitions were not kept.
fn peak_dlq(scenario: &Scenario, outcome: &Outcome) -> String {
    let peak = outcome.totals.max_dlq_depth;
    outcome
        .transitions
        .iter()
        .find(
            |t| matches!(t.detail, Detail::Quarantined { depth, .. } if depth == peak && peak > 0),
        )
        .map_or(String::new(), |t| {
            format!(
                " (first reached at {}, when {} entered)",
                dur(t.time),
                t.message.map_or("-".into(), |m| scenario.message_id(m))
            )
        })
}

/// The message whose delivery at `time` was the last one, if the
/// transitions were kept.
fn delivered_last(scenario: &Scenario, outcome: &Outcome, time: Millis) -> Option<String> {
    outcome
        .transitions
        .iter()
        .rev()
        .skip_while(|t| t.time > time)
        .take_while(|t| t.time == time)
        .find(|t| matches!(t.detail, Detail::Delivered { .. }))
        .and_then(|t| t.message)
        .map(|m| scenario.message_id(m).to_string())
}

fn retry_delay_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let mut per: BTreeMap<MessageIndex, Vec<String>> = BTreeMap::new();
    for t in &outcome.transitions {
        if let (Some(m), Detail::RetryScheduled { delay, .. }) = (t.message, t.detail) {
            per.entry(m).or_default().push(dur(delay));
        }
    }
    (
        format!(
            "{} of retry delay scheduled; by message:",
            dur(outcome.totals.retry_delay_paid)
        ),
        per.into_iter()
            .map(|(m, v)| format!("{:<16} {}", scenario.message_id(m), v.join(" + ")))
            .collect(),
    )
}

fn drains_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let mut lines = Vec::new();
    for (i, d) in outcome.drains.iter().enumerate() {
        let what = if i == 0 {
            "source cycle".to_string()
        } else {
            format!("cycle after operator step {i}")
        };
        let last = delivered_last(scenario, outcome, *d)
            .map_or(String::new(), |id| format!(" (last delivery: {id})"));
        lines.push(format!("{what} drained at {}{last}", dur(*d)));
        if let Some(op) = scenario.operators.get(i) {
            lines.push(format!(
                "operator step {} inspects at {} (+ wait {})",
                i + 1,
                dur(d.saturating_add(op.wait)),
                dur(op.wait)
            ));
        }
    }
    if scenario
        .write
        .as_ref()
        .is_some_and(|w| w.uses(crate::model::Strategy::Outbox))
    {
        lines.push(
            "the outbox relay: a call is pending until its reply is heard, so the run ends no earlier than the last reply"
                .to_string(),
        );
    }
    (
        format!(
            "drain time {} (the source cycle's last delivery); end time {} (the last event, inspections included):",
            dur(outcome.totals.drain_time),
            dur(outcome.totals.end_time)
        ),
        lines,
    )
}

fn state_counts(outcome: &Outcome) -> String {
    let t = &outcome.totals;
    format!(
        "{} acked, {} quarantined, {} expired, {} purged",
        t.acked, t.quarantined, t.expired, t.purged
    )
}
