//! What a write's shape fixes for the whole run, derived once from
//! `[write]` and the sinks' calls: the order calls are made in (for
//! compensations in reverse), which sinks take part in two-phase commit,
//! which `every` selectors and corrective notices to watch for, and what
//! lets a write be made at its commit (`plain.rs`).

use crate::model::{CallSelector, Millis, PlanStep, Strategy, Write};

#[derive(Clone)]
pub(super) struct Layout {
    /// The sinks in the order their calls are made (file order, but for a
    /// mixed write's `irreversible_last`), and each sink's place in it.
    pub(super) order: Vec<u32>,
    pub(super) pos_of: Vec<u32>,
    /// The sinks that take part in two-phase commit: every sink under
    /// two_phase, the two_phase sinks of a mixed write.
    pub(super) tp_mask: u64,
    /// The sinks whose `every` selector numbers intents by their first
    /// write call: a call made ahead of its instant must not pass another
    /// write's call there.
    pub(super) every_sinks: u64,
    /// The irreversible sinks that take a corrective notice (28.16).
    pub(super) corrective: u64,
    /// The least time a write's delivery waits for its calls (the
    /// latencies of the calls it makes before it is done).
    pub(super) least_took: Millis,
    /// A mixed write without a two-phase step whose every call is made at
    /// its commit instant (its steps take no time, and no irreversible
    /// outbox sink waits for a reply that takes time).
    pub(super) plan_at_once: bool,
    /// Whether the last call a write's delivery waits for takes no time
    /// while an earlier one does: the result is then stored in that
    /// call's own event, at the instant it is seen, and an event of that
    /// instant scheduled before the call does not see it (section 1).
    pub(super) seen_at_a_call: bool,
}

impl Layout {
    pub(super) fn of(write: &Write) -> Layout {
        let n = write.sinks.len();
        let mask = |keep: &dyn Fn(usize) -> bool| {
            (0..n).filter(|&k| keep(k)).fold(0u64, |m, k| m | 1 << k)
        };
        let latency = |m: u64| -> Millis {
            (0..n)
                .filter(|k| m & (1 << k) != 0)
                .map(|k| write.sinks[k].latency)
                .sum()
        };
        let order: Vec<u32> = match &write.plan {
            Some(plan) => plan.order.clone(),
            None => (0..n as u32).collect(),
        };
        let mut pos_of = vec![0u32; n];
        for (i, &k) in order.iter().enumerate() {
            pos_of[k as usize] = i as u32;
        }
        // The last call the delivery waits for, in the order calls are made.
        let last_waited = match &write.plan {
            Some(plan) => plan.steps.iter().rev().find_map(|s| match *s {
                PlanStep::Call(k) => Some(k as usize),
                PlanStep::TwoPhase => None,
            }),
            None => order.last().map(|&k| k as usize),
        };
        let (tp_mask, least_took, plan_at_once) = match &write.plan {
            Some(plan) => {
                let steps = (plan.steps.iter()).fold(0u64, |m, s| match *s {
                    PlanStep::Call(k) => m | 1 << k,
                    PlanStep::TwoPhase => m,
                });
                let at_once = plan.two_phase == 0
                    && latency(steps) == 0
                    && (plan.gated == 0 || latency(plan.outbox & !plan.gated) == 0);
                (plan.two_phase, latency(steps), at_once)
            }
            None => {
                let tp = match write.strategy {
                    Strategy::TwoPhase => mask(&|_| true),
                    _ => 0,
                };
                (tp, latency(mask(&|_| true)), false)
            }
        };
        Layout {
            order,
            pos_of,
            tp_mask,
            every_sinks: mask(&|k| {
                (write.sinks[k].faults.iter())
                    .any(|f| !f.compensation && matches!(f.selector, CallSelector::Every(_)))
            }),
            corrective: mask(&|k| write.sinks[k].corrective_notice),
            least_took,
            plan_at_once,
            seen_at_a_call: least_took > 0
                && last_waited.is_some_and(|k| write.sinks[k].latency == 0),
        }
    }
}
