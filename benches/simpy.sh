#!/usr/bin/env bash
# scenario-run against SimPy (README, Benchmarks): the outage example at
# 1,000,000 messages, over the same hour and at the same rate (10 hours),
# run by scenario-run and by benches/simpy_outage.py (a SimPy process per
# message); both must give the same totals. Prints CPU seconds (user +
# system, the whole process) and their ratio, three runs each. SimPy is
# installed from PyPI into target/simpy-venv the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
venv=target/simpy-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet simpy==4.1.1
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for variant in "same-hour 1000000 1h 3600000" "same-rate 1000000 10h 36000000"; do
  read -r name count over over_ms <<<"$variant"
  file="$dir/$name.toml"
  outage_file "$count" "$over" "$file"
  for _ in 1 2 3; do
    engine="$(run_measured "$file" "$dir/out.json")"
    totals="$(totals_of "$dir/out.json")"
    simpy_line="$("$venv/bin/python" benches/simpy_outage.py "$count" "$over_ms" | tail -1)"
    simpy="$(sed -E 's/.*; ([0-9.]+) s CPU/\1/' <<<"$simpy_line")"
    echo "$name: scenario-run ${engine} s CPU (deliveries acked quarantined: ${totals}); ${simpy_line#simpy: }; SimPy/scenario-run $(awk -v a="$simpy" -v b="$engine" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print "inf" }')"
  done
done
