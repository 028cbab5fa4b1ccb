//! The image as a value with a lifetime: loading, running and dropping the
//! same objects twice in one process runs every constructor/destructor pair
//! twice, in order, and exceptions work in both loads.

mod common;

use std::process::Command;

#[test]
fn load_run_unload_twice_runs_each_pair_twice() {
    let dir = common::scratch("lifecycle");
    let obj = dir.join("counted.o");
    let src = common::testdata().join("lifecycle/counted.cpp");
    let status = common::cxx_compiler().args(["-c", "-O2", "-fPIC"]).arg(&src).arg("-o").arg(&obj).status().unwrap();
    assert!(status.success());
    let log = dir.join("log.txt");
    std::env::set_var("LIFECYCLE_LOG", &log);
    for round in 1..=2 {
        let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
        linker.add_file(&obj).unwrap();
        let mut image = linker.link().unwrap();
        let status = image.run_main("entry", "counted", &["a".to_string()]).unwrap();
        assert_eq!(status, 3 + 2, "round {}", round);
        drop(image);
    }
    let order = std::fs::read_to_string(&log).unwrap();

    // The same object linked natively, with a main that calls the entry
    // like jitrun does, gives the order of one round.
    let main_src = dir.join("main.cpp");
    std::fs::write(
        &main_src,
        "extern \"C\" int entry(int, char**);\nint main(int, char** argv) { return entry(2, argv); }\n",
    )
    .unwrap();
    let exe = dir.join("native");
    let status = common::cxx_compiler().arg(&main_src).arg(&obj).arg("-o").arg(&exe).status().unwrap();
    assert!(status.success());
    let native_log = dir.join("native.txt");
    let status = Command::new(&exe).env("LIFECYCLE_LOG", &native_log).status().unwrap();
    assert_eq!(status.code(), Some(5));
    let one_round = std::fs::read_to_string(&native_log).unwrap();
    assert_eq!(one_round.len(), 6, "native log: {}", one_round);
    assert_eq!(order, one_round.repeat(2));
}

/// jitrun's own heap reserves address space a little at a time: under a
/// tight limit on it (`ulimit -v`, a program's own `setrlimit`), it still
/// starts, and leaves a program that maps a large block the room it has
/// natively.
#[test]
fn a_tight_address_space_limit_leaves_room_for_the_program() {
    // qemu-user maps the emulated process's memory in its own address
    // space, with its code cache: `ulimit -v` limits qemu, not the
    // program, and 60 MB does not start qemu at all.
    if common::emulation_cannot_show("address-space limits apply to qemu") {
        return;
    }
    let dir = common::scratch("lifecycle-rlimit-as");
    let object = common::compile_source(
        &dir,
        "arena.c",
        r#"#include <stdio.h>
#include <sys/mman.h>
int main(void) {
    /* 64 MiB, as an allocator's arena */
    char *arena = mmap(0, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED) { puts("no arena"); return 1; }
    arena[0] = 1;
    puts("arena mapped");
    return 0;
}
"#,
        "-O2",
    );
    for limit_kib in [60_000, 100_000] {
        let script = format!("ulimit -v {}; exec \"$0\" \"$1\"", limit_kib);
        let out = Command::new("sh")
            .args(["-c", &script])
            .arg(common::jitrun_bin())
            .arg(&object)
            .env("XDG_CACHE_HOME", common::test_cache_home())
            .output()
            .unwrap();
        // Under 60 MB there is no room for the arena (natively neither),
        // but jitrun runs the program, which says so.
        let (status, stdout) = if limit_kib >= 100_000 { (0, "arena mapped\n") } else { (1, "no arena\n") };
        assert_eq!(
            out.status.code(),
            Some(status),
            "ulimit -v {}: {}",
            limit_kib,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), stdout, "ulimit -v {}", limit_kib);
    }
}

