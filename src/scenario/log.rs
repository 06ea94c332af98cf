//! Validating a partitioned log (docs/model.md section 23 and decisions
//! 26.4, 27.12, 27.16): `[log]`, its `[[restart]]`s, a message's
//! `partition`, and the keys a log cannot take.

use super::file::{self, S};
use super::problems::Problems;
use crate::model::*;

/// `[log]` and `[[restart]]` as the model has them; `None` without
/// `[log]` (every log-only key is then refused).
pub(super) fn log(problems: &mut Problems, raw: &file::File) -> Option<Log> {
    let Some(table) = &raw.log else {
        without_log(problems, raw);
        return None;
    };
    let t = table.get_ref();
    let partitions = match &t.partitions {
        Some(p) => problems
            .count(p, "partitions", 1, MAX_PARTITIONS as i64)
            .unwrap_or(1) as u32,
        None => 1,
    };
    let guarantee = match t.guarantee.as_ref().map(|g| *g.get_ref()) {
        None | Some(file::GuaranteeName::AtLeastOnce) => Guarantee::AtLeastOnce,
        Some(file::GuaranteeName::AtMostOnce) => Guarantee::AtMostOnce,
        Some(file::GuaranteeName::ExactlyOnce) => Guarantee::ExactlyOnce,
    };
    let checkpoint_interval = match (&t.checkpoint_interval, guarantee) {
        (Some(i), Guarantee::AtMostOnce) => {
            problems.error_help(
                Some(i.span()),
                "`checkpoint_interval` does not apply with guarantee = \"at_most_once\"",
                "no checkpoints under at_most_once",
                "at_most_once commits a record's position when its first delivery starts; remove checkpoint_interval",
            );
            None
        }
        (None, Guarantee::AtMostOnce) => None,
        (Some(i), _) if i.get_ref().0 == 0 => {
            problems.error_help(
                Some(i.span()),
                "`checkpoint_interval` must be at least 1ms",
                "0s",
                "checkpoints are taken every interval: e.g. checkpoint_interval = \"1m\"",
            );
            None
        }
        (Some(i), _) => Some(i.get_ref().0),
        (None, g) => {
            problems.error_help(
                Some(table.span()),
                format!(
                    "[log] needs `checkpoint_interval` with guarantee = \"{}\"",
                    g.as_str()
                ),
                "no checkpoint interval",
                "positions are committed at checkpoints: e.g. checkpoint_interval = \"1m\"",
            );
            None
        }
    };
    incompatible(problems, raw);
    for m in &raw.message {
        if let Some(p) = &m.get_ref().partition {
            problems.count(p, "partition", 0, partitions as i64 - 1);
        }
    }
    for t in &raw.traffic {
        if let Some(p) = &t.get_ref().partition {
            problems.count(p, "partition", 0, partitions as i64 - 1);
        }
    }
    let mut restarts = Vec::new();
    if raw.restart.len() > MAX_RESTARTS {
        problems.error(
            raw.restart[MAX_RESTARTS].span(),
            format!("a file has at most {MAX_RESTARTS} restarts"),
            "one too many",
        );
    }
    let mut previous: Option<Millis> = None;
    for r in raw.restart.iter().take(MAX_RESTARTS) {
        let restart = restart(problems, r, partitions, guarantee);
        if previous.is_some_and(|p| restart.at < p) {
            problems.error_help(
                Some(r.get_ref().at.span()),
                "restarts must be in time order",
                "earlier than the restart before it",
                "list the [[restart]] entries by their `at`",
            );
        }
        previous = Some(restart.at);
        restarts.push(restart);
    }
    let producer = producer(problems, raw);
    let checkpoint_failures = checkpoint_failures(problems, raw, checkpoint_interval, guarantee);
    let checkpoint_events = t.checkpoint_events.unwrap_or(false) || !checkpoint_failures.is_empty();
    Some(Log {
        partitions,
        guarantee,
        checkpoint_interval,
        service_time: t.service_time.as_ref().map_or(0, |s| s.get_ref().0),
        restarts,
        carry_attempts: t.carry_attempts.unwrap_or(false),
        checkpoint_failures,
        checkpoint_events,
        producer,
    })
}

