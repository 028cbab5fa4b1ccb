//! Contained runs: limits, the sandbox, resource accounting, shards and
//! resumed batches, against hostile programs (`testdata/contained/hostile.c`,
//! whose global `mode` picks the hostile act). Every outcome asserted here is
//! certain: limits are far below what the programs would use, kills happen
//! after a number of result lines, not after a time.

mod common;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn build_hostile(dir: &Path) -> PathBuf {
    common::compile(&[common::testdata().join("contained/hostile.c")], "-O1", &["-pthread".to_string()], dir).remove(0)
}

fn jitrun(args: &[&str]) -> Output {
    common::run_with(common::jitrun_command().args(args), b"", Duration::from_secs(120))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Processes whose command line starts with `marker` (runs name themselves
/// after their argv[0], and their children inherit it).
fn processes_named(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if cmdline.starts_with(marker.as_bytes()) && !zombie {
            found.push(pid);
        }
    }
    found
}

/// Waits (at most 10 s) until no process is named `marker`; returns those left.
fn wait_until_none_named(marker: &str) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_named(marker);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn results_by_id(stdout: &str) -> HashMap<String, Value> {
    let mut results = HashMap::new();
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {}", line, e));
        assert_eq!(v["schema"], 2, "{}", line);
        let id = v["id"].as_str().map_or_else(|| v["id"].to_string(), str::to_string);
        assert!(results.insert(id, v).is_none(), "one line per run: {}", line);
    }
    results
}

