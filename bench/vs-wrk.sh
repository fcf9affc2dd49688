#!/usr/bin/env bash
# poolbench against wrk on the same built-in server, interleaved.
#
#   bench/vs-wrk.sh [ROUNDS] [DURATION] [SERVER]
#       (defaults: 3 rounds of 10s, SERVER serve; SERVER nginx uses nginx from
#       the OS packages, one worker, a 13-byte body)
#
# Starts `poolbench serve` (13-byte body, no delay) on a free loopback port,
# then alternates `wrk -t2 -c100` and `poolbench run -s pool:100 -c 100`,
# and prints each side's median req/s, the ratio of medians, and the median
# of per-round ratios (robust to the machine's drift between rounds).
set -euo pipefail
rounds=${1:-3}
duration=${2:-10s}
server=${3:-serve}
# DURATION in whole seconds, 10 or 10s: one line and exit 2 otherwise.
seconds=${duration%s}
case $seconds in '' | *[!0-9]*) echo "DURATION must be whole seconds (10 or 10s), not $duration" >&2; exit 2 ;; esac
case $rounds in '' | *[!0-9]* | 0) echo "ROUNDS must be a whole number above 0, not $rounds" >&2; exit 2 ;; esac
case $server in serve | nginx) ;; *) echo "SERVER must be serve or nginx, not $server" >&2; exit 2 ;; esac
duration=${seconds}s
cd "$(dirname "$0")/.."
. bench/lib.sh

if ! command -v wrk >/dev/null; then
    echo "installing wrk from the OS packages" >&2
    apt_install wrk
fi
build_poolbench
if [ "$server" = nginx ]; then
    command -v nginx >/dev/null || { echo "installing nginx from the OS packages" >&2; apt_install nginx; }
    start_nginx
    url="http://$nginx_addr/"
    about="$(nginx -v 2>&1) at $url (one worker, 13-byte body)"
else
    start_serve http
    url="http://$addr/"
    about="poolbench serve at $url (13-byte body, no delay)"
fi

print_machine
echo "server:  $about"
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
summarize wrk "req/s" 1.0 "${wrk_rps[*]}" "${pb_rps[*]}"
