//! The command line: one definition that drives parsing, `--help` and the
//! man page (`man/jitrun.1`, generated from it and checked by a test).

pub mod app;
pub mod cc_line;
pub mod contained;
pub mod launcher;
pub mod relaunch;
pub mod sanitizer_hooks;

use crate::support::parse_address;
use std::path::PathBuf;

use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};

use crate::image::runs::{GlobalValue, DEFAULT_OUTPUT_LIMIT};

const AFTER_HELP: &str = r#"EXIT STATUS:
    The program's own exit status when it returns from its entry point or calls exit().
    128+N when the program dies from signal N: jitrun dies from the same signal, so the shell
    sees it as for a native executable.
    124 when an isolated run outlives --timeout; 137, 152 or 153 when a limit stops it
    (--max-memory or --max-processes, --cpu-time, --max-file-size; see LIMITS).
    125 for jitrun's own failures: usage, I/O, malformed objects, unresolved symbols,
    relocation errors. jitrun then prints one line starting with 'jitrun: error:'.

SYMBOL RESOLUTION ORDER (first match wins; --wrap NAME renames the objects' undefined
references first, NAME to __wrap_NAME and __real_NAME to NAME, as ld does):
    1. --define NAME=ADDRESS, and --alias NEW=OLD (NEW is whatever OLD resolves to)
    2. the input objects and --whole-archive members: strong definitions over weak
       ones over common symbols
    3. static archive members (.a), loaded only when they define a name that is
       still undefined and strongly referenced, repeated until nothing new loads,
       so the order of archives does not matter; the first archive on the command
       line that defines a name wins; loaded members count as objects
    4. jitrun's built-in C runtime pieces: __dso_handle (one per image), atexit,
       at_quick_exit, pthread_atfork, __stack_chk_fail_local, crt1.o's and crti.o's
       _IO_stdin_used, _init, _fini (which return: .init/.fini code runs anyway),
       and _DYNAMIC (DT_DEBUG: the loader's _r_debug); and dladdr, dladdr1,
       backtrace_symbols, backtrace_symbols_fd that know the image (file name argv[0],
       offsets from the image's start, names of exported symbols with -E, as natively),
       and dl_iterate_phdr, which lists the image's segments in the executable's place,
       and sigaltstack, which does not show the crash handler's alternate stack
    5. linker-defined names: _GLOBAL_OFFSET_TABLE_, _TLS_MODULE_BASE_, __start_SEC/__stop_SEC,
       __init_array_start/end, __fini_array_start/end, _end, _edata, _etext,
       _start (the code's start), __data_start and data_start (the data's),
       __ehdr_start (a header listing no program headers)
    6. shared libraries from -l/-L and .so paths, in command-line order; one
       that is not loaded yet loads for a strong reference to a name it exports,
       and an unused one never loads (cc's --as-needed; see --no-as-needed)
       (objects using C++ runtime symbols also get libstdc++, libm and libgcc_s;
       objects compiled from C++ (the source file name in their symbol table
       ends in .cpp, .cc, .cxx, .C, .c++, .ii, ...; or they define or call a
       mangled _Z name) get libstdc++ and libm named last, as g++ names them,
       even if they call only C functions such as sqrt; as the compiler driver
       links them, code built with -fopenmp gets libgomp
       (clang's: libomp), with --coverage libgcov.a (clang's, and for
       -fprofile-instr-generate: libclang_rt.profile; loaded with the
       archives), with
       -fsanitize=undefined libubsan, and with
       -fsanitize=address or -fsanitize=thread libasan or libtsan, which must be
       the first library: jitrun then restarts itself with it in LD_PRELOAD,
       given back its original value before the program starts; options the
       program sets with __asan_default_options and the like take one more
       restart, since the runtime reads them as it starts)
    7. the jitrun process itself: libc and the libraries already loaded
    8. libgcc_s, for strong references still missing (cc links it as needed:
       __divti3, __muldc3, ...); it is also loaded for code that unwinds
       (C++, _Unwind_*, pthread_exit/pthread_cancel, backtrace)
    9. members of GCC's libgcc.a (cc links it too) for __ names still missing,
       such as __cpu_model and __cpu_indicator_init that function
       multiversioning (target_clones) uses
   10. undefined weak references become 0 (strong ones too with --allow-unresolved)
    Use -v to see what satisfied each name and why each archive member was loaded.

SYMBOL NAMES ON THE COMMAND LINE:
    --define, --alias, --wrap, -u, --set, --entry, a batch line's "set" and --check
    expressions name symbols as the objects do. ELF names are exact: _foo and foo are two
    symbols. Mach-O spells C's foo as _foo (as nm shows it on macOS); for Mach-O objects
    both foo and _foo name it. The exact name comes first: _foo means the C name _foo when
    the objects (or archive members, or --define) have a symbol of that name, and C's foo
    only otherwise; so __wrap_foo, __real_foo and _start keep their C names.

LINK CACHE (on by default; --link-cache DIR or $JITRUN_LINK_CACHE to choose the directory):
    A run (any but --noexec, --map, --report, --check or --perf-map, which read the link
    itself) keeps its linked image in the cache, and a later run of the same link maps it
    in as the kernel maps an executable, skipping parsing, resolution, layout and fixups:
    SQLite's shell starts in under half the time. By default the cache is jitrun's own, in
    $XDG_CACHE_HOME/jitrun/links (else ~/.cache/jitrun/links, mode 0700), and only for
    links whose named input files hold at least 64 KiB (smaller ones link faster than an
    entry is checked): the first run of a link leaves a mark of a few bytes (all marks share
    at most 1024 small files), the second stores the image (or the first run after the
    inputs are two seconds old: an entry of fresher files would checksum them at every use),
    later ones map it; it never prints anything, and a directory that is not this user's
    alone (another's, or writable by others) is not used. With --link-cache DIR (or
    $JITRUN_LINK_CACHE) every link that runs is stored in DIR at its first run, and an entry
    that cannot be written is a warning. An entry is used only if jitrun's executable, the
    CPU's features, the kernel, the page size, the working directory, the environment's
    LD_*, JITRUN_* and GLIBC_TUNABLES, and jitrun's arguments before -- (but for those
    that only decide how the program runs: --repeat, --isolate, --batch, --jobs, --set,
    --timeout, --argv0, --max-output, the limits, --sandbox and its options, --stats,
    --shard, --resume; so one entry serves a mutation loop's runs) are the same, and
    every file the link read is unchanged (device, inode, size, modification and change
    times; and its contents' XXH64 when it changed less than two seconds before the link,
    until a run finds it two seconds old and unchanged and notes that in the entry),
    as are every library directory searched and every shared library loaded: a library
    added, removed or upgraded, or an edited object, means linking again. References to
    libraries are fixed up again at each run (their addresses move); the image goes back to
    the address where it was linked (its layout does not move between runs: a link made for
    the cache takes a random address far below where the kernel puts mappings, so that
    the range is free again) or, if that range is taken, is linked again. Links that need
    more of the process than the entry holds are not stored (the default cache remembers
    that until the inputs change):
    thread-local variables, IFUNCs, allocator interposition, --export-dynamic, sanitizers,
    --self-exe, a debugger's registration, profiling, a fixed or low address, or objects
    with source lines. An entry is never changed in place (written aside, then renamed);
    entries it cannot read are ignored. An entry is code that runs: trust the directory as
    you trust the objects. --link-cache-max MIB (default 256) bounds the directory, the
    least recently used entries (by access time, which a run that uses an entry sets
    once an hour) removed first;
    --no-link-cache or JITRUN_LINK_CACHE=off turns the cache off. -v says what the cache
    did and why.

UNRESOLVED SYMBOLS:
    --print-unresolved prints one line per missing symbol and referencing object
    (archive members as libfoo.a(bar.o)), tab-separated, sorted by symbol:
        SYMBOL<TAB>REFERENCED-BY<TAB>HINT
    HINT is the library that usually provides the symbol (e.g. -lm) or '-'.
    It exits 0 when nothing is missing, 125 otherwise.

CRASH REPORTS:
    When loaded code dies from SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, jitrun prints on
    stderr the signal, the fault address (or the process that sent it, for a signal sent with
    kill or raise), the pc as function+0xOFF (object, section) and a
    backtrace of the loaded frames (unwound with the image's .eh_frame; a stack scan marked `?`
    when unwinding cannot start), each with `at FILE:LINE` for objects built with -g (from their
    DWARF line tables), then dies from the same signal. The handler is installed
    before constructors run, so a handler the program installs replaces it; a signal that
    already has a handler then (AddressSanitizer's or ThreadSanitizer's runtime, which report
    crashes themselves) keeps it. A process the program forks dies without a report, as
    natively: its parent (a death test, say) may read its stderr. SIGPIPE, SIGSEGV and SIGBUS
    reach the program as jitrun was
    started with them (an ignored SIGPIPE stays ignored, as across exec).
    --no-crash-handler leaves these signals alone: stderr then holds exactly what a native run
    prints (the differential tests use it).

LINK MAP (--map):
    Segments with protections, output and input sections, every defined symbol (address, size,
    kind, scope, object, section), thread-local symbols with their offset in the image's TLS
    block, GOT entries and stubs with their targets, and the library that satisfied each
    external. --map=json or --map-format json gives the same as JSON.
    Without =FILE it goes to stdout under --noexec and to stderr otherwise. Layout is
    deterministic: the same inputs at the same --base give the same addresses.

RUN REPORT (--report FILE), schema 1:
    {"schema": 1, "jitrun_version", "inputs": [{"path", "size", "format"}],
     "image": {"base", "size"}, "counts": {"objects", "sections", "symbols",
     "relocations": {TYPE: n}, "got_entries", "stubs"},
     "phases": {"parse", "resolve", "layout", "map", "fixups", "init", "run", "fini"} (seconds;
     null when unknown: "fini" when the program called exit() itself, "run" then includes the
     exit handlers), "peak_rss_kib",
     "outcome": {"status": "exited", "exit_code"} | {"status": "signal", "signal", "signal_name",
     "exit_code"} | {"status": "timeout", "timeout_ms", "exit_code": 124} | {"status": "limit",
     "limit", "exit_code"} | {"status": "noexec"} | {"status": "error", "message"} |
     {"status": "running"},
     "resources" (isolated runs: what the deciding run cost, as in a batch result line)}
    The file says "running" from the moment the entry is called until the process ends (by
    exit, _exit, _Exit or quick_exit, all recorded); a process killed by a signal jitrun does
    not handle (SIGKILL, or with --no-crash-handler) or ending with a raw exit_group system
    call leaves it so. With --isolate or --timeout, jitrun writes the outcome of the run that
    decides its exit status (the first that failed, else success); "peak_rss_kib" is then the
    largest run's and the children's "init", "run" and "fini" are null.

PERF MAP (--perf-map):
    /tmp/perf-PID.map lists "START SIZE NAME" (hex) for every loaded function and stub. It is
    kept after jitrun exits, because perf report reads it later; remove it yourself.

DEBUGGING:
    Every image registers with the GDB JIT interface (__jit_debug_register_code) when a
    debugger runs jitrun (or JITRUN_GDB_JIT=1), so `gdb --args jitrun app.o` can break on
    loaded functions by name (set breakpoint pending on), unwinds through them with the
    image's .eh_frame, and, for objects built with -g, gets their DWARF at the final
    addresses: breakpoints by FILE:LINE, source lines, arguments and locals. Dropping the
    image unregisters it.

CHECKS (--check FILE):
    Evaluates llvm-jitlink's `jitlink-check: LHS = RHS` lines after linking: numbers, symbol
    names, *{N}ADDR memory reads, got_addr(file, sym), stub_addr(file, sym),
    section_addr(file, sec), next_pc(label), decode_operand(label, N), + - & | << >>, (),
    EXPR[HI:LO]. Each failing line is printed with both values; then jitrun fails with 125.
    decode_operand and next_pc take any expression for the instruction's address (label + 8).
    A thread-local symbol's value is its offset in the image's TLS block (llvm-jitlink gives
    the address of its initial data). got_addr finds a symbol's address entry, else its
    initial-exec slot (offset from the thread pointer), TLS descriptor or tls_index; a third
    argument picks one: got_addr(file, sym, tp-offset | tls-descriptor | tls-index).
    llvm-jitlink spellings are accepted: -noexec, -check, -abs and -define-abs (= --define), -entry,
    -slab-address (= --base); -slab-allocate and -slab-page-size are ignored.

EXAMPLES:
    cc -c -O2 hello.c && jitrun hello.o -- world
    jitrun main.o util.o -lm --entry main -- a b
    jitrun main.o libutil.a -lz -lm -- args
    jitrun --whole-archive libplugins.a --no-whole-archive main.o
    jitrun --noexec --print-unresolved main.o

    jitrun --map=json --noexec --base 0x10000000 main.o > map.json
    jitrun --report run.json main.o"#;

/// Load relocatable objects into memory, link them and run them.
#[derive(Parser, Debug, Clone, PartialEq)]
#[command(
    name = "jitrun",
    version,
    about,
    after_help = AFTER_HELP,
    after_long_help = after_long_help(),
    max_term_width = 100
)]
pub struct Cli {
    /// Relocatable objects (.o), static archives (.a), shared libraries (.so) and linker scripts to load, in order
    #[arg(value_name = "INPUT", required_unless_present = "completions")]
    pub inputs: Vec<PathBuf>,

    /// Link against library NAME (libNAME.so, else libNAME.a), searched in -L directories then the system ones
    /// (the driver's -pthread means -lpthread, as for cc)
    #[arg(short = 'l', value_name = "NAME", action = ArgAction::Append)]
    pub library: Vec<String>,

    /// Add DIR to the library search path
    #[arg(short = 'L', value_name = "DIR", action = ArgAction::Append)]
    pub library_path: Vec<PathBuf>,

    /// For -l, take libNAME.a from any search directory before libNAME.so
    #[arg(long)]
    pub static_libs: bool,

    /// Load every shared library named, used or not (by default one loads
    /// only if the objects need a symbol it exports, as cc links with
    /// --as-needed)
    #[arg(long, overrides_with = "no_as_needed")]
    pub no_as_needed: bool,

    /// Make the program's global symbols visible to shared libraries it loads later with
    /// dlopen (plugins that call back into it), as `cc -rdynamic` does (-rdynamic, -Wl,-E work too)
    #[arg(short = 'E', long, overrides_with = "export_dynamic")]
    pub export_dynamic: bool,

    /// Symbol to call as the program's entry point, with (argc, argv, envp). A _start the objects
    /// define (cc -nostartfiles, assembly; -nostartfiles works too) is the entry for main and
    /// _start, and is entered as the kernel enters a program: argc, argv, envp and the auxiliary
    /// vector on the stack, no constructors run, no return
    #[arg(long, short = 'e', value_name = "SYMBOL", default_value = "main")]
    pub entry: String,

    /// Load and link only: report problems, run nothing. The image is linked in a buffer at
    /// --base (or an address jitrun picks), never mapped in this process, so objects of
    /// another CPU link too (aarch64 objects on x86-64 and the reverse, for --map and --check);
    /// those resolve only against --define
    #[arg(long)]
    pub noexec: bool,

    /// Define NAME as an absolute symbol at ADDRESS (decimal or 0x hex); wins over every other definition
    #[arg(long, visible_alias = "abs", value_name = "NAME=ADDRESS", action = ArgAction::Append)]
    pub define: Vec<String>,

    /// Let missing symbols resolve to 0 instead of failing (for --noexec link checks)
    #[arg(long)]
    pub allow_unresolved: bool,

    /// Make NEW resolve to whatever OLD resolves to, overriding any definition of NEW (e.g. --alias malloc=my_malloc)
    #[arg(long, value_name = "NEW=OLD", action = ArgAction::Append)]
    pub alias: Vec<String>,

    /// Load the archive member that defines SYMBOL as if an object referred to it, as ld -u
    /// does (-Wl,-u,SYMBOL and -Wl,--undefined=SYMBOL work too): self-registering code (test
    /// cases, plugins) in static libraries
    #[arg(short = 'u', long, value_name = "SYMBOL", action = ArgAction::Append)]
    pub undefined: Vec<String>,

    /// Load the runtime cc -fsanitize=KIND links even if no code calls it (-fsanitize=KIND works
    /// too): LeakSanitizer instruments nothing, so objects built with gcc -fsanitize=leak look like
    /// any others and need this to be checked for leaks
    #[arg(long, value_name = "KIND", action = ArgAction::Append, value_delimiter = ',',
          value_parser = ["address", "thread", "undefined", "leak"])]
    pub sanitize: Vec<String>,

    /// Wrap SYMBOL as ld --wrap does: undefined references to SYMBOL go to __wrap_SYMBOL and those
    /// to __real_SYMBOL to SYMBOL; references inside the object that defines SYMBOL stay
    /// (-Wl,--wrap=SYMBOL works too). A wrapped entry point is called as __wrap_ENTRY, as crt1.o's
    /// reference to main is wrapped
    #[arg(long, value_name = "SYMBOL", action = ArgAction::Append)]
    pub wrap: Vec<String>,

    /// Link only (implies --noexec) and print every missing symbol with the objects that reference it, on stdout
    #[arg(long)]
    pub print_unresolved: bool,

    /// Load every member of the archives that follow (until --no-whole-archive), not only the needed ones
    // Append (not a count) so that every occurrence keeps its position.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    pub whole_archive: Vec<bool>,

    /// Archives that follow load only the members that define needed names (the default)
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    pub no_whole_archive: Vec<bool>,

    /// Lay the image out at ADDRESS (fails if the range is taken; under --noexec nothing is
    /// mapped there)
    #[arg(long, value_name = "ADDRESS", value_parser = parse_address)]
    pub base: Option<u64>,

    /// Keep every run's linked image in DIR (instead of jitrun's own cache) and map it
    /// straight in when the same link runs again (see LINK CACHE); also $JITRUN_LINK_CACHE
    #[arg(long, value_name = "DIR")]
    pub link_cache: Option<PathBuf>,

    /// Use no link cache, not even jitrun's own (see LINK CACHE); also JITRUN_LINK_CACHE=off
    #[arg(long)]
    pub no_link_cache: bool,

    /// Largest size, in MiB, the link cache's directory may reach (least recently used entries go first)
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub link_cache_max: u64,

    /// Largest image, in bytes, one link may ask for (guards against corrupt sizes)
    #[arg(long, value_name = "BYTES", default_value_t = 4u64 << 30, value_parser = parse_address)]
    pub max_image_size: u64,

    /// Largest thread-local storage block, in bytes, the image may ask for (every thread gets one)
    #[arg(long, value_name = "BYTES", default_value_t = crate::graph::Limits::default().max_tls_size, value_parser = parse_address)]
    pub max_tls_size: u64,

    /// Run the program N times; in-process one after another (global state persists, exit() ends all), or with --isolate each in a fresh fork
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,

    /// Run the program in a forked child of the linked image, so a crash or a hang cannot take jitrun down
    #[arg(long)]
    pub isolate: bool,

    /// Kill a run (its whole process group) after DURATION, e.g. 2s, 500ms, 1m; exit status 124. Implies --isolate
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,

    /// Run every line of a JSON-lines plan isolated; print one JSON result per run to stdout (see BATCH SCHEMA)
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "repeat")]
    pub batch: Option<PathBuf>,

    /// Runs of a batch at a time (default: the number of CPUs)
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,

    #[command(flatten)]
    pub contained: contained::ContainedOptions,

    /// Bytes kept of each run's stdout and of its stderr in a batch; the rest is dropped and reported
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_OUTPUT_LIMIT as u64, value_parser = parse_address)]
    pub max_output: u64,

    /// Write VALUE into global NAME before constructors run: an integer in the symbol's size, else the text's bytes
    #[arg(long, value_name = "NAME=VALUE", action = ArgAction::Append)]
    pub set: Vec<String>,

    /// Leave SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT alone: no crash report
    #[arg(long)]
    pub no_crash_handler: bool,

    /// Print the link map to FILE, or to stdout with --noexec and stderr otherwise; `--map=json` prints JSON
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub map: Option<String>,

    /// Format of --map
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = MapFormat::Text)]
    pub map_format: MapFormat,

    /// Write a JSON run report (schema below) to FILE. A program with its
    /// own _start then runs in a forked child, as with --isolate: it ends
    /// with a system call, after which its process could write nothing
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Write /tmp/perf-PID.map naming every loaded function for `perf report`; kept after exit
    #[arg(long)]
    pub perf_map: bool,

    /// After linking, evaluate the `jitlink-check:` lines of FILE; fail (125) if any is false
    #[arg(long, value_name = "FILE", action = ArgAction::Append)]
    pub check: Vec<PathBuf>,

    /// More log output on stderr (-v: debug, -vv: trace); RUST_LOG also works
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,

    /// The program's argv[0] (and process name): what `./NAME` would give a native run.
    /// Default: the --self-exe path if given, else the first input's path
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub argv0: Option<std::ffi::OsString>,

    /// What the program finds as its own executable, instead of jitrun: readlink and
    /// realpath of /proc/self/exe give PATH, exec and posix_spawn of it run PATH (a script
    /// that runs jitrun on the same inputs), for programs that start themselves again;
    /// argv[0] defaults to PATH. The absolute paths /proc/self/exe, /proc/PID/exe and
    /// /proc/thread-self/exe count, also with extra `/`, `.` or `..` components. A script
    /// started by exec gets its own path as argv[0] (the kernel's rule), so a program that
    /// dispatches on argv[0] (BusyBox's applets) needs a compiled PATH that passes its argv[0]
    /// on as --argv0
    #[arg(long, value_name = "PATH")]
    pub self_exe: Option<PathBuf>,

    /// First argument only: act as the linker of a build. The rest is a cc link command line (-o, objects,
    /// archives, -l, -L, -Wl,..., -Xlinker, -pthread, -rdynamic, -fsanitize=, @response files; compile
    /// options, -pie, -no-pie, -static-lib*, -s, -fuse-ld= ignored). jitrun checks in-process that it links
    /// (missing symbols fail as ld fails, exit status 1) and writes OUT, an executable that runs jitrun on
    /// the same inputs as OUT (see LAUNCHERS). -shared, -r and -static links go to $JITRUN_CC (default cc)
    #[arg(long, value_name = "OUT")]
    pub link_launcher: Option<PathBuf>,

    /// First argument only: what a launcher's #! line runs. Checks that the launcher's inputs and jitrun
    /// are unchanged, then runs its program with the arguments that follow
    #[arg(long, value_name = "LAUNCHER")]
    pub run_launcher: Option<PathBuf>,

    /// First argument only: be a compiler driver for build systems that link through $(CC) (Make, Meson):
    /// links of executables compile their sources with COMPILER and write launchers as --link-launcher
    /// does; everything else (compiling, -shared, --version) is COMPILER's
    #[arg(long, value_name = "COMPILER")]
    pub cc_driver: Option<std::ffi::OsString>,

    /// Print a completion script for SHELL on stdout and exit
    #[arg(long, value_name = "SHELL", exclusive = true)]
    pub completions: Option<clap_complete::Shell>,

    /// Arguments for the program, after `--`; argv[0] is the first input's path (see --argv0)
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<std::ffi::OsString>,
}