/// Each hostile program of a batch is stopped with the status its limit
/// documents, the benign runs beside them are unaffected, and afterwards
/// no process of the batch is left and the memory is back.
#[test]
fn hostile_runs_are_stopped_by_their_limits_and_leave_nothing_behind() {
    let dir = common::scratch("contained-limits");
    let object = build_hostile(&dir);
    let big_file = dir.join("big.out");
    let marker = format!("hostile-{}", std::process::id());
    let plan = [
        r#"{"id":"ok-1","set":{"mode":0}}"#.to_string(),
        r#"{"id":"alloc","set":{"mode":1},"limits":{"memory":"64M"}}"#.to_string(),
        r#"{"id":"ok-2","set":{"mode":0}}"#.to_string(),
        r#"{"id":"fork-bomb","set":{"mode":2},"limits":{"processes":16}}"#.to_string(),
        r#"{"id":"threads","set":{"mode":11},"limits":{"processes":8}}"#.to_string(),
        r#"{"id":"busy","set":{"mode":3},"limits":{"cpu_time_ms":1000}}"#.to_string(),
        format!(
            r#"{{"id":"big-file","set":{{"mode":4}},"args":["{}"],"limits":{{"file_size":"1M"}}}}"#,
            big_file.display()
        ),
        r#"{"id":"ignores-term","set":{"mode":7},"timeout_ms":300}"#.to_string(),
        r#"{"id":"escapes","set":{"mode":13},"limits":{"processes":4}}"#.to_string(),
        r#"{"id":"ok-3","set":{"mode":0}}"#.to_string(),
    ];
    let plan_path = dir.join("plan.jsonl");
    std::fs::write(&plan_path, plan.join("\n")).unwrap();
    assert!(processes_named(&marker).is_empty());
    let batch = common::jitrun_command()
        .args([
            object.to_str().unwrap(),
            "--batch",
            plan_path.to_str().unwrap(),
            "-j",
            "2",
            "--timeout",
            "60s",
            "--argv0",
            &marker,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let batch_pid = batch.id();
    let out = batch.wait_with_output().unwrap();
    assert_eq!(common::shell_status(&out), 0, "stderr: {}", text(&out.stderr));
    let results = results_by_id(&text(&out.stdout));
    assert_eq!(results.len(), plan.len());
    let field = |id: &str, name: &str| results[id][name].clone();

    for id in ["ok-1", "ok-2", "ok-3"] {
        assert_eq!(field(id, "status"), "exited", "{}", id);
        assert_eq!(field(id, "stdout"), "ok\n", "{}", id);
        assert!(field(id, "resources")["user_ms"].is_number(), "{}: every run reports its cost", id);
    }
    for (id, limit) in [
        ("alloc", "memory"),
        ("fork-bomb", "processes"),
        ("threads", "processes"),
        ("busy", "cpu_time"),
        ("big-file", "file_size"),
    ] {
        assert_eq!(field(id, "status"), "limit", "{}: {}", id, results[id]);
        assert_eq!(field(id, "limit"), limit, "{}", id);
        assert_eq!(field(id, "exit_code"), Value::Null, "{}", id);
    }
    // The memory cgroup held the allocation loop at its limit.
    let peak = field("alloc", "resources")["peak_memory_kib"].as_u64().expect("a cgroup peak");
    assert!((60 * 1024..=64 * 1024).contains(&peak), "peak {} KiB against a 64 MiB limit", peak);
    // The busy loop spent about its second of CPU time (rusage splits the
    // scheduler's exact runtime by ticks), no more than the hard limit.
    let cpu = field("busy", "resources")["user_ms"].as_f64().unwrap()
        + field("busy", "resources")["system_ms"].as_f64().unwrap();
    assert!((500.0..2100.0).contains(&cpu), "busy loop used {} ms of CPU", cpu);
    // The file stopped at the limit exactly.
    assert_eq!(std::fs::metadata(&big_file).unwrap().len(), 1 << 20);
    assert_eq!(field("threads", "stdout"), "pthread_create: Resource temporarily unavailable\n");
    assert_eq!(field("ignores-term", "status"), "timeout");
    assert_eq!(field("ignores-term", "stdout"), "ignoring SIGTERM\n");
    // A child that left the run's process group still went down with it.
    assert_eq!(field("escapes", "status"), "exited");
    let escaped = field("escapes", "stdout");
    let escaped_pid: u32 =
        escaped.as_str().unwrap().strip_prefix("escaped ").expect("the escaped child's pid").trim().parse().unwrap();

    let left = wait_until_none_named(&marker);
    assert!(left.is_empty(), "processes of the batch outlived it: {:?}", left);
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", escaped_pid)).unwrap_or_default();
    assert!(!stat.contains(&marker), "the escaped child {} lives on: {}", escaped_pid, stat);
    // The groups that held the runs (and their memory) are gone. (How much
    // memory the machine has free afterwards depends on what else runs, so
    // the groups, not MemAvailable, are the certain sign.)
    for parent in own_cgroups() {
        let group = parent.join(format!("jitrun-{}", batch_pid));
        assert!(!group.exists(), "{} was left", group.display());
    }
}

/// The cgroup directories this process is in, one per mounted hierarchy
/// (jitrun makes its groups beneath the ones it is started in).
fn own_cgroups() -> Vec<PathBuf> {
    let lines = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let mut groups = Vec::new();
    for line in lines.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next(), fields.next().unwrap_or(""), fields.next().unwrap_or("/"));
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            groups.push(Path::new("/sys/fs/cgroup").join(path));
            groups.push(Path::new("/sys/fs/cgroup/unified").join(path));
        }
        for controller in controllers.split(',').filter(|c| !c.is_empty() && !c.starts_with("name=")) {
            groups.push(Path::new("/sys/fs/cgroup").join(controller).join(path));
        }
    }
    assert!(groups.iter().any(|g| g.is_dir()), "no cgroup directory of {:?} exists", groups);
    groups
}

