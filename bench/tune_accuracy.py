#!/usr/bin/env python3
"""Helpers of bench/tune-accuracy.sh (the grid's sizes, the grid's figures,
the bounds on `poolbench tune`'s answer, the closing table).

    tune_accuracy.py sizes C
        1..10, then each size at most 10% above the one before, up to C
    tune_accuracy.py grid GRID_JSON
        the grid's per-size table and its summary
    tune_accuracy.py check NAME C GRID_JSON TUNE_JSON TUNE_RC WALL_S OUT_JSON [RUN]
        tune's answer against the grid, one line per bound; the row goes to
        OUT_JSON (RUN, e.g. 2/3: which of the service's tune runs it is)
    tune_accuracy.py agree OUT_JSON...
        one service's runs: every pick, and whether they agree within 10% (+1)
    tune_accuracy.py report OUT_JSON...
        the table of every service, then a markdown block for bench/log/RESULTS.md
"""
import glob
import json
import math
import os
import subprocess
import sys
import time

WITHIN_BEST = 0.05  # "smallest pool within 5% of the best throughput"
THROUGHPUT_BOUND = 0.9  # recommended pool's throughput >= 0.9 x best
SIZE_SLACK = 1.1  # recommended size <= 1.1 x smallest-within-5% + 1
CLIFF_BOUND = 0.10  # tune's cliff within 10% of the grid's first failure
# A size below this share of the best with at least half as many
# connections has collapsed: a failure too, as tune's cliff counts it.
COLLAPSE_SHARE = 0.4
BUDGET_S = 120.0
BUDGET_SLACK_S = 10.0
FAIL_ERROR_RATE = 0.01
AGREE_SLACK = 1.1  # the runs' picks agree: largest <= 1.1 x smallest + 1


def sizes(c):
    out, n = [], 1
    while n <= c:
        out.append(n)
        n = n + 1 if n < 10 else max(n + 1, math.floor(n * 1.1))
    if out[-1] != c:
        out.append(c)
    return out


def grid_rows(path):
    """Per pool size: throughput, p99, error rate, stalls (reps merged)."""
    with open(path) as f:
        doc = json.load(f)
    return doc, cell_rows(doc.get("cells", []))


def cell_rows(cells_of_grid):
    """grid_rows for cells already read."""
    by_size = {}
    for cell in cells_of_grid:
        size = cell.get("pool_size")
        if size is None:
            continue
        by_size.setdefault(size, []).append(cell)
    rows = []
    for size in sorted(by_size):
        cells = by_size[size]
        reqs = sum(c.get("requests", 0) for c in cells)
        errs = sum((c.get("errors") or {}).get("total", 0) for c in cells)
        unfinished = sum(c.get("unfinished", 0) for c in cells)
        stalls = [s for c in cells for s in (c.get("stalls") or [])]
        # Cells run with different load threads (grid_threads): the better
        # count's mean; errors and stalls of every cell count.
        by_threads = {}
        for c in cells:
            by_threads.setdefault(c.get("grid_threads"), []).append(c)
        means = {t: sum(c.get("throughput_rps", 0.0) for c in cs) / len(cs)
                 for t, cs in by_threads.items()}
        threads, thr = max(means.items(), key=lambda x: x[1])
        p99 = max(((c.get("latency_us") or {}).get("p99") or 0.0) for c in cells)
        by_status = {}
        for c in cells:
            for k, v in ((c.get("errors") or {}).get("by_status") or {}).items():
                by_status[k] = by_status.get(k, 0) + v
            for k, v in ((c.get("errors") or {}).get("by_kind") or {}).items():
                by_status[k] = by_status.get(k, 0) + v
        err_rate = errs / reqs if reqs else 1.0
        rows.append({
            "pool": size, "throughput_rps": thr, "p99_us": p99, "threads": threads,
            "by_threads": {t: v for t, v in means.items() if t is not None},
            "requests": reqs, "errors": errs, "error_rate": err_rate,
            "errors_by": by_status, "unfinished": unfinished,
            "stalls": len(stalls),
            "stall_s": round(sum(s.get("duration_s", 0.0) for s in stalls), 3),
            "reps": sum(c.get("reps", 1) for c in cells),
            "failed": err_rate > FAIL_ERROR_RATE or bool(stalls) or reqs == 0,
        })
    return rows


