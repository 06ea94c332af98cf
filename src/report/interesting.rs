//! The messages worth a look in a run too large to list: the snapshot
//! tables show the first messages by id, which in a big run are usually
//! the dull ones. This picks, in one pass over the messages and with
//! memory for the picks only, those quarantined (or dropped), those that
//! waited longest in the queue (blocked behind a group's head or short of
//! workers) and the slowest to be acked.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use serde_json::{Value as Json, json};

use crate::engine::Outcome;
use crate::model::{MessageIndex, Millis, Scenario, State};

/// Runs with more messages than this (the rows the snapshot tables show)
/// get the list.
pub const SHOWN: usize = 100;

/// Messages picked for each reason.
pub const PER_REASON: usize = 10;

/// The `n` messages with the largest values, largest first (ties: the
/// smaller index first), of values given in message order.
fn largest(n: usize, values: impl Iterator<Item = (Millis, MessageIndex)>) -> Vec<MessageIndex> {
    let mut top = Top {
        n,
        heap: BinaryHeap::new(),
        least: 0,
    };
    // Most values are below the least that can enter: the pass costs a
    // comparison each, inlined in the walk; the rest go out of line.
    values.for_each(|(v, m)| {
        if v >= top.least {
            top.offer(v, m);
        }
    });
    let mut picked: Vec<(Millis, Reverse<MessageIndex>)> =
        top.heap.into_iter().map(|r| r.0).collect();
    picked.sort_unstable_by(|a, b| b.cmp(a));
    picked.into_iter().map(|(_, Reverse(m))| m).collect()
}

/// The largest values offered so far, at most `n`.
struct Top {
    n: usize,
    heap: BinaryHeap<Reverse<(Millis, Reverse<MessageIndex>)>>,
    /// The least value that can still enter: 0 until `n` are kept, then
    /// one more than the smallest kept (messages come in index order, so
    /// an equal value loses its tie to the one kept).
    least: Millis,
}

impl Top {
    #[inline(never)]
    fn offer(&mut self, v: Millis, m: MessageIndex) {
        let item = Reverse((v, Reverse(m)));
        if self.heap.len() < self.n {
            self.heap.push(item);
        } else if let Some(mut smallest) = self.heap.peek_mut()
            && item < *smallest
        {
            // Larger than the smallest kept: it takes its place.
            *smallest = item;
        }
        if self.heap.len() == self.n
            && let Some(Reverse((smallest, _))) = self.heap.peek()
        {
            self.least = smallest.saturating_add(1);
        }
    }
}

