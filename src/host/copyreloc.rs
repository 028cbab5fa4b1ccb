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

/// A library variable at `original` with a copy of `size` bytes in the
/// image at `copy`.
pub struct CopyRelocation {
    pub name: String,
    pub original: u64,
    pub copy: u64,
    pub size: u64,
}

/// Copies each variable into its copy and binds every loaded module's GOT
/// entry for it to the copy; returns the entries changed.
///
/// Entries are found by the address they hold, not by name: libc reaches
/// `environ` through `__environ` and `tzname` through `__tzname`, aliases
/// of one variable, and ld binds every alias of a copied variable to the
/// copy. They are written together (see [`write_protected_words`]).
pub fn install(copies: &[CopyRelocation]) -> Vec<PatchedSlot> {
    let mut entries: Vec<(u64, &CopyRelocation)> = Vec::new();
    for copy in copies {
        // SAFETY: `original` is a live variable of `size` bytes in a
        // loaded library (dladdr1 told us its size) and `copy` a writable
        // slot of the same size inside the image, not yet visible to any
        // code.
        unsafe { std::ptr::copy_nonoverlapping(copy.original as *const u8, copy.copy as *mut u8, copy.size as usize) };
        note_copy(copy.original, copy.copy);
        entries.extend(got_slots_for(copy.original).into_iter().map(|slot| (slot, copy)));
    }
    let words: Vec<(u64, u64)> = entries.iter().map(|&(slot, copy)| (slot, copy.copy)).collect();
    let written = write_protected_words(&words);
    // Counted per copy only for the log: a scan of every entry per copy.
    if log::log_enabled!(log::Level::Debug) {
        for copy in copies {
            let count = entries.iter().zip(&written).filter(|&(&(_, c), &w)| w && std::ptr::eq(c, copy)).count();
            log::debug!("copy relocation for {}: {} GOT entries now point into the image", copy.name, count);
        }
    }
    entries
        .iter()
        .zip(written)
        .filter(|&(_, written)| written)
        .map(|(&(slot, copy), _)| PatchedSlot { slot, old: copy.original })
        .collect()
}

/// Restores the GOT entries and copies each value back to the library's
/// variable, so the process goes on as if the image had never been there.
pub fn uninstall(copies: &[CopyRelocation], patched: Vec<PatchedSlot>) {
    for copy in copies {
        forget_copy(copy.original, copy.copy);
    }
    let words: Vec<(u64, u64)> = patched.iter().map(|p| (p.slot, p.old)).collect();
    write_protected_words(&words);
    for copy in copies {
        // A read-only original (a typeinfo object in a library's RELRO,
        // say) cannot have a newer value to hand back, and writing it
        // would fault.
        if !is_writable(copy.original, copy.size) {
            continue;
        }
        // SAFETY: both ranges are still mapped (the image is released
        // after its dealloc actions run) and of `size` bytes, and the
        // original's pages are writable (checked just above).
        unsafe { std::ptr::copy_nonoverlapping(copy.copy as *const u8, copy.original as *mut u8, copy.size as usize) };
    }
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
    write_protected_words(&[(addr, value)])[0]
}

/// Writes each `(address, value)` word, where some may sit in read-only
/// (RELRO) pages: such a page is made writable once for all its words,
/// then given its protection back (two `mprotect` calls a page, ~5 µs
/// each in a VM, rather than two a word: a program's stdin, stdout and
/// stderr copies re-point three entries on one page of libc's). Says, for
/// each word, whether it was written.
pub(crate) fn write_protected_words(writes: &[(u64, u64)]) -> Vec<bool> {
    let page = crate::support::page_size();
    let mut order: Vec<usize> = (0..writes.len()).collect();
    order.sort_by_key(|&i| writes[i].0);
    let mut written = vec![false; writes.len()];
    for same_page in order.chunk_by(|&a, &b| writes[a].0 / page == writes[b].0 / page) {
        let first = writes[same_page[0]].0;
        let protection = crate::host::loader::loader_protection(first)
            .or_else(|| Some(region::query(first as *const u8).ok()?.protection()));
        let Some(old) = protection else { continue };
        let page_start = first / page * page;
        let read_only = !old.contains(region::Protection::WRITE);
        // SAFETY: every word is a GOT entry (or jitrun's own slot) of a
        // loaded module, aligned, on this one page; making the page
        // writable for these stores and restoring its protection changes
        // nothing else.
        unsafe {
            if read_only
                && region::protect(page_start as *const u8, page as usize, old | region::Protection::WRITE).is_err()
            {
                continue;
            }
            for &i in same_page {
                std::ptr::write_volatile(writes[i].0 as *mut u64, writes[i].1);
                written[i] = true;
            }
            if read_only {
                let _ = region::protect(page_start as *const u8, page as usize, old);
            }
        }
    }
    written
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

    #[test]
    fn words_on_a_read_only_page_are_written_and_the_page_stays_read_only() {
        let page = crate::support::page_size() as usize;
        // SAFETY: a fresh private mapping of two pages, this test's own.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        } as u64;
        assert_ne!(base, libc::MAP_FAILED as u64);
        let read_only = base + page as u64;
        // SAFETY: the mapping's second page.
        unsafe { region::protect(read_only as *const u8, page, region::Protection::READ) }.unwrap();
        // Out of order, and two on the read-only page: the later write of
        // one address wins, as when written one by one.
        let words = [(read_only + 64, 3), (base + 8, 1), (read_only + 16, 2), (read_only + 64, 4)];
        assert_eq!(write_protected_words(&words), [true; 4]);
        // SAFETY: reading the mapping's words.
        let read = |addr: u64| unsafe { std::ptr::read_volatile(addr as *const u64) };
        assert_eq!([read(base + 8), read(read_only + 16), read(read_only + 64)], [1, 2, 4]);
        let protection = region::query(read_only as *const u8).unwrap().protection();
        assert_eq!(protection, region::Protection::READ);
        // SAFETY: unmapping the test's own mapping.
        unsafe { libc::munmap(base as *mut libc::c_void, 2 * page) };
    }

    static READ_ONLY: [u8; 16] = [7; 16];

    #[test]
    fn uninstall_leaves_read_only_originals_alone() {
        let original = READ_ONLY.as_ptr() as u64;
        assert!(!is_writable(original, 16));
        let copy = [9u8; 16];
        let of = |original: u64| CopyRelocation { name: "v".into(), original, copy: copy.as_ptr() as u64, size: 16 };
        // Would fault if it wrote back into .rodata.
        uninstall(&[of(original)], Vec::new());
        assert_eq!(READ_ONLY, [7; 16]);

        let mut writable = [1u8; 16];
        assert!(is_writable(writable.as_ptr() as u64, 16));
        uninstall(&[of(writable.as_mut_ptr() as u64)], Vec::new());
        assert_eq!(writable, [9; 16]);
    }
}
