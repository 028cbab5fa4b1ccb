//! Link once, run many: isolated runs, batches, `--repeat`, the library API.
//! The program under test, `testdata/reuse/mutants.c`, picks its behaviour
//! from the global `mutant_id`, which each run sets before constructors.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jitrun::image::runs::{GlobalValue, RunSpec, RunStatus};
use serde_json::Value;

fn build_mutants(dir: &Path) -> PathBuf {
    common::compile(&[common::testdata().join("reuse/mutants.c")], "-O2", &[], dir).remove(0)
}

fn jitrun(args: &[&str], stdin: &[u8]) -> Output {
    common::run_with(common::jitrun_command().args(args), stdin, Duration::from_secs(60))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether process `pid` is gone (or a zombie waiting for its reaper).
/// Under qemu-user (another CPU's test build) `/proc/self/cmdline`,
/// `/proc/self/exe` and the process's argument area are qemu's: it answers
/// them itself, from what it was started with, and does not pass
/// `prctl(PR_SET_MM_MAP)` on. What the program sees there is checked on
/// native hosts.
fn process_files_are_qemus() -> bool {
    common::emulation_cannot_show("/proc/self/cmdline and /proc/self/exe are qemu's")
}

fn process_is_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid)) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn batch_reports_every_outcome_and_runs_do_not_affect_each_other() {
    let dir = common::scratch("reuse-batch");
    let object = build_mutants(&dir);
    let plan = [
        r#"{"id":"ok-1","set":{"mutant_id":0,"label":"first"}}"#,
        r#"{"id":"segv","set":{"mutant_id":1}}"#,
        r#"{"id":"abort","set":{"mutant_id":2}}"#,
        r#"{"id":"hang","set":{"mutant_id":3},"timeout_ms":300}"#,
        r#"{"id":"hang-with-child","set":{"mutant_id":7},"timeout_ms":300}"#,
        r#"{"id":"fail","set":{"mutant_id":4}}"#,
        r#"{"id":"big","set":{"mutant_id":5},"max_output":1000}"#,
        r#"{"id":"echo","set":{"mutant_id":6},"stdin":"line one\nline two\n","env":{"K":"v"},"args":["a","b c"]}"#,
        r#"{"id":"exit","set":{"mutant_id":8}}"#,
        r#"{"id":7,"set":{"mutant_id":0}}"#,
        r#"{"id":"unknown-symbol","set":{"no_such_global":1}}"#,
        r#"{"id":"read-only","set":{"answer":1}}"#,
        r#"{"id":"too-wide","set":{"mutant_id":1099511627776}}"#,
        r#"{"id":"typo","sett":{}}"#,
        "",
        r#"{"id":"ok-2","set":{"mutant_id":0}}"#,
    ];
    let plan_path = dir.join("plan.jsonl");
    std::fs::write(&plan_path, plan.join("\n")).unwrap();
    let started = Instant::now();
    let out =
        jitrun(&[object.to_str().unwrap(), "--batch", plan_path.to_str().unwrap(), "-j", "3", "--timeout", "20s"], b"");
    let elapsed = started.elapsed();
    assert_eq!(common::shell_status(&out), 0, "stderr: {}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "nothing on stderr when it is not a terminal: {}", text(&out.stderr));

    let stdout = text(&out.stdout);
    let mut results: HashMap<String, Value> = HashMap::new();
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {}", line, e));
        assert_eq!(v["schema"], 2, "{}", line);
        let id = match &v["id"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert!(results.insert(id, v).is_none(), "one line per run");
    }
    assert_eq!(results.len(), plan.iter().filter(|l| !l.is_empty()).count(), "{}", stdout);

    let status = |id: &str| results[id]["status"].as_str().unwrap().to_string();
    for id in ["ok-1", "ok-2", "7"] {
        assert_eq!(status(id), "exited", "{}", id);
        assert_eq!(results[id]["exit_code"], 0);
    }
    // `set` happens before constructors; every isolated run starts fresh.
    assert_eq!(results["ok-1"]["stdout"], "mutant 0 label first constructor saw 0 run 1\n");
    assert_eq!(results["ok-2"]["stdout"], "mutant 0 label none constructor saw 0 run 1\n");
    assert_eq!(status("segv"), "signaled");
    assert_eq!(results["segv"]["signal"], 11);
    assert_eq!(results["segv"]["exit_code"], Value::Null);
    assert_eq!(results["abort"]["signal"], 6);
    for id in ["hang", "hang-with-child"] {
        assert_eq!(status(id), "timeout", "{}", id);
        let ms = results[id]["duration_ms"].as_f64().unwrap();
        assert!((300.0..10_000.0).contains(&ms), "{}: {} ms", id, ms);
    }
    // The whole process group went down with the run.
    let stderr = results["hang-with-child"]["stderr"].as_str().unwrap();
    let pid = stderr.strip_prefix("background ").and_then(|s| s.lines().next()).expect("background child's pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_is_gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(process_is_gone(pid), "background process {} survived its run's timeout", pid);

    assert_eq!(status("fail"), "exited");
    assert_eq!(results["fail"]["exit_code"], 3);
    assert_eq!(results["fail"]["stdout"], "failing\n");
    assert_eq!(results["big"]["exit_code"], 0);
    assert_eq!(results["big"]["stdout"].as_str().unwrap(), "x".repeat(1000));
    assert_eq!(results["big"]["stdout_truncated"], true);
    assert_eq!(results["big"]["stderr"], "done\n");
    assert_eq!(results["big"]["stderr_truncated"], false);
    assert_eq!(results["echo"]["stdout"], "line one\nline two\n|K=v|a|b c|\n");
    assert_eq!(results["exit"]["exit_code"], 9);
    assert_eq!(results["exit"]["stdout"], "to stdout\n");
    assert_eq!(results["exit"]["stderr"], "to stderr\n");
    for (id, message) in [
        ("unknown-symbol", "no such global"),
        ("read-only", "read-only segment"),
        ("too-wide", "does not fit the 4-byte symbol"),
        ("typo", "unknown field `sett`"),
    ] {
        assert_eq!(status(id), "error", "{}", id);
        let error = results[id]["error"].as_str().unwrap();
        assert!(error.contains(message), "{}: {}", id, error);
    }
    // Two 300 ms timeouts in parallel with the rest, not 20 s of waiting.
    assert!(elapsed < Duration::from_secs(15), "batch took {:?}", elapsed);
}

#[test]
fn repeat_keeps_state_in_process_and_starts_fresh_isolated() {
    let dir = common::scratch("reuse-repeat");
    let object = build_mutants(&dir);
    let object = object.to_str().unwrap();

    let out = jitrun(&[object, "--repeat", "3", "--set", "label=shared"], b"");
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    let expected: String =
        (1..=3).map(|run| format!("mutant 0 label shared constructor saw 0 run {}\n", run)).collect();
    assert_eq!(text(&out.stdout), expected);

    let out = jitrun(&[object, "--repeat", "5", "--isolate"], b"");
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "mutant 0 label none constructor saw 0 run 1\n".repeat(5));

    // The first failing run decides the exit status; every run still runs.
    let out = jitrun(&[object, "--repeat", "4", "--isolate", "--set", "mutant_id=4"], b"");
    assert_eq!(common::shell_status(&out), 3);
    assert_eq!(text(&out.stdout), "failing\n".repeat(4));
}

#[test]
fn each_in_process_run_writes_its_output_when_it_ends() {
    // stdout into a pipe is fully buffered and stderr is not: natively,
    // each run's stdout comes out at its exit, after its stderr line and
    // before the next run's.
    let dir = common::scratch("reuse-repeat-flush");
    let both = "#include <stdio.h>\nint main(void) { static int run; printf(\"out %d\\n\", ++run); fprintf(stderr, \"err %d\\n\", run); return 0; }\n";
    let object = common::compile_source(&dir, "both.c", both, "-O2");
    let script = format!("exec '{}' '{}' --repeat 3 2>&1", common::jitrun_bin().display(), object.display());
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(script).env("XDG_CACHE_HOME", common::test_cache_home());
    let out = common::run_with(&mut shell, b"", Duration::from_secs(60));
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "err 1\nout 1\nerr 2\nout 2\nerr 3\nout 3\n");
}

