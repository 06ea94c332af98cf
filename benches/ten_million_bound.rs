//! The bound of `benches/ten-million.toml` (docs/benchmarks.md), next to
//! `benches/bound.rs` for the outage example: a bare loop that does the
//! file's events with two bytes of state a message and the deduplication
//! store's expiry (four bytes an intent). Two blocks of even arrivals over
//! a day (9,000,000, then 1,000,000 whose first acknowledgement is lost;
//! the first block first at one instant), a one-hour outage from 6h,
//! full-jitter retries (base 1s, cap 1m, drawn from the scenario's
//! ChaCha8 stream 0 in event order, as scenario-run draws them), a
//! 10-minute result retention, a quarantine after the fourth failed
//! delivery of a cycle, and the operator 10 minutes after the last
//! delivery redriving every quarantined message in the order it entered.
//!
//! `cargo bench --bench ten_million_bound` prints the run's totals (which
//! must equal scenario-run's for the file) and the CPU time of the whole
//! process; `benches/bound.sh` runs both side by side.

#[path = "common/cpu.rs"]
mod cpu;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DAY: u64 = 86_400_000;
const PLAIN: u64 = 9_000_000;
const LOST: u64 = 1_000_000;
const OUTAGE: std::ops::Range<u64> = 6 * 3_600_000..7 * 3_600_000;
const MAX_RECEIVES: u8 = 4;
const BASE: u64 = 1_000;
const CAP: u64 = 60_000;
const RETENTION: u64 = 600_000;
const WAIT: u64 = 600_000;

/// Per message: receives in this cycle, and receives over its life (both
/// stay small: at most 8).
type State = [u8; 2];

struct Run {
    state: Vec<State>,
    /// Per intent: when its stored result expires (0: none stored).
    expires: Vec<u32>,
    retries: BinaryHeap<Reverse<(u64, u64, u32)>>,
    quarantine: Vec<u32>,
    jitter: ChaCha8Rng,
    sequence: u64,
    deliveries: u64,
    acked: u64,
}

impl Run {
    fn deliver(&mut self, m: u32, now: u64) {
        self.deliveries += 1;
        let s = &mut self.state[m as usize];
        s[0] += 1;
        s[1] += 1;
        let failed = if OUTAGE.contains(&now) {
            true
        } else {
            let expires = &mut self.expires[m as usize];
            if now >= *expires as u64 {
                *expires = (now + RETENTION) as u32;
            }
            // The first delivery of the second block loses its ack.
            m as u64 >= PLAIN && s[1] == 1
        };
        if !failed {
            self.acked += 1;
        } else if s[0] >= MAX_RECEIVES {
            self.quarantine.push(m);
        } else {
            let d = (BASE << (s[0] - 1)).min(CAP);
            let due = now + self.jitter.random_range(0..=d);
            self.retries.push(Reverse((due, self.sequence, m)));
            self.sequence += 1;
        }
    }
}

fn arrival(j: u64, count: u64) -> u64 {
    (j * DAY) / count
}

fn run() -> (u64, u64, u64) {
    let mut run = Run {
        state: vec![[0, 0]; (PLAIN + LOST) as usize],
        expires: vec![0; (PLAIN + LOST) as usize],
        retries: BinaryHeap::new(),
        quarantine: Vec::new(),
        jitter: ChaCha8Rng::seed_from_u64(0),
        sequence: PLAIN + LOST,
        deliveries: 0,
        acked: 0,
    };
    let (mut plain, mut lost) = (0u64, 0u64);
    let mut last = 0;
    loop {
        // Arrivals first at one instant, the first block before the second;
        // then retries by (due, sequence).
        let a = (plain < PLAIN).then(|| arrival(plain, PLAIN));
        let b = (lost < LOST).then(|| arrival(lost, LOST));
        let r = run.retries.peek().map(|Reverse((due, _, _))| *due);
        let Some(now) = [a, b, r].into_iter().flatten().min() else {
            break;
        };
        let m = if a == Some(now) {
            plain += 1;
            (plain - 1) as u32
        } else if b == Some(now) {
            lost += 1;
            (PLAIN + lost - 1) as u32
        } else {
            run.retries.pop().map_or(0, |Reverse((_, _, m))| m)
        };
        run.deliver(m, now);
        last = now;
    }
    // The operator: every quarantined message again, in entry order, each
    // in a new cycle.
    let inspection = last + WAIT;
    let quarantined = std::mem::take(&mut run.quarantine);
    for &m in &quarantined {
        run.state[m as usize][0] = 0;
    }
    for m in quarantined {
        run.deliver(m, inspection);
    }
    (run.deliveries, run.acked, run.quarantine.len() as u64)
}

fn main() {
    let (deliveries, acked, quarantined) = run();
    println!(
        "ten-million bound: {} messages: deliveries {deliveries}, acked {acked}, quarantined {quarantined}; {:.3} s CPU",
        PLAIN + LOST,
        cpu::cpu_seconds()
    );
}
