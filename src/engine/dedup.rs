//! The deduplication store (docs/model.md section 3, step 3): a result per key,
//! valid strictly before its expiry, never extended by a hit.

use std::collections::HashMap;

use crate::model::{KeyRef, Millis, Scenario};

pub(super) struct DedupStore {
    /// `None`: deduplication is off.
    retention: Option<Millis>,
    /// Result expiry per intent's own key (0: none, which never hits).
    own: Vec<Millis>,
    /// Result expiry of fresh keys given by redrive. Never iterated, so
    /// its order cannot reach any output.
    fresh: HashMap<KeyRef, Millis>,
}

impl DedupStore {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let own = if scenario.dedup_retention.is_some() {
            vec![0; scenario.intent_count()]
        } else {
            Vec::new()
        };
        DedupStore {
            retention: scenario.dedup_retention,
            own,
            fresh: HashMap::new(),
        }
    }

    /// The expiry of a live result for `key` at time `t`, if the store
    /// holds one (a result is valid strictly before its expiry).
    pub(super) fn live(&self, key: KeyRef, t: Millis) -> Option<Millis> {
        self.retention?;
        let expires_at = if key.generation == 0 {
            self.own[key.intent as usize]
        } else {
            self.fresh.get(&key).copied().unwrap_or(0)
        };
        (t < expires_at).then_some(expires_at)
    }

    /// An effect for `key` committed at `t`: its result is stored until
    /// `t + result_retention` (nothing when deduplication is off).
    pub(super) fn store(&mut self, key: KeyRef, t: Millis) {
        let Some(retention) = self.retention else {
            return;
        };
        let expires_at = t.saturating_add(retention);
        if key.generation == 0 {
            self.own[key.intent as usize] = expires_at;
        } else {
            self.fresh.insert(key, expires_at);
        }
    }
}
