# Shared by the benchmark scripts (sourced, not run): the outage example
# of scenarios/17 at any size, and one run of scenario-run measured.

# outage_file COUNT OVER FILE: the outage example with COUNT messages
# arriving evenly over OVER (a duration such as "1h").
outage_file() {
  printf '[scenario]\nname = "outage example, %s messages over %s"\n[delivery]\nmax_receives = 6\nbackoff = { base = "1s", jitter = "none" }\n[[outage]]\nfrom = "20m"\nduration = "8m"\n[[traffic]]\ncount = %s\nover = "%s"\n' \
    "$1" "$2" "$1" "$2" >"$3"
}

# run_measured FILE OUT: runs FILE with --format json into OUT and prints
# its CPU seconds (user + system, the whole process), to the millisecond
# (bash's `time`; /usr/bin/time rounds to 10 ms, a tenth of a 1M run).
run_measured() {
  local TIMEFORMAT='%3U %3S'
  { time ./target/dist/scenario-run --quiet --format json "$1" >"$2" 2>/dev/null; } 2>&1 | tail -1 | awk '{ print $1 + $2 }'
}

# totals_of OUT: deliveries, acked and quarantined of a --format json output.
totals_of() {
  grep -oE '"(deliveries|acked|quarantined)": [0-9]+' "$1" | head -3 | awk '{ printf "%s ", $2 }'
}

# How many pairs each comparison runs (PAIRS=N to change it).
PAIRS="${PAIRS:-5}"

# ratio A B: A / B to one decimal ("inf" when B is 0).
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'
}

# median NUMBER...: the median (the mean of the middle two for an even
# count). A pair of runs can fall in a slow moment of this shared machine
# that the other misses, so each comparison is judged on the median of
# its pairs' ratios, with every pair printed.
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# side_by_side LABEL VARIANT...: for each variant "NAME COUNT OVER OVER_MS",
# PAIRS runs of scenario-run and of the caller's `other COUNT OVER_MS`
# (which prints one line ending in "; SECONDS s CPU"); prints both with
# the totals and their CPU ratio, LABEL being "scenario-run/X" (ours over
# the other's) or "X/scenario-run" (the other's over ours), then the
# median of the ratios.
side_by_side() {
  local label="$1"
  shift
  local dir
  dir="$(mktemp -d)"
  for variant in "$@"; do
    read -r name count over over_ms <<<"$variant"
    outage_file "$count" "$over" "$dir/$name.toml"
    local ratios=()
    for _ in $(seq "$PAIRS"); do
      local engine totals line cpu r
      engine="$(run_measured "$dir/$name.toml" "$dir/out.json")"
      totals="$(totals_of "$dir/out.json")"
      line="$(other "$count" "$over_ms" | tail -1)"
      cpu="$(sed -E 's/.*; ([0-9.]+) s CPU/\1/' <<<"$line")"
      if [[ "$label" == scenario-run/* ]]; then
        r="$(ratio "$engine" "$cpu")"
      else
        r="$(ratio "$cpu" "$engine")"
      fi
      ratios+=("$r")
      echo "$name: scenario-run ${engine} s CPU (deliveries acked quarantined: ${totals}); ${line#*: }; $label $r"
    done
    echo "$name: $label, median of ${#ratios[@]} pairs: $(median "${ratios[@]}")"
  done
  rm -rf "$dir"
}
