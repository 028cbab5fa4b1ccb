//! Shared test harness: build C/C++ programs from `testdata/` with the
//! system compiler, link them natively and run them through jitrun, and
//! compare stdout, stderr and exit status byte for byte.
//!
//! A program is a single file `testdata/<suite>/NAME.c` (or `.cpp`) or a
//! directory `testdata/<suite>/NAME/` of sources. Its first lines may hold
//! directives:
//!
//! ```text
//! // jitrun-test: args=a b c        program arguments
//! // jitrun-test: stdin=text\n      standard input (\n and \t are unescaped)
//! // jitrun-test: libs=-lm          extra link inputs (given to both)
//! // jitrun-test: env=KEY=VALUE     extra environment variable (repeatable)
//! // jitrun-test: cflags=-pthread   extra compile flags for every flag set
//! // jitrun-test: gcc-cflags=-mtls-dialect=gnu2   extra flags for gcc only
//! // jitrun-test: clang-cflags=-fno-builtin       extra flags for clang only
//! // jitrun-test: x86_64:gcc-cflags=-mtls-dialect=gnu2   only on that CPU
//! // jitrun-test: aarch64:clang-cannot=-mcmodel=large   that compiler cannot
//! //               build the program with that flag: the flag set checks it still cannot
//! ```
//!
//! Programs are compiled by a [`Toolchain`]: the system `cc`/`g++` (gcc),
//! or clang 14 when it is installed (CI installs it; set
//! `JITRUN_REQUIRE_CLANG=1` to make its absence a failure rather than a skip).
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The flag sets every differential test runs under.
#[cfg(target_arch = "x86_64")]
pub const C_FLAG_SETS: &[&str] = &["-O0", "-O2", "-O2 -fPIC", "-O2 -fno-pic -fno-pie", "-O2 -mcmodel=large"];

/// The flag sets for clang: the same models, plus what clang does
/// differently from gcc at `-O0 -fno-pic` (absolute `mov stdout, %rdi`).
#[cfg(target_arch = "x86_64")]
pub const CLANG_FLAG_SETS: &[&str] =
    &["-O0", "-O2", "-O2 -fPIC", "-O0 -fno-pic -fno-pie", "-O2 -fno-pic -fno-pie", "-O2 -mcmodel=large"];

/// On aarch64: the small model (the default, PIE), PIC, position-dependent,
/// the large model (absolute MOVZ/MOVK addresses; it is position-dependent
/// only) and the tiny one (everything within ±1 MiB).
#[cfg(target_arch = "aarch64")]
pub const C_FLAG_SETS: &[&str] =
    &["-O0", "-O2", "-O2 -fPIC", "-O2 -fno-pic -fno-pie", "-O2 -mcmodel=large -fno-pic -fno-pie", "-O2 -mcmodel=tiny"];

/// The same models for clang on aarch64.
#[cfg(target_arch = "aarch64")]
pub const CLANG_FLAG_SETS: &[&str] =
    &["-O0", "-O2", "-O2 -fPIC", "-O2 -fno-pic -fno-pie", "-O2 -mcmodel=large -fno-pic -fno-pie", "-O2 -mcmodel=tiny"];

/// The compiler that builds the objects; the native link always uses `cc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toolchain {
    Gcc,
    Clang,
}

impl Toolchain {
    /// The compiler driver for C (or C++), for the tests' target.
    pub fn compiler(self, cxx: bool) -> Command {
        match (self, cxx) {
            (Toolchain::Gcc, false) => cc(),
            (Toolchain::Gcc, true) => cxx_compiler(),
            (Toolchain::Clang, cxx) => clang(cxx),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Toolchain::Gcc => "gcc",
            Toolchain::Clang => "clang",
        }
    }

    /// Whether the compiler can be run here.
    pub fn available(self) -> bool {
        self.compiler(false).arg("--version").output().is_ok_and(|o| o.status.success())
    }
}

/// The GNU triple of the CPU the tests build programs for: the one this
/// test binary (and the jitrun under test) was built for.
pub fn target_triple() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-linux-gnu"
    } else {
        "x86_64-linux-gnu"
    }
}

