//! One write to several sinks (docs/model.md section 24): how each sink's
//! calls behave (latency, faults, an outage window, whether it can
//! prepare) and the `[write]` strategy that copes with their failures. A
//! scenario has a [`Write`] only when the file writes `[write]` or gives
//! a sink latency, faults or an outage; otherwise every effect reaches
//! every sink at once, as in section 19.

use super::{Class, MessageIndex, Millis, ReasonIndex};

/// `[write] strategy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Calls in order inside the delivery; the first failure fails it.
    #[default]
    Direct,
    /// A row in the consumer's own store; a relay applies it to each sink.
    Outbox,
    /// Prepare everywhere, then commit or abort everywhere.
    TwoPhase,
    /// Calls in order; a failure compensates what applied, in reverse.
    Saga,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Direct => "direct",
            Strategy::Outbox => "outbox",
            Strategy::TwoPhase => "two_phase",
            Strategy::Saga => "saga",
        }
    }
}

/// Which calls a sink fault (or the coordinator's crash) selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallSelector {
    /// Each intent's first N calls to the sink (the coordinator: the
    /// run's first N writes).
    First(u64),
    /// Every call for the intents of these messages.
    Intents(Vec<MessageIndex>),
    /// Every call for each N-th intent, numbered from 1 in the order of
    /// their first call to the sink (the coordinator: every N-th write).
    Every(u64),
    /// Every call until an operator step repairs.
    UntilRepair,
}

/// What a selected call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkFaultKind {
    /// The call fails: nothing applied.
    Fail(ReasonIndex, Class),
    /// The write is applied; the caller hears a transient failure.
    LoseReply,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkFault {
    pub kind: SinkFaultKind,
    pub selector: CallSelector,
    /// Selects compensation calls (saga) instead of writes.
    pub compensation: bool,
}

/// A `[[sink]]`'s calls: section 24's keys of one sink.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkCalls {
    /// `[[sink]] strategy` (section 28.1), default `[write] strategy`.
    pub strategy: Strategy,
    /// A call's round trip.
    pub latency: Millis,
    /// In file order: the first that selects a call decides it.
    pub faults: Vec<SinkFault>,
    /// `outage = { from, duration }`: every call inside fails.
    pub outage: Option<(Millis, Millis)>,
    /// Whether the sink can take part in two-phase commit.
    pub prepare: bool,
    /// An irreversible sink under saga: a compensated write's false
    /// notice is followed by a corrective notice (section 28.16).
    pub corrective_notice: bool,
    /// `becomes`: from this instant on, writes apply by this kind
    /// (section 28.8).
    pub becomes: Option<(Millis, super::SinkKind)>,
    /// `versioned = true` (section 28.9): an upsert holding a value and a
    /// version per row, and what it does with a stale write.
    pub versioned: Option<StaleWrites>,
}

/// What a versioned sink does with a write older than its row
/// (`[[sink]] stale_writes`, section 28.9).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StaleWrites {
    /// Last writer wins: the row takes the stale write (a stale overwrite).
    #[default]
    Overwrite,
    /// A conditional write: the row keeps its contents (a stale rejection);
    /// the call still succeeds.
    Reject,
}

/// What the messages write in versioned sinks (section 28.9), as the file
/// gives it: `row`, `version` and `value` of each explicit message, `row`
/// of each traffic block. Defaults are the engine's: the row is the
/// message's current key, the version its first arrival in ms, the value
/// its version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionedRows {
    /// Per explicit message, in file order.
    pub messages: Vec<RowWrite>,
    /// Per `[[traffic]]` block, in file order: the row every message of
    /// the block writes.
    pub blocks: Vec<Option<String>>,
}

/// One explicit message's `row`, `version` and `value`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowWrite {
    pub row: Option<String>,
    pub version: Option<u64>,
    pub value: Option<i64>,
}

/// `[coordinator]`: the two-phase coordinator (section 24, 28.15).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coordinator {
    /// The writes it crashes on, after every sink prepared.
    pub crash: Option<CallSelector>,
    /// How long after the prepare a crashed coordinator recovers and
    /// decides; `None`: it never does.
    pub recovers_after: Option<Millis>,
    /// `crash_at = "before_log"`: the crash came before the decision was
    /// logged, so the recovered coordinator aborts, the delivery failing
    /// with this reason.
    pub before_log: Option<ReasonIndex>,
    /// The decision is a second call to every prepared sink, each lock
    /// released when its reply is heard.
    pub commit_round_trip: bool,
}

