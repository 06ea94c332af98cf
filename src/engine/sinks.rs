//! The sinks every committed effect reaches (docs/model.md section 19).
//! An increment or irreversible sink counts effects, so its value and
//! duplicates follow from the ledger's totals; an upsert sink keeps a row
//! per distinct key, owned by the intent of its first write (decision
//! 22.12), and is tracked only when the file has one.

use rustc_hash::FxHashMap as HashMap;

use super::messages::Messages;
use crate::model::{IntentIndex, KeyRef, MessageIndex, Scenario, SinkKind, State, Totals};

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
        let intents = scenario.intent_count();
        // Whether each intent has an arrived message.
        let mut arrived = vec![false; intents];
        let mut effects_of: Vec<u32> = Vec::new();
        if visible.is_none() {
            effects_of = vec![0; intents];
        }
        for (m, state) in messages.iter().enumerate() {
            let intent = scenario.intent(m as MessageIndex) as usize;
            if state.state != State::Waiting || state.total_receives > 0 {
                arrived[intent] = true;
            }
            if let Some(n) = effects_of.get_mut(intent) {
                *n = n.saturating_add(state.effects);
            }
        }
        let (value, per_intent): (u64, &[u32]) = match visible {
            Some((value, per_intent)) => (value, per_intent),
            None => (totals.effects, &effects_of),
        };
        let counted = counted(&arrived, per_intent);
        let rows = self.upsert.then(|| {
            let mut rows_of = vec![0u32; intents];
            let owners = self.own_rows.iter().chain(self.fresh_rows.values());
            for &owner in owners.filter(|&&o| o != NO_ROW) {
                rows_of[owner as usize] += 1;
            }
            counted_rows(&arrived, &rows_of)
        });
        scenario
            .guarantees
            .sinks
            .iter()
            .map(|s| match s.kind {
                SinkKind::Upsert => {
                    let (missing, most) = rows.unwrap_or_default();
                    [self.rows, self.rows - self.owners, missing, most]
                }
                SinkKind::Increment | SinkKind::Irreversible => {
                    let (distinct, missing, most) = counted;
                    [value, value - distinct, missing, most]
                }
            })
            .collect()
    }
}

/// Over intents' visible writes: how many intents have one, how many
/// arrived intents have none, and the most of one intent.
fn counted(arrived: &[bool], per_intent: &[u32]) -> (u64, u64, u64) {
    let (mut distinct, mut missing, mut most) = (0, 0, 0);
    for (i, &n) in per_intent.iter().enumerate() {
        if n > 0 {
            distinct += 1;
        } else if arrived[i] {
            missing += 1;
        }
        most = most.max(n as u64);
    }
    (distinct, missing, most)
}

/// An upsert's rows per owner intent: missing arrived intents, the most
/// rows of one.
fn counted_rows(arrived: &[bool], rows_of: &[u32]) -> (u64, u64) {
    let (_, missing, most) = counted(arrived, rows_of);
    (missing, most)
}