/// Whether the system's `cc` builds for another CPU than the tests': an
/// aarch64 build of jitrun tested under qemu on an x86-64 machine. The
/// cross compilers (`aarch64-linux-gnu-gcc`, clang's `--target`) build the
/// programs then, and the native ones run under emulation too.
pub fn cross_testing() -> bool {
    static CROSS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CROSS.get_or_init(|| {
        let machine = Command::new("cc").arg("-dumpmachine").output().map(|o| o.stdout).unwrap_or_default();
        !String::from_utf8_lossy(&machine).starts_with(target_triple().split('-').next().unwrap())
    })
}

/// Whether the tests run under emulation, where a check cannot show what
/// it is about (`what`, printed as a note): then the caller skips it; it
/// is made on hosts of the CPU the tests are built for.
pub fn emulation_cannot_show(what: &str) -> bool {
    let cross = cross_testing();
    if cross {
        eprintln!("note: emulated CPU: {}; checked on native hosts", what);
    }
    cross
}

/// `cc` for the tests' target.
pub fn cc() -> Command {
    Command::new(if cross_testing() { format!("{}-gcc", target_triple()) } else { "cc".to_string() })
}

/// `g++` for the tests' target.
pub fn cxx_compiler() -> Command {
    Command::new(if cross_testing() { format!("{}-g++", target_triple()) } else { "g++".to_string() })
}

/// clang 14 (`clang++-14` for C++) for the tests' target.
pub fn clang(cxx: bool) -> Command {
    let mut command = Command::new(if cxx { "clang++-14" } else { "clang-14" });
    if cross_testing() {
        command.arg(format!("--target={}", target_triple()));
    }
    command
}

/// `ar` for the tests' target (GNU ar reads every target's objects).
pub fn ar() -> Command {
    Command::new("ar")
}

pub fn jitrun_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_jitrun"))
}

/// Where the tests' jitrun keeps its own link cache (on by default): under
/// the build's directory, not the user's home.
pub fn test_cache_home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache")
}

/// A command that runs jitrun, its own link cache under
/// [`test_cache_home`] unless the test sets `XDG_CACHE_HOME` itself.
pub fn jitrun_command() -> Command {
    let mut cmd = Command::new(jitrun_bin());
    cmd.env("XDG_CACHE_HOME", test_cache_home());
    cmd
}

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// A fresh scratch directory under cargo's target tmpdir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[derive(Default, Clone, Debug)]
pub struct Directives {
    pub args: Vec<String>,
    pub stdin: Vec<u8>,
    pub libs: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cflags: Vec<String>,
    pub gcc_cflags: Vec<String>,
    pub clang_cflags: Vec<String>,
    /// Flags with which gcc (clang) cannot compile the program (clang 14
    /// has ELF TLS other than local-exec only in aarch64's small model).
    pub gcc_cannot: Vec<String>,
    pub clang_cannot: Vec<String>,
}

impl Directives {
    /// Extra compile flags for objects built by `toolchain`.
    pub fn cflags_for(&self, toolchain: Toolchain) -> Vec<String> {
        let specific = match toolchain {
            Toolchain::Gcc => &self.gcc_cflags,
            Toolchain::Clang => &self.clang_cflags,
        };
        self.cflags.iter().chain(specific).cloned().collect()
    }

    /// The flag of `flags` with which `toolchain` cannot build the program.
    pub fn cannot_build(&self, toolchain: Toolchain, flags: &str) -> Option<&str> {
        let cannot = match toolchain {
            Toolchain::Gcc => &self.gcc_cannot,
            Toolchain::Clang => &self.clang_cannot,
        };
        cannot.iter().map(String::as_str).find(|flag| flags.split_whitespace().any(|f| f == *flag))
    }
}

