#!/usr/bin/env bash
# poolbench against ghz on the built-in gRPC Greeter, interleaved.
#
#   bench/vs-ghz.sh [ROUNDS] [SECONDS] [SERVER]
#       (defaults: 5 rounds of 10 s, SERVER serve; SERVER go uses grpc-go's
#       own helloworld greeter_server, built with go build)
#
# Starts `poolbench serve --grpc-listen` (no delay) on free loopback ports,
# or the Go server, then alternates `ghz --connections 10 -c 100` (unary SayHello from the
# project's own helloworld.proto) and `poolbench run grpc://... -s
# round-robin:10 -c 100`, and prints each side's median req/s, the ratio of
# medians, and the median of per-round ratios. ghz is installed with the Go
# toolchain (from the OS packages if missing) when it is not on PATH.
set -euo pipefail
rounds=${1:-5}
seconds=${2:-10}
server=${3:-serve}
cd "$(dirname "$0")/.."
. bench/lib.sh

gobin=$(command -v go >/dev/null && go env GOPATH || echo "$HOME/go")/bin
export PATH="$PATH:$gobin"
if ! command -v ghz >/dev/null; then
    if ! command -v go >/dev/null; then
        echo "installing the Go toolchain from the OS packages" >&2
        apt_install golang-go
        gobin=$(go env GOPATH)/bin
        export PATH="$PATH:$gobin"
    fi
    echo "installing ghz with go install" >&2
    go install github.com/bojand/ghz/cmd/ghz@latest
fi
build_poolbench
if [ "$server" = go ]; then
    start_go_greeter
    addr=$go_greeter_addr
    about="grpc-go's examples/helloworld/greeter_server ($go_greeter_version) at $addr"
else
    start_serve grpc --grpc-listen 127.0.0.1:0
    about="poolbench serve --grpc-listen at $addr (helloworld.Greeter, no delay)"
fi

print_machine
echo "server:  $about"
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
summarize ghz "req/s" 2.0 "${ghz_rps[*]}" "${pb_rps[*]}"
