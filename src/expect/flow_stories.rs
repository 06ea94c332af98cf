//! Explanations for the measures of sections 11-13: latency ranks, queue
//! waits, workers, calls, and what was still pending at a stop.

use crate::duration::format as dur;
use crate::engine::Outcome;
use crate::model::*;

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
    let s = &outcome.messages[m as usize];
    let title = format!(
        "rank {rank} of {n} acked messages (nearest rank, ceil({p} * {n} / 100)) is \"{}\"",
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
            "of which {} ready but waiting for a worker, {} in service and retry delays over {} deliveries",
            dur(outcome.queue_wait(m)),
            dur(latency.saturating_sub(outcome.queue_wait(m))),
            s.total_receives
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
            let s = &outcome.messages[m as usize];
            format!(
                "{:<16} waited {} over {} deliveries",
                scenario.message_id(m),
                dur(w),
                s.total_receives
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
        "the run ended at {} ({}); {} messages were not final:",
        dur(t.end_time),
        outcome.totals.get(Total::StoppedBy),
        t.pending
    );
    let lines = outcome
        .messages
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_pending())
        .map(|(m, s)| {
            format!(
                "{:<16} {} after {} deliveries{}",
                scenario.message_id(m as MessageIndex),
                s.state.as_str(),
                s.total_receives,
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
    let count = |f| super::kind_count(scenario, outcome, kind, f);
    format!(
        "kind \"{}\": {} messages, {} acked, {} quarantined, {} deliveries.\n",
        scenario.kinds[kind as usize],
        count(KindField::Messages),
        count(KindField::Acked),
        count(KindField::Quarantined),
        count(KindField::Deliveries)
    )
}

/// An alarm's transitions, and the quarantine entries around them.
pub(super) fn alarm_story(scenario: &Scenario, outcome: &Outcome, a: u32) -> String {
    use crate::engine::Detail;
    let alarm = &scenario.alarms[a as usize];
    let r = outcome.alarms.get(a as usize).copied().unwrap_or_default();
    let mut out = format!(
        "alarm \"{}\" ({} at least {}) fired {} times{}.\n",
        alarm.name,
        alarm.metric.name(),
        if alarm.metric.is_time() {
            dur(alarm.at_least)
        } else {
            alarm.at_least.to_string()
        },
        r.times_fired,
        if r.firing {
            " and was firing at the end"
        } else {
            ""
        }
    );
    let w = crate::report::text::id_width(scenario, outcome);
    let lines: Vec<String> = outcome
        .transitions
        .iter()
        .filter(|t| match t.detail {
            Detail::AlarmFired { alarm, .. } | Detail::AlarmCleared { alarm } => alarm == a,
            Detail::Quarantined { .. } | Detail::Inspected { .. } => true,
            _ => false,
        })
        .take(24)
        .map(|t| {
            format!(
                "  {}\n",
                crate::report::text::line(scenario, t, w).trim_end()
            )
        })
        .collect();
    if !lines.is_empty() {
        out.push_str("Its transitions, with the quarantine entries and inspections:\n");
        out.extend(lines);
    }
    out
}
