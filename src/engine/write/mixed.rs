//! A write whose sinks have strategies of their own (docs/model.md
//! section 28.1, decisions 29.1-29.4): its synchronous steps in the plan's
//! order (a direct or saga sink's call, or every two_phase sink together),
//! each started when the one before it is heard; then one outbox row that
//! the relay applies to the outbox sinks while the delivery acks. A failed
//! step compensates the saga sinks that applied, and writes no row; with
//! `outbox_dead_letter = "compensate"` a dead letter does the same later,
//! by the relay; with `irreversible_last` an irreversible outbox sink is
//! called only once every other outbox sink succeeded.

use super::flight::{Flight, FlightId, Stage};
use super::strategies::{Next, Relayed};
use super::{Detail, Finished, Writes, Written, Wrote, failure};
use crate::model::{Class, MessageIndex, Millis, Plan, PlanStep, Strategy, Totals, Write};

/// A mixed write's own entry (its next step, decision or compensation),
/// as against a relay call to one sink.
pub(super) const OWN: u32 = 1 << 20;

impl Writes {
    /// A mixed write committed now: its steps from now. Done at once (the
    /// delivery's part: the row written, or the write failed), or in
    /// flight.
    pub(super) fn begin_mixed(
        &mut self,
        write: &Write,
        id: FlightId,
        mut f: Box<Flight>,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Written {
        f.mixed = true;
        f.stage = Stage::Step { k: 0, attempt: 1 };
        f.relay_calls.resize(write.sinks.len(), 0);
        let never = |_: MessageIndex, _: u64| false;
        let wrote = self.drive(write, id, f, now, repaired, totals, &never);
        self.hand_over_released(write, now, repaired, totals, &never);
        match wrote {
            Some(wrote) => Written::Done(wrote),
            None => Written::InFlight(id),
        }
    }

    /// Mixed write `id`'s entry is due now: a relay call to `sink`, or
    /// its own next step (`OWN`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resume_mixed(
        &mut self,
        write: &Write,
        id: FlightId,
        f: Box<Flight>,
        sink: u32,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) {
        let plan = write.plan.as_ref().expect("a mixed write");
        if f.relayed {
            match sink {
                OWN => self.late_compensation(write, id, f, now, repaired, totals),
                k => self.relay_call(write, plan, id, f, k as usize, now, repaired, totals),
            }
            return;
        }
        self.drive_to_finish(write, id, f, now, repaired, totals, cancelled);
        self.hand_over_released(write, now, repaired, totals, cancelled);
    }

