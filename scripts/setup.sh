#!/usr/bin/env bash
# Installs what building and testing poolbench needs on a fresh Debian
# machine: a Rust toolchain with rustfmt and clippy, Chromium, openssl,
# the ShellCheck linter, python3, Go, and Python's grpcio, h2, FastAPI (with
# uvicorn, SQLAlchemy and psycopg2), aiohttp, httpx, requests and
# kubernetes-validate packages. Idempotent: when everything is there it prints nothing.
# scripts/test.sh runs it first; scripts/services.sh installs the servers
# (PostgreSQL, Redis, nginx) itself.
set -euo pipefail
if ! command -v cargo >/dev/null; then
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
sudo=sudo
[ "$(id -u)" = 0 ] && sudo=
# The HTML report is checked in a real browser, headless; scripts/services.sh
# makes the test servers' certificates with openssl.
want=()
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || want+=(chromium)
command -v openssl >/dev/null || want+=(openssl)
# deploy/kubernetes/validate.sh lints its scripts with shellcheck.
command -v shellcheck >/dev/null || want+=(shellcheck)
# The JUnit tests validate the XML against its schema with xmllint.
command -v xmllint >/dev/null || want+=(libxml2-utils)
# Tests signal their children with kill(1) (procps) and put shards in
# network namespaces (iproute2) where that is allowed.
[ -x /bin/kill ] || [ -x /usr/bin/kill ] || want+=(procps)
command -v ip >/dev/null || want+=(iproute2)
# The live metrics are checked with promtool and scraped by a real
# Prometheus (scripts/services.sh prometheus-start); one package has both.
command -v prometheus >/dev/null && command -v promtool >/dev/null || want+=(prometheus)
# `serve --check-client` is tested with a real Go net/http client
# (crates/cli/tests/support/clients/go_http: standard library only, built by
# the test with `go build`; the OS's Go is enough).
command -v go >/dev/null || want+=(golang-go)
if [ ${#want[@]} -gt 0 ]; then
    $sudo apt-get update -q >/dev/null
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${want[@]}" >/dev/null
fi
# Tests drive a server written with Python's standard library
# (crates/cli/tests/support/recording_server.py).
if ! command -v python3 >/dev/null; then
    $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3 >/dev/null
fi
# And servers written in Python: gRPC with grpcio
# (crates/cli/tests/support/grpc_server.py), a hostile HTTP/2 one with h2
# (crates/cli/tests/support/hostile_server.py).
if ! python3 -c 'import grpc, grpc_tools, grpc_reflection, google.protobuf, h2' 2>/dev/null; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-pip >/dev/null
    fi
    pip_install() {
        PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
            python3 -m pip install --quiet "$@" grpcio grpcio-tools grpcio-reflection protobuf h2
    }
    # Debian's own python3 refuses (PEP 668) unless told otherwise.
    if ! out=$(pip_install 2>&1); then
        case $out in
            *externally-managed-environment*) pip_install --break-system-packages ;;
            *) printf '%s\n' "$out" >&2; exit 1 ;;
        esac
    fi
fi
# `serve --check-client` is tested with real clients
# (crates/cli/tests/client_check.rs, crates/cli/tests/support/clients/):
# Python's aiohttp, httpx and requests (Go is installed above).
if ! python3 -c 'import aiohttp, httpx, requests' 2>/dev/null; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-pip >/dev/null
    fi
    cc() {
        PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
            python3 -m pip install --quiet "$@" aiohttp==3.14.5 httpx==0.28.1 requests==2.34.2
    }
    if ! out=$(cc 2>&1); then
        case $out in
            *externally-managed-environment*) cc --break-system-packages ;;
            *) printf '%s\n' "$out" >&2; exit 1 ;;
        esac
    fi
fi
# The fault tests (crates/cli/tests/faults.rs) put Shopify's toxiproxy
# between poolbench and its targets: built from the Go module proxy into
# ~/.cache/poolbench/toxiproxy (scripts/services.sh starts it).
toxi_dir=$HOME/.cache/poolbench/toxiproxy
if [ ! -x "$toxi_dir/server" ]; then
    mkdir -p "$toxi_dir"
    if ! out=$(GOBIN=$toxi_dir go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0 2>&1); then
        printf '%s\n' "$out" >&2
        exit 1
    fi
fi
# The Go client of `serve --check-client`'s tests (crates/cli/tests/
# client_check.rs), built once ahead into the Go build cache those tests
# build it from, so theirs is a cache hit: on a fresh machine Go compiles
# net/http first, about half a minute of both cores.
go_cache=$HOME/.cache/poolbench/go-build
go_main=$(dirname "$0")/../crates/cli/tests/support/clients/go_http/main.go
if [ ! -x "$go_cache/go_http" ] || [ "$go_main" -nt "$go_cache/go_http" ]; then
    mkdir -p "$go_cache"
    if ! out=$(GOCACHE=$go_cache GOPROXY=off GOTOOLCHAIN=local go build -o "$go_cache/go_http" "$go_main" 2>&1); then
        printf '%s\n' "$out" >&2
        exit 1
    fi
fi
# deploy/kubernetes/validate.sh checks the Job against the Kubernetes API's
# schemas with kubernetes-validate (PyPI), without a cluster.
if ! python3 -c "import kubernetes_validate" 2>/dev/null; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-pip >/dev/null
    fi
    kv() {
        PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
            python3 -m pip install --quiet "$@" kubernetes-validate==1.37.0
    }
    if ! out=$(kv 2>&1); then
        case $out in
            *externally-managed-environment*) kv --break-system-packages ;;
            *) printf '%s\n' "$out" >&2; exit 1 ;;
        esac
    fi
fi
# bench/services/fastapi_sqlalchemy.py: a FastAPI service with synchronous
# SQLAlchemy on PostgreSQL (psycopg2), served by uvicorn.
if ! python3 -c 'import fastapi, uvicorn, sqlalchemy, psycopg2' 2>/dev/null; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-pip >/dev/null
    fi
    fa() {
        PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
            python3 -m pip install --quiet "$@" fastapi==0.165.0 uvicorn==0.54.0 \
            sqlalchemy==2.1.9 psycopg2-binary==2.9.13
    }
    if ! out=$(fa 2>&1); then
        case $out in
            *externally-managed-environment*) fa --break-system-packages ;;
            *) printf '%s\n' "$out" >&2; exit 1 ;;
        esac
    fi
fi
