//! Two-phase commit (docs/model.md section 24, decisions 27.22 and 27.40,
//! section 28.15): prepares to every sink once the key's lock is free,
//! the coordinator's decision (after its crash and recovery, if it
//! crashes), the locks released with the decision or its replies, and
//! the writes waiting for a lock taking it in line.

use super::flight::{Flight, FlightId, Stage};
use super::{
    CallKind, Detail, Heard, LockSpan, Reply, TracedCall, WriteNote, Writes, Wrote, failure,
};
use crate::model::{CallSelector, Class, KeyRef, MessageIndex, Millis, Totals, Write};

impl Writes {
    /// Two-phase: the prepares to every sink now (the key's lock is
    /// free); the decision comes with the last reply, or at the
    /// coordinator's recovery when it crashes (never, when it never
    /// recovers), and is scheduled.
    pub(super) fn prepare(
        &mut self,
        write: &Write,
        f: &mut Flight,
        id: FlightId,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        f.start = now;
        let mut largest = 0;
        for k in 0..write.sinks.len() {
            if self.layout.tp_mask & (1 << k) == 0 {
                continue;
            }
            let heard = self.call(write, f, k, now, false, repaired);
            self.note_heard(f, heard, k, now);
            largest = largest.max(write.sinks[k].latency);
            if !matches!(heard, Heard::Failed(..)) {
                f.prepared |= 1 << k;
            }
            if f.failed.is_none() {
                f.failed = failure(heard, write);
            }
        }
        let number = f.number;
        let coordinator = write.coordinator.as_ref();
        let crash = coordinator.and_then(|c| c.crash.as_ref());
        f.crashed = f.failed.is_none()
            && crash.is_some_and(|crash| match crash {
                CallSelector::First(n) => number <= *n,
                CallSelector::Every(n) => number.is_multiple_of(*n),
                CallSelector::Intents(_) => {
                    (self.crash_intents.as_ref()).is_some_and(|s| s.contains(&f.intent))
                }
                CallSelector::UntilRepair => !repaired,
            });
        if f.crashed
            && let Some(trace) = f.trace.as_deref_mut()
        {
            trace.crashed();
        }
        if f.prepared != 0 {
            self.locks.insert(f.key);
        }
        let recovers_after = coordinator.and_then(|c| c.recovers_after);
        let decision = match (f.crashed, recovers_after) {
            (false, _) => now.saturating_add(largest),
            (true, Some(after)) => now.saturating_add(largest.max(after)),
            (true, None) => {
                // Never recovers: in doubt, its locks held, to the end.
                let note = WriteNote::Crashed {
                    message: f.message,
                    prepared_at: now,
                    decided_at: None,
                    committed: false,
                };
                self.note(f, note);
                *self.in_doubt_changes.entry(now).or_default() += 1;
                f.stage = Stage::InDoubt;
                return;
            }
        };
        let round_trip = coordinator.is_some_and(|c| c.commit_round_trip);
        let release = |k: usize| match round_trip {
            true => decision.saturating_add(write.sinks[k].latency),
            false => decision,
        };
        f.released = decision;
        for k in 0..write.sinks.len() {
            if f.prepared & (1 << k) == 0 {
                continue;
            }
            let until = release(k);
            f.released = f.released.max(until);
            totals.lock_held = totals.lock_held.saturating_add(until - now);
            totals.max_lock = totals.max_lock.max(until - now);
            self.tracer.lock(LockSpan {
                sink: k as u32,
                message: f.message,
                from: now,
                until,
                crashed: f.crashed,
            });
        }
        if f.crashed {
            let note = WriteNote::Crashed {
                message: f.message,
                prepared_at: now,
                decided_at: Some(decision),
                committed: coordinator.is_none_or(|c| c.before_log.is_none()),
            };
            self.note(f, note);
        }
        if f.failed.is_none() && decision > now {
            *self.in_doubt_changes.entry(now).or_default() += 1;
            *self.in_doubt_changes.entry(decision).or_default() -= 1;
        }
        f.stage = Stage::Deciding;
        f.decision = decision;
        if decision > now {
            self.due.push((decision, id, 0));
        }
    }

