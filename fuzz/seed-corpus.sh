#!/bin/sh
# Seeds fuzz/corpus/<target>/ with objects compiled from testdata/ at a few
# flag sets (C, C++ with COMDAT groups and .eh_frame, thread-locals), plus
# the checked-in example object. Run from anywhere; needs cc and g++.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
for target in link_noexec link_pair_noexec; do
    mkdir -p "$here/corpus/$target"
done
out="$here/corpus/link_noexec"
cp "$root/testdata/examples/hello.o" "$out/examples_hello.o"
for flags in "-O0" "-O2 -fPIC" "-O2 -fno-pic -fno-pie" "-O2 -mcmodel=large"; do
    tag=$(echo "$flags" | tr -d ' -')
    for src in "$root"/testdata/c/*.c "$root"/testdata/tls/*.c "$root"/testdata/hygiene/*.c; do
        cc -c $flags -pthread "$src" -o "$out/$(basename "$src" .c)_$tag.o"
    done
    for src in "$root"/testdata/cxx/*.cpp "$root"/testdata/hygiene/*.cpp; do
        g++ -c $flags -pthread "$src" -o "$out/$(basename "$src" .cpp)_$tag.o"
    done
done
# Mach-O objects, built the way tests/common/mod.rs does (needs clang-14, llc-14).
if command -v clang-14 >/dev/null && command -v llc-14 >/dev/null; then
    for src in "$root"/testdata/c/*.c "$root"/testdata/tls/*.c; do
        stem=$(basename "$src" .c)
        clang-14 -S -emit-llvm -O1 "$src" -o "$out/$stem.ll"
        llc-14 -mtriple=x86_64-apple-macosx10.15 -filetype=obj "$out/$stem.ll" -o "$out/${stem}_macho.o"
        rm "$out/$stem.ll"
    done
fi
# An archive with a symbol index.
ar rcs "$out/libseed.a" "$out"/hello_O0.o
# Pairs for the two-input target: each object with the next one.
set -- "$out"/*.o "$out"/*.a
prev=
for obj in "$@"; do
    if [ -n "$prev" ]; then
        { cat "$prev"; printf 'JITRUN-NEXT-INPUT'; cat "$obj"; } > "$here/corpus/link_pair_noexec/$(basename "$obj" .o)_pair"
    fi
    prev=$obj
done
echo "seeded $(ls "$out" | wc -l) objects and $(ls "$here/corpus/link_pair_noexec" | wc -l) pairs"
