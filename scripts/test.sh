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
    for i in "${!pids[@]}"; do
        code=0
        wait "${pids[i]}" || code=$?
        echo "== lane ${names[i]}: exit $code, $(cat "$times_dir/${names[i]}.secs") s"
        cat "$times_dir/${names[i]}.out"
        [ "$code" = 0 ] || rc=$code
    done
}

rc=0
if [ $# -gt 0 ]; then
    lane args "${everything[@]}" "$@" || rc=$?
    cat "$times_dir/args.out"
else
    # First three lanes at once, each one cargo invocation (the features,
    # and so the build, are the same for every part of the workspace: see
    # crates/model/Cargo.toml): the binary's tests that load the machine
    # whole (`alone`: tune's searches, the fleet, outages, signals; one at a
    # time), the binary's other tests, and the fault matrix (toxiproxy's
    # faults against every protocol: runs at a fixed, light rate that wait
    # out their fault windows, six at a time). They wait far more than they
    # compute (budgets, fault windows, timeouts), and none asserts the
    # machine's speed, so each lane is to the others what a busy core is.
    # Then, without the heavy lanes, the tests that measure the machine,
    # two lanes at once: the scenarios' expectations (runs one at a time
    # in their binary) and the other crates' tests (the engine's rates and
    # ceilings, runs taking turns in theirs; with the doc tests). Each is
    # to the other what a busy core is, which every test must bear.
    busy=$(busy_cores)
    if [ "$busy" = 0 ]; then
        echo "test.sh: the cores are free: three lanes at once, then two"
        names=(alone cli faults)
        lane alone -p poolbench --test alone -- --skip scenarios:: &
        pids=($!)
        lane cli -p poolbench --test tests --bins -- --skip faults:: --skip faults_nginx:: --skip faults_tune:: &
        pids+=($!)
        lane faults -p poolbench --test tests -- faults:: faults_nginx:: faults_tune:: --test-threads 6 &
        pids+=($!)
        wait_lanes
        names=(scenarios crates)
        lane scenarios -p poolbench --test alone -- scenarios:: &
        pids=($!)
        lane crates "${everything[@]}" --exclude poolbench &
        pids+=($!)
        wait_lanes
    else
        # Something else keeps a core busy (another build, a `yes`): lanes
        # beside it would leave the tests less than a core, and the
        # services stall for seconds. One lane at a time, the fault
        # matrix two runs at a time.
        echo "test.sh: about $busy core(s) busy before the tests: one lane at a time"
        for name in alone cli faults scenarios crates; do
            names=("$name")
            case $name in
            alone) lane alone -p poolbench --test alone -- --skip scenarios:: & ;;
            cli) lane cli -p poolbench --test tests --bins -- --skip faults:: --skip faults_nginx:: --skip faults_tune:: & ;;
            faults) lane faults -p poolbench --test tests -- faults:: faults_nginx:: faults_tune:: --test-threads 2 & ;;
            scenarios) lane scenarios -p poolbench --test alone -- scenarios:: & ;;
            crates) lane crates "${everything[@]}" --exclude poolbench & ;;
            esac
            pids=($!)
            wait_lanes
        done
    fi
fi
ended=$(date +%s)
scripts/test-times.py "$times_dir"
echo "test.sh: build $((built - started)) s, tests $((ended - built)) s, exit $rc"
exit "$rc"
