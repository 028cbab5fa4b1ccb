//! The functions a sanitizer runtime calls if the executable defines them
//! (`__asan_default_options`, `__lsan_default_suppressions`, ...; see
//! `driver_runtime::PROGRAM_HOOKS`). The runtime starts before the image
//! exists and sees only jitrun's definitions, so jitrun defines them all
//! and answers with the program's: those the runtime calls later by
//! calling the program's; those it reads as it starts from the variables
//! of a restart, which jitrun makes once the program's answers (called
//! after the link, before its constructors, as natively) differ from what
//! the runtime was told. The functions themselves are defined in the executable only
//! ([`crate::program_hooks`], which `main.rs` expands): a library user's own
//! program keeps its hooks.

use std::ffi::{c_char, c_int};
use std::os::unix::ffi::OsStringExt;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::cli::relaunch::{reexec_with, restarted_with, HOOKS_REEXEC_ENV};
use crate::host::driver_runtime::PROGRAM_HOOKS;
use crate::image::Image;

/// [`HOOKS_REEXEC_ENV`] as a C string, for `getenv` before `main`.
const HOOKS_REEXEC_MARKER: &std::ffi::CStr = c"JITRUN_HOOKS_REEXEC";
const _: () = assert!(same(HOOKS_REEXEC_ENV, "JITRUN_HOOKS_REEXEC"));

/// What each hook read at start answered (its variable's value, or "").
static ANSWERED_AT_START: [AtomicPtr<c_char>; PROGRAM_HOOKS.len()] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; PROGRAM_HOOKS.len()];
/// The program's definition of each hook called later, once linked.
static PROGRAMS: [AtomicUsize; PROGRAM_HOOKS.len()] = [const { AtomicUsize::new(0) }; PROGRAM_HOOKS.len()];

/// The answer to hook `index` read at start. Called by the runtime as
/// it starts, before `main`: no allocation (the sanitizer's allocator
/// is not ready), only `getenv`.
pub fn answer_at_start(index: usize) -> *const c_char {
    let answered = ANSWERED_AT_START[index].load(Ordering::Acquire);
    if !answered.is_null() {
        return answered;
    }
    // Only a restart's answers: the variables alone, from elsewhere,
    // must not change the runtime's options.
    // SAFETY: getenv with NUL-terminated names; the value lives as
    // long as the process's initial environment block.
    let restarted = unsafe { !libc::getenv(HOOKS_REEXEC_MARKER.as_ptr()).is_null() };
    // SAFETY: as above.
    let value =
        if restarted { unsafe { libc::getenv(PROGRAM_HOOKS[index].variable.as_ptr()) } } else { std::ptr::null_mut() };
    let value = if value.is_null() { c"".as_ptr() } else { value.cast_const() };
    ANSWERED_AT_START[index].store(value.cast_mut(), Ordering::Release);
    value
}

/// Takes the restart's answers before the environment loses them: a
/// runtime loaded during the link (UBSan's) asks only then.
pub fn keep_answers_from_restart() {
    for (index, hook) in PROGRAM_HOOKS.iter().enumerate() {
        if hook.read_at_start {
            answer_at_start(index);
        }
    }
}

/// The program's definition of hook `index`, if it has one.
fn program(index: usize) -> Option<usize> {
    Some(PROGRAMS[index].load(Ordering::Acquire)).filter(|&address| address != 0)
}

/// Whether `a` and `b` are the same text (for the checks below).
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The program's suppressions, read when LeakSanitizer checks; none by default.
pub fn lsan_default_suppressions() -> *const c_char {
    match program(6) {
        // SAFETY: the program's `const char *__lsan_default_suppressions(void)`.
        Some(f) => unsafe { std::mem::transmute::<usize, extern "C" fn() -> *const c_char>(f)() },
        None => c"".as_ptr(),
    }
}

/// Whether the program turns leak checking off; not by default.
pub fn lsan_is_turned_off() -> c_int {
    match program(7) {
        // SAFETY: the program's `int __lsan_is_turned_off(void)`.
        Some(f) => unsafe { std::mem::transmute::<usize, extern "C" fn() -> c_int>(f)() },
        None => 0,
    }
}

/// Called when AddressSanitizer reports an error; nothing by default.
pub fn asan_on_error() {
    if let Some(f) = program(8) {
        // SAFETY: the program's `void __asan_on_error(void)`.
        unsafe { std::mem::transmute::<usize, extern "C" fn()>(f)() }
    }
}

/// The program's hooks called later, recorded while its image lives:
/// dropping this forgets them (the runtimes' defaults answer again).
pub struct ProgramsHooks;

