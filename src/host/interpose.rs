//! A program's own `malloc` (or `operator new`), as a native link gives it
//! to every library.
//!
//! When an executable defines `malloc`, `free`, `calloc`, `realloc` (and
//! perhaps `memalign`, `posix_memalign`, ...) or C++'s `operator new` and
//! `operator delete`, the dynamic loader binds
//! every library's references to those names to the executable's, so libc's
//! own `strdup`, `getline`, `reallocarray` and stdio buffers, and
//! libstdc++'s `operator new`, allocate from the program's allocator; glibc
//! documents this as the way to replace malloc. The image is not in the
//! loader's scope, so the libraries stay bound to glibc's allocator, and a
//! block glibc allocated reaches the program's `free` (bash, built with its
//! own malloc, aborts: "free: called with unallocated block argument").
//!
//! When the image defines any of these, jitrun re-points the GOT
//! entries of every loaded library (not jitrun's own, nor the dynamic
//! loader's, which keeps its own pointers) that refer to these names at the
//! image's definitions, in the process that runs the program, just before
//! its constructors; the image's drop restores them. A library the
//! program loads later with `dlopen` is covered when `dlopen` returns (the
//! image's `dlopen` is [`jitrun_dlopen`]); its constructors have run with
//! glibc's by then. Libraries libc loads itself (name-service modules) are
//! loaded ahead.
//!
//! The same re-pointing gives libc the program's definitions of its
//! variables (`argp_program_version`), which an executable's definition
//! also takes the place of ([`GotInterposition::plan`]'s `preempting`).

use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::host::copyreloc::{write_protected_word, write_protected_words};

/// The functions glibc lets a program replace ("Replacing malloc"), and
/// C++'s replaceable allocation functions (`operator new`/`delete` in all
/// their forms), which libstdc++ calls through its own GOT.
pub const ALLOCATOR_FUNCTIONS: [&str; 30] = [
    "malloc",
    "free",
    "calloc",
    "realloc",
    "aligned_alloc",
    "malloc_usable_size",
    "memalign",
    "posix_memalign",
    "pvalloc",
    "valloc",
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
];

/// One GOT entry to re-point: its address and the image's function.
#[derive(Clone, Copy, Debug)]
struct Patch {
    slot: u64,
    function: u64,
}

/// The GOT entries of loaded libraries to re-point at the image: for an
/// image that replaces the allocator, and for data it defines in place of
/// libc's (see [`GotInterposition::plan`]).
#[derive(Debug, Default)]
pub struct GotInterposition {
    /// The image's definitions, by name.
    replacements: Vec<(std::sync::Arc<str>, u64)>,
    patches: Vec<Patch>,
    /// The values the entries held, once installed (same order).
    previous: std::sync::Mutex<Vec<u64>>,
    /// The process that installed them (a forked child installs its own).
    installed_in: AtomicU32,
}

impl GotInterposition {
    /// For an image whose definitions `defined(name)` finds: `None` unless
    /// it defines one of [`ALLOCATOR_FUNCTIONS`] (each is bound on its own,
    /// as the loader binds names). The loaded libraries' dynamic
    /// relocations are read now; nothing is written until [`install`].
    ///
    /// [`install`]: GotInterposition::install
    ///
    /// `preempting` are data the image defines that a library defines too
    /// (`argp_program_version`, which libc reads): as an executable's
    /// definition does, the image's takes the place of the library's in
    /// every library's GOT.
    ///
    /// `entries` are more words to re-point, each with the image's
    /// definition: the values of symbols that stood in for the program's
    /// (see `host::stand_ins_for_the_program`), GOT entries found by symbol
    /// index. A word is re-pointed once, whatever found it.
    pub fn plan(
        defined: impl Fn(&str) -> Option<u64>,
        preempting: Vec<(std::sync::Arc<str>, u64)>,
        entries: Vec<(u64, u64)>,
    ) -> Option<GotInterposition> {
        let mut replacements: Vec<(std::sync::Arc<str>, u64)> =
            ALLOCATOR_FUNCTIONS.iter().filter_map(|&name| Some((name.into(), defined(name)?))).collect();
        // (libc's allocations: C++'s operator new alone needs none of them.)
        if replacements.iter().any(|(name, _)| !name.starts_with("_Z")) {
            load_name_service_modules();
        }
        replacements.extend(preempting);
        if replacements.is_empty() && entries.is_empty() {
            return None;
        }
        let mut patches = if replacements.is_empty() { Vec::new() } else { covered_slots(&replacements) };
        patches.extend(entries.into_iter().map(|(slot, function)| Patch { slot, function }));
        // Uninstalling restores the words in order: each must be there once.
        let mut seen = rustc_hash::FxHashSet::default();
        patches.retain(|patch| seen.insert(patch.slot));
        log::debug!(
            "the image defines {}: {} GOT entries of loaded libraries will point at them",
            replacements.iter().map(|(n, _)| &**n).collect::<Vec<_>>().join(", "),
            patches.len()
        );
        Some(GotInterposition { replacements, patches, previous: Default::default(), installed_in: AtomicU32::new(0) })
    }

