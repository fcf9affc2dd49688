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
# shellcheck disable=SC2317  # called by the trap
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
cargo_test=(cargo test --release --locked)
everything=(--workspace --exclude poolbench-pool-benches)
started=$(date +%s)
if [ $# -gt 0 ]; then
    "${cargo_test[@]}" "${everything[@]}" --no-run "$@"
else
    "${cargo_test[@]}" "${everything[@]}" --no-run
fi
built=$(date +%s)
times_dir="$services_dir/test-times"
host=$(rustc -vV | sed -n 's/^host: //p')
runner="CARGO_TARGET_$(printf '%s' "$host" | tr 'a-z.-' 'A-Z__')_RUNNER"
export "$runner=$PWD/scripts/timed-test"

# One lane: `cargo test ARGS` with its output kept, its test times in a
# folder of its own.
lane() {
    local name=$1
    shift
    local from code=0
    from=$(date +%s)
    mkdir -p "$times_dir/$name"
    POOLBENCH_TEST_TIMES="$times_dir/$name" "${cargo_test[@]}" --no-fail-fast "$@" \
        >"$times_dir/$name.out" 2>&1 || code=$?
    echo "$(($(date +%s) - from))" >"$times_dir/$name.secs"
    return "$code"
}

# Cores kept busy by others before the tests, rounded: the CPU time not
# idle over two seconds, nice processes' included (with the kernel's
# scheduler autogroups a nice build in another session still takes its
# session's share: a nice 19 clippy failed five fault tests).
busy_cores() {
    local a b
    read -r -a a < <(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    sleep 2
    read -r -a b < <(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    echo $((((b[0] - a[0]) * $(nproc) * 2 + b[1] - a[1]) / (2 * (b[1] - a[1] + 1))))
}

# Wait for the lanes started (`pids`, named `names`), then print each
# one's output in turn; a lane that failed sets `rc`.
wait_lanes() {
    local i code
    local i code name
    for i in "${!pids[@]}"; do
        code=0
        wait "${pids[i]}" || code=$?
        # A pid may run lanes in turn (names separated by spaces).
        for name in ${names[i]}; do
            echo "== lane $name: $(cat "$times_dir/$name.secs") s (exit $code of: ${names[i]})"
            cat "$times_dir/$name.out"
        done
        [ "$code" = 0 ] || rc=$code
    done
}

# The lanes' tests, by name (cargo test arguments). `alone`'s fleet and
# Prometheus tests run in the second wave, beside the crates' tests, as
# the scenarios do; the client checks (real Go and Python clients against
# `serve --check-client`, mostly waiting on its delays) and the idle-close
# measurements (waiting out servers' idle timeouts) after the fault
# matrix, whose lane ends first.
lane_args() {
    case $1 in
    alone) echo "-p poolbench --test alone -- --skip scenarios:: --skip fleet:: --skip prometheus::" ;;
    cli) echo "-p poolbench --test tests --bins -- --skip faults:: --skip faults_nginx:: --skip faults_tune:: --skip client_check:: --skip idle::" ;;
    faults) echo "-p poolbench --test tests -- faults:: faults_nginx:: faults_tune::" ;;
    clients) echo "-p poolbench --test tests -- client_check:: idle::" ;;
    scenarios) echo "-p poolbench --test alone -- scenarios:: fleet:: prometheus::" ;;
    crates) echo "${everything[*]} --exclude poolbench" ;;
    esac
}

# Run the lanes named, one after another; the first failure's exit code.
in_turn() {
    local name code=0 c args
    for name in "$@"; do
        read -r -a args <<<"$(lane_args "$name")"
        if [ "$name" = faults ]; then args+=(--test-threads "$fault_threads"); fi
        c=0
        lane "$name" "${args[@]}" || c=$?
        [ "$code" != 0 ] || code=$c
    done
    return "$code"
}

rc=0
if [ $# -gt 0 ]; then
    lane args "${everything[@]}" "$@" || rc=$?
    cat "$times_dir/args.out"
else
    # First three lanes at once (see `lane_args`), each one cargo
    # invocation at a time (the features, and so the build, are the same
    # for every part of the workspace: see crates/model/Cargo.toml): the
    # binary's tests that load the machine whole (`alone`: tune's searches,
    # outages, signals; one at a time), the binary's other tests, and the
    # fault matrix (toxiproxy's faults against every protocol: runs at a
    # fixed, light rate that wait out their fault windows, six at a time)
    # followed by the client checks. They wait far more than they compute
    # (budgets, fault windows, timeouts), and none asserts the machine's
    # speed, so each lane is to the others what a busy core is. Then,
    # without the heavy lanes, two lanes at once: the scenarios'
    # expectations with the fleet's and Prometheus's tests (runs one at a
    # time in their binary) and the other crates' tests (the engine's rates
    # and ceilings, runs taking turns in theirs; with the doc tests). Each
    # is to the other what a busy core is, which every test must bear.
    busy=$(busy_cores)
    if [ "$busy" = 0 ]; then
        echo "test.sh: the cores are free: three lanes at once, then two"
        fault_threads=6
        names=(alone cli "faults clients")
        pids=()
        for group in "${names[@]}"; do
            # shellcheck disable=SC2086  # the lanes of a group, one word each
            in_turn $group &
            pids+=($!)
        done
        wait_lanes
        names=(scenarios crates)
        pids=()
        for group in "${names[@]}"; do
            in_turn "$group" &
            pids+=($!)
        done
        wait_lanes
    else
        # Something else keeps a core busy (another build, a `yes`): lanes
        # beside it would leave the tests less than a core, and the
        # services stall for seconds. One lane at a time, the fault
        # matrix two runs at a time.
        echo "test.sh: about $busy core(s) busy before the tests: one lane at a time"
        fault_threads=2
        for name in alone cli faults clients scenarios crates; do
            names=("$name")
            in_turn "$name" &
            pids=($!)
            wait_lanes
        done
    fi
fi
ended=$(date +%s)
scripts/test-times.py "$times_dir"
echo "test.sh: build $((built - started)) s, tests $((ended - built)) s, exit $rc"
exit "$rc"