#[test]
fn output_the_parent_holds_in_a_stream_is_written_once() {
    // A preloaded library's constructor leaves a line in jitrun's stdout
    // buffer (a pipe: fully buffered). Each isolated run is a fork whose
    // exit() would write the buffer again, unless it was flushed first.
    let dir = common::scratch("reuse-parent-buffer");
    let source = dir.join("announce.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n__attribute__((constructor)) static void announce(void) { fputs(\"preloaded\\n\", stdout); }\n",
    )
    .unwrap();
    let library = dir.join("libannounce.so");
    common::run_checked(common::cc().args(["-shared", "-fPIC", "-O1"]).arg(&source).arg("-o").arg(&library));
    let object = build_mutants(&dir);
    let mut command = common::jitrun_command();
    command.env("LD_PRELOAD", &library).arg(&object).args(["--repeat", "3", "--isolate"]);
    let out = common::run_with(&mut command, b"", Duration::from_secs(60));
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    let run = "mutant 0 label none constructor saw 0 run 1\n";
    assert_eq!(text(&out.stdout), format!("preloaded\n{}", run.repeat(3)));
}

#[test]
fn isolated_runs_map_outcomes_to_exit_statuses() {
    let dir = common::scratch("reuse-isolated");
    let object = build_mutants(&dir);
    let object = object.to_str().unwrap();

    let started = Instant::now();
    let out = jitrun(&[object, "--timeout", "300ms", "--set", "mutant_id=3"], b"");
    assert_eq!(common::shell_status(&out), 124);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(text(&out.stderr).contains("ran longer than 300ms"), "{}", text(&out.stderr));

    let out = jitrun(&[object, "--isolate", "--set", "mutant_id=1"], b"");
    assert_eq!(common::shell_status(&out), 128 + 11, "the crash is the child's; jitrun re-raises it");

    let out = jitrun(&[object, "--isolate", "--set", "mutant_id=6", "--", "x"], b"piped input\n");
    assert_eq!(common::shell_status(&out), 0);
    assert_eq!(text(&out.stdout), "piped input\n|K=(unset)|x|\n");

    let out = jitrun(&[object, "--isolate", "--set", "answer=1"], b"");
    assert_eq!(common::shell_status(&out), 125);
    assert!(text(&out.stderr).contains("cannot set `answer`: it is in a read-only segment"), "{}", text(&out.stderr));
}

