#!/usr/bin/env python3
"""Benchmark jitrun against the other ways of running relocatable objects.

Builds its inputs at benchmark time (nothing is checked in), then runs every
contender interleaved, several times each, and prints medians, ratios and
peak memory measured in the same run. It informs; it never fails a build.

    python3 benches/compare.py                 # all scenarios, 15 runs each
    python3 benches/compare.py --runs 31 hello # one scenario, more runs
    python3 benches/compare.py --objects 1000 --functions 40000

Scenarios:
  hello  hello world: jitrun, the prelinked executable, cc link + run,
         llvm-jitlink, tcc -run
  many   a generated program of --objects objects (default 300)
  large  a generated program of --functions functions (default 20000)
         calling each other, with string tables, switch tables and function
         pointer tables: tens of thousands of relocations
  lua    a real program: the Lua interpreter (33 objects, -lm -ldl) built
         from the sources in --lua-src DIR, running `-e 'print(1)'`
  sqlite a real program: the SQLite shell (the amalgamation sqlite3.c and
         its shell.c, -lm -lpthread -ldl) built from --sqlite-src DIR,
         running `select 1` on an in-memory database

lua and sqlite run by default when their sources are there: --lua-src and
--sqlite-src, else $JITRUN_LUA_SRC and $JITRUN_SQLITE_SRC, else
benches/sources/lua and benches/sources/sqlite, which
`benches/fetch_sources.sh` fills (Lua 5.4.8 from github.com/lua/lua, the
SQLite amalgamation from the `sqlite3` npm package; nothing of theirs is
committed). For them the script also runs `jitrun --report` and prints
each phase's median and spread; for sqlite, next to the fixup phase's
spread, that of a C program's first write of as much fresh memory as the
image (benches/fresh_memory.c), run after each --report run.

Peak memory (max RSS) comes from wait4() for every run, so it needs no
/usr/bin/time. Contenders that are not installed (tcc, llvm-jitlink-14) are
skipped with a note. hyperfine is not needed.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CC = os.environ.get("CC", "cc")
CFLAGS = ["-O2"]


# ---------------------------------------------------------------- inputs


HELLO_C = r"""
#include <stdio.h>
int main(void) {
    printf("hello, world\n");
    return 0;
}
"""


def many_objects_sources(count):
    """`count` objects in a chain: each has strings, a switch table, a
    function-pointer table, data, calls into libc and into the next object."""
    files = {}
    for i in range(count):
        nxt = f"chain_{i + 1}" if i + 1 < count else None
        call_next = f"{nxt}(x - 1, depth - 1)" if nxt else "x"
        decl_next = f"int {nxt}(int, int);" if nxt else ""
        files[f"obj{i:04}.c"] = f"""
#include <string.h>
#include <stdlib.h>
{decl_next}
static const char *names_{i}[] = {{"alpha{i}", "beta{i}", "gamma{i}", "delta{i}"}};
int counter_{i};
static int helper_{i}(int x) {{
    switch (x & 7) {{
    case 0: return x * 3 + {i};
    case 1: return x ^ {i * 7 + 1};
    case 2: return (int)strlen(names_{i}[x & 3]);
    case 3: return x - {i};
    case 4: return abs(x - {i * 13});
    case 5: return x << 2;
    case 6: return x % {i + 3};
    default: return x + counter_{i};
    }}
}}
static int twice_{i}(int x) {{ return 2 * x; }}
static int (*ops_{i}[])(int) = {{ helper_{i}, twice_{i} }};
int chain_{i}(int x, int depth) {{
    counter_{i}++;
    int v = ops_{i}[x & 1](x) + helper_{i}(x + 1);
    if (depth <= 0) return v;
    return v + {call_next};
}}
"""
    calls = "\n".join(f"    sum += chain_{i}({i}, 3);" for i in range(count))
    files["main.c"] = f"""
