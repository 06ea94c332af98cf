//! The dataflow world (model section 25): sends travel FIFO channel
//! partitions, snapshot attempts record with Chandy-Lamport markers.
//!
//! Events are taken in the order (time, class, tier, sequence): at one
//! instant the file's sends come first, then its snapshot attempts (each in
//! file order), then what was scheduled during the run in scheduling order
//! (arrivals of data and markers); a snapshot's timeout comes after every
//! other event of its instant. Nothing here reads a clock or draws a
//! random number, so a file gives the same run everywhere.

use super::model::{
    ChannelIndex, Dataflow, MAX_RECORDED_VALUES, Markers, NodeIndex, SendKind, TimeoutFrom,
};
use super::outcome::{
    Arrival, Attempt, AttemptOutcome, Defect, Entry, Happened, MAX_LOG, MarkerFate, NodeRecord,
    NodeStatus, Outcome, PartitionRecord, Recording, Stop, Watch, Watched, channel_of,
};
use crate::model::Millis;
use crate::sim::{self, Clock, Schedule};

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
    /// `timeout_from = "first_marker"`: node `node`'s own deadline.
    NodeTimeout {
        attempt: u32,
        node: NodeIndex,
    },
}

/// Runs a dataflow file.
pub fn run(flow: &Dataflow) -> Result<Outcome, Stop> {
    run_watching(flow, Watch::default())
}

/// Runs a dataflow file, collecting what `watch` asks for.
pub fn run_watching(flow: &Dataflow, watch: Watch) -> Result<Outcome, Stop> {
    let mut w = World::new(flow, watch);
    sim::run_until(&mut w, None)?;
    Ok(w.finish())
}

/// Runs a dataflow file up to modeled time `until`, every event at that
/// instant included (a snapshot's timeout too); an attempt not finished by
/// then is `incomplete` in the outcome, its nodes as they were.
pub fn run_until(flow: &Dataflow, until: Millis) -> Result<Outcome, Stop> {
    let mut w = World::new(flow, Watch::default());
    sim::run_until(&mut w, Some(until))?;
    Ok(w.finish())
}

/// What is due, of one instant in this order: the file's sends
/// (`Send`), its snapshot attempts (`Start`), both in file order, then
/// what the run scheduled (class 0), then late data (class 1: after
/// anything on time at its instant, section 28.14), then snapshot
/// timeouts (class 2).
const SCHEDULED: u8 = 0;
const LATE: u8 = 1;
const TIMEOUTS: u8 = 2;

/// The next thing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// The file's send (an index into `sends`).
    Send,
    /// The file's snapshot attempt (an index into `snaps`).
    Start,
    /// The schedule's earliest entry.
    Scheduled,
}

