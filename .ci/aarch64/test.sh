#!/usr/bin/env bash
# The test suite built for aarch64 and run under qemu-user (binfmt runs the
# test programs, jitrun and the natively linked references alike), after
# `.ci/aarch64/setup.sh`:
#
#   .ci/aarch64/test.sh
#
# Every test binary runs except these, whose subjects emulation cannot
# show or which take too long under it (each runs on x86-64 in the same CI,
# and on native arm64 hosts):
#   contained   cgroups, rlimits, seccomp and Landlock act on qemu, not on
#               the program; 20 minutes under emulation
#   launcher    build-system recipes (cmake, make, meson): CPU-neutral
#   sanitizers  TSan cannot map its shadow memory under qemu-user
#   docs        the man page and README are the same; the list of hot
#               functions names the x86-64 build's symbols
# Inside the binaries that run, a few checks say why they cannot be made
# under emulation and return (gdb, `ulimit -v`, huge-page advice, a large
# static TLS surplus): grep the tests for `cross_testing`.
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/aarch64/env.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/a64}
target=(--release --target aarch64-unknown-linux-gnu)

cargo build "${target[@]}" --tests --bins
cargo test "${target[@]}" --lib
for suite in differential_c differential_cxx tls archives lifecycle diagnostics hygiene layers checks macho link_cache; do
  cargo test "${target[@]}" --test "$suite" -- --test-threads 2
done
# 4,000 corrupted inputs take 8 minutes under emulation; 500 of them (the
# same seed) take one.
JITRUN_MUTATIONS=500 cargo test "${target[@]}" --test mutation -- --test-threads 2
# qemu-user 10 loses a child that forks while another thread of the
# parent starts a thread: the reuse loop's forking tests run one at a time.
cargo test "${target[@]}" --test reuse -- --test-threads 1
