#!/usr/bin/env bash
# Throwaway PostgreSQL (and PgBouncer in front of it, in session and in
# transaction mode), Redis, MariaDB and nginx on free loopback ports, for
# the tests, the README and the bench scripts. Installs them from the OS
# packages if missing (MariaDB, nginx and Prometheus only for `all`).
#
#   scripts/services.sh install [pg|pgbouncer|redis|mysql|all]
#                                                 only install what `start`
#                                                 would (CI does it while
#                                                 it builds)
#   scripts/services.sh start DIR [pg|pgbouncer|redis|mysql|all]
#                                                 (pgbouncer: PostgreSQL and
#                                                 PgBouncer in front of it)
#                                                 start in DIR, print the URLs,
#                                                 write DIR/env (sourceable)
#   scripts/services.sh mysql-stop DIR            MariaDB killed at once (by PID)
#   scripts/services.sh mysql-start DIR           started again, same port
#   scripts/services.sh pg-stop DIR               PostgreSQL goes away at once (by PID)
#   scripts/services.sh pg-start DIR              start it again, same port
#   scripts/services.sh redis-stop DIR            Redis killed at once (by PID)
#   scripts/services.sh redis-start DIR           started again, same ports
#   scripts/services.sh prometheus-start DIR TARGET...
#                                                 Prometheus scraping each
#                                                 TARGET (host:port, /metrics)
#                                                 every second; prints its URL
#   scripts/services.sh prometheus-stop DIR       stopped (by PID) and waited for
#   scripts/services.sh toxiproxy-start DIR       Shopify's toxiproxy (the chaos
#                                                 proxy; `go install`ed by
#                                                 scripts/setup.sh) on a free
#                                                 port; prints its API's URL
#   scripts/services.sh toxiproxy-stop DIR        stopped (by PID) and waited for
#   scripts/services.sh stop DIR                  stop everything in DIR
#
# PostgreSQL's initdb refuses root, so its data and socket directories belong
# to the `postgres` user and its binaries run as that user (so DIR's parents
# must be searchable by it, as mktemp -d under /tmp is once DIR is made 755).
# MariaDB runs as the `mysql` user in the same way; PgBouncer, which refuses
# root, as the `postgres` user. Every server is stopped by
# the PID it wrote, never by name.
set -euo pipefail

PG_USER_OS=postgres
PG_ROLE=poolbench
PG_PASSWORD=poolbench-secret

die() { echo "services.sh: $*" >&2; exit 2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return; }
    done
    return 1
}

# A process that still runs: a zombie counts as gone. A daemon that exits
# is reaped by PID 1, which here may take seconds (or never come), and
# kill -0 succeeds on a zombie.
alive() {
    local state
    kill -0 "$1" 2>/dev/null || return 1
    state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ "$state" != Z ]
}

install_missing() {
    local want=()
    case $1 in pg | pgbouncer | all) ! pg_bin >/dev/null && want+=(postgresql postgresql-contrib) ;; esac
    case $1 in pgbouncer | all) ! command -v pgbouncer >/dev/null && want+=(pgbouncer) ;; esac
    case $1 in redis | all) ! command -v redis-server >/dev/null && want+=(redis-server redis-tools) ;; esac
    case $1 in mysql | all) ! command -v mariadb-install-db >/dev/null && want+=(mariadb-server mariadb-client) ;; esac
    [ "$1" = all ] && ! command -v nginx >/dev/null && want+=(nginx)
    [ "$1" = all ] && ! command -v prometheus >/dev/null && want+=(prometheus)
    [ ${#want[@]} -eq 0 ] && return
    echo "services.sh: installing ${want[*]}" >&2
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >&2
}

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
        return
    fi
    # Without python: a random high port nothing answers on.
    local port
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    die "no free port found"
}

# Run as the postgres OS user (we are usually root).
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u "$PG_USER_OS" -- "$@"; else "$@"; fi
}

pg_start() {
    local dir=$1 bin port
    bin=$(pg_bin)
    port=$(cat "$dir/pg/port")
    as_pg "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" -w -t 30 \
        -o "-p $port -k $dir/pg/sock -c listen_addresses=127.0.0.1" start >/dev/null
}

