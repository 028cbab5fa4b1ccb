//! Copy relocations, done late.
//!
//! Code built with `-fno-pic` (and gcc's `-fPIE`) reads a library variable
//! such as `stdout` or `optind` with a 32-bit displacement. A native link
//! satisfies that with a copy relocation (`R_X86_64_COPY`): the variable gets a copy inside the
//! executable and every library's GOT entry for it is bound to the copy.
//! When the image cannot reach the library's variable we do the same: copy
//! its current value into the image, re-point the GOT entries of every
//! loaded module at the copy, and undo both on unload.

use std::sync::atomic::{AtomicU64, Ordering};

/// Live copies as (original, copy) address pairs, 0 for a free entry:
/// what jitrun itself writes to a library variable (the process names it
/// sets for each run, see `image::ProcessNames`) goes to its copy too,
/// which is what libraries and the program read once the copy exists.
/// Lock-free, for a forked child.
const COPIES: usize = 64;
static LIVE_COPIES: [[AtomicU64; 2]; COPIES] = [const { [AtomicU64::new(0), AtomicU64::new(0)] }; COPIES];

fn note_copy(original: u64, copy: u64) {
    for entry in &LIVE_COPIES {
        if entry[0].compare_exchange(0, original, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            entry[1].store(copy, Ordering::Release);
            return;
        }
    }
    log::debug!("more than {} copied variables: jitrun's writes reach only the originals", COPIES);
}

fn forget_copy(original: u64, copy: u64) {
    for entry in &LIVE_COPIES {
        if entry[0].load(Ordering::Acquire) == original && entry[1].load(Ordering::Acquire) == copy {
            entry[1].store(0, Ordering::Release);
            entry[0].store(0, Ordering::Release);
        }
    }
}

/// The image's copy of the library variable at `original`, if one is live.
pub(crate) fn copy_of(original: u64) -> Option<u64> {
    LIVE_COPIES
        .iter()
        .find(|entry| entry[0].load(Ordering::Acquire) == original)
        .map(|entry| entry[1].load(Ordering::Acquire))
        .filter(|&copy| copy != 0)
}

/// One GOT entry that was re-pointed.
pub struct PatchedSlot {
    slot: u64,
    old: u64,
}

/// Copies `size` bytes of the variable at `original` into `copy` and binds
/// every loaded module's GOT entry for it to the copy.
///
/// Entries are found by the address they hold, not by name: libc reaches
/// `environ` through `__environ` and `tzname` through `__tzname`, aliases
/// of one variable, and ld binds every alias of a copied variable to the
/// copy.
pub fn install(name: &str, original: u64, copy: u64, size: u64) -> Vec<PatchedSlot> {
    // SAFETY: `original` is a live variable of `size` bytes in a loaded
    // library (dladdr1 told us its size) and `copy` a writable slot of the
    // same size inside the image, not yet visible to any code.
    unsafe { std::ptr::copy_nonoverlapping(original as *const u8, copy as *mut u8, size as usize) };
    note_copy(original, copy);
    let mut patched = Vec::new();
    for slot in got_slots_for(original) {
        if write_protected_word(slot, copy) {
            patched.push(PatchedSlot { slot, old: original });
        }
    }
    log::debug!("copy relocation for {}: {} GOT entries now point into the image", name, patched.len());
    patched
}

/// Copies the value back to the library's variable and restores the GOT
/// entries, so the process goes on as if the image had never been there.
pub fn uninstall(original: u64, copy: u64, size: u64, patched: Vec<PatchedSlot>) {
    forget_copy(original, copy);
    for p in patched {
        write_protected_word(p.slot, p.old);
    }
    // A read-only original (a typeinfo object in a library's RELRO, say)
    // cannot have a newer value to hand back, and writing it would fault.
    if !is_writable(original, size) {
        return;
    }
    // SAFETY: both ranges are still mapped (the image is released after its
    // dealloc actions run) and of `size` bytes, and the original's pages are
    // writable (checked just above).
    unsafe { std::ptr::copy_nonoverlapping(copy as *const u8, original as *mut u8, size as usize) };
}

/// Whether every page of `[addr, addr + size)` is mapped writable.
fn is_writable(addr: u64, size: u64) -> bool {
    if size == 0 {
        return true;
    }
    let Ok(regions) = region::query_range(addr as *const u8, size as usize) else {
        return false;
    };
    let mut covered_to = addr;
    for r in regions {
        let Ok(r) = r else { return false };
        let (start, end) = (r.as_ptr::<u8>() as u64, r.as_ptr::<u8>() as u64 + r.len() as u64);
        if start > covered_to || !r.protection().contains(region::Protection::WRITE) {
            return false;
        }
        covered_to = end;
    }
    covered_to >= addr + size
}

