#!/usr/bin/env bash
# The default load threads against fixed counts, on each bench's work:
# does the default ever lose to `--threads 1` or `--threads 2`? The
# default compares one thread with one per core before a closed loop of
# 5 s or more (crates/cli/src/run_threads.rs); its runs' time includes
# that comparison's, its throughput only the run's own.
#
#   bench/threads.sh [ROUNDS] [DURATION] [WORKS...]
#       (defaults: 5 rounds of 5s; WORKS any of http1 pipeline h2c grpc pg
#       mysql redis, all seven when none is named)
#
# Each work is the poolbench side of its vs-*.sh script, against a server
# nobody here wrote:
#   http1     nginx (one worker)      -s pool:100 -c 100                (vs-wrk.sh nginx)
#   pipeline  nginx (one worker)      -s pipeline:4x16 -c 64            (vs-wrk-pipeline.sh)
#   h2c       nginx h2c (one worker)  h2c:// -s round-robin:10 -c 100   (vs-h2load.sh nginx)
#   grpc      grpc-go greeter_server  grpc:// -s round-robin:10 -c 100  (vs-ghz.sh go)
#   pg        PostgreSQL              SELECT 1 prepared, -s pool:10 -c 10 (vs-pgbench.sh)
#   mysql     MariaDB                 a point SELECT, -s pool:10 -c 10  (vs-mysqlslap.sh)
#   redis     Redis                   PING, -s pool:50 -c 50            (vs-redis-benchmark.sh)
# Per round the three settings run one after another, their order turned
# by one each round (default, 1, 2; then 1, 2, default; …), so a drift of
# the machine's speed falls on each alike. Per work it prints the median
# req/s of each and the median of the per-round ratios default ÷ each fixed
# count; the goal is >= 0.97 against both (the default never loses by more
# than 3%). Exits 1 when a work misses it.
set -euo pipefail
rounds=${1:-5}
duration=${2:-5s}
shift $(($# < 2 ? $# : 2))
works=("$@")
[ ${#works[@]} -gt 0 ] || works=(http1 pipeline h2c grpc pg mysql redis)
seconds=${duration%s}
case $seconds in '' | *[!0-9]*) echo "DURATION must be whole seconds (5 or 5s), not $duration" >&2; exit 2 ;; esac
case $rounds in '' | *[!0-9]* | 0) echo "ROUNDS must be a whole number above 0, not $rounds" >&2; exit 2 ;; esac
for w in "${works[@]}"; do
    case $w in http1 | pipeline | h2c | grpc | pg | mysql | redis) ;;
    *) echo "work must be http1, pipeline, h2c, grpc, pg, mysql or redis, not $w" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."
. bench/lib.sh
build_poolbench
services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
chmod 755 "$services"
nginx_h2_pid=
# shellcheck disable=SC2317  # called by the trap
stop_all() {
    bench_rc=$?
    if [ -n "$nginx_h2_pid" ]; then kill "$nginx_h2_pid" 2>/dev/null || true; wait "$nginx_h2_pid" 2>/dev/null || true; fi
    scripts/services.sh stop "$services" >/dev/null 2>&1 || true
    rm -rf "$services"
    bench_cleanup
}
trap stop_all EXIT

print_machine
echo "poolbench: $("$bin" --version)"
missed=0

# One run of work `$1` with threads `$2` (default or a count): its req/s
# and the threads the default's comparison kept ("-" for a fixed count).
one() {
    local threads=()
    [ "$2" = default ] || threads=(--threads "$2")
    local common=(-d "${seconds}s" --quiet --format json "${threads[@]}")
    case $1 in
    http1) "$bin" run "http://$nginx_addr/" -s pool:100 -c 100 "${common[@]}" ;;
    pipeline) "$bin" run "http://$nginx_addr/" -s pipeline:4x16 -c 64 "${common[@]}" ;;
    h2c) "$bin" run "h2c://$nginx_h2_addr/" -s round-robin:10 -c 100 "${common[@]}" ;;
    grpc) "$bin" run "grpc://$go_greeter_addr/" -s round-robin:10 -c 100 "${common[@]}" ;;
    pg) "$bin" run "$pg_url" --query-mode prepared -s pool:10 -c 10 --warmup 1s "${common[@]}" ;;
    mysql) "$bin" run "$mysql_url" -s pool:10 -c 10 --warmup 1s --query 'SELECT id,name FROM threads_t WHERE id=?' --param 4242 "${common[@]}" ;;
    redis) "$bin" run "$redis_url" -s pool:50 -c 50 --warmup 1s "${common[@]}" ;;
    esac | python3 -c 'import json,sys; r=json.load(sys.stdin); c=r["cells"][0]; assert c["errors"]["total"]==0, c["errors"]; g=r.get("generator_threads"); print(c["throughput_rps"], g["threads"] if g else "-")'
}

