//! The sinks every committed effect reaches (docs/model.md section 19).
//! An increment or irreversible sink counts effects, so its value and
//! duplicates follow from the ledger's totals; an upsert sink keeps a row
//! per distinct key, owned by the intent of its first write (decision
//! 22.12), and is tracked only when the file has one.

use rustc_hash::FxHashMap as HashMap;

use super::messages::Messages;
use crate::model::{IntentIndex, KeyRef, MessageIndex, Scenario, SinkKind, State, Totals};

const NO_ROW: IntentIndex = IntentIndex::MAX;

#[derive(Clone)]
pub(super) struct Sinks {
    /// The rows every upsert sink shares (every effect reaches every
    /// sink); `None` without an upsert sink.
    rows: Option<Rows>,
}

/// An upsert sink's rows: one per distinct key, owned by the intent of its
/// first write (decision 22.12). Rows of an intent's own key sit in a
/// vector, rows of fresh keys (redriven under a new identity) in a map
/// that is never iterated.
#[derive(Clone)]
pub(super) struct Rows {
    /// Owner intent of the row of each intent's own key (`NO_ROW`: none).
    own_rows: Vec<IntentIndex>,
    /// Rows of fresh keys.
    fresh_rows: HashMap<KeyRef, IntentIndex>,
    /// How many rows each intent owns.
    pub(super) rows_of: Vec<u32>,
    /// Rows in all.
    pub(super) rows: u64,
    /// Intents that own a row.
    pub(super) owners: u64,
}

impl Rows {
    pub(super) fn new(intents: usize) -> Self {
        Rows {
            own_rows: vec![NO_ROW; intents],
            fresh_rows: HashMap::default(),
            rows_of: super::pages::zeroed(intents),
            rows: 0,
            owners: 0,
        }
    }

    fn row(&mut self, key: KeyRef) -> &mut IntentIndex {
        if key.generation == 0 {
            &mut self.own_rows[key.intent as usize]
        } else {
            self.fresh_rows.entry(key).or_insert(NO_ROW)
        }
    }

    /// `intent` writes `key`'s row: a new row unless the key has one.
    pub(super) fn insert(&mut self, key: KeyRef, intent: IntentIndex) {
        let row = self.row(key);
        if *row != NO_ROW {
            return;
        }
        *row = intent;
        self.rows += 1;
        let owned = &mut self.rows_of[intent as usize];
        if *owned == 0 {
            self.owners += 1;
        }
        *owned = owned.saturating_add(1);
    }

    /// `key`'s row is deleted if `intent` owns it.
    pub(super) fn delete(&mut self, key: KeyRef, intent: IntentIndex) {
        let row = self.row(key);
        if *row != intent {
            return;
        }
        *row = NO_ROW;
        self.rows -= 1;
        let owned = &mut self.rows_of[intent as usize];
        *owned -= 1;
        if *owned == 0 {
            self.owners -= 1;
        }
    }
}

impl Sinks {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let upsert = (scenario.guarantees.sinks.iter()).any(|s| s.kind == SinkKind::Upsert);
        Sinks {
            rows: upsert.then(|| Rows::new(scenario.intent_count())),
        }
    }

    /// Whether an effect changes a sink's rows (some sink is an upsert).
    pub(super) fn keeps_rows(&self) -> bool {
        self.rows.is_some()
    }

    fn rows_of(&self, intent: usize) -> Option<&u32> {
        self.rows.as_ref().and_then(|r| r.rows_of.get(intent))
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
            let has_arrived = state.state != State::Waiting || state.total_receives > 0;
            if intent < explicit {
                arrived[intent] |= has_arrived;
                effects_of[intent] = effects_of[intent].saturating_add(state.effects);
                continue;
            }
            let n = visible.map_or(state.effects, |(_, per_intent)| per_intent[intent]);
            writes.add(has_arrived, n);
            if let Some(&n) = self.rows_of(intent) {
                rows.add(has_arrived, n);
            }
        }
        for (i, &has_arrived) in arrived.iter().enumerate() {
            let n = visible.map_or(effects_of[i], |(_, per_intent)| per_intent[i]);
            writes.add(has_arrived, n);
            if let Some(&n) = self.rows_of(i) {
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