const RUNNING_MANY_TIMES: &str = "\
RUNNING MANY TIMES:
    The objects are linked once; --repeat N runs the program N times.
    Without --isolate the runs share this process, one after another:
    constructors, entry and destructors run each time, global state persists
    between runs, and a program that calls exit() ends them all.
    With --isolate (or --timeout, or --batch) every run is a child forked from
    the linked, not yet initialized image: it starts fresh, in its own process
    group, and jitrun itself never runs program code. Isolated runs inherit
    jitrun's stdout and stderr; they read jitrun's stdin unless it is a
    terminal (then an empty one). The exit status is that of the first run
    that failed (124 for a timeout; a signal is re-raised), else 0.
    A run that outlives --timeout is killed with its whole process group.
    On SIGINT, SIGTERM or SIGHUP, jitrun passes the signal on to the runs in
    flight (their process groups), gives them 2 seconds to end (at once on a
    second signal), kills what is left and dies of the same signal.";

const LAUNCHERS: &str = "\
LAUNCHERS (jitrun as the linker of test executables):
    jitrun --link-launcher OUT <cc link line> checks that the inputs link and writes OUT, a
    file that starts with `#!/path/to/jitrun --run-launcher`: running OUT runs jitrun on the
    same inputs (absolute paths) in the same process, as OUT (argv[0] is the path OUT was run
    by, /proc/self/exe is OUT), with the arguments, stdin, exit status and signals of a native
    run. OUT records the size and modification time of every object and archive (and a hash
    of those modified just before the link) and of jitrun itself: if any of them changed, OUT
    says which and exits 125 instead of running; the build relinks it. Shared libraries are
    loaded as they are at run time, as natively. -shared, -r and -static links are handed to
    $JITRUN_CC (default cc) unchanged.
        cmake -DCMAKE_C_LINK_EXECUTABLE='jitrun --link-launcher <TARGET> <FLAGS> <LINK_FLAGS> <OBJECTS> <LINK_LIBRARIES>'
        make LINK.o='jitrun --link-launcher $@'
        CC='jitrun --cc-driver cc' meson setup build";

