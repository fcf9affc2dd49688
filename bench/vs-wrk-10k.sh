#!/usr/bin/env bash
# Scale: poolbench against wrk at c = 100, 1,000 and 10,000 on
# `poolbench serve --delay 100ms` (ideal throughput c / 0.1 s), interleaved,
# with each client's peak RSS from /usr/bin/time -v.
#
#   bench/vs-wrk-10k.sh [ROUNDS] [CONCURRENCIES]     (defaults: 3, "1 100 1000 10000")
#
# wrk: `wrk -t2 -cN -d5s`; poolbench: `run URL -s pool:N -c N -d 4s
# --warmup 1s` (its warm-up opens every connection before measuring).
# Prints per round both tools' req/s and RSS, then per N the medians, the
# median of per-round ratios (target >= 1.0x wrk) and each tool's memory per
# connection at each N: (median RSS at N - median RSS at c=1) / N (target
# <= 3 KB for poolbench at 10,000), the two tools' figures from the same
# minutes. c=1 is always measured. Up to the descriptor limit: e.g.
# `bench/vs-wrk-10k.sh 1 "1 10000 19000"` where `ulimit -Hn` is 20,000.
set -euo pipefail
rounds=${1:-3}
concurrencies=${2:-1 100 1000 10000}
case " $concurrencies " in *" 1 "*) ;; *) concurrencies="1 $concurrencies" ;; esac
cd "$(dirname "$0")/.."
. bench/lib.sh

command -v wrk >/dev/null || { echo "installing wrk from the OS packages" >&2; apt_install wrk; }
[ -x /usr/bin/time ] || { echo "installing time from the OS packages" >&2; apt_install time; }
ulimit -n "$(ulimit -Hn)"
build_poolbench
start_serve http --delay 100ms
url="http://$addr/"
print_machine
echo "server:  poolbench serve --delay 100ms at $url; descriptors: $(ulimit -n)"
echo "wrk:     $(wrk -v 2>&1 | head -1)"

rows="$bench_tmp/rows"
: >"$rows"
rss() { awk '/Maximum resident/ {print $6}' "$1"; }
for c in $concurrencies; do
    for i in $(seq "$rounds"); do
        # wrk needs a connection per thread at least.
        /usr/bin/time -v wrk -t"$((c < 2 ? 1 : 2))" -c"$c" -d5s "$url" >"$bench_tmp/wrk.out" 2>"$bench_tmp/wrk.time"
        w=$(awk '/^Requests\/sec/ {print $2}' "$bench_tmp/wrk.out")
        /usr/bin/time -v "$bin" run "$url" -s "pool:$c" -c "$c" -d 4s --warmup 1s --quiet \
            --format json >"$bench_tmp/pb.json" 2>"$bench_tmp/pb.time"
        p=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cells"][0]; print(c["throughput_rps"], c["connections"]["peak_open"])' "$bench_tmp/pb.json")
        # shellcheck disable=SC2086
        set -- $p
        printf 'c=%-6s round %d: wrk %9.0f req/s %7d KB   poolbench %9.0f req/s %7d KB (%s connections)\n' \
            "$c" "$i" "$w" "$(rss "$bench_tmp/wrk.time")" "$1" "$(rss "$bench_tmp/pb.time")" "$2"
        echo "$c $w $(rss "$bench_tmp/wrk.time") $1 $(rss "$bench_tmp/pb.time")" >>"$rows"
    done
done
python3 - "$rows" <<'PY'
import statistics, sys
from collections import defaultdict
cells = defaultdict(list)
for line in open(sys.argv[1]):
    c, w, wr, p, pr = line.split()
    cells[int(c)].append((float(w), int(wr), float(p), int(pr)))
med = statistics.median
print("\n     c   wrk req/s  wrk RSS   pb req/s   pb RSS  paired ratio (target >= 1.0x)")
for c, rs in sorted(cells.items()):
    print(f"{c:>6} {med(r[0] for r in rs):>11,.0f} {med(r[1] for r in rs) / 1024:>6.0f} MB {med(r[2] for r in rs):>10,.0f} "
          f"{med(r[3] for r in rs) / 1024:>5.0f} MB  {med(r[2] / r[0] for r in rs):.2f}x")
base_w, base_p = med(r[1] for r in cells[1]), med(r[3] for r in cells[1])
print(f"\nmemory per connection above c=1 (wrk {base_w / 1024:.1f} MB, poolbench {base_p / 1024:.1f} MB at c=1)")
print("     c      wrk  poolbench  (poolbench target <= 3 KB at 10,000)")
for c, rs in sorted(cells.items()):
    if c > 1:
        w = (med(r[1] for r in rs) - base_w) / c
        p = (med(r[3] for r in rs) - base_p) / c
        print(f"{c:>6} {w:>5.2f} KB {p:>7.2f} KB")
PY
