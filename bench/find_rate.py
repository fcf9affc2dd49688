#!/usr/bin/env python3
"""Helpers of bench/find-rate.sh: `tune --find-rate` on one service, then a
brute-force sweep of `poolbench run --rate` around its answer, and the
bounds.

    find_rate.py find NAME URL OUT_DIR [ARGS...]
        tune --find-rate --slo SLO --format json on URL (ARGS: --query …);
        prints the answer and every point, writes OUT_DIR/NAME.rate.json
    find_rate.py sweep NAME URL OUT_DIR [ARGS...]
        around the found rate F, rates up from 0.90 F in steps of 2% until
        two in a row fail (at most 1.40 F; down to 0.70 F while the lowest
        fails), each held HOLD s by `poolbench run --rate R` (open loop,
        one run, the strategy and in-flight cap the search held F with);
        sustained when p99 <= the SLO, errors <= 1%, no request
        dropped, and completions >= 99% of the rate; OUT_DIR/NAME.sweep.json
    find_rate.py check NAME OUT_DIR
        the bounds: F within 5% of the sweep's highest sustained rate (the
        highest below its first failure), F never above it by more than
        that, and the search within its budget + 10 s; every point above
        the sweep's rate judged failing, with its verdict
    find_rate.py report OUT_DIR NAME...
        the table of every service
Environment: POOLBENCH (binary), FR_SLO (p99<100ms), FR_HOLD (20),
FR_BUDGET (2m), FR_FASTAPI_DSN (the sweep starts
bench/services/fastapi_sqlalchemy.py on this PostgreSQL afresh for each
point, and stops it by its PID after: a failing point leaves it frozen).
"""
import json
import os
import signal
import subprocess
import sys
import time

BIN = os.environ.get("POOLBENCH", "target/release/poolbench")
SLO = os.environ.get("FR_SLO", "p99<100ms")
HOLD_S = float(os.environ.get("FR_HOLD", "20"))
BUDGET = os.environ.get("FR_BUDGET", "2m")
WITHIN = 0.05
STEP = 0.02
SUSTAINED_SHARE = 0.99
ERRORS = 0.01


def slo_p99_us():
    part = [p for p in SLO.split(",") if p.startswith("p99<")][0][4:]
    return float(part[:-2]) * 1000.0 if part.endswith("ms") else float(part[:-1]) * 1e6


def find(name, url, out, extra):
    started = time.time()
    args = [BIN, "tune", url, "--find-rate", "--slo", SLO, "--budget", BUDGET,
            "--format", "json", "--quiet", *extra]
    p = subprocess.run(args, capture_output=True, text=True)
    wall = time.time() - started
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        print(f"  find-rate exited {p.returncode} without JSON: {p.stderr.strip()[:400]}")
        return 1
    doc["bench_wall_s"] = wall
    doc["bench_rc"] = p.returncode
    with open(os.path.join(out, f"{name}.rate.json"), "w") as f:
        json.dump(doc, f)
    found = doc.get("found") or {}
    print(f"  find-rate: exit {p.returncode} in {wall:.0f} s: "
          f"{found.get('summary') or doc.get('reason')}")
    for pt in doc.get("rate_points", []):
        print(f"    {pt['phase']:<8} {pt['rate_rps']:>9.1f} req/s  done {pt['completed_rps']:>9.1f}/s"
              f"  p99 {pt['p99_us'] / 1000:>8.1f} ms  backlog {pt['backlog_growth_rps']:+7.1f}/s"
              f"  {pt['verdict']}{': ' + pt['why'] if pt.get('why') else ''}")
    if doc.get("stopped_early"):
        print(f"    stopped early: {doc['stopped_early']}")
    return 0


