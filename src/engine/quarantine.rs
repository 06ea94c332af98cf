//! The quarantine (the dead-letter queue): its messages in the order they
//! entered (docs/model.md section 5). An inspection touches only what it
//! changes: expiry takes the oldest entries from the front (entries are
//! appended in time order, so the expired ones are a prefix), a redrive of
//! named messages finds them by message, and a message that leaves is
//! dropped from the order lazily. Under sqs-standard, where retention
//! counts from each message's latest enqueue rather than its entry, the
//! messages are also kept ordered by that instant, so expiry takes a
//! prefix there too. Every operation is O(1) or O(log n) amortised per
//! message, whatever the depth and the number of steps. Entry numbers
//! are 32 bits, so an entry costs 8 bytes in the order and about 9 in the
//! lookup; in the rare run that uses them all up, the messages still
//! there are numbered again from 1, in order.

use std::collections::{BTreeSet, VecDeque};

use rustc_hash::FxHashMap as HashMap;

use crate::model::{MessageIndex, Millis};

/// Where an entry stands in entry order.
type Entry = u32;

#[derive(Default, Clone)]
pub(super) struct Quarantine {
    /// (message, entry number) in entry order; an entry whose message has
    /// left since is stale and skipped. The front is always live.
    entries: VecDeque<(MessageIndex, Entry)>,
    /// Entry number of each message in quarantine, made the first time
    /// something asks for a message (an operator step): until then no
    /// message has left, every entry is live, and a run without operator
    /// steps never needs it. Never iterated, so its order cannot reach any
    /// output.
    live: Option<HashMap<MessageIndex, Entry>>,
    /// sqs-standard: (latest enqueue, entry number, message) of each
    /// message in quarantine.
    by_enqueue: BTreeSet<(Millis, Entry, MessageIndex)>,
    /// sqs-standard: the latest enqueue of each message in quarantine.
    enqueued: HashMap<MessageIndex, Millis>,
    next: Entry,
}

impl Quarantine {
    /// `m` enters, behind everything already there.
    pub(super) fn push(&mut self, m: MessageIndex) {
        if self.next == Entry::MAX {
            self.renumber();
        }
        self.next += 1;
        self.entries.push_back((m, self.next));
        if let Some(live) = &mut self.live {
            live.insert(m, self.next);
        }
    }

    /// The order and the lookup, made now if it was not yet.
    fn indexed(
        &mut self,
    ) -> (
        &mut VecDeque<(MessageIndex, Entry)>,
        &mut HashMap<MessageIndex, Entry>,
    ) {
        let entries = &mut self.entries;
        let live = self.live.get_or_insert_with(|| {
            crate::meter::add(entries.len());
            entries.iter().copied().collect()
        });
        (entries, live)
    }

    /// `m` enters (sqs-standard), last enqueued at `enqueued`.
    pub(super) fn push_enqueued(&mut self, m: MessageIndex, enqueued: Millis) {
        self.push(m);
        self.by_enqueue.insert((enqueued, self.next, m));
        self.enqueued.insert(m, enqueued);
    }

    /// sqs-standard: the earliest latest-enqueue of the messages in
    /// quarantine.
    pub(super) fn first_enqueued(&self) -> Option<Millis> {
        self.by_enqueue.first().map(|&(at, _, _)| at)
    }

    /// sqs-standard: the messages last enqueued at or before `cutoff`, in
    /// entry order, with their enqueue instants.
    pub(super) fn enqueued_by(&self, cutoff: Millis) -> Vec<(MessageIndex, Millis)> {
        let mut due: Vec<(Entry, MessageIndex, Millis)> = self
            .by_enqueue
            .range(..=(cutoff, Entry::MAX, MessageIndex::MAX))
            .inspect(|_| crate::meter::add(1))
            .map(|&(at, entry, m)| (entry, m, at))
            .collect();
        crate::meter::search(self.by_enqueue.len());
        due.sort_unstable();
        due.into_iter().map(|(_, m, at)| (m, at)).collect()
    }

    /// Messages in quarantine now (the DLQ depth).
    pub(super) fn len(&self) -> u64 {
        // Without the lookup no message has left: every entry is live.
        self.live
            .as_ref()
            .map_or(self.entries.len(), |live| live.len()) as u64
    }

    /// The message that entered first among those still there.
    pub(super) fn first(&self) -> Option<MessageIndex> {
        self.entries.front().map(|&(m, _)| m)
    }

    pub(super) fn contains(&mut self, m: MessageIndex) -> bool {
        self.indexed().1.contains_key(&m)
    }

    /// Where `m` stands in entry order (smaller entered earlier).
    pub(super) fn rank(&mut self, m: MessageIndex) -> Entry {
        self.indexed().1.get(&m).copied().unwrap_or(Entry::MAX)
    }

