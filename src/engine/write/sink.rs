//! One sink of a write to several sinks: what reached it (a net count per
//! intent, or rows), whether each intent was ever visible, and the call
//! counters its fault selectors read.

use rustc_hash::FxHashSet as HashSet;

use super::super::intents::IntentSet;
use super::super::sinks::Rows;
use super::rows::{Applied, RowWrite, VersionedSink};
use crate::model::{
    CallSelector, Class, IntentIndex, KeyRef, Millis, ReasonIndex, Scenario, SinkCalls,
    SinkFaultKind, SinkKind, Write,
};

/// What the caller heard from one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Heard {
    Ok,
    /// Nothing applied.
    Failed(ReasonIndex, Class),
    /// Applied; heard as a transient failure.
    Lost,
}

/// One call as a sink's faults read it: its intent, its number among
/// the intent's calls and the intent's number in first-call order (0
/// where no selector reads them), when, of which kind, and whether the
/// operator has repaired.
#[derive(Clone, Copy)]
struct Call {
    intent: IntentIndex,
    n: u64,
    ordinal: u64,
    at: Millis,
    compensation: bool,
    repaired: bool,
}

/// Per sink: its rows or counts and its call counters.
#[derive(Clone)]
pub(super) struct SinkState {
    pub(super) kind: SinkKind,
    /// Increment and irreversible: applied calls minus applied
    /// compensations, per intent.
    net: Vec<i32>,
    /// Upsert: its rows.
    rows: Option<Rows>,
    /// The intents ever visible in the sink.
    ever: IntentSet,
    /// The sum of `net` (increment, irreversible).
    value: i64,
    /// Per intent: calls so far, writes and compensations apart (only
    /// when a `first` selector reads them).
    calls: [Vec<u32>; 2],
    /// Per intent: its number in order of first call (only when an
    /// `every` selector reads it), writes and compensations apart.
    ordinal: [Vec<u32>; 2],
    next_ordinal: [u32; 2],
    /// Per fault: the intents an `intents` selector names.
    selected: Vec<Option<HashSet<IntentIndex>>>,
    /// Outbox: the latest application minus its row's time, at most.
    pub(super) max_lag: Millis,
    /// `becomes` (section 28.8): from this instant, writes apply by this
    /// kind; both the counts and the rows are kept then.
    change: Option<(Millis, SinkKind)>,
    /// Increment to upsert: the keys counted before the change (a later
    /// write of one changes nothing).
    counted_keys: Option<HashSet<KeyRef>>,
    /// Write calls applied at or after the change.
    pub(super) writes_after_change: u64,
    /// `versioned` (section 28.9): its rows with their values and
    /// versions, instead of `rows`.
    pub(super) versioned: Option<Box<VersionedSink>>,
}

impl SinkState {
    pub(super) fn new(scenario: &Scenario, k: usize, write: &Write) -> Self {
        let intents = scenario.intent_count();
        let calls = &write.sinks[k];
        let kind = scenario.guarantees.sinks[k].kind;
        let wants = |compensation: bool, first: bool| {
            let n = calls.faults.iter().any(|f| {
                f.compensation == compensation
                    && match f.selector {
                        CallSelector::First(_) => first,
                        CallSelector::Every(_) => !first,
                        _ => false,
                    }
            });
            crate::engine::pages::zeroed(if n { intents } else { 0 })
        };
        let change = calls.becomes;
        let (counts, upsert) = match (change, calls.versioned) {
            // Both kinds in one run: both kept.
            (Some(_), _) => (true, true),
            (None, Some(_)) => (false, false),
            (None, None) => (kind != SinkKind::Upsert, kind == SinkKind::Upsert),
        };
        SinkState {
            kind,
            net: crate::engine::pages::zeroed(if counts { intents } else { 0 }),
            rows: upsert.then(|| Rows::new(intents)),
            ever: IntentSet::new(intents),
            value: 0,
            calls: [wants(false, true), wants(true, true)],
            ordinal: [wants(false, false), wants(true, false)],
            next_ordinal: [0; 2],
            selected: (calls.faults.iter())
                .map(|f| match &f.selector {
                    CallSelector::Intents(ms) => {
                        Some(ms.iter().map(|&m| scenario.intent(m)).collect())
                    }
                    _ => None,
                })
                .collect(),
            max_lag: 0,
            change,
            counted_keys: (change.map(|(_, to)| to) == Some(SinkKind::Upsert))
                .then(HashSet::default),
            writes_after_change: 0,
            versioned: calls.versioned.map(|s| Box::new(VersionedSink::new(s))),
        }
    }

    /// The kind writes apply by at `at`.
    #[inline(always)]
    pub(super) fn kind_at(&self, at: Millis) -> SinkKind {
        match self.change {
            Some((from, to)) if at >= from => to,
            _ => self.kind,
        }
    }

    /// Whether the sink has `becomes`.
    pub(super) fn changes(&self) -> bool {
        self.change.is_some()
    }

    /// The kind at the run's end (`end`).
    pub(super) fn kind_at_end(&self, end: Millis) -> SinkKind {
        self.kind_at(end)
    }