def held(run, rate):
    """Whether one sweep run sustained `rate`, and what it measured."""
    cell = (run.get("cells") or [{}])[0]
    reqs = cell.get("requests", 0)
    errors = (cell.get("errors") or {}).get("total", 0) + cell.get("dropped", 0)
    done = reqs / max(cell.get("duration_s", 0.0), 1e-9)
    p99 = (cell.get("latency_us") or {}).get("p99", 0.0)
    why = []
    if reqs == 0:
        why.append("no answer")
    if p99 > slo_p99_us():
        why.append(f"p99 {p99 / 1000:.1f} ms")
    if errors > ERRORS * max(reqs + cell.get("dropped", 0), 1):
        why.append(f"{errors} errors")
    if done < SUSTAINED_SHARE * rate:
        why.append(f"completed {done:.1f}/s of {rate:.1f}")
    return not why, done, p99, "; ".join(why)


def sweep(name, url, out, extra):
    with open(os.path.join(out, f"{name}.rate.json")) as f:
        found = (json.load(f).get("found") or {}).get("rate_rps")
    if not found:
        print("  sweep: no rate found to sweep around")
        return 1
    with open(os.path.join(out, f"{name}.rate.json")) as f:
        doc = json.load(f)
    strategy = doc["strategy"]
    # The same client: the open loop's cap the search held its answer with.
    caps = [p.get("in_flight_cap", 0) for p in doc["rate_points"] if p["rate_rps"] == found]
    cap = str(max(caps + [0]) or (strategy.split(":")[1] if ":" in strategy else 1024))
    rows = []

    def hold(rate):
        app = fresh_app()
        target = app[1] if app else url
        path = os.path.join(out, f"{name}.sweep.{len(rows)}.json")
        args = [BIN, "run", target, "-s", strategy, "--max-inflight", cap, "--rate", str(rate),
                "-d", f"{HOLD_S:g}s", "--warmup", "2s", "--format", "json", "-q",
                "-o", path, *extra]
        try:
            subprocess.run(args, capture_output=True, text=True)
        finally:
            if app:
                app[0].kill()
                app[0].wait()
        try:
            with open(path) as f:
                ok, done, p99, why = held(json.load(f), rate)
        except (OSError, ValueError):
            ok, done, p99, why = False, 0.0, 0.0, "no result"
        rows.append({"rate": rate, "held": ok, "done": done, "p99_us": p99, "why": why})
        print(f"    sweep {rate:>9.1f} req/s held {HOLD_S:g} s: done {done:>9.1f}/s  "
              f"p99 {p99 / 1000:>8.1f} ms  {'sustained' if ok else 'fails: ' + why}", flush=True)
        return ok

    # Up from 0.90 F in steps of 2% until two rates in a row fail (at
    # most 1.40 F); down from there while the lowest fails (at most 0.70 F).
    step, fails = 0, 0
    while fails < 2 and 0.90 + STEP * step <= 1.40 + 1e-9:
        fails = 0 if hold(round(found * (0.90 + STEP * step), 1)) else fails + 1
        step += 1
    down = 1
    while not rows[0]["held"] and 0.90 - STEP * down >= 0.70 - 1e-9:
        hold(round(found * (0.90 - STEP * down), 1))
        rows.sort(key=lambda r: r["rate"])
        down += 1
    with open(os.path.join(out, f"{name}.sweep.json"), "w") as f:
        json.dump(rows, f)
    return 0


def fresh_app():
    """With FR_FASTAPI_DSN: the FastAPI app started afresh, and its URL."""
    dsn = os.environ.get("FR_FASTAPI_DSN")
    if not dsn:
        return None
    env = dict(os.environ, PGSSLMODE="disable")
    app = subprocess.Popen([sys.executable, "bench/services/fastapi_sqlalchemy.py", "--dsn", dsn],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                           start_new_session=True)
    line = app.stdout.readline().split()
    url = f"http://{line[1]}/authors/1"
    # Warm, as the search's first rates leave it: hit cold at hundreds a
    # second, its pool's first connections and threads stall it for
    # longer than a hold (130 answers a second for 20 s, seen).
    subprocess.run([BIN, "run", url, "--rate", "50", "--max-inflight", "4", "-s", "pool:4",
                    "-d", "3s", "--warmup", "0s", "-q", "--format", "json"],
                   capture_output=True, text=True)
    return app, url


