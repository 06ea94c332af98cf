//! The strategies of a write to several sinks (docs/model.md section
//! 24), each a write in flight that makes its calls one at a time, at
//! their own instants (decisions 27.18, 27.35): where a write begins and
//! resumes, direct, saga (with its compensations and corrective notices)
//! and the outbox relay. Two-phase commit is `two_phase.rs`, the plain
//! write `plain.rs`.

use super::flight::{Flight, FlightId, Stage, What};
use super::{
    Detail, Finished, Heard, TraceBuf, WriteNote, Writes, Written, Wrote, failure, reply_of,
};
use crate::model::{Class, MessageIndex, Millis, SinkKind, Strategy, Totals, Write};

/// After step `k` of `sinks` was heard to succeed at `reply`: the next
/// step's call then, or the write done.
fn next_step(f: &mut Flight, k: usize, sinks: usize, reply: Millis) -> Next {
    if k + 1 < sinks {
        f.stage = Stage::Step {
            k: k as u32 + 1,
            attempt: 1,
        };
        return Next::At(reply);
    }
    Next::Done(reply)
}

/// How the delivery of write `f`, last heard at `heard`, ends: by the
/// strategy that decides it; compensated after a permanent failure, a
/// saga is finished and the delivery acks.
pub(super) fn done_at(f: &Flight, strategy: Strategy, heard: Millis) -> Wrote {
    let failed = match (strategy, f.failed) {
        (Strategy::Saga, Some((_, Class::Permanent))) => None,
        (_, failed) => failed,
    };
    Wrote {
        took: heard - f.commit,
        failed,
        stores_result: f.failed.is_none(),
    }
}

/// What a direct or saga write makes next.
pub(super) enum Next {
    /// Its next call, at this instant.
    At(Millis),
    /// Nothing: its last reply is heard at this instant.
    Done(Millis),
}

