#!/usr/bin/env bash
# per-request over TLS with and without session resumption, beside pool:C,
# against nginx (the OS package, session cache and tickets on), interleaved,
# on TLS 1.3 (nginx's default server) and on a TLS 1.2-only server.
#
#   bench/tls-resume.sh [ROUNDS] [SECONDS] [CONCURRENCY]
#                                  (defaults: 3 rounds of 5 s, c=8)
#
# Starts the services with scripts/services.sh (nginx's TLS server is
# https://localhost:PORT/, signed by the test CA). Each round runs, in turn,
#   poolbench run URL -s per-request --tls-resume on  -c C -d SECONDS
#   poolbench run URL -s per-request --tls-resume off -c C -d SECONDS
#   poolbench run URL -s pool:C                       -c C -d SECONDS
# and prints every run (req/s, connect p50, full and resumed handshakes),
# then per TLS version the medians and the median of per-round ratios
# resumed ÷ full. A resumed TLS 1.3 handshake still does a key exchange
# (psk_dhe_ke, as rustls, Go, Java and browsers offer); a resumed TLS 1.2
# one does no public-key work at all. Exits 1 when a version's ratio is
# below 2.
set -euo pipefail
rounds=${1:-3}
seconds=${2:-5}
c=${3:-8}
cd "$(dirname "$0")/.."
. bench/lib.sh

build_poolbench
services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
trap 'bench_rc=$?; scripts/services.sh stop "$services" || true; rm -rf "$services"; bench_cleanup' EXIT
scripts/services.sh start "$services" all >/dev/null
ca=$services/tls/ca.pem
print_machine
echo "target: nginx $(nginx -v 2>&1 | sed 's/.*\///'), c=$c, ${seconds}s per run"

one() {
    local url=$1
    shift
    "$bin" run "$url" --cacert "$ca" -c "$c" -d "${seconds}s" --warmup 1s \
        --format json --quiet "$@" >"$bench_tmp/r.json"
    python3 - "$bench_tmp/r.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
t = c.get("tls") or {}
print(f'{c["throughput_rps"]:.0f} {c["connect_us"]["p50"] / 1000:.2f} {t.get("full", 0)} {t.get("resumed", 0)} {c["errors"]["total"]}')
PY
}

measure() {
    local version=$1 url=$2
    on_all="" off_all="" pool_all="" ratios=""
    for round in $(seq "$rounds"); do
        read -r on on_ms on_full on_res on_err < <(one "$url" -s per-request --tls-resume on)
        read -r off off_ms off_full off_res off_err < <(one "$url" -s per-request --tls-resume off)
        read -r pool _ pool_full pool_res pool_err < <(one "$url" -s "pool:$c")
        echo "$version round $round: per-request resumed $on req/s (connect p50 ${on_ms} ms, $on_full full + $on_res resumed, $on_err errors)" \
            "| per-request full $off req/s (connect p50 ${off_ms} ms, $off_full full + $off_res resumed, $off_err errors)" \
            "| pool:$c $pool req/s ($pool_full full + $pool_res resumed, $pool_err errors)"
        on_all="$on_all $on" off_all="$off_all $off" pool_all="$pool_all $pool"
        ratios="$ratios $(python3 -c "print($on / max($off, 1))")"
    done
    python3 - "$on_all" "$off_all" "$pool_all" "$ratios" "$c" "$version" <<'PY'
import statistics as s, sys
on, off, pool, ratios = ([float(x) for x in a.split()] for a in sys.argv[1:5])
print(f"{sys.argv[6]} median: per-request resumed {s.median(on):,.0f} req/s, full {s.median(off):,.0f} req/s, "
      f"pool:{sys.argv[5]} {s.median(pool):,.0f} req/s")
r = s.median(ratios)
print(f"{sys.argv[6]} paired: median of per-round ratios resumed/full {r:.2f}x (target >= 2x)")
sys.exit(0 if r >= 2 else 1)
PY
}

status=0
measure "TLS 1.3" "$(cat "$services/nginx/tls-url")" || status=1
measure "TLS 1.2" "$(cat "$services/nginx/tls12-url")" || status=1
exit "$status"