#[test]
fn library_links_once_and_runs_many() {
    let dir = common::scratch("reuse-library");
    let object = build_mutants(&dir);
    let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    linker.add_file(&object).unwrap();
    let kept = Arc::new(Mutex::new(Vec::new()));
    let sink = kept.clone();
    linker.on_linked(move |graphs| *sink.lock().unwrap() = graphs.into_iter().map(|g| g.name).collect());
    let mut image = linker.link().unwrap();
    assert!(kept.lock().unwrap().iter().any(|name| name.ends_with("mutants.o")), "{:?}", kept.lock().unwrap());

    assert_eq!(image.symbol_size("mutant_id"), Some(4));
    let err = image.write_global("answer", &GlobalValue::Int(1)).unwrap_err();
    assert!(format!("{:#}", err).contains("read-only"), "{:#}", err);

    let spec = RunSpec::captured().set("label", GlobalValue::Bytes(b"lib\0".to_vec()));
    let outcome = image.run_isolated(&spec).unwrap();
    assert_eq!(outcome.status, RunStatus::Exited(0));
    assert_eq!(text(&outcome.stdout), "mutant 0 label lib constructor saw 0 run 1\n");

    let outcome =
        image.run_isolated(&RunSpec::captured().set("mutant_id", GlobalValue::Int(6)).stdin_bytes("in")).unwrap();
    assert_eq!(text(&outcome.stdout), "in|K=(unset)|\n");

    let outcome = image
        .run_isolated(&RunSpec::captured().set("mutant_id", GlobalValue::Int(3)).timeout(Duration::from_millis(100)))
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Timeout);
    assert_eq!(outcome.shell_status(), 124);

    // Crashes and successes interleaved on 4 workers; each reported as its own.
    let ids: Vec<i64> = (0..24).map(|i| [0, 1, 4, 2][i % 4]).collect();
    let specs = ids.iter().map(|&id| RunSpec::captured().set("mutant_id", GlobalValue::Int(id)));
    let mut outcomes = vec![None; ids.len()];
    image.run_batch(specs, 4, |index, outcome| outcomes[index] = Some(outcome.status)).unwrap();
    for (id, outcome) in ids.iter().zip(&outcomes) {
        let expected = match id {
            0 => RunStatus::Exited(0),
            1 => RunStatus::Signaled(11),
            4 => RunStatus::Exited(3),
            _ => RunStatus::Signaled(6),
        };
        assert_eq!(outcome.as_ref(), Some(&expected), "mutant {}", id);
    }

    // One spec many times, prepared once: every index reported, each run fresh.
    for jobs in [1, 3] {
        let spec = RunSpec::captured().set("mutant_id", GlobalValue::Int(4));
        let mut seen = vec![0; 7];
        image
            .run_repeated(&spec, 7, jobs, |index, outcome| {
                assert_eq!(outcome.status, RunStatus::Exited(3), "run {} of 7 on {} jobs", index, jobs);
                seen[index] += 1;
            })
            .unwrap();
        assert_eq!(seen, vec![1; 7], "{} jobs", jobs);
    }
    let bad = RunSpec::default().set("no_such_global", GlobalValue::Int(1));
    let mut errors = 0;
    image
        .run_repeated(&bad, 3, 1, |_, outcome| errors += matches!(outcome.status, RunStatus::Error(_)) as usize)
        .unwrap();
    assert_eq!(errors, 3);

    // The parent's image was never initialized by those runs: in-process,
    // this is the first run and the constructor sees the value written here.
    image.write_global("mutant_id", &GlobalValue::Int(4)).unwrap();
    let outcome = image.run_in_process(&RunSpec::default()).unwrap();
    assert_eq!(outcome.status, RunStatus::Exited(3));
    assert!(image.run_in_process(&RunSpec::captured()).is_err(), "capture needs isolation");
}

