//! Code built with `-fopenmp` and `-fsanitize=...` (`testdata/sanitizers`):
//! jitrun loads the runtime the compiler driver links for each flag, and
//! restarts itself with the address and thread sanitizers' runtimes
//! preloaded, which must come first. Each program is linked natively with
//! the same flag and compared with the native run: byte for byte where the
//! output is deterministic; for sanitizer reports, which name process ids,
//! addresses and (natively only) the executable's frames, by exit status
//! and the report's headline.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{
    clang_available, compile, compile_with, jitrun_bin, jitrun_command, output_diffs, run_checked, run_with, scratch,
    testdata, Toolchain,
};

/// The native executable and the object of `testdata/sanitizers/NAME`,
/// built by gcc with `flags` (passed to the native link too, as a user would).
fn build(name: &str, flags: &str) -> (PathBuf, PathBuf) {
    build_from(Toolchain::Gcc, "sanitizers", name, flags)
}

/// [`build`] for `testdata/SUITE/NAME`, compiled and linked by `toolchain`.
/// Each call builds in a directory of its own: tests running at the same
/// time build the same program (a shared directory was emptied and rebuilt
/// under a test still running its executable).
fn build_from(toolchain: Toolchain, suite: &str, name: &str, flags: &str) -> (PathBuf, PathBuf) {
    static BUILDS: AtomicUsize = AtomicUsize::new(0);
    let build = BUILDS.fetch_add(1, Ordering::Relaxed);
    let label = format!("{}-{}-{:?}-{}", name.replace('.', "_"), flags.replace([' ', '='], "_"), toolchain, build);
    let dir = scratch(&format!("sanitizers-{}", label));
    let source = testdata().join(suite).join(name);
    let object = compile_with(toolchain, &[source], &format!("-g {}", flags), &[], &dir).remove(0);
    let exe = dir.join("a.out");
    let mut driver = toolchain.compiler(name.ends_with(".cpp"));
    run_checked(driver.args(flags.split_whitespace()).arg(&object).arg("-o").arg(&exe));
    (exe, object)
}

fn run(command: &mut Command) -> Output {
    run_with(command, b"", Duration::from_secs(60))
}

fn native(exe: &PathBuf, args: &[&str]) -> Output {
    run(Command::new(exe).args(args))
}

fn jitrun(jit_args: &[&str], object: &PathBuf, args: &[&str]) -> Output {
    run(jitrun_command().args(jit_args).arg(object).arg("--").args(args))
}

/// Runs the native build and jitrun with `args`; fails on any difference
/// in stdout, stderr or exit status; returns jitrun's output.
fn same_as_native(what: &str, exe: &PathBuf, object: &PathBuf, args: &[&str]) -> Output {
    let (native, jit) = (native(exe, args), jitrun(&[], object, args));
    let diffs = output_diffs(what, &native, &jit);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    jit
}

