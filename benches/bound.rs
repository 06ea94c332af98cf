//! The bound the engine is measured against (docs/benchmarks.md): a bare
//! loop that does the same events as the outage example
//! (`scenarios/17-outage-100k-per-hour.toml`) scaled up, with two bytes
//! of state a message and nothing else: even arrivals, a delivery that
//! fails inside the outage window, retries after 1s, 2s, 4s, 8s and 16s
//! (no jitter, so each retry level is a queue already in time order), a
//! quarantine after the sixth failed delivery.
//!
//! `cargo bench --bench bound -- COUNT OVER_MS` prints the run's totals
//! (which must equal scenario-run's for the same file) and the CPU time
//! of the whole process; `benches/bound.sh` runs both side by side.

#[path = "common/cpu.rs"]
mod cpu;

use std::collections::VecDeque;

const MAX_RECEIVES: u8 = 6;
const BASE: u64 = 1_000;
const OUTAGE_FROM: u64 = 20 * 60_000;
const OUTAGE_TO: u64 = 28 * 60_000;

/// Per message: receives so far, and 1 once acked, 2 once quarantined.
type State = [u8; 2];

fn run(count: u64, over: u64) -> (u64, u64, u64) {
    let mut state: Vec<State> = vec![[0, 0]; count as usize];
    // Retry level k (after the k-th failure) holds (due, message) in
    // time order: every entry of a level was scheduled with the same delay.
    let mut levels: Vec<VecDeque<(u64, u32)>> = vec![VecDeque::new(); MAX_RECEIVES as usize - 1];
    let (mut deliveries, mut acked, mut quarantined) = (0u64, 0u64, 0u64);
    let mut next = 0u64;
    loop {
        let arrival = (next < count).then(|| (next as u128 * over as u128 / count as u128) as u64);
        // The earliest of the next arrival and each level's head (ties:
        // the arrival first, then the lower level; totals do not depend on
        // the order at one instant).
        let mut best: Option<(u64, usize)> = arrival.map(|t| (t, usize::MAX));
        for (k, level) in levels.iter().enumerate() {
            if let Some(&(due, _)) = level.front()
                && best.is_none_or(|(t, _)| due < t)
            {
                best = Some((due, k));
            }
        }
        let Some((now, from)) = best else { break };
        let m = if from == usize::MAX {
            next += 1;
            (next - 1) as u32
        } else {
            levels[from].pop_front().map_or(0, |(_, m)| m)
        };
        let s = &mut state[m as usize];
        s[0] += 1;
        deliveries += 1;
        if (OUTAGE_FROM..OUTAGE_TO).contains(&now) {
            if s[0] >= MAX_RECEIVES {
                s[1] = 2;
                quarantined += 1;
            } else {
                let delay = BASE << (s[0] - 1);
                levels[s[0] as usize - 1].push_back((now + delay, m));
            }
        } else {
            s[1] = 1;
            acked += 1;
        }
    }
    (deliveries, acked, quarantined)
}

fn main() {
    // `cargo bench` adds `--bench`; the numbers are ours.
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (count, over) = match numbers[..] {
        [count, over] => (count, over),
        _ => (100_000, 3_600_000),
    };
    let (deliveries, acked, quarantined) = run(count, over);
    println!(
        "bound: {count} messages over {over} ms: deliveries {deliveries}, acked {acked}, quarantined {quarantined}; {:.3} s CPU",
        cpu::cpu_seconds()
    );
}
