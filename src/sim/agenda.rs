//! An agenda: entries due at a modeled time, taken earliest first, for a world whose
//! entries mostly come back after one of a few fixed delays: a first-in,
//! first-out queue per delay ([`MAX_FIFOS`] at most), and a radix heap
//! for the rest. The queue world's schedule is one (retries without
//! jitter, ends after a fixed service time and redrives come out of the
//! queues; jittered retries out of the heap), and so are the ends of the
//! deliveries it settles at their start, whose durations are their sinks'
//! latencies.
//!
//! It relies on what such a world guarantees: nothing is added before the
//! current time (the time of the last entry taken, or later), and within
//! one delay the entries are added in the order they are due, so each
//! queue's front is its earliest and taking it is O(1). Entries are
//! taken in their full order (time first, then the rest of the entry), as
//! a comparison heap would take them.

use super::radix::{RadixHeap, Timed};
use crate::model::Millis;

/// The most fixed delays that get a queue of their own; entries after any
/// other delay go to the heap.
pub const MAX_FIFOS: usize = 16;

/// A queue gives back the room of the entries taken from its front once
/// they are this many and at least half of it.
const SLACK: usize = 1024;

/// Entries added with one delay, in the order they were added (and so in
/// the order they are due); those before `head` have been taken. It keeps
/// fewer than twice its entries due and [`SLACK`] more.
#[derive(Debug, Clone)]
struct Fifo<T> {
    delay: Millis,
    entries: Vec<T>,
    head: usize,
}

impl<T: Copy> Fifo<T> {
    #[inline(always)]
    fn front(&self) -> Option<&T> {
        self.entries.get(self.head)
    }

    #[inline(always)]
    fn pop_front(&mut self) {
        self.head += 1;
        if self.head >= SLACK && 2 * self.head >= self.entries.len() {
            self.entries.drain(..self.head);
            self.head = 0;
        }
    }
}

/// Where the earliest entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Heap,
    Fifo(usize),
}

#[derive(Clone)]
pub struct Agenda<T> {
    heap: RadixHeap<T>,
    fifos: Vec<Fifo<T>>,
    /// At most this many fifos (at most [`MAX_FIFOS`]).
    max_fifos: usize,
    /// The earliest entry and its place, when known (`Some(None)`: none
    /// is due); forgotten when an entry is taken.
    earliest: Option<Option<(Place, T)>>,
    len: usize,
}

impl<T: Timed> Agenda<T> {
    /// Nothing due; entries of up to `max_fifos` delays get a queue each.
    pub fn new(max_fifos: usize) -> Self {
        Agenda {
            heap: RadixHeap::new(),
            fifos: Vec::new(),
            max_fifos: max_fifos.min(MAX_FIFOS),
            earliest: Some(None),
            len: 0,
        }
    }

    /// Entries due, taken or not yet.
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The delays that have a queue of their own.
    #[cfg(test)]
    pub fn fifos(&self) -> usize {
        self.fifos.len()
    }

    /// Adds `e`, due `e.at() - now` after `now`: in the queue of that
    /// delay, or in the heap when `by_delay` is false (a drawn delay,
    /// which would only take up a queue) or no queue is left for it.
    #[inline(always)]
    pub fn add(&mut self, now: Millis, e: T, by_delay: bool) {
        self.len += 1;
        let delay = e.at().saturating_sub(now);
        let fifo = match self.fifos.iter().position(|f| f.delay == delay) {
            _ if !by_delay => None,
            Some(k) => Some(k),
            None if self.fifos.len() < self.max_fifos => {
                self.fifos.push(Fifo {
                    delay,
                    entries: Vec::new(),
                    head: 0,
                });
                Some(self.fifos.len() - 1)
            }
            None => None,
        };
        let place = match fifo {
            // Within a queue times never go back: `now` never does.
            Some(k)
                if self.fifos[k]
                    .entries
                    .last()
                    .is_none_or(|b| b.at() <= e.at()) =>
            {
                self.fifos[k].entries.push(e);
                Place::Fifo(k)
            }
            _ => {
                self.heap.push(e);
                Place::Heap
            }
        };
        // The new entry is the earliest if it is before the known one.
        if let Some(known) = self.earliest
            && known.is_none_or(|(_, b)| e < b)
        {
            self.earliest = Some(Some((place, e)));
        }
    }

    /// The earliest entry and its place: the heap's top or a queue's front.
    #[inline(always)]
    fn earliest(&mut self) -> Option<(Place, T)> {
        match self.earliest {
            Some(known) => known,
            None => self.find_earliest(),
        }
    }

