//! `--report FILE`: machine-readable facts about one run, for CI.
//!
//! Schema version 1 (documented in the man page):
//!
//! ```json
//! {"schema": 1, "jitrun_version": "0.1.0",
//!  "inputs": [{"path", "size", "format"}],
//!  "image": {"base", "size"},
//!  "counts": {"objects", "sections", "symbols", "relocations": {"R_X86_64_PC32": n}, "got_entries", "stubs"},
//!  "phases": {"parse", "resolve", "layout", "map", "fixups", "init", "run", "fini"},   (seconds; null if unknown)
//!  "peak_rss_kib": n,
//!  "outcome": {"status": "exited", "exit_code": n}
//!           | {"status": "signal", "signal": n, "signal_name": "SIGSEGV", "exit_code": 128+n}
//!           | {"status": "timeout", "timeout_ms": n, "exit_code": 124}
//!           | {"status": "noexec"} | {"status": "running"} | {"status": "error", "message": "..."}}
//! ```
//!
//! The file is written before the entry runs with status `running`, then
//! rewritten when the process ends: by an `on_exit` hook (registered before
//! the image's finalizer, so it runs after `.fini_array` and knows the exit
//! status) or by the crash handler. A process killed by a signal jitrun does
//! not handle (SIGKILL, a timeout's SIGTERM, or with `--no-crash-handler`)
//! leaves `running`.
//!
//! Isolated runs (`--isolate`, `--timeout`) end in forked children: there
//! the parent writes the outcome of the run that decided jitrun's exit
//! status ([`settle`]), its peak memory is the largest child's, and the
//! children's own phases are unknown (`null`).

use std::ffi::{c_int, c_void, CString};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::diagnostics::crash::{signal_name, ReportSink};
use crate::graph::linkinfo::{Counts, InputInfo, LinkInfo};
use crate::support::fixed_buffer::{write_fd, FixedBuffer};

pub const SCHEMA_VERSION: u32 = 1;

/// Monotonic timestamps (ns) of the run's phase boundaries; atomics so the
/// crash handler can read them.
pub struct RunClock {
    pub init_start: AtomicU64,
    pub entry_start: AtomicU64,
    pub entry_end: AtomicU64,
}

pub static RUN_CLOCK: RunClock =
    RunClock { init_start: AtomicU64::new(0), entry_start: AtomicU64::new(0), entry_end: AtomicU64::new(0) };

