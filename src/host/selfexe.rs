//! `--self-exe PATH`: what the program finds as its own executable.
//!
//! A loaded program has no file of its own: `/proc/self/exe` names jitrun,
//! so a program that starts itself again (libuv's test runner through
//! `uv_exepath`, test harnesses, servers that re-exec to upgrade) would
//! start jitrun with its own arguments. With `--self-exe PATH` (typically a
//! script that runs jitrun on the same inputs), the image's calls that ask
//! for or execute `/proc/self/exe` get PATH instead: `readlink`,
//! `readlinkat` and `realpath` of it return PATH; `execve`, `execv`,
//! `execvp`, `execvpe`, `posix_spawn` and `posix_spawnp` of it run PATH,
//! and `fexecve` of a descriptor opened on it;
//! `getauxval(AT_EXECFN)` is PATH.
//! `/proc/PID/exe` of the process's own pid and `/proc/thread-self/exe`
//! count too, also spelled with extra `/`, `.` or `..` components. Other
//! paths, and calls from shared libraries, go to libc.
//! `execl`, `execlp` and `execle` take variable arguments, which Rust
//! cannot define: small assembly trampolines gather them into an argv.

// The trampolines: the register arguments after the path go right below
// those the caller passed on the stack, so that all lie in order: one
// array, arg0, arg1, ..., NULL (then execle's envp).
// jitrun_exec_list(path, array, kind) runs it; if the exec fails, the
// stack is put back as it was and its -1 returned. On x86-64 the return
// address is taken off the stack and rsi, rdx, rcx, r8, r9 pushed in its
// place.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .text.jitrun_exec_list, \"ax\", %progbits",
    ".globl jitrun_execl, jitrun_execlp, jitrun_execle",
    ".hidden jitrun_execl, jitrun_execlp, jitrun_execle",
    ".p2align 4",
    "jitrun_execl:",
    "xor eax, eax",
    "jmp 2f",
    ".p2align 4",
    "jitrun_execlp:",
    "mov eax, 1",
    "jmp 2f",
    ".p2align 4",
    "jitrun_execle:",
    "mov eax, 2",
    "2:",
    "pop r11",
    "push r9",
    "push r8",
    "push rcx",
    "push rdx",
    "push rsi",
    "mov rsi, rsp",
    "push rbx",
    "mov rbx, r11",
    "mov edx, eax",
    "call {exec_list}",
    "mov r11, rbx",
    "pop rbx",
    "add rsp, 40",
    "push r11",
    "ret",
    ".popsection",
    exec_list = sym jitrun_exec_list,
);

// On aarch64, x1..x7 are stored in the 56 bytes right below the caller's
// stack arguments, under a frame record.
#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".pushsection .text.jitrun_exec_list, \"ax\", %progbits",
    ".globl jitrun_execl, jitrun_execlp, jitrun_execle",
    ".hidden jitrun_execl, jitrun_execlp, jitrun_execle",
    ".p2align 4",
    "jitrun_execl:",
    "mov w9, #0",
    "b 2f",
    ".p2align 4",
    "jitrun_execlp:",
    "mov w9, #1",
    "b 2f",
    ".p2align 4",
    "jitrun_execle:",
    "mov w9, #2",
    "2:",
    "sub sp, sp, #80",
    "stp x29, x30, [sp]",
    "mov x29, sp",
    "stp x1, x2, [sp, #24]",
    "stp x3, x4, [sp, #40]",
    "stp x5, x6, [sp, #56]",
    "str x7, [sp, #72]",
    "add x1, sp, #24",
    "mov w2, w9",
    "bl {exec_list}",
    "ldp x29, x30, [sp]",
    "add sp, sp, #80",
    "ret",
    ".popsection",
    exec_list = sym jitrun_exec_list,
);

extern "C" {
    fn jitrun_execl();
    fn jitrun_execlp();
    fn jitrun_execle();
}

use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::OnceLock;

use crate::host::loader::LazyLibcFunction;

