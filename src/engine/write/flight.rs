//! One write in flight: from its commit to its last reply, what it has
//! heard so far and what it makes next (docs/model.md section 24,
//! decisions 27.18 and 27.35).

use super::rows::RowWrite;
use super::trace::TraceBuf;
use crate::model::{
    Class, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, SinkKind, Strategy,
};

/// A write in flight's number among the writes in flight now (its slot).
pub(in crate::engine) type FlightId = u32;

/// What a commit writes: its message, key and intent, and its row in the
/// versioned sinks (section 28.9), if any.
pub(in crate::engine) type What = (MessageIndex, KeyRef, IntentIndex, Option<RowWrite>);

/// What a write in flight makes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Direct or saga: step `k`'s call, try `attempt` (from 1).
    Step { k: u32, attempt: u32 },
    /// Saga: sink `k`'s compensation, try `attempt` (from 1).
    Compensate { k: u32, attempt: u32 },
    /// Two-phase: waiting for its key's lock since `since`.
    Waiting { since: Millis },
    /// Two-phase: prepared, its decision due.
    Deciding,
    /// Two-phase with `commit_round_trip`: decided, the key's lock held
    /// until the last decision call's reply.
    Releasing,
    /// Two-phase: its coordinator crashed and never recovers; in doubt to
    /// the end of the run (section 28.15).
    InDoubt,
    /// Outbox: the relay's calls, each sink on its own.
    Relay,
}

/// One write in flight.
#[derive(Debug, Clone)]
pub(super) struct Flight {
    pub(super) message: MessageIndex,
    pub(super) key: KeyRef,
    pub(super) intent: IntentIndex,
    /// Its row, version and value in the versioned sinks.
    pub(super) row: Option<RowWrite>,
    /// The commit instant.
    pub(super) commit: Millis,
    /// The write's number in ledger order.
    pub(super) number: u64,
    /// The commit's sequence number: a restart that cancels the entries
    /// scheduled before it abandoned this write's delivery.
    pub(super) begun: u64,
    /// The receipt of the delivery that waits for the write (none for an
    /// outbox row, whose delivery acked at once).
    pub(super) owner: Option<u32>,
    pub(super) strategy: Strategy,
    pub(super) stage: Stage,
    /// Saga: the sinks whose call was heard to succeed.
    pub(super) heard_ok: u64,
    /// The failure the write ends with, once heard.
    pub(super) failed: Option<(ReasonIndex, Class)>,
    pub(super) failed_sink: u32,
    /// Saga: whether the compensation in hand was applied, and when its
    /// latest reply was lost.
    pub(super) compensation_applied: bool,
    pub(super) compensation_lost_at: Option<Millis>,
    /// Two-phase: when it prepared, which sinks prepared, whether its
    /// coordinator crashed.
    pub(super) start: Millis,
    pub(super) prepared: u64,
    pub(super) crashed: bool,
    pub(super) decision: Millis,
    /// With `commit_round_trip`: when the last decision call's reply is
    /// heard (the key's lock released then).
    pub(super) released: Millis,
    /// Outbox: per sink, the relay's calls so far; the sinks still called.
    pub(super) relay_calls: Vec<u32>,
    pub(super) relay_open: u64,
    /// Per sink: when it showed the write and until when (`Millis::MAX`:
    /// still).
    pub(super) shows: Vec<Option<(Millis, Millis)>>,
    /// Per sink: the write's net count there (its applied calls, one at
    /// most for an upsert, minus its applied compensations): the sink
    /// shows the write while it is above 0 (decision 27.38).
    pub(super) nets: Vec<i64>,
    /// Its calls, while the run keeps traces.
    pub(super) trace: Option<Box<TraceBuf>>,
    /// A mixed write (section 28.1): its steps follow the write's plan.
    pub(super) mixed: bool,
    /// Its outbox row is written: what is left is the relay's (its
    /// delivery no longer waits for it).
    pub(super) relayed: bool,
    /// Mixed: the step in hand, an index into the plan's steps.
    pub(super) step: u32,
    /// Mixed: the strategy of the step that failed, which decides the
    /// delivery (28.1 step 4).
    pub(super) fail_strategy: Strategy,
    /// Mixed, `outbox_dead_letter = "compensate"`: a dead letter failed
    /// the write after its delivery acked.
    pub(super) failed_late: bool,
    /// Mixed, `irreversible_last`: the outbox sinks whose relay call
    /// waits for every other outbox sink to succeed.
    pub(super) gated_open: u64,
}

