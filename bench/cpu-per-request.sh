#!/usr/bin/env bash
# shellcheck disable=SC2317 # setup_*, peer_* and pb_* are called by name ("setup_$p")
# CPU per completed request: poolbench against each protocol's peer on the
# same server and the same work, interleaved.
#
#   bench/cpu-per-request.sh [ROUNDS] [DURATION] [PROTOCOLS...]
#       (defaults: 3 rounds of 10s; PROTOCOLS any of http1 h2c grpc pg redis,
#       all five when none is named)
#
# Each client runs under bench/cpu_time.py, which takes its whole process's
# user + system CPU from wait4's rusage (all threads, and any child it
# waited for); completed requests come from each tool's own output
# (poolbench: measured + warm-up + after-the-window requests of its JSON).
# The settings are those of the vs-*.sh scripts:
#   http1  nginx (one worker)         wrk -t2 -c100            poolbench -s pool:100 -c 100
#   h2c    nginx h2c (one worker)     h2load -c 10 -m 10 -t 2  poolbench h2c:// -s round-robin:10 -c 100
#   grpc   grpc-go greeter_server     ghz --connections 10 -c 100
#                                                              poolbench grpc:// -s round-robin:10 -c 100
#   pg     PostgreSQL (services.sh)   pgbench -n -M prepared -c 10 -j 2 -f select1.sql
#                                                              poolbench --query-mode prepared -s pool:10 -c 10
#   redis  Redis (services.sh)        redis-benchmark -t ping_mbulk -c 50 -n N
#                                                              poolbench -s pool:50 -c 50 -n N
#          (N = REDIS_RPS_GUESS x seconds, 40000 x by default: a request
#          budget, as redis-benchmark has no duration)
# Per round it prints each side's CPU per request (us) and req/s; at the
# end, per protocol, the median ratio poolbench/peer, and how many rounds
# met the goal: CPU per request <= GOAL (0.7) x the peer's at a throughput
# >= FLOOR (0.95) x the peer's. Exits 1 when a protocol met it in fewer
# than a majority of its rounds (2 of 3). POOLBENCH_BIN=PATH measures that
# binary instead of building the release one. CPU=user counts user-space
# CPU only (the client's own code, the kernel's network path left out).
# poolbench runs with --threads 2, as its peers (-t2, -j 2): the default
# would first compare thread counts, CPU spent on requests not counted.
set -euo pipefail
rounds=${1:-3}
duration=${2:-10s}
shift $(($# < 2 ? $# : 2))
protocols=("$@")
[ ${#protocols[@]} -gt 0 ] || protocols=(http1 h2c grpc pg redis)
seconds=${duration%s}
goal=${GOAL:-0.7}
floor=${FLOOR:-0.95}
case $seconds in '' | *[!0-9]*) echo "DURATION must be whole seconds (10 or 10s), not $duration" >&2; exit 2 ;; esac
for p in "${protocols[@]}"; do
    case $p in http1 | h2c | grpc | pg | redis) ;; *) echo "protocol must be http1, h2c, grpc, pg or redis, not $p" >&2; exit 2 ;; esac
done
cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/cpu_lib.sh

gobin=$(command -v go >/dev/null && go env GOPATH || echo "$HOME/go")/bin
export PATH="$PATH:$gobin"
need() { command -v "$1" >/dev/null || { echo "installing $2 from the OS packages" >&2; apt_install "$2"; }; }
for p in "${protocols[@]}"; do
    case $p in
    http1) need wrk wrk; need nginx nginx ;;
    h2c) need h2load nghttp2-client; need nginx nginx ;;
    grpc) need go golang-go; command -v ghz >/dev/null || { echo "installing ghz with go install" >&2; go install github.com/bojand/ghz/cmd/ghz@latest; } ;;
    esac
done
if [ -n "${POOLBENCH_BIN:-}" ]; then bin=$POOLBENCH_BIN; else build_poolbench; fi

# setup_P starts P's server and says what it is; peer_P and pb_P run one
# side under cpu_run and print "REQUESTS REQ/S"; each P's server stops
# before the next P starts.
setup_http1() { start_nginx; target="http://$nginx_addr/"; echo "http1 server: $(nginx -v 2>&1) at $target (one worker, 13-byte body); $(wrk -v 2>&1 | head -1)"; }
peer_http1() {
    cpu_run peer wrk -t2 -c100 -d"${seconds}s" "$target"
    awk '/ requests in / {n=$1} /^Requests\/sec/ {r=$2} END {print n, r}' "$bench_tmp/peer.out"
}
pb_http1() { cpu_run pb "$bin" run "$target" -s pool:100 -c 100 -d "${seconds}s" --threads 2 --quiet --format json && poolbench_counts pb; }

