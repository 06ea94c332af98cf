//! The sinks every committed effect reaches (docs/model.md section 19).
//! An increment or irreversible sink counts effects, so its value and
//! duplicates follow from the ledger's totals; an upsert sink keeps a row
//! per distinct key, owned by the intent of its first write (decision
//! 22.12), and is tracked only when the file has one.

use rustc_hash::FxHashMap as HashMap;

use super::intents::IntentSet;
use super::messages::Messages;
use crate::model::{IntentIndex, KeyRef, MessageIndex, Scenario, SinkKind, Totals};

#[derive(Clone)]
pub(super) struct Sinks {
    /// The rows every upsert sink shares (every effect reaches every
    /// sink); `None` without an upsert sink.
    rows: Option<Rows>,
}

/// An upsert sink's rows: one per distinct key, owned by the intent of its
/// first write (decision 22.12). Nearly every row is an intent's own key
/// written by that intent: one bit each. The others (fresh keys of a
/// redrive under a new identity, and an own key first written by another
/// intent whose fresh key looks like it) sit in maps that are never
/// iterated in an order that reaches output.
#[derive(Clone)]
pub(super) struct Rows {
    /// Intents whose own key's row exists and is their own.
    own: IntentSet,
    /// Every other row: its key and its owner intent.
    other_rows: HashMap<KeyRef, IntentIndex>,
    /// Per intent, how many of `other_rows` it owns (no zero entries).
    other_owned: HashMap<IntentIndex, u32>,
    /// Rows in all.
    pub(super) rows: u64,
    /// Intents that own a row.
    pub(super) owners: u64,
}

impl Rows {
    pub(super) fn new(intents: usize) -> Self {
        Rows {
            own: IntentSet::new(intents),
            other_rows: HashMap::default(),
            other_owned: HashMap::default(),
            rows: 0,
            owners: 0,
        }
    }

    /// The owner of `key`'s row, if it has one.
    #[inline]
    fn owner(&self, key: KeyRef) -> Option<IntentIndex> {
        if key.generation == 0 && self.own.contains(key.intent) {
            return Some(key.intent);
        }
        if self.other_rows.is_empty() {
            // The common case: no row but the intents' own.
            return None;
        }
        self.other_rows.get(&key).copied()
    }

    /// How many rows `intent` owns.
    #[inline]
    pub(super) fn rows_of(&self, intent: IntentIndex) -> u32 {
        let others = match self.other_owned.is_empty() {
            true => 0,
            false => self.other_owned.get(&intent).copied().unwrap_or(0),
        };
        self.own.contains(intent) as u32 + others
    }

    /// The most rows one intent owns.
    pub(super) fn most(&self) -> u32 {
        let own = (self.rows > self.other_rows.len() as u64) as u32;
        let others = self
            .other_owned
            .iter()
            .map(|(&i, &n)| n + self.own.contains(i) as u32);
        others.max().unwrap_or(0).max(own)
    }

    /// `intent` writes `key`'s row: a new row unless the key has one.
    #[inline(always)]
    pub(super) fn insert(&mut self, key: KeyRef, intent: IntentIndex) {
        if key.generation == 0
            && key.intent == intent
            && self.other_rows.is_empty()
            && self.other_owned.is_empty()
        {
            // The common case, an intent's own key while no other row
            // exists: the row is new exactly when the intent owns none.
            if !self.own.insert(intent) {
                self.rows += 1;
                self.owners += 1;
            }
            return;
        }
        self.insert_in_full(key, intent);
    }

    /// [`Rows::insert`] of a fresh key, another intent's key, or while
    /// other rows exist: out of line, so that the common case stays small.
    #[inline(never)]
    fn insert_in_full(&mut self, key: KeyRef, intent: IntentIndex) {
        if self.owner(key).is_some() {
            return;
        }
        if self.rows_of(intent) == 0 {
            self.owners += 1;
        }
        self.rows += 1;
        if key.generation == 0 && key.intent == intent {
            self.own.insert(intent);
        } else {
            self.other_rows.insert(key, intent);
            *self.other_owned.entry(intent).or_insert(0) += 1;
        }
    }

    /// `key`'s row is deleted if `intent` owns it.
    pub(super) fn delete(&mut self, key: KeyRef, intent: IntentIndex) {
        if self.owner(key) != Some(intent) {
            return;
        }
        self.rows -= 1;
        if key.generation == 0 && key.intent == intent {
            self.own.remove(intent);
        } else {
            self.other_rows.remove(&key);
            let n = self
                .other_owned
                .get_mut(&intent)
                .expect("an owned row is counted");
            *n -= 1;
            if *n == 0 {
                self.other_owned.remove(&intent);
            }
        }
        if self.rows_of(intent) == 0 {
            self.owners -= 1;
        }
    }
}

impl Sinks {
    pub(super) fn new(scenario: &Scenario) -> Self {
        // With `[write]`, each sink keeps its own rows (`write::sink`).
        let upsert = scenario.write.is_none()
            && (scenario.guarantees.sinks.iter()).any(|s| s.kind == SinkKind::Upsert);
        Sinks {
            rows: upsert.then(|| Rows::new(scenario.intent_count())),
        }
    }

    /// Whether an effect changes a sink's rows (some sink is an upsert).
    pub(super) fn keeps_rows(&self) -> bool {
        self.rows.is_some()
    }

    fn rows_of(&self, intent: usize) -> Option<u32> {
        self.rows.as_ref().map(|r| r.rows_of(intent as IntentIndex))
    }

