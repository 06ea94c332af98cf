#!/usr/bin/env bash
# Cost against size (README, Benchmarks): the outage example at 10 and 20
# million messages, over the same hour (twice the rate) and at the same
# rate (twice the time), and benches/deep-jitter.toml at 5 and 10 million
# (twice the retries waiting in the radix heap). Prints CPU seconds (user
# + system, the whole process) and the ratio of each pair, three pairs each.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for variant in "same-hour 1h 1h" "same-rate 100h 200h"; do
  read -r name over10 over20 <<<"$variant"
  outage_file 10000000 "$over10" "$dir/10.toml"
  outage_file 20000000 "$over20" "$dir/20.toml"
  for _ in 1 2 3; do
    a="$(run_measured "$dir/10.toml" /dev/null)"
    b="$(run_measured "$dir/20.toml" /dev/null)"
    echo "$name: 10M ${a} s CPU, 20M ${b} s CPU, ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
  done
done
sed 's/count = 5000000/count = 10000000/' benches/deep-jitter.toml >"$dir/jitter-10.toml"
for _ in 1 2 3; do
  a="$(run_measured benches/deep-jitter.toml /dev/null)"
  b="$(run_measured "$dir/jitter-10.toml" /dev/null)"
  echo "deep-jitter: 5M ${a} s CPU, 10M ${b} s CPU, ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
done
