//! jitrun as a build's linker: `--link-launcher` and `--cc-driver` write
//! launchers, which must behave as the executable `cc` links from the same
//! inputs (output, exit status, stdin, signals, argv[0], /proc/self/exe),
//! fail links as ld does, and refuse to run once an input changed.

mod common;

use common::*;
use std::io::BufRead;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const PROGRAM: &str = r#"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int scale(int);

int main(int argc, char **argv) {
  char exe[PATH_MAX] = "", named[PATH_MAX] = "";
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) exe[n] = 0;
  /* What a native executable sees: /proc/self/exe is the file argv[0] named. */
  printf("argv0 %s, exe is argv0: %d\n", argv[0], realpath(argv[0], named) && strcmp(named, exe) == 0);
  for (int i = 1; i < argc; i++) printf("arg %d [%s]\n", i, argv[i]);
  if (argc > 1 && strcmp(argv[1], "crash") == 0) *(volatile int *)0 = 1;
  if (argc > 1 && strcmp(argv[1], "wait") == 0) {
    puts("ready");
    fflush(stdout);
    pause();
  }
  if (argc > 1 && strcmp(argv[1], "stdin") == 0) {
    int c;
    while ((c = getchar()) != EOF) putchar(c == 'a' ? 'A' : c);
  }
  printf("scaled %d, root %.3f\n", scale(argc), sqrt((double)argc));
  return argc + 40;
}
"#;

const HELPER: &str = "int scale(int x) { return 3 * x; }\n";

/// Objects of the program and an archive with its helper.
struct Built {
    dir: PathBuf,
    main: PathBuf,
    archive: PathBuf,
}

fn build(name: &str) -> Built {
    let dir = scratch(&format!("launcher-{}", name));
    let main = compile_source(&dir, "main.c", PROGRAM, "-O1");
    let helper = compile_source(&dir, "helper.c", HELPER, "-O1");
    let archive = dir.join("libhelper.a");
    run_checked(Command::new("ar").arg("rcs").arg(&archive).arg(&helper));
    Built { dir, main, archive }
}

fn link_launcher(out: &Path, args: &[&std::ffi::OsStr]) -> Output {
    jitrun_command().arg("--link-launcher").arg(out).args(args).output().unwrap()
}

fn run(program: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run_with(Command::new(program).args(args), stdin, Duration::from_secs(60))
}

/// The program's lines with the executable's name made the same.
fn normalized(output: &Output, name: &Path) -> String {
    String::from_utf8_lossy(&output.stdout).replace(&name.display().to_string(), "PROGRAM")
}

fn assert_same(native: (&Path, &Output), launcher: (&Path, &Output)) {
    assert_eq!(normalized(native.1, native.0), normalized(launcher.1, launcher.0), "stdout differs");
    assert_eq!(shell_status(native.1), shell_status(launcher.1), "status differs: {:?}", launcher.1);
}

#[test]
fn a_launcher_behaves_as_the_executable_cc_links() {
    let built = build("behaves");
    let native = built.dir.join("native");
    run_checked(common::cc().arg(&built.main).arg("-L").arg(&built.dir).args(["-lhelper", "-lm", "-o"]).arg(&native));
    let launcher = built.dir.join("launcher");
    let made = link_launcher(
        &launcher,
        &[built.main.as_os_str(), "-L".as_ref(), built.dir.as_os_str(), "-lhelper".as_ref(), "-lm".as_ref()],
    );
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert!(std::fs::read(&launcher).unwrap().starts_with(b"#!"));
    for (args, stdin) in [(&["one", "two words", ""][..], &b""[..]), (&["stdin"], b"banana\n"), (&[], b"")] {
        assert_same((&native, &run(&native, args, stdin)), (&launcher, &run(&launcher, args, stdin)));
    }
    // The same from another directory, by a relative path and by a symlink:
    // argv[0] is the path run, /proc/self/exe the launcher.
    let elsewhere = built.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for (program, link) in [(&native, "native-link"), (&launcher, "launcher-link")] {
        std::os::unix::fs::symlink(program, elsewhere.join(link)).unwrap();
    }
    let in_dir = |name: &str| {
        run_with(Command::new(format!("./{}", name)).arg("x").current_dir(&elsewhere), b"", Duration::from_secs(60))
    };
    let (native_out, launcher_out) = (in_dir("native-link"), in_dir("launcher-link"));
    assert_eq!(
        String::from_utf8_lossy(&native_out.stdout).replace("native-link", "LINK"),
        String::from_utf8_lossy(&launcher_out.stdout).replace("launcher-link", "LINK")
    );
    assert!(String::from_utf8_lossy(&launcher_out.stdout).contains("exe is argv0: 1"));
}

