//! Thread-local storage for loaded images.
//!
//! The design, chosen so that every access model works in every thread,
//! including threads created later by any means:
//!
//! The image's TLS template (`.tdata` then `.tbss`) becomes a real TLS
//! module of the C library. We write a tiny ELF shared object whose only
//! content is a `PT_TLS` segment holding the relocated template, flagged
//! `DF_STATIC_TLS`, into a memfd and `dlopen` it. glibc then
//! - gives it a module id (for general- and local-dynamic accesses through
//!   `__tls_get_addr`),
//! - places its block in the static TLS area at a fixed offset from the
//!   thread pointer in every thread (for local-exec `TPOFF32`, initial-exec
//!   `GOTTPOFF` and our TLS descriptors, which return that offset),
//! - copies the template into the block of every existing thread, and of
//!   every thread created afterwards (pthread_create, std::thread, ...).
//!
//! The hard limit is glibc's static TLS surplus (a few KiB by default).
//! When it is exhausted, `dlopen` fails and [`TlsExhausted`] tells the CLI to
//! re-run itself with a larger `glibc.rtld.optional_static_tls` tunable.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use anyhow::{anyhow, bail, Result};

use crate::host::SharedLibrary;
use crate::layout::TlsLayout;
use crate::mapper::ActionPair;

/// The image's TLS module once loaded.
pub struct TlsModule {
    /// glibc's module id, the first word of a `tls_index`.
    pub module_id: u64,
    /// Offset of the block from the thread pointer, the same in every thread.
    pub tp_offset: i64,
    /// Address of the TLS descriptor function for static TLS (set by the linker).
    pub descriptor_resolver: u64,
    library: SharedLibrary,
}

/// The static TLS area has no room for this image's thread-locals.
#[derive(Debug)]
pub struct TlsExhausted {
    pub needed: u64,
}

impl std::fmt::Display for TlsExhausted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the C library's static TLS area has no room for {} bytes of thread-local variables", self.needed)
    }
}

impl std::error::Error for TlsExhausted {}

const TLS_IMAGE_OFFSET: u64 = 0x200;

