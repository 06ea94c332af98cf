//! First deliveries, produced lazily in scheduling order: explicit messages
//! by (time, file order), then each generator's messages, merged by time
//! with earlier streams first on ties (a heap of each stream's next
//! arrival, so thousands of `[[traffic]]` blocks cost O(log n) an arrival). Nothing is queued up front for even
//! arrivals, so a generator of millions costs no memory until its messages
//! arrive; Poisson arrivals keep their drawn, sorted offsets.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use super::traffic::{BlockOffsets, Offsets};
use crate::model::{MessageIndex, Millis, Scenario};

#[derive(Clone)]
pub(super) struct Arrivals {
    /// Explicit messages sorted by (arrival, file order).
    explicit: Vec<(Millis, MessageIndex)>,
    next_explicit: usize,
    /// Per generator: its messages, the next one's number and arrival.
    generators: Vec<Generator>,
    /// The next arrival of all: (time, stream, message); stream 0 is the
    /// explicit messages, stream g + 1 the g-th generator.
    first: Option<(Millis, usize, MessageIndex)>,
    /// The other streams' next arrivals. A stream whose next arrival is
    /// still the first stays out of the heap, so a file with one stream
    /// (most) never touches it.
    heads: BinaryHeap<Reverse<(Millis, usize, MessageIndex)>>,
}

#[derive(Clone)]
struct Generator {
    first: MessageIndex,
    count: u64,
    next: u64,
    start: Millis,
    /// The offsets from `start` of the messages after `next`.
    offsets: BlockOffsets,
    /// Arrival of message `next`, computed once per advance.
    next_at: Millis,
}

impl Generator {
    fn peek(&self) -> Option<(Millis, MessageIndex)> {
        (self.next <= self.count)
            .then(|| (self.next_at, self.first + (self.next - 1) as MessageIndex))
    }

    /// The arrival of message `next`, which the offsets have not given yet.
    #[inline]
    fn arrival(&mut self) -> Millis {
        self.start.saturating_add(self.offsets.next().unwrap_or(0))
    }

    #[inline]
    fn advance(&mut self) {
        self.next += 1;
        if self.next <= self.count {
            self.next_at = self.arrival();
        }
    }
}

impl Arrivals {
    /// `poisson[k]`: block k's sorted offsets when its arrivals are Poisson.
    pub fn new(scenario: &Scenario, mut poisson: Vec<Option<Arc<Offsets>>>) -> Self {
        let mut explicit: Vec<(Millis, MessageIndex)> = scenario
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.at, i as MessageIndex))
            .collect();
        explicit.sort();
        poisson.resize(scenario.traffic.len(), None);
        let generators = scenario
            .traffic
            .iter()
            .zip(poisson)
            .map(|(g, offsets)| {
                let mut generator = Generator {
                    first: g.first_index,
                    count: g.count,
                    next: 1,
                    start: g.start,
                    offsets: BlockOffsets::of(g, offsets),
                    next_at: 0,
                };
                if g.count > 0 {
                    generator.next_at = generator.arrival();
                }
                generator
            })
            .collect();
        let mut a = Arrivals {
            explicit,
            next_explicit: 0,
            generators,
            first: None,
            heads: BinaryHeap::new(),
        };
        a.push_next(0);
        for g in 0..a.generators.len() {
            a.push_next(g + 1);
        }
        a.first = a.heads.pop().map(|Reverse(h)| h);
        a
    }

    /// Puts stream `stream`'s next arrival, if any, among the heads.
    fn push_next(&mut self, stream: usize) {
        let next = match stream {
            0 => self.explicit.get(self.next_explicit).copied(),
            g => self.generators[g - 1].peek(),
        };
        if let Some((t, m)) = next {
            self.heads.push(Reverse((t, stream, m)));
        }
    }

    #[inline]
    pub fn peek(&self) -> Option<(Millis, MessageIndex)> {
        self.first.map(|(t, _, m)| (t, m))
    }

    #[inline(always)]
    pub fn pop(&mut self) {
        let Some((_, stream, _)) = self.first else {
            return;
        };
        let next = if stream == 0 {
            self.next_explicit += 1;
            self.explicit.get(self.next_explicit).copied()
        } else {
            let g = &mut self.generators[stream - 1];
            g.advance();
            g.peek()
        };
        let next = next.map(|(t, m)| (t, stream, m));
        // The same stream stays first while it is before every other head.
        self.first = match (next, self.heads.peek()) {
            (Some(n), Some(Reverse(top))) if *top < n => {
                let top = self.heads.pop().map(|Reverse(h)| h);
                self.heads.push(Reverse(n));
                top
            }
            (Some(n), _) => Some(n),
            (None, _) => self.heads.pop().map(|Reverse(h)| h),
        };
    }

    #[cfg(test)]
    pub fn remaining(&self) -> u64 {
        (self.explicit.len() - self.next_explicit) as u64
            + self
                .generators
                .iter()
                .map(|g| g.count + 1 - g.next.min(g.count + 1))
                .sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_merge_by_time_with_earlier_streams_first_on_ties() {
        // Two explicit messages and three generators whose arrivals meet.
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [[message]]\nid = \"late\"\nat = \"2s\"\n\
                    [[message]]\nid = \"early\"\nat = \"0s\"\n\
                    [[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"a\"\n\
                    [[traffic]]\ncount = 2\nover = \"2s\"\nid_prefix = \"b\"\n\
                    [[traffic]]\ncount = 4\nover = \"2s\"\nstart = \"1s\"\nid_prefix = \"c\"\n";
        let (scenario, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let mut arrivals = Arrivals::new(&scenario, Vec::new());
        let mut seen = Vec::new();
        while let Some((t, m)) = arrivals.peek() {
            seen.push((t, scenario.message_id(m).into_owned()));
            arrivals.pop();
        }
        let expected = [
            (0, "early"),
            (0, "a1"),
            (0, "b1"),
            (1000, "a2"),
            (1000, "b2"),
            (1000, "c1"),
            (1500, "c2"),
            (2000, "late"),
            (2000, "a3"),
            (2000, "c3"),
            (2500, "c4"),
        ];
        let expected: Vec<(Millis, String)> = expected
            .iter()
            .map(|&(t, id)| (t, id.to_string()))
            .collect();
        assert_eq!(seen, expected);
        assert_eq!(arrivals.remaining(), 0);
    }
}
