#!/usr/bin/env bash
# poolbench against pgbench on the same throwaway PostgreSQL, interleaved.
#
#   bench/vs-pgbench.sh [ROUNDS] [SECONDS] [plain|tls|pgbouncer]
#                                    (defaults: 3 rounds of 10 s, plain)
#
# Starts PostgreSQL with scripts/services.sh (installing it if missing),
# which accepts TLS: `plain` connects both clients with sslmode=disable (as
# to a server with ssl off, initdb's default), `tls` with sslmode=require;
# left to their default (prefer), both would negotiate TLS. Then alternates
# `pgbench -n -M prepared -c 10 -j 2 -T SECONDS -f select1.sql` and
# `poolbench run postgres://... -s pool:10 -c 10 -d SECONDS` (SELECT 1,
# prepared once per connection), and prints each side's median, the ratio
# of medians, and the median of per-round ratios. `pgbouncer` goes through
# PgBouncer in transaction mode (pool 20, in front of the same PostgreSQL,
# sslmode=disable) with both tools in extended mode (`pgbench -M
# extended`, `--query-mode extended`): named prepared statements do not
# survive transaction pooling.
set -euo pipefail
rounds=${1:-3}
seconds=${2:-10}
mode=${3:-plain}
service=pg
query_mode=prepared
case $mode in
plain) sslmode=disable ;;
tls) sslmode=require ;;
pgbouncer) sslmode=disable service=pgbouncer query_mode=extended ;;
*) echo "mode must be plain, tls or pgbouncer, not $mode" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
. bench/lib.sh

build_poolbench
tmp=$bench_tmp
start_services "$service"
command -v pgbench >/dev/null || { echo "pgbench is missing (postgresql-contrib)" >&2; exit 1; }
echo 'SELECT 1;' >"$tmp/select1.sql"
url="$url?sslmode=$sslmode"

print_machine
case $service in
pg) echo "server:  PostgreSQL $(pgbench --version | awk '{print $3}') at 127.0.0.1 (scripts/services.sh), sslmode=$sslmode" ;;
*) echo "server:  $(pgbouncer --version | head -1) in transaction mode (pool 20) in front of PostgreSQL at 127.0.0.1 (scripts/services.sh), sslmode=$sslmode, both in $query_mode mode" ;;
esac
pg_tps=()
pb_rps=()
for i in $(seq "$rounds"); do
    g=$(pgbench -n -M "$query_mode" -c 10 -j 2 -T "$seconds" -f "$tmp/select1.sql" "$url" 2>/dev/null |
        awk '/^tps = / {print $3; exit}')
    p=$("$bin" run "$url" --query-mode "$query_mode" -s pool:10 -c 10 -d "${seconds}s" --warmup 1s --quiet --format json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_rps"])')
    printf 'round %d: pgbench %10.0f tps     poolbench %10.0f req/s\n' "$i" "$g" "$p"
    pg_tps+=("$g")
    pb_rps+=("$p")
done
summarize pgbench "tps" 1.0 "${pg_tps[*]}" "${pb_rps[*]}"