    /// An effect of `intent` under `key` committed.
    #[inline]
    pub(super) fn effect(&mut self, key: KeyRef, intent: IntentIndex) {
        if let Some(rows) = &mut self.rows {
            rows.insert(key, intent);
        }
    }

    /// Each sink's `[value, visible_duplicates, missing,
    /// max_per_intent]`, in file order. `visible`: under exactly-once, the
    /// writes committed and their count per intent (otherwise every
    /// effect is visible). Missing intents are those of arrived messages
    /// with no visible write.
    pub(super) fn finish(
        &self,
        scenario: &Scenario,
        totals: &Totals,
        messages: &Messages,
        visible: Option<(u64, &[u32])>,
    ) -> Vec<[u64; 4]> {
        // Only explicit intents can be shared by several messages (and by
        // generated messages with an explicit key): they are summed here.
        // A generated message with its own key is its intent's only
        // message, counted as it is met: no allocation per message.
        let explicit = scenario.intents.explicit.len();
        let mut arrived = vec![false; explicit];
        let mut effects_of = vec![0u32; explicit];
        let (mut writes, mut rows) = (Tally::default(), Tally::default());
        for (m, state) in messages.iter().enumerate() {
            let intent = scenario.intent(m as MessageIndex) as usize;
            let has_arrived = state.has_arrived();
            if intent < explicit {
                arrived[intent] |= has_arrived;
                effects_of[intent] = effects_of[intent].saturating_add(state.effects);
                continue;
            }
            let n = visible.map_or(state.effects, |(_, per_intent)| per_intent[intent]);
            writes.add(has_arrived, n);
            if let Some(n) = self.rows_of(intent) {
                rows.add(has_arrived, n);
            }
        }
        for (i, &has_arrived) in arrived.iter().enumerate() {
            let n = visible.map_or(effects_of[i], |(_, per_intent)| per_intent[i]);
            writes.add(has_arrived, n);
            if let Some(n) = self.rows_of(i) {
                rows.add(has_arrived, n);
            }
        }
        let value = visible.map_or(totals.effects, |(value, _)| value);
        scenario
            .guarantees
            .sinks
            .iter()
            .map(|s| match s.kind {
                SinkKind::Upsert => {
                    let (n, owners) = self.rows.as_ref().map_or((0, 0), |r| (r.rows, r.owners));
                    [n, n - owners, rows.missing, rows.most]
                }
                SinkKind::Increment | SinkKind::Irreversible => {
                    [value, value - writes.distinct, writes.missing, writes.most]
                }
            })
            .collect()
    }
}

/// Over intents' visible writes (or an upsert's rows per owner intent):
/// how many intents have one, how many arrived intents have none, and the
/// most of one intent.
#[derive(Default)]
struct Tally {
    distinct: u64,
    missing: u64,
    most: u64,
}

impl Tally {
    fn add(&mut self, arrived: bool, n: u32) {
        if n > 0 {
            self.distinct += 1;
        } else if arrived {
            self.missing += 1;
        }
        self.most = self.most.max(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn key(intent: IntentIndex, generation: u32) -> KeyRef {
        KeyRef { intent, generation }
    }

    proptest! {
        /// The compact rows agree with a plain map from key to owner:
        /// rows, owners, each intent's rows and the most of one, after
        /// any mix of writes and compensations of own keys, fresh keys and
        /// other intents' own keys.
        #[test]
        fn rows_agree_with_a_map_of_key_to_owner(
            ops in prop::collection::vec((any::<bool>(), 0u32..6, 0u32..6, 0u32..3), 0..60)
        ) {
            let mut rows = Rows::new(6);
            let mut plain: BTreeMap<KeyRef, IntentIndex> = BTreeMap::new();
            for (write, intent, key_intent, generation) in ops {
                let k = key(key_intent, generation);
                if write {
                    rows.insert(k, intent);
                    plain.entry(k).or_insert(intent);
                } else {
                    rows.delete(k, intent);
                    if plain.get(&k) == Some(&intent) {
                        plain.remove(&k);
                    }
                }
                let of = |i: IntentIndex| plain.values().filter(|&&o| o == i).count() as u32;
                prop_assert_eq!(rows.rows, plain.len() as u64);
                prop_assert_eq!(rows.owners, (0..6).filter(|&i| of(i) > 0).count() as u64);
                for i in 0..6 {
                    prop_assert_eq!(rows.rows_of(i), of(i), "intent {}", i);
                }
                prop_assert_eq!(rows.most(), (0..6).map(of).max().unwrap_or(0));
            }
        }
    }

    #[test]
    fn an_own_key_first_written_by_another_intent_stays_that_intents_row() {
        let mut rows = Rows::new(3);
        rows.insert(key(1, 0), 2);
        rows.insert(key(1, 0), 1);
        assert_eq!((rows.rows, rows.owners), (1, 1));
        assert_eq!((rows.rows_of(1), rows.rows_of(2), rows.most()), (0, 1, 1));
        rows.delete(key(1, 0), 1);
        assert_eq!(rows.rows, 1, "only the owner's compensation deletes it");
        rows.insert(key(2, 0), 2);
        assert_eq!((rows.rows_of(2), rows.most()), (2, 2));
        rows.delete(key(1, 0), 2);
        assert_eq!((rows.rows, rows.owners, rows.rows_of(2)), (1, 1, 1));
    }
}