/// Builds the shared object that carries the template.
fn build_tls_object(layout: &TlsLayout, template: &[u8]) -> Vec<u8> {
    let align = layout.align.max(1);
    let tls_off = TLS_IMAGE_OFFSET.div_ceil(align) * align;
    let file_size = tls_off + layout.init_size;
    let mut f = vec![0u8; file_size as usize];
    let put16 = |f: &mut Vec<u8>, at: usize, v: u16| f[at..at + 2].copy_from_slice(&v.to_le_bytes());
    let put32 = |f: &mut Vec<u8>, at: usize, v: u32| f[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let put64 = |f: &mut Vec<u8>, at: usize, v: u64| f[at..at + 8].copy_from_slice(&v.to_le_bytes());
    // ELF header.
    f[..16].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    put16(&mut f, 16, object::elf::ET_DYN);
    put16(&mut f, 18, object::elf::EM_X86_64);
    put32(&mut f, 20, 1);
    put64(&mut f, 32, 64); // e_phoff
    put16(&mut f, 52, 64); // e_ehsize
    put16(&mut f, 54, 56); // e_phentsize
    put16(&mut f, 56, 3); // e_phnum
    put16(&mut f, 58, 64); // e_shentsize
    let dynamic = 0x100u64;
    let symtab = 0x1a0u64;
    let strtab = 0x1b8u64;
    let rela = 0x1c0u64;
    let phdr = |f: &mut Vec<u8>, i: usize, p_type: u32, flags: u32, off: u64, filesz: u64, memsz: u64, align: u64| {
        let at = 64 + 56 * i;
        put32(f, at, p_type);
        put32(f, at + 4, flags);
        put64(f, at + 8, off);
        put64(f, at + 16, off);
        put64(f, at + 24, off);
        put64(f, at + 32, filesz);
        put64(f, at + 40, memsz);
        put64(f, at + 48, align);
    };
    let rw = object::elf::PF_R | object::elf::PF_W;
    phdr(&mut f, 0, object::elf::PT_LOAD, rw, 0, file_size, file_size, 0x1000);
    phdr(&mut f, 1, object::elf::PT_DYNAMIC, rw, dynamic, 0x80, 0x80, 8);
    phdr(&mut f, 2, object::elf::PT_TLS, object::elf::PF_R, tls_off, layout.init_size, layout.size, align);
    let dyn_entries: [(u32, u64); 9] = [
        (object::elf::DT_STRTAB, strtab),
        (object::elf::DT_SYMTAB, symtab),
        (object::elf::DT_STRSZ, 1),
        (object::elf::DT_SYMENT, 24),
        (object::elf::DT_RELA, rela),
        (object::elf::DT_RELASZ, 24),
        (object::elf::DT_RELAENT, 24),
        (object::elf::DT_FLAGS, u64::from(object::elf::DF_STATIC_TLS)),
        (object::elf::DT_NULL, 0),
    ];
    for (i, (tag, val)) in dyn_entries.iter().enumerate() {
        put64(&mut f, dynamic as usize + 16 * i, u64::from(*tag));
        put64(&mut f, dynamic as usize + 16 * i + 8, *val);
    }
    // One R_X86_64_TPOFF64 against the module itself: the loader must then
    // place the block in static TLS (or fail), and it writes the block's
    // thread-pointer offset into TPOFF_WORD for us to read.
    put64(&mut f, rela as usize, TPOFF_WORD);
    put64(&mut f, rela as usize + 8, u64::from(object::elf::R_X86_64_TPOFF64));
    put64(&mut f, rela as usize + 16, 0);
    f[tls_off as usize..].copy_from_slice(&template[..layout.init_size as usize]);
    f
}

/// Where the loader writes the module's thread-pointer offset.
const TPOFF_WORD: u64 = 0x1d8;

/// Loads the template as a TLS module. `template` must be relocated.
pub fn allocate(layout: &TlsLayout, template: &[u8]) -> Result<TlsModule> {
    let object = build_tls_object(layout, template);
    let name = CString::new("jitrun-tls").unwrap();
    // SAFETY: memfd_create with a valid name; the fd is owned below.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        bail!("memfd_create for the TLS module: {}", std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd);
    file.write_all(&object)?;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let library = match SharedLibrary::open(std::path::Path::new(&path)) {
        Ok(lib) => lib,
        Err(e) if format!("{:#}", e).contains("static TLS") => {
            return Err(anyhow!(TlsExhausted { needed: layout.size }))
        }
        Err(e) => return Err(e.context("cannot load the TLS module")),
    };
    drop(file);
    let mut module_id: libc::size_t = 0;
    let mut link_map: *const u64 = std::ptr::null();
    // SAFETY: dlinfo on a live handle with out-pointers of the documented
    // types; `struct link_map` starts with `l_addr`, the load bias, and the
    // loader has written the TPOFF64 relocation into our RW segment.
    let tp_offset = unsafe {
        if libc::dlinfo(library.handle(), libc::RTLD_DI_TLS_MODID, &mut module_id as *mut _ as *mut libc::c_void) != 0
            || libc::dlinfo(library.handle(), libc::RTLD_DI_LINKMAP, &mut link_map as *mut _ as *mut libc::c_void) != 0
            || link_map.is_null()
            || module_id == 0
        {
            bail!("the C library did not register the TLS module");
        }
        std::ptr::read((*link_map + TPOFF_WORD) as *const i64)
    };
    log::debug!("TLS module {}: {} bytes at tp{:+#x}", module_id, layout.size, tp_offset);
    Ok(TlsModule { module_id: module_id as u64, tp_offset, descriptor_resolver: 0, library })
}

/// The dealloc half: the module is unloaded when the image goes.
pub fn action(module: TlsModule) -> ActionPair {
    ActionPair { name: "TLS module", finalize: Box::new(|| Ok(())), dealloc: Box::new(move || drop(module.library)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_pointer() -> u64 {
        let tp: u64;
        // SAFETY: on x86-64 Linux %fs:0 holds the thread control block's own
        // address (the thread pointer); reading it has no side effects.
        unsafe { std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags)) };
        tp
    }

    #[test]
    fn module_gives_every_thread_the_template() {
        let layout = TlsLayout { offsets: vec![], init_size: 8, size: 16, align: 8 };
        let template = [1u8, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0];
        let module = allocate(&layout, &template).unwrap();
        let read = |off: i64| {
            let addr = (thread_pointer() as i64 + module.tp_offset + off) as *const u64;
            // SAFETY: the static block of this thread, 16 bytes.
            unsafe { std::ptr::read(addr) }
        };
        assert_eq!(read(0), u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(read(8), 0);
        let off = module.tp_offset;
        let other = std::thread::spawn(move || {
            let addr = (thread_pointer() as i64 + off) as *const u64;
            // SAFETY: glibc made the block for this thread too.
            unsafe { std::ptr::read(addr) }
        })
        .join()
        .unwrap();
        assert_eq!(other, u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]));
    }
}