    /// `m` leaves (redriven, expired, purged); false if it was not there.
    pub(super) fn remove(&mut self, m: MessageIndex) -> bool {
        let Some(entry) = self.indexed().1.remove(&m) else {
            return false;
        };
        if let Some(at) = self.enqueued.remove(&m) {
            self.by_enqueue.remove(&(at, entry, m));
        }
        self.settle();
        true
    }

    /// The messages in quarantine, in entry order.
    pub(super) fn in_order(&mut self) -> Vec<MessageIndex> {
        let (entries, live) = self.indexed();
        entries
            .iter()
            .inspect(|_| crate::meter::add(1))
            .filter(|&&(m, n)| live.get(&m) == Some(&n))
            .map(|&(m, _)| m)
            .collect()
    }

    /// Every message leaves, in entry order.
    pub(super) fn take_all(&mut self) -> Vec<MessageIndex> {
        // Before the lookup is made no message has left: every entry is
        // live.
        let all = match self.live {
            None => self.entries.iter().map(|&(m, _)| m).collect(),
            Some(_) => self.in_order(),
        };
        self.entries.clear();
        self.live = None;
        self.by_enqueue.clear();
        self.enqueued.clear();
        all
    }

    /// Numbers the messages still there again from 1, in entry order
    /// (when the numbers ran out, after 2^32 - 1 entries).
    fn renumber(&mut self) {
        let order = self.in_order();
        crate::meter::add(order.len());
        self.entries.clear();
        self.live = None;
        self.by_enqueue.clear();
        self.next = 0;
        for m in order {
            self.next += 1;
            self.entries.push_back((m, self.next));
            if let Some(&at) = self.enqueued.get(&m) {
                self.by_enqueue.insert((at, self.next, m));
            }
        }
    }

    /// Drops stale entries from the front, and compacts when most of the
    /// order is stale.
    fn settle(&mut self) {
        let (entries, live) = self.indexed();
        while let Some(&(m, n)) = entries.front() {
            crate::meter::add(1);
            if live.get(&m) == Some(&n) {
                break;
            }
            entries.pop_front();
        }
        if entries.len() > 2 * live.len() + 64 {
            crate::meter::add(entries.len());
            entries.retain(|&(m, n)| live.get(&m) == Some(&n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_order_survives_leaving_and_entering_again() {
        let mut q = Quarantine::default();
        for m in [5, 3, 9, 1] {
            q.push(m);
        }
        assert!(q.remove(3));
        assert!(!q.remove(3));
        q.push(3);
        assert_eq!(q.in_order(), [5, 9, 1, 3]);
        assert_eq!(q.first(), Some(5));
        assert!(q.remove(5));
        assert_eq!(q.first(), Some(9));
        assert!(q.rank(9) < q.rank(3));
        assert_eq!(q.len(), 3);
        // Many leaving and entering again: the order stays right and the
        // stale entries are compacted away.
        for round in 0..1_000 {
            q.remove(1);
            q.push(1);
            assert_eq!(q.first(), Some(9), "{round}");
        }
        assert!(q.entries.len() <= 2 * 3 + 64);
        assert_eq!(q.take_all(), [9, 3, 1]);
        assert_eq!((q.len(), q.first()), (0, None));
    }

    #[test]
    fn the_lookup_is_made_only_when_a_message_is_asked_for() {
        let mut q = Quarantine::default();
        for m in [5, 3, 9] {
            q.push(m);
        }
        assert_eq!((q.len(), q.first()), (3, Some(5)));
        assert!(q.live.is_none(), "entering and counting need no lookup");
        assert!(q.contains(3) && !q.contains(4));
        assert!(q.live.is_some());
        q.push(4);
        assert!(q.remove(4) && q.remove(5));
        assert_eq!(q.in_order(), [3, 9]);
        assert_eq!((q.len(), q.first()), (2, Some(3)));
    }

    #[test]
    fn entry_numbers_that_run_out_start_again_in_order() {
        let mut q = Quarantine::default();
        q.push_enqueued(4, 50);
        q.push_enqueued(2, 10);
        q.push(7);
        assert!(q.remove(2));
        q.next = Entry::MAX - 1;
        q.push_enqueued(2, 30);
        q.push(8);
        assert_eq!(q.rank(8), 4, "renumbered 4, 7, 2, then 8");
        assert_eq!(q.in_order(), [4, 7, 2, 8]);
        assert!(q.rank(4) < q.rank(7) && q.rank(7) < q.rank(2) && q.rank(2) < q.rank(8));
        assert_eq!(q.enqueued_by(40), [(2, 30)]);
        assert_eq!(q.enqueued_by(50), [(4, 50), (2, 30)]);
        assert_eq!(q.len(), 4);
    }
}
