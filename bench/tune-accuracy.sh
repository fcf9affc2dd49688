#!/usr/bin/env bash
# Is `poolbench tune`'s answer right? Checks it against a dense brute-force
# grid of `poolbench run` on the same service (issue 27, item 9), and, with
# --runs N, whether it gives the same answer each time (issue 39).
#
#   bench/tune-accuracy.sh [--runs N] [SERVICE...]   (default: all nine, in this order)
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
#   fastapi   bench/services/fastapi_sqlalchemy.py: a real FastAPI app,
#             sync SQLAlchemy at its pool defaults (5+10, pool_timeout
#             30 s) on PostgreSQL (scripts/services.sh, sslmode=disable),
#             GET /authors/1. It serves 1..15 in flight and freezes at 16
#             or more: the 16th checkout blocks its event loop 30 s, each
#             request queued above 15 another 30 s, and SIGTERM waits for
#             the loop, so it is stopped with SIGKILL               c=50
#   grpc-slow bench/services/grpc_greeter -delay 500ms (Go, grpc-go; built with go build
#             into the temp dir, Go from the OS packages if missing):
#             helloworld.Greeter/SayHello, what grpc:// calls by default,
#             sleeping 500 ms; no stream limit, so the closed loop's
#             ceiling is c / 0.5 s = 200 req/s at any pool            c=100
#   pg-cpu    PostgreSQL (scripts/services.sh), SELECT count(*) FROM
#             generate_series(1,20000): CPU-bound, so on a small machine
#             a few connections already reach the best throughput (on 2
#             cores the smallest pool within 5% of best was 3, so the
#             bound asks for a pick <= 4)                               c=32
#   grpc-streams bench/services/grpc_greeter -delay 2ms -max-streams 10
#             (built as grpc-slow): helloworld.Greeter/SayHello waiting 2 ms, at
#             most 10 streams per connection (grpc.MaxConcurrentStreams,
#             SETTINGS_MAX_CONCURRENT_STREAMS 10): 100 calls in flight
#             need 10 connections (a pick <= 12 meets the size bound
#             when the grid's smallest within 5% is 10)                 c=100
#
# For each service: (a) the grid, `poolbench run URL -s pool -c C --pool
# 1,2,..,10,11,..,C` (each size at most 10% above the one before), -d 2s
# --warmup 500ms --format json, in two passes of one run a size (sizes up,
# then down, so the machine's drift over the grid cancels; nginx and
# grpc-streams: each pass once with one load thread and once with one per
# core, a size's figure the better count's mean); per size its
# mean throughput, p99, error rate and stalls; the best throughput, the smallest pool within 5% of it,
# and the smallest pool that fails (> 1% errors or a stall). Except:
#   fastapi    sizes 1..16 (16 is its first failing size), each size its own
#              `poolbench run` on a freshly started app (SIGKILL by PID, wait,
#              start again: a frozen cell leaves it frozen for minutes);
#              about 2-3 minutes
#   grpc-slow  -s shared,round-robin -c 100, sizes 1,2,4,8,16,32,64,100
#              (size 1 is `shared`, one connection; round-robin:N the
#              others), -d 3s --warmup 1s --reps 2; about 1-2 minutes
#   grpc-streams  -s shared,round-robin -c 100, sizes 1,2,..,10,11,12,14,
#              16,20,25,32,40,50,64,80,100 (size 1 is `shared`), the
#              default cells; about 2-3 minutes
# (b) `poolbench tune URL -c C --budget 2m --format json`, timed (fastapi:
# on a freshly started app). (c) The bounds, MET or NOT MET: the
# recommended pool's throughput >= 0.9x the grid's best (the grid's own
# figure at that size, or the nearest size measured, and tune's figure);
# the recommended size <= 1.1x the grid's smallest pool within 5% of best,
# +1; tune's cliff within 10% of where the grid first fails: errors, a
# stall, or a collapse, below 40% of the best size with at least half as
# many connections, as tune counts it ("n/a, met" if neither finds one);
# and, paired (TA_PAIRED rounds, default 4), the pick against the grid's
# best size run in turn right after tune, >= 0.9x: the grid reads its
# sizes minutes apart, and the machine's speed drifts more than 10% over
# that (nginx's grid once read 7-9 at 0.87x of its best while paired runs
# read pool:8 at 0.95-0.98x of pool:100); tune done in <= 120 s + 10 s of wall clock. For
# fastapi the time bound is 120 s + 2 x 60 s + 10 s = 250 s: tune waits out
# a frozen service outside its budget (each failure may add up to
# --recovery, 60 s by default), and this one freezes at every point above
# 15 in flight. Tune exits 1 when it recommends no pool, its JSON still on
# stdout: that is its answer (the bounds that need a pool are NOT MET); a
# tune that fails otherwise or whose JSON is missing is NOT RUN. Tune's
# `recommendation.cap` (why the pool is a cap on requests in flight),
# `capacity.still_rising` and its inferences (e.g. closed-loop-ceiling) are
# printed under its answer; the cap and the closed-loop ceiling also go in
# the markdown block's notes. At the end, a table and a markdown block for
# bench/log/RESULTS.md. All nine take about 30 minutes of grids (3-4 min a
# service; the freezing ones' frozen cells take longer) plus up to 2 min of
# tune each (fastapi: up to 4 min).
#
# --runs N (or RUNS=N): tune N times on each service (one grid), every run
# checked against the grid and listed (table rows `SERVICE #i`), then
# "picks agree within 10% (+1): MET" when the largest pick <= 1.1x the
# smallest + 1 (NOT MET if a run recommends no pool). Default 1; the same
# question should get the same answer, so check with --runs 3.
#
# Environment:
#   POOLBENCH=path      the binary (default target/release/poolbench; not built here)
#   TA_SIZES=1,4,16     the grid's pool sizes instead of the dense list (sizes
#                       above C are dropped), for a quick look
#   TA_DURATION=2s TA_WARMUP=500ms TA_REPS=2   the grid's cells (every service's,
#                       grpc-slow's too, when set)
#   TA_BUDGET=2m        tune's --budget (the time bound stays 120 s + 10 s,
#                       fastapi's 250 s)
#   TA_C=100            every service's client load instead of its own (the
#                       grid's largest size and tune's -c)
#   TA_PAIRED=4         rounds of the paired check (0: none): after each tune,
#                       its pick and the grid's best size run in turn (pick,
#                       best; best, pick; ...) with tune's load threads, each
#                       a grid cell's length, and the rounds' ratios' geometric
#                       mean must be >= 0.9 ("throughput, paired"; column `thr
#                       paired`). Not for fastapi (restarted per size).
#   TA_SKIP_TUNE=1      the grid only (every bound NOT RUN)
#   TA_OUT=DIR          keep the JSON of grid and tune there (default: a temp dir,
#                       removed at exit)
#
# Every server is started on a free loopback port in a temp directory,
# stopped by its PID (PostgreSQL by scripts/services.sh, by the PID it wrote;
# the FastAPI app with SIGKILL) and waited for once its service is done.
# Exit 0, whatever the bounds say; 2 if a service could not be started (the
# others still run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