pub fn read_directives(source: &Path) -> Directives {
    let text = std::fs::read_to_string(source).unwrap();
    let mut d = Directives::default();
    for line in text.lines().take_while(|l| l.starts_with("//") || l.trim().is_empty()) {
        let Some(rest) = line.strip_prefix("// jitrun-test:") else {
            continue;
        };
        let (key, value) = rest.trim().split_once('=').unwrap_or((rest.trim(), ""));
        // `CPU:key` counts only on that CPU (`x86_64`, `aarch64`).
        let key = match key.split_once(':') {
            Some((cpu, key)) if cpu == std::env::consts::ARCH => key,
            Some(_) => continue,
            None => key,
        };
        match key {
            "args" => d.args = value.split_whitespace().map(str::to_string).collect(),
            "stdin" => d.stdin = value.replace("\\n", "\n").replace("\\t", "\t").into_bytes(),
            "libs" => d.libs = value.split_whitespace().map(str::to_string).collect(),
            "env" => {
                let (k, v) = value.split_once('=').unwrap();
                d.env.push((k.to_string(), v.to_string()));
            }
            "cflags" => d.cflags.extend(value.split_whitespace().map(str::to_string)),
            "gcc-cflags" => d.gcc_cflags.extend(value.split_whitespace().map(str::to_string)),
            "clang-cflags" => d.clang_cflags.extend(value.split_whitespace().map(str::to_string)),
            "gcc-cannot" => d.gcc_cannot.extend(value.split_whitespace().map(str::to_string)),
            "clang-cannot" => d.clang_cannot.extend(value.split_whitespace().map(str::to_string)),
            other => panic!("{}: unknown directive {}", source.display(), other),
        }
    }
    d
}

/// Sources of a program: the file itself, or every C/C++ file of the directory
/// (the one named `main.*` first, so argv[0] and order are stable).
pub fn sources(program: &Path) -> Vec<PathBuf> {
    if program.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(program)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("c" | "cpp" | "cc")))
            .collect();
        files.sort_by_key(|p| (p.file_stem().unwrap() != "main", p.clone()));
        files
    } else {
        vec![program.to_path_buf()]
    }
}

pub fn is_cxx(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("cpp" | "cc"))
}

/// Runs a build command; panics with its stderr when it fails.
pub fn run_checked(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{:?}: {}", cmd, e));
    assert!(out.status.success(), "{:?} failed:\n{}", cmd, String::from_utf8_lossy(&out.stderr));
}

/// Compiles every source with `flags` into `dir`; returns the objects.
pub fn compile(sources: &[PathBuf], flags: &str, extra: &[String], dir: &Path) -> Vec<PathBuf> {
    compile_with(Toolchain::Gcc, sources, flags, extra, dir)
}

/// Writes C `text` to `dir/file_name` and compiles it with `flags`; returns the object.
pub fn compile_source(dir: &Path, file_name: &str, text: &str, flags: &str) -> PathBuf {
    let source = dir.join(file_name);
    std::fs::write(&source, text).unwrap();
    compile(&[source], flags, &[], dir).remove(0)
}

/// Like [`compile`], with `toolchain`'s compiler.
pub fn compile_with(
    toolchain: Toolchain,
    sources: &[PathBuf],
    flags: &str,
    extra: &[String],
    dir: &Path,
) -> Vec<PathBuf> {
    sources
        .iter()
        .map(|src| {
            let obj = dir.join(src.file_stem().unwrap()).with_extension("o");
            run_checked(
                toolchain
                    .compiler(is_cxx(src))
                    .arg("-c")
                    .args(flags.split_whitespace())
                    .args(extra)
                    .arg(src)
                    .arg("-o")
                    .arg(&obj),
            );
            obj
        })
        .collect()
}