/// The threads a sanitizer report names (`thread T0`, `Thread T1 (tid=`,
/// `main thread`), in order, without their ids.
fn thread_names(stderr: &[u8]) -> Vec<String> {
    let text = text(stderr);
    let mut names = Vec::new();
    for line in text.lines() {
        for (at, _) in line.match_indices("hread ") {
            let rest = &line[at + "hread ".len()..];
            let name: String = rest.split([' ', ':']).next().unwrap_or("").to_string();
            let named =
                rest.strip_prefix(&name).is_some_and(|after| after.starts_with(" (") && !after.starts_with(" (tid"));
            names.push(if named { format!("{} (named)", name) } else { name });
        }
    }
    names
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The sanitizer report's headline (`ERROR: AddressSanitizer: ...` without
/// the process id and addresses): the first `ERROR:` or `WARNING:` line
/// naming a sanitizer, cut where addresses and ids begin.
fn headline(stderr: &[u8]) -> String {
    let text = text(stderr);
    let start_of = |l: &str| l.find("ERROR: ").or_else(|| l.find("WARNING: "));
    let line = text.lines().find(|l| l.contains("Sanitizer:") && start_of(l).is_some()).unwrap_or("");
    let line = &line[start_of(line).unwrap_or(0)..];
    let cuts = [" on address", " on unknown address", " (pid", " on 0x"];
    let end = cuts.iter().filter_map(|cut| line.find(cut)).min().unwrap_or(line.len());
    line[..end].to_string()
}

#[test]
fn openmp_code_gets_libgomp() {
    let (exe, object) = build("openmp_sum.c", "-O2 -fopenmp");
    let jit = same_as_native("openmp_sum.c", &exe, &object, &[]);
    assert_eq!(text(&jit.stdout), "sum 5000050000, threads ran\n");
}

#[test]
fn clang_openmp_code_gets_llvms_libomp() {
    if !clang_available() {
        return;
    }
    let (exe, object) = build_from(Toolchain::Clang, "sanitizers", "openmp_sum.c", "-O2 -fopenmp");
    let (native, jit) = (native(&exe, &[]), jitrun(&["-v"], &object, &[]));
    assert_eq!(jit.stdout, native.stdout, "{}", text(&jit.stderr));
    assert_eq!(text(&jit.stdout), "sum 5000050000, threads ran\n");
    assert!(jit.status.success());
    // `omp_*` too came from libomp: libgomp's would not know its threads.
    let log = text(&jit.stderr);
    assert!(!log.contains("libgomp"), "{}", log);
}

#[test]
fn undefined_behaviour_sanitizer_reports_and_goes_on() {
    for (toolchain, flags) in with_clang(&[
        (Toolchain::Gcc, "-O0 -fsanitize=undefined"),
        (Toolchain::Gcc, "-O2 -fsanitize=undefined"),
        (Toolchain::Clang, "-O1 -fsanitize=undefined"),
    ]) {
        let (exe, object) = build_from(toolchain, "sanitizers", "ubsan_overflow.c", flags);
        let jit = same_as_native(&format!("ubsan_overflow.c [{:?} {}]", toolchain, flags), &exe, &object, &[]);
        assert!(text(&jit.stderr).contains("runtime error: signed integer overflow"), "{}", text(&jit.stderr));
        // Clang's code gets clang's runtime, which adds a SUMMARY line.
        let summary = text(&jit.stderr).contains("SUMMARY: UndefinedBehaviorSanitizer");
        assert_eq!(summary, toolchain == Toolchain::Clang, "{}", text(&jit.stderr));
        // With stack traces, the image's frames are named, with lines.
        let traced = |command: &mut Command| run(command.env("UBSAN_OPTIONS", "print_stacktrace=1"));
        let native = traced(&mut Command::new(&exe));
        let jit = traced(jitrun_command().arg(&object));
        let frames = source_frames(&jit.stderr, &["ubsan_overflow.c"]);
        assert!(frames.iter().any(|f| f.starts_with(" in main ")), "{}", text(&jit.stderr));
        assert_eq!(frames, source_frames(&native.stderr, &["ubsan_overflow.c"]), "{}", text(&jit.stderr));
    }
}

/// `cases` without clang's when clang-14 is not installed.
fn with_clang<'a>(cases: &[(Toolchain, &'a str)]) -> Vec<(Toolchain, &'a str)> {
    let clang = clang_available();
    cases.iter().copied().filter(|&(toolchain, _)| toolchain == Toolchain::Gcc || clang).collect()
}