bin=${POOLBENCH:-target/release/poolbench}
[ -f "$bin" ] && [ -x "$bin" ] || { echo "tune-accuracy.sh: $bin is not an executable poolbench (build it: cargo build --release)" >&2; exit 2; }
budget=${TA_BUDGET:-2m}
paired_rounds=${TA_PAIRED:-4}
case $paired_rounds in
'' | *[!0-9]*) echo "tune-accuracy.sh: TA_PAIRED must be a count of rounds (0: no paired check), not '$paired_rounds'" >&2; exit 2 ;;
esac
all=(nginx workers freeze pg serve fastapi grpc-slow pg-cpu grpc-streams)
runs=${RUNS:-1}
wanted=()
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=${2:-}; shift 2 || { echo "--runs needs a number" >&2; exit 2; } ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    *) wanted+=("$1"); shift ;;
    esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a whole number >= 1, not '$runs'" >&2; exit 2; }
[[ -z ${TA_C:-} || ${TA_C} =~ ^[1-9][0-9]*$ ]] || { echo "TA_C must be a whole number >= 1, not '$TA_C'" >&2; exit 2; }
[ ${#wanted[@]} -gt 0 ] || wanted=("${all[@]}")

for s in "${wanted[@]}"; do
    case " ${all[*]} " in *" $s "*) ;; *) echo "unknown service $s (one of: ${all[*]})" >&2; exit 2 ;; esac