#[test]
fn many_objects_are_translated_in_parallel_and_keep_their_order() {
    let dir = common::scratch("reuse-parallel");
    let mut sources = Vec::new();
    for i in 0..16 {
        let path = dir.join(format!("part{}.c", i));
        // Every part defines a weak `which`; the first object's must win, as with ld.
        std::fs::write(
            &path,
            format!(
                "int part{0}(void) {{ return {0}; }}\n__attribute__((weak)) int which(void) {{ return {0}; }}\n",
                i
            ),
        )
        .unwrap();
        sources.push(path);
    }
    let main = dir.join("main.c");
    let decls: String = (0..16).map(|i| format!("int part{}(void);", i)).collect();
    let sum: String = (0..16).map(|i| format!("+part{}()", i)).collect();
    std::fs::write(
        &main,
        format!("#include <stdio.h>\n{}int which(void);\nint main(void) {{ printf(\"%d %d\\n\", 0{}, which()); return 0; }}\n", decls, sum),
    )
    .unwrap();
    sources.insert(0, main);
    let objects = common::compile(&sources, "-O2", &[], &dir);
    let native = dir.join("a.out");
    common::link_native(&objects, "-O2", false, &[], &[], &native);
    let expected = common::run_with(&mut Command::new(&native), b"", Duration::from_secs(20));
    let args: Vec<&str> = objects.iter().map(|o| o.to_str().unwrap()).collect();
    let out = jitrun(&args, b"");
    assert_eq!(text(&out.stdout), text(&expected.stdout));
    assert_eq!(text(&out.stdout), "120 0\n");
}

/// jitrun keeps itself and each child on one CPU between fork and exit
/// (cheaper wake-ups); the program must still see the affinity it was
/// started with, as natively.
#[test]
fn isolated_runs_see_the_original_cpu_affinity() {
    let dir = common::scratch("reuse-affinity");
    let object = common::compile_source(
        &dir,
        "affinity.c",
        "#define _GNU_SOURCE\n#include <sched.h>\n#include <stdio.h>\n\
         int main(void) { cpu_set_t s; sched_getaffinity(0, sizeof s, &s); printf(\"%d\\n\", CPU_COUNT(&s)); return 0; }\n",
        "-O2",
    );
    let object = object.to_str().unwrap();
    let in_process = jitrun(&[object], b"");
    let isolated = jitrun(&[object, "--isolate", "--repeat", "3"], b"");
    assert!(in_process.status.success() && isolated.status.success());
    let expected = text(&in_process.stdout);
    assert_eq!(text(&isolated.stdout), expected.repeat(3), "in process: {}", expected);
}

/// `/proc/self/cmdline` (what `ps` shows) is exactly the program's
/// arguments, the environment strings follow them, and a program that sets
/// its process title over both finds the room it would natively, and
/// `argv`, `envp` and the auxiliary vector follow each other on the stack:
/// the native run's output in every mode. (Needs `prctl(PR_SET_MM_MAP)`, which
/// kernels with checkpoint/restore grant without privilege.)
#[test]
fn the_command_line_and_environment_are_laid_out_as_natively() {
    if process_files_are_qemus() {
        return;
    }
    let dir = common::scratch("reuse-cmdline");
    let object = common::compile(&[common::testdata().join("reuse/cmdline_environ.c")], "-O2", &[], &dir).remove(0);
    let native = dir.join("cmdline_environ");
    let linked = common::cc().arg(&object).arg("-o").arg(&native).status().unwrap();
    assert!(linked.success());
    let env = [("JITRUN_TEST_A", "1"), ("JITRUN_TEST_B", "two words")];
    let run = |command: &mut Command| {
        command.env_clear().envs(env).current_dir(&dir);
        common::run_with(command, b"", Duration::from_secs(60))
    };
    let expected = run(Command::new("./cmdline_environ").args(["a", "bb", "ccc"]));
    let expected = text(&expected.stdout);
    assert!(expected.contains("environ follows argv: yes"), "native: {}", expected);
    assert!(expected.contains("envp follows argv's null: yes"), "native: {}", expected);
    check_every_mode("./cmdline_environ", &object, &["a", "bb", "ccc"], &expected, |args| {
        run(common::jitrun_command().args(args))
    });
}

