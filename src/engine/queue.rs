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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_str;

    #[test]
    fn nothing_is_taken_before_it_is_due_and_ties_keep_their_order() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
             [[message]]\nid = \"a\"\nat = \"10s\"\n",
        )
        .unwrap();
        let mut queue = SourceQueue::new(&scenario);
        queue.put_back(5_000, 7);
        queue.put_back(5_000, 3);
        assert_eq!(queue.next_due(), Some(5_000));
        assert_eq!(queue.pending(), 3);
        assert_eq!(queue.take(4_999), None);
        let taken = |message, arrival| Some(Taken { message, arrival });
        assert_eq!(queue.take(5_000), taken(7, false));
        assert_eq!(queue.take(5_000), taken(3, false));
        assert_eq!(queue.take(5_000), None);
        assert_eq!(queue.next_due(), Some(10_000));
        queue.put_back(10_000, 3);
        // The arrival was scheduled before the run: it goes first.
        assert_eq!(queue.take(10_000), taken(0, true));
        assert_eq!(queue.take(10_000), taken(3, false));
        assert_eq!(queue.next_due(), None);
        assert_eq!(queue.pending(), 0);
    }
}
