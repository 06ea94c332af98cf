//! What a dataflow run produces: each attempt's records (nodes,
//! partitions, markers), the happenings kept for the transcript, the
//! final states, why a run stopped, and what an explanation's second run
//! watches for.

use super::model::{ChannelIndex, Dataflow, MAX_RECORDED_VALUES, NodeIndex};
use crate::model::Millis;

/// The happenings a run keeps for its transcript and diagram; past this
/// many the rest are counted, not kept.
pub const MAX_LOG: usize = 10_000;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Complete,
    Aborted,
    /// The run ended with the attempt neither complete nor aborted (no
    /// timeout).
    Incomplete,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Complete => "complete",
            AttemptOutcome::Aborted => "aborted",
            AttemptOutcome::Incomplete => "incomplete",
        }
    }
}

/// A node's part in one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NodeStatus {
    #[default]
    NotRecorded,
    /// Recorded, some marker it waits for not yet arrived.
    Waiting,
    Complete,
    /// Recorded, not complete at the timeout: its recording was discarded.
    Aborted,
    /// `participates = false`: it never records (section 28.14).
    NotParticipating,
}

impl NodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::NotRecorded => "not_recorded",
            NodeStatus::Waiting => "waiting",
            NodeStatus::Complete => "complete",
            NodeStatus::Aborted => "aborted",
            NodeStatus::NotParticipating => "not_participating",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct NodeRecord {
    pub status: NodeStatus,
    /// The state recorded, while it is kept (not for a discarded node).
    pub recorded_state: Option<i64>,
    /// When it recorded (kept after a discard, for explanations).
    pub recorded_at: Option<Millis>,
    /// The state it recorded before the abort discarded it.
    pub discarded_state: Option<i64>,
    /// Values it recorded on its incoming partitions in this attempt.
    pub buffered: u64,
    /// Waited-for partitions whose marker has not arrived.
    pub(super) waiting_for: u64,
}

/// Whether a channel partition is being recorded in an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recording {
    /// Its receiver has not recorded.
    #[default]
    Not,
    /// Recording: data arriving now is in flight across the cut.
    On,
    /// Its marker arrived, or the attempt ended.
    Stopped,
    /// The receiver aborted: the recording was discarded.
    Discarded,
}

/// What became of an attempt's marker on one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MarkerFate {
    /// Its sender never recorded (or sends markers on partition 0 only).
    #[default]
    NotSent,
    /// Dropped by the channel's `lose_markers`.
    Lost {
        at: Millis,
    },
    /// Sent, not yet arrived (`departs` later than `sent_at` when a down
    /// window held it).
    InFlight {
        sent_at: Millis,
        departs: Millis,
        arrives: Millis,
    },
    Arrived {
        at: Millis,
    },
    /// Arrived at a node that does not participate, which dropped it.
    Dropped {
        at: Millis,
    },
    /// Arrived after the attempt had ended: ignored (`held`: the end of
    /// the down window that held it).
    Late {
        at: Millis,
        held: Option<Millis>,
    },
}

#[derive(Debug, Clone, Default)]
pub struct PartitionRecord {
    pub recording: Recording,
    /// Values recorded, in arrival order (emptied by a discard).
    pub values: Vec<i64>,
    pub marker: MarkerFate,
}

/// One snapshot attempt as the run left it.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub outcome: AttemptOutcome,
    pub completed_at: Option<Millis>,
    pub aborted_at: Option<Millis>,
    /// Per node, in file order.
    pub nodes: Vec<NodeRecord>,
    /// Per channel partition (see [`Outcome::partition`]).
    pub partitions: Vec<PartitionRecord>,
    /// The most values one node held recorded at once (discarded ones
    /// included).
    pub max_recorded: u64,
    /// For a complete attempt of a file of transfers only: whether the
    /// recorded states and channels add up to the system's total.
    pub consistent: Option<bool>,
    /// Recorded node states plus recorded channel values.
    pub recorded_total: i128,
    /// With `participants`: the listed nodes that never recorded, in the
    /// registry's order.
    pub missing_participants: Vec<NodeIndex>,
    pub(super) started: bool,
    /// Whether it has ended: complete, or aborted with no node left
    /// waiting (recordings stop; later markers are ignored).
    pub(super) ended: bool,
    /// Nodes waited for and not complete yet: the attempt completes when
    /// none is left.
    pub(super) incomplete: usize,
}

impl Attempt {
    pub(super) fn final_(&self) -> bool {
        self.ended
    }

    pub fn status(&self, node: NodeIndex) -> NodeStatus {
        self.nodes[node as usize].status
    }
}