/// A batch run's arguments longer than jitrun's own command line are
/// still what `/proc/self/cmdline` shows (from where they lie).
#[test]
fn long_arguments_of_a_batch_run_are_its_command_line() {
    if process_files_are_qemus() {
        return;
    }
    let dir = common::scratch("reuse-long-cmdline");
    let source = "#include <fcntl.h>\n#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n\
                  int main(int argc, char **argv) { static char buf[1 << 16]; int fd = open(\"/proc/self/cmdline\", O_RDONLY);\n\
                  ssize_t n = 0, r; while ((r = read(fd, buf + n, sizeof buf - n)) > 0) n += r; close(fd);\n\
                  size_t at = 0; int same = 1; for (int i = 0; i < argc; i++) { size_t len = strlen(argv[i]) + 1;\n\
                  same &= at + len <= (size_t)n && memcmp(buf + at, argv[i], len) == 0; at += len; }\n\
                  printf(\"%d arguments, %zu bytes, cmdline the same: %d\\n\", argc, at, same && at == (size_t)n); return 0; }\n";
    let object = common::compile_source(&dir, "cmdline.c", source, "-O2");
    let long = "x".repeat(5000);
    let plan = dir.join("runs.jsonl");
    std::fs::write(
        &plan,
        format!("{{\"id\":\"long\",\"args\":[\"{}\"]}}\n{{\"id\":\"short\",\"args\":[\"y\"]}}\n", long),
    )
    .unwrap();
    let out = jitrun(&[object.to_str().unwrap(), "--argv0", "./prog", "--batch", plan.to_str().unwrap()], b"");
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    let results: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let stdout_of =
        |id: &str| results.iter().find(|r| r["id"] == id).map(|r| r["stdout"].as_str().unwrap().to_string());
    assert_eq!(stdout_of("long").unwrap(), "2 arguments, 5008 bytes, cmdline the same: 1\n");
    assert_eq!(stdout_of("short").unwrap(), "2 arguments, 9 bytes, cmdline the same: 1\n");
}

/// Runs `object` as `argv0` with `program_args` in process, isolated, and
/// isolated twice, through `run`, and checks that each run printed `expected`.
fn check_every_mode(
    argv0: &str,
    object: &Path,
    program_args: &[&str],
    expected: &str,
    run: impl Fn(&[&str]) -> Output,
) {
    for mode in [&[][..], &["--isolate"][..], &["--repeat", "2", "--isolate"][..]] {
        let mut args = vec!["--argv0", argv0, object.to_str().unwrap()];
        args.extend_from_slice(mode);
        args.push("--");
        args.extend_from_slice(program_args);
        let out = run(&args);
        assert_eq!(common::shell_status(&out), 0, "{:?}: {}", mode, text(&out.stderr));
        let runs = if mode.contains(&"2") { 2 } else { 1 };
        assert_eq!(text(&out.stdout), expected.repeat(runs), "{:?}", mode);
    }
}

/// Each isolated run starts as a native process does, with glibc knowing
/// it has one thread (the parent declared it so once its link thread was
/// gone): the same output in every mode, and the native one.
#[test]
fn isolated_runs_start_single_threaded() {
    let dir = common::scratch("reuse-one-thread");
    let object = common::compile(&[common::testdata().join("c/one_thread.c")], "-O2", &[], &dir).remove(0);
    let object = object.to_str().unwrap();
    let in_process = jitrun(&[object], b"");
    let isolated = jitrun(&[object, "--isolate", "--repeat", "2"], b"");
    assert!(in_process.status.success() && isolated.status.success());
    let expected = text(&in_process.stdout);
    assert!(expected.contains("single-threaded at start: 1"), "in process: {}", expected);
    assert_eq!(text(&isolated.stdout), expected.repeat(2), "in process: {}", expected);
}

