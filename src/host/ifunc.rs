//! `STT_GNU_IFUNC` functions of the image, resolved as it is initialized.
//!
//! An IFUNC symbol's value is a resolver: a function that picks one of
//! several implementations (by CPU features, for GCC's `target_clones` or
//! glibc's string functions) and returns its address. A native link sends
//! every reference through a PLT entry whose GOT slot an
//! `R_X86_64_IRELATIVE` relocation fills with the resolver's answer at load
//! time. jitrun does the same: every reference goes to the IFUNC's stub
//! (`tables::plan`), and [`resolve_action`] calls each resolver once the
//! image is mapped and executable, before any constructor, and writes the
//! answer into the stub's GOT slot. Like the dynamic loader, the linking
//! process runs the resolvers, also for isolated runs, and, as for an
//! executable's, without the environment.

use anyhow::{bail, Result};

use crate::memory::ActionPair;

/// One IFUNC to resolve.
pub struct IfuncSlot {
    pub name: String,
    /// The resolver's address in the image.
    pub resolver: u64,
    /// The GOT slot its stub jumps through.
    pub got_slot: u64,
}

/// The finalize action that resolves every IFUNC of the image, in the order
/// given (a resolver may call an IFUNC resolved before it, as with
/// IRELATIVE relocations in order).
pub(crate) fn resolve_action(slots: Vec<IfuncSlot>) -> ActionPair {
    ActionPair::with_state("resolve IFUNCs", move || resolve_all(&slots), |()| {})
}

extern "C" {
    static mut environ: *mut *mut std::ffi::c_char;
}

/// Takes the environment away while it lives: the dynamic loader runs an
/// executable's resolvers (its IRELATIVE relocations) before the C library
/// has set `environ` up, so a resolver that reads it (`getenv`) natively
/// finds nothing and picks its default implementation; it must pick the
/// same one here. jitrun's own threads read the environment only at start.
struct EnvironmentHidden(*mut *mut std::ffi::c_char);

impl EnvironmentHidden {
    fn new() -> EnvironmentHidden {
        // SAFETY: libc's environ pointer, swapped on this thread while no
        // other of jitrun's threads reads it; restored on drop.
        unsafe {
            let environment = std::ptr::addr_of_mut!(environ);
            let taken = environment.read();
            environment.write(std::ptr::null_mut());
            EnvironmentHidden(taken)
        }
    }
}

impl Drop for EnvironmentHidden {
    fn drop(&mut self) {
        // SAFETY: as in `new`: the pointer it took.
        unsafe { std::ptr::addr_of_mut!(environ).write(self.0) };
    }
}

fn resolve_all(slots: &[IfuncSlot]) -> Result<()> {
    let _hidden = EnvironmentHidden::new();
    let (hwcap, features) = crate::support::machine::ifunc_resolver_arguments();
    for slot in slots {
        // SAFETY: `resolver` is the code the object's IFUNC symbol points
        // at, in the image, now executable with every fixup applied; it
        // takes what glibc passes resolvers on this CPU (nothing on x86-64,
        // which ignores the two arguments; on aarch64 the CPU's features
        // and a pointer to more of them) and returns the implementation's
        // address.
        let resolver = unsafe { std::mem::transmute::<u64, extern "C" fn(u64, *const u64) -> u64>(slot.resolver) };
        let implementation = resolver(hwcap, features.as_ptr());
        log::debug!("IFUNC {} resolved to {:#x}", slot.name, implementation);
        if !crate::host::copyreloc::write_protected_word(slot.got_slot, implementation) {
            bail!("cannot write the GOT slot of IFUNC {} at {:#x}", slot.name, slot.got_slot);
        }
    }
    Ok(())
}
