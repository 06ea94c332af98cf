//! The dataflow world at scale (docs/benchmarks.md): 100 nodes, 1,000
//! channels of 2 partitions, 1,000,000 transfers over 10 seconds and 10
//! snapshot attempts, built in code (a file of a million sends would pass
//! the 16 MB file limit) from a fixed linear congruential sequence, so that
//! every run is the same run.
//!
//! `cargo bench --bench dataflow` prints the attempts' outcomes, the
//! events, the peak of the recordings and the CPU time of the whole
//! process (the build of the dataflow included).

#[path = "common/cpu.rs"]
mod cpu;

use scenario_run::dataflow::model::{
    Channel, Dataflow, Limits, Markers, Node, Send, SendKind, Snapshot, TimeoutFrom,
};

const NODES: u32 = 100;
const CHANNELS: usize = 1_000;
const SENDS: u64 = 1_000_000;
const OVER_MS: u64 = 10_000;

fn build() -> Dataflow {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut channels: Vec<Channel> = Vec::with_capacity(CHANNELS);
    // A ring first, so that every node has an incoming channel, then
    // random pairs.
    for n in 0..NODES {
        channels.push(channel(n, (n + 1) % NODES, 1 + next() % 20));
    }
    while channels.len() < CHANNELS {
        let (a, b) = (
            (next() % NODES as u64) as u32,
            (next() % NODES as u64) as u32,
        );
        if a != b && !channels.iter().any(|c| c.from == a && c.to == b) {
            channels.push(channel(a, b, 1 + next() % 20));
        }
    }
    let mut sends: Vec<Send> = (0..SENDS)
        .map(|i| {
            let c = (next() % CHANNELS as u64) as u32;
            Send {
                at: i * OVER_MS / SENDS,
                channel: c,
                partition: (next() % 2) as u32,
                value: 1 + (next() % 9) as i64,
                kind: SendKind::Transfer,
            }
        })
        .collect();
    sends.sort_by_key(|s| s.at);
    let snapshots = (0..10u64)
        .map(|k| Snapshot {
            at: 500 + k * 1_000,
            initiators: vec![(k * 7 % NODES as u64) as u32],
            timeout: Some(2_000),
            markers: Markers::EveryPartition,
            participants: None,
            timeout_from: TimeoutFrom::Attempt,
        })
        .collect();
    Dataflow {
        name: "bench".into(),
        summary: None,
        description: None,
        tags: Vec::new(),
        seed: 0,
        nodes: (0..NODES)
            .map(|n| Node {
                name: format!("n{n}"),
                state: 1_000_000,
                participates: true,
            })
            .collect(),
        channels,
        sends,
        snapshots,
        limits: Limits::default(),
        expectations: Vec::new(),
        questions: Vec::new(),
    }
}

fn channel(from: u32, to: u32, latency: u64) -> Channel {
    Channel {
        from,
        to,
        latency,
        partitions: 2,
        lose_markers: 0,
        down: None,
        lose_data: 0,
        late_data: None,
    }
}

fn main() {
    let flow = build();
    let built = cpu::cpu_seconds();
    let o = scenario_run::dataflow::run(&flow).expect("within its limits");
    let outcomes: Vec<String> = o
        .attempts
        .iter()
        .map(|a| {
            format!(
                "{}{}",
                a.outcome.as_str(),
                match a.consistent {
                    Some(true) => " (consistent)",
                    Some(false) => " (INCONSISTENT)",
                    None => "",
                }
            )
        })
        .collect();
    let peak = o.attempts.iter().map(|a| a.max_recorded).max().unwrap_or(0);
    println!(
        "dataflow: {NODES} nodes, {CHANNELS} channels, {SENDS} sends, 10 attempts: {} events, max_recorded {peak}; built in {built:.3} s, run in {:.3} s CPU",
        o.events,
        cpu::cpu_seconds() - built
    );
    println!("attempts: {}", outcomes.join(", "));
}
