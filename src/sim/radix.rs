//! A monotone priority queue over modeled time (a radix heap): what a
//! [`super::Agenda`] keeps for entries whose delay has no queue of its own
//! (jittered retries, mostly). Entries are taken in their full order
//! (time, then the rest of the entry: the scheduling sequence), as a
//! comparison heap would take them, at O(1) a push and amortised
//! O(log of the time span) a take instead of O(log n) comparisons of
//! wide entries each way.
//!
//! It relies on what the engine guarantees: nothing is scheduled before
//! the current time, and an entry is taken only when it is due (at the
//! current time). `last`, the time of the last entry taken, is therefore
//! never after any entry, present or future. An entry at time t sits in
//! bucket b when the highest bit in which t differs from `last` is bit b;
//! every entry of bucket b is earlier than every entry of bucket b + 1,
//! so the earliest entry is in the lowest bucket that is not empty. Each
//! bucket knows its least entry, so looking at the earliest entry moves
//! nothing (the engine looks before it knows whether a newer entry will
//! come first). Taking from an empty `current` redistributes the lowest
//! bucket around its least time, each entry to a lower bucket, so an
//! entry moves at most 64 times in all; an entry alone in the lowest
//! bucket (the common case when few wait) is taken without a move.

use std::collections::VecDeque;

use crate::model::Millis;

/// An entry with a time; its order must agree with the time first.
pub trait Timed: Copy + Ord {
    fn at(&self) -> Millis;
}

/// A time alone is an entry: the end of something, say.
impl Timed for Millis {
    #[inline]
    fn at(&self) -> Millis {
        *self
    }
}

/// A drained bucket keeps its buffer for reuse up to this many entries;
/// a larger one is freed, so idle buckets hold at most 64 of these.
const KEPT_CAPACITY: usize = 1024;

#[derive(Clone)]
pub struct RadixHeap<T> {
    /// The time of the last entry taken (0 before any): no entry but those
    /// in `current` is before it.
    last: Millis,
    /// The entries at `last` (and any pushed before it), in order.
    current: VecDeque<T>,
    /// Bucket b: the entries whose time differs from `last` first in bit b
    /// (from the top), in no particular order.
    buckets: Vec<Vec<T>>,
    /// Each bucket's least entry (when the bucket is not empty).
    least: Vec<Option<T>>,
    /// Bit b set: bucket b is not empty.
    occupied: u64,
    len: usize,
}

