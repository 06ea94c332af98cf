//! The deduplication store (docs/model.md section 3, step 3): a result per key,
//! valid strictly before its expiry, never extended by a hit.

use std::collections::HashMap;

use crate::model::{KeyRef, Millis, Scenario};

/// What the store says at a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lookup {
    /// Deduplication is off: the effect commits.
    Off,
    /// A live result: no effect. The stored expiry is not extended.
    Hit { expires_at: Millis },
    /// No live result: the effect commits and its result is now stored.
    Stored,
}

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

    /// Consults the store for `key` at time `t`, storing a new result when
    /// there is no live one.
    pub(super) fn check_and_store(&mut self, key: KeyRef, t: Millis) -> Lookup {
        let Some(retention) = self.retention else {
            return Lookup::Off;
        };
        let expires_at = if key.generation == 0 {
            &mut self.own[key.intent as usize]
        } else {
            self.fresh.entry(key).or_insert(0)
        };
        if t < *expires_at {
            Lookup::Hit {
                expires_at: *expires_at,
            }
        } else {
            *expires_at = t.saturating_add(retention);
            Lookup::Stored
        }
    }
}
