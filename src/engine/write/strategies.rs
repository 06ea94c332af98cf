//! The four strategies of a write to several sinks (docs/model.md
//! section 24), each deciding every call of one write at its commit
//! instant, and the plain write: a direct or saga write whose every call
//! succeeds at once, looked at and made without the strategies' scratch.

use super::{
    CallKind, Detail, Heard, Lock, LockSpan, Reply, TracedCall, WriteNote, Writes, Wrote, failure,
};
use crate::model::{
    CallSelector, Class, IntentIndex, KeyRef, MessageIndex, Millis, SinkKind, Strategy, Totals,
    Write,
};

impl Writes {
    /// Calls in file order; the first failure ends the write.
    pub(super) fn direct(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
    ) -> Wrote {
        let mut at = t;
        for k in 0..write.sinks.len() {
            let heard = self.attempt(write, k, key, intent, at, repaired, true);
            at = at.saturating_add(write.sinks[k].latency);
            if let Some(failed) = failure(heard, write) {
                return Wrote {
                    took: at - t,
                    failed: Some(failed),
                    stores_result: false,
                };
            }
        }
        Wrote {
            took: at - t,
            failed: None,
            stores_result: true,
        }
    }

    /// Calls in file order, each step tried `step_attempts` times on
    /// transient failures; a failed write compensates, in reverse order,
    /// every sink whose call it heard succeed.
    pub(super) fn saga(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        let mut at = t;
        let mut heard_ok: u64 = 0;
        let mut failed = None;
        let mut failed_sink = 0;
        'steps: for k in 0..write.sinks.len() {
            let latency = write.sinks[k].latency;
            for attempt in 1..=write.step_attempts {
                let heard = self.attempt(write, k, key, intent, at, repaired, true);
                failed_sink = k as u32;
                at = at.saturating_add(latency);
                match failure(heard, write) {
                    None => {
                        heard_ok |= 1 << k;
                        continue 'steps;
                    }
                    Some(f @ (_, Class::Permanent)) => {
                        failed = Some(f);
                        break 'steps;
                    }
                    Some(f) if attempt == write.step_attempts => {
                        failed = Some(f);
                        break 'steps;
                    }
                    Some(_) => at = at.saturating_add(write.relay_retry),
                }
            }
        }
        let Some(failed) = failed else {
            return Wrote {
                took: at - t,
                failed: None,
                stores_result: true,
            };
        };
        for k in (0..write.sinks.len()).rev() {
            if heard_ok & (1 << k) == 0 {
                continue;
            }
            if self.sinks[k].kind == SinkKind::Irreversible {
                totals.false_notices += 1;
                self.tracer.false_notice(k as u32);
                let sent_at = self.shows[k].map_or(t, |(from, _)| from);
                self.note(WriteNote::FalseNotice {
                    at: sent_at,
                    message: self.message,
                    sink: k as u32,
                    failed_sink,
                });
                continue;
            }
            at = self.compensate(write, k, key, intent, at, repaired, totals);
        }
        Wrote {
            took: at - t,
            // Compensated after a permanent failure, the saga is finished
            // and the delivery acks.
            failed: (failed.1 == Class::Transient).then_some(failed),
            stores_result: false,
        }
    }

    /// Sink `k`'s compensation calls from `at`, until one is heard to
    /// succeed or `relay_attempts` are made; returns when the last reply
    /// is heard.
    #[allow(clippy::too_many_arguments)]
    fn compensate(
        &mut self,
        write: &Write,
        k: usize,
        key: KeyRef,
        intent: IntentIndex,
        mut at: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Millis {
        let latency = write.sinks[k].latency;
        let mut applied = false;
        let mut lost_at = None;
        for attempt in 1..=write.relay_attempts {
            let heard = self.call(write, k, intent, at, true, repaired);
            let applies =
                !matches!(heard, Heard::Failed(..)) && (!applied || !write.idempotent_compensation);
            let reply = match heard {
                Heard::Ok => Reply::Ok,
                Heard::Failed(reason, _) => Reply::Failed(reason),
                Heard::Lost => Reply::Lost,
            };
            let sent = Detail::CompensationSent {
                sink: k as u32,
                reply,
                applied: applies,
            };
            self.tell(at, sent);
            if applies {
                if applied {
                    totals.over_compensations += 1;
                    self.note(WriteNote::OverCompensated {
                        message: self.message,
                        sink: k as u32,
                        lost_at: lost_at.unwrap_or(at),
                        retried_at: at,
                    });
                }
                totals.compensations += 1;
                self.sinks[k].compensate(key, intent);
                self.compensated(k, at);
                applied = true;
            } else {
                // A tracked compensation applies once however often sent.
                self.tracer.not_applied();
            }
            if heard == Heard::Lost {
                lost_at = Some(at);
            }
            at = at.saturating_add(latency);
            if heard == Heard::Ok {
                break;
            }
            if attempt < write.relay_attempts {
                at = at.saturating_add(write.relay_retry);
            } else if !applied {
                self.note(WriteNote::CompensationExhausted {
                    at,
                    message: self.message,
                    sink: k as u32,
                });
                self.given_up(k, totals);
                let calls = write.relay_attempts;
                self.tell(
                    at,
                    Detail::CompensationGivenUp {
                        sink: k as u32,
                        calls,
                    },
                );
            }
        }
        at
    }

    /// The delivery writes a row and acks; the relay applies the row to
    /// each sink on its own, retrying, until a call is heard to succeed or
    /// `relay_attempts` are made (then the row is dead-lettered there).
    pub(super) fn outbox(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        for k in 0..write.sinks.len() {
            let latency = write.sinks[k].latency;
            let mut at = t;
            let mut last_applied = None;
            for attempt in 1..=write.relay_attempts {
                // Each failed relay call is not noted: a dead letter is.
                let heard = self.attempt(write, k, key, intent, at, repaired, false);
                if !matches!(heard, Heard::Failed(..)) {
                    last_applied = Some(at);
                }
                // The call is pending until its reply is heard (27.36).
                let heard_at = at.saturating_add(latency);
                self.relay_end = Some(self.relay_end.map_or(heard_at, |e| e.max(heard_at)));
                if heard == Heard::Ok {
                    break;
                }
                if attempt == write.relay_attempts {
                    totals.outbox_dead_letters += 1;
                    let calls = attempt;
                    self.tell(
                        at,
                        Detail::OutboxDeadLettered {
                            sink: k as u32,
                            calls,
                        },
                    );
                    self.note(WriteNote::DeadLettered {
                        message: self.message,
                        sink: k as u32,
                        first_at: t,
                        last_at: at,
                        attempts: attempt,
                    });
                } else {
                    at = at.saturating_add(latency).saturating_add(write.relay_retry);
                }
            }
            if let Some(applied) = last_applied {
                let lag = &mut self.sinks[k].max_lag;
                *lag = (*lag).max(applied - t);
            }
        }
        Wrote {
            took: 0,
            failed: None,
            stores_result: true,
        }
    }

    /// Prepare everywhere once the key's lock is free; commit everywhere
    /// when every prepare is heard to succeed, else abort everywhere. The
    /// decision comes with the last prepare reply, or at the coordinator's
    /// recovery when it crashes.
    pub(super) fn two_phase(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        self.fold_in_doubt(t, totals);
        let start = match self.locks.get(&key) {
            Some(lock) if lock.release > t => {
                let lock = *lock;
                self.note(WriteNote::Waited {
                    message: self.message,
                    key,
                    from: t,
                    until: lock.release,
                    holder: lock.holder,
                    holder_crashed_at: lock.crashed_at,
                });
                self.tracer.waited(lock.release);
                lock.release
            }
            _ => t,
        };
        let mut failed = None;
        let mut prepared = 0u64;
        let mut prepared_sinks = 0u64;
        let mut largest = 0;
        for k in 0..write.sinks.len() {
            let heard = self.call(write, k, intent, start, false, repaired);
            self.note_heard(heard, k, start);
            largest = largest.max(write.sinks[k].latency);
            if !matches!(heard, Heard::Failed(..)) {
                prepared += 1;
                prepared_sinks |= 1 << k;
            }
            if failed.is_none() {
                failed = failure(heard, write);
            }
        }
        let crashed = failed.is_none()
            && write.coordinator.as_ref().is_some_and(|c| match &c.crash {
                CallSelector::First(n) => self.written <= *n,
                CallSelector::Every(n) => self.written.is_multiple_of(*n),
                CallSelector::Intents(_) => {
                    (self.crash_intents.as_ref()).is_some_and(|s| s.contains(&intent))
                }
                CallSelector::UntilRepair => !repaired,
            });
        let wait = match (crashed, &write.coordinator) {
            (true, Some(c)) => largest.max(c.recovers_after),
            _ => largest,
        };
        let decision = start.saturating_add(wait);
        if prepared > 0 {
            let held = decision - start;
            totals.lock_held = totals
                .lock_held
                .saturating_add(held.saturating_mul(prepared));
            totals.max_lock = totals.max_lock.max(held);
            let lock = Lock {
                release: decision,
                holder: self.message,
                crashed_at: crashed.then_some(start),
            };
            self.locks.insert(key, lock);
            self.prune_locks(t);
        }
        for k in 0..write.sinks.len() {
            let was_prepared = prepared_sinks & (1 << k) != 0;
            if was_prepared {
                self.tracer.lock(LockSpan {
                    sink: k as u32,
                    message: self.message,
                    from: start,
                    until: decision,
                    crashed,
                });
            }
            if failed.is_none() || was_prepared {
                self.tracer.call(TracedCall {
                    sink: k as u32,
                    kind: if failed.is_none() {
                        CallKind::Commit
                    } else {
                        CallKind::Abort
                    },
                    at: decision,
                    heard_at: decision,
                    reply: Reply::Decided,
                    applied: failed.is_none(),
                });
            }
        }
        if crashed {
            self.tracer.crashed();
            self.note(WriteNote::Crashed {
                message: self.message,
                prepared_at: start,
                decided_at: decision,
            });
        }
        if failed.is_none() {
            if decision > start {
                *self.in_doubt_changes.entry(start).or_default() += 1;
                *self.in_doubt_changes.entry(decision).or_default() -= 1;
            }
            for k in 0..write.sinks.len() {
                self.sinks[k].apply(key, intent);
                self.shown(k, decision);
            }
        }
        Wrote {
            took: decision - t,
            failed,
            stores_result: failed.is_none(),
        }
    }

    /// How long a plain write of `intent` at `t` takes, if it is one: a
    /// direct or saga write, not the run's first (which is traced), whose
    /// every call, in file order, would be heard to succeed at once. Such
    /// a write is its calls' latencies one after another, and nothing in
    /// it is worth a note or a trace. Nothing is changed.
    #[inline(always)]
    pub(in crate::engine) fn plain_took(
        &self,
        write: &Write,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
    ) -> Option<Millis> {
        if !matches!(write.strategy, Strategy::Direct | Strategy::Saga) || self.written == 0 {
            return None;
        }
        let mut at = t;
        for (sink, calls) in self.sinks.iter().zip(&write.sinks) {
            if !sink.would_succeed(calls, intent, at, repaired) {
                return None;
            }
            at = at.saturating_add(calls.latency);
        }
        Some(at - t)
    }

    /// A write that [`plain_took`](Self::plain_took) found plain, made:
    /// each call counted and applied as the strategy would make it, and
    /// its partial visibility (from the first sink's call to the last's)
    /// added. The sink calls are counted in `calls_made`.
    #[inline(always)]
    pub(in crate::engine) fn write_plain(
        &mut self,
        write: &Write,
        m: MessageIndex,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
    ) {
        self.written += 1;
        self.message = m;
        let mut at = t;
        let mut last = t;
        for (sink, calls) in self.sinks.iter_mut().zip(&write.sinks) {
            sink.succeed(key, intent);
            last = at;
            at = at.saturating_add(calls.latency);
        }
        let n = self.sinks.len();
        self.calls_made += n as u64;
        if n >= 2 {
            self.partial_closed += last - t;
        }
    }
}
