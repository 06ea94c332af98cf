//! Samples of a log's positions and lag over time, for the reports' offset
//! lanes and lag chart. Bounded whatever the run: at most
//! [`SAMPLED_PARTITIONS`] partitions and about [`OFFSET_SAMPLES`] samples, spread
//! evenly over the run by halving the samples and doubling their spacing
//! whenever they fill up.

use crate::model::Millis;

/// The partitions whose lanes are drawn (the first ones).
pub const SAMPLED_PARTITIONS: usize = 16;

/// The most samples kept; sampling halves them when twice this many are
/// taken.
pub const OFFSET_SAMPLES: usize = 256;

/// One sample: after the instant `at`, the total lag and the first
/// partitions' positions and log ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetSample {
    pub at: Millis,
    /// Records appended and not done, summed over every partition.
    pub lag: u64,
    pub positions: Vec<u64>,
    pub ends: Vec<u64>,
}

/// The samples taken so far (no `Default`: the spacing starts at 1ms).
#[derive(Debug, Clone)]
pub(super) struct Samples {
    pub(super) taken: Vec<OffsetSample>,
    /// The spacing of the samples kept (doubles as they are thinned).
    every: Millis,
    next_at: Millis,
}

impl Samples {
    pub(super) fn new() -> Self {
        Samples {
            taken: Vec::new(),
            every: 1,
            next_at: 0,
        }
    }

    /// Whether a sample for instant `at` would be kept.
    #[inline]
    pub(super) fn due(&self, at: Millis) -> bool {
        at >= self.next_at
    }

    /// Takes the sample made by `sample` (for instant `at`); `force` takes
    /// it whatever the spacing (the run's end).
    pub(super) fn take(&mut self, at: Millis, force: bool, sample: impl FnOnce() -> OffsetSample) {
        if !force && at < self.next_at {
            return;
        }
        if self.taken.last().is_some_and(|s| s.at == at) {
            self.taken.pop();
        }
        self.taken.push(sample());
        self.next_at = at.saturating_add(self.every);
        if self.taken.len() >= 2 * OFFSET_SAMPLES {
            let mut i = 0;
            self.taken.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.every = self.every.saturating_mul(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: Millis) -> OffsetSample {
        OffsetSample {
            at,
            lag: at,
            positions: vec![at],
            ends: vec![at],
        }
    }

    #[test]
    fn samples_stay_bounded_and_spread_over_the_run() {
        let mut samples = Samples::new();
        for at in 0..1_000_000 {
            samples.take(at, false, || sample(at));
        }
        samples.take(1_000_000, true, || sample(1_000_000));
        let n = samples.taken.len();
        assert!((OFFSET_SAMPLES..2 * OFFSET_SAMPLES).contains(&n), "{n}");
        assert_eq!(samples.taken[0].at, 0);
        assert_eq!(samples.taken.last().unwrap().at, 1_000_000);
        // Evenly spread: no gap more than twice the spacing of the rest
        // (the forced sample at the end aside).
        let gaps: Vec<Millis> = samples.taken[..n - 1]
            .windows(2)
            .map(|w| w[1].at - w[0].at)
            .collect();
        let widest = *gaps.iter().max().unwrap();
        let narrowest = *gaps.iter().min().unwrap();
        assert!(widest <= 2 * narrowest.max(1) + 1, "{narrowest}..{widest}");
    }
}