/// `--help` shows the exit codes, the runs, the batch schema and
/// launchers; `-h` only the first.
fn after_long_help() -> String {
    format!(
        "{}\n\n{}\n\n{}\n\n{}\n\n{}",
        AFTER_HELP,
        RUNNING_MANY_TIMES,
        contained::CONTAINED_HELP,
        crate::image::batch::SCHEMA_HELP,
        LAUNCHERS
    )
}

/// Parses a duration: a number with unit `ms`, `s`, `m` or `h` (seconds
/// when there is none), e.g. `500ms`, `2s`, `1.5s`.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("`{}`: unknown unit `{}` (use ms, s, m or h)", s, unit)),
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => {
            std::time::Duration::try_from_secs_f64(n * scale).map_err(|_| format!("`{}` is too long", s))
        }
        _ => Err(format!("`{}` is not a duration such as 500ms, 2s or 1m", s)),
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapFormat {
    Text,
    Json,
}

/// Rewrites llvm-jitlink's single-dash spellings (`-noexec`, `-check`,
/// `-abs`/`-define-abs`, `-entry`, `-slab-address`) to jitrun's options, so test lines
/// written for llvm-jitlink run unchanged; `-slab-allocate` and
/// `-slab-page-size` have no meaning here and are dropped with their value.
/// Arguments after `--` belong to the program and are left alone.
pub fn llvm_jitlink_spellings(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    const RENAMED: [(&str, &str); 6] = [
        ("-noexec", "--noexec"),
        ("-check", "--check"),
        ("-abs", "--define"),
        ("-define-abs", "--define"),
        ("-entry", "--entry"),
        ("-slab-address", "--base"),
    ];
    const DROPPED: [&str; 2] = ["-slab-allocate", "-slab-page-size"];
    let mut out = Vec::with_capacity(args.len());
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        let Some(text) = arg.to_str().map(str::to_string) else {
            out.push(arg);
            continue;
        };
        if text == "--" {
            out.push(arg);
            out.extend(iter);
            break;
        }
        let (flag, value) = match text.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (text.as_str(), None),
        };
        if DROPPED.contains(&flag) {
            if value.is_none() {
                iter.next();
            }
        } else if let Some((_, long)) = RENAMED.iter().find(|(short, _)| *short == flag) {
            out.push(match value {
                Some(v) => format!("{}={}", long, v).into(),
                None => long.into(),
            });
        } else {
            out.push(arg);
        }
    }
    out
}

