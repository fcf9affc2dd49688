#!/usr/bin/env bash
# Every test of the workspace: unit, end-to-end against the built-in server,
# and the binary's own. Servers bind 127.0.0.1 on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked "$@"