/// Links natively the way a user of `cc` would for these flags.
pub fn link_native(objects: &[PathBuf], flags: &str, cxx: bool, libs: &[String], extra: &[String], out: &Path) {
    let out = try_link_native(objects, flags, cxx, libs, extra, out);
    assert!(out.status.success(), "native link failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// [`link_native`], returning the linker's output whether it succeeds or not.
pub fn try_link_native(
    objects: &[PathBuf],
    flags: &str,
    cxx: bool,
    libs: &[String],
    extra: &[String],
    out: &Path,
) -> Output {
    let mut cmd = if cxx { cxx_compiler() } else { cc() };
    if flags.contains("-fno-pic") {
        cmd.arg("-no-pie");
    }
    cmd.args(extra.iter().filter(|f| matches!(f.as_str(), "-pthread" | "-rdynamic")));
    cmd.args(objects).args(libs).arg("-o").arg(out).output().unwrap_or_else(|e| panic!("{:?}: {}", cmd, e))
}

/// Runs a command with stdin and a timeout; a hang is a test failure.
pub fn run_with(cmd: &mut Command, stdin: &[u8], timeout: Duration) -> Output {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // jitrun's own link cache (on by default) goes under the build's
    // directory, not the user's home, unless the test chose a place.
    if !cmd.get_envs().any(|(name, _)| name == "XDG_CACHE_HOME" || name == "HOME") {
        cmd.env("XDG_CACHE_HOME", test_cache_home());
    }
    // A script a test has just written is "busy" (ETXTBSY) while a child
    // forked meanwhile by another test's thread still holds the write
    // descriptor, until that child execs: try again shortly.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            spawned => break spawned.unwrap_or_else(|e| panic!("{:?}: {}", cmd, e)),
        }
    };
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let start = Instant::now();
    let out_handle = {
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
            v
        })
    };
    let err_handle = {
        let mut stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut stderr, &mut v).unwrap();
            v
        })
    };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("{:?} timed out after {:?}", cmd, timeout);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = writer.join();
    Output { status, stdout: out_handle.join().unwrap(), stderr: without_emulator_notes(err_handle.join().unwrap()) }
}

/// Drops what qemu-user itself writes to stderr when the emulated process
/// dies from a signal ("qemu: uncaught target signal 11 (Segmentation
/// fault) - core dumped"): a native run prints nothing then.
pub fn without_emulator_notes(stderr: Vec<u8>) -> Vec<u8> {
    const NOTE: &[u8] = b"qemu: uncaught target signal ";
    if !cross_testing() || !stderr.windows(NOTE.len()).any(|w| w == NOTE) {
        return stderr;
    }
    let mut kept = Vec::with_capacity(stderr.len());
    for line in stderr.split_inclusive(|&b| b == b'\n') {
        if !line.starts_with(NOTE) {
            kept.extend_from_slice(line);
        }
    }
    kept
}

/// Exit status as a shell would report it: code, or 128 + signal.
pub fn shell_status(out: &Output) -> i32 {
    shell_status_of(out.status)
}

