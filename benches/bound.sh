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
other() { cargo bench --locked --quiet --bench bound -- "$1" "$2" 2>/dev/null; }
side_by_side "scenario-run/bound" "same-hour 10000000 1h 3600000" "same-rate 10000000 100h 360000000"
