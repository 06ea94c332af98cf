//! Samples of a log's positions and lag over time, for the reports' offset
//! lanes and lag chart. Bounded whatever the run: at most
//! [`LANE_PARTITIONS`] partitions and about [`LANE_SAMPLES`] samples, spread
//! evenly over the run by halving the samples and doubling their spacing
//! whenever they fill up.

use crate::model::Millis;

/// The partitions whose lanes are drawn (the first ones).
pub const LANE_PARTITIONS: usize = 16;

/// The most samples kept; sampling halves them when twice this many are
/// taken.
pub const LANE_SAMPLES: usize = 256;

/// One sample: after the instant `at`, the total lag and the first
/// partitions' positions and log ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneSample {
    pub at: Millis,
    /// Records appended and not done, summed over every partition.
    pub lag: u64,
    pub positions: Vec<u64>,
    pub ends: Vec<u64>,
}

/// The samples taken so far (no `Default`: the spacing starts at 1ms).
#[derive(Debug, Clone)]
pub(super) struct Lanes {
    pub(super) samples: Vec<LaneSample>,
    /// The spacing of the samples kept (doubles as they are thinned).
    every: Millis,
    next_at: Millis,
}

impl Lanes {
    pub(super) fn new() -> Self {
        Lanes {
            samples: Vec::new(),
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
    pub(super) fn take(&mut self, at: Millis, force: bool, sample: impl FnOnce() -> LaneSample) {
        if !force && at < self.next_at {
            return;
        }
        if self.samples.last().is_some_and(|s| s.at == at) {
            self.samples.pop();
        }
        self.samples.push(sample());
        self.next_at = at.saturating_add(self.every);
        if self.samples.len() >= 2 * LANE_SAMPLES {
            let mut i = 0;
            self.samples.retain(|_| {
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

    fn sample(at: Millis) -> LaneSample {
        LaneSample {
            at,
            lag: at,
            positions: vec![at],
            ends: vec![at],
        }
    }

    #[test]
    fn samples_stay_bounded_and_spread_over_the_run() {
        let mut lanes = Lanes::new();
        for at in 0..1_000_000 {
            lanes.take(at, false, || sample(at));
        }
        lanes.take(1_000_000, true, || sample(1_000_000));
        let n = lanes.samples.len();
        assert!((LANE_SAMPLES..2 * LANE_SAMPLES).contains(&n), "{n}");
        assert_eq!(lanes.samples[0].at, 0);
        assert_eq!(lanes.samples.last().unwrap().at, 1_000_000);
        // Evenly spread: no gap more than twice the spacing of the rest
        // (the forced sample at the end aside).
        let gaps: Vec<Millis> = lanes.samples[..n - 1]
            .windows(2)
            .map(|w| w[1].at - w[0].at)
            .collect();
        let widest = *gaps.iter().max().unwrap();
        let narrowest = *gaps.iter().min().unwrap();
        assert!(widest <= 2 * narrowest.max(1) + 1, "{narrowest}..{widest}");
    }
}
