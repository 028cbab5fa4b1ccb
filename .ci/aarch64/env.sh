# Source this (`. env.sh`, preferably in a subshell) before cargo commands
# that take `--target aarch64-unknown-linux-gnu`; setup-aarch64.sh installs
# what it names. Example:
#   ( . .ci/aarch64/env.sh && cargo test --release --target aarch64-unknown-linux-gnu )
#
# Debian's rustc-web (1.96, /usr/bin/rustc) has the aarch64 std
# (libstd-rust-web-dev:arm64); the rustup toolchain cannot download it.
# rustup's cargo works with it; Debian's cargo-web is not needed. RUSTC
# applies to every crate of the build, host build scripts included (Debian
# also ships the x86-64 std), so keep native `cargo clippy`/`cargo fmt`
# runs out of the shell that sourced this.
export RUSTC=/usr/bin/rustc
export RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
# Plain qemu-aarch64: the guest's ld.so and libc come from libc6:arm64 in
# /lib/aarch64-linux-gnu. Do not add `-L /usr/aarch64-linux-gnu` (or set
# QEMU_LD_PREFIX): its ld.so is another glibc build and threads hang.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64
# C/C++ compilers for the target (cc-rs style names; jitrun's build.rs reads
# only CC today and must be taught CC_aarch64_unknown_linux_gnu / TARGET_CC).
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
