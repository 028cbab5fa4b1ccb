//! Link once, run many: the same linked [`Image`] run again and again,
//! in-process or isolated in forked children.
//!
//! An isolated run forks a child from the linked but not yet initialized
//! image (its pages are shared copy-on-write, so nothing is relinked or
//! copied up front). The child puts itself in a new process group, takes
//! its stdin/stdout/stderr from pipes, writes the run's [`GlobalValue`]s
//! into the image, then runs the initializers, the entry and the
//! finalizers ([`Image::run_main`] then `exit(status)`). The parent never
//! runs user code: it feeds stdin, collects output up to a cap, enforces
//! the timeout by killing the child's whole process group, and reports a
//! [`RunOutcome`]. When the run's main process ends, whatever it left
//! running in its group is killed too; a descendant that leaves the group
//! (`setsid`) escapes, and the parent stops reading pipes it still holds
//! shortly after the run ended.
//!
//! ```
//! # fn main() -> anyhow::Result<()> {
//! use jitrun::image::runs::{GlobalValue, RunSpec, RunStatus};
//! use jitrun::{LinkOptions, Linker};
//! # let dir = std::env::temp_dir().join(format!("jitrun-doc-run-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let source = dir.join("mutant.c");
//! # std::fs::write(&source, "#include <stdio.h>\nint mutant_id;\n\
//! #     int main(int argc, char **argv) { printf(\"mutant %d\\n\", mutant_id); return mutant_id; }\n")?;
//! # let object = dir.join("mutant.o");
//! # assert!(std::process::Command::new("cc").arg("-c").arg(&source).arg("-o").arg(&object).status()?.success());
//! // Link once...
//! let mut linker = Linker::new(LinkOptions::default());
//! linker.add_file(&object)?;
//! let image = linker.link()?;
//!
//! // ...run many times, each run in its own forked child.
//! for id in [0, 3] {
//!     let spec = RunSpec::captured().set("mutant_id", GlobalValue::Int(id));
//!     let outcome = image.run_isolated(&spec)?;
//!     assert_eq!(outcome.status, RunStatus::Exited(id as i32));
//!     assert_eq!(outcome.stdout, format!("mutant {}\n", id).into_bytes());
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Threads and `fork`
//!
//! `fork` copies only the calling thread. A lock another thread holds at
//! that moment stays locked forever in the child. glibc makes `malloc` and
//! stdio usable in the child of a multi-threaded parent, which is all the
//! loaded program needs before it starts its own threads; but the child
//! must not touch the parent's Rust-level locks (stdout, environment). So
//! the child does only raw system calls and plain memory writes before it
//! enters the program, and the parent side here is single-threaded by
//! design: [`Image::run_batch`] runs `jobs` children at once from one
//! thread with `poll`, instead of one thread per child. A caller that forks
//! from several threads of its own gets the guarantees above, nothing more.
//!
//! # Send and Sync
//!
//! [`RunSpec`], [`RunOutcome`] and [`GlobalValue`] are plain data (`Send`
//! and `Sync`). [`Image`] is `Send` but not `Sync`: its mapper keeps the
//! dealloc actions (destructor registrations, unwind deregistration) as
//! `FnOnce + Send` values that must not be reachable from two threads.
//! Share runs across workers with [`Image::run_batch`] instead.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::image::cgroups::{Controller, GroupedRun, RunGroups};
use crate::image::limits::{ChildRlimits, LimitKind, ResourceUsage, RunLimits};
use crate::image::sandbox::{SandboxSpec, SandboxedRun};
use crate::image::{EntryCall, Image, ProcessNames, ProgramArgs};

/// Default cap on the bytes kept from each of stdout and stderr of a run.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;
/// Exit status the CLI gives a run that hit its timeout (as `timeout(1)`).
pub use crate::support::EXIT_TIMEOUT;

/// How long the parent keeps reading a finished run's pipes when
/// something outside its process group still holds them open.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// How long runs in flight get to end after jitrun passes a termination
/// signal on to them, before they are killed.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// Longest `poll` wait; bounds how late an interrupt or a missed wake-up is seen.
const MAX_POLL_WAIT: Duration = Duration::from_millis(100);

/// A value written into a global symbol of the image before constructors run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalValue {
    /// Written little-endian in the symbol's own size (1, 2, 4 or 8 bytes);
    /// must fit that size as a signed or unsigned number.
    Int(i64),
    /// Written as is from the symbol's first byte; must not be longer than
    /// the symbol. Add a trailing NUL yourself for a C string.
    Bytes(Vec<u8>),
}

impl GlobalValue {
    /// Reads a command-line value: an integer (decimal, `0x` hex, or
    /// negative) becomes [`GlobalValue::Int`], anything else the bytes of
    /// the text.
    pub fn parse(text: &str) -> GlobalValue {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let magnitude = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => digits.parse::<u64>().ok(),
        };
        match magnitude {
            Some(m) if negative && m <= 1 << 63 => GlobalValue::Int((m as i64).wrapping_neg()),
            Some(m) if !negative => GlobalValue::Int(m as i64),
            _ => GlobalValue::Bytes(text.as_bytes().to_vec()),
        }
    }

    /// The bytes to write into a symbol of `size` bytes (its `st_size`).
    fn encode(&self, name: &str, size: Option<u64>) -> Result<Vec<u8>> {
        match self {
            GlobalValue::Int(value) => {
                let width = match size {
                    Some(w @ (1 | 2 | 4 | 8)) => w as u32,
                    Some(w) => bail!(
                        "`{}` is {} bytes, not an integer of 1, 2, 4 or 8 bytes; set it to a byte string",
                        name,
                        w
                    ),
                    None => bail!(
                        "`{}` has no recorded size, so the width of an integer is unknown; set it to a byte string",
                        name
                    ),
                };
                let bits = 8 * width;
                let fits = bits == 64 || (*value >= -(1i64 << (bits - 1)) && *value < (1i64 << bits));
                if !fits {
                    bail!("{} does not fit the {}-byte symbol `{}`", value, width, name);
                }
                Ok(value.to_le_bytes()[..width as usize].to_vec())
            }
            GlobalValue::Bytes(bytes) => {
                if let Some(size) = size.filter(|&s| bytes.len() as u64 > s) {
                    bail!("{} bytes do not fit the {}-byte symbol `{}`", bytes.len(), size, name);
                }
                Ok(bytes.clone())
            }
        }
    }
}

/// Where a run's standard input comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StdinSource {
    /// The caller's own standard input.
    #[default]
    Inherit,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
}

/// What happens to a run's stdout and stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// They go where the caller's go.
    #[default]
    Inherit,
    /// Captured into the [`RunOutcome`], keeping at most `limit` bytes of
    /// each; the rest is read and dropped (so the program never blocks) and
    /// the outcome says it was truncated.
    Capture { limit: usize },
}

/// One run of a linked image: what the program sees and what is enforced.
///
/// The default is a run like one from the shell: `main`, no arguments, the
/// caller's environment, stdin, stdout and stderr, no timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// Symbol called as `entry(argc, argv, envp)`.
    pub entry: String,
    /// `argv[0]`.
    pub argv0: OsString,
    /// `argv[1..]` (any bytes but NUL, as a native program gets them).
    pub args: Vec<OsString>,
    /// Variables added to (or replacing) the environment.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment instead of the caller's.
    pub clear_env: bool,
    pub stdin: StdinSource,
    /// Writes into named globals, done before any constructor runs.
    pub set: Vec<(String, GlobalValue)>,
    /// Wall-clock limit; the run's whole process group is killed at it.
    pub timeout: Option<Duration>,
    pub output: OutputMode,
    /// Memory, CPU time, processes, file size, open files, core dumps
    /// (isolated runs only; see [`crate::image::limits`]).
    pub limits: RunLimits,
    /// What the run may change outside itself (isolated runs only; see
    /// [`crate::image::sandbox`]).
    pub sandbox: Option<SandboxSpec>,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            entry: "main".to_string(),
            argv0: "a.out".into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            stdin: StdinSource::Inherit,
            set: Vec::new(),
            timeout: None,
            output: OutputMode::Inherit,
            limits: RunLimits::default(),
            sandbox: None,
        }
    }
}

