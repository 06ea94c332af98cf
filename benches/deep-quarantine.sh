#!/usr/bin/env bash
# Thousands of operator steps over a deep quarantine (docs/benchmarks.md):
# 100,000 messages quarantined, then 3,000 steps each redriving one of them
# by name. Each inspection touches only what it changes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
file="$(mktemp --suffix=.toml)"
trap 'rm -f "$file"' EXIT
{
  printf '[delivery]\nmax_receives = 1\nretry_interval = "1s"\n[quarantine]\nretention = "1d"\n'
  printf '[[traffic]]\ncount = 100000\nover = "1m"\nid_prefix = "m"\nfaults = [{ fail = { until = "repair" } }]\n'
  for i in $(seq 1 3000); do
    printf '[[operator]]\nwait = "1s"\naction = "redrive"\nonly = ["m%d"]\n' "$i"
  done
} >"$file"
for _ in 1 2 3; do
  /usr/bin/time -f "3,000 operator steps over a 100,000-deep quarantine: %e s wall, %M KB peak" \
    ./target/dist/scenario-run --quiet "$file" >/dev/null
done
