//! The dataflow world (model section 25): sends travel FIFO channel
//! partitions, snapshot attempts record with Chandy-Lamport markers.
//!
//! Events are taken in the order (time, class, tier, sequence): at one
//! instant the file's sends come first, then its snapshot attempts (each in
//! file order), then what was scheduled during the run in scheduling order
//! (arrivals of data and markers); a snapshot's timeout comes after every
//! other event of its instant. Nothing here reads a clock or draws a
//! random number, so a file gives the same run everywhere.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::model::{ChannelIndex, Dataflow, MAX_RECORDED_VALUES, Markers, NodeIndex, SendKind};
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
}

impl NodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::NotRecorded => "not_recorded",
            NodeStatus::Waiting => "waiting",
            NodeStatus::Complete => "complete",
            NodeStatus::Aborted => "aborted",
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
    waiting_for: u64,
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
    started: bool,
    /// Nodes not complete yet: the attempt completes when none is left.
    incomplete: usize,
}

impl Attempt {
    fn final_(&self) -> bool {
        self.completed_at.is_some() || self.aborted_at.is_some()
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
}

impl Outcome {
    pub fn partition(&self, c: ChannelIndex, p: u32) -> usize {
        (self.partition_base[c as usize] + p) as usize
    }

    /// The channel and partition of a partition index.
    pub fn channel_of(&self, index: u32) -> (ChannelIndex, u32) {
        let c = self.partition_base.partition_point(|&b| b <= index) - 1;
        (c as u32, index - self.partition_base[c])
    }