impl<T: Timed> RadixHeap<T> {
    pub fn new() -> Self {
        RadixHeap {
            last: 0,
            current: VecDeque::new(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            least: vec![None; 64],
            occupied: 0,
            len: 0,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds `e`. An entry before the last taken (the last one was taken
    /// ahead of its time: an entry dropped as no event) joins the entries
    /// at `last` in order, ahead of them: every other entry is at or
    /// after `last`.
    #[inline]
    pub fn push(&mut self, e: T) {
        self.len += 1;
        self.place(e);
    }

    fn place(&mut self, e: T) {
        let differ = e.at() ^ self.last;
        if differ == 0 || e.at() < self.last {
            // In the engine always after all: entries of one time are
            // pushed in sequence order and move between buckets together,
            // in that order. Anything else finds its place by search.
            match self.current.back() {
                Some(b) if *b > e => {
                    let i = self.current.partition_point(|x| *x < e);
                    self.current.insert(i, e);
                }
                _ => self.current.push_back(e),
            }
            return;
        }
        let b = 63 - differ.leading_zeros() as usize;
        self.buckets[b].push(e);
        let least = &mut self.least[b];
        if least.is_none_or(|l| e < l) {
            *least = Some(e);
        }
        self.occupied |= 1 << b;
    }

    /// The earliest entry, without moving any.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        if let Some(e) = self.current.front() {
            return Some(e);
        }
        match self.occupied.trailing_zeros() {
            64 => None,
            b => self.least[b as usize].as_ref(),
        }
    }

    /// Takes the earliest entry: the engine takes it when it is due, so
    /// nothing later scheduled can come before it.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.current.is_empty() {
            let b = self.occupied.trailing_zeros() as usize;
            if b == 64 {
                return None;
            }
            let least = self.least[b].take()?;
            self.occupied &= !(1 << b);
            self.last = least.at();
            if self.buckets[b].len() == 1 {
                // Alone in its bucket: taken without a move.
                self.buckets[b].clear();
                self.len -= 1;
                return Some(least);
            }
            let mut entries = std::mem::take(&mut self.buckets[b]);
            for e in entries.drain(..) {
                self.place(e);
            }
            if entries.capacity() <= KEPT_CAPACITY {
                self.buckets[b] = entries;
            }
        }
        let e = self.current.pop_front()?;
        self.len -= 1;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    impl Timed for (Millis, u64) {
        fn at(&self) -> Millis {
            self.0
        }
    }

    /// An entry taken ahead of its time (dropped as no event) leaves the
    /// heap able to take entries before it, in order.
    #[test]
    fn entries_before_one_taken_ahead_of_its_time_come_out_in_order() {
        let mut radix = RadixHeap::new();
        radix.push((10, 0));
        radix.push((69_739, 1));
        assert_eq!(radix.pop(), Some((10, 0)));
        // Taken ahead of its time: `last` moves to 69,739.
        assert_eq!(radix.pop(), Some((69_739, 1)));
        for e in [
            (41_739, 5),
            (40_000, 3),
            (41_739, 4),
            (70_000, 6),
            (69_739, 7),
        ] {
            radix.push(e);
        }
        let taken: Vec<_> = std::iter::from_fn(|| radix.pop()).collect();
        assert_eq!(
            taken,
            [
                (40_000, 3),
                (41_739, 4),
                (41_739, 5),
                (69_739, 7),
                (70_000, 6)
            ]
        );
    }

    #[test]
    fn takes_in_the_order_of_a_comparison_heap() {
        // Pushes at or after the current time (the last taken, or a time
        // moved forward in between) with increasing sequences; takes only
        // when the earliest is due. Delays from 0 to past 2^40, many equal.
        for seed in 0..200u64 {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut radix = RadixHeap::new();
            let mut heap = BinaryHeap::new();
            let mut now: Millis = 0;
            let mut sequence = 0u64;
            for _ in 0..400 {
                match next() % 10 {
                    0..=4 => {
                        let delay = match next() % 4 {
                            0 => 0,
                            1 => next() % 8,
                            2 => next() % 5_000,
                            _ => next() % (1 << 41),
                        };
                        let e = (now + delay, sequence);
                        sequence += 1;
                        radix.push(e);
                        heap.push(Reverse(e));
                    }
                    5 => now += next() % 100,
                    _ => {
                        assert_eq!(radix.peek(), heap.peek().map(|Reverse(e)| e), "seed {seed}");
                        if let Some(&Reverse(e)) = heap.peek() {
                            now = now.max(e.0);
                            heap.pop();
                            assert_eq!(radix.pop(), Some(e), "seed {seed}");
                        }
                    }
                }
                assert_eq!(radix.len(), heap.len());
            }
            while let Some(Reverse(e)) = heap.pop() {
                assert_eq!(radix.pop(), Some(e), "seed {seed}");
            }
            assert_eq!(radix.pop(), None);
            assert_eq!(radix.len(), 0);
        }
    }

    #[test]
    fn emptied_buckets_keep_small_buffers_only() {
        // 100,000 entries spread over a wide span fill the high buckets;
        // once all are taken, no bucket holds more than KEPT_CAPACITY slots.
        let mut radix = RadixHeap::new();
        for i in 0..100_000u64 {
            radix.push(((i * 7_919) % 100_003 * 1_000, i));
        }
        let mut taken = 0;
        while radix.pop().is_some() {
            taken += 1;
        }
        assert_eq!(taken, 100_000);
        let kept: usize = radix.buckets.iter().map(Vec::capacity).sum();
        assert!(kept <= 64 * KEPT_CAPACITY, "{kept} slots kept");
        assert!(radix.buckets.iter().all(|b| b.capacity() <= KEPT_CAPACITY));
    }

    #[test]
    fn entries_at_one_time_keep_their_order_whatever_bucket_they_came_from() {
        let mut radix = RadixHeap::new();
        // Sequence 1 and 2 wait in a high bucket, 3 in a lower one; all at
        // 1,000. A later push at 1,000 (sequence 0, out of order) still
        // comes in its place.
        radix.push((1_000, 2));
        radix.push((1_000, 1));
        radix.push((900, 9));
        radix.push((1_000, 3));
        assert_eq!(radix.pop(), Some((900, 9)));
        assert_eq!(radix.pop(), Some((1_000, 1)));
        radix.push((1_000, 0));
        radix.push((1_000, 7));
        let rest: Vec<_> = std::iter::from_fn(|| radix.pop()).collect();
        assert_eq!(rest, [(1_000, 0), (1_000, 2), (1_000, 3), (1_000, 7)]);
    }
}