pub fn shell_status_of(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Builds `program` with `toolchain` under `flags`, runs it natively and
/// under jitrun, and returns a description of every difference (empty when
/// identical).
pub fn differential(toolchain: Toolchain, program: &Path, flags: &str, scratch_dir: &Path) -> Vec<String> {
    differential_with(toolchain, program, flags, scratch_dir, None)
}

/// Builds the objects jitrun runs from the sources and directives, when
/// they are not the native ones (Mach-O builds of the same program).
pub type JitObjects<'a> = &'a dyn Fn(&[PathBuf], &Directives) -> Vec<PathBuf>;

/// Like [`differential`]; with `jit_objects`, jitrun runs the objects it
/// builds instead of the ones linked natively.
pub fn differential_with(
    toolchain: Toolchain,
    program: &Path,
    flags: &str,
    scratch_dir: &Path,
    jit_objects: Option<JitObjects>,
) -> Vec<String> {
    let srcs = sources(program);
    let directives = read_directives(&srcs[0]);
    let cxx = srcs.iter().any(|s| is_cxx(s));
    let cflags = directives.cflags_for(toolchain);
    let name = format!("{} [{} {}]", program.file_name().unwrap().to_string_lossy(), toolchain.name(), flags);
    if let Some(flag) = directives.cannot_build(toolchain, flags) {
        // Nothing to compare: the compiler refuses. Checked, so that the
        // directive goes once it can.
        let compiled = srcs.iter().all(|src| {
            let mut cmd = toolchain.compiler(is_cxx(src));
            cmd.arg("-c").args(flags.split_whitespace()).args(&cflags).arg(src).arg("-o");
            cmd.arg(scratch_dir.join("unbuildable.o")).output().is_ok_and(|out| out.status.success())
        });
        return match compiled {
            true => vec![format!("{}: the compiler builds it now; drop its `cannot={}` directive", name, flag)],
            false => Vec::new(),
        };
    }
    let objects = compile_with(toolchain, &srcs, flags, &cflags, scratch_dir);
    let exe = scratch_dir.join("a.out");
    let linked = try_link_native(&objects, flags, cxx, &directives.libs, &cflags, &exe);
    if !linked.status.success() {
        let linker_gap = String::from_utf8_lossy(&linked.stderr).contains("isn't handled by");
        if linker_gap && toolchain == Toolchain::Clang {
            // GNU ld for aarch64 cannot apply clang's ADRP/ADR or absolute
            // (MOVW) references to an IFUNC ("isn't handled by
            // elf64_aarch64_final_link_relocate"; gcc reaches IFUNCs
            // through the GOT) and lld 14 lacks the tiny model's
            // GOT_LD_PREL19: no native linker links it. jitrun does; the
            // oracle is the same program and flags built by gcc.
            let oracle_dir = scratch_dir.join("oracle");
            std::fs::create_dir_all(&oracle_dir).unwrap();
            let gcc_flags = directives.cflags_for(Toolchain::Gcc);
            let oracle = compile_with(Toolchain::Gcc, &srcs, flags, &gcc_flags, &oracle_dir);
            let relinked = try_link_native(&oracle, flags, cxx, &directives.libs, &gcc_flags, &exe);
            assert!(relinked.status.success(), "{}: {}", name, String::from_utf8_lossy(&relinked.stderr));
        } else {
            // A program the native linker cannot link under these flags
            // (more than the tiny code model's megabyte, say) is refused
            // by jitrun too, with its one-line error.
            return refused_as_natively(&name, &linked, &objects, &directives);
        }
    }
    let objects = match jit_objects {
        Some(build) => build(&srcs, &directives),
        None => objects,
    };

    let timeout = Duration::from_secs(20);
    let mut native = Command::new(&exe);
    native.args(&directives.args).envs(directives.env.iter().cloned());
    let native = run_with(&mut native, &directives.stdin, timeout);

    let jit_run = |link_cache: Option<&Path>| {
        let mut jit = jitrun_command();
        // A native program that dies from a signal prints nothing itself; the
        // crash report would be the only difference (the status still compares).
        jit.arg("--no-crash-handler");
        if let Some(dir) = link_cache {
            jit.arg("--link-cache").arg(dir).env(CACHE_LOG.0, CACHE_LOG.1);
        }
        jit.args(&objects).args(&directives.libs).arg("--").args(&directives.args).envs(directives.env.iter().cloned());
        run_with(&mut jit, &directives.stdin, timeout)
    };
    let mut diffs = output_diffs(&name, &native, &jit_run(None));
    // Under emulation every jitrun run costs a tenth of a second or more:
    // there the cache passes take the default code model only.
    if cross_testing() && flags != "-O2" {
        return diffs;
    }
    // Twice more through a link cache: the first run stores the image (if
    // the cache keeps links like this one), the second maps it back.
    let cache = scratch_dir.join("link-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let mut storing = jit_run(Some(&cache));
    take_cache_log(&mut storing);
    diffs.extend(output_diffs(&format!("{} (link cache: storing)", name), &native, &storing));
    let stored = link_cache_entries(&cache);
    let mut mapping = jit_run(Some(&cache));
    let log = take_cache_log(&mut mapping);
    diffs.extend(output_diffs(&format!("{} (link cache: stored)", name), &native, &mapping));
    if !stored.is_empty() && !log.contains("link cache: using") {
        diffs.push(format!(
            "{}: the second run through the link cache did not use its entry {:?}:\n{}",
            name, stored, log
        ));
    }
    diffs
}

/// The environment that makes jitrun say on stderr what its link cache
/// does (`RUST_LOG` is no part of an entry's key); [`take_cache_log`]
/// takes those lines out again. Whether a run used an entry shows there:
/// its file may be replaced by the run (once its inputs settled), so a
/// new inode does not tell.
pub const CACHE_LOG: (&str, &str) = ("RUST_LOG", "warn,jitrun::link::cache=debug");

/// Takes the link cache's log lines (see [`CACHE_LOG`]) out of `out`'s
/// stderr and returns them.
pub fn take_cache_log(out: &mut Output) -> String {
    const PREFIX: &[u8] = b"[DEBUG jitrun::link::cache] ";
    let (mut log, mut rest) = (String::new(), Vec::new());
    for line in out.stderr.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(PREFIX) {
            log.push_str(&String::from_utf8_lossy(line));
        } else {
            rest.extend_from_slice(line);
        }
    }
    out.stderr = rest;
    log
}

/// The entries in a link cache directory, each as its name and inode (a
/// run that links again replaces its entry with a new file).
pub fn link_cache_entries(dir: &Path) -> Vec<(String, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut entries: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|listing| {
            listing
                .filter_map(|e| e.ok())
                .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), e.metadata().ok()?.ino())))
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    entries
}

