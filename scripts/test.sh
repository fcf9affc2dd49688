#!/usr/bin/env bash
# Every test of the workspace: unit, end-to-end against the built-in server,
# the binary's own, and those against real PostgreSQL and Redis, which this
# script starts on free loopback ports (scripts/services.sh) and stops after.
set -euo pipefail
cd "$(dirname "$0")/.."
services_dir=$(mktemp -d /tmp/poolbench-services.XXXXXX)
cleanup() {
    scripts/services.sh stop "$services_dir" || true
    rm -rf "$services_dir"
}
trap cleanup EXIT
scripts/services.sh start "$services_dir" all
# shellcheck disable=SC1091
. "$services_dir/env"
cargo test --workspace --locked --no-fail-fast "$@"
