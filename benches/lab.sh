#!/usr/bin/env bash
# The lab's start-up and the time to serve each bundled scenario's page
# the first time (a run and its HTML report: no cache), then once more
# (from the cache), measured by curl on 127.0.0.1 (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --locked --quiet
out=$(mktemp)
start=$(date +%s%N)
./target/dist/scenario-run lab 'scenarios/*.toml' >"$out" &
pid=$!
trap 'kill -INT $pid 2>/dev/null || true; rm -f "$out"' EXIT
until grep -q '^lab: http' "$out"; do sleep 0.01; done
echo "start-up: $(( ($(date +%s%N) - start) / 1000000 )) ms"
url=$(sed -n 's/^lab: \(http[^ ]*\) .*/\1/p' "$out")
for f in scenarios/*.toml; do
  name=$(basename "$f" .toml)
  first=$(curl -s -o /dev/null -w '%{time_total}' "${url}${name}.html")
  again=$(curl -s -o /dev/null -w '%{time_total}' "${url}${name}.html")
  printf '%s %s %s\n' "$first" "$again" "$name"
done | sort -n | tee /dev/stderr | awk '{ a[NR] = $1; b[NR] = $2; n = $3 } END {
  printf "first serve (a run): median %.0f ms, slowest %.0f ms (%s)\n", a[int((NR + 1) / 2)] * 1000, a[NR] * 1000, n;
  printf "cached: median %.1f ms\n", b[int((NR + 1) / 2)] * 1000 }'

# Reruns of the slowest page with a changed value (12 values of
# write.relay_retry, never cached): what a learner waits for in the lab.
page="${url}48-saga-compensation-one-million-writes.html"
for v in 2 3 4 5 6 7 8 9 10 11 12 13; do
  curl -s -o /dev/null -w '%{time_total}\n' "${page}?write.relay_retry=${v}s"
done | sort -n | awk '{ a[NR] = $1 } END {
  printf "reruns of scenario 48 (12 values): median %.0f ms, min %.0f, max %.0f\n", a[int((NR + 1) / 2)] * 1000, a[1] * 1000, a[NR] * 1000 }'