#[test]
fn address_sanitizer_runs_first_and_finds_what_it_finds_natively() {
    for (toolchain, flags) in with_clang(&[
        (Toolchain::Gcc, "-O0 -fsanitize=address"),
        (Toolchain::Gcc, "-O2 -fsanitize=address,undefined"),
        (Toolchain::Clang, "-O1 -fsanitize=address"),
    ]) {
        let (exe, object) = build_from(toolchain, "sanitizers", "asan_heap.c", flags);
        // A clean run: identical, and the program sees no LD_PRELOAD.
        let jit_clean = same_as_native(&format!("asan_heap.c [{}]", flags), &exe, &object, &[]);
        assert_eq!(text(&jit_clean.stdout), "4 9\nLD_PRELOAD unset\n");
        for (args, status, report) in [
            (&["overflow"][..], 1, "ERROR: AddressSanitizer: heap-buffer-overflow"),
            (&["leak"][..], 1, "ERROR: LeakSanitizer: detected memory leaks"),
        ] {
            let (native, jit) = (native(&exe, args), jitrun(&[], &object, args));
            let what = format!("asan_heap.c {:?} [{}]", args, flags);
            assert_eq!(native.status.code(), Some(status), "{}: native\n{}", what, text(&native.stderr));
            if jit.status.code() != Some(status) {
                // For the record: what the program printed, and jitrun's own
                // account of the same run again (`-v`).
                let again = jitrun(&["-v"], &object, args);
                panic!(
                    "{}: jitrun exited {:?}, not {}\nstdout: {}\nstderr: {}\nagain with -v, exit {:?}:\n{}",
                    what,
                    jit.status.code(),
                    status,
                    text(&jit.stdout),
                    text(&jit.stderr),
                    again.status.code(),
                    text(&again.stderr)
                );
            }
            assert_eq!(headline(&native.stderr), report, "{}", what);
            assert_eq!(headline(&jit.stderr), report, "{}: {}", what, text(&jit.stderr));
            assert_eq!(jit.stdout, native.stdout, "{}", what);
            // The threads a report names, as natively (the main thread
            // without a name: jitrun names the process as exec would).
            assert_eq!(thread_names(&jit.stderr), thread_names(&native.stderr), "{}", what);
            // Frames in the image are named: jitrun lists it as a module.
            assert!(text(&jit.stderr).contains(" in main "), "{}: {}", what, text(&jit.stderr));
            // The error's stack is unwound (with unwind info, as natively)
            // through jitrun's start-up frames: no frame-pointer guesses.
            // Not a leak's: its stack is the allocation's, which ASan walks
            // by frame pointers, and `main` built without them keeps
            // `argv[1]` in %rbp: when that string is 8-byte aligned (it
            // depends on the environment's size) the walk reads it as a
            // frame and prints a garbage `<unknown module>` frame, natively
            // too.
            if args == ["leak"] {
                continue;
            }
            let stderr = text(&jit.stderr);
            let first_stack =
                stderr.lines().skip_while(|l| !l.starts_with("    #")).take_while(|l| l.starts_with("    #"));
            let frames: Vec<&str> = first_stack.collect();
            assert!(
                !frames.is_empty() && frames.iter().all(|f| !f.contains("<unknown module>")),
                "{}: {}",
                what,
                stderr
            );
        }
        if flags.contains("-O2") {
            // Each isolated run is a child of the restarted jitrun.
            let jit = jitrun(&["--repeat", "3", "--isolate"], &object, &[]);
            assert_eq!(text(&jit.stdout), "4 9\nLD_PRELOAD unset\n".repeat(3));
            assert!(jit.status.success() && jit.stderr.is_empty(), "{}", text(&jit.stderr));
        }
    }
}

/// The frames of a sanitizer report in `files` (`in FUNCTION FILE:LINE`,
/// without the frame's address) and its `SUMMARY:` line.
fn source_frames(stderr: &[u8], files: &[&str]) -> Vec<String> {
    let text = text(stderr);
    let frames = text.lines().filter(|l| l.trim_start().starts_with('#') && files.iter().any(|f| l.contains(f)));
    let summary = text.lines().filter(|l| l.starts_with("SUMMARY:"));
    frames.filter_map(|l| l.find(" in ").map(|at| l[at..].to_string())).chain(summary.map(str::to_string)).collect()
}

