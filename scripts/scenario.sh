#!/usr/bin/env bash
# Run a scenario with what it needs: builds poolbench (release), starts
# PostgreSQL, MariaDB, Redis, nginx and PgBouncer on free loopback ports (scripts/services.sh) when the
# scenario names them in `needs`, runs it, and stops them.
#
#   scripts/scenario.sh NAME|FILE.toml [poolbench scenario run options]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/scenario.sh NAME|FILE.toml [-o FILE ...]" >&2; exit 2; }
cargo build --release -q -p poolbench
bin=${CARGO_TARGET_DIR:-target}/release/poolbench
if "$bin" scenario show "$1" | grep -Eq '^needs *=.*"(postgres|mysql|redis|pgbouncer|nginx)"'; then
    dir=$(mktemp -d /tmp/poolbench-services.XXXXXX)
    trap 'scripts/services.sh stop "$dir" >/dev/null || true; rm -rf "$dir"' EXIT
    scripts/services.sh start "$dir" >/dev/null
    # shellcheck disable=SC1091
    . "$dir/env"
fi
# Not exec: the trap stops the services after the run.
"$bin" scenario run "$@"