def pass_paths(grid_path):
    """The files of the grid's passes beside GRID_JSON (NAME.grid.passP[.tT].json),
    by pass: each pass's files (one per load-thread count)."""
    base = grid_path[:-len(".json")] if grid_path.endswith(".json") else grid_path
    by_pass = {}
    for path in sorted(glob.glob(glob.escape(base) + ".pass*.json")):
        tag = path[len(base) + len(".pass"):-len(".json")].split(".")[0]
        by_pass.setdefault(tag, []).append(path)
    return [by_pass[k] for k in sorted(by_pass)]


def pass_within(grid_path):
    """Each pass alone (its thread counts merged as the grid merges them):
    the smallest size within 5% of that pass's best. How far the brute
    force itself moves between passes on the same service."""
    out = []
    for paths in pass_paths(grid_path):
        cells = []
        for path in paths:
            try:
                with open(path) as f:
                    cells += json.load(f).get("cells", [])
            except (OSError, ValueError):
                continue
        rows = cell_rows(cells)
        if rows:
            out.append(grid_summary(rows)["smallest_within_5pct"])
    return out


def grid_summary(rows):
    if not rows:
        return {"best_rps": None, "best_pool": None, "smallest_within_5pct": None,
                "first_fail": None, "first_error": None}
    best = max(rows, key=lambda r: r["throughput_rps"])
    within = min(r["pool"] for r in rows
                 if r["throughput_rps"] >= (1 - WITHIN_BEST) * best["throughput_rps"])
    fails = [r["pool"] for r in rows if r["failed"]]
    return {"best_rps": best["throughput_rps"], "best_pool": best["pool"],
            "smallest_within_5pct": within,
            "first_fail": min(fails + collapses(rows), default=None),
            "first_error": min(fails) if fails else None}


def collapses(rows):
    """Sizes whose throughput fell below COLLAPSE_SHARE of the best size
    that answered with at least half as many connections: faster than
    contention makes throughput fall, so tune's cliff (docs/tune.md)."""
    out = []
    for r in rows:
        before = [q["throughput_rps"] for q in rows
                  if not q["failed"] and 2 * q["pool"] >= r["pool"] and q["pool"] < r["pool"]]
        if not r["failed"] and before and r["throughput_rps"] < COLLAPSE_SHARE * max(before):
            out.append(r["pool"])
    return out


def fmt(x, nd=0):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    return str(x)


def print_grid(rows, summary, out=sys.stdout):
    print(f"  {'pool':>5} {'req/s':>10} {'p99 ms':>9} {'requests':>9} {'err %':>7} "
          f"{'stalls':>7}  errors", file=out)
    for r in rows:
        mark = ""
        if r["pool"] == summary["first_fail"]:
            mark = "  <- fails" if r["failed"] else "  <- collapses"
        elif r["failed"] and r["pool"] == summary["first_error"]:
            mark = "  <- errors"
        errs = ", ".join(f"{k}: {v}" for k, v in sorted(r["errors_by"].items()))
        if r.get("threads") is not None:
            mark += f"  (the better of the load threads: {r['threads']})"
        print(f"  {r['pool']:>5} {r['throughput_rps']:>10,.0f} {r['p99_us'] / 1000:>9.2f} "
              f"{r['requests']:>9} {100 * r['error_rate']:>7.2f} "
              f"{r['stalls']:>3}/{r['stall_s']:<4g} {errs}{mark}", file=out)
    errors = summary["first_error"]
    errors = "" if errors in (None, summary["first_fail"]) else f" (collapsed; errors from {errors})"
    print(f"  grid: best {fmt(summary['best_rps'])} req/s at pool {summary['best_pool']}; "
          f"smallest pool within 5% of best: {summary['smallest_within_5pct']}; "
          f"first fails at: {summary['first_fail']}{errors}", file=out)


# The fields of tune's JSON this check reads (the contract of issue 27).
CONTRACT = {
    "load": ["concurrency|rate"],
    "capacity": ["max_rps", "max_rps_ci95", "knee_in_flight", "slo_in_flight",
                 "cliff_in_flight", "cliff_reason", "serves_at_once"],
    "recommendation": ["strategy", "pool_size", "throughput_rps", "throughput_ci95",
                       "p99_us", "client_settings|settings"],
    "": ["reason", "points", "findings", "elapsed_s"],
}


def missing_fields(doc):
    missing = []
    for section, fields in CONTRACT.items():
        obj = doc if section == "" else doc.get(section)
        if section and section not in doc:
            missing.append(section)
            continue
        if obj is None:  # recommendation: null is allowed
            continue
        if not isinstance(obj, dict):
            missing.append(f"{section} (not an object)")
            continue
        for f in fields:
            names = f.split("|")
            if not any(n in obj for n in names):
                missing.append(f"{section + '.' if section else ''}{f}")
    return missing


