//! What a write to several sinks keeps for the reports' sequence diagrams
//! and lock lanes: the calls of the first writes worth a look, and the
//! first two-phase locks. Both are bounded, whatever the run's size.

use crate::model::{MessageIndex, Millis, ReasonIndex};

/// The most writes whose calls a run keeps: the first write, and then the
/// first writes worth a look (a call that failed or lost its reply, a
/// compensation, a lock wait, a coordinator crash).
pub const WRITE_TRACES_KEPT: usize = 12;

/// The most calls kept for one write (a saga or a relay can make up to
/// sinks x attempts); the rest are counted.
pub const TRACE_CALLS_KEPT: usize = 48;

/// The most two-phase locks a run keeps for the lock lanes.
pub const LOCK_SPANS_KEPT: usize = 200;

/// What one call was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// A direct write's or a saga step's call.
    Call,
    /// An outbox relay's call.
    Relay,
    /// A two-phase prepare.
    Prepare,
    /// The coordinator's commit, when every sink prepared.
    Commit,
    /// The coordinator's abort, to a sink that prepared.
    Abort,
    /// A saga's compensation.
    Compensation,
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Call => "call",
            CallKind::Relay => "relay",
            CallKind::Prepare => "prepare",
            CallKind::Commit => "commit",
            CallKind::Abort => "abort",
            CallKind::Compensation => "compensate",
        }
    }
}

/// What the caller heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Ok,
    /// The call failed, nothing applied (its reason).
    Failed(ReasonIndex),
    /// Applied, and the reply was lost.
    Lost,
    /// A decision: no reply is waited for.
    Decided,
}

/// One call of a traced write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TracedCall {
    pub sink: u32,
    pub kind: CallKind,
    /// When the call was made (and applied, if it was).
    pub at: Millis,
    /// When its reply came back (the sink's latency later).
    pub heard_at: Millis,
    pub reply: Reply,
    /// Whether the call changed the sink (a second, tracked compensation
    /// does not).
    pub applied: bool,
}

/// The calls of one write, in the order they were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTrace {
    pub message: MessageIndex,
    /// The commit instant.
    pub at: Millis,
    pub calls: Vec<TracedCall>,
    /// Calls past [`TRACE_CALLS_KEPT`], counted.
    pub calls_dropped: u32,
    /// Two-phase: the write waited for its key's lock until then.
    pub waited_until: Option<Millis>,
    /// Two-phase: the coordinator crashed after every prepare.
    pub crashed: bool,
    /// Saga: the irreversible sinks that sent before the write failed (a
    /// false notice each), in the order the saga reached them.
    pub false_notices: Vec<u32>,
}

/// A two-phase lock one sink held for one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockSpan {
    pub sink: u32,
    pub message: MessageIndex,
    pub from: Millis,
    pub until: Millis,
    /// Held past the replies because the coordinator crashed.
    pub crashed: bool,
}

/// The traces and locks kept so far.
#[derive(Debug, Default, Clone)]
pub(super) struct Tracer {
    /// Each kept trace with its write's number in ledger order.
    traces: Vec<(u64, WriteTrace)>,
    pub(super) locks: Vec<LockSpan>,
}

/// One write's calls while it is in flight, kept while traces are open.
#[derive(Debug, Default, Clone)]
pub(super) struct TraceBuf {
    calls: Vec<TracedCall>,
    dropped: u32,
    worth_a_look: bool,
    waited_until: Option<Millis>,
    crashed: bool,
    false_notices: Vec<u32>,
    /// Whether the write is the run's first.
    first: bool,
}

impl TraceBuf {
    pub(super) fn new(first: bool) -> Self {
        TraceBuf {
            first,
            ..TraceBuf::default()
        }
    }

    pub(super) fn call(&mut self, call: TracedCall) {
        if !matches!(call.reply, Reply::Ok | Reply::Decided)
            || matches!(call.kind, CallKind::Compensation | CallKind::Abort)
        {
            self.worth_a_look = true;
        }
        if self.calls.len() < TRACE_CALLS_KEPT {
            self.calls.push(call);
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// The last call recorded changed nothing (a tracked compensation
    /// sent again).
    pub(super) fn not_applied(&mut self) {
        if let Some(last) = self.calls.last_mut() {
            last.applied = false;
        }
    }

    pub(super) fn waited(&mut self, until: Millis) {
        self.waited_until = Some(until);
        self.worth_a_look = true;
    }

    pub(super) fn false_notice(&mut self, sink: u32) {
        if self.false_notices.len() < TRACE_CALLS_KEPT {
            self.false_notices.push(sink);
        }
    }

    pub(super) fn crashed(&mut self) {
        self.crashed = true;
        self.worth_a_look = true;
    }
}

impl Tracer {
    /// Whether traces are still being kept (no work once they are full:
    /// every write begun later has a later number than the kept ones).
    pub(super) fn open(&self) -> bool {
        self.traces.len() < WRITE_TRACES_KEPT
    }

    pub(super) fn lock(&mut self, span: LockSpan) {
        if self.locks.len() < LOCK_SPANS_KEPT {
            self.locks.push(span);
        }
    }

    /// Write `number` of `message`, committed at `at`, is done: kept when
    /// it is the first or worth a look, while there is room.
    pub(super) fn finish(&mut self, buf: TraceBuf, number: u64, message: MessageIndex, at: Millis) {
        if !(buf.first || buf.worth_a_look) {
            return;
        }
        // Writes end out of ledger order: a full list gives up its
        // latest write for an earlier one.
        if !self.open() {
            let latest = (self.traces.iter().enumerate()).max_by_key(|(_, (n, _))| *n);
            match latest {
                Some((i, &(n, _))) if n > number => {
                    self.traces.swap_remove(i);
                }
                _ => return,
            }
        }
        let mut calls = buf.calls;
        // Calls in the order they were made (an outbox relay's sinks
        // interleave).
        calls.sort_by_key(|c| c.at);
        let trace = WriteTrace {
            message,
            at,
            calls,
            calls_dropped: buf.dropped,
            waited_until: buf.waited_until,
            crashed: buf.crashed,
            false_notices: buf.false_notices,
        };
        self.traces.push((number, trace));
    }

    /// The traces kept, in the order their writes were made.
    pub(super) fn into_parts(mut self) -> (Vec<WriteTrace>, Vec<LockSpan>) {
        self.traces.sort_by_key(|(number, _)| *number);
        let traces = self.traces.into_iter().map(|(_, t)| t).collect();
        (traces, self.locks)
    }
}
