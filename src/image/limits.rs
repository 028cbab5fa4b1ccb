//! Limits on an isolated run, and what it cost.
//!
//! A limit is enforced by the kernel, never by jitrun watching: resource
//! limits (`setrlimit`) set in the forked child before the program starts
//! for CPU time, file size, open files and core dumps; the cgroup memory
//! and pids controllers ([`crate::image::cgroups`]) for memory and the
//! number of processes and threads, since they count every process of the
//! run and bind root, which `RLIMIT_NPROC` does not.
//!
//! Memory is the run's *resident* memory (anonymous pages, page cache and
//! kernel memory charged to its cgroup, swap included), not its address
//! space: `RLIMIT_AS` counts reservations that never use memory (thread
//! stacks, sanitizer shadows, the pages of the jitrun image the run was
//! forked from) and is per process, so a run of 64 processes could use 64
//! times the limit. Without a usable memory controller `--max-memory`
//! falls back to `RLIMIT_AS` per process, and says so.
//!
//! Everything here that runs in the child (`ChildRlimits::apply_in_child`)
//! makes system calls only: it runs between `fork` and the program.

use std::time::Duration;

use anyhow::{bail, Result};

/// Which limit stopped a run (the `limit` field of a result line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LimitKind {
    /// The memory cgroup's limit: the kernel's OOM killer ended a process
    /// of the run.
    Memory,
    /// The run reached its number of processes and threads (a `fork` or
    /// `pthread_create` was refused): jitrun then ends the run.
    Processes,
    /// `RLIMIT_CPU`: SIGXCPU at the limit, SIGKILL a second later.
    CpuTime,
    /// `RLIMIT_FSIZE`: SIGXFSZ on a write past the limit.
    FileSize,
}

impl LimitKind {
    /// The name in result lines, reports and messages.
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::Memory => "memory",
            LimitKind::Processes => "processes",
            LimitKind::CpuTime => "cpu_time",
            LimitKind::FileSize => "file_size",
        }
    }

    /// The command-line option that sets it.
    pub fn option(self) -> &'static str {
        match self {
            LimitKind::Memory => "--max-memory",
            LimitKind::Processes => "--max-processes",
            LimitKind::CpuTime => "--cpu-time",
            LimitKind::FileSize => "--max-file-size",
        }
    }
}

/// The limits of one run. `None` is no limit (what jitrun itself has).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunLimits {
    /// Bytes of resident memory of all the run's processes (see the module docs).
    pub memory: Option<u64>,
    /// CPU time of each process of the run, rounded up to whole seconds
    /// (the kernel's unit for `RLIMIT_CPU`).
    pub cpu_time: Option<Duration>,
    /// Processes and threads the run may have at once, its first included.
    pub processes: Option<u64>,
    /// Largest file a process of the run may write, in bytes.
    pub file_size: Option<u64>,
    /// Highest descriptor number + 1 (`RLIMIT_NOFILE`); an `open` past it
    /// fails with EMFILE, which the program sees as it would natively.
    pub open_files: Option<u64>,
    /// Keep the core-dump limit jitrun has; by default an isolated run
    /// writes no core file (a crashing mutant is common, its core is not
    /// wanted, and a core of a large run fills a disk).
    pub core_dumps: bool,
}

impl RunLimits {
    /// Whether any limit needs the cgroup controllers.
    pub fn needs_cgroups(&self) -> bool {
        self.memory.is_some() || self.processes.is_some()
    }

    /// Fills each limit `self` leaves open from `defaults` (a plan line
    /// over the command line).
    pub fn or(&self, defaults: &RunLimits) -> RunLimits {
        RunLimits {
            memory: self.memory.or(defaults.memory),
            cpu_time: self.cpu_time.or(defaults.cpu_time),
            processes: self.processes.or(defaults.processes),
            file_size: self.file_size.or(defaults.file_size),
            open_files: self.open_files.or(defaults.open_files),
            core_dumps: self.core_dumps || defaults.core_dumps,
        }
    }

    /// The resource limits to set in the child, computed in the parent.
    /// `memory_as_address_space` and `processes_as_rlimit` are the
    /// fallbacks where no cgroup controller enforces those limits.
    pub(crate) fn rlimits(&self, memory_as_address_space: bool, processes_as_rlimit: bool) -> ChildRlimits {
        let mut list = ChildRlimits::default();
        if let Some(cpu) = self.cpu_time {
            // SIGXCPU at the soft limit; the hard limit a second later
            // ends a process that catches or ignores it with SIGKILL.
            let soft = cpu.as_secs() + u64::from(cpu.subsec_nanos() > 0);
            list.push(libc::RLIMIT_CPU, soft.max(1), soft.max(1) + 1);
        }
        if let Some(size) = self.file_size {
            list.push(libc::RLIMIT_FSIZE, size, size);
        }
        if let Some(files) = self.open_files {
            list.push(libc::RLIMIT_NOFILE, files, files);
        }
        if !self.core_dumps {
            list.push(libc::RLIMIT_CORE, 0, 0);
        }
        if let Some(memory) = self.memory.filter(|_| memory_as_address_space) {
            list.push(libc::RLIMIT_AS, memory, memory);
        }
        if let Some(processes) = self.processes.filter(|_| processes_as_rlimit) {
            list.push(libc::RLIMIT_NPROC, processes, processes);
        }
        list
    }
}

