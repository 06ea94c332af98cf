//! What a write to several sinks notes for the explanations: the first
//! writes worth a look.

use crate::model::{Class, KeyRef, MessageIndex, Millis, ReasonIndex};

/// The most notes a run keeps: the first writes worth a look, which the
/// explanations and reports name.
pub const WRITE_NOTES_KEPT: usize = 200;

/// Something worth a look in one write, for the explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteNote {
    /// A call (a two-phase prepare, a saga step, a direct call) failed.
    Failed {
        at: Millis,
        message: MessageIndex,
        sink: u32,
        reason: ReasonIndex,
        class: Class,
    },
    /// A call was applied and its reply lost.
    ReplyLost {
        at: Millis,
        message: MessageIndex,
        sink: u32,
    },
    /// A compensation whose reply was lost was retried and applied again.
    OverCompensated {
        message: MessageIndex,
        sink: u32,
        lost_at: Millis,
        retried_at: Millis,
    },
    /// Every compensation call failed: the write stays visible there.
    CompensationExhausted {
        at: Millis,
        message: MessageIndex,
        sink: u32,
    },
    /// An irreversible send of a write that then failed at `failed_sink`.
    FalseNotice {
        at: Millis,
        message: MessageIndex,
        sink: u32,
        failed_sink: u32,
    },
    /// An outbox row's calls to a sink were all used up.
    DeadLettered {
        message: MessageIndex,
        sink: u32,
        first_at: Millis,
        last_at: Millis,
        attempts: u32,
    },
    /// A two-phase write waited for its key's lock.
    Waited {
        message: MessageIndex,
        key: KeyRef,
        from: Millis,
        until: Millis,
        holder: MessageIndex,
        /// When the holder's coordinator crashed (its prepare), if it did.
        holder_crashed_at: Option<Millis>,
    },
    /// The coordinator crashed after every sink prepared this write.
    Crashed {
        message: MessageIndex,
        prepared_at: Millis,
        /// When it recovered and decided; `None`: it never did.
        decided_at: Option<Millis>,
        /// Whether it found its decision logged and committed (else it
        /// aborted: `crash_at = "before_log"`).
        committed: bool,
    },
}