setup_h2c() { start_nginx http2; target=$nginx_addr; echo "h2c server: $(nginx -v 2>&1) at $target (h2c, one worker, 13-byte body); $(h2load --version 2>&1 | head -1)"; }
peer_h2c() {
    cpu_run peer h2load -c 10 -m 10 -t 2 -D "$seconds" "http://$target/"
    sed -n -e 's/^requests: .* \([0-9][0-9]*\) done, .*/\1/p' -e 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' "$bench_tmp/peer.out" |
        paste -sd' ' | awk '{print $2, $1}'
}
pb_h2c() { cpu_run pb "$bin" run "h2c://$target/" -s round-robin:10 -c 100 -d "${seconds}s" --threads 2 --quiet --format json && poolbench_counts pb; }

setup_grpc() { start_go_greeter; target=$go_greeter_addr; echo "grpc server: grpc-go's helloworld greeter_server ($go_greeter_version) at $target; ghz $(ghz --version 2>&1 | head -1)"; }
peer_grpc() {
    cpu_run peer ghz --insecure --proto crates/greeter/proto/helloworld.proto \
        --call helloworld.Greeter.SayHello -d '{"name":"poolbench"}' \
        --connections 10 -c 100 -z "${seconds}s" --format json "$target"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["count"], r["rps"])' "$bench_tmp/peer.out"
}
pb_grpc() { cpu_run pb "$bin" run "grpc://$target/" -s round-robin:10 -c 100 -d "${seconds}s" --threads 2 --quiet --format json && poolbench_counts pb; }

setup_pg() {
    cpu_services_start pg
    target="$url?sslmode=disable"
    echo 'SELECT 1;' >"$bench_tmp/select1.sql"
    echo "pg server: PostgreSQL $(pgbench --version | awk '{print $3}') at 127.0.0.1 (scripts/services.sh), sslmode=disable, prepared"
}
peer_pg() {
    cpu_run peer pgbench -n -M prepared -c 10 -j 2 -T "$seconds" -f "$bench_tmp/select1.sql" "$target"
    awk '/^number of transactions actually processed:/ {n=$NF} /^tps = / && !r {r=$3} END {print n, r}' "$bench_tmp/peer.out"
}
pb_pg() { cpu_run pb "$bin" run "$target" --query-mode prepared -s pool:10 -c 10 -d "${seconds}s" --threads 2 --quiet --format json && poolbench_counts pb; }

setup_redis() {
    cpu_services_start redis
    target=$url
    redis_port=$(echo "$url" | sed 's#.*:\([0-9]*\)/.*#\1#')
    redis_requests=$((${REDIS_RPS_GUESS:-40000} * seconds))
    echo "redis server: $(redis-server --version | awk '{print $1, $2, $3}') at 127.0.0.1:$redis_port (scripts/services.sh), $redis_requests PINGs a run"
}
peer_redis() {
    cpu_run peer redis-benchmark -h 127.0.0.1 -p "$redis_port" -t ping_mbulk -c 50 -n "$redis_requests" -q
    tr '\r' '\n' <"$bench_tmp/peer.out" | awk -v n="$redis_requests" '/^PING_MBULK:/ {r=$2} END {print n, r}'
}
pb_redis() { cpu_run pb "$bin" run "$target" -s pool:50 -c 50 -n "$redis_requests" --quiet --format json && poolbench_counts pb; }

peer_name() { case $1 in http1) echo wrk ;; h2c) echo h2load ;; grpc) echo ghz ;; pg) echo pgbench ;; redis) echo redis-benchmark ;; esac; }

print_machine
echo "load:    $(uptime | sed 's/.*load average/load average/')"
echo "command: CPU=${CPU:-all} GOAL=$goal FLOOR=$floor bench/cpu-per-request.sh $rounds ${seconds}s ${protocols[*]}"
case ${CPU:-all} in user) echo "cpu:     user space only (CPU=user)" ;; *) echo "cpu:     user + system (CPU=user counts user space only)" ;; esac
for p in "${protocols[@]}"; do
    "setup_$p"
    for i in $(seq "$rounds"); do
        read -r peer_n peer_r < <("peer_$p")
        peer_c=$(cpu_seconds peer)
        read -r pb_n pb_r < <("pb_$p")
        pb_c=$(cpu_seconds pb)
        cpu_round "$p" "$i" "$(peer_name "$p")" "$peer_c" "$peer_n" "$peer_r" "$pb_c" "$pb_n" "$pb_r"
    done
    cpu_stop_servers
    cpu_services_stop
done
echo "load:    $(uptime | sed 's/.*load average/load average/')"
verdict=0
cpu_summary "$goal" "$floor" || verdict=1
bench_verdict "$verdict"
