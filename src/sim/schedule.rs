//! What is due: entries ordered by time, then class (a world's own rule
//! for what comes first at one instant), then the order they were
//! scheduled in. Any number of kinds of entry: the world chooses `W`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::model::Millis;

/// A schedule of what a world has still to do.
#[derive(Debug, Clone)]
pub struct Schedule<W> {
    heap: BinaryHeap<Entry<W>>,
    /// Entries scheduled so far: the next one's sequence.
    scheduled: u64,
}

impl<W> Default for Schedule<W> {
    fn default() -> Self {
        Schedule {
            heap: BinaryHeap::new(),
            scheduled: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Entry<W> {
    time: Millis,
    class: u8,
    sequence: u64,
    what: W,
}

impl<W> Entry<W> {
    fn order(&self) -> (Millis, u8, u64) {
        (self.time, self.class, self.sequence)
    }
}

impl<W> PartialEq for Entry<W> {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}
impl<W> Eq for Entry<W> {}
impl<W> PartialOrd for Entry<W> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<W> Ord for Entry<W> {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, other: &Self) -> Ordering {
        other.order().cmp(&self.order())
    }
}

impl<W> Schedule<W> {
    /// `what` is due at `time`; of one instant, a lower `class` first,
    /// and of one class, the earlier scheduled first.
    pub fn add(&mut self, time: Millis, class: u8, what: W) {
        self.scheduled += 1;
        self.heap.push(Entry {
            time,
            class,
            sequence: self.scheduled,
            what,
        });
    }

    /// The earliest entry: its time, class and what it is.
    pub fn peek(&self) -> Option<(Millis, u8, &W)> {
        self.heap.peek().map(|e| (e.time, e.class, &e.what))
    }

    /// Takes the earliest entry.
    pub fn take(&mut self) -> Option<(Millis, W)> {
        self.heap.pop().map(|e| (e.time, e.what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_out_by_time_then_class_then_scheduling_order() {
        let mut schedule = Schedule::default();
        schedule.add(5, 1, "timeout at 5");
        schedule.add(5, 0, "first at 5");
        schedule.add(2, 1, "timeout at 2");
        schedule.add(5, 0, "second at 5");
        schedule.add(9, 0, "at 9");
        assert_eq!(schedule.peek(), Some((2, 1, &"timeout at 2")));
        let order: Vec<_> = std::iter::from_fn(|| schedule.take()).collect();
        assert_eq!(
            order,
            [
                (2, "timeout at 2"),
                (5, "first at 5"),
                (5, "second at 5"),
                (5, "timeout at 5"),
                (9, "at 9")
            ]
        );
    }
}
