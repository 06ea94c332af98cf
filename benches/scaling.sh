#!/usr/bin/env bash
# Cost against size (docs/benchmarks.md): the outage example at 10 and 20
# million messages, over the same hour (twice the rate) and at the same
# rate (twice the time), and benches/deep-jitter.toml at 5 and 10 million
# (twice the retries waiting in the radix heap). Prints CPU seconds (user
# + system, the whole process) and the ratio of each pair, PAIRS pairs each
# (5 unless set), then the median ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# pairs NAME SMALL LARGE LABELS: PAIRS runs of SMALL then LARGE, each
# pair's CPU ratio, then the median ratio.
pairs() {
  local a b r ratios=()
  for _ in $(seq "$PAIRS"); do
    a="$(run_measured "$2" /dev/null)"
    b="$(run_measured "$3" /dev/null)"
    r="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
    ratios+=("$r")
    echo "$1: $4 ${a} s CPU and ${b} s CPU, ratio $r"
  done
  echo "$1: median of ${#ratios[@]} pairs: $(median "${ratios[@]}")"
}
for variant in "same-hour 1h 1h" "same-rate 100h 200h"; do
  read -r name over10 over20 <<<"$variant"
  outage_file 10000000 "$over10" "$dir/10.toml"
  outage_file 20000000 "$over20" "$dir/20.toml"
  pairs "$name" "$dir/10.toml" "$dir/20.toml" "10M and 20M:"
done
sed 's/count = 5000000/count = 10000000/' benches/deep-jitter.toml >"$dir/jitter-10.toml"
pairs deep-jitter benches/deep-jitter.toml "$dir/jitter-10.toml" "5M and 10M:"