/// `[producer]` (section 28.6), and whether some message loses an
/// append's acknowledgement.
fn producer(problems: &mut Problems, raw: &file::File) -> Producer {
    let table = raw.producer.as_ref().map(|p| p.get_ref());
    let retry_backoff = match table.and_then(|t| t.retry_backoff.as_ref()) {
        Some(b) if b.get_ref().0 == 0 => {
            problems.error_help(
                Some(b.span()),
                "`retry_backoff` must be at least 1ms",
                "0s",
                "Kafka's retry.backoff.ms defaults to 100ms: e.g. retry_backoff = \"100ms\"",
            );
            DEFAULT_RETRY_BACKOFF
        }
        Some(b) => b.get_ref().0,
        None => DEFAULT_RETRY_BACKOFF,
    };
    let retries = lose_append_acks(raw).next().is_some();
    Producer {
        idempotence: table.and_then(|t| t.idempotence).unwrap_or(true),
        retry_backoff,
        retries,
        written: retries || table.is_some(),
    }
}

/// Every `lose_append_ack` the file writes: its messages', its blocks' and
/// its mix kinds'.
fn lose_append_acks(raw: &file::File) -> impl Iterator<Item = &S<file::Selector>> {
    let messages = raw.message.iter().flat_map(|m| &m.get_ref().faults);
    let blocks = raw.traffic.iter().flat_map(|t| {
        let t = t.get_ref();
        t.faults
            .iter()
            .chain(t.mix.iter().flat_map(|k| &k.get_ref().faults))
    });
    messages
        .chain(blocks)
        .filter_map(|f| f.get_ref().lose_append_ack.as_ref())
}

/// `[[checkpoint_failure]]` (section 28.7): each a window (`from` and
/// `duration`) or checkpoint `numbers`, with a status; at most
/// [`MAX_CHECKPOINT_FAILURES`] entries, only with a checkpoint interval.
fn checkpoint_failures(
    problems: &mut Problems,
    raw: &file::File,
    interval: Option<Millis>,
    guarantee: Guarantee,
) -> CheckpointFailures {
    let Some(first) = raw.checkpoint_failure.first() else {
        return CheckpointFailures::default();
    };
    let Some(interval) = interval else {
        if guarantee == Guarantee::AtMostOnce {
            problems.error_help(
                Some(first.span()),
                "[[checkpoint_failure]] does not apply with guarantee = \"at_most_once\"",
                "no checkpoints under at_most_once",
                "at_most_once commits a record's position when its first delivery starts; remove [[checkpoint_failure]]",
            );
        }
        return CheckpointFailures::default();
    };
    if raw.checkpoint_failure.len() > MAX_CHECKPOINT_FAILURES {
        problems.error(
            raw.checkpoint_failure[MAX_CHECKPOINT_FAILURES].span(),
            format!("a file has at most {MAX_CHECKPOINT_FAILURES} checkpoint failures"),
            "one too many",
        );
    }
    let mut entries = Vec::new();
    for entry in raw.checkpoint_failure.iter().take(MAX_CHECKPOINT_FAILURES) {
        let f = entry.get_ref();
        let status = match f.status.as_ref().map(|s| *s.get_ref()) {
            None | Some(file::CheckpointStatusName::Failed) => CheckpointStatus::Failed,
            Some(file::CheckpointStatusName::Aborted) => CheckpointStatus::Aborted,
        };
        match (&f.from, &f.duration, &f.numbers) {
            (Some(from), Some(duration), None) => {
                let (from, length) = (from.get_ref().0, duration.get_ref().0);
                if length == 0 {
                    problems.error_help(
                        Some(duration.span()),
                        "a checkpoint failure's `duration` must be at least 1ms",
                        "0s",
                        "the window is [from, from + duration): e.g. duration = \"2m\"",
                    );
                    continue;
                }
                // The checkpoint numbers k >= 1 with k x interval in the window.
                let first = from.div_ceil(interval).max(1);
                let last = from.saturating_add(length).div_ceil(interval) - 1;
                entries.push((first, last, status));
            }
            (None, None, Some(numbers)) => {
                let list = numbers.get_ref();
                if list.is_empty() || list.len() > MAX_CHECKPOINT_NUMBERS {
                    problems.error_help(
                        Some(numbers.span()),
                        format!(
                            "`numbers` lists 1 to {MAX_CHECKPOINT_NUMBERS} checkpoints, not {}",
                            list.len()
                        ),
                        "how many checkpoints",
                        "list the failing checkpoints by number, from 1: e.g. numbers = [2, 3]",
                    );
                    continue;
                }
                if list.iter().any(|&k| k < 1) {
                    problems.error_help(
                        Some(numbers.span()),
                        "checkpoints are numbered from 1",
                        "below 1",
                        "checkpoint k is the one at k x checkpoint_interval: e.g. numbers = [2, 3]",
                    );
                    continue;
                }
                entries.extend(list.iter().map(|&k| (k as u64, k as u64, status)));
            }
            _ => {
                problems.error_help(
                    Some(entry.span()),
                    "a checkpoint failure is `from` with `duration`, or `numbers`",
                    "which checkpoints fail?",
                    "write from = \"2m\", duration = \"2m\" (every checkpoint in that window), or numbers = [2, 3]",
                );
            }
        }
    }
    CheckpointFailures::new(&entries)
}

