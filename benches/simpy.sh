#!/usr/bin/env bash
# scenario-run against SimPy (docs/benchmarks.md): the outage example at
# 1,000,000 messages, over the same hour and at the same rate (10 hours),
# run by scenario-run and by benches/simpy_outage.py (a SimPy process per
# message); both must give the same totals. Prints CPU seconds (user +
# system, the whole process) and their ratio, PAIRS pairs each (5 unless
# set), then the median ratio. SimPy is installed from PyPI into
# target/simpy-venv the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
# shellcheck source=benches/outage.sh
source benches/outage.sh
venv=target/simpy-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet simpy==4.1.1
fi
other() { "$venv/bin/python" benches/simpy_outage.py "$1" "$2"; }
side_by_side "SimPy/scenario-run" "same-hour 1000000 1h 3600000" "same-rate 1000000 10h 36000000"