    /// The values a partition recorded in an attempt, when its receiver
    /// recorded and kept its recording.
    pub fn recorded(
        &self,
        flow: &Dataflow,
        attempt: u32,
        c: ChannelIndex,
        p: u32,
    ) -> Option<&[i64]> {
        let a = &self.attempts[attempt as usize];
        let to = flow.channels[c as usize].to;
        match a.status(to) {
            NodeStatus::Waiting | NodeStatus::Complete => {
                Some(&a.partitions[self.partition(c, p)].values)
            }
            NodeStatus::NotRecorded | NodeStatus::Aborted => None,
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

/// Defects and arrivals an explanation keeps.
const WATCH_KEPT: usize = 12;

#[derive(Debug, Clone, Copy)]
enum What {
    Data {
        part: u32,
        value: i64,
        send: u32,
        /// The send came before the watched cut at its sender.
        debited: bool,
    },
    Marker {
        part: u32,
        attempt: u32,
    },
    Timeout {
        attempt: u32,
    },
}

#[derive(Debug, Clone, Copy)]
struct Due {
    time: Millis,
    /// 0: arrivals; 1: timeouts, after everything else of their instant.
    class: u8,
    seq: u64,
    what: What,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.class, other.seq).cmp(&(self.time, self.class, self.seq))
    }
}

/// Runs a dataflow file.
pub fn run(flow: &Dataflow) -> Result<Outcome, Stop> {
    run_watching(flow, Watch::default())
}

/// Runs a dataflow file, collecting what `watch` asks for.
pub fn run_watching(flow: &Dataflow, watch: Watch) -> Result<Outcome, Stop> {
    let mut w = World::new(flow, watch);
    w.run()?;
    Ok(w.finish())
}

/// Runs a dataflow file up to modeled time `until`, every event at that
/// instant included (a snapshot's timeout too); an attempt not finished by
/// then is `incomplete` in the outcome, its nodes as they were.
pub fn run_until(flow: &Dataflow, until: Millis) -> Result<Outcome, Stop> {
    let mut w = World::new(flow, Watch::default());
    w.until = Some(until);
    w.run()?;
    Ok(w.finish())
}

struct World<'a> {
    flow: &'a Dataflow,
    now: Millis,
    events: u64,
    seq: u64,
    heap: BinaryHeap<Due>,
    states: Vec<i64>,
    base: Vec<u32>,
    /// Partitions of all channels together.
    partitions: usize,
    /// Per node: its incoming and outgoing channels, in file order.
    incoming: Vec<Vec<ChannelIndex>>,
    outgoing: Vec<Vec<ChannelIndex>>,
    markers_sent: Vec<u64>,
    attempts: Vec<Attempt>,
    /// Attempts started and not final, in start order.
    live: Vec<u32>,
    /// Values kept in recordings, all attempts together.
    held: u64,
    log: Vec<Entry>,
    log_dropped: u64,
    watch: Watch,
    watched: Watched,
    /// Stop after this instant (`run_until`).
    until: Option<Millis>,
}

impl<'a> World<'a> {
    fn new(flow: &'a Dataflow, watch: Watch) -> World<'a> {
        let mut base = Vec::with_capacity(flow.channels.len());
        let mut next = 0u32;
        let mut incoming = vec![Vec::new(); flow.nodes.len()];
        let mut outgoing = vec![Vec::new(); flow.nodes.len()];
        for (c, ch) in flow.channels.iter().enumerate() {
            base.push(next);
            next += ch.partitions;
            incoming[ch.to as usize].push(c as u32);
            outgoing[ch.from as usize].push(c as u32);
        }
        let attempts = flow
            .snapshots
            .iter()
            .map(|_| Attempt {
                outcome: AttemptOutcome::Incomplete,
                completed_at: None,
                aborted_at: None,
                nodes: Vec::new(),
                partitions: Vec::new(),
                max_recorded: 0,
                consistent: None,
                recorded_total: 0,
                started: false,
                incomplete: flow.nodes.len(),
            })
            .collect();
        World {
            flow,
            now: 0,
            events: 0,
            seq: 0,
            heap: BinaryHeap::new(),
            states: flow.nodes.iter().map(|n| n.state).collect(),
            base,
            partitions: next as usize,
            incoming,
            outgoing,
            markers_sent: vec![0; flow.channels.len()],
            attempts,
            live: Vec::new(),
            held: 0,
            log: Vec::new(),
            log_dropped: 0,
            watch,
            watched: Watched::default(),
            until: None,
        }
    }

    fn note(&mut self, what: Happened) {
        if self.log.len() < MAX_LOG {
            self.log.push(Entry { at: self.now, what });
        } else {
            self.log_dropped += 1;
        }
    }

    fn run(&mut self) -> Result<(), Stop> {
        let flow = self.flow;
        let mut sends: Vec<u32> = (0..flow.sends.len() as u32).collect();
        sends.sort_by_key(|&i| flow.sends[i as usize].at);
        let mut snaps: Vec<u32> = (0..flow.snapshots.len() as u32).collect();
        snaps.sort_by_key(|&i| flow.snapshots[i as usize].at);
        let (mut si, mut ki) = (0usize, 0usize);
        loop {
            // (time, class, tier): the file's sends, its attempts, then
            // what the run scheduled.
            let send = sends
                .get(si)
                .map(|&i| (flow.sends[i as usize].at, 0u8, 0u8));
            let snap = snaps
                .get(ki)
                .map(|&i| (flow.snapshots[i as usize].at, 0u8, 1u8));
            let due = self.heap.peek().map(|d| (d.time, d.class, 2u8));
            let Some(next) = [send, snap, due].into_iter().flatten().min() else {
                break;
            };
            if let (2, Some(top)) = (next.2, self.heap.peek())
                && let What::Timeout { attempt } = top.what
                && self.attempts[attempt as usize].final_()
            {
                // The attempt ended before its timeout: nothing happens.
                self.heap.pop();
                continue;
            }
            if self.until.is_some_and(|u| next.0 > u) {
                break;
            }
            if next.0 > flow.limits.max_time {
                return Err(Stop::MaxTime {
                    limit: flow.limits.max_time,
                });
            }
            if self.events >= flow.limits.max_events {
                return Err(Stop::MaxEvents {
                    limit: flow.limits.max_events,
                    at: self.now,
                });
            }
            self.events += 1;
            self.now = next.0;
            match next.2 {
                0 => {
                    let i = sends[si];
                    si += 1;
                    self.send(i);
                }
                1 => {
                    let k = snaps[ki];
                    ki += 1;
                    self.start(k)?;
                }
                _ => {
                    let d = self.heap.pop().expect("peeked");
                    match d.what {
                        What::Data {
                            part,
                            value,
                            send,
                            debited,
                        } => self.data(part, value, send, debited)?,
                        What::Marker { part, attempt } => self.marker(part, attempt)?,
                        What::Timeout { attempt } => self.timeout(attempt),
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Outcome {
        for &a in &self.live {
            self.attempts[a as usize].outcome = AttemptOutcome::Incomplete;
        }
        let flow = self.flow;
        for a in self.attempts.iter_mut() {
            if !a.started {
                // Never started (the run stopped before it): every node
                // not recorded.
                a.nodes = vec![NodeRecord::default(); flow.nodes.len()];
                a.partitions = vec![PartitionRecord::default(); self.partitions];
            }
        }
        Outcome {
            end: self.now,
            events: self.events,
            states: self.states,
            attempts: self.attempts,
            partition_base: self.base,
            log: self.log,
            log_dropped: self.log_dropped,
            watched: self.watched,
        }
    }

    fn schedule(&mut self, time: Millis, class: u8, what: What) {
        self.seq += 1;
        self.heap.push(Due {
            time,
            class,
            seq: self.seq,
            what,
        });
    }

    /// When something put on channel `c` now leaves it (a down window
    /// holds it until its end) and arrives.
    fn departure(&self, c: ChannelIndex) -> (Millis, Millis) {
        let ch = &self.flow.channels[c as usize];
        let departs = match ch.down {
            Some(w) if w.holds(self.now) => w.until,
            _ => self.now,
        };
        (departs, departs.saturating_add(ch.latency))
    }

    fn send(&mut self, i: u32) {
        let s = &self.flow.sends[i as usize];
        let ch = &self.flow.channels[s.channel as usize];
        if s.kind == SendKind::Transfer {
            let from = ch.from as usize;
            self.states[from] = self.states[from].saturating_sub(s.value);
        }
        let debited = self.watch.cut.is_none_or(|a| {
            self.attempts[a as usize]
                .nodes
                .get(ch.from as usize)
                .is_none_or(|n| n.status == NodeStatus::NotRecorded)
        });
        let part = self.base[s.channel as usize] + s.partition;
        let (departs, arrives) = self.departure(s.channel);
        self.schedule(
            arrives,
            0,
            What::Data {
                part,
                value: s.value,
                send: i,
                debited,
            },
        );
        self.note(Happened::Sent {
            send: i,
            partition: part,
            arrives,
            held: departs > self.now,
        });
    }

    fn start(&mut self, k: u32) -> Result<(), Stop> {
        let flow = self.flow;
        let snap = &flow.snapshots[k as usize];
        let partitions = self.partitions;
        {
            let a = &mut self.attempts[k as usize];
            a.started = true;
            a.nodes = vec![NodeRecord::default(); flow.nodes.len()];
            a.partitions = vec![PartitionRecord::default(); partitions];
        }
        self.live.push(k);
        self.note(Happened::Started { attempt: k });
        if let Some(t) = snap.timeout {
            self.schedule(self.now.saturating_add(t), 1, What::Timeout { attempt: k });
        }
        for &n in &snap.initiators {
            let a = &self.attempts[k as usize];
            if a.final_() {
                break;
            }
            if a.status(n) == NodeStatus::NotRecorded {
                self.record(n, k, None)?;
            }
        }
        Ok(())
    }

    fn data(&mut self, part: u32, value: i64, send: u32, debited: bool) -> Result<(), Stop> {
        let flow = self.flow;
        let (c, _) = channel_of(&self.base, part);
        let to = flow.channels[c as usize].to;
        self.states[to as usize] = self.states[to as usize].saturating_add(value);
        let mut recorded = false;
        let mut watched_in_channel = false;
        let mut in_watched_window = false;
        for li in 0..self.live.len() {
            let k = self.live[li];
            let a = &mut self.attempts[k as usize];
            let pr = &mut a.partitions[part as usize];
            if pr.recording == Recording::On {
                pr.values.push(value);
                let node = &mut a.nodes[to as usize];
                node.buffered += 1;
                a.max_recorded = a.max_recorded.max(node.buffered);
                recorded = true;
                if self.watch.cut == Some(k) {
                    watched_in_channel = true;
                }
                if self.watch.arrivals == Some((k, part)) {
                    in_watched_window = true;
                }
                self.held += 1;
                if self.held > MAX_RECORDED_VALUES {
                    return Err(Stop::Recorded {
                        at: self.now,
                        attempt: k,
                    });
                }
            }
        }
        if let Some(w) = self.watch.cut
            && flow.sends[send as usize].kind == SendKind::Transfer
        {
            let credited_in_state = self.attempts[w as usize]
                .nodes
                .get(to as usize)
                .is_none_or(|n| n.status == NodeStatus::NotRecorded);
            let credited = credited_in_state as u8 + watched_in_channel as u8;
            if credited != debited as u8 {
                self.watched.defects_total += 1;
                if self.watched.defects.len() < WATCH_KEPT {
                    self.watched.defects.push(Defect {
                        send,
                        twice: credited > debited as u8,
                        arrived: self.now,
                        in_channel: watched_in_channel,
                    });
                }
            }
        }
        if let Some((_, p)) = self.watch.arrivals
            && p == part
        {
            self.watched.arrivals_total += 1;
            if self.watched.arrivals.len() < WATCH_KEPT * 4 {
                self.watched.arrivals.push(Arrival {
                    at: self.now,
                    send,
                    value,
                    recorded: in_watched_window,
                });
            }
        }
        self.note(Happened::Received {
            send,
            partition: part,
            recorded,
        });
        Ok(())
    }

    fn marker(&mut self, part: u32, k: u32) -> Result<(), Stop> {
        let flow = self.flow;
        let (c, p) = channel_of(&self.base, part);
        let to = flow.channels[c as usize].to;
        let now = self.now;
        let a = &mut self.attempts[k as usize];
        if a.final_() {
            let pr = &mut a.partitions[part as usize];
            let held = match pr.marker {
                MarkerFate::InFlight {
                    sent_at, departs, ..
                } if departs > sent_at => Some(departs),
                _ => None,
            };
            pr.marker = MarkerFate::Late { at: now, held };
            self.note(Happened::MarkerIgnored {
                attempt: k,
                partition: part,
            });
            return Ok(());
        }
        a.partitions[part as usize].marker = MarkerFate::Arrived { at: now };
        self.note(Happened::MarkerReceived {
            attempt: k,
            partition: part,
        });
        if self.attempts[k as usize].status(to) == NodeStatus::NotRecorded {
            return self.record(to, k, Some(part));
        }
        let waited = flow.snapshots[k as usize].markers == Markers::EveryPartition || p == 0;
        let a = &mut self.attempts[k as usize];
        let pr = &mut a.partitions[part as usize];
        if pr.recording == Recording::On {
            pr.recording = Recording::Stopped;
            let node = &mut a.nodes[to as usize];
            if waited && node.status == NodeStatus::Waiting {
                node.waiting_for -= 1;
            }
        }
        self.check_node(to, k);
        Ok(())
    }

    /// Node `n` records in attempt `k` (it initiates, or `via` brought its
    /// first marker): its state now, markers on every outgoing channel,
    /// and recording on every other incoming partition.
    fn record(&mut self, n: NodeIndex, k: u32, via: Option<u32>) -> Result<(), Stop> {
        let flow = self.flow;
        let markers = flow.snapshots[k as usize].markers;
        let state = self.states[n as usize];
        let now = self.now;
        let mut waiting = 0u64;
        {
            let a = &mut self.attempts[k as usize];
            for &c in &self.incoming[n as usize] {
                let ch = &flow.channels[c as usize];
                for p in 0..ch.partitions {
                    let gi = self.base[c as usize] + p;
                    let pr = &mut a.partitions[gi as usize];
                    if Some(gi) == via {
                        pr.recording = Recording::Stopped;
                    } else {
                        pr.recording = Recording::On;
                        if markers == Markers::EveryPartition || p == 0 {
                            waiting += 1;
                        }
                    }
                }
            }
            let node = &mut a.nodes[n as usize];
            node.status = NodeStatus::Waiting;
            node.recorded_state = Some(state);
            node.recorded_at = Some(now);
            node.waiting_for = waiting;
        }
        self.note(Happened::Recorded {
            attempt: k,
            node: n,
            state,
        });
        for oi in 0..self.outgoing[n as usize].len() {
            let c = self.outgoing[n as usize][oi];
            let partitions = match markers {
                Markers::EveryPartition => flow.channels[c as usize].partitions,
                Markers::FirstPartition => 1,
            };
            for p in 0..partitions {
                self.send_marker(c, p, k);
            }
        }
        self.check_node(n, k);
        Ok(())
    }

    fn send_marker(&mut self, c: ChannelIndex, p: u32, k: u32) {
        let part = self.base[c as usize] + p;
        let nth = self.markers_sent[c as usize];
        self.markers_sent[c as usize] += 1;
        if nth < self.flow.channels[c as usize].lose_markers {
            self.attempts[k as usize].partitions[part as usize].marker =
                MarkerFate::Lost { at: self.now };
            self.note(Happened::MarkerLost {
                attempt: k,
                partition: part,
            });
            return;
        }
        let (departs, arrives) = self.departure(c);
        self.attempts[k as usize].partitions[part as usize].marker = MarkerFate::InFlight {
            sent_at: self.now,
            departs,
            arrives,
        };
        self.schedule(arrives, 0, What::Marker { part, attempt: k });
        self.note(Happened::MarkerSent {
            attempt: k,
            partition: part,
            arrives,
            held: departs > self.now,
        });
    }

    fn check_node(&mut self, n: NodeIndex, k: u32) {
        let a = &mut self.attempts[k as usize];
        let node = &mut a.nodes[n as usize];
        if node.status != NodeStatus::Waiting || node.waiting_for > 0 {
            return;
        }
        node.status = NodeStatus::Complete;
        a.incomplete -= 1;
        let done = a.incomplete == 0;
        self.note(Happened::NodeComplete {
            attempt: k,
            node: n,
        });
        if done {
            self.finalize(k, AttemptOutcome::Complete);
        }
    }

    fn timeout(&mut self, k: u32) {
        let flow = self.flow;
        let mut discarded = 0u32;
        let mut freed = 0u64;
        let a = &mut self.attempts[k as usize];
        for (n, node) in a.nodes.iter_mut().enumerate() {
            if node.status != NodeStatus::Waiting {
                continue;
            }
            node.status = NodeStatus::Aborted;
            node.discarded_state = node.recorded_state.take();
            discarded += 1;
            for &c in &self.incoming[n] {
                for p in 0..flow.channels[c as usize].partitions {
                    let pr = &mut a.partitions[(self.base[c as usize] + p) as usize];
                    freed += pr.values.len() as u64;
                    pr.values = Vec::new();
                    pr.recording = Recording::Discarded;
                }
            }
        }
        self.held -= freed;
        self.note(Happened::Aborted {
            attempt: k,
            discarded,
        });
        self.finalize(k, AttemptOutcome::Aborted);
    }

    /// The attempt ends: recordings stop; a complete attempt of transfers
    /// only is checked against the system's total.
    fn finalize(&mut self, k: u32, outcome: AttemptOutcome) {
        let flow = self.flow;
        let now = self.now;
        self.live.retain(|&a| a != k);
        let a = &mut self.attempts[k as usize];
        a.outcome = outcome;
        match outcome {
            AttemptOutcome::Complete => a.completed_at = Some(now),
            _ => a.aborted_at = Some(now),
        }
        for pr in a.partitions.iter_mut() {
            if pr.recording == Recording::On {
                pr.recording = Recording::Stopped;
            }
        }
        let states: i128 = a
            .nodes
            .iter()
            .filter_map(|n| n.recorded_state)
            .map(i128::from)
            .sum();
        let channels: i128 = a
            .partitions
            .iter()
            .flat_map(|p| p.values.iter())
            .map(|&v| i128::from(v))
            .sum();
        a.recorded_total = states + channels;
        if outcome == AttemptOutcome::Complete {
            self.note(Happened::Completed { attempt: k });
            let a = &mut self.attempts[k as usize];
            if flow.transfers_only() {
                a.consistent = Some(a.recorded_total == flow.total());
            }
        }
    }
}

fn channel_of(base: &[u32], index: u32) -> (ChannelIndex, u32) {
    let c = base.partition_point(|&b| b <= index) - 1;
    (c as u32, index - base[c])
}