#[test]
fn the_loader_names_the_program_for_addresses_in_jitruns_own_code() {
    // dlsym finds jitrun's own dl_iterate_phdr (the program's is jitrun's,
    // which lists the image too); the loader names the executable holding
    // it by _dl_argv[0]. Once the program's arguments had moved into
    // jitrun's argv array, that slot held their count: dladdr gave the
    // file name 0x1, and printing it crashed.
    let dir = common::scratch("lifecycle-loader-argv");
    let object = common::compile_source(
        &dir,
        "names.c",
        r#"#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    Dl_info info;
    if (!dladdr(dlsym(RTLD_DEFAULT, "dl_iterate_phdr"), &info)) { puts("not found"); return 1; }
    printf("%d %s\n", argc, strcmp(info.dli_fname, argv[0]) == 0 ? "named as argv[0]" : info.dli_fname);
    return 0;
}
"#,
        "-O2",
    );
    for args in [&[][..], &["one", "two", "three"][..]] {
        let out = common::jitrun_command().arg(&object).arg("--").args(args).output().unwrap();
        let expected = format!("{} named as argv[0]\n", args.len() + 1);
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0));
    }
}

/// Objects built with `-pg` profile as gcrt1.o makes a native program do:
/// `gmon.out` appears in the working directory at exit, with the calls
/// `mcount` counted (call-graph records, tag 1, one per call site) and a
/// histogram of the code.
#[test]
fn a_program_built_with_pg_writes_gmon_out() {
    let dir = common::scratch("lifecycle-gmon");
    let object = common::compile_source(
        &dir,
        "profiled.c",
        "#include <stdio.h>\n\
         __attribute__((noinline)) static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
         int main(void) { printf(\"%ld\\n\", fib(20)); return 0; }\n",
        "-O1 -pg",
    );
    let out = common::jitrun_command().arg(&object).current_dir(&dir).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "6765\n", "{}", String::from_utf8_lossy(&out.stderr));
    let profile = std::fs::read(dir.join("gmon.out")).expect("gmon.out written at exit");
    assert!(profile.starts_with(b"gmon\x01\0\0\0"), "a gmon.out header: {:?}", &profile[..profile.len().min(8)]);
    // Records after the 20-byte header: 0 histogram (24-byte header with
    // 15-byte dimension and abbreviation, then 2-byte bins), 1 call arc.
    let (mut at, mut bins, mut calls) = (20, 0, 0u64);
    while at < profile.len() {
        let tag = profile[at];
        at += 1;
        match tag {
            0 => {
                let size = u32::from_le_bytes(profile[at + 16..at + 20].try_into().unwrap()) as usize;
                at += 40 + 2 * size;
                bins += size;
            }
            1 => {
                calls += u64::from(u32::from_le_bytes(profile[at + 16..at + 20].try_into().unwrap()));
                at += 20;
            }
            other => panic!("unexpected gmon.out record {other} at {at}"),
        }
    }
    assert!(bins > 0, "no histogram");
    // fib(20) makes 21,891 calls; one more is main's, from jitrun's entry
    // trampoline, which lies in the image's code (natively main's caller,
    // libc, lies outside the profiled range).
    assert_eq!(calls, 21_892, "calls counted by mcount");
}

/// The program starts without an alternate signal stack, as natively,
/// although jitrun's crash handler (on by default) gave the main thread
/// one: asked, `sigaltstack` says "disabled"; a stack the program installs
/// is its own, and reported back as such.
#[test]
fn the_program_sees_no_alternate_signal_stack_until_it_installs_one() {
    let dir = common::scratch("lifecycle-sigaltstack");
    let object = common::compile_source(
        &dir,
        "altstack.c",
        "#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n\
         int main(void) {\n\
           stack_t old, mine = { .ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0 };\n\
           sigaltstack(NULL, &old);\n\
           printf(\"at start: flags %d size %zu null %d\\n\", old.ss_flags, old.ss_size, old.ss_sp == NULL);\n\
           sigaltstack(&mine, &old);\n\
           printf(\"replaced: flags %d size %zu\\n\", old.ss_flags, old.ss_size);\n\
           sigaltstack(NULL, &old);\n\
           printf(\"now: flags %d size %zu ours %d\\n\", old.ss_flags, old.ss_size, old.ss_sp == mine.ss_sp);\n\
           return 0;\n\
         }\n",
        "-O2",
    );
    let native = dir.join("native");
    common::run_checked(common::cc().arg(&object).arg("-o").arg(&native));
    let expected = Command::new(&native).output().unwrap();
    let ours = common::jitrun_command().arg(&object).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&expected.stdout));
    assert!(String::from_utf8_lossy(&expected.stdout).starts_with("at start: flags 2 size 0 null 1\n"));
}