impl RunSpec {
    /// A run with empty stdin and stdout/stderr captured up to
    /// [`DEFAULT_OUTPUT_LIMIT`]: what a test or mutation harness wants.
    pub fn captured() -> RunSpec {
        RunSpec {
            stdin: StdinSource::Bytes(Vec::new()),
            output: OutputMode::Capture { limit: DEFAULT_OUTPUT_LIMIT },
            ..RunSpec::default()
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> RunSpec {
        self.args.push(arg.into());
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> RunSpec {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn stdin_bytes(mut self, bytes: impl Into<Vec<u8>>) -> RunSpec {
        self.stdin = StdinSource::Bytes(bytes.into());
        self
    }

    pub fn set(mut self, symbol: impl Into<String>, value: GlobalValue) -> RunSpec {
        self.set.push((symbol.into(), value));
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> RunSpec {
        self.timeout = Some(timeout);
        self
    }

    /// Runs under `limits` (see [`crate::image::limits`]).
    pub fn limits(mut self, limits: RunLimits) -> RunSpec {
        self.limits = limits;
        self
    }

    /// Runs in `sandbox` (see [`crate::image::sandbox`]).
    pub fn sandbox(mut self, sandbox: SandboxSpec) -> RunSpec {
        self.sandbox = Some(sandbox);
        self
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Returned from the entry or called `exit()` with this status.
    Exited(i32),
    /// Killed by this signal (a crash, `abort()`, ...).
    Signaled(i32),
    /// Still running at its timeout; its process group was killed.
    Timeout,
    /// Stopped by one of its [`RunLimits`]; everything it started was killed.
    Limit(LimitKind),
    /// Never ran: the spec was invalid (unknown or read-only symbol, NUL in
    /// an argument...) or the system refused (fork, pipes).
    Error(String),
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    pub status: RunStatus,
    /// Captured output (empty when [`OutputMode::Inherit`]).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The program wrote more than the capture limit.
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// From fork to reaping the child (or around the entry, in-process).
    pub duration: Duration,
    /// What an isolated run cost (`None` in-process or when it never ran).
    pub resources: Option<ResourceUsage>,
}

impl RunOutcome {
    fn error(message: String, duration: Duration) -> RunOutcome {
        RunOutcome {
            status: RunStatus::Error(message),
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            duration,
            resources: None,
        }
    }

    /// The limit that stopped the run, if one did.
    pub fn limit(&self) -> Option<LimitKind> {
        match self.status {
            RunStatus::Limit(kind) => Some(kind),
            _ => None,
        }
    }

    pub fn exit_code(&self) -> Option<i32> {
        match self.status {
            RunStatus::Exited(code) => Some(code),
            _ => None,
        }
    }

    pub fn signal(&self) -> Option<i32> {
        match self.status {
            RunStatus::Signaled(signal) => Some(signal),
            _ => None,
        }
    }

    /// Exited with status 0.
    pub fn succeeded(&self) -> bool {
        self.status == RunStatus::Exited(0)
    }

    /// The status as a shell reports it: the exit code, 128+signal, 124 for
    /// a timeout, 125 for an error, and for a limit 128 plus the signal a
    /// native run under the same limit dies of (see [`limit_exit_status`]).
    pub fn shell_status(&self) -> i32 {
        match &self.status {
            RunStatus::Exited(code) => *code,
            RunStatus::Signaled(signal) => 128 + signal,
            RunStatus::Timeout => EXIT_TIMEOUT,
            RunStatus::Limit(kind) => limit_exit_status(*kind),
            RunStatus::Error(_) => crate::support::EXIT_JITRUN_ERROR,
        }
    }
}

/// The exit status of a run stopped by `kind`: what a shell shows for a
/// native program stopped by the same limit under `ulimit` or a cgroup,
/// 128 plus the signal: SIGKILL (137) for memory (the OOM killer) and
/// processes (jitrun ends the run), SIGXCPU (152) for CPU time, SIGXFSZ
/// (153) for file size.
pub fn limit_exit_status(kind: LimitKind) -> i32 {
    128 + match kind {
        LimitKind::Memory | LimitKind::Processes => libc::SIGKILL,
        LimitKind::CpuTime => libc::SIGXCPU,
        LimitKind::FileSize => libc::SIGXFSZ,
    }
}

/// The error [`Image::run_batch`] returns when a termination signal
/// arrived (after [`stop_runs_on_termination_signals`]); the runs in flight
/// were killed.
#[derive(Debug)]
pub struct Interrupted(pub i32);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by signal {}", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// A prepared run: each batch run owns its own; the runs of
/// [`Image::run_repeated`] share one.
enum Prepared<'p> {
    Owned(Box<PreparedRun>),
    Shared(&'p PreparedRun),
}

impl std::ops::Deref for Prepared<'_> {
    type Target = PreparedRun;
    fn deref(&self) -> &PreparedRun {
        match self {
            Prepared::Owned(run) => run,
            Prepared::Shared(run) => run,
        }
    }
}

/// A spec checked and resolved in the parent, so the child only copies
/// bytes and makes system calls.
struct PreparedRun {
    entry: EntryCall,
    /// Built before the fork, as everything the child needs.
    argv: ProgramArgs,
    process_names: ProcessNames,
    env: Vec<(CString, CString)>,
    clear_env: bool,
    writes: Vec<(u64, Vec<u8>)>,
    stdin: StdinSource,
    capture_limit: Option<usize>,
    timeout: Option<Duration>,
    limits: RunLimits,
    rlimits: ChildRlimits,
    /// Which controllers' groups the run goes in: `None` for none; the
    /// pids group holds every run with groups, the memory one those with
    /// a memory limit.
    groups: Option<GroupUse>,
    sandbox: Option<SandboxSpec>,
}

#[derive(Clone, Copy)]
struct GroupUse {
    memory: bool,
    pids: bool,
}

impl Image {
    /// Where `value` goes for global `name`, checked: the symbol is defined
    /// by the image, the value fits it, and it lies in writable memory
    /// (data or bss; code, constants and relocated read-only data refuse).
    fn plan_global_write(&self, name: &str, value: &GlobalValue) -> Result<(u64, Vec<u8>)> {
        let symbol = self.command_line_name(name);
        let addr =
            self.lookup(symbol).with_context(|| format!("cannot set `{}`: no such global in the image", name))?;
        let bytes = value.encode(name, self.symbol_size(symbol)).context("cannot set a global")?;
        let range = self.range();
        let end = addr.saturating_add(bytes.len() as u64);
        if addr < range.start || end > range.end {
            bail!("cannot set `{}`: it is at {:#x}, outside the image (an absolute symbol?)", name, addr);
        }
        if bytes.is_empty() {
            return Ok((addr, bytes));
        }
        let regions = region::query_range(addr as *const u8, bytes.len())
            .with_context(|| format!("cannot set `{}`: cannot query the protection at {:#x}", name, addr))?;
        for region in regions {
            let region = region.with_context(|| format!("cannot set `{}`: cannot query its pages", name))?;
            if !region.protection().contains(region::Protection::WRITE) {
                bail!(
                    "cannot set `{}`: it is in a read-only segment ({}) at {:#x}; only data and bss globals can be set",
                    name,
                    region.protection(),
                    addr
                );
            }
        }
        Ok((addr, bytes))
    }

    /// Writes `value` into global `name` of this process's image (see
    /// [`GlobalValue`] for sizes). Refuses symbols in read-only segments.
    pub fn write_global(&mut self, name: &str, value: &GlobalValue) -> Result<()> {
        let (addr, bytes) = self.plan_global_write(name, value)?;
        // SAFETY: plan_global_write checked that [addr, addr + len) lies in
        // this image's writable pages; `&mut self` means no run is in progress.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
        Ok(())
    }

    /// Runs the program once in this process: writes `spec.set`, applies
    /// `spec.env` to this process's environment (it stays changed), runs
    /// constructors, the entry, then the finalizers (destructors and the
    /// program's atexit handlers), so the image can run again.
    ///
    /// Global state persists between in-process runs: constructors run
    /// again on memory the previous run left behind. A program that calls
    /// `exit()` ends this process. Capturing output, feeding stdin and
    /// timeouts need [`Image::run_isolated`].
    pub fn run_in_process(&mut self, spec: &RunSpec) -> Result<RunOutcome> {
        if spec.stdin != StdinSource::Inherit || spec.output != OutputMode::Inherit || spec.timeout.is_some() {
            bail!("stdin bytes, output capture and timeouts need an isolated run");
        }
        if spec.limits != RunLimits::default() || spec.sandbox.is_some() {
            bail!("limits and the sandbox need an isolated run");
        }
        let prepared = self.prepare_run(spec)?;
        for (addr, bytes) in &prepared.writes {
            // SAFETY: checked writable image memory (prepare_run); no run is in progress.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), *addr as *mut u8, bytes.len()) };
        }
        self.install_got_interposition();
        apply_env(&prepared).map_err(|e| anyhow!(e))?;
        let started = Instant::now();
        let status = self.run_main_with_os_args(&spec.entry, &spec.argv0, &spec.args)?;
        self.finalize();
        // What the program printed is out when its run ends, as its exit
        // would have it, not whenever the caller's process exits.
        crate::host::stdio::flush_c_streams();
        Ok(RunOutcome {
            status: RunStatus::Exited(status),
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            duration: started.elapsed(),
            resources: None,
        })
    }

    /// Runs the program once in a forked child (see the module docs); a
    /// crash, a hang or an `exit()` of the program cannot affect the caller.
    /// `Err` means the spec was invalid or the system refused, before any
    /// user code ran.
    pub fn run_isolated(&self, spec: &RunSpec) -> Result<RunOutcome> {
        let prepared = self.prepare_run(spec)?;
        let mut outcome = None;
        let mut pool = Pool::new(self, 1)?;
        let child = pool.spawn(0, Prepared::Owned(Box::new(prepared)))?;
        pool.running.push(child);
        while outcome.is_none() {
            pool.step(&mut |_, o| outcome = Some(o))?;
        }
        Ok(outcome.expect("loop ends with an outcome"))
    }

    /// Runs every spec isolated, up to `jobs` children at a time, and calls
    /// `on_done(index, outcome)` as each finishes (in finishing order;
    /// `index` is the spec's position). Invalid specs are reported as
    /// [`RunStatus::Error`]. `Err` only when the system fails or a
    /// termination signal arrives ([`Interrupted`]); the runs in flight are
    /// then killed.
    ///
    /// ```
    /// # fn main() -> anyhow::Result<()> {
    /// use jitrun::image::runs::{GlobalValue, RunSpec, RunStatus};
    /// # let dir = std::env::temp_dir().join(format!("jitrun-doc-batch-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let source = dir.join("crashy.c");
    /// # std::fs::write(&source, "int mode;\nint main(void) { if (mode) *(volatile int *)0 = 1; return 0; }\n")?;
    /// # let object = dir.join("crashy.o");
    /// # assert!(std::process::Command::new("cc").arg("-c").arg(&source).arg("-o").arg(&object).status()?.success());
    /// let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    /// linker.add_file(&object)?;
    /// let image = linker.link()?;
    /// let specs = (0..4).map(|i| RunSpec::captured().set("mode", GlobalValue::Int(i % 2)));
    /// let mut statuses = vec![None; 4];
    /// image.run_batch(specs, 2, |index, outcome| statuses[index] = Some(outcome.status))?;
    /// let segv = RunStatus::Signaled(11);
    /// assert_eq!(statuses, [Some(RunStatus::Exited(0)), Some(segv.clone()), Some(RunStatus::Exited(0)), Some(segv)]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_batch<I>(&self, specs: I, jobs: usize, on_done: impl FnMut(usize, RunOutcome)) -> Result<()>
    where
        I: IntoIterator<Item = RunSpec>,
    {
        let mut specs = specs.into_iter().enumerate();
        self.drive(
            jobs,
            || {
                specs
                    .next()
                    .map(|(index, spec)| (index, self.prepare_run(&spec).map(|run| Prepared::Owned(Box::new(run)))))
            },
            on_done,
        )
    }

    /// Runs specs as [`Image::run_batch`] does, taking each from `specs`
    /// only when a job is free, so that a plan of any length is never held
    /// whole; an `Err` item is reported as [`RunStatus::Error`] in its turn.
    pub fn run_stream<I>(&self, specs: I, jobs: usize, on_done: impl FnMut(usize, RunOutcome)) -> Result<()>
    where
        I: IntoIterator<Item = Result<RunSpec>>,
    {
        let mut specs = specs.into_iter().enumerate();
        self.drive(
            jobs,
            || {
                specs.next().map(|(index, spec)| {
                    (index, spec.and_then(|spec| self.prepare_run(&spec)).map(|run| Prepared::Owned(Box::new(run))))
                })
            },
            on_done,
        )
    }

    /// Runs `spec` isolated `times` times, up to `jobs` children at a time,
    /// as [`Image::run_batch`] would with that many copies of it, but
    /// checks and prepares it once: the parent then allocates and frees
    /// nothing per run, and so writes fewer of the pages each fork has
    /// made copy-on-write (every page written costs a fault per run).
    ///
    /// ```
    /// # fn main() -> anyhow::Result<()> {
    /// use jitrun::image::runs::{RunSpec, RunStatus};
    /// # let dir = std::env::temp_dir().join(format!("jitrun-doc-repeat-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let source = dir.join("counter.c");
    /// # std::fs::write(&source, "int runs;\nint main(void) { return ++runs; }\n")?;
    /// # let object = dir.join("counter.o");
    /// # assert!(std::process::Command::new("cc").arg("-c").arg(&source).arg("-o").arg(&object).status()?.success());
    /// let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    /// linker.add_file(&object)?;
    /// let image = linker.link()?;
    /// // Each run starts from the linked image: `runs` is 0 every time.
    /// let mut statuses = Vec::new();
    /// image.run_repeated(&RunSpec::default(), 5, 2, |_, outcome| statuses.push(outcome.status))?;
    /// assert_eq!(statuses, vec![RunStatus::Exited(1); 5]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_repeated(
        &self,
        spec: &RunSpec,
        times: usize,
        jobs: usize,
        mut on_done: impl FnMut(usize, RunOutcome),
    ) -> Result<()> {
        let started = Instant::now();
        let prepared = match self.prepare_run(spec) {
            Ok(prepared) => prepared,
            Err(e) => {
                let message = format!("{:#}", e);
                (0..times).for_each(|i| on_done(i, RunOutcome::error(message.clone(), started.elapsed())));
                return Ok(());
            }
        };
        let mut indices = 0..times;
        self.drive(jobs, || indices.next().map(|index| (index, Ok(Prepared::Shared(&prepared)))), on_done)
    }

    /// The batch loop: keeps up to `jobs` children of the runs `next` hands
    /// out in flight, and reports each as it finishes.
    fn drive<'p>(
        &'p self,
        jobs: usize,
        mut next: impl FnMut() -> Option<(usize, Result<Prepared<'p>>)>,
        mut on_done: impl FnMut(usize, RunOutcome),
    ) -> Result<()> {
        let mut pool = Pool::new(self, jobs.max(1))?;
        // Looked up here once rather than in every child.
        crate::image::process_name_slots();
        // Every resident page of this process is write-protected and
        // mapped again at each fork, and unmapped at each child's exit
        // (~11 µs per MiB here): give the linker's freed memory back first.
        // SAFETY: malloc_trim only releases free memory of malloc's heaps.
        unsafe { libc::malloc_trim(0) };
        // Every child then starts with the program's heap as fresh as a
        // new process's, without writing to it.
        crate::host::glibc_heap::before_the_first_run();
        let mut exhausted = false;
        loop {
            while !exhausted && pool.running.len() < pool.jobs {
                let Some((index, prepared)) = next() else {
                    exhausted = true;
                    break;
                };
                let started = Instant::now();
                match prepared.and_then(|prepared| pool.spawn(index, prepared)) {
                    Ok(child) => pool.running.push(child),
                    Err(e) => on_done(index, RunOutcome::error(format!("{:#}", e), started.elapsed())),
                }
            }
            if pool.running.is_empty() {
                return Ok(());
            }
            pool.step(&mut on_done)?;
        }
    }

    fn prepare_run(&self, spec: &RunSpec) -> Result<PreparedRun> {
        let entry = self.entry_call(&spec.entry)?;
        if let Some(bad) = std::iter::once(&spec.argv0).chain(&spec.args).find(|a| a.as_bytes().contains(&0)) {
            bail!("argument {:?} contains a NUL byte", bad);
        }
        let env = spec
            .env
            .iter()
            .map(|(k, v)| {
                if k.is_empty() || k.contains('=') {
                    bail!("environment variable name {:?} is empty or contains `=`", k);
                }
                let key = CString::new(k.as_str()).with_context(|| format!("{:?} contains a NUL byte", k))?;
                let value = CString::new(v.as_str()).with_context(|| format!("{:?} contains a NUL byte", v))?;
                Ok((key, value))
            })
            .collect::<Result<_>>()?;
        let writes = spec.set.iter().map(|(name, value)| self.plan_global_write(name, value)).collect::<Result<_>>()?;
        crate::image::limits::check(&spec.limits)?;
        let (groups, memory_as_address_space, processes_as_rlimit) = plan_enforcement(spec)?;
        if let Some(sandbox) = &spec.sandbox {
            crate::image::sandbox::check(sandbox)?;
        }
        Ok(PreparedRun {
            entry,
            argv: ProgramArgs::new(&spec.argv0, &spec.args)?,
            process_names: ProcessNames::new(&spec.argv0),
            env,
            clear_env: spec.clear_env,
            writes,
            stdin: spec.stdin.clone(),
            capture_limit: match spec.output {
                OutputMode::Inherit => None,
                OutputMode::Capture { limit } => Some(limit),
            },
            timeout: spec.timeout,
            limits: spec.limits.clone(),
            rlimits: spec.limits.rlimits(memory_as_address_space, processes_as_rlimit),
            groups,
            sandbox: spec.sandbox.clone(),
        })
    }
}

/// How `spec`'s limits are enforced here: which cgroups the run goes in,
/// and whether memory and processes fall back to resource limits. The
/// pids group also holds every sandboxed run, so that nothing it starts
/// outlives it. An error when a limit cannot be enforced at all.
fn plan_enforcement(spec: &RunSpec) -> Result<(Option<GroupUse>, bool, bool)> {
    let limits = &spec.limits;
    if !limits.needs_cgroups() && spec.sandbox.is_none() {
        // Plain isolated runs leave the cgroups alone (not even a look).
        return Ok((None, false, false));
    }
    let memory_problem = limits.memory.and_then(|_| crate::image::cgroups::controller_problem(Controller::Memory));
    let pids_problem = crate::image::cgroups::controller_problem(Controller::Pids);
    let memory_as_address_space = memory_problem.is_some();
    if let Some(problem) = &memory_problem {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            eprintln!(
                "jitrun: warning: --max-memory is enforced per process as an address-space limit (RLIMIT_AS), \
                 and a run that reaches it is reported by what it then does: no memory cgroup ({})",
                problem
            )
        });
    }
    let mut processes_as_rlimit = false;
    if let (Some(_), Some(problem)) = (limits.processes, &pids_problem) {
        if crate::support::effective_user() == 0 {
            bail!("--max-processes cannot be enforced: {}; RLIMIT_NPROC does not bind root", problem);
        }
        processes_as_rlimit = true;
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            eprintln!(
                "jitrun: warning: --max-processes is enforced as RLIMIT_NPROC, which counts all of this user's \
                 processes, and a run that reaches it is reported by what it then does: no pids cgroup ({})",
                problem
            )
        });
    }
    let memory = limits.memory.is_some() && !memory_as_address_space;
    let pids = pids_problem.is_none() && (limits.processes.is_some() || spec.sandbox.is_some() || memory);
    let groups = (memory || pids).then_some(GroupUse { memory, pids });
    Ok((groups, memory_as_address_space, processes_as_rlimit))
}

