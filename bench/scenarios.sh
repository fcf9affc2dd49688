#!/usr/bin/env bash
# Every built-in scenario at its own durations on this machine: does each
# meet its expectations? The database scenarios run against the
# PostgreSQL, PgBouncer, MariaDB and Redis that scripts/services.sh starts
# on free loopback ports (and stops after).
#
# A scenario's expectations are measurements (this pool is starved, that
# one is not, the pipelined client is faster), so they belong here, where
# the machine's speed is part of the result, not in the tests: the tests
# run two of them shortened, as wiring (crates/cli/tests/scenarios.rs).
# Prints one line per scenario (met or not, seconds, the expectations not
# met) and the count; exits 1 if any scenario missed an expectation.
#
#   bench/scenarios.sh [NAME...]     (default: every built-in scenario)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_poolbench
print_machine
echo "commit: $(git rev-parse --short HEAD)"

services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
chmod 755 "$services"
trap 'bench_rc=$?; scripts/services.sh stop "$services" >/dev/null || true; rm -rf "$services"; bench_cleanup' EXIT
scripts/services.sh start "$services" all >/dev/null
# shellcheck disable=SC1091
. "$services/env"

names=("$@")
if [ ${#names[@]} = 0 ]; then
    mapfile -t names < <("$bin" scenario list | awk '{print $1}')
fi
failed=0
for name in "${names[@]}"; do
    from=$(date +%s.%N)
    code=0
    "$bin" scenario run --quiet "$name" >"$bench_tmp/$name.out" 2>&1 || code=$?
    secs=$(python3 -c "print(f'{$(date +%s.%N) - $from:.0f}')")
    if [ "$code" = 0 ]; then
        printf '%-30s met       %4s s\n' "$name" "$secs"
    else
        failed=$((failed + 1))
        printf '%-30s NOT MET   %4s s  (exit %s)\n' "$name" "$secs" "$code"
        grep -E 'FAILED|^error' "$bench_tmp/$name.out" | sed 's/^/    /' || true
    fi
done
verdict=MET
[ "$failed" = 0 ] || verdict="NOT MET"
echo "$((${#names[@]} - failed)) of ${#names[@]} scenarios met every expectation: $verdict"
figure "scenarios meeting every expectation" "$((${#names[@]} - failed))" "of ${#names[@]}"
bench_verdict "$([ "$failed" = 0 ] && echo 0 || echo 1)"
