//! The deduplication store (docs/model.md section 3, step 3): a result per key,
//! valid strictly before its expiry, never extended by a hit. In
//! write-intent mode (section 18) a key holds an INTENT claim until its
//! lease expires, or DONE until its result expires.

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
    /// Write-intent mode: per key, whether it holds DONE (else INTENT,
    /// whose lease expiry the maps above hold); keys never written read
    /// as expired.
    done_own: Vec<bool>,
    done_fresh: HashMap<KeyRef, bool>,
}

/// What a write-intent key holds at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// DONE, valid strictly before `expires_at`.
    Done(Millis),
    /// A live INTENT claim, strictly before `lease_expires`.
    Intent(Millis),
    /// Nothing live.
    Free,
}

impl DedupStore {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let own = if scenario.dedup_retention.is_some() {
            vec![0; scenario.intent_count()]
        } else {
            Vec::new()
        };
        let write_intent = scenario.dedup_retention.is_some()
            && matches!(
                scenario.guarantees.dedup_mode,
                crate::model::DedupMode::WriteIntent { .. }
            );
        DedupStore {
            retention: scenario.dedup_retention,
            own,
            fresh: HashMap::new(),
            done_own: vec![
                false;
                if write_intent {
                    scenario.intent_count()
                } else {
                    0
                }
            ],
            done_fresh: HashMap::new(),
        }
    }

    fn expiry(&self, key: KeyRef) -> Millis {
        if key.generation == 0 {
            self.own.get(key.intent as usize).copied().unwrap_or(0)
        } else {
            self.fresh.get(&key).copied().unwrap_or(0)
        }
    }

    fn set(&mut self, key: KeyRef, expiry: Millis, done: bool) {
        if key.generation == 0 {
            self.own[key.intent as usize] = expiry;
            self.done_own[key.intent as usize] = done;
        } else {
            self.fresh.insert(key, expiry);
            self.done_fresh.insert(key, done);
        }
    }

    /// Write-intent mode: what `key` holds at `t` (decision 22.11: a lease
    /// is live strictly before it expires).
    pub(super) fn claim_at(&self, key: KeyRef, t: Millis) -> Claim {
        let expiry = self.expiry(key);
        if t >= expiry {
            return Claim::Free;
        }
        let done = if key.generation == 0 {
            self.done_own[key.intent as usize]
        } else {
            self.done_fresh.get(&key).copied().unwrap_or(false)
        };
        if done {
            Claim::Done(expiry)
        } else {
            Claim::Intent(expiry)
        }
    }

    /// Write-intent mode: INTENT on `key` until `lease_expires`.
    pub(super) fn claim(&mut self, key: KeyRef, lease_expires: Millis) {
        self.set(key, lease_expires, false);
    }

    /// Write-intent mode: DONE replaces whatever `key` holds, valid
    /// `result_retention` from `t`; returns its expiry.
    pub(super) fn done(&mut self, key: KeyRef, t: Millis) -> Millis {
        let expires_at = t.saturating_add(self.retention.unwrap_or(Millis::MAX));
        self.set(key, expires_at, true);
        expires_at
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
