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
  printf '[scenario]\nname = "outage example, %s"\n[delivery]\nmax_receives = 6\nbackoff = { base = "1s", jitter = "none" }\n[[outage]]\nfrom = "20m"\nduration = "8m"\n[[traffic]]\ncount = %s\nover = "%s"\n' \
    "$name" "$count" "$over" >"$file"
  for _ in 1 2 3; do
    engine="$( { /usr/bin/time -f '%U %S' ./target/release/scenario-run --quiet --format json "$file" >"$dir/out.json"; } 2>&1 | tail -1 | awk '{ print $1 + $2 }')"
    totals="$(grep -oE '"(deliveries|acked|quarantined)": [0-9]+' "$dir/out.json" | head -3 | awk '{ printf "%s ", $2 }')"
    simpy_line="$("$venv/bin/python" benches/simpy_outage.py "$count" "$over_ms" | tail -1)"
    simpy="$(sed -E 's/.*; ([0-9.]+) s CPU/\1/' <<<"$simpy_line")"
    echo "$name: scenario-run ${engine} s CPU (deliveries acked quarantined: ${totals}); ${simpy_line#simpy: }; SimPy/scenario-run $(awk -v a="$simpy" -v b="$engine" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print "inf" }')"
  done
done
