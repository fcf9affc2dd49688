#!/usr/bin/env bash
# poolbench against mariadb-slap (mysqlslap) on the same throwaway MariaDB,
# interleaved: a primary-key point SELECT on a seeded table.
#
#   bench/vs-mysqlslap.sh [ROUNDS] [SECONDS] [CONCURRENCY]
#                                    (defaults: 3 rounds of 10 s, c=10)
#
# Starts MariaDB with scripts/services.sh (installing it if missing) and
# mariadb-client if mariadb-slap is missing; seeds `slap_t` (10,000 rows).
# Each round runs, in turn,
#   poolbench run mysql://... -s pool:C -c C -d SECONDS
#     --query 'SELECT id,name FROM slap_t WHERE id=?' --param 4242
#   mariadb-slap --concurrency=C --iterations=1 --number-of-queries=Q
#     --query 'SELECT id,name FROM slap_t WHERE id=4242'
# with C connections each (one per client). mariadb-slap has no duration:
# Q is the round's poolbench rate × SECONDS, so both run about as long.
# Not the same protocol: poolbench prepares the statement once per
# connection and executes it (binary protocol, COM_STMT_EXECUTE);
# mariadb-slap sends the text query each time (COM_QUERY). Prints each
# run, each side's median, the ratio of medians and the median of
# per-round ratios (poolbench req/s ÷ mariadb-slap queries/s).
set -euo pipefail
rounds=${1:-3}
seconds=${2:-10}
c=${3:-10}
cd "$(dirname "$0")/.."
. bench/lib.sh

build_poolbench
command -v mariadb-slap >/dev/null || apt_install mariadb-client
start_services mysql

# mysql://user:password@127.0.0.1:PORT/db, for the MariaDB clients.
read -r user pass port db < <(python3 -c '
import sys, urllib.parse as u
p = u.urlparse(sys.argv[1])
print(p.username, p.password, p.port, p.path.lstrip("/"))' "$url")
export MYSQL_PWD=$pass
client=(--host=127.0.0.1 --port="$port" --user="$user" --protocol=tcp --skip-ssl)
mariadb "${client[@]}" "$db" -e "
DROP TABLE IF EXISTS slap_t;
CREATE TABLE slap_t (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL);
INSERT INTO slap_t SELECT seq, CONCAT('name ', seq) FROM seq_1_to_10000;"

print_machine
echo "server:  MariaDB $(mariadb "${client[@]}" -N -e 'SELECT VERSION()') at 127.0.0.1 (scripts/services.sh), no TLS"
echo "load:    c=$c, $c connections each, ${seconds} s per run, SELECT id,name FROM slap_t WHERE id=4242"
slap_qps=()
pb_rps=()
for i in $(seq "$rounds"); do
    p=$("$bin" run "$url" -s "pool:$c" -c "$c" -d "${seconds}s" --warmup 1s --quiet --format json \
        --query 'SELECT id,name FROM slap_t WHERE id=?' --param 4242 |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_rps"])')
    q=$(python3 -c "print(int(float('$p') * $seconds))")
    s=$(mariadb-slap "${client[@]}" --create-schema="$db" --concurrency="$c" --iterations=1 \
        --number-of-queries="$q" --query='SELECT id,name FROM slap_t WHERE id=4242' 2>/dev/null |
        awk -v q="$q" '/Average number of seconds to run all queries/ {print q / $(NF-1); exit}')
    [ -n "$s" ] || { echo "mariadb-slap gave no figure" >&2; exit 1; }
    printf 'round %d: poolbench %10.0f req/s     mariadb-slap %10.0f queries/s (%d queries)\n' \
        "$i" "$p" "$s" "$q"
    pb_rps+=("$p")
    slap_qps+=("$s")
done
summarize mariadb-slap "queries/s" 1.0 "${slap_qps[*]}" "${pb_rps[*]}"
