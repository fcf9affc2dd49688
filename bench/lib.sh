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
# What the script prints is also kept as its latest result: on exit 0, or
# on exit 1 through bench_verdict (it ran to its end and a goal it checks
# was not met: a run that missed is kept as one that met is), it is
# written to bench/results/NAME.md with the command, the date, the machine
# and the commit, and one row is appended to bench/history/NAME.jsonl
# (the same, with the figures the script gave `figure`, and its output);
# bench/history.py then writes the views
# (bench/history/README.md, the latest of each bench; bench/history/all.md,
# every run), and scripts/figures.py the figures README.md and
# docs/figures.md quote. bench/log/RESULTS.md is the hand-kept archive of
# the runs before the history, no longer appended.
bench_name=$(basename "$0" .sh)
bench_cmd="bench/$bench_name.sh$([ $# = 0 ] || printf ' %q' "$@")"
exec > >(tee "$bench_tmp/output")
bench_tee=$!
bench_rc=1
: >"$bench_tmp/figures"

# Record one figure of the run for its history row: figure NAME VALUE
# [UNIT] (VALUE a number). Prints nothing: the script's own lines say it.
figure() {
    printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$bench_tmp/figures"
}

# The script's end: exit 0 when its goals were met, 1 when one was not
# (kept all the same). Any other exit 1 is a failure, and keeps nothing.
bench_missed=
bench_verdict() {
    [ "$1" = 0 ] || bench_missed=1
    exit "$1"
}

