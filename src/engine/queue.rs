//! The source queue: where each message waits for its next delivery. First
//! deliveries come from the arrivals (produced lazily, in scheduling
//! order); retries and redrives are put back due at a later time. Its
//! interface is what a consumer needs and no more: when is the next
//! delivery due, take it, put a message back. A worker pool, ordering
//! groups or a faster priority queue replace what is behind it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::arrivals::Arrivals;
use crate::model::{MessageIndex, Millis, Scenario};

/// A message taken for delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Taken {
    pub(super) message: MessageIndex,
    /// Its first delivery (it has just arrived), not a retry or a redrive.
    pub(super) arrival: bool,
}

pub(super) struct SourceQueue {
    arrivals: Arrivals,
    /// Retries and redrives: (due, sequence, message). The sequence, global
    /// and increasing, breaks ties in scheduling order (docs/model.md section 1).
    due: BinaryHeap<Reverse<(Millis, u64, MessageIndex)>>,
    sequence: u64,
}

impl SourceQueue {
    pub(super) fn new(scenario: &Scenario) -> Self {
        SourceQueue {
            arrivals: Arrivals::new(scenario),
            due: BinaryHeap::new(),
            sequence: 0,
        }
    }

    /// When the next delivery is due, if any is.
    #[inline]
    pub(super) fn next_due(&self) -> Option<Millis> {
        let arrival = self.arrivals.peek().map(|(t, _)| t);
        let put_back = self.due.peek().map(|Reverse((t, _, _))| *t);
        match (arrival, put_back) {
            (Some(a), Some(p)) => Some(a.min(p)),
            (Some(t), None) | (None, Some(t)) => Some(t),
            (None, None) => None,
        }
    }

    /// Takes the message whose delivery is due at `now`. Arrivals were all
    /// scheduled before the run started, so they win ties (decision 10.1).
    #[inline]
    pub(super) fn take(&mut self, now: Millis) -> Option<Taken> {
        if let Some((at, message)) = self.arrivals.peek()
            && at == now
        {
            self.arrivals.pop();
            return Some(Taken {
                message,
                arrival: true,
            });
        }
        match self.due.peek() {
            Some(Reverse((at, _, _))) if *at <= now => {
                let Reverse((_, _, message)) = self.due.pop()?;
                Some(Taken {
                    message,
                    arrival: false,
                })
            }
            _ => None,
        }
    }

    /// Puts a message back, due for delivery at `at` (a retry or a redrive).
    #[inline]
    pub(super) fn put_back(&mut self, at: Millis, message: MessageIndex) {
        self.sequence += 1;
        self.due.push(Reverse((at, self.sequence, message)));
    }

    /// Deliveries still due: arrivals to come, retries and redrives.
    pub(super) fn pending(&self) -> u64 {
        self.due.len() as u64 + self.arrivals.remaining()
    }
}
