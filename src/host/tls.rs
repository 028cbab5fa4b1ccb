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

use crate::arch::DynamicRelocation;
use crate::graph::fixups::{ExternalTls, TlsPlacement};
use std::ffi::CString;
use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::graph::layout::TlsLayout;
use crate::host::loader::SharedLibrary;
use crate::host::tls_pool::{self, StaticBlock};
use crate::memory::ActionPair;

/// The alignment of jitrun's own thread-local block, which makes it that
/// of every thread's static TLS area: glibc places a module loaded later
/// (the image's) in static TLS only if its alignment is at most that of
/// the modules loaded at start-up (else the thread control block's 64
/// bytes). A native executable's thread-locals count among those, so a
/// program with `__thread char buffer[N] __attribute__((aligned(128)))`
/// runs natively, and with this under jitrun too. Not more: glibc takes
/// each thread's static TLS area out of the stack size the program asked
/// for, and the alignment pads that area, in every thread (page-aligned, a
/// thread given 64 KiB had 9.8 KB less stack than natively, and
/// micropython's recursion test overflowed; at 128, 450 bytes less). The
/// `jitrun` executable aligns its block so (`main.rs`); a program that
/// embeds the library gets 64 unless it does the same.
pub const STATIC_TLS_ALIGNMENT: u64 = 128;

/// The image's TLS module once loaded.
pub struct TlsModule {
    /// Where the image's block and the libraries' variables are: glibc's
    /// module id and the block's thread-pointer offset, the TLS descriptor
    /// function (set by the linker), the external variables in request
    /// order.
    pub placement: TlsPlacement,
    /// The image's own block in static TLS (fresh or reused, see
    /// [`crate::host::tls_pool`]); returned to the pool when dropped.
    #[allow(dead_code)] // held for its Drop
    block: Option<StaticBlock>,
    /// A module that only asks for external variables.
    #[allow(dead_code)] // held for its Drop
    library: Option<SharedLibrary>,
}

/// Thread-local variables aligned past the static TLS area (see
/// [`STATIC_TLS_ALIGNMENT`]): the CLI starts jitrun again with a module of
/// that alignment preloaded ([`alignment_module`]), which raises the
/// area's alignment to it, in that process only.
#[derive(Debug)]
pub struct TlsOverAligned {
    pub align: u64,
}

impl std::fmt::Display for TlsOverAligned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "thread-local variables aligned to {} bytes: the C library's static TLS is aligned to {} at most",
            self.align,
            static_tls_alignment()
        )
    }
}

impl std::error::Error for TlsOverAligned {}

