//! The deduplication store (docs/model.md section 3, step 3): a result per key,
//! valid strictly before its expiry, never extended by a hit. In
//! write-intent mode (section 18) a key holds an INTENT claim until its
//! lease expires, or DONE until its result expires.

use rustc_hash::FxHashMap as HashMap;

use super::Core;
use super::transition::{Detail, Lapsed};
use crate::model::{IntentIndex, KeyRef, MessageIndex, Millis, Scenario};

/// In [`DedupStore::results`]: the commit time is in `late`.
const LATE: u32 = u32::MAX;

#[derive(Clone)]
pub(super) struct DedupStore {
    /// `None`: deduplication is off.
    retention: Option<Millis>,
    /// Result mode: per intent's own key, the commit time of its latest
    /// result plus one (0: none), four bytes an intent; a commit time
    /// past the range (49.7 days) reads [`LATE`] and is kept in `late`.
    /// Empty in write-intent mode, whose claims are not results.
    results: Vec<u32>,
    late: HashMap<IntentIndex, Millis>,
    /// Write-intent mode: the expiry of each intent's own key, a lease's
    /// or a result's (0: none, which never hits).
    own: Vec<Millis>,
    /// Result expiry of fresh keys given by redrive. Never iterated, so
    /// its order cannot reach any output.
    fresh: HashMap<KeyRef, Millis>,
    /// Write-intent mode: per key, whether it holds DONE (else INTENT,
    /// whose lease expiry the maps above hold); keys never written read
    /// as expired.
    done_own: Vec<bool>,
    done_fresh: HashMap<KeyRef, bool>,
    /// Write-intent mode: who made each key's latest claim.
    holder_own: Vec<Holder>,
    holder_fresh: HashMap<KeyRef, Holder>,
    /// Result mode, a write to several sinks: per key, the results of
    /// writes whose last call is not heard yet (decisions 27.18, 27.37),
    /// as (seen from, commit instant) in the order stored. Until one is
    /// seen the key's earlier result answers; from then on it replaces
    /// it. Entries already seen are folded into the results when the map
    /// has doubled, so it holds about the writes in flight.
    pending: HashMap<KeyRef, Vec<(Millis, Millis)>>,
    pending_kept: usize,
}

/// Who claimed a key, when, and whether that delivery crashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Holder {
    pub message: MessageIndex,
    pub claimed_at: Millis,
    pub crashed: bool,
}

/// What a write-intent key holds at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// DONE, valid strictly before `expires_at`.
    Done(Millis),
    /// A live INTENT claim, strictly before `lease_expires`, and its holder.
    Intent(Millis, Holder),
    /// Nothing live; an INTENT that expired without DONE, if the key's
    /// last state was one (its expiry and holder).
    Free(Option<(Millis, Holder)>),
}

impl DedupStore {
    pub(super) fn new(scenario: &Scenario) -> Self {
        let on = scenario.dedup_retention.is_some();
        let write_intent = on
            && matches!(
                scenario.guarantees.dedup_mode,
                crate::model::DedupMode::WriteIntent { .. }
            );
        let per_intent = if write_intent {
            scenario.intent_count()
        } else {
            0
        };
        let results = if on && !write_intent {
            vec![0; scenario.intent_count()]
        } else {
            Vec::new()
        };
        DedupStore {
            retention: scenario.dedup_retention,
            results,
            late: HashMap::default(),
            own: vec![0; per_intent],
            fresh: HashMap::default(),
            done_own: vec![false; per_intent],
            done_fresh: HashMap::default(),
            holder_own: vec![Holder::default(); per_intent],
            holder_fresh: HashMap::default(),
            pending: HashMap::default(),
            pending_kept: 0,
        }
    }