    /// Looks for the earliest entry among the heap's top and the queues'
    /// fronts, and keeps it.
    #[inline]
    fn find_earliest(&mut self) -> Option<(Place, T)> {
        let mut best: Option<(Place, T)> = self.heap.peek().map(|e| (Place::Heap, *e));
        for (k, fifo) in self.fifos.iter().enumerate() {
            if let Some(e) = fifo.front()
                && best.is_none_or(|(_, b)| *e < b)
            {
                best = Some((Place::Fifo(k), *e));
            }
        }
        self.earliest = Some(best);
        best
    }

    /// The earliest entry, without taking it.
    #[inline(always)]
    pub fn peek(&mut self) -> Option<T> {
        self.earliest().map(|(_, e)| e)
    }

    /// Takes the earliest entry.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        let (place, e) = self.earliest()?;
        match place {
            Place::Heap => {
                self.heap.pop();
            }
            Place::Fifo(k) => {
                self.fifos[k].pop_front();
            }
        }
        self.earliest = None;
        self.len -= 1;
        Some(e)
    }

    /// Takes every entry due at or before `now`; returns how many are
    /// left. Each queue's front and the heap's top are read until they
    /// are after `now`: as many steps as entries taken, and one per queue.
    #[inline]
    pub fn pass(&mut self, now: Millis) -> usize {
        if self.len == 0 {
            return 0;
        }
        let mut taken = 0;
        for fifo in &mut self.fifos {
            let mut h = fifo.head;
            while fifo.entries.get(h).is_some_and(|e| e.at() <= now) {
                h += 1;
            }
            taken += h - fifo.head;
            fifo.head = h;
            if h >= SLACK && 2 * h >= fifo.entries.len() {
                fifo.entries.drain(..h);
                fifo.head = 0;
            }
        }
        while self.heap.peek().is_some_and(|e| e.at() <= now) {
            self.heap.pop();
            taken += 1;
        }
        if taken > 0 {
            self.earliest = None;
            self.len -= taken;
        }
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn takes_in_the_order_of_a_comparison_heap_whatever_the_delays() {
        // Entries added at or after the current time, some of a few fixed
        // delays (queued), some drawn (the heap), more delays than queues.
        for seed in 0..100u64 {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut due = Agenda::new(3);
            let mut heap = BinaryHeap::new();
            let (mut now, mut sequence) = (0, 0u64);
            for _ in 0..500 {
                match next() % 10 {
                    0..=4 => {
                        let (delay, by_delay) = match next() % 3 {
                            0 => ([0, 10, 250, 1_000, 7][next() as usize % 5], true),
                            _ => (next() % 5_000, false),
                        };
                        let e = (now + delay, sequence);
                        sequence += 1;
                        due.add(now, e, by_delay);
                        heap.push(Reverse(e));
                    }
                    5 => now += next() % 100,
                    _ => {
                        assert_eq!(due.peek(), heap.peek().map(|Reverse(e)| *e), "seed {seed}");
                        if let Some(Reverse(e)) = heap.pop() {
                            now = now.max(e.0);
                            assert_eq!(due.pop(), Some(e), "seed {seed}");
                        }
                    }
                }
                assert_eq!(due.len(), heap.len());
            }
            while let Some(Reverse(e)) = heap.pop() {
                assert_eq!(due.pop(), Some(e), "seed {seed}");
            }
            assert!(due.is_empty());
        }
    }

    #[test]
    fn a_queue_keeps_little_more_than_its_entries_due() {
        // A long run of entries 10 ms after their time, one a millisecond:
        // 10 due once under way, and a queue never keeps twice those and
        // the slack.
        let mut due = Agenda::new(1);
        for now in 0..100_000u64 {
            due.add(now, now + 10, true);
            assert_eq!(due.pass(now), (now as usize + 1).min(10));
            let kept = due.fifos[0].entries.len();
            assert!(kept < 2 * 10 + SLACK, "{kept} kept at {now}");
        }
    }

    #[test]
    fn passing_a_time_takes_what_is_due_by_then() {
        let mut due = Agenda::new(2);
        for (now, end) in [(0, 5), (0, 7), (1, 6), (2, 4), (3, 40)] {
            due.add(now, end, true);
        }
        assert_eq!(due.pass(3), 5);
        assert_eq!(due.pass(5), 3);
        assert_eq!(due.pass(6), 2);
        assert_eq!(due.pass(39), 1);
        assert_eq!(due.pass(40), 0);
    }
}