done
[ -x "$bin" ] || { echo "no poolbench binary at $bin (build it: cargo build --release -p poolbench --locked)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# The real interpreter, not pyenv's shim (which forks: $! would not be the server).
py=$(python3 -c 'import sys; print(sys.executable)')

# shellcheck source=bench/lib.sh disable=SC1091 # followed with shellcheck -x
. bench/lib.sh
tmp=$(mktemp -d /tmp/tune-accuracy.XXXXXX)
chmod 755 "$tmp" # scripts/services.sh runs PostgreSQL as the postgres user
out=${TA_OUT:-$tmp/out}
mkdir -p "$out"
svc_pid=        # the running service's server, stopped by PID
svc_signal=TERM # the signal that stops it (fastapi: KILL, it ignores TERM while frozen)
pg_dir=         # scripts/services.sh's directory while PostgreSQL runs

stop_server() {
    if [ -n "$svc_pid" ]; then
        kill -s "$svc_signal" "$svc_pid" 2>/dev/null || true
        wait "$svc_pid" 2>/dev/null || true
        svc_pid=
    fi
}
stop_service() {
    stop_server
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
trap 'bench_rc=$?; cleanup' EXIT
trap 'exit 130' INT TERM

# Wait for FILE to have a line `KIND ADDR` (poolbench serve, limited_http.py
# and fastapi_sqlalchemy.py print `http ADDR` once listening, grpc_greeter
# `grpc ADDR`); sets $addr.
wait_addr_line() {
    local kind=$1 file=$2
    addr=
    for _ in $(seq 400); do
        addr=$(sed -n "s/^$kind \([^ ]*\)$/\1/p" "$file" 2>/dev/null | head -n 1)
        [ -n "$addr" ] && return 0
        kill -0 "$svc_pid" 2>/dev/null || break
        sleep 0.05
    done
    return 1
}

# Each start_* sets $url, $c, $about and the array run_extra (arguments for
# both run and tune), or returns 1. It may change the grid from the default
# (set in the main loop): grid_sizes (instead of the dense list),
# grid_strategy (-s; with one_is_shared, size 1 is `shared` and the sized
# strategy gets the sizes above 1), the cells (cell_duration, cell_warmup,
# cell_reps, unless TA_* set them), fresh_per_size (each size its own run on
# a service started again by restart_server), tune_extra_s (added to tune's
# time bound), grid_threads (load threads of the grid's passes: each pass
# runs once per count listed, and a size's figure is the better count's
# mean; tune chooses between one thread and one per core where its thread
# is busy, docs/tune.md, so the grid tries both where the generator works
# hard: nginx and grpc-streams; default: run's own).
start_nginx_service() {
    command -v nginx >/dev/null || apt_install nginx || return 1
    # shellcheck disable=SC2119 # no arguments: HTTP/1.1
    start_nginx # bench/lib.sh: one worker, a 13-byte body; sets $nginx_addr
    svc_pid=$nginx_pid
    nginx_pid=
    # shellcheck disable=SC2154 # set by start_nginx (bench/lib.sh)
    url="http://$nginx_addr/"
    c=64
    run_extra=()
    grid_threads="1 $(nproc)"
    about="$(nginx -v 2>&1 | sed 's/^nginx version: //'), one worker, 13-byte body"
}

start_python() {
    local model=$1
    setsid "$py" bench/services/limited_http.py "$model" >"$tmp/$model.out" 2>&1 &
    svc_pid=$!
    wait_addr_line http "$tmp/$model.out" || { cat "$tmp/$model.out" >&2; return 1; }
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

# PostgreSQL by scripts/services.sh; sets $pg_dir.
start_pg_server() {
    # A fresh directory each time: a stopped server's data stays behind
    # and initdb refuses a directory that is not empty.
    pg_dir=$(mktemp -d "$tmp/pg-services.XXXX")
    chmod 755 "$pg_dir"
    scripts/services.sh start "$pg_dir" pg >"$tmp/pg-services.log" 2>&1 || {
        cat "$tmp/pg-services.log" >&2
        return 1
    }
}

start_pg() {
    start_pg_server || return 1
    url="$(cat "$pg_dir/pg/url")?sslmode=disable"
    c=64
    run_extra=(--query 'SELECT pg_sleep(0.005)')
    about="PostgreSQL $(pgbench --version 2>/dev/null | awk '{print $3}') (scripts/services.sh), SELECT pg_sleep(0.005), sslmode=disable"
}

start_pg_cpu() {
    start_pg_server || return 1
    url="$(cat "$pg_dir/pg/url")?sslmode=disable"
    c=32
    run_extra=(--query 'SELECT count(*) FROM generate_series(1,20000)')
    about="PostgreSQL $(pgbench --version 2>/dev/null | awk '{print $3}') (scripts/services.sh), SELECT count(*) FROM generate_series(1,20000), sslmode=disable"
}

start_builtin() {
    setsid "$bin" serve --listen 127.0.0.1:0 --delay 20ms --max-inflight 24 >"$tmp/serve.out" 2>&1 &
    svc_pid=$!
    wait_addr_line http "$tmp/serve.out" || { cat "$tmp/serve.out" >&2; return 1; }
    url="http://$addr/"
    c=100
    run_extra=()
    about="poolbench serve --delay 20ms --max-inflight 24"
}

# The FastAPI app alone, on the PostgreSQL already started; sets $url.
start_fastapi_app() {
    PGSSLMODE=disable setsid "$py" bench/services/fastapi_sqlalchemy.py --dsn "$fastapi_dsn" \
        >"$tmp/fastapi.out" 2>&1 &
    svc_pid=$!
    wait_addr_line http "$tmp/fastapi.out" || { tail -20 "$tmp/fastapi.out" >&2; return 1; }
    url="http://$addr/authors/1"
}

start_fastapi() {
    start_pg_server || return 1
    fastapi_dsn=$(cat "$pg_dir/pg/url")
    svc_signal=KILL
    start_fastapi_app || return 1
    c=50
    run_extra=()
    grid_sizes=$(seq -s, 1 16)
    fresh_per_size=1
    tune_extra_s=120
    about="fastapi_sqlalchemy.py ($("$py" -c 'import fastapi, sqlalchemy, psycopg2, uvicorn; print(f"FastAPI {fastapi.__version__}, SQLAlchemy {sqlalchemy.__version__}, psycopg2 {psycopg2.__version__.split()[0]}, uvicorn {uvicorn.__version__}")'), pool 5+10, pool_timeout 30 s; PostgreSQL $(pgbench --version 2>/dev/null | awk '{print $3}'), sslmode=disable)"
}

# Build the Go server bench/services/grpc_greeter into $tmp/NAME and start
# it with ARGS...; sets $url and $grpc_ver (grpc-go's version, from its
# go.mod).
start_go_grpc() {
    local dir=grpc_greeter name=$1
    shift
    command -v go >/dev/null || {
        echo "  installing the Go toolchain from the OS packages" >&2
        apt_install golang-go || return 1
    }
    (cd "bench/services/$dir" && go build -buildvcs=false -o "$tmp/$name" .) \
        >"$tmp/$name.build" 2>&1 || { cat "$tmp/$name.build" >&2; return 1; }
    setsid "$tmp/$name" "$@" >"$tmp/$name.out" 2>&1 &
    svc_pid=$!
    wait_addr_line grpc "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; return 1; }
    url="grpc://$addr/"
    grpc_ver=$(sed -n 's/^\s*google.golang.org\/grpc \(v[^ ]*\).*/\1/p' "bench/services/$dir/go.mod" | head -1)
}

start_grpc_slow() {
    start_go_grpc grpc-slow -delay 500ms -max-streams 0 || return 1
    c=100
    run_extra=()
    grid_sizes=1,2,4,8,16,32,64,100
    grid_strategy=round-robin
    one_is_shared=1
    cell_duration=${TA_DURATION:-3s}
    cell_warmup=${TA_WARMUP:-1s}
    cell_reps=${TA_REPS:-2}
    about="grpc_greeter -delay 500ms (grpc-go $grpc_ver, $(go version | awk '{print $3}')), helloworld.Greeter/SayHello sleeping 500 ms"
}

start_grpc_streams() {
    start_go_grpc grpc-streams -delay 2ms -max-streams 10 || return 1
    c=100
    run_extra=()
    grid_sizes=1,2,3,4,5,6,7,8,9,10,11,12,14,16,20,25,32,40,50,64,80,100
    grid_strategy=round-robin
    one_is_shared=1
    grid_threads="1 $(nproc)"
    about="grpc_greeter -delay 2ms -max-streams 10 (grpc-go $grpc_ver, $(go version | awk '{print $3}')), helloworld.Greeter/SayHello waiting 2 ms, MaxConcurrentStreams 10"
}

# Stop the server and start it again (fresh_per_size services only).
restart_server() {
    stop_server
    case $1 in
    fastapi) start_fastapi_app ;;
    *) return 1 ;;
    esac
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

# The grid's cells: `poolbench run` on SIZES (comma list) into JSON FILE.
run_cells() {
    local sizes=$1 file=$2 strategies=$grid_strategy pool
    pool=$sizes
    if [ -n "$one_is_shared" ]; then
        pool=$(tr ',' '\n' <<<"$sizes" | awk '$1 > 1' | paste -sd,)
        strategies=
        case ",$sizes," in *,1,*) strategies=shared ;; esac
        [ -n "$pool" ] && strategies=${strategies:+$strategies,}$grid_strategy
        [ -n "$pool" ] || pool=1
    fi
    "$bin" run "$url" "${run_extra[@]}" ${grid_t:+--threads "$grid_t"} -s "$strategies" -c "$c" --pool "$pool" \
        -d "$cell_duration" --warmup "$cell_warmup" --reps "${pass_reps:-$cell_reps}" --format json -q \
        -o "$file" >/dev/null 2>"$file.err"
}

# The grid in $cell_reps passes of one run per size, sizes up then down
# in turn: a drift of the machine over the grid's minutes then touches
# small and large sizes alike (one pass upwards read a machine that sped
# up over 4 minutes as throughput rising with the pool). Into FILE.
run_passes() {
    local sizes=$1 file=$2 pass order r rc=0 parts=() t part
    for pass in $(seq "$cell_reps"); do
        order=$sizes
        [ $((pass % 2)) -eq 0 ] && order=$(tr ',' '\n' <<<"$sizes" | tac | paste -sd,)
        for t in ${grid_threads:--}; do
            part="${file%.json}.pass$pass.json"
            [ "$t" = - ] || part="${file%.json}.pass$pass.t$t.json"
            grid_t=${t#-} pass_reps=1 run_cells "$order" "$part"
            r=$?
            if [ $r -ne 0 ]; then
                rc=$r
                sed 's/^/  run: /' "$part.err" | head -20
            fi
            parts+=("$part")
        done
    done
    merge_grid "$file" "${parts[@]}"
    return $rc
}

# Merge grid JSON files into the first argument's file: every cell in one
# list, a `shared` cell counted as pool size 1 (its one connection), each
# cell of a file named *.tN.json marked as run with N load threads.
merge_grid() {
    "$py" - "$@" <<'EOF'
import json, re, sys
dst, srcs = sys.argv[1], sys.argv[2:]
docs = []
for p in srcs:
    try:
        with open(p) as f:
            d = json.load(f)
    except (OSError, ValueError):
        continue
    m = re.search(r"\.t(\d+)\.json$", p)
    for c in d.get("cells", []):
        if m and "grid_threads" not in c:
            c["grid_threads"] = int(m.group(1))
    docs.append(d)
if docs:
    doc = docs[0]
    doc["cells"] = [c for d in docs for c in d.get("cells", [])]
    for c in doc["cells"]:
        if c.get("pool_size") is None and str(c.get("strategy")).split(":")[0] == "shared":
            c["pool_size"] = 1
    with open(dst, "w") as f:
        json.dump(doc, f)
EOF
}

# Tune's cap, still_rising and inferences from its JSON FILE, one line each;
# the cap and the closed-loop ceiling also as markdown bullets for SERVICE
# into NOTES. Exit 1 if FILE is not a JSON object.
tune_notes() {
    "$py" - "$@" <<'EOF'
import json, sys
path, name, notes = sys.argv[1:4]
try:
    with open(path) as f:
        doc = json.load(f)
except (OSError, ValueError):
    sys.exit(1)
if not isinstance(doc, dict):
    sys.exit(1)
rec = doc.get("recommendation")
cap = rec.get("cap") if isinstance(rec, dict) else None
md = []
if cap:
    print(f"  tune's cap: {cap}")
    md.append(f"- {name}: tune's cap: {cap}")
if (doc.get("capacity") or {}).get("still_rising"):
    print("  tune: capacity.still_rising (never pushed to its limit)")
for inf in doc.get("inferences") or []:
    if isinstance(inf, dict):
        print(f"    inference {inf.get('id')}: {inf.get('text')}")
        if inf.get("id") == "closed-loop-ceiling":
            md.append(f"- {name}: closed-loop-ceiling: {inf.get('text')}")
with open(notes, "a") as f:
    f.writelines(line + "\n" for line in md)
EOF
}

# tune_accuracy.py check with a time bound of BOUND_S + 10 s.
check_tune() {
    local bound_s=$1
    shift
    PYTHONDONTWRITEBYTECODE=1 "$py" -c 'import sys
sys.path.insert(0, "bench")
import tune_accuracy as ta
ta.BUDGET_S = float(sys.argv[1])
sys.exit(ta.main(sys.argv[2:]))' "$bound_s" check "$@"
}

# Tune run I of $runs on SERVICE (the one started, its grid measured),
# checked against the grid; its result JSON appended to svc_results.
tune_run() {
    local s=$1 i=$2 sfx='' label=$1 t0 tune_rc
    if [ "$runs" -gt 1 ]; then
        sfx=.$i
        label="$s #$i"
        echo "  -- tune run $i of $runs"
    fi
    check_rc=127
    if [ -n "${TA_SKIP_TUNE:-}" ]; then
        wall=0
    else
        if [ -n "$fresh_per_size" ]; then
            restart_server "$s" || echo "  could not start $s again for tune"
        fi
        settle "$url"
        t0=$(now)
        "$bin" tune "$url" "${run_extra[@]}" -c "$c" --budget "$budget" --format json \
            >"$out/$s.tune$sfx.json" 2>"$out/$s.tune$sfx.err"
        tune_rc=$?
        wall=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
        check_rc=$tune_rc
        if [ $tune_rc -eq 1 ] && tune_notes "$out/$s.tune$sfx.json" "$label" /dev/null >/dev/null; then
            echo "  tune exit 1 after $wall s: no pool recommended (its JSON is its answer)"
            check_rc=0
        elif [ $tune_rc -ne 0 ]; then
            echo "  tune failed (exit $tune_rc after $wall s):"
            sed 's/^/    /' "$out/$s.tune$sfx.err" | head -20
        fi
    fi
    check_tune "$bound_s" "$s" "$c" "$out/$s.grid.json" "$out/$s.tune$sfx.json" \
        "$check_rc" "$wall" "$out/$s.result$sfx.json" "${sfx:+$i/$runs}"
    if [ "$check_rc" -eq 0 ]; then
        tune_notes "$out/$s.tune$sfx.json" "$label" "$notes"
    fi
    if [ "$check_rc" -eq 0 ] && [ -s "$out/$s.result$sfx.json" ]; then
        paired_check "$out/$s.result$sfx.json" "$out/$s.tune$sfx.json" "$out/$s.paired$sfx"
    fi
    [ -s "$out/$s.result$sfx.json" ] && svc_results+=("$out/$s.result$sfx.json")
}

# One run of SIZE connections with THREADS load threads, a grid cell's
# length; its throughput on stdout (0 if it failed).
one_cell() {
    local size=$1 threads=$2 file=$3 strategy=$grid_strategy
    [ -n "$one_is_shared" ] && [ "$size" -eq 1 ] && strategy=shared
    "$bin" run "$url" "${run_extra[@]}" --threads "$threads" -s "$strategy" -c "$c" \
        --pool "$size" -d "$cell_duration" --warmup "$cell_warmup" --format json -q \
        -o "$file" >/dev/null 2>"$file.err"
    "$py" -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))["cells"][0]["throughput_rps"])
