//! The image's `.eh_frame` registered with this process's unwinders:
//! jitrun's own (libgcc_eh, linked in by build.rs) and, when loaded, the
//! shared libgcc_s that C++ exceptions and `backtrace()` use.

use crate::host::loader::{lookup_global, SharedLibrary};

extern "C" {
    // libgcc's unwinder, linked into jitrun (build.rs): crash reports walk
    // the image's frames with it, whatever the program loads.
    fn __register_frame(begin: *const u8);
    fn __deregister_frame(begin: *const u8);
    fn _Unwind_Find_FDE(pc: *mut std::ffi::c_void, bases: *mut [usize; 3]) -> *const std::ffi::c_void;
}

type FrameTableFn = unsafe extern "C" fn(*const u8);

/// The process's shared unwinder, libgcc_s, when the program loaded it: C++
/// exceptions, thread cancellation and `backtrace()` unwind through that
/// copy, which has a registry of its own.
struct SharedUnwinder {
    library: SharedLibrary,
    deregister: FrameTableFn,
}

/// An image's `.eh_frame` as registered with each unwinder in the process;
/// dropping it unregisters (while libgcc_s is still held open).
pub struct Registration {
    eh_frame: u64,
    shared: Option<SharedRegistration>,
}

/// Registers the image's `.eh_frame` (terminated by a zero word) with
/// jitrun's unwinder and, if loaded and `with_shared_unwinder`, with
/// libgcc_s's (see [`register_with_shared_unwinder`]).
///
/// Without libgcc_s (a sanitizer's process, see [`register_with_shared_unwinder`])
/// jitrun's unwinder sorts the table now: it would on the first lookup,
/// allocating, and that is a crash report's, in a signal handler, where
/// ThreadSanitizer reports every allocation as a signal-unsafe call.
pub fn register(eh_frame: u64, with_shared_unwinder: bool) -> Registration {
    // SAFETY: `eh_frame` points to a complete, relocated `.eh_frame` section
    // with a zero terminator, which stays mapped until the registration drops.
    unsafe { __register_frame(eh_frame as *const u8) };
    let shared = if with_shared_unwinder { register_with_shared_unwinder(eh_frame) } else { None };
    if !with_shared_unwinder {
        let mut bases = [0usize; 3];
        // SAFETY: any lookup classifies (sorts) every registered table;
        // the pc need not be found, and `bases` is the struct it fills.
        unsafe { _Unwind_Find_FDE(eh_frame as *mut std::ffi::c_void, &mut bases) };
    }
    Registration { eh_frame, shared }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // libgcc_s's registration first, as it was made last.
        drop(self.shared.take());
        // SAFETY: the same pointer was registered by `register`.
        unsafe { __deregister_frame(self.eh_frame as *const u8) }
    }
}

/// An `.eh_frame` registered with libgcc_s; dropping it unregisters.
pub struct SharedRegistration {
    eh_frame: u64,
    unwinder: SharedUnwinder,
}

/// Registers `.eh_frame` (as for [`register`]) with libgcc_s, if loaded.
/// libgcc_s sorts a registered table the first time it searches it, with
/// malloc, holding its lock: a malloc that unwinds (AddressSanitizer's with
/// `fast_unwind_on_malloc=0`) then waits for that lock forever. Hence the
/// module a sanitizer sees carries a search table instead
/// (`host::list_image_as_module`).
pub fn register_with_shared_unwinder(eh_frame: u64) -> Option<SharedRegistration> {
    // jitrun's own unwinder is not exported, so a global lookup finds only
    // a loaded libgcc_s.
    let register = lookup_global(c"__register_frame")?;
    let library = SharedLibrary::containing(register)?;
    let deregister = library.lookup(c"__deregister_frame")?;
    if register == __register_frame as *const () as u64 {
        return None; // jitrun itself uses libgcc_s (no static unwinder)
    }
    // SAFETY: both are libgcc_s's functions of this signature, which the
    // held library handle keeps mapped.
    let (register, deregister) = unsafe {
        (std::mem::transmute::<u64, FrameTableFn>(register), std::mem::transmute::<u64, FrameTableFn>(deregister))
    };
    // SAFETY: as for jitrun's own registration in `register`.
    unsafe { register(eh_frame as *const u8) };
    Some(SharedRegistration { eh_frame, unwinder: SharedUnwinder { library, deregister } })
}

impl Drop for SharedRegistration {
    fn drop(&mut self) {
        // SAFETY: registered with this unwinder by
        // `register_with_shared_unwinder`; the library is still open
        // (dropped after this).
        unsafe { (self.unwinder.deregister)(self.eh_frame as *const u8) };
        log::trace!("eh_frame unregistered from {}", self.unwinder.library.path.display());
    }
}