/// Up to six `setrlimit` calls, prepared so that the child only makes them.
#[derive(Clone, Copy, Default)]
pub(crate) struct ChildRlimits {
    entries: [(libc::__rlimit_resource_t, u64, u64); 6],
    len: usize,
}

impl ChildRlimits {
    fn push(&mut self, resource: libc::__rlimit_resource_t, soft: u64, hard: u64) {
        self.entries[self.len] = (resource, soft, hard);
        self.len += 1;
    }

    /// In the child: sets each limit. Lowering a limit needs no privilege;
    /// raising one above jitrun's own hard limit fails, and is reported.
    pub(crate) fn apply_in_child(&self) -> Result<(), &'static str> {
        for &(resource, soft, hard) in &self.entries[..self.len] {
            let limit = libc::rlimit { rlim_cur: soft as libc::rlim_t, rlim_max: hard as libc::rlim_t };
            // SAFETY: setrlimit on this process with a valid struct.
            if unsafe { libc::setrlimit(resource, &limit) } != 0 {
                return Err(match resource {
                    libc::RLIMIT_CPU => "setrlimit(RLIMIT_CPU)",
                    libc::RLIMIT_FSIZE => "setrlimit(RLIMIT_FSIZE)",
                    libc::RLIMIT_NOFILE => "setrlimit(RLIMIT_NOFILE) (above jitrun's hard limit?)",
                    libc::RLIMIT_CORE => "setrlimit(RLIMIT_CORE)",
                    libc::RLIMIT_AS => "setrlimit(RLIMIT_AS)",
                    _ => "setrlimit(RLIMIT_NPROC)",
                });
            }
        }
        Ok(())
    }
}

/// What a run cost, from `wait4`'s `rusage` of its first process: its own
/// use and that of every descendant it waited for (a process the run left
/// behind and jitrun killed is not in it), and from its cgroup, when it
/// had one, the peak memory of all its processes together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceUsage {
    pub user_time: Duration,
    pub system_time: Duration,
    /// Largest resident set of one process, in KiB (`ru_maxrss`). A forked
    /// run starts with the pages it shares with jitrun resident, so a
    /// trivial program shows a few MiB more than natively.
    pub max_rss_kib: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Peak of the memory charged to the run's memory cgroup (all its
    /// processes), in KiB; `None` without one.
    pub peak_memory_kib: Option<u64>,
}

impl ResourceUsage {
    pub(crate) fn from_rusage(usage: &libc::rusage) -> ResourceUsage {
        let time =
            |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.clamp(0, 999_999) * 1000) as u32);
        let count = |n: libc::c_long| n.max(0) as u64;
        ResourceUsage {
            user_time: time(usage.ru_utime),
            system_time: time(usage.ru_stime),
            max_rss_kib: count(usage.ru_maxrss),
            minor_faults: count(usage.ru_minflt),
            major_faults: count(usage.ru_majflt),
            voluntary_switches: count(usage.ru_nvcsw),
            involuntary_switches: count(usage.ru_nivcsw),
            peak_memory_kib: None,
        }
    }

    /// User plus system time.
    pub fn cpu_time(&self) -> Duration {
        self.user_time + self.system_time
    }

    /// The figures as a JSON object, with the run's wall time: the
    /// `resources` of result lines and reports.
    pub fn to_json(&self, wall: Duration) -> serde_json::Value {
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        serde_json::json!({
            "user_ms": ms(self.user_time),
            "system_ms": ms(self.system_time),
            "max_rss_kib": self.max_rss_kib,
            "minor_faults": self.minor_faults,
            "major_faults": self.major_faults,
            "voluntary_switches": self.voluntary_switches,
            "involuntary_switches": self.involuntary_switches,
            "peak_memory_kib": self.peak_memory_kib,
            "wall_ms": ms(wall),
        })
    }

    /// One line for `--stats`.
    pub fn summary(&self, wall: Duration) -> String {
        let peak = self.peak_memory_kib.map_or_else(String::new, |k| format!(", cgroup peak {} KiB", k));
        format!(
            "user {:.3} s, system {:.3} s, wall {:.3} s, max RSS {} KiB{}, page faults {} minor / {} major, context switches {} voluntary / {} involuntary",
            self.user_time.as_secs_f64(),
            self.system_time.as_secs_f64(),
            wall.as_secs_f64(),
            self.max_rss_kib,
            peak,
            self.minor_faults,
            self.major_faults,
            self.voluntary_switches,
            self.involuntary_switches
        )
    }
}