impl Writes {
    /// A new write of `(m, key, intent)` committed at `now`: its first
    /// calls are made now. Done at once, or in flight.
    pub(super) fn begin(
        &mut self,
        write: &Write,
        what: What,
        now: Millis,
        begun: u64,
        repaired: bool,
        totals: &mut Totals,
    ) -> Written {
        // A mixed write whose every call is made now and would succeed:
        // made now, as its steps would make it within this event.
        if self.layout.plan_at_once
            && self.plain_took(write, what.2, what.1, now, repaired) == Some(0)
        {
            self.write_plain(write, what.1, what.2, now);
            return Written::Done(Wrote {
                took: 0,
                failed: None,
                stores_result: true,
            });
        }
        self.written += 1;
        let (number, strategy, sinks) = (self.written, write.strategy, write.sinks.len());
        let mut f = match self.spare.pop() {
            Some(mut spare) => {
                spare.renew(what, now, number, begun, strategy, sinks);
                spare
            }
            None => Box::new(Flight::new(what, now, number, begun, strategy, sinks)),
        };
        if self.tracer.open() {
            f.trace = Some(Box::new(TraceBuf::new(self.written == 1)));
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.flights.push(None);
                (self.flights.len() - 1) as FlightId
            }
        };
        if write.plan.is_some() {
            return self.begin_mixed(write, id, f, now, repaired, totals);
        }
        match write.strategy {
            Strategy::Direct | Strategy::Saga => {
                match self.run_steps(write, id, f, now, repaired, totals) {
                    Some(wrote) => Written::Done(wrote),
                    None => Written::InFlight(id),
                }
            }
            Strategy::Outbox => {
                f.stage = Stage::Relay;
                f.relayed = true;
                f.relay_calls.resize(write.sinks.len(), 0);
                for k in 0..write.sinks.len() {
                    f.relay_open |= 1 << k;
                    self.relay(write, id, &mut f, k, now, repaired, totals);
                }
                self.park_or_close(id, f);
                // The row is written: the delivery acks.
                Written::Done(Wrote {
                    took: 0,
                    failed: None,
                    stores_result: true,
                })
            }
            Strategy::TwoPhase => {
                self.fold_in_doubt(now, totals);
                if self.locks.contains(&f.key) {
                    f.stage = Stage::Waiting { since: now };
                    self.waiting.entry(f.key).or_default().push_back(id);
                    self.flights[id as usize] = Some(f);
                    return Written::InFlight(id);
                }
                self.prepare(write, &mut f, id, now, repaired, totals);
                if f.stage == Stage::Deciding
                    && f.decision == now
                    && let Some(wrote) = self.decide(write, &mut f, id, now)
                {
                    self.close_flight(id, f);
                    return Written::Done(wrote);
                }
                self.flights[id as usize] = Some(f);
                Written::InFlight(id)
            }
        }
    }

    /// Write `id`'s entry is due now: its next call to `sink` (an outbox
    /// row's), its next step, or its decision. `cancelled` says whether a
    /// delivery that began at a sequence number was abandoned since.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resume(
        &mut self,
        write: &Write,
        id: FlightId,
        sink: u32,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) {
        let Some(mut f) = self.flights[id as usize].take() else {
            return;
        };
        if f.mixed {
            self.resume_mixed(write, id, f, sink, now, repaired, totals, cancelled);
            return;
        }
        match f.strategy {
            Strategy::Direct | Strategy::Saga => {
                let mut done = Finished::of(&f);
                if let Some(wrote) = self.run_steps(write, id, f, now, repaired, totals) {
                    done.wrote = wrote;
                    self.finished.push(done);
                }
            }
            Strategy::Outbox => {
                self.relay(write, id, &mut f, sink as usize, now, repaired, totals);
                self.park_or_close(id, f);
            }
            Strategy::TwoPhase => {
                let wrote = match f.stage {
                    Stage::Releasing => Some(self.release(&mut f, now)),
                    _ => self.decide(write, &mut f, id, now),
                };
                let Some(wrote) = wrote else {
                    self.flights[id as usize] = Some(f);
                    return;
                };
                let (key, releaser) = (f.key, (f.message, f.crashed.then_some(f.start)));
                self.finished_flight(&f, wrote);
                self.close_flight(id, f);
                self.hand_over(write, key, releaser, now, repaired, totals, cancelled);
            }
        }
    }

    /// A write in flight is done: its delivery learns how it went.
    pub(super) fn finished_flight(&mut self, f: &Flight, wrote: Wrote) {
        self.finished.push(Finished {
            wrote,
            ..Finished::of(f)
        });
    }

    /// Write `id` is done: its time partly visible is added, its trace
    /// kept if worth it, its slot freed.
    pub(super) fn close_flight(&mut self, id: FlightId, mut f: Box<Flight>) {
        self.close_write(&mut f);
        if let Some(trace) = f.trace.take() {
            self.tracer.finish(*trace, f.number, f.message, f.commit);
        }
        self.flights[id as usize] = None;
        self.free.push(id);
        // Its buffers serve the next write.
        self.spare.push(f);
    }

    /// A write whose next entry is due at `at` (`entry`: a sink, or the
    /// write's own step) waits for it.
    pub(super) fn park_until(&mut self, id: FlightId, f: Box<Flight>, at: Millis, entry: u32) {
        self.due.push((at, id, entry));
        self.flights[id as usize] = Some(f);
    }

    /// A write whose delivery's part ended with its last reply `heard`,
    /// decided by `strategy`: closed, and how its delivery ends.
    pub(super) fn finish_flight(
        &mut self,
        id: FlightId,
        f: Box<Flight>,
        strategy: Strategy,
        heard: Millis,
    ) -> Wrote {
        let wrote = done_at(&f, strategy, heard);
        self.close_flight(id, f);
        wrote
    }

    /// An outbox row with calls still to make waits for them; one whose
    /// every sink is done is closed.
    pub(super) fn park_or_close(&mut self, id: FlightId, f: Box<Flight>) {
        if f.relay_open == 0 {
            self.close_flight(id, f);
        } else {
            self.flights[id as usize] = Some(f);
        }
    }

    /// A direct or saga write's calls from now, as long as each next one
    /// is due now. Done: how it went (its slot freed); otherwise its next
    /// call is scheduled.
    fn run_steps(
        &mut self,
        write: &Write,
        id: FlightId,
        mut f: Box<Flight>,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Option<Wrote> {
        loop {
            let next = match f.strategy {
                Strategy::Direct => self.direct_step(write, &mut f, now, repaired),
                _ => self.saga_step(write, &mut f, now, repaired, totals),
            };
            match next {
                Next::At(at) if at == now => continue,
                Next::At(at) => {
                    self.park_until(id, f, at, 0);
                    return None;
                }
                Next::Done(heard) => {
                    let strategy = f.strategy;
                    return Some(self.finish_flight(id, f, strategy, heard));
                }
            }
        }
    }

    /// Direct: calls in file order; the first failure ends the write.
    fn direct_step(&mut self, write: &Write, f: &mut Flight, now: Millis, repaired: bool) -> Next {
        let Stage::Step { k, .. } = f.stage else {
            unreachable!("a direct write makes steps")
        };
        let k = k as usize;
        let heard = self.attempt(write, f, k, now, repaired, true);
        let reply = now.saturating_add(write.sinks[k].latency);
        if let Some(failed) = failure(heard, write) {
            f.failed = Some(failed);
            return Next::Done(reply);
        }
        next_step(f, k, write.sinks.len(), reply)
    }

    /// Saga: calls in file order, each step tried `step_attempts` times on
    /// transient failures; a failed write compensates, in reverse order,
    /// every sink whose call it heard succeed.
    fn saga_step(
        &mut self,
        write: &Write,
        f: &mut Flight,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Next {
        match f.stage {
            Stage::Step { k, attempt } => {
                let k = k as usize;
                let heard = self.attempt(write, f, k, now, repaired, true);
                let reply = now.saturating_add(write.sinks[k].latency);
                match failure(heard, write) {
                    None => {
                        f.heard_ok |= 1 << k;
                        next_step(f, k, write.sinks.len(), reply)
                    }
                    Some(failed @ (_, Class::Permanent)) => {
                        self.saga_failed(f, k, failed, reply, totals)
                    }
                    Some(failed) if attempt == write.step_attempts => {
                        self.saga_failed(f, k, failed, reply, totals)
                    }
                    Some(_) => {
                        f.stage = Stage::Step {
                            k: k as u32,
                            attempt: attempt + 1,
                        };
                        Next::At(reply.saturating_add(write.relay_retry))
                    }
                }
            }
            Stage::Compensate { k, attempt } => {
                self.compensation_call(write, f, k as usize, attempt, now, repaired, totals)
            }
            _ => unreachable!("a saga makes steps and compensations"),
        }
    }

    /// A saga's step `k` failed, heard at `heard`: the compensations
    /// start then.
    fn saga_failed(
        &mut self,
        f: &mut Flight,
        k: usize,
        failed: (crate::model::ReasonIndex, Class),
        heard: Millis,
        totals: &mut Totals,
    ) -> Next {
        f.failed = Some(failed);
        f.failed_sink = k as u32;
        self.next_compensation(f, self.sinks.len(), heard, totals)
    }

    /// The next sink to compensate, from `at`, among those called before
    /// place `below` in call order: irreversible sinks that sent count a
    /// false notice each and are passed over.
    pub(super) fn next_compensation(
        &mut self,
        f: &mut Flight,
        below: usize,
        at: Millis,
        totals: &mut Totals,
    ) -> Next {
        for pos in (0..below).rev() {
            let k = self.layout.order[pos] as usize;
            if f.heard_ok & (1 << k) == 0 {
                continue;
            }
            if self.sinks[k].kind == SinkKind::Irreversible {
                totals.false_notices += 1;
                if let Some(trace) = f.trace.as_deref_mut() {
                    trace.false_notice(k as u32);
                }
                let sent_at = f.shows[k].map_or(f.commit, |(from, _)| from);
                let note = WriteNote::FalseNotice {
                    at: sent_at,
                    message: f.message,
                    sink: k as u32,
                    failed_sink: f.failed_sink,
                };
                self.note(f, note);
                if self.layout.corrective & (1 << k) == 0 {
                    continue;
                }
                // Its compensation is a corrective notice (28.16).
            }
            f.stage = Stage::Compensate {
                k: k as u32,
                attempt: 1,
            };
            f.compensation_applied = false;
            f.compensation_lost_at = None;
            return Next::At(at);
        }
        Next::Done(at)
    }

    /// Sink `k`'s compensation call, try `attempt`, now: retried until one
    /// is heard to succeed or `relay_attempts` are made (then given up).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn compensation_call(
        &mut self,
        write: &Write,
        f: &mut Flight,
        k: usize,
        attempt: u32,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Next {
        let heard = self.call(write, f, k, now, true, repaired);
        if self.sinks[k].kind == SinkKind::Irreversible {
            return self.corrective_call(write, f, k, attempt, heard, now, totals);
        }
        let applies = !matches!(heard, Heard::Failed(..))
            && (!f.compensation_applied || !write.idempotent_compensation);
        let reply = reply_of(heard);
        let sent = Detail::CompensationSent {
            sink: k as u32,
            reply,
            applied: applies,
        };
        self.tell(f, now, sent);
        if applies {
            if f.compensation_applied {
                totals.over_compensations += 1;
                let note = WriteNote::OverCompensated {
                    message: f.message,
                    sink: k as u32,
                    lost_at: f.compensation_lost_at.unwrap_or(now),
                    retried_at: now,
                };
                self.note(f, note);
            }
            totals.compensations += 1;
            self.compensations[k] += 1;
            let applied_at = f.shows[k].map_or(now, |(from, _)| from);
            self.sinks[k].compensate(f.key, f.intent, applied_at, f.row);
            f.compensated(k, now);
            f.compensation_applied = true;
        } else if let Some(trace) = f.trace.as_deref_mut() {
            // A tracked compensation applies once however often sent.
            trace.not_applied();
        }
        if heard == Heard::Lost {
            f.compensation_lost_at = Some(now);
        }
        let heard_at = now.saturating_add(write.sinks[k].latency);
        if heard == Heard::Ok {
            let below = self.layout.pos_of[k] as usize;
            return self.next_compensation(f, below, heard_at, totals);
        }
        let gives_up = !f.compensation_applied;
        self.retry_or_give_up(write, f, (k, attempt), heard_at, gives_up, totals)
    }

    /// After compensation call `attempt` to sink `k` was not heard to
    /// succeed, its reply at `heard_at`: tried again `relay_retry` later
    /// while tries are left; else given up (`gives_up`: counted, noted and
    /// told; a compensation that applied through a lost reply is not) and
    /// the saga goes on.
    fn retry_or_give_up(
        &mut self,
        write: &Write,
        f: &mut Flight,
        (k, attempt): (usize, u32),
        heard_at: Millis,
        gives_up: bool,
        totals: &mut Totals,
    ) -> Next {
        if attempt < write.relay_attempts {
            f.stage = Stage::Compensate {
                k: k as u32,
                attempt: attempt + 1,
            };
            return Next::At(heard_at.saturating_add(write.relay_retry));
        }
        if gives_up {
            let note = WriteNote::CompensationExhausted {
                at: heard_at,
                message: f.message,
                sink: k as u32,
            };
            self.note(f, note);
            self.given_up(k, totals);
            let calls = write.relay_attempts;
            let detail = Detail::CompensationGivenUp {
                sink: k as u32,
                calls,
            };
            self.tell(f, heard_at, detail);
        }
        let below = self.layout.pos_of[k] as usize;
        self.next_compensation(f, below, heard_at, totals)
    }

    /// A corrective notice to the irreversible sink `k`, try `attempt`,
    /// made now and heard as `heard`: counted when heard to succeed,
    /// retried like a compensation until `relay_attempts`, then given up.
    /// What the sink holds (its sends) does not change.
    #[allow(clippy::too_many_arguments)]
    fn corrective_call(
        &mut self,
        write: &Write,
        f: &mut Flight,
        k: usize,
        attempt: u32,
        heard: Heard,
        now: Millis,
        totals: &mut Totals,
    ) -> Next {
        let reply = reply_of(heard);
        let sent = Detail::CompensationSent {
            sink: k as u32,
            reply,
            applied: heard == Heard::Ok,
        };
        self.tell(f, now, sent);
        let heard_at = now.saturating_add(write.sinks[k].latency);
        if heard == Heard::Ok {
            totals.corrective_notices += 1;
            let below = self.layout.pos_of[k] as usize;
            return self.next_compensation(f, below, heard_at, totals);
        }
        self.retry_or_give_up(write, f, (k, attempt), heard_at, true, totals)
    }

    /// Outbox: the relay's call of row `f` to sink `k` now, retried until
    /// one is heard to succeed or `relay_attempts` are made (then the row
    /// is dead-lettered there); the next is scheduled.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn relay(
        &mut self,
        write: &Write,
        id: FlightId,
        f: &mut Flight,
        k: usize,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Relayed {
        f.relay_calls[k] += 1;
        let calls = f.relay_calls[k];
        // Each failed relay call is not noted: a dead letter is.
        let heard = self.attempt(write, f, k, now, repaired, false);
        if !matches!(heard, Heard::Failed(..)) {
            let lag = &mut self.sinks[k].max_lag;
            *lag = (*lag).max(now - f.commit);
        }
        // The call is pending until its reply is heard (27.36).
        let heard_at = now.saturating_add(write.sinks[k].latency);
        self.relay_end = Some(self.relay_end.map_or(heard_at, |e| e.max(heard_at)));
        if heard == Heard::Ok {
            f.relay_open &= !(1 << k);
            return Relayed::Ok(heard_at);
        }
        if calls < write.relay_attempts {
            let at = heard_at.saturating_add(write.relay_retry);
            self.relay_scheduled += 1;
            self.due.push((at, id, k as u32));
            return Relayed::Retry;
        }
        f.relay_open &= !(1 << k);
        totals.outbox_dead_letters += 1;
        self.dead_letters[k] += 1;
        if self.watch_dead_letters {
            self.dead_lettered.push((now, k as u32));
        }
        self.tell(
            f,
            now,
            Detail::OutboxDeadLettered {
                sink: k as u32,
                calls,
            },
        );
        let note = WriteNote::DeadLettered {
            message: f.message,
            sink: k as u32,
            first_at: f.commit,
            last_at: now,
            attempts: calls,
        };
        self.note(f, note);
        Relayed::DeadLettered(heard_at)
    }
}

/// How a relay call went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Relayed {
    /// Heard to succeed at this instant.
    Ok(Millis),
    /// Failed; the next call is scheduled.
    Retry,
    /// The last call failed: the row is dead-lettered there, its failure
    /// heard at this instant.
    DeadLettered(Millis),
}