# A throwaway CA (DIR/tls/ca.pem) and a certificate it signed for localhost
# and 127.0.0.1 (PostgreSQL's ssl=on, Redis's --tls-port): DIR/tls/cert.pem
# and key.pem.
make_cert() {
    local dir=$1 t=$1/tls
    [ -f "$t/cert.pem" ] && return 0
    mkdir -p "$t"
    {
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=poolbench test CA" \
            -keyout "$t/ca-key.pem" -out "$t/ca.pem" &&
            openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
                -keyout "$t/key.pem" -out "$t/req.pem" &&
            printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$t/ext" &&
            openssl x509 -req -in "$t/req.pem" -CA "$t/ca.pem" -CAkey "$t/ca-key.pem" \
                -CAcreateserial -days 2 -extfile "$t/ext" -out "$t/cert.pem"
    } >/dev/null 2>&1 || die "openssl could not make the test certificates"
    chmod 644 "$t/cert.pem" "$t/ca.pem"
    chmod 600 "$t/key.pem"
}

# Beside make_cert's: a client certificate signed by the test CA
# (client.pem, client-key.pem) and a self-signed certificate for localhost
# as `openssl req -x509` makes it, marked as a CA (self.pem, self-key.pem).
make_more_certs() {
    local dir=$1 t=$1/tls
    make_cert "$dir"
    [ -f "$t/self.pem" ] && return 0
    {
        openssl req -newkey rsa:2048 -nodes -subj "/CN=poolbench client" \
            -keyout "$t/client-key.pem" -out "$t/client-req.pem" &&
            printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >"$t/client-ext" &&
            openssl x509 -req -in "$t/client-req.pem" -CA "$t/ca.pem" -CAkey "$t/ca-key.pem" \
                -CAcreateserial -days 2 -extfile "$t/client-ext" -out "$t/client.pem" &&
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
                -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
                -keyout "$t/self-key.pem" -out "$t/self.pem"
    } >/dev/null 2>&1 || die "openssl could not make the client and self-signed certificates"
    chmod 644 "$t/client.pem" "$t/self.pem"
}

pg_init() {
    local dir=$1 bin port
    bin=$(pg_bin)
    port=$(free_port)
    mkdir -p "$dir/pg/sock" "$dir/pg/data"
    echo "$port" >"$dir/pg/port"
    echo "$PG_PASSWORD" >"$dir/pg/pwfile"
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown -R "$PG_USER_OS" "$dir/pg"
    as_pg "$bin/initdb" -D "$dir/pg/data" -U "$PG_ROLE" --pwfile="$dir/pg/pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >"$dir/pg/initdb.log" 2>&1 \
        || { cat "$dir/pg/initdb.log" >&2; die "initdb failed"; }
    make_more_certs "$dir"
    cp "$dir/tls/cert.pem" "$dir/tls/key.pem" "$dir/tls/ca.pem" "$dir/pg/data/"
    [ "$(id -u)" -eq 0 ] && chown "$PG_USER_OS" "$dir/pg/data/cert.pem" "$dir/pg/data/key.pem" "$dir/pg/data/ca.pem"
    chmod 600 "$dir/pg/data/key.pem"
    # The role poolbench_cert also needs a client certificate the test CA
    # signed (DIR/tls/client.pem); every other login is as before.
    {
        echo "hostssl all poolbench_cert 127.0.0.1/32 scram-sha-256 clientcert=verify-ca"
        echo "host all poolbench_cert 127.0.0.1/32 reject"
        cat "$dir/pg/data/pg_hba.conf"
    } >"$dir/pg/hba" && cat "$dir/pg/hba" >"$dir/pg/data/pg_hba.conf"
    cat >>"$dir/pg/data/postgresql.conf" <<EOF
ssl = on
ssl_cert_file = 'cert.pem'
ssl_key_file = 'key.pem'
ssl_ca_file = 'ca.pem'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
EOF
    pg_start "$dir"
    as_pg "$bin/psql" -h "$dir/pg/sock" -p "$port" -U "$PG_ROLE" -d postgres -qAt \
        -c "CREATE DATABASE poolbench" \
        -c "CREATE ROLE poolbench_cert LOGIN PASSWORD '$PG_PASSWORD'" >/dev/null
    echo "postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$port/poolbench" >"$dir/pg/url"
    echo "postgres://poolbench_cert:$PG_PASSWORD@127.0.0.1:$port/poolbench" >"$dir/pg/cert-url"
}

