//! What a run records: transitions and committed effects.

use crate::model::{
    Class, CrashAt, EventKind, IntentIndex, KeyRef, MessageIndex, Millis, ReasonIndex, State,
};

/// One step of the run, at a modeled time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    pub time: Millis,
    /// `None` for operator transitions that concern no single message.
    pub message: Option<MessageIndex>,
    pub detail: Detail,
}

/// A record of a partitioned log: its partition and offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    pub partition: u32,
    pub offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    Delivered {
        cycle: u32,
        cycle_receives: u32,
        total_receives: u32,
        /// In a log run, the record delivered.
        record: Option<Record>,
    },
    Failed {
        reason: ReasonIndex,
        class: Class,
    },
    Committed {
        key: KeyRef,
        /// 1-based position in the effect ledger.
        effect: u64,
    },
    DedupHit {
        key: KeyRef,
        expires_at: Millis,
    },
    AckLost,
    Acked,
    RetryScheduled {
        delay: Millis,
        due: Millis,
    },
    Quarantined {
        reason: ReasonIndex,
        class: Class,
        depth: u64,
        /// Quarantined by `max_elapsed` (section 28.3): when the next
        /// retry would have been due, and when the cycle began.
        elapsed: Option<(Millis, Millis)>,
    },
    Inspected {
        /// 1-based operator step.
        step: u32,
        depth: u64,
    },
    Expired {
        age: Millis,
    },
    Repaired,
    Redriven {
        cycle: u32,
        key: KeyRef,
        /// In a log run, the record it is appended as.
        record: Option<Record>,
    },
    RedriveSkipped {
        state: State,
    },
    Purged,
    /// Alarm (index into `Scenario::alarms`) fired; its metric's value.
    AlarmFired {
        alarm: u32,
        value: u64,
    },
    AlarmCleared {
        alarm: u32,
    },
    /// The consumer of the delivery started at `started` crashed: the
    /// delivery ends without an ack.
    Crashed {
        at: CrashAt,
        started: Millis,
    },
    /// A superseded delivery (started at `started`) ended; its outcome
    /// never reaches the broker. `latest`: when the message's latest
    /// delivery started, or (`quarantined`) when it was quarantined as it
    /// became visible again.
    ReceiptExpired {
        started: Millis,
        latest: Millis,
        quarantined: bool,
    },
    /// The visibility timeout of the delivery started at `started` passed.
    VisibleAgain {
        started: Millis,
    },
    /// A live INTENT claim on the key, made by `holder` at `claimed_at`:
    /// the delivery fails.
    Contention {
        key: KeyRef,
        lease_expires: Millis,
        holder: MessageIndex,
        claimed_at: Millis,
    },
    /// The delivery claimed the key: INTENT until `lease_expires`.
    /// `lapsed`: the key's previous claim, which expired without DONE.
    Claimed {
        key: KeyRef,
        lease_expires: Millis,
        lapsed: Option<Lapsed>,
    },
    /// DONE replaced the key's INTENT, until `expires_at`.
    DoneRecorded {
        key: KeyRef,
        expires_at: Millis,
    },
    /// Quarantine is disabled: the message is dropped (final).
    Dropped {
        reason: ReasonIndex,
        class: Class,
    },
    /// Every canary was acked: `rest` messages are redriven now.
    CanaryPassed {
        rest: u64,
    },
    /// `acked` of the `canaries` were acked: the rest stay in quarantine.
    CanaryFailed {
        acked: u64,
        canaries: u64,
    },
    /// The log's restart `restart` (0-based, in the file's order) at its
    /// instant. `partition`: the one partition it restarts (none: several);
    /// `checkpoint`: the checkpoint it resumes from, if any; `position`:
    /// the first restarted partition's resume position.
    Restarted {
        restart: u32,
        partition: Option<u32>,
        checkpoint: Option<Millis>,
        position: u64,
    },
    /// The restart abandoned the record's delivery in flight: its write
    /// stays, or (`aborted`) aborts with the exactly-once transaction.
    DeliveryAbandoned {
        record: Record,
        aborted: bool,
    },
    /// The restart cancelled the record's retry, due at `due`.
    RetryCancelled {
        record: Record,
        due: Millis,
    },
    /// The record lies below its partition's resume position and was
    /// never done: skipped.
    RecordSkipped {
        record: Record,
    },
    /// The restarted partition processes again from `position`.
    Resumed {
        partition: u32,
        position: u64,
    },
    /// A saga's compensation call to sink `sink` (index into the
    /// scenario's sinks): what the caller heard, and whether it applied
    /// (a tracked compensation applies once however often sent).
    CompensationSent {
        sink: u32,
        reply: super::write::Reply,
        applied: bool,
    },
    /// A compensation's `calls` all failed: given up, the write stays
    /// visible in that sink.
    CompensationGivenUp {
        sink: u32,
        calls: u32,
    },
    /// Sink `sink` applies writes by `kind` from now on (`becomes`,
    /// section 28.8).
    SinkChanged {
        sink: u32,
        kind: crate::model::SinkKind,
    },
    /// The outbox row of this message's mixed write was dead-lettered for
    /// sink `sink` under `outbox_dead_letter = "compensate"`: the write
    /// failed, and the relay compensates its saga sinks (section 28.1).
    WriteFailedLate {
        sink: u32,
    },
    /// A versioned sink took the write of `message` (this transition's)
    /// of version `written` over its row's newer `held` (section 28.9);
    /// the row is the message's under `key`
    /// ([`crate::model::Scenario::row_name`]).
    StaleOverwrite {
        sink: u32,
        message: MessageIndex,
        key: KeyRef,
        written: u64,
        held: u64,
    },
    /// The two-phase coordinator that crashed after this write's prepares
    /// (at `prepared_at`) recovered and decided: commit when its decision
    /// was logged, abort otherwise (section 28.15).
    CoordinatorRecovered {
        prepared_at: Millis,
        committed: bool,
    },
    /// An outbox row's `calls` to sink `sink` were all used up: the row is
    /// dead-lettered for that sink.
    OutboxDeadLettered {
        sink: u32,
        calls: u32,
    },
    /// A message in quarantine since `entered` is copied to the archive
    /// (`archive_after`); it stays in quarantine.
    Archived {
        entered: Millis,
    },
    /// A replay reached its end (section 28.10): the partition jumps from
    /// offset `from` to `to`, where it was before the restart.
    ReplayEnded {
        partition: u32,
        from: u64,
        to: u64,
    },
    /// The deduplication store restarted (section 28.5) with `live`
    /// entries, lost when it has no persistence (`lost`).
    StoreRestarted {
        live: u64,
        lost: bool,
    },
    /// Checkpoint `number` committed the positions (section 28.13): with
    /// one partition its `position`, else how many `partitions` the log has
    /// and partition 0's position.
    CheckpointCompleted {
        number: u64,
        partitions: u32,
        position: u64,
    },
    /// The producer appended the message again, its last append's
    /// acknowledgement lost (section 28.6): the duplicate `record`, or none
    /// when the broker recognised the retry (idempotence).
    AppendRetried {
        record: Option<Record>,
    },
    /// Checkpoint `number` failed or was aborted (section 28.7): nothing
    /// committed.
    CheckpointFailed {
        number: u64,
        status: crate::model::CheckpointStatus,
    },
}