/// The alignment a preloaded [`alignment_module`] gave the static TLS area.
static RAISED_ALIGNMENT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Records that a module aligned to `align` was preloaded (a restart's).
pub fn note_static_tls_alignment(align: u64) {
    RAISED_ALIGNMENT.fetch_max(align, std::sync::atomic::Ordering::Relaxed);
}

/// What the static TLS area is aligned to in this process.
fn static_tls_alignment() -> u64 {
    STATIC_TLS_ALIGNMENT.max(RAISED_ALIGNMENT.load(std::sync::atomic::Ordering::Relaxed))
}

/// A shared object whose only content is one byte of thread-local data
/// aligned to `align`. Loaded at start-up (`LD_PRELOAD`), it raises the
/// alignment of every thread's static TLS area to `align`, as a native
/// executable's own over-aligned thread-locals do: a padding every thread
/// pays for, so only for a program that needs it.
pub fn alignment_module(align: u64) -> Vec<u8> {
    let layout = TlsLayout { offsets: Vec::new(), init_size: 1, size: 1, align };
    build_tls_object(&layout, &[0], &[], None).0
}

/// Where generated modules are written to be loaded: tmpfs when there is
/// one, so that nothing touches a disk.
pub fn generated_module_dir() -> std::path::PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
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

/// Builds the shared object that carries the template.
/// A thread-local variable of a shared library that the image accesses.
#[derive(Clone, Debug)]
pub struct ExternalTlsRequest {
    pub name: String,
    /// Needs the variable's thread-pointer offset (local-exec, initial-exec,
    /// descriptors): the library's block must then be in static TLS.
    pub needs_tp_offset: bool,
}

/// Little-endian writer for the generated object.
struct Writer(Vec<u8>);

impl Writer {
    fn put(&mut self, at: u64, bytes: &[u8]) {
        self.0[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    }
    fn u16(&mut self, at: u64, v: u16) {
        self.put(at, &v.to_le_bytes());
    }
    fn u32(&mut self, at: u64, v: u32) {
        self.put(at, &v.to_le_bytes());
    }
    fn u64(&mut self, at: u64, v: u64) {
        self.put(at, &v.to_le_bytes());
    }
}

/// Where things sit in the generated object (all offsets equal addresses).
struct TlsObjectLayout {
    dynamic: u64,
    symtab: u64,
    strtab: u64,
    strsz: u64,
    rela: u64,
    relasz: u64,
    /// The words the loader fills in: the image's own TP offset, then
    /// `[tp offset, module id, offset]` per external request.
    results: u64,
    tls_image: u64,
    file_size: u64,
}

const RESULT_WORDS_PER_EXTERNAL: u64 = 3;

fn plan_object(layout: &TlsLayout, externals: &[ExternalTlsRequest], needed: Option<&str>) -> TlsObjectLayout {
    let n = externals.len() as u64;
    let dynamic = 0x100;
    let symtab = dynamic + 16 * 10;
    let strtab = symtab + 24 * (1 + n);
    let strsz =
        1 + externals.iter().map(|e| e.name.len() as u64 + 1).sum::<u64>() + needed.map_or(0, |n| n.len() as u64 + 1);
    let rela = (strtab + strsz).div_ceil(8) * 8;
    let relasz = 24 * (1 + RESULT_WORDS_PER_EXTERNAL * n);
    let results = rela + relasz;
    let align = layout.align.max(1);
    let tls_image = (results + 8 * (1 + RESULT_WORDS_PER_EXTERNAL * n)).div_ceil(align) * align;
    TlsObjectLayout {
        dynamic,
        symtab,
        strtab,
        strsz,
        rela,
        relasz,
        results,
        tls_image,
        // The whole block, zeros included, is file-backed: a pooled module
        // can then host any later template that fits (see tls_pool).
        file_size: tls_image + layout.size,
    }
}

/// Builds the shared object that carries the template and asks the loader,
/// through dynamic relocations, for the TLS facts jitrun cannot compute:
/// one `TPOFF64` relocation against the module itself (which also forces its
/// block into static TLS), and per external variable `TPOFF64`,
/// `DTPMOD64` and `DTPOFF64` against its name.
fn build_tls_object(
    layout: &TlsLayout,
    template: &[u8],
    externals: &[ExternalTlsRequest],
    needed: Option<&str>,
) -> (Vec<u8>, TlsObjectLayout) {
    use object::elf::*;
    let plan = plan_object(layout, externals, needed);
    let has_own_tls = layout.size > 0;
    let mut w = Writer(vec![0u8; plan.file_size as usize]);
    // ELF header.
    w.put(0, &[0x7f, b'E', b'L', b'F', ELFCLASS64, ELFDATA2LSB, EV_CURRENT, 0]);
    w.u16(16, ET_DYN);
    w.u16(18, crate::arch::HOST.elf_machine());
    w.u32(20, 1);
    w.u64(32, 64); // e_phoff
    w.u16(52, 64); // e_ehsize
    w.u16(54, 56); // e_phentsize
    w.u16(56, if has_own_tls { 3 } else { 2 });
    w.u16(58, 64); // e_shentsize
    let mut phdr = |i: u64, p_type: u32, flags: u32, off: u64, filesz: u64, memsz: u64, align: u64| {
        let at = 64 + 56 * i;
        w.u32(at, p_type);
        w.u32(at + 4, flags);
        for field in [8, 16, 24] {
            w.u64(at + field, off);
        }
        w.u64(at + 32, filesz);
        w.u64(at + 40, memsz);
        w.u64(at + 48, align);
    };
    phdr(0, PT_LOAD, PF_R | PF_W, 0, plan.file_size, plan.file_size, 0x1000);
    phdr(1, PT_DYNAMIC, PF_R | PF_W, plan.dynamic, 16 * 10, 16 * 10, 8);
    if has_own_tls {
        phdr(2, PT_TLS, PF_R, plan.tls_image, layout.size, layout.size, layout.align.max(1));
    }
    let needed_name = plan.strtab + plan.strsz - needed.map_or(0, |n| n.len() as u64 + 1);
    let dyn_entries = [
        (if needed.is_some() { DT_NEEDED } else { DT_DEBUG }, needed_name - plan.strtab),
        (DT_STRTAB, plan.strtab),
        (DT_SYMTAB, plan.symtab),
        (DT_STRSZ, plan.strsz),
        (DT_SYMENT, 24),
        (DT_RELA, plan.rela),
        (DT_RELASZ, if has_own_tls { plan.relasz } else { plan.relasz - 24 }),
        (DT_RELAENT, 24),
        (DT_FLAGS, u64::from(DF_STATIC_TLS)),
        (DT_NULL, 0),
    ];
    for (i, (tag, val)) in dyn_entries.iter().enumerate() {
        w.u64(plan.dynamic + 16 * i as u64, u64::from(*tag));
        w.u64(plan.dynamic + 16 * i as u64 + 8, *val);
    }
    // Relocations: externals first, so the self entry can be left out.
    let mut rela = plan.rela;
    let mut reloc = |w: &mut Writer, offset: u64, sym: u64, kind: DynamicRelocation| {
        let r_type = crate::arch::HOST.dynamic_relocation_number(kind);
        w.u64(rela, offset);
        w.u64(rela + 8, (sym << 32) | u64::from(r_type));
        w.u64(rela + 16, 0);
        rela += 24;
    };
    let mut name_at = plan.strtab + 1;
    for (i, ext) in externals.iter().enumerate() {
        let sym = 1 + i as u64;
        let at = plan.symtab + 24 * sym;
        w.u32(at, (name_at - plan.strtab) as u32);
        w.put(at + 4, &[(STB_GLOBAL << 4) | STT_TLS, 0]);
        w.put(name_at, ext.name.as_bytes());
        name_at += ext.name.len() as u64 + 1;
        let words = plan.results + 8 * (1 + RESULT_WORDS_PER_EXTERNAL * i as u64);
        // A TP offset forces the library's block into static TLS; only ask
        // for it when the code needs one.
        let tp_type = if ext.needs_tp_offset { DynamicRelocation::TpOffset64 } else { DynamicRelocation::None };
        reloc(&mut w, words, sym, tp_type);
        reloc(&mut w, words + 8, sym, DynamicRelocation::DtpModule64);
        reloc(&mut w, words + 16, sym, DynamicRelocation::DtpOffset64);
    }
    if let Some(needed) = needed {
        w.put(needed_name, needed.as_bytes());
    }
    if has_own_tls {
        reloc(&mut w, plan.results, 0, DynamicRelocation::TpOffset64);
        w.put(plan.tls_image, &template[..layout.size as usize]);
    }
    (w.0, plan)
}

/// Loads the template as a TLS module (or reuses a pooled one that fits)
/// and looks up the external thread-local variables. `template` must be
/// relocated and `layout.size` bytes long.
pub fn allocate(layout: &TlsLayout, template: &[u8], externals: &[ExternalTlsRequest]) -> Result<TlsModule> {
    if layout.align > static_tls_alignment() {
        return Err(anyhow!(TlsOverAligned { align: layout.align }));
    }
    if layout.size > 0 {
        if let Some(block) = tls_pool::reuse(&template[..layout.size as usize], layout.align) {
            let (library, externals) = if externals.is_empty() {
                (None, Vec::new())
            } else {
                let loaded = load_module(&TlsLayout::default(), &[], externals)?;
                (Some(loaded.library), loaded.externals)
            };
            return Ok(TlsModule {
                placement: TlsPlacement {
                    module_id: block.module_id,
                    tp_offset: block.tp_offset,
                    descriptor_resolver: 0,
                    externals,
                },
                block: Some(block),
                library,
            });
        }
    }
    let loaded = load_module(layout, template, externals)?;
    log::debug!("TLS module {}: {} bytes at tp{:+#x}", loaded.module_id, layout.size, loaded.tp_offset);
    let (block, library) = if layout.size > 0 {
        let block = StaticBlock::fresh(
            loaded.library,
            loaded.module_id,
            loaded.tp_offset,
            layout.size,
            layout.align.max(1),
            loaded.template_addr,
        );
        (Some(block), None)
    } else {
        (None, Some(loaded.library))
    };
    Ok(TlsModule {
        placement: TlsPlacement {
            module_id: loaded.module_id,
            tp_offset: loaded.tp_offset,
            descriptor_resolver: 0,
            externals: loaded.externals,
        },
        block,
        library,
    })
}

/// A generated TLS module once the loader has processed it.
struct LoadedModule {
    library: SharedLibrary,
    module_id: u64,
    tp_offset: i64,
    externals: Vec<ExternalTls>,
    /// Address of the template inside the module's mapped segment.
    template_addr: u64,
}

fn load_module(layout: &TlsLayout, template: &[u8], externals: &[ExternalTlsRequest]) -> Result<LoadedModule> {
    let (object, plan) = build_tls_object(layout, template, externals, None);
    let library = load_generated(&object, layout.size)?;
    let mut module_id: libc::size_t = 0;
    let mut link_map: *const u64 = std::ptr::null();
    // SAFETY: dlinfo on a live handle with out-pointers of the documented
    // types; `struct link_map` starts with `l_addr`, the load bias, and the
    // loader has written its relocation results into our RW segment.
    let (tp_offset, external_results, load_bias) = unsafe {
        if libc::dlinfo(library.handle(), libc::RTLD_DI_LINKMAP, &mut link_map as *mut _ as *mut libc::c_void) != 0
            || link_map.is_null()
        {
            bail!("the C library did not register the TLS module");
        }
        if layout.size > 0
            && (libc::dlinfo(library.handle(), libc::RTLD_DI_TLS_MODID, &mut module_id as *mut _ as *mut libc::c_void)
                != 0
                || module_id == 0)
        {
            bail!("the C library gave the TLS module no module id");
        }
        let word = |i: u64| std::ptr::read((*link_map + plan.results + 8 * i) as *const u64);
        let externals: Vec<ExternalTls> = (0..externals.len() as u64)
            .map(|i| {
                let base = 1 + RESULT_WORDS_PER_EXTERNAL * i;
                ExternalTls { tp_offset: word(base) as i64, module_id: word(base + 1), offset: word(base + 2) }
            })
            .collect();
        (word(0) as i64, externals, *link_map)
    };
    Ok(LoadedModule {
        library,
        module_id: module_id as u64,
        tp_offset,
        externals: external_results,
        template_addr: load_bias + plan.tls_image,
    })
}

/// Writes a generated object to a uniquely named temporary file, `dlopen`s
/// it and removes the file. The name must be unique for the life of the
/// process: the loader treats a path it has seen as the same object.
fn load_generated(object: &[u8], tls_size: u64) -> Result<SharedLibrary> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = generated_module_dir().join(format!("jitrun-tls-{}-{}.so", std::process::id(), n));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| anyhow!("{}: cannot create the TLS module: {}", path.display(), e))?;
    let written = file.write_all(object);
    drop(file);
    let opened = written.map_err(anyhow::Error::from).and_then(|_| SharedLibrary::open(&path));
    let _ = std::fs::remove_file(&path);
    match opened {
        Ok(lib) => Ok(lib),
        Err(e) if format!("{:#}", e).contains("static TLS") => Err(anyhow!(TlsExhausted { needed: tls_size })),
        Err(e) => Err(e.context("cannot load the TLS module")),
    }
}