need_services=
for w in "${works[@]}"; do
    case $w in
    http1 | pipeline) [ -n "${nginx_addr:-}" ] || { start_nginx; first_nginx_pid=$nginx_pid; } ;;
    h2c)
        # start_nginx keeps one PID: the HTTP/1.1 one is kept aside.
        saved=${nginx_addr:-}
        saved_pid=${first_nginx_pid:-}
        start_nginx http2
        nginx_h2_addr=$nginx_addr
        nginx_h2_pid=$nginx_pid
        nginx_addr=$saved
        nginx_pid=$saved_pid
        ;;
    grpc) start_go_greeter ;;
    pg | mysql | redis) need_services="$need_services $w" ;;
    esac
done
if [ -n "$need_services" ]; then
    # shellcheck disable=SC2086  # the kinds, one word each
    for kind in $need_services; do scripts/services.sh start "$services" "$kind" >/dev/null; done
    # shellcheck disable=SC1091
    . "$services/env"
    pg_url=${POOLBENCH_PG_URL:-}
    redis_url=${POOLBENCH_REDIS_URL:-}
    mysql_url=${POOLBENCH_MYSQL_URL:-}
fi
if [[ " $need_services " == *" mysql "* ]]; then
    "$bin" run "$mysql_url" -n 1 -c 1 -s pool:1 --quiet --format json \
        --setup 'DROP TABLE IF EXISTS threads_t; CREATE TABLE threads_t (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL); INSERT INTO threads_t VALUES (4242, "poolbench")' \
        --query 'SELECT 1' >/dev/null
fi

settings=(default 1 2)
for w in "${works[@]}"; do
    declare -A rps=()
    for i in $(seq "$rounds"); do
        line="round $i:"
        for k in 0 1 2; do
            s=${settings[$(((i - 1 + k) % 3))]}
            out=$(one "$w" "$s")
            read -r r kept <<<"$out"
            rps[$s]="${rps[$s]:-} $r"
            line="$line  $s $(printf '%8.0f' "$r")"
            [ "$kept" = - ] || line="$line (kept $kept)"
        done
        echo "$w $line"
    done
    if ! python3 - "$w" "${rps[default]}" "${rps[1]}" "${rps[2]}" <<'PY' | tee -a "$bench_tmp/verdicts"; then missed=1; fi
import statistics, sys
work, d, one, two = sys.argv[1], *[[float(x) for x in a.split()] for a in sys.argv[2:]]
r1 = statistics.median(a / b for a, b in zip(d, one))
r2 = statistics.median(a / b for a, b in zip(d, two))
ok = min(r1, r2) >= 0.97
print(f"{work}: default {statistics.median(d):,.0f}, --threads 1 {statistics.median(one):,.0f}, --threads 2 {statistics.median(two):,.0f} req/s; paired default/1 {r1:.2f}x, default/2 {r2:.2f}x (goal >= 0.97x): {'MET' if ok else 'NOT MET'}")
sys.exit(0 if ok else 1)
PY
    figure "$w default/1" "$(python3 -c "import statistics,sys; d,o=[[float(x) for x in a.split()] for a in sys.argv[1:]]; print(f'{statistics.median(a/b for a,b in zip(d,o)):.3f}')" "${rps[default]}" "${rps[1]}")" x
    figure "$w default/2" "$(python3 -c "import statistics,sys; d,o=[[float(x) for x in a.split()] for a in sys.argv[1:]]; print(f'{statistics.median(a/b for a,b in zip(d,o)):.3f}')" "${rps[default]}" "${rps[2]}")" x
    unset rps
done
met=$(grep -c ': MET$' "$bench_tmp/verdicts" || true)
echo "$met of ${#works[@]} met"
bench_verdict "$missed"