/// On the command line, a limit's exit status is that of a native run
/// under the same limit, and one line says which limit.
#[test]
fn a_run_stopped_by_a_limit_exits_as_documented() {
    let dir = common::scratch("contained-exit");
    let object = build_hostile(&dir);
    let object = object.to_str().unwrap();
    let file = dir.join("file.out");
    let file = file.to_str().unwrap();
    for (args, status, option) in [
        (vec!["--set", "mode=1", "--max-memory", "32M"], 137, "--max-memory"),
        (vec!["--set", "mode=2", "--max-processes", "8"], 137, "--max-processes"),
        (vec!["--set", "mode=3", "--cpu-time", "1s"], 152, "--cpu-time"),
        (vec!["--set", "mode=4", "--max-file-size", "64K", "--", file], 153, "--max-file-size"),
    ] {
        let mut all = vec![object];
        all.extend(&args);
        let out = jitrun(&all);
        assert_eq!(common::shell_status(&out), status, "{:?}: {}", args, text(&out.stderr));
        assert!(text(&out.stderr).contains(option), "{:?}: {}", args, text(&out.stderr));
    }
    // Limits on a plain run imply --isolate; a run within them is untouched.
    let out =
        jitrun(&[object, "--set", "mode=0", "--max-memory", "256M", "--max-processes", "32", "--cpu-time", "10s"]);
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ok\n");
    // Values the kernel cannot take are refused up front.
    for bad in [["--max-memory", "12Q"], ["--max-processes", "0"], ["--max-open-files", "2"], ["--cpu-time", "soon"]] {
        let out = jitrun(&[object, bad[0], bad[1]]);
        assert_eq!(common::shell_status(&out), 125, "{:?}", bad);
    }
}

/// What `--sandbox` allows and refuses, each against an unsandboxed run
/// that succeeds, so that no refusal passes for a program that cannot.
#[test]
fn the_sandbox_confines_writes_signals_ptrace_and_the_network() {
    let dir = common::scratch("contained-sandbox");
    let object = build_hostile(&dir);
    let object = object.to_str().unwrap();
    let allowed = dir.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let allow = allowed.to_str().unwrap();
    let probe = jitrun(&[object, "--set", "mode=0", "--sandbox", "--no-network"]);
    if common::shell_status(&probe) == 125 {
        // A kernel without the features: strict mode refuses, naming them.
        let message = text(&probe.stderr);
        assert!(message.contains("lacks") && message.contains("best-effort"), "{}", message);
        let out = jitrun(&[object, "--set", "mode=0", "--sandbox=best-effort"]);
        assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
        eprintln!("skipping the sandbox's checks: {}", message);
        return;
    }
    assert_eq!(text(&probe.stdout), "ok\n", "{}", text(&probe.stderr));

    let run = |mode: &str, sandbox: &[&str], arg: &str| {
        let mut args = vec![object, "--set", mode, "--isolate"];
        args.extend(sandbox);
        args.extend(["--", arg]);
        let out = jitrun(&args);
        (common::shell_status(&out), text(&out.stdout), text(&out.stderr))
    };
    let sandboxed = ["--sandbox", "--allow-write", allow];

    // Writes: only below --allow-write.
    let outside = dir.join("outside.txt");
    let (status, stdout, _) = run("mode=5", &sandboxed, outside.to_str().unwrap());
    assert_eq!((status, stdout.as_str()), (3, "create refused: Permission denied\n"));
    assert!(!outside.exists());
    let (status, _, _) = run("mode=5", &[], outside.to_str().unwrap());
    assert_eq!(status, 0, "unsandboxed, the same write succeeds");
    assert!(outside.exists());
    let inside = allowed.join("inside.txt");
    let (status, stdout, stderr) = run("mode=5", &sandboxed, inside.to_str().unwrap());
    assert_eq!((status, stdout.as_str()), (0, "created\n"), "{}", stderr);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "owned\n");
    // Deleting or overwriting the user's files is a write too.
    let (status, _, _) = run("mode=5", &sandboxed, outside.to_str().unwrap());
    assert_eq!(status, 3);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "owned\n");

    // A private TMPDIR, writable, and gone after the run.
    let (status, stdout, stderr) = run("mode=8", &sandboxed, "");
    assert_eq!(status, 0, "{} {}", stdout, stderr);
    let temp = stdout.trim().strip_prefix("temp ok ").expect("the run's TMPDIR").to_string();
    assert!(temp.contains("jitrun-"), "{}", temp);
    assert!(!Path::new(&temp).exists(), "{} outlived its run", temp);

    // Signals to processes outside the run, and ptrace.
    assert_eq!(run("mode=9", &[], "").0, 0, "unsandboxed, a run can signal jitrun");
    assert_eq!(
        run("mode=9", &sandboxed, ""),
        (3, "signal refused: Operation not permitted\n".to_string(), String::new())
    );
    assert_eq!(run("mode=10", &sandboxed, "").1, "ptrace refused: Operation not permitted\n");

    // The network: a listener on 127.0.0.1 that the unsandboxed run reaches.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let (status, stdout, _) = run("mode=6", &[], &port);
    assert_eq!((status, stdout.as_str()), (0, "connected\n"));
    let (mut accepted, _) = listener.accept().unwrap();
    let mut greeting = String::new();
    std::io::Read::read_to_string(&mut accepted, &mut greeting).unwrap();
    assert_eq!(greeting, "hello\n");
    let (status, stdout, _) = run("mode=6", &["--sandbox", "--no-network"], &port);
    assert_eq!(status, 3, "{}", stdout);
    assert!(stdout.starts_with("connect refused"), "{}", stdout);
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "the sandboxed run reached the listener");

    // Options that make no sense alone are refused.
    assert_eq!(common::shell_status(&jitrun(&[object, "--no-network"])), 125);
    assert_eq!(common::shell_status(&jitrun(&[object, "--sandbox", "--allow-write", "/no/such/dir"])), 125);
}

