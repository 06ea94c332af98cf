//! The lab's bound (docs/benchmarks.md): a bare loop that does the events
//! of `benches/lab-ten-million.toml` with two bytes of state a message,
//! next to `benches/bound.rs` for the outage example. The same draws as
//! scenario-run (the block's ChaCha8 stream 1: every Poisson offset, sorted,
//! then one mix draw per message; stream 0 for the jitter), 256 workers
//! busy 20 ms a delivery, per-key ordering over 10,000 groups (only a
//! group's head is eligible; it stays the head while it waits for its
//! retry), the ready head that became ready first taken first, a
//! downstream that accepts 200 calls a second, full-jitter retries and a
//! quarantine after the third failed delivery. Nothing else: no
//! measures, no latencies, no census.
//!
//! `cargo bench --bench lab_bound` prints the run's totals (which must
//! equal scenario-run's for the file) and the CPU time of the whole
//! process; `benches/bound.sh` runs both side by side.

#[path = "common/cpu.rs"]
mod cpu;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const COUNT: usize = 10_000_000;
const OVER: u64 = 86_400_000;
const GROUPS: usize = 10_000;
/// The poison kind's share of the 1,000,000 mix draw values.
const POISON_WIDTH: u64 = 10_000;
const WORKERS: u32 = 256;
const SERVICE: u64 = 20;
const LIMIT: u32 = 200;
const WINDOW: u64 = 1_000;
const MAX_RECEIVES: u8 = 3;
const BASE: u64 = 1_000;
const CAP: u64 = 30_000;

/// Per message: receives so far, and whether it is poison.
type State = [u8; 2];

fn run() -> (u64, u64, u64) {
    let mut block = ChaCha8Rng::seed_from_u64(0);
    block.set_stream(1);
    let mut offsets: Vec<u32> = (0..COUNT)
        .map(|_| block.random_range(0..OVER) as u32)
        .collect();
    offsets.sort_unstable();
    let mut state: Vec<State> = (0..COUNT)
        .map(|_| {
            [
                0,
                (block.random_range(0..1_000_000u64) < POISON_WIDTH) as u8,
            ]
        })
        .collect();
    let mut jitter = ChaCha8Rng::seed_from_u64(0);

    // Each group's messages in arrival order; the front is its head.
    let mut groups: Vec<VecDeque<u32>> = vec![VecDeque::new(); GROUPS];
    // Heads that are ready, by (ready at, sequence).
    let mut eligible: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
    // Deliveries in flight end in the order they started: (end, message, ok).
    let mut ends: VecDeque<(u64, u32, bool)> = VecDeque::new();
    let mut retries: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
    let mut sequence = COUNT as u64;
    let (mut busy, mut window, mut calls) = (0u32, u64::MAX, 0u32);
    let (mut deliveries, mut acked, mut quarantined) = (0u64, 0u64, 0u64);
    let mut next = 0usize;
    loop {
        let arrival = offsets.get(next).map(|&o| o as u64);
        let end = ends.front().map(|&(t, _, _)| t);
        let retry = retries.peek().map(|Reverse((t, _, _))| *t);
        // The earliest event; at one instant an arrival first (the totals
        // do not depend on the order at one instant).
        let Some(now) = [arrival, end, retry].into_iter().flatten().min() else {
            break;
        };
        if arrival == Some(now) {
            // An arrival joins its group; it is eligible if it is the head.
            let m = next as u32;
            next += 1;
            let group = &mut groups[m as usize % GROUPS];
            group.push_back(m);
            if group.len() == 1 {
                eligible.push(Reverse((now, m as u64, m)));
            }
        } else if end == Some(now) {
            let Some((_, m, ok)) = ends.pop_front() else {
                break;
            };
            busy -= 1;
            let s = &mut state[m as usize];
            let leaves = if ok {
                acked += 1;
                true
            } else if s[0] >= MAX_RECEIVES {
                quarantined += 1;
                true
            } else {
                let d = (BASE << (s[0] - 1)).min(CAP);
                retries.push(Reverse((now + jitter.random_range(0..=d), sequence, m)));
                sequence += 1;
                false
            };
            if leaves {
                // The next of its group becomes the head, ready since it arrived.
                let group = &mut groups[m as usize % GROUPS];
                group.pop_front();
                if let Some(&h) = group.front() {
                    eligible.push(Reverse((offsets[h as usize] as u64, h as u64, h)));
                }
            }
        } else if let Some(Reverse((due, seq, m))) = retries.pop() {
            eligible.push(Reverse((due, seq, m)));
        }
        // Free workers take the heads that became ready first.
        while busy < WORKERS
            && let Some(Reverse((_, _, m))) = eligible.pop()
        {
            busy += 1;
            deliveries += 1;
            let s = &mut state[m as usize];
            s[0] += 1;
            let ok = s[1] == 0 && {
                if now / WINDOW != window {
                    window = now / WINDOW;
                    calls = 0;
                }
                calls += 1;
                calls <= LIMIT
            };
            ends.push_back((now + SERVICE, m, ok));
        }
    }
    (deliveries, acked, quarantined)
}

fn main() {
    let (deliveries, acked, quarantined) = run();
    println!(
        "lab bound: {COUNT} messages: deliveries {deliveries}, acked {acked}, quarantined {quarantined}; {:.3} s CPU",
        cpu::cpu_seconds()
    );
}
