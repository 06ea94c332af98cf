#!/usr/bin/env bash
# `merge` given forged 100 MB shards (docs/budgets.md, docs/cli.md): each
# shape of shard is merged under a 4 GB address-space limit, and its peak
# memory printed, against `app::merge::MEMORY_PER_INPUT_BYTE` (32) per
# byte. The shapes: a sweep's row of one-character cells (the most memory
# per byte found), an entry's empty testcases, whole entries copied, and a
# totals array of zeros (refused as it is read). Needs python3 and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
bin=./target/dist/scenario-run
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" --quiet --report "$work/base" --report-format json \
  scenarios/01-dlq-is-not-proof-nothing-happened.toml scenarios/28-poison-lab-sweep.toml >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
index = open(f"{work}/base/index.json").read()
size = 100_000_000
def insert(opening, items):
    at = index.index(opening) + len(opening)
    empty = index[at:].lstrip()[:1] in "]}"
    return index[:at] + items + ("" if empty else ",") + index[at:]
shapes = {
    "cells": insert('"row": [', ",".join(['""'] * (size // 3))),
    "cases": insert('"cases": [', ",".join(['{"name":"","line":null,"failure":null}'] * (size // 39))),
    "totals": insert('"totals": {', '"x": [' + ",".join(["0"] * (size // 2)) + "]"),
}
record = json.loads(index)
entry = record["scenarios"][0]
n = size // len(json.dumps(entry))
record["scenarios"] = [dict(entry, position=k) for k in range(n)]
shapes["entries"] = json.dumps(record)
for name, text in shapes.items():
    with open(f"{work}/{name}.json", "w") as f:
        f.write(text)
PY
for shape in cells cases entries totals; do
  bytes=$(stat -c %s "$work/$shape.json")
  set +e
  ( ulimit -v 4194304; /usr/bin/time -f "%M %e" -o "$work/time" \
      "$bin" merge --quiet "$work/out-$shape" "$work/$shape.json" >/dev/null 2>"$work/err" )
  code=$?
  set -e
  read -r kb seconds < <(tail -1 "$work/time")
  echo "$shape: $((bytes / 1000000)) MB, exit $code, peak $((kb / 1024)) MB ($((kb * 1024 / bytes)) bytes per byte), ${seconds} s"
done