#include <stdio.h>
{"".join(f"int chain_{i}(int, int);" for i in range(count))}
int main(void) {{
    long sum = 0;
{calls}
    printf("many objects: %ld\\n", sum);
    return 0;
}}
"""
    return files


def large_program_sources(functions, files_count):
    """`functions` functions spread over `files_count` objects. Each calls
    two earlier ones (often in another object), uses a switch table and a
    string; every object has a table of its functions' addresses."""
    per_file = max(1, functions // files_count)
    files = {}
    protos = []
    for f in range(files_count):
        for j in range(per_file):
            protos.append(f"int fn_{f}_{j}(int, int);")
    proto_text = "\n".join(protos)
    # The prototypes are big; put them in a header every object includes.
    files["protos.h"] = proto_text + "\n"
    for f in range(files_count):
        body = ["#include \"protos.h\"", "#include <string.h>"]
        for j in range(per_file):
            body.append(f'static const char str_{j}[] = "function {f} {j} of the large program";')
        for j in range(per_file):
            n = f * per_file + j
            if n < 2:
                callee_a = callee_b = None
            else:
                a = (n * 7919) % n
                b = (n * 104729 + 13) % n
                callee_a = f"fn_{a // per_file}_{a % per_file}"
                callee_b = f"fn_{b // per_file}_{b % per_file}"
            recurse = (
                f"if (depth > 0) v += {callee_a}(x + 1, depth - 1) + {callee_b}(x, depth - 1);"
                if callee_a else ""
            )
            body.append(f"""int fn_{f}_{j}(int x, int depth) {{
    int v;
    switch (x & 7) {{
    case 0: v = x + {n}; break;
    case 1: v = x * {n % 97 + 2}; break;
    case 2: v = str_{j}[x & 15]; break;
    case 3: v = x - {n % 31}; break;
    case 4: v = x ^ {n}; break;
    case 5: v = (int)strlen(str_{j}); break;
    case 6: v = x >> 1; break;
    default: v = {n};
    }}
    {recurse}
    return v;
}}""")
        entries = ", ".join(f"fn_{f}_{j}" for j in range(per_file))
        body.append(f"int (*const table_{f}[])(int, int) = {{ {entries} }};")
        files[f"part{f:03}.c"] = "\n".join(body) + "\n"
    externs = "\n".join(f"extern int (*const table_{f}[])(int, int);" for f in range(files_count))
    files["main.c"] = f"""
#include <stdio.h>
{externs}
int main(void) {{
    long sum = 0;
    for (int f = 0; f < {files_count}; f++) {{
        int (*const *table)(int, int) = 0;
        switch (f) {{
{"".join(f"        case {f}: table = table_{f}; break;" + chr(10) for f in range(files_count))}
        }}
        for (int j = 0; j < {per_file}; j++) sum += table[j](j, 1);
    }}
    printf("large program: %ld\\n", sum);
    return 0;
}}
"""
    return files


def compile_all(workdir, sources, jobs, cflags):
    """Writes `sources` into `workdir` and compiles every .c to .o in parallel;
    returns the objects with main.o last (so tcc -run can take it last)."""
    workdir.mkdir(parents=True, exist_ok=True)
    changed_header = False
    for name, text in sources.items():
        path = workdir / name
        # Unchanged sources keep their objects (with --workdir, reruns are quick).
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed_header |= name.endswith(".h")
    c_files = sorted(n for n in sources if n.endswith(".c"))
    stamp = workdir / "cflags.txt"
    flags_text = " ".join([CC, *cflags])
    if not stamp.exists() or stamp.read_text() != flags_text:
        changed_header = True  # other flags: rebuild everything

    def build(name):
        out = workdir / (name[:-2] + ".o")
        src = workdir / name
        if changed_header or not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
            subprocess.run([CC, *cflags, "-c", name, "-o", out.name], cwd=workdir, check=True)
        return out

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        objects = list(pool.map(build, c_files))
    stamp.write_text(flags_text)
    objects.sort(key=lambda p: (p.name == "main.o", p.name))
    return objects


def relocation_count(objects):
    """Number of relocation entries in the objects (readelf, if present)."""
    if not shutil.which("readelf"):
        return None
    total = 0
    for obj in objects:
        out = subprocess.run(["readelf", "-r", "-W", str(obj)], capture_output=True, text=True).stdout
        total += sum(1 for line in out.splitlines() if line[:1] in "0123456789abcdef" and "R_X86_64" in line)
    return total


# ---------------------------------------------------------------- running


class Contender:
    """One way of running the program: a list of commands run in sequence
    (cc link + run is two); time and peak RSS cover all of them."""

    def __init__(self, name, steps, cwd):
        self.name = name
        self.steps = [[str(a) for a in argv] for argv in steps]
        self.cwd = cwd
        self.times = []
        self.rss_kib = []
        self.failed = None

    def output(self):
        """What the program prints (stdout), running the steps once."""
        out = b""
        for argv in self.steps:
            res = subprocess.run(argv, cwd=self.cwd, capture_output=True)
            if res.returncode != 0:
                err = res.stderr.decode(errors="replace").strip()[:300]
                raise RuntimeError(f"{' '.join(argv[:3])} ... exited with {res.returncode}: {err}")
            out += res.stdout
        return out


def build_runner(directory):
    """Compiles benches/runner.c, the C helper that spawns and times."""
    exe = directory / "runner"
    subprocess.run([CC, "-O2", "-o", str(exe), str(REPO / "benches" / "runner.c")], check=True)
    return exe


def measure(runner, contenders, runs, warmup=2):
    """Checks that every contender prints what the native program prints,
    then has the runner run them interleaved (a fresh random order each
    round) so drift of the machine's load hits all of them alike."""
    reference = None
    for c in contenders:
        try:
            out = c.output()
        except (RuntimeError, OSError) as e:
            c.failed = str(e)
            continue
        if reference is None:
            reference = out
        elif out != reference:
            c.failed = f"printed {out[:60]!r}..., expected {reference[:60]!r}..."
    live = [c for c in contenders if not c.failed]
    spec = [str(len(live))]
    for c in live:
        spec.append(str(len(c.steps)))
        for argv in c.steps:
            spec.append(str(len(argv)))
            spec.extend(argv)
    spec += [str(runs), str(warmup), str(random.randrange(1 << 30))]
    res = subprocess.run(
        [str(runner)], cwd=live[0].cwd, input="\n".join(spec) + "\n", capture_output=True, text=True
    )
    for line in res.stdout.splitlines():
        index, value, extra = line.split()
        c = live[int(index)]
        if value == "fail":
            c.failed = f"exited with {extra} during timing"
            continue
        c.times.append(int(value) / 1e9)
        c.rss_kib.append(int(extra))
    if res.returncode != 0 and not any(c.failed for c in live):
        raise RuntimeError(f"runner failed: {res.stderr}")


def report(title, contenders, baseline_name, extra=""):
    print(f"\n== {title}{extra}")
    base = next((c for c in contenders if c.name == baseline_name and not c.failed), None)
    base_median = statistics.median(base.times) if base else None
    print(f"{'contender':<28} {'median ms':>10} {'min ms':>8} {'max RSS MiB':>12} {'vs jitrun':>10}")
    for c in contenders:
        if c.failed:
            print(f"{c.name:<28} {'failed: ' + c.failed[:200]}")
            continue
        med = statistics.median(c.times)
        ratio = f"{med / base_median:9.2f}x" if base_median else ""
        print(
            f"{c.name:<28} {med * 1e3:10.2f} {min(c.times) * 1e3:8.2f} "
            f"{max(c.rss_kib) / 1024:12.1f} {ratio:>10}"
        )


def median_of(contenders, name):
    c = next((c for c in contenders if c.name == name and not c.failed and c.times), None)
    return statistics.median(c.times) if c else None


def rss_of(contenders, name):
    c = next((c for c in contenders if c.name == name and not c.failed and c.rss_kib), None)
    return statistics.median(c.rss_kib) if c else None


def image_size(jitrun, objects, cwd, libs=()):
    """The image size jitrun reports with -v (its debug log)."""
    res = subprocess.run(
        [jitrun, "-v", "--noexec", *map(str, objects), *libs], cwd=cwd, capture_output=True, text=True
    )
    for line in res.stderr.splitlines():
        if "image at" in line and "bytes" in line:
            try:
                return int(line.split(",")[1].split()[0])
            except (IndexError, ValueError):
                pass
    return None


class Targets:
    """The goals of issues 9 and 32, checked against this run's numbers."""

    def __init__(self):
        self.lines = []

    def check(self, what, value, goal, ok, issue=9):
        if value is None:
            self.lines.append((issue, f"  ?    {what}: not measured"))
        else:
            self.lines.append((issue, f"  {'met ' if ok else 'MISS'} {what}: {value} (goal {goal})"))

    def print(self):
        for issue in sorted({issue for issue, _ in self.lines}):
            print(f"\n== targets (issue {issue})")
            for line in (line for i, line in self.lines if i == issue):
                print(line)


def report_phases(jitrun, objects, cwd, libs, program_args, runs, reference=None):
    """Runs jitrun `runs` times with --report and prints each phase's
    median and spread (p10..p90, and how far the slowest run is above the
    fastest, in percent of the median); returns the phases' samples. With
    a `reference` command (printing microseconds), runs it after each
    jitrun run, so both see the machine alike, and returns its samples
    under the name "reference"."""
    samples = {}
    reference_ms = []
    report = Path(cwd) / "report.json"
    for _ in range(runs):
        argv = [jitrun, *map(str, objects), *libs, "--report", str(report), "--", *program_args]
        subprocess.run(argv, cwd=cwd, capture_output=True)
        if reference:
            res = subprocess.run(reference, capture_output=True, text=True)
            try:
                reference_ms.append(float(res.stdout) / 1e3)
            except ValueError:
                pass
        try:
            phases = json.loads(report.read_text()).get("phases", {})
        except (OSError, ValueError):
            continue
        for name, seconds in phases.items():
            samples.setdefault(name, []).append(seconds * 1e3)
    parts = []
    for name, values in samples.items():
        values.sort()
        med = statistics.median(values)
        p10, p90 = values[len(values) // 10], values[(len(values) * 9) // 10]
        parts.append(f"{name} {med:.2f} ({p10:.2f}-{p90:.2f})")
    if parts:
        print(f"jitrun's phases, ms, median (p10-p90) of {runs} --report runs: {', '.join(parts)}")
    if reference_ms:
        samples["reference"] = reference_ms
    return samples


def fresh_memory_reference(directory, image_bytes):
    """The command of benches/fresh_memory.c for `image_bytes`: a new
    process's first write of that much fresh memory, backed as jitrun backs
    an image. Its spread is the machine's own for the fixup phase's first
    touch of the image (in a VM, fresh memory's cost varies widely)."""
    if not image_bytes:
        return None
    exe = directory / "fresh_memory"
    subprocess.run([CC, "-O2", "-o", str(exe), str(REPO / "benches" / "fresh_memory.c")], check=True)
    return [str(exe), str(image_bytes)]


def spread(values):
    """p90 over p10 minus one, in percent: how much a phase varies between runs."""
    if not values or len(values) < 5:
        return None
    values = sorted(values)
    p10, p90 = values[len(values) // 10], values[(len(values) * 9) // 10]
    return (p90 / p10 - 1) * 100 if p10 > 0 else None


def print_ceilings(contenders):
    """The most any loader could score against each slower contender: one
    whose link cost nothing would still start a process and run the
    program, as the prelinked executable does."""
    prelinked = median_of(contenders, "prelinked ./a.out")
    ceilings = [
        f"{name} {fmt(ceiling)}"
        for name in ("cc link + run", "llvm-jitlink-14")
        if (ceiling := ratio(median_of(contenders, name), prelinked)) is not None
    ]
    if ceilings:
        print(f"ceiling (contender / prelinked, a loader with a free link): {', '.join(ceilings)}")


def ratio(a, b):
    return a / b if a and b else None


def fmt(x, suffix="x"):
    return f"{x:.2f}{suffix}" if x is not None else None


# ---------------------------------------------------------------- scenarios


# The contender that links every time: jitrun with its link cache off.
COLD = "jitrun --no-link-cache"


def contenders_for(objects, workdir, jitrun, native_exe, libs=(), program_args=()):
    objs = [o.name for o in objects]
    libs, argv = list(libs), list(program_args)
    # jitrun as it runs by default: with its own link cache (in this run's
    # $XDG_CACHE_HOME, see main), which keeps a link of inputs of 64 KiB or
    # more the second time it sees it (once they are two seconds old) and
    # maps it from then on. Two untimed runs first, so that every timed run
    # maps it.
    youngest = max(o.stat().st_ctime for o in objects)
    time.sleep(max(0.0, youngest + 2.2 - time.time()))
    default = [jitrun, *objs, *libs, "--", *argv]
    for _ in range(2):
        subprocess.run(default, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cs = [Contender("jitrun", [default], workdir)]
    cs.append(Contender(COLD, [[jitrun, "--no-link-cache", *objs, *libs, "--", *argv]], workdir))
    cs.append(Contender("prelinked ./a.out", [[str(native_exe), *argv]], workdir))
    cs.append(Contender("cc link + run", [[CC, *objs, *libs, "-o", "linked.out"], ["./linked.out", *argv]], workdir))
    if shutil.which("tcc"):
        # tcc -run runs the first file after -run; the others come before it.
        cs.append(Contender("tcc -run", [["tcc", *objs[:-1], *libs, "-run", objs[-1], *argv]], workdir))
    else:
        print("note: tcc is not installed (apt-get install tcc); skipping tcc -run")
    if shutil.which("llvm-jitlink-14"):
        cs.append(Contender("llvm-jitlink-14", [["llvm-jitlink-14", *objs, "-args", *argv]], workdir))
    else:
        print("note: llvm-jitlink-14 is not installed; skipping it")
    return cs


def prepare(workdir, sources, jobs, cflags, libs=()):
    objects = compile_all(workdir, sources, jobs, cflags)
    native = workdir / "prelinked.out"
    subprocess.run([CC, *[o.name for o in objects], *libs, "-o", native.name], cwd=workdir, check=True)
    return objects, native


# The Lua interpreter's objects (its makefile's CORE_O, AUX_O, LIB_O and
# LUA_O, without the test library), the file holding main() last.
LUA_SOURCES = (
    "lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser lstate lstring ltable "
    "ltm lundump lvm lzio lauxlib lbaselib ldblib liolib lmathlib loslib ltablib lstrlib lutf8lib loadlib "
    "lcorolib linit"
).split()


def lua_sources(src):
    """Lua's sources from a checkout at `src`, lua.c renamed main.c (last)."""
    files = {}
    for name in sorted(p.name for p in Path(src).iterdir() if p.suffix == ".h"):
        files[name] = (Path(src) / name).read_text(errors="replace")
    for stem in LUA_SOURCES:
        files[stem + ".c"] = (Path(src) / (stem + ".c")).read_text(errors="replace")
    files["main.c"] = (Path(src) / "lua.c").read_text(errors="replace")
    return files


# The workloads issue 32 measures: a one-line script, one statement.
LUA_ARGS = ["-e", "print(1)"]
SQLITE_ARGS = [":memory:", "select 1"]


def default_source(flag_value, env, name, marker):
    """Where a real program's sources are: the flag, the environment
    variable, or benches/sources/NAME (benches/fetch_sources.sh), if
    `marker` is there."""
    for candidate in (flag_value, os.environ.get(env), REPO / "benches" / "sources" / name):
        if candidate and (Path(candidate) / marker).exists():
            return str(candidate)
    return flag_value


def sqlite_sources(src):
    """The amalgamation and its shell from `src` (with every header there),
    shell.c (main) last."""
    files = {p.name: p.read_text(errors="replace") for p in sorted(Path(src).iterdir()) if p.suffix == ".h"}
    files["sqlite3.c"] = (Path(src) / "sqlite3.c").read_text(errors="replace")
    files["shell.c"] = (Path(src) / "shell.c").read_text(errors="replace")
    return files


def scenario(name, title, workdir, sources, args, jitrun, targets, cflags=CFLAGS, libs=(), program_args=()):
    t0 = time.perf_counter()
    objects, native = prepare(workdir, sources, args.jobs, cflags, libs)
    relocs = relocation_count(objects)
    print(
        f"\n[{name}] built {len(objects)} objects ({relocs} relocations, {' '.join(cflags)}) "
        f"in {time.perf_counter() - t0:.1f}s",
        flush=True,
    )
    cs = contenders_for(objects, workdir, jitrun, native, libs, program_args)
    measure(args.runner, cs, args.runs)
    report(title, cs, "jitrun", f" ({len(objects)} objects, {relocs} relocations, {args.runs} runs)")
    print_ceilings(cs)
    size = image_size(jitrun, objects, workdir, libs)
    native_rss = rss_of(cs, "prelinked ./a.out")
    jit_rss = rss_of(cs, "jitrun")
    if size is not None and native_rss is not None and jit_rss is not None:
        over = (jit_rss * 1024 - native_rss * 1024 - size) / 2**20
        print(
            f"peak memory: jitrun {jit_rss / 1024:.1f} MiB, native {native_rss / 1024:.1f} MiB, "
            f"image {size / 2**20:.2f} MiB: jitrun - native - image = {over:+.1f} MiB"
        )
        targets.check(f"{name}: peak RSS over native + image", f"{over:+.1f} MiB", "<= a few MiB", over <= 4.0)
    return cs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", help="hello, many, large, lua, sqlite (default: all; lua and sqlite need their sources)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each contender (default 15)")
    parser.add_argument("--objects", type=int, default=300, help="objects of the 'many' program (default 300)")
    parser.add_argument("--functions", type=int, default=20000, help="functions of the 'large' program (default 20000)")
    parser.add_argument("--large-files", type=int, default=8, help="objects the large program is split into (default 8)")
    parser.add_argument(
        "--large-cflags",
        default="-O0",
        help="flags of the large program (default -O0: gcc needs minutes for it at -O2 on a small machine; "
        "the relocations are alike)",
    )
    parser.add_argument(
        "--real-cflags",
        default="-O2",
        help="optimization and debug flags of the real programs, lua and sqlite (default -O2; e.g. '-O2 -g')",
    )
    parser.add_argument(
        "--lua-src",
        help="a Lua source directory (lua.c, lapi.c, ...) for the 'lua' scenario "
        "(default: $JITRUN_LUA_SRC, else benches/sources/lua)",
    )
    parser.add_argument(
        "--sqlite-src",
        help="a directory with sqlite3.c, sqlite3.h and shell.c for 'sqlite' "
        "(default: $JITRUN_SQLITE_SRC, else benches/sources/sqlite)",
    )
    parser.add_argument(
        "--report-runs", type=int, default=21, help="--report runs for the real programs' phases (default 21)"
    )
    parser.add_argument("--jitrun", help="jitrun binary (default: build target/release/jitrun)")
    parser.add_argument("--workdir", help="keep inputs here instead of a temporary directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compiles")
    args = parser.parse_args()
    args.lua_src = default_source(args.lua_src, "JITRUN_LUA_SRC", "lua", "lua.c")
    args.sqlite_src = default_source(args.sqlite_src, "JITRUN_SQLITE_SRC", "sqlite", "sqlite3.c")
    scenarios = (
        args.scenarios
        or ["hello", "many", "large"] + (["lua"] if args.lua_src else []) + (["sqlite"] if args.sqlite_src else [])
    )
    unknown = set(scenarios) - {"hello", "many", "large", "lua", "sqlite"}
    if "lua" in scenarios and not args.lua_src:
        parser.error("the lua scenario needs --lua-src DIR (or benches/fetch_sources.sh)")
    if "sqlite" in scenarios and not args.sqlite_src:
        parser.error("the sqlite scenario needs --sqlite-src DIR (or benches/fetch_sources.sh)")
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")

    if args.jitrun:
        jitrun = str(Path(args.jitrun).resolve())
    else:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        jitrun = str(REPO / "target" / "release" / "jitrun")

    tmp = None
    if args.workdir:
        root = Path(args.workdir).resolve()
        root.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="jitrun-bench-")
        root = Path(tmp.name)
    # Run an installed copy, written with write(2) as `install` or `cargo
    # install` writes it and as cc writes the native executables it is
    # compared with. How a file came into the page cache changes how fast it
    # execs: the build's own output (which lld writes through a mapping, or
    # which was read back from disk) ran a hello world 4-7% slower than a
    # copy of it, for the same bytes.
    installed = root / "bin" / "jitrun"
    installed.parent.mkdir(parents=True, exist_ok=True)
    installed.unlink(missing_ok=True)
    shutil.copyfile(jitrun, installed)
    installed.chmod(0o755)
    print(f"jitrun: {jitrun} (run as an installed copy, {installed})")
    jitrun = str(installed)
    # jitrun's own link cache, fresh for each benchmark, out of the user's.
    cache_home = root / "xdg-cache"
    shutil.rmtree(cache_home, ignore_errors=True)
    os.environ["XDG_CACHE_HOME"] = str(cache_home)
    print(f"inputs: {root}\ncc: {CC} {' '.join(CFLAGS)}; {os.cpu_count()} CPUs")

    args.runner = build_runner(root)
    targets = Targets()
    try:
        if "hello" in scenarios:
            cs = scenario("hello", "hello world", root / "hello", {"hello.c": HELLO_C}, args, jitrun, targets)
            jit = median_of(cs, "jitrun")
            r = ratio(jit, median_of(cs, "prelinked ./a.out"))
            targets.check("hello: jitrun / prelinked", fmt(r), "<= 1.5x", r is not None and r <= 1.5)
            targets.check("hello: jitrun / prelinked", fmt(r), "<= 1.3x", r is not None and r <= 1.3, issue=32)
            r = ratio(median_of(cs, "tcc -run"), jit)
            targets.check("hello: tcc -run / jitrun", fmt(r), "> 1x", r is not None and r > 1)
        if "many" in scenarios:
            cs = scenario(
                "many", "many objects", root / "many", many_objects_sources(args.objects), args, jitrun, targets
            )
            jit = median_of(cs, "jitrun")
            r = ratio(median_of(cs, "tcc -run"), jit)
            targets.check("many: tcc -run / jitrun", fmt(r), "> 1x", r is not None and r > 1)
            r = ratio(median_of(cs, "cc link + run"), jit)
            targets.check("many: cc link + run / jitrun", fmt(r), ">= 10x", r is not None and r >= 10)
        if "large" in scenarios:
            sources = large_program_sources(args.functions, args.large_files)
            cs = scenario(
                "large", "large program", root / "large", sources, args, jitrun, targets, args.large_cflags.split()
            )
            jit = median_of(cs, "jitrun")
            r = ratio(median_of(cs, "cc link + run"), jit)
            targets.check("large: cc link + run / jitrun", fmt(r), ">= 10x", r is not None and r >= 10)
            r = ratio(median_of(cs, "llvm-jitlink-14"), jit)
            ceiling = ratio(median_of(cs, "llvm-jitlink-14"), median_of(cs, "prelinked ./a.out"))
            shown = f"{fmt(r)}; a free link would reach {fmt(ceiling)}" if r is not None and ceiling else fmt(r)
            targets.check("large: llvm-jitlink / jitrun", shown, ">= 50x", r is not None and r >= 50)
        if "lua" in scenarios:
            workdir = root / "lua"
            workdir.mkdir(parents=True, exist_ok=True)
            cflags = args.real_cflags.split() + ["-std=c99", "-DLUA_USE_LINUX", "-fno-stack-protector", "-fno-common"]
            libs = ["-lm", "-ldl"]
            cs = scenario(
                "lua",
                "Lua interpreter",
                workdir,
                lua_sources(args.lua_src),
                args,
                jitrun,
                targets,
                cflags,
                libs=libs,
                program_args=LUA_ARGS,
            )
            jit = median_of(cs, "jitrun")
            r = ratio(median_of(cs, "cc link + run"), jit)
            targets.check("lua: cc link + run / jitrun", fmt(r), ">= 10x", r is not None and r >= 10)
            r = ratio(jit, median_of(cs, "prelinked ./a.out"))
            targets.check("lua: jitrun / prelinked", fmt(r), "<= 2.0x", r is not None and r <= 2.0, issue=32)
            r = ratio(median_of(cs, COLD), median_of(cs, "prelinked ./a.out"))
            targets.check(f"lua: {COLD} (a link every run) / prelinked", fmt(r), "<= 2.0x", r is not None and r <= 2.0, issue=32)
            objects = sorted(workdir.glob("*.o"), key=lambda p: (p.name == "main.o", p.name))
            report_phases(jitrun, objects, workdir, libs, LUA_ARGS, args.report_runs)
        if "sqlite" in scenarios:
            workdir = root / "sqlite"
            libs = ["-lm", "-lpthread", "-ldl"]
            cs = scenario(
                "sqlite",
                "SQLite shell",
                workdir,
                sqlite_sources(args.sqlite_src),
                args,
                jitrun,
                targets,
                args.real_cflags.split() + ["-DSQLITE_THREADSAFE=1"],
                libs=libs,
                program_args=SQLITE_ARGS,
            )
            jit = median_of(cs, "jitrun")
            r = ratio(median_of(cs, "cc link + run"), jit)
            targets.check("sqlite: cc link + run / jitrun", fmt(r), ">= 10x", r is not None and r >= 10)
            r = ratio(jit, median_of(cs, "prelinked ./a.out"))
            targets.check("sqlite: jitrun / prelinked", fmt(r), "<= 2.0x", r is not None and r <= 2.0, issue=32)
            r = ratio(median_of(cs, COLD), median_of(cs, "prelinked ./a.out"))
            targets.check(f"sqlite: {COLD} (a link every run) / prelinked", fmt(r), "<= 2.0x", r is not None and r <= 2.0, issue=32)
            objects = [workdir / "sqlite3.o", workdir / "shell.o"]
            reference = fresh_memory_reference(root, image_size(jitrun, objects, workdir, libs))
            phases = report_phases(jitrun, objects, workdir, libs, SQLITE_ARGS, args.report_runs, reference)
            v = spread(phases.get("fixups"))
            touch = phases.get("reference")
            if touch:
                print(
                    f"reference: a C program's first write of as much fresh memory as the image, backed alike "
                    f"(benches/fresh_memory.c), after each --report run: median {statistics.median(touch):.2f} ms, "
                    f"spread {fmt(spread(touch), '%')}"
                )
            targets.check(
                "sqlite: fixup phase spread (p90/p10 - 1)",
                fmt(v, "%")
                and f"{fmt(v, '%')} (same runs: parse {fmt(spread(phases.get('parse')), '%')}, layout "
                f"{fmt(spread(phases.get('layout')), '%')}; the first write of as much fresh memory alone: "
                f"{fmt(spread(touch), '%')})",
                "<= 30%",
                v is not None and v <= 30,
                issue=32,
            )
        targets.print()
    finally:
        if tmp:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