/// A program with its own strict allocator, linked from inputs large
/// enough that jitrun parses them on helper threads: its `exit()` frees
/// nothing it did not allocate. (`std::thread` registered a thread-local
/// destructor on jitrun's main thread, with a node from glibc's malloc that
/// glibc's `exit()` then gave to the program's `free`: bash aborted with
/// "free: called with unallocated block" at every exit.)
#[test]
fn a_programs_own_allocator_sees_no_foreign_block_at_exit() {
    let dir = common::scratch("lifecycle-own-allocator-exit");
    let main = common::compile_source(
        &dir,
        "main.c",
        "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n\
         static char arena[1 << 20]; static size_t used;\n\
         void *malloc(size_t n) { size_t need = (n + 31) & ~(size_t)15; if (used + need > sizeof arena) return 0;\n\
           char *p = arena + used; used += need; *(size_t *)p = 0x5eed; return p + 16; }\n\
         void free(void *p) { if (!p) return; char *h = (char *)p - 16;\n\
           if (h < arena || h >= arena + sizeof arena || *(size_t *)h != 0x5eed) {\n\
             write(2, \"free: foreign block\\n\", 20); abort(); } }\n\
         void *calloc(size_t a, size_t b) { void *p = malloc(a * b); if (p) memset(p, 0, a * b); return p; }\n\
         void *realloc(void *p, size_t n) { void *q = malloc(n); if (p && q) memcpy(q, p, n); free(p); return q; }\n\
         extern char t1[], t2[], t3[], t4[];\n\
         int main(void) { char *s = strdup(\"x\"); free(s); return t1[0] + t2[0] + t3[0] + t4[0] - 4; }\n",
        "-O2",
    );
    let mut inputs = vec![main];
    for i in 1..=4 {
        let source = format!("char t{i}[600000] = {{1}};\n");
        inputs.push(common::compile_source(&dir, &format!("t{i}.c"), &source, "-O2"));
    }
    let out = common::jitrun(&inputs);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// When glibc's main heap is not one range from the start of the break
/// area (the break could not grow: a mapping sat in its way, and glibc
/// took memory elsewhere), jitrun leaves the heap as it is before the
/// program runs. It read the range below the break as the heap and
/// crashed: an image built without `-fPIE`, placed by `MAP_32BIT` right
/// above a break area the kernel had randomized there, did that to a CI
/// run. Here a preloaded library's constructor blocks the break.
#[test]
fn a_heap_in_two_ranges_is_left_as_it_is() {
    let dir = common::scratch("lifecycle-heap-in-two-ranges");
    let blocker = common::compile_source(
        &dir,
        "block_the_break.c",
        "#define _GNU_SOURCE\n#include <stdint.h>\n#include <stdlib.h>\n#include <sys/mman.h>\n#include <unistd.h>\n\
         static void *kept[64];\n\
         __attribute__((constructor)) static void block_the_break(void) {\n\
           free(malloc(1));\n\
           uintptr_t page = sysconf(_SC_PAGESIZE), above = ((uintptr_t)sbrk(0) + page - 1) & -page;\n\
           if (mmap((void *)above, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)above) abort();\n\
           for (int i = 0; i < 64; i++) kept[i] = malloc(64 << 10);\n\
         }\n",
        "-O2 -fPIC",
    );
    let preload = dir.join("block_the_break.so");
    common::run_checked(common::cc().arg("-shared").arg(&blocker).arg("-o").arg(&preload));
    let hello = common::compile_source(
        &dir,
        "hello.c",
        "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
        "-O2",
    );
    let out = common::run_with(
        common::jitrun_command()
            .arg(&hello)
            .env("LD_PRELOAD", &preload)
            .env("RUST_LOG", "jitrun::host::glibc_heap=debug"),
        b"",
        std::time::Duration::from_secs(20),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!((common::shell_status(&out), out.stdout.as_slice()), (0, &b"hello\n"[..]), "{}", stderr);
    assert!(stderr.contains("left as it is: Unexpected(\"the main arena is not one range"), "{}", stderr);
}