def nearest(rows, size):
    if not rows or size is None:
        return None
    return min(rows, key=lambda r: (abs(r["pool"] - size), r["pool"]))


def tune_threads(tune):
    """The load threads tune's points ran with after its comparison: the
    kept count, or one (where it compares, tune starts with one)."""
    chosen = tune.get("generator_threads")
    return chosen.get("threads", 1) if isinstance(chosen, dict) else 1


def at_threads(row, threads):
    """ROW as the grid measured it with THREADS load threads (the figure
    tune's answer is compared with); ROW itself when the grid ran one count."""
    by = row.get("by_threads") or {}
    if threads not in by:
        return row
    return dict(row, throughput_rps=by[threads], threads=threads)


def verdict(ok):
    return "MET" if ok else "NOT MET"


def check(name, c, grid_path, tune_path, tune_rc, wall_s, out_path, run=""):
    row = {"service": name, "concurrency": c, "tune": "NOT RUN", "bounds": {}}
    if run:
        row["run"] = run
    try:
        _, rows = grid_rows(grid_path)
        summary = grid_summary(rows)
    except (OSError, ValueError) as e:
        print(f"  grid: could not read {grid_path}: {e}")
        rows, summary = [], grid_summary([])
    row["grid"] = summary
    row["grid_rows"] = rows
    row["grid_passes_within"] = pass_within(grid_path)
    row["wall_s"] = wall_s

    tune = None
    if tune_rc == 0:
        try:
            with open(tune_path) as f:
                tune = json.load(f)
        except (OSError, ValueError) as e:
            print(f"  tune: exit 0 but its JSON does not parse: {e}")
    if tune is None or not isinstance(tune, dict):
        print(f"  tune: NOT RUN (exit {tune_rc}, {wall_s:.1f} s); every bound NOT RUN")
        for b in ("throughput_grid", "throughput_tune", "size", "cliff", "budget"):
            row["bounds"][b] = "NOT RUN"
        json.dump(row, open(out_path, "w"), indent=1)
        return
    row["tune"] = "ran"
    missing = missing_fields(tune)
    if missing:
        print(f"  tune JSON is missing: {', '.join(missing)}")
    row["missing"] = missing
    cap = tune.get("capacity") or {}
    rec = tune.get("recommendation")
    rec = rec if isinstance(rec, dict) else None
    row["tune_answer"] = {
        "load": tune.get("load"),
        "max_rps": cap.get("max_rps"), "knee_in_flight": cap.get("knee_in_flight"),
        "slo_in_flight": cap.get("slo_in_flight"),
        "cliff_in_flight": cap.get("cliff_in_flight"), "cliff_reason": cap.get("cliff_reason"),
        "serves_at_once": cap.get("serves_at_once"),
        "pool_size": rec.get("pool_size") if rec else None,
        "throughput_rps": rec.get("throughput_rps") if rec else None,
        "p99_us": rec.get("p99_us") if rec else None,
        "reason": tune.get("reason"), "elapsed_s": tune.get("elapsed_s"),
        "points": len(tune.get("points") or []),
        "findings": tune.get("findings") or [],
        "near_line": near_line(tune),
    }
    t = row["tune_answer"]
    print(f"  tune: pool {fmt(t['pool_size'])} at {fmt(t['throughput_rps'])} req/s "
          f"(p99 {fmt(t['p99_us'] / 1000 if t['p99_us'] is not None else None, 2)} ms); "
          f"max {fmt(t['max_rps'])} req/s, knee {fmt(t['knee_in_flight'])}, "
          f"serves at once {fmt(t['serves_at_once'])}, cliff {fmt(t['cliff_in_flight'])}"
          f"{' (' + str(t['cliff_reason']) + ')' if t['cliff_reason'] else ''}; "
          f"{t['points']} points, elapsed_s {fmt(t['elapsed_s'], 1)}, wall {wall_s:.1f} s")
    if rec is None:
        print(f"  tune gave no recommendation: {tune.get('reason')}")
    for fnd in t["findings"][:8]:
        if isinstance(fnd, dict) and "title" in fnd:
            fnd = f"{fnd.get('id', '?')}: {fnd['title']}"
        print(f"    finding: {fnd if isinstance(fnd, str) else json.dumps(fnd)[:200]}")

    best = summary["best_rps"]
    b = row["bounds"]
    size = t["pool_size"]
    # 1. throughput of the recommended pool, as the grid measured it and as tune says.
    at = nearest(rows, size)
    threads = tune_threads(tune)
    if at is not None and len(at.get("by_threads") or {}) > 1:
        # The grid ran each size with one thread and with one per core:
        # the pick is measured with the threads tune chose, against the
        # grid's best with any.
        at = at_threads(at, threads)
        print(f"  tune's load threads: {threads}; the grid's figure at its pick is the one "
              f"with {threads} (best with {threads}: "
              f"{max(at_threads(r, threads)['throughput_rps'] for r in rows):,.0f} req/s)")
    if best is None or at is None:
        b["throughput_grid"] = "NOT MET"
        print("  throughput (grid at recommended size): NOT MET (no recommendation or no grid)")
    else:
        ok = at["throughput_rps"] >= THROUGHPUT_BOUND * best
        b["throughput_grid"] = verdict(ok)
        exact = "" if at["pool"] == size else f" (nearest measured size {at['pool']})"
        print(f"  throughput, grid at pool {size}{exact}: {at['throughput_rps']:,.0f} req/s = "
              f"{at['throughput_rps'] / best:.2f}x best {best:,.0f} (bound >= {THROUGHPUT_BOUND}x): "
              f"{b['throughput_grid']}")
        row["grid_at_rec"] = at
    if best is None or t["throughput_rps"] is None:
        b["throughput_tune"] = "NOT MET"
        print("  throughput (tune's own figure): NOT MET (missing)")
    else:
        ok = t["throughput_rps"] >= THROUGHPUT_BOUND * best
        b["throughput_tune"] = verdict(ok)
        print(f"  throughput, tune's figure: {t['throughput_rps']:,.0f} req/s = "
              f"{t['throughput_rps'] / best:.2f}x grid best (bound >= {THROUGHPUT_BOUND}x): "
              f"{b['throughput_tune']}")
    # 2. size: no bigger than needed.
    small = summary["smallest_within_5pct"]
    if size is None or small is None:
        b["size"] = "NOT MET"
        print("  size: NOT MET (no recommended size or no grid)")
    else:
        limit = SIZE_SLACK * small + 1
        b["size"] = verdict(size <= limit)
        print(f"  size: recommended {size}, grid's smallest within 5% of best {small}, "
              f"bound <= {limit:.1f}: {b['size']}")
    near = t["near_line"]
    if near is not None and small is not None:
        inside = "inside" if near[0] <= small <= near[1] else "outside"
        print(f"  near the line: tune named sizes {near[0]} to {near[1]} (pick-near-line); "
              f"the grid's smallest within 5%, {small}, is {inside} them")
    # 3. cliff.
    g, tc = summary["first_fail"], t["cliff_in_flight"]
    if g is None and tc is None:
        b["cliff"] = "n/a, met"
        print("  cliff: neither the grid nor tune finds one: n/a, met")
    elif g is None or tc is None:
        b["cliff"] = "NOT MET"
        print(f"  cliff: grid first fails at {g}, tune's cliff {tc}: NOT MET")
    else:
        ok = abs(tc - g) <= CLIFF_BOUND * g
        b["cliff"] = verdict(ok)
        print(f"  cliff: grid first fails at {g}, tune's cliff {tc} "
              f"(bound within {CLIFF_BOUND:.0%}, {g * (1 - CLIFF_BOUND):.1f}..{g * (1 + CLIFF_BOUND):.1f}): "
              f"{b['cliff']}")
    # 4. budget.
    ok = wall_s <= BUDGET_S + BUDGET_SLACK_S
    b["budget"] = verdict(ok)
    print(f"  budget: wall clock {wall_s:.1f} s (elapsed_s {fmt(t['elapsed_s'], 1)}), "
          f"bound <= {BUDGET_S + BUDGET_SLACK_S:.0f} s: {b['budget']}")
    json.dump(row, open(out_path, "w"), indent=1)


