#!/usr/bin/env bash
# poolbench against redis-benchmark on the same throwaway Redis, interleaved.
#
#   bench/vs-redis-benchmark.sh [ROUNDS] [REQUESTS]   (defaults: 3 rounds of 500000)
#
# Starts Redis with scripts/services.sh (installing it if missing), then
# alternates `redis-benchmark -t ping -c 50 -n REQUESTS` (no pipelining; its
# PING_MBULK figure, the form the redis crate sends) and `poolbench run
# redis://... -s pool:50 -c 50 -n REQUESTS` (PING), and prints each side's
# median, the ratio of medians, and the median of per-round ratios.
set -euo pipefail
rounds=${1:-3}
requests=${2:-500000}
cd "$(dirname "$0")/.."
. bench/lib.sh

build_poolbench
tmp=$bench_tmp
start_services redis
port=$(echo "$url" | sed 's#.*:\([0-9]*\)/.*#\1#')

print_machine
echo "server:  $(redis-server --version | awk '{print $1, $2, $3}') at 127.0.0.1:$port (scripts/services.sh)"
rb_rps=()
pb_rps=()
for i in $(seq "$rounds"); do
    r=$(redis-benchmark -h 127.0.0.1 -p "$port" -t ping -c 50 -n "$requests" -q 2>/dev/null |
        tr '\r' '\n' | awk '/^PING_MBULK:/ {print $2}' | tail -1)
    p=$("$bin" run "$url" -s pool:50 -c 50 -n "$requests" --warmup 1s --quiet --format json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_rps"])')
    printf 'round %d: redis-benchmark %10.0f req/s     poolbench %10.0f req/s\n' "$i" "$r" "$p"
    rb_rps+=("$r")
    pb_rps+=("$p")
done
summarize redis-benchmark "req/s" 1.0 "${rb_rps[*]}" "${pb_rps[*]}"
