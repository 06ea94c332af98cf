#!/usr/bin/env bash
# The engine against its bound in instructions (docs/benchmarks.md): the
# pairs of benches/bound.sh counted by valgrind's callgrind, which gives
# the same count on every run, where CPU time on a shared machine varies
# by a third. Prints each program's instructions and their ratio.
# Needs valgrind; takes about fifteen minutes (valgrind runs programs
# about fifty times slower).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# instructions COMMAND...: instructions COMMAND executes (output dropped).
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -nE 's/.*I[[:space:]]+refs:[[:space:]]+([0-9,]+).*/\1/p' | tr -d ,
}
# bench NAME: the path of the bare loop `cargo bench --bench NAME` builds.
bench() {
  cargo bench --locked --bench "$1" --no-run 2>&1 |
    sed -nE 's/.*\((target\/release\/deps\/[^)]+)\).*/\1/p' | tail -1
}
# pair LABEL FILE BOUND...: instructions of scenario-run on FILE (with
# --format json, as bound.sh runs it) and of the bound command.
pair() {
  local label="$1" file="$2"
  shift 2
  local ours theirs
  ours="$(instructions ./target/dist/scenario-run --quiet --format json "$file")"
  theirs="$(instructions "$@")"
  echo "$label: scenario-run $((ours / 1000000)) M instructions; bound $((theirs / 1000000)) M; scenario-run/bound $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')"
}
outage_file 10000000 1h "$dir/same-hour.toml"
outage_file 10000000 100h "$dir/same-rate.toml"
pair same-hour "$dir/same-hour.toml" "$(bench bound)" 10000000 3600000
pair same-rate "$dir/same-rate.toml" "$(bench bound)" 10000000 360000000
pair ten-million benches/ten-million.toml "$(bench ten_million_bound)"
pair lab benches/lab-ten-million.toml "$(bench lab_bound)"