/// Applies a run's environment to the current process with libc (not
/// `std::env`, whose lock a forked child must not touch).
fn apply_env(run: &PreparedRun) -> Result<(), String> {
    // SAFETY: libc environment calls with NUL-terminated strings; in the
    // child nothing else runs, in-process the caller holds `&mut Image`
    // and is the documented owner of the change.
    unsafe {
        if run.clear_env && libc::clearenv() != 0 {
            return Err("clearenv failed".to_string());
        }
        for (key, value) in &run.env {
            if libc::setenv(key.as_ptr(), value.as_ptr(), 1) != 0 {
                return Err(format!("setenv {:?} failed", key));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Termination signals: kill the runs in flight instead of orphaning them.

static PENDING_SIGNAL: AtomicI32 = AtomicI32::new(0);
const TERMINATION_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
/// The actions before [`stop_runs_on_termination_signals`], restored as
/// they were (handler, flags, mask) in children.
static ORIGINAL_ACTIONS: std::sync::OnceLock<[libc::sigaction; 3]> = std::sync::OnceLock::new();

extern "C" fn note_termination_signal(signal: libc::c_int) {
    PENDING_SIGNAL.store(signal, Ordering::SeqCst);
}

/// Makes SIGINT, SIGTERM and SIGHUP stop [`Image::run_batch`] (and
/// [`Image::run_isolated`]) with [`Interrupted`]: the signal is passed on to
/// the runs in flight, which get 2 seconds to end before they are killed,
/// so a stopped harness leaves no orphans. For programs (the CLI)
/// that own their signal handling; a library should not call it behind its
/// caller's back.
pub fn stop_runs_on_termination_signals() {
    if ORIGINAL_ACTIONS.get().is_some() {
        return;
    }
    // SAFETY: sigaction (plain data) is valid zeroed.
    let mut originals: [libc::sigaction; 3] = unsafe { std::mem::zeroed() };
    for (&signal, original) in TERMINATION_SIGNALS.iter().zip(&mut originals) {
        // SAFETY: installing a handler that only stores to an atomic
        // (async-signal-safe); no SA_RESTART, so poll() wakes up with EINTR.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_termination_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, original);
        }
    }
    let _ = ORIGINAL_ACTIONS.set(originals);
}

// ---------------------------------------------------------------------------
// The parent side: children in flight, multiplexed with poll on one thread.

/// Output read from a child's pipe, kept up to a limit.
struct Capture {
    fd: Option<OwnedFd>,
    data: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Capture {
    fn new(fd: OwnedFd, limit: usize) -> Capture {
        Capture { fd: Some(fd), data: Vec::new(), limit, truncated: false }
    }

    /// Reads what is available; closes the pipe at end of file or error.
    fn read_available(&mut self) {
        let Some(fd) = &self.fd else { return };
        // One page, not zeroed: after each fork the parent's stack is shared
        // copy-on-write with the child, and a 64 KiB zeroed buffer (with
        // Rust's stack probes) cost 16 page copies per run.
        const CHUNK: usize = 4096;
        let mut buf = std::mem::MaybeUninit::<[u8; CHUNK]>::uninit();
        loop {
            // SAFETY: reading into a local buffer from a descriptor we own.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), CHUNK) };
            if n > 0 {
                let n = n as usize;
                // SAFETY: read() initialized the first n bytes.
                let got = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) };
                let room = self.limit.saturating_sub(self.data.len());
                self.data.extend_from_slice(&got[..n.min(room)]);
                self.truncated |= n > room;
                continue;
            }
            let err = std::io::Error::last_os_error().raw_os_error();
            if n < 0 && err == Some(libc::EINTR) {
                continue;
            }
            if n < 0 && err == Some(libc::EAGAIN) {
                return;
            }
            self.fd = None;
            return;
        }
    }
}

/// Bytes still to write to a child's stdin.
struct StdinFeed {
    fd: OwnedFd,
    bytes: Vec<u8>,
    written: usize,
}

/// A child in flight.
struct Running<'p> {
    index: usize,
    pid: libc::pid_t,
    /// Readable when the child exits; `None` when pidfd_open is unavailable
    /// (then the child is polled for on every wake-up) or not needed.
    pidfd: Option<OwnedFd>,
    /// Nothing to feed, capture or time out, and no other run in flight:
    /// the parent just waits for the child to exit, with no descriptors
    /// and no poll (see [`Pool::wait_for_the_one_run`]).
    waits_blocking: bool,
    stdin: Option<StdinFeed>,
    stdout: Option<Capture>,
    stderr: Option<Capture>,
    /// The [`SetupErrors`] slot where the child reports a failure to set
    /// itself up, before user code.
    slot: usize,
    started: Instant,
    deadline: Option<Instant>,
    timed_out: bool,
    /// Wait status and the time the child was reaped.
    ended: Option<(libc::c_int, Instant)>,
    /// What the child cost, from wait4 when it was reaped.
    usage: Option<ResourceUsage>,
    /// Its slot's cgroups, while they are its own.
    grouped: Option<GroupedRun>,
    /// A limit it reached (seen in its cgroups), once seen.
    limit_reached: Option<LimitKind>,
    /// Its temporary directory and sandbox pieces, removed when it is over.
    _sandboxed: Option<SandboxedRun>,
    /// Kept until the run is over: freed while the child lives, its heap
    /// pages (shared copy-on-write) would be copied for the parent.
    _prepared: Prepared<'p>,
}

impl Running<'_> {
    fn captures_mut(&mut self) -> impl Iterator<Item = &mut Capture> {
        self.stdout.iter_mut().chain(self.stderr.iter_mut())
    }

    /// Reaps the child if it has exited. While it is an unreaped zombie its
    /// process-group id cannot be reused, so killing the group here reaches
    /// only what the run left behind (background children), never a stranger.
    fn try_reap(&mut self) -> Result<()> {
        if self.ended.is_some() || !self.has_exited(libc::WNOHANG)? {
            return Ok(());
        }
        self.reap_exited()
    }

    /// Whether the child has exited, leaving it unreaped; `flags` 0 waits
    /// for that (false when a signal interrupts the wait).
    fn has_exited(&self, flags: libc::c_int) -> Result<bool> {
        // SAFETY: waitid fills a zeroed siginfo_t for our own child.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            if libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT | flags) != 0
            {
                if flags == 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    return Ok(false);
                }
                return Err(std::io::Error::last_os_error()).context("waitid");
            }
            Ok(info.si_pid() != 0)
        }
    }

    /// Waits, with `waited` blocked (see [`SignalsBlocked`]), until the
    /// child exits (true) or a termination signal comes (false, the signal
    /// noted as its handler would have).
    fn exited_or_signalled(&self, waited: &libc::sigset_t) -> Result<bool> {
        loop {
            // SAFETY: sigwaitinfo fills a zeroed siginfo_t; `waited` is a valid set.
            let (signal, info) = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                (libc::sigwaitinfo(waited, &mut info), info)
            };
            match signal {
                libc::SIGCHLD => {
                    // SAFETY: the siginfo of a SIGCHLD carries the child's pid.
                    let ours = unsafe { info.si_pid() } == self.pid;
                    let ended = matches!(info.si_code, libc::CLD_EXITED | libc::CLD_KILLED | libc::CLD_DUMPED);
                    // SIGCHLD does not queue: one for a stop may stand for an exit too.
                    if (ours && ended) || self.has_exited(libc::WNOHANG)? {
                        return Ok(true);
                    }
                }
                -1 if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                -1 => return Err(std::io::Error::last_os_error()).context("sigwaitinfo"),
                termination => {
                    note_termination_signal(termination);
                    return Ok(false);
                }
            }
        }
    }

    /// Kills what the exited child left in its group, then reaps it.
    fn reap_exited(&mut self) -> Result<()> {
        kill_group(self.pid);
        let (status, usage) = wait_for(self.pid, 0).context("wait4")?.expect("an exited child is reaped at once");
        self.ended = Some((status, Instant::now()));
        self.usage = Some(usage);
        self.stdin = None;
        self.pidfd = None;
        Ok(())
    }

    fn is_finished(&self, now: Instant) -> bool {
        let Some((_, ended)) = self.ended else { return false };
        let open = self.stdout.iter().chain(self.stderr.iter()).any(|c| c.fd.is_some());
        !open || now >= ended + DRAIN_GRACE
    }

    fn into_outcome(self, setup_error: Option<String>) -> RunOutcome {
        let (status, ended) = self.ended.expect("finished runs have ended");
        let limits = &self._prepared.limits;
        let limit = self.limit_reached.or_else(|| {
            self.usage.as_ref().and_then(|usage| crate::image::limits::limit_from_wait_status(status, usage, limits))
        });
        let status = if let Some(setup_error) = setup_error {
            RunStatus::Error(setup_error)
        } else if let Some(kind) = limit {
            RunStatus::Limit(kind)
        } else if self.timed_out && libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL {
            RunStatus::Timeout
        } else if libc::WIFEXITED(status) {
            RunStatus::Exited(libc::WEXITSTATUS(status))
        } else {
            RunStatus::Signaled(libc::WTERMSIG(status))
        };
        let (stdout, stdout_truncated) = self.stdout.map_or((Vec::new(), false), |c| (c.data, c.truncated));
        let (stderr, stderr_truncated) = self.stderr.map_or((Vec::new(), false), |c| (c.data, c.truncated));
        RunOutcome {
            status,
            stdout,
            stderr,
            stdout_truncated,
            stderr_truncated,
            duration: ended - self.started,
            resources: self.usage,
        }
    }
}

