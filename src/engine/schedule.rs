//! The queue world's schedule: what happens next and when. First arrivals
//! come from the [`Arrivals`] (produced lazily, in scheduling order); a
//! message becoming ready again (a retry due, a redrive) and the end of a
//! delivery in flight are scheduled with a global sequence number that
//! breaks ties in scheduling order (docs/model.md section 1). Arrivals
//! were all scheduled before the run started, so they win ties (decision
//! 10.1) and their sequence numbers are their ranks, below every later one.

use super::arrivals::Arrivals;
use crate::model::{Class, MessageIndex, Millis, ReasonIndex, Scenario};
use crate::sim::{Agenda, Timed};

/// How a delivery ends, decided when it starts (docs/model.md section 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Finish {
    Acked,
    AckLost,
    Failed(ReasonIndex, Class),
}

/// What is due now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// The message becomes ready: it has arrived (its sequence is then
    /// below the message count), its retry is due, or it was redriven.
    Ready {
        message: MessageIndex,
        sequence: u64,
    },
    /// A delivery in flight ends.
    End {
        message: MessageIndex,
        finish: Finish,
    },
    /// A delivery with a receipt (sections 17-22) ends: its record is `slot`.
    EndOf { slot: u32 },
    /// A delivery with a receipt's visibility timeout passes.
    Visible { slot: u32, sequence: u64 },
    /// The source's own event (a log's restart, or its resume when
    /// `resume`), after every other entry of its instant.
    Source { resume: bool },
    /// A log's producer appends `message` again, its last append's
    /// acknowledgement lost (section 28.6).
    Append { message: MessageIndex },
    /// A write in flight (`write/`) makes its next call (to `sink`, for an
    /// outbox row), or its coordinator decides.
    Call { flight: u32, sink: u32 },
}

/// A scheduled entry: (time, sequence, what), ordered by time then
/// sequence (sequences are unique). `what` packs the message (low 32
/// bits) with, for the end of a delivery, how it ends: bits 32-35 the
/// kind (0: the message becomes ready, 1: acked, 2: ack lost, 3: failed,
/// 4: a delivery with a receipt ends, 5: its visibility timeout passes,
/// 6: the source's event, 7: an append, 8: a write's call), bit 36 the
/// class, bits 37-63 the reason (or a write call's sink); for kinds 4
/// and 5 the low 32 bits hold the delivery's slot instead of the
/// message, for kind 8 the write's. 24 bytes, so that a heap of many
/// waiting retries stays small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: Millis,
    sequence: u64,
    what: u64,
}

impl Timed for Entry {
    #[inline]
    fn at(&self) -> Millis {
        self.at
    }
}

const READY: u64 = 0;
const ACKED: u64 = 1;
const ACK_LOST: u64 = 2;
const FAILED: u64 = 3;
const END_OF: u64 = 4;
const VISIBLE: u64 = 5;
const SOURCE: u64 = 6;
const APPEND: u64 = 7;
const CALL: u64 = 8;

/// The high bit of a source event's sequence: it comes after every other
/// entry of its instant, those scheduled during the instant included.
const AFTER_INSTANT: u64 = 1 << 63;

fn pack(message: MessageIndex, finish: Option<Finish>) -> u64 {
    let (kind, class, reason) = match finish {
        None => (READY, 0, 0),
        Some(Finish::Acked) => (ACKED, 0, 0),
        Some(Finish::AckLost) => (ACK_LOST, 0, 0),
        Some(Finish::Failed(reason, class)) => {
            (FAILED, (class == Class::Permanent) as u64, reason as u64)
        }
    };
    message as u64 | kind << 32 | class << 36 | reason << 37
}

fn unpack(what: u64, sequence: u64) -> Due {
    let message = what as MessageIndex;
    let finish = match (what >> 32) & 15 {
        READY => {
            return Due::Ready { message, sequence };
        }
        END_OF => return Due::EndOf { slot: message },
        APPEND => return Due::Append { message },
        CALL => {
            return Due::Call {
                flight: message,
                sink: (what >> 37) as u32,
            };
        }
        SOURCE => {
            return Due::Source {
                resume: message == 1,
            };
        }
        VISIBLE => {
            return Due::Visible {
                slot: message,
                sequence,
            };
        }
        ACKED => Finish::Acked,
        ACK_LOST => Finish::AckLost,
        _ => {
            let class = if (what >> 36) & 1 == 1 {
                Class::Permanent
            } else {
                Class::Transient
            };
            Finish::Failed((what >> 37) as ReasonIndex, class)
        }
    };
    Due::End { message, finish }
}