# SIGINT: fast shutdown; SIGQUIT: immediate (the database just goes away).
pg_stop() {
    local dir=$1 signal=${2:-INT} pid
    [ -f "$dir/pg/data/postmaster.pid" ] || return 0
    pid=$(head -1 "$dir/pg/data/postmaster.pid")
    kill -"$signal" "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 300); do
        alive "$pid" || return 0
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# PgBouncer (the OS package) in front of DIR's PostgreSQL, one process per
# pool mode (session, transaction) on its own free port, config, auth file,
# log and PID in DIR/pgbouncer: a pool of 20 server connections for the
# `poolbench` database, clients up to 5000, SCRAM with the same role and
# password as PostgreSQL. Writes DIR/pgbouncer/MODE.url (and url: the
# transaction mode's).
pgbouncer_start() {
    local dir=$1 d=$1/pgbouncer pg_port mode port
    pg_port=$(cat "$dir/pg/port")
    mkdir -p "$d"
    printf '"%s" "%s"\n' "$PG_ROLE" "$PG_PASSWORD" >"$d/users.txt"
    chmod 600 "$d/users.txt"
    for mode in session transaction; do
        port=$(free_port)
        cat >"$d/$mode.ini" <<EOF
[databases]
poolbench = host=127.0.0.1 port=$pg_port dbname=poolbench
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
pool_mode = $mode
default_pool_size = 20
max_client_conn = 5000
admin_users = $PG_ROLE
auth_type = scram-sha-256
auth_file = $d/users.txt
stats_users = $PG_ROLE
pidfile = $d/$mode.pid
logfile = $d/$mode.log
ignore_startup_parameters = extra_float_digits,options
EOF
        echo "postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$port/poolbench" >"$d/$mode.url"
    done
    cp "$d/transaction.url" "$d/url"
    [ "$(id -u)" -eq 0 ] && chown -R "$PG_USER_OS" "$d"
    for mode in session transaction; do
        as_pg pgbouncer -d -q "$d/$mode.ini" || die "pgbouncer ($mode) did not start (see $d/$mode.log)"
        port=$(sed -n 's/^listen_port = //p' "$d/$mode.ini")
        for _ in $(seq 1 100); do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
            sleep 0.05
        done
        [ -s "$d/$mode.pid" ] || die "pgbouncer ($mode) wrote no PID (see $d/$mode.log)"
    done
}

pgbouncer_stop() {
    local dir=$1 mode pid
    for mode in session transaction; do
        [ -s "$dir/pgbouncer/$mode.pid" ] || continue
        pid=$(cat "$dir/pgbouncer/$mode.pid")
        kill -INT "$pid" 2>/dev/null || continue
        for _ in $(seq 1 200); do
            alive "$pid" || break
            sleep 0.05
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
        rm -f "$dir/pgbouncer/$mode.pid"
    done
    return 0
}

redis_start() {
    local dir=$1 port tls_port
    # Started again (redis-start): the same ports.
    port=$(cat "$dir/redis/port" 2>/dev/null || free_port)
    tls_port=$(cat "$dir/redis/tls-port" 2>/dev/null || free_port)
    make_more_certs "$dir"
    mkdir -p "$dir/redis"
    # Protected mode off: it admits only 127.0.0.1 and ::1 to a server
    # without a password, and the tests connect from other loopback
    # addresses too (--source 127.0.0.2-…); it listens on 127.0.0.1 only.
    redis-server --port "$port" --bind 127.0.0.1 --protected-mode no \
        --dir "$dir/redis" --save '' \
        --appendonly no --daemonize yes --pidfile "$dir/redis/pid" \
        --logfile "$dir/redis/log" --maxclients 1000 \
        --tls-port "$tls_port" --tls-cert-file "$dir/tls/cert.pem" \
        --tls-key-file "$dir/tls/key.pem" --tls-ca-cert-file "$dir/tls/ca.pem" \
        --tls-auth-clients optional >/dev/null
    for _ in $(seq 1 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.05
    done
    redis-cli -p "$port" ping >/dev/null || die "redis did not start (see $dir/redis/log)"
    echo "$port" >"$dir/redis/port"
    echo "$tls_port" >"$dir/redis/tls-port"
    echo "redis://127.0.0.1:$port/" >"$dir/redis/url"
    echo "rediss://127.0.0.1:$tls_port/" >"$dir/redis/tls-url"
}

# MariaDB (the OS package) as the `mysql` user, data, socket and TLS files
# in DIR/mysql; the database `poolbench` and its user, password from the
# URL. TLS on (the test CA's certificate), not required.
mysql_start() {
    local dir=$1 d=$1/mysql port
    port=$(cat "$d/port")
    as_mysql /usr/sbin/mariadbd --no-defaults --datadir="$d/data" --port="$port" \
        --bind-address=127.0.0.1 --socket="$d/sock" --pid-file="$d/pid" \
        --log-error="$d/log" --skip-name-resolve --max-connections=1000 \
        --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 \
        --skip-log-bin --performance-schema=OFF \
        --ssl-ca="$d/ca.pem" --ssl-cert="$d/cert.pem" --ssl-key="$d/key.pem" \
        >>"$d/log" 2>&1 &
    for _ in $(seq 1 200); do
        mariadb-admin -S "$d/sock" -uroot ping >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    die "MariaDB did not start (see $d/log)"
}

as_mysql() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u mysql -- "$@"; else "$@"; fi
}

mysql_init() {
    local dir=$1 d=$1/mysql
    mkdir -p "$d/data"
    free_port >"$d/port"
    chmod 755 "$dir"
    make_more_certs "$dir"
    cp "$dir/tls/ca.pem" "$dir/tls/cert.pem" "$dir/tls/key.pem" "$d/"
    [ "$(id -u)" -eq 0 ] && chown -R mysql "$d"
    as_mysql mariadb-install-db --no-defaults --datadir="$d/data" \
        --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 ||
        { cat "$d/install.log" >&2; die "mariadb-install-db failed"; }
    mysql_start "$dir"
    mariadb -S "$d/sock" -uroot -e "CREATE DATABASE poolbench;
        CREATE USER '$PG_ROLE'@'%' IDENTIFIED BY '$PG_PASSWORD';
        GRANT ALL ON poolbench.* TO '$PG_ROLE'@'%';
        CREATE USER 'poolbench_cert'@'%' IDENTIFIED BY '$PG_PASSWORD' REQUIRE X509;
        GRANT ALL ON poolbench.* TO 'poolbench_cert'@'%';" || die "MariaDB setup failed"
    echo "mysql://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$(cat "$d/port")/poolbench" >"$d/url"
    echo "mysql://poolbench_cert:$PG_PASSWORD@127.0.0.1:$(cat "$d/port")/poolbench" >"$d/cert-url"
}

mysql_stop() {
    local dir=$1 signal=${2:-TERM} pid
    [ -s "$dir/mysql/pid" ] || return 0
    pid=$(cat "$dir/mysql/pid")
    kill -"$signal" "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 400); do
        alive "$pid" || { rm -f "$dir/mysql/pid"; return 0; }
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
}

redis_stop() {
    local dir=$1 signal=${2:-TERM} pid
    [ -f "$dir/redis/pid" ] || return 0
    pid=$(cat "$dir/redis/pid")
    kill -"$signal" "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 200); do
        alive "$pid" || return 0
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# nginx (OS package), a server nobody here wrote: HTTP/1.1 on one free
# port, h2c (prior knowledge) on another, a 13-byte answer at every path and
# its connection counters (stub_status) at /nginx_status.
nginx_start() {
    local dir=$1 d=$1/nginx t=$1/tls h1 h2 tls self mtls
    h1=$(free_port)
    h2=$(free_port)
    tls=$(free_port)
    self=$(free_port)
    mtls=$(free_port)
    tls12=$(free_port)
    ka=$(free_port)
    make_more_certs "$dir"
    mkdir -p "$d/logs"
    cat >"$d/nginx.conf" <<CONF
worker_processes 1;
pid $d/nginx.pid;
error_log $d/logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $d;
    proxy_temp_path $d;
    fastcgi_temp_path $d;
    uwsgi_temp_path $d;
    scgi_temp_path $d;
    server {
        listen 127.0.0.1:$h1;
        listen 127.0.0.1:$h2 http2;
        http2_max_concurrent_streams 128;
        location = /nginx_status { stub_status; }
        location / { return 200 "hello, world\n"; }
    }
    # Idle keep-alive connections closed after 3 s, saying nothing of it.
    server {
        listen 127.0.0.1:$ka;
        keepalive_timeout 3s;
        location / { return 200 "hello, world\n"; }
    }
    # TLS as deployed: HTTP/1.1 and h2 by ALPN, sessions resumed by cache
    # (TLS 1.2 IDs, TLS 1.3) and by tickets.
    ssl_session_cache shared:SSL:10m;
    ssl_session_tickets on;
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:$tls ssl http2;
        ssl_certificate $t/cert.pem;
        ssl_certificate_key $t/key.pem;
        location / { return 200 "hello, world\n"; }
    }
    server {
        listen 127.0.0.1:$self ssl http2;
        ssl_certificate $t/self.pem;
        ssl_certificate_key $t/self-key.pem;
        location / { return 200 "hello, world\n"; }
    }
    server {
        listen 127.0.0.1:$mtls ssl http2;
        ssl_certificate $t/cert.pem;
        ssl_certificate_key $t/key.pem;
        ssl_verify_client on;
        ssl_client_certificate $t/ca.pem;
        location / { return 200 "hello, world\n"; }
    }
    # TLS 1.2 only: resumption by session ID or ticket, no key exchange.
    server {
        listen 127.0.0.1:$tls12 ssl http2;
        ssl_protocols TLSv1.2;
        ssl_certificate $t/cert.pem;
        ssl_certificate_key $t/key.pem;
        location / { return 200 "hello, world\n"; }
    }
}
CONF
    nginx -p "$d" -c "$d/nginx.conf" >/dev/null 2>&1 || die "nginx did not start (see $d/logs/error.log)"
    for _ in $(seq 1 100); do
        [ -s "$d/nginx.pid" ] && break
        sleep 0.05
    done
    echo "http://127.0.0.1:$h1/" >"$d/url"
    echo "h2c://127.0.0.1:$h2/" >"$d/h2c-url"
    echo "https://localhost:$tls/" >"$d/tls-url"
    echo "https://localhost:$self/" >"$d/self-url"
    echo "https://localhost:$mtls/" >"$d/mtls-url"
    echo "https://localhost:$tls12/" >"$d/tls12-url"
    echo "http://127.0.0.1:$ka/" >"$d/keepalive-url"
}