/// Writes a word that may sit in a read-only (RELRO) page, restoring the
/// page's protection afterwards.
pub(crate) fn write_protected_word(addr: u64, value: u64) -> bool {
    let protection = crate::host::loader::loader_protection(addr)
        .or_else(|| Some(region::query(addr as *const u8).ok()?.protection()));
    let Some(old) = protection else {
        return false;
    };
    // SAFETY: `addr` is a GOT entry of a loaded module found through its
    // dynamic relocations; making its page writable for one aligned store
    // and restoring the protection changes nothing else.
    unsafe {
        if !old.contains(region::Protection::WRITE)
            && region::protect(addr as *const u8, 8, old | region::Protection::WRITE).is_err()
        {
            return false;
        }
        std::ptr::write_volatile(addr as *mut u64, value);
        if !old.contains(region::Protection::WRITE) {
            let _ = region::protect(addr as *const u8, 8, old);
        }
    }
    true
}

/// GOT entries (`GLOB_DAT` / an absolute word with no addend) of every
/// loaded module that currently hold `original`, whatever name (the
/// variable's or an alias's) their relocation uses.
fn got_slots_for(original: u64) -> Vec<u64> {
    let mut found = Vec::new();
    crate::host::loader::for_each_loaded_object(|module| {
        // SAFETY: the loader describes a module of this process, and holds
        // its lock during the visit.
        unsafe { module_got_slots(module.bias, module.headers, original, &mut found) };
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// The slots of one module's dynamic relocations that hold `original`.
///
/// # Safety
/// `bias` and `phdrs` describe a module loaded in this process, which the
/// loader does not unload meanwhile (it holds its lock).
unsafe fn module_got_slots(bias: u64, phdrs: &[libc::Elf64_Phdr], original: u64, found: &mut Vec<u64>) {
    // SAFETY: the caller's contract.
    let Some(tables) = (unsafe { crate::host::loader::dynamic_tables(bias, phdrs) }) else { return };
    // A variable's entries are GLOB_DAT or an absolute word.
    let holds_original = |slot: u64, kind: crate::arch::DynamicRelocation, _| {
        // SAFETY: r_offset of a loaded module's dynamic relocation is mapped.
        if kind != crate::arch::DynamicRelocation::JumpSlot
            && unsafe { std::ptr::read_volatile(slot as *const u64) } == original
        {
            found.push(slot);
        }
    };
    // SAFETY: the caller's contract.
    unsafe { tables.for_each_got_entry(bias, holds_original) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Address of a libc variable as the dynamic loader resolves it.
    fn libc_variable(name: &std::ffi::CStr) -> u64 {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
        let addr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) } as u64;
        assert_ne!(addr, 0, "{:?} not found", name);
        addr
    }

    #[test]
    fn finds_got_entries_that_use_an_alias() {
        // libc's own code reads `environ` through a GOT entry bound to
        // `__environ`, the same variable under another name.
        let environ = libc_variable(c"environ");
        assert_eq!(environ, libc_variable(c"__environ"));
        assert!(!got_slots_for(environ).is_empty(), "libc's GOT entry for __environ not found");
        let tzname = libc_variable(c"tzname");
        assert!(!got_slots_for(tzname).is_empty(), "libc's GOT entry for __tzname not found");
    }

    #[test]
    fn finds_nothing_for_an_address_no_module_points_at() {
        let local = Box::new(0u64);
        assert!(got_slots_for(&*local as *const u64 as u64).is_empty());
    }

    static READ_ONLY: [u8; 16] = [7; 16];

    #[test]
    fn uninstall_leaves_read_only_originals_alone() {
        let original = READ_ONLY.as_ptr() as u64;
        assert!(!is_writable(original, 16));
        let copy = [9u8; 16];
        // Would fault if it wrote back into .rodata.
        uninstall(original, copy.as_ptr() as u64, 16, Vec::new());
        assert_eq!(READ_ONLY, [7; 16]);

        let mut writable = [1u8; 16];
        assert!(is_writable(writable.as_ptr() as u64, 16));
        uninstall(writable.as_mut_ptr() as u64, copy.as_ptr() as u64, 16, Vec::new());
        assert_eq!(writable, [9; 16]);
    }
}
