//! Ready messages waiting for a worker, and which of them may be taken
//! (docs/model.md section 12). Without ordering every ready message is
//! eligible; with `fifo` or `per_key` ordering each group queues its
//! messages in enqueue order and only its head is eligible, and it stays
//! the head while it is in flight or waiting for a retry (head-of-line
//! blocking) until it is acked or quarantined.
//!
//! Costs: O(log n) per message made eligible or taken (a binary heap), O(1)
//! per enqueue and per head change (an intrusive list per group), nothing
//! per group or message that is idle.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::{MessageIndex, Millis, Ordering, Scenario};

const NONE: u32 = u32::MAX;

/// The group queues: a singly linked list per group through the messages.
#[derive(Clone)]
struct GroupQueues {
    head: Vec<u32>,
    tail: Vec<u32>,
    /// The message behind each message in its group.
    next: Vec<u32>,
    /// Group of each message, computed once.
    group: Vec<u32>,
    /// When each message became ready, and its scheduling sequence then.
    ready_mark: Vec<(Millis, u64)>,
}

#[derive(Clone)]
pub(super) struct ReadySet {
    /// Eligible ready messages by (ready time, sequence).
    eligible: BinaryHeap<Reverse<(Millis, u64, MessageIndex)>>,
    /// Eligible messages served before all of `eligible`, in the order
    /// they came: those a quorum queue returned to its front
    /// (rabbitmq-quorum with a `broker_version`), with the time each
    /// became ready.
    front: std::collections::VecDeque<(Millis, MessageIndex)>,
    groups: Option<GroupQueues>,
    /// Ready messages not taken, blocked ones included.
    pub(super) depth: u64,
    /// rabbitmq-classic (a message requeued at its original position):
    /// per message, the (time, sequence) it first became ready in its
    /// cycle, which orders it whenever it is ready again, and the time
    /// it became ready this time, for its wait. Empty otherwise.
    original: Vec<(Millis, u64)>,
    since: Vec<Millis>,
    /// Entries of the eligible heap withdrawn before they were taken (a
    /// message visible again whose current delivery ended), skipped when
    /// they come up. Never iterated.
    withdrawn: rustc_hash::FxHashMap<MessageIndex, u32>,
}

impl ReadySet {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let count = scenario.message_count() as usize;
        let groups = match scenario.flow.ordering {
            Ordering::None => None,
            ordering => {
                let group_of = |m: MessageIndex| match ordering {
                    Ordering::Fifo => 0,
                    _ => scenario.group(m) as u32,
                };
                let groups = match ordering {
                    Ordering::Fifo => 1,
                    _ => scenario.flow.groups.count as usize,
                };
                Some(GroupQueues {
                    head: vec![NONE; groups],
                    tail: vec![NONE; groups],
                    next: vec![NONE; count],
                    group: (0..count as MessageIndex).map(group_of).collect(),
                    ready_mark: vec![(0, 0); count],
                })
            }
        };
        let original = scenario.requeue() == crate::model::Requeue::Original;
        let per_message = |wanted: bool| if wanted { count } else { 0 };
        ReadySet {
            eligible: BinaryHeap::new(),
            front: std::collections::VecDeque::new(),
            original: vec![(0, 0); per_message(original)],
            since: vec![0; per_message(original)],
            groups,
            depth: 0,
            withdrawn: rustc_hash::FxHashMap::default(),
        }
    }

    /// Message `m` becomes ready at `at` with scheduling sequence
    /// `sequence`. Under ordering, a message that is not its group's head
    /// (it has arrived or was redriven) is enqueued behind the others, and
    /// only a head is made eligible.
    pub(super) fn add(&mut self, m: MessageIndex, at: Millis, sequence: u64) {
        if let Some(mark) = self.original.get_mut(m as usize) {
            *mark = (at, sequence);
            self.since[m as usize] = at;
        }
        self.depth += 1;
        let Some(q) = &mut self.groups else {
            self.eligible.push(Reverse((at, sequence, m)));
            return;
        };
        q.ready_mark[m as usize] = (at, sequence);
        let g = q.group[m as usize] as usize;
        if q.head[g] != m {
            if q.tail[g] == NONE {
                q.head[g] = m;
            } else {
                q.next[q.tail[g] as usize] = m;
            }
            q.tail[g] = m;
            q.next[m as usize] = NONE;
        }
        if q.head[g] == m {
            self.eligible.push(Reverse((at, sequence, m)));
        }
    }

    /// Message `m`, returned by the queue at `at`, becomes ready ahead of
    /// every other (behind those returned before it). Under ordering a
    /// message that is not its group's head queues as [`add`](Self::add)
    /// does.
    pub(super) fn add_front(&mut self, m: MessageIndex, at: Millis) {
        if let Some(q) = &self.groups
            && q.head[q.group[m as usize] as usize] != m
        {
            return self.add(m, at, 0);
        }
        if let Some(q) = &mut self.groups {
            q.ready_mark[m as usize] = (at, 0);
        }
        self.depth += 1;
        self.front.push_back((at, m));
    }

    /// Whether a returned message goes back to its original position
    /// (rabbitmq-classic).
    #[inline]
    pub(super) fn requeues_in_place(&self) -> bool {
        !self.original.is_empty()
    }

    /// Message `m`, returned by the queue at `at` in its cycle, becomes
    /// ready at its original position: ordered by when it first became
    /// ready in the cycle (rabbitmq-classic). Only a group's head is
    /// ever returned, so under ordering it is eligible at once.
    pub(super) fn add_original(&mut self, m: MessageIndex, at: Millis) {
        let (first, sequence) = self.original[m as usize];
        self.since[m as usize] = at;
        self.depth += 1;
        self.eligible.push(Reverse((first, sequence, m)));
    }

    /// Takes the eligible message that became ready first (those returned
    /// to the front before all): (message, the time it became ready).
    #[inline]
    pub(super) fn take(&mut self) -> Option<(MessageIndex, Millis)> {
        loop {
            let (at, m) = match self.front.pop_front() {
                Some(entry) => entry,
                None => {
                    let Reverse((at, _, m)) = self.eligible.pop()?;
                    (at, m)
                }
            };
            if let Some(n) = self.withdrawn.get_mut(&m) {
                *n -= 1;
                if *n == 0 {
                    self.withdrawn.remove(&m);
                }
                continue;
            }
            self.depth -= 1;
            let at = self.since.get(m as usize).copied().unwrap_or(at);
            return Some((m, at));
        }
    }

    /// Message `m`, eligible and not taken (its group's head, visible
    /// again after a visibility timeout), leaves the ready set: its
    /// current delivery ended. Its entry is skipped when it comes up.
    pub(super) fn withdraw(&mut self, m: MessageIndex) {
        self.depth -= 1;
        *self.withdrawn.entry(m).or_insert(0) += 1;
    }

    /// Message `m` is acked or quarantined: under ordering it leaves its
    /// group, and the message behind it, ready since it arrived, becomes
    /// eligible.
    #[inline]
    pub(super) fn leave(&mut self, m: MessageIndex) {
        if self.groups.is_some() {
            self.leave_group(m);
        }
    }

    fn leave_group(&mut self, m: MessageIndex) {
        let Some(q) = &mut self.groups else {
            return;
        };
        let g = q.group[m as usize] as usize;
        if q.head[g] != m {
            return;
        }
        let next = q.next[m as usize];
        q.head[g] = next;
        if next == NONE {
            q.tail[g] = NONE;
        } else {
            let (at, sequence) = q.ready_mark[next as usize];
            self.eligible.push(Reverse((at, sequence, next)));
        }
    }
}