    /// Whether the store keeps results (deduplication is on).
    pub(super) fn keeps_results(&self) -> bool {
        self.retention.is_some()
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

    /// The store restarts now (section 28.5), after every other event of
    /// the instant: without persistence every entry live now is lost, as
    /// if every result and lease had expired at once.
    pub(super) fn restart_now(&mut self, core: &mut super::Core) {
        let now = core.clock.now;
        core.clock.last_part_event = Some(now);
        let lost = core.scenario.store_loses_state;
        let live = self.restart(now, lost);
        let totals = &mut core.measures.totals;
        totals.store_restarts += 1;
        if lost {
            totals.entries_lost += live;
        }
        core.record(None, super::Detail::StoreRestarted { live, lost });
    }

    /// The store restarts at `t` (section 28.5): the entries live then
    /// (results and DONE before their expiry, INTENTs before their
    /// lease's), which it loses when `loses_state`. A result whose write's
    /// last call is still ahead is stored after the restart, and kept.
    /// One pass over the store (restarts are at most 100).
    pub(super) fn restart(&mut self, t: Millis, loses_state: bool) -> u64 {
        let Some(retention) = self.retention else {
            return 0;
        };
        crate::meter::add(self.results.len() + self.own.len());
        let mut live = 0u64;
        for (i, &v) in self.results.iter().enumerate() {
            let commit = match v {
                0 => continue,
                LATE => self.late[&(i as IntentIndex)],
                v => Millis::from(v - 1),
            };
            live += u64::from(t < commit.saturating_add(retention));
        }
        live += self.own.iter().filter(|&&e| t < e).count() as u64;
        live += self.fresh.values().filter(|&&e| t < e).count() as u64;
        let seen =
            |&(from, commit): &(Millis, Millis)| from <= t && t < commit.saturating_add(retention);
        live += (self.pending.values().flatten().filter(|e| seen(e))).count() as u64;
        if loses_state {
            self.results.fill(0);
            self.late.clear();
            self.own.fill(0);
            self.done_own.fill(false);
            self.holder_own.fill(Holder::default());
            self.fresh.clear();
            self.done_fresh.clear();
            self.holder_fresh.clear();
            for waiting in self.pending.values_mut() {
                waiting.retain(|&(from, _)| from > t);
            }
            self.pending.retain(|_, w| !w.is_empty());
        }
        live
    }

    /// Write-intent mode: what `key` holds at `t` (decision 22.11: a lease
    /// is live strictly before it expires).
    pub(super) fn claim_at(&self, key: KeyRef, t: Millis) -> Claim {
        let expiry = self.expiry(key);
        let (done, holder) = if key.generation == 0 {
            let i = key.intent as usize;
            (self.done_own[i], self.holder_own[i])
        } else {
            (
                self.done_fresh.get(&key).copied().unwrap_or(false),
                self.holder_fresh.get(&key).copied().unwrap_or_default(),
            )
        };
        match (t < expiry, done) {
            (true, true) => Claim::Done(expiry),
            (true, false) => Claim::Intent(expiry, holder),
            // Never written reads as expired at 0.
            (false, false) if expiry > 0 => Claim::Free(Some((expiry, holder))),
            (false, _) => Claim::Free(None),
        }
    }

    /// Write-intent mode: INTENT on `key` until `lease_expires`, held by
    /// `holder`.
    pub(super) fn claim(&mut self, key: KeyRef, lease_expires: Millis, holder: Holder) {
        self.set(key, lease_expires, false);
        if key.generation == 0 {
            self.holder_own[key.intent as usize] = holder;
        } else {
            self.holder_fresh.insert(key, holder);
        }
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
    #[inline(always)]
    pub(super) fn live(&self, key: KeyRef, t: Millis) -> Option<Millis> {
        let retention = self.retention?;
        if !self.pending.is_empty()
            && let Some(expires_at) = self.seen_expiry(key, t, retention)
        {
            return (t < expires_at).then_some(expires_at);
        }
        // The common cases inline (a first delivery finds nothing; a
        // compact commit time), the rest out of line: the run's loop
        // stays small.
        let expires_at = match self.results.get(key.intent as usize) {
            Some(0) if key.generation == 0 => return None,
            Some(&v) if key.generation == 0 && v != LATE => {
                Millis::from(v - 1).saturating_add(retention)
            }
            _ => self.other_expiry(key, retention),
        };
        (t < expires_at).then_some(expires_at)
    }

    /// The expiry of the latest pending result for `key` seen by `t`, if
    /// any: it replaced every result stored before it (decision 27.37).
    #[cold]
    #[inline(never)]
    fn seen_expiry(&self, key: KeyRef, t: Millis, retention: Millis) -> Option<Millis> {
        let waiting = self.pending.get(&key)?;
        // Stored in order: among those seen by `t`, the one seen last
        // (the later stored on a tie) is the key's result.
        let mut latest: Option<(Millis, Millis)> = None;
        for &(from, commit) in waiting {
            if from <= t && latest.is_none_or(|(f, _)| from >= f) {
                latest = Some((from, commit));
            }
        }
        latest.map(|(_, commit)| commit.saturating_add(retention))
    }

    /// [`DedupStore::live`]'s expiry for a fresh key, a commit time past
    /// the compact range, or write-intent mode's own keys (0: none).
    #[cold]
    #[inline(never)]
    fn other_expiry(&self, key: KeyRef, retention: Millis) -> Millis {
        if key.generation != 0 {
            self.fresh.get(&key).copied().unwrap_or(0)
        } else if self.results.is_empty() {
            self.own[key.intent as usize]
        } else {
            self.late[&key.intent].saturating_add(retention)
        }
    }

    /// An effect for `key` committed at `t`: its result is stored until
    /// `t + result_retention` (nothing when deduplication is off).
    #[inline(always)]
    pub(super) fn store(&mut self, key: KeyRef, t: Millis) {
        if !self.pending.is_empty() {
            // Results seen by now were stored before this one.
            self.fold_seen(key, t);
        }
        self.put(key, t);
    }

    /// [`DedupStore::store`] with no pending result to fold.
    #[inline(always)]
    fn put(&mut self, key: KeyRef, t: Millis) {
        let Some(retention) = self.retention else {
            return;
        };
        if key.generation == 0
            && t < Millis::from(LATE - 1)
            && let Some(v) = self.results.get_mut(key.intent as usize)
        {
            *v = t as u32 + 1;
        } else {
            self.store_other(key, t, retention);
        }
    }

    /// [`DedupStore::store`] for a write to several sinks: the result of
    /// the effect committed at `t` expires `result_retention` after `t`
    /// but is seen only from `from`, when the consumer hears its last call
    /// succeed (decision 27.18).
    /// Until then the key's earlier result answers (decision 27.37).
    pub(super) fn store_seen_from(&mut self, key: KeyRef, t: Millis, from: Millis) {
        if self.retention.is_none() {
            return;
        }
        if from <= t {
            self.store(key, t);
            return;
        }
        if !self.pending.is_empty() {
            self.fold_seen(key, t);
        }
        self.pending.entry(key).or_default().push((from, t));
        if self.pending.len() > 2 * self.pending_kept.max(64) {
            let keys: Vec<KeyRef> = self.pending.keys().copied().collect();
            for key in keys {
                self.fold_seen(key, t);
            }
            self.pending_kept = self.pending.len();
        }
    }

    /// The pending results of `key` seen by `now` become its stored
    /// result, in the order they were seen (every later lookup is at or
    /// after `now`).
    fn fold_seen(&mut self, key: KeyRef, now: Millis) {
        let Some(mut waiting) = self.pending.remove(&key) else {
            return;
        };
        // Stable: results seen at one instant keep the order stored.
        waiting.sort_by_key(|&(from, _)| from);
        let seen = waiting.partition_point(|&(from, _)| from <= now);
        for &(_, commit) in &waiting[..seen] {
            self.put(key, commit);
        }
        waiting.drain(..seen);
        if !waiting.is_empty() {
            self.pending.insert(key, waiting);
        }
    }

    /// [`DedupStore::store`] for the cases [`DedupStore::other_expiry`]
    /// reads.
    #[cold]
    #[inline(never)]
    fn store_other(&mut self, key: KeyRef, t: Millis, retention: Millis) {
        let i = key.intent as usize;
        if key.generation != 0 {
            self.fresh.insert(key, t.saturating_add(retention));
        } else if self.results.is_empty() {
            self.own[i] = t.saturating_add(retention);
        } else {
            self.results[i] = LATE;
            self.late.insert(key.intent, t);
        }
    }

    /// Result mode: a live result for `key` is a deduplication hit.
    pub(super) fn hit_if_live(&self, core: &mut Core, m: MessageIndex, key: KeyRef) -> bool {
        let Some(expires_at) = self.live(key, core.clock.now) else {
            return false;
        };
        core.messages.add_dedup_hit(m);
        core.measures.totals.dedup_hits += 1;
        core.record(Some(m), Detail::DedupHit { key, expires_at });
        true
    }

    /// Write-intent mode: what the store holds for `key` now, with a hit
    /// (DONE) or contention (a live INTENT) counted and recorded.
    pub(super) fn consult(&self, core: &mut Core, m: MessageIndex, key: KeyRef) -> Claim {
        let claim = self.claim_at(key, core.clock.now);
        match claim {
            Claim::Done(expires_at) => {
                core.messages.add_dedup_hit(m);
                core.measures.totals.dedup_hits += 1;
                core.record(Some(m), Detail::DedupHit { key, expires_at });
            }
            Claim::Intent(lease_expires, holder) => {
                core.measures.totals.contentions += 1;
                let detail = Detail::Contention {
                    key,
                    lease_expires,
                    holder: holder.message,
                    claimed_at: holder.claimed_at,
                };
                core.record(Some(m), detail);
            }
            Claim::Free(_) => {}
        }
        claim
    }

    /// Write-intent mode: `m`'s delivery now claims `key` until
    /// `lease_expires` (`crashed`: its consumer will crash); `lapsed`: the
    /// key's previous claim, expired without DONE.
    pub(super) fn claim_for(
        &mut self,
        core: &mut Core,
        m: MessageIndex,
        key: KeyRef,
        lease_expires: Millis,
        crashed: bool,
        lapsed: Option<(Millis, Holder)>,
    ) {
        let claimed_at = core.clock.now;
        let holder = Holder {
            message: m,
            claimed_at,
            crashed,
        };
        self.claim(key, lease_expires, holder);
        let lapsed = lapsed.map(|(expired_at, h)| Lapsed {
            holder: h.message,
            claimed_at: h.claimed_at,
            crashed: h.crashed,
            expired_at,
        });
        core.record(
            Some(m),
            Detail::Claimed {
                key,
                lease_expires,
                lapsed,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result stored for a write whose calls are still being heard is
    /// not seen until then, and the map of such results holds only those
    /// still ahead (pruned when it has doubled), however many writes pass.
    #[test]
    fn a_result_is_seen_from_its_last_reply_and_the_pending_map_stays_small() {
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [dedup]\nresult_retention = \"1h\"\n\
                    [[traffic]]\ncount = 100000\nover = \"100s\"\n";
        let (scenario, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let mut store = DedupStore::new(&scenario);
        let key = |i: u32| KeyRef {
            intent: i,
            generation: 0,
        };
        store.store_seen_from(key(0), 10, 30);
        assert_eq!(store.live(key(0), 29), None);
        assert_eq!(store.live(key(0), 30), Some(10 + 3_600_000));
        for i in 1..100_000u32 {
            let t = Millis::from(i) * 10;
            store.store_seen_from(key(i), t, t + 25);
            assert!(store.pending.len() <= 2 * 64 + 1, "{}", store.pending.len());
        }
        // A later result seen at once replaces a pending one.
        store.store_seen_from(key(7), 2_000_000, 2_000_000);
        assert_eq!(store.live(key(7), 2_000_000), Some(2_000_000 + 3_600_000));
    }

    /// Decision 27.37: until a second write of a key stores its result,
    /// the first one's answers; from then on the second one's does, with
    /// its own expiry, also when the second is seen before the first.
    #[test]
    fn r27_37_the_earlier_result_answers_until_the_later_one_is_stored() {
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [dedup]\nresult_retention = \"100ms\"\n[[message]]\nid = \"a\"\n";
        let (scenario, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let mut store = DedupStore::new(&scenario);
        let key = KeyRef {
            intent: 0,
            generation: 0,
        };
        store.store_seen_from(key, 0, 20);
        store.store_seen_from(key, 10, 30);
        assert_eq!(store.live(key, 19), None);
        assert_eq!(store.live(key, 25), Some(100), "the first result answers");
        assert_eq!(store.live(key, 30), Some(110), "the second replaced it");
        // Seen in the other order: the one seen last is the result.
        store.store_seen_from(key, 200, 260);
        store.store_seen_from(key, 210, 230);
        assert_eq!(store.live(key, 229), None, "110 has expired");
        assert_eq!(store.live(key, 240), Some(310));
        assert_eq!(store.live(key, 260), Some(300));
        // A direct store folds the results seen by then first.
        store.store(key, 270);
        store.store_seen_from(key, 280, 280);
        assert_eq!(store.live(key, 285), Some(380));
    }

    /// 28.5: a restart counts the live entries, pending results seen by
    /// then included, and keeps those still ahead; results that never
    /// expire (no `result_retention`) count without overflowing.
    #[test]
    fn a_restart_counts_and_loses_what_is_live_and_keeps_what_is_ahead() {
        let text = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
                    [dedup]\npersistence = \"none\"\nrestarts = [\"1s\"]\n\
                    [[message]]\nid = \"a\"\n[[message]]\nid = \"b\"\n[[message]]\nid = \"c\"\n";
        let (scenario, _) = crate::scenario::load_str("t.toml", text).unwrap();
        let mut store = DedupStore::new(&scenario);
        let key = |i: u32| KeyRef {
            intent: i,
            generation: 0,
        };
        store.store(key(0), 10);
        store.store_seen_from(key(1), 20, 500);
        store.store_seen_from(key(2), 30, 2_000);
        assert_eq!(store.restart(1_000, true), 2, "a and b (seen at 500ms)");
        assert_eq!(store.live(key(0), 1_000), None);
        assert_eq!(store.live(key(1), 1_000), None);
        assert_eq!(
            store.live(key(2), 2_000),
            Some(Millis::MAX),
            "stored after the restart"
        );
    }
}