/// The program's own executable as `readlink("/proc/self/exe")` gives it.
static SELF_EXE: OnceLock<CString> = OnceLock::new();

/// Sets the path once per process (absolute, symbolic links resolved as
/// the kernel's `/proc/self/exe` would be); later calls keep the first.
pub fn set(path: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let absolute = std::fs::canonicalize(path).or_else(|_| std::path::absolute(path))?;
    let path = CString::new(absolute.as_os_str().as_bytes())?;
    let _ = SELF_EXE.set(path);
    Ok(())
}

/// Whether the image should call the functions here (`--self-exe` given).
pub fn enabled() -> bool {
    SELF_EXE.get().is_some()
}

/// PATH if `path` names this process's executable under `/proc`.
fn replacement(path: *const c_char) -> Option<&'static CStr> {
    let self_exe = SELF_EXE.get()?;
    if path.is_null() {
        return None;
    }
    // SAFETY: the caller passes a C string, as the libc function requires.
    let path = unsafe { CStr::from_ptr(path) }.to_bytes();
    let process = proc_exe_process(path)?;
    let own = process == b"self" || process == b"thread-self" || is_own_pid(process);
    own.then_some(self_exe.as_c_str())
}

/// Whether `name` is this process's pid as procfs spells it (decimal, no
/// leading zero), without allocating.
fn is_own_pid(name: &[u8]) -> bool {
    let digits = !name.is_empty() && name[0] != b'0' && name.iter().all(u8::is_ascii_digit);
    digits && std::str::from_utf8(name).ok().and_then(|n| n.parse::<u32>().ok()) == Some(std::process::id())
}

/// Whether absolute `path` names `/proc/PROCESS/exe`, and PROCESS: empty
/// and `.` components are dropped and `..` applied, as the kernel walks
/// `//proc/./self/exe` or `/proc/self/../self/exe` to the same file
/// (under `/proc`, the `..` of a process's directory is `/proc` whether it
/// was named by pid or `self`). No allocation: an exec after `vfork` comes
/// through here. `None` for a relative path or any other file.
fn proc_exe_process(path: &[u8]) -> Option<&[u8]> {
    const DEPTH: usize = 16;
    let rest = path.strip_prefix(b"/")?;
    let mut components: [&[u8]; DEPTH] = [&[]; DEPTH];
    let mut depth = 0usize;
    for component in rest.split(|&b| b == b'/') {
        match component {
            b"" | b"." => {}
            b".." => depth = depth.saturating_sub(1),
            name => {
                *components.get_mut(depth)? = name;
                depth += 1;
            }
        }
    }
    match components[..depth] {
        [b"proc", process, b"exe"] => Some(process),
        _ => None,
    }
}

/// What `readlink` writes: the path, cut to `size`, without a NUL.
///
/// # Safety
/// `buf` has room for `size` bytes.
unsafe fn fill_link(target: &CStr, buf: *mut c_char, size: usize) -> isize {
    let bytes = target.to_bytes();
    let n = bytes.len().min(size);
    // SAFETY: the caller's contract: `buf` holds `size` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, n) };
    n as isize
}

/// `readlink` that answers `/proc/self/exe` with `--self-exe`.
///
/// # Safety
/// As `readlink(2)`.
pub unsafe extern "C" fn jitrun_readlink(path: *const c_char, buf: *mut c_char, size: usize) -> isize {
    match replacement(path) {
        // SAFETY: the caller's contract for `buf`.
        Some(target) => unsafe { fill_link(target, buf, size) },
        // SAFETY: the caller's arguments, as libc takes them.
        None => unsafe { libc::readlink(path, buf, size) },
    }
}