/// A restart as the model has it. A problem is recorded where it is
/// written and a default put in its place, so that the restarts keep their
/// number and order (the file is refused anyway).
fn restart(
    problems: &mut Problems,
    raw: &S<file::RestartTable>,
    partitions: u32,
    guarantee: Guarantee,
) -> Restart {
    let r = raw.get_ref();
    let resume = match (r.resume.as_ref().map(|v| *v.get_ref()), &r.checkpoint_age) {
        (Some(file::ResumeName::Stale), Some(age)) => Resume::Stale(age.get_ref().0),
        (Some(file::ResumeName::Stale), None) => {
            problems.error_help(
                Some(r.resume.as_ref().map_or(raw.span(), |v| v.span())),
                "resume = \"stale\" needs `checkpoint_age`",
                "how stale?",
                "say how old the restored checkpoint is: e.g. checkpoint_age = \"15m\"",
            );
            Resume::Committed
        }
        (_, Some(age)) => {
            problems.error_help(
                Some(age.span()),
                "`checkpoint_age` applies only with resume = \"stale\"",
                "not a stale resume",
                "add resume = \"stale\", or remove checkpoint_age",
            );
            Resume::Committed
        }
        (None | Some(file::ResumeName::Committed), None) => Resume::Committed,
        (Some(file::ResumeName::Earliest), None) => Resume::Earliest,
        (Some(file::ResumeName::Latest), None) => Resume::Latest,
        (Some(file::ResumeName::Offsets), None) => Resume::Offsets,
    };
    let skip = match &r.skip {
        Some(s) => problems.count(s, "skip", 0, i64::MAX).unwrap_or(0),
        None => 0,
    };
    let partition = match &r.partition {
        Some(p) if guarantee == Guarantee::ExactlyOnce => {
            problems.error_help(
                Some(p.span()),
                "a restart under exactly_once restarts every partition",
                "`partition` with exactly_once",
                "the restart aborts the one open transaction, which spans every partition; remove partition",
            );
            None
        }
        Some(p) => problems
            .count(p, "partition", 0, partitions as i64 - 1)
            .map(|p| p as u32),
        None => None,
    };
    let restarted = match (&r.partition, partition) {
        (Some(_), _) => 1,
        (None, _) => partitions as usize,
    };
    let (offsets, replay_until) = explicit_offsets(problems, raw, resume, restarted);
    Restart {
        at: r.at.get_ref().0,
        down_for: r.down_for.as_ref().map_or(0, |d| d.get_ref().0),
        resume,
        skip,
        partition,
        offsets,
        replay_until,
    }
}

/// `offsets` and `replay_until` (section 28.10): with, and only with,
/// resume = "offsets"; one entry per restarted partition, each replay end
/// above its offset.
fn explicit_offsets(
    problems: &mut Problems,
    raw: &S<file::RestartTable>,
    resume: Resume,
    restarted: usize,
) -> (Vec<u64>, Vec<u64>) {
    let r = raw.get_ref();
    let list = |problems: &mut Problems, v: &S<Vec<i64>>, key: &str| -> Option<Vec<u64>> {
        if v.get_ref().len() != restarted {
            problems.error_help(
                Some(v.span()),
                format!(
                    "`{key}` lists {} offsets for {restarted} restarted partition{}",
                    v.get_ref().len(),
                    if restarted == 1 { "" } else { "s" }
                ),
                "one per restarted partition",
                "list one offset per restarted partition, in partition order",
            );
            return None;
        }
        if v.get_ref().iter().any(|&o| o < 0) {
            problems.error(
                v.span(),
                format!("`{key}` takes offsets of 0 or more"),
                "negative",
            );
            return None;
        }
        Some(v.get_ref().iter().map(|&o| o as u64).collect())
    };
    if resume != Resume::Offsets {
        for (v, key) in [(&r.offsets, "offsets"), (&r.replay_until, "replay_until")] {
            if let Some(v) = v {
                problems.error_help(
                    Some(v.span()),
                    format!("`{key}` applies only with resume = \"offsets\""),
                    "not an explicit resume",
                    "add resume = \"offsets\", or remove it",
                );
            }
        }
        return (Vec::new(), Vec::new());
    }
    let Some(offsets) = &r.offsets else {
        problems.error_help(
            Some(r.resume.as_ref().map_or(raw.span(), |v| v.span())),
            "resume = \"offsets\" needs `offsets`",
            "which offsets?",
            "list where each restarted partition resumes: e.g. offsets = [21]",
        );
        return (Vec::new(), Vec::new());
    };
    let Some(offsets) = list(problems, offsets, "offsets") else {
        return (vec![0; restarted], Vec::new());
    };
    let Some(until) = &r.replay_until else {
        return (offsets, Vec::new());
    };
    let Some(replay_until) = list(problems, until, "replay_until") else {
        return (offsets, Vec::new());
    };
    if offsets.iter().zip(&replay_until).any(|(o, b)| b <= o) {
        problems.error_help(
            Some(until.span()),
            "each `replay_until` entry must be above its `offsets` entry",
            "an empty replay",
            "the replay processes [offset, replay_until) and then goes on where the partition was",
        );
        return (offsets, Vec::new());
    }
    (offsets, replay_until)
}

