//! Calls to the downstream, counted in fixed windows [k * per, (k + 1) *
//! per) (docs/model.md section 13, decision 16.5). Deliveries start in
//! time order, so only the current window is counted: O(1) per call. The
//! windows are also kept as a series for charts and tables, at most
//! [`CALL_SERIES_ROWS`] rows whatever the run's length: past that, pairs
//! of rows merge (each row then spans twice as many windows, and keeps
//! the busiest window's count).

use crate::model::{Millis, Scenario, Totals};

/// The most rows of the calls series.
pub const CALL_SERIES_ROWS: usize = 1_000;

/// Calls over a span of windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallRow {
    /// The span's first window starts here.
    pub start: Millis,
    pub offered: u64,
    pub accepted: u64,
    /// The most calls offered in one window of the span.
    pub busiest: u64,
}

/// The calls of a run, per window (or per span of windows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSeries {
    /// The window's length.
    pub per: Millis,
    /// Windows per row (a power of two).
    pub windows_per_row: u64,
    /// Rows with at least one call, in time order.
    pub rows: Vec<CallRow>,
    /// The first window offered the most calls, and how many of its calls
    /// were retries.
    pub peak_window: Option<Millis>,
    pub peak_retries: u64,
}

#[derive(Clone)]
pub(super) struct Calls {
    /// Whether the calls are counted window by window
    /// ([`Scenario::wants_call_windows`]); otherwise only the totals are.
    windows: bool,
    per: Millis,
    /// Calls accepted per window; `None`: unlimited.
    limit: Option<u64>,
    /// The current window's start and end (exclusive).
    window_start: Millis,
    window_end: Millis,
    offered: u64,
    accepted: u64,
    retries: u64,
    /// The most calls a closed window offered.
    peak_offered: u64,
    pub(super) series: CallSeries,
}

/// What the downstream did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Call {
    Accepted,
    Throttled,
}

