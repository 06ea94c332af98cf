//! A validated dataflow scenario (model section 25): nodes, FIFO channels
//! of one or more partitions, scheduled sends, snapshot attempts, and what
//! the file expects of them.

use crate::model::{Check, Millis};

/// The most nodes a dataflow file may declare.
pub const MAX_NODES: usize = 10_000;
/// The most channels a dataflow file may declare.
pub const MAX_CHANNELS: usize = 10_000;
/// The most partitions one channel may have.
pub const MAX_PARTITIONS: u32 = 1_000;
/// The most partitions all channels together may have.
pub const MAX_TOTAL_PARTITIONS: u64 = 100_000;
/// The most snapshot attempts a file may declare.
pub const MAX_SNAPSHOTS: usize = 100;
/// Every attempt keeps a record per channel partition (its recording and
/// the fate of its marker): attempts times partitions is at most this.
pub const MAX_ATTEMPT_PARTITIONS: u64 = 1_000_000;
/// The most values the recordings of a run may hold at once (8 bytes
/// each, so 32 MB): a run that would buffer more stops, naming this
/// budget. A lost marker without a timeout makes a recording grow until
/// the run ends, which is the unbounded buffer this budget keeps bounded.
pub const MAX_RECORDED_VALUES: u64 = 4_000_000;

/// Index of a node, in file order.
pub type NodeIndex = u32;
/// Index of a channel, in file order.
pub type ChannelIndex = u32;

#[derive(Debug, Clone)]
pub struct Dataflow {
    pub name: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub seed: u64,
    pub nodes: Vec<Node>,
    pub channels: Vec<Channel>,
    /// In file order.
    pub sends: Vec<Send>,
    /// In file order, which is time order.
    pub snapshots: Vec<Snapshot>,
    pub limits: Limits,
    pub expectations: Vec<Expectation>,
    /// `[[question]]`s, in file order.
    pub questions: Vec<Question>,
}

/// A question a report asks, answered from the run (as of `at`, or at
/// the end).
pub type Question = crate::model::Question<Target>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_events: u64,
    pub max_time: Millis,
}

impl crate::sim::Limits for Limits {
    fn max_time(&self) -> Millis {
        self.max_time
    }
    fn max_events(&self) -> u64 {
        self.max_events
    }
}