#[test]
fn a_leak_whose_only_pointer_was_mains_local_is_reported() {
    for (toolchain, flags) in with_clang(&[
        (Toolchain::Gcc, "-O0 -fsanitize=address"),
        (Toolchain::Gcc, "-O2 -fsanitize=address"),
        (Toolchain::Clang, "-O0 -fsanitize=address"),
        (Toolchain::Clang, "-O2 -fsanitize=address"),
    ]) {
        let (exe, object) = build_from(toolchain, "sanitizers", "leak_in_main.c", flags);
        let what = format!("leak_in_main.c [{:?} {}]", toolchain, flags);
        let native = native(&exe, &[]);
        assert_eq!(native.status.code(), Some(1), "{}: native\n{}", what, text(&native.stderr));
        // The scan is conservative: a stale copy makes it miss the leak now
        // and then, so several runs must all report it.
        for _ in 0..3 {
            let jit = jitrun(&[], &object, &[]);
            assert_eq!(jit.status.code(), Some(1), "{}: jitrun\n{}", what, text(&jit.stderr));
            assert_eq!(headline(&jit.stderr), headline(&native.stderr), "{}", what);
        }
    }
}

/// LeakSanitizer alone (`gcc -fsanitize=leak`) instruments nothing, so the
/// objects cannot ask for its runtime: `-fsanitize=leak` on jitrun's
/// command line does, as on cc's. Without it the program runs unchecked.
#[test]
fn leak_sanitizer_asked_for_on_the_command_line_reports_as_natively() {
    for flags in ["-O0 -fsanitize=leak", "-O2 -fsanitize=leak"] {
        let (exe, object) = build("lsan_standalone.c", flags);
        let native = native(&exe, &[]);
        assert_eq!(native.status.code(), Some(23), "{}: native\n{}", flags, text(&native.stderr));
        for spelling in ["-fsanitize=leak", "--sanitize=leak"] {
            let jit = jitrun(&[spelling], &object, &[]);
            assert_eq!(jit.status.code(), Some(23), "{} {}: jitrun\n{}", flags, spelling, text(&jit.stderr));
            assert_eq!(headline(&jit.stderr), headline(&native.stderr), "{} {}", flags, spelling);
            assert_eq!(
                source_frames(&jit.stderr, &["lsan_standalone.c"]),
                source_frames(&native.stderr, &["lsan_standalone.c"]),
                "{} {}:\n{}",
                flags,
                spelling,
                text(&jit.stderr)
            );
            assert_eq!(jit.stdout, native.stdout, "{} {}", flags, spelling);
        }
        let unchecked = jitrun(&[], &object, &[]);
        assert_eq!(unchecked.status.code(), Some(0), "{}: {}", flags, text(&unchecked.stderr));
        assert!(unchecked.stderr.is_empty(), "{}: {}", flags, text(&unchecked.stderr));
    }
}

#[test]
fn address_sanitizer_frames_name_source_lines_across_objects() {
    for (toolchain, flags) in with_clang(&[
        (Toolchain::Gcc, "-g -O1 -fsanitize=address"),
        (Toolchain::Gcc, "-g -gz -O1 -fsanitize=address"),
        (Toolchain::Clang, "-g -O1 -fsanitize=address"),
    ]) {
        let dir = scratch(&format!("sanitizers-asan-lines-{:?}-{}", toolchain, flags.replace([' ', '='], "_")));
        let sources = ["asan_lines_main.c", "asan_lines_sum.c"].map(|name| testdata().join("sanitizers").join(name));
        let objects = compile_with(toolchain, &sources, flags, &[], &dir);
        let exe = dir.join("a.out");
        run_checked(toolchain.compiler(false).args(flags.split_whitespace()).args(&objects).arg("-o").arg(&exe));
        let jit = run(jitrun_command().args(&objects).args(["--", "overflow"]));
        let native = native(&exe, &["overflow"]);
        assert_eq!(jit.status.code(), Some(1), "{}", text(&jit.stderr));
        let files = ["asan_lines_main.c", "asan_lines_sum.c"];
        let frames = source_frames(&jit.stderr, &files);
        // sum_first's read, called from main; main's malloc; the summary.
        assert_eq!(frames.len(), 4, "[{}] {}", flags, text(&jit.stderr));
        assert!(frames[0].starts_with(" in sum_first ") && frames[0].contains("asan_lines_sum.c:10"), "{:?}", frames);
        assert_eq!(frames, source_frames(&native.stderr, &files), "[{}] {}", flags, text(&jit.stderr));
    }
}

