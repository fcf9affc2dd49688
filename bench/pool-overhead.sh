#!/usr/bin/env bash
# What `pool:P` itself costs when many workers share few connections: the
# closed loop with c = P·k workers against the same with c = P (no worker
# ever waits), per protocol, paired and interleaved.
#
#   bench/pool-overhead.sh [ROUNDS] [SECONDS] [PROTOCOL...]
#                          (defaults: 5 rounds of 2 s, every protocol)
#
# PROTOCOL is one of: serve (the built-in server, `poolbench serve`, no
# delay), nginx (HTTP/1.1, OS package), pg (PostgreSQL, SELECT 1), pg-cpu
# (PostgreSQL, `SELECT count(*) FROM generate_series(1,20000)`, CPU-bound
# on the server), mysql (MariaDB, SELECT 1), redis (PING). The servers come
# from scripts/services.sh and bench/lib.sh. POOL (default 2) is P; the
# ratios c/P are 1 (the reference), 4, 16 and 64. In each round every c/P
# runs once, in an order rotated round by round, each a fresh
# `poolbench run URL -s pool:P -c C -d SECONDS --warmup 1s`. Printed per
# protocol and c/P: the median req/s, the median of the per-round ratios
# against c = P (the pool's own overhead costs nothing visible when that
# is >= 0.95), their range, the mean checkout wait, and the generator's
# CPU time per request (its share of the cores over the measured window)
# with its per-round ratio: on a busy machine the throughput swings with
# the neighbours, the CPU a request costs the generator much less. PB_BIN runs that
# poolbench binary instead of building one (to compare two builds).
set -euo pipefail
rounds=${1:-5}
seconds=${2:-2}
shift $(($# < 2 ? $# : 2))
protocols=("$@")
[ ${#protocols[@]} -gt 0 ] || protocols=(serve nginx pg pg-cpu mysql redis)
pool=${POOL:-2}
factors=(1 4 16 64)
cd "$(dirname "$0")/.."
. bench/lib.sh

if [ -n "${PB_BIN:-}" ]; then bin=$PB_BIN; else build_poolbench; fi
services=
overhead_cleanup() {
    if [ -n "$services" ]; then scripts/services.sh stop "$services" || true; rm -rf "$services"; fi
    bench_cleanup
}
trap 'bench_rc=$?; overhead_cleanup' EXIT
needs() { printf '%s\n' "${protocols[@]}" | grep -qE "^($1)\$"; }
if needs 'pg|pg-cpu|mysql|redis'; then
    services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
    chmod 755 "$services"
    needs 'pg|pg-cpu' && scripts/services.sh start "$services" pg >/dev/null
    needs mysql && scripts/services.sh start "$services" mysql >/dev/null
    needs redis && scripts/services.sh start "$services" redis >/dev/null
fi
if needs serve; then start_serve http; fi
if needs nginx; then
    command -v nginx >/dev/null || apt_install nginx
    start_nginx
fi

# url_of PROTOCOL, and the extra arguments it runs with in $extra.
url_of() {
    extra=()
    case $1 in
    serve) echo "http://$addr/" ;;
    nginx) echo "http://$nginx_addr/" ;;
    pg) echo "$(cat "$services/pg/url")?sslmode=disable" ;;
    pg-cpu) echo "$(cat "$services/pg/url")?sslmode=disable" ;;
    mysql) cat "$services/mysql/url" ;;
    redis) cat "$services/redis/url" ;;
    *) echo "unknown protocol $1" >&2; exit 2 ;;
    esac
}

print_machine
echo "pool:$pool, c = $pool x (${factors[*]}), $rounds interleaved rounds of ${seconds}s (+1s warm-up), $("$bin" --version)"
results=$bench_tmp/results
: >"$results"
for proto in "${protocols[@]}"; do
    url=$(url_of "$proto")
    extra=()
    [ "$proto" = pg-cpu ] && extra=(--query 'SELECT count(*) FROM generate_series(1,20000)')
    for r in $(seq "$rounds"); do
        n=${#factors[@]}
        for k in $(seq 0 $((n - 1))); do
            f=${factors[$(((k + r) % n))]}
            c=$((pool * f))
            line=$("$bin" run "$url" "${extra[@]}" -s "pool:$pool" -c "$c" -d "${seconds}s" --warmup 1s \
                --quiet --format json | python3 -c '
import json, sys
c = json.load(sys.stdin)["cells"][0]
w = (c.get("checkout_wait_us") or {}).get("mean", 0)
cpu = (c.get("generator_cpu") or 0) * int(sys.argv[1]) * 1e6 / max(c["throughput_rps"], 1)
print(c["throughput_rps"], w, cpu)' "$(nproc)")
            echo "$proto $r $f $line" >>"$results"
            printf '%-7s round %d  c=%-4d %10.0f req/s  checkout wait %9.1f us  generator CPU %6.2f us/req\n' "$proto" "$r" "$c" $line
        done
    done
done
python3 - "$results" "$pool" <<'PY'
import statistics, sys
from collections import defaultdict
rows = [l.split() for l in open(sys.argv[1])]
pool = int(sys.argv[2])
rps, wait, cpu = defaultdict(dict), defaultdict(dict), defaultdict(dict)
for proto, r, f, x, w, u in rows:
    rps[(proto, int(f))][int(r)] = float(x)
    wait[(proto, int(f))][int(r)] = float(w)
    cpu[(proto, int(f))][int(r)] = float(u)
print()
print("| protocol | c | c/p | req/s (median) | vs c = p (median per-round ratio) | range "
      "| checkout wait (mean, us) | generator CPU (us/req) | CPU vs c = p |")
print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
for proto in dict.fromkeys(p for p, _ in rps):
    base = rps[(proto, 1)]
    for f in sorted(f for p, f in rps if p == proto):
        xs = rps[(proto, f)]
        med = statistics.median(xs.values())
        w = statistics.median(wait[(proto, f)].values())
        us = cpu[(proto, f)]
        u = statistics.median(us.values())
        if f == 1:
            print(f"| {proto} | {pool} | 1 | {med:,.0f} | (reference) | | {w:.1f} | {u:.2f} | |")
            continue
        ratios = [xs[r] / base[r] for r in xs if r in base]
        cpu_ratio = statistics.median(us[r] / cpu[(proto, 1)][r] for r in us if r in base)
        print(f"| {proto} | {pool * f} | {f} | {med:,.0f} | {statistics.median(ratios):.2f} "
              f"| {min(ratios):.2f}–{max(ratios):.2f} | {w:.1f} | {u:.2f} | {cpu_ratio:.2f} |")
PY
