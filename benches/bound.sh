#!/usr/bin/env bash
# The engine against its bound (README, Benchmarks): the outage example at
# ten million messages, over the same hour and at the same rate (100
# hours), run by scenario-run and by the bare loop of benches/bound.rs;
# both must give the same totals. Prints CPU seconds (user + system, the
# whole process) and their ratio, three runs each.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
cargo bench --locked --quiet --bench bound --no-run 2>/dev/null
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for variant in "same-hour 10000000 1h 3600000" "same-rate 10000000 100h 360000000"; do
  read -r name count over over_ms <<<"$variant"
  file="$dir/$name.toml"
  outage_file "$count" "$over" "$file"
  for _ in 1 2 3; do
    engine="$(run_measured "$file" "$dir/out.json")"
    totals="$(totals_of "$dir/out.json")"
    bound_line="$(cargo bench --locked --quiet --bench bound -- "$count" "$over_ms" 2>/dev/null | tail -1)"
    bound="$(sed -E 's/.*; ([0-9.]+) s CPU/\1/' <<<"$bound_line")"
    echo "$name: scenario-run ${engine} s CPU (deliveries acked quarantined: ${totals}); ${bound_line#bound: }; ratio $(awk -v a="$engine" -v b="$bound" 'BEGIN { printf "%.1f", a / b }')"
  done
done
