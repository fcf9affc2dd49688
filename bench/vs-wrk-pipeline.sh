#!/usr/bin/env bash
# HTTP/1.1 pipelining against wrk's: poolbench `pipeline:4x16` at c=64
# against `wrk -t2 -c4` with a Lua script that writes 16 requests at once,
# on nginx (OS package, one worker, a 13-byte body), interleaved.
#
#   bench/vs-wrk-pipeline.sh [ROUNDS] [DURATION] [DEPTH]
#       (defaults: 5 rounds of 5s, depth 16)
#
# Both keep 4 connections with DEPTH requests on each; wrk counts every
# answer as a request, as poolbench does. Prints each side's median req/s,
# the ratio of medians and the median of per-round ratios (target >= 1.0x).
set -euo pipefail
rounds=${1:-5}
duration=${2:-5s}
depth=${3:-16}
cd "$(dirname "$0")/.."
. bench/lib.sh

command -v wrk >/dev/null || { echo "installing wrk from the OS packages" >&2; apt_install wrk; }
command -v nginx >/dev/null || { echo "installing nginx from the OS packages" >&2; apt_install nginx; }
build_poolbench
start_nginx
url="http://$nginx_addr/"
cat >"$bench_tmp/pipeline.lua" <<LUA
-- $depth requests in one write, as wrk's own pipeline example does.
init = function(args)
   local r = {}
   for i = 1, $depth do
      r[i] = wrk.format(nil, "/")
   end
   req = table.concat(r)
end

request = function()
   return req
end
LUA

print_machine
echo "server:  $(nginx -v 2>&1) at $url (one worker, 13-byte body)"
echo "wrk:     $(wrk -v 2>&1 | head -1), -t2 -c4, $depth requests a write (Lua)"
echo "pb:      run -s pipeline:4x$depth -c $((4 * depth))"
wrk_rps=()
pb_rps=()
for i in $(seq "$rounds"); do
    w=$(wrk -t2 -c4 -d"$duration" -s "$bench_tmp/pipeline.lua" "$url" | awk '/^Requests\/sec/ {print $2}')
    p=$("$bin" run "$url" -s "pipeline:4x$depth" -c $((4 * depth)) -d "$duration" --quiet --format json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_rps"])')
    printf 'round %d: wrk %10.0f req/s   poolbench %10.0f req/s\n' "$i" "$w" "$p"
    wrk_rps+=("$w")
    pb_rps+=("$p")
done
summarize wrk "req/s" 1.0 "${wrk_rps[*]}" "${pb_rps[*]}"
