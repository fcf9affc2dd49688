#!/usr/bin/env bash
# poolbench against wrk on the same built-in server, interleaved.
#
#   bench/vs-wrk.sh [ROUNDS] [DURATION]     (defaults: 3 rounds of 10s)
#
# Starts `poolbench serve` (13-byte body, no delay) on a free loopback port,
# then alternates `wrk -t2 -c100` and `poolbench run -s pool:100 -c 100`,
# and prints each side's median req/s, the ratio of medians, and the median
# of per-round ratios (robust to the machine's drift between rounds).
set -euo pipefail
rounds=${1:-3}
duration=${2:-10s}
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null; then
    echo "installing wrk from the OS packages" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y -q wrk >/dev/null; else sudo apt-get install -y -q wrk >/dev/null; fi
fi
cargo build --release -q -p poolbench
bin=target/release/poolbench

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
url="http://$addr/"

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
echo "server:  poolbench serve at $url (13-byte body, no delay)"
echo "wrk:     $(wrk -v 2>&1 | head -1)"
wrk_rps=()
pb_rps=()
for i in $(seq "$rounds"); do
    w=$(wrk -t2 -c100 -d"$duration" "$url" | awk '/^Requests\/sec/ {print $2}')
    p=$("$bin" run "$url" -s pool:100 -c 100 -d "$duration" --quiet --format json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_rps"])')
    printf 'round %d: wrk %10.0f req/s   poolbench %10.0f req/s\n' "$i" "$w" "$p"
    wrk_rps+=("$w")
    pb_rps+=("$p")
done
python3 - "${wrk_rps[*]}" "${pb_rps[*]}" <<'PY'
import statistics, sys
ws = [float(x) for x in sys.argv[1].split()]
ps = [float(x) for x in sys.argv[2].split()]
w, p = statistics.median(ws), statistics.median(ps)
paired = statistics.median(b / a for a, b in zip(ws, ps))
print(f"median:  wrk {w:,.0f} req/s   poolbench {p:,.0f} req/s   ratio of medians {p / w:.2f}x")
print(f"paired:  median of per-round ratios poolbench/wrk {paired:.2f}x (each round's two runs are adjacent)")
PY
