//! `--sandbox`: what an isolated run may change outside itself.
//!
//! A sandboxed run is still the forked child of jitrun, running as the
//! same user with the same credentials; the kernel restricts it:
//!
//! - **Files** (Landlock): it may read and execute anything the user may,
//!   but create, write, truncate, rename, link, remove or `ioctl` device
//!   files only below the `--allow-write` directories, its own private
//!   temporary directory (`TMPDIR`, removed after the run) and the harmless
//!   devices `/dev/null`, `/dev/zero`, `/dev/full`. Descriptors it
//!   inherited stay usable (its stdout, a terminal).
//! - **Signals and abstract sockets** (Landlock scopes, ABI 6): it cannot
//!   signal processes outside its own run (jitrun, other runs, the rest of
//!   the machine, even as root) nor connect to abstract UNIX sockets made
//!   outside it.
//! - **Network** (`--no-network`): a new, empty network namespace (no
//!   interface but a loopback that is down), made from an unprivileged
//!   user namespace when jitrun is not root; and where Landlock has ABI 4,
//!   TCP bind and connect are refused as well.
//! - **System calls** (seccomp): `ptrace`, `process_vm_readv`/`writev`,
//!   mounting and namespace joining (`mount`, `umount2`, `pivot_root`,
//!   `setns`, the new mount API), kernel modules, `bpf`, `kexec_*`,
//!   `reboot`, `swapon`/`swapoff` fail with EPERM.
//! - `no_new_privs` is set, so set-user-ID programs it runs gain nothing.
//!
//! It does not protect against: reading anything the user can read
//! (secrets included), using CPU, memory or processes (that is what the
//! limits are for), filling the disk below an allowed directory (use
//! `--max-file-size` and a quota), local privilege-escalation bugs in the
//! kernel, UNIX sockets in the file system that it can reach (a path it can
//! read, such as a daemon's socket, can be connected to), and, as root
//! without `--no-network`, anything root may do over the network.
//!
//! Everything the child does ([`SandboxedRun::enter_in_child`]) is system
//! calls on data prepared in the parent.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, ABI,
};

/// How a missing kernel feature is treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Refuse to run, naming the feature (`--sandbox`).
    #[default]
    Strict,
    /// Run with what the kernel has, and say once what is missing
    /// (`--sandbox=best-effort`).
    BestEffort,
}

/// The sandbox of a run, as asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxSpec {
    pub strictness: Strictness,
    /// Directories the run may write below (besides its temporary one).
    pub allow_write: Vec<PathBuf>,
    /// No network: a new network namespace.
    pub no_network: bool,
}

/// What the running kernel offers, probed once.
#[derive(Clone, Debug)]
pub struct KernelSupport {
    /// Landlock's ABI version (0: none).
    pub landlock_abi: i32,
    /// Seccomp filters can be installed.
    pub seccomp: bool,
    /// How a run gets a network namespace, or why it cannot.
    pub network_namespace: Result<NetworkNamespace, String>,
}

