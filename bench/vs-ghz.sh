#!/usr/bin/env bash
# poolbench against ghz on the built-in gRPC Greeter, interleaved.
#
#   bench/vs-ghz.sh [ROUNDS] [SECONDS]     (defaults: 5 rounds of 10 s)
#
# Starts `poolbench serve --grpc-listen` (no delay) on free loopback ports,
# then alternates `ghz --connections 10 -c 100` (unary SayHello from the
# project's own helloworld.proto) and `poolbench run grpc://... -s
# round-robin:10 -c 100`, and prints each side's median req/s, the ratio of
# medians, and the median of per-round ratios. ghz is installed with the Go
# toolchain (from the OS packages if missing) when it is not on PATH.
set -euo pipefail
rounds=${1:-5}
seconds=${2:-10}
cd "$(dirname "$0")/.."

gobin=$(command -v go >/dev/null && go env GOPATH || echo "$HOME/go")/bin
export PATH="$PATH:$gobin"
if ! command -v ghz >/dev/null; then
    if ! command -v go >/dev/null; then
        echo "installing the Go toolchain from the OS packages" >&2
        if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
        $sudo apt-get install -y -q golang-go >/dev/null || {
            $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q golang-go >/dev/null
        }
        gobin=$(go env GOPATH)/bin
        export PATH="$PATH:$gobin"
    fi
    echo "installing ghz with go install" >&2
    go install github.com/bojand/ghz/cmd/ghz@latest
fi
cargo build --release -q -p poolbench
bin=${CARGO_TARGET_DIR:-target}/release/poolbench

tmp=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" serve --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 >"$tmp/serve.out" &
server_pid=$!
for _ in $(seq 100); do grep -q '^grpc ' "$tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
addr=$(sed -n 's/^grpc \([^ ]*\)$/\1/p' "$tmp/serve.out")
[ -n "$addr" ] || { echo "server did not start" >&2; exit 1; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
echo "server:  poolbench serve --grpc-listen at $addr (helloworld.Greeter, no delay)"
echo "ghz:     $(ghz --version 2>&1 | head -1)"
ghz_rps=()
pb_rps=()
for i in $(seq "$rounds"); do
    g=$(ghz --insecure --proto crates/greeter/proto/helloworld.proto \
            --call helloworld.Greeter.SayHello -d '{"name":"poolbench"}' \
            --connections 10 -c 100 -z "${seconds}s" --format json "$addr" |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["rps"])')
    p=$("$bin" run "grpc://$addr/" -s round-robin:10 -c 100 -d "${seconds}s" --quiet --format json |
        python3 -c 'import json,sys; c=json.load(sys.stdin)["cells"][0]; assert c["errors"]["total"]==0, c["errors"]; print(c["throughput_rps"])')
    printf 'round %d: ghz %10.0f req/s   poolbench %10.0f req/s\n' "$i" "$g" "$p"
    ghz_rps+=("$g")
    pb_rps+=("$p")
done
python3 - "${ghz_rps[*]}" "${pb_rps[*]}" <<'PY'
import statistics, sys
gs = [float(x) for x in sys.argv[1].split()]
ps = [float(x) for x in sys.argv[2].split()]
g, p = statistics.median(gs), statistics.median(ps)
paired = statistics.median(b / a for a, b in zip(gs, ps))
print(f"median:  ghz {g:,.0f} req/s   poolbench {p:,.0f} req/s   ratio of medians {p / g:.2f}x")
print(f"paired:  median of per-round ratios poolbench/ghz {paired:.2f}x (target >= 1.5x)")
PY
