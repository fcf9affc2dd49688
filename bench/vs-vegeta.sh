#!/usr/bin/env bash
# poolbench's open loop against vegeta's, interleaved, on nginx and on
# `poolbench serve`, at 1,000 to 100,000 req/s.
#
#   bench/vs-vegeta.sh [ROUNDS] [DURATION] [RATES]
#       (defaults: 5 rounds, 4s measured after 1s warm-up,
#        "1000 5000 10000 20000 50000 100000")
#
# vegeta: `vegeta attack -rate R -max-workers 100 -connections 100` for
# warm-up + duration; its results before the warm-up's end are dropped.
# poolbench: `run TARGET -s pool:100 --rate R -d DURATION --warmup 1s`
# (the default --max-inflight 1000). Prints per round both tools' p50/p99,
# poolbench's corrected p99, late count, send lag and generator hiccups,
# and the rate each sent at (vegeta may not reach the higher rates: then
# its figures are at the rate it reached); then per target and rate the
# medians and the checks:
#   uncorrected p50 and p99 within 1.5x of vegeta's (or lower);
#   corrected p99 within 2x of the uncorrected one when nothing was late;
#   p99 of the reruns within 2x of each other;
#   the open-loop bounds, in at least two rounds of three: the rate within
#   1% of the asked rate and the send lag p99 within 50 µs up to 10,000
#   req/s, 200 µs up to 50,000 and 1 ms above (exit 1 otherwise).
set -euo pipefail
rounds=${1:-5}
duration=${2:-4s}
rates=${3:-1000 5000 10000 20000 50000 100000}
warmup=1s
cd "$(dirname "$0")/.."
. bench/lib.sh

command -v nginx >/dev/null || { echo "installing nginx from the OS packages" >&2; apt_install nginx; }
vegeta=$(go env GOPATH 2>/dev/null)/bin/vegeta
if [ ! -x "$vegeta" ]; then
    echo "installing vegeta with go install" >&2
    go install github.com/tsenart/vegeta/v12@v12.13.0
fi
build_poolbench
start_serve http
serve_url="http://$addr/"
start_nginx
nginx_url="http://$nginx_addr/"

print_machine
echo "nginx:   $(nginx -v 2>&1) at $nginx_url (worker_processes 1, 13-byte body)"
echo "serve:   poolbench serve at $serve_url (13-byte body, no delay)"
echo "vegeta:  $(go version -m "$vegeta" | awk '$1 == "mod" {print $3}') ($(go version -m "$vegeta" | head -1 | awk '{print $2}'))"
secs=$(python3 -c "import sys; print(float(sys.argv[1].rstrip('s')) + 1)" "$duration")

rows="$bench_tmp/rows"
: >"$rows"
for target in nginx serve; do
    url=$nginx_url
    [ "$target" = serve ] && url=$serve_url
    for rate in $rates; do
        for i in $(seq "$rounds"); do
            echo "GET $url" | "$vegeta" attack -rate "$rate" -duration "${secs}s" \
                -max-workers 100 -connections 100 | "$vegeta" encode --to json >"$bench_tmp/vegeta.json"
            v=$(python3 bench/vegeta_percentiles.py "$bench_tmp/vegeta.json" 1.0)
            "$bin" run "$url" -s pool:100 --rate "$rate" -d "$duration" --warmup "$warmup" \
                --quiet --format json >"$bench_tmp/pb.json"
            p=$(python3 - "$bench_tmp/pb.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
u, l = c["latency_uncorrected_us"], c["latency_us"]
lag, h = c["send_lag_us"], c["generator_hiccups_us"]
print(u["p50"], u["p99"], l["p99"], c["late"], lag["p99"], h["p999"], c["achieved_rate"])
PY
)
            echo "$target $rate $v $p" >>"$rows"
            # shellcheck disable=SC2086
            set -- $v $p
            printf '%-5s %6s/s round %d: vegeta %6.0f/s p50 %6.0f µs p99 %7.0f µs | poolbench %6.0f/s uncorr. p50 %6.0f µs p99 %7.0f µs, corr. p99 %7.0f µs, late %s, lag p99 %4.0f µs, hiccup p99.9 %5.0f µs\n' \
                "$target" "$rate" "$i" "$3" "$1" "$2" "${10}" "$4" "$5" "$6" "$7" "$8" "$9"
        done
    done
done
python3 bench/vegeta_summary.py "$rows"
