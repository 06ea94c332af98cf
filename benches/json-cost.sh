#!/usr/bin/env bash
# What `--format json` costs on top of a plain run (docs/benchmarks.md):
# benches/full-transcript-10k.toml, 10,000 messages with every transition
# kept (a 17 MB document), run RUNS times in a row plain and RUNS times
# with `--format json` (30 unless set); the CPU seconds of each batch of
# runs (user + system of the runs themselves) and their ratio, PAIRS
# pairs (5 unless set), then the median ratio. A batch of runs, not one,
# since a plain run takes about 2 ms and `times` counts milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
PAIRS="${PAIRS:-5}"
RUNS="${RUNS:-30}"
file=benches/full-transcript-10k.toml
# BIN: another build to measure (this tree's dist build unless set).
bin="${BIN:-./target/dist/scenario-run}"
# runs ARGS...: CPU seconds of RUNS runs of the file with ARGS: user +
# system of the finished children, as `times` reports them (each run's
# process from the fork to its exit; the shell's own share of the fork
# is not counted).
runs() {
  (
    for ((i = 0; i < RUNS; i++)); do "$bin" --quiet "$@" "$file" >/dev/null; done
    times
  ) | tail -1 | sed 's/[ms]/ /g' | awk '{ print $1 * 60 + $2 + $3 * 60 + $4 }'
}
ratios=()
for _ in $(seq "$PAIRS"); do
  plain="$(runs)"
  json="$(runs --format json)"
  r="$(awk -v a="$plain" -v b="$json" 'BEGIN { printf "%.2f", b / a }')"
  ratios+=("$r")
  echo "$RUNS runs: plain ${plain} s CPU, --format json ${json} s CPU, ratio $r"
done
echo "median of ${#ratios[@]} pairs: $(median "${ratios[@]}")"