/// `[write]` and the sinks' calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub strategy: Strategy,
    /// The wait after a failed call's reply before the next try (relay,
    /// saga step, compensation).
    pub relay_retry: Millis,
    /// The most calls per sink for one outbox row, or for one compensation.
    pub relay_attempts: u32,
    /// A saga step's tries in a row on transient failures.
    pub step_attempts: u32,
    /// Saga: compensations tracked, applied once however often retried.
    pub idempotent_compensation: bool,
    pub coordinator: Option<Coordinator>,
    /// Per sink, in the order of [`super::Guarantees::sinks`].
    pub sinks: Vec<SinkCalls>,
    /// "sink error", "reply lost", "sink unavailable" (interned).
    pub reasons: WriteReasons,
    /// When some sink is versioned: the rows, versions and values the
    /// messages write (section 28.9).
    pub rows: Option<VersionedRows>,
    /// A write whose sinks do not share one strategy, or that asks for
    /// `irreversible_last` or `outbox_dead_letter = "compensate"`: its
    /// steps (section 28.1). `None`: section 24 by `strategy`.
    pub plan: Option<Plan>,
}

/// How a mixed write is made (section 28.1): its synchronous steps in
/// order, then one outbox row for its outbox sinks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The steps in order: a direct or saga sink's call, or every
    /// two_phase sink together (at the first one's place).
    pub steps: Vec<PlanStep>,
    /// The sinks in the order their calls are made (irreversible ones
    /// last with `irreversible_last`): compensations go in reverse.
    pub order: Vec<u32>,
    /// Bits of the two_phase sinks.
    pub two_phase: u64,
    /// Bits of the outbox sinks.
    pub outbox: u64,
    /// Bits of the outbox sinks the relay calls only once every other
    /// outbox sink was heard to succeed (`irreversible_last`).
    pub gated: u64,
    /// `outbox_dead_letter = "compensate"`.
    pub compensate_on_dead_letter: bool,
}

/// One synchronous step of a mixed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStep {
    /// A direct or saga sink's call.
    Call(u32),
    /// Every two_phase sink: prepares, then the decision.
    TwoPhase,
}

impl Write {
    /// Whether some sink has strategy `s`.
    pub fn uses(&self, s: Strategy) -> bool {
        self.sinks.iter().any(|k| k.strategy == s)
    }

    /// Sink `k`'s strategy.
    pub fn strategy_of(&self, k: usize) -> Strategy {
        self.sinks.get(k).map_or(self.strategy, |s| s.strategy)
    }

    /// What the report calls the write's strategy: the one every sink
    /// has, or "mixed".
    pub fn strategy_name(&self) -> &'static str {
        match self.plan {
            Some(_) if self.sinks.iter().any(|k| k.strategy != self.strategy) => "mixed",
            _ => self.strategy.as_str(),
        }
    }
}

/// The reasons of section 24, interned in the scenario's reasons.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteReasons {
    pub sink_error: ReasonIndex,
    pub reply_lost: ReasonIndex,
    pub sink_unavailable: ReasonIndex,
}

pub const DEFAULT_RELAY_RETRY: Millis = 1_000;
pub const DEFAULT_RELAY_ATTEMPTS: u32 = 10;
/// The most `relay_attempts` or `step_attempts` a file may ask for.
pub const MAX_ATTEMPTS: u32 = 1_000;
/// The most faults one sink may list.
pub const MAX_SINK_FAULTS: usize = 100;
/// The most sinks a file may have (a saga keeps the sinks it heard
/// succeed in one 64-bit mask).
pub const MAX_SINKS: usize = 64;

/// The most rows a versioned sink lists in the JSON report (by name).
pub const ROWS_LISTED: usize = 1_000;

impl super::Scenario {
    /// The row message `m` writes under `key` in a versioned sink: its
    /// `row` (or its block's), else the key's name (section 28.9).
    pub fn row_name(&self, m: MessageIndex, key: super::KeyRef) -> std::borrow::Cow<'_, str> {
        let rows = self.write.as_ref().and_then(|w| w.rows.as_ref());
        let named = rows.and_then(|rows| match self.generated(m) {
            None => rows.messages.get(m as usize)?.row.as_deref(),
            Some((g, _)) => rows.blocks.get(g.stream as usize - 1)?.as_deref(),
        });
        match named {
            Some(row) => std::borrow::Cow::Borrowed(row),
            None => std::borrow::Cow::Owned(self.key_name(key)),
        }
    }

    /// The version and value message `m` writes in a versioned sink: its
    /// `version` (default its first arrival `arrival`, in ms) and its
    /// `value` (default the version).
    pub fn row_version(&self, m: MessageIndex, arrival: Millis) -> (u64, i64) {
        let given = (self.write.as_ref())
            .and_then(|w| w.rows.as_ref())
            .filter(|_| self.generated(m).is_none())
            .and_then(|rows| rows.messages.get(m as usize));
        let version = given.and_then(|r| r.version).unwrap_or(arrival);
        let value = given
            .and_then(|r| r.value)
            .unwrap_or(version.min(i64::MAX as u64) as i64);
        (version, value)
    }
}
