//! `--check` files for AArch64 ELF (`testdata/arch/aarch64/checks/*.s`),
//! cross-linked at a fixed base on any host: each file is assembled with
//! `llvm-mc-14` and linked with `jitrun --noexec` and the arguments of its
//! `# jitrun-args:` line. A file with an `# expect-error:` line must fail
//! with that one-line error; every other file's checks must all hold, and
//! all fail once each right-hand side is made one larger (so none holds
//! vacuously, and none is skipped).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::{jitrun_command, run_with, scratch, shell_status, testdata};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The value of the `# KEY: ` line of a check file, if any.
fn directive(source: &str, key: &str) -> Option<String> {
    let prefix = format!("# {}: ", key);
    source.lines().find_map(|l| l.strip_prefix(&prefix)).map(|v| v.trim().to_string())
}

/// The checks of a file, continuation lines joined, as jitrun reads them.
fn check_expressions(source: &str) -> Vec<String> {
    let mut checks: Vec<String> = Vec::new();
    let mut continuing = false;
    for line in source.lines() {
        let Some((_, expr)) = line.split_once("jitlink-check:") else {
            continuing = false;
            continue;
        };
        let expr = expr.trim();
        let (body, continues) = match expr.strip_suffix('\\') {
            Some(body) => (body.trim_end(), true),
            None => (expr, false),
        };
        match checks.last_mut() {
            Some(previous) if continuing => {
                previous.push(' ');
                previous.push_str(body);
            }
            _ => checks.push(body.to_string()),
        }
        continuing = continues;
    }
    checks
}

/// `LHS = (RHS) + 1`: the check with its right-hand side one larger.
fn mutated(check: &str) -> String {
    let mut depth = 0i32;
    for (i, c) in check.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '=' if depth == 0 => {
                let rhs = check[i + 1..].trim_start_matches('=');
                return format!("{}= ({}) + 1", &check[..i], rhs.trim());
            }
            _ => {}
        }
    }
    panic!("no `=` in check `{}`", check)
}

fn assemble(source: &Path, dir: &Path) -> PathBuf {
    // The object is named after the file: got_addr(STEM.o, sym) names it.
    let obj = dir.join(source.file_stem().unwrap()).with_extension("o");
    let out = Command::new("llvm-mc-14")
        .args(["-triple=aarch64-linux-gnu", "-filetype=obj", "-o"])
        .arg(&obj)
        .arg(source)
        .output()
        .expect("llvm-mc-14 (package llvm-14) is needed for the --check tests");
    assert!(out.status.success(), "{}: {}", source.display(), text(&out.stderr));
    obj
}

fn jitrun_check(args: &[String], check_file: &Path, obj: &Path) -> Output {
    let mut cmd = jitrun_command();
    cmd.arg("--noexec").args(args).arg("--check").arg(check_file).arg(obj);
    run_with(&mut cmd, b"", Duration::from_secs(60))
}

/// Runs one check file; returns what went wrong, if anything.
fn run_check_file(source_path: &Path, dir: &Path) -> Result<String, String> {
    let name = source_path.file_name().unwrap().to_string_lossy().into_owned();
    let source = std::fs::read_to_string(source_path).unwrap();
    let args: Vec<String> = directive(&source, "jitrun-args")
        .ok_or_else(|| format!("{}: no `# jitrun-args:` line", name))?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let obj = assemble(source_path, dir);
    let out = jitrun_check(&args, source_path, &obj);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    if !stdout.is_empty() {
        return Err(format!("{}: jitrun wrote on stdout: {}", name, stdout));
    }
    let checks = check_expressions(&source);
    if let Some(fragment) = directive(&source, "expect-error") {
        if !checks.is_empty() {
            return Err(format!("{}: a file expecting an error has checks", name));
        }
        let lines: Vec<&str> = stderr.lines().collect();
        let one_line = lines.len() == 1 && lines[0].starts_with("jitrun: error: ") && lines[0].contains(&fragment);
        if shell_status(&out) != 125 || !one_line {
            return Err(format!(
                "{}: expected status 125 and one line `jitrun: error: ...{}...`, got {}:\n{}",
                name,
                fragment,
                shell_status(&out),
                stderr
            ));
        }
        return Ok(format!("{}: fails as expected", name));
    }
    if !out.status.success() || !stderr.is_empty() {
        return Err(format!("{}: status {}:\n{}", name, shell_status(&out), stderr));
    }
    if checks.is_empty() {
        return Err(format!("{}: no checks", name));
    }
    // Every check fails once its right-hand side is one larger.
    let mutated_file = dir.join(format!("{}.mutated", name));
    let lines: Vec<String> = checks.iter().map(|c| format!("# jitlink-check: {}\n", mutated(c))).collect();
    std::fs::write(&mutated_file, lines.concat()).unwrap();
    let out = jitrun_check(&args, &mutated_file, &obj);
    let stderr = text(&out.stderr);
    let summary = format!("jitrun: error: {} of {} checks failed", checks.len(), checks.len());
    let failed = stderr.lines().filter(|l| l.starts_with("jitrun: check failed: ")).count();
    if shell_status(&out) != 125 || failed != checks.len() || !stderr.lines().any(|l| l == summary) {
        return Err(format!(
            "{}: with every right-hand side one larger, {} of {} checks failed (status {}):\n{}",
            name,
            failed,
            checks.len(),
            shell_status(&out),
            stderr
        ));
    }
    Ok(format!("{}: {} checks", name, checks.len()))
}

#[test]
fn aarch64_elf_check_files_hold_at_a_fixed_base_on_any_host() {
    let dir = scratch("checks-aarch64-elf");
    let mut files: Vec<PathBuf> = std::fs::read_dir(testdata().join("arch/aarch64/checks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    files.sort();
    assert!(files.len() >= 18, "{} check files", files.len());
    let (mut passed, mut failed) = (Vec::new(), Vec::new());
    for file in &files {
        match run_check_file(file, &dir) {
            Ok(line) => passed.push(line),
            Err(problem) => failed.push(problem),
        }
    }
    assert!(failed.is_empty(), "{} of {} files failed:\n{}", failed.len(), files.len(), failed.join("\n"));
    eprintln!("{}", passed.join("\n"));
}

#[test]
fn mutating_a_check_makes_it_fail() {
    assert_eq!(mutated("a << 2 = b - c"), "a << 2 = (b - c) + 1");
    assert_eq!(mutated("f(x, y)[3:0] == *{4}(p + 1)"), "f(x, y)[3:0] = (*{4}(p + 1)) + 1");
    let joined = check_expressions("# jitlink-check: a = \\\n# jitlink-check:   b\nx\n# jitlink-check: c = d\n");
    assert_eq!(joined, vec!["a = b".to_string(), "c = d".to_string()]);
}