/// The keys a log cannot take (section 23): a log has no per-record
/// acknowledgement, no worker pool and no broker profile.
fn incompatible(problems: &mut Problems, raw: &file::File) {
    let help = "a log's position is its acknowledgement: remove it, or remove [log]";
    if let Some(w) = &raw.workers {
        problems.error_help(
            Some(w.span()),
            "[workers] does not apply to a log",
            "workers with [log]",
            "a log processes each partition one record at a time; set [log] service_time instead",
        );
    }
    if let Some(d) = &raw.delivery {
        let d = d.get_ref();
        let keys: [(&str, Option<std::ops::Range<usize>>); 3] = [
            ("ordering", d.ordering.as_ref().map(|v| v.span())),
            (
                "visibility_timeout",
                d.visibility_timeout.as_ref().map(|v| v.span()),
            ),
            ("profile", d.profile.as_ref().map(|v| v.span())),
        ];
        for (key, span) in keys {
            if let Some(span) = span {
                problems.error_help(
                    Some(span),
                    format!("`{key}` does not apply to a log"),
                    format!("{key} with [log]"),
                    "a log keeps offset order per partition and has no visibility timeout or broker profile; remove it",
                );
            }
        }
    }
    let mut lose_acks = Vec::new();
    let mut each = |faults: &[S<file::Fault>]| {
        for f in faults {
            if let Some(l) = &f.get_ref().lose_ack {
                lose_acks.push(l.span());
            }
        }
    };
    for m in &raw.message {
        each(&m.get_ref().faults);
    }
    for t in &raw.traffic {
        each(&t.get_ref().faults);
        for k in &t.get_ref().mix {
            each(&k.get_ref().faults);
        }
    }
    for span in lose_acks {
        problems.error_help(
            Some(span),
            "`lose_ack` does not apply to a log",
            "lose_ack with [log]",
            help,
        );
    }
}

/// A file without `[log]`: a restart or a message's partition is refused.
fn without_log(problems: &mut Problems, raw: &file::File) {
    if let Some(r) = raw.restart.first() {
        problems.error_help(
            Some(r.span()),
            "[[restart]] needs [log]",
            "a restart without a log",
            "restarts resume a log's consumer from an offset; add [log] with its checkpoint_interval",
        );
    }
    if let Some(p) = &raw.producer {
        problems.error_help(
            Some(p.span()),
            "[producer] needs [log]",
            "a producer without a log",
            "the producer's retries append records to a log; add [log], or remove [producer]",
        );
    }
    for l in lose_append_acks(raw) {
        problems.error_help(
            Some(l.span()),
            "`lose_append_ack` needs [log]",
            "an append without a log",
            "a queue's send is not modeled as an append; add [log], or remove the fault",
        );
    }
    if let Some(c) = raw.checkpoint_failure.first() {
        problems.error_help(
            Some(c.span()),
            "[[checkpoint_failure]] needs [log]",
            "a checkpoint failure without a log",
            "checkpoints commit a log's positions; add [log] with its checkpoint_interval",
        );
    }
    let messages = raw
        .message
        .iter()
        .filter_map(|m| m.get_ref().partition.as_ref());
    let blocks = raw
        .traffic
        .iter()
        .filter_map(|t| t.get_ref().partition.as_ref());
    for p in messages.chain(blocks) {
        problems.error_help(
            Some(p.span()),
            "`partition` needs [log]",
            "a partition without a log",
            "a queue has no partitions; add [log] with partitions = N, or remove partition",
        );
    }
}
