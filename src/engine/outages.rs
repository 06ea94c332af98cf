//! Whether the downstream is in an `[[outage]]` at an instant, in
//! O(log n) for n windows: windows sorted by start, with the latest end of
//! any window starting at or before each one.

use crate::model::{Millis, Outage};

#[derive(Clone)]
pub(super) struct Outages {
    /// Starts, ascending.
    starts: Vec<Millis>,
    /// `latest_end[i]`: the latest end (excluded) of windows `0..=i`.
    latest_end: Vec<Millis>,
    /// The last answer and the span `[from, to)` of times it holds for.
    /// The engine asks at its clock, which only moves forward, so most
    /// questions fall in the last answer's span and cost two comparisons.
    known: (Millis, Millis, bool),
}

impl Outages {
    pub(super) fn new(outages: &[Outage]) -> Outages {
        let mut windows: Vec<(Millis, Millis)> = outages
            .iter()
            .map(|o| (o.from, o.from.saturating_add(o.duration)))
            .collect();
        windows.sort_unstable();
        let mut latest = 0;
        let latest_end = windows
            .iter()
            .map(|&(_, end)| {
                latest = latest.max(end);
                latest
            })
            .collect();
        Outages {
            starts: windows.iter().map(|&(start, _)| start).collect(),
            latest_end,
            known: (0, 0, false),
        }
    }

    /// Whether some window holds `t` (its start included, its end not).
    #[inline]
    pub(super) fn contains(&mut self, t: Millis) -> bool {
        let (from, to, inside) = self.known;
        if from <= t && t < to {
            return inside;
        }
        self.known = self.span(t);
        self.known.2
    }

    /// Whether some window holds `t`, and the span of times around `t`
    /// with the same answer: inside, from the latest start at or before
    /// `t` to the latest end of the windows started by then (a later
    /// window starting before that end only extends it); outside, from
    /// that end (or 0) to the next start (or forever).
    fn span(&self, t: Millis) -> (Millis, Millis, bool) {
        crate::meter::search(self.starts.len());
        let started = self.starts.partition_point(|&s| s <= t);
        let next_start = self.starts.get(started).copied().unwrap_or(Millis::MAX);
        if started == 0 {
            return (0, next_start, false);
        }
        let end = self.latest_end[started - 1];
        if end > t {
            (self.starts[started - 1], end, true)
        } else {
            (end, next_start, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_every_window_checked_one_by_one() {
        // Overlapping, nested, adjacent, empty and out-of-order windows.
        let windows = [
            (50, 10),
            (0, 5),
            (5, 5),
            (20, 30),
            (25, 2),
            (70, 0),
            (100, 1),
        ];
        let outages: Vec<Outage> = windows
            .iter()
            .map(|&(from, duration)| Outage { from, duration })
            .collect();
        let naive = |t: Millis| outages.iter().any(|o| o.contains(t));
        // Forward, backward, and jumping about: the kept answer never
        // stands in for a time outside its span.
        let mut index = Outages::new(&outages);
        for t in (0..120).chain((0..120).rev()) {
            assert_eq!(index.contains(t), naive(t), "t = {t}");
        }
        for k in 0..2_000u64 {
            let t = k * 7_919 % 131;
            assert_eq!(index.contains(t), naive(t), "t = {t}");
        }
        let mut none = Outages::new(&[]);
        assert!(!none.contains(0));
        assert!(!none.contains(Millis::MAX));
    }
}
