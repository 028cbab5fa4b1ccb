//! Control groups for isolated runs: the memory and pids controllers
//! enforce [`RunLimits::memory`](crate::image::limits::RunLimits::memory) and [`RunLimits::processes`](crate::image::limits::RunLimits::processes) over every
//! process of a run (threads included), root's too, and let jitrun find
//! and kill whatever a run left behind, even processes that left its
//! process group with `setsid`.
//!
//! jitrun makes its groups *inside its own* (as `/proc/self/cgroup` names
//! it), never elsewhere, so whatever limits its own group has still bind
//! the runs: `<own group>/jitrun-<pid>/run-<slot>`, one per job slot of a
//! batch, reused from run to run (memory cgroups removed by the thousand
//! linger in the kernel until their pages are reclaimed), and removed when
//! the runs are done. Groups that a jitrun killed with SIGKILL left behind
//! are removed by the next jitrun that finds them.
//!
//! Both versions are handled per controller: cgroup v1 (a hierarchy per
//! controller, as on this project's development machine: `memory` and
//! `pids` mounted under `/sys/fs/cgroup/`) and cgroup v2 (one unified
//! hierarchy; jitrun's group must have, or be allowed to enable, `memory`
//! and `pids` in its `cgroup.subtree_control`, as a root shell's group or a
//! systemd unit with `Delegate=yes` does). Where a controller cannot be
//! used, [`controller_problem`] says why; the caller then falls back to
//! resource limits or refuses (see [`crate::image::limits`]).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::image::limits::LimitKind;

/// The two controllers jitrun uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    Memory,
    Pids,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// Where a controller is usable: jitrun's own group in its hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hierarchy {
    version: Version,
    own_group: PathBuf,
}

/// The controllers as found once per process.
struct Found {
    memory: Result<Hierarchy, String>,
    pids: Result<Hierarchy, String>,
}

fn found() -> &'static Found {
    static FOUND: OnceLock<Found> = OnceLock::new();
    FOUND.get_or_init(|| {
        let membership = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let find = |controller| {
            let hierarchy = locate(controller, &membership, &mounts)?;
            check_usable(controller, &hierarchy)?;
            Ok(hierarchy)
        };
        Found { memory: find(Controller::Memory), pids: find(Controller::Pids) }
    })
}

/// Why `controller` cannot enforce limits here, or `None` when it can.
pub fn controller_problem(controller: Controller) -> Option<String> {
    let found = found();
    let result = match controller {
        Controller::Memory => &found.memory,
        Controller::Pids => &found.pids,
    };
    result.as_ref().err().cloned()
}