#[test]
fn the_programs_own_sanitizer_options_and_suppressions_count() {
    for (toolchain, name, flags, args, status) in [
        (Toolchain::Gcc, "hooks_asan.c", "-O0 -fsanitize=address", &[][..], 0),
        (Toolchain::Gcc, "hooks_asan.c", "-O0 -fsanitize=address", &["overflow"][..], 42),
        (Toolchain::Clang, "hooks_asan.c", "-O0 -fsanitize=address", &["overflow"][..], 42),
        (Toolchain::Gcc, "hooks_tsan.c", "-O1 -fsanitize=thread", &[][..], 5),
        (Toolchain::Clang, "hooks_tsan.c", "-O1 -fsanitize=thread", &[][..], 5),
        (Toolchain::Gcc, "hooks_ubsan.c", "-O1 -fsanitize=undefined", &[][..], 9),
        (Toolchain::Clang, "hooks_ubsan.c", "-O1 -fsanitize=undefined", &[][..], 9),
    ] {
        if toolchain == Toolchain::Clang && !clang_available() {
            continue;
        }
        let (exe, object) = build_from(toolchain, "sanitizers", name, flags);
        let (native, jit) = (native(&exe, args), jitrun(&[], &object, args));
        let what = format!("{} {:?} [{:?} {}]", name, args, toolchain, flags);
        assert_eq!(native.status.code(), Some(status), "{}: native\n{}", what, text(&native.stderr));
        assert_eq!(jit.status.code(), Some(status), "{}: jitrun\n{}", what, text(&jit.stderr));
        assert_eq!(jit.stdout, native.stdout, "{}", what);
        assert_eq!(headline(&jit.stderr), headline(&native.stderr), "{}", what);
        // The suppressed leak is not reported (and the program saw no
        // variable of jitrun's restarts: its output is the native one).
        assert!(!text(&jit.stderr).contains("LeakSanitizer"), "{}: {}", what, text(&jit.stderr));
        if name == "hooks_asan.c" && args.is_empty() {
            // Isolated runs: the parent, which ran none of the program,
            // checks its own leaks at exit without the program's hooks
            // (its code is gone by then).
            let jit = jitrun(&["--isolate", "--repeat", "2"], &object, args);
            assert_eq!(jit.status.code(), Some(0), "{}: isolated\n{}", what, text(&jit.stderr));
            assert_eq!(jit.stdout, native.stdout.repeat(2), "{}: isolated", what);
        }
    }
    // The answers travel in JITRUN_HOOK_* variables, which count only in
    // jitrun's own restart: from elsewhere they change nothing.
    let (_, object) = build("asan_heap.c", "-O0 -fsanitize=address");
    let mut stray = jitrun_command();
    stray.env("JITRUN_HOOK___asan_default_options", "exitcode=99").arg(&object).args(["--", "overflow"]);
    assert_eq!(run(&mut stray).status.code(), Some(1));
    // A program from a pipe cannot be read again after the runtime started:
    // the program still runs, with a warning that its options are not used.
    let (_, object) = build_from(Toolchain::Gcc, "sanitizers", "hooks_ubsan.c", "-O1 -fsanitize=undefined");
    let piped =
        run_with(jitrun_command().arg("/dev/stdin"), &std::fs::read(&object).expect("object"), Duration::from_secs(60));
    assert_eq!(piped.status.code(), Some(0), "{}", text(&piped.stderr));
    assert!(
        text(&piped.stderr).contains("warning: the program's __ubsan_default_options cannot take effect"),
        "{}",
        text(&piped.stderr)
    );
}