/// The compiler driver's spellings of jitrun's options before `--`
/// (`-rdynamic`, `-pthread`, `-fsanitize=KIND`, `-nostartfiles`, and the
/// linker's options jitrun knows given with `-Wl,`: see
/// [`linker_options`]): command lines written for cc work.
/// A `-Wl,` option jitrun does not take is an error naming it (clap would
/// call it `-W`).
fn compiler_driver_spellings(args: Vec<std::ffi::OsString>) -> Result<Vec<std::ffi::OsString>, clap::Error> {
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.into_iter();
    out.extend(words.next());
    for arg in words.by_ref() {
        if arg == "--" {
            out.push(arg);
            break;
        }
        if arg == "-rdynamic" {
            out.push("--export-dynamic".into());
        } else if arg == "-pthread" {
            out.push("-lpthread".into());
        } else if let Some(kinds) = arg.to_str().and_then(|a| a.strip_prefix("-fsanitize=")) {
            out.push(format!("--sanitize={}", kinds).into());
        } else if arg == "-nostartfiles" {
            // The objects' own _start is the entry.
            out.extend(["--entry".into(), "_start".into()]);
        } else if let Some(linker) = arg.to_str().filter(|a| a.starts_with("-Wl,")) {
            let Some(options) = linker_options(linker) else {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::UnknownArgument,
                    format!(
                        "linker option `{}` is not one jitrun takes (with -Wl, it takes --wrap, -u, --defsym, -E, \
                         --whole-archive, --no-whole-archive, --no-as-needed, and ignores what changes nothing \
                         a program sees: -O1, -z relro/now, --gc-sections, -rpath, groups, ...)\n",
                        linker
                    ),
                ));
            };
            out.extend(options.into_iter().map(Into::into));
        } else {
            out.push(arg);
        }
    }
    out.extend(words);
    Ok(out)
}

