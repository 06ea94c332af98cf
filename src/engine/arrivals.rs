//! First deliveries, produced lazily in scheduling order: explicit messages
//! by (time, file order), then each generator's messages, merged by time
//! with earlier streams first on ties. Nothing is queued up front for even
//! arrivals, so a generator of millions costs no memory until its messages
//! arrive; Poisson arrivals keep their drawn, sorted offsets.

use std::sync::Arc;

use super::traffic::Offsets;
use crate::model::{MessageIndex, Millis, Scenario, even_arrival};

pub(super) struct Arrivals {
    /// Explicit messages sorted by (arrival, file order).
    explicit: Vec<(Millis, MessageIndex)>,
    next_explicit: usize,
    /// Per generator: (first index, count, next number j from 1, over).
    generators: Vec<Generator>,
    head: Option<(Millis, MessageIndex, usize)>,
}

struct Generator {
    first: MessageIndex,
    count: u64,
    next: u64,
    start: Millis,
    over: Millis,
    /// Poisson arrivals: the sorted offsets from `start`.
    offsets: Option<Arc<Offsets>>,
    /// Arrival of message `next`, computed once per advance.
    next_at: Millis,
}

impl Generator {
    fn peek(&self) -> Option<(Millis, MessageIndex)> {
        (self.next <= self.count)
            .then(|| (self.next_at, self.first + (self.next - 1) as MessageIndex))
    }

    #[inline]
    fn arrival(&self, j: u64) -> Millis {
        let offset = match &self.offsets {
            Some(offsets) => offsets.get(j),
            None => even_arrival(j, self.over, self.count),
        };
        self.start.saturating_add(offset)
    }

    fn advance(&mut self) {
        self.next += 1;
        if self.next <= self.count {
            self.next_at = self.arrival(self.next);
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
                    over: g.over,
                    offsets,
                    next_at: 0,
                };
                if g.count > 0 {
                    generator.next_at = generator.arrival(1);
                }
                generator
            })
            .collect();
        let mut a = Arrivals {
            explicit,
            next_explicit: 0,
            generators,
            head: None,
        };
        a.refresh();
        a
    }

    /// Stream 0 is the explicit messages, stream g + 1 the g-th generator.
    fn refresh(&mut self) {
        let mut best = self
            .explicit
            .get(self.next_explicit)
            .map(|&(t, m)| (t, m, 0usize));
        for (g, gen_) in self.generators.iter().enumerate() {
            if let Some((t, m)) = gen_.peek()
                && best.is_none_or(|(bt, _, _)| t < bt)
            {
                best = Some((t, m, g + 1));
            }
        }
        self.head = best;
    }

    #[inline]
    pub fn peek(&self) -> Option<(Millis, MessageIndex)> {
        self.head.map(|(t, m, _)| (t, m))
    }

    pub fn pop(&mut self) {
        if let Some((_, _, stream)) = self.head {
            if stream == 0 {
                self.next_explicit += 1;
            } else {
                self.generators[stream - 1].advance();
            }
            self.refresh();
        }
    }

    pub fn remaining(&self) -> u64 {
        (self.explicit.len() - self.next_explicit) as u64
            + self
                .generators
                .iter()
                .map(|g| g.count + 1 - g.next.min(g.count + 1))
                .sum::<u64>()
    }
}