def pair_sizes(result_path, tune_path):
    """Tune's pick, the grid's best size and tune's load threads, for the
    paired check; None where there is nothing to pair (no pick, no grid,
    or the pick is the best size)."""
    row = json.load(open(result_path))
    pick = (row.get("tune_answer") or {}).get("pool_size")
    best = (row.get("grid") or {}).get("best_pool")
    if pick is None or best is None or pick == best:
        return None
    return pick, best, tune_threads(json.load(open(tune_path)))


def geomean(xs):
    return math.exp(sum(math.log(max(x, 1e-9)) for x in xs) / len(xs))


def paired(result_path, pick, best, threads, reads):
    """The paired check's rounds (READS: the pick's and the best size's
    throughput in turn, one pair a round) into RESULT_PATH's row, with
    its verdict: the pick within THROUGHPUT_BOUND of the grid's best size
    measured in the same minutes, so the machine's drift over the grid's
    minutes does not decide it."""
    row = json.load(open(result_path))
    pairs = [(reads[i], reads[i + 1]) for i in range(0, len(reads) - 1, 2)]
    ratios = [a / b if b > 0 else 0.0 for a, b in pairs]
    if not ratios:
        return
    mean = geomean(ratios)
    v = verdict(mean >= THROUGHPUT_BOUND)
    row["paired"] = {"pick": pick, "best": best, "threads": threads, "ratios": ratios,
                     "ratio": mean}
    row["bounds"]["throughput_paired"] = v
    print(f"  throughput, paired: pool {pick} / pool {best} (the grid's best size) = "
          f"{mean:.2f}x over {len(ratios)} rounds with {threads} load thread(s), each order "
          f"in turn ({', '.join(f'{x:.2f}' for x in ratios)}) (bound >= {THROUGHPUT_BOUND}x): {v}")
    json.dump(row, open(result_path, "w"), indent=1)


