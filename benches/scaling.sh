#!/usr/bin/env bash
# Cost against size (README, Benchmarks): the outage example at 10 and 20
# million messages, over the same hour (twice the rate) and at the same
# rate (twice the time). Prints CPU seconds (user + system, the whole
# process) and the 20M/10M ratio of each pair, three pairs each.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
file() {
  printf '[scenario]\nname = "outage example"\n[delivery]\nmax_receives = 6\nbackoff = { base = "1s", jitter = "none" }\n[[outage]]\nfrom = "20m"\nduration = "8m"\n[[traffic]]\ncount = %s\nover = "%s"\n' "$1" "$2" >"$3"
}
cpu() {
  { /usr/bin/time -f '%U %S' ./target/release/scenario-run --quiet "$1" >/dev/null; } 2>&1 | tail -1 | awk '{ print $1 + $2 }'
}
for variant in "same-hour 1h 1h" "same-rate 100h 200h"; do
  read -r name over10 over20 <<<"$variant"
  file 10000000 "$over10" "$dir/10.toml"
  file 20000000 "$over20" "$dir/20.toml"
  for _ in 1 2 3; do
    a="$(cpu "$dir/10.toml")"
    b="$(cpu "$dir/20.toml")"
    echo "$name: 10M ${a} s CPU, 20M ${b} s CPU, ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
  done
done
