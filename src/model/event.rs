//! What can happen to a message (event kinds) and where it is in its life
//! (states).

use serde::{Deserialize, Serialize};
macro_rules! define_event_kinds {
    ($($variant:ident $name:literal $about:ident $part:ident $doc:literal;)*) => {
        /// What kind of transition happened; also what `[[expect.event]]` names.
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            PartialOrd,
            Ord,
            Hash,
            Serialize,
            Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(rename_all = "snake_case")]
        pub enum EventKind {
            $($variant,)*
        }

        impl EventKind {
            /// Every kind, in the order the model lists them.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$variant,)*];

            /// The name in the file, the JSON report and the templates.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(EventKind::$variant => $name,)*
                }
            }

            /// What happened, in a few words.
            pub fn doc(self) -> &'static str {
                match self {
                    $(EventKind::$variant => $doc,)*
                }
            }

            /// Who a transition of this kind is about: a message, or (for
            /// the transcript's actor column) an alarm, the log, the
            /// deduplication store or the operator.
            pub fn about(self) -> About {
                match self {
                    $(EventKind::$variant => About::$about,)*
                }
            }

            /// The part of the model whose transitions these are.
            pub fn part(self) -> KindPart {
                match self {
                    $(EventKind::$variant => KindPart::$part,)*
                }
            }
        }
    };
}

/// Who a transition is about (see [`EventKind::about`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum About {
    Message,
    Alarm,
    Log,
    Store,
    Operator,
    Sink,
}

impl About {
    /// The transcript's word for who a transition without a message is
    /// about.
    pub fn actor(self) -> &'static str {
        match self {
            About::Alarm => "alarm",
            About::Log => "log",
            About::Store => "store",
            About::Sink => "sink",
            About::Message | About::Operator => "operator",
        }
    }
}

/// Which part of the model a kind belongs to: an `[[expect.event]]` on a
/// log's or a write's kind needs that part in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindPart {
    Queue,
    Log,
    Write,
}

// The event kinds, defined once: variant, name, who it is about, the part
// of the model it belongs to, meaning.
define_event_kinds! {
    Delivered "delivered" Message Queue "a delivery (one receive) began";
    Failed "failed" Message Queue "the handler failed, nothing committed";
    Committed "committed" Message Queue "the effect committed (ledger + 1)";
    DedupHit "dedup_hit" Message Queue "the store held a live result: no effect";
    AckLost "ack_lost" Message Queue "the acknowledgement was lost";
    Acked "acked" Message Queue "the message was acknowledged (final)";
    RetryScheduled "retry_scheduled" Message Queue "the next delivery was scheduled";
    Quarantined "quarantined" Message Queue "the message entered quarantine";
    Inspected "inspected" Operator Queue "the operator inspected quarantine";
    Expired "expired" Message Queue "a quarantined message outlived the retention";
    Repaired "repaired" Operator Queue "the operator repaired the handler";
    Redriven "redriven" Message Queue "the operator redrove the message: a new cycle";
    RedriveSkipped "redrive_skipped" Message Queue "an `only` id was not in quarantine";
    Purged "purged" Message Queue "the operator purged the message";
    Crashed "crashed" Message Queue "the consumer crashed during the delivery: no ack";
    ReceiptExpired "receipt_expired" Message Queue "a superseded delivery ended: its outcome never reached the broker";
    VisibleAgain "visible_again" Message Queue "the visibility timeout passed: the message can be delivered again";
    Contention "contention" Message Queue "a live INTENT claim on the key: the delivery failed";
    Claimed "claimed" Message Queue "the delivery claimed the key (INTENT, with a lease)";
    DoneRecorded "done_recorded" Message Queue "DONE replaced the key's INTENT";
    Dropped "dropped" Message Queue "the message exhausted its budget with quarantine disabled (final)";
    CanaryPassed "canary_passed" Operator Queue "every canary was acked: the rest are redriven";
    CanaryFailed "canary_failed" Operator Queue "a canary was not acked: the rest stay in quarantine";
    AlarmFired "alarm_fired" Alarm Queue "an alarm's metric reached its threshold";
    AlarmCleared "alarm_cleared" Alarm Queue "an alarm's metric fell below its threshold";
    Restarted "restarted" Log Log "a log's consumer restarted: its partitions resume from a position";
    DeliveryAbandoned "delivery_abandoned" Message Log "a restart abandoned the record's delivery in flight";
    RetryCancelled "retry_cancelled" Message Log "a restart cancelled the record's pending retry";
    RecordSkipped "record_skipped" Message Log "the record lies below the resume position, never done: skipped";
    Resumed "resumed" Log Log "a restarted partition processes again from its resume position";
    CompensationSent "compensation_sent" Message Write "a saga sent a compensation call to a sink, and heard its reply";
    CompensationGivenUp "compensation_given_up" Message Write "a compensation's calls all failed: the write stays visible in that sink";
    OutboxDeadLettered "outbox_dead_lettered" Message Write "an outbox row's relay calls to a sink were all used up";
    Archived "archived" Message Queue "a quarantined message was copied to the archive (it stays in quarantine)";
    StoreRestarted "store_restarted" Store Queue "the deduplication store restarted (without persistence its entries are lost)";
    ReplayEnded "replay_ended" Log Log "a replay reached its replay_until: the partition goes on where it was before the restart";
    CheckpointCompleted "checkpoint_completed" Log Log "a log checkpoint committed every partition's position (written with checkpoint_events or [[checkpoint_failure]])";
    CheckpointFailed "checkpoint_failed" Log Log "a log checkpoint failed or was aborted: nothing committed";
    AppendRetried "append_retried" Message Log "the producer appended the message again, its acknowledgement lost: a duplicate record, or deduplicated by the broker";
    SinkChanged "sink_changed" Sink Write "a sink began to apply writes by another kind (becomes): an upsert downgraded to an append, or the reverse";
    WriteFailedLate "write_failed_late" Message Write "an outbox row was dead-lettered for a sink under outbox_dead_letter = \"compensate\": the write failed, and the relay compensates its saga sinks";
    StaleOverwrite "stale_overwrite" Message Write "a versioned sink took a write older than its row's version (stale_writes = \"overwrite\"): the row now holds stale data";
    CoordinatorRecovered "coordinator_recovered" Message Write "a two-phase coordinator that crashed after the prepares recovered and decided: commit (its decision logged) or abort (none logged)";
}