/// Finds `controller`'s hierarchy and jitrun's group in it from
/// `/proc/self/cgroup` and `/proc/self/mountinfo`: a v1 hierarchy that
/// has the controller, else the v2 one.
fn locate(controller: Controller, membership: &str, mounts: &str) -> Result<Hierarchy, String> {
    let name = controller.name();
    // /proc/self/cgroup: "ID:CONTROLLERS:PATH"; v2 is "0::PATH".
    let mut v1_path = None;
    let mut v2_path = None;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else { continue };
        if controllers.is_empty() {
            v2_path = Some(path);
        } else if controllers.split(',').any(|c| c == name) {
            v1_path = Some(path);
        }
    }
    // mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
    for line in mounts.lines() {
        let Some((before, after)) = line.split_once(" - ") else { continue };
        let before: Vec<&str> = before.split(' ').collect();
        let after: Vec<&str> = after.split(' ').collect();
        if before.len() < 5 || after.len() < 3 {
            continue;
        }
        let (root, mount_point) = (unescape_mount_path(before[3]), unescape_mount_path(before[4]));
        let (version, path) = match after[0] {
            "cgroup" if after[2].split(',').any(|o| o == name) => (Version::V1, v1_path),
            "cgroup2" => (Version::V2, v2_path),
            _ => continue,
        };
        let Some(path) = path else { continue };
        if version == Version::V2 && v1_path.is_some() {
            continue; // bound to its v1 hierarchy, so absent from v2
        }
        // A mount of a subtree (in a container) shows paths below its root.
        let relative = Path::new(path).strip_prefix(&root).unwrap_or(Path::new(path));
        let relative = relative.strip_prefix("/").unwrap_or(relative);
        return Ok(Hierarchy { version, own_group: Path::new(&mount_point).join(relative) });
    }
    Err(format!("no {} cgroup hierarchy is mounted (see /proc/self/mountinfo)", name))
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape_mount_path(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4).and_then(|d| u8::from_str_radix(d, 8).ok());
        match code {
            Some(byte) => {
                out.push(byte as char);
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Checks that jitrun can make groups with `controller` under its own:
/// for v2 the controller must be available and enabled (or enabled now)
/// for its children.
fn check_usable(controller: Controller, hierarchy: &Hierarchy) -> Result<(), String> {
    let group = &hierarchy.own_group;
    let name = controller.name();
    let writable = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap_or_default();
        // SAFETY: access() on a NUL-terminated path.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    };
    if hierarchy.version == Version::V2 {
        let available = std::fs::read_to_string(group.join("cgroup.controllers")).unwrap_or_default();
        if !available.split_whitespace().any(|c| c == name) {
            return Err(format!(
                "the {} controller is not available in cgroup v2 group {} (cgroup.controllers: `{}`)",
                name,
                group.display(),
                available.trim()
            ));
        }
        let enabled = std::fs::read_to_string(group.join("cgroup.subtree_control")).unwrap_or_default();
        if !enabled.split_whitespace().any(|c| c == name) {
            if let Err(e) = std::fs::write(group.join("cgroup.subtree_control"), format!("+{}", name)) {
                return Err(format!(
                    "cannot enable the {} controller for groups under {}: {} (a v2 group holding processes cannot; \
                     run jitrun in a delegated group, e.g. `systemd-run --scope -p Delegate=yes`)",
                    name,
                    group.display(),
                    e
                ));
            }
        }
    }
    if !writable(group) {
        return Err(format!("cannot create groups under {} (no write permission)", group.display()));
    }
    Ok(())
}

/// The per-run state of one controller's group for one slot.
struct SlotGroup {
    controller: Controller,
    version: Version,
    dir: PathBuf,
    /// The limit written last, to write only changes.
    limit: Option<Option<u64>>,
}

/// Groups of one pool: one per job slot and controller.
pub(crate) struct RunGroups {
    /// `jitrun-<pid>` in each hierarchy used, removed last.
    parents: Vec<PathBuf>,
    slots: Vec<Vec<SlotGroup>>,
}

/// What a run needs of its groups while it runs.
pub(crate) struct GroupedRun {
    /// `cgroup.procs` of each of the slot's groups, open for the child to
    /// write its pid into.
    pub(crate) procs: smallvec::SmallVec<[OwnedFd; 2]>,
    slot: usize,
    /// Counters as they were when the run started.
    oom_kills_before: Option<u64>,
    pid_limit_hits_before: Option<u64>,
    /// v2: `memory.peak` opened and reset for this run.
    peak_fd: Option<std::fs::File>,
    /// The run is in the slot's memory group.
    uses_memory: bool,
}

fn read_counter(path: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

impl RunGroups {
    /// Groups for `slots` job slots (made when a run first needs them).
    pub(crate) fn new(slots: usize) -> RunGroups {
        RunGroups { parents: Vec::new(), slots: (0..slots).map(|_| Vec::new()).collect() }
    }

    fn parent_in(&mut self, hierarchy: &Hierarchy) -> Result<PathBuf, String> {
        let parent = hierarchy.own_group.join(format!("jitrun-{}", std::process::id()));
        if !self.parents.contains(&parent) {
            remove_stale_groups(&hierarchy.own_group);
            match std::fs::create_dir(&parent) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create cgroup {}: {}", parent.display(), e)),
            }
            self.parents.push(parent.clone());
            if hierarchy.version == Version::V2 {
                std::fs::write(parent.join("cgroup.subtree_control"), "+memory +pids")
                    .or_else(|_| std::fs::write(parent.join("cgroup.subtree_control"), "+pids"))
                    .map_err(|e| format!("cannot enable controllers in {}: {}", parent.display(), e))?;
            }
        }
        Ok(parent)
    }

    /// Makes (once) and sets up slot `slot`'s groups for a run with these
    /// limits; `None` leaves a controller unlimited but still used (every
    /// run with groups is in the pids group, so that nothing it starts
    /// outlives it).
    pub(crate) fn prepare(
        &mut self,
        slot: usize,
        memory: Option<u64>,
        processes: Option<u64>,
        use_memory: bool,
        use_pids: bool,
    ) -> Result<GroupedRun, String> {
        let found = found();
        let wanted = [(Controller::Memory, &found.memory, use_memory), (Controller::Pids, &found.pids, use_pids)];
        for (controller, hierarchy, _) in wanted.into_iter().filter(|w| w.2) {
            if self.slots[slot].iter().any(|g| g.controller == controller) {
                continue;
            }
            let hierarchy = hierarchy.as_ref().map_err(Clone::clone)?;
            let parent = self.parent_in(hierarchy)?;
            let dir = parent.join(format!("run-{}", slot));
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create cgroup {}: {}", dir.display(), e)),
            }
            self.slots[slot].push(SlotGroup { controller, version: hierarchy.version, dir, limit: None });
        }
        let mut run = GroupedRun {
            procs: smallvec::SmallVec::new(),
            slot,
            oom_kills_before: None,
            pid_limit_hits_before: None,
            peak_fd: None,
            uses_memory: use_memory,
        };
        let mut attached: Vec<&Path> = Vec::new();
        for group in &mut self.slots[slot] {
            let limit = match group.controller {
                Controller::Memory if !use_memory => continue,
                Controller::Pids if !use_pids => continue,
                Controller::Memory => memory,
                Controller::Pids => processes,
            };
            if group.limit != Some(limit) {
                set_limit(group, limit)?;
                group.limit = Some(limit);
            }
            match (group.controller, group.version) {
                (Controller::Memory, Version::V1) => {
                    run.oom_kills_before = read_counter(&group.dir.join("memory.oom_control"), "oom_kill");
                    // The peak from now on (the file takes any write as a reset).
                    let _ = std::fs::write(group.dir.join("memory.max_usage_in_bytes"), "0");
                }
                (Controller::Memory, Version::V2) => {
                    run.oom_kills_before = read_counter(&group.dir.join("memory.events"), "oom_kill");
                    // A write resets the peak as seen through this descriptor (Linux 6.12).
                    run.peak_fd = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(group.dir.join("memory.peak"))
                        .ok()
                        .filter(|f| std::io::Write::write_all(&mut &*f, b"reset").is_ok());
                }
                (Controller::Pids, _) => {
                    run.pid_limit_hits_before = read_counter(&group.dir.join("pids.events"), "max");
                }
            }
            // One group holds both controllers in v2: attach once.
            if !attached.contains(&group.dir.as_path()) {
                let procs = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags_cloexec()
                    .open(group.dir.join("cgroup.procs"))
                    .map_err(|e| format!("cannot open {}/cgroup.procs: {}", group.dir.display(), e))?;
                run.procs.push(procs.into());
                attached.push(&group.dir);
            }
        }
        Ok(run)
    }

    /// A limit the run reached since it started: memory (the OOM killer
    /// ended one of its processes) or processes (a fork was refused).
    pub(crate) fn limit_reached(&self, run: &GroupedRun) -> Option<LimitKind> {
        for group in &self.slots[run.slot] {
            let reached = match (group.controller, group.version) {
                (Controller::Memory, Version::V1) => {
                    let now = read_counter(&group.dir.join("memory.oom_control"), "oom_kill");
                    now > run.oom_kills_before && run.oom_kills_before.is_some()
                }
                (Controller::Memory, Version::V2) => {
                    let now = read_counter(&group.dir.join("memory.events"), "oom_kill");
                    now > run.oom_kills_before && run.oom_kills_before.is_some()
                }
                (Controller::Pids, _) => {
                    let now = read_counter(&group.dir.join("pids.events"), "max");
                    run.pid_limit_hits_before.is_some()
                        && group.limit.flatten().is_some()
                        && now > run.pid_limit_hits_before
                }
            };
            if reached {
                return Some(match group.controller {
                    Controller::Memory => LimitKind::Memory,
                    Controller::Pids => LimitKind::Processes,
                });
            }
        }
        None
    }

    /// Peak memory of the run's group in KiB, when it had one.
    pub(crate) fn peak_memory_kib(&self, run: &mut GroupedRun) -> Option<u64> {
        if !run.uses_memory {
            return None;
        }
        let group = self.slots[run.slot].iter().find(|g| g.controller == Controller::Memory)?;
        let bytes: u64 = match group.version {
            Version::V1 => {
                std::fs::read_to_string(group.dir.join("memory.max_usage_in_bytes")).ok()?.trim().parse().ok()?
            }
            Version::V2 => {
                let file = run.peak_fd.as_mut()?;
                let mut text = String::new();
                std::io::Seek::seek(file, std::io::SeekFrom::Start(0)).ok()?;
                std::io::Read::read_to_string(file, &mut text).ok()?;
                text.trim().parse().ok()?
            }
        };
        Some(bytes / 1024)
    }

    /// Kills every process in slot `slot`'s groups (those that ended stay
    /// counted until reaped: see [`RunGroups::wait_until_empty`]).
    /// Returns how many were signalled.
    pub(crate) fn kill_members(&self, slot: usize) -> usize {
        let mut killed = 0;
        for group in &self.slots[slot] {
            if group.version == Version::V2 && std::fs::write(group.dir.join("cgroup.kill"), "1").is_ok() {
                continue;
            }
            // v1 (or v2 before Linux 5.14): signal each member until none
            // is left; a process forking meanwhile is bounded by pids.max.
            let deadline = Instant::now() + Duration::from_secs(2);
            loop {
                let members = std::fs::read_to_string(group.dir.join("cgroup.procs")).unwrap_or_default();
                let pids: Vec<libc::pid_t> = members.lines().filter_map(|l| l.trim().parse().ok()).collect();
                if pids.is_empty() || Instant::now() >= deadline {
                    break;
                }
                for pid in pids {
                    // SAFETY: kill() of a member of our own run's group.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    killed += 1;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        killed
    }

    /// Waits (up to two seconds) until slot `slot`'s processes are reaped,
    /// so that its next run starts from zero: killed processes count
    /// against pids.max until then (orphans are reaped by init). Call it
    /// once the run's first process is reaped.
    pub(crate) fn wait_until_empty(&self, slot: usize) {
        if let Some(pids) = self.slots[slot].iter().find(|g| g.controller == Controller::Pids) {
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                let current = std::fs::read_to_string(pids.dir.join("pids.current")).unwrap_or_default();
                if current.trim().parse::<u64>().map_or(true, |n| n == 0) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

impl GroupedRun {
    pub(crate) fn slot(&self) -> usize {
        self.slot
    }
}

impl Drop for RunGroups {
    fn drop(&mut self) {
        for slot in 0..self.slots.len() {
            self.kill_members(slot);
            self.wait_until_empty(slot);
            for group in &self.slots[slot] {
                let _ = std::fs::remove_dir(&group.dir);
            }
        }
        for parent in &self.parents {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// Removes the groups of jitruns that are gone (killed before they could),
/// killing first what their runs left in them: nobody is left to.
fn remove_stale_groups(own_group: &Path) {
    let Ok(entries) = std::fs::read_dir(own_group) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("jitrun-")).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{}", pid)).exists() {
            continue;
        }
        if let Ok(slots) = std::fs::read_dir(entry.path()) {
            for slot in slots.flatten().filter(|s| s.path().is_dir()) {
                for _ in 0..100 {
                    let members = std::fs::read_to_string(slot.path().join("cgroup.procs")).unwrap_or_default();
                    let pids: Vec<libc::pid_t> = members.lines().filter_map(|l| l.trim().parse().ok()).collect();
                    if pids.is_empty() {
                        break;
                    }
                    for pid in pids {
                        // SAFETY: kill() of a process left in a dead jitrun's run group.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                let _ = std::fs::remove_dir(slot.path());
            }
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

fn set_limit(group: &SlotGroup, limit: Option<u64>) -> Result<(), String> {
    let write = |file: &str, value: &str| {
        std::fs::write(group.dir.join(file), value)
            .map_err(|e| format!("cannot write {} to {}/{}: {}", value, group.dir.display(), file, e))
    };
    match (group.controller, group.version) {
        (Controller::Pids, _) => write("pids.max", &limit.map_or_else(|| "max".to_string(), |n| n.to_string())),
        (Controller::Memory, Version::V2) => {
            write("memory.max", &limit.map_or_else(|| "max".to_string(), |n| n.to_string()))?;
            // Swap counts as memory: no swapping past the limit.
            let swap = if limit.is_some() { "0" } else { "max" };
            if group.dir.join("memory.swap.max").exists() {
                write("memory.swap.max", swap)?;
            }
            Ok(())
        }
        (Controller::Memory, Version::V1) => {
            let value = limit.map_or_else(|| "-1".to_string(), |n| n.to_string());
            // memory + swap must stay at least memory: when lowering, set
            // memory first; when raising, memory + swap first.
            let with_swap = group.dir.join("memory.memsw.limit_in_bytes").exists();
            let first = write("memory.limit_in_bytes", &value);
            if with_swap {
                write("memory.memsw.limit_in_bytes", &value)?;
            }
            if first.is_err() {
                write("memory.limit_in_bytes", &value)?;
            }
            Ok(())
        }
    }
}

/// `O_CLOEXEC` for the `cgroup.procs` descriptors: a run must not inherit
/// another slot's (the child closes its own after writing).
trait CloexecOpen {
    fn custom_flags_cloexec(&mut self) -> &mut Self;
}

impl CloexecOpen for std::fs::OpenOptions {
    fn custom_flags_cloexec(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::custom_flags(self, libc::O_CLOEXEC)
    }
}

/// In the child: moves this process into its groups by writing its pid
/// (formatted on the stack) to each `cgroup.procs`, then closes them.
pub(crate) fn attach_in_child(procs: &[OwnedFd]) -> Result<(), &'static str> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u64;
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = pid;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for fd in procs {
        let text = &digits[at..];
        // SAFETY: writing a stack buffer to a descriptor the parent opened for us.
        let written = unsafe { libc::write(fd.as_raw_fd(), text.as_ptr().cast(), text.len()) };
        // SAFETY: closing our copy of it; the parent closes its own.
        unsafe { libc::close(fd.as_raw_fd()) };
        if written != text.len() as isize {
            return Err("cannot move the run into its cgroup (write to cgroup.procs failed)");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID_CGROUP: &str = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
    const HYBRID_MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 30 0:33 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
39 30 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn v1_hierarchies_are_found_per_controller() {
        let memory = locate(Controller::Memory, HYBRID_CGROUP, HYBRID_MOUNTS).unwrap();
        assert_eq!(
            memory,
            Hierarchy { version: Version::V1, own_group: "/sys/fs/cgroup/memory/process_api/abc".into() }
        );
        let pids = locate(Controller::Pids, HYBRID_CGROUP, HYBRID_MOUNTS).unwrap();
        assert_eq!(pids, Hierarchy { version: Version::V1, own_group: "/sys/fs/cgroup/pids".into() });
    }

    #[test]
    fn the_unified_hierarchy_serves_controllers_v1_does_not_have() {
        let membership = "0::/user.slice/session-2.scope\n";
        let mounts = "25 21 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let pids = locate(Controller::Pids, membership, mounts).unwrap();
        assert_eq!(
            pids,
            Hierarchy { version: Version::V2, own_group: "/sys/fs/cgroup/user.slice/session-2.scope".into() }
        );
        // A controller bound to v1 is not looked for in v2.
        let hybrid_v2_only = "8:pids:/\n0::/\n";
        let only_v2_mounted = "39 30 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert!(locate(Controller::Pids, hybrid_v2_only, only_v2_mounted).is_err());
    }

    #[test]
    fn a_container_mount_of_a_subtree_is_joined_below_its_root() {
        let membership = "0::/ci/job-7\n";
        let mounts = "25 21 0:22 /ci /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let memory = locate(Controller::Memory, membership, mounts).unwrap();
        assert_eq!(memory.own_group, PathBuf::from("/sys/fs/cgroup/job-7"));
    }

    #[test]
    fn mount_paths_are_unescaped() {
        assert_eq!(unescape_mount_path(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape_mount_path(r"/plain"), "/plain");
    }

    #[test]
    fn counters_are_read_by_key() {
        let dir = std::env::temp_dir().join(format!("jitrun-cgroup-counter-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("memory.oom_control");
        std::fs::write(&file, "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n").unwrap();
        assert_eq!(read_counter(&file, "oom_kill"), Some(3));
        assert_eq!(read_counter(&file, "max"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