def near_line(tune):
    """The sizes tune's `pick-near-line` inference names, as (from, to)."""
    for i in tune.get("inferences") or []:
        if isinstance(i, dict) and i.get("id") == "pick-near-line":
            words = i.get("text", "").split("sizes from ", 1)[-1].split()
            if len(words) >= 3 and words[0].isdigit() and words[2].isdigit():
                return (int(words[0]), int(words[2]))
    return None


def near_note(results):
    """The runs' `pick-near-line` sizes, and what every run's named."""
    near = [tuple((r.get("tune_answer") or {}).get("near_line") or ()) for r in results]
    named = [n for n in near if n]
    if not named:
        return ""
    each = ", ".join(f"{n[0]}-{n[1]}" if n else "none" for n in near)
    lo, hi = max(n[0] for n in named), min(n[1] for n in named)
    common = f"{lo}-{hi}" if lo <= hi and len(named) == len(near) else "none"
    return f"; sizes tune named near the 5% line: {each} (in every run's: {common})"


def agreement(results):
    """The picks of one service's runs, the bound's figures and its verdict."""
    picks = [(r.get("tune_answer") or {}).get("pool_size") for r in results]
    sized = [p for p in picks if p is not None]
    if not sized or len(sized) < len(picks):
        return picks, None, "NOT MET"
    limit = AGREE_SLACK * min(sized) + 1
    return picks, limit, verdict(max(sized) <= limit)


def agreement_line(results):
    picks, limit, v = agreement(results)
    thr = [(r.get("tune_answer") or {}).get("throughput_rps") for r in results]
    runs = ", ".join(f"pool {fmt(p)} at {fmt(t)} req/s" for p, t in zip(picks, thr))
    why = (f"largest {max(picks)} <= 1.1x smallest {min(picks)} + 1 = {limit:.1f}"
           if limit is not None else "a run recommended no pool")
    return (f"{results[0]['service']}: {len(results)} runs: {runs}; {why}; "
            f"picks agree within 10% (+1): {v}{near_note(results)}{passes_note(results[0])}")


def passes_note(result):
    """The grid's passes, each read alone, held to the same agreement."""
    within = [w for w in result.get("grid_passes_within") or [] if w is not None]
    if len(within) < 2:
        return ""
    ok = max(within) <= AGREE_SLACK * min(within) + 1
    return (f" (the grid's {len(within)} passes, each read alone: smallest within 5% "
            f"{', '.join(map(str, within))}; by the same bound they {'agree' if ok else 'do not agree'})")


def agree(paths):
    results = [json.load(open(p)) for p in paths]
    print(f"  {agreement_line(results)}")


def by_service(results):
    groups = {}
    for r in results:
        groups.setdefault(r["service"], []).append(r)
    return groups


