//! The main correctness oracle: C programs from `testdata/c`, built with
//! `cc -c` (gcc) and with `clang-14 -c` under several flag sets, run
//! natively and through jitrun; stdout, stderr and exit status must match
//! byte for byte.

mod common;

/// One test per program and toolchain: `gcc::NAME` and `clang::NAME`.
macro_rules! c_programs {
    ($($test:ident => $file:literal,)*) => {
        mod gcc {
            use super::common;
            $(
                #[test]
                fn $test() {
                    common::check_program_with(common::Toolchain::Gcc, "c", $file, common::C_FLAG_SETS);
                }
            )*
        }
        mod clang {
            use super::common;
            $(
                #[test]
                fn $test() {
                    common::check_program_with(common::Toolchain::Clang, "c", $file, common::CLANG_FLAG_SETS);
                }
            )*
        }
        const LISTED: &[&str] = &[$($file),*];
    };
}

c_programs! {
    abort_call => "abort_call.c",
    argp_version => "argp_version.c",
    argv_env => "argv_env.c",
    atexit_order => "atexit_order.c",
    big_image => "big_image",
    bigbss_aligned => "bigbss_aligned.c",
    bigstruct => "bigstruct.c",
    alarm_pause => "alarm_pause.c",
    common_weak => "common_weak",
    dladdr_names => "dladdr_names.c",
    dlsym_next => "dlsym_next.c",
    dladdr_rdynamic => "dladdr_rdynamic.c",
    fresh_heap => "fresh_heap.c",
    crt_names => "crt_names.c",
    ctor_prio => "ctor_prio",
    errno_strerror => "errno_strerror.c",
    exit_deep => "exit_deep.c",
    exit_nonzero => "exit_nonzero.c",
    fnptr_identity => "fnptr_identity.c",
    frame_pointer_end => "frame_pointer_end.c",
    fnptr_table => "fnptr_table.c",
    fp_environment => "fp_environment.c",
    getline_grow => "getline_grow.c",
    getopt_args => "getopt_args.c",
    ifunc => "ifunc",
    ifunc_environment => "ifunc_environment.c",
    hello => "hello.c",
    init_fini_code => "init_fini_code",
    interp => "interp",
    libgcc_helpers => "libgcc_helpers.c",
    library_names => "library_names.c",
    loaded_objects => "loaded_objects.c",
    malloc_heavy => "malloc_heavy.c",
    math_lm => "math_lm.c",
    one_thread => "one_thread.c",
    own_malloc => "own_malloc.c",
    own_start => "own_start.c",
    phdr_segments => "phdr_segments.c",
    progname => "progname.c",
    qsort_bsearch => "qsort_bsearch.c",
    recursion => "recursion.c",
    section_startstop => "section_startstop",
    segfault => "segfault.c",
    setjmp_longjmp => "setjmp_longjmp.c",
    signal_handler => "signal_handler.c",
    sigaction_onstack => "sigaction_onstack.c",
    static_names => "static_names",
    stdin_eof => "stdin_eof.c",
    stdin_wordfreq => "stdin_wordfreq.c",
    stdio_basic => "stdio_basic.c",
    strings => "strings.c",
    switch_jump => "switch_jump.c",
    symver_refs => "symver_refs.c",
    thread_stack_headroom => "thread_stack_headroom.c",
    threads => "threads.c",
    thread_unwind => "thread_unwind.c",
    tls_gnu2 => "tls_gnu2",
    time_fixed => "time_fixed.c",
    varargs => "varargs.c",
    wrap_symbols => "wrap_symbols",
}

#[test]
fn every_program_in_testdata_c_has_a_test() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(common::testdata().join("c")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if (name.ends_with(".c") || !name.contains('.')) && !LISTED.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "add these to c_programs!: {:?}", missing);
}

/// `big_image` is large enough to be copied and fixed up on several
/// threads (its differential run checks the result): make sure it is.
#[test]
fn a_large_image_is_written_on_several_threads() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("note: one CPU; the image is written on one thread");
        return;
    }
    let dir = common::scratch("big_image_threads");
    let program = common::testdata().join("c/big_image");
    let objects = common::compile(&common::sources(&program), "-O2", &[], &dir);
    let mut args: Vec<std::ffi::OsString> = vec!["-v".into()];
    args.extend(objects.iter().map(|o| o.clone().into_os_string()));
    let out = common::jitrun(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("image written on 2 threads"), "{}", stderr);
    assert_eq!(common::shell_status(&out), 1, "{}", stderr); // (1 + 2 + 5) % 7
}

/// With a replacement allocator preloaded (`LD_PRELOAD`), the program binds
/// `malloc` as a native link does: to the preloaded library's
/// `malloc@GLIBC_2.2.5`, which libc itself uses too. glibc's debugging
/// allocator defines only that non-default version, which an unversioned
/// lookup skips; getline would then grow the program's block with the
/// other allocator and abort.
#[test]
fn a_preloaded_allocator_is_the_programs_allocator_too() {
    let Some(debug_malloc) = ["/lib/x86_64-linux-gnu/libc_malloc_debug.so.0", "/usr/lib64/libc_malloc_debug.so.0"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        eprintln!("note: no libc_malloc_debug.so.0 (glibc before 2.34); skipping");
        return;
    };
    let dir = common::scratch("preloaded-allocator");
    let objects = common::compile(&[common::testdata().join("c/getline_grow.c")], "-O2", &[], &dir);
    let exe = dir.join("a.out");
    common::link_native(&objects, "-O2", false, &[], &[], &exe);
    let run = |cmd: &mut std::process::Command| {
        cmd.env("LD_PRELOAD", debug_malloc).env("GLIBC_TUNABLES", "glibc.malloc.check=1");
        common::run_with(cmd, b"", std::time::Duration::from_secs(20))
    };
    let native = run(&mut std::process::Command::new(&exe));
    let jit = run(common::jitrun_command().arg("--no-crash-handler").args(&objects));
    let diffs = common::output_diffs("getline_grow.c with libc_malloc_debug preloaded", &native, &jit);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}