/// `readlinkat` that answers `/proc/self/exe` with `--self-exe`.
///
/// # Safety
/// As `readlinkat(2)`.
pub unsafe extern "C" fn jitrun_readlinkat(dirfd: c_int, path: *const c_char, buf: *mut c_char, size: usize) -> isize {
    match replacement(path) {
        // SAFETY: the caller's contract for `buf`.
        Some(target) => unsafe { fill_link(target, buf, size) },
        None => match READLINKAT.get() {
            // SAFETY: libc's readlinkat (resolved by name) with the caller's arguments.
            Some(f) => unsafe { std::mem::transmute::<usize, ReadlinkatFn>(f)(dirfd, path, buf, size) },
            None => enosys(),
        },
    }
}

/// `realpath` that resolves `/proc/self/exe` to `--self-exe`.
///
/// # Safety
/// As `realpath(3)`: `resolved` is null or has room for `PATH_MAX` bytes.
pub unsafe extern "C" fn jitrun_realpath(path: *const c_char, resolved: *mut c_char) -> *mut c_char {
    let Some(target) = replacement(path) else {
        // SAFETY: the caller's arguments, as libc takes them.
        return unsafe { libc::realpath(path, resolved) };
    };
    let bytes = target.to_bytes_with_nul();
    if resolved.is_null() {
        // SAFETY: a copy the caller frees with free(), as libc's: malloc'd
        // with room for the path and its NUL.
        unsafe {
            let copy = libc::malloc(bytes.len()) as *mut u8;
            if !copy.is_null() {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), copy, bytes.len());
            }
            return copy as *mut c_char;
        }
    }
    if bytes.len() > libc::PATH_MAX as usize {
        // SAFETY: setting errno, as realpath does for a long result.
        unsafe { *libc::__errno_location() = libc::ENAMETOOLONG };
        return std::ptr::null_mut();
    }
    // SAFETY: `resolved` has room for PATH_MAX bytes (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), resolved as *mut u8, bytes.len()) };
    resolved
}

/// `getauxval` that gives `--self-exe` as `AT_EXECFN` (the file the
/// process was started from, natively the program's).
///
/// # Safety
/// As `getauxval(3)`.
pub unsafe extern "C" fn jitrun_getauxval(kind: libc::c_ulong) -> libc::c_ulong {
    match SELF_EXE.get() {
        Some(path) if kind == libc::AT_EXECFN => path.as_ptr() as libc::c_ulong,
        // SAFETY: the caller's argument, as libc takes it.
        _ => unsafe { libc::getauxval(kind) },
    }
}

/// The path to execute instead of `path`.
fn exec_path(path: *const c_char) -> *const c_char {
    replacement(path).map_or(path, CStr::as_ptr)
}

type Argv = *const *const c_char;

/// `execve` that runs `--self-exe` for `/proc/self/exe`.
///
/// # Safety
/// As `execve(2)`.
pub unsafe extern "C" fn jitrun_execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    match EXECVE.get() {
        // SAFETY: libc's execve (resolved by name) with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, ExecveFn>(f)(exec_path(path), argv, envp) },
        None => enosys(),
    }
}

/// `execv` that runs `--self-exe` for `/proc/self/exe`.
///
/// # Safety
/// As `execv(3)`.
pub unsafe extern "C" fn jitrun_execv(path: *const c_char, argv: Argv) -> c_int {
    match EXECV.get() {
        // SAFETY: libc's execv (resolved by name) with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, ExecvFn>(f)(exec_path(path), argv) },
        None => enosys(),
    }
}

/// `execvp` that runs `--self-exe` for `/proc/self/exe`.
///
/// # Safety
/// As `execvp(3)`.
pub unsafe extern "C" fn jitrun_execvp(file: *const c_char, argv: Argv) -> c_int {
    // SAFETY: the caller's arguments, as libc takes them.
    unsafe { libc::execvp(exec_path(file), argv) }
}

/// `execvpe` that runs `--self-exe` for `/proc/self/exe`.
///
/// # Safety
/// As `execvpe(3)`.
pub unsafe extern "C" fn jitrun_execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    match EXECVPE.get() {
        // SAFETY: libc's execvpe (resolved by name) with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, ExecveFn>(f)(exec_path(file), argv, envp) },
        None => enosys(),
    }
}

