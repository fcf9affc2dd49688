#!/usr/bin/env bash
# The gRPC client-concurrency experiment: one connection per request, one
# shared connection, a fixed pool used round-robin, or a pool that expands?
#
#   scenarios/grpc-client-concurrency.sh [DURATION]      (default 10s per cell)
#
# Starts the built-in server with its gRPC Greeter on free loopback ports,
# once with no delay and once with a 500 ms delay, and drives it with
# per-request, shared, round-robin:5 and take-or-create:20 at c=100.
# At 500 ms every strategy is held to c ÷ 0.5 s = 200 req/s (the report flags
# the closed-loop ceiling); at 0 ms multiplexing wins.
set -euo pipefail
duration=${1:-10s}
cd "$(dirname "$0")/.."
cargo build --release -q -p poolbench
bin=${CARGO_TARGET_DIR:-target}/release/poolbench

tmp=$(mktemp -d)
server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    server_pid=
}
trap 'stop_server; rm -rf "$tmp"' EXIT

for delay in 0 500ms; do
    "$bin" serve --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --delay "$delay" >"$tmp/serve.out" &
    server_pid=$!
    for _ in $(seq 100); do grep -q '^grpc ' "$tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
    addr=$(sed -n 's/^grpc \([^ ]*\)$/\1/p' "$tmp/serve.out")
    [ -n "$addr" ] || { echo "server did not start" >&2; exit 1; }
    echo "### server delay $delay"
    "$bin" run "grpc://$addr/" -s per-request,shared,round-robin:5,take-or-create:20 \
        -c 100 -d "$duration" --quiet
    stop_server
done
