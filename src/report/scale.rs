//! The HTML charts' time scale: modeled time onto the plot's x range,
//! and an axis of a few readable ticks. Every chart of a report shares it.

use crate::duration::format as dur;
use crate::model::Millis;

/// The plot's left and right edges, in SVG user units.
pub const LEFT: f64 = 170.0;
pub const RIGHT: f64 = 980.0;

/// Candidate tick steps: readable durations from 1 ms to 30 days.
const STEPS: [Millis; 31] = [
    1,
    2,
    5,
    10,
    20,
    50,
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    15_000,
    30_000,
    60_000,
    120_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    21_600_000,
    43_200_000,
    86_400_000,
    172_800_000,
    604_800_000,
    1_209_600_000,
    2_592_000_000,
];

/// At most this many intervals on the time axis.
const MAX_TICKS: u64 = 10;

/// Rounds to a tenth of a unit.
pub fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Maps modeled time onto the plot's x range.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub end: Millis,
}

impl Scale {
    pub fn x(&self, t: Millis) -> f64 {
        if self.end == 0 {
            return LEFT;
        }
        round(LEFT + (t.min(self.end) as f64 / self.end as f64) * (RIGHT - LEFT))
    }

    /// Tick times and labels: a readable step, at most [`MAX_TICKS`] intervals.
    pub fn ticks(&self) -> Vec<(Millis, String)> {
        let step = STEPS
            .iter()
            .copied()
            .find(|s| self.end / s <= MAX_TICKS)
            .unwrap_or_else(|| self.end.div_ceil(MAX_TICKS).max(1));
        (0..=self.end / step)
            .map(|k| (k * step, dur(k * step)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_readable_and_few() {
        let labels =
            |end| -> Vec<String> { Scale { end }.ticks().into_iter().map(|(_, l)| l).collect() };
        assert_eq!(
            labels(40_000),
            ["0s", "5s", "10s", "15s", "20s", "25s", "30s", "35s", "40s"]
        );
        assert_eq!(labels(0), ["0s"]);
        assert_eq!(
            labels(7),
            ["0s", "1ms", "2ms", "3ms", "4ms", "5ms", "6ms", "7ms"]
        );
        let day = labels(86_400_000);
        assert_eq!(day.len(), 9);
        assert_eq!(day[1], "3h");
        for end in [1, 999, 61_000, 3_600_001, 400 * 86_400_000] {
            let n = Scale { end }.ticks().len() as u64;
            assert!((1..=MAX_TICKS + 1).contains(&n), "{end}: {n} ticks");
        }
    }

    #[test]
    fn x_maps_the_run_onto_the_plot() {
        let s = Scale { end: 1000 };
        assert_eq!(s.x(0), LEFT);
        assert_eq!(s.x(1000), RIGHT);
        assert_eq!(s.x(5000), RIGHT);
        assert_eq!(s.x(500), round((LEFT + RIGHT) / 2.0));
        assert_eq!(Scale { end: 0 }.x(10), LEFT);
    }
}
