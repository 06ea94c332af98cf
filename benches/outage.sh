# Shared by the benchmark scripts (sourced, not run): the outage example
# of scenarios/17 at any size, and one run of scenario-run measured.

# outage_file COUNT OVER FILE: the outage example with COUNT messages
# arriving evenly over OVER (a duration such as "1h").
outage_file() {
  printf '[scenario]\nname = "outage example, %s messages over %s"\n[delivery]\nmax_receives = 6\nbackoff = { base = "1s", jitter = "none" }\n[[outage]]\nfrom = "20m"\nduration = "8m"\n[[traffic]]\ncount = %s\nover = "%s"\n' \
    "$1" "$2" "$1" "$2" >"$3"
}

# run_measured FILE OUT: runs FILE with --format json into OUT and prints
# its CPU seconds (user + system, the whole process).
run_measured() {
  { /usr/bin/time -f '%U %S' ./target/release/scenario-run --quiet --format json "$1" >"$2"; } 2>&1 | tail -1 | awk '{ print $1 + $2 }'
}

# totals_of OUT: deliveries, acked and quarantined of a --format json output.
totals_of() {
  grep -oE '"(deliveries|acked|quarantined)": [0-9]+' "$1" | head -3 | awk '{ printf "%s ", $2 }'
}
