#!/usr/bin/env bash
# Is `poolbench tune --find-rate`'s answer right? Checks it against a
# brute-force sweep of `poolbench run --rate` on the same service.
#
#   bench/find-rate.sh [SERVICE...]   (default: serve nginx pg-cpu fastapi)
#
#   serve    poolbench serve --delay 20ms --max-inflight 24: 1,200 req/s at most
#   nginx    nginx (OS package), one worker, a 13-byte body
#   pg-cpu   PostgreSQL (scripts/services.sh), SELECT count(*) FROM
#            generate_series(1,20000): CPU-bound, on the generator's cores
#   fastapi  bench/services/fastapi_sqlalchemy.py: FastAPI with sync
#            SQLAlchemy at its pool defaults (5+10, pool_timeout 30 s) on
#            PostgreSQL; it freezes from 16 requests in flight, so each
#            sweep point runs on a freshly started app
#
# For each service: (a) `poolbench tune URL --find-rate --slo 'p99<100ms'
# --budget 2m`, timed, every point printed; (b) a sweep around its answer F,
# rates up from 0.90 F in steps of 2% until two in a row fail (at most
# 1.40 F), each held 20 s after a 2 s
# warm-up by `poolbench run --rate R` (one run, the strategy and in-flight
# cap the search held F with),
# sustained when p99 <= 100 ms, errors <= 1%, nothing dropped and
# completions >= 99% of the rate; (c) the bounds, MET or NOT MET: F within
# 5% of the sweep's highest sustained rate (the highest below its first
# failure); the search within its budget + 10 s (waiting out a frozen
# service is not billed); no rate above the sweep's rate + 5% held by most
# of its holds (the search's own rule), and the holds above it whose p99
# was still under the SLO named not sustained. About 7 minutes a service.
#
# Environment: POOLBENCH (default target/release/poolbench, not built
# here), FR_SLO, FR_HOLD (s), FR_BUDGET (find_rate.py), FR_OUT=DIR (keep
# the JSON there). Exit 0 whatever the bounds say; 2 if the binary is
# missing or a service could not be started.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=${POOLBENCH:-target/release/poolbench}
[ -x "$bin" ] || { echo "find-rate.sh: no poolbench at $bin (cargo build --release -p poolbench --locked)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
export POOLBENCH=$bin
all=(serve nginx pg-cpu fastapi)
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=("${all[@]}")
for s in "${wanted[@]}"; do
    case " ${all[*]} " in *" $s "*) ;; *) echo "unknown service $s (one of: ${all[*]})" >&2; exit 2 ;; esac
done
py=$(python3 -c 'import sys; print(sys.executable)')
bench_name=find-rate
bench_cmd="bench/find-rate.sh ${wanted[*]}"
# shellcheck source=bench/lib.sh disable=SC1091
. bench/lib.sh
out=${FR_OUT:-$bench_tmp/out}
mkdir -p "$out"
svc_pid=
svc_signal=TERM # fastapi: KILL (it ignores TERM while frozen); nginx's master stops its workers on TERM
pg_dir=
stop_service() {
    if [ -n "$svc_pid" ]; then kill -s "$svc_signal" "$svc_pid" 2>/dev/null || true; wait "$svc_pid" 2>/dev/null || true; svc_pid=; fi
    if [ -n "$pg_dir" ]; then scripts/services.sh stop "$pg_dir" >/dev/null 2>&1 || true; rm -rf "$pg_dir"; pg_dir=; fi
}
trap 'bench_rc=$?; stop_service; bench_cleanup' EXIT
trap 'exit 130' INT TERM

wait_addr() {
    addr=
    for _ in $(seq 400); do
        addr=$(sed -n "s/^http \([^ ]*\)$/\1/p" "$1" 2>/dev/null | head -n 1)
        [ -n "$addr" ] && return 0
        sleep 0.05
    done
    return 1
}

start_pg() {
    pg_dir=$(mktemp -d /tmp/find-rate-pg.XXXXXX)
    chmod 755 "$pg_dir"
    scripts/services.sh start "$pg_dir" pg >"$bench_tmp/pg.log" 2>&1 || { cat "$bench_tmp/pg.log" >&2; return 1; }
}

start_fastapi_app() {
    [ -z "$svc_pid" ] || { kill -KILL "$svc_pid" 2>/dev/null; wait "$svc_pid" 2>/dev/null; }
    PGSSLMODE=disable setsid "$py" bench/services/fastapi_sqlalchemy.py --dsn "$(cat "$pg_dir/pg/url")" \
        >"$bench_tmp/fastapi.out" 2>&1 &
    svc_pid=$!
    wait_addr "$bench_tmp/fastapi.out"
}

# Sets $url, the array $extra, and $about; or returns 1.
start() {
    extra=()
    case $1 in
    serve)
        setsid "$bin" serve --listen 127.0.0.1:0 --delay 20ms --max-inflight 24 >"$bench_tmp/serve.out" 2>&1 &
        svc_pid=$!
        wait_addr "$bench_tmp/serve.out" || return 1
        url="http://$addr/"
        about="poolbench serve --delay 20ms --max-inflight 24 (1,200 req/s at most)"
        ;;
    nginx)
        command -v nginx >/dev/null || apt_install nginx || return 1
        # shellcheck disable=SC2119
        start_nginx
        svc_pid=$nginx_pid
        nginx_pid=
        url="http://$nginx_addr/"
        about="$(nginx -v 2>&1 | sed 's/^nginx version: //'), one worker, 13-byte body"
        ;;
    pg-cpu)
        start_pg || return 1
        url="$(cat "$pg_dir/pg/url")?sslmode=disable"
        extra=(--query 'SELECT count(*) FROM generate_series(1,20000)')
        about="PostgreSQL (scripts/services.sh), SELECT count(*) FROM generate_series(1,20000)"
        ;;
    fastapi)
        svc_signal=KILL
        start_pg || return 1
        start_fastapi_app || return 1
        url="http://$addr/authors/1"
        about="fastapi_sqlalchemy.py at its pool defaults (freezes from 16 in flight)"
        ;;
    esac
}

print_machine
rc=0
for s in "${wanted[@]}"; do
    echo
    if ! start "$s"; then
        echo "== $s: could not start"
        rc=2
        stop_service
        continue
    fi
    echo "== $s: $about"
    "$py" bench/find_rate.py find "$s" "$url" "$out" "${extra[@]}"
    if [ "$s" = fastapi ]; then
        # A frozen app stays frozen for minutes: each sweep point on a fresh one.
        kill -KILL "$svc_pid" 2>/dev/null; wait "$svc_pid" 2>/dev/null; svc_pid=
        FR_FASTAPI_DSN=$(cat "$pg_dir/pg/url") "$py" bench/find_rate.py sweep "$s" "$url" "$out" "${extra[@]}"
    else
        "$py" bench/find_rate.py sweep "$s" "$url" "$out" "${extra[@]}"
    fi
    "$py" bench/find_rate.py check "$s" "$out"
    stop_service
    svc_signal=TERM
done
"$py" bench/find_rate.py report "$out" "${wanted[@]}"
exit $rc
