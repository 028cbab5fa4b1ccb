#!/usr/bin/env bash
# Installs and configures what cross-building and testing jitrun for
# aarch64-unknown-linux-gnu under qemu user-mode emulation needs on a
# Debian 12 (bookworm) x86-64 machine. Idempotent; run as root; quiet on
# success (a warning line at most). Exports nothing: source env.sh (next to
# this script) for the cargo variables.
#
# Installs: Debian's rustc-web (/usr/bin/rustc, 1.96 from bookworm-security)
# with libstd-rust-web-dev:arm64, the aarch64-linux-gnu gcc/g++ cross
# toolchain, the arm64 runtime libraries (libc6, libstdc++6, libgcc-s1,
# zlib1g :arm64) that the guest's ld.so finds under /lib/aarch64-linux-gnu,
# and qemu-user 10.0 from bookworm-backports; registers qemu-aarch64 with
# binfmt_misc so that aarch64 executables can be exec'd directly.
set -euo pipefail

log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
  if ! "$@" >>"$log" 2>&1; then
    echo "setup-aarch64: failed: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}
apt_install() {
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# bookworm-backports, for qemu-user 10.0 (bookworm's own is 7.2).
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  cat >/etc/apt/sources.list.d/bookworm-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
dpkg --print-foreign-architectures | grep -qx arm64 || run dpkg --add-architecture arm64
run env DEBIAN_FRONTEND=noninteractive apt-get update -q

# libc6-dev:arm64 and zlib1g-dev:arm64 lay the development files out as on
# an arm64 machine (/usr/lib/aarch64-linux-gnu/libm.so, libz.so, ...),
# where jitrun's -l search finds them. They pull linux-libc-dev:arm64,
# which brings the host's linux-libc-dev (and a few security updates with
# it) to the same version.
apt_install rustc-web libstd-rust-web-dev:arm64 \
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross \
  libc6:arm64 libstdc++6:arm64 libgcc-s1:arm64 zlib1g:arm64 \
  libc6-dev:arm64 zlib1g-dev:arm64
apt_install -t bookworm-backports qemu-user qemu-user-binfmt

# binfmt_misc (no systemd running here, so register by hand). Without it
# the cargo runner still works; only exec of aarch64 files from a process
# (a test running the crate's own binary) fails with ENOEXEC.
binfmt=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
[ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" >>"$log" 2>&1 || true
if [ -e "$binfmt/register" ]; then
  [ -e "$binfmt/qemu-aarch64" ] || cat "$conf" >"$binfmt/register" 2>>"$log" || true
  [ -e "$binfmt/qemu-aarch64" ] && echo 1 >"$binfmt/qemu-aarch64" 2>>"$log" || true
fi
if ! grep -qsx enabled "$binfmt/qemu-aarch64"; then
  echo "setup-aarch64: warning: binfmt_misc registration of qemu-aarch64 failed; run aarch64 programs as 'qemu-aarch64 PROG'" >&2
fi

# Smoke test: a C program cross-built, run under qemu (never with
# -L /usr/aarch64-linux-gnu: that mixes two glibc builds and hangs threads).
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$log"' EXIT
printf '#include <pthread.h>\nstatic void *f(void *p) { return p; }\nint main(void) { pthread_t t; void *r; pthread_create(&t, 0, f, (void *)42); pthread_join(t, &r); return (long)r == 42 ? 0 : 1; }\n' >"$dir/t.c"
run aarch64-linux-gnu-gcc -O2 -pthread -o "$dir/t" "$dir/t.c"
run timeout 60 qemu-aarch64 "$dir/t"
[ -d "$(/usr/bin/rustc --print target-libdir --target aarch64-unknown-linux-gnu)" ] || {
  echo "setup-aarch64: /usr/bin/rustc has no aarch64 std" >&2
  exit 1
}