nginx_stop() {
    local dir=$1 pid
    [ -s "$dir/nginx/nginx.pid" ] || return 0
    pid=$(cat "$dir/nginx/nginx.pid")
    kill -QUIT "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 200); do
        alive "$pid" || return 0
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# Prometheus (the OS package) on a free loopback port, its config and data
# in DIR/prometheus: scrape interval 1 s, one job `poolbench` with the
# TARGETs as static targets. Ready (its /-/ready answers) when this returns.
prometheus_start() {
    local dir=$1 d port t targets=""
    shift
    [ $# -gt 0 ] || die "prometheus-start DIR TARGET...: no target"
    command -v prometheus >/dev/null || install_missing all
    d=$dir/prometheus
    mkdir -p "$d/data"
    port=$(free_port)
    for t in "$@"; do targets+="${targets:+, }'$t'"; done
    cat >"$d/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: poolbench
    static_configs:
      - targets: [$targets]
EOF
    prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/data" \
        --web.listen-address="127.0.0.1:$port" </dev/null >"$d/log" 2>&1 &
    echo $! >"$d/pid"
    echo "http://127.0.0.1:$port" >"$d/url"
    for _ in $(seq 1 300); do
        if ready "http://127.0.0.1:$port/-/ready"; then
            cat "$d/url"
            return
        fi
        kill -0 "$(cat "$d/pid")" 2>/dev/null || die "prometheus exited (see $d/log)"
        sleep 0.05
    done
    die "prometheus did not become ready (see $d/log)"
}

# toxiproxy's server as scripts/setup.sh installs it (`go install` names
# the binary after its package, `server`).
toxiproxy_bin() {
    local b
    for b in "${TOXIPROXY_SERVER:-}" "$HOME/.cache/poolbench/toxiproxy/server" "$(command -v toxiproxy-server || true)"; do
        [ -n "$b" ] && [ -x "$b" ] && { echo "$b"; return; }
    done
    return 1
}

# toxiproxy on a free loopback port, its log in DIR/toxiproxy; ready (its
# /version answers) when this returns. The proxies and their faults are
# made by the tests through its HTTP API.
toxiproxy_start() {
    local dir=$1 d port bin
    bin=$(toxiproxy_bin) || die "toxiproxy is not installed: run scripts/setup.sh"
    d=$dir/toxiproxy
    mkdir -p "$d"
    port=$(free_port)
    "$bin" -host 127.0.0.1 -port "$port" </dev/null >"$d/log" 2>&1 &
    echo $! >"$d/pid"
    echo "http://127.0.0.1:$port" >"$d/url"
    for _ in $(seq 1 200); do
        if ready "http://127.0.0.1:$port/version"; then
            cat "$d/url"
            return
        fi
        kill -0 "$(cat "$d/pid")" 2>/dev/null || die "toxiproxy exited (see $d/log)"
        sleep 0.05
    done
    die "toxiproxy did not become ready (see $d/log)"
}

toxiproxy_stop() { stop_pidfile "$1/toxiproxy/pid"; }

# 200 from URL (curl, or python3's urllib without it).
ready() {
    if command -v curl >/dev/null; then
        curl -sf -o /dev/null "$1"
    else
        python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$1" 2>/dev/null
    fi
}

# The process whose PID FILE holds: TERM, up to 10 s, then KILL.
stop_pidfile() {
    local file=$1 pid
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    rm -f "$file"
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 200); do
        alive "$pid" || return 0
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
}

prometheus_stop() { stop_pidfile "$1/prometheus/pid"; }

write_env() {
    local dir=$1 here
    here=$(cd "$(dirname "$0")" && pwd)
    {
        [ -f "$dir/pg/url" ] && echo "export POOLBENCH_PG_URL='$(cat "$dir/pg/url")'"
        [ -f "$dir/pg/url" ] && echo "export POOLBENCH_PG_SOCKET_DIR='$dir/pg/sock'"
        # The server takes TLS (the sslmode tests ask for it in the URL);
        # without asking, sessions stay in clear, so the other tests measure
        # what they always did (libpq's default, prefer, would take TLS).
        [ -f "$dir/pg/url" ] && echo "export PGSSLMODE=disable"
        [ -f "$dir/pgbouncer/session.url" ] && echo "export POOLBENCH_PGBOUNCER_SESSION_URL='$(cat "$dir/pgbouncer/session.url")'"
        [ -f "$dir/pgbouncer/transaction.url" ] && echo "export POOLBENCH_PGBOUNCER_TX_URL='$(cat "$dir/pgbouncer/transaction.url")'"
        [ -f "$dir/redis/url" ] && echo "export POOLBENCH_REDIS_URL='$(cat "$dir/redis/url")'"
        [ -f "$dir/redis/tls-url" ] && echo "export POOLBENCH_REDISS_URL='$(cat "$dir/redis/tls-url")'"
        [ -f "$dir/tls/ca.pem" ] && echo "export POOLBENCH_TEST_CA='$dir/tls/ca.pem'"
        [ -f "$dir/mysql/url" ] && echo "export POOLBENCH_MYSQL_URL='$(cat "$dir/mysql/url")'"
        # Logins that also need the client certificate (DIR/tls/client.pem).
        [ -f "$dir/mysql/cert-url" ] && echo "export POOLBENCH_MYSQL_CERT_URL='$(cat "$dir/mysql/cert-url")'"
        [ -f "$dir/pg/cert-url" ] && echo "export POOLBENCH_PG_CERT_URL='$(cat "$dir/pg/cert-url")'"
        [ -f "$dir/nginx/url" ] && echo "export POOLBENCH_NGINX_URL='$(cat "$dir/nginx/url")'"
        [ -f "$dir/nginx/h2c-url" ] && echo "export POOLBENCH_NGINX_H2C_URL='$(cat "$dir/nginx/h2c-url")'"
        [ -f "$dir/nginx/tls-url" ] && echo "export POOLBENCH_NGINX_TLS_URL='$(cat "$dir/nginx/tls-url")'"
        [ -f "$dir/nginx/self-url" ] && echo "export POOLBENCH_NGINX_SELF_URL='$(cat "$dir/nginx/self-url")'"
        [ -f "$dir/nginx/mtls-url" ] && echo "export POOLBENCH_NGINX_MTLS_URL='$(cat "$dir/nginx/mtls-url")'"
        [ -f "$dir/nginx/tls12-url" ] && echo "export POOLBENCH_NGINX_TLS12_URL='$(cat "$dir/nginx/tls12-url")'"
        [ -f "$dir/nginx/keepalive-url" ] && echo "export POOLBENCH_NGINX_KEEPALIVE_URL='$(cat "$dir/nginx/keepalive-url")'"
        [ -f "$dir/tls/self.pem" ] && echo "export POOLBENCH_TEST_SELF_SIGNED='$dir/tls/self.pem'"
        [ -f "$dir/tls/client.pem" ] && echo "export POOLBENCH_TEST_CLIENT_CERT='$dir/tls/client.pem'"
        [ -f "$dir/tls/client-key.pem" ] && echo "export POOLBENCH_TEST_CLIENT_KEY='$dir/tls/client-key.pem'"
        [ -s "$dir/toxiproxy/pid" ] && echo "export POOLBENCH_TOXIPROXY_URL='$(cat "$dir/toxiproxy/url")'"
        echo "export POOLBENCH_SERVICES='$here/services.sh'"
    } >"$dir/env"
}

cmd=${1:-}
dir=${2:-}
if [ "$cmd" = install ]; then
    what=${2:-all}
    case $what in pg | pgbouncer | redis | mysql | all) ;; *) die "unknown service $what (pg, pgbouncer, redis, mysql or all)" ;; esac
    install_missing "$what"
    exit 0