/// `fexecve` that runs `--self-exe` for a descriptor opened on
/// `/proc/self/exe` (jitrun's own file, as the kernel opens it).
///
/// # Safety
/// As `fexecve(3)`.
pub unsafe extern "C" fn jitrun_fexecve(fd: c_int, argv: Argv, envp: Argv) -> c_int {
    use std::os::unix::fs::MetadataExt;
    let own = std::fs::metadata("/proc/self/exe").map(|m| (m.dev(), m.ino())).ok();
    // SAFETY: fstat fills the struct passed; a bad descriptor only fails.
    let opened = unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut stat) == 0).then_some((stat.st_dev, stat.st_ino))
    };
    if own.is_some() && opened == own {
        if let Some(path) = SELF_EXE.get() {
            // SAFETY: the caller's arguments, as execve takes them.
            return unsafe { jitrun_execve(path.as_ptr(), argv, envp) };
        }
    }
    match FEXECVE.get() {
        // SAFETY: libc's fexecve (resolved by name) with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, FexecveFn>(f)(fd, argv, envp) },
        None => enosys(),
    }
}

/// What the `execl`, `execlp` and `execle` trampolines call (`kind` 0, 1
/// and 2) with their arguments gathered: `args` is arg0, ..., NULL, and
/// for `execle` the environment after it.
///
/// # Safety
/// As `execl(3)`: `args` is a null-terminated array of C strings, followed
/// for `execle` by a valid environment.
unsafe extern "C" fn jitrun_exec_list(path: *const c_char, args: Argv, kind: c_int) -> c_int {
    // SAFETY (all three): the caller's arguments, as the exec functions take them.
    match kind {
        0 => unsafe { jitrun_execv(path, args) },
        1 => unsafe { jitrun_execvp(path, args) },
        _ => unsafe {
            let mut n = 0;
            while !(*args.add(n)).is_null() {
                n += 1;
            }
            jitrun_execve(path, args, *args.add(n + 1) as Argv)
        },
    }
}

type SpawnFn = unsafe extern "C" fn(
    *mut libc::pid_t,
    *const c_char,
    *const libc::posix_spawn_file_actions_t,
    *const libc::posix_spawnattr_t,
    *const *mut c_char,
    *const *mut c_char,
) -> c_int;

/// `posix_spawn` (`SEARCH_PATH` false) or `posix_spawnp` (true) that runs
/// `--self-exe` for `/proc/self/exe`: one body for the two C entry points,
/// whose signatures are the same.
///
/// # Safety
/// As `posix_spawn(3)`.
pub unsafe extern "C" fn jitrun_posix_spawn<const SEARCH_PATH: bool>(
    pid: *mut libc::pid_t,
    path: *const c_char,
    actions: *const libc::posix_spawn_file_actions_t,
    attributes: *const libc::posix_spawnattr_t,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
) -> c_int {
    let spawn = if SEARCH_PATH { &POSIX_SPAWNP } else { &POSIX_SPAWN };
    match spawn.get() {
        // SAFETY: libc's function of that signature (resolved by name) with
        // the caller's arguments.
        Some(f) => unsafe {
            std::mem::transmute::<usize, SpawnFn>(f)(pid, exec_path(path), actions, attributes, argv, envp)
        },
        None => libc::ENOSYS,
    }
}

/// What a replaced call returns when libc's version was not found (it is
/// looked up before the image can call it, so only in theory).
fn enosys<T: From<i8>>() -> T {
    // SAFETY: writing this thread's errno.
    unsafe { *libc::__errno_location() = libc::ENOSYS };
    T::from(-1)
}