/// For a program the native link refused (`native_link`): jitrun refuses
/// it too, one line, status 125, and names a relocation out of range when
/// the linker did. The differences, if any.
fn refused_as_natively(name: &str, native_link: &Output, objects: &[PathBuf], directives: &Directives) -> Vec<String> {
    let jit = run_with(jitrun_command().args(objects).args(&directives.libs), b"", Duration::from_secs(20));
    let (linker, ours) = (String::from_utf8_lossy(&native_link.stderr), String::from_utf8_lossy(&jit.stderr));
    let mut diffs = Vec::new();
    if shell_status(&jit) != 125 || !jit.stdout.is_empty() || ours.lines().count() != 1 {
        diffs.push(format!(
            "{}: the native link failed, jitrun did not refuse it:\n{}\n--- jitrun\n{}",
            name, linker, ours
        ));
    } else if linker.contains("relocation truncated to fit") && !ours.contains("out of range") {
        diffs.push(format!("{}: the linker found a relocation out of range, jitrun said\n{}", name, ours));
    }
    diffs
}

/// Every difference between a native run and a jitrun run (empty when
/// stdout, stderr and exit status are identical).
pub fn output_diffs(name: &str, native: &Output, jit: &Output) -> Vec<String> {
    let mut diffs = Vec::new();
    for (stream, ours, theirs) in [("stdout", &native.stdout, &jit.stdout), ("stderr", &native.stderr, &jit.stderr)] {
        if ours != theirs {
            diffs.push(format!(
                "{}: {} differs\n--- native\n{}\n--- jitrun\n{}",
                name,
                stream,
                String::from_utf8_lossy(ours),
                String::from_utf8_lossy(theirs)
            ));
        }
    }
    if shell_status(native) != shell_status(jit) {
        diffs.push(format!("{}: exit status native {} jitrun {}", name, shell_status(native), shell_status(jit)));
    }
    diffs
}

/// Runs the native executable `exe` and `jitrun JIT_ARGS -- ARGS` and
/// returns every difference, with `name` in each message.
pub fn compare_with_native<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    exe: &Path,
    jit_args: &[S],
    args: &[&str],
) -> Vec<String> {
    let timeout = Duration::from_secs(20);
    let native = run_with(Command::new(exe).args(args), b"", timeout);
    let jit = run_with(jitrun_command().args(jit_args).arg("--").args(args), b"", timeout);
    output_diffs(name, &native, &jit)
}

/// Runs jitrun with `args` (no stdin) and returns its output.
pub fn jitrun<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    run_with(jitrun_command().args(args), b"", Duration::from_secs(20))
}