/// A number from `/usr/bin/time -v`'s report.
fn time_v_field(report: &str, name: &str) -> f64 {
    let line =
        report.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{}: {}", name, report));
    line.rsplit(':').next().unwrap().trim().parse().unwrap()
}

/// The accounting of an isolated run agrees with `/usr/bin/time -v` on the
/// natively linked program doing the same work (64 MiB touched, 1 s of CPU).
#[test]
fn accounting_agrees_with_usr_bin_time() {
    assert!(
        Path::new("/usr/bin/time").exists(),
        "/usr/bin/time is missing: install Debian's `time` package (.ci/run does)"
    );
    let dir = common::scratch("contained-accounting");
    let object = build_hostile(&dir);
    let native = dir.join("hostile");
    common::link_native(std::slice::from_ref(&object), "-O1", false, &[], &["-pthread".to_string()], &native);
    let timed =
        Command::new("/usr/bin/time").arg("-v").arg(&native).arg("64").env("HOSTILE_MODE", "12").output().unwrap();
    assert!(timed.status.success(), "{}", text(&timed.stderr));
    let report = text(&timed.stderr);
    let native_cpu_ms = 1000.0 * (time_v_field(&report, "User time") + time_v_field(&report, "System time"));
    let native_rss = time_v_field(&report, "Maximum resident set size");
    let native_minor = time_v_field(&report, "Minor (reclaiming a frame) page faults");

    let report_path = dir.join("report.json");
    let out = jitrun(&[
        object.to_str().unwrap(),
        "--set",
        "mode=12",
        "--isolate",
        "--stats",
        "--report",
        report_path.to_str().unwrap(),
        "--",
        "64",
    ]);
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    let stats = text(&out.stderr);
    assert!(stats.starts_with("jitrun: run 1: exited 0; user "), "{}", stats);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let resources = &report["resources"];
    let cpu_ms = resources["user_ms"].as_f64().unwrap() + resources["system_ms"].as_f64().unwrap();
    let rss = resources["max_rss_kib"].as_f64().unwrap();
    let minor = resources["minor_faults"].as_f64().unwrap();
    // The program spins until it has used 1 s: both runs use 1 s and a bit.
    assert!((cpu_ms - native_cpu_ms).abs() < 150.0, "CPU {} ms under jitrun, {} ms natively", cpu_ms, native_cpu_ms);
    // Both touch the same 64 MiB; a forked run also has jitrun's own pages.
    assert!((rss - native_rss).abs() < 8192.0, "max RSS {} KiB under jitrun, {} KiB natively", rss, native_rss);
    assert!(rss > 65536.0, "{}", rss);
    assert!(
        (minor - native_minor).abs() < native_minor * 0.25 + 1000.0,
        "minor faults {} under jitrun, {} natively",
        minor,
        native_minor
    );
    assert!(resources["wall_ms"].as_f64().unwrap() >= cpu_ms * 0.9);
    assert_eq!(report["outcome"]["status"], "exited");
}

