//! Diagnostics: crash reports, link maps, run reports, `--check`, perf maps
//! and the GDB JIT interface, checked against what the image really holds
//! (read back through the library API at the same fixed base).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::{jitrun_bin, jitrun_command, run_with, scratch, shell_status, testdata};

fn source(name: &str) -> PathBuf {
    testdata().join("diagnostics").join(name)
}

fn build(name: &str, flags: &str, dir: &Path) -> PathBuf {
    common::compile(&[source(name)], flags, &[], dir).remove(0)
}

fn jitrun(args: &[&str]) -> Output {
    run_with(jitrun_command().args(args), b"", Duration::from_secs(60))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn null_dereference_names_the_function_and_exits_139() {
    for (i, flags) in ["-O0", "-O2"].iter().enumerate() {
        let dir = scratch(&format!("diag-null-{}", i));
        let obj = build("null_deref.c", flags, &dir);
        let out = jitrun(&[path(&obj)]);
        let stderr = text(&out.stderr);
        assert_eq!(shell_status(&out), 139, "{}: {}", flags, stderr);
        assert!(stderr.contains("SIGSEGV") && stderr.contains("fault address 0x0"), "{}: {}", flags, stderr);
        assert!(stderr.contains("pc 0x") && stderr.contains("crash_here+0x"), "{}: {}", flags, stderr);
        assert!(stderr.contains("null_deref.o, .text)"), "{}: {}", flags, stderr);
        // The backtrace goes through the callers, in order.
        let frames: Vec<&str> = stderr.lines().filter(|l| l.contains(" #")).collect();
        let names: Vec<&str> = ["crash_here+", "middle+", "main+"].to_vec();
        assert_eq!(frames.len(), 3, "{}: {}", flags, stderr);
        for (frame, name) in frames.iter().zip(names) {
            assert!(frame.contains(name), "{}: {} should name {}", flags, frame, name);
        }

        let quiet = jitrun(&["--no-crash-handler", path(&obj)]);
        assert_eq!(shell_status(&quiet), 139);
        assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
    }
}

/// Objects built with `-g` get source lines in the report, from their
/// DWARF line tables: in process, in an isolated run, and from an archive
/// member; without `-g`, none.
#[test]
fn crash_reports_give_source_lines_of_objects_built_with_debug_info() {
    for (i, flags) in ["-O0 -g", "-O2 -g", "-O2 -g -ffunction-sections -gdwarf-4"].iter().enumerate() {
        let dir = scratch(&format!("diag-null-lines-{}", i));
        let obj = build("null_deref.c", flags, &dir);
        let archive = dir.join("libcrash.a");
        let archived = Command::new("ar").arg("rcs").arg(&archive).arg(&obj).status().unwrap();
        assert!(archived.success());
        let runs =
            [jitrun(&[path(&obj)]), jitrun(&["--isolate", path(&obj)]), jitrun(&["--whole-archive", path(&archive)])];
        for out in runs {
            let stderr = text(&out.stderr);
            assert_eq!(shell_status(&out), 139, "{}: {}", flags, stderr);
            let frames: Vec<&str> = stderr.lines().filter(|l| l.contains(" #")).collect();
            let expected = ["crash_here+", "middle+", "main+"].into_iter().zip(3..=5);
            assert_eq!(frames.len(), 3, "{}: {}", flags, stderr);
            for (frame, (name, line)) in frames.iter().zip(expected) {
                // The path as the compiler was given it (absolute here).
                let at = format!("/testdata/diagnostics/null_deref.c:{}", line);
                let located = frame.contains(") at /") && frame.ends_with(&at);
                assert!(frame.contains(name) && located, "{}: {} should be {} at ...{}", flags, frame, name, at);
            }
        }
    }
    let dir = scratch("diag-null-no-lines");
    let obj = build("null_deref.c", "-O2", &dir);
    let out = jitrun(&[path(&obj)]);
    assert!(!text(&out.stderr).contains("null_deref.c:"), "{}", text(&out.stderr));
}

#[test]
fn an_isolated_run_reports_its_crash_the_same_way() {
    let dir = scratch("diag-null-isolated");
    let obj = build("null_deref.c", "-O2", &dir);
    let out = jitrun(&["--isolate", path(&obj)]);
    let stderr = text(&out.stderr);
    assert_eq!(shell_status(&out), 139, "{}", stderr);
    assert!(stderr.contains("SIGSEGV") && stderr.contains("crash_here+0x"), "{}", stderr);
    assert!(stderr.contains("null_deref.o, .text)"), "{}", stderr);
    let quiet = jitrun(&["--isolate", "--no-crash-handler", path(&obj)]);
    assert_eq!(shell_status(&quiet), 139);
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
}

#[test]
fn a_crash_in_a_forked_child_prints_nothing_and_waits_for_nothing() {
    let dir = scratch("diag-fork-crash");
    let obj = build("crash_in_forked_child.c", "-O2", &dir);
    let started = std::time::Instant::now();
    let out = jitrun(&[path(&obj)]);
    let stderr = text(&out.stderr);
    assert_eq!(shell_status(&out), 0, "{}", stderr);
    assert_eq!(text(&out.stdout), "child signaled 11\n");
    // As natively: the parent reads how its child died, and the child's
    // stderr (a death test's) holds nothing jitrun wrote.
    assert_eq!(stderr, "");
    // The child does not wait for a crash table being built by a thread
    // that was not forked with it. Such a wait lasts two seconds (crash.rs,
    // `wait_for_table`), so a run that waited cannot come in under them,
    // however idle the machine; and one that did not needs a small part of
    // them, however loaded.
    assert!(started.elapsed() < Duration::from_millis(2000), "took {:?}", started.elapsed());
}

#[test]
fn abort_is_reported_and_exits_134() {
    let dir = scratch("diag-abort");
    let obj = build("aborts.c", "-O2", &dir);
    let out = jitrun(&[path(&obj)]);
    let stderr = text(&out.stderr);
    assert_eq!(shell_status(&out), 134, "{}", stderr);
    assert!(stderr.contains("SIGABRT") && stderr.contains("give_up+0x"), "{}", stderr);
}

/// A crash whose pc is in jitrun's executable says so, where it said
/// "outside the image" as for a library: jitrun's own walk of glibc's
/// heap once crashed before the program started, and the report read like
/// the program's fault. Here the program jumps to the executable's first
/// byte (its ELF header).
#[test]
fn a_crash_in_jitruns_own_code_says_so() {
    use object::{Object, ObjectSegment};
    let executable = std::fs::read(jitrun_bin()).unwrap();
    let start = object::File::parse(&*executable).unwrap().segments().map(|s| s.address()).min().unwrap();
    let dir = scratch("diag-jitruns-own-code");
    let program = format!("int main(void) {{ ((void (*)(void)){:#x}ULL)(); return 0; }}\n", start);
    let obj = common::compile_source(&dir, "jump.c", &program, "-O2");
    let out = jitrun(&[path(&obj)]);
    let stderr = text(&out.stderr);
    // SIGSEGV; SIGILL where that first segment is executable (aarch64's).
    assert!([132, 139].contains(&shell_status(&out)), "{}", stderr);
    assert!(stderr.contains(&format!("pc {:#x} (in jitrun's own code)", start)), "{}", stderr);
}

#[test]
fn the_programs_own_signal_handler_wins() {
    let dir = scratch("diag-own-handler");
    let obj = build("own_handler.c", "-O2", &dir);
    let out = jitrun(&[path(&obj)]);
    assert_eq!(shell_status(&out), 3, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "handled\n");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn an_ignored_sigpipe_stays_ignored_as_across_exec() {
    let dir = scratch("diag-sigpipe");
    let obj = build("sigpipe_disposition.c", "-O2", &dir);
    let exe = dir.join("a.out");
    common::run_checked(common::cc().arg(&obj).arg("-o").arg(&exe));
    // `trap '' PIPE` ignores SIGPIPE for what the shell then runs.
    for ignore in ["", "trap '' PIPE; "] {
        let script = |command: String| format!("{}exec {}", ignore, command);
        let shell =
            |command: String| run_with(Command::new("sh").arg("-c").arg(script(command)), b"", Duration::from_secs(60));
        let native = shell(exe.display().to_string());
        for mode in ["", "--isolate "] {
            let jit = shell(format!("{} {}{}", jitrun_bin().display(), mode, obj.display()));
            assert_eq!(text(&jit.stdout), text(&native.stdout), "{:?} {:?}: {}", ignore, mode, text(&jit.stderr));
        }
        let expected = if ignore.is_empty() { "SIGPIPE default\n" } else { "SIGPIPE ignored\n" };
        assert_eq!(text(&native.stdout), expected);
    }
}

/// Links `objects` in this process at `base` through the library API.
fn link_in_process(objects: &[&Path], base: u64) -> jitrun::Image {
    let mut linker = jitrun::Linker::new(jitrun::LinkOptions { base: Some(base), ..Default::default() });
    for o in objects {
        linker.add_file(o).unwrap();
    }
    linker.link().unwrap()
}

#[test]
fn json_map_matches_the_linked_image_and_is_deterministic() {
    let dir = scratch("diag-map");
    let obj = build("null_deref.c", "-O2", &dir);
    let base = "0x31000000";
    let map_file = dir.join("map.json");
    let out =
        jitrun(&["--noexec", "--base", base, &format!("--map={}", path(&map_file)), "--map-format=json", path(&obj)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let map: serde_json::Value = serde_json::from_slice(&std::fs::read(&map_file).unwrap()).unwrap();

    // `--map=json` with --noexec goes to stdout; the image's layout is the
    // same for the same inputs (library addresses move with ASLR).
    let again = jitrun(&["--noexec", "--base", base, "--map=json", path(&obj)]);
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    for field in ["segments", "sections", "input_sections", "symbols"] {
        assert_eq!(map[field], again[field], "{} differs between two links", field);
    }

    let image = link_in_process(&[&obj], 0x3100_0000);
    assert_eq!(map["base"], 0x3100_0000u64);
    let symbols = map["symbols"].as_array().unwrap();
    for name in ["crash_here", "middle", "main"] {
        let sym = symbols.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{} not in the map", name));
        assert_eq!(sym["address"].as_u64(), image.lookup(name), "{}", name);
        assert_eq!(sym["kind"], "function");
        assert!(sym["size"].as_u64().unwrap() > 0);
    }
    let segments = map["segments"].as_array().unwrap();
    assert!(segments.iter().any(|s| s["name"] == "text" && s["protection"] == "r-x"));
    // printf is an external reached through a stub and its GOT entry.
    let stub = map["stubs"].as_array().unwrap().iter().find(|s| s["target"] == "printf").expect("a stub for printf");
    let got = map["got"].as_array().unwrap().iter().find(|g| g["target"] == "printf").expect("a GOT entry for printf");
    assert_eq!(stub["got_entry"], got["address"]);
    assert_eq!(got["value"], stub["target_address"]);
    let printf = map["externals"].as_array().unwrap().iter().find(|e| e["name"] == "printf").unwrap();
    assert_eq!(printf["address"], stub["target_address"]);

    // The readable map holds the same facts.
    let table = jitrun(&["--noexec", "--base", base, "--map", path(&obj)]);
    let table = text(&table.stdout);
    let main = image.lookup("main").unwrap();
    assert!(table.contains(&format!("{:#018x}", main)) && table.contains("null_deref.o(.text"), "{}", table);
    assert!(table.contains("Segments") && table.contains("GOT entries") && table.contains("Stubs"));
}

#[test]
fn a_child_the_program_forks_dies_without_a_report() {
    let dir = scratch("diag-forked-child");
    let obj = build("forked_child_crash.c", "-O1", &dir);
    for mode in [&[][..], &["--isolate"][..]] {
        let out = jitrun(&[mode, &[path(&obj)]].concat());
        assert_eq!(shell_status(&out), 0, "{:?}: {}", mode, text(&out.stderr));
        assert_eq!(text(&out.stdout), "child died from signal 11\n", "{:?}", mode);
        assert_eq!(text(&out.stderr), "", "{:?}: the child's death must print nothing", mode);
        // The program's own crash is still reported, once.
        let out = jitrun(&[mode, &[path(&obj), "--", "crash"]].concat());
        assert_eq!(shell_status(&out), 139, "{:?}", mode);
        let stderr = text(&out.stderr);
        assert_eq!(stderr.matches("died from SIGSEGV").count(), 1, "{:?}: {}", mode, stderr);
        assert!(stderr.contains("main+"), "{:?}: {}", mode, stderr);
    }
}

#[test]
fn a_sent_signal_is_reported_with_its_sender_not_a_fault_address() {
    let dir = scratch("diag-sent-signal");
    let source = "#include <signal.h>\n#include <stdio.h>\n#include <unistd.h>\n\
                  int main(void) { printf(\"%d\\n\", (int)getpid()); fflush(stdout); raise(SIGSEGV); return 0; }\n";
    let obj = common::compile_source(&dir, "raise_segv.c", source, "-O1");
    let out = jitrun(&[path(&obj)]);
    let stderr = text(&out.stderr);
    assert_eq!(shell_status(&out), 139, "{}", stderr);
    // raise() sends SIGSEGV to the process itself: si_addr's bytes would
    // be its pid, not an address.
    let pid = text(&out.stdout).trim().to_string();
    let headline = format!("died from SIGSEGV (Segmentation fault), sent by process {}\n", pid);
    assert!(stderr.contains(&headline) && !stderr.contains("fault address"), "{}", stderr);
}

#[test]
fn run_report_records_inputs_counts_phases_and_outcome() {
    let dir = scratch("diag-report");
    let obj = build("null_deref.c", "-O2", &dir);
    let report = dir.join("run.json");
    // With six arguments the program does not crash: it prints and exits 7.
    let out = jitrun(&["--report", path(&report), path(&obj), "--", "1", "2", "3", "4", "5"]);
    assert_eq!(shell_status(&out), 7, "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["schema"], 1);
    assert_eq!(r["inputs"][0]["path"], path(&obj));
    assert_eq!(r["inputs"][0]["size"], std::fs::metadata(&obj).unwrap().len());
    assert_eq!(r["inputs"][0]["format"], "elf-relocatable");
    let call = if cfg!(target_arch = "aarch64") { "R_AARCH64_CALL26" } else { "R_X86_64_PLT32" };
    assert!(r["counts"]["relocations"][call].as_u64().unwrap() >= 2, "{}", r["counts"]);
    assert_eq!(r["counts"]["stubs"], 1);
    for phase in ["parse", "resolve", "layout", "map", "fixups", "init", "run", "fini"] {
        assert!(r["phases"][phase].as_f64().is_some(), "phase {} missing: {}", phase, r);
    }
    assert!(r["peak_rss_kib"].as_u64().unwrap() > 0);
    assert_eq!(r["outcome"], serde_json::json!({"status": "exited", "exit_code": 7}));

    let crashed = jitrun(&["--report", path(&report), path(&obj)]);
    assert_eq!(shell_status(&crashed), 139);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["outcome"]["status"], "signal");
    assert_eq!(r["outcome"]["signal_name"], "SIGSEGV");
    assert_eq!(r["outcome"]["exit_code"], 139);

    // _exit, _Exit and quick_exit skip exit handlers; the outcome is still
    // recorded, and a forked child's _exit leaves the parent's report alone.
    let source = "#include <stdlib.h>\n#include <unistd.h>\n#include <sys/wait.h>\n\
                  int main(int argc, char **argv) { int s; if (fork() == 0) _exit(9); wait(&s);\n\
                  if (argv[1][0] == 'q') quick_exit(4); if (argv[1][0] == 'E') _Exit(6); _exit(5); }\n";
    let immediate = common::compile_source(&dir, "immediate_exit.c", source, "-O2");
    for (how, arg, code) in [("_exit", "x", 5), ("_Exit", "E", 6), ("quick_exit", "q", 4)] {
        let out = jitrun(&["--report", path(&report), path(&immediate), "--", arg]);
        assert_eq!(shell_status(&out), code, "{}: {}", how, text(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(r["outcome"], serde_json::json!({"status": "exited", "exit_code": code}), "{}", how);
    }

    // A program with its own _start ends with a raw exit_group: it runs in
    // a child, so the report still gets its outcome.
    let source = if cfg!(target_arch = "aarch64") {
        ".globl _start\n_start:\n    mov x8, #94\n    mov x0, #7\n    svc #0\n"
    } else {
        ".globl _start\n_start:\n    mov $231, %eax\n    mov $7, %edi\n    syscall\n"
    };
    let raw = common::compile_source(&dir, "raw_exit.s", source, "");
    let out = jitrun(&["--report", path(&report), path(&raw)]);
    assert_eq!(shell_status(&out), 7, "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["outcome"], serde_json::json!({"status": "exited", "exit_code": 7}));

    let failed = jitrun(&["--report", path(&report), path(&dir.join("missing.o"))]);
    assert_eq!(shell_status(&failed), 125);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["outcome"]["status"], "error");
    assert!(r["outcome"]["message"].as_str().unwrap().contains("missing.o"));
}

/// The link map credits each external to the library that defines it:
/// libc's functions found through libm's handle (which also sees libm's
/// dependencies) are the process's, not libm's.
#[test]
fn the_map_names_the_library_that_defines_each_external() {
    let dir = scratch("diag-map-libraries");
    let source = "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n\
                  int main(int argc, char **argv) { printf(\"%f\\n\", sin(atof(argv[0]))); puts(\"x\"); return argc; }\n";
    let obj = common::compile_source(&dir, "libm_user.c", source, "-O2");
    let map_file = dir.join("map.json");
    let out = jitrun(&["--noexec", "--map-format=json", &format!("--map={}", path(&map_file)), path(&obj), "-lm"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let map: serde_json::Value = serde_json::from_slice(&std::fs::read(&map_file).unwrap()).unwrap();
    let library_of = |name: &str| {
        let external = map["externals"].as_array().unwrap().iter().find(|e| e["name"] == name).cloned();
        external.unwrap_or_else(|| panic!("{} is not an external: {}", name, map["externals"]))["library"].clone()
    };
    assert!(library_of("sin").as_str().unwrap().contains("libm.so"), "{}", map["externals"]);
    for libc_function in ["printf", "puts"] {
        assert!(library_of(libc_function).is_null(), "{}: {}", libc_function, map["externals"]);
    }
}

#[test]
fn perf_map_lists_every_function_at_its_address() {
    let dir = scratch("diag-perf");
    let obj = build("gdb_target.c", "-O2", &dir);
    let map_file = dir.join("map.json");
    let mut cmd = jitrun_command();
    cmd.args(["--perf-map", "--base", "0x32000000", "--map-format=json"]).arg(format!("--map={}", path(&map_file)));
    let child = cmd.arg(&obj).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stdout), "x=21\n");
    let perf_path = PathBuf::from(format!("/tmp/perf-{}.map", pid));
    let perf = std::fs::read_to_string(&perf_path).unwrap();
    std::fs::remove_file(&perf_path).unwrap();

    let image = link_in_process(&[&obj], 0x3200_0000);
    let map: serde_json::Value = serde_json::from_slice(&std::fs::read(&map_file).unwrap()).unwrap();
    let functions: Vec<&serde_json::Value> =
        map["symbols"].as_array().unwrap().iter().filter(|s| s["kind"] == "function").collect();
    assert!(functions.len() >= 2);
    for f in functions {
        let name = f["name"].as_str().unwrap();
        let line = format!("{:x} {:x} {}", f["address"].as_u64().unwrap(), f["size"].as_u64().unwrap().max(1), name);
        assert!(perf.lines().any(|l| l == line), "`{}` missing from the perf map:\n{}", line, perf);
    }
    for name in ["my_function", "main"] {
        let addr = image.lookup(name).unwrap();
        assert!(perf.lines().any(|l| l.starts_with(&format!("{:x} ", addr)) && l.ends_with(name)), "{}", perf);
    }
}

fn assemble(name: &str, dir: &Path) -> PathBuf {
    assemble_for("x86_64", name, dir)
}

/// Assembles `testdata/diagnostics/STEM.CPU.s`, CPU being the machine's,
/// into `STEM.o`: for what must run here.
fn assemble_for_this_cpu(stem: &str, dir: &Path) -> PathBuf {
    let cpu = std::env::consts::ARCH;
    let obj = assemble_for(cpu, &format!("{}.{}.s", stem, cpu), dir);
    let renamed = dir.join(stem).with_extension("o");
    std::fs::rename(&obj, &renamed).unwrap();
    renamed
}

fn assemble_for(cpu: &str, name: &str, dir: &Path) -> PathBuf {
    let obj = dir.join(Path::new(name).with_extension("o"));
    let status = Command::new("llvm-mc-14")
        .arg(format!("-triple={}-unknown-linux-gnu", cpu))
        .args(["-filetype=obj", "-o"])
        .arg(&obj)
        .arg(source(name))
        .status()
        .expect("llvm-mc-14 (package llvm-14) is needed for the --check tests");
    assert!(status.success());
    obj
}

#[test]
fn check_expressions_pass_and_fail_where_they_should() {
    let dir = scratch("diag-check");
    let good = assemble("checks_pass.s", &dir);
    // The externals lie far (> 2 GiB) from the image, at a fixed address, so
    // the call keeps its stub and the GOT load is not relaxed to a lea.
    let defines = [
        "-slab-allocate",
        "100Kb",
        "-slab-address",
        "0x500000000000",
        "-abs",
        "ext_func=0x1000",
        "-abs",
        "ext_data=0x2000",
    ];
    let check = format!("-check={}", path(&source("checks_pass.s")));
    let out = jitrun(&[&["-noexec"], &defines[..], &[check.as_str(), path(&good)]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));

    let bad = assemble("checks_fail.s", &dir);
    let out = jitrun(&["--noexec", "--check", path(&source("checks_fail.s")), path(&bad)]);
    let stderr = text(&out.stderr);
    assert_eq!(shell_status(&out), 125, "{}", stderr);
    let failures: Vec<&str> = stderr.lines().filter(|l| l.contains("check failed")).collect();
    assert_eq!(failures.len(), 2, "{}", stderr);
    assert!(failures[0].contains("checks_fail.s:7:") && failures[0].contains("is 0x"), "{}", stderr);
    assert!(failures[1].contains("`*{4}value` is 0x2a but `43` is 0x2b"), "{}", stderr);
    assert!(stderr.contains("2 of 3 checks failed"), "{}", stderr);
}

/// Runs `jitrun gdb_target.o` (built with `flags`) under gdb with
/// `commands`, then `kill`; returns gdb's stdout.
/// Under qemu-user (another CPU's test build) this machine's gdb cannot
/// run the emulated jitrun: ptrace sees qemu, not the program. The gdb
/// tests run on hosts of the CPU they are built for.
fn gdb_cannot_run_the_target() -> bool {
    common::emulation_cannot_show("gdb cannot trace jitrun under qemu-user")
}

fn run_under_gdb(test: &str, flags: &str, commands: &[&str]) -> String {
    if Command::new("gdb").arg("--version").output().is_err() {
        panic!("gdb is needed for this test");
    }
    let dir = scratch(test);
    let obj = build("gdb_target.c", flags, &dir);
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-ex", "set breakpoint pending on"]);
    for command in commands {
        cmd.args(["-ex", command]);
    }
    cmd.args(["-ex", "kill", "--args"]).arg(jitrun_bin()).arg(&obj);
    text(&run_with(&mut cmd, b"", Duration::from_secs(120)).stdout)
}

#[test]
fn gdb_breaks_on_a_loaded_function_by_name() {
    if gdb_cannot_run_the_target() {
        return;
    }
    let stdout = run_under_gdb("diag-gdb", "-O2", &["break my_function", "run", "bt"]);
    // "Breakpoint 1, ..." or, with several threads, "Thread 1 "jitrun" hit Breakpoint 1, ...".
    let breakpoint = stdout.lines().find(|l| l.contains("Breakpoint 1, ")).unwrap_or_else(|| panic!("{}", stdout));
    assert!(breakpoint.contains("in my_function"), "{}", stdout);
    // The registered .eh_frame lets gdb unwind through `middle`, whose
    // -O2 frame has no frame pointer, to main.
    let frames: Vec<&str> = stdout.lines().filter(|l| l.starts_with('#')).collect();
    let expected = ["my_function", "middle", "main"];
    for (i, name) in expected.iter().enumerate() {
        assert!(frames.get(i).is_some_and(|f| f.contains(&format!(" {} ", name))), "frame {}: {}", i, stdout);
    }
    assert!(!stdout.contains("x=21"), "the breakpoint was not hit before the call: {}", stdout);
}

/// A large object's relocations are read (and checked) where the link
/// uses them rather than when it is translated: a corrupt entry is still
/// one error line naming the file, section, offset and problem.
#[test]
fn a_corrupt_relocation_of_a_mapped_object_is_one_error_line() {
    use object::read::elf::{FileHeader, SectionHeader};
    let dir = scratch("corrupt_mapped_relocation");
    // 100 KB of data: the object is mapped, not read.
    let program = "static const char pad[100000] = {1};\nint f(void);\n\
                   int main(void) { return f() + pad[5]; }\nint f(void) { return 3; }\n";
    let object = common::compile_source(&dir, "big.c", program, "-O0");
    let bytes = std::fs::read(&object).unwrap();
    assert!(bytes.len() > 64 << 10);
    let header = object::elf::FileHeader64::<object::LittleEndian>::parse(&*bytes).unwrap();
    let endian = object::LittleEndian;
    let sections = header.sections(endian, &*bytes).unwrap();
    let rela_text = sections
        .iter()
        .find(|s| sections.section_name(endian, s).unwrap() == b".rela.text")
        .expect("a .rela.text section");
    let first_entry = rela_text.sh_offset(endian) as usize;
    let first_offset = u64::from_le_bytes(bytes[first_entry..first_entry + 8].try_into().unwrap());
    for (what, patch, expected) in [
        ("type", (first_entry + 8, 200u32), "unsupported relocation type 200".to_string()),
        ("symbol", (first_entry + 12, 60_000u32), "refers to symbol index 60000".to_string()),
    ] {
        let mut bad = bytes.clone();
        bad[patch.0..patch.0 + 4].copy_from_slice(&patch.1.to_le_bytes());
        let bad_path = dir.join(format!("bad_{}.o", what));
        std::fs::write(&bad_path, &bad).unwrap();
        let out = jitrun(&["--noexec", path(&bad_path)]);
        let stderr = text(&out.stderr);
        assert_eq!(shell_status(&out), 125, "{}", stderr);
        assert_eq!(stderr.lines().count(), 1, "{}", stderr);
        let place = format!("bad_{}.o: section .text+{:#x}: ", what, first_offset);
        assert!(stderr.contains(&place) && stderr.contains(&expected), "{} lacks {}{}", stderr, place, expected);
    }
}

/// With `-g` objects, gdb gets each object's DWARF at the final addresses:
/// breakpoints by file and line, arguments, source lines in the backtrace.
#[test]
fn gdb_shows_source_lines_and_variables_of_loaded_code() {
    if gdb_cannot_run_the_target() {
        return;
    }
    let stdout = run_under_gdb("diag-gdb-lines", "-O0 -g", &["break gdb_target.c:8", "run", "bt", "print x"]);
    let frames: Vec<&str> = stdout.lines().filter(|l| l.starts_with('#')).collect();
    assert!(
        frames.first().is_some_and(|f| f.contains("middle (x=21) at ") && f.contains("gdb_target.c:8")),
        "{}",
        stdout
    );
    assert!(
        frames.get(1).is_some_and(|f| f.contains(" in main () at ") && f.contains("gdb_target.c:11")),
        "{}",
        stdout
    );
    assert!(stdout.lines().any(|l| l == "$1 = 21"), "{}", stdout);
}

/// An IFUNC whose resolver would not be code (a hostile or broken
/// object) is one error line, not a crash of jitrun calling into data.
#[test]
fn an_ifunc_defined_in_data_is_refused() {
    let dir = scratch("diag-ifunc-data");
    let obj = assemble_for_this_cpu("ifunc_in_data", &dir);
    let out = jitrun(&[path(&obj)]);
    assert_eq!(shell_status(&out), 125, "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{}", stderr);
    assert!(stderr.contains("ifunc_in_data.o: IFUNC `foo` is defined in .data, which is not code"), "{}", stderr);
}

/// `-v` prints jitrun's log and changes nothing of the program's run, also
/// for a program with its own allocator: the logger once had glibc register
/// a thread-local destructor, which `exit` then freed through the
/// program's `free` (it aborted on a block it did not make).
#[test]
fn verbose_logging_leaves_a_program_with_its_own_allocator_alone() {
    let dir = scratch("verbose-own-malloc");
    let flags = "-O2 -fno-builtin";
    let objects = common::compile(&[testdata().join("c/own_malloc.c")], flags, &[], &dir);
    let exe = dir.join("native");
    common::link_native(&objects, flags, false, &[], &[], &exe);
    let native = run_with(&mut Command::new(&exe), b"", Duration::from_secs(20));
    let mut cmd = jitrun_command();
    cmd.arg("-v").arg("--no-link-cache").args(&objects);
    let jit = run_with(&mut cmd, b"", Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&jit.stderr);
    assert_eq!((&jit.stdout, shell_status(&jit)), (&native.stdout, shell_status(&native)), "{}", stderr);
    assert!(stderr.contains("[DEBUG jitrun::graph::resolve] `malloc` resolved by"), "{}", stderr);
    assert!(stderr.lines().all(|line| line.starts_with("[DEBUG ")), "{}", stderr);
}