impl Calls {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let per = scenario.flow.call_window.max(1);
        Calls {
            windows: scenario.wants_call_windows(),
            per,
            limit: scenario.flow.downstream.map(|d| d.limit),
            window_start: 0,
            window_end: 0,
            offered: 0,
            accepted: 0,
            retries: 0,
            peak_offered: 0,
            series: CallSeries {
                per,
                windows_per_row: 1,
                ..CallSeries::default()
            },
        }
    }

    #[inline]
    fn enter(&mut self, t: Millis, retry: bool, totals: &mut Totals) {
        totals.calls_offered += 1;
        if !self.windows {
            return;
        }
        // Deliveries start in time order: a later window starts afresh.
        if t >= self.window_end {
            self.close_window();
            self.window_start = if t < self.window_end.saturating_add(self.per) {
                // The next window (most often): no division.
                self.window_end
            } else {
                (t / self.per).saturating_mul(self.per)
            };
            self.window_end = self.window_start.saturating_add(self.per);
            self.offered = 0;
            self.accepted = 0;
            self.retries = 0;
        }
        self.offered += 1;
        self.retries += retry as u64;
    }

    /// Adds the current window to the series; the first window that
    /// offered more calls than every earlier one is the peak.
    #[inline(never)]
    fn close_window(&mut self) {
        if self.offered == 0 {
            return;
        }
        if self.offered > self.peak_offered {
            self.peak_offered = self.offered;
            self.series.peak_window = Some(self.window_start);
            self.series.peak_retries = self.retries;
        }
        let span = self.per.saturating_mul(self.series.windows_per_row);
        let rows = &mut self.series.rows;
        match rows.last_mut() {
            // Windows close in time order: the last row's span holds this
            // window, or a later row starts.
            Some(row) if self.window_start < row.start.saturating_add(span) => {
                row.offered += self.offered;
                row.accepted += self.accepted;
                row.busiest = row.busiest.max(self.offered);
            }
            _ => rows.push(CallRow {
                start: self.window_start - self.window_start % span.max(1),
                offered: self.offered,
                accepted: self.accepted,
                busiest: self.offered,
            }),
        }
        if rows.len() > CALL_SERIES_ROWS {
            self.series.windows_per_row *= 2;
            let span = self.per.saturating_mul(self.series.windows_per_row);
            let mut merged: Vec<CallRow> = Vec::with_capacity(rows.len() / 2 + 1);
            for row in rows.drain(..) {
                let start = row.start - row.start % span.max(1);
                match merged.last_mut() {
                    Some(m) if m.start == start => {
                        m.offered += row.offered;
                        m.accepted += row.accepted;
                        m.busiest = m.busiest.max(row.busiest);
                    }
                    _ => merged.push(CallRow { start, ..row }),
                }
            }
            *rows = merged;
        }
    }

    /// Whether a call can be refused (a downstream's limit).
    pub(super) fn limited(&self) -> bool {
        self.limit.is_some()
    }

    /// A call offered at `t` while the downstream is down: it fails.
    pub(super) fn offer_during_outage(&mut self, t: Millis, retry: bool, totals: &mut Totals) {
        self.enter(t, retry, totals);
    }

    /// A call offered at `t`: accepted unless its window has already
    /// accepted the limit.
    #[inline]
    pub(super) fn offer(&mut self, t: Millis, retry: bool, totals: &mut Totals) -> Call {
        self.enter(t, retry, totals);
        if self.limit.is_some_and(|limit| self.accepted >= limit) {
            totals.throttled += 1;
            Call::Throttled
        } else {
            self.accepted += 1;
            totals.calls_accepted += 1;
            Call::Accepted
        }
    }

    /// The series, the last window included; the peak goes to `totals`.
    pub(super) fn finish(mut self, totals: &mut Totals) -> CallSeries {
        self.close_window();
        totals.peak_offered = self.peak_offered;
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_str;

    /// The series and totals of `offers` (time, whether a retry), in
    /// windows of 1s, for a file that expects `peak_offered` (so that the
    /// windows are counted).
    fn offered(offers: impl IntoIterator<Item = (Millis, bool)>) -> (CallSeries, Totals) {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n[[message]]\nid = \"a\"\n\
             [expect]\npeak_offered = 1\n",
        )
        .unwrap();
        let mut calls = Calls::new(&scenario);
        let mut totals = Totals::default();
        for (t, retry) in offers {
            calls.offer(t, retry, &mut totals);
        }
        (calls.finish(&mut totals), totals)
    }

    #[test]
    fn the_series_stays_bounded_and_keeps_every_call() {
        // 5,000 windows of 1s with 1 to 3 calls each.
        let (series, totals) = offered(
            (0..5_000u64).flat_map(|w| (0..(w % 3 + 1)).map(move |c| (w * 1_000 + c, c > 0))),
        );
        assert!(series.rows.len() <= CALL_SERIES_ROWS);
        assert_eq!(series.windows_per_row, 8);
        let in_rows: u64 = series.rows.iter().map(|r| r.offered).sum();
        assert_eq!(in_rows, totals.calls_offered);
        assert_eq!(in_rows, 5_000 / 3 * 6 + 3);
        assert_eq!(totals.peak_offered, 3);
        assert!(series.rows.iter().all(|r| r.busiest == 3));
        // The first window offered 3 calls is [2s, 3s); 2 were retries.
        assert_eq!((series.peak_window, series.peak_retries), (Some(2_000), 2));
    }

    #[test]
    fn a_call_after_idle_windows_opens_its_own_window() {
        // Windows of 1s: [0s, 1s) one call, four idle, [5s, 6s) two (one a
        // retry), then the next window [6s, 7s) one.
        let (series, totals) = offered([(0, false), (5_500, false), (5_900, true), (6_000, false)]);
        let rows: Vec<(Millis, u64)> = series.rows.iter().map(|r| (r.start, r.offered)).collect();
        assert_eq!(rows, [(0, 1), (5_000, 2), (6_000, 1)]);
        assert_eq!((series.peak_window, series.peak_retries), (Some(5_000), 1));
        assert_eq!(totals.peak_offered, 2);
    }
}