struct World<'a> {
    flow: &'a Dataflow,
    clock: Clock,
    /// What the run scheduled: arrivals of data and markers, timeouts.
    schedule: Schedule<What>,
    /// The file's sends and snapshot attempts in time order (stable: file
    /// order within an instant), and how many of each have been taken.
    sends: Vec<u32>,
    snaps: Vec<u32>,
    sent: usize,
    started: usize,
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
    /// Per channel: data messages sent so far, lost, delivered late.
    data_sent: Vec<u64>,
    lost: Vec<u64>,
    late: Vec<u64>,
    /// Per attempt, per node: whether the attempt waits for it to
    /// complete (the registry's nodes, or every participating node).
    waited: Vec<Vec<bool>>,
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
                missing_participants: Vec::new(),
                started: false,
                ended: false,
                incomplete: 0,
            })
            .collect();
        let mut sends: Vec<u32> = (0..flow.sends.len() as u32).collect();
        sends.sort_by_key(|&i| flow.sends[i as usize].at);
        let mut snaps: Vec<u32> = (0..flow.snapshots.len() as u32).collect();
        snaps.sort_by_key(|&i| flow.snapshots[i as usize].at);
        World {
            flow,
            clock: Clock::default(),
            schedule: Schedule::default(),
            sends,
            snaps,
            sent: 0,
            started: 0,
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
            data_sent: vec![0; flow.channels.len()],
            lost: vec![0; flow.channels.len()],
            late: vec![0; flow.channels.len()],
            waited: vec![Vec::new(); flow.snapshots.len()],
        }
    }

    fn note(&mut self, what: Happened) {
        if self.log.len() < MAX_LOG {
            self.log.push(Entry {
                at: self.clock.now,
                what,
            });
        } else {
            self.log_dropped += 1;
        }
    }

    /// The next thing to do and its time: (time, class, tier) over the
    /// file's sends, its attempts, then what the run scheduled. A timeout
    /// of an attempt that has already ended is dropped on the way.
    fn next(&mut self) -> Option<(Millis, Next)> {
        let flow = self.flow;
        loop {
            let send = (self.sends.get(self.sent))
                .map(|&i| ((flow.sends[i as usize].at, 0u8, 0u8), Next::Send));
            let snap = (self.snaps.get(self.started))
                .map(|&i| ((flow.snapshots[i as usize].at, 0u8, 1u8), Next::Start));
            let due = (self.schedule.peek())
                .map(|(time, class, _)| ((time, class, 2u8), Next::Scheduled));
            let (at, next) = [send, snap, due]
                .into_iter()
                .flatten()
                .min_by_key(|n| n.0)?;
            if next == Next::Scheduled
                && let Some((_, _, what)) = self.schedule.peek()
                && match *what {
                    What::Timeout { attempt } => self.attempts[attempt as usize].final_(),
                    What::NodeTimeout { attempt, node } => {
                        let a = &self.attempts[attempt as usize];
                        a.final_() || a.status(node) != NodeStatus::Waiting
                    }
                    _ => false,
                }
            {
                // The attempt (or the node) ended before its timeout:
                // nothing happens.
                self.schedule.take();
                continue;
            }
            return Some((at.0, next));
        }
    }

    fn step_next(&mut self) -> Result<bool, Stop> {
        let Some((at, next)) = self.next() else {
            return Ok(false);
        };
        let flow = self.flow;
        let now = self.clock.now;
        self.clock
            .advance(at, &flow.limits, true)
            .map_err(|limit| match limit {
                sim::Limit::Time(limit) => Stop::MaxTime { limit },
                sim::Limit::Events(limit) => Stop::MaxEvents { limit, at: now },
            })?;
        match next {
            Next::Send => {
                let i = self.sends[self.sent];
                self.sent += 1;
                self.send(i);
            }
            Next::Start => {
                let k = self.snaps[self.started];
                self.started += 1;
                self.start(k)?;
            }
            Next::Scheduled => match self.schedule.take().expect("peeked").1 {
                What::Data {
                    part,
                    value,
                    send,
                    debited,
                } => self.data(part, value, send, debited)?,
                What::Marker { part, attempt } => self.marker(part, attempt)?,
                What::Timeout { attempt } => self.timeout(attempt),
                What::NodeTimeout { attempt, node } => self.node_timeout(attempt, node),
            },
        }
        Ok(true)
    }

    fn finish(mut self) -> Outcome {
        for &a in &self.live {
            // An attempt a node's own deadline aborted stays aborted.
            let a = &mut self.attempts[a as usize];
            if a.aborted_at.is_none() {
                a.outcome = AttemptOutcome::Incomplete;
            }
        }
        let flow = self.flow;
        for (k, a) in self.attempts.iter_mut().enumerate() {
            if !a.started {
                // Never started (the run stopped before it): every node
                // not recorded.
                a.nodes = vec![NodeRecord::default(); flow.nodes.len()];
                a.partitions = vec![PartitionRecord::default(); self.partitions];
            }
            if let Some(listed) = &flow.snapshots[k].participants {
                a.missing_participants = (listed.iter().copied())
                    .filter(|&n| {
                        matches!(
                            a.status(n),
                            NodeStatus::NotRecorded | NodeStatus::NotParticipating
                        )
                    })
                    .collect();
            }
        }
        Outcome {
            end: self.clock.now,
            events: self.clock.events(),
            states: self.states,
            attempts: self.attempts,
            partition_base: self.base,
            log: self.log,
            log_dropped: self.log_dropped,
            watched: self.watched,
            lost: self.lost,
            late: self.late,
        }
    }

    /// When something put on channel `c` now leaves it (a down window
    /// holds it until its end) and arrives.
    fn departure(&self, c: ChannelIndex) -> (Millis, Millis) {
        let ch = &self.flow.channels[c as usize];
        let departs = match ch.down {
            Some(w) if w.holds(self.clock.now) => w.until,
            _ => self.clock.now,
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
        let c = s.channel as usize;
        let nth = self.data_sent[c];
        self.data_sent[c] += 1;
        if nth < ch.lose_data {
            // Lost: a transfer's value left its sender and reaches nobody.
            self.lost[c] += 1;
            self.note(Happened::DataLost {
                send: i,
                partition: part,
            });
            return;
        }
        let (departs, mut arrives) = self.departure(s.channel);
        let mut class = SCHEDULED;
        let late = ch.late_data.filter(|&(first, _)| nth < first);
        if let Some((_, by)) = late {
            self.late[c] += 1;
            arrives = arrives.saturating_add(by);
            class = LATE;
        }
        self.schedule.add(
            arrives,
            class,
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
            held: departs > self.clock.now,
            late: late.is_some(),
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
            for (n, node) in flow.nodes.iter().enumerate() {
                if !node.participates {
                    a.nodes[n].status = NodeStatus::NotParticipating;
                }
            }
            // The coordinator waits for its registry, else for every
            // node that participates.
            let waited = match &snap.participants {
                Some(listed) => {
                    let mut w = vec![false; flow.nodes.len()];
                    for &n in listed {
                        w[n as usize] = true;
                    }
                    w
                }
                None => flow.nodes.iter().map(|n| n.participates).collect(),
            };
            a.incomplete = waited.iter().filter(|&&w| w).count();
            self.waited[k as usize] = waited;
        }
        self.live.push(k);
        self.note(Happened::Started { attempt: k });
        if let Some(t) = snap.timeout
            && snap.timeout_from == TimeoutFrom::Attempt
        {
            self.schedule.add(
                self.clock.now.saturating_add(t),
                TIMEOUTS,
                What::Timeout { attempt: k },
            );
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
                        at: self.clock.now,
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
                        arrived: self.clock.now,
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
                    at: self.clock.now,
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
        let now = self.clock.now;
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
        if !flow.participates(to) {
            a.partitions[part as usize].marker = MarkerFate::Dropped { at: now };
            self.note(Happened::MarkerDropped {
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
        let now = self.clock.now;
        let mut waiting = 0u64;
        {
            let a = &mut self.attempts[k as usize];
            for &c in &self.incoming[n as usize] {
                let ch = &flow.channels[c as usize];
                if !flow.participates(ch.from) {
                    // An outside input to the protocol: not recorded, no
                    // marker waited for.
                    continue;
                }
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
        let snap = &flow.snapshots[k as usize];
        if let (Some(t), TimeoutFrom::FirstMarker) = (snap.timeout, snap.timeout_from)
            && self.attempts[k as usize].status(n) == NodeStatus::Waiting
        {
            self.schedule.add(
                now.saturating_add(t),
                TIMEOUTS,
                What::NodeTimeout {
                    attempt: k,
                    node: n,
                },
            );
        }
        Ok(())
    }

    fn send_marker(&mut self, c: ChannelIndex, p: u32, k: u32) {
        let part = self.base[c as usize] + p;
        let nth = self.markers_sent[c as usize];
        self.markers_sent[c as usize] += 1;
        if nth < self.flow.channels[c as usize].lose_markers {
            self.attempts[k as usize].partitions[part as usize].marker =
                MarkerFate::Lost { at: self.clock.now };
            self.note(Happened::MarkerLost {
                attempt: k,
                partition: part,
            });
            return;
        }
        let (departs, arrives) = self.departure(c);
        self.attempts[k as usize].partitions[part as usize].marker = MarkerFate::InFlight {
            sent_at: self.clock.now,
            departs,
            arrives,
        };
        self.schedule
            .add(arrives, SCHEDULED, What::Marker { part, attempt: k });
        self.note(Happened::MarkerSent {
            attempt: k,
            partition: part,
            arrives,
            held: departs > self.clock.now,
        });
    }

    fn check_node(&mut self, n: NodeIndex, k: u32) {
        let a = &mut self.attempts[k as usize];
        let node = &mut a.nodes[n as usize];
        if node.status != NodeStatus::Waiting || node.waiting_for > 0 {
            return;
        }
        node.status = NodeStatus::Complete;
        if self.waited[k as usize][n as usize] {
            a.incomplete -= 1;
        }
        self.note(Happened::NodeComplete {
            attempt: k,
            node: n,
        });
        let a = &self.attempts[k as usize];
        if a.aborted_at.is_some() {
            // A node's own deadline aborted the attempt: it ends when no
            // node that recorded is left waiting.
            if !a.nodes.iter().any(|n| n.status == NodeStatus::Waiting) {
                self.finalize(k, AttemptOutcome::Aborted);
            }
        } else if a.incomplete == 0 {
            self.finalize(k, AttemptOutcome::Complete);
        }
    }

    /// `timeout_from = "first_marker"`: node `n` of attempt `k` is not
    /// complete at its own deadline: it discards its recording. The first
    /// such abort aborts the attempt, which ends when no node that
    /// recorded is left waiting.
    fn node_timeout(&mut self, k: u32, n: NodeIndex) {
        let now = self.clock.now;
        let freed = self.discard(k, n);
        self.held -= freed;
        self.note(Happened::NodeAborted {
            attempt: k,
            node: n,
        });
        let a = &mut self.attempts[k as usize];
        if a.aborted_at.is_none() {
            a.aborted_at = Some(now);
            a.outcome = AttemptOutcome::Aborted;
        }
        if !a.nodes.iter().any(|n| n.status == NodeStatus::Waiting) {
            self.finalize(k, AttemptOutcome::Aborted);
        }
    }

    /// Node `n`, waiting in attempt `k`, aborts: its recorded state and
    /// its incoming partitions' recordings are discarded. Returns the
    /// values freed.
    fn discard(&mut self, k: u32, n: NodeIndex) -> u64 {
        let flow = self.flow;
        let mut freed = 0u64;
        let a = &mut self.attempts[k as usize];
        let node = &mut a.nodes[n as usize];
        node.status = NodeStatus::Aborted;
        node.discarded_state = node.recorded_state.take();
        for &c in &self.incoming[n as usize] {
            for p in 0..flow.channels[c as usize].partitions {
                let pr = &mut a.partitions[(self.base[c as usize] + p) as usize];
                freed += pr.values.len() as u64;
                pr.values = Vec::new();
                if pr.recording != Recording::Not {
                    pr.recording = Recording::Discarded;
                }
            }
        }
        freed
    }

    fn timeout(&mut self, k: u32) {
        let mut discarded = 0u32;
        let mut freed = 0u64;
        for n in 0..self.flow.nodes.len() as NodeIndex {
            if self.attempts[k as usize].status(n) != NodeStatus::Waiting {
                continue;
            }
            discarded += 1;
            freed += self.discard(k, n);
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
        let now = self.clock.now;
        self.live.retain(|&a| a != k);
        let a = &mut self.attempts[k as usize];
        a.outcome = outcome;
        a.ended = true;
        match outcome {
            AttemptOutcome::Complete => a.completed_at = Some(now),
            // With per-node deadlines, aborted from the first abort.
            _ => {
                a.aborted_at.get_or_insert(now);
            }
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

/// The dataflow world on the scheduling core.
impl sim::World for World<'_> {
    type Stop = Stop;

    fn next_time(&mut self) -> Option<Millis> {
        self.next().map(|(at, _)| at)
    }

    fn step(&mut self) -> Result<bool, Stop> {
        self.step_next()
    }
}
