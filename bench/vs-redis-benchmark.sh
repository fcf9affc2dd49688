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

cargo build --release -q -p poolbench
bin=${CARGO_TARGET_DIR:-target}/release/poolbench

tmp=$(mktemp -d /tmp/poolbench-vs-redis.XXXXXX)
# Its own directory: the postgres user must be able to reach it.
services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
cleanup() {
    scripts/services.sh stop "$services" || true
    rm -rf "$tmp" "$services"
}
trap cleanup EXIT
scripts/services.sh start "$services" redis >/dev/null
url=$(cat "$services/redis/url")
port=$(echo "$url" | sed 's#.*:\([0-9]*\)/.*#\1#')

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
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
python3 - "${rb_rps[*]}" "${pb_rps[*]}" <<'PY'
import statistics, sys
rs = [float(x) for x in sys.argv[1].split()]
ps = [float(x) for x in sys.argv[2].split()]
r, p = statistics.median(rs), statistics.median(ps)
paired = statistics.median(b / a for a, b in zip(rs, ps))
print(f"median:  redis-benchmark {r:,.0f} req/s   poolbench {p:,.0f} req/s   ratio of medians {p / r:.2f}x")
print(f"paired:  median of per-round ratios poolbench/redis-benchmark {paired:.2f}x (target >= 0.9x)")
PY
