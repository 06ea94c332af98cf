//! Explanations of a partitioned log's measures (docs/model.md section
//! 23): each restart, where it resumed and why, what it reprocessed and
//! what it skipped; a partition's offsets and checkpoints.

use crate::duration::format as dur;
use crate::engine::{Outcome, RestartRecord};
use crate::model::*;

use crate::words::plural;

/// Where restart `record` (the `r`-th, 0-based) resumed each partition, and
/// why: the checkpoint it restored, or the reset.
fn restart_lines(scenario: &Scenario, r: usize, record: &RestartRecord) -> Vec<String> {
    let Some(log) = &scenario.log else {
        return Vec::new();
    };
    let spec = &log.restarts[r];
    let from = match (spec.resume, log.guarantee) {
        (Resume::Offsets, _) => match spec.replay_until.is_empty() {
            true => "the offsets the file names (resume = \"offsets\")".to_string(),
            false => format!(
                "the offsets the file names, replaying until {:?} and then going on where it was (resume = \"offsets\")",
                spec.replay_until
            ),
        },
        (Resume::Committed, Guarantee::AtMostOnce) => {
            "the committed positions (at_most_once commits a record when its first delivery starts)"
                .to_string()
        }
        (Resume::Committed, _) => match record.checkpoint_time {
            Some(c) => format!("the latest checkpoint, taken at {}", dur(c)),
            None => "offset 0: no checkpoint had been taken yet".to_string(),
        },
        (Resume::Stale(age), Guarantee::AtMostOnce) => format!(
            "the positions committed {} earlier, at {} (resume = \"stale\")",
            dur(age),
            dur(record.at.saturating_sub(age))
        ),
        (Resume::Stale(age), _) => match record.checkpoint_time {
            Some(c) => format!(
                "a stale checkpoint: the latest at or before {} ({} before the restart), taken at {}",
                dur(record.at.saturating_sub(age)),
                dur(age),
                dur(c)
            ),
            None => format!(
                "offset 0: no checkpoint at or before {} ({} before the restart)",
                dur(record.at.saturating_sub(age)),
                dur(age)
            ),
        },
        (Resume::Earliest, _) => "offset 0 (resume = \"earliest\")".to_string(),
        (Resume::Latest, _) => "the log end (resume = \"latest\": offsets reset)".to_string(),
    };
    let mut lines = vec![format!(
        "restart {} at {}{}: resumed from {from}{}",
        r + 1,
        dur(record.at),
        match spec.down_for {
            0 => String::new(),
            d => format!(", down until {}", dur(record.at.saturating_add(d))),
        },
        match spec.skip {
            0 => String::new(),
            n => format!(", then {} further", plural(n, "record", "records")),
        }
    )];
    for (k, &p) in record.partitions.iter().enumerate() {
        let (before, resume) = (record.positions_before[k], record.resume_positions[k]);
        let what = if resume < before {
            format!(
                "offsets {resume}..{} processed again ({} already done)",
                before - 1,
                plural(before - resume, "record", "records")
            )
        } else if resume > before {
            format!(
                "offsets {before}..{} passed over: never done, so skipped (no sink sees them)",
                resume - 1
            )
        } else {
            "nothing reprocessed or skipped".to_string()
        };
        lines.push(format!(
            "  partition {p}: position {before} -> {resume}: {what}"
        ));
    }
    if record.skipped > 0 {
        lines.push(format!(
            "  {} skipped by this restart",
            plural(record.skipped, "record", "records")
        ));
    }
    if record.aborted_effects > 0 {
        lines.push(format!(
            "  the open transaction aborted: {} never visible",
            plural(record.aborted_effects, "effect", "effects")
        ));
    }
    lines
}

/// Every restart: the measures `reprocessed`, `skipped`,
/// `aborted_effects` and `max_lag` all follow from them.
pub(super) fn restarts_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let t = &outcome.totals;
    let title = format!(
        "{} reprocessed, {} skipped, {} aborted, at most {} behind; by restart:",
        plural(t.reprocessed, "delivery", "deliveries"),
        plural(t.skipped, "record", "records"),
        plural(t.aborted_effects, "effect", "effects"),
        plural(t.max_lag, "record", "records"),
    );
    let not_a_log =
        || vec!["no [log]: the source is a queue, which neither reprocesses nor skips".to_string()];
    let lines = outcome.log.as_ref().map_or_else(not_a_log, |log| {
        let mut lines: Vec<String> = (log.restarts.iter().enumerate())
            .flat_map(|(r, record)| restart_lines(scenario, r, record))
            .collect();
        if log.restarts.is_empty() {
            lines.push("no restart: every record is processed once".to_string());
        }
        if scenario.log.as_ref().is_some_and(|l| l.carry_attempts) {
            lines.push(format!(
                "carry_attempts: {} kept their receive count across a restart",
                plural(t.attempts_carried, "record", "records")
            ));
        }
        lines
    });
    (title, lines)
}