/// What happened, as the transcript and the diagram show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happened {
    Sent {
        send: u32,
        partition: u32,
        arrives: Millis,
        held: bool,
        /// Delayed by the channel's `late_data`.
        late: bool,
    },
    /// Lost by the channel's `lose_data`: it never arrives.
    DataLost {
        send: u32,
        partition: u32,
    },
    Received {
        send: u32,
        partition: u32,
        /// Recorded as in flight by some attempt.
        recorded: bool,
    },
    Started {
        attempt: u32,
    },
    Recorded {
        attempt: u32,
        node: NodeIndex,
        state: i64,
    },
    MarkerSent {
        attempt: u32,
        partition: u32,
        arrives: Millis,
        held: bool,
    },
    MarkerLost {
        attempt: u32,
        partition: u32,
    },
    MarkerReceived {
        attempt: u32,
        partition: u32,
    },
    MarkerIgnored {
        attempt: u32,
        partition: u32,
    },
    /// A node that does not participate dropped the marker.
    MarkerDropped {
        attempt: u32,
        partition: u32,
    },
    /// With `timeout_from = "first_marker"`: the node was not complete at
    /// its own deadline and discarded its recording.
    NodeAborted {
        attempt: u32,
        node: NodeIndex,
    },
    NodeComplete {
        attempt: u32,
        node: NodeIndex,
    },
    Completed {
        attempt: u32,
    },
    Aborted {
        attempt: u32,
        discarded: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub at: Millis,
    pub what: Happened,
}

/// What a run produces.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The time of the last event.
    pub end: Millis,
    pub events: u64,
    /// Each node's state at the end.
    pub states: Vec<i64>,
    pub attempts: Vec<Attempt>,
    /// The first partition index of each channel: channel c's partition p
    /// is `partition_base[c] + p`.
    pub partition_base: Vec<u32>,
    /// The first [`MAX_LOG`] happenings.
    pub log: Vec<Entry>,
    /// Happenings past [`MAX_LOG`], counted.
    pub log_dropped: u64,
    pub watched: Watched,
    /// Per channel: the data messages it lost (`lose_data`) and delivered
    /// late (`late_data`).
    pub lost: Vec<u64>,
    pub late: Vec<u64>,
}

impl Outcome {
    pub fn partition(&self, c: ChannelIndex, p: u32) -> usize {
        (self.partition_base[c as usize] + p) as usize
    }

    /// The channel and partition of a partition index.
    pub fn channel_of(&self, index: u32) -> (ChannelIndex, u32) {
        channel_of(&self.partition_base, index)
    }

    /// The values a partition recorded in an attempt, when its receiver
    /// recorded and kept its recording and its sender participates.
    pub fn recorded(
        &self,
        flow: &Dataflow,
        attempt: u32,
        c: ChannelIndex,
        p: u32,
    ) -> Option<&[i64]> {
        let a = &self.attempts[attempt as usize];
        let ch = &flow.channels[c as usize];
        // A non-participant's channel is an outside input: never recorded.
        if !flow.participates(ch.from) {
            return None;
        }
        let to = ch.to;
        match a.status(to) {
            NodeStatus::Waiting | NodeStatus::Complete => {
                Some(&a.partitions[self.partition(c, p)].values)
            }
            NodeStatus::NotRecorded | NodeStatus::Aborted | NodeStatus::NotParticipating => None,
        }
    }
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    MaxEvents { limit: u64, at: Millis },
    MaxTime { limit: Millis },
    Recorded { at: Millis, attempt: u32 },
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::MaxEvents { limit, at } => write!(
                f,
                "the run reached max_events ({limit}) at {}",
                crate::duration::format(*at)
            ),
            Stop::MaxTime { limit } => write!(
                f,
                "the run reached max_time ({})",
                crate::duration::format(*limit)
            ),
            Stop::Recorded { at, attempt } => write!(
                f,
                "at {} snapshot {} would hold more than {MAX_RECORDED_VALUES} recorded values, the recording budget",
                crate::duration::format(*at),
                attempt + 1
            ),
        }
    }
}

/// What an explanation asks the run to watch (a second run of the same
/// file, so the first keeps nothing it does not need).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watch {
    /// Classify every transfer against this attempt's cut.
    pub cut: Option<u32>,
    /// Keep the arrivals on this partition index around this attempt's
    /// recording window.
    pub arrivals: Option<(u32, u32)>,
}

/// A transfer the cut does not balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defect {
    pub send: u32,
    /// Counted twice (credited in the cut, not debited) or missed
    /// (debited, not credited).
    pub twice: bool,
    pub arrived: Millis,
    /// Recorded as the channel's state (else: in the receiver's state, or
    /// nowhere).
    pub in_channel: bool,
}

/// An arrival on a watched partition, and where it fell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub at: Millis,
    pub send: u32,
    pub value: i64,
    pub recorded: bool,
}

/// What a [`Watch`] collected.
#[derive(Debug, Clone, Default)]
pub struct Watched {
    /// The first defects, in arrival order.
    pub defects: Vec<Defect>,
    pub defects_total: u64,
    /// The first arrivals on the watched partition.
    pub arrivals: Vec<Arrival>,
    pub arrivals_total: u64,
}

/// The channel and partition of a partition index, given each channel's
/// first partition index.
pub(super) fn channel_of(base: &[u32], index: u32) -> (ChannelIndex, u32) {
    let c = base.partition_point(|&b| b <= index) - 1;
    (c as u32, index - base[c])
}