fn write_plan(dir: &Path, lines: usize) -> PathBuf {
    let path = dir.join("plan.jsonl");
    let mut plan = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..lines {
        writeln!(plan, r#"{{"id":"run-{}","set":{{"mode":0}}}}"#, i).unwrap();
    }
    plan.flush().unwrap();
    path
}

fn line_count(path: &Path) -> usize {
    std::fs::read(path).map_or(0, |bytes| bytes.iter().filter(|&&b| b == b'\n').count())
}

/// Counts the lines of a growing file, reading only what was added.
struct LineCounter {
    path: PathBuf,
    read: u64,
    lines: usize,
}

impl LineCounter {
    fn new(path: &Path) -> LineCounter {
        LineCounter { path: path.to_path_buf(), read: 0, lines: 0 }
    }

    /// Waits (polling, at most two minutes) until the file has `lines` lines.
    fn wait_for(&mut self, lines: usize, child: &mut std::process::Child) -> usize {
        use std::io::{Read, Seek, SeekFrom};
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.lines < lines {
            assert!(Instant::now() < deadline, "{} lines never came", lines);
            assert!(child.try_wait().unwrap().is_none(), "the batch ended at {} lines", self.lines);
            let mut added = Vec::new();
            if let Ok(mut file) = std::fs::File::open(&self.path) {
                file.seek(SeekFrom::Start(self.read)).unwrap();
                file.read_to_end(&mut added).unwrap();
            }
            self.read += added.len() as u64;
            self.lines += added.iter().filter(|&&b| b == b'\n').count();
            std::thread::sleep(Duration::from_millis(2));
        }
        self.lines
    }
}

/// Starts a batch appending to `results`.
fn start_batch(object: &Path, plan: &Path, extra: &[&str], results: &Path) -> std::process::Child {
    let output = std::fs::OpenOptions::new().create(true).append(true).open(results).unwrap();
    common::jitrun_command()
        .arg(object)
        .arg("--batch")
        .arg(plan)
        .args(["-j", "2"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(output)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The CI recipe: 20,000 runs in 4 shards, each killed with SIGKILL after a
/// different number of result lines and resumed, merge into exactly 20,000
/// results, each id once, each line whole.
#[test]
fn sharded_batches_killed_and_resumed_give_every_id_exactly_once() {
    const LINES: usize = 20_000;
    let dir = common::scratch("contained-shards");
    let object = build_hostile(&dir);
    let plan = write_plan(&dir, LINES);
    // Kill points: right away (possibly before any line), early, mid, late.
    let kill_after = [0, 37, 2500, 4000];
    let mut files = Vec::new();
    for (k, &after) in (1..=4).zip(&kill_after) {
        let results = dir.join(format!("results.{}.jsonl", k));
        let shard = format!("{}/4", k);
        let mut child = start_batch(&object, &plan, &["--shard", &shard], &results);
        LineCounter::new(&results).wait_for(after, &mut child);
        child.kill().unwrap();
        child.wait().unwrap();
        let written = line_count(&results);
        assert!(written >= after && written < LINES / 4, "shard {}: {} lines at the kill", k, written);
        // Resume, appending to the same file (as `>> results` does).
        let out = start_batch(&object, &plan, &["--shard", &shard, "--resume", results.to_str().unwrap()], &results)
            .wait_with_output()
            .unwrap();
        assert!(out.status.success(), "shard {}: {}", k, text(&out.stderr));
        assert_eq!(line_count(&results), LINES / 4, "shard {}", k);
        files.push(results);
    }
    let mut seen = HashSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.ends_with('\n'));
        for line in text.lines() {
            let v: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{:?}: a broken line {}: {}", file, line, e));
            assert_eq!(v["status"], "exited", "{}", line);
            assert!(seen.insert(v["id"].as_str().unwrap().to_string()), "{} twice", v["id"]);
        }
    }
    assert_eq!(seen.len(), LINES);
    // jitrun --merge-results with the plan checks the coverage too.
    let mut args: Vec<&str> = vec!["--merge-results"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend(["--batch", plan.to_str().unwrap()]);
    let merged = jitrun(&args);
    assert_eq!(common::shell_status(&merged), 0, "{}", text(&merged.stderr));
    assert_eq!(text(&merged.stdout).lines().count(), LINES);
    // Without the fourth shard, the plan's ids it had are named as missing.
    let out = jitrun(&["--merge-results", files[0].to_str().unwrap(), "--batch", plan.to_str().unwrap()]);
    assert_eq!(common::shell_status(&out), 125);
    assert!(text(&out.stderr).contains("15000 ids"), "{}", text(&out.stderr));
}

/// A half-written last line (what a kill in the middle of a write leaves)
/// is cut off when resuming into the same file, and refused otherwise.
#[test]
fn resuming_cuts_a_half_written_last_line() {
    let dir = common::scratch("contained-resume-cut");
    let object = build_hostile(&dir);
    let plan = write_plan(&dir, 6);
    let results = dir.join("results.jsonl");
    let full = start_batch(&object, &plan, &[], &results).wait_with_output().unwrap();
    assert!(full.status.success());
    let text_before = std::fs::read_to_string(&results).unwrap();
    let mut lines: Vec<&str> = text_before.lines().collect();
    let dropped: Value = serde_json::from_str(lines.pop().unwrap()).unwrap();
    let half = lines.join("\n") + "\n{\"schema\":2,\"id\":\"run-";
    std::fs::write(&results, &half).unwrap();
    // Read from elsewhere, the file is refused, naming its line.
    let out =
        jitrun(&[object.to_str().unwrap(), "--batch", plan.to_str().unwrap(), "--resume", results.to_str().unwrap()]);
    assert_eq!(common::shell_status(&out), 125);
    assert!(text(&out.stderr).contains("results.jsonl:6: the last line is incomplete"), "{}", text(&out.stderr));
    // Appended to, it is repaired and completed.
    let out =
        start_batch(&object, &plan, &["--resume", results.to_str().unwrap()], &results).wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("removed an incomplete last line"), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(&results).unwrap();
    assert_eq!(after.lines().count(), 6);
    assert!(after.lines().last().unwrap().contains(dropped["id"].as_str().unwrap()));
}

/// Plans whose ids cannot tell runs apart are refused before anything
/// runs, with the lines; so is --shard or --resume on a plan without ids.
#[test]
fn plans_with_duplicate_or_missing_ids_are_refused_with_their_lines() {
    let dir = common::scratch("contained-ids");
    let object = build_hostile(&dir);
    let object = object.to_str().unwrap();
    let plan = dir.join("dup.jsonl");
    std::fs::write(&plan, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n\n{\"id\":\"a\"}\n").unwrap();
    let out = jitrun(&[object, "--batch", plan.to_str().unwrap()]);
    assert_eq!(common::shell_status(&out), 125);
    assert!(out.stdout.is_empty(), "nothing ran");
    assert!(text(&out.stderr).contains(r#"duplicate ids: "a" on lines 1 and 4"#), "{}", text(&out.stderr));
    let plan = dir.join("missing.jsonl");
    std::fs::write(&plan, "{\"id\":\"a\",\"set\":{\"mode\":0}}\n{\"set\":{\"mode\":0}}\n").unwrap();
    let out = jitrun(&[object, "--batch", plan.to_str().unwrap(), "--shard", "1/2"]);
    assert_eq!(common::shell_status(&out), 125);
    assert!(text(&out.stderr).contains("lines without an \"id\""), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("line 2"), "{}", text(&out.stderr));
    // Without --shard or --resume, line numbers stand in for missing ids.
    let out = jitrun(&[object, "--batch", plan.to_str().unwrap()]);
    assert_eq!(common::shell_status(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    for bad in ["0/2", "3/2", "1-2"] {
        assert_eq!(common::shell_status(&jitrun(&[object, "--batch", plan.to_str().unwrap(), "--shard", bad])), 125);
    }
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid)).ok()?;
    status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// A plan of 20,000 lines streams: jitrun's RSS after 18,000 results is
/// what it was after 2,000.
#[test]
fn a_long_plan_streams_in_flat_memory() {
    const LINES: usize = 20_000;
    let dir = common::scratch("contained-stream");
    let object = build_hostile(&dir);
    let plan = write_plan(&dir, LINES);
    let results = dir.join("results.jsonl");
    let mut child = start_batch(&object, &plan, &[], &results);
    let mut counter = LineCounter::new(&results);
    let mut samples = Vec::new();
    for at in [2_000, 18_000] {
        counter.wait_for(at, &mut child);
        samples.push(rss_kib(child.id()).expect("jitrun's RSS"));
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(line_count(&results), LINES);
    assert!(samples[1] <= samples[0] + 1024, "RSS grew from {} KiB to {} KiB over 16,000 runs", samples[0], samples[1]);
}

/// The library gives the same: a limit is a status, every isolated run
/// its cost.
#[test]
fn the_library_reports_limits_and_costs() {
    use jitrun::image::limits::{LimitKind, RunLimits};
    use jitrun::{GlobalValue, RunSpec, RunStatus};
    let dir = common::scratch("contained-library");
    let object = build_hostile(&dir);
    let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    linker.add_file(&object).unwrap();
    let image = linker.link().unwrap();
    let limits = RunLimits { memory: Some(32 << 20), ..Default::default() };
    let outcome = image.run_isolated(&RunSpec::captured().set("mode", GlobalValue::Int(1)).limits(limits)).unwrap();
    assert_eq!(outcome.status, RunStatus::Limit(LimitKind::Memory));
    assert_eq!(outcome.shell_status(), 137);
    let outcome = image.run_isolated(&RunSpec::captured().set("mode", GlobalValue::Int(0))).unwrap();
    assert_eq!(outcome.status, RunStatus::Exited(0));
    let resources = outcome.resources.expect("an isolated run's cost");
    assert!(resources.max_rss_kib > 0 && resources.minor_faults > 0);
    assert_eq!(resources.peak_memory_kib, None, "no memory cgroup without a memory limit");
}

/// A jitrun killed with SIGKILL leaves its runs in their cgroups; the next
/// jitrun that uses cgroups kills them and removes the groups.
#[test]
fn runs_left_by_a_killed_jitrun_are_ended_by_the_next() {
    let dir = common::scratch("contained-stale");
    let object = build_hostile(&dir);
    let marker = format!("stale-{}", std::process::id());
    let mut killed = common::jitrun_command()
        .arg(&object)
        .args(["--set", "mode=7", "--max-processes", "4", "--argv0", &marker])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The run has started once it says so.
    let mut said = [0u8; 17];
    std::io::Read::read_exact(killed.stdout.as_mut().unwrap(), &mut said).unwrap();
    assert_eq!(&said, b"ignoring SIGTERM\n");
    killed.kill().unwrap();
    killed.wait().unwrap();
    let orphans = processes_named(&marker);
    assert_eq!(orphans.len(), 1, "the run outlives a jitrun killed with SIGKILL");
    let next = common::jitrun_command()
        .arg(&object)
        .args(["--set", "mode=0", "--max-processes", "4"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let next_pid = next.id();
    let out = next.wait_with_output().unwrap();
    assert_eq!(common::shell_status(&out), 0);
    let left = wait_until_none_named(&marker);
    assert!(left.is_empty(), "{:?} outlived the next jitrun", left);
    // Neither the killed jitrun's groups nor the next one's are left.
    for pid in [killed.id(), next_pid] {
        for root in ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"] {
            let group = Path::new(root).join(format!("jitrun-{}", pid));
            assert!(!group.exists(), "{} was left", group.display());
        }
    }
}
