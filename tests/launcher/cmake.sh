#!/usr/bin/env bash
# Builds testdata/launcher/cmake_project with CMake and Ninja twice, with
# the system's linker and with jitrun's launchers (cmake/jitrun-launcher.cmake),
# runs ctest on both and fails unless every test has the same outcome.
# Then checks what a build system relies on: a launcher refuses to run once
# a library it was linked from is rebuilt, the next build relinks it, and a
# missing symbol fails the build as with ld.
#
#   tests/launcher/cmake.sh [path/to/jitrun]     (default: target/release/jitrun)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jitrun="$(realpath "${1:-$root/target/release/jitrun}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "launcher CMake test: FAILED: $*" >&2; exit 1; }

cp -r "$root/testdata/launcher/cmake_project" "$work/src"
configure() { # NAME [cmake options]
  local name=$1; shift
  cmake -S "$work/src" -B "$work/$name" -G Ninja "$@" >"$work/$name.configure.log" 2>&1 \
    || { cat "$work/$name.configure.log"; fail "configuring the $name build"; }
}
# The outcome of each test, without times: "3/6 Test #3: greet ...   Passed".
outcomes() {
  (ctest --test-dir "$work/$1" 2>&1 || true) | grep -E '^ *[0-9]+/[0-9]+ Test +#' | sed -E 's/ +[0-9.]+ sec$//'
}

configure native
configure jitrun -DCMAKE_TOOLCHAIN_FILE="$root/cmake/jitrun-launcher.cmake" -DJITRUN="$jitrun"
for build in native jitrun; do
  cmake --build "$work/$build" >"$work/$build.build.log" 2>&1 || { cat "$work/$build.build.log"; fail "building $build"; }
done
outcomes native >"$work/native.outcomes"
outcomes jitrun >"$work/jitrun.outcomes"
cat "$work/jitrun.outcomes"
[ "$(wc -l <"$work/native.outcomes")" -eq 6 ] || { cat "$work/native.outcomes"; fail "the native build ran $(wc -l <"$work/native.outcomes") tests, not 6"; }
diff -u "$work/native.outcomes" "$work/jitrun.outcomes" || fail "ctest outcomes differ (native above, jitrun below)"

# The executables are launchers; the shared library is the real linker's.
for exe in test_stats test_greet test_crash test_stdin test_self; do
  [ "$(head -c 2 "$work/jitrun/$exe")" = "#!" ] || fail "$exe is not a launcher"
done
[ "$(head -c 4 "$work/jitrun/libgreet.so" | tail -c 3)" = "ELF" ] || fail "libgreet.so is not an ELF shared library"

# A rebuilt library makes the launchers that contain it refuse to run...
# (A function more: the archive's size changes, whatever the clock does.)
echo 'int stats_edited(void) { return 1; }' >>"$work/src/stats.c"
cmake --build "$work/jitrun" --target stats >/dev/null
status=0
"$work/jitrun/test_stats" 1 2 3 4 >/dev/null 2>"$work/stale.err" || status=$?
[ "$status" -eq 125 ] && grep -q "libstats.a changed size" "$work/stale.err" \
  || { cat "$work/stale.err"; fail "a stale launcher ran (status $status)"; }
# ...until the build relinks them.
cmake --build "$work/jitrun" >/dev/null
outcomes jitrun | diff -u "$work/native.outcomes" - || fail "outcomes differ after relinking"

# A missing symbol fails the build, as with ld, and leaves no executable.
echo 'int missing_function(void); int call_missing(void) { return missing_function(); }' >>"$work/src/test_stats.c"
for build in native jitrun; do
  if cmake --build "$work/$build" >"$work/$build.missing.log" 2>&1; then fail "the $build build linked a missing symbol"; fi
  [ ! -e "$work/$build/test_stats" ] || fail "the $build build left test_stats after a failed link"
done
grep -q "test_stats.c.o: undefined reference to \`missing_function'" "$work/jitrun.missing.log" \
  || { cat "$work/jitrun.missing.log"; fail "no ld-style message for the missing symbol"; }
echo "launcher CMake test: the same $(wc -l <"$work/native.outcomes") ctest outcomes with and without jitrun as the linker"