/// `-Wl,...` as jitrun's options, when jitrun knows every linker option in
/// it: `--wrap`, `-u`/`--undefined` (`=NAME` or `,NAME`), `--defsym`
/// (`NAME=NUMBER` as `--define`, `NAME=SYMBOL` as `--alias`), `-E`/
/// `--export-dynamic`, `--whole-archive`, `--no-whole-archive`,
/// `--no-as-needed`; and, as nothing (they change nothing a program can
/// see, or jitrun does it anyway), `--as-needed`, the group brackets (every
/// archive is searched until nothing new loads), `-O1`, `--gc-sections`,
/// `-z relro`/`now`/`noexecstack`, `--hash-style`, `--build-id`,
/// `--eh-frame-hdr`, `--sort-common` and `-rpath`/`-rpath-link` (jitrun
/// finds `-l` libraries through `-L` and the system's directories, as ld
/// does at link time). `None` for anything else: clap says it is unknown.
fn linker_options(arg: &str) -> Option<Vec<String>> {
    const WITH_SYMBOL: [(&str, &str); 5] = [
        ("--wrap", "wrap"),
        ("-wrap", "wrap"),
        ("--undefined", "undefined"),
        ("-undefined", "undefined"),
        ("-u", "undefined"),
    ];
    const AS_JITRUNS: [(&str, &str); 5] = [
        ("-E", "--export-dynamic"),
        ("--export-dynamic", "--export-dynamic"),
        ("--whole-archive", "--whole-archive"),
        ("--no-whole-archive", "--no-whole-archive"),
        ("--no-as-needed", "--no-as-needed"),
    ];
    const NOTHING: [&str; 19] = [
        "--as-needed",
        // How a shared library's own undefined names are judged, what ld
        // warns about and how it records run paths: jitrun leaves libraries
        // to the dynamic loader, and writes no file.
        "--allow-shlib-undefined",
        "--no-allow-shlib-undefined",
        "--fatal-warnings",
        "--no-fatal-warnings",
        "--warn-common",
        "--enable-new-dtags",
        "--disable-new-dtags",
        "--no-copy-dt-needed-entries",
        "--start-group",
        "--end-group",
        "-(",
        "-)",
        "-O1",
        "--gc-sections",
        "--eh-frame-hdr",
        "--sort-common",
        "--build-id",
        "--no-undefined",
    ];
    const NOTHING_WITH_VALUE: [&str; 4] = ["--hash-style", "-rpath", "-rpath-link", "--build-id"];
    const HARMLESS_Z: [&str; 4] = ["relro", "now", "noexecstack", "lazy"];
    let mut items = arg.strip_prefix("-Wl,")?.split(',');
    let mut options = Vec::new();
    while let Some(item) = items.next() {
        // `NAME=VALUE` or `NAME,VALUE`.
        let value_of = |spelling: &str, items: &mut std::str::Split<'_, char>| -> Option<String> {
            match item.strip_prefix(spelling)? {
                "" => items.next().filter(|v| !v.is_empty()).map(str::to_string),
                rest => rest.strip_prefix('=').filter(|v| !v.is_empty()).map(str::to_string),
            }
        };
        if let Some(&(_, jitruns)) = AS_JITRUNS.iter().find(|(spelling, _)| item == *spelling) {
            options.push(jitruns.to_string());
        } else if NOTHING.contains(&item) {
        } else if let Some(assignment) = value_of("--defsym", &mut items) {
            // NAME=NUMBER is --define, NAME=SYMBOL --alias; no expressions.
            let (name, value) = assignment.split_once('=').filter(|(name, _)| !name.is_empty())?;
            let is_symbol = value.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '.')
                && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '@'));
            match (parse_address(value), is_symbol) {
                (Ok(_), _) => options.push(format!("--define={}={}", name, value)),
                (Err(_), true) => options.push(format!("--alias={}={}", name, value)),
                (Err(_), false) => return None,
            }
        } else if item == "-z" {
            HARMLESS_Z.contains(&items.next()?).then_some(())?;
        } else if let Some(&spelling) = NOTHING_WITH_VALUE
            .iter()
            .find(|s| item.strip_prefix(**s).is_some_and(|r| r.is_empty() || r.starts_with('=')))
        {
            value_of(spelling, &mut items)?;
        } else {
            let &(spelling, option) = WITH_SYMBOL.iter().find(|(spelling, _)| {
                item.strip_prefix(spelling).is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
            })?;
            options.push(format!("--{}={}", option, value_of(spelling, &mut items)?));
        }
    }
    Some(options)
}

