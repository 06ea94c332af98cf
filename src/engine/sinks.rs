//! The sinks every committed effect reaches (docs/model.md section 19).
//! An increment or irreversible sink counts effects, so its value and
//! duplicates follow from the ledger's totals; an upsert sink keeps a row
//! per distinct key, owned by the intent of its first write (decision
//! 22.12), and is tracked only when the file has one.

use rustc_hash::FxHashMap as HashMap;

use crate::model::{IntentIndex, KeyRef, Scenario, SinkKind, Totals};

const NO_ROW: IntentIndex = IntentIndex::MAX;

pub(super) struct Sinks {
    /// Whether some sink is an upsert.
    upsert: bool,
    /// Owner intent of the row of each intent's own key (`NO_ROW`: none).
    own_rows: Vec<IntentIndex>,
    /// Rows of fresh keys (never iterated).
    fresh_rows: HashMap<KeyRef, IntentIndex>,
    /// Whether each intent owns a row.
    owns_row: Vec<bool>,
    rows: u64,
    owners: u64,
}

impl Sinks {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let upsert = (scenario.guarantees.sinks.iter()).any(|s| s.kind == SinkKind::Upsert);
        let per_intent = if upsert { scenario.intent_count() } else { 0 };
        Sinks {
            upsert,
            own_rows: vec![NO_ROW; per_intent],
            fresh_rows: HashMap::default(),
            owns_row: vec![false; per_intent],
            rows: 0,
            owners: 0,
        }
    }

    /// Whether an effect changes a sink's rows (some sink is an upsert).
    pub(super) fn keeps_rows(&self) -> bool {
        self.upsert
    }

    /// An effect of `intent` under `key` committed.
    #[inline]
    pub(super) fn effect(&mut self, key: KeyRef, intent: IntentIndex) {
        if self.upsert {
            self.upsert_row(key, intent);
        }
    }

    fn upsert_row(&mut self, key: KeyRef, intent: IntentIndex) {
        let row = if key.generation == 0 {
            &mut self.own_rows[key.intent as usize]
        } else {
            self.fresh_rows.entry(key).or_insert(NO_ROW)
        };
        if *row != NO_ROW {
            return;
        }
        *row = intent;
        self.rows += 1;
        if !std::mem::replace(&mut self.owns_row[intent as usize], true) {
            self.owners += 1;
        }
    }

    /// Each sink's `[value, visible_duplicates]`, in file order.
    pub(super) fn finish(&self, scenario: &Scenario, totals: &Totals) -> Vec<[u64; 2]> {
        scenario
            .guarantees
            .sinks
            .iter()
            .map(|s| match s.kind {
                SinkKind::Upsert => [self.rows, self.rows - self.owners],
                SinkKind::Increment | SinkKind::Irreversible => {
                    [totals.effects, totals.duplicated_effects]
                }
            })
            .collect()
    }
}
