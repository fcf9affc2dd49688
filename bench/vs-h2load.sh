#!/usr/bin/env bash
# poolbench against h2load (nghttp2) over h2c on the built-in server, interleaved.
#
#   bench/vs-h2load.sh [ROUNDS] [SECONDS]     (defaults: 5 rounds of 10 s)
#
# Starts `poolbench serve` (13-byte body, no delay) on a free loopback port,
# then alternates `h2load -c 10 -m 10 -t 2` (10 connections, 10 streams each:
# 100 requests in flight) and `poolbench run h2c://... -s round-robin:10 -c 100`
# (100 workers over 10 connections), and prints each side's median req/s,
# the ratio of medians, and the median of per-round ratios.
set -euo pipefail
rounds=${1:-5}
seconds=${2:-10}
cd "$(dirname "$0")/.."

if ! command -v h2load >/dev/null; then
    echo "installing h2load (nghttp2-client) from the OS packages" >&2
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    $sudo apt-get install -y -q nghttp2-client >/dev/null || {
        $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q nghttp2-client >/dev/null
    }
fi
cargo build --release -q -p poolbench
bin=${CARGO_TARGET_DIR:-target}/release/poolbench

tmp=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" serve --listen 127.0.0.1:0 >"$tmp/serve.out" &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/serve.out" ] && break; sleep 0.05; done
addr=$(sed -n 's/^http \([^ ]*\)$/\1/p' "$tmp/serve.out" | head -n 1)
[ -n "$addr" ] || { echo "server did not start" >&2; exit 1; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
echo "server:  poolbench serve at $addr (h2c, 13-byte body, no delay)"
echo "h2load:  $(h2load --version 2>&1 | head -1)"
h2_rps=()
pb_rps=()
for i in $(seq "$rounds"); do
    h=$(h2load -c 10 -m 10 -t 2 -D "$seconds" "http://$addr/" |
        sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p')
    p=$("$bin" run "h2c://$addr/" -s round-robin:10 -c 100 -d "${seconds}s" --quiet --format json |
        python3 -c 'import json,sys; c=json.load(sys.stdin)["cells"][0]; assert c["errors"]["total"]==0, c["errors"]; print(c["throughput_rps"])')
    printf 'round %d: h2load %10.0f req/s   poolbench %10.0f req/s\n' "$i" "$h" "$p"
    h2_rps+=("$h")
    pb_rps+=("$p")
done
python3 - "${h2_rps[*]}" "${pb_rps[*]}" <<'PY'
import statistics, sys
hs = [float(x) for x in sys.argv[1].split()]
ps = [float(x) for x in sys.argv[2].split()]
h, p = statistics.median(hs), statistics.median(ps)
paired = statistics.median(b / a for a, b in zip(hs, ps))
print(f"median:  h2load {h:,.0f} req/s   poolbench {p:,.0f} req/s   ratio of medians {p / h:.2f}x")
print(f"paired:  median of per-round ratios poolbench/h2load {paired:.2f}x (target >= 0.9x)")
PY