#[test]
fn a_program_that_closes_descriptors_keeps_its_descriptors_and_its_reports() {
    // The symbolizer's file sits far above descriptor 3, and is listed only
    // while it is still there: a pipe in its place would block the
    // symbolizer (jitrun hung), and the program's first open() got 4.
    for (toolchain, flags) in
        with_clang(&[(Toolchain::Gcc, "-O0 -fsanitize=address"), (Toolchain::Clang, "-O0 -fsanitize=address")])
    {
        let (exe, object) = build_from(toolchain, "sanitizers", "asan_closes_fds.c", flags);
        let (native, jit) = (native(&exe, &[]), jitrun(&[], &object, &[]));
        let what = format!("asan_closes_fds.c [{:?}]", toolchain);
        assert_eq!(jit.status.code(), Some(1), "{}: {}", what, text(&jit.stderr));
        assert_eq!(jit.stdout, native.stdout, "{}", what);
        assert_eq!(text(&jit.stdout), "first descriptor 3\n");
        assert_eq!(headline(&jit.stderr), headline(&native.stderr), "{}", what);
        assert_eq!(
            source_frames(&jit.stderr, &["asan_closes_fds.c"]),
            source_frames(&native.stderr, &["asan_closes_fds.c"]),
            "{}",
            what
        );
        // Under the usual limit of 1024 open files it sits at 1000: the
        // program still gets 3 first (its loop closes 1000, so this
        // report has no names; the run still ends as natively).
        let limited = format!("ulimit -n 1024 && exec {} {}", jitrun_bin().display(), object.display());
        let jit = run(Command::new("sh").args(["-c", &limited]));
        assert_eq!(jit.status.code(), Some(1), "{}: {}", what, text(&jit.stderr));
        assert_eq!(text(&jit.stdout), "first descriptor 3\n", "{}", what);
    }
}

#[test]
fn a_failed_assertion_in_sanitized_code_is_reported_as_without_a_sanitizer() {
    // The process dies from SIGABRT (134 in a shell) as natively.
    // jitrun's crash report unwinds with its own unwinder, whose tables are
    // sorted before the program runs (allocating in the SIGABRT handler
    // drew ThreadSanitizer's "signal-unsafe call" reports), and names
    // source lines under a sanitizer too.
    for flags in ["-O1 -fsanitize=thread", "-O1 -fsanitize=address", "-O1 -fsanitize=undefined"] {
        let (exe, object) = build("assert_fails.c", flags);
        let (native, jit) = (native(&exe, &[]), jitrun(&[], &object, &[]));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(native.status.signal(), Some(libc::SIGABRT), "{}", flags);
        assert_eq!(jit.status.signal(), Some(libc::SIGABRT), "{}: {}", flags, text(&jit.stderr));
        let stderr = text(&jit.stderr);
        assert!(stderr.contains("Assertion `values[0] != 7' failed."), "{}: {}", flags, stderr);
        assert!(!stderr.contains("Sanitizer"), "{}: {}", flags, stderr);
        assert!(stderr.contains("check+") && stderr.contains("assert_fails.c:8\n"), "{}: {}", flags, stderr);
    }
}

#[test]
fn sanitized_code_runs_through_a_link_cache_directory() {
    // A link made for the cache gets an address far from the libraries
    // (`Placement::Repeatable`), where ThreadSanitizer keeps no program
    // memory: it stopped the run ("mmap at bad address"). Sanitized links
    // are never stored, so they are placed as without a cache.
    for flags in ["-O1 -pthread -fsanitize=thread", "-O1 -pthread -fsanitize=address"] {
        let (exe, object) = build("clean_threads.c", flags);
        let cache = object.with_file_name("link-cache");
        let native = native(&exe, &[]);
        assert_eq!((text(&native.stdout).as_str(), native.status.code()), ("counter 5000\n", Some(0)), "{flags}");
        for run in ["first", "second"] {
            let jit = jitrun(&["--link-cache", cache.to_str().unwrap()], &object, &[]);
            let diffs = output_diffs(&format!("{flags}, {run} run"), &native, &jit);
            assert!(diffs.is_empty(), "{}", diffs.join("\n"));
        }
    }
}