    /// Two-phase: the decision now, commit when every prepare was heard
    /// to succeed (and the coordinator logged it), else abort. Done then,
    /// or, with `commit_round_trip`, when the last decision call's reply
    /// releases the key's lock.
    pub(super) fn decide(
        &mut self,
        write: &Write,
        f: &mut Flight,
        id: FlightId,
        now: Millis,
    ) -> Option<Wrote> {
        let coordinator = write.coordinator.as_ref();
        if f.crashed
            && let Some(reason) = coordinator.and_then(|c| c.before_log)
        {
            // Presumed abort: no decision in the log (28.15).
            f.failed = Some((reason, Class::Transient));
        }
        let round_trip = coordinator.is_some_and(|c| c.commit_round_trip);
        let commit = f.failed.is_none();
        if f.crashed {
            let recovered = Detail::CoordinatorRecovered {
                prepared_at: f.start,
                committed: commit,
            };
            self.tell(f, now, recovered);
        }
        for k in 0..write.sinks.len() {
            if self.layout.tp_mask & (1 << k) == 0 {
                continue;
            }
            let was_prepared = f.prepared & (1 << k) != 0;
            if round_trip && was_prepared {
                self.calls_made += 1;
            }
            let heard_at = match round_trip && was_prepared {
                true => now.saturating_add(write.sinks[k].latency),
                false => now,
            };
            if (commit || was_prepared)
                && let Some(trace) = f.trace.as_deref_mut()
            {
                trace.call(TracedCall {
                    sink: k as u32,
                    kind: if commit {
                        CallKind::Commit
                    } else {
                        CallKind::Abort
                    },
                    at: now,
                    heard_at,
                    reply: Reply::Decided,
                    applied: commit,
                });
            }
            if commit && self.apply(f, k, now) {
                f.shown(k, now);
            }
        }
        if f.released > now {
            f.stage = Stage::Releasing;
            self.due.push((f.released, id, 0));
            return None;
        }
        Some(self.release(f, now))
    }

    /// Two-phase: the key's lock is released now; the write is done.
    pub(super) fn release(&mut self, f: &mut Flight, now: Millis) -> Wrote {
        if f.prepared != 0 {
            self.locks.remove(&f.key);
        }
        Wrote {
            took: now - f.commit,
            failed: f.failed,
            stores_result: f.failed.is_none(),
        }
    }

    /// Two-phase writes whose coordinator never recovers, at the run's
    /// end `end`: their locks held until then, counted in doubt; and the
    /// writes still waiting for a lock, blocked.
    pub(super) fn never_decided(&mut self, end: Millis, totals: &mut Totals) {
        let n = self.flights.len();
        for id in 0..n {
            let Some(f) = self.flights[id].as_ref() else {
                continue;
            };
            match f.stage {
                Stage::InDoubt => {
                    let held = end.saturating_sub(f.start);
                    let prepared = f.prepared.count_ones() as u64;
                    totals.lock_held = totals
                        .lock_held
                        .saturating_add(held.saturating_mul(prepared));
                    totals.max_lock = totals.max_lock.max(held);
                    totals.in_doubt_at_end += 1;
                    let (message, from, prepared) = (f.message, f.start, f.prepared);
                    for k in 0..64 {
                        if prepared & (1 << k) != 0 {
                            self.tracer.lock(LockSpan {
                                sink: k,
                                message,
                                from,
                                until: end,
                                crashed: true,
                            });
                        }
                    }
                }
                Stage::Waiting { .. } => totals.blocked_at_end += 1,
                _ => {}
            }
        }
    }

    /// `key`'s lock was released now by `releaser` (its message, and when
    /// its coordinator crashed): the writes waiting for it take it in the
    /// order they started waiting, each inside this event, and send their
    /// prepares now (decision 27.40); one that prepares nothing holds no
    /// lock and the next takes it. A write whose delivery was abandoned
    /// leaves the line without a call.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hand_over(
        &mut self,
        write: &Write,
        key: KeyRef,
        releaser: (MessageIndex, Option<Millis>),
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) {
        while !self.locks.contains(&key) {
            let Some(line) = self.waiting.get_mut(&key) else {
                return;
            };
            let Some(id) = line.pop_front() else {
                self.waiting.remove(&key);
                return;
            };
            if line.is_empty() {
                // A key's line lives only while writes wait in it.
                self.waiting.remove(&key);
            }
            let Some(mut f) = self.flights[id as usize].take() else {
                continue;
            };
            if cancelled(f.message, f.begun) {
                // Its delivery was abandoned by a restart.
                let abandoned = Wrote::default();
                self.finished_flight(&f, abandoned);
                self.close_flight(id, f);
                continue;
            }
            let Stage::Waiting { since } = f.stage else {
                unreachable!("a write in the line waits")
            };
            let (holder, holder_crashed_at) = releaser;
            let waited = WriteNote::Waited {
                message: f.message,
                key,
                from: since,
                until: now,
                holder,
                holder_crashed_at,
            };
            self.note(&f, waited);
            if let Some(trace) = f.trace.as_deref_mut() {
                trace.waited(now);
            }
            if f.mixed {
                self.take_lock_mixed(write, id, f, now, repaired, totals, cancelled);
                continue;
            }
            self.prepare(write, &mut f, id, now, repaired, totals);
            if f.stage == Stage::Deciding
                && f.decision == now
                && let Some(wrote) = self.decide(write, &mut f, id, now)
            {
                // Its decision is this instant's too.
                self.finished_flight(&f, wrote);
                self.close_flight(id, f);
            } else {
                self.flights[id as usize] = Some(f);
            }
        }
    }
}
