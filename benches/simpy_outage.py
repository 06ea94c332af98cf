"""The outage example in SimPy, written the way SimPy's users write a
queueing model: a source process that starts one process per message, each
message a process that is delivered, fails inside the outage, sleeps its
backoff and tries again, until it is acked or quarantined after its sixth
delivery. Time is integer milliseconds, as in scenario-run.

    python benches/simpy_outage.py COUNT OVER_MS

prints the same totals as scenario-run for the same file (deliveries,
acked, quarantined) and the CPU time of the process; benches/simpy.sh runs
both side by side (docs/benchmarks.md).
"""

import resource
import sys

import simpy

MAX_RECEIVES = 6
BASE = 1_000
OUTAGE_FROM = 20 * 60_000
OUTAGE_TO = 28 * 60_000


class Totals:
    def __init__(self):
        self.deliveries = 0
        self.acked = 0
        self.quarantined = 0


def message(env, totals):
    receives = 0
    while True:
        receives += 1
        totals.deliveries += 1
        if OUTAGE_FROM <= env.now < OUTAGE_TO:
            if receives >= MAX_RECEIVES:
                totals.quarantined += 1
                return
            yield env.timeout(BASE << (receives - 1))
        else:
            totals.acked += 1
            return


def source(env, count, over, totals):
    # Even arrivals: message i at floor(i * over / count) ms.
    for i in range(count):
        arrival = i * over // count
        if arrival > env.now:
            yield env.timeout(arrival - env.now)
        env.process(message(env, totals))


def main():
    count, over = (int(a) for a in sys.argv[1:3]) if len(sys.argv) >= 3 else (100_000, 3_600_000)
    env = simpy.Environment()
    totals = Totals()
    env.process(source(env, count, over, totals))
    env.run()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"simpy: {count} messages over {over} ms: deliveries {totals.deliveries}, "
        f"acked {totals.acked}, quarantined {totals.quarantined}; "
        f"{usage.ru_utime + usage.ru_stime:.3f} s CPU"
    )


if __name__ == "__main__":
    main()