#[test]
fn address_sanitizer_stays_preloaded_when_more_static_tls_takes_another_restart() {
    let (exe, object) = build_from(Toolchain::Gcc, "tls", "big_static_tls.c", "-O1 -pthread -fsanitize=address");
    let jit = same_as_native("big_static_tls.c", &exe, &object, &[]);
    assert_eq!(text(&jit.stdout), "thread start 1 6\nmain start 0 5\n");
}

#[test]
fn address_sanitizer_wraps_the_cxx_runtime_it_finds_at_start() {
    let (exe, object) = build("asan_exceptions.cpp", "-O1 -fsanitize=address");
    let jit = same_as_native("asan_exceptions.cpp", &exe, &object, &[]);
    assert!(text(&jit.stdout).ends_with("total 52\n"), "{}", text(&jit.stdout));
}

#[test]
fn address_sanitizer_can_unwind_at_every_malloc() {
    // `fast_unwind_on_malloc=0` makes each malloc walk the stack with
    // libgcc_s's unwinder, which must find the image's frames without
    // taking a lock that its own mallocs would take again (it hung).
    for name in ["asan_heap.c", "asan_exceptions.cpp"] {
        let (exe, object) = build(name, "-O1 -fsanitize=address");
        let slow = |command: &mut Command| {
            run_with(command.env("ASAN_OPTIONS", "fast_unwind_on_malloc=0"), b"", Duration::from_secs(60))
        };
        let native = slow(&mut Command::new(&exe));
        let jit = slow(jitrun_command().arg(&object));
        let diffs = output_diffs(&format!("{} with fast_unwind_on_malloc=0", name), &native, &jit);
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }
}

#[test]
fn thread_sanitizer_reports_the_programs_race_and_nothing_of_jitruns() {
    let (exe, object) = build("tsan_race.c", "-O1 -fsanitize=thread");
    let (native, jit) = (native(&exe, &[]), jitrun(&[], &object, &[]));
    assert_eq!(native.status.code(), Some(66), "{}", text(&native.stderr));
    assert_eq!(jit.status.code(), Some(66), "{}", text(&jit.stderr));
    assert_eq!(jit.stdout, native.stdout);
    assert_eq!(text(&jit.stdout), "joined; TSAN_OPTIONS unset\n");
    // Which thread sees the race first (T1 or T2) is up to the scheduler:
    // the same names, in any order (no T3 of jitrun's).
    let sorted_names = |out: &Output| {
        let mut names = thread_names(&out.stderr);
        names.sort();
        names
    };
    assert_eq!(sorted_names(&jit), sorted_names(&native), "{}", text(&jit.stderr));
    let reports = |out: &Output| text(&out.stderr).matches("WARNING: ThreadSanitizer:").count();
    assert_eq!(headline(&jit.stderr), "WARNING: ThreadSanitizer: data race");
    assert_eq!(reports(&jit), reports(&native), "{}", text(&jit.stderr));
    assert!(text(&jit.stderr).contains("#0 work "), "frames in the image are named: {}", text(&jit.stderr));
    // ... and its globals, as natively.
    let location = "Location is global 'counter' of size 4";
    assert!(text(&native.stderr).contains(location), "{}", text(&native.stderr));
    assert!(text(&jit.stderr).contains(location), "{}", text(&jit.stderr));
    // The user's own options reach the program unchanged.
    let mut with_options = jitrun_command();
    with_options.env("TSAN_OPTIONS", "exitcode=7").arg(&object);
    let jit = run(&mut with_options);
    assert_eq!(jit.status.code(), Some(7), "{}", text(&jit.stderr));
    assert_eq!(text(&jit.stdout), "joined; TSAN_OPTIONS exitcode=7\n");
}

