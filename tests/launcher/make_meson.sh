#!/usr/bin/env bash
# The README's Make and Meson recipes for jitrun as the linker, checked:
# testdata/launcher/make_meson_project built natively and with launchers
# (Make: LINK.o='jitrun --link-launcher $@' and CC='jitrun --cc-driver cc';
# Meson: the driver as CC and CXX) must give the same check results.
#
#   tests/launcher/make_meson.sh [path/to/jitrun]     (default: target/release/jitrun)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jitrun="$(realpath "${1:-$root/target/release/jitrun}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "launcher Make/Meson test: FAILED: $*" >&2; exit 1; }
is_launcher() { [ "$(head -c 2 "$1")" = "#!" ] || fail "$1 is not a launcher"; }
cp -r "$root/testdata/launcher/cmake_project" "$root/testdata/launcher/make_meson_project" "$work/"
project="$work/make_meson_project"

# Make: the same commands and outputs from `make check` each way.
make_check() { # NAME [make variables]
  local name=$1; shift
  mkdir "$work/make-$name"
  make -s -C "$work/make-$name" -f "$project/Makefile" VPATH="$work/cmake_project" "$@" check \
    >"$work/make-$name.out" 2>"$work/make-$name.err" || { cat "$work/make-$name.err"; fail "make check ($name)"; }
}
make_check native
make_check link_o LINK.o="$jitrun --link-launcher \$@"
make_check driver CC="$jitrun --cc-driver cc"
for build in link_o driver; do
  diff -u "$work/make-native.out" "$work/make-$build.out" || fail "make check output differs ($build)"
  is_launcher "$work/make-$build/test_stats"
done
is_launcher "$work/make-driver/test_onestep"

# Meson: the same test outcomes each way. Meson runs the tests in
# parallel and numbers them as they finish: compared by name, without the
# order's numbers.
outcomes() { # BUILD
  (meson test -C "$1" 2>&1 || true) | grep -E '^ *[0-9]+/[0-9]+ ' | sed -E 's/ +[0-9.]+s( +|$)/ /; s/^ *[0-9]+\/[0-9]+ +//' | sort
}
meson setup "$work/meson-native" "$project" >"$work/meson-native.log" 2>&1 || { cat "$work/meson-native.log"; fail "meson setup"; }
CC="$jitrun --cc-driver cc" CXX="$jitrun --cc-driver c++" meson setup "$work/meson-jitrun" "$project" \
  >"$work/meson-jitrun.log" 2>&1 || { cat "$work/meson-jitrun.log"; fail "meson setup with the driver"; }
for build in native jitrun; do
  ninja -C "$work/meson-$build" >"$work/meson-$build.build" 2>&1 || { cat "$work/meson-$build.build"; fail "building meson-$build"; }
done
outcomes "$work/meson-native" >"$work/meson-native.outcomes"
outcomes "$work/meson-jitrun" >"$work/meson-jitrun.outcomes"
cat "$work/meson-jitrun.outcomes"
[ "$(wc -l <"$work/meson-native.outcomes")" -eq 5 ] || fail "meson ran $(wc -l <"$work/meson-native.outcomes") tests, not 5"
diff -u "$work/meson-native.outcomes" "$work/meson-jitrun.outcomes" || fail "meson test outcomes differ"
is_launcher "$work/meson-jitrun/test_greet"
[ "$(head -c 4 "$work/meson-jitrun/libgreet.so" | tail -c 3)" = "ELF" ] || fail "libgreet.so is not the real linker's"
echo "launcher Make/Meson test: make check and meson test the same with and without jitrun as the linker"