impl Flight {
    pub(super) fn new(
        (message, key, intent, row): What,
        commit: Millis,
        number: u64,
        begun: u64,
        strategy: Strategy,
        sinks: usize,
    ) -> Self {
        Flight {
            message,
            key,
            intent,
            row,
            commit,
            number,
            begun,
            owner: None,
            strategy,
            stage: Stage::Step { k: 0, attempt: 1 },
            heard_ok: 0,
            failed: None,
            failed_sink: 0,
            compensation_applied: false,
            compensation_lost_at: None,
            start: commit,
            prepared: 0,
            crashed: false,
            decision: commit,
            released: commit,
            relay_calls: Vec::new(),
            relay_open: 0,
            shows: vec![None; sinks],
            nets: vec![0; sinks],
            trace: None,
            mixed: false,
            relayed: false,
            step: 0,
            fail_strategy: strategy,
            failed_late: false,
            gated_open: 0,
        }
    }

    /// This flight's buffers reused for a new write (as [`Flight::new`]).
    pub(super) fn renew(
        &mut self,
        what: What,
        commit: Millis,
        number: u64,
        begun: u64,
        strategy: Strategy,
        sinks: usize,
    ) {
        let (mut shows, mut nets, mut relay_calls) = (
            std::mem::take(&mut self.shows),
            std::mem::take(&mut self.nets),
            std::mem::take(&mut self.relay_calls),
        );
        shows.clear();
        shows.resize(sinks, None);
        nets.clear();
        nets.resize(sinks, 0);
        relay_calls.clear();
        *self = Flight {
            shows,
            nets,
            relay_calls,
            ..Flight::new(what, commit, number, begun, strategy, 0)
        };
    }

    /// Whether its calls are the consumer's, made inside the delivery (a
    /// direct or saga write): a restart that abandons the delivery
    /// cancels them (decisions 26.6, 27.35).
    pub(super) fn consumer_calls(&self) -> bool {
        if self.mixed {
            // Inside the delivery, but for the coordinator's two-phase step.
            return !self.relayed
                && matches!(self.stage, Stage::Step { .. } | Stage::Compensate { .. });
        }
        matches!(self.strategy, Strategy::Direct | Strategy::Saga)
    }

    /// The write is applied to sink `k` (of `kind`) at `at`: counted, and
    /// shown from then if it was not.
    #[inline]
    pub(super) fn applied(&mut self, kind: SinkKind, k: usize, at: Millis) {
        let net = &mut self.nets[k];
        *net = match kind {
            // An upsert absorbs a repeat: one row, however often written.
            SinkKind::Upsert => 1,
            _ => *net + 1,
        };
        self.shown(k, at);
    }

    #[inline]
    pub(super) fn shown(&mut self, k: usize, at: Millis) {
        if self.shows[k].is_none() {
            self.shows[k] = Some((at, Millis::MAX));
        }
    }

    /// A compensation is applied to sink `k` at `at`: the sink stops
    /// showing the write once its net count there is no longer above 0
    /// (an increment applied twice and compensated once still shows it).
    pub(super) fn compensated(&mut self, k: usize, at: Millis) {
        self.nets[k] -= 1;
        if self.nets[k] > 0 {
            return;
        }
        if let Some((_, until)) = &mut self.shows[k]
            && *until == Millis::MAX
        {
            *until = at;
        }
    }
}