    /// Re-points the entries, once per process. Before that, the dynamic
    /// loader's error message (left by jitrun's own symbol lookups, and
    /// allocated by glibc) is cleared, so the program's `free` never gets it.
    pub fn install(&self) {
        let pid = std::process::id();
        if self.installed_in.swap(pid, Ordering::AcqRel) == pid {
            return;
        }
        // SAFETY: dlerror only reads and frees the loader's error state; the
        // second call frees what the first returned.
        unsafe { while !libc::dlerror().is_null() {} }
        *self.previous.lock().unwrap_or_else(|e| e.into_inner()) = self
            .patches
            .iter()
            // SAFETY: a GOT entry of a loaded module, found through its
            // dynamic relocations.
            .map(|p| unsafe { std::ptr::read_volatile(p.slot as *const u64) })
            .collect();
        let words: Vec<(u64, u64)> = self.patches.iter().map(|p| (p.slot, p.function)).collect();
        write_protected_words(&words);
        let mut late = LATE.lock().unwrap_or_else(|e| e.into_inner());
        late.replacements = self.replacements.clone();
        late.covered = self.patches.iter().map(|p| p.slot).collect();
    }

    /// Restores what [`GotInterposition::install`] changed in this process.
    pub fn uninstall(&self) {
        if self.installed_in.swap(0, Ordering::AcqRel) != std::process::id() {
            return;
        }
        let previous = self.previous.lock().unwrap_or_else(|e| e.into_inner());
        let mut words: Vec<(u64, u64)> =
            self.patches.iter().zip(previous.iter()).map(|(patch, &old)| (patch.slot, old)).collect();
        let late = std::mem::take(&mut *LATE.lock().unwrap_or_else(|e| e.into_inner()));
        words.extend(late.patched);
        write_protected_words(&words);
    }
}

/// Whether the loaded module `name` gets the program's allocator: all but
/// jitrun itself (its own allocations stay glibc's: it frees what it
/// allocated before) and the dynamic loader (it keeps its own pointers).
fn is_covered(name: &CStr) -> bool {
    let name = name.to_bytes();
    !name.is_empty() && !name.windows(b"ld-linux".len()).any(|w| w == b"ld-linux")
}

/// The installed replacements, for libraries the program loads later.
#[derive(Default)]
struct LateModules {
    replacements: Vec<(std::sync::Arc<str>, u64)>,
    /// GOT entries already re-pointed.
    covered: rustc_hash::FxHashSet<u64>,
    /// (entry, old value) re-pointed after a `dlopen`, restored on uninstall.
    patched: Vec<(u64, u64)>,
}

static LATE: std::sync::Mutex<LateModules> = std::sync::Mutex::new(LateModules {
    replacements: Vec::new(),
    covered: rustc_hash::FxHashSet::with_hasher(rustc_hash::FxBuildHasher),
    patched: Vec::new(),
});

/// `dlopen` for a program that replaces the allocator: a library it loads
/// gets the program's allocator too, from when `dlopen` returns (its
/// constructors have already run with glibc's).
///
/// # Safety
/// As `dlopen(3)`.
pub unsafe extern "C" fn jitrun_dlopen(file: *const libc::c_char, mode: libc::c_int) -> *mut libc::c_void {
    // SAFETY: the caller's arguments, as libc takes them.
    let handle = unsafe { libc::dlopen(file, mode) };
    if !handle.is_null() {
        cover_late_modules();
    }
    handle
}

/// Re-points the entries of modules loaded since [`GotInterposition::install`].
fn cover_late_modules() {
    let mut late = LATE.lock().unwrap_or_else(|e| e.into_inner());
    if late.replacements.is_empty() {
        return;
    }
    for patch in covered_slots(&late.replacements) {
        if late.covered.insert(patch.slot) {
            // SAFETY: a GOT entry of a loaded module, found through its
            // dynamic relocations.
            let old = unsafe { std::ptr::read_volatile(patch.slot as *const u64) };
            if write_protected_word(patch.slot, patch.function) {
                late.patched.push((patch.slot, old));
            }
        }
    }
}

/// `dlsym` for the image. `RTLD_NEXT` in a native executable's code finds
/// the definitions after the executable's own, in the libraries; the image
/// is no object of the loader's, so glibc refuses it there ("RTLD_NEXT
/// used in code not dynamically loaded"), and wrappers that reach the
/// function they wrap that way (`dlsym(RTLD_NEXT, "malloc")`) got nothing.
/// The process's definitions are the ones after the program's.
///
/// # Safety
/// As `dlsym(3)`.
pub unsafe extern "C" fn jitrun_dlsym(handle: *mut libc::c_void, name: *const libc::c_char) -> *mut libc::c_void {
    // SAFETY: the caller's arguments, as libc takes them.
    unsafe { libc::dlsym(as_from_the_executable(handle), name) }
}

/// The handle the image's `RTLD_NEXT` stands for: what follows a native
/// executable in the loader's search, the whole process.
fn as_from_the_executable(handle: *mut libc::c_void) -> *mut libc::c_void {
    if handle == libc::RTLD_NEXT {
        libc::RTLD_DEFAULT
    } else {
        handle
    }
}

