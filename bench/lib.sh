# Shared by the bench/vs-*.sh scripts; sourced from the project root.

# Install OS packages if missing: apt_install PKG...
apt_install() {
    local sudo=sudo
    [ "$(id -u)" = 0 ] && sudo=
    $sudo apt-get install -y -q "$@" >/dev/null || {
        $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "$@" >/dev/null
    }
}

# Build the release binary; sets $bin.
build_poolbench() {
    cargo build --release -q -p poolbench
    bin=${CARGO_TARGET_DIR:-target}/release/poolbench
}

print_machine() {
    echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
}

# Start `poolbench serve ARGS...` on free loopback ports and wait for its
# KIND listener (http, tls, grpc); sets $addr. Stopped by PID at exit.
bench_tmp=$(mktemp -d)
server_pid=
bench_cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$bench_tmp"
}
trap bench_cleanup EXIT
start_serve() {
    local kind=$1
    shift
    "$bin" serve --listen 127.0.0.1:0 "$@" >"$bench_tmp/serve.out" &
    server_pid=$!
    for _ in $(seq 100); do grep -q "^$kind " "$bench_tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
    addr=$(sed -n "s/^$kind \([^ ]*\)$/\1/p" "$bench_tmp/serve.out" | head -n 1)
    [ -n "$addr" ] || { echo "server did not start" >&2; exit 1; }
}

# Medians, ratio of medians and the median of per-round ratios:
# summarize PEER PEER_UNIT TARGET "PEER_VALUES" "POOLBENCH_VALUES"
summarize() {
    python3 - "$@" <<'PY'
import statistics, sys
peer, unit, target = sys.argv[1:4]
xs = [float(x) for x in sys.argv[4].split()]
ps = [float(x) for x in sys.argv[5].split()]
x, p = statistics.median(xs), statistics.median(ps)
paired = statistics.median(b / a for a, b in zip(xs, ps))
print(f"median:  {peer} {x:,.0f} {unit}   poolbench {p:,.0f} req/s   ratio of medians {p / x:.2f}x")
print(f"paired:  median of per-round ratios poolbench/{peer} {paired:.2f}x (target >= {target}x)")
PY
}

# Start throwaway PostgreSQL or Redis (KIND pg|redis) with scripts/services.sh,
# in a directory of its own that the postgres user can reach; sets $url.
# Stopped at exit.
start_services() {
    services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
    trap 'scripts/services.sh stop "$services" || true; rm -rf "$services"; bench_cleanup' EXIT
    scripts/services.sh start "$services" "$1" >/dev/null
    url=$(cat "$services/$1/url")
}
