//! Starting jitrun again, as the same command, with a changed environment:
//! what glibc and the sanitizers decide only when a process starts (the
//! static TLS surplus, a runtime that must be loaded first, a TLS alignment,
//! a sanitizer's options) needs a new process. Each restart marks itself in
//! a variable that the restarted process removes again, with every variable
//! it changed, so the program sees the environment it was given.

/// Set when jitrun has re-executed itself with more static TLS, to the
/// original `GLIBC_TUNABLES` (see [`reexec_with`]); removed again at
/// start-up so the program sees the environment it was given.
pub const TLS_REEXEC_ENV: &str = "JITRUN_TLS_REEXEC";
/// The same for a sanitizer runtime put in `LD_PRELOAD`.
pub const PRELOAD_REEXEC_ENV: &str = "JITRUN_PRELOAD_REEXEC";
/// The same for the program's answers to sanitizer hooks (see [`crate::cli::sanitizer_hooks`]).
pub const HOOKS_REEXEC_ENV: &str = "JITRUN_HOOKS_REEXEC";
/// The same for a module that aligns static TLS put in `LD_PRELOAD`.
pub const TLS_ALIGN_REEXEC_ENV: &str = "JITRUN_TLS_ALIGN_REEXEC";
/// Set for that restart: the alignment and the module's path.
pub const TLS_ALIGN_ENV: &str = "JITRUN_TLS_ALIGN";

/// glibc sizes its static TLS surplus at process start from the
/// `glibc.rtld.optional_static_tls` tunable; the only way to get more is to
/// start again with a larger value. Returns only if that was tried already.
pub fn reexec_with_more_static_tls(needed: u64) {
    if restarted_with(TLS_REEXEC_ENV) {
        return;
    }
    let original = std::env::var_os("GLIBC_TUNABLES").unwrap_or_default();
    let size = (needed + (64 << 10)).next_power_of_two();
    let mut tunables = std::ffi::OsString::from(format!("glibc.rtld.optional_static_tls={}", size));
    if !original.is_empty() {
        tunables = [original, tunables].join(std::ffi::OsStr::new(":"));
    }
    reexec_with(&[("GLIBC_TUNABLES", tunables)], TLS_REEXEC_ENV);
}

/// Thread-locals aligned past jitrun's own static TLS alignment fit only
/// once the area is aligned so, which a module loaded at start-up does:
/// start again with one of that alignment first in `LD_PRELOAD` (written to
/// a file the restart removes, see [`note_preloaded_tls_alignment`]).
/// Returns only if that was tried already or cannot be done.
pub fn reexec_with_aligned_static_tls(align: u64) {
    /// glibc aligns the static TLS area with `memalign`; past a few pages
    /// the padding in every thread's stack would be absurd.
    const MOST: u64 = 1 << 16;
    if restarted_with(TLS_ALIGN_REEXEC_ENV) || !align.is_power_of_two() || align > MOST {
        return;
    }
    let module =
        crate::host::tls::generated_module_dir().join(format!("jitrun-tls-align-{}-{}.so", std::process::id(), align));
    if let Err(e) = std::fs::write(&module, crate::host::tls::alignment_module(align)) {
        log::warn!("{}: cannot write the TLS alignment module: {}", module.display(), e);
        return;
    }
    let preload = preloaded_before_the_users(module.clone().into_os_string());
    let mut note = std::ffi::OsString::from(format!("{} ", align));
    note.push(&module);
    reexec_with(&[("LD_PRELOAD", preload), (TLS_ALIGN_ENV, note)], TLS_ALIGN_REEXEC_ENV);
    let _ = std::fs::remove_file(&module);
}

/// In a restart made by [`reexec_with_aligned_static_tls`]: records the
/// alignment the preloaded module gave static TLS, and removes its file
/// (mapped by now). A further restart writes it again ([`reexec_with`]).
pub fn note_preloaded_tls_alignment() {
    if let Some((align, module)) = preloaded_tls_alignment() {
        crate::host::tls::note_static_tls_alignment(align);
        let _ = std::fs::remove_file(module);
    }
}

/// The alignment and module path of this process's TLS alignment restart.
fn preloaded_tls_alignment() -> Option<(u64, std::path::PathBuf)> {
    let carried = CARRIED_OVER.get()?.iter().find(|c| c.marker == TLS_ALIGN_REEXEC_ENV)?;
    let (_, note) = carried.values.iter().find(|(name, _)| name == TLS_ALIGN_ENV)?;
    let (align, module) = note.to_str()?.split_once(' ')?;
    Some((align.parse().ok()?, module.into()))
}

/// The address and thread sanitizers' runtimes work only as the first
/// library of the process: start again with it in `LD_PRELOAD` (before the
/// user's own preloads), which gets its original value back at start-up,
/// so the program and what it runs see the environment they were given.
/// (The restarted jitrun links on its main thread: the runtime sees no
/// thread of jitrun's.) Returns only if that was tried already.
pub fn reexec_with_preloaded_runtime(first: &crate::host::driver_runtime::RuntimeMustComeFirst) {
    if restarted_with(PRELOAD_REEXEC_ENV) {
        return;
    }
    let runtime = std::iter::once(&first.library).chain(&first.with).map(|p| p.as_os_str());
    let preload = preloaded_before_the_users(runtime.collect::<Vec<_>>().join(std::ffi::OsStr::new(":")));
    reexec_with(&[("LD_PRELOAD", preload)], PRELOAD_REEXEC_ENV);
}