/// An input in command-line order: objects and `-l` libraries interleave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    File(PathBuf),
    Library(String),
    /// `--whole-archive` (true) or `--no-whole-archive` (false): applies to
    /// the archives after it.
    WholeArchive(bool),
}

impl Cli {
    pub fn command() -> clap::Command {
        <Cli as CommandFactory>::command()
    }

    /// Parses, keeping the relative order of inputs and `-l` options.
    pub fn parse_ordered<I, T>(args: I) -> Result<(Cli, Vec<Input>), clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let args = compiler_driver_spellings(args)?;
        let (mut cli, inputs) = match Self::parse_plain(&args) {
            Some(parsed) => parsed,
            None => Self::parse_with_clap(args)?,
        };
        if cli.wrap.contains(&cli.entry) {
            cli.entry = format!("__wrap_{}", cli.entry);
        }
        Ok((cli, inputs))
    }

    /// The common command line, `jitrun FILE... [-lNAME...] [-- ARGS...]`,
    /// without building clap's parser: that costs ~0.1 ms, a tenth of
    /// running a small program. Anything else (any other option, `-l NAME`
    /// apart, non-UTF-8) returns `None` for clap to handle; a test checks
    /// that both agree.
    fn parse_plain(args: &[std::ffi::OsString]) -> Option<(Cli, Vec<Input>)> {
        let mut words = args.iter().skip(1);
        let mut inputs = Vec::new();
        let mut program_args = Vec::new();
        // `--link-cache DIR`: scripts that run a program many times name
        // it, and clap's parser would cost them its ~0.1 ms each time.
        let mut link_cache = None;
        // `--no-link-cache`: scripts that turn jitrun's own cache off.
        let mut no_link_cache = false;
        while let Some(word) = words.next() {
            let word = word.to_str()?;
            if word == "--" {
                break;
            } else if word == "--no-link-cache" && !no_link_cache {
                no_link_cache = true;
            } else if word == "--link-cache" && link_cache.is_none() {
                let dir = words.next()?.to_str()?;
                if dir.is_empty() || dir.starts_with('-') {
                    return None;
                }
                link_cache = Some(PathBuf::from(dir));
            } else if let Some(dir) =
                word.strip_prefix("--link-cache=").filter(|d| !d.is_empty() && link_cache.is_none())
            {
                link_cache = Some(PathBuf::from(dir));
            } else if let Some(name) = word.strip_prefix("-l").filter(|n| !n.is_empty() && !n.starts_with('=')) {
                inputs.push(Input::Library(name.to_string()));
            } else if word.is_empty() || word.starts_with('-') {
                return None;
            } else {
                inputs.push(Input::File(PathBuf::from(word)));
            }
        }
        // The program's arguments are any bytes, as natively.
        program_args.extend(words.cloned());
        let files: Vec<PathBuf> =
            inputs.iter().filter_map(|i| if let Input::File(f) = i { Some(f.clone()) } else { None }).collect();
        if files.is_empty() {
            return None; // clap says what is missing
        }
        let libraries = inputs.iter().filter_map(|i| if let Input::Library(l) = i { Some(l.clone()) } else { None });
        let cli = Cli {
            inputs: files,
            library: libraries.collect(),
            library_path: Vec::new(),
            static_libs: false,
            no_as_needed: false,
            export_dynamic: false,
            entry: "main".to_string(),
            noexec: false,
            define: Vec::new(),
            allow_unresolved: false,
            alias: Vec::new(),
            wrap: Vec::new(),
            undefined: Vec::new(),
            sanitize: Vec::new(),
            print_unresolved: false,
            whole_archive: Vec::new(),
            no_whole_archive: Vec::new(),
            base: None,
            link_cache,
            no_link_cache,
            link_cache_max: 256,
            max_image_size: 4u64 << 30,
            max_tls_size: crate::graph::Limits::default().max_tls_size,
            repeat: 1,
            isolate: false,
            timeout: None,
            batch: None,
            jobs: None,
            contained: Default::default(),
            max_output: DEFAULT_OUTPUT_LIMIT as u64,
            set: Vec::new(),
            no_crash_handler: false,
            map: None,
            map_format: MapFormat::Text,
            report: None,
            perf_map: false,
            check: Vec::new(),
            verbose: 0,
            argv0: None,
            self_exe: None,
            link_launcher: None,
            run_launcher: None,
            cc_driver: None,
            completions: None,
            args: program_args,
        };
        Some((cli, inputs))
    }

    fn parse_with_clap(args: Vec<std::ffi::OsString>) -> Result<(Cli, Vec<Input>), clap::Error> {
        let args = llvm_jitlink_spellings(args);
        let matches = Self::command().try_get_matches_from(args)?;
        let cli = Cli::from_arg_matches(&matches)?;
        let mut ordered: Vec<(usize, Input)> = Vec::new();
        if let Some(idx) = matches.indices_of("inputs") {
            ordered.extend(idx.zip(cli.inputs.iter().cloned().map(Input::File)));
        }
        if let Some(idx) = matches.indices_of("library") {
            ordered.extend(idx.zip(cli.library.iter().cloned().map(Input::Library)));
        }
        for (id, on) in [("whole_archive", true), ("no_whole_archive", false)] {
            if let Some(idx) = matches.indices_of(id) {
                ordered.extend(idx.map(|i| (i, Input::WholeArchive(on))));
            }
        }
        ordered.sort_by_key(|(i, _)| *i);
        Ok((cli, ordered.into_iter().map(|(_, input)| input).collect()))
    }

    /// Whether runs are forked children of the linked image.
    pub fn isolated(&self) -> bool {
        self.isolate || self.timeout.is_some() || self.batch.is_some() || self.contained.need_isolation()
    }

    /// `--set` values, in order.
    pub fn sets(&self) -> Result<Vec<(String, GlobalValue)>, String> {
        self.set
            .iter()
            .map(|s| {
                let (name, value) = s.split_once('=').ok_or_else(|| format!("--set {}: expected NAME=VALUE", s))?;
                Ok((name.to_string(), GlobalValue::parse(value)))
            })
            .collect()
    }

    /// Where `--map` goes and whether it is JSON; `None` without `--map`.
    pub fn map_request(&self) -> Option<(crate::diagnostics::map::MapDestination, bool)> {
        use crate::diagnostics::map::MapDestination;
        let value = self.map.as_deref()?;
        let json = self.map_format == MapFormat::Json;
        Some(match value {
            "-" | "" => (MapDestination::Default, json),
            "json" => (MapDestination::Default, true),
            "text" => (MapDestination::Default, false),
            file => (MapDestination::File(file.into()), json),
        })
    }

    /// `--define` values as a map.
    pub fn defines(&self) -> Result<std::collections::HashMap<String, u64>, String> {
        self.define
            .iter()
            .map(|d| {
                let (name, value) =
                    d.split_once('=').ok_or_else(|| format!("--define {}: expected NAME=ADDRESS", d))?;
                Ok((name.to_string(), parse_address(value).map_err(|e| format!("--define {}: {}", d, e))?))
            })
            .collect()
    }

    /// `--alias` values as (NEW, OLD) pairs.
    pub fn aliases(&self) -> Result<Vec<(String, String)>, String> {
        self.alias
            .iter()
            .map(|a| match a.split_once('=') {
                Some((new, old)) if !new.is_empty() && !old.is_empty() => Ok((new.to_string(), old.to_string())),
                _ => Err(format!("--alias {}: expected NEW=OLD", a)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os_args(args: &[&str]) -> Vec<std::ffi::OsString> {
        args.iter().map(Into::into).collect()
    }

    /// The fast path for plain command lines must mean exactly what clap
    /// makes of them, defaults included.
    #[test]
    fn plain_command_lines_parse_as_clap_parses_them() {
        let plain: &[&[&str]] = &[
            &["jitrun", "a.o"],
            &["jitrun", "a.o", "b.o", "libx.a"],
            &["jitrun", "a.o", "-lm", "b.o", "-lpthread"],
            &["jitrun", "-lm", "a.o", "--", "x", "-y", "--", "--noexec"],
            &["jitrun", "a.o", "--"],
            &["jitrun", "dir/prog.o", "--", ""],
            &["jitrun", "--link-cache", "cache", "a.o", "-lm", "--", "x"],
            &["jitrun", "a.o", "--link-cache=dir/cache"],
            &["jitrun", "--no-link-cache", "a.o", "-lm", "--", "--no-link-cache"],
            &["jitrun", "a.o", "--no-link-cache", "--link-cache", "dir"],
        ];
        for args in plain {
            let fast = Cli::parse_plain(&os_args(args)).unwrap_or_else(|| panic!("{:?} is plain", args));
            let slow = Cli::parse_with_clap(os_args(args)).unwrap();
            assert_eq!(fast, slow, "{:?}", args);
        }
        let not_plain: &[&[&str]] = &[
            &["jitrun"],
            &["jitrun", "-lm"],
            &["jitrun", "a.o", "-l", "m"],
            &["jitrun", "a.o", "-v"],
            &["jitrun", "--noexec", "a.o"],
            &["jitrun", "-noexec", "a.o"],
            &["jitrun", "a.o", "-"],
            &["jitrun", "a.o", "-l=m"],
            &["jitrun", "--help"],
            &["jitrun", "a.o", ""],
            &["jitrun", "a.o", "--link-cache"],
            &["jitrun", "--link-cache", "-v", "a.o"],
            &["jitrun", "--link-cache=", "a.o"],
            &["jitrun", "a.o", "--no-link-cache", "--no-link-cache"],
            &["jitrun", "a.o", "--no-link-cache=yes"],
        ];
        for args in not_plain {
            assert!(Cli::parse_plain(&os_args(args)).is_none(), "{:?} is not plain", args);
        }
    }

    /// Login shells are named `-bash`, and `exec -a -name` passes such names.
    #[test]
    fn argv0_may_start_with_a_hyphen() {
        let (cli, _) = Cli::parse_ordered(["jitrun", "--argv0", "-bash", "a.o", "--", "-c", "x"]).unwrap();
        assert_eq!(cli.argv0.as_deref(), Some(std::ffi::OsStr::new("-bash")));
        assert_eq!(cli.args, vec!["-c", "x"]);
    }

    #[test]
    fn inputs_and_libraries_keep_their_order() {
        let (cli, ordered) = Cli::parse_ordered(["jitrun", "a.o", "-lm", "b.o", "-L", "dir", "--", "x", "-y"]).unwrap();
        assert_eq!(ordered, vec![Input::File("a.o".into()), Input::Library("m".into()), Input::File("b.o".into())]);
        assert_eq!(cli.args, vec!["x", "-y"]);
        assert_eq!(cli.entry, "main");
    }

    #[test]
    fn the_drivers_pthread_flag_is_lpthread_before_the_program_arguments_only() {
        let (cli, ordered) = Cli::parse_ordered(["jitrun", "a.o", "-pthread", "--", "-pthread"]).unwrap();
        assert_eq!(ordered, vec![Input::File("a.o".into()), Input::Library("pthread".into())]);
        assert_eq!(cli.args, vec!["-pthread"]);
    }

    #[test]
    fn whole_archive_applies_in_command_line_order() {
        let (_, ordered) = Cli::parse_ordered([
            "jitrun",
            "a.o",
            "--whole-archive",
            "libp.a",
            "--no-whole-archive",
            "-lq",
            "--whole-archive",
            "libr.a",
        ])
        .unwrap();
        assert_eq!(
            ordered,
            vec![
                Input::File("a.o".into()),
                Input::WholeArchive(true),
                Input::File("libp.a".into()),
                Input::WholeArchive(false),
                Input::Library("q".into()),
                Input::WholeArchive(true),
                Input::File("libr.a".into()),
            ]
        );
    }

    #[test]
    fn aliases_parse() {
        let (cli, _) = Cli::parse_ordered(["jitrun", "a.o", "--alias", "malloc=my_malloc", "--alias", "x="]).unwrap();
        assert!(cli.aliases().is_err());
        let (cli, _) = Cli::parse_ordered(["jitrun", "a.o", "--alias", "malloc=my_malloc"]).unwrap();
        assert_eq!(cli.aliases().unwrap(), vec![("malloc".to_string(), "my_malloc".to_string())]);
    }

    #[test]
    fn wraps_come_in_the_linker_spellings_too() {
        let (cli, ordered) = Cli::parse_ordered([
            "jitrun",
            "a.o",
            "--wrap",
            "f",
            "-Wl,--wrap=g",
            "-Wl,--wrap,h,--wrap=i",
            "b.o",
            "--",
            "-Wl,--wrap=j",
        ])
        .unwrap();
        assert_eq!(cli.wrap, ["f", "g", "h", "i"]);
        assert!(cli.undefined.is_empty());
        assert_eq!(ordered, [Input::File("a.o".into()), Input::File("b.o".into())]);
        assert_eq!(cli.args, ["-Wl,--wrap=j"]);
        assert_eq!(cli.entry, "main");
        // crt1.o's reference to main is wrapped like any other.
        let (cli, _) = Cli::parse_ordered(["jitrun", "a.o", "-Wl,--wrap=main"]).unwrap();
        assert_eq!(cli.entry, "__wrap_main");
        // Other -Wl options are not jitrun's.
        assert!(Cli::parse_ordered(["jitrun", "a.o", "-Wl,--wrap=k,-Bdynamic"]).is_err());
        assert!(Cli::parse_ordered(["jitrun", "a.o", "-Wl,--wrap"]).is_err());
    }

    #[test]
    fn undefined_symbols_come_in_the_linker_spellings_too() {
        let (cli, _) = Cli::parse_ordered([
            "jitrun",
            "a.o",
            "-u",
            "f",
            "--undefined=g",
            "-Wl,-u,h,--undefined=i,--wrap,j",
            "-Wl,-undefined=k",
        ])
        .unwrap();
        assert_eq!(cli.undefined, ["f", "g", "h", "i", "k"]);
        assert_eq!(cli.wrap, ["j"]);
        assert!(Cli::parse_ordered(["jitrun", "a.o", "-Wl,-u"]).is_err());
        assert!(Cli::parse_ordered(["jitrun", "a.o", "-Wl,--undefined="]).is_err());
    }

    #[test]
    fn a_link_line_from_a_build_log_is_understood() {
        let (cli, ordered) = Cli::parse_ordered([
            "jitrun",
            "-Wl,-O1",
            "-Wl,-z,relro",
            "-Wl,-z,now",
            "-Wl,--as-needed",
            "a.o",
            "-Wl,--start-group",
            "libx.a",
            "-Wl,--end-group",
            "-Wl,-rpath,/opt/lib",
            "-Wl,--whole-archive",
            "liby.a",
            "-Wl,--no-whole-archive",
            "-Wl,--gc-sections,--build-id=sha1,--hash-style=gnu",
            "-Wl,-E",
            "-Wl,--export-dynamic",
            "-lm",
        ])
        .unwrap();
        assert!(cli.export_dynamic && !cli.no_as_needed);
        assert_eq!(
            ordered,
            [
                Input::File("a.o".into()),
                Input::File("libx.a".into()),
                Input::WholeArchive(true),
                Input::File("liby.a".into()),
                Input::WholeArchive(false),
                Input::Library("m".into()),
            ]
        );
        let (cli, _) = Cli::parse_ordered(["jitrun", "a.o", "-Wl,--no-as-needed"]).unwrap();
        assert!(cli.no_as_needed);
        let (cli, _) =
            Cli::parse_ordered(["jitrun", "a.o", "-Wl,--defsym=base=0x1000,--defsym,other=my_malloc"]).unwrap();
        assert_eq!(cli.defines().unwrap(), std::collections::HashMap::from([("base".to_string(), 0x1000)]));
        assert_eq!(cli.aliases().unwrap(), [("other".to_string(), "my_malloc".to_string())]);
        // What jitrun cannot do as ld would is refused, not ignored.
        for refused in
            ["-Wl,-z,execstack", "-Wl,--defsym=x=y+4", "-Wl,--defsym=x", "-Wl,-rpath", "-Wl,-Bstatic", "-Wl,"]
        {
            assert!(Cli::parse_ordered(["jitrun", "a.o", refused]).is_err(), "{}", refused);
        }
    }

    #[test]
    fn sanitizers_come_as_cc_spells_them() {
        let (cli, _) =
            Cli::parse_ordered(["jitrun", "a.o", "-fsanitize=leak,undefined", "--sanitize", "address"]).unwrap();
        assert_eq!(cli.sanitize, ["leak", "undefined", "address"]);
        assert!(Cli::parse_ordered(["jitrun", "a.o", "-fsanitize=memory"]).is_err());
    }

    #[test]
    fn nostartfiles_makes_the_objects_start_the_entry() {
        let (cli, ordered) = Cli::parse_ordered(["jitrun", "start.o", "-nostartfiles", "--", "-nostartfiles"]).unwrap();
        assert_eq!(cli.entry, "_start");
        assert_eq!(ordered, [Input::File("start.o".into())]);
        assert_eq!(cli.args, ["-nostartfiles"]);
    }

    #[test]
    fn llvm_jitlink_spellings_are_accepted() {
        let (cli, ordered) = Cli::parse_ordered([
            "jitrun",
            "-noexec",
            "-abs",
            "ext=0x1000",
            "-slab-allocate",
            "100Kb",
            "-check=t.s",
            "-entry",
            "start",
            "a.o",
            "--",
            "-noexec",
        ])
        .unwrap();
        assert!(cli.noexec);
        assert_eq!(cli.define, vec!["ext=0x1000"]);
        assert_eq!(cli.check, vec![PathBuf::from("t.s")]);
        assert_eq!(cli.entry, "start");
        assert_eq!(ordered, vec![Input::File("a.o".into())]);
        assert_eq!(cli.args, vec!["-noexec"]);
    }

    #[test]
    fn map_takes_an_optional_value_only_with_equals() {
        use crate::diagnostics::map::MapDestination;
        let (cli, ordered) = Cli::parse_ordered(["jitrun", "--map", "a.o"]).unwrap();
        assert_eq!(cli.map_request(), Some((MapDestination::Default, false)));
        assert_eq!(ordered, vec![Input::File("a.o".into())]);
        let (cli, _) = Cli::parse_ordered(["jitrun", "--map=json", "a.o"]).unwrap();
        assert_eq!(cli.map_request(), Some((MapDestination::Default, true)));
        let (cli, _) = Cli::parse_ordered(["jitrun", "--map=out.map", "--map-format", "json", "a.o"]).unwrap();
        assert_eq!(cli.map_request(), Some((MapDestination::File("out.map".into()), true)));
    }

    #[test]
    fn addresses_parse_in_hex_and_decimal() {
        assert_eq!(parse_address("0x401000"), Ok(0x401000));
        assert_eq!(parse_address("4096"), Ok(4096));
        assert!(parse_address("zz").is_err());
    }

    #[test]
    fn durations_parse_with_units() {
        use std::time::Duration;
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("2 weeks").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn sets_take_integers_and_text() {
        let (cli, _) = Cli::parse_ordered(["jitrun", "a.o", "--set", "mutant_id=17", "--set", "mode=fast"]).unwrap();
        assert_eq!(
            cli.sets().unwrap(),
            vec![
                ("mutant_id".to_string(), GlobalValue::Int(17)),
                ("mode".to_string(), GlobalValue::Bytes(b"fast".to_vec()))
            ]
        );
        let (cli, _) = Cli::parse_ordered(["jitrun", "a.o", "--timeout", "2s"]).unwrap();
        assert!(cli.isolated());
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
