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
//! process runs the resolvers, also for isolated runs.

use anyhow::{bail, Result};

use crate::mapper::ActionPair;

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

fn resolve_all(slots: &[IfuncSlot]) -> Result<()> {
    for slot in slots {
        // SAFETY: `resolver` is the code the object's IFUNC symbol points
        // at, in the image, now executable with every fixup applied; on
        // x86-64 resolvers take no arguments (glibc calls them so) and
        // return the implementation's address.
        let resolver = unsafe { std::mem::transmute::<u64, extern "C" fn() -> u64>(slot.resolver) };
        let implementation = resolver();
        log::debug!("IFUNC {} resolved to {:#x}", slot.name, implementation);
        if !crate::copyreloc::write_protected_word(slot.got_slot, implementation) {
            bail!("cannot write the GOT slot of IFUNC {} at {:#x}", slot.name, slot.got_slot);
        }
    }
    Ok(())
}
