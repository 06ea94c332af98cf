#!/usr/bin/env bash
# `merge` at scale: the figures in docs/benchmarks.md. A batch of 8,000 scenarios
# (the bundled ones of up to 10,000 messages copied over and over, 592 of
# them the two sweeps, whose points the shards split) runs as 8 shards of
# about 1,000 scenarios, each writing Markdown reports (and so the
# index.json that merge reads); then the same for the first 1,000 files.
# Prints the wall time and peak memory of each merge: of the index.json
# files alone, and of the report folders (merge copies every report).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
bin=./target/dist/scenario-run
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/all" "$work/first"
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
    name="$(printf '%05d' "$n")-$(basename "$f")"
    cp "$f" "$work/all/$name"
    [ "$n" -ge 1000 ] || cp "$f" "$work/first/$name"
    n=$((n + 1))
  done
done
for batch in all first; do
  for i in 1 2 3 4 5 6 7 8; do
    "$bin" --quiet --shard "$i/8" --report "$work/$batch-reports-$i" \
      --report-format markdown "$work/$batch/*.toml" >/dev/null || true
    mkdir -p "$work/$batch-index-$i"
    cp "$work/$batch-reports-$i/index.json" "$work/$batch-index-$i/"
  done
  count=$(ls "$work/$batch" | wc -l)
  for _ in 1 2 3; do
    rm -rf "$work/merged"
    /usr/bin/time -f "merge of 8 shards' index.json, $count scenarios, index in 3 formats and JUnit: %e s wall, %M KB peak" \
      "$bin" merge --quiet "$work/merged" "$work/$batch"-index-*/index.json >/dev/null || true
  done
  for _ in 1 2 3; do
    rm -rf "$work/merged"
    /usr/bin/time -f "the same, copying the shards' reports: %e s wall, %M KB peak" \
      "$bin" merge --quiet "$work/merged" "$work/$batch"-reports-*/index.json >/dev/null || true
  done
done
