//! What can happen to a message (event kinds) and where it is in its life
//! (states).

use serde::{Deserialize, Serialize};
macro_rules! define_event_kinds {
    ($($variant:ident $name:literal $doc:literal;)*) => {
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
        }
    };
}

// The event kinds, defined once: variant, name, meaning.
define_event_kinds! {
    Delivered "delivered" "a delivery (one receive) began";
    Failed "failed" "the handler failed, nothing committed";
    Committed "committed" "the effect committed (ledger + 1)";
    DedupHit "dedup_hit" "the store held a live result: no effect";
    AckLost "ack_lost" "the acknowledgement was lost";
    Acked "acked" "the message was acknowledged (final)";
    RetryScheduled "retry_scheduled" "the next delivery was scheduled";
    Quarantined "quarantined" "the message entered quarantine";
    Inspected "inspected" "the operator inspected quarantine";
    Expired "expired" "a quarantined message outlived the retention";
    Repaired "repaired" "the operator repaired the handler";
    Redriven "redriven" "the operator redrove the message: a new cycle";
    RedriveSkipped "redrive_skipped" "an `only` id was not in quarantine";
    Purged "purged" "the operator purged the message";
    Crashed "crashed" "the consumer crashed during the delivery: no ack";
    ReceiptExpired "receipt_expired" "a superseded delivery ended: its outcome never reached the broker";
    VisibleAgain "visible_again" "the visibility timeout passed: the message can be delivered again";
    Contention "contention" "a live INTENT claim on the key: the delivery failed";
    Claimed "claimed" "the delivery claimed the key (INTENT, with a lease)";
    DoneRecorded "done_recorded" "DONE replaced the key's INTENT";
    Dropped "dropped" "the message exhausted its budget with quarantine disabled (final)";
    CanaryPassed "canary_passed" "every canary was acked: the rest are redriven";
    CanaryFailed "canary_failed" "a canary was not acked: the rest stay in quarantine";
    AlarmFired "alarm_fired" "an alarm's metric reached its threshold";
    AlarmCleared "alarm_cleared" "an alarm's metric fell below its threshold";
    Restarted "restarted" "a log's consumer restarted: its partitions resume from a position";
    DeliveryAbandoned "delivery_abandoned" "a restart abandoned the record's delivery in flight";
    RetryCancelled "retry_cancelled" "a restart cancelled the record's pending retry";
    RecordSkipped "record_skipped" "the record lies below the resume position, never done: skipped";
    Resumed "resumed" "a restarted partition processes again from its resume position";
    CompensationSent "compensation_sent" "a saga sent a compensation call to a sink, and heard its reply";
    CompensationGivenUp "compensation_given_up" "a compensation's calls all failed: the write stays visible in that sink";
    OutboxDeadLettered "outbox_dead_lettered" "an outbox row's relay calls to a sink were all used up";
    Archived "archived" "a quarantined message was copied to the archive (it stays in quarantine)";
    StoreRestarted "store_restarted" "the deduplication store restarted (without persistence its entries are lost)";
    ReplayEnded "replay_ended" "a replay reached its replay_until: the partition goes on where it was before the restart";
    CheckpointCompleted "checkpoint_completed" "a log checkpoint committed every partition's position (written with checkpoint_events or [[checkpoint_failure]])";
    CheckpointFailed "checkpoint_failed" "a log checkpoint failed or was aborted: nothing committed";
    AppendRetried "append_retried" "the producer appended the message again, its acknowledgement lost: a duplicate record, or deduplicated by the broker";
}

impl EventKind {
    /// The kinds of a write to several sinks.
    pub fn is_write_kind(self) -> bool {
        matches!(
            self,
            EventKind::CompensationSent
                | EventKind::CompensationGivenUp
                | EventKind::OutboxDeadLettered
        )
    }

    /// A partitioned log's own kinds (section 28.13).
    pub fn is_log_kind(self) -> bool {
        matches!(
            self,
            EventKind::Restarted
                | EventKind::DeliveryAbandoned
                | EventKind::RetryCancelled
                | EventKind::RecordSkipped
                | EventKind::Resumed
                | EventKind::ReplayEnded
                | EventKind::CheckpointCompleted
                | EventKind::CheckpointFailed
                | EventKind::AppendRetried
        )
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
        !matches!(
            self,
            EventKind::Inspected
                | EventKind::Repaired
                | EventKind::CanaryPassed
                | EventKind::CanaryFailed
                | EventKind::AlarmFired
                | EventKind::AlarmCleared
                | EventKind::Restarted
                | EventKind::Resumed
                | EventKind::StoreRestarted
                | EventKind::ReplayEnded
                | EventKind::CheckpointCompleted
                | EventKind::CheckpointFailed
        )
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