    /// Counts a call of `intent` (a compensation or a write): its number
    /// among the intent's calls and the intent's number in first-call order.
    #[inline(always)]
    fn count(&mut self, intent: IntentIndex, compensation: bool) -> (u64, u64) {
        let i = compensation as usize;
        let n = match self.calls[i].get_mut(intent as usize) {
            Some(n) => {
                *n = n.saturating_add(1);
                *n as u64
            }
            None => 0,
        };
        let ordinal = match self.ordinal[i].get_mut(intent as usize) {
            Some(o) => {
                if *o == 0 {
                    self.next_ordinal[i] += 1;
                    *o = self.next_ordinal[i];
                }
                *o as u64
            }
            None => 0,
        };
        (n, ordinal)
    }

    /// What [`count`](Self::count) would return for a write call of
    /// `intent` now, without counting it.
    #[inline(always)]
    fn next_count(&self, intent: IntentIndex) -> (u64, u64) {
        let n = self.calls[0]
            .get(intent as usize)
            .map_or(0, |&n| n.saturating_add(1) as u64);
        let ordinal = self.ordinal[0]
            .get(intent as usize)
            .map_or(0, |&o| match o {
                0 => self.next_ordinal[0] as u64 + 1,
                o => o as u64,
            });
        (n, ordinal)
    }

    /// A call for `intent` at `at` (a compensation or a write), counted:
    /// the sink's first selecting fault decides it, in file order, then
    /// its outage window (`unavailable`: that failure's reason).
    #[inline(always)]
    pub(super) fn call(
        &mut self,
        calls: &SinkCalls,
        intent: IntentIndex,
        at: Millis,
        compensation: bool,
        repaired: bool,
        unavailable: ReasonIndex,
    ) -> Heard {
        let (n, ordinal) = self.count(intent, compensation);
        let call = Call {
            intent,
            n,
            ordinal,
            at,
            compensation,
            repaired,
        };
        self.heard(calls, call, unavailable)
    }

    /// Whether a write call of `intent` at `at` would be heard to succeed
    /// (as [`call`](Self::call) decides it), without counting it.
    #[inline(always)]
    pub(super) fn would_succeed(
        &self,
        calls: &SinkCalls,
        intent: IntentIndex,
        at: Millis,
        repaired: bool,
    ) -> bool {
        let (n, ordinal) = self.next_count(intent);
        let call = Call {
            intent,
            n,
            ordinal,
            at,
            compensation: false,
            repaired,
        };
        // The reason of an outage's failure does not matter here.
        self.heard(calls, call, 0) == Heard::Ok
    }

    /// A write call of `intent` at `at` that
    /// [`would_succeed`](Self::would_succeed): counted and applied under
    /// `key`.
    #[inline(always)]
    pub(super) fn succeed(&mut self, key: KeyRef, intent: IntentIndex, at: Millis) {
        self.count(intent, false);
        self.apply(key, intent, at, None);
    }

    /// How the sink answers `call`, counted already.
    #[inline(always)]
    fn heard(&self, calls: &SinkCalls, call: Call, unavailable: ReasonIndex) -> Heard {
        let Call {
            intent,
            n,
            ordinal,
            at,
            compensation,
            repaired,
        } = call;
        for (i, f) in calls.faults.iter().enumerate() {
            if f.compensation != compensation {
                continue;
            }
            let selected = match &f.selector {
                CallSelector::First(first) => n <= *first,
                CallSelector::Intents(_) => {
                    (self.selected[i].as_ref()).is_some_and(|s| s.contains(&intent))
                }
                // Ordinals are 32-bit: a 32-bit division where `every`
                // is one too (the faster one), and no ordinal above 0 is
                // a multiple of a larger one.
                CallSelector::Every(every) => match u32::try_from(*every) {
                    Ok(every) => (ordinal as u32).is_multiple_of(every),
                    Err(_) => ordinal == 0,
                },
                CallSelector::UntilRepair => !repaired,
            };
            if selected {
                return match f.kind {
                    SinkFaultKind::Fail(reason, class) => Heard::Failed(reason, class),
                    SinkFaultKind::LoseReply => Heard::Lost,
                };
            }
        }
        if let Some((from, duration)) = calls.outage
            && at >= from
            && at - from < duration
        {
            return Heard::Failed(unavailable, Class::Transient);
        }
        Heard::Ok
    }

