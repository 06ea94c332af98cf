//! Checkpoints that fail or are aborted (docs/model.md section 28.7):
//! their status, the failed ones of a run as ranges of numbers, and the
//! field `[expect.checkpoint.K]` reads.

/// How a checkpoint that commits nothing is labelled (section 28.7): both
/// behave alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckpointStatus {
    Completed,
    Failed,
    Aborted,
}

impl CheckpointStatus {
    pub const ALL: [CheckpointStatus; 3] = [
        CheckpointStatus::Completed,
        CheckpointStatus::Failed,
        CheckpointStatus::Aborted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointStatus::Completed => "completed",
            CheckpointStatus::Failed => "failed",
            CheckpointStatus::Aborted => "aborted",
        }
    }
}

/// The failed checkpoints of a run, by number (the checkpoint at `k x
/// interval` is number `k`, from 1): disjoint ranges of numbers in order,
/// each with its status. A file's `[[checkpoint_failure]]` entries, at
/// most [`MAX_CHECKPOINT_FAILURES`] of them each a window or a list of
/// numbers, become at most a few thousand ranges; every question about
/// them is a binary search, whatever the interval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointFailures {
    /// (first number, last number, status), disjoint, in order.
    ranges: Vec<(u64, u64, CheckpointStatus)>,
}

impl CheckpointFailures {
    /// The failures from the entries in file order: a checkpoint listed by
    /// two entries takes the status of the first. One sweep over the
    /// entries' ends, O(n log n) in the entries' ranges.
    pub fn new(entries: &[(u64, u64, CheckpointStatus)]) -> Self {
        // Where each entry starts (+) and stops (-), by number.
        let mut ends: Vec<(u64, bool, usize)> = Vec::with_capacity(entries.len() * 2);
        for (i, &(first, last, _)) in entries.iter().enumerate() {
            if first <= last {
                ends.push((first, true, i));
                ends.push((last.saturating_add(1), false, i));
            }
        }
        ends.sort_unstable();
        let mut open = std::collections::BTreeSet::new();
        let mut ranges: Vec<(u64, u64, CheckpointStatus)> = Vec::new();
        let mut k = 0;
        while k < ends.len() {
            let at = ends[k].0;
            while k < ends.len() && ends[k].0 == at {
                let (_, starts, i) = ends[k];
                match starts {
                    true => open.insert(i),
                    false => open.remove(&i),
                };
                k += 1;
            }
            // From `at` to the next end, the first open entry decides.
            let (Some(&first), Some(&(next, _, _))) = (open.first(), ends.get(k)) else {
                continue;
            };
            let status = entries[first].2;
            match ranges.last_mut() {
                Some(last) if last.1.saturating_add(1) == at && last.2 == status => {
                    last.1 = next - 1
                }
                _ => ranges.push((at, next - 1, status)),
            }
        }
        CheckpointFailures { ranges }
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The range holding checkpoint `k`, if it fails.
    fn range_of(&self, k: u64) -> Option<&(u64, u64, CheckpointStatus)> {
        let i = self.ranges.partition_point(|&(_, last, _)| last < k);
        self.ranges.get(i).filter(|&&(first, _, _)| first <= k)
    }

    /// Checkpoint `k`'s status (`k` >= 1).
    pub fn status(&self, k: u64) -> CheckpointStatus {
        self.range_of(k)
            .map_or(CheckpointStatus::Completed, |&(_, _, s)| s)
    }

    /// The latest completed checkpoint numbered `k` or less (none: 0).
    pub fn completed_at_or_before(&self, mut k: u64) -> u64 {
        while k >= 1
            && let Some(&(first, _, _)) = self.range_of(k)
        {
            k = first - 1;
        }
        k
    }

    /// The failed checkpoints numbered `first` to `last`, in order: ranges
    /// of numbers with their status.
    pub fn failed_between(
        &self,
        first: u64,
        last: u64,
    ) -> impl Iterator<Item = (u64, u64, CheckpointStatus)> + '_ {
        let i = self.ranges.partition_point(|&(_, b, _)| b < first);
        self.ranges[i..]
            .iter()
            .take_while(move |&&(a, _, _)| a <= last)
            .map(move |&(a, b, s)| (a.max(first), b.min(last), s))
    }
}

/// The most `[[checkpoint_failure]]` entries a file may have (section 28.7).
pub const MAX_CHECKPOINT_FAILURES: usize = 100;
/// The most checkpoint numbers one `[[checkpoint_failure]]` may list.
pub const MAX_CHECKPOINT_NUMBERS: usize = 1000;

/// A field of `[expect.checkpoint.K]` (section 28.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckpointField {
    /// `"completed"`, `"failed"`, `"aborted"`, or `"never"` (the run
    /// ended before it).
    Status,
}

impl CheckpointField {
    pub const ALL: [CheckpointField; 1] = [CheckpointField::Status];

    pub fn name(self) -> &'static str {
        match self {
            CheckpointField::Status => "status",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most a file can write (100 entries of 1,000 numbers, and
    /// windows over them) gives each checkpoint the first entry's status,
    /// as a check of every entry says, in one sweep.
    #[test]
    fn the_first_entry_naming_a_checkpoint_decides_its_status() {
        let mut entries = Vec::new();
        let mut x: u64 = 7;
        for e in 0..MAX_CHECKPOINT_FAILURES {
            let status = match e % 2 {
                0 => CheckpointStatus::Failed,
                _ => CheckpointStatus::Aborted,
            };
            if e % 10 == 0 {
                entries.push((e as u64 * 37 + 1, e as u64 * 37 + 400, status));
                continue;
            }
            for _ in 0..MAX_CHECKPOINT_NUMBERS {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let k = (x >> 33) % 5000 + 1;
                entries.push((k, k, status));
            }
        }
        let failures = CheckpointFailures::new(&entries);
        for k in 1..=5100 {
            let expected = (entries.iter())
                .find(|&&(a, b, _)| a <= k && k <= b)
                .map_or(CheckpointStatus::Completed, |&(_, _, s)| s);
            assert_eq!(failures.status(k), expected, "checkpoint {k}");
        }
        // Adjacent ranges of one status are one range.
        let ranges = &failures.ranges;
        assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(
            (ranges.windows(2)).all(|w| w[0].1 + 1 < w[1].0 || w[0].2 != w[1].2),
            "unmerged neighbours"
        );
    }
}
