#!/usr/bin/env python3
"""The edit-compile-test loop with jitrun as the linker of test executables.

Generates a CMake project of one static library and 50 test executables,
configures it three ways (CMake's default: cc with GNU ld; cc with
-fuse-ld=mold when mold is installed; jitrun launchers through
cmake/jitrun-launcher.cmake), builds each once, then times, in interleaved
rounds, one turn of the loop for every build: touch one source, rebuild
with Ninja, run every test with ctest. It prints medians and the ratios
against jitrun measured in the same run (above 1x: jitrun is faster).

    python3 benches/edit_loop.py                     # builds jitrun, both scenarios
    python3 benches/edit_loop.py --rounds 11 --tests 50 --library-files 40
    python3 benches/edit_loop.py --workdir /tmp/el   # keep the project

Scenarios: `library` touches a library source (every test relinks),
`test` touches one test's source (one relinks). Needs cmake, ninja and cc.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def generate(src, tests, library_files, functions):
    """A library of `library_files` sources of `functions` functions each,
    every test calling into all of it (as unit tests of one library do)."""
    names = []
    for f in range(library_files):
        body = [f"#include <string.h>\n#include <stdio.h>\n"]
        for i in range(functions):
            name = f"core_{f}_{i}"
            names.append(name)
            # Branches, a string and a table: relocations of several kinds.
            body.append(
                f"static const char *const text_{i}[] = {{\"{name}\", \"x{i}\", \"y{f}\"}};\n"
                f"long {name}(long x) {{\n"
                f"  char buffer[32];\n"
                f"  snprintf(buffer, sizeof buffer, \"%s-%ld\", text_{i}[x & 1], x);\n"
                f"  long value = (long)strlen(buffer) + x * {i + 1};\n"
                f"  switch (x % 4) {{ case 0: return value; case 1: return value + {f};"
                f" case 2: return value - {i}; default: return value ^ {f * 7 + i}; }}\n"
                f"}}\n"
            )
        write(os.path.join(src, f"lib/core_{f}.c"), "".join(body))
    write(
        os.path.join(src, "lib/core.h"),
        "".join(f"long {n}(long);\n" for n in names) + "long core_all(long x);\n",
    )
    write(
        os.path.join(src, "lib/core_all.c"),
        '#include "core.h"\nlong core_all(long x) {\n  long sum = 0;\n'
        + "".join(f"  sum += {n}(x);\n" for n in names)
        + "  return sum;\n}\n",
    )
    cmake = [
        "cmake_minimum_required(VERSION 3.16)\nproject(edit_loop C)\nenable_testing()\n",
        "file(GLOB CORE_SOURCES lib/*.c)\nadd_library(core STATIC ${CORE_SOURCES})\n",
    ]
    for t in range(tests):
        write(
            os.path.join(src, f"tests/test_{t}.c"),
            f'#include <stdio.h>\n#include "../lib/core.h"\n'
            f"int main(int argc, char **argv) {{\n"
            f"  long expected = core_all({t}) + core_{t % library_files}_{t % functions}({t});\n"
            f"  long got = core_all({t}) + core_{t % library_files}_{t % functions}({t});\n"
            f'  printf("test {t}: %ld\\n", got);\n'
            f"  return got == expected ? 0 : 1;\n}}\n",
        )
        cmake.append(
            f"add_executable(test_{t} tests/test_{t}.c)\ntarget_link_libraries(test_{t} core)\n"
            f"add_test(NAME test_{t} COMMAND test_{t})\n"
        )
    write(os.path.join(src, "CMakeLists.txt"), "".join(cmake))


def run(cmd, **kw):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stdout[-3000:]}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--library-files", type=int, default=40)
    parser.add_argument("--functions", type=int, default=40, help="functions per library file")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="ninja's and ctest's -j")
    parser.add_argument("--build-type", default="Debug")
    parser.add_argument("--workdir", help="keep the project and builds here")
    parser.add_argument("--jitrun", help="a built jitrun (default: cargo build --release)")
    parser.add_argument("scenarios", nargs="*", help="library, test (default: both)")
    args = parser.parse_args()
    args.scenarios = args.scenarios or ["library", "test"]
    unknown = set(args.scenarios) - {"library", "test"}
    if unknown:
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}: library or test")

    for tool in ("cmake", "ninja", "cc"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed")
    jitrun = args.jitrun
    if not jitrun:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        jitrun = os.path.join(ROOT, "target/release/jitrun")
    jitrun = os.path.abspath(jitrun)

    work = args.workdir or tempfile.mkdtemp(prefix="jitrun-edit-loop-")
    src = os.path.join(work, "src")
    shutil.rmtree(src, ignore_errors=True)
    generate(src, args.tests, args.library_files, args.functions)

    toolchain = os.path.join(ROOT, "cmake/jitrun-launcher.cmake")
    builds = {"jitrun": [f"-DCMAKE_TOOLCHAIN_FILE={toolchain}", f"-DJITRUN={jitrun}"], "cc": []}
    if shutil.which("mold"):
        builds["mold"] = ["-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=mold"]
    else:
        print("mold is not installed: no mold column (apt-get install mold)")
    for name, options in builds.items():
        build = os.path.join(work, name)
        shutil.rmtree(build, ignore_errors=True)
        run(["cmake", "-S", src, "-B", build, "-G", "Ninja", f"-DCMAKE_BUILD_TYPE={args.build_type}"] + options)
        run(["cmake", "--build", build, "--", f"-j{args.jobs}"])
        run(["ctest", "--test-dir", build, f"-j{args.jobs}"])

    touched = {
        "library": os.path.join(src, "lib/core_0.c"),
        "test": os.path.join(src, "tests/test_0.c"),
    }
    print(
        f"{args.tests} test executables, a library of {args.library_files} files x {args.functions} functions, "
        f"{args.build_type}, -j{args.jobs}, {args.rounds} interleaved rounds"
    )
    header = f"{'scenario':<10}" + "".join(f"{name:>12}" for name in builds)
    header += "".join(f"{name + '/jitrun':>14}" for name in builds if name != "jitrun")
    print(header)
    for scenario in args.scenarios:
        times = {name: [] for name in builds}
        for _ in range(args.rounds):
            for name in builds:
                build = os.path.join(work, name)
                start = time.perf_counter()
                os.utime(touched[scenario])
                run(["cmake", "--build", build, "--", f"-j{args.jobs}"])
                out = run(["ctest", "--test-dir", build, f"-j{args.jobs}"])
                times[name].append(time.perf_counter() - start)
                if "100% tests passed" not in out:
                    sys.exit(f"{name}: tests failed:\n{out}")
        medians = {name: statistics.median(t) for name, t in times.items()}
        line = f"{scenario:<10}" + "".join(f"{medians[name] * 1000:>10.0f}ms" for name in builds)
        line += "".join(
            f"{medians[name] / medians['jitrun']:>13.2f}x" for name in builds if name != "jitrun"
        )
        print(line)
    if not args.workdir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