/// At most this many delays get a first-in, first-out queue of their
/// own (retries without jitter, a fixed interval or exponential levels;
/// delivery ends after a fixed service time; redrives, delay 0); entries
/// with any other delay go to the agenda's heap.
const FIFOS: usize = crate::sim::MAX_FIFOS;

#[derive(Clone)]
pub(super) struct Schedule {
    arrivals: Arrivals,
    /// Arrivals taken so far: the next arrival's sequence number.
    arrived: u64,
    /// Everything scheduled: the engine schedules nothing before the
    /// current time.
    due: Agenda<Entry>,
    /// The next sequence number for a scheduled entry.
    sequence: u64,
}

impl Schedule {
    pub(super) fn new(
        scenario: &Scenario,
        poisson: Vec<Option<std::sync::Arc<super::traffic::Offsets>>>,
    ) -> Self {
        Schedule {
            arrivals: Arrivals::new(scenario, poisson),
            arrived: 0,
            due: Agenda::new(FIFOS),
            sequence: scenario.message_count(),
        }
    }

    /// When the next entry is due, if any is.
    #[inline]
    pub(super) fn next_due(&mut self) -> Option<Millis> {
        let arrival = self.arrivals.peek().map(|(t, _)| t);
        let scheduled = self.due.peek().map(|e| e.at);
        match (arrival, scheduled) {
            (Some(a), Some(s)) => Some(a.min(s)),
            (Some(t), None) | (None, Some(t)) => Some(t),
            (None, None) => None,
        }
    }

    /// When the earliest scheduled entry is due, arrivals aside.
    #[inline]
    pub(super) fn scheduled_at(&mut self) -> Option<Millis> {
        self.due.peek().map(|e| e.at)
    }

    /// Takes the next arrival if it comes at or before `until`: its time,
    /// message and sequence.
    #[inline(always)]
    pub(super) fn take_arrival_until(
        &mut self,
        until: Millis,
    ) -> Option<(Millis, MessageIndex, u64)> {
        let (at, message) = self.arrivals.peek()?;
        if at > until {
            return None;
        }
        self.arrivals.pop();
        self.arrived += 1;
        Some((at, message, self.arrived - 1))
    }

    /// Takes the entry due at `now`, arrivals first (none is ever due
    /// before `now`).
    #[inline]
    pub(super) fn take(&mut self, now: Millis) -> Option<Due> {
        if let Some((_, message, sequence)) = self.take_arrival_until(now) {
            return Some(Due::Ready { message, sequence });
        }
        let e = self.due.peek()?;
        if e.at > now {
            return None;
        }
        self.due.pop();
        Some(unpack(e.what, e.sequence))
    }

    /// Schedules `what` at `at`, from `now`: in the queue of its delay,
    /// or in the heap if `laned` is false (a drawn delay, which would only
    /// take up a queue).
    fn schedule(&mut self, now: Millis, at: Millis, what: u64, laned: bool) {
        let sequence = self.sequence;
        self.sequence += 1;
        self.due.add(now, Entry { at, sequence, what }, laned);
    }

    /// The message becomes ready again at `at` (a retry or a redrive),
    /// scheduled at `now`.
    #[inline]
    pub(super) fn put_back(&mut self, now: Millis, at: Millis, message: MessageIndex) {
        self.schedule(now, at, pack(message, None), true);
    }

    /// The message becomes ready again at `at`, after a delay drawn at
    /// random (a jittered retry): it waits in the heap.
    #[inline]
    pub(super) fn put_back_drawn(&mut self, now: Millis, at: Millis, message: MessageIndex) {
        self.schedule(now, at, pack(message, None), false);
    }

