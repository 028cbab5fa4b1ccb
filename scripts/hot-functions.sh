#!/bin/sh
# Regenerates build/hot-functions.txt: jitrun's own functions that common
# runs execute, which build.rs asks the linker (rust-lld) to place together
# at the start of .text. jitrun starts as a new process for every run, and
# each 64 KiB of its 2 MiB of code that a run touches costs a page fault;
# an isolated run's child faults in again every page of code it executes.
# With the functions a run needs side by side, a hello world touches a few
# of those windows instead of twenty.
#
#   scripts/hot-functions.sh      # needs valgrind, cc, c++
#
# The list holds mangled names. They stay valid while a function's path and
# generic arguments stay the same (the hash in a name does not depend on
# the function's body; jitrun is built as one codegen unit, see Cargo.toml,
# so no name carries a `.llvm.<hash>` suffix); names that went away are
# skipped by the linker, so a stale list only places less. Run this again
# after large changes.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/hot-functions.txt
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT" && cargo build --release --quiet)
# jitrun's own link cache, out of the user's (the workloads' first runs
# only mark it).
export XDG_CACHE_HOME="$WORK/xdg"
JITRUN=$ROOT/target/release/jitrun

# The workloads, most common first: their functions are listed in this
# order, each once.
cc -O2 -c "$ROOT/testdata/examples/hello.c" -o "$WORK/hello.o"
c++ -O2 -c "$ROOT/testdata/cxx/exceptions.cpp" -o "$WORK/exceptions.o"
for f in "$ROOT"/testdata/c/interp/*.c; do
    cc -O2 -c "$f" -o "$WORK/interp_$(basename "$f" .c).o"
done
python3 - "$WORK" <<'PY'
import sys
work = sys.argv[1]
# Enough objects for the parallel parsing and symbol-table paths.
for i in range(40):
    with open(f"{work}/many{i:02}.c", "w") as f:
        nxt = f"int chain{i + 1}(int x);" if i < 39 else ""
        call = f"chain{i + 1}(x + {i})" if i < 39 else "x"
        f.write(f'#include <stdio.h>\n{nxt}\nstatic const char *n{i} = "o{i}";\n'
                f"int chain{i}(int x) {{ if (x > 1000) puts(n{i}); return {call}; }}\n")
        if i == 0:
            f.write("int main(void) { return chain0(1) & 1; }\n")
# One object past the sizes where a link maps its input and copies large
# sections with pread (src/support/input.rs), with a signal handler (jitrun
# interposes sigaction), as real programs' larger objects are, and large
# enough for jitrun's own link cache (64 KiB).
with open(f"{work}/big.c", "w") as f:
    f.write("#include <signal.h>\n#include <stdio.h>\n")
    f.write("static const int table[30000] = {%s};\n" % ",".join(str(i * 7 % 1000) for i in range(30000)))
    f.write("".join(f"int big{i}(int x);\n" for i in range(600)))
    for i in range(600):
        f.write(f"int big{i}(int x) {{ return table[(x + {i}) % 30000] + (x > 5 ? big{(i + 1) % 600}(x - 1) : {i}); }}\n")
    f.write("static void on_int(int s) { (void)s; }\n")
    f.write("int main(void) { signal(SIGINT, on_int); printf(\"%d\\n\", big0(3)); fflush(stdout);\n")
    # C library variables (copy relocations in a link for the cache).
    f.write("  fputs(\"\", stderr); return 0; }\n")
PY
for f in "$WORK"/many*.c "$WORK/big.c"; do cc -O2 -c "$f" -o "${f%.c}.o"; done

# profile NAME [valgrind options --] jitrun arguments
profile() {
    name=$1
    shift
    options=""
    case " $* " in *" -- "*)
        while [ "$1" != "--" ]; do options="$options $1"; shift; done
        shift ;;
    esac
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --demangle=no --compress-strings=no --dump-instr=no $options \
        --callgrind-out-file="$WORK/cg.$name.%p" "$JITRUN" "$@" >/dev/null 2>&1 </dev/null || true
}
# An isolated run's child first, alone: it faults in every page of code it
# runs, at every run. Counted from the child's entry on (a child's profile
# otherwise starts with its parent's counts).
profile 0child --collect-atstart=no '--toggle-collect=*10child_main17h*' -- "$WORK/hello.o" --isolate --repeat 2
profile 1hello "$WORK/hello.o"
# Most real programs name libraries: -lm's linker script, the shared
# libraries behind it and the library search (Lua's and SQLite's links
# touched 830 KiB more of jitrun's code than a hello world without them).
profile 1libs "$WORK/hello.o" -lm -lpthread -ldl
profile 2isolated "$WORK/hello.o" --isolate --repeat 2
profile 3cxx "$WORK/exceptions.o"
profile 4interp "$WORK"/interp_*.o
profile 5many "$WORK"/many*.o
profile 6big "$WORK/big.o" -lm
# A link mapped from jitrun's own cache (in the script's $XDG_CACHE_HOME),
# as jitrun runs a large program from its third run on: 6big was the
# first run of this link (it marked it), 9store is the second (it stores
# the image; listed last), 1mapped the third (listed right after the plain
# runs of a hello world: most runs of a large program are mapped ones).
profile 9store "$WORK/big.o" -lm
profile 1mapped "$WORK/big.o" -lm
# A launcher written by --link-launcher, as a build's tests run it.
"$JITRUN" --link-launcher "$WORK/hello-launcher" "$WORK/hello.o"
profile 7launcher --run-launcher "$WORK/hello-launcher"

mkdir -p "$(dirname "$OUT")"
# Functions that ran instructions of their own in jitrun's binary (`ob=`
# names the object), in workload order, each once.
python3 - "$WORK" "$JITRUN" > "$OUT" <<'PY'
import glob, os, subprocess, sys
work, jitrun = sys.argv[1], os.path.realpath(sys.argv[2])
symbols = subprocess.run(["nm", jitrun], capture_output=True, text=True).stdout.split()
# Names are matched by a part that survives moving a function to another
# module (`_ZN6jitrun5image4runs10child_main17h...`: `10child_main17h`):
# a list made with full paths went stale when the layers moved them.
def full_name(part):
    return next((s for s in symbols if part in s), None)
# The child's way back from fork to its entry (the atfork handler), above
# what it profiles; and
# read, not executed, by every run: whether a debugger planted its
# breakpoint (src/diagnostics/debugger.rs).
order = [n for n in map(full_name, ["4Pool5spawn17h", "4heap11unlock_both17h", "__jit_debug_register_code"]) if n]
seen = set(order)
# Valgrind preloads its own libraries, and with LD_PRELOAD set jitrun asks
# dlsym rather than reading the start-up objects' symbol tables
# (src/host/loader.rs): that path runs in every plain run but never here.
not_under_valgrind = ["6loader20note_startup_objects", "6loader15startup_objects",
                      "6loader26lookup_in_startup_objects", "13DynamicTables14own_definition",
                      "13DynamicTables13gnu_hash_find", "6loader17dynamic_tables_at"]
later = [s for s in symbols if s.startswith("_ZN6jitrun") and any(p in s for p in not_under_valgrind)]
for path in sorted(glob.glob(f"{work}/cg.*")):
    current_object, name, after_call = None, None, False
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            current_object = line[3:].strip()
        elif line.startswith("fn="):
            # Callgrind marks recursion levels with 'N.
            name = line[3:].strip().split("'")[0]
            if os.path.realpath(current_object or "") != jitrun or name[:1] in "0(":
                name = None
        elif line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            # A cost line: the function's own unless it follows calls=.
            costs = line.split()[1:]
            if not after_call and name and name not in seen and any(c != "0" for c in costs):
                seen.add(name)
                order.append(name)
            after_call = False
# After the child's functions, before the rest: a hello world runs them.
child_end = next((i for i, n in enumerate(order) if "10child_main17h" in n), 2) + 1
order[child_end:child_end] = [n for n in later if n not in seen]
for name in order:
    print(name)
PY
echo "$(wc -l < "$OUT") functions in $OUT"