/// How a run enters a new network namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkNamespace {
    /// `unshare(CLONE_NEWNET)`: jitrun has CAP_SYS_ADMIN.
    Direct,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNET)`, the user and group mapped
    /// to themselves: an unprivileged user.
    WithUserNamespace,
}

/// Probes the kernel (once per process; the namespace probe forks).
pub fn kernel_support() -> &'static KernelSupport {
    static SUPPORT: OnceLock<KernelSupport> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        // SAFETY: landlock_create_ruleset with the VERSION flag only
        // returns the ABI version (or -1 when Landlock is off or absent).
        let abi = unsafe {
            libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32 /* VERSION */)
        };
        // SAFETY: PR_GET_SECCOMP reads this process's seccomp mode; EINVAL
        // means the kernel has no seccomp.
        let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP) } >= 0;
        KernelSupport { landlock_abi: abi.max(0) as i32, seccomp, network_namespace: probe_network_namespace() }
    })
}

/// Tries the way a run would enter a network namespace, in a throwaway child.
fn probe_network_namespace() -> Result<NetworkNamespace, String> {
    let way = if crate::support::effective_user() == 0 {
        NetworkNamespace::Direct
    } else {
        NetworkNamespace::WithUserNamespace
    };
    let flags = match way {
        NetworkNamespace::Direct => libc::CLONE_NEWNET,
        NetworkNamespace::WithUserNamespace => libc::CLONE_NEWUSER | libc::CLONE_NEWNET,
    };
    // SAFETY: the child only calls unshare and _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot fork to probe namespaces: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: system calls in the forked child, then leaving it.
        unsafe {
            let errno = if libc::unshare(flags) == 0 { 0 } else { *libc::__errno_location() };
            libc::_exit(errno.min(255));
        }
    }
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
        Some(0) => Ok(way),
        Some(errno) => Err(format!(
            "unshare({}) fails: {} (user namespaces off: see /proc/sys/user/max_user_namespaces, \
             kernel.unprivileged_userns_clone or an AppArmor policy)",
            if way == NetworkNamespace::Direct { "CLONE_NEWNET" } else { "CLONE_NEWUSER|CLONE_NEWNET" },
            std::io::Error::from_raw_os_error(errno)
        )),
        None => Err("the namespace probe died".to_string()),
    }
}

impl KernelSupport {
    /// What `spec` needs that this kernel lacks, one phrase each.
    pub fn missing(&self, spec: &SandboxSpec) -> Vec<String> {
        let mut missing = Vec::new();
        if self.landlock_abi < 1 {
            missing.push(
                "Landlock (file-system restrictions; the kernel needs CONFIG_SECURITY_LANDLOCK and `landlock` in its lsm= list)"
                    .to_string(),
            );
        } else if self.landlock_abi < 6 {
            missing.push(format!(
                "Landlock ABI 6 (signal and abstract-socket scoping; this kernel has ABI {})",
                self.landlock_abi
            ));
        }
        if !self.seccomp {
            missing.push("seccomp filters (CONFIG_SECCOMP_FILTER)".to_string());
        }
        if spec.no_network {
            if let Err(why) = &self.network_namespace {
                missing.push(format!("a network namespace for --no-network: {}", why));
            }
        }
        missing
    }
}

/// Checks `spec` against the kernel: an error naming every missing feature
/// in strict mode; in best-effort mode one warning (per process).
pub fn check(spec: &SandboxSpec) -> Result<()> {
    for dir in &spec.allow_write {
        if !dir.is_dir() {
            bail!("--allow-write {}: not a directory", dir.display());
        }
    }
    let missing = kernel_support().missing(spec);
    if missing.is_empty() {
        return Ok(());
    }
    match spec.strictness {
        Strictness::Strict => bail!(
            "--sandbox: this kernel lacks {}; --sandbox=best-effort runs without what is missing",
            missing.join("; ")
        ),
        Strictness::BestEffort => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED
                .call_once(|| eprintln!("jitrun: warning: --sandbox=best-effort runs without {}", missing.join("; ")));
            Ok(())
        }
    }
}

/// The system calls a sandboxed run is refused (EPERM), by libc's numbers
/// for the architecture jitrun is built for.
const REFUSED_SYSTEM_CALLS: [libc::c_long; 23] = [
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_setns,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_bpf,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
];

/// The numbers the filter refuses. On x86-64 the same calls are also
/// reachable through the x32 ABI (the number with bit 30 set, on kernels
/// built with it), which shares the architecture value the filter checks;
/// libc has no x32 numbers, so they are derived here: most are the x86-64
/// number with that bit, `ptrace` and `process_vm_readv`/`writev` have x32
/// numbers of their own (521, 539, 540). 32-bit calls (`int 0x80`) carry
/// another architecture value, which the filter answers by killing.
fn refused_numbers() -> Vec<i64> {
    let numbers: Vec<i64> = REFUSED_SYSTEM_CALLS.to_vec();
    if cfg!(target_arch = "x86_64") {
        const X32_SYSCALL_BIT: i64 = 0x4000_0000;
        let x32 = numbers.iter().chain(&[521, 539, 540]).map(|nr| nr | X32_SYSCALL_BIT);
        numbers.iter().copied().chain(x32).collect()
    } else {
        numbers
    }
}

/// The seccomp program, compiled once.
fn seccomp_program() -> Result<&'static seccompiler::BpfProgram, String> {
    static PROGRAM: OnceLock<Result<seccompiler::BpfProgram, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
            let rules = refused_numbers().into_iter().map(|nr| (nr, Vec::new())).collect();
            let filter = seccompiler::SeccompFilter::new(
                rules,
                seccompiler::SeccompAction::Allow,
                seccompiler::SeccompAction::Errno(libc::EPERM as u32),
                arch,
            )
            .map_err(|e| e.to_string())?;
            seccompiler::BpfProgram::try_from(filter).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// One sandboxed run's pieces, made in the parent before the fork.
pub(crate) struct SandboxedRun {
    /// The run's private temporary directory.
    temp_dir: PathBuf,
    /// `TMPDIR=<temp_dir>` for the child's environment.
    pub(crate) tmpdir_value: CString,
    ruleset: Option<RulesetCreated>,
    seccomp: Option<&'static seccompiler::BpfProgram>,
    network: Option<NetworkNamespace>,
    /// "UID UID 1" and "GID GID 1" for a user namespace's maps.
    uid_map: [u8; 32],
    gid_map: [u8; 32],
}

impl SandboxedRun {
    /// Prepares a run: its temporary directory, Landlock ruleset and
    /// seccomp program. `run_number` makes the directory's name unique.
    pub(crate) fn prepare(spec: &SandboxSpec, run_number: u64) -> Result<SandboxedRun> {
        let support = kernel_support();
        let strict = spec.strictness == Strictness::Strict;
        let temp_root = std::env::var_os("TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
        let temp_dir = temp_root.join(format!("jitrun-{}-run-{}", std::process::id(), run_number));
        std::fs::DirBuilder::new()
            .mode_0700()
            .create(&temp_dir)
            .with_context(|| format!("--sandbox: cannot create {}", temp_dir.display()))?;
        let mut run = SandboxedRun {
            tmpdir_value: CString::new(temp_dir.as_os_str().as_encoded_bytes())
                .context("TMPDIR contains a NUL byte")?,
            temp_dir,
            ruleset: None,
            seccomp: None,
            network: None,
            uid_map: [0; 32],
            gid_map: [0; 32],
        };
        if support.landlock_abi >= 1 {
            run.ruleset = Some(
                landlock_ruleset(spec, &run.temp_dir, support.landlock_abi, strict)
                    .context("--sandbox: cannot build the Landlock ruleset")?,
            );
        }
        if support.seccomp {
            run.seccomp = Some(seccomp_program().map_err(|e| anyhow::anyhow!("--sandbox: seccomp filter: {}", e))?);
        }
        if spec.no_network {
            run.network = support.network_namespace.as_ref().ok().copied();
            // SAFETY: getuid and getgid have no preconditions.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            write_map(&mut run.uid_map, uid);
            write_map(&mut run.gid_map, gid);
        }
        Ok(run)
    }

    /// In the child, after its cgroups and limits and before the program:
    /// network namespace, Landlock, seccomp, in that order (the user
    /// namespace's maps are written before Landlock forbids the writes).
    pub(crate) fn enter_in_child(&self) -> Result<(), &'static str> {
        match self.network {
            // SAFETY: unshare on this single-threaded child.
            Some(NetworkNamespace::Direct) if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 => {
                return Err("unshare(CLONE_NEWNET) failed");
            }
            None | Some(NetworkNamespace::Direct) => {}
            Some(NetworkNamespace::WithUserNamespace) => {
                // SAFETY: unshare on this single-threaded child.
                if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
                    return Err("unshare(CLONE_NEWUSER|CLONE_NEWNET) failed");
                }
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", until_nul(&self.uid_map))?;
                write_file(c"/proc/self/gid_map", until_nul(&self.gid_map))?;
            }
        }
        if let Some(ruleset) = &self.ruleset {
            // SAFETY: a bitwise copy owned by this child from now on: the
            // child ends with exit or _exit and never drops the original,
            // so the ruleset's descriptor is closed at most once here.
            let ruleset = unsafe { std::ptr::read(ruleset) };
            // restrict_self allocates nothing on success (prctl, then
            // landlock_restrict_self).
            if ruleset.restrict_self().is_err() {
                return Err("landlock_restrict_self failed");
            }
        }
        if let Some(program) = self.seccomp {
            if seccompiler::apply_filter(program).is_err() {
                return Err("cannot install the seccomp filter");
            }
        }
        Ok(())
    }
}

impl Drop for SandboxedRun {
    fn drop(&mut self) {
        // The run and everything it started are gone: its files go too.
        let _ = std::fs::remove_dir_all(&self.temp_dir);
    }
}

fn landlock_ruleset(spec: &SandboxSpec, temp_dir: &Path, abi: i32, strict: bool) -> Result<RulesetCreated> {
    let abi = match abi {
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    };
    let level = if strict { CompatLevel::HardRequirement } else { CompatLevel::BestEffort };
    let write = AccessFs::from_write(abi);
    let mut ruleset = Ruleset::default().set_compatibility(level).handle_access(write)?;
    if spec.no_network && abi >= ABI::V4 {
        // Handled and never allowed: every TCP bind and connect is refused.
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    let mut created = ruleset.create()?;
    let dirs = spec.allow_write.iter().map(PathBuf::as_path).chain(std::iter::once(temp_dir));
    created = created.add_rules(path_beneath_rules(dirs, write))?;
    let devices = ["/dev/null", "/dev/zero", "/dev/full"].into_iter().filter(|d| Path::new(d).exists());
    created = created.add_rules(path_beneath_rules(devices, write & AccessFs::from_file(abi)))?;
    Ok(created)
}

/// "ID ID 1" into a fixed buffer (NUL-padded).
fn write_map(buf: &mut [u8; 32], id: u32) {
    let text = format!("{} {} 1", id, id);
    buf[..text.len()].copy_from_slice(text.as_bytes());
}

fn until_nul(buf: &[u8]) -> &[u8] {
    &buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())]
}

/// In the child: open, write, close.
fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> Result<(), &'static str> {
    // SAFETY: plain system calls on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err("cannot open a user namespace map");
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err("cannot write a user namespace map");
        }
    }
    Ok(())
}

trait Mode0700 {
    fn mode_0700(&mut self) -> &mut Self;
}

impl Mode0700 for std::fs::DirBuilder {
    fn mode_0700(&mut self) -> &mut Self {
        std::os::unix::fs::DirBuilderExt::mode(self, 0o700)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seccomp_program_compiles_for_this_architecture() {
        let program = seccomp_program().unwrap();
        assert!(program.len() > REFUSED_SYSTEM_CALLS.len());
        let numbers = refused_numbers();
        assert!(numbers.contains(&libc::SYS_ptrace) && numbers.contains(&libc::SYS_bpf));
    }

    #[test]
    fn maps_map_an_id_to_itself() {
        let mut buf = [0; 32];
        write_map(&mut buf, 1000);
        assert_eq!(until_nul(&buf), b"1000 1000 1");
    }

    #[test]
    fn missing_features_are_named() {
        let none = KernelSupport { landlock_abi: 0, seccomp: false, network_namespace: Err("no".into()) };
        let spec = SandboxSpec { no_network: true, ..Default::default() };
        let missing = none.missing(&spec);
        assert_eq!(missing.len(), 3, "{:?}", missing);
        assert!(missing[0].contains("Landlock") && missing[1].contains("seccomp") && missing[2].contains("network"));
        let old = KernelSupport { landlock_abi: 3, seccomp: true, network_namespace: Ok(NetworkNamespace::Direct) };
        assert_eq!(old.missing(&spec).len(), 1);
        let full = KernelSupport { landlock_abi: 7, seccomp: true, network_namespace: Ok(NetworkNamespace::Direct) };
        assert!(full.missing(&spec).is_empty());
    }
}