/// Loads the shared library at `path` (its bytes: `file`, of which the
/// headers and, with TLS, the dynamic symbols are read) so that its
/// thread-local block sits in static TLS, as it would for a library an
/// executable was linked against: then initial-exec accesses from the
/// image (which g++ emits for `std::__once_callable` and the like) work in
/// every thread.
///
/// The library is loaded as the dependency of a generated object that
/// holds an initial-exec relocation against one of its thread-local
/// symbols; the loader processes that relocation before the library's
/// constructors can touch its TLS dynamically. Returns the generated
/// object (keep it loaded as long as the library), or `None` when the
/// library has no TLS or is already loaded.
pub fn load_library_with_static_tls(path: &Path, file: &[u8]) -> Result<Option<SharedLibrary>> {
    // Most libraries have no TLS: that is known without asking the loader.
    let Some(symbol) = first_tls_symbol(file) else { return Ok(None) };
    let Ok(c_path) = CString::new(path.as_os_str().as_encoded_bytes()) else { return Ok(None) };
    // SAFETY: RTLD_NOLOAD only queries; a non-null handle gets closed again.
    let loaded = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if !loaded.is_null() {
        // SAFETY: balancing the reference RTLD_NOLOAD took.
        unsafe { libc::dlclose(loaded) };
        return Ok(None);
    }
    let request = [ExternalTlsRequest { name: symbol, needs_tp_offset: true }];
    let empty = TlsLayout::default();
    let (object, _) = build_tls_object(&empty, &[], &request, path.to_str());
    log::debug!("{}: loading with its TLS block in static TLS", path.display());
    load_generated(&object, 0).map(Some)
}