except (OSError, ValueError, KeyError, IndexError):
    print(0)' "$file"
}

# Tune's pick against the grid's best size in $paired_rounds rounds right
# after tune (pick then best, then best then pick, in turn), with tune's
# load threads: the grid's sizes are minutes apart and the machine's speed
# drifts 20% over that, more than the bound's 10%. Into RESULT; runs under
# PREFIX. Not for a service restarted per size (its cells freeze it).
paired_check() {
    local result=$1 tune_json=$2 prefix=$3 sized pick best threads r reads=() a b
    [ "$paired_rounds" -gt 0 ] && [ -z "$fresh_per_size" ] || return 0
    sized=$("$py" bench/tune_accuracy.py pair-sizes "$result" "$tune_json") || return 0
    read -r pick best threads <<<"$sized"
    for ((r = 1; r <= paired_rounds; r++)); do
        if [ $((r % 2)) -eq 1 ]; then
            a=$(one_cell "$pick" "$threads" "$prefix.$r.pick.json")
            b=$(one_cell "$best" "$threads" "$prefix.$r.best.json")
        else
            b=$(one_cell "$best" "$threads" "$prefix.$r.best.json")
            a=$(one_cell "$pick" "$threads" "$prefix.$r.pick.json")
        fi
        reads+=("$a" "$b")
    done
    "$py" bench/tune_accuracy.py paired "$result" "$pick" "$best" "$threads" "${reads[@]}"
}