/// Restart `r` (0-based): where it resumed each partition and why.
pub(super) fn restart_story(scenario: &Scenario, outcome: &Outcome, r: u32) -> String {
    let mut out = String::new();
    match outcome
        .log
        .as_ref()
        .and_then(|l| l.restarts.get(r as usize))
    {
        Some(record) => {
            for line in restart_lines(scenario, r as usize, record) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        None => out.push_str("the run ended before this restart\n"),
    }
    out
}

/// The log's checkpoints (section 28.7): how many completed, the last
/// one's time, and the failed ones as ranges of numbers with their times.
pub(super) fn checkpoints_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let (Some(log), Some(spec)) = (&outcome.log, &scenario.log) else {
        return (
            "no [log]: a queue takes no checkpoints".to_string(),
            Vec::new(),
        );
    };
    let Some(interval) = spec.checkpoint_interval else {
        return (
            "no checkpoints: at_most_once commits each position as its delivery starts".to_string(),
            Vec::new(),
        );
    };
    let last = match log.last_checkpoint {
        Some(t) => format!("the last at {}", dur(t)),
        None => "none completed".to_string(),
    };
    let title = format!(
        "{} completed ({last}), {} failed; checkpoint K is the one at K x {}:",
        plural(log.checkpoints, "checkpoint", "checkpoints"),
        log.checkpoints_failed,
        dur(interval)
    );
    let taken = log.checkpoints + log.checkpoints_failed;
    let lines = (spec.checkpoint_failures.failed_between(1, taken))
        .map(|(a, b, status)| match a == b {
            true => format!(
                "checkpoint {a} (at {}): {}",
                dur(a.saturating_mul(interval)),
                status.as_str()
            ),
            false => format!(
                "checkpoints {a} to {b} (at {} to {}): {}",
                dur(a.saturating_mul(interval)),
                dur(b.saturating_mul(interval)),
                status.as_str()
            ),
        })
        .collect();
    (title, lines)
}

/// The producer's retried appends (section 28.6): per explicit message
/// and per traffic block, the appends whose acknowledgement was lost.
pub(super) fn producer_story(scenario: &Scenario, outcome: &Outcome) -> (String, Vec<String>) {
    let t = &outcome.totals;
    let Some(log) = &scenario.log else {
        return (
            "no [log]: a queue's sends are not retried appends".to_string(),
            Vec::new(),
        );
    };
    let idempotence = log.producer.idempotence;
    let title = format!(
        "{} retried, {} appended ({}); by message and block:",
        plural(t.producer_retries, "append", "appends"),
        plural(
            t.appended_duplicates,
            "duplicate record",
            "duplicate records"
        ),
        match idempotence {
            true => "idempotence: the broker recognised each retry",
            false => "no idempotence: each retry a record of its own",
        }
    );
    let mut lines: Vec<String> = (scenario.messages.iter())
        .filter(|m| m.lost_append_acks > 0)
        .map(|m| {
            format!(
                "{:<16} {} lost: {}",
                m.id,
                plural(
                    m.lost_append_acks,
                    "append acknowledgement",
                    "append acknowledgements"
                ),
                plural(m.lost_append_acks, "retry", "retries")
            )
        })
        .collect();
    lines.extend(
        (scenario.traffic.iter().enumerate())
            .filter(|(_, b)| b.lost_append_acks > 0)
            .map(|(k, b)| {
                format!(
                    "traffic block {} ({}*, {}): {} each",
                    k + 1,
                    b.id_prefix,
                    plural(b.count, "message", "messages"),
                    plural(b.lost_append_acks, "retry", "retries")
                )
            }),
    );
    (title, lines)
}

/// Checkpoint `k`: when it was due, what became of it, and the
/// checkpoints around it.
pub(super) fn checkpoint_story(scenario: &Scenario, outcome: &Outcome, k: u64) -> String {
    let (Some(log), Some(spec)) = (&outcome.log, &scenario.log) else {
        return String::new();
    };
    let interval = spec.checkpoint_interval.unwrap_or(0);
    let at = dur(k.saturating_mul(interval));
    let taken = plural(
        log.checkpoints + log.checkpoints_failed,
        "checkpoint",
        "checkpoints",
    );
    let status = match log.checkpoint_status(spec, k) {
        None => format!("the run ended before it: {taken} taken, the last before the end"),
        Some(s) => {
            let completed = spec
                .checkpoint_failures
                .completed_at_or_before(k.saturating_sub(1));
            let before = match completed {
                0 => "no checkpoint completed before it".to_string(),
                c => format!(
                    "the last completed before it was {c}, at {}",
                    dur(c * interval)
                ),
            };
            format!("{}; {before}", s.as_str())
        }
    };
    format!(
        "checkpoint {k} (at {at}): {status}; {} completed, {} failed in all\n",
        log.checkpoints, log.checkpoints_failed
    )
}

/// Partition `p`: its records, its position and its last checkpoint.
pub(super) fn partition_story(scenario: &Scenario, outcome: &Outcome, p: u32) -> String {
    let Some(log) = &outcome.log else {
        return String::new();
    };
    let (end, committed) = log.partitions[p as usize];
    let guarantee = scenario.log.as_ref().map(|l| l.guarantee);
    let checkpoint = match (guarantee, log.last_checkpoint) {
        (Some(Guarantee::AtMostOnce), _) => {
            "committed when each record's first delivery started (at_most_once)".to_string()
        }
        (_, Some(c)) if log.checkpoints_failed > 0 => format!(
            "the last of {} completed at {} ({} failed)",
            plural(log.checkpoints, "checkpoint", "checkpoints"),
            dur(c),
            log.checkpoints_failed
        ),
        (_, Some(c)) => format!(
            "the last of {} was taken at {}",
            plural(log.checkpoints, "checkpoint", "checkpoints"),
            dur(c)
        ),
        (_, None) if log.checkpoints_failed > 0 => format!(
            "no checkpoint completed ({} failed)",
            log.checkpoints_failed
        ),
        (_, None) => "no checkpoint was taken".to_string(),
    };
    let restarts = log
        .restarts
        .iter()
        .filter(|r| r.partitions.contains(&p))
        .count();
    format!(
        "partition {p}: {} appended (end offset {end}), committed position {committed}: {checkpoint}; {} restarted it\n",
        plural(end, "record", "records"),
        plural(restarts as u64, "restart", "restarts"),
    )
}