    /// A delivery in flight ends at `at`, after everything already
    /// scheduled for that instant.
    #[inline]
    pub(super) fn schedule_end(
        &mut self,
        now: Millis,
        at: Millis,
        message: MessageIndex,
        finish: Finish,
    ) {
        self.schedule(now, at, pack(message, Some(finish)), true);
    }

    /// The producer appends `message` again at `at` (section 28.6).
    pub(super) fn schedule_append(&mut self, now: Millis, at: Millis, message: MessageIndex) {
        self.schedule(now, at, message as u64 | APPEND << 32, true);
    }

    /// Write `flight` makes its next call (to `sink`) at `at`.
    pub(super) fn schedule_call(&mut self, now: Millis, at: Millis, flight: u32, sink: u32) {
        self.schedule(
            now,
            at,
            flight as u64 | CALL << 32 | (sink as u64) << 37,
            true,
        );
    }

    /// A delivery with a receipt (record `slot`) ends at `at`.
    pub(super) fn schedule_end_of(&mut self, now: Millis, at: Millis, slot: u32) {
        self.schedule(now, at, slot as u64 | END_OF << 32, true);
    }

    /// A delivery with a receipt's visibility timeout passes at `at`.
    pub(super) fn schedule_visible(&mut self, now: Millis, at: Millis, slot: u32) {
        self.schedule(now, at, slot as u64 | VISIBLE << 32, true);
    }

    /// The source's own event at `at` (a log's restart, or a resume),
    /// after every other entry of that instant; among source events of one
    /// instant, in the order of `order`. Takes no sequence number: the
    /// entries of messages are numbered as if it were not there.
    pub(super) fn schedule_source_event(&mut self, at: Millis, resume: bool, order: u64) {
        debug_assert!(order < AFTER_INSTANT);
        let e = Entry {
            at,
            sequence: AFTER_INSTANT | order,
            what: resume as u64 | SOURCE << 32,
        };
        self.due.add(at, e, false);
    }

    /// The earliest scheduled entry (arrivals aside): its time, sequence
    /// and what it is.
    pub(super) fn peek_scheduled(&mut self) -> Option<(Millis, u64, Due)> {
        self.due
            .peek()
            .map(|e| (e.at, e.sequence, unpack(e.what, e.sequence)))
    }

    /// Removes the earliest scheduled entry (a cancelled one).
    pub(super) fn pop_scheduled(&mut self) {
        self.due.pop();
    }

    /// When the next arrival comes, if one is to come.
    pub(super) fn arrival_due(&mut self) -> Option<Millis> {
        self.arrivals.peek().map(|(t, _)| t)
    }

    /// Entries scheduled (arrivals aside).
    pub(super) fn scheduled_len(&self) -> usize {
        self.due.len()
    }