impl Default for Limits {
    fn default() -> Limits {
        let queue = crate::model::Limits::default();
        Limits {
            max_events: queue.max_events,
            max_time: queue.max_time,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// The state before the run.
    pub state: i64,
    /// `participates = false`: never records, sends no marker, drops
    /// every marker (section 28.14).
    pub participates: bool,
}

#[derive(Debug, Clone)]
pub struct Channel {
    pub from: NodeIndex,
    pub to: NodeIndex,
    pub latency: Millis,
    pub partitions: u32,
    /// `lose_markers = { first = N }`: the channel's first N markers (every
    /// partition and attempt together, in send order) are dropped.
    pub lose_markers: u64,
    /// `down = { from, duration }`: what is sent in [from, until) leaves at
    /// `until`, in send order.
    pub down: Option<Window>,
    /// `lose_data = { first = N }`: the channel's first N data messages
    /// (every partition, in send order) never arrive.
    pub lose_data: u64,
    /// `late_data = { first = N, by = D }`: the channel's first N data
    /// messages arrive D later than their latency says.
    pub late_data: Option<(u64, Millis)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: Millis,
    pub until: Millis,
}

impl Window {
    pub fn holds(self, t: Millis) -> bool {
        self.from <= t && t < self.until
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendKind {
    /// The receiver's state grows by the value; the sender is unchanged.
    Add,
    /// The value leaves the sender at the send and reaches the receiver at
    /// receipt: the total over nodes and channels is conserved.
    Transfer,
}

impl SendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SendKind::Add => "add",
            SendKind::Transfer => "transfer",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Send {
    pub at: Millis,
    pub channel: ChannelIndex,
    pub partition: u32,
    pub value: i64,
    pub kind: SendKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Markers {
    /// A marker on every partition of every outgoing channel, waited for
    /// on every incoming partition.
    EveryPartition,
    /// One marker per channel, on partition 0, waited for there only: the
    /// mistake of one marker per multi-partition topic.
    FirstPartition,
}

impl Markers {
    pub fn as_str(self) -> &'static str {
        match self {
            Markers::EveryPartition => "every_partition",
            Markers::FirstPartition => "first_partition",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub at: Millis,
    /// Distinct, in file order.
    pub initiators: Vec<NodeIndex>,
    pub timeout: Option<Millis>,
    pub markers: Markers,
    /// `participants`: the registry, distinct, every initiator among
    /// them; `None`: the participating nodes.
    pub participants: Option<Vec<NodeIndex>>,
    pub timeout_from: TimeoutFrom,
}

/// Where a snapshot's timeout counts from (section 28.14).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TimeoutFrom {
    /// One deadline for the attempt, from its start (section 25).
    #[default]
    Attempt,
    /// Each node's own, from when it recorded.
    FirstMarker,
}

impl Dataflow {
    /// "A->B".
    pub fn channel_name(&self, c: ChannelIndex) -> String {
        let ch = &self.channels[c as usize];
        format!(
            "{}->{}",
            self.nodes[ch.from as usize].name, self.nodes[ch.to as usize].name
        )
    }

    /// "A->B", or "A->B.p2" for partition 2.
    pub fn partition_name(&self, c: ChannelIndex, p: u32) -> String {
        if p == 0 {
            self.channel_name(c)
        } else {
            format!("{}.p{p}", self.channel_name(c))
        }
    }

    /// Whether every send moves value (so that a complete snapshot can be
    /// checked against the conserved total).
    pub fn transfers_only(&self) -> bool {
        self.sends.iter().all(|s| s.kind == SendKind::Transfer)
    }

    /// The system's total: the sum of the nodes' initial states, which
    /// transfers conserve.
    pub fn total(&self) -> i128 {
        self.nodes.iter().map(|n| n.state as i128).sum()
    }

    /// Whether node `n` takes part in snapshots.
    pub fn participates(&self, n: NodeIndex) -> bool {
        self.nodes[n as usize].participates
    }

    /// Channels into `node`, in file order.
    pub fn incoming(&self, node: NodeIndex) -> impl Iterator<Item = ChannelIndex> + '_ {
        (0..self.channels.len() as u32).filter(move |&c| self.channels[c as usize].to == node)
    }
}

/// One expectation with the span of its value in the file.
pub type Expectation = crate::model::Expectation<Target>;

/// What an expectation reads. Attempts are 0-based here (1-based in the
/// file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Outcome(u32),
    CompletedAt(u32),
    Consistent(u32),
    MaxRecorded(u32),
    RecordedState(u32, NodeIndex),
    Status(u32, NodeIndex),
    Recorded(u32, ChannelIndex, u32),
    /// `[expect.node.NAME] state`: the node's state at the end.
    State(NodeIndex),
    /// `[expect.snapshot.N] aborted_at`.
    AbortedAt(u32),
    /// `[expect.snapshot.N] missing_participants`: names, in the
    /// registry's order.
    MissingParticipants(u32),
    /// `[expect.channel."A->B"] lost`.
    Lost(ChannelIndex),
    /// `[expect.channel."A->B"] late`.
    Late(ChannelIndex),
}

/// The keys of `[expect.snapshot.N]`.
pub const SNAPSHOT_KEYS: [&str; 6] = [
    "outcome",
    "completed_at",
    "consistent",
    "max_recorded",
    "aborted_at",
    "missing_participants",
];
/// The keys of `[expect.channel."A->B"]`.
pub const CHANNEL_KEYS: [&str; 2] = ["lost", "late"];
/// The keys of `[expect.snapshot.N.node.NAME]`.
pub const SNAPSHOT_NODE_KEYS: [&str; 2] = ["recorded_state", "status"];
/// The words of `outcome`.
pub const OUTCOMES: [&str; 3] = ["complete", "aborted", "incomplete"];
/// The words of a node's `status`.
pub const STATUSES: [&str; 5] = [
    "complete",
    "aborted",
    "not_recorded",
    "waiting",
    "not_participating",
];

/// What an expectation says, e.g. `snapshot 1 node "C" recorded_state = 2`.
pub fn describe(flow: &Dataflow, e: &Expectation) -> String {
    let check = match &e.check {
        Check::Equals(v) => format!("= {v}"),
        other => format!("is {other}"),
    };
    match e.target {
        Target::Outcome(a) => format!("snapshot {} outcome {check}", a + 1),
        Target::CompletedAt(a) => format!("snapshot {} completed_at {check}", a + 1),
        Target::Consistent(a) => format!("snapshot {} consistent {check}", a + 1),
        Target::MaxRecorded(a) => format!("snapshot {} max_recorded {check}", a + 1),
        Target::RecordedState(a, n) => format!(
            "snapshot {} node \"{}\" recorded_state {check}",
            a + 1,
            flow.nodes[n as usize].name
        ),
        Target::Status(a, n) => format!(
            "snapshot {} node \"{}\" status {check}",
            a + 1,
            flow.nodes[n as usize].name
        ),
        Target::Recorded(a, c, p) => format!(
            "snapshot {} channel \"{}\" recorded {check}",
            a + 1,
            flow.partition_name(c, p)
        ),
        Target::State(n) => format!("node \"{}\" state {check}", flow.nodes[n as usize].name),
        Target::AbortedAt(a) => format!("snapshot {} aborted_at {check}", a + 1),
        Target::MissingParticipants(a) => {
            format!("snapshot {} missing_participants {check}", a + 1)
        }
        Target::Lost(c) => format!("channel \"{}\" lost {check}", flow.channel_name(c)),
        Target::Late(c) => format!("channel \"{}\" late {check}", flow.channel_name(c)),
    }
}
