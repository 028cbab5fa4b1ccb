//! The options of contained runs: limits, the sandbox, accounting,
//! shards, resumed batches and merged results (one flattened group, so
//! that the main definition changes by one field).

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};

use crate::image::batch::Shard;
use crate::image::limits::{parse_size, RunLimits};
use crate::image::sandbox::{SandboxSpec, Strictness};

#[derive(Args, Debug, Clone, PartialEq, Default)]
pub struct ContainedOptions {
    /// Limit each isolated run's resident memory (all its processes, swap
    /// included) to SIZE, e.g. 512M: the memory cgroup's limit, at which
    /// the kernel's OOM killer ends the run (status limit, exit 137).
    /// Without a usable memory cgroup, an address-space limit per process
    /// (RLIMIT_AS). Implies --isolate
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,

    /// Limit the CPU time of each process of a run, e.g. 5s (rounded up to
    /// whole seconds): SIGXCPU, then SIGKILL a second later (status limit,
    /// exit 152). Implies --isolate
    #[arg(long, value_name = "DURATION", value_parser = crate::cli::parse_duration)]
    pub cpu_time: Option<Duration>,

    /// Limit the processes and threads a run may have at once to N (the
    /// pids cgroup; binds root too): a refused fork ends the run (status
    /// limit, exit 137). Implies --isolate
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_processes: Option<u64>,

    /// Limit the size of files a run writes to SIZE (RLIMIT_FSIZE): a write
    /// past it raises SIGXFSZ (status limit, exit 153). Implies --isolate
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_file_size: Option<u64>,

    /// Limit each process of a run to N open files (RLIMIT_NOFILE; an open
    /// past it fails with EMFILE, as natively). Implies --isolate
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(3..))]
    pub max_open_files: Option<u64>,

    /// Let isolated runs write core dumps (by default they write none)
    #[arg(long)]
    pub core_dumps: bool,

    /// Run each isolated run in a sandbox: it may read the file system but
    /// write only below --allow-write directories and its own TMPDIR, not
    /// signal processes outside its run, not ptrace, mount, load kernel
    /// modules or use bpf (see SANDBOX). MODE strict (the default) refuses
    /// to run where the kernel lacks a feature; best-effort runs without it,
    /// with a warning. Implies --isolate
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "strict", value_parser = ["strict", "best-effort"])]
    pub sandbox: Option<String>,

    /// A directory sandboxed runs may write below (repeatable)
    #[arg(long, value_name = "DIR", action = ArgAction::Append, requires = "sandbox")]
    pub allow_write: Vec<PathBuf>,

    /// Sandboxed runs get a new, empty network namespace: no network at all
    #[arg(long, requires = "sandbox")]
    pub no_network: bool,

    /// Print what each isolated run cost on stderr: user and system CPU
    /// time, wall time, peak RSS, page faults, context switches (from
    /// wait4). Implies --isolate
    #[arg(long)]
    pub stats: bool,

    /// Run only the K-th of N slices of the --batch plan (lines dealt
    /// round-robin by line number), e.g. 3/8: N jobs with K = 1..N run
    /// every line once. Every line needs an id
    #[arg(long, value_name = "K/N", value_parser = Shard::parse, requires = "batch")]
    pub shard: Option<Shard>,

    /// Skip the plan's ids that FILE (results of an earlier, interrupted
    /// --batch) already has; append the output to FILE. Every line needs
    /// an id
    #[arg(long, value_name = "FILE", requires = "batch")]
    pub resume: Option<PathBuf>,

    /// Merge results files (the INPUTs) to stdout: each id's first result,
    /// as written. With --batch PLAN, fail naming the plan's ids that have
    /// none. Links and runs nothing
    #[arg(long, conflicts_with_all = ["shard", "resume", "noexec"])]
    pub merge_results: bool,
}

impl ContainedOptions {
    /// The limits every run gets from the command line.
    pub fn limits(&self) -> RunLimits {
        RunLimits {
            memory: self.max_memory,
            cpu_time: self.cpu_time,
            processes: self.max_processes,
            file_size: self.max_file_size,
            open_files: self.max_open_files,
            core_dumps: self.core_dumps,
        }
    }

    /// The sandbox, when asked for.
    pub fn sandbox(&self) -> Option<SandboxSpec> {
        let strictness = match self.sandbox.as_deref()? {
            "best-effort" => Strictness::BestEffort,
            _ => Strictness::Strict,
        };
        Some(SandboxSpec { strictness, allow_write: self.allow_write.clone(), no_network: self.no_network })
    }

    /// Whether these options need runs to be isolated.
    pub fn need_isolation(&self) -> bool {
        let limits = self.limits();
        limits != RunLimits::default() || self.sandbox.is_some() || self.stats
    }
}

/// The help section on limits and the sandbox.
pub const CONTAINED_HELP: &str = "\
LIMITS:
    --max-memory, --cpu-time, --max-processes, --max-file-size and --max-open-files
    apply to every isolated run (a batch line's \"limits\" override them). Memory is
    the run's resident memory in its own memory cgroup (all its processes, swap
    included), not its address space, which counts reservations that use no memory
    (thread stacks, sanitizer shadows, the jitrun image a run is forked from).
    Processes are counted by the pids cgroup, threads included, which binds root
    (RLIMIT_NPROC does not). jitrun makes its cgroups inside its own
    (<own>/jitrun-PID/run-SLOT), cgroup v1 or v2. Without a usable memory controller,
    memory falls back to RLIMIT_AS per process, and a run that reaches it is reported
    by what it then does; without a pids controller, processes fall back to
    RLIMIT_NPROC (all of the user's processes; a refused fork is then the program's
    to handle, and the run is reported by what it does), and as root
    --max-processes is refused. A run stopped by a limit has status limit in a batch, with which limit,
    and exits 128 plus the signal a native run gets under the same limit: 137 for
    memory (the OOM killer's SIGKILL) and processes (jitrun kills the run), 152 for
    CPU time (SIGXCPU), 153 for file size (SIGXFSZ). Whatever a run started is killed
    with it. The wall-clock limit stays --timeout (status timeout, exit 124). Isolated
    runs write no core dump unless --core-dumps.

SANDBOX (--sandbox):
    The run still runs as the user, forked from jitrun; the kernel confines it.
    Landlock: it may read and execute what the user may, but create, write, remove
    or rename only below --allow-write directories, its private TMPDIR (removed
    after the run) and /dev/null, /dev/zero, /dev/full; descriptors it inherited
    (stdout) stay usable. Landlock scopes: it cannot signal processes outside its
    run nor reach abstract UNIX sockets made outside it. --no-network: a new, empty
    network namespace (through an unprivileged user namespace when not root), and
    Landlock refuses TCP bind and connect. seccomp: ptrace, process_vm_readv/writev,
    mount and the mount API, setns, pivot_root, kernel modules, bpf, kexec, reboot,
    swapon/swapoff fail with EPERM. no_new_privs is set. It does not stop the run
    from reading what the user can read, from using CPU, memory or processes (use
    the limits), from filling the disk below allowed directories (use
    --max-file-size), from connecting to UNIX sockets in the file system, or from
    kernel exploits.";