/// Whether clang-14 is here; its absence fails under JITRUN_REQUIRE_CLANG.
pub fn clang_available() -> bool {
    let available = Toolchain::Clang.available();
    assert!(available || std::env::var_os("JITRUN_REQUIRE_CLANG").is_none(), "clang-14 is required but not installed");
    available
}

/// Runs `program` under every flag set and fails with all differences.
pub fn check_program(suite: &str, name: &str, flag_sets: &[&str]) {
    check_program_with(Toolchain::Gcc, suite, name, flag_sets)
}

/// Like [`check_program`], with objects built by `toolchain`. Clang being
/// absent skips the check (with a note) unless `JITRUN_REQUIRE_CLANG` is set.
pub fn check_program_with(toolchain: Toolchain, suite: &str, name: &str, flag_sets: &[&str]) {
    let program = testdata().join(suite).join(name);
    assert!(program.exists(), "{} does not exist", program.display());
    if toolchain == Toolchain::Clang && !clang_available() {
        eprintln!("note: clang-14 is not installed; skipping {} under clang", name);
        return;
    }
    let mut all = Vec::new();
    for (i, flags) in flag_sets.iter().enumerate() {
        let dir = scratch(&format!("{}-{}-{}-{}", suite, toolchain.name(), name.replace('.', "_"), i));
        all.extend(differential(toolchain, &program, flags, &dir));
    }
    assert!(all.is_empty(), "{}", all.join("\n\n"));
}

/// The target triple of Mach-O x86-64 test objects (and of the assembly
/// files written for x86-64).
pub const MACHO_TRIPLE: &str = "x86_64-apple-macosx10.15";

/// The target triple of Mach-O arm64 test objects.
pub const MACHO_ARM64_TRIPLE: &str = "arm64-apple-macosx11";

/// The Mach-O triple of the tests' target CPU.
pub fn macho_triple() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        MACHO_ARM64_TRIPLE
    } else {
        MACHO_TRIPLE
    }
}

/// Compiles C sources into Mach-O objects of the tests' target CPU in
/// `dir`: clang-14 emits LLVM IR for Linux with this machine's headers
/// (glibc's ABI), llc-14 turns the IR into a Mach-O object. The objects
/// are named `NAME_macho.o`.
pub fn compile_macho(sources: &[PathBuf], flags: &str, extra: &[String], dir: &Path) -> Vec<PathBuf> {
    sources
        .iter()
        .map(|src| {
            let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
            let ir = dir.join(format!("{}.ll", stem));
            let obj = dir.join(format!("{}_macho.o", stem));
            run_checked(
                clang(is_cxx(src))
                    .args(["-S", "-emit-llvm"])
                    .args(flags.split_whitespace())
                    .args(extra)
                    .arg(src)
                    .arg("-o")
                    .arg(&ir),
            );
            let text = std::fs::read_to_string(&ir).unwrap();
            let text = ir_for_macho(&text);
            let text = if cfg!(target_arch = "aarch64") { ir_va_lists_for_darwin_arm64(&text) } else { text };
            std::fs::write(&ir, text).unwrap();
            run_checked(
                Command::new("llc-14")
                    .arg(format!("-mtriple={}", macho_triple()))
                    .arg("-filetype=obj")
                    .arg(&ir)
                    .arg("-o")
                    .arg(&obj),
            );
            obj
        })
        .collect()
}

