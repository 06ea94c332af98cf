//! The plain write: a direct or saga write whose every call succeeds at
//! once, made at its commit ahead of its instants when no call of a
//! write in flight that matters can change places with its calls
//! (decision 27.35).

use super::Writes;
use super::flight::Stage;
use crate::model::{IntentIndex, KeyRef, Millis, Plan, PlanStep, Strategy, Write};

/// The most writes in flight a plain write is checked against; with more,
/// writes take the full path.
const PLAIN_BESIDE: usize = 64;

impl Writes {
    /// How long a plain write of `intent` under `key` at `t` takes, if it
    /// is one: a direct or saga write, not the run's first (which is
    /// traced), whose every call, in file order, would be heard to
    /// succeed at once, and whose calls, made now ahead of their
    /// instants, cannot change places with a call of another write in
    /// flight that matters (decision 27.35): no such write has its
    /// intent or its key, nor a call still to make to a sink whose
    /// `every` selector numbers intents in call order. Such a write is
    /// its calls' latencies one after another, and nothing in it is worth
    /// a note or a trace. Nothing is changed.
    #[inline(always)]
    pub(in crate::engine) fn plain_took(
        &self,
        write: &Write,
        intent: IntentIndex,
        key: KeyRef,
        t: Millis,
        repaired: bool,
    ) -> Option<Millis> {
        // A versioned sink's write knows its row: made in flight.
        if self.written == 0 || write.rows.is_some() {
            return None;
        }
        if let Some(plan) = &write.plan {
            if plan.two_phase != 0 || (self.in_flight() > 0 && !self.beside_flights(intent, key)) {
                return None;
            }
            return self.plan_took(write, plan, intent, t, repaired);
        }
        if !matches!(write.strategy, Strategy::Direct | Strategy::Saga) {
            return None;
        }
        if self.in_flight() > 0 && !self.beside_flights(intent, key) {
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

    /// Whether a write of `intent` under `key` made now ahead of its
    /// instants keeps its calls' order with every write in flight (at
    /// most [`PLAIN_BESIDE`] of them, else it is not looked at).
    fn beside_flights(&self, intent: IntentIndex, key: KeyRef) -> bool {
        if self.in_flight() > PLAIN_BESIDE {
            return false;
        }
        self.flights.iter().flatten().all(|f| {
            let still = match f.stage {
                // A mixed write with a first call still to make (a step,
                // or a gated outbox sink): any `every` sink, to be safe.
                _ if f.mixed && (!f.relayed || f.gated_open != 0) => self.layout.every_sinks,
                // A relayed one: the outbox sinks the relay has not
                // called yet (its first call to one numbers its intent
                // there; a retry keeps the number).
                _ if f.mixed => {
                    let first_ahead = (0..f.relay_calls.len())
                        .filter(|&k| f.relay_open & (1 << k) != 0 && f.relay_calls[k] == 0)
                        .fold(0u64, |m, k| m | 1 << k);
                    self.layout.every_sinks & first_ahead
                }
                Stage::Step { k, .. } => self.layout.every_sinks & !((1u64 << k) - 1),
                _ => 0,
            };
            f.intent != intent && f.key != key && still == 0
        })
    }

    /// A write that [`plain_took`](Self::plain_took) found plain, made:
    /// each call counted and applied as the strategy would make it, and
    /// its partial visibility (from the first sink's call to the last's)
    /// added. The sink calls are counted in `calls_made`.
    #[inline(always)]
    pub(in crate::engine) fn write_plain(
        &mut self,
        write: &Write,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
    ) {
        if let Some(plan) = &write.plan {
            self.write_plan_plain(write, plan, key, intent, t);
            return;
        }
        self.written += 1;
        let mut at = t;
        let mut last = t;
        for (sink, calls) in self.sinks.iter_mut().zip(&write.sinks) {
            sink.succeed(key, intent, at);
            last = at;
            at = at.saturating_add(calls.latency);
        }
        let n = self.sinks.len();
        self.calls_made += n as u64;
        if n >= 2 {
            self.partial_closed += last - t;
        }
    }

    /// A mixed write (section 28.1) without a two-phase step whose every
    /// call would succeed at once: its steps one after another from `t`,
    /// its outbox row at their end `s` (the relay's calls then, an
    /// irreversible one gated by `irreversible_last` when the others are
    /// heard). Its delivery takes `s - t`.
    fn plan_took(
        &self,
        write: &Write,
        plan: &Plan,
        intent: IntentIndex,
        t: Millis,
        repaired: bool,
    ) -> Option<Millis> {
        let ok = |k: usize, at: Millis| {
            self.sinks[k].would_succeed(&write.sinks[k], intent, at, repaired)
        };
        let mut at = t;
        for step in &plan.steps {
            let PlanStep::Call(k) = *step else {
                return None;
            };
            if !ok(k as usize, at) {
                return None;
            }
            at = at.saturating_add(write.sinks[k as usize].latency);
        }
        let (s, mut gate) = (at, at);
        for k in 0..write.sinks.len() {
            if plan.outbox & !plan.gated & (1 << k) != 0 {
                if !ok(k, s) {
                    return None;
                }
                gate = gate.max(s.saturating_add(write.sinks[k].latency));
            }
        }
        for k in 0..write.sinks.len() {
            if plan.gated & (1 << k) != 0 && !ok(k, gate) {
                return None;
            }
        }
        Some(s - t)
    }

    /// A mixed write that [`plan_took`](Self::plan_took) found plain,
    /// made: each call counted and applied at its instant, the relay's
    /// lag and end kept, its partial visibility added.
    fn write_plan_plain(
        &mut self,
        write: &Write,
        plan: &Plan,
        key: KeyRef,
        intent: IntentIndex,
        t: Millis,
    ) {
        self.written += 1;
        let (mut first, mut last) = (Millis::MAX, t);
        let mut at = t;
        for step in &plan.steps {
            if let PlanStep::Call(k) = *step {
                let k = k as usize;
                self.sinks[k].succeed(key, intent, at);
                (first, last) = (first.min(at), last.max(at));
                at = at.saturating_add(write.sinks[k].latency);
            }
        }
        let (s, mut gate) = (at, at);
        for pass in [plan.outbox & !plan.gated, plan.gated] {
            let called = if pass == plan.gated { gate } else { s };
            for k in 0..write.sinks.len() {
                if pass & (1 << k) == 0 {
                    continue;
                }
                self.sinks[k].succeed(key, intent, called);
                (first, last) = (first.min(called), last.max(called));
                let lag = &mut self.sinks[k].max_lag;
                *lag = (*lag).max(called - t);
                let heard = called.saturating_add(write.sinks[k].latency);
                self.relay_end = Some(self.relay_end.map_or(heard, |e| e.max(heard)));
                gate = gate.max(heard);
            }
        }
        let n = self.sinks.len();
        self.calls_made += n as u64;
        if n >= 2 && first != Millis::MAX {
            self.partial_closed += last - first;
        }
    }
}