/// The picks, each a snapshot row with `why`, `queue_wait` and `latency`;
/// null for runs of at most [`SHOWN`] messages.
pub fn interesting(scenario: &Scenario, outcome: &Outcome) -> Json {
    let n = outcome.messages.len();
    if n <= SHOWN {
        return Json::Null;
    }
    let mut rows = Vec::new();
    let mut taken = BTreeSet::new();
    let mut pick = |m: MessageIndex, why: &str, rows: &mut Vec<Json>| {
        if taken.insert(m) {
            let mut row = super::rows::row(scenario, outcome, m as usize);
            row["why"] = json!(why);
            row["queue_wait"] = json!(outcome.queue_wait(m));
            row["latency"] = json!(outcome.latency(scenario, m));
            rows.push(row);
        }
    };
    // The totals say whether any message ended quarantined or dropped;
    // when none did, the pass would read every message for nothing.
    let lost_any = outcome.totals.quarantined > 0 || outcome.totals.dropped > 0;
    let scanned = if lost_any { n as MessageIndex } else { 0 };
    let lost = (0..scanned)
        .map(|m| (m, outcome.messages.state(m)))
        .filter(|&(_, s)| matches!(s, State::Quarantined | State::Dropped))
        .take(PER_REASON);
    for (m, state) in lost {
        pick(m, state.as_str(), &mut rows);
    }
    let chosen = rows.len();
    // Only runs with workers keep queue waits (one a message); without,
    // every wait is 0 and the pass reads nothing.
    let waits = outcome
        .queue_waits
        .iter()
        .enumerate()
        .map(|(m, &w)| (w, m as MessageIndex))
        .filter(|&(w, _)| w > 0);
    for m in largest(PER_REASON + chosen, waits) {
        if rows.len() < chosen + PER_REASON {
            pick(m, "longest queue wait", &mut rows);
        }
    }
    let chosen = rows.len();
    let slow = outcome.latencies(scenario).map(|(m, l)| (l, m));
    for m in largest(PER_REASON + chosen, slow) {
        if rows.len() < chosen + PER_REASON {
            pick(m, "slowest", &mut rows);
        }
    }
    Json::Array(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Recorder;

    #[test]
    fn largest_keeps_the_top_values_and_breaks_ties_by_index() {
        let values = [(5, 0), (9, 1), (5, 2), (1, 3), (9, 4), (7, 5)];
        assert_eq!(largest(3, values.into_iter()), [1, 4, 5]);
        assert_eq!(largest(4, values.into_iter()), [1, 4, 5, 0]);
        assert_eq!(largest(0, values.into_iter()), Vec::<MessageIndex>::new());
    }

    #[test]
    fn largest_equals_sorting_everything() {
        // Many ties (values 0..40) over 500 messages, every n up to 30.
        let mut x: u64 = 7;
        let values: Vec<(Millis, MessageIndex)> = (0..500)
            .map(|m| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % 40, m)
            })
            .collect();
        let mut sorted = values.clone();
        sorted.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for n in 0..30 {
            let expected: Vec<MessageIndex> = sorted[..n].iter().map(|&(_, m)| m).collect();
            assert_eq!(largest(n, values.iter().copied()), expected, "n = {n}");
        }
    }

    /// 300 messages for 2 workers busy 1s each, 4 of them poison; the
    /// block listed first arrives last and waits longest: the picks are
    /// the quarantined ones in index order,
    /// then the longest waits and the slowest by a full sort of every
    /// message's wait and latency (ties by index), none picked twice.
    #[test]
    fn picks_equal_sorting_every_message() {
        let text = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
            [workers]\ncount = 2\nservice_time = \"1s\"\n\
            [[message]]\nid = \"p1\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
            [[message]]\nid = \"p2\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
            [[traffic]]\ncount = 96\nstart = \"20s\"\nover = \"10s\"\nid_prefix = \"late-\"\n\
            [[traffic]]\ncount = 200\nover = \"10s\"\n\
            [[message]]\nid = \"p3\"\nat = \"5s\"\nfaults = [{ fail = { until = \"repair\" } }]\n\
            [[message]]\nid = \"p4\"\nat = \"7s\"\nfaults = [{ fail = { until = \"repair\" } }]\n";
        let (scenario, _) = crate::scenario::load_str("s.toml", text).unwrap();
        let outcome = crate::engine::run(&scenario, Recorder::Off).unwrap();
        let rows = interesting(&scenario, &outcome);
        let picked: Vec<(String, String)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().into(),
                    r["why"].as_str().unwrap().into(),
                )
            })
            .collect();
        let n = outcome.messages.len() as MessageIndex;
        let mut expected: Vec<(MessageIndex, &str)> = (0..n)
            .filter(|&m| outcome.messages.state(m) == State::Quarantined)
            .map(|m| (m, "quarantined"))
            .collect();
        assert_eq!(expected.len(), 4);
        let mut by = |key: &dyn Fn(MessageIndex) -> Option<Millis>, why: &'static str| {
            let mut all: Vec<(Millis, MessageIndex)> =
                (0..n).filter_map(|m| key(m).map(|v| (v, m))).collect();
            all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let fresh: Vec<(MessageIndex, &str)> = all
                .into_iter()
                .filter(|(_, m)| !expected.iter().any(|(e, _)| e == m))
                .take(PER_REASON)
                .map(|(_, m)| (m, why))
                .collect();
            assert_eq!(fresh.len(), PER_REASON, "{why}");
            expected.extend(fresh);
        };
        // A wait of 0 is no reason to look; any acked message may be slowest.
        by(
            &|m| Some(outcome.queue_wait(m)).filter(|&w| w > 0),
            "longest queue wait",
        );
        by(&|m| outcome.latency(&scenario, m), "slowest");
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(m, why)| (scenario.message_id(m).into_owned(), why.to_string()))
            .collect();
        assert_eq!(picked, expected);
    }
}
