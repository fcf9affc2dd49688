#!/usr/bin/env bash
# Installs what building and testing poolbench needs on a fresh Debian
# machine: a Rust toolchain with rustfmt and clippy, and python3.
set -euo pipefail
if ! command -v cargo >/dev/null; then
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# Tests drive a server written with Python's standard library
# (crates/cli/tests/support/recording_server.py).
if ! command -v python3 >/dev/null; then
    sudo=sudo
    [ "$(id -u)" = 0 ] && sudo=
    $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3 >/dev/null
fi
