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

/// At most this many idle stretches are compressed (each lasts a third
/// of the run, and something must be left).
const MAX_BREAKS: usize = 2;

/// A stretch with nothing happening, at least this share of the run, is
/// drawn compressed...
const IDLE_SHARE: f64 = 1.0 / 3.0;

/// ...this wide, with a marked axis break.
pub const BREAK_WIDTH: f64 = 36.0;

/// An idle stretch drawn compressed: from `from` to `to` in modeled time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Break {
    pub from: Millis,
    pub to: Millis,
}

/// Maps modeled time onto the plot's x range: linearly, except across
/// long idle stretches ([`Break`]s), each drawn [`BREAK_WIDTH`] wide, so
/// that a minute of activity before a 15-minute wait stays legible.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub end: Millis,
    breaks: [Break; MAX_BREAKS],
    count: usize,
}

impl Scale {
    /// The whole run at one rate.
    pub fn linear(end: Millis) -> Scale {
        Scale {
            end,
            breaks: [Break::default(); MAX_BREAKS],
            count: 0,
        }
    }

    /// Compresses the longest stretches (at most `MAX_BREAKS`) between
    /// consecutive instants of `activity` (sorted; the run's start and
    /// end count as instants) that last at least a third of the run.
    pub fn compressing(end: Millis, activity: impl IntoIterator<Item = Millis>) -> Scale {
        let mut scale = Scale::linear(end);
        let mut gaps: Vec<Break> = Vec::new();
        let mut last = 0;
        for t in activity.into_iter().chain([end]) {
            let t = t.min(end);
            if (t - last.min(t)) as f64 >= end as f64 * IDLE_SHARE && t > last {
                gaps.push(Break { from: last, to: t });
            }
            last = last.max(t);
        }
        gaps.sort_by_key(|g| std::cmp::Reverse(g.to - g.from));
        gaps.truncate(MAX_BREAKS);
        gaps.sort_by_key(|g| g.from);
        let idle: Millis = gaps.iter().map(|g| g.to - g.from).sum();
        // Only when something is left to spread over the plot.
        if idle < end {
            for (k, g) in gaps.iter().enumerate() {
                scale.breaks[k] = *g;
            }
            scale.count = gaps.len();
        }
        scale
    }

    pub fn breaks(&self) -> &[Break] {
        &self.breaks[..self.count]
    }

    /// The pieces of the axis: `(from, to, x_from, x_to)`, in order; the
    /// browser maps a time with the same pieces.
    pub fn pieces(&self) -> Vec<(Millis, Millis, f64, f64)> {
        let breaks = self.breaks();
        let idle: Millis = breaks.iter().map(|b| b.to - b.from).sum();
        let active = (self.end - idle) as f64;
        let width = RIGHT - LEFT - BREAK_WIDTH * breaks.len() as f64;
        let mut out = Vec::new();
        let (mut t, mut x) = (0, LEFT);
        let mut push = |from: Millis, to: Millis, w: f64, x: &mut f64| {
            out.push((from, to, *x, *x + w));
            *x += w;
        };
        for b in breaks {
            let w = if active > 0.0 {
                (b.from - t) as f64 / active * width
            } else {
                0.0
            };
            push(t, b.from, w, &mut x);
            push(b.from, b.to, BREAK_WIDTH, &mut x);
            t = b.to;
        }
        let w = RIGHT - x;
        push(t, self.end, w, &mut x);
        out
    }

    pub fn x(&self, t: Millis) -> f64 {
        if self.end == 0 {
            return LEFT;
        }
        let t = t.min(self.end);
        if self.count == 0 {
            return round(LEFT + (t as f64 / self.end as f64) * (RIGHT - LEFT));
        }
        for (from, to, x0, x1) in self.pieces() {
            if t <= to {
                let share = if to > from {
                    (t - from) as f64 / (to - from) as f64
                } else {
                    0.0
                };
                return round(x0 + share * (x1 - x0));
            }
        }
        RIGHT
    }