/// A thread-local symbol the library file `data` defines, if any. Most
/// libraries (libm: 900 KB, mapped, not read) have no PT_TLS segment, and
/// the program headers in the first page say so.
fn first_tls_symbol(data: &[u8]) -> Option<String> {
    use object::read::elf::{FileHeader, ProgramHeader, Sym};
    let header = object::elf::FileHeader64::<object::Endianness>::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, data).ok()?;
    if !segments.iter().any(|s| s.p_type(endian) == object::elf::PT_TLS) {
        return None;
    }
    let sections = header.sections(endian, data).ok()?;
    let dynsym = sections.symbols(endian, data, object::elf::SHT_DYNSYM).ok()?;
    dynsym.iter().find_map(|sym| {
        let defined = sym.st_shndx(endian) != object::elf::SHN_UNDEF;
        (sym.st_type() == object::elf::STT_TLS && defined && sym.st_bind() != object::elf::STB_LOCAL)
            .then(|| dynsym.symbol_name(endian, sym).ok())
            .flatten()
            .map(|n| String::from_utf8_lossy(n).into_owned())
    })
}

/// The dealloc half: when the image goes, its block goes back to the pool
/// (or is unloaded, see [`crate::host::tls_pool`]) and its library pins close.
pub fn action(module: TlsModule) -> ActionPair {
    ActionPair { name: "TLS module", finalize: Box::new(|| Ok(())), dealloc: Box::new(move || drop(module)) }
}

pub use crate::support::machine::thread_pointer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_gives_every_thread_the_template() {
        let layout = TlsLayout { offsets: vec![], init_size: 8, size: 16, align: 8 };
        let template = [1u8, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0];
        let module = allocate(&layout, &template, &[]).unwrap();
        let read = |off: i64| {
            let addr = (thread_pointer() as i64 + module.placement.tp_offset + off) as *const u64;
            // SAFETY: the static block of this thread, 16 bytes.
            unsafe { std::ptr::read(addr) }
        };
        assert_eq!(read(0), u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(read(8), 0);
        let off = module.placement.tp_offset;
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