#[test]
fn thread_sanitizer_sees_a_race_through_an_uninstrumented_library() {
    let dir = scratch("sanitizers-tsan-library");
    let library = dir.join("libcopy.so");
    let copy = dir.join("copy.c");
    std::fs::write(
        &copy,
        "#include <string.h>\nvoid copy_bytes(char *to, const char *from, int n) { memcpy(to, from, n); }\n",
    )
    .unwrap();
    run_checked(common::cc().args(["-shared", "-fPIC", "-O1"]).arg(&copy).arg("-o").arg(&library));
    let object =
        compile(&[testdata().join("sanitizers/tsan_library_race.c")], "-g -O1 -fsanitize=thread", &[], &dir).remove(0);
    let exe = dir.join("a.out");
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    run_checked(
        common::cc()
            .arg("-fsanitize=thread")
            .arg(&object)
            .arg("-L")
            .arg(&dir)
            .args(["-lcopy", &rpath])
            .arg("-o")
            .arg(&exe),
    );
    let native = native(&exe, &[]);
    let dir_arg = dir.display().to_string();
    let jit = run(jitrun_command().arg(&object).args(["-L", &dir_arg, "-lcopy"]));
    assert_eq!(native.status.code(), Some(66), "{}", text(&native.stderr));
    assert_eq!(jit.status.code(), Some(66), "{}", text(&jit.stderr));
    assert_eq!(headline(&jit.stderr), "WARNING: ThreadSanitizer: data race");
    assert_eq!(jit.stdout, native.stdout);
}

#[test]
fn a_sanitizer_that_handles_crashes_keeps_them() {
    for (flags, status, report) in [
        ("-O0 -fsanitize=address", 1, Some("ERROR: AddressSanitizer: SEGV")),
        ("-O1 -fsanitize=thread", 66, Some("ERROR: ThreadSanitizer: SEGV")),
        ("-O0 -fsanitize=undefined", 139, None),
    ] {
        let (exe, object) = build("null_read.c", flags);
        let (native, jit) = (native(&exe, &[]), jitrun(&[], &object, &[]));
        assert_eq!(common::shell_status(&native), status, "{}: native\n{}", flags, text(&native.stderr));
        assert_eq!(common::shell_status(&jit), status, "{}: jitrun\n{}", flags, text(&jit.stderr));
        assert_eq!(text(&jit.stdout), "before\n");
        match report {
            Some(report) => {
                assert_eq!(headline(&native.stderr), report, "{}", flags);
                assert_eq!(headline(&jit.stderr), report, "{}: {}", flags, text(&jit.stderr));
                assert!(!text(&jit.stderr).contains("jitrun: the program died"), "{}: {}", flags, text(&jit.stderr));
            }
            // UBSan only names the null load and leaves the signal (and
            // jitrun's crash report) alone.
            None => assert!(text(&jit.stderr).contains("runtime error: load of null pointer"), "{}", text(&jit.stderr)),
        }
    }
}

#[test]
fn a_runtime_that_cannot_come_first_is_one_clear_error() {
    let (_, object) = build("asan_heap.c", "-O0 -fsanitize=address");
    // As if jitrun had restarted itself already and the runtime were still
    // missing (a broken installation): no loop, one line.
    let mut command = jitrun_command();
    command.env("JITRUN_PRELOAD_REEXEC", "LD_PRELOAD").arg(&object);
    let out = run(&mut command);
    assert_eq!(out.status.code(), Some(125));
    let stderr = text(&out.stderr);
    // An object from a pipe cannot be read again after a restart: said so.
    let piped = run_with(jitrun_command().arg("/dev/stdin"), &std::fs::read(&object).unwrap(), Duration::from_secs(60));
    assert_eq!(piped.status.code(), Some(125));
    assert!(
        text(&piped.stderr).starts_with(
            "jitrun: error: jitrun would have to start again, and cannot read /dev/stdin a second time (a pipe, not a file): `__asan_"
        ) && text(&piped.stderr).lines().count() == 1,
        "{}",
        text(&piped.stderr)
    );
    assert!(
        stderr.starts_with("jitrun: error: `__asan_")
            && stderr.contains("is called by code built with -fsanitize=address, whose runtime ")
            && stderr.contains("libasan.so")
            && stderr.lines().count() == 1,
        "{}",
        stderr
    );
}