impl Drop for ProgramsHooks {
    fn drop(&mut self) {
        PROGRAMS.iter().for_each(|address| address.store(0, Ordering::Release));
    }
}

/// Gives the runtimes the program's hooks: records the definitions of
/// those called later, and restarts jitrun if a hook read at start
/// answers differently for the program (once; a program read from a
/// pipe cannot be read again: a warning then).
pub fn answer_with_the_programs(cli: &crate::cli::Cli, image: &Image) -> ProgramsHooks {
    let mut changes = Vec::new();
    for (index, hook) in PROGRAM_HOOKS.iter().enumerate() {
        let Some(address) = image.lookup(hook.name) else { continue };
        if !hook.runtime_is_loaded() {
            continue;
        }
        if !hook.read_at_start {
            PROGRAMS[index].store(address as usize, Ordering::Release);
            continue;
        }
        // SAFETY: a sanitizer hook is `const char *(void)`, which the
        // runtime calls before constructors run, as here.
        let answer = unsafe { image.call_string_function(hook.name) }.unwrap_or_default();
        // SAFETY: set by answer_at_start to a C string that lives on.
        let told = unsafe { std::ffi::CStr::from_ptr(answer_at_start(index)) };
        if answer != told.to_bytes() {
            changes.push((hook.variable.to_str().unwrap_or_default(), std::ffi::OsString::from_vec(answer)));
        }
    }
    if changes.is_empty() {
        return ProgramsHooks;
    }
    let names = changes.iter().map(|(v, _)| v.trim_start_matches("JITRUN_HOOK_")).collect::<Vec<_>>();
    match crate::cli::app::input_not_from_a_file(cli) {
        Some(pipe) => eprintln!(
            "jitrun: warning: the program's {} cannot take effect: the sanitizer read its options when jitrun \
             started, and {} cannot be read a second time (a pipe, not a file)",
            names.join(", "),
            pipe.display()
        ),
        None if restarted_with(HOOKS_REEXEC_ENV) => {
            eprintln!("jitrun: warning: the program's {} answered differently when asked again", names.join(", "))
        }
        None => reexec_with(&changes, HOOKS_REEXEC_ENV),
    }
    ProgramsHooks
}

/// Defines, in the executable that expands it (jitrun's `main.rs`), the
/// functions sanitizer runtimes call: each answers as this module decides.
#[macro_export]
macro_rules! program_hooks {
    () => {
        $crate::program_hooks!(@at_start __asan_default_options, 0);
        $crate::program_hooks!(@at_start __asan_default_suppressions, 1);
        $crate::program_hooks!(@at_start __lsan_default_options, 2);
        $crate::program_hooks!(@at_start __ubsan_default_options, 3);
        $crate::program_hooks!(@at_start __tsan_default_options, 4);
        $crate::program_hooks!(@at_start __tsan_default_suppressions, 5);
        const _: () = assert!($crate::cli::sanitizer_hooks::same(
            $crate::host::driver_runtime::PROGRAM_HOOKS[6].name,
            "__lsan_default_suppressions"
        ));
        const _: () =
            assert!($crate::cli::sanitizer_hooks::same($crate::host::driver_runtime::PROGRAM_HOOKS[7].name, "__lsan_is_turned_off"));
        const _: () =
            assert!($crate::cli::sanitizer_hooks::same($crate::host::driver_runtime::PROGRAM_HOOKS[8].name, "__asan_on_error"));
        /// The program's suppressions, read when LeakSanitizer checks; none by default.
        #[no_mangle]
        pub extern "C" fn __lsan_default_suppressions() -> *const std::ffi::c_char {
            $crate::cli::sanitizer_hooks::lsan_default_suppressions()
        }
        /// Whether the program turns leak checking off; not by default.
        #[no_mangle]
        pub extern "C" fn __lsan_is_turned_off() -> std::ffi::c_int {
            $crate::cli::sanitizer_hooks::lsan_is_turned_off()
        }
        /// Called when AddressSanitizer reports an error; nothing by default.
        #[no_mangle]
        pub extern "C" fn __asan_on_error() {
            $crate::cli::sanitizer_hooks::asan_on_error()
        }
    };
    // Hook `PROGRAM_HOOKS[$index]`, read as the runtime starts.
    (@at_start $name:ident, $index:expr) => {
        const _: () = assert!($crate::cli::sanitizer_hooks::same(
            stringify!($name),
            $crate::host::driver_runtime::PROGRAM_HOOKS[$index].name
        ));
        const _: () = assert!($crate::host::driver_runtime::PROGRAM_HOOKS[$index].read_at_start);
        #[no_mangle]
        pub extern "C" fn $name() -> *const std::ffi::c_char {
            $crate::cli::sanitizer_hooks::answer_at_start($index)
        }
    };
}