    /// A sequence number of its own, for something that happens now and
    /// is not scheduled (a write's commit): entries scheduled before have
    /// lower ones, entries scheduled after higher ones.
    pub(super) fn take_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence - 1
    }

    /// The sequence number the next scheduled entry gets.
    pub(super) fn next_sequence(&self) -> u64 {
        self.sequence
    }

    /// Arrivals taken so far: each message arrives once.
    pub(super) fn arrived(&self) -> u64 {
        self.arrived
    }

    /// Entries still due: arrivals to come, retries, redrives and ends.
    #[cfg(test)]
    pub(super) fn pending(&self) -> u64 {
        self.due.len() as u64 + self.arrivals.remaining()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_str;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn ready(message: MessageIndex, sequence: u64) -> Option<Due> {
        Some(Due::Ready { message, sequence })
    }

    #[test]
    fn nothing_is_taken_before_it_is_due_and_ties_keep_their_order() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
             [[message]]\nid = \"a\"\nat = \"10s\"\n",
        )
        .unwrap();
        let mut queue = Schedule::new(&scenario, vec![]);
        queue.put_back(0, 5_000, 7);
        queue.put_back(0, 5_000, 3);
        assert_eq!(queue.next_due(), Some(5_000));
        assert_eq!(queue.pending(), 3);
        assert_eq!(queue.take(4_999), None);
        assert_eq!(queue.take(5_000), ready(7, 1));
        assert_eq!(queue.take(5_000), ready(3, 2));
        assert_eq!(queue.take(5_000), None);
        assert_eq!(queue.next_due(), Some(10_000));
        queue.schedule_end(5_000, 10_000, 3, Finish::Acked);
        queue.put_back(10_000, 10_000, 3);
        // The arrival was scheduled before the run: it goes first, then
        // the others in the order they were scheduled.
        assert_eq!(queue.take(10_000), ready(0, 0));
        assert_eq!(
            queue.take(10_000),
            Some(Due::End {
                message: 3,
                finish: Finish::Acked
            })
        );
        assert_eq!(queue.take(10_000), ready(3, 4));
        assert_eq!(queue.next_due(), None);
        // How a delivery ends survives the packing.
        for finish in [
            Finish::AckLost,
            Finish::Failed(0, Class::Transient),
            Finish::Failed(123_456, Class::Permanent),
            Finish::Failed((1 << 27) - 1, Class::Permanent),
        ] {
            queue.schedule_end(20_000, 20_000, MessageIndex::MAX, finish);
            let message = MessageIndex::MAX;
            assert_eq!(queue.take(20_000), Some(Due::End { message, finish }));
        }
        queue.schedule_end_of(20_000, 30_000, 9);
        queue.schedule_visible(0, 30_000, u32::MAX);
        assert_eq!(queue.take(30_000), Some(Due::EndOf { slot: 9 }));
        let sequence = queue.sequence - 1;
        let visible = Due::Visible {
            slot: u32::MAX,
            sequence,
        };
        assert_eq!(queue.take(30_000), Some(visible));
        assert_eq!(queue.pending(), 0);
    }

    /// The queues and the heap together take entries in exactly the order one
    /// comparison heap of (time, sequence) would, whatever the delays
    /// (more distinct delays than queues included) and however time moves.
    #[test]
    fn drawn_delays_wait_in_the_heap_and_take_no_queue() {
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n",
        )
        .unwrap();
        let mut queue = Schedule::new(&scenario, vec![]);
        for m in 0..20 {
            queue.put_back_drawn(0, 100 + 7 * m as Millis, m);
        }
        assert_eq!(queue.due.fifos(), 0, "20 drawn delays, no queue");
        assert_eq!(queue.due.len(), 20);
        queue.put_back(0, 50, 99);
        assert_eq!(queue.due.fifos(), 1, "a fixed delay has its queue");
        assert_eq!(
            queue.take(50),
            ready(99, 20),
            "no messages: sequences from 0"
        );
    }

    #[test]
    fn queues_and_heap_keep_the_order_of_one_heap() {
        use rand::{RngExt, SeedableRng};
        let (scenario, _) = load_str(
            "t.toml",
            "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n",
        )
        .unwrap();
        for seed in 0..40u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut queue = Schedule::new(&scenario, vec![]);
            let mut reference: BinaryHeap<Reverse<(Millis, u64, MessageIndex)>> = BinaryHeap::new();
            let mut sequence = queue.sequence;
            let distinct = if seed % 2 == 0 { 5 } else { 60 };
            let mut now = 0;
            let mut taken = 0;
            for round in 0..400u32 {
                for k in 0..rng.random_range(0..4u32) {
                    let delay = rng.random_range(0..distinct) * 250;
                    let m = round * 4 + k;
                    if seed % 3 == 0 && rng.random_range(0..2u32) == 0 {
                        queue.put_back_drawn(now, now + delay, m);
                    } else {
                        queue.put_back(now, now + delay, m);
                    }
                    reference.push(Reverse((now + delay, sequence, m)));
                    sequence += 1;
                }
                let next = reference.peek().map(|Reverse(e)| e.0);
                assert_eq!(queue.next_due(), next, "seed {seed} round {round}");
                if let Some(t) = next {
                    now = t;
                    let Reverse((_, seq, m)) = reference.pop().unwrap();
                    assert_eq!(queue.take(now), ready(m, seq), "seed {seed} round {round}");
                    taken += 1;
                }
                assert_eq!(queue.pending(), reference.len() as u64);
            }
            assert!(taken > 300);
        }
    }
}
