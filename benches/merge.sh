#!/usr/bin/env bash
# A batch of 8,000 scenarios (the bundled ones with up to 10,000 messages,
# copied over and over; the two sweeps among them split across shards) run
# as 8 shards of 1,000 scenarios each, then merged: the figures in
# README.md. Prints each shard's and the merge's wall time and peak memory.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/scenarios"
small=()
for f in scenarios/*.toml; do
  case "$f" in
    *17-outage-100k*|*26-poisson-hour*|*30-outage-alarms*) ;; # 100,000 messages each
    *) small+=("$f") ;;
  esac
done
n=0
while [ "$n" -lt 8000 ]; do
  for f in "${small[@]}"; do
    [ "$n" -lt 8000 ] || break
    cp "$f" "$work/scenarios/$(printf '%05d' "$n")-$(basename "$f")"
    n=$((n + 1))
  done
done
for i in 1 2 3 4 5 6 7 8; do
  /usr/bin/time -f "shard $i/8 of 8,000 scenarios (JSON output, Markdown reports): %e s wall, %M KB peak" \
    ./target/release/scenario-run --quiet --shard "$i/8" --format json \
    --report "$work/reports-$i" --report-format markdown \
    "$work/scenarios/*.toml" >"$work/shard-$i.json" || true
done
ls -l "$work"/shard-*.json | awk '{ s += $5 } END { printf "shard results: %.0f MB in all\n", s / 1e6 }'
for _ in 1 2 3; do
  /usr/bin/time -f "merge of the 8 shards' JSON outputs: %e s wall, %M KB peak" \
    ./target/release/scenario-run merge --quiet "$work/merged" "$work"/shard-*.json >/dev/null || true
done
for _ in 1 2 3; do
  /usr/bin/time -f "merge of the 8 shards' index.json, copying their reports: %e s wall, %M KB peak" \
    ./target/release/scenario-run merge --quiet "$work/merged-reports" "$work"/reports-*/index.json >/dev/null || true
done