/// wait4 for `pid` with `flags`: its wait status and usage, `None` when
/// WNOHANG found it still running.
fn wait_for(pid: libc::pid_t, flags: libc::c_int) -> std::io::Result<Option<(libc::c_int, ResourceUsage)>> {
    let mut status = 0;
    // SAFETY: rusage is plain data, valid zeroed; wait4 on our own child fills both.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above.
        let waited = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if waited == pid {
            return Ok(Some((status, ResourceUsage::from_rusage(&usage))));
        }
        if waited == 0 {
            return Ok(None);
        }
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINTR) {
            return Err(error);
        }
    }
}

fn kill_group(pid: libc::pid_t) {
    // SAFETY: signalling the process group led by our own child (ESRCH
    // when it is already gone is fine).
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}

/// The parent's signal mask while runs are in flight. SIGPIPE is blocked,
/// so writing stdin to a run that exited gives EPIPE instead of killing the
/// caller. With jitrun's termination handlers installed (see
/// [`stop_runs_on_termination_signals`]), SIGINT, SIGTERM, SIGHUP and
/// SIGCHLD are blocked too and only let in while the parent waits
/// (`ppoll`'s mask, or taken with `sigwaitinfo`): a signal that came
/// between the last check and the wait would otherwise be handled before
/// the wait began, which then waited for a run that was never told to stop.
/// Restores the mask (dropping a SIGPIPE or SIGCHLD that became pending)
/// afterwards.
struct SignalsBlocked {
    original_mask: libc::sigset_t,
    /// The mask while waiting: the original one, SIGPIPE still blocked.
    while_waiting: libc::sigset_t,
    /// What a run's parent waits for (SIGCHLD and the termination
    /// signals), if jitrun's termination handlers are installed.
    waited: Option<libc::sigset_t>,
}

