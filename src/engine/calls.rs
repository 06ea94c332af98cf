//! Calls to the downstream, counted in fixed windows [k * per, (k + 1) *
//! per) (docs/model.md section 13, decision 16.5). Deliveries start in
//! time order, so only the current window is kept: O(1) per call.

use crate::model::{Millis, Scenario, Totals};

pub(super) struct Calls {
    per: Millis,
    /// Calls accepted per window; `None`: unlimited.
    limit: Option<u64>,
    /// The current window's end (exclusive).
    window_end: Millis,
    offered: u64,
    accepted: u64,
}

/// What the downstream did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Call {
    Accepted,
    Throttled,
}

impl Calls {
    pub(super) fn new(scenario: &Scenario) -> Self {
        Calls {
            per: scenario.flow.call_window.max(1),
            limit: scenario.flow.downstream.map(|d| d.limit),
            window_end: 0,
            offered: 0,
            accepted: 0,
        }
    }

    fn enter(&mut self, t: Millis, totals: &mut Totals) {
        // Deliveries start in time order: a later window starts afresh.
        if t >= self.window_end {
            self.window_end = (t / self.per).saturating_add(1).saturating_mul(self.per);
            self.offered = 0;
            self.accepted = 0;
        }
        self.offered += 1;
        totals.calls_offered += 1;
        totals.peak_offered = totals.peak_offered.max(self.offered);
    }

    /// A call offered at `t` while the downstream is down: it fails.
    pub(super) fn offer_during_outage(&mut self, t: Millis, totals: &mut Totals) {
        self.enter(t, totals);
    }

    /// A call offered at `t`: accepted unless its window has already
    /// accepted the limit.
    pub(super) fn offer(&mut self, t: Millis, totals: &mut Totals) -> Call {
        self.enter(t, totals);
        if self.limit.is_some_and(|limit| self.accepted >= limit) {
            totals.throttled += 1;
            Call::Throttled
        } else {
            self.accepted += 1;
            totals.calls_accepted += 1;
            Call::Accepted
        }
    }
}