def git_commit():
    try:
        c = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return c + (" (work tree has uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


COLUMNS = ["service", "c", "grid best req/s (pool)", "grid ≤5% pool", "grid fails at",
           "tune pool", "grid req/s @rec", "tune req/s", "tune cliff", "wall s",
           "thr grid", "thr tune", "thr paired", "size", "cliff", "budget"]


def table_rows(results):
    out = []
    for r in results:
        g, t, b = r["grid"], r.get("tune_answer") or {}, r["bounds"]
        at = r.get("grid_at_rec")
        name = r["service"] + (f" #{r['run'].split('/')[0]}" if r.get("run") else "")
        out.append([
            name, str(r["concurrency"]),
            f"{fmt(g['best_rps'])} ({fmt(g['best_pool'])})", fmt(g["smallest_within_5pct"]),
            fmt(g["first_fail"]), fmt(t.get("pool_size")),
            (f"{at['throughput_rps']:,.0f}" + ("" if at["pool"] == t.get("pool_size")
                                               else f" (@{at['pool']})")) if at else "-",
            fmt(t.get("throughput_rps")), fmt(t.get("cliff_in_flight")),
            f"{r['wall_s']:.0f}",
            b.get("throughput_grid", "-"), b.get("throughput_tune", "-"),
            (f"{r['paired']['ratio']:.2f}x {b['throughput_paired']}" if r.get("paired") else "-"),
            b.get("size", "-"),
            b.get("cliff", "-"), b.get("budget", "-"),
        ])
    return out


def report(paths):
    results = [json.load(open(p)) for p in paths]
    rows = table_rows(results)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(COLUMNS)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(COLUMNS, widths)))
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
    print()
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    version = os.environ.get("POOLBENCH_VERSION", "?")
    print("```markdown")
    print("## `poolbench tune` against a dense grid (bench/tune-accuracy.sh)")
    print()
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, commit {git_commit()}, {version}; "
          f"machine: {os.cpu_count()} cores, load average {load} at the end "
          f"(`nproc` {os.environ.get('NPROC', '?')}).")
    print()
    print("Grid: `poolbench run URL -s pool -c C --pool 1,2,..,10,11,12,13,...,C` (steps ≤ 10%), "
          "`-d 2s --warmup 500ms`, two passes of one run a size (up, then down); a size fails with > 1% errors or a stall. "
          "Tune: `poolbench tune URL -c C --budget 2m`. Bounds: recommended pool's throughput "
          "≥ 0.9× the grid's best (the grid's own figure at that size, and tune's figure); size "
          "≤ 1.1× the grid's smallest size within 5% of best, +1; cliff within 10% of where the "
          "grid first fails (errors, a stall, or a collapse below 40% of the best size with at "
          "least half as many connections); done in ≤ 130 s of wall clock. Paired (`thr paired`): the pick and the grid's best size run in turn right after tune, "
          "4 rounds (pick first, then best first, in turn) with tune's load threads, the rounds' ratios' geometric mean ≥ 0.9. With `--runs N`, tune runs N times "
          "on one grid (rows `SERVICE #i`); the picks agree when the largest ≤ 1.1× the "
          "smallest + 1.")
    print()
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for r in rows:
        print("| " + " | ".join(v.replace("|", "/") for v in r) + " |")
    print()
    for name, runs in by_service(results).items():
        if len(runs) > 1:
            print(f"- {agreement_line(runs)}")
    for r in results:
        if r.get("missing"):
            print(f"- {r['service']}: tune's JSON lacked {', '.join(r['missing'])}")
        if r["tune"] != "ran":
            print(f"- {r['service']}: tune NOT RUN (it failed or is missing)")
    print("```")


def main(argv):
    if len(argv) >= 2 and argv[0] == "sizes":
        print(",".join(map(str, sizes(int(argv[1])))))
    elif len(argv) == 2 and argv[0] == "grid":
        _, rows = grid_rows(argv[1])
        print_grid(rows, grid_summary(rows))
    elif len(argv) in (8, 9) and argv[0] == "check":
        name, c, grid, tune, rc, wall, out = argv[1:8]
        check(name, int(c), grid, tune, int(rc), float(wall), out, *argv[8:])
    elif len(argv) == 3 and argv[0] == "pair-sizes":
        sized = pair_sizes(argv[1], argv[2])
        if sized is None:
            return 1
        print(*sized)
    elif len(argv) >= 6 and argv[0] == "paired":
        paired(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), [float(x) for x in argv[5:]])
    elif len(argv) >= 2 and argv[0] == "agree":
        agree(argv[1:])
    elif len(argv) >= 2 and argv[0] == "report":
        report(argv[1:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