impl SignalsBlocked {
    fn new() -> Result<SignalsBlocked> {
        // SAFETY: manipulating this thread's signal mask with valid sets.
        unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut block);
            libc::sigaddset(&mut block, libc::SIGPIPE);
            let waited = ORIGINAL_ACTIONS.get().map(|_| {
                let mut waited: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut waited);
                for signal in TERMINATION_SIGNALS.into_iter().chain([libc::SIGCHLD]) {
                    libc::sigaddset(&mut waited, signal);
                    libc::sigaddset(&mut block, signal);
                }
                waited
            });
            let mut original_mask: libc::sigset_t = std::mem::zeroed();
            if libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut original_mask) != 0 {
                bail!("cannot block SIGPIPE");
            }
            let mut while_waiting = original_mask;
            libc::sigaddset(&mut while_waiting, libc::SIGPIPE);
            Ok(SignalsBlocked { original_mask, while_waiting, waited })
        }
    }

    /// poll(2), signals let in as [`SignalsBlocked`] says.
    fn poll(&self, fds: &mut [libc::pollfd], timeout_ms: libc::c_int) -> libc::c_int {
        let timeout = libc::timespec {
            tv_sec: libc::time_t::from(timeout_ms.max(0) / 1000),
            tv_nsec: libc::c_long::from(timeout_ms.max(0) % 1000) * 1_000_000,
        };
        let forever = timeout_ms < 0;
        // SAFETY: `fds` is a valid array of its length; the masks are valid sets.
        unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                if forever { std::ptr::null() } else { &timeout },
                &self.while_waiting,
            )
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: consuming pending signals of this thread (zero timeout)
        // and restoring the mask saved in `new`.
        unsafe {
            let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            for signal in [libc::SIGPIPE, libc::SIGCHLD] {
                let blocked_here = signal == libc::SIGPIPE || self.waited.is_some();
                if blocked_here && libc::sigismember(&self.original_mask, signal) == 0 {
                    let mut only: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut only);
                    libc::sigaddset(&mut only, signal);
                    while libc::sigtimedwait(&only, std::ptr::null_mut(), &zero) == signal {}
                }
            }
            // A termination signal still pending reaches its handler here.
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.original_mask, std::ptr::null_mut());
        }
    }
}

struct Pool<'a> {
    image: &'a Image,
    jobs: usize,
    /// One run inline, in the pool (on the caller's stack): the parent of
    /// `--repeat --isolate` then writes no heap page while its children
    /// live, and its heap's huge pages stay whole (a write to one shared
    /// with a child splits it), so each fork copies one page table entry
    /// per 2 MiB of heap instead of 512.
    running: smallvec::SmallVec<[Running<'a>; 1]>,
    signals: SignalsBlocked,
    /// Set for one run at a time (see [`CpuPin`]).
    pin: Option<CpuPin>,
    /// Buffers kept across runs: after a fork, every heap page the parent
    /// writes (malloc and free do) is copied, so it allocates up front.
    scratch: PollScratch,
    setup_errors: SetupErrors,
    /// The runs' cgroups, made when a run first needs them.
    groups: Option<RunGroups>,
    /// Numbers the runs' temporary directories.
    runs_started: u64,
}

/// Where children report a failure to set themselves up (before user
/// code runs): one slot of shared memory per job, rather than a pipe per
/// run, which cost five system calls in the parent and a descriptor the
/// child had to close.
struct SetupErrors {
    base: *mut u8,
    slots: usize,
}

/// Bytes per slot: a length (u32), then the message.
const SETUP_ERROR_SLOT: usize = 1024;