impl RunClock {
    pub fn mark(&self, at: &AtomicU64) {
        at.store(monotonic_ns(), Ordering::Release);
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime is async-signal-safe and writes `ts` only.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[derive(Serialize)]
struct Head<'a> {
    schema: u32,
    jitrun_version: &'static str,
    inputs: &'a [InputInfo],
    image: ImageFacts,
    counts: &'a Counts,
}

#[derive(Serialize)]
struct ImageFacts {
    base: u64,
    size: u64,
}

/// The report up to and including the link phases, ending in a comma
/// inside `"phases": {`: the rest depends on how the run ends.
pub fn head(info: &LinkInfo) -> Vec<u8> {
    let head = Head {
        schema: SCHEMA_VERSION,
        jitrun_version: env!("CARGO_PKG_VERSION"),
        inputs: &info.inputs,
        image: ImageFacts { base: info.base, size: info.size },
        counts: &info.counts,
    };
    let mut text = serde_json::to_string(&head).expect("serializing plain data");
    text.pop(); // the closing brace
    text.push_str(",\"phases\":{");
    for phase in ["parse", "resolve", "layout", "map", "fixups"] {
        let seconds = info.phases.get(phase).copied().unwrap_or(0.0);
        let _ = write!(text, "\"{}\":{},", phase, seconds);
    }
    text.into_bytes()
}

/// How the run ended, for the report's tail.
#[derive(Clone, Copy)]
pub enum Outcome {
    Running,
    NoExec,
    Exited(i32),
    Signal(i32),
    /// An isolated run killed after its time limit (milliseconds).
    Timeout(u64),
    /// An isolated run stopped by a limit: its name and the exit status.
    Limit(&'static str, i32),
}

/// Formats the run phases, peak memory and outcome without allocating.
fn write_tail(out: &mut impl std::fmt::Write, outcome: Outcome) -> std::fmt::Result {
    let now = monotonic_ns();
    let load = |a: &AtomicU64| a.load(Ordering::Acquire);
    let (init, entry, end) = (load(&RUN_CLOCK.init_start), load(&RUN_CLOCK.entry_start), load(&RUN_CLOCK.entry_end));
    let seconds = |from: u64, to: u64| (to.saturating_sub(from)) as f64 / 1e9;
    let running = matches!(outcome, Outcome::Exited(_) | Outcome::Signal(_) | Outcome::Limit(..));
    let optional = |out: &mut dyn std::fmt::Write, name: &str, value: Option<f64>, last: bool| {
        let sep = if last { "" } else { "," };
        match value {
            Some(v) => write!(out, "\"{}\":{}{}", name, v, sep),
            None => write!(out, "\"{}\":null{}", name, sep),
        }
    };
    optional(out, "init", (init != 0 && entry != 0).then(|| seconds(init, entry)), false)?;
    // Without entry_end the program called exit() itself: run then spans
    // its exit handlers too, and fini is unknown.
    let run_end = if end != 0 { end } else { now };
    optional(out, "run", (running && entry != 0).then(|| seconds(entry, run_end)), false)?;
    optional(out, "fini", (running && end != 0).then(|| seconds(end, now)), true)?;
    // The program's process: this one, or for isolated runs the largest
    // reaped child (RUSAGE_CHILDREN), whichever is larger.
    let peak_rss = |who: c_int| {
        // SAFETY: getrusage fills the struct we pass.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage.ru_maxrss
        }
    };
    let rss = peak_rss(libc::RUSAGE_SELF).max(peak_rss(libc::RUSAGE_CHILDREN));
    write!(out, "}},\"peak_rss_kib\":{},\"outcome\":", rss)?;
    match outcome {
        Outcome::Running => write!(out, "{{\"status\":\"running\"}}")?,
        Outcome::NoExec => write!(out, "{{\"status\":\"noexec\"}}")?,
        Outcome::Exited(code) => write!(out, "{{\"status\":\"exited\",\"exit_code\":{}}}", code & 0xff)?,
        Outcome::Signal(sig) => write!(
            out,
            "{{\"status\":\"signal\",\"signal\":{},\"signal_name\":\"{}\",\"exit_code\":{}}}",
            sig,
            signal_name(sig),
            128 + sig
        )?,
        Outcome::Timeout(limit_ms) => write!(
            out,
            "{{\"status\":\"timeout\",\"timeout_ms\":{},\"exit_code\":{}}}",
            limit_ms,
            crate::support::EXIT_TIMEOUT
        )?,
        Outcome::Limit(limit, exit_code) => {
            write!(out, "{{\"status\":\"limit\",\"limit\":\"{}\",\"exit_code\":{}}}", limit, exit_code)?
        }
    }
    writeln!(out, "}}")
}

/// Writes a complete report for `outcome` (not from a signal handler).
pub fn write(path: &Path, head: &[u8], outcome: Outcome) -> Result<()> {
    let mut tail = String::new();
    let _ = write_tail(&mut tail, outcome);
    let mut bytes = head.to_vec();
    bytes.extend_from_slice(tail.as_bytes());
    std::fs::write(path, bytes).with_context(|| format!("--report {}: cannot write", path.display()))
}

/// Writes a report for a link that failed before an image existed.
pub fn write_error(path: &Path, message: &str) -> Result<()> {
    let report = serde_json::json!({
        "schema": SCHEMA_VERSION,
        "jitrun_version": env!("CARGO_PKG_VERSION"),
        "outcome": {"status": "error", "message": message},
    });
    std::fs::write(path, format!("{}\n", report)).with_context(|| format!("--report {}: cannot write", path.display()))
}

/// Fixed-size buffer for the crash path.
/// The crash handler's half: async-signal-safe (open, write, close and
/// formatting into a stack buffer).
pub fn write_signal_outcome(sink: &ReportSink, sig: c_int) {
    let mut tail = FixedBuffer::<1024>::new();
    let _ = write_tail(&mut tail, Outcome::Signal(sig));
    // SAFETY: open/close are async-signal-safe; the path is NUL-terminated.
    let fd = unsafe { libc::open(sink.path.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644) };
    if fd < 0 {
        return;
    }
    write_fd(fd, &sink.head);
    tail.flush_to(fd);
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
}

/// What the exit hook needs.
struct ExitReport {
    path: std::path::PathBuf,
    head: Vec<u8>,
    /// The process that armed the report: forked children inherit the hook
    /// and must not write their exit over the parent's report.
    pid: u32,
}

/// Set once [`settle`] has written the final outcome: the exit hook then
/// leaves the file alone.
static SETTLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

static EXIT_REPORT: OnceLock<ExitReport> = OnceLock::new();

extern "C" {
    fn on_exit(function: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

extern "C" fn write_at_exit(status: c_int, _: *mut c_void) {
    let Some(report) = EXIT_REPORT.get() else { return };
    if report.pid == std::process::id() && !SETTLED.load(Ordering::Acquire) {
        if let Err(e) = write(&report.path, &report.head, Outcome::Exited(status)) {
            eprintln!("jitrun: error: {:#}", e);
        }
    }
}

/// Whether the program's `_exit`, `_Exit` and `quick_exit` go to
/// [`host_function`]'s versions ([`intercept_immediate_exits`]).
static INTERCEPT_IMMEDIATE_EXITS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes images linked from now on call jitrun's `_exit`, `_Exit` and
/// `quick_exit`, which write the report's outcome before ending the
/// process: those end it without the exit handlers that write it
/// otherwise (a shell, such as BusyBox's ash, always ends with `_exit`).
pub fn intercept_immediate_exits() {
    INTERCEPT_IMMEDIATE_EXITS.store(true, Ordering::Release);
}

/// jitrun's own version of `name`, when [`intercept_immediate_exits`] asked.
pub fn host_function(name: &str) -> Option<usize> {
    if !INTERCEPT_IMMEDIATE_EXITS.load(Ordering::Acquire) {
        return None;
    }
    match name {
        "_exit" | "_Exit" => Some(jitrun_exit_now as *const () as usize),
        "quick_exit" => QUICK_EXIT.resolve().map(|_| jitrun_quick_exit as *const () as usize),
        _ => None,
    }
}

static QUICK_EXIT: crate::host::loader::LazyLibcFunction = crate::host::loader::LazyLibcFunction::new(c"quick_exit");

/// `_exit(status)` that first writes the report's outcome (in the process
/// that armed it only: a forked or vforked child's `_exit` leaves it).
extern "C" fn jitrun_exit_now(status: c_int) -> ! {
    write_at_exit(status, std::ptr::null_mut());
    // SAFETY: ends the process, as the program asked.
    unsafe { libc::_exit(status) }
}

/// `quick_exit(status)` that first writes the report's outcome; libc's
/// then runs the `at_quick_exit` handlers and ends the process.
extern "C" fn jitrun_quick_exit(status: c_int) -> ! {
    write_at_exit(status, std::ptr::null_mut());
    if let Some(quick_exit) = QUICK_EXIT.get() {
        // SAFETY: libc's quick_exit, resolved before host_function offered
        // this version; it does not return.
        unsafe { std::mem::transmute::<usize, extern "C" fn(c_int) -> !>(quick_exit)(status) }
    }
    // SAFETY: ends the process.
    unsafe { libc::_exit(status) }
}

/// Prepares the report for a run: writes it with status `running`, arranges
/// for `exit()` to rewrite it with the exit status (call this before the
/// image registers its finalizer, so the hook runs after it), and returns
/// the sink the crash handler writes a signal outcome to.
pub fn arm(path: &Path, info: &LinkInfo) -> Result<ReportSink> {
    let head = head(info);
    write(path, &head, Outcome::Running)?;
    let c_path = CString::new(path.as_os_str().as_encoded_bytes())
        .with_context(|| format!("--report {}: path contains a NUL byte", path.display()))?;
    let pid = std::process::id();
    if EXIT_REPORT.set(ExitReport { path: path.to_path_buf(), head: head.clone(), pid }).is_ok() {
        // SAFETY: registering a plain function with no argument.
        unsafe { on_exit(write_at_exit, std::ptr::null_mut()) };
    }
    Ok(ReportSink { path: c_path, head })
}

/// Writes the final outcome of an armed report now, instead of at exit: a
/// parent of isolated runs knows how the deciding run ended (a timeout, a
/// signal) better than its own exit status says.
pub fn settle(outcome: Outcome) -> Result<()> {
    settle_with_resources(outcome, None)
}

/// [`settle`], with what the deciding isolated run cost (a JSON object)
/// as the report's `resources`.
pub fn settle_with_resources(outcome: Outcome, resources: Option<serde_json::Value>) -> Result<()> {
    let Some(report) = EXIT_REPORT.get() else { return Ok(()) };
    SETTLED.store(true, Ordering::Release);
    let Some(resources) = resources else { return write(&report.path, &report.head, outcome) };
    let mut tail = String::new();
    let _ = write_tail(&mut tail, outcome);
    // The tail ends the report's object: "...}\n".
    let body = tail.trim_end().strip_suffix('}').unwrap_or(&tail);
    let mut bytes = report.head.clone();
    bytes.extend_from_slice(format!("{},\"resources\":{}}}\n", body, resources).as_bytes());
    std::fs::write(&report.path, bytes).with_context(|| format!("--report {}: cannot write", report.path.display()))
}