    /// A mixed write that waited for its key's lock takes it now (its
    /// waiting noted by the line): its two-phase step and what follows.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn take_lock_mixed(
        &mut self,
        write: &Write,
        id: FlightId,
        mut f: Box<Flight>,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) {
        f.stage = Stage::Step {
            k: f.step,
            attempt: 1,
        };
        self.drive_to_finish(write, id, f, now, repaired, totals, cancelled);
    }

    /// [`drive`](Self::drive), the delivery waiting for the write told how
    /// it ends once that is known.
    #[allow(clippy::too_many_arguments)]
    fn drive_to_finish(
        &mut self,
        write: &Write,
        id: FlightId,
        f: Box<Flight>,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) {
        let waiting = Finished::of(&f);
        if let Some(wrote) = self.drive(write, id, f, now, repaired, totals, cancelled) {
            self.finished.push(Finished { wrote, ..waiting });
        }
    }

    /// The keys mixed writes released in this event: the writes waiting
    /// for them take them (decision 27.40), in the order released.
    fn hand_over_released(
        &mut self,
        write: &Write,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) {
        // Keys released while handing over are handed over after these.
        loop {
            let released = std::mem::take(&mut self.released);
            if released.is_empty() {
                return;
            }
            for (key, releaser) in released {
                self.hand_over(write, key, releaser, now, repaired, totals, cancelled);
            }
        }
    }

    /// The delivery's part of a mixed write from its stage now, as long as
    /// each next thing is due now. Returns how the delivery ends once that
    /// is known (the row written, or the write failed and compensated);
    /// the write is parked (its next entry scheduled, its relay calls
    /// pending) or closed.
    #[allow(clippy::too_many_arguments)]
    fn drive(
        &mut self,
        write: &Write,
        id: FlightId,
        mut f: Box<Flight>,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
        cancelled: &dyn Fn(MessageIndex, u64) -> bool,
    ) -> Option<Wrote> {
        let plan = write.plan.as_ref().expect("a mixed write");
        loop {
            let next = match f.stage {
                Stage::Step { k: step, attempt } => match plan.steps.get(step as usize) {
                    None => {
                        let wrote =
                            self.row_written(write, plan, id, f, now, now, repaired, totals);
                        return Some(wrote);
                    }
                    Some(&PlanStep::Call(k)) => self.step_call(
                        write, &mut f, step, k as usize, attempt, now, repaired, totals,
                    ),
                    Some(PlanStep::TwoPhase) => {
                        f.step = step;
                        if self.locks.contains(&f.key) {
                            f.stage = Stage::Waiting { since: now };
                            self.waiting.entry(f.key).or_default().push_back(id);
                            self.flights[id as usize] = Some(f);
                            return None;
                        }
                        self.fold_in_doubt(now, totals);
                        self.prepare(write, &mut f, id, now, repaired, totals);
                        if f.stage == Stage::Deciding && f.decision == now {
                            continue;
                        }
                        // Its decision is scheduled, or never comes.
                        self.flights[id as usize] = Some(f);
                        return None;
                    }
                },
                Stage::Deciding => match self.decide(write, &mut f, id, now) {
                    None => {
                        // The commit's replies release the lock later.
                        self.flights[id as usize] = Some(f);
                        return None;
                    }
                    Some(_) => self.two_phase_done(&mut f, now, totals),
                },
                Stage::Releasing => {
                    self.release(&mut f, now);
                    self.two_phase_done(&mut f, now, totals)
                }
                Stage::Compensate { k, attempt } => self
                    .compensation_call(write, &mut f, k as usize, attempt, now, repaired, totals),
                Stage::Waiting { .. } | Stage::InDoubt | Stage::Relay => {
                    unreachable!("a mixed write resumed in its delivery makes steps")
                }
            };
            // A restart abandoned the delivery while the coordinator
            // decided: the consumer makes no further step.
            if matches!(next, Next::At(_))
                && matches!(f.stage, Stage::Step { .. })
                && cancelled(f.message, f.begun)
            {
                self.close_flight(id, f);
                return Some(Wrote::default());
            }
            match next {
                Next::At(at) if at == now => continue,
                // The last step is heard at `at`: the delivery learns now
                // that its write is done then (as a direct or saga write
                // does), and the relay's calls are scheduled then.
                Next::At(at) if matches!(f.stage, Stage::Step { k, .. } if k as usize == plan.steps.len()) =>
                {
                    return Some(self.row_written(write, plan, id, f, at, now, repaired, totals));
                }
                Next::At(at) => {
                    self.park_until(id, f, at, OWN);
                    return None;
                }
                Next::Done(heard) => {
                    // Failed, its saga sinks compensated: no row; the
                    // failing step's strategy decides the delivery.
                    let strategy = f.fail_strategy;
                    return Some(self.finish_flight(id, f, strategy, heard));
                }
            }
        }
    }

    /// Step `step`, sink `k`'s call (try `attempt`) now: a direct call, or
    /// a saga step retried on transient failures. The next step starts
    /// when its reply is heard; a failure compensates the saga sinks that
    /// applied, from then.
    #[allow(clippy::too_many_arguments)]
    fn step_call(
        &mut self,
        write: &Write,
        f: &mut Flight,
        step: u32,
        k: usize,
        attempt: u32,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Next {
        let heard = self.attempt(write, f, k, now, repaired, true);
        let reply = now.saturating_add(write.sinks[k].latency);
        let strategy = write.sinks[k].strategy;
        match failure(heard, write) {
            None => {
                if strategy == Strategy::Saga {
                    f.heard_ok |= 1 << k;
                }
                f.stage = Stage::Step {
                    k: step + 1,
                    attempt: 1,
                };
                Next::At(reply)
            }
            Some((_, Class::Transient))
                if strategy == Strategy::Saga && attempt < write.step_attempts =>
            {
                f.stage = Stage::Step {
                    k: step,
                    attempt: attempt + 1,
                };
                Next::At(reply.saturating_add(write.relay_retry))
            }
            Some(failed) => {
                f.failed = Some(failed);
                f.failed_sink = k as u32;
                f.fail_strategy = strategy;
                self.next_compensation(f, self.sinks.len(), reply, totals)
            }
        }
    }

    /// The two-phase step's decision is heard now (its lock released): a
    /// commit goes on to the next step; an abort compensates the saga
    /// sinks that applied.
    fn two_phase_done(&mut self, f: &mut Flight, now: Millis, totals: &mut Totals) -> Next {
        if f.prepared != 0 {
            let releaser = (f.message, f.crashed.then_some(f.start));
            self.released.push((f.key, releaser));
        }
        if f.failed.is_some() {
            f.fail_strategy = Strategy::TwoPhase;
            return self.next_compensation(f, self.sinks.len(), now, totals);
        }
        f.stage = Stage::Step {
            k: f.step + 1,
            attempt: 1,
        };
        Next::At(now)
    }

    /// Every step succeeded, the last heard at `s` (now or later): the
    /// outbox row is written then, the delivery acks then, and the relay
    /// calls each outbox sink from then (an irreversible one last, with
    /// `irreversible_last`).
    #[allow(clippy::too_many_arguments)]
    fn row_written(
        &mut self,
        write: &Write,
        plan: &Plan,
        id: FlightId,
        mut f: Box<Flight>,
        s: Millis,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) -> Wrote {
        let wrote = Wrote {
            took: s - f.commit,
            failed: None,
            stores_result: true,
        };
        f.relayed = true;
        f.owner = None;
        f.stage = Stage::Relay;
        f.gated_open = plan.gated;
        let first = plan.outbox & !plan.gated;
        f.relay_open = first;
        for k in 0..write.sinks.len() {
            if first & (1 << k) == 0 {
                continue;
            }
            if s == now {
                self.relay_step(write, plan, id, &mut f, k, now, repaired, totals);
            } else {
                self.relay_scheduled += 1;
                self.due.push((s, id, k as u32));
            }
        }
        if first == 0 {
            self.ungate(write, plan, id, &mut f, s, now, repaired, totals);
        }
        self.park_or_close_mixed(id, f);
        wrote
    }

    /// A relay call of a mixed write's row to outbox sink `k`, due now.
    #[allow(clippy::too_many_arguments)]
    fn relay_call(
        &mut self,
        write: &Write,
        plan: &Plan,
        id: FlightId,
        mut f: Box<Flight>,
        k: usize,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        self.relay_step(write, plan, id, &mut f, k, now, repaired, totals);
        self.park_or_close_mixed(id, f);
    }

    /// The relay calls outbox sink `k` now; what follows from its reply: a
    /// success may let the irreversible sinks be called, a dead letter
    /// withholds them and, with `outbox_dead_letter = "compensate"`,
    /// fails the write.
    #[allow(clippy::too_many_arguments)]
    fn relay_step(
        &mut self,
        write: &Write,
        plan: &Plan,
        id: FlightId,
        f: &mut Flight,
        k: usize,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        match self.relay(write, id, f, k, now, repaired, totals) {
            Relayed::Retry => {}
            Relayed::Ok(heard_at) => {
                if f.relay_open & !plan.gated == 0 && f.gated_open != 0 {
                    self.ungate(write, plan, id, f, heard_at, now, repaired, totals);
                }
            }
            Relayed::DeadLettered(heard_at) => {
                if plan.gated & (1 << k) == 0 && f.gated_open != 0 {
                    // An irreversible send withheld (28.1 step 6).
                    totals.notices_withheld += f.gated_open.count_ones() as u64;
                    f.gated_open = 0;
                }
                if plan.compensate_on_dead_letter && !f.failed_late {
                    self.failed_late(write, id, f, k, heard_at, now, repaired, totals);
                }
            }
        }
    }

    /// Every other outbox sink was heard to succeed, the last at `at`: the
    /// relay calls the irreversible ones then.
    #[allow(clippy::too_many_arguments)]
    fn ungate(
        &mut self,
        write: &Write,
        plan: &Plan,
        id: FlightId,
        f: &mut Flight,
        at: Millis,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        let gated = std::mem::take(&mut f.gated_open);
        f.relay_open |= gated;
        for k in 0..write.sinks.len() {
            if gated & (1 << k) == 0 {
                continue;
            }
            if at == now {
                self.relay_step(write, plan, id, f, k, now, repaired, totals);
            } else {
                self.relay_scheduled += 1;
                self.due.push((at, id, k as u32));
            }
        }
    }

    /// `outbox_dead_letter = "compensate"`: outbox sink `k`'s dead letter,
    /// its last call's failure heard at `heard_at`, fails the write (its
    /// first only): the relay compensates the saga sinks that applied it,
    /// in reverse order, from then.
    #[allow(clippy::too_many_arguments)]
    fn failed_late(
        &mut self,
        write: &Write,
        id: FlightId,
        f: &mut Flight,
        k: usize,
        heard_at: Millis,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        f.failed_late = true;
        f.failed_sink = k as u32;
        self.tell(f, heard_at, Detail::WriteFailedLate { sink: k as u32 });
        match self.next_compensation(f, self.sinks.len(), heard_at, totals) {
            Next::At(at) if at == now => self.compensate_late(write, id, f, now, repaired, totals),
            Next::At(at) => {
                self.relay_scheduled += 1;
                self.due.push((at, id, OWN));
            }
            Next::Done(_) => f.stage = Stage::Relay,
        }
    }

    /// A late compensation's call is due now.
    fn late_compensation(
        &mut self,
        write: &Write,
        id: FlightId,
        mut f: Box<Flight>,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        self.compensate_late(write, id, &mut f, now, repaired, totals);
        self.park_or_close_mixed(id, f);
    }

    /// The relay's compensations of a write failed late, from now, as
    /// long as each next call is due now; the next one is scheduled.
    fn compensate_late(
        &mut self,
        write: &Write,
        id: FlightId,
        f: &mut Flight,
        now: Millis,
        repaired: bool,
        totals: &mut Totals,
    ) {
        while let Stage::Compensate { k, attempt } = f.stage {
            match self.compensation_call(write, f, k as usize, attempt, now, repaired, totals) {
                Next::At(at) if at == now => continue,
                Next::At(at) => {
                    self.relay_scheduled += 1;
                    self.due.push((at, id, OWN));
                    return;
                }
                Next::Done(_) => f.stage = Stage::Relay,
            }
        }
    }

    /// A mixed write in its relay's hands waits while a relay call or a
    /// compensation is pending; closed once none is.
    fn park_or_close_mixed(&mut self, id: FlightId, f: Box<Flight>) {
        let compensating = matches!(f.stage, Stage::Compensate { .. });
        if f.relay_open == 0 && f.gated_open == 0 && !compensating {
            self.close_flight(id, f);
        } else {
            self.flights[id as usize] = Some(f);
        }
    }
}
