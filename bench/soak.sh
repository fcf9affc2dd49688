#!/usr/bin/env bash
# Soak: is poolbench's memory flat over a long run?
#
#   bench/soak.sh [SECONDS] [C]      (defaults: 600 s, c=1000)
#
# Starts `poolbench serve --delay 10ms` on a free loopback port, runs
# `poolbench run -s pool:C -c C -d SECONDS --warmup 5s` against it, samples
# the load generator's RSS (/proc/PID/status, VmRSS) every 10 s, and prints
# the series, the value at minute 1 and the last, and their ratio (held to
# <= 1.1). The run is bounded by its duration and stops by itself.
set -euo pipefail
seconds=${1:-600}
c=${2:-1000}
cd "$(dirname "$0")/.."
. bench/lib.sh
build_poolbench
start_serve http --delay 10ms
print_machine
echo "server:  poolbench serve --delay 10ms at $addr"
echo "load:    poolbench run -s pool:$c -c $c -d ${seconds}s --warmup 5s"
"$bin" run "http://$addr/" -s "pool:$c" -c "$c" -d "${seconds}s" --warmup 5s \
    --quiet --format json -o "$bench_tmp/soak.json" >/dev/null &
run_pid=$!
samples=()
elapsed=0
while kill -0 "$run_pid" 2>/dev/null; do
    sleep 10
    elapsed=$((elapsed + 10))
    rss=$(sed -n 's/^VmRSS:\s*\([0-9]*\) kB/\1/p' "/proc/$run_pid/status" 2>/dev/null || true)
    [ -n "$rss" ] || break
    samples+=("$elapsed:$rss")
    awk -v t="$elapsed" -v kb="$rss" 'BEGIN { printf "t=%4d s  rss %7.1f MB\n", t, kb / 1024 }'
done
wait "$run_pid"
python3 - "$bench_tmp/soak.json" "${samples[@]}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cells"][0]
pts = [tuple(int(x) for x in s.split(":")) for s in sys.argv[2:]]
at_min = next((kb for t, kb in pts if t >= 60), pts[0][1])
last = pts[-1][1]
print(f"throughput {c['throughput_rps']:,.0f} req/s, errors {c['errors']['total']}, p99 {c['latency_us']['p99'] / 1000:.1f} ms")
print(f"rss at minute 1 {at_min / 1024:.1f} MB, last {last / 1024:.1f} MB, ratio {last / at_min:.3f} (target <= 1.1)")
PY
