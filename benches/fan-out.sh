#!/usr/bin/env bash
# A million writes to three sinks under each strategy (and the hybrid of
# section 28.1), and the same file
# without [write] (section 19: every effect to every sink at once): wall
# time and peak memory, three rounds (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
file=benches/fan-out-million.toml
for _ in 1 2 3; do
  /usr/bin/time -f "no [write] (section 19): %e s wall, %M KB peak" \
    ./target/dist/scenario-run --quiet "$file" --set 'sink.1.faults=[]' --set 'sink.2.faults=[]' >/dev/null
  for strategy in direct outbox two_phase saga; do
    /usr/bin/time -f "$strategy: %e s wall, %M KB peak" \
      ./target/dist/scenario-run --quiet "$file" --set "write.strategy=\"$strategy\"" >/dev/null
  done
  # Section 28.1's hybrid: the counter a saga step, the stores an outbox.
  /usr/bin/time -f "hybrid (saga + outbox): %e s wall, %M KB peak" \
    ./target/dist/scenario-run --quiet "$file" --set 'write.strategy="outbox"' \
    --set 'sink.1.strategy="saga"' --set 'write.outbox_dead_letter="compensate"' >/dev/null
done