/// `LD_PRELOAD` with `first` ahead of the user's own preloads, if any.
fn preloaded_before_the_users(first: std::ffi::OsString) -> std::ffi::OsString {
    match std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        Some(original) => [first, original].join(std::ffi::OsStr::new(":")),
        None => first,
    }
}

/// Runs jitrun again with the same arguments and the environment
/// `changes`. The marker `marker` records each changed variable's original
/// value (`NAME=VALUE`, or `NAME` alone if it was unset), one per line,
/// for [`restore_environment_after_reexec`]. Returns only if exec failed.
pub fn reexec_with(changes: &[(&str, std::ffi::OsString)], marker: &str) {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut originals = Vec::new();
    for (name, _) in changes {
        originals.extend_from_slice(name.as_bytes());
        if let Some(value) = std::env::var_os(name) {
            originals.push(b'=');
            originals.extend_from_slice(value.as_bytes());
        }
        originals.push(b'\n');
    }
    log::debug!("re-executing with {:?}", changes);
    // The environment in its order (Command would sort it), changed in place.
    let mut environment: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    let mut set =
        |name: &std::ffi::OsStr, value: &std::ffi::OsStr| match environment.iter_mut().find(|(n, _)| n == name) {
            Some(variable) => variable.1 = value.to_os_string(),
            None => environment.push((name.to_os_string(), value.to_os_string())),
        };
    // An earlier restart's changes hold again (the runtime stays preloaded
    // when more static TLS is needed too), its TLS alignment module too.
    if let Some((align, module)) = preloaded_tls_alignment() {
        let _ = std::fs::write(module, crate::host::tls::alignment_module(align));
    }
    for carried in CARRIED_OVER.get().into_iter().flatten() {
        set(carried.marker.as_ref(), &carried.originals);
        carried.values.iter().for_each(|(n, v)| set(n, v));
    }
    set(marker.as_ref(), &std::ffi::OsString::from_vec(originals));
    for (name, value) in changes {
        set(name.as_ref(), value);
    }
    let c_string = |bytes: &[u8]| std::ffi::CString::new(bytes).ok();
    let args: Option<Vec<_>> = std::env::args_os().map(|a| c_string(a.as_bytes())).collect();
    let env: Option<Vec<_>> =
        environment.iter().map(|(n, v)| c_string(&[n.as_bytes(), b"=", v.as_bytes()].concat())).collect();
    let (Some(args), Some(env)) = (args, env) else {
        log::warn!("cannot re-execute jitrun: a NUL byte in an argument or variable");
        return;
    };
    let pointers = |strings: &[std::ffi::CString]| {
        strings.iter().map(|s| s.as_ptr()).chain([std::ptr::null()]).collect::<Vec<_>>()
    };
    let (argv, envp) = (pointers(&args), pointers(&env));
    // SAFETY: null-terminated arrays of C strings that outlive the call;
    // execve returns only on failure.
    unsafe { libc::execve(c"/proc/self/exe".as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    log::warn!("cannot re-execute jitrun: {}", std::io::Error::last_os_error());
}

/// Undoes what [`reexec_with`] changed in the environment, and keeps what
/// it undid (see [`CarriedOver`]).
pub fn restore_environment_after_reexec() {
    use std::os::unix::ffi::OsStrExt;
    let mut carried_over = Vec::new();
    for marker in [TLS_REEXEC_ENV, PRELOAD_REEXEC_ENV, HOOKS_REEXEC_ENV, TLS_ALIGN_REEXEC_ENV] {
        let Some(originals) = std::env::var_os(marker) else { continue };
        if marker == PRELOAD_REEXEC_ENV {
            crate::host::loader::note_preload_at_start(std::env::var_os("LD_PRELOAD").unwrap_or_default());
        }
        let mut values = Vec::new();
        // SAFETY (of the environment changes): still single-threaded at start-up.
        for line in originals.as_bytes().split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let mut parts = line.splitn(2, |&b| b == b'=');
            let name = std::ffi::OsStr::from_bytes(parts.next().unwrap_or_default());
            values.push((name.to_os_string(), std::env::var_os(name).unwrap_or_default()));
            match parts.next() {
                Some(value) => std::env::set_var(name, std::ffi::OsStr::from_bytes(value)),
                None => std::env::remove_var(name),
            }
        }
        // Keep the marker out of the program's view (the retry is
        // remembered in CARRIED_OVER).
        std::env::remove_var(marker);
        carried_over.push(CarriedOver { marker, originals, values });
    }
    if !carried_over.is_empty() {
        crate::image::show_environment_as_given();
    }
    let _ = CARRIED_OVER.set(carried_over);
}

/// A restart's changes to the environment, undone at start-up (see
/// [`restore_environment_after_reexec`]), for a further restart to make again.
struct CarriedOver {
    marker: &'static str,
    originals: std::ffi::OsString,
    /// The variables as this process started with them.
    values: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

static CARRIED_OVER: std::sync::OnceLock<Vec<CarriedOver>> = std::sync::OnceLock::new();

/// Whether this process is a restart marked with `marker`: it is not tried twice.
pub fn restarted_with(marker: &str) -> bool {
    CARRIED_OVER.get().is_some_and(|carried| carried.iter().any(|c| c.marker == marker))
}