impl Detail {
    /// The log partition a transition concerns, if it names one (a
    /// restart of every partition names none).
    pub fn partition(&self) -> Option<u32> {
        match *self {
            Detail::Delivered { record, .. }
            | Detail::Redriven { record, .. }
            | Detail::AppendRetried { record } => record.map(|r| r.partition),
            Detail::DeliveryAbandoned { record, .. }
            | Detail::RetryCancelled { record, .. }
            | Detail::RecordSkipped { record } => Some(record.partition),
            Detail::Resumed { partition, .. } | Detail::ReplayEnded { partition, .. } => {
                Some(partition)
            }
            Detail::Restarted { partition, .. } => partition,
            _ => None,
        }
    }

    /// The sink a transition concerns, if it names one (a write's
    /// compensations and outbox dead letters).
    pub fn sink(&self) -> Option<u32> {
        match *self {
            Detail::CompensationSent { sink, .. }
            | Detail::CompensationGivenUp { sink, .. }
            | Detail::OutboxDeadLettered { sink, .. }
            | Detail::SinkChanged { sink, .. }
            | Detail::StaleOverwrite { sink, .. }
            | Detail::WriteFailedLate { sink } => Some(sink),
            _ => None,
        }
    }

    pub fn kind(&self) -> EventKind {
        match self {
            Detail::Delivered { .. } => EventKind::Delivered,
            Detail::Failed { .. } => EventKind::Failed,
            Detail::Committed { .. } => EventKind::Committed,
            Detail::DedupHit { .. } => EventKind::DedupHit,
            Detail::AckLost => EventKind::AckLost,
            Detail::Acked => EventKind::Acked,
            Detail::RetryScheduled { .. } => EventKind::RetryScheduled,
            Detail::Quarantined { .. } => EventKind::Quarantined,
            Detail::Inspected { .. } => EventKind::Inspected,
            Detail::Expired { .. } => EventKind::Expired,
            Detail::Repaired => EventKind::Repaired,
            Detail::Redriven { .. } => EventKind::Redriven,
            Detail::AlarmFired { .. } => EventKind::AlarmFired,
            Detail::AlarmCleared { .. } => EventKind::AlarmCleared,
            Detail::RedriveSkipped { .. } => EventKind::RedriveSkipped,
            Detail::Purged => EventKind::Purged,
            Detail::Crashed { .. } => EventKind::Crashed,
            Detail::ReceiptExpired { .. } => EventKind::ReceiptExpired,
            Detail::VisibleAgain { .. } => EventKind::VisibleAgain,
            Detail::Contention { .. } => EventKind::Contention,
            Detail::Claimed { .. } => EventKind::Claimed,
            Detail::DoneRecorded { .. } => EventKind::DoneRecorded,
            Detail::Dropped { .. } => EventKind::Dropped,
            Detail::CanaryPassed { .. } => EventKind::CanaryPassed,
            Detail::CanaryFailed { .. } => EventKind::CanaryFailed,
            Detail::Restarted { .. } => EventKind::Restarted,
            Detail::DeliveryAbandoned { .. } => EventKind::DeliveryAbandoned,
            Detail::RetryCancelled { .. } => EventKind::RetryCancelled,
            Detail::RecordSkipped { .. } => EventKind::RecordSkipped,
            Detail::Resumed { .. } => EventKind::Resumed,
            Detail::CompensationSent { .. } => EventKind::CompensationSent,
            Detail::CompensationGivenUp { .. } => EventKind::CompensationGivenUp,
            Detail::OutboxDeadLettered { .. } => EventKind::OutboxDeadLettered,
            Detail::Archived { .. } => EventKind::Archived,
            Detail::StoreRestarted { .. } => EventKind::StoreRestarted,
            Detail::ReplayEnded { .. } => EventKind::ReplayEnded,
            Detail::CheckpointCompleted { .. } => EventKind::CheckpointCompleted,
            Detail::CheckpointFailed { .. } => EventKind::CheckpointFailed,
            Detail::AppendRetried { .. } => EventKind::AppendRetried,
            Detail::CoordinatorRecovered { .. } => EventKind::CoordinatorRecovered,
            Detail::SinkChanged { .. } => EventKind::SinkChanged,
            Detail::StaleOverwrite { .. } => EventKind::StaleOverwrite,
            Detail::WriteFailedLate { .. } => EventKind::WriteFailedLate,
        }
    }
}

/// A claim that expired without DONE: who made it, when, whether its
/// consumer crashed, and when its lease expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lapsed {
    pub holder: MessageIndex,
    pub claimed_at: Millis,
    pub crashed: bool,
    pub expired_at: Millis,
}

/// One committed effect in the ledger. Never rolled back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect {
    pub time: Millis,
    pub message: MessageIndex,
    pub key: KeyRef,
    pub intent: IntentIndex,
    pub cycle: u32,
}
