#!/usr/bin/env bash
# Soak: does poolbench hold steady over an hour?
#
#   bench/soak.sh [DURATION]        (default 1h; also 90s, 10m …)
#
# Two loads at once, each a closed loop with as many workers as pool slots
# (so the connections open stay put and any growth is a leak):
#   - the built-in server: `poolbench serve --delay 10ms`,
#     `run -s pool:16 -c 16` (about 1,500 req/s);
#   - PostgreSQL from scripts/services.sh: `SELECT pg_sleep(0.002),
#     nextval('soak_count')`, `run -s pool:4 -c 4` (about 1,800 req/s); the
#     sequence (never rolled back) is the server's count of the queries.
# Every minute (SOAK_EVERY seconds) it samples each load generator's RSS,
# open descriptors and threads from /proc. At the end it prints, per load:
#   - the sample at minute 5 (minute 1 for runs under 10 minutes) and the
#     last, and their ratios (target <= 1.05), and the ratio from minute 1;
#   - throughput per minute from the run's timeline: the lowest and highest
#     minute against the median (steady: within 10%);
#   - lost samples: the latency histogram's count against the requests the
#     run measured, and the requests the server counted against every
#     request the run sent (the one request that checks the target before
#     any load, warm-up, measured, after the end, unfinished).
# A bench, not a test: a missed target is printed (NOT MET), the exit
# status is 0, and the output is kept in bench/results/soak.md. Each run
# is bounded by its duration.
set -euo pipefail
duration=${1:-1h}
every=${SOAK_EVERY:-60}
cd "$(dirname "$0")/.."
. bench/lib.sh
build_poolbench
start_services pg
start_serve http --delay 10ms
pg_url=$url
pg_count() {
    psql -qtA "$pg_url" -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM soak_count" | tail -n 1
}
print_machine
echo "http:    poolbench serve --delay 10ms at $addr; run -s pool:16 -c 16 -d $duration"
echo "pg:      PostgreSQL at ${pg_url%%\?*}; run -s pool:4 -c 4 -d $duration, SELECT pg_sleep(0.002), nextval('soak_count')"
psql -qtA "$pg_url" -c "DROP SEQUENCE IF EXISTS soak_count; CREATE SEQUENCE soak_count" >/dev/null
pg_before=$(pg_count)
# --threads: no comparison of load threads before the hour (its requests
# would reach the servers' counts uncounted by the run).
"$bin" run "http://$addr/" -s pool:16 -c 16 -d "$duration" --warmup 5s --threads 2 \
    --quiet --format json -o "$bench_tmp/http.json" >/dev/null &
http_pid=$!
"$bin" run "$pg_url" --query "SELECT pg_sleep(0.002), nextval('soak_count')" -s pool:4 -c 4 -d "$duration" --warmup 5s --threads 2 \
    --quiet --format json -o "$bench_tmp/pg.json" >/dev/null &
pg_pid=$!
sample() {
    local pid=$1 rss threads fds
    rss=$(sed -n 's/^VmRSS:\s*\([0-9]*\) kB/\1/p' "/proc/$pid/status" 2>/dev/null) || return 1
    threads=$(sed -n 's/^Threads:\s*\([0-9]*\)/\1/p' "/proc/$pid/status" 2>/dev/null) || return 1
    fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    [ -n "$rss" ] && [ -n "$threads" ] || return 1
    echo "$rss $fds $threads"
}
elapsed=0
: >"$bench_tmp/samples"
printf '%8s  %-28s  %-28s\n' "t" "http: rss MB / fds / threads" "pg: rss MB / fds / threads"
while kill -0 "$http_pid" 2>/dev/null && kill -0 "$pg_pid" 2>/dev/null; do
    sleep "$every"
    elapsed=$((elapsed + every))
    h=$(sample "$http_pid") || break
    p=$(sample "$pg_pid") || break
    echo "$elapsed $h $p" >>"$bench_tmp/samples"
    # shellcheck disable=SC2086
    set -- $h $p
    printf '%6d s  %8.1f / %4d / %3d           %8.1f / %4d / %3d\n' "$elapsed" \
        "$(echo "$1 / 1024" | bc -l)" "$2" "$3" "$(echo "$4 / 1024" | bc -l)" "$5" "$6"
done
wait "$http_pid"
wait "$pg_pid"
sleep 2
pg_after=$(pg_count)
served=$(curl -s "http://$addr/_poolbench/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
python3 - "$bench_tmp" "$served" "$pg_before" "$pg_after" <<'PY'
import json, statistics, sys
tmp, served, pg_before, pg_after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [list(map(int, l.split())) for l in open(f"{tmp}/samples")]
missed = []
def check(name, ok, text):
    print(f"  {'met    ' if ok else 'NOT MET'}  {text}")
    if not ok:
        missed.append(f"{name}: {text}")
# The one request the run sends before any load to check the target
# answers: the built-in server's counters are reset after it, the
# sequence counts it.
for name, col, counted, preflight in (("http", 1, served, 0), ("pg", 4, pg_after - pg_before, 1)):
    c = json.load(open(f"{tmp}/{name}.json"))["cells"][0]
    print(f"{name}: {c['throughput_rps']:,.0f} req/s, {c['requests']:,} requests, errors {c['errors']['total']}, p99 {c['latency_us']['p99'] / 1000:.1f} ms")
    if rows:
        # The start: minute 5 where the run lasted 10 or more, once the
        # latency histograms (HdrHistogram, resized as larger values come)
        # have met the run's slowest requests; minute 1 is printed too.
        first, last = rows[0], rows[-1]
        start = next((r for r in rows if r[0] >= 300), first) if last[0] >= 600 else first
        for i, what in enumerate(("rss", "descriptors", "threads")):
            a, b = start[col + i], last[col + i]
            early = f"; from {first[0]} s {first[col + i]}: {b / first[col + i]:.3f}" if start is not first else ""
            check(name, b <= 1.05 * a, f"{what} at {start[0]} s {a}, at {last[0]} s {b}: ratio {b / a:.3f} (target <= 1.05){early}")
    t = c["timeline"]
    per_min = 60_000 // t["bucket_ms"]
    ok = t["ok"][t["measure_from_bucket"]:]
    minutes = [sum(ok[i:i + per_min]) / 60 for i in range(0, len(ok) - per_min + 1, per_min)]
    if minutes:
        med = statistics.median(minutes)
        lo, hi = min(minutes), max(minutes)
        check(name, lo >= 0.9 * med and hi <= 1.1 * med,
              f"{len(minutes)} whole minutes: median {med:,.0f} req/s, lowest {lo:,.0f} ({lo / med:.3f}), highest {hi:,.0f} ({hi / med:.3f}) (target within 10%)")
    hist = c["latency_us"]["count"]
    check(name, hist == c["requests"], f"latency histogram count {hist:,} against {c['requests']:,} requests measured")
    sent = preflight + c["requests"] + c["warmup_requests"] + c["after_end"] + c["unfinished"]
    check(name, counted == sent, f"the server counted {counted:,} against {sent:,} sent (the check before load {preflight}, warm-up {c['warmup_requests']:,}, measured {c['requests']:,}, after the end {c['after_end']}, unfinished {c['unfinished']})")
if missed:
    print("missed:", *missed, sep="\n  ")
PY