def sweep_rate(rows):
    """The highest sustained rate below the sweep's first failure."""
    best = None
    for r in sorted(rows, key=lambda r: r["rate"]):
        if not r["held"]:
            break
        best = r["rate"]
    return best


def check(name, out):
    doc = json.load(open(os.path.join(out, f"{name}.rate.json")))
    rows = json.load(open(os.path.join(out, f"{name}.sweep.json")))
    found = (doc.get("found") or {}).get("rate_rps")
    best = sweep_rate(rows)
    budget_s = doc.get("budget_s", 120.0)
    lines, row = [], {"name": name, "found": found, "sweep": best}
    if found and best:
        off = found / best - 1
        row["off"] = off
        lines.append((f"found {found:,.1f} within 5% of the sweep's {best:,.1f} req/s ({off:+.1%})",
                      abs(off) <= WITHIN))
    else:
        lines.append((f"found {found} against the sweep's {best}", False))
    elapsed = doc.get("elapsed_s", 1e9)
    # Waiting out a frozen service is not billed to the budget.
    lines.append((f"search took {elapsed:.0f} s of a {budget_s:.0f} s budget (+10 s)",
                  elapsed <= budget_s + 10 or doc.get("stopped_early") is not None))
    # A rate counts as held when most of its holds held (the search's own
    # rule: one hold of a flapping rate is noise either way).
    rates = {}
    for p in doc.get("rate_points", []):
        if p["verdict"] != "generator_limited":
            held_n, n = rates.get(p["rate_rps"], (0, 0))
            rates[p["rate_rps"]] = (held_n + (p["verdict"] == "holds"), n + 1)
    above = {r: hn for r, hn in rates.items() if best and r > best * (1 + WITHIN)}
    held_above = sorted(r for r, (h, n) in above.items() if 2 * h > n)
    lines.append((f"{len(above)} rates above the sweep's rate +5%, none held by most of its holds"
                  f"{' (held: ' + ', '.join(f'{r:,.0f}' for r in held_above) + ')' if held_above else ''}",
                  not held_above))
    under_slo = [p for p in doc.get("rate_points", [])
                 if best and p["rate_rps"] > best * (1 + WITHIN) and p["verdict"] == "not_sustained"]
    if under_slo:
        growth = ", ".join("%+.0f/s" % p["backlog_growth_rps"] for p in under_slo)
        lines.append((f"{len(under_slo)} holds above it within the SLO's p99 yet not sustained "
                      f"(backlog {growth})", True))
    row["met"] = all(ok for _, ok in lines)
    for text, ok in lines:
        print(f"  {'met    ' if ok else 'NOT MET'} {text}")
    with open(os.path.join(out, f"{name}.check.json"), "w") as f:
        json.dump(row, f)
    return 0


def report(out, names):
    print("\n| service | found req/s | sweep's highest sustained | off | bounds |")
    print("|---|---|---|---|---|")
    for n in names:
        try:
            r = json.load(open(os.path.join(out, f"{n}.check.json")))
        except (OSError, ValueError):
            print(f"| {n} | not run | | | |")
            continue
        off = f"{r['off']:+.1%}" if "off" in r else "n/a"
        print(f"| {n} | {r['found']} | {r['sweep']} | {off} | {'MET' if r['met'] else 'NOT MET'} |")
    return 0


if __name__ == "__main__":
    # Stopped (the script's Ctrl-C or TERM): the app a sweep started is
    # stopped too, by its PID (the finally above).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "find":
        sys.exit(find(rest[0], rest[1], rest[2], rest[3:]))
    if cmd == "sweep":
        sys.exit(sweep(rest[0], rest[1], rest[2], rest[3:]))
    if cmd == "check":
        sys.exit(check(rest[0], rest[1]))
    if cmd == "report":
        sys.exit(report(rest[0], rest[1:]))
    sys.exit(f"unknown command {cmd}")