fi
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    die "usage: services.sh install [SERVICE] | start|stop|pg-stop|pg-start|redis-stop|redis-start|mysql-stop|mysql-start|prometheus-start|prometheus-stop|toxiproxy-start|toxiproxy-stop DIR [pg|pgbouncer|redis|mysql|all|TARGET...]"
fi
case $cmd in
start)
    what=${3:-all}
    case $what in pg | pgbouncer | redis | mysql | all) ;; *) die "unknown service $what (pg, pgbouncer, redis, mysql or all)" ;; esac
    install_missing "$what"
    mkdir -p "$dir"
    case $what in pg | pgbouncer | all) pg_init "$dir" ;; esac
    case $what in redis | all) redis_start "$dir" ;; esac
    case $what in mysql | all) mysql_init "$dir" ;; esac
    [ "$what" = all ] && nginx_start "$dir"
    [ "$what" = all ] && toxiproxy_start "$dir" >/dev/null
    case $what in pgbouncer | all) pgbouncer_start "$dir" ;; esac
    write_env "$dir"
    cat "$dir"/pg/url "$dir"/redis/url "$dir"/mysql/url 2>/dev/null || true
    ;;
pg-stop) pg_stop "$dir" QUIT ;;
pg-start) pg_start "$dir" ;;
redis-stop) redis_stop "$dir" KILL ;;
redis-start) redis_start "$dir" ;;
mysql-stop) mysql_stop "$dir" KILL ;;
mysql-start) mysql_start "$dir" ;;
prometheus-start)
    shift 2
    prometheus_start "$dir" "$@"
    ;;
prometheus-stop) prometheus_stop "$dir" ;;
toxiproxy-start)
    toxiproxy_start "$dir"
    write_env "$dir"
    ;;
toxiproxy-stop) toxiproxy_stop "$dir" ;;
stop)
    pgbouncer_stop "$dir"
    pg_stop "$dir"
    redis_stop "$dir"
    mysql_stop "$dir"
    nginx_stop "$dir"
    prometheus_stop "$dir"
    toxiproxy_stop "$dir"
    ;;
*) die "unknown command $cmd" ;;
esac
