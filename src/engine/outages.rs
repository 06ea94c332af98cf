//! Whether the downstream is in an `[[outage]]` at an instant, in
//! O(log n) for n windows: windows sorted by start, with the latest end of
//! any window starting at or before each one.

use crate::model::{Millis, Outage};

pub(super) struct Outages {
    /// Starts, ascending.
    starts: Vec<Millis>,
    /// `latest_end[i]`: the latest end (excluded) of windows `0..=i`.
    latest_end: Vec<Millis>,
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
        }
    }

    /// Whether some window holds `t` (its start included, its end not).
    pub(super) fn contains(&self, t: Millis) -> bool {
        crate::meter::search(self.starts.len());
        let started = self.starts.partition_point(|&s| s <= t);
        started > 0 && self.latest_end[started - 1] > t
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
        let index = Outages::new(&outages);
        for t in 0..120 {
            let naive = outages.iter().any(|o| o.contains(t));
            assert_eq!(index.contains(t), naive, "t = {t}");
        }
        assert!(!Outages::new(&[]).contains(0));
    }
}
