#!/usr/bin/env bash
# The README's test command on a fresh machine: a clean Debian bookworm root
# made with debootstrap, holding only what a new machine has (the Rust
# toolchain, copied from this one; git, curl, ca-certificates), a fresh
# clone of COMMIT, and `scripts/test.sh` run there with nothing before it.
# It proves test.sh installs everything the tests need by itself.
#
#   scripts/fresh-check.sh [COMMIT]      (default: HEAD; needs root)
#
# The base root is kept in $FRESH_CACHE (default /var/tmp/poolbench-fresh)
# as a tarball and unpacked anew for every check; the check's root is
# removed after. Prints the build and test times and test.sh's exit code,
# which it exits with.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse "${1:-HEAD}")
cache=${FRESH_CACHE:-/var/tmp/poolbench-fresh}
[ "$(id -u)" = 0 ] || { echo "fresh-check.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}
mkdir -p "$cache"
base="$cache/bookworm-base.tar"
if [ ! -f "$base" ]; then
    echo "fresh-check: debootstrap bookworm (once; kept in $base)"
    stage=$(mktemp -d "$cache/stage.XXXXXX")
    debootstrap --variant=minbase --include=git,curl,ca-certificates,python3 \
        bookworm "$stage" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1
    tar -C "$stage" -cf "$base" .
    rm -rf "$stage"
fi

root=$(mktemp -d /var/tmp/poolbench-fresh-root.XXXXXX)
mounts=()
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount -l "${mounts[i]}" 2>/dev/null || true
    done
    # And what the tests mounted inside (ip netns's /run/netns), deepest first.
    awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r |
        while read -r m; do umount -l "$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$root"
}
trap cleanup EXIT
# A stop (Ctrl-C, kill) ends the check through the cleanup above.
trap 'exit 130' INT
trap 'exit 143' TERM
tar -C "$root" -xf "$base"
# The root of a system: everyone may enter it (the postgres user must);
# the tarball's "." kept the mode of debootstrap's temp dir.
chmod 755 "$root"
for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$root/$m"
    mounts+=("$root/$m")
done
mkdir -p "$root/dev/shm"
mount -t tmpfs tmpfs "$root/dev/shm"
mounts+=("$root/dev/shm")
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This network's own certificate authorities (a TLS-inspecting egress
# proxy, where there is one), as this machine trusts them: part of the
# network, not of the project.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
fi

# The Rust toolchain, as rustup installs it (the only thing a fresh machine
# is given here besides the base system).
mkdir -p "$root/root/.cargo"
cp -a "$HOME/.rustup" "$root/root/.rustup"
cp -a "$HOME/.cargo/bin" "$root/root/.cargo/bin"

git clone -q --no-local "$PWD" "$root/root/poolbench"
git -C "$root/root/poolbench" checkout -q "$commit"
echo "fresh-check: $commit in a clean bookworm root at $root"

# As a newcomer goes: the README's first command (the install, then tune
# against the built-in server, from another directory; no installs before
# it), then scripts/test.sh whole, which installs what the tests need and
# reuses that build. Each is timed.
inside() {
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
        PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
        REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
        PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "cd /root/poolbench && $1"
}
start=$(date +%s)
set +e
# shellcheck disable=SC2016  # expanded by the shell inside the root
inside 'cargo install --locked --path crates/cli --quiet && cd /tmp && poolbench --version && poolbench tune -c 100 --server-delay 20ms --server-max-inflight 24 --quiet >/tmp/first-answer.txt; rc=$?; head -3 /tmp/first-answer.txt; exit $rc'
build_rc=$?
tests_from=$(date +%s)
inside 'scripts/test.sh'
rc=$?
set -e
end=$(date +%s)
echo "fresh-check: the README's first command $((tests_from - start)) s (exit $build_rc), scripts/test.sh $((end - tests_from)) s (exit $rc)"
exit "$rc"
