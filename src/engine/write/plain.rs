//! The plain write: a direct or saga write whose every call succeeds at
//! once, made at its commit ahead of its instants when no call of a
//! write in flight that matters can change places with its calls
//! (decision 27.35).

use super::Writes;
use super::flight::Stage;
use crate::model::{IntentIndex, KeyRef, Millis, Strategy, Write};

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
        // A versioned sink's write knows its row, and a mixed write
        // (section 28.1) follows its plan: both made in flight.
        if !matches!(write.strategy, Strategy::Direct | Strategy::Saga)
            || self.written == 0
            || write.rows.is_some()
            || write.plan.is_some()
        {
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
                Stage::Step { k, .. } => self.every_sinks & !((1u64 << k) - 1),
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
}
