#!/usr/bin/env bash
# Is `poolbench tune`'s answer right? Checks it against a dense brute-force
# grid of `poolbench run` on the same service (issue 27, item 9).
#
#   bench/tune-accuracy.sh [SERVICE...]      (default: all five, in this order)
#
#   nginx     nginx (OS package), one worker, 13-byte body             c=64
#   workers   bench/services/limited_http.py workers: a Python
#             ThreadingHTTPServer that serves 8 at a time (a
#             Semaphore(8) held for a 10 ms sleep)                      c=64
#   freeze    bench/services/limited_http.py pool-freeze: a Python app
#             modelled on FastAPI + sync SQLAlchemy with a pool of 5+10:
#             each request holds one of 15 connections ~3 ms, then a
#             nested second checkout; 15 or more in flight deadlock it
#             until the 5 s checkout timeout (500s)                     c=40
#   pg        PostgreSQL (scripts/services.sh), SELECT pg_sleep(0.005)  c=64
#   serve     poolbench serve --delay 20ms --max-inflight 24            c=100
#
# For each service: (a) the grid, `poolbench run URL -s pool -c C --pool
# 1,2,..,10,11,..,C` (each size at most 10% above the one before), -d 2s
# --warmup 500ms --reps 2 --format json; per size its throughput, p99, error
# rate and stalls; the best throughput, the smallest pool within 5% of it,
# and the smallest pool that fails (> 1% errors or a stall). (b) `poolbench
# tune URL -c C --budget 2m --format json`, timed. (c) The bounds, MET or NOT
# MET: the recommended pool's throughput >= 0.9x the grid's best (the grid's
# own figure at that size, or the nearest size measured, and tune's figure);
# the recommended size <= 1.1x the grid's smallest pool within 5% of best,
# +1; tune's cliff within 10% of where the grid first fails ("n/a, met" if
# neither finds one); tune done in <= 120 s + 10 s of wall clock. A tune that
# fails or is missing is NOT RUN. At the end, a table and a markdown block
# for bench/RESULTS.md. All five take about 20 minutes of grids (3-4 min a
# service; the freezing one's frozen cells take longer) plus up to 2 min of
# tune each.
#
# Environment:
#   POOLBENCH=path      the binary (default target/release/poolbench; not built here)
#   TA_SIZES=1,4,16     the grid's pool sizes instead of the dense list (sizes
#                       above C are dropped), for a quick look
#   TA_DURATION=2s TA_WARMUP=500ms TA_REPS=2   the grid's cells
#   TA_BUDGET=2m        tune's --budget (the time bound stays 120 s + 10 s)
#   TA_SKIP_TUNE=1      the grid only (every bound NOT RUN)
#   TA_OUT=DIR          keep the JSON of grid and tune there (default: a temp dir,
#                       removed at exit)
#
# Every server is started on a free loopback port in a temp directory,
# stopped by its PID (PostgreSQL by scripts/services.sh, by the PID it wrote)
# and waited for once its service is done. Exit 0, whatever the bounds say;
# 2 if a service could not be started (the others still run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

bin=${POOLBENCH:-target/release/poolbench}
duration=${TA_DURATION:-2s}
warmup=${TA_WARMUP:-500ms}
reps=${TA_REPS:-2}
budget=${TA_BUDGET:-2m}
all=(nginx workers freeze pg serve)
[ $# -gt 0 ] && wanted=("$@") || wanted=("${all[@]}")

for s in "${wanted[@]}"; do
    case " ${all[*]} " in *" $s "*) ;; *) echo "unknown service $s (one of: ${all[*]})" >&2; exit 2 ;; esac
done
[ -x "$bin" ] || { echo "no poolbench binary at $bin (build it: cargo build --release -p poolbench --locked)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# The real interpreter, not pyenv's shim (which forks: $! would not be the server).
py=$(python3 -c 'import sys; print(sys.executable)')

# shellcheck source=bench/lib.sh
. bench/lib.sh
tmp=$(mktemp -d /tmp/tune-accuracy.XXXXXX)
chmod 755 "$tmp" # scripts/services.sh runs PostgreSQL as the postgres user
out=${TA_OUT:-$tmp/out}
mkdir -p "$out"
svc_pid=        # the running service's server, stopped by PID
pg_dir=         # scripts/services.sh's directory while PostgreSQL runs

stop_service() {
    if [ -n "$svc_pid" ]; then
        kill "$svc_pid" 2>/dev/null || true
        wait "$svc_pid" 2>/dev/null || true
        svc_pid=
    fi
    if [ -n "$pg_dir" ]; then
        scripts/services.sh stop "$pg_dir" >/dev/null 2>&1 || true
        pg_dir=
    fi
}
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    stop_service
    rm -rf "$tmp"
    bench_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Wait for FILE to have a line `http ADDR` (poolbench serve and
# limited_http.py print it once listening); sets $addr.
wait_http_line() {
    local file=$1
    addr=
    for _ in $(seq 200); do
        addr=$(sed -n 's/^http \([^ ]*\)$/\1/p' "$file" 2>/dev/null | head -n 1)
        [ -n "$addr" ] && return 0
        kill -0 "$svc_pid" 2>/dev/null || break
        sleep 0.05
    done
    return 1
}

# Each start_* sets $url, $c, $about and the array run_extra (arguments for
# both run and tune), or returns 1.
start_nginx_service() {
    command -v nginx >/dev/null || apt_install nginx || return 1
    # shellcheck disable=SC2119 # no arguments: HTTP/1.1
    start_nginx # bench/lib.sh: one worker, a 13-byte body; sets $nginx_addr
    svc_pid=$nginx_pid
    nginx_pid=
    url="http://$nginx_addr/"
    c=64
    run_extra=()
    about="$(nginx -v 2>&1 | sed 's/^nginx version: //'), one worker, 13-byte body"
}

start_python() {
    local model=$1
    "$py" bench/services/limited_http.py "$model" >"$tmp/$model.out" 2>&1 &
    svc_pid=$!
    wait_http_line "$tmp/$model.out" || { cat "$tmp/$model.out" >&2; return 1; }
    url="http://$addr/"
    run_extra=()
    case $model in
    workers)
        c=64
        about="limited_http.py workers (Python $("$py" -c 'import platform; print(platform.python_version())') ThreadingHTTPServer, Semaphore(8) held 10 ms)"
        ;;
    pool-freeze)
        c=40
        about="limited_http.py pool-freeze (pool of 15 with FIFO waiters, ~3 ms held, nested checkout, 5 s checkout timeout)"
        ;;
    esac
}