#[test]
fn argv0_names_the_program_in_every_mode() {
    let dir = common::scratch("reuse-argv0");
    // argv[0], the name glibc's messages use, and the process's name (`ps`).
    let source = "#define _GNU_SOURCE\n#include <errno.h>\n#include <stdio.h>\n#include <string.h>\n\
                  int main(int argc, char **argv) { char comm[32] = {0}; FILE *f = fopen(\"/proc/self/comm\", \"r\");\n\
                  fgets(comm, sizeof comm, f); fclose(f); comm[strcspn(comm, \"\\n\")] = 0;\n\
                  printf(\"%s %s %s\\n\", argv[0], program_invocation_short_name, comm); return 0; }\n";
    let object = common::compile_source(&dir, "names.c", source, "-O2");
    let object = object.to_str().unwrap();

    // By default argv[0] is the input's path and the short name drops `.o`.
    let out = jitrun(&[object], b"");
    assert_eq!(text(&out.stdout), format!("{} names names\n", object));

    for mode in [&[][..], &["--isolate"][..]] {
        let mut args = vec![object, "--argv0", "/usr/bin/unzstd"];
        args.extend_from_slice(mode);
        let out = jitrun(&args, b"");
        assert_eq!(common::shell_status(&out), 0, "{:?}: {}", mode, text(&out.stderr));
        assert_eq!(text(&out.stdout), "/usr/bin/unzstd unzstd unzstd\n", "{:?}", mode);
    }

    let plan = dir.join("plan.jsonl");
    std::fs::write(&plan, "{\"id\":\"default\"}\n{\"id\":\"own\",\"argv0\":\"zstdcat\"}\n").unwrap();
    let out = jitrun(&[object, "--argv0", "./zstd", "--batch", plan.to_str().unwrap(), "-j", "1"], b"");
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    let results: HashMap<String, String> = text(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["stdout"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(results["default"], "./zstd zstd zstd\n");
    assert_eq!(results["own"], "zstdcat zstdcat zstdcat\n");
}

#[test]
fn isolated_runs_report_the_deciding_outcome() {
    let dir = common::scratch("reuse-report");
    let object = build_mutants(&dir);
    let object = object.to_str().unwrap();
    let report = dir.join("run.json");
    let report_path = report.to_str().unwrap();
    let outcome = |out: &Output, status: i32| {
        assert_eq!(common::shell_status(out), status, "{}", text(&out.stderr));
        let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert!(r["peak_rss_kib"].as_u64().unwrap() > 0, "{}", r);
        r["outcome"].clone()
    };

    let out = jitrun(&[object, "--timeout", "300ms", "--set", "mutant_id=3", "--report", report_path], b"");
    assert_eq!(outcome(&out, 124), serde_json::json!({"status": "timeout", "timeout_ms": 300, "exit_code": 124}));

    // Each child's exit would rewrite the file; the parent's outcome stays.
    let out = jitrun(&[object, "--repeat", "3", "--isolate", "--set", "mutant_id=4", "--report", report_path], b"");
    assert_eq!(outcome(&out, 3), serde_json::json!({"status": "exited", "exit_code": 3}));

    let out = jitrun(&[object, "--isolate", "--set", "mutant_id=1", "--report", report_path], b"");
    let signal = outcome(&out, 128 + 11);
    assert_eq!((signal["status"].as_str(), signal["signal_name"].as_str()), (Some("signal"), Some("SIGSEGV")));

    let out = jitrun(&[object, "--repeat", "2", "--isolate", "--report", report_path], b"");
    assert_eq!(outcome(&out, 0), serde_json::json!({"status": "exited", "exit_code": 0}));
}

#[test]
fn the_command_line_ps_shows_is_the_programs_and_takes_its_title() {
    if process_files_are_qemus() {
        return;
    }
    let dir = common::scratch("reuse-title");
    let object = common::compile(&[common::testdata().join("reuse/process_title.c")], "-O2", &[], &dir).remove(0);
    let expected = "start: [./server a bb ccc]\ntitled: [server *:7777]\n";
    check_every_mode("./server", &object, &["a", "bb", "ccc"], expected, |args| jitrun(args, b""));
}

/// A program's arguments (and argv[0]) may be any bytes but NUL, as a
/// native program gets them: not only UTF-8.
#[test]
fn arguments_that_are_not_utf8_reach_the_program() {
    use std::os::unix::ffi::OsStrExt;
    let dir = common::scratch("reuse-bytes");
    let source = "#include <stdio.h>\nint main(int argc, char **argv) { for (int i = 0; i < argc; i++) {\n\
                  for (char *p = argv[i]; *p; p++) printf(\"%02x\", (unsigned char)*p); printf(\"\\n\"); } return 0; }\n";
    let object = common::compile_source(&dir, "bytes.c", source, "-O2");
    let odd = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    for mode in [&[][..], &["--isolate"][..]] {
        let out = common::run_with(
            common::jitrun_command().args(mode).arg("--argv0").arg(odd).arg(&object).arg("--").arg(odd).arg("ok"),
            b"",
            Duration::from_secs(20),
        );
        assert_eq!(common::shell_status(&out), 0, "{:?}: {}", mode, text(&out.stderr));
        assert_eq!(text(&out.stdout), "fffe\nfffe\n6f6b\n", "{:?}", mode);
    }
}

/// A termination signal to jitrun reaches isolated runs first, as it would
/// reach the program run natively, so its handlers can clean up; a run that
/// ignores it is killed after the grace period. Either way jitrun then dies
/// of the signal, leaving no process behind.
#[test]
fn termination_signals_reach_isolated_runs_before_they_are_killed() {
    let dir = common::scratch("reuse-termination");
    let object = common::compile(&[common::testdata().join("reuse/on_termination.c")], "-O2", &[], &dir).remove(0);
    for (signal, mode) in [(libc::SIGTERM, "handle"), (libc::SIGINT, "handle"), (libc::SIGTERM, "ignore")] {
        let marker = dir.join(format!("marker-{}-{}", signal, mode));
        let _ = std::fs::remove_file(&marker);
        let mut child =
            common::jitrun_command().arg(&object).args(["--isolate", "--"]).arg(&marker).arg(mode).spawn().unwrap();
        let started = Instant::now();
        let pid = loop {
            let written = std::fs::read_to_string(&marker).unwrap_or_default();
            if written.ends_with('\n') {
                break written.trim().to_string();
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the run never started");
            std::thread::sleep(Duration::from_millis(10));
        };
        // SAFETY: signalling the jitrun process this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal), "{} {}", signal, mode);
        let written = std::fs::read_to_string(&marker).unwrap();
        if mode == "handle" {
            assert!(written.contains(&format!("cleaned up after signal {}", signal)), "{}", written);
        } else {
            assert!(!written.contains("cleaned up"), "{}", written);
        }
        assert!(process_is_gone(&pid), "run {} outlived jitrun", pid);
    }
}

/// A script that runs jitrun on `object` with itself as `--self-exe`, as
/// a user would set up a program that starts itself again.
fn self_exe_script(dir: &Path, object: &Path) -> PathBuf {
    let script = dir.join("self-exe.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' --self-exe '{}' '{}' -- \"$@\"\n",
            common::jitrun_bin().display(),
            script.display(),
            object.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A program whose only exec is `fexecve` of `/proc/self/exe` (nothing
/// else made jitrun look libc's `execve` up) runs the `--self-exe` path.
#[test]
fn fexecve_of_proc_self_exe_runs_the_self_exe() {
    if process_files_are_qemus() {
        return;
    }
    let dir = common::scratch("reuse-fexecve");
    let source = "#define _GNU_SOURCE\n#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\nextern char **environ;\n\
                  int main(int argc, char **argv) { if (argc > 1) { printf(\"again: %s\\n\", argv[1]); return 0; }\n\
                  char *args[] = {argv[0], \"yes\", 0}; fexecve(open(\"/proc/self/exe\", O_RDONLY | O_CLOEXEC), args, environ);\n\
                  perror(\"fexecve\"); return 1; }\n";
    let object = common::compile_source(&dir, "fexecve.c", source, "-O2");
    let script = self_exe_script(&dir, &object);
    let out = common::run_with(&mut Command::new(&script), b"", Duration::from_secs(60));
    assert_eq!(text(&out.stdout), "again: yes\n", "{}", text(&out.stderr));
}

/// `--self-exe PATH`: a program that starts itself again through
/// `/proc/self/exe` (libuv's test runner does) starts PATH, a script that
/// runs jitrun on the same object, instead of jitrun with its arguments.
#[test]
fn self_exe_is_what_proc_self_exe_gives_the_program() {
    if process_files_are_qemus() {
        return;
    }
    let dir = common::scratch("reuse-self-exe");
    let object = common::compile(&[common::testdata().join("reuse/self_exe.c")], "-O2", &[], &dir).remove(0);
    let script = self_exe_script(&dir, &object);
    let expected = std::fs::canonicalize(&script).unwrap();
    let out = common::run_with(Command::new(&script).arg(&expected), b"", Duration::from_secs(60));
    assert_eq!(
        text(&out.stdout),
        "readlink and realpath agree: 1\nreadlink is the expected path: 1\nAT_EXECFN is the same file: 1\n\
         child 3, 3 arguments\nexecv(readlink path): 3\n\
         child 4, 3 arguments\nexecve(/proc/self/exe): 4\nchild 5, 3 arguments\nposix_spawn(/proc/self/exe): 5\n\
         child 6, 7 arguments\nexecl(/proc/self/exe): 6\nchild 7, 3 arguments\nexeclp(/proc/self/exe): 7\n\
         child 8, 6 arguments\nexecle(/proc/self/exe): 8\n\
         child 9, 3 arguments\nfexecve(open(/proc/self/exe)): 9\n",
        "{}",
        text(&out.stderr)
    );
    // Without --self-exe, /proc/self/exe is jitrun, which refuses "child".
    let out = jitrun(&[object.to_str().unwrap()], b"");
    assert!(text(&out.stdout).contains("execve(/proc/self/exe): 125"), "{}", text(&out.stdout));
}

/// A program with its own malloc in a batch run with "env": the child sets
/// the environment after the libraries got the program's allocator, so the
/// program's setenv can grow the array libc made (as it grows the kernel's
/// natively) instead of meeting a block of glibc's.
#[test]
fn a_batch_environment_is_made_with_the_programs_own_malloc() {
    let dir = common::scratch("reuse-own-malloc");
    let object = common::compile(&[common::testdata().join("c/own_malloc.c")], "-O2 -fno-builtin", &[], &dir).remove(0);
    let plan = dir.join("runs.jsonl");
    std::fs::write(&plan, "{\"id\":\"with-env\",\"env\":{\"K\":\"v\"}}\n{\"id\":\"plain\"}\n").unwrap();
    let out = jitrun(&[object.to_str().unwrap(), "--batch", plan.to_str().unwrap()], b"");
    let lines: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{}", text(&out.stdout));
    for line in &lines {
        assert_eq!(line["status"], "exited", "{}", line);
        assert!(line["stdout"].as_str().unwrap().contains("environment grown: yes"), "{}", line);
    }
}

/// A program with its own `_start` is entered with the kernel's stack in
/// every mode: in process, isolated, repeated and in a batch (a run's
/// arguments and exit status its own).
#[test]
fn a_program_with_its_own_start_runs_in_every_mode() {
    let dir = common::scratch("reuse-own-start");
    let object = common::compile(&[common::testdata().join("c/own_start.c")], "-O2", &[], &dir).remove(0);
    let object = object.to_str().unwrap();
    let expected = "aligned 1, argc 2: a\nnull after argv 1, PATH in envp 1, page 4096, AT_ENTRY is _start 1\n\
                    _start in an executable PT_LOAD of AT_PHDR: 1\nconstructors ran: 0\n";
    for mode in [&[][..], &["--isolate"][..], &["--repeat", "2", "--isolate"][..]] {
        let out = jitrun(&[&[object], mode, &["--", "a"]].concat(), b"");
        assert_eq!(common::shell_status(&out), 42, "{:?}: {}", mode, text(&out.stderr));
        let runs = if mode.contains(&"2") { 2 } else { 1 };
        assert_eq!(text(&out.stdout), expected.repeat(runs), "{:?}", mode);
    }
    let plan = dir.join("plan.jsonl");
    std::fs::write(&plan, "{\"id\":\"one\",\"args\":[\"x\"]}\n{\"id\":\"three\",\"args\":[\"x\",\"y\",\"z\"]}\n")
        .unwrap();
    let out = jitrun(&[object, "--batch", plan.to_str().unwrap(), "-j", "2"], b"");
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    let codes: HashMap<String, i64> = text(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["exit_code"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(codes, HashMap::from([("one".to_string(), 42), ("three".to_string(), 44)]));
}

/// The program's heap starts as a native one's in every mode: its first
/// `malloc`/`new[]` blocks (of every size class, on the main thread and a
/// new one) hold zeros, not what the loader freed while jitrun loaded
/// libstdc++; also in each isolated run, and after a link spread over
/// helper threads (sixteen more objects).
#[test]
fn the_programs_heap_starts_as_a_native_ones_in_every_mode() {
    let dir = common::scratch("reuse-fresh-heap");
    let mut sources = vec![common::testdata().join("cxx/fresh_heap.cpp")];
    for i in 0..16 {
        let path = dir.join(format!("part{}.c", i));
        std::fs::write(&path, format!("int part{0}(void) {{ return {0}; }}\n", i)).unwrap();
        sources.push(path);
    }
    let objects = common::compile(&sources, "-O2", &[], &dir);
    let native = dir.join("a.out");
    common::link_native(&objects[..1], "-O2", true, &[], &[], &native);
    let expected = text(&common::run_with(&mut Command::new(&native), b"", Duration::from_secs(20)).stdout);
    assert!(expected.contains("main thread: 148 blocks, 0 with nonzero bytes"), "native: {}", expected);
    check_every_mode("fresh_heap", &objects[0], &[], &expected, |args| jitrun(args, b""));
    let all: Vec<&str> = objects.iter().map(|o| o.to_str().unwrap()).collect();
    for (mode, runs) in [(&[][..], 1), (&["--isolate", "--repeat", "2"][..], 2)] {
        let out = jitrun(&[&all[..], mode].concat(), b"");
        assert_eq!(text(&out.stdout), expected.repeat(runs), "{:?}: {}", mode, text(&out.stderr));
    }
}

/// An in-process run's output is written out when the run ends, as the
/// program's exit would write it: not left in the C library's buffers for
/// whenever the caller exits. (Here the caller never does: it aborts, in a
/// second process of this test binary.)
#[test]
fn an_in_process_runs_output_is_out_when_it_ends() {
    const CHILD: &str = "JITRUN_TEST_IN_PROCESS_RUN_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let object = build_mutants(&common::scratch("reuse-in-process-output"));
        let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
        linker.add_file(&object).unwrap();
        let mut image = linker.link().unwrap();
        image.write_global("mutant_id", &GlobalValue::Int(4)).unwrap();
        let outcome = image.run_in_process(&RunSpec::default()).unwrap();
        assert_eq!(outcome.status, RunStatus::Exited(3));
        std::process::abort();
    }
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.args(["--exact", "an_in_process_runs_output_is_out_when_it_ends", "--nocapture"]).env(CHILD, "1");
    let out = common::run_with(&mut child, b"", Duration::from_secs(60));
    assert_eq!(common::shell_status(&out), 128 + libc::SIGABRT, "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("failing\n"), "{}\n{}", text(&out.stdout), text(&out.stderr));
}
