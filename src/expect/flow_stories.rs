//! Explanations for the measures of sections 11-13: latency ranks, queue
//! waits, workers, calls, and what was still pending at a stop.

use std::fmt::Write;

use crate::duration::format as dur;
use crate::engine::Outcome;
use crate::model::*;

use crate::words::plural;

/// The acked message at latency rank `p` (100: the maximum), and how its
/// latency splits.
pub(super) fn latency_story(
    scenario: &Scenario,
    outcome: &Outcome,
    p: u8,
) -> (String, Vec<String>) {
    let mut acked: Vec<(Millis, MessageIndex)> = outcome
        .messages
        .iter()
        .enumerate()
        .filter_map(|(m, _)| {
            Some((
                outcome.latency(scenario, m as MessageIndex)?,
                m as MessageIndex,
            ))
        })
        .collect();
    if acked.is_empty() {
        return (
            "no message was acked, so there is no latency".into(),
            vec![],
        );
    }
    acked.sort_unstable();
    let n = acked.len() as u64;
    let rank = (p as u64 * n).div_ceil(100).max(1);
    let (latency, m) = acked[rank as usize - 1];
    let s = outcome.messages.get(m);
    let title = format!(
        "rank {rank} of {} (nearest rank, ceil({p} * {n} / 100)) is \"{}\"",
        plural(n, "acked message", "acked messages"),
        scenario.message_id(m)
    );
    let lines = vec![
        format!(
            "arrived {}, acked {}: latency {}",
            outcome.arrived_at(scenario, m).map_or("-".into(), dur),
            s.acked_at().map_or("-".into(), dur),
            dur(latency)
        ),
        format!(
            "of which {} ready but waiting for a worker, {} in service and retry delays over {}",
            dur(outcome.queue_wait(m)),
            dur(latency.saturating_sub(outcome.queue_wait(m))),
            plural(s.total_receives, "delivery", "deliveries")
        ),
    ];
    (title, lines)
}

/// The messages that waited longest for a worker.
pub(super) fn queue_wait_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let mut waits: Vec<(Millis, MessageIndex)> = outcome
        .queue_waits
        .iter()
        .enumerate()
        .filter(|(_, w)| **w > 0)
        .map(|(m, w)| (*w, m as MessageIndex))
        .collect();
    waits.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let title = format!(
        "the most ready messages not taken after an instant was {}; the longest waits:",
        outcome.totals.max_queue_depth
    );
    let lines = waits
        .iter()
        .map(|&(w, m)| {
            let s = outcome.messages.get(m);
            format!(
                "{:<16} waited {} over {}",
                scenario.message_id(m),
                dur(w),
                plural(s.total_receives, "delivery", "deliveries")
            )
        })
        .collect();
    (title, lines)
}

pub(super) fn workers_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let t = &outcome.totals;
    let pool = match scenario.flow.workers {
        Some(w) => format!("{} workers, service time {}", w.count, dur(w.service_time)),
        None => "unlimited workers, no service time (only `takes` faults hold a delivery)".into(),
    };
    (
        pool,
        vec![
            format!(
                "{} deliveries, {} of service in all",
                t.deliveries,
                dur(t.worker_busy)
            ),
            format!("at most {} in flight after an instant", t.max_in_flight),
        ],
    )
}

pub(super) fn calls_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let t = &outcome.totals;
    let limit = match scenario.flow.downstream {
        Some(d) => format!(
            "at most {} calls accepted per {} window",
            d.limit,
            dur(scenario.flow.call_window)
        ),
        None => format!(
            "no limit; calls counted per {} window",
            dur(scenario.flow.call_window)
        ),
    };
    (
        limit,
        vec![
            format!(
                "{} calls offered: {} accepted, {} throttled, {} failed in an outage",
                t.calls_offered,
                t.calls_accepted,
                t.throttled,
                t.calls_offered - t.calls_accepted - t.throttled
            ),
            match outcome.calls.peak_window {
                Some(start) => format!(
                    "the busiest window, [{}, {}), was offered {} calls, {} of them retries",
                    dur(start),
                    dur(start + scenario.flow.call_window),
                    t.peak_offered,
                    outcome.calls.peak_retries
                ),
                None => "no call was offered".to_string(),
            },
        ],
    )
}

/// The messages not final at the end, and why the run ended.
pub(super) fn pending_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let t = &outcome.totals;
    let title = format!(
        "the run ended at {} ({}); {} not final:",
        dur(t.end_time),
        match outcome.totals.get(Total::StoppedBy) {
            Value::Text(s) => s,
            other => other.to_string(),
        },
        if t.pending == 1 {
            "1 message was".to_string()
        } else {
            format!("{} messages were", t.pending)
        }
    );
    let lines = outcome
        .messages
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_pending())
        .map(|(m, s)| {
            format!(
                "{:<16} {} after {}{}",
                scenario.message_id(m as MessageIndex),
                s.state.as_str(),
                plural(s.total_receives, "delivery", "deliveries"),
                s.last_reason().map_or(String::new(), |r| format!(
                    ", last failure: {}",
                    scenario.reasons[r as usize]
                ))
            )
        })
        .collect();
    (title, lines)
}

/// The messages of one mix kind.
pub(super) fn kind_story(scenario: &Scenario, outcome: &Outcome, kind: u32) -> String {
    let count = |f| outcome.kind_count(kind, f);
    format!(
        "kind \"{}\": {}, {} acked, {} quarantined, {}.\n",
        scenario.kinds[kind as usize],
        plural(count(KindField::Messages), "message", "messages"),
        count(KindField::Acked),
        count(KindField::Quarantined),
        plural(count(KindField::Deliveries), "delivery", "deliveries")
    )
}