impl EventKind {
    /// The kinds of a write to several sinks.
    pub fn is_write_kind(self) -> bool {
        self.part() == KindPart::Write
    }

    /// A partitioned log's own kinds (section 28.13).
    pub fn is_log_kind(self) -> bool {
        self.part() == KindPart::Log
    }

    /// Whether a transition of this kind names a log partition (in a log
    /// run): an `[[expect.event]]` may then say which.
    pub fn names_partition(self) -> bool {
        matches!(
            self,
            EventKind::Delivered
                | EventKind::Redriven
                | EventKind::Restarted
                | EventKind::DeliveryAbandoned
                | EventKind::RetryCancelled
                | EventKind::RecordSkipped
                | EventKind::Resumed
                | EventKind::ReplayEnded
                | EventKind::AppendRetried
        )
    }

    /// Whether a transition of this kind concerns one message.
    pub fn has_message(self) -> bool {
        self.about() == About::Message
    }
}

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not ready yet: not arrived, or its retry is due later.
    Waiting,
    /// Arrived (or due, or redriven) and not yet taken by a worker.
    Ready,
    /// A worker is delivering it (with a service time).
    InFlight,
    Acked,
    Quarantined,
    Expired,
    Purged,
    /// Quarantine disabled: the message exhausted its budget (final).
    Dropped,
    /// Its log record lies below a restart's resume position and was
    /// never done: never processed, not pending (docs/model.md section
    /// 23). Pending again only when a later restart resumes below it.
    Skipped,
}

impl State {
    /// Every state, in declaration order (`State as usize` indexes it).
    pub const ALL: [State; 9] = [
        State::Waiting,
        State::Ready,
        State::InFlight,
        State::Acked,
        State::Quarantined,
        State::Expired,
        State::Purged,
        State::Dropped,
        State::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Ready => "ready",
            State::InFlight => "in_flight",
            State::Acked => "acked",
            State::Quarantined => "quarantined",
            State::Expired => "expired",
            State::Purged => "purged",
            State::Dropped => "dropped",
            State::Skipped => "skipped",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_kind_has_one_name_everywhere() {
        for k in EventKind::ALL {
            let serde_name = serde_json::to_value(k).unwrap();
            assert_eq!(serde_name, k.as_str(), "{k:?}");
            let back: EventKind = serde_json::from_value(serde_name).unwrap();
            assert_eq!(back, *k);
        }
    }

    #[test]
    fn states_are_indexed_by_position() {
        for (i, s) in State::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }
}
