//! Event expectations judged while the run goes: each `[[expect.event]]`
//! is a watch that counts the matching transitions and keeps the first
//! few times, so an event expectation never makes a run keep its
//! transcript. Watches are indexed by kind and message: a transition costs
//! two map lookups whatever the number of expectations.

use std::collections::BTreeMap;

use super::Detail;
use crate::model::{EventKind, MessageIndex, Millis, Scenario, Target};

/// How many times of a watched event are kept for the explanation.
pub const EVENT_TIMES_KEPT: usize = 8;

/// What a run saw of one event expectation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSeen {
    /// Matching transitions (kind, and message when it names one).
    pub count: u64,
    /// The first [`EVENT_TIMES_KEPT`] of their times.
    pub times: Vec<Millis>,
    /// Whether one happened at the expected time (any time if none).
    pub at_time: bool,
}

#[derive(Debug, Default, Clone)]
struct ByKind {
    /// Watches of any message.
    any: Vec<usize>,
    /// Watches of one message.
    of: BTreeMap<MessageIndex, Vec<usize>>,
}

/// One watch: its expectation's index, and what a transition must have to
/// match besides its kind and message.
#[derive(Debug, Clone, Copy)]
struct Watched {
    index: usize,
    at: Option<Millis>,
    partition: Option<u32>,
    sink: Option<u32>,
}

#[derive(Debug, Default, Clone)]
pub(super) struct Watches {
    by_kind: BTreeMap<EventKind, ByKind>,
    watched: Vec<Watched>,
    /// Whether some watch names a partition.
    partitions: bool,
    seen: Vec<EventSeen>,
}

impl Watches {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let mut w = Watches::default();
        for (index, e) in scenario.expectations.iter().enumerate() {
            if let Target::Event {
                kind,
                message,
                at,
                partition,
                sink,
                ..
            } = e.target
            {
                let slot = w.watched.len();
                w.watched.push(Watched {
                    index,
                    at,
                    partition,
                    sink,
                });
                w.partitions |= partition.is_some();
                w.seen.push(EventSeen::default());
                let by_kind = w.by_kind.entry(kind).or_default();
                match message {
                    Some(m) => by_kind.of.entry(m).or_default().push(slot),
                    None => by_kind.any.push(slot),
                }
            }
        }
        w
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }

    /// A transition `detail` happened at `time`.
    #[inline]
    pub(super) fn saw(&mut self, detail: &Detail, message: Option<MessageIndex>, time: Millis) {
        crate::meter::search(self.by_kind.len());
        let Some(by_kind) = self.by_kind.get(&detail.kind()) else {
            return;
        };
        crate::meter::search(by_kind.of.len());
        let of = message.and_then(|m| by_kind.of.get(&m));
        let partition = match self.partitions {
            true => detail.partition(),
            false => None,
        };
        for &slot in by_kind.any.iter().chain(of.into_iter().flatten()) {
            let watched = self.watched[slot];
            if let Some(p) = watched.partition
                && partition != Some(p)
            {
                continue;
            }
            if let Some(k) = watched.sink
                && detail.sink() != Some(k)
            {
                continue;
            }
            crate::meter::add(1);
            let seen = &mut self.seen[slot];
            seen.count += 1;
            if seen.times.len() < EVENT_TIMES_KEPT {
                seen.times.push(time);
            }
            if watched.at.is_none_or(|at| at == time) {
                seen.at_time = true;
            }
        }
    }

    /// Transitions of `kind` without a message or a partition happened at
    /// `k x interval` for every `k` from `first` to `last` (a log's
    /// checkpoints past what the transcript keeps): each watch is told in
    /// one step, whatever their number.
    pub(super) fn saw_every(&mut self, kind: EventKind, first: u64, last: u64, interval: Millis) {
        let Some(by_kind) = self.by_kind.get(&kind) else {
            return;
        };
        if first > last {
            return;
        }
        for &slot in &by_kind.any {
            let watched = self.watched[slot];
            if watched.partition.is_some() || watched.sink.is_some() {
                continue;
            }
            let seen = &mut self.seen[slot];
            seen.count += last - first + 1;
            let room = EVENT_TIMES_KEPT.saturating_sub(seen.times.len()) as u64;
            let shown = last.min(first.saturating_add(room).saturating_sub(1));
            if room > 0 {
                seen.times
                    .extend((first..=shown).map(|k| k.saturating_mul(interval)));
            }
            let at = |at: Millis| {
                at.is_multiple_of(interval) && (first..=last).contains(&(at / interval))
            };
            if watched.at.is_none_or(at) {
                seen.at_time = true;
            }
        }
    }

    /// What each event expectation saw, by expectation index.
    pub(super) fn finish(self) -> BTreeMap<usize, EventSeen> {
        self.watched
            .into_iter()
            .map(|w| w.index)
            .zip(self.seen)
            .collect()
    }
}
