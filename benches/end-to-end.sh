#!/usr/bin/env bash
# Process start to exit, with peak memory: the figures in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for f in scenarios/17-outage-100k-per-hour.toml benches/ten-million.toml benches/lab-ten-million.toml benches/guarantees-million.toml; do
  for _ in 1 2 3; do
    /usr/bin/time -f "$f: %e s wall, %M KB peak" ./target/dist/scenario-run --quiet "$f" >/dev/null
  done
  for _ in 1 2 3; do
    /usr/bin/time -f "$f with --report (3 formats): %e s wall, %M KB peak" \
      ./target/dist/scenario-run --quiet --report "$out" "$f" >/dev/null
  done
done
# Outputs written as they go: a full transcript (every transition kept).
f=benches/full-transcript-10k.toml
for _ in 1 2 3; do
  /usr/bin/time -f "$f: %e s wall, %U s user, %M KB peak" ./target/dist/scenario-run --quiet "$f" >/dev/null
  /usr/bin/time -f "$f --format json: %e s wall, %U s user, %M KB peak" \
    ./target/dist/scenario-run --quiet --format json "$f" >/dev/null
  /usr/bin/time -f "$f with --report (3 formats): %e s wall, %U s user, %M KB peak" \
    ./target/dist/scenario-run --quiet --report "$out" "$f" >/dev/null
  /usr/bin/time -f "show $f: %e s wall, %U s user, %M KB peak" \
    ./target/dist/scenario-run show "$f" >/dev/null
done
for _ in 1 2 3; do
  /usr/bin/time -f "bundled scenarios with --report (3 formats): %e s wall, %M KB peak" \
    ./target/dist/scenario-run --quiet --report "$out" 'scenarios/*.toml' >/dev/null
done
for jobs in 1 2; do
  for _ in 1 2 3; do
    /usr/bin/time -f "sweep of 27 points of 100,000 messages, --jobs $jobs: %e s wall, %M KB peak" \
      ./target/dist/scenario-run --quiet --jobs "$jobs" benches/sweep-27.toml >/dev/null
  done
done
