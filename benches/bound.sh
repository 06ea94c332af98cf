#!/usr/bin/env bash
# The engine against its bound (docs/benchmarks.md): the outage example at
# ten million messages, over the same hour and at the same rate (100
# hours), run by scenario-run and by the bare loop of benches/bound.rs,
# then benches/ten-million.toml and the lab (benches/lab-ten-million.toml)
# against their own bare loops (benches/ten_million_bound.rs and
# benches/lab_bound.rs); each pair must give the same totals. Prints CPU
# seconds (user + system, the whole process) and their ratio for each of
# PAIRS pairs (5 unless set), then the median ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
cargo bench --locked --quiet --bench bound --no-run 2>/dev/null
other() { cargo bench --locked --quiet --bench bound -- "$1" "$2" 2>/dev/null; }
side_by_side "scenario-run/bound" "same-hour 10000000 1h 3600000" "same-rate 10000000 100h 360000000"
# against NAME FILE BENCH: PAIRS runs of scenario-run on FILE and of the
# bare loop `cargo bench --bench BENCH` for the same file, then the median
# of their ratios.
against() {
  cargo bench --locked --quiet --bench "$3" --no-run 2>/dev/null
  local out engine line cpu r ratios=()
  out="$(mktemp)"
  for _ in $(seq "$PAIRS"); do
    engine="$(run_measured "$2" "$out")"
    line="$(cargo bench --locked --quiet --bench "$3" 2>/dev/null | tail -1)"
    cpu="$(sed -E 's/.*; ([0-9.]+) s CPU/\1/' <<<"$line")"
    r="$(ratio "$engine" "$cpu")"
    ratios+=("$r")
    echo "$1: scenario-run ${engine} s CPU (deliveries acked quarantined: $(totals_of "$out")); ${line#*: }; scenario-run/bound $r"
  done
  echo "$1: scenario-run/bound, median of ${#ratios[@]} pairs: $(median "${ratios[@]}")"
  rm -f "$out"
}
against ten-million benches/ten-million.toml ten_million_bound
against lab benches/lab-ten-million.toml lab_bound