nproc_n=$(nproc)
version=$("$bin" --version 2>/dev/null | head -1)
echo "machine: $nproc_n cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary:  $bin ($version)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null)"
echo
failed_start=()
results=()
notes=$out/notes.md
: >"$notes"
for s in "${wanted[@]}"; do
    # The default grid and bound; a start_* may change them.
    grid_sizes=
    grid_strategy=pool
    one_is_shared=
    fresh_per_size=
    cell_duration=${TA_DURATION:-2s}
    cell_warmup=${TA_WARMUP:-500ms}
    cell_reps=${TA_REPS:-2}
    tune_extra_s=0
    grid_threads=
    svc_signal=TERM
    started=0
    case $s in
    nginx) start_nginx_service || started=$? ;;
    workers) start_python workers || started=$? ;;
    freeze) start_python pool-freeze || started=$? ;;
    pg) start_pg || started=$? ;;
    serve) start_builtin || started=$? ;;
    fastapi) start_fastapi || started=$? ;;
    grpc-slow) start_grpc_slow || started=$? ;;
    pg-cpu) start_pg_cpu || started=$? ;;
    grpc-streams) start_grpc_streams || started=$? ;;
    esac
    # TA_C: every service's client load (the grid's largest size, tune's -c).
    if [ -n "${TA_C:-}" ]; then c=$TA_C; fi
    if [ "$started" -ne 0 ]; then
        echo "== $s: could not be started; skipped" >&2
        failed_start+=("$s")
        stop_service
        continue
    fi
    if [ -n "${TA_SIZES:-}" ]; then
        sizes=$(tr ',' '\n' <<<"$TA_SIZES" | awk -v c="$c" '$1 <= c' | paste -sd,)
    elif [ -n "$grid_sizes" ]; then
        sizes=$grid_sizes
    else
        sizes=$("$py" bench/tune_accuracy.py sizes "$c")
    fi
    strategies=$grid_strategy
    [ -n "$one_is_shared" ] && strategies="shared (size 1), $grid_strategy (the others)"
    echo "== $s: $about at ${url%%\?*}, c=$c"
    echo "  grid: $(tr ',' '\n' <<<"$sizes" | wc -l) pool sizes ($sizes), -s $strategies, -d $cell_duration --warmup $cell_warmup, ${fresh_per_size:+--reps $cell_reps, each size its own run on a freshly started service}${fresh_per_size:-$cell_reps passes of one run a size, up then down}"
    t0=$(now)
    rm -f "$out/$s".grid.*json "$out/$s".grid.*err
    if [ -n "$fresh_per_size" ]; then
        rc=0
        first=1
        parts=()
        for n in ${sizes//,/ }; do
            if [ -z "$first" ]; then
                restart_server "$s" || { echo "  could not start $s again before size $n"; rc=2; break; }
            fi
            first=
            run_cells "$n" "$out/$s.grid.$n.json"
            r=$?
            parts+=("$out/$s.grid.$n.json")
            if [ $r -ne 0 ]; then
                rc=$r
                echo "  size $n: run exit $r"
                sed 's/^/    run: /' "$out/$s.grid.$n.json.err" | head -5
            fi
        done
        merge_grid "$out/$s.grid.json" "${parts[@]}"
    else
        run_passes "$sizes" "$out/$s.grid.json"
        rc=$?
    fi
    echo "  grid took $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s (exit $rc)"
    if [ -s "$out/$s.grid.json" ]; then
        "$py" bench/tune_accuracy.py grid "$out/$s.grid.json"
    fi

    bound_s=$((120 + tune_extra_s))
    svc_results=()
    for ((i = 1; i <= runs; i++)); do
        tune_run "$s" "$i"
    done
    [ "$tune_extra_s" -gt 0 ] &&
        echo "- $s: time bound $((bound_s + 10)) s (120 s + $tune_extra_s s + 10 s: tune waits out failures outside its budget, up to --recovery each)" >>"$notes"
    if [ "$runs" -gt 1 ] && [ ${#svc_results[@]} -gt 0 ]; then
        "$py" bench/tune_accuracy.py agree "${svc_results[@]}"
    fi
    results+=("${svc_results[@]}")
    stop_service
    echo
done

if [ ${#results[@]} -gt 0 ]; then
    # The report's markdown block ends with its fence: the notes go before it.
    report=$(NPROC=$nproc_n POOLBENCH_VERSION=$version "$py" bench/tune_accuracy.py report "${results[@]}")
    if [ -s "$notes" ] && [ "$(tail -n 1 <<<"$report")" = '```' ]; then
        sed '$d' <<<"$report"
        cat "$notes"
        echo '```'
    else
        printf '%s\n' "$report"
        cat "$notes"
    fi
fi
if [ ${#failed_start[@]} -gt 0 ]; then
    echo "could not start: ${failed_start[*]}" >&2
    exit 2
fi
exit 0