start_pg() {
    pg_dir=$tmp/pg-services
    mkdir -p "$pg_dir"
    scripts/services.sh start "$pg_dir" pg >"$tmp/pg-services.log" 2>&1 || {
        cat "$tmp/pg-services.log" >&2
        return 1
    }
    url="$(cat "$pg_dir/pg/url")?sslmode=disable"
    c=64
    run_extra=(--query 'SELECT pg_sleep(0.005)')
    about="PostgreSQL $(pgbench --version 2>/dev/null | awk '{print $3}') (scripts/services.sh), SELECT pg_sleep(0.005), sslmode=disable"
}

start_builtin() {
    "$bin" serve --listen 127.0.0.1:0 --delay 20ms --max-inflight 24 >"$tmp/serve.out" 2>&1 &
    svc_pid=$!
    wait_http_line "$tmp/serve.out" || { cat "$tmp/serve.out" >&2; return 1; }
    url="http://$addr/"
    c=100
    run_extra=()
    about="poolbench serve --delay 20ms --max-inflight 24"
}

now() { date +%s.%N; }

# After the grid, wait until an HTTP service answers 200 again before tune
# starts (the freezing one keeps its stuck checkouts up to its 5 s timeout
# after the grid's last cells): up to 3 tries of 15 s.
settle() {
    case $1 in http://*) ;; *) return 0 ;; esac
    for _ in 1 2 3; do
        curl -sf -m 15 -o /dev/null "$1" && return 0
    done
    echo "  (the service still does not answer 200 after the grid; tune starts anyway)"
}

nproc_n=$(nproc)
version=$("$bin" --version 2>/dev/null | head -1)
echo "machine: $nproc_n cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary:  $bin ($version)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null)"
echo
failed_start=()
results=()
for s in "${wanted[@]}"; do
    started=0
    case $s in
    nginx) start_nginx_service || started=$? ;;
    workers) start_python workers || started=$? ;;
    freeze) start_python pool-freeze || started=$? ;;
    pg) start_pg || started=$? ;;
    serve) start_builtin || started=$? ;;
    esac
    if [ "$started" -ne 0 ]; then
        echo "== $s: could not be started; skipped" >&2
        failed_start+=("$s")
        stop_service
        continue
    fi
    if [ -n "${TA_SIZES:-}" ]; then
        sizes=$(tr ',' '\n' <<<"$TA_SIZES" | awk -v c="$c" '$1 <= c' | paste -sd,)
    else
        sizes=$("$py" bench/tune_accuracy.py sizes "$c")
    fi
    echo "== $s: $about at ${url%%\?*}, c=$c"
    echo "  grid: $(tr ',' '\n' <<<"$sizes" | wc -l) pool sizes ($sizes), -d $duration --warmup $warmup --reps $reps"
    t0=$(now)
    "$bin" run "$url" "${run_extra[@]}" -s pool -c "$c" --pool "$sizes" -d "$duration" \
        --warmup "$warmup" --reps "$reps" --format json -q -o "$out/$s.grid.json" \
        >/dev/null 2>"$out/$s.grid.err"
    rc=$?
    echo "  grid took $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s (exit $rc)"
    [ $rc -ne 0 ] && sed 's/^/  run: /' "$out/$s.grid.err" | head -20
    if [ -s "$out/$s.grid.json" ]; then
        "$py" bench/tune_accuracy.py grid "$out/$s.grid.json"
    fi

    if [ -n "${TA_SKIP_TUNE:-}" ]; then
        tune_rc=127
        wall=0
    else
        settle "$url"
        t0=$(now)
        "$bin" tune "$url" "${run_extra[@]}" -c "$c" --budget "$budget" --format json \
            >"$out/$s.tune.json" 2>"$out/$s.tune.err"
        tune_rc=$?
        wall=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
        if [ $tune_rc -ne 0 ]; then
            echo "  tune failed (exit $tune_rc after $wall s):"
            sed 's/^/    /' "$out/$s.tune.err" | head -20
        fi
    fi
    "$py" bench/tune_accuracy.py check "$s" "$c" "$out/$s.grid.json" "$out/$s.tune.json" \
        "$tune_rc" "$wall" "$out/$s.result.json"
    [ -s "$out/$s.result.json" ] && results+=("$out/$s.result.json")
    stop_service
    echo
done

if [ ${#results[@]} -gt 0 ]; then
    NPROC=$nproc_n POOLBENCH_VERSION=$version "$py" bench/tune_accuracy.py report "${results[@]}"
fi
if [ ${#failed_start[@]} -gt 0 ]; then
    echo "could not start: ${failed_start[*]}" >&2
    exit 2
fi
exit 0