/// An alarm's transitions, and the quarantine entries around them: the
/// metric's peak against the threshold, each fire and clear with the
/// metric's value, and the transitions up to the first firing (the entries
/// that made it cross).
pub(super) fn alarm_story(scenario: &Scenario, outcome: &Outcome, a: u32) -> String {
    use crate::engine::Detail;
    let alarm = &scenario.alarms[a as usize];
    let r = outcome.alarms.get(a as usize).cloned().unwrap_or_default();
    let shown = |v: u64| {
        if alarm.metric.is_time() {
            dur(v)
        } else {
            v.to_string()
        }
    };
    let mut out = format!(
        "alarm \"{}\" ({} at least {}{}{}) fired {}{}; the metric peaked at {}.\n",
        alarm.name,
        alarm.metric.name(),
        shown(alarm.at_least),
        crate::words::sentence::held(alarm.fire_for),
        if alarm.clear_for == 0 {
            String::new()
        } else {
            format!(", clearing after {} below", dur(alarm.clear_for))
        },
        plural(r.times_fired, "time", "times"),
        if r.firing {
            " and was firing at the end"
        } else {
            ""
        },
        shown(r.peak)
    );
    if !r.changes.is_empty() {
        let changes: Vec<String> = r
            .changes
            .iter()
            .take(8)
            .map(|c| {
                format!(
                    "{} at {} ({} {})",
                    if c.fired { "fired" } else { "cleared" },
                    dur(c.time),
                    alarm.metric.name(),
                    c.value.map_or_else(|| "none".to_string(), shown)
                )
            })
            .collect();
        let more = r.changes.len() as u64 + r.changes_dropped - changes.len() as u64;
        out.push_str("It ");
        out.push_str(&changes.join(", "));
        if more > 0 {
            out.push_str(&format!(", and {more} more"));
        }
        out.push_str(".\n");
    }
    let w = crate::words::line::id_width(scenario, outcome);
    let related: Vec<&crate::engine::Transition> = outcome
        .transitions
        .iter()
        .filter(|t| match t.detail {
            Detail::AlarmFired { alarm, .. } | Detail::AlarmCleared { alarm } => alarm == a,
            Detail::Quarantined { .. } | Detail::Inspected { .. } => true,
            _ => false,
        })
        .collect();
    // The 24 transitions that end with the first firing, or the first 24.
    let fired = related
        .iter()
        .position(|t| matches!(t.detail, Detail::AlarmFired { alarm, .. } if alarm == a));
    let end = fired.map_or(related.len().min(24), |i| i + 1);
    let start = end.saturating_sub(24);
    if end > start {
        out.push_str(if start > 0 {
            "Its transitions, with the quarantine entries and inspections, up to its first firing (the last 24):\n"
        } else {
            "Its transitions, with the quarantine entries and inspections:\n"
        });
        for t in &related[start..end] {
            out.push_str(&format!(
                "  {}\n",
                crate::words::line::line(scenario, t, w).trim_end()
            ));
        }
    }
    out
}

/// What a message waited for: its time ready but not taken, and under
/// ordering the messages of its group delivered meanwhile (the heads that
/// blocked it), with when. Empty when it never waited.
pub(super) fn waiting_story(scenario: &Scenario, outcome: &Outcome, m: MessageIndex) -> String {
    use crate::engine::Detail;
    use crate::model::Ordering;
    let wait = outcome.queue_wait(m);
    if wait == 0 {
        return String::new();
    }
    let mut out = format!(
        "It was ready but not taken for {} in all (its queue wait).\n",
        dur(wait)
    );
    let ordering = scenario.flow.ordering;
    let (Some(arrived), true) = (outcome.arrived_at(scenario, m), ordering != Ordering::None)
    else {
        return out;
    };
    let group = |x: MessageIndex| match ordering {
        Ordering::Fifo => 0,
        _ => scenario.group(x),
    };
    let first = outcome
        .transitions
        .iter()
        .find(|t| t.message == Some(m) && matches!(t.detail, Detail::Delivered { .. }))
        .map_or(outcome.totals.end_time, |t| t.time);
    // The group's deliveries while it waited for its first one.
    let mut blockers: Vec<(MessageIndex, u64, Millis, Millis)> = Vec::new();
    for t in &outcome.transitions {
        let Some(x) = t.message else { continue };
        if x == m || t.time < arrived || t.time > first || group(x) != group(m) {
            continue;
        }
        if matches!(t.detail, Detail::Delivered { .. }) {
            match blockers.iter_mut().find(|b| b.0 == x) {
                Some(b) => {
                    b.1 += 1;
                    b.3 = t.time;
                }
                None => blockers.push((x, 1, t.time, t.time)),
            }
        }
    }
    if blockers.is_empty() {
        return out;
    }
    let whose = match ordering {
        Ordering::Fifo => "the FIFO queue".to_string(),
        _ => format!("its group {}", scenario.group_name(group(m))),
    };
    let _ = writeln!(
        out,
        "Before its first delivery at {}, {whose} delivered these messages ahead of it:",
        dur(first)
    );
    for (x, n, from, to) in blockers.iter().take(8) {
        let _ = writeln!(
            out,
            "  {:<16} {} {} from {} to {}",
            scenario.message_id(*x),
            n,
            if *n == 1 { "delivery" } else { "deliveries" },
            dur(*from),
            dur(*to)
        );
    }
    if blockers.len() > 8 {
        let _ = writeln!(out, "  ... and {} more messages", blockers.len() - 8);
    }
    out
}