    /// The write of `intent` under `key` is applied at `at`, by the kind
    /// in force then (section 28.8): an upsert writes the key's row
    /// unless it has one (or, after a change from increment, a count); an
    /// increment or an irreversible send adds one to the intent. A
    /// versioned sink writes `row` by its version (section 28.9): what it
    /// did is returned (a rejected stale write never shows the intent).
    #[inline(always)]
    pub(super) fn apply(
        &mut self,
        key: KeyRef,
        intent: IntentIndex,
        at: Millis,
        row: Option<RowWrite>,
    ) -> Applied {
        if let Some(v) = &mut self.versioned {
            let w = row.expect("a write to a versioned sink knows its row");
            let applied = v.apply(w, intent);
            if applied != Applied::StaleRejected {
                self.ever.insert(intent);
            }
            return applied;
        }
        self.ever.insert(intent);
        if self.change.is_none() {
            match &mut self.rows {
                Some(rows) => rows.insert(key, intent),
                None => self.count_one(intent),
            }
            return Applied::Fresh;
        }
        let changed = self.change.is_some_and(|(from, _)| at >= from);
        if changed {
            self.writes_after_change += 1;
        }
        match self.kind_at(at) {
            SinkKind::Upsert => {
                if self.counted_keys.as_ref().is_some_and(|k| k.contains(&key)) {
                    return Applied::Fresh;
                }
                if let Some(rows) = &mut self.rows {
                    rows.insert(key, intent);
                }
            }
            _ => {
                self.count_one(intent);
                if !changed && let Some(keys) = &mut self.counted_keys {
                    keys.insert(key);
                }
            }
        }
        Applied::Fresh
    }

    #[inline(always)]
    fn count_one(&mut self, intent: IntentIndex) {
        let n = &mut self.net[intent as usize];
        *n = n.saturating_add(1);
        self.value += 1;
    }

    /// A compensation of `intent`'s write under `key`, applied at
    /// `applied_at`, is applied: what the write added removed by the kind
    /// in force when it applied: an increment decremented, an upsert's
    /// row deleted if `intent` owns it.
    pub(super) fn compensate(
        &mut self,
        key: KeyRef,
        intent: IntentIndex,
        applied_at: Millis,
        row: Option<RowWrite>,
    ) {
        if let Some(v) = &mut self.versioned {
            v.delete(row.expect("a versioned write knows its row").row, intent);
            return;
        }
        match (self.kind_at(applied_at), &mut self.rows) {
            (SinkKind::Upsert, Some(rows)) => rows.delete(key, intent),
            _ => {
                let n = &mut self.net[intent as usize];
                *n = n.saturating_sub(1);
                self.value -= 1;
            }
        }
    }

    /// `[value, visible_duplicates, missing, max_per_intent]` over the
    /// intents that `arrived`.
    pub(super) fn finish(&self, arrived: &IntentSet) -> [i64; 4] {
        let missing = arrived.count_not_in(&self.ever) as i64;
        if let Some(v) = &self.versioned {
            let [rows, duplicates, most] = v.counts();
            return [rows, duplicates, missing, most];
        }
        if let (Some(_), Some(r)) = (self.change, &self.rows) {
            // Rows and counts together: per intent its rows plus its count.
            let (mut present, mut most) = (0i64, 0i64);
            for (i, &n) in self.net.iter().enumerate() {
                let holds = r.rows_of(i as IntentIndex) as i64 + n.max(0) as i64;
                present += (holds > 0) as i64;
                most = most.max(holds);
            }
            let value = r.rows as i64 + self.value;
            return [value, value - present, missing, most];
        }
        if let Some(r) = &self.rows {
            let most = r.most() as i64;
            let (rows, owners) = (r.rows as i64, r.owners as i64);
            return [rows, rows - owners, missing, most];
        }
        let positive = self.net.iter().filter(|&&n| n > 0).count() as i64;
        let most = self.net.iter().copied().max().unwrap_or(0).max(0) as i64;
        [self.value, self.value - positive, missing, most]
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::scenario::load_str;

    proptest! {
        /// A sink decides a write call the same whether it only looks
        /// (`would_succeed`, which counts nothing) or makes it (`call`),
        /// whatever its `first` and `every` faults on writes and
        /// compensations, and whichever intents call in turn.
        #[test]
        fn looking_at_a_call_decides_it_as_making_it_does(
            first in proptest::option::of(1u32..4),
            every in 1u32..4,
            calls in prop::collection::vec((0u32..5, any::<bool>()), 1..40),
        ) {
            let mut faults = vec![
                format!("{{ lose_reply = {{ every = {every} }} }}"),
                "{ fail = { every = 2 }, compensation = true }".to_string(),
            ];
            if let Some(first) = first {
                faults.insert(0, format!("{{ fail = {{ first = {first} }} }}"));
            }
            let text = format!(
                "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                 [write]\nstrategy = \"saga\"\nrelay_retry = \"1s\"\n\
                 [[sink]]\nname = \"a\"\nkind = \"increment\"\nfaults = [{}]\n\
                 [[traffic]]\ncount = 5\nover = \"1s\"\n",
                faults.join(", ")
            );
            let (scenario, _) = load_str("t.toml", &text).unwrap();
            let write = scenario.write.as_ref().unwrap();
            let mut sink = SinkState::new(&scenario, 0, write);
            for (intent, compensation) in calls {
                let looked = sink.would_succeed(&write.sinks[0], intent, 0, false);
                let heard = sink.call(&write.sinks[0], intent, 0, compensation, false, 0);
                if !compensation {
                    prop_assert_eq!(looked, heard == Heard::Ok, "intent {}", intent);
                }
            }
        }
    }
}