/// IR for AArch64 Linux keeps a `va_list` as AAPCS64's five-field struct
/// and reads it with explicit code that looks at `__gr_offs` and
/// `__vr_offs` (offsets 24 and 28); lowered for Darwin, `va_start` and
/// `va_copy` write only its first word, `__stack` (Darwin's `va_list` is
/// that one pointer: every variadic argument is on the stack). Zeroing the
/// two offsets after each makes the struct a valid AAPCS64 `va_list` with
/// no register arguments left: `va_arg` then reads everything from
/// `__stack`, which is exactly Darwin's layout, and so do glibc's
/// `vprintf` and the like it is passed to. (See README, "Mach-O arm64".)
pub fn ir_va_lists_for_darwin_arm64(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len());
    let mut n = 0;
    for line in ir.lines() {
        out.push_str(line);
        out.push('\n');
        let call = ["call void @llvm.va_start(", "call void @llvm.va_copy("]
            .iter()
            .find_map(|c| line.find(c).map(|at| &line[at + c.len()..]));
        let Some(args) = call else { continue };
        // The first argument: `i8* %name` (typed pointers) or `ptr %name`.
        let first = args.split([',', ')']).next().unwrap_or("").trim();
        let Some(list) = first.split_whitespace().last().filter(|v| v.starts_with('%')) else { continue };
        let opaque = first.starts_with("ptr");
        let indent = &line[..line.len() - line.trim_start().len()];
        n += 1;
        if opaque {
            out.push_str(&format!("{indent}%jitrun.offs.{n} = getelementptr inbounds i8, ptr {list}, i64 24\n"));
            out.push_str(&format!("{indent}store i64 0, ptr %jitrun.offs.{n}, align 8\n"));
        } else {
            out.push_str(&format!("{indent}%jitrun.offs.{n} = getelementptr inbounds i8, i8* {list}, i64 24\n"));
            out.push_str(&format!("{indent}%jitrun.offs64.{n} = bitcast i8* %jitrun.offs.{n} to i64*\n"));
            out.push_str(&format!("{indent}store i64 0, i64* %jitrun.offs64.{n}, align 8\n"));
        }
    }
    out
}

/// Removes what Linux IR has and Mach-O cannot express: COMDATs (C++
/// inline functions become weak definitions, as on Darwin) and ELF section
/// names such as `.text.startup`.
pub fn ir_for_macho(ir: &str) -> String {
    fn drop_between(line: &str, start: &str, end: char) -> String {
        let mut out = line.to_string();
        while let Some(at) = out.find(start) {
            let rest = &out[at + start.len()..];
            let stop = rest.find(end).map_or(out.len(), |i| at + start.len() + i + 1);
            out.replace_range(at..stop, "");
        }
        out
    }
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        if line.starts_with('$') && line.contains("= comdat ") {
            continue;
        }
        let line = drop_between(line, ", comdat($", ')');
        let line = drop_between(&line, " comdat($", ')');
        let line = line.replace(", comdat,", ",").replace(" comdat ", " ");
        let line = line.strip_suffix(", comdat").or_else(|| line.strip_suffix(" comdat")).unwrap_or(&line).to_string();
        let line = drop_between(&line, ", section \".", '"');
        let line = drop_between(&line, " section \".", '"');
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Assembles a Mach-O x86-64 object with llvm-mc-14.
pub fn assemble_macho(source: &Path, dir: &Path) -> PathBuf {
    assemble_macho_for(MACHO_TRIPLE, source, dir)
}

/// Assembles `source` for the Mach-O `triple` into `dir/STEM.o`.
pub fn assemble_macho_for(triple: &str, source: &Path, dir: &Path) -> PathBuf {
    let obj = dir.join(source.file_stem().unwrap()).with_extension("o");
    run_checked(
        Command::new("llvm-mc-14")
            .arg(format!("-triple={}", triple))
            .arg("-filetype=obj")
            .arg(source)
            .arg("-o")
            .arg(&obj),
    );
    obj
}

/// Runs `program` built as Mach-O under every flag set against its native
/// ELF build and fails with all differences.
pub fn check_macho_program(suite: &str, name: &str, flag_sets: &[&str]) {
    let program = testdata().join(suite).join(name);
    assert!(program.exists(), "{} does not exist", program.display());
    let mut all = Vec::new();
    for (i, flags) in flag_sets.iter().enumerate() {
        let dir = scratch(&format!("macho-{}-{}-{}", suite, name.replace('.', "_"), i));
        let build = |srcs: &[PathBuf], d: &Directives| compile_macho(srcs, flags, &d.cflags, &dir);
        all.extend(differential_with(Toolchain::Gcc, &program, flags, &dir, Some(&build)));
    }
    assert!(all.is_empty(), "{}", all.join("\n\n"));
}
