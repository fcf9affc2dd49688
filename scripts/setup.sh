#!/usr/bin/env bash
# Installs what building and testing poolbench needs on a fresh Debian
# machine: a Rust toolchain with rustfmt and clippy.
set -euo pipefail
if ! command -v cargo >/dev/null; then
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