/// libc's own versions of the functions not otherwise in jitrun, looked up
/// when an image first needs them (see [`LazyLibcFunction`]).
static READLINKAT: LazyLibcFunction = LazyLibcFunction::new(c"readlinkat");
static EXECVE: LazyLibcFunction = LazyLibcFunction::new(c"execve");
static EXECV: LazyLibcFunction = LazyLibcFunction::new(c"execv");
static EXECVPE: LazyLibcFunction = LazyLibcFunction::new(c"execvpe");
static FEXECVE: LazyLibcFunction = LazyLibcFunction::new(c"fexecve");
static POSIX_SPAWN: LazyLibcFunction = LazyLibcFunction::new(c"posix_spawn");
static POSIX_SPAWNP: LazyLibcFunction = LazyLibcFunction::new(c"posix_spawnp");
type ReadlinkatFn = unsafe extern "C" fn(c_int, *const c_char, *mut c_char, usize) -> isize;
type ExecveFn = unsafe extern "C" fn(*const c_char, Argv, Argv) -> c_int;
type ExecvFn = unsafe extern "C" fn(*const c_char, Argv) -> c_int;
type FexecveFn = unsafe extern "C" fn(c_int, Argv, Argv) -> c_int;

/// The functions above by the name the image calls them with, when
/// `--self-exe` is given.
pub fn host_function(name: &str) -> Option<usize> {
    if !enabled() {
        return None;
    }
    // (jitrun_fexecve runs libc's execve for /proc/self/exe.)
    if name == "fexecve" {
        EXECVE.resolve()?;
    }
    let (ours, theirs) = match name {
        "readlink" => (jitrun_readlink as *const (), None),
        "readlinkat" => (jitrun_readlinkat as *const (), Some(&READLINKAT)),
        "realpath" => (jitrun_realpath as *const (), None),
        "execve" => (jitrun_execve as *const (), Some(&EXECVE)),
        "execv" => (jitrun_execv as *const (), Some(&EXECV)),
        "execvp" => (jitrun_execvp as *const (), None),
        "execvpe" => (jitrun_execvpe as *const (), Some(&EXECVPE)),
        "execl" => (jitrun_execl as *const (), Some(&EXECV)),
        "execlp" => (jitrun_execlp as *const (), None),
        "execle" => (jitrun_execle as *const (), Some(&EXECVE)),
        "fexecve" => (jitrun_fexecve as *const (), Some(&FEXECVE)),
        "posix_spawn" => (jitrun_posix_spawn::<false> as *const (), Some(&POSIX_SPAWN)),
        "posix_spawnp" => (jitrun_posix_spawn::<true> as *const (), Some(&POSIX_SPAWNP)),
        "getauxval" => (jitrun_getauxval as *const (), None),
        _ => return None,
    };
    if let Some(theirs) = theirs {
        theirs.resolve()?;
    }
    Some(ours as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_processes_exe_is_replaced() {
        let script = std::env::temp_dir().join(format!("jitrun-self-exe-{}", std::process::id()));
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        set(&script).unwrap();
        let expected = std::fs::canonicalize(&script).unwrap();
        std::fs::remove_file(&script).unwrap();
        let own = format!("/proc/{}/exe", std::process::id());
        let spellings = [
            "/proc/self/exe",
            "/proc/thread-self/exe",
            "//proc/self/exe",
            "/proc/./self//exe",
            "/proc/self/../self/exe",
        ];
        for path in spellings.iter().copied().chain([own.as_str()]) {
            let path = CString::new(path).unwrap();
            let got = replacement(path.as_ptr()).unwrap_or_else(|| panic!("{:?}", path));
            assert_eq!(got.to_str().unwrap(), expected.to_str().unwrap());
        }
        for path in
            ["/proc/1/exe", "/proc/self/cwd", "/usr/bin/env", "/proc/self/exe/x", "proc/self/exe", "/proc/self/exe/.."]
        {
            assert!(replacement(CString::new(path).unwrap().as_ptr()).is_none(), "{}", path);
        }
        let mut buf = [0 as c_char; 4];
        let path = CString::new("/proc/self/exe").unwrap();
        // SAFETY: a 4-byte buffer, as said.
        assert_eq!(unsafe { jitrun_readlink(path.as_ptr(), buf.as_mut_ptr(), buf.len()) }, 4, "cut, as readlink cuts");
    }
}