impl SetupErrors {
    fn new(slots: usize) -> Result<SetupErrors> {
        let len = slots * SETUP_ERROR_SLOT;
        // SAFETY: a fresh shared anonymous mapping, owned by this value.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error()).context("cannot map the setup-error slots");
        }
        Ok(SetupErrors { base: base.cast(), slots })
    }

    /// Called in the child: stores `message` (truncated) in `slot`.
    fn report(&self, slot: usize, message: &str) {
        let bytes = &message.as_bytes()[..message.len().min(SETUP_ERROR_SLOT - 4)];
        // SAFETY: `slot` < `slots`, so the slot lies inside the mapping; the
        // parent reads it only after this process has exited.
        unsafe {
            let at = self.base.add(slot * SETUP_ERROR_SLOT);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.add(4), bytes.len());
            at.cast::<u32>().write_unaligned(bytes.len() as u32);
        }
    }

    /// Called in the parent once the child of `slot` is reaped: its
    /// message, if it reported one, and the slot cleared for the next run.
    fn take(&self, slot: usize) -> Option<String> {
        // SAFETY: as in `report`; the child that could write it has exited.
        // The length is bounded, since user code could scribble on it.
        unsafe {
            let at = self.base.add(slot * SETUP_ERROR_SLOT);
            let len = at.cast::<u32>().read_unaligned() as usize;
            if len == 0 {
                return None;
            }
            at.cast::<u32>().write_unaligned(0);
            let bytes = std::slice::from_raw_parts(at.add(4), len.min(SETUP_ERROR_SLOT - 4));
            Some(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}

impl Drop for SetupErrors {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), self.slots * SETUP_ERROR_SLOT) };
    }
}

#[derive(Default)]
struct PollScratch {
    child_closes: Vec<RawFd>,
    pollfds: Vec<libc::pollfd>,
    owners: Vec<(usize, Stream)>,
}

/// One run at a time: the parent stays on its CPU while runs are in flight,
/// so each child starts there (a forked child inherits the mask) and its
/// exit wakes the parent there. Waking an idle CPU costs a hypervisor round
/// trip in a VM: a fork + exit + wait took 150 µs here across CPUs and
/// 85 µs on one. The child restores the original mask before the program
/// runs, so the program sees the affinity it would natively.
struct CpuPin {
    original: libc::cpu_set_t,
}

impl CpuPin {
    fn to_current_cpu() -> Option<CpuPin> {
        let original = crate::support::threads::thread_affinity()
            .filter(|set| crate::support::threads::cpu_set_count(set) >= 2)?;
        // SAFETY: affinity calls on this thread with a cpu_set_t of the
        // size passed; cpu_set_t is plain data, valid when zeroed.
        unsafe {
            let cpu = usize::try_from(libc::sched_getcpu()).ok()?;
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            (libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) == 0)
                .then_some(CpuPin { original })
        }
    }

    /// Gives the calling thread the original mask back.
    fn restore(original: &libc::cpu_set_t) {
        // SAFETY: as above.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), original) };
    }
}

impl Drop for CpuPin {
    fn drop(&mut self) {
        CpuPin::restore(&self.original);
    }
}

/// Which descriptor of which child a pollfd is.
#[derive(Clone, Copy)]
enum Stream {
    Stdin,
    Stdout,
    Stderr,
    Exit,
}

fn pipe_pair() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("cannot create a pipe");
    }
    // SAFETY: freshly created, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: &OwnedFd) {
    // SAFETY: fcntl flag update on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// The child's ends of its pipes.
struct ChildEnds {
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
}