#[test]
fn crashes_and_signals_reach_the_caller_as_natively() {
    let built = build("signals");
    let native = built.dir.join("native");
    run_checked(common::cc().arg(&built.main).arg(&built.archive).args(["-lm", "-o"]).arg(&native));
    let launcher = built.dir.join("launcher");
    let made = link_launcher(&launcher, &[built.main.as_os_str(), built.archive.as_os_str(), "-lm".as_ref()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let crashed = run(&launcher, &["crash"], b"");
    assert_eq!(shell_status(&run(&native, &["crash"], b"")), 128 + libc::SIGSEGV);
    assert_eq!(shell_status(&crashed), 128 + libc::SIGSEGV);
    // A signal sent to the process the caller started ends the program.
    for program in [&native, &launcher] {
        let mut child = Command::new(program).arg("wait").stdout(Stdio::piped()).spawn().unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(lines.by_ref().any(|line| line.unwrap() == "ready"), "{} never got ready", program.display());
        // SAFETY: a child of this test, not yet waited for.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM), "{}", program.display());
    }
}

#[test]
fn missing_symbols_fail_the_link_as_ld_does() {
    let built = build("missing");
    let launcher = built.dir.join("prog");
    std::fs::write(&launcher, "an older output").unwrap();
    let failed = link_launcher(&launcher, &[built.main.as_os_str()]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr);
    assert!(
        stderr.contains(&format!("jitrun: {}: undefined reference to `scale'\n", built.main.display())),
        "{}",
        stderr
    );
    assert!(stderr.contains("`sqrt' usually comes from -lm"), "{}", stderr);
    assert!(stderr.trim_end().ends_with("2 undefined symbols (the link exits 1, as ld does)"), "{}", stderr);
    assert!(!launcher.exists(), "a failed link leaves no output, as with ld");
    // Usage errors are link failures too, named.
    for (args, expected) in [
        (&["-lnosuchlibrary"][..], "cannot find library -lnosuchlibrary"),
        (&["-Wl,--no-such-option"], "`-Wl,--no-such-option` is not one jitrun takes"),
        (&["-T", "script.ld"], "option `-T` is not one"),
        (&["@/nonexistent.rsp"], "response file /nonexistent.rsp: cannot read it"),
        (&["main.c"], "main.c is a source file"),
        (&["-o", "other"], "names the output"),
    ] {
        let mut all: Vec<&std::ffi::OsStr> = vec![built.main.as_os_str()];
        all.extend(args.iter().map(std::ffi::OsStr::new));
        let failed = link_launcher(&launcher, &all);
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert_eq!(failed.status.code(), Some(1), "{:?}: {}", args, stderr);
        assert!(stderr.contains(expected), "{:?}: {}", args, stderr);
    }
}

#[test]
fn a_launcher_refuses_to_run_once_an_input_changed() {
    let built = build("stale");
    let launcher = built.dir.join("prog");
    let made = link_launcher(&launcher, &[built.main.as_os_str(), built.archive.as_os_str(), "-lm".as_ref()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert_eq!(run(&launcher, &[], b"").status.code(), Some(41));
    // The archive rebuilt with one more member.
    let extra = compile_source(&built.dir, "extra.c", "int extra(void) { return 1; }\n", "-O1");
    run_checked(Command::new("ar").arg("rcs").arg(&built.archive).arg(&extra));
    let stale = run(&launcher, &[], b"");
    let stderr = String::from_utf8_lossy(&stale.stderr);
    assert_eq!(stale.status.code(), Some(125), "{}", stderr);
    assert!(stale.stdout.is_empty(), "the program must not run");
    assert!(stderr.contains("libhelper.a changed size") && stderr.contains("relink it"), "{}", stderr);
    // A removed object.
    let made = link_launcher(&launcher, &[built.main.as_os_str(), built.archive.as_os_str(), "-lm".as_ref()]);
    assert!(made.status.success());
    std::fs::remove_file(&built.main).unwrap();
    let gone = run(&launcher, &[], b"");
    assert_eq!(gone.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("main.o cannot be read"));
}

#[test]
fn a_launcher_refuses_to_run_under_a_rebuilt_jitrun() {
    let built = build("rebuilt");
    let jitrun = built.dir.join("jitrun");
    std::fs::copy(jitrun_bin(), &jitrun).unwrap();
    let launcher = built.dir.join("prog");
    // Through run_with, which waits out ETXTBSY: the copy was just written,
    // and a child another test forks meanwhile may hold its descriptor.
    let mut make = Command::new(&jitrun);
    make.arg("--link-launcher").arg(&launcher).args([&built.main, &built.archive]).arg("-lm");
    let made = run_with(&mut make, b"", Duration::from_secs(60));
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert_eq!(run(&launcher, &[], b"").status.code(), Some(41));
    // A new build of jitrun at the same path (a byte more, as a different build).
    let mut bytes = std::fs::read(&jitrun).unwrap();
    bytes.push(0);
    std::fs::remove_file(&jitrun).unwrap();
    std::fs::write(&jitrun, bytes).unwrap();
    std::fs::set_permissions(&jitrun, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let refused = run(&launcher, &[], b"");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(125), "{}", stderr);
    assert!(stderr.contains("is not the one that checked the link"), "{}", stderr);
}

#[test]
fn a_tampered_launcher_is_refused_naming_its_line() {
    let built = build("tampered");
    let launcher = built.dir.join("prog");
    let made = link_launcher(&launcher, &[built.main.as_os_str(), built.archive.as_os_str(), "-lm".as_ref()]);
    assert!(made.status.success());
    let text = std::fs::read_to_string(&launcher).unwrap();
    std::fs::write(&launcher, text.replacen("# input ", "# input x", 1)).unwrap();
    let refused = run(&launcher, &[], b"");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(125), "{}", stderr);
    assert!(stderr.contains(&format!("{}:", launcher.display())) && stderr.contains("`input` record: bad size"));
}

#[test]
fn build_system_spellings_link_as_cc_links_them() {
    let built = build("spellings");
    // A path with a blank, given in a response file as Ninja writes them.
    let spaced = built.dir.join("lib dir");
    std::fs::create_dir_all(&spaced).unwrap();
    std::fs::copy(&built.archive, spaced.join("libhelper.a")).unwrap();
    let rsp = built.dir.join("link.rsp");
    std::fs::write(&rsp, format!("'{}' -L'{}' -lhelper\n-lm", built.main.display(), spaced.display())).unwrap();
    let line = [
        "-O2",
        "-g",
        "-DNDEBUG",
        "-fPIE",
        "-pie",
        "-pthread",
        "-rdynamic",
        "-static-libgcc",
        "-Wl,-O1,--as-needed,-z,relro",
        "-Xlinker",
        "--gc-sections",
        "-fuse-ld=gold",
    ];
    let native = built.dir.join("native");
    run_checked(common::cc().args(line).arg(format!("@{}", rsp.display())).arg("-o").arg(&native));
    let launcher = built.dir.join("launcher");
    let mut args: Vec<std::ffi::OsString> = line.iter().map(Into::into).collect();
    args.extend([format!("@{}", rsp.display()).into(), "-o".into(), launcher.clone().into()]);
    let made = link_launcher(&launcher, &args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert_same((&native, &run(&native, &["a"], b"")), (&launcher, &run(&launcher, &["a"], b"")));
}

#[test]
fn shared_libraries_are_linked_by_the_real_linker() {
    let dir = scratch("launcher-shared");
    let library = compile_source(&dir, "helper.c", HELPER, "-O1 -fPIC");
    let shared = dir.join("libhelper.so");
    let made = jitrun_command()
        .arg("--link-launcher")
        .arg(&shared)
        .args(["-shared", "-fPIC"])
        .arg(&library)
        .env("JITRUN_CC", "cc")
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert!(std::fs::read(&shared).unwrap().starts_with(b"\x7fELF"), "a real shared library");
    let main = compile_source(&dir, "main.c", PROGRAM, "-O1");
    let native = dir.join("native");
    run_checked(common::cc().arg(&main).arg(&shared).args(["-lm", "-Wl,-rpath"]).arg(&dir).arg("-o").arg(&native));
    let launcher = dir.join("launcher");
    let made = link_launcher(&launcher, &[main.as_os_str(), shared.as_os_str(), "-lm".as_ref()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert_same((&native, &run(&native, &["b"], b"")), (&launcher, &run(&launcher, &["b"], b"")));
}

#[test]
fn the_cc_driver_compiles_sources_and_passes_compilations_on() {
    let dir = scratch("launcher-driver");
    std::fs::write(dir.join("main.c"), PROGRAM).unwrap();
    std::fs::write(dir.join("helper.c"), HELPER).unwrap();
    let driver = |args: &[&str]| {
        let output = jitrun_command().arg("--cc-driver").arg("cc").args(args).current_dir(&dir).output().unwrap();
        assert!(output.status.success(), "{:?}: {}", args, String::from_utf8_lossy(&output.stderr));
    };
    // A compilation is the compiler's; a link with sources compiles them first.
    driver(&["-O1", "-c", "helper.c", "-o", "helper.o"]);
    assert!(dir.join("helper.o").exists());
    driver(&["-O1", "main.c", "helper.o", "-lm", "-o", "prog"]);
    run_checked(common::cc().args(["-O1", "main.c", "helper.c", "-lm", "-o", "native"]).current_dir(&dir));
    let (native, launcher) = (dir.join("native"), dir.join("prog"));
    assert!(std::fs::read(&launcher).unwrap().starts_with(b"#!"));
    assert_same((&native, &run(&native, &["c"], b"")), (&launcher, &run(&launcher, &["c"], b"")));
    let version = jitrun_command().args(["--cc-driver", "cc", "--version"]).output().unwrap();
    let cc_version = common::cc().arg("--version").output().unwrap();
    assert_eq!(version.stdout, cc_version.stdout);
}

#[test]
fn completions_come_for_each_shell() {
    for (shell, expected) in [("bash", "complete -F"), ("zsh", "#compdef jitrun"), ("fish", "complete -c jitrun")] {
        let output = jitrun_command().args(["--completions", shell]).output().unwrap();
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && script.contains(expected), "{}: {}", shell, script);
        assert!(script.contains("link-launcher"), "{}", shell);
    }
    let output = jitrun_command().args(["--completions", "tcsh"]).output().unwrap();
    assert_eq!(output.status.code(), Some(125));
}
