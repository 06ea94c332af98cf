//! Benchmarks of the engine, in process: the worked example and a
//! ten-million-message generated run. `cargo bench` prints the figures;
//! `benches/end-to-end.sh` measures whole processes and peak memory.

use std::time::Instant;

use scenario_run::engine::{self, Recorder};
use scenario_run::scenario::load_str;

fn bench(path: &str, rounds: u32) {
    let text = std::fs::read_to_string(path).expect("benchmark input exists");
    let mut best = f64::MAX;
    let mut events = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let (scenario, _) = load_str(path, &text).expect("valid benchmark input");
        let outcome = engine::run(&scenario, Recorder::Off).expect("run finishes");
        best = best.min(start.elapsed().as_secs_f64());
        events = outcome.totals.deliveries;
    }
    println!(
        "{path}: best of {rounds}: {:.1} ms ({events} deliveries)",
        best * 1000.0
    );
}

fn main() {
    bench("scenarios/17-outage-100k-per-hour.toml", 20);
    bench("benches/ten-million.toml", 3);
    bench("benches/lab-ten-million.toml", 3);
}