impl<'a> Pool<'a> {
    fn new(image: &'a Image, jobs: usize) -> Result<Pool<'a>> {
        let pin = if jobs == 1 { CpuPin::to_current_cpu() } else { None };
        if crate::diagnostics::crash::is_prepared() {
            // Inherited by every child, which then allocates nothing for it.
            crate::diagnostics::crash::ensure_alternate_stack();
        }
        let scratch = PollScratch {
            child_closes: Vec::with_capacity(8 * jobs),
            pollfds: Vec::with_capacity(5 * jobs),
            owners: Vec::with_capacity(5 * jobs),
        };
        Ok(Pool {
            image,
            jobs,
            running: smallvec::SmallVec::with_capacity(jobs),
            signals: SignalsBlocked::new()?,
            pin,
            scratch,
            setup_errors: SetupErrors::new(jobs)?,
            groups: None,
            runs_started: 0,
        })
    }

    /// Forks a child for `run`.
    fn spawn(&mut self, index: usize, run: Prepared<'a>) -> Result<Running<'a>> {
        let (stdin_read, stdin_feed) = match &run.stdin {
            StdinSource::Inherit => (None, None),
            StdinSource::Bytes(bytes) => {
                let (r, w) = pipe_pair()?;
                (Some(r), Some(StdinFeed { fd: w, bytes: bytes.clone(), written: 0 }))
            }
        };
        let (stdout_write, stdout_capture, stderr_write, stderr_capture) = match run.capture_limit {
            None => (None, None, None, None),
            Some(limit) => {
                let (out_r, out_w) = pipe_pair()?;
                let (err_r, err_w) = pipe_pair()?;
                (Some(out_w), Some(Capture::new(out_r, limit)), Some(err_w), Some(Capture::new(err_r, limit)))
            }
        };
        let ends = ChildEnds { stdin: stdin_read, stdout: stdout_write, stderr: stderr_write };
        let slot = (0..self.setup_errors.slots)
            .find(|&s| self.running.iter().all(|r| r.slot != s))
            .context("internal: more runs in flight than jobs")?;
        let grouped = match run.groups {
            None => None,
            Some(using) => {
                let slots = self.setup_errors.slots;
                let groups = self.groups.get_or_insert_with(|| RunGroups::new(slots));
                let limits = &run.limits;
                Some(
                    groups
                        .prepare(slot, limits.memory, limits.processes, using.memory, using.pids)
                        .map_err(|e| anyhow!("cannot set up the run's cgroups: {}", e))?,
                )
            }
        };
        self.runs_started += 1;
        let sandboxed = match &run.sandbox {
            None => None,
            Some(sandbox) => Some(SandboxedRun::prepare(sandbox, self.runs_started)?),
        };

        // Descriptors the child must close: the parent's ends of every run
        // in flight (a child holding another run's stdin would keep it from
        // ever seeing end of file) and of its own pipes.
        let parent_fds = &mut self.scratch.child_closes;
        parent_fds.clear();
        for r in &self.running {
            parent_fds.extend(r.stdin.as_ref().map(|s| s.fd.as_raw_fd()));
            parent_fds.extend(r.pidfd.as_ref().map(|f| f.as_raw_fd()));
            for c in r.stdout.iter().chain(r.stderr.iter()) {
                parent_fds.extend(c.fd.as_ref().map(|f| f.as_raw_fd()));
            }
        }
        parent_fds.extend(stdin_feed.as_ref().map(|s| s.fd.as_raw_fd()));
        for c in stdout_capture.iter().chain(stderr_capture.iter()) {
            parent_fds.extend(c.fd.as_ref().map(|f| f.as_raw_fd()));
        }

        // Flush C stdio so buffered output of the caller is not written
        // again by the child's exit().
        crate::host::stdio::flush_c_streams();
        let started = Instant::now();
        // SAFETY: fork; the child branch never returns (child_main ends in
        // exit or _exit) and uses only the prepared data and system calls.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error()).context("fork failed");
        }
        if pid == 0 {
            let original_cpus = self.pin.as_ref().map(|p| &p.original);
            let report_failure = |message: &str| self.setup_errors.report(slot, message);
            let contained = Containment { grouped: grouped.as_ref(), sandboxed: sandboxed.as_ref() };
            let undo = ParentState { fds: parent_fds, signal_mask: &self.signals.original_mask, cpus: original_cpus };
            child_main(self.image, &run, ends, undo, contained, &report_failure);
        }
        // The child has its copies of the cgroup.procs descriptors.
        let grouped = grouped.map(|mut g| {
            g.procs.clear();
            g
        });
        // Also set the group here, so a kill right after spawn reaches it
        // whichever of parent and child runs first.
        // SAFETY: setpgid on our own child.
        unsafe { libc::setpgid(pid, pid) };
        drop(ends);
        // A run with cgroups is watched for the limits they count.
        let waits_blocking = self.jobs == 1
            && stdin_feed.is_none()
            && stdout_capture.is_none()
            && run.timeout.is_none()
            && grouped.is_none();
        let pidfd = if waits_blocking {
            None
        } else {
            // SAFETY: pidfd_open returns a new descriptor we own, or -1.
            let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            // SAFETY: a fresh descriptor from pidfd_open.
            (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) })
        };
        for c in stdout_capture.iter().chain(stderr_capture.iter()) {
            set_nonblocking(c.fd.as_ref().expect("fresh capture"));
        }
        let mut stdin = stdin_feed;
        if let Some(feed) = &stdin {
            set_nonblocking(&feed.fd);
        }
        if stdin.as_ref().is_some_and(|f| f.bytes.is_empty()) {
            stdin = None; // end of file right away
        }
        Ok(Running {
            index,
            pid,
            pidfd,
            waits_blocking,
            stdin,
            stdout: stdout_capture,
            stderr: stderr_capture,
            slot,
            started,
            deadline: run.timeout.map(|t| started + t),
            timed_out: false,
            ended: None,
            usage: None,
            grouped,
            limit_reached: None,
            _sandboxed: sandboxed,
            _prepared: run,
        })
    }

    /// Waits for something to happen, handles it, and reports finished runs.
    fn step(&mut self, on_done: &mut dyn FnMut(usize, RunOutcome)) -> Result<()> {
        if let [run] = &self.running[..] {
            if run.waits_blocking && run.ended.is_none() {
                return self.wait_for_the_one_run(on_done);
            }
        }
        let mut pollfds = std::mem::take(&mut self.scratch.pollfds);
        let mut owners = std::mem::take(&mut self.scratch.owners);
        pollfds.clear();
        owners.clear();
        let result = self.step_with(&mut pollfds, &mut owners, on_done);
        self.scratch.pollfds = pollfds;
        self.scratch.owners = owners;
        result
    }

    /// The common case of `--repeat --isolate`: one run that needs no
    /// descriptors watched. Blocking in waitid costs three system calls per
    /// run where the poll loop took seven; a termination signal still
    /// interrupts it (the handlers are installed without SA_RESTART).
    fn wait_for_the_one_run(&mut self, on_done: &mut dyn FnMut(usize, RunOutcome)) -> Result<()> {
        let exited = match &self.signals.waited {
            Some(waited) => self.running[0].exited_or_signalled(waited)?,
            None => self.running[0].has_exited(0)?,
        };
        self.stop_if_interrupted()?;
        if exited {
            self.running[0].reap_exited()?;
            self.report_finished(0, on_done);
        }
        Ok(())
    }

    /// After a wait: a termination signal kills every run in flight and
    /// ends the batch with [`Interrupted`].
    fn stop_if_interrupted(&mut self) -> Result<()> {
        // Read before writing: after a fork the page is shared with the
        // child, and a write would copy it.
        let signal = match PENDING_SIGNAL.load(Ordering::SeqCst) {
            0 => 0,
            _ => PENDING_SIGNAL.swap(0, Ordering::SeqCst),
        };
        if signal != 0 {
            self.stop_all(signal);
            return Err(Interrupted(signal).into());
        }
        Ok(())
    }

    /// Passes termination signal `signal` on to every run in flight, as a
    /// native run would get it (Ctrl-C reaches the whole foreground
    /// process group, `timeout` and CI cancellations send SIGTERM), so its
    /// handlers can clean up; kills what still runs after [`STOP_GRACE`] or
    /// at a second signal. Output they write meanwhile is read and dropped,
    /// so that a full pipe does not hold them up.
    fn stop_all(&mut self, signal: libc::c_int) {
        for r in self.running.iter().filter(|r| r.ended.is_none()) {
            // SAFETY: signalling the process group led by our own child.
            unsafe { libc::kill(-r.pid, signal) };
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline && PENDING_SIGNAL.load(Ordering::SeqCst) == 0 {
            for r in self.running.iter_mut().filter(|r| r.ended.is_none()) {
                if let Ok(Some((status, usage))) = wait_for(r.pid, libc::WNOHANG) {
                    r.ended = Some((status, Instant::now()));
                    r.usage = Some(usage);
                }
                for capture in r.captures_mut() {
                    capture.read_available();
                    capture.data.clear();
                }
            }
            if self.running.iter().all(|r| r.ended.is_some()) {
                break;
            }
            // Poll on no descriptors: a 5 ms sleep (std's sleep would import
            // clock_nanosleep, one more symbol every start binds) in which
            // a second signal is let in.
            self.signals.poll(&mut [], 5);
        }
        self.kill_all();
    }

    /// Takes finished run `i` out of the pool and reports it.
    fn report_finished(&mut self, i: usize, on_done: &mut dyn FnMut(usize, RunOutcome)) {
        let r = self.running.swap_remove(i);
        let setup_error = self.setup_errors.take(r.slot);
        on_done(r.index, r.into_outcome(setup_error));
    }

    /// While a run with cgroups lives: a limit it reached ends it at once
    /// (its group, then every other process in its cgroups).
    fn stop_at_limits(&mut self) {
        let Some(groups) = &self.groups else { return };
        for r in self.running.iter_mut().filter(|r| r.ended.is_none() && r.limit_reached.is_none()) {
            let Some(grouped) = &r.grouped else { continue };
            if let Some(kind) = groups.limit_reached(grouped) {
                r.limit_reached = Some(kind);
                kill_group(r.pid);
                groups.kill_members(grouped.slot());
            }
        }
    }

    /// Once a run with cgroups is reaped: what it left anywhere (setsid
    /// escapes too) is killed and gone before its slot is used again; its
    /// limits and peak memory are read.
    fn settle_groups(&mut self) {
        let Some(groups) = &self.groups else { return };
        for r in self.running.iter_mut().filter(|r| r.ended.is_some()) {
            let Some(mut grouped) = r.grouped.take() else { continue };
            groups.kill_members(grouped.slot());
            groups.wait_until_empty(grouped.slot());
            r.limit_reached = r.limit_reached.or_else(|| groups.limit_reached(&grouped));
            if let Some(usage) = &mut r.usage {
                usage.peak_memory_kib = groups.peak_memory_kib(&mut grouped);
            }
        }
    }

    fn step_with(
        &mut self,
        pollfds: &mut Vec<libc::pollfd>,
        owners: &mut Vec<(usize, Stream)>,
        on_done: &mut dyn FnMut(usize, RunOutcome),
    ) -> Result<()> {
        let now = Instant::now();
        let mut wait = MAX_POLL_WAIT;
        for (i, r) in self.running.iter_mut().enumerate() {
            let mut watch = |fd: RawFd, events: libc::c_short, stream: Stream| {
                pollfds.push(libc::pollfd { fd, events, revents: 0 });
                owners.push((i, stream));
            };
            if let Some(feed) = &r.stdin {
                watch(feed.fd.as_raw_fd(), libc::POLLOUT, Stream::Stdin);
            }
            for (capture, stream) in [(r.stdout.as_ref(), Stream::Stdout), (r.stderr.as_ref(), Stream::Stderr)] {
                if let Some(fd) = capture.and_then(|c| c.fd.as_ref()) {
                    watch(fd.as_raw_fd(), libc::POLLIN, stream);
                }
            }
            match (&r.pidfd, r.ended) {
                (Some(pidfd), None) => watch(pidfd.as_raw_fd(), libc::POLLIN, Stream::Exit),
                (None, None) => wait = wait.min(Duration::from_millis(2)),
                _ => {}
            }
            let next_deadline = match r.ended {
                None => r.deadline.filter(|_| !r.timed_out),
                Some((_, ended)) => Some(ended + DRAIN_GRACE),
            };
            if let Some(deadline) = next_deadline {
                wait = wait.min(deadline.saturating_duration_since(now));
            }
        }
        // Round up, so a deadline 0.4 ms away does not spin.
        let wait_ms = wait.as_micros().div_ceil(1000) as libc::c_int;
        let ready = self.signals.poll(pollfds, wait_ms);
        if ready < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(std::io::Error::last_os_error()).context("poll");
        }
        self.stop_if_interrupted()?;
        for (pfd, &(i, stream)) in pollfds.iter().zip(owners.iter()) {
            if pfd.revents == 0 {
                continue;
            }
            let r = &mut self.running[i];
            match stream {
                Stream::Stdin => feed_stdin(r),
                Stream::Stdout => r.stdout.as_mut().expect("watched").read_available(),
                Stream::Stderr => r.stderr.as_mut().expect("watched").read_available(),
                Stream::Exit => r.try_reap()?,
            }
        }
        self.stop_at_limits();
        let now = Instant::now();
        for r in &mut self.running {
            if r.pidfd.is_none() {
                r.try_reap()?;
            }
            if r.ended.is_none() && !r.timed_out && r.deadline.is_some_and(|d| now >= d) {
                kill_group(r.pid);
                r.timed_out = true;
            }
            if r.ended.is_some() {
                // Pick up what arrived since the last poll before deciding.
                r.captures_mut().for_each(Capture::read_available);
            }
        }
        self.settle_groups();
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].is_finished(now) {
                self.report_finished(i, on_done);
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    fn kill_all(&mut self) {
        for r in self.running.drain(..) {
            if r.ended.is_none() {
                kill_group(r.pid);
                let _ = wait_for(r.pid, 0);
            }
        }
    }
}

