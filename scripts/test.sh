#!/usr/bin/env bash
# Every test of the workspace: unit, end-to-end against the built-in server,
# the binary's own, and those against real PostgreSQL, Redis and nginx,
# which this script starts on free loopback ports (scripts/services.sh) and
# stops after. It first installs what the tests need (scripts/setup.sh:
# Chromium, Python's grpcio and h2, shellcheck, kubernetes-validate; the
# services' packages come with services.sh): on a fresh machine it needs
# nothing run before it, and when all is there it costs about a second
# and prints nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
services_dir=$(mktemp -d /tmp/poolbench-services.XXXXXX)
cleanup() {
    scripts/services.sh stop "$services_dir" || true
    rm -rf "$services_dir"
}
trap cleanup EXIT
scripts/services.sh start "$services_dir" all
# shellcheck disable=SC1091
. "$services_dir/env"
# The shard test (crates/cli/tests/shards.rs) puts each shard in a network
# namespace of its own; where that is not permitted it runs them on loopback.
probe_ns=poolbench-probe-$$
if ip netns add "$probe_ns" 2>/dev/null; then
    ip netns del "$probe_ns"
    echo "shard test: network namespaces available; each shard runs in its own"
else
    echo "shard test: network namespaces unavailable here (needs root and iproute2); its shards run as plain processes on loopback"
fi
cargo test --workspace --locked --no-fail-fast "$@"
