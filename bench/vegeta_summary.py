"""Medians and checks of bench/vs-vegeta.sh's rows:
target rate vegeta_p50 vegeta_p99 pb_p50 pb_p99 pb_corr_p99 late lag_p99 hiccup_p999 achieved"""
import statistics
import sys
from collections import defaultdict

cells = defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    cells[(f[0], int(f[1]))].append([float(x) for x in f[2:]])

med = statistics.median
print("\nmedians over rounds (µs); ratio = poolbench / vegeta; checks as in the header")
print(f"{'target':<6} {'rate':>6} {'veg p50':>8} {'veg p99':>8} {'pb p50':>8} {'pb p99':>8} {'p50 x':>6} {'p99 x':>6} "
      f"{'corr p99':>9} {'corr/unc':>8} {'spread':>7} {'lag p99':>8}  verdict")
for (target, rate), rs in cells.items():
    vp50, vp99, pp50, pp99, cp99, late, lag = (med(r[i] for r in rs) for i in range(7))
    # "Nothing late": at most 0.5% of the requests (rate x 4 s) left more
    # than 1 ms after their time.
    quiet = [r for r in rs if r[5] <= 0.005 * rate * 4]
    corr_unc = med(r[4] / r[3] for r in quiet) if quiet else float("nan")
    p99s = [r[4] for r in rs]
    spread = max(p99s) / min(p99s)
    checks = {
        "p50": pp50 <= 1.5 * vp50,
        "p99": pp99 <= 1.5 * vp99,
        "corr": not quiet or corr_unc <= 2.0,
        "spread": spread <= 2.0,
        "lag": lag <= 50.0,
    }
    verdict = "ok" if all(checks.values()) else "MISSED " + ",".join(k for k, v in checks.items() if not v)
    print(f"{target:<6} {rate:>6} {vp50:>8.0f} {vp99:>8.0f} {pp50:>8.0f} {pp99:>8.0f} {pp50 / vp50:>6.2f} {pp99 / vp99:>6.2f} "
          f"{cp99:>9.0f} {corr_unc:>8.2f} {spread:>7.2f} {lag:>8.1f}  {verdict} ({len(quiet)}/{len(rs)} rounds with < 0.5% late)")