impl Drop for Pool<'_> {
    fn drop(&mut self) {
        // An error or a panic in the caller's callback must not leave runs behind.
        self.kill_all();
    }
}

fn feed_stdin(r: &mut Running) {
    let Some(feed) = &mut r.stdin else { return };
    while feed.written < feed.bytes.len() {
        let rest = &feed.bytes[feed.written..];
        // SAFETY: writing from a live buffer to a descriptor we own.
        let n = unsafe { libc::write(feed.fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            feed.written += n as usize;
            continue;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) => return,
            // EPIPE: the program stopped reading; the rest is dropped.
            _ => break,
        }
    }
    r.stdin = None; // closing the pipe is the end of file
}

/// What confines a child beyond its process group: its cgroups and sandbox.
#[derive(Clone, Copy)]
struct Containment<'a> {
    grouped: Option<&'a GroupedRun>,
    sandboxed: Option<&'a SandboxedRun>,
}

/// What a forked child inherits from jitrun's parent process and must
/// undo before the program runs: the parent's descriptors (closed), the
/// signal mask and the CPUs as jitrun was started with (restored).
struct ParentState<'a> {
    fds: &'a [RawFd],
    signal_mask: &'a libc::sigset_t,
    cpus: Option<&'a libc::cpu_set_t>,
}

/// The child: set up stdio, process group, signals, environment and
/// globals with system calls only, then run the program and exit.
fn child_main(
    image: &Image,
    run: &PreparedRun,
    ends: ChildEnds,
    parent: ParentState,
    contained: Containment,
    report_failure: &dyn Fn(&str),
) -> ! {
    // First, before the child uses memory or starts anything: into its
    // cgroups, under its limits.
    let confined = contained
        .grouped
        .map_or(Ok(()), |g| crate::image::cgroups::attach_in_child(&g.procs))
        .and_then(|()| run.rlimits.apply_in_child());
    if let Err(message) = confined {
        report_failure(&format!("jitrun: {}: {}", message, std::io::Error::last_os_error()));
        // SAFETY: leaving without running any atexit handler of the parent's.
        unsafe { libc::_exit(crate::support::EXIT_JITRUN_ERROR) };
    }
    if let Some(cpus) = parent.cpus {
        CpuPin::restore(cpus);
    }
    // Before the run's environment: libc allocates it, and the program
    // (if it replaces malloc) reallocates it with its own allocator.
    image.install_got_interposition();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        child_setup(run, &ends, parent.fds, parent.signal_mask, contained.sandboxed)
    }));
    let failure = match result {
        Ok(Ok(())) => None,
        Ok(Err(message)) => Some(message),
        Err(_) => Some("jitrun: panic while setting up the run".to_string()),
    };
    if let Some(message) = failure {
        report_failure(&message);
        // SAFETY: leaving without running any atexit handler of the parent's.
        unsafe { libc::_exit(crate::support::EXIT_JITRUN_ERROR) };
    }
    // User code must not hold our ends of its pipes.
    drop(ends);
    image.run_main_then_exit(run.entry, &run.argv)
}

fn child_setup(
    run: &PreparedRun,
    ends: &ChildEnds,
    parent_fds: &[RawFd],
    mask: &libc::sigset_t,
    sandboxed: Option<&SandboxedRun>,
) -> Result<(), String> {
    let os_error = |what: &str| format!("jitrun: {}: {}", what, std::io::Error::last_os_error());
    // SAFETY: system calls on this (single-threaded) child's own
    // descriptors, signal state and environment.
    unsafe {
        if libc::setpgid(0, 0) != 0 {
            return Err(os_error("setpgid"));
        }
        for &fd in parent_fds {
            libc::close(fd);
        }
        for (end, target) in [(&ends.stdin, 0), (&ends.stdout, 1), (&ends.stderr, 2)] {
            if let Some(fd) = end {
                // dup2 clears O_CLOEXEC on the copy; the original closes
                // when `ends` is dropped.
                if libc::dup2(fd.as_raw_fd(), target) < 0 {
                    return Err(os_error("dup2"));
                }
            }
        }
        // The caller's termination handlers are not the program's: their
        // actions as they were (handler, flags, mask).
        for (&signal, original) in TERMINATION_SIGNALS.iter().zip(ORIGINAL_ACTIONS.get().into_iter().flatten()) {
            libc::sigaction(signal, original, std::ptr::null_mut());
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut());
    }
    // SIGPIPE, SIGSEGV and SIGBUS at their defaults (or the latter two
    // with crash reports, when the parent prepared them, as for in-process
    // runs), argv[0] as the process name: what a C program expects from
    // its start-up code.
    if crate::diagnostics::crash::is_prepared() {
        crate::image::default_program_signals_but_crashes();
        crate::diagnostics::crash::activate();
    } else {
        crate::image::default_program_signals();
    }
    run.process_names.install();
    apply_env(run)?;
    for (addr, bytes) in &run.writes {
        // SAFETY: the parent checked that the range is writable image memory;
        // this is the child's private copy-on-write copy of it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), *addr as *mut u8, bytes.len()) };
    }
    if let Some(sandboxed) = sandboxed {
        // SAFETY: setenv with NUL-terminated strings in the single-threaded child.
        if unsafe { libc::setenv(c"TMPDIR".as_ptr(), sandboxed.tmpdir_value.as_ptr(), 1) } != 0 {
            return Err("jitrun: setenv TMPDIR failed".to_string());
        }
        // Last: after it, the child cannot write the files it set up.
        sandboxed
            .enter_in_child()
            .map_err(|what| format!("jitrun: --sandbox: {}: {}", what, std::io::Error::last_os_error()))?;
    }
    Ok(())
}

/// The process's resident set size in KiB (for the memory-flatness check).
pub fn resident_set_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_setup_error_reported_by_a_child_reaches_the_parent_once() {
        let slots = SetupErrors::new(2).unwrap();
        // SAFETY: the child only copies bytes into shared memory and leaves.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            slots.report(1, "jitrun: dup2: Bad file descriptor");
            slots.report(0, &"x".repeat(3 * SETUP_ERROR_SLOT));
            // SAFETY: leaving the forked test process without its handlers.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: reaping our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert_eq!(slots.take(1).as_deref(), Some("jitrun: dup2: Bad file descriptor"));
        assert_eq!(slots.take(1), None, "taken slots are cleared");
        assert_eq!(slots.take(0).map(|m| m.len()), Some(SETUP_ERROR_SLOT - 4), "long messages are cut to the slot");
    }

    #[test]
    fn run_types_are_send_and_sync() {
        assert_send_sync::<RunSpec>();
        assert_send_sync::<RunOutcome>();
        assert_send_sync::<GlobalValue>();
        fn assert_send<T: Send>() {}
        assert_send::<Image>();
    }

    #[test]
    fn values_parse_as_integers_or_bytes() {
        assert_eq!(GlobalValue::parse("17"), GlobalValue::Int(17));
        assert_eq!(GlobalValue::parse("-1"), GlobalValue::Int(-1));
        assert_eq!(GlobalValue::parse("0xff"), GlobalValue::Int(255));
        assert_eq!(GlobalValue::parse("-9223372036854775808"), GlobalValue::Int(i64::MIN));
        assert_eq!(GlobalValue::parse("fast"), GlobalValue::Bytes(b"fast".to_vec()));
        assert_eq!(GlobalValue::parse("1.5"), GlobalValue::Bytes(b"1.5".to_vec()));
    }

    #[test]
    fn integers_are_encoded_in_the_symbol_width() {
        assert_eq!(GlobalValue::Int(0x0102).encode("x", Some(2)).unwrap(), vec![2, 1]);
        assert_eq!(GlobalValue::Int(-1).encode("x", Some(4)).unwrap(), vec![0xff; 4]);
        assert_eq!(GlobalValue::Int(255).encode("x", Some(1)).unwrap(), vec![255]);
        assert!(GlobalValue::Int(256).encode("x", Some(1)).is_err());
        assert!(GlobalValue::Int(-129).encode("x", Some(1)).is_err());
        assert!(GlobalValue::Int(1).encode("x", Some(3)).is_err());
        assert!(GlobalValue::Int(1).encode("x", None).is_err());
        assert!(GlobalValue::Bytes(vec![1; 5]).encode("x", Some(4)).is_err());
        assert_eq!(GlobalValue::Bytes(vec![7; 3]).encode("x", None).unwrap(), vec![7; 3]);
    }
}