/// `dlvsym` for the image, with `RTLD_NEXT` as in [`jitrun_dlsym`].
///
/// # Safety
/// As `dlvsym(3)`.
pub unsafe extern "C" fn jitrun_dlvsym(
    handle: *mut libc::c_void,
    name: *const libc::c_char,
    version: *const libc::c_char,
) -> *mut libc::c_void {
    // SAFETY: the caller's arguments, as libc takes them.
    unsafe { libc::dlvsym(as_from_the_executable(handle), name, version) }
}

/// jitrun's versions of the loader's functions for the image: `dlsym` and
/// `dlvsym` ([`jitrun_dlsym`]), and [`jitrun_dlopen`] for `dlopen` when
/// its objects replace the allocator (`replaces_allocator`).
pub fn host_function(name: &str, replaces_allocator: bool) -> Option<usize> {
    match name {
        "dlsym" => Some(jitrun_dlsym as *const () as usize),
        "dlvsym" => Some(jitrun_dlvsym as *const () as usize),
        "dlopen" if replaces_allocator => Some(jitrun_dlopen as *const () as usize),
        _ => None,
    }
}

/// Loads the name-service modules `/etc/nsswitch.conf` names now, so that
/// their GOT entries are re-pointed with the others: libc loads them the
/// first time the program looks up a user or a host (`getpwnam`,
/// `getaddrinfo`), and one loaded then would bind to glibc's allocator and
/// free the program's blocks with it (bash's `~nosuchuser` crashed with
/// `passwd: files systemd`). Natively loading them early changes nothing a
/// program can see but the list of loaded objects. Modules built into libc
/// (`files`, `dns`) or not installed are skipped.
fn load_name_service_modules() {
    let Ok(config) = std::fs::read_to_string("/etc/nsswitch.conf") else { return };
    let mut services: Vec<&str> = config
        .lines()
        .filter_map(|line| line.split('#').next()?.split_once(':'))
        .flat_map(|(_, sources)| sources.split_whitespace())
        .filter(|s| !s.starts_with('[') && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .filter(|&s| s != "files" && s != "dns")
        .collect();
    services.sort_unstable();
    services.dedup();
    for service in services {
        let Ok(name) = std::ffi::CString::new(format!("libnss_{}.so.2", service)) else { continue };
        // SAFETY: loading a system library by name, as libc itself would on
        // the first lookup; the handle is kept (libc keeps them loaded too).
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
        log::debug!("name-service module {:?} {}", name, if handle.is_null() { "not found" } else { "loaded" });
    }
}

/// The GOT entries naming one of `replacements` in every loaded module
/// that gets the program's allocator ([`is_covered`]).
fn covered_slots(replacements: &[(std::sync::Arc<str>, u64)]) -> Vec<Patch> {
    // By name, once for every module: a module has thousands of entries,
    // an image may replace hundreds of names.
    let by_name: rustc_hash::FxHashMap<&str, u64> = replacements.iter().map(|(n, a)| (&**n, *a)).collect();
    let mut found = Vec::new();
    crate::host::loader::for_each_loaded_object(|module| {
        if is_covered(module.name) {
            // SAFETY: the loader describes a module of this process and
            // holds its lock during the visit.
            unsafe { module_slots_for(module.bias, module.headers, &by_name, &mut found) };
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// The GOT entries of one module whose dynamic relocation (`GLOB_DAT`,
/// `JUMP_SLOT` or `R_X86_64_64` with no addend, in `DT_RELA` or
/// `DT_JMPREL`) names one of the replacements (`by_name`).
///
/// # Safety
/// `bias` and `phdrs` describe a module loaded in this process, which the
/// loader does not unload meanwhile (it holds its lock).
unsafe fn module_slots_for(
    bias: u64,
    phdrs: &[libc::Elf64_Phdr],
    by_name: &rustc_hash::FxHashMap<&str, u64>,
    out: &mut Vec<Patch>,
) {
    // SAFETY: the caller's contract.
    let Some(tables) = (unsafe { crate::host::loader::dynamic_tables(bias, phdrs) }) else { return };
    let names_a_replacement = |slot: u64, _, symbol: usize| {
        // SAFETY: the symbol index comes from the module's own relocations.
        let Some(name) = (unsafe { tables.symbol_name(symbol) }).and_then(|n| n.to_str().ok()) else { return };
        if let Some(&function) = by_name.get(name) {
            out.push(Patch { slot, function });
        }
    };
    // SAFETY: the caller's contract.
    unsafe { tables.for_each_got_entry(bias, names_a_replacement) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_planned_for_an_image_without_allocator_functions() {
        assert!(GotInterposition::plan(|_| None, Vec::new(), Vec::new()).is_none());
    }

    #[test]
    fn libc_refers_to_the_allocator_through_its_got() {
        // Planned, not installed: libc's own references to malloc and free.
        let plan =
            GotInterposition::plan(|n| ["malloc", "free"].contains(&n).then_some(0x1000), Vec::new(), Vec::new())
                .unwrap();
        assert!(plan.patches.len() >= 2, "{:?}", plan);
    }
}
