"""Medians and checks of bench/vs-vegeta.sh's rows:
target rate vegeta_p50 vegeta_p99 vegeta_rate pb_p50 pb_p99 pb_corr_p99 late lag_p99 hiccup_p999 achieved
Exits 1 when an open-loop bound is missed (see open_loop_bounds)."""
import math
import statistics
import sys
from collections import defaultdict

cells = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    cells[(f[0], int(f[1]))].append([float(x) for x in f[2:]])

med = statistics.median


def lag_bound(rate):
    """Send lag p99 bound (µs): 50 up to 10,000 req/s, 200 up to 50,000, 1,000 above."""
    return 50.0 if rate <= 10_000 else 200.0 if rate <= 50_000 else 1_000.0


def open_loop_bounds(rate, rs):
    """Rounds where poolbench held the rate within 1% and its send lag p99
    within the bound; met in at least two rounds of three."""
    good = [r for r in rs if abs(r[9] / rate - 1) <= 0.01 and r[7] <= lag_bound(rate)]
    return len(good), len(good) >= math.ceil(2 * len(rs) / 3)


print("\nmedians over rounds (µs); ratio = poolbench / vegeta; checks as in the header")
print(f"{'target':<6} {'rate':>6} {'veg rate':>8} {'veg p50':>8} {'veg p99':>8} {'pb rate':>8} {'pb p50':>8} {'pb p99':>8} "
      f"{'p50 x':>6} {'p99 x':>6} {'corr p99':>9} {'corr/unc':>8} {'spread':>7} {'lag p99':>8}  verdict")
failed = False
for (target, rate), rs in cells.items():
    vp50, vp99, vrate, pp50, pp99, cp99, late, lag, _, achieved = (med(r[i] for r in rs) for i in range(10))
    # "Nothing late": at most 0.5% of the requests (rate x 4 s) left more
    # than 1 ms after their time.
    quiet = [r for r in rs if r[6] <= 0.005 * rate * 4]
    corr_unc = med(r[5] / r[4] for r in quiet) if quiet else float("nan")
    p99s = [r[5] for r in rs]
    spread = max(p99s) / min(p99s)
    held, bounds = open_loop_bounds(rate, rs)
    failed |= not bounds
    checks = {
        "p50": pp50 <= 1.5 * vp50,
        "p99": pp99 <= 1.5 * vp99,
        "corr": not quiet or corr_unc <= 2.0,
        "spread": spread <= 2.0,
        f"rate-and-lag<={lag_bound(rate):.0f}us": bounds,
    }
    verdict = "ok" if all(checks.values()) else "MISSED " + ",".join(k for k, v in checks.items() if not v)
    print(f"{target:<6} {rate:>6} {vrate:>8.0f} {vp50:>8.0f} {vp99:>8.0f} {achieved:>8.0f} {pp50:>8.0f} {pp99:>8.0f} "
          f"{pp50 / vp50:>6.2f} {pp99 / vp99:>6.2f} {cp99:>9.0f} {corr_unc:>8.2f} {spread:>7.2f} {lag:>8.1f}  {verdict} "
          f"({len(quiet)}/{len(rs)} rounds with < 0.5% late; rate within 1% and lag in bound in {held}/{len(rs)})")
    if abs(vrate / rate - 1) > 0.01:
        print(f"       vegeta reached {vrate:.0f} of {rate} req/s (median): its latencies are at that rate")
sys.exit(1 if failed else 0)
