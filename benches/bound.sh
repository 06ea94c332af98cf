#!/usr/bin/env bash
# The engine against its bound (README, Benchmarks): the outage example at
# ten million messages, over the same hour and at the same rate (100
# hours), run by scenario-run and by the bare loop of benches/bound.rs;
# both must give the same totals. Prints CPU seconds (user + system, the
# whole process) and their ratio, three runs each.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
cargo bench --locked --quiet --bench bound --no-run 2>/dev/null
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for variant in "same-hour 10000000 1h 3600000" "same-rate 10000000 100h 360000000"; do
  read -r name count over over_ms <<<"$variant"
  file="$dir/$name.toml"
  printf '[scenario]\nname = "outage example, %s"\n[delivery]\nmax_receives = 6\nbackoff = { base = "1s", jitter = "none" }\n[[outage]]\nfrom = "20m"\nduration = "8m"\n[[traffic]]\ncount = %s\nover = "%s"\n' \
    "$name" "$count" "$over" >"$file"
  for _ in 1 2 3; do
    engine="$( { /usr/bin/time -f '%U %S' ./target/release/scenario-run --quiet --format json "$file" >"$dir/out.json"; } 2>&1 | tail -1 | awk '{ print $1 + $2 }')"
    totals="$(grep -oE '"(deliveries|acked|quarantined)": [0-9]+' "$dir/out.json" | head -3 | awk '{ printf "%s ", $2 }')"
    bound_line="$(cargo bench --locked --quiet --bench bound -- "$count" "$over_ms" 2>/dev/null | tail -1)"
    bound="$(sed -E 's/.*; ([0-9.]+) s CPU/\1/' <<<"$bound_line")"
    echo "$name: scenario-run ${engine} s CPU (deliveries acked quarantined: ${totals}); ${bound_line#bound: }; ratio $(awk -v a="$engine" -v b="$bound" 'BEGIN { printf "%.1f", a / b }')"
  done
done
