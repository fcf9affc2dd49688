#!/usr/bin/env bash
# poolbench against h2load (nghttp2) over h2c on the built-in server, interleaved.
#
#   bench/vs-h2load.sh [ROUNDS] [SECONDS] [SERVER]
#       (defaults: 5 rounds of 10 s, SERVER serve; SERVER nginx uses nginx
#       from the OS packages with `listen ... http2`, h2c, one worker)
#
# Starts `poolbench serve` (13-byte body, no delay) on a free loopback port,
# then alternates `h2load -c 10 -m 10 -t 2` (10 connections, 10 streams each:
# 100 requests in flight) and `poolbench run h2c://... -s round-robin:10 -c 100`
# (100 workers over 10 connections), and prints each side's median req/s,
# the ratio of medians, and the median of per-round ratios.
set -euo pipefail
rounds=${1:-5}
seconds=${2:-10}
server=${3:-serve}
cd "$(dirname "$0")/.."
. bench/lib.sh

if ! command -v h2load >/dev/null; then
    echo "installing h2load (nghttp2-client) from the OS packages" >&2
    apt_install nghttp2-client
fi
build_poolbench
if [ "$server" = nginx ]; then
    command -v nginx >/dev/null || { echo "installing nginx from the OS packages" >&2; apt_install nginx; }
    start_nginx http2
    addr=$nginx_addr
    echo "server:  $(nginx -v 2>&1) at $addr (h2c, one worker, 13-byte body)"
else
    start_serve http
    echo "server:  poolbench serve at $addr (h2c, 13-byte body, no delay)"
fi

print_machine
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
summarize h2load "req/s" 1.0 "${h2_rps[*]}" "${pb_rps[*]}"