    /// Tick times and labels: a readable step, at most `MAX_TICKS`
    /// intervals over the time drawn at full rate; none inside a break,
    /// whose two ends are labelled instead.
    pub fn ticks(&self) -> Vec<(Millis, String)> {
        let idle: Millis = self.breaks().iter().map(|b| b.to - b.from).sum();
        let span = self.end - idle;
        let step = STEPS
            .iter()
            .copied()
            .find(|s| span / s <= MAX_TICKS)
            .unwrap_or_else(|| span.div_ceil(MAX_TICKS).max(1));
        let mut ticks: Vec<Millis> = Vec::new();
        for b in self.breaks() {
            ticks.extend([b.from, b.to]);
        }
        let ends = ticks.clone();
        // Not crowding a break's labelled end.
        let near = |t: Millis| {
            ends.iter()
                .any(|&e| e != t && (self.x(e) - self.x(t)).abs() < 34.0)
        };
        let mut t: Millis = 0;
        // Each round adds a tick of the full-rate time or jumps a break; a
        // tick past the largest time there is ends it like one past the end.
        loop {
            if let Some(b) = self.breaks().iter().find(|b| t > b.from && t < b.to) {
                match b.to.div_ceil(step).checked_mul(step) {
                    Some(next) => t = next,
                    None => break,
                }
                continue;
            }
            if t > self.end {
                break;
            }
            if !near(t) {
                ticks.push(t);
            }
            match t.checked_add(step) {
                Some(next) => t = next,
                None => break,
            }
        }
        ticks.sort_unstable();
        ticks.dedup();
        ticks.into_iter().map(|t| (t, dur(t))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_end_at_the_largest_time_there_is() {
        // A step past u64::MAX would wrap to a small time and tick forever.
        for end in [Millis::MAX, Millis::MAX - 1, 213_503_982_334 * 86_400_000] {
            let n = Scale::linear(end).ticks().len() as u64;
            assert!((1..=MAX_TICKS + 1).contains(&n), "{end}: {n} ticks");
        }
    }

    #[test]
    fn ticks_are_readable_and_few() {
        let labels = |end| -> Vec<String> {
            Scale::linear(end)
                .ticks()
                .into_iter()
                .map(|(_, l)| l)
                .collect()
        };
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
            let n = Scale::linear(end).ticks().len() as u64;
            assert!((1..=MAX_TICKS + 1).contains(&n), "{end}: {n} ticks");
        }
    }

    #[test]
    fn x_maps_the_run_onto_the_plot() {
        let s = Scale::linear(1000);
        assert_eq!(s.x(0), LEFT);
        assert_eq!(s.x(1000), RIGHT);
        assert_eq!(s.x(5000), RIGHT);
        assert_eq!(s.x(500), round((LEFT + RIGHT) / 2.0));
        assert_eq!(Scale::linear(0).x(10), LEFT);
    }

    /// A minute of activity, then a 15-minute wait, then a step: the wait
    /// is drawn BREAK_WIDTH wide and the minute gets the rest.
    #[test]
    fn a_long_idle_stretch_is_compressed_and_marked() {
        let activity = [0, 10_000, 60_000, 960_000, 970_000];
        let s = Scale::compressing(970_000, activity);
        assert_eq!(
            s.breaks(),
            [Break {
                from: 60_000,
                to: 960_000
            }]
        );
        assert_eq!(round(s.x(960_000) - s.x(60_000)), BREAK_WIDTH);
        // The minute takes most of the plot, where linearly it had 6%.
        assert!(s.x(60_000) - LEFT > 0.8 * (RIGHT - LEFT), "{}", s.x(60_000));
        assert_eq!(s.x(0), LEFT);
        assert_eq!(s.x(970_000), RIGHT);
        // Monotone, and the pieces cover the plot without a gap.
        let xs: Vec<f64> = (0..=970).map(|k| s.x(k * 1000)).collect();
        assert!(xs.windows(2).all(|w| w[0] <= w[1]));
        let pieces = s.pieces();
        assert_eq!(pieces.first().unwrap().2, LEFT);
        assert_eq!(pieces.last().unwrap().3, RIGHT);
        assert!(
            pieces
                .windows(2)
                .all(|w| w[0].1 == w[1].0 && w[0].3 == w[1].2)
        );
        // No tick inside the break; both its ends are labelled.
        let ticks = s.ticks();
        assert!(ticks.iter().all(|(t, _)| *t <= 60_000 || *t >= 960_000));
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            labels.contains(&"1m") && labels.contains(&"16m"),
            "{labels:?}"
        );
        assert!(ticks.len() <= MAX_TICKS as usize + 4, "{labels:?}");
    }

    #[test]
    fn busy_runs_and_runs_of_nothing_stay_linear() {
        // Gaps under a third of the run: linear.
        let s = Scale::compressing(90_000, [0, 29_999, 59_000, 88_000]);
        assert!(s.breaks().is_empty());
        assert_eq!(s.x(45_000), Scale::linear(90_000).x(45_000));
        // Nothing at all happens: nothing to spread, so linear.
        assert!(Scale::compressing(50_000, []).breaks().is_empty());
        assert!(Scale::compressing(0, [0]).breaks().is_empty());
        // Idle before the first arrival is compressed too.
        let s = Scale::compressing(100_000, [80_000, 90_000]);
        assert_eq!(
            s.breaks(),
            [Break {
                from: 0,
                to: 80_000
            }]
        );
        // Two long waits: both compressed.
        let s = Scale::compressing(1_000_000, [0, 1_000, 400_000, 401_000, 999_000]);
        assert_eq!(
            s.breaks(),
            [
                Break {
                    from: 1_000,
                    to: 400_000
                },
                Break {
                    from: 401_000,
                    to: 999_000
                }
            ]
        );
        // A day-long break with a millisecond step does not loop over it.
        let s = Scale::compressing(86_400_000, [0, 1, 2, 3, 86_400_000]);
        assert!(s.ticks().len() < 20);
    }
}
