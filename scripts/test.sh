#!/usr/bin/env bash
# Every test of the workspace: unit, simulated, end-to-end against the
# built-in server, the binary's own, and those against real PostgreSQL,
# Redis, MariaDB and nginx, which this script starts on free loopback ports
# (scripts/services.sh) and stops after. It first installs what the tests
# need (scripts/setup.sh: Chromium, Python's grpcio and h2, shellcheck,
# kubernetes-validate; the services' packages come with services.sh): on a
# fresh machine it needs nothing run before it, and when all is there it
# costs about a second and prints nothing.
#
# The tests build with the release profile, so after the README's first
# command (`cargo run --release -p poolbench ...`) they reuse its
# dependencies: only the workspace's own crates and test binaries compile.
# After the run it lists the slowest tests and names any over 60 s
# (scripts/timed-test, scripts/test-times.py). Arguments go to `cargo test`
# (`scripts/test.sh -p poolbench-pool`, `scripts/test.sh -- tune`).
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
# The criterion benchmarks (crates/pool-benches) stay out: their
# dependencies would change the features, so the build, of the others.
cargo_test=(cargo test --release --workspace --exclude poolbench-pool-benches --locked)
started=$(date +%s)
"${cargo_test[@]}" --no-run "$@"
built=$(date +%s)
times_dir="$services_dir/test-times"
mkdir -p "$times_dir"
host=$(rustc -vV | sed -n 's/^host: //p')
runner="CARGO_TARGET_$(printf '%s' "$host" | tr 'a-z.-' 'A-Z__')_RUNNER"
rc=0
env POOLBENCH_TEST_TIMES="$times_dir" "$runner=$PWD/scripts/timed-test" \
    "${cargo_test[@]}" --no-fail-fast "$@" || rc=$?
ended=$(date +%s)
scripts/test-times.py "$times_dir"
echo "test.sh: build $((built - started)) s, tests $((ended - built)) s, exit $rc"
exit "$rc"