bench_keep() {
    [ "$bench_rc" = 0 ] || { [ "$bench_rc" = 1 ] && [ -n "$bench_missed" ]; } || return 0
    # Let tee write its last line before the output is read.
    exec >/dev/null
    wait "$bench_tee" 2>/dev/null || true
    mkdir -p bench/results bench/history
    local date machine commit
    date=$(date -u '+%Y-%m-%d %H:%M UTC')
    machine="$(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
    commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- crates 2>/dev/null || echo ' (with changes to crates/ not committed)')"
    {
        echo "# \`bench/$bench_name.sh\`: the latest result"
        echo
        echo "- command: \`$bench_cmd\`"
        echo "- date: $date"
        echo "- machine: $machine"
        echo "- commit: $commit"
        echo
        echo '```'
        cat "$bench_tmp/output"
        echo '```'
    } >"bench/results/$bench_name.md"
    python3 bench/history.py append "$bench_name" "$bench_cmd" "$date" "$commit" "$machine" \
        "$bench_tmp/figures" "$bench_tmp/output" && python3 bench/history.py render
    # README.md and docs/figures.md quote bench/results (a docs test checks it).
    python3 scripts/figures.py
}
bench_cleanup() {
    # The servers first: one that inherited our stdout holds tee's pipe.
    if [ -n "${nginx_pid:-}" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
    if [ -n "${go_greeter_pid:-}" ]; then kill "$go_greeter_pid" 2>/dev/null || true; wait "$go_greeter_pid" 2>/dev/null || true; fi
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    bench_keep
    rm -rf "$bench_tmp"
}
trap 'bench_rc=$?; bench_cleanup' EXIT
start_serve() {
    local kind=$1
    shift
    setsid "$bin" serve --listen 127.0.0.1:0 "$@" >"$bench_tmp/serve.out" &
    server_pid=$!
    for _ in $(seq 100); do grep -q "^$kind " "$bench_tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
    addr=$(sed -n "s/^$kind \([^ ]*\)$/\1/p" "$bench_tmp/serve.out" | head -n 1)
    # No server: exit 2, nothing measured.
    [ -n "$addr" ] || { echo "server did not start" >&2; exit 2; }
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
    python3 - "$@" >>"$bench_tmp/figures" <<'PY'
import statistics, sys
peer, unit, target = sys.argv[1:4]
xs = [float(x) for x in sys.argv[4].split()]
ps = [float(x) for x in sys.argv[5].split()]
print(f"{peer} median\t{statistics.median(xs):.0f}\t{unit}")
print(f"poolbench median\t{statistics.median(ps):.0f}\treq/s")
print(f"paired ratio poolbench/{peer}\t{statistics.median(b / a for a, b in zip(xs, ps)):.3f}\tx")
PY
}

# Start throwaway PostgreSQL or Redis (KIND pg|redis) with scripts/services.sh,
# in a directory of its own that the postgres user can reach; sets $url.
# Stopped at exit.
start_services() {
    services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
    trap 'bench_rc=$?; scripts/services.sh stop "$services" || true; rm -rf "$services"; bench_cleanup' EXIT
    scripts/services.sh start "$services" "$1" >/dev/null
    url=$(cat "$services/$1/url")
}

# Servers run in sessions of their own (`setsid`), as a server runs apart
# from the shell that loads it: with the kernel's scheduler autogroups, a
# server in the load generator's session shares one group's CPU with it,
# and tune's pool search on nginx then read pools of 20-60 at 0.90x of 64
# (picks of 44-64), where nginx in its own session gave picks of 12-23.
# A server started so keeps the PID `$!` (setsid execs in place: a job of
# a script is no process group leader), so it is still stopped by PID.

# Start nginx (OS package) on a free loopback port with a config of its own
# in $bench_tmp: one worker, access log off, a 13-byte body at every path;
# `start_nginx http2` serves h2c (prior knowledge) instead of HTTP/1.1.
# Sets $nginx_addr. Stopped by PID at exit.
nginx_pid=
start_nginx() {
    local port listen_opts=
    [ "${1:-}" = http2 ] && listen_opts=" http2"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$bench_tmp/nginx/logs"
    cat >"$bench_tmp/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $bench_tmp/nginx/nginx.pid;
error_log $bench_tmp/nginx/logs/error.log;
events { worker_connections 20000; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $bench_tmp/nginx;
    proxy_temp_path $bench_tmp/nginx;
    fastcgi_temp_path $bench_tmp/nginx;
    uwsgi_temp_path $bench_tmp/nginx;
    scgi_temp_path $bench_tmp/nginx;
    server {
        listen 127.0.0.1:$port$listen_opts;
        http2_max_requests 1000000;
        http2_max_concurrent_streams 256;
        location / { return 200 "hello, world\n"; }
    }
}
CONF
    # Not on our stdout: a server holding the pipe to tee would keep the
    # script from ending (bench_keep waits for tee to finish).
    setsid nginx -p "$bench_tmp/nginx" -c "$bench_tmp/nginx/nginx.conf" >"$bench_tmp/nginx/logs/stdout" 2>&1 &
    nginx_pid=$!
    nginx_addr=127.0.0.1:$port
    local probe=(curl -sf)
    [ -n "$listen_opts" ] && probe+=(--http2-prior-knowledge)
    for _ in $(seq 100); do "${probe[@]}" "http://$nginx_addr/" >/dev/null 2>&1 && return; sleep 0.05; done
    echo "nginx did not start" >&2
    exit 2
}

# Build grpc-go's own example server (google.golang.org/grpc/examples,
# helloworld/greeter_server: SayHello, no delay) in a module of its own
# under ~/.cache, and start it on a free port; the load goes to
# 127.0.0.1 only (the example listens on every interface, as it is
# written). It logs each request; the log goes to /dev/null. Sets
# $go_greeter_addr and $go_greeter_version. Stopped by PID at exit.
go_greeter_pid=
start_go_greeter() {
    local dir=${XDG_CACHE_HOME:-$HOME/.cache}/poolbench-bench/go-greeter port
    command -v go >/dev/null || { echo "installing the Go toolchain from the OS packages" >&2; apt_install golang-go; }
    if [ ! -x "$dir/greeter_server" ]; then
        echo "building grpc-go's helloworld greeter_server with go build" >&2
        mkdir -p "$dir"
        (cd "$dir" && { [ -f go.mod ] || go mod init poolbench-bench/go-greeter >/dev/null 2>&1; } &&
            go get google.golang.org/grpc/examples/helloworld/greeter_server@latest >/dev/null 2>&1 &&
            go build -o greeter_server google.golang.org/grpc/examples/helloworld/greeter_server)
    fi
    go_greeter_version=$(sed -n 's/^\s*google.golang.org\/grpc \(v[^ ]*\).*/grpc-go \1/p' "$dir/go.mod" | head -1)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    setsid "$dir/greeter_server" -port "$port" >/dev/null 2>&1 &
    go_greeter_pid=$!
    go_greeter_addr=127.0.0.1:$port
    for _ in $(seq 100); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && return
        sleep 0.05
    done
    echo "the Go greeter did not start" >&2
    exit 2
}