/// Which limit, if any, a run's first process died of, from its wait
/// status and usage (the cgroup's limits are read from its counters).
pub(crate) fn limit_from_wait_status(
    status: libc::c_int,
    usage: &ResourceUsage,
    limits: &RunLimits,
) -> Option<LimitKind> {
    if !libc::WIFSIGNALED(status) {
        return None;
    }
    match libc::WTERMSIG(status) {
        libc::SIGXCPU if limits.cpu_time.is_some() => Some(LimitKind::CpuTime),
        // The hard limit, a second past the soft one, for a process that
        // ignored SIGXCPU.
        libc::SIGKILL if limits.cpu_time.is_some_and(|limit| usage.cpu_time() >= limit) => Some(LimitKind::CpuTime),
        libc::SIGXFSZ if limits.file_size.is_some() => Some(LimitKind::FileSize),
        _ => None,
    }
}

/// Parses a size: a number of bytes with an optional binary unit, `K`,
/// `M`, `G` or `T` (also `KiB`, `MB`, ...: all powers of 1024), e.g.
/// `512M`, `10MiB`, `65536`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("`{}`: unknown unit `{}` (use K, M, G or T)", text, unit.trim())),
    };
    let number: u64 = digits.parse().map_err(|_| format!("`{}` is not a size such as 512M, 10M or 65536", text))?;
    number.checked_mul(1 << shift).ok_or_else(|| format!("`{}` is too large", text))
}

/// Checks limits for values the kernel would refuse or that leave a run
/// no room to start.
pub fn check(limits: &RunLimits) -> Result<()> {
    if limits.processes == Some(0) {
        bail!("a process limit of 0 leaves no room for the run itself");
    }
    if limits.cpu_time == Some(Duration::ZERO) {
        bail!("a CPU-time limit of 0 ends every run at once");
    }
    if limits.memory.is_some_and(|m| m < 1 << 20) {
        bail!("a memory limit under 1 MiB leaves no room for the run to start");
    }
    if limits.open_files.is_some_and(|n| n < 3) {
        bail!("an open-file limit under 3 leaves no room for stdin, stdout and stderr");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("10MiB"), Ok(10 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert!(parse_size("12X").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("-1M").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn cpu_time_rounds_up_to_whole_seconds_with_a_hard_limit_after() {
        let limits = RunLimits { cpu_time: Some(Duration::from_millis(1500)), core_dumps: true, ..Default::default() };
        let list = limits.rlimits(false, false);
        assert_eq!(&list.entries[..list.len], &[(libc::RLIMIT_CPU, 2, 3)]);
    }

    #[test]
    fn core_dumps_are_off_unless_asked_for() {
        let list = RunLimits::default().rlimits(false, false);
        assert_eq!(&list.entries[..list.len], &[(libc::RLIMIT_CORE, 0, 0)]);
        let list = RunLimits { core_dumps: true, ..Default::default() }.rlimits(false, false);
        assert_eq!(list.len, 0);
    }

    #[test]
    fn fallbacks_become_rlimits() {
        let limits = RunLimits { memory: Some(64 << 20), processes: Some(8), core_dumps: true, ..Default::default() };
        assert_eq!(limits.rlimits(false, false).len, 0, "the cgroups enforce them");
        let list = limits.rlimits(true, true);
        assert_eq!(&list.entries[..list.len], &[(libc::RLIMIT_AS, 64 << 20, 64 << 20), (libc::RLIMIT_NPROC, 8, 8)]);
    }

    #[test]
    fn the_signal_names_the_limit() {
        let limits = RunLimits { cpu_time: Some(Duration::from_secs(1)), file_size: Some(10), ..Default::default() };
        let spent = ResourceUsage { user_time: Duration::from_millis(2100), ..Default::default() };
        let idle = ResourceUsage::default();
        // A wait status for death by signal N is N itself.
        assert_eq!(limit_from_wait_status(libc::SIGXCPU, &idle, &limits), Some(LimitKind::CpuTime));
        assert_eq!(limit_from_wait_status(libc::SIGKILL, &spent, &limits), Some(LimitKind::CpuTime));
        assert_eq!(limit_from_wait_status(libc::SIGKILL, &idle, &limits), None);
        assert_eq!(limit_from_wait_status(libc::SIGXFSZ, &idle, &limits), Some(LimitKind::FileSize));
        assert_eq!(limit_from_wait_status(libc::SIGXFSZ, &idle, &RunLimits::default()), None);
        assert_eq!(limit_from_wait_status(0, &spent, &limits), None, "exited");
    }

    #[test]
    fn plan_limits_fill_in_from_the_command_line() {
        let line = RunLimits { memory: Some(1 << 30), ..Default::default() };
        let cli = RunLimits { memory: Some(1 << 20), processes: Some(4), ..Default::default() };
        let merged = line.or(&cli);
        assert_eq!(merged.memory, Some(1 << 30));
        assert_eq!(merged.processes, Some(4));
    }
}
