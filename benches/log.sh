#!/usr/bin/env bash
# A 16-partition log with a restart against the same traffic through a
# queue: wall time and peak memory, three pairs (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
for _ in 1 2 3; do
  /usr/bin/time -f "queue, 10M records: %e s wall, %M KB peak" \
    ./target/dist/scenario-run --quiet benches/log-ten-million-queue.toml >/dev/null
  /usr/bin/time -f "log, 16 partitions, a stale restart: %e s wall, %M KB peak" \
    ./target/dist/scenario-run --quiet benches/log-ten-million.toml >/dev/null
done
