//! The host process's dynamic loader: symbol lookup with `dlsym`, shared
//! libraries with `dlopen`, symbol facts with `dladdr1`.

use crate::arch::DynamicRelocation;
use crate::graph::resolve::{ExternalSymbolInfo, ExternalSymbols, ProgramDefinition, ProgramDefinitions};
use crate::support::FileIdentity;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::graph::format::dynamic::ExportTable;

/// A shared library opened for an image. It stays open as long as the
/// value lives; images hold theirs until their destructors have run.
pub struct SharedLibrary {
    pub path: PathBuf,
    handle: *mut libc::c_void,
    /// Its load bias and dynamic tables, read once ([`Self::own_tables`]).
    tables: std::sync::OnceLock<Option<(u64, DynamicTables)>>,
    /// For a library of stand-ins ([`stand_ins_for_the_program`]): the
    /// names it defines in the program's place until the image is mapped.
    stand_ins: Vec<std::sync::Arc<str>>,
}

// SAFETY: a dlopen handle may be used and closed from any thread.
unsafe impl Send for SharedLibrary {}
// SAFETY: dlsym on a handle is thread-safe.
unsafe impl Sync for SharedLibrary {}

impl SharedLibrary {
    /// Opens `path` with its symbols visible to later lookups. Functions
    /// bind on first call, as in a natively linked program (libstdc++ has
    /// thousands of them; binding all up front cost ~0.3 ms); a missing
    /// library still fails here.
    pub fn open(path: &Path) -> Result<SharedLibrary> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())?;
        // SAFETY: dlopen is called with a valid NUL-terminated path; it runs
        // the library's constructors, which is what loading it means.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_GLOBAL) };
        if handle.is_null() {
            bail!("{}: cannot load shared library: {}", path.display(), dlerror_message());
        }
        Ok(SharedLibrary::with_handle(path.to_path_buf(), handle))
    }

    /// The loaded library whose code or data contains `addr`, held open
    /// while the value lives. Found by the name the loader itself keeps,
    /// so nothing is searched or read from disk.
    pub fn containing(addr: u64) -> Option<SharedLibrary> {
        let mut info = unsafe_zeroed_dl_info();
        // SAFETY: dladdr only reads the process's link map into `info`.
        if unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: dladdr succeeded; dli_fname is the loader's NUL-terminated name.
        let name = unsafe { CStr::from_ptr(info.dli_fname) };
        // SAFETY: RTLD_NOLOAD only takes a reference to a loaded library.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        let path = PathBuf::from(name.to_string_lossy().into_owned());
        (!handle.is_null()).then(|| SharedLibrary::with_handle(path, handle))
    }

    /// Loads the shared object `bytes` (named `name` for messages) from an
    /// anonymous memory file, its symbols visible to every later lookup and
    /// library (`RTLD_GLOBAL`).
    pub fn open_from_memory(name: &str, bytes: &[u8]) -> Result<SharedLibrary> {
        use std::io::Write;
        use std::os::fd::FromRawFd;
        let c_name = CString::new(name)?;
        // SAFETY: memfd_create with a NUL-terminated name; the descriptor it
        // returns is owned by the File from here on.
        let mut file = unsafe {
            let fd = libc::memfd_create(c_name.as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                bail!("{}: cannot create a memory file: {}", name, std::io::Error::last_os_error());
            }
            std::fs::File::from_raw_fd(fd)
        };
        file.write_all(bytes).map_err(|e| anyhow::anyhow!("{}: cannot write the memory file: {}", name, e))?;
        let path = PathBuf::from(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file)));
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())?;
        // SAFETY: dlopen of a complete shared object we wrote (no code, no
        // constructors); the descriptor stays open until it has mapped it.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if handle.is_null() {
            bail!("{}: cannot load: {}", name, dlerror_message());
        }
        Ok(SharedLibrary::with_handle(PathBuf::from(name), handle))
    }

    /// A library `dlopen` gave `handle` for.
    fn with_handle(path: PathBuf, handle: *mut libc::c_void) -> SharedLibrary {
        SharedLibrary { path, handle, tables: Default::default(), stand_ins: Vec::new() }
    }

    pub fn handle(&self) -> *mut libc::c_void {
        self.handle
    }

    /// `name` as `dlsym` on the handle finds it: in the library, then in
    /// its dependencies.
    pub fn lookup(&self, name: &CStr) -> Option<u64> {
        // SAFETY: the handle is open (we own it) and the name is NUL-terminated.
        let addr = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        (!addr.is_null()).then_some(addr as u64)
    }

    /// `name`'s definition in the library itself, not its dependencies, as
    /// a native link binds a reference to a library on the command line:
    /// ld takes the library's own definitions (and libc's after all named
    /// ones). Asked of the loader only when its tables cannot say.
    pub fn lookup_own(&self, name: &CStr) -> Option<u64> {
        let Some((bias, tables)) = self.own_tables() else { return self.lookup(name) };
        // SAFETY: the tables of this library, open while `self` lives.
        match unsafe { tables.own_definition(*bias, name) } {
            OwnDefinition::At(address) => Some(address),
            OwnDefinition::None => None,
            OwnDefinition::AskTheLoader => self.lookup(name).filter(|&a| self.holds(a)),
        }
    }

    /// Whether the library defines `name` as data (a variable, or a C++
    /// static of vague linkage), which a program's own definition takes the
    /// place of in the library's references, as an executable's does.
    pub fn defines_data(&self, name: &CStr) -> bool {
        let Some((_, tables)) = self.own_tables() else { return false };
        // SAFETY: the tables of this library, open while `self` lives.
        unsafe { tables.data_definition(name) }.is_some()
    }

    /// The library's GOT entries bound to its own definitions (calls
    /// through its PLT to its own functions, addresses of its variables)
    /// that `replacement` gives another value for, as (entry, value): an
    /// executable's definition of such a name takes the place of the
    /// library's, as the loader finds the executable first. Only names the
    /// library exports with default visibility are looked up (protected
    /// and unique ones bind to the library's own), so a library's many
    /// entries bound elsewhere (to libc) cost a symbol read each.
    pub fn interposable_got_entries(&self, replacement: impl Fn(&str) -> Option<u64>) -> Vec<(u64, u64)> {
        let Some((bias, tables)) = self.own_tables() else { return Vec::new() };
        let mut found = Vec::new();
        // SAFETY: the tables of this library, open while `self` lives; the
        // symbol indexes come from its own relocations.
        unsafe {
            tables.for_each_got_entry(*bias, |slot, _, index| {
                let Some(sym) = tables.symbol(index) else { return };
                let binding = sym.st_info >> 4;
                if sym.st_shndx == 0
                    || sym.st_other & 3 != object::elf::STV_DEFAULT
                    || !matches!(binding, object::elf::STB_GLOBAL | object::elf::STB_WEAK)
                {
                    return;
                }
                let Some(name) = tables.symbol_name(index).and_then(|n| n.to_str().ok()) else { return };
                if let Some(value) = replacement(name) {
                    found.push((slot, value));
                }
            })
        };
        found
    }

    /// For a library of stand-ins: each name it stands in for, with the
    /// address of its symbol's value (`st_value`; its symbols are absolute,
    /// so what the loader finds for the name from then on).
    pub fn stand_in_values(&self) -> Vec<(std::sync::Arc<str>, u64)> {
        if self.stand_ins.is_empty() {
            return Vec::new();
        }
        let Some((_, tables)) = self.own_tables() else { return Vec::new() };
        let value_offset = std::mem::offset_of!(libc::Elf64_Sym, st_value) as u64;
        // Symbol `i + 1` is the `i`th export (`exports::shared_object`).
        let symbol_size = std::mem::size_of::<libc::Elf64_Sym>() as u64;
        (1..)
            .zip(&self.stand_ins)
            .map(|(index, name)| (name.clone(), tables.symtab + index * symbol_size + value_offset))
            .collect()
    }

    /// The library's load bias and dynamic tables, from the loader's
    /// record of it (`dlinfo`).
    fn own_tables(&self) -> Option<&(u64, DynamicTables)> {
        self.tables
            .get_or_init(|| {
                /// The public head of glibc's `struct link_map`.
                #[repr(C)]
                struct LinkMap {
                    l_addr: u64,
                    l_name: *const libc::c_char,
                    l_ld: *const [u64; 2],
                }
                let mut map: *const LinkMap = std::ptr::null();
                // SAFETY: RTLD_DI_LINKMAP stores the handle's link map, which
                // lives while the handle is open; its first fields are the
                // documented public ones.
                unsafe {
                    let asked =
                        libc::dlinfo(self.handle, libc::RTLD_DI_LINKMAP, &mut map as *mut _ as *mut libc::c_void);
                    if asked != 0 || map.is_null() || (*map).l_ld.is_null() {
                        return None;
                    }
                    Some(((*map).l_addr, dynamic_tables_at((*map).l_addr, (*map).l_ld)))
                }
            })
            .as_ref()
    }

    /// Whether `addr` lies in one of the library's own segments.
    fn holds(&self, addr: u64) -> bool {
        let own = self.own_tables().map(|(bias, _)| *bias);
        visit_object_containing(addr, |object| Some(object.bias) == own).unwrap_or(false)
    }
}

impl Drop for SharedLibrary {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed exactly once.
        unsafe { libc::dlclose(self.handle) };
    }
}

fn dlerror_message() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    let msg = unsafe { libc::dlerror() };
    if msg.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated, valid until the next dl call.
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    }
}

/// Looks `name` up in the whole process (the executable and every library
/// loaded so far), like a reference from the main program would be bound:
/// as `dlsym(RTLD_DEFAULT, name)`, which searches the objects loaded at
/// start-up first, in the loader's order, then the libraries loaded since
/// with `RTLD_GLOBAL`. The first part is done here when it can be
/// ([`lookup_in_startup_objects`]), the rest by `dlsym`.
pub fn lookup_global(name: &CStr) -> Option<u64> {
    if let Some(found) = lookup_in_startup_objects(name) {
        return Some(found);
    }
    // SAFETY: RTLD_DEFAULT is a valid pseudo-handle; name is NUL-terminated.
    let addr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!addr.is_null()).then_some(addr as u64)
}

/// How many objects the loader had loaded when jitrun's `main` started
/// ([`note_startup_objects`]); 0 when not noted (jitrun as a library).
static STARTUP_OBJECTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Notes the objects loaded before `main`: the executable and its
/// libraries, all in the global scope, first in `dlsym`'s search and in
/// the loader's list (objects loaded later go after them). Not with
/// `LD_PRELOAD`, whose objects the loader lists in another order than it
/// searches them.
pub fn note_startup_objects() {
    if !preload_list().is_empty() {
        return;
    }
    let mut count = 0;
    for_each_loaded_object(|_| {
        count += 1;
        std::ops::ControlFlow::Continue(())
    });
    STARTUP_OBJECTS.store(count, std::sync::atomic::Ordering::Relaxed);
}

/// The start-up objects' symbol tables (load bias and dynamic tables), but
/// the vDSO's, read once.
fn startup_objects() -> &'static [(u64, DynamicTables)] {
    static TABLES: std::sync::OnceLock<Vec<(u64, DynamicTables)>> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let mut left = STARTUP_OBJECTS.load(std::sync::atomic::Ordering::Relaxed);
        let mut tables = Vec::new();
        for_each_loaded_object(|object| {
            if left == 0 {
                return std::ops::ControlFlow::Break(());
            }
            left -= 1;
            if !object.name.to_bytes().starts_with(b"linux-vdso") {
                // SAFETY: a module loaded before main, which stays loaded.
                if let Some(found) = unsafe { dynamic_tables(object.bias, object.headers) } {
                    tables.push((object.bias, found));
                }
            }
            std::ops::ControlFlow::Continue(())
        });
        tables
    })
}

/// `name`'s definition in the objects loaded at start-up, as `dlsym` finds
/// it there ([`DynamicTables::own_definition`], in the loader's order).
/// `dlsym` cost ~4,000 instructions a name (it looks for its caller's
/// object and catches errors), a hash lookup a few hundred, and a failed
/// `dlsym` leaves freed error strings in the program's heap. `None` (then
/// `dlsym` decides) when not noted, when only the loader can answer, or
/// with no definition here.
fn lookup_in_startup_objects(name: &CStr) -> Option<u64> {
    if STARTUP_OBJECTS.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return None;
    }
    for (bias, tables) in startup_objects() {
        // SAFETY: the tables of a start-up object, which stays loaded.
        match unsafe { tables.own_definition(*bias, name) } {
            OwnDefinition::At(address) => return Some(address),
            OwnDefinition::None => continue,
            OwnDefinition::AskTheLoader => return None,
        }
    }
    None
}

/// Whether an object loaded at start-up (libc, the loader) defines `name`
/// as data, which a program's own definition takes the place of, as an
/// executable's does (glibc's `argp_program_version`): `false` when not
/// noted (see [`note_startup_objects`]).
pub fn startup_objects_define_data(name: &CStr) -> bool {
    if STARTUP_OBJECTS.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return false;
    }
    startup_objects().iter().any(|(_, tables)| {
        // SAFETY: the tables of a start-up object, which stays loaded.
        unsafe { tables.data_definition(name) }.is_some_and(|sym| sym.st_info >> 4 != object::elf::STB_GNU_UNIQUE)
    })
}

/// The image's writable memory registered with LeakSanitizer (the leak
/// checker of `-fsanitize=address` code) as a root region, as it scans a
/// native executable's data and bss for pointers: else a block that only a
/// global of the program points to would count as leaked. Unregistered on
/// drop. `None` when no leak checker is in the process.
pub struct LeakCheckerRoots {
    regions: Vec<(usize, usize)>,
    unregister: usize,
}

type RootRegionFn = unsafe extern "C" fn(*const libc::c_void, usize);

/// Registers `regions` (start, size) with LeakSanitizer, if it is loaded:
/// only a preloaded runtime can be, so without `LD_PRELOAD` nothing is
/// looked up.
pub fn register_leak_checker_roots(regions: Vec<(usize, usize)>) -> Option<LeakCheckerRoots> {
    if preload_list().is_empty() {
        return None;
    }
    let register = lookup_global(c"__lsan_register_root_region")?;
    let unregister = lookup_global(c"__lsan_unregister_root_region")? as usize;
    for &(start, size) in &regions {
        // SAFETY: the sanitizer runtime's function of this signature, with a
        // range of the image's own mapped memory.
        unsafe { std::mem::transmute::<u64, RootRegionFn>(register)(start as *const libc::c_void, size) };
    }
    Some(LeakCheckerRoots { regions, unregister })
}

impl Drop for LeakCheckerRoots {
    fn drop(&mut self) {
        for &(start, size) in &self.regions {
            // SAFETY: as in register_leak_checker_roots, undoing its call
            // while the range is still mapped.
            unsafe { std::mem::transmute::<usize, RootRegionFn>(self.unregister)(start as *const libc::c_void, size) };
        }
    }
}

/// A libc function jitrun calls only on behalf of loaded code (see
/// `crate::host::dladdr`, `crate::host::selfexe`), found with `dlsym` when an image
/// first needs it rather than imported: jitrun binds its imports at start
/// (`BIND_NOW`), and ten more imports cost every run 13 page faults.
pub struct LazyLibcFunction {
    name: &'static CStr,
    address: std::sync::atomic::AtomicUsize,
}

impl LazyLibcFunction {
    pub const fn new(name: &'static CStr) -> LazyLibcFunction {
        LazyLibcFunction { name, address: std::sync::atomic::AtomicUsize::new(0) }
    }

    /// Looks the function up unless done before (not async-signal-safe).
    pub fn resolve(&self) -> Option<usize> {
        use std::sync::atomic::Ordering;
        match self.address.load(Ordering::Acquire) {
            0 => {
                let address = lookup_global(self.name)? as usize;
                self.address.store(address, Ordering::Release);
                Some(address)
            }
            address => Some(address),
        }
    }

    /// The address if [`LazyLibcFunction::resolve`] found it
    /// (async-signal-safe).
    pub fn get(&self) -> Option<usize> {
        Some(self.address.load(std::sync::atomic::Ordering::Acquire)).filter(|&a| a != 0)
    }
}

/// What jitrun reads from a loaded module's dynamic section: where its
/// relocation, symbol, string and version tables are (0 when absent).
#[derive(Default)]
pub(crate) struct DynamicTables {
    pub rela: u64,
    pub relasz: u64,
    pub jmprel: u64,
    pub pltrelsz: u64,
    pub symtab: u64,
    pub strtab: u64,
    pub versym: u64,
    pub verdef: u64,
    pub verdefnum: u64,
    pub gnu_hash: u64,
}

/// The tables of the module at `bias` with program headers `phdrs`, or
/// `None` if it has no dynamic section.
///
/// # Safety
/// `bias` and `phdrs` describe a module loaded in this process, which the
/// loader does not unload meanwhile.
pub(crate) unsafe fn dynamic_tables(bias: u64, phdrs: &[libc::Elf64_Phdr]) -> Option<DynamicTables> {
    let dynamic = phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC)?;
    // SAFETY: the caller's contract; the module's dynamic section.
    Some(unsafe { dynamic_tables_at(bias, (bias + dynamic.p_vaddr) as *const [u64; 2]) })
}

/// The tables of the module at `bias` whose dynamic section is at `dynamic`.
///
/// # Safety
/// As for [`dynamic_tables`]; `dynamic` is the module's mapped dynamic
/// section.
unsafe fn dynamic_tables_at(bias: u64, dynamic: *const [u64; 2]) -> DynamicTables {
    let mut tables = DynamicTables::default();
    // The loader has relocated the addresses for most modules; the bias is
    // added only to ones that still look unrelocated.
    let address = |v: u64| if v < bias { v + bias } else { v };
    let mut entry = dynamic;
    loop {
        // SAFETY: the module's dynamic section, a DT_NULL-terminated array
        // of (tag, value) pairs (the caller's contract).
        let [tag, value] = unsafe { *entry };
        match tag as u32 {
            0 => break,
            object::elf::DT_RELA => tables.rela = address(value),
            object::elf::DT_RELASZ => tables.relasz = value,
            object::elf::DT_JMPREL => tables.jmprel = address(value),
            object::elf::DT_PLTRELSZ => tables.pltrelsz = value,
            object::elf::DT_SYMTAB => tables.symtab = address(value),
            object::elf::DT_STRTAB => tables.strtab = address(value),
            object::elf::DT_VERSYM => tables.versym = address(value),
            object::elf::DT_VERDEF => tables.verdef = address(value),
            object::elf::DT_VERDEFNUM => tables.verdefnum = value,
            object::elf::DT_GNU_HASH => tables.gnu_hash = address(value),
            _ => {}
        }
        // SAFETY: still inside the array until DT_NULL.
        entry = unsafe { entry.add(1) };
    }
    tables
}

/// What a module's own symbol table says of a name, for a lookup as the
/// loader makes it for `dlsym`.
enum OwnDefinition {
    /// The address (an IFUNC's resolved).
    At(u64),
    /// No default-version definition in this module.
    None,
    /// One only the loader can answer: a thread-local (per-thread
    /// address), a unique symbol (one definition process-wide), or a module
    /// without a GNU hash table.
    AskTheLoader,
}

impl DynamicTables {
    /// `name`'s definition in this module (at `bias`) as the loader takes
    /// one for `dlsym`: defined, unversioned or in its default version (a
    /// hidden, older version is skipped), an IFUNC resolved by calling its
    /// resolver.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`].
    unsafe fn own_definition(&self, bias: u64, name: &CStr) -> OwnDefinition {
        if self.gnu_hash == 0 {
            return OwnDefinition::AskTheLoader;
        }
        // SAFETY: the caller's contract.
        let found = unsafe { self.default_definition(name) };
        let Some(sym) = found else { return OwnDefinition::None };
        // An absolute symbol's value is its address, not an offset.
        let address = if sym.st_shndx == object::elf::SHN_ABS { sym.st_value } else { bias.wrapping_add(sym.st_value) };
        match (sym.st_info & 0xf, sym.st_info >> 4) {
            (object::elf::STT_TLS, _) | (_, object::elf::STB_GNU_UNIQUE) => OwnDefinition::AskTheLoader,
            (object::elf::STT_GNU_IFUNC, _) => {
                // SAFETY: the loader calls an x86-64 IFUNC resolver with no
                // arguments for its answer, as here; the module is
                // relocated and initialized (the CPU's features are known).
                let resolver: extern "C" fn() -> u64 = unsafe { std::mem::transmute(address as usize) };
                OwnDefinition::At(resolver())
            }
            _ => OwnDefinition::At(address),
        }
    }
}

impl DynamicTables {
    /// `name`'s symbol as the loader's check_match and do_lookup_x take one
    /// for `dlsym`: defined, of a type code or data has (a thread-local may
    /// be at offset 0), not local, unversioned or in its default version.
    /// `None` as well for a module without a GNU hash table.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`].
    unsafe fn default_definition(&self, name: &CStr) -> Option<&libc::Elf64_Sym> {
        // SAFETY: the caller's contract.
        unsafe { self.default_definition_at(name) }.map(|(sym, _)| sym)
    }

    /// `name`'s [`DynamicTables::default_definition`] if it is a variable
    /// (`STT_OBJECT`), which a program's definition takes the place of.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`].
    unsafe fn data_definition(&self, name: &CStr) -> Option<&libc::Elf64_Sym> {
        // SAFETY: the caller's contract.
        unsafe { self.default_definition(name) }.filter(|sym| sym.st_info & 0xf == object::elf::STT_OBJECT)
    }

    /// [`DynamicTables::default_definition`] with its symbol index.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`].
    unsafe fn default_definition_at(&self, name: &CStr) -> Option<(&libc::Elf64_Sym, usize)> {
        // SAFETY: the caller's contract.
        unsafe {
            self.gnu_hash_find(name, |sym, index| {
                use object::elf::*;
                let (kind, binding) = (sym.st_info & 0xf, sym.st_info >> 4);
                sym.st_shndx != SHN_UNDEF
                    && (sym.st_value != 0 || kind == STT_TLS)
                    && matches!(kind, STT_NOTYPE | STT_OBJECT | STT_FUNC | STT_COMMON | STT_TLS | STT_GNU_IFUNC)
                    && matches!(binding, STB_GLOBAL | STB_WEAK | STB_GNU_UNIQUE)
                    && (self.version_index(index) <= 1 || !self.is_hidden(index))
            })
        }
    }

    /// Calls `visit(slot, kind, symbol)` for each address-sized entry the
    /// module's dynamic relocations fill with a symbol's address and no
    /// addend (`GLOB_DAT`, `JUMP_SLOT`, an absolute word; `DT_RELA`, then
    /// `DT_JMPREL`): its GOT entries, which copy relocations and allocator
    /// interposition re-point.
    ///
    /// # Safety
    /// The tables are those of a module loaded at `bias` in this process,
    /// which the loader does not unload meanwhile.
    pub(crate) unsafe fn for_each_got_entry(&self, bias: u64, mut visit: impl FnMut(u64, DynamicRelocation, usize)) {
        for (table, size) in [(self.rela, self.relasz), (self.jmprel, self.pltrelsz)] {
            if table == 0 {
                continue;
            }
            let count = size as usize / std::mem::size_of::<libc::Elf64_Rela>();
            // SAFETY: the module's mapped relocation table of `size` bytes.
            let relas = unsafe { std::slice::from_raw_parts(table as *const libc::Elf64_Rela, count) };
            for r in relas {
                let (r_type, symbol) = ((r.r_info & 0xffff_ffff) as u32, (r.r_info >> 32) as usize);
                let kind = crate::arch::HOST.dynamic_relocation(r_type);
                let address_sized = matches!(
                    kind,
                    Some(DynamicRelocation::GlobalData | DynamicRelocation::JumpSlot | DynamicRelocation::Absolute64)
                );
                if let (Some(kind), true, 0) = (kind, address_sized, r.r_addend) {
                    visit(bias + r.r_offset, kind, symbol);
                }
            }
        }
    }

    /// The first dynamic symbol named `name` that `accept(symbol, index)`
    /// takes, found through the module's `DT_GNU_HASH` table: a few probes,
    /// where `dladdr1` scans the whole symbol table (~30,000 instructions a
    /// call in libc). `None` if the module has no such table or no such
    /// symbol.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`].
    pub(crate) unsafe fn gnu_hash_find(
        &self,
        name: &CStr,
        mut accept: impl FnMut(&libc::Elf64_Sym, usize) -> bool,
    ) -> Option<(&libc::Elf64_Sym, usize)> {
        if self.gnu_hash == 0 || self.symtab == 0 || self.strtab == 0 {
            return None;
        }
        let table = self.gnu_hash as *const u8;
        // SAFETY: the module's mapped DT_GNU_HASH section, read where the
        // lookup's layout of it says (its own counts bound every offset).
        let word = |at: usize| Some(unsafe { std::ptr::read_unaligned(table.add(at) as *const u32) });
        crate::graph::format::dynamic::gnu_hash_lookup(word, name.to_bytes(), |index| {
            // SAFETY: a symbol index of the module's table, and its name in
            // the module's string table.
            unsafe {
                let sym = &*(self.symtab as *const libc::Elf64_Sym).add(index as usize);
                let sym_name = CStr::from_ptr((self.strtab + u64::from(sym.st_name)) as *const libc::c_char);
                (sym_name == name && accept(sym, index as usize)).then_some((sym, index as usize))
            }
        })
    }

    /// Whether dynamic symbol `index` is a hidden (non-default) version.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`]; `index` is a symbol
    /// index of the module.
    pub(crate) unsafe fn is_hidden(&self, index: usize) -> bool {
        // SAFETY: DT_VERSYM has one u16 per dynamic symbol.
        self.versym != 0 && unsafe { *(self.versym as *const u16).add(index) } & 0x8000 != 0
    }

    /// The version index of dynamic symbol `index` (0 local, 1 global and
    /// unversioned), 1 without a version table.
    ///
    /// # Safety
    /// As for [`DynamicTables::is_hidden`].
    pub(crate) unsafe fn version_index(&self, index: usize) -> u16 {
        if self.versym == 0 {
            return 1;
        }
        // SAFETY: DT_VERSYM has one u16 per dynamic symbol.
        unsafe { *(self.versym as *const u16).add(index) & 0x7fff }
    }

    /// The version name of dynamic symbol `index`, from the module's
    /// `DT_VERSYM` and `DT_VERDEF` tables; `None` if it has none.
    ///
    /// # Safety
    /// As for [`DynamicTables::is_hidden`].
    pub(crate) unsafe fn version_name(&self, index: usize) -> Option<&CStr> {
        if self.strtab == 0 || self.verdef == 0 {
            return None;
        }
        // SAFETY: the caller's contract.
        let wanted = unsafe { self.version_index(index) };
        if wanted < 2 {
            return None; // local or global, unversioned
        }
        let mut at = self.verdef;
        for _ in 0..self.verdefnum {
            // SAFETY: Elf64_Verdef entries of the module's DT_VERDEF chain:
            // vd_version, vd_flags, vd_ndx, vd_cnt (u16), vd_hash, vd_aux,
            // vd_next (u32).
            let (ndx, aux, next) = unsafe {
                let d = at as *const u8;
                (*(d.add(4) as *const u16), *(d.add(12) as *const u32), *(d.add(16) as *const u32))
            };
            if ndx == wanted {
                // SAFETY: the first Elf64_Verdaux: vda_name, the version's
                // name, a NUL-terminated string of the module's DT_STRTAB.
                return Some(unsafe {
                    let name = *((at + u64::from(aux)) as *const u32);
                    CStr::from_ptr((self.strtab + u64::from(name)) as *const libc::c_char)
                });
            }
            if next == 0 {
                break;
            }
            at += u64::from(next);
        }
        None
    }

    /// The index of `sym`, an entry of the module's dynamic symbol table.
    fn symbol_index(&self, sym: *const libc::Elf64_Sym) -> Option<usize> {
        let offset = (sym as u64).checked_sub(self.symtab).filter(|_| self.symtab != 0)?;
        Some((offset / std::mem::size_of::<libc::Elf64_Sym>() as u64) as usize)
    }

    /// Dynamic symbol `index`, if the module has a symbol table.
    ///
    /// # Safety
    /// As for [`DynamicTables::symbol_name`].
    pub(crate) unsafe fn symbol(&self, index: usize) -> Option<&libc::Elf64_Sym> {
        // SAFETY: the caller's contract: `index` is in the mapped table.
        (self.symtab != 0 && index != 0).then(|| unsafe { &*(self.symtab as *const libc::Elf64_Sym).add(index) })
    }

    /// The name of dynamic symbol `index`, if the module has a symbol table.
    ///
    /// # Safety
    /// As for [`DynamicTables::for_each_got_entry`]; `index` is a symbol
    /// index from the module's own relocations.
    pub(crate) unsafe fn symbol_name(&self, index: usize) -> Option<&CStr> {
        if self.symtab == 0 || self.strtab == 0 || index == 0 {
            return None;
        }
        // SAFETY: the symbol is in the module's mapped dynamic symbol table,
        // its name in the string table (the caller's contract).
        Some(unsafe {
            let sym = &*(self.symtab as *const libc::Elf64_Sym).add(index);
            CStr::from_ptr((self.strtab + u64::from(sym.st_name)) as *const libc::c_char)
        })
    }
}

/// The values of the GOT entries through which the module containing
/// `addr` refers to its symbol `name`: where its code finds the variable,
/// which a copy relocation may have moved.
pub(crate) fn got_values_of(addr: u64, name: &CStr) -> Vec<u64> {
    let mut values = Vec::new();
    visit_object_containing(addr, |object| {
        // SAFETY: the loader describes a module of this process and holds
        // its lock during the visit; its relocations' slots are mapped.
        unsafe {
            let Some(tables) = dynamic_tables(object.bias, object.headers) else { return };
            tables.for_each_got_entry(object.bias, |slot, kind, symbol| {
                if kind != DynamicRelocation::JumpSlot && tables.symbol_name(symbol) == Some(name) {
                    values.push(std::ptr::read_volatile(slot as *const u64));
                }
            });
        }
    });
    values
}

/// The dynamic symbol the loader knows at `addr` (`dladdr1` with
/// `RTLD_DL_SYMENT`): an entry of a loaded module's symbol table.
fn symbol_entry(addr: u64) -> Option<*const libc::Elf64_Sym> {
    let mut info: libc::Dl_info = unsafe_zeroed_dl_info();
    let mut sym: *const libc::Elf64_Sym = std::ptr::null();
    // SAFETY: dladdr1 only reads the process's link map; both out-pointers
    // point to live locals of the right types.
    let ok = unsafe {
        libc::dladdr1(
            addr as *const libc::c_void,
            &mut info,
            &mut sym as *mut *const libc::Elf64_Sym as *mut *mut libc::c_void,
            RTLD_DL_SYMENT,
        )
    };
    (ok != 0 && !sym.is_null()).then_some(sym)
}

/// The version of `name`'s definition at `addr` (`malloc` in libc:
/// `GLIBC_2.2.5`), the one a native link would have recorded for a
/// reference it bound there; `None` for an unversioned definition or one
/// not found. An IFUNC's `addr` is its resolver's answer: its default
/// version counts.
fn definition_version(name: &CStr, addr: u64) -> Option<CString> {
    // SAFETY (both visits): the loader describes a module of this process
    // and holds its lock during the visit; the symbol points into its
    // symbol table.
    // SAFETY: `index` is a symbol of the module `tables` describe.
    let version_of = |tables: &DynamicTables, index: usize| unsafe { tables.version_name(index).map(CStr::to_owned) };
    let by_hash = visit_object_containing(addr, |object| unsafe {
        let tables = dynamic_tables(object.bias, object.headers)?;
        let value = addr.wrapping_sub(object.bias);
        let (_, index) = tables.gnu_hash_find(name, |sym, index| {
            sym.st_value == value || (sym.st_info & 0xf == object::elf::STT_GNU_IFUNC && !tables.is_hidden(index))
        })?;
        Some(version_of(&tables, index))
    })?;
    match by_hash {
        Some(version) => version,
        // No hash table: dladdr1 (outside the visit, which holds a lock of
        // the loader's that dladdr1 must not be called under).
        None => {
            let sym = symbol_entry(addr)?;
            visit_object_containing(addr, |object| unsafe {
                let tables = dynamic_tables(object.bias, object.headers)?;
                version_of(&tables, tables.symbol_index(sym)?)
            })?
        }
    }
}

/// What a library preloaded with `LD_PRELOAD` (its file name among
/// `preloaded`) defines for a reference to `name` in version `wanted`, as
/// the loader matches one: the first preloaded object, in load order, with
/// a definition in that version or none, or for an unversioned reference
/// one in its first version or not hidden. So `libc_malloc_debug.so`,
/// which defines only the non-default `malloc@GLIBC_2.2.5` (which `dlsym`
/// skips), gets the calls it gets natively: binding libc's then would mix
/// two allocators (git's test suite preloads it). IFUNC definitions are
/// left out.
fn preloaded_definition(name: &CStr, wanted: Option<&CStr>, preloaded: &[Vec<u8>]) -> Option<u64> {
    let mut found = None;
    for_each_loaded_object(|object| {
        let file = object.name.to_bytes().rsplit(|&b| b == b'/').next().unwrap_or_default();
        if !preloaded.iter().any(|p| p.as_slice() == file) {
            return std::ops::ControlFlow::Continue(());
        }
        // SAFETY: the loader describes a module of this process and holds
        // its lock during the visit; the symbols point into its tables.
        found = unsafe {
            dynamic_tables(object.bias, object.headers).and_then(|tables| {
                let (sym, _) = tables.gnu_hash_find(name, |sym, index| {
                    let defined = sym.st_shndx != 0 && sym.st_info & 0xf != object::elf::STT_GNU_IFUNC;
                    defined
                        && match wanted {
                            // As ld.so takes an unversioned reference: the
                            // first version (index 2) even hidden, later
                            // ones when not hidden.
                            None => tables.version_index(index) <= 2 || !tables.is_hidden(index),
                            Some(wanted) => {
                                tables.version_index(index) <= 1 || tables.version_name(index) == Some(wanted)
                            }
                        }
                })?;
                Some(object.bias.wrapping_add(sym.st_value))
            })
        };
        if found.is_some() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    found
}

/// `dladdr1` flag asking for the symbol table entry (glibc's `<dlfcn.h>`).
const RTLD_DL_SYMENT: libc::c_int = 1;

/// What the dynamic loader knows of the symbol at `addr`.
pub fn symbol_info(addr: u64) -> Option<ExternalSymbolInfo> {
    // SAFETY: dladdr1 succeeded, so sym points into a loaded symbol table.
    let sym = unsafe { &*symbol_entry(addr)? };
    let st_type = sym.st_info & 0xf;
    Some(ExternalSymbolInfo {
        is_function: st_type == object::elf::STT_FUNC || st_type == object::elf::STT_GNU_IFUNC,
        size: sym.st_size,
    })
}

/// Symbol facts for the externals an image references, from the files of
/// the libraries that define them: `dladdr1` finds a symbol by scanning
/// its library's whole symbol table (~100,000 instructions in libc, for each
/// `stderr`), where a lookup by name in the GNU hash table is a few probes.
#[derive(Default)]
pub struct HostSymbolFacts {
    /// Per loaded object (by load bias): its file and export table, if they read.
    files: rustc_hash::FxHashMap<u64, Option<(crate::support::input::InputData, ExportTable)>>,
}

impl HostSymbolFacts {
    /// What the library defining `name` at `addr` says of it.
    pub fn info(&mut self, addr: u64, name: &str) -> Option<ExternalSymbolInfo> {
        self.read_from_file(addr, name).or_else(|| symbol_info(addr))
    }

    fn read_from_file(&mut self, addr: u64, name: &str) -> Option<ExternalSymbolInfo> {
        let (path, bias) = object_containing(addr)?;
        let file = self.files.entry(bias).or_insert_with(|| {
            let data = crate::support::input::InputData::open(&path).ok()?;
            let exports = ExportTable::parse(data.bytes())?;
            Some((data, exports))
        });
        let (data, exports) = file.as_ref()?;
        let sym = exports.find_at(data.bytes(), name.as_bytes(), addr.wrapping_sub(bias))?;
        Some(ExternalSymbolInfo { is_function: sym.is_function, size: sym.size })
    }
}

/// One object in the loader's list: its name (empty for the executable),
/// load bias and program headers.
pub struct LoadedObject<'a> {
    pub name: &'a CStr,
    pub bias: u64,
    pub headers: &'a [libc::Elf64_Phdr],
}

impl LoadedObject<'_> {
    /// The object the loader describes with `info`, unless it gives no
    /// name or headers.
    ///
    /// # Safety
    /// `info` is one the loader passed to a `dl_iterate_phdr` callback,
    /// and the object is used only during that call.
    unsafe fn from_info(info: &libc::dl_phdr_info) -> Option<LoadedObject<'_>> {
        if info.dlpi_phdr.is_null() || info.dlpi_name.is_null() {
            return None;
        }
        Some(LoadedObject {
            // SAFETY: the loader's NUL-terminated name, valid during the call.
            name: unsafe { CStr::from_ptr(info.dlpi_name) },
            bias: info.dlpi_addr,
            // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
            headers: unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) },
        })
    }

    /// Whether one of the object's loaded segments holds `addr`.
    fn contains(&self, addr: u64) -> bool {
        self.segment_containing(addr).is_some()
    }

    /// The loaded segment (`PT_LOAD`) that holds `addr`.
    fn segment_containing(&self, addr: u64) -> Option<&libc::Elf64_Phdr> {
        self.headers.iter().find(|h| {
            let start = self.bias.wrapping_add(h.p_vaddr);
            h.p_type == libc::PT_LOAD && start <= addr && addr - start < h.p_memsz
        })
    }
}

/// The loaded object whose segment holds `addr`: its name as the loader
/// keeps it (empty for the executable) and its load bias. The link cache
/// records an external as such an object and an offset from its bias.
pub fn module_holding(addr: u64) -> Option<(std::ffi::CString, u64)> {
    let mut found = None;
    for_each_loaded_object(|object| {
        if object.contains(addr) {
            found = Some((object.name.to_owned(), object.bias));
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// The running kernel's release and build (`uname -rv`): its vDSO
/// defines `time` and `clock_gettime`, which the link cache's images call.
pub fn kernel_identity() -> String {
    // SAFETY: uname fills the zeroed struct (plain data) passed.
    let name = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut name) != 0 {
            return "unknown".to_string();
        }
        name
    };
    // SAFETY: uname's fields are NUL-terminated strings.
    let field = |f: &[libc::c_char]| unsafe { CStr::from_ptr(f.as_ptr()) }.to_string_lossy().into_owned();
    format!("{} {}", field(&name.release), field(&name.version))
}

/// What identifies this CPU to the C library, which picks its string and
/// memory functions by it (the link cache keys entries with it: an image
/// keeps the addresses libc chose). On x86-64, glibc's own copy of the
/// `cpuid` leaves it chose by (`__x86_get_cpuid_feature_leaf`, glibc
/// 2.33): running `cpuid` again costs ~11 µs a leaf in a VM.
#[cfg(target_arch = "x86_64")]
pub fn cpu_features() -> String {
    /// glibc's `struct cpuid_feature`: the leaf's registers, then the
    /// features it found usable.
    type CpuidFeature = [u32; 8];
    type FeatureLeaf = unsafe extern "C" fn(u32) -> *const CpuidFeature;
    let Some(address) = lookup_global(c"__x86_get_cpuid_feature_leaf") else {
        return "unknown".to_string();
    };
    // SAFETY: glibc's function of that type (its <sys/platform/x86.h>).
    let leaf_of = unsafe { std::mem::transmute::<u64, FeatureLeaf>(address) };
    // In hex, without the formatting machinery (96 `format!` calls were a
    // sixth of a cached hello world's instructions).
    let mut text = String::with_capacity(12 * 8 * 8);
    // Its leaves (1, 7, 0x80000001, 0xd.1, ...); past the last it answers
    // with zeros.
    for index in 0..12 {
        // SAFETY: the function returns a pointer to static data of glibc's
        // for any index.
        let Some(leaf) = (unsafe { leaf_of(index).as_ref() }) else { continue };
        let mut leaf = *leaf;
        if index == 0 {
            // Leaf 1's EBX holds the APIC ID of the core glibc started on.
            leaf[1] &= 0x00ff_ffff;
        }
        for word in leaf {
            text.extend(
                (0..8).rev().map(|nibble| char::from(b"0123456789abcdef"[(word >> (4 * nibble)) as usize & 15])),
            );
        }
    }
    text
}

/// aarch64: the hardware capabilities the kernel reports, and the main
/// ID register (glibc picks `memcpy` by the CPU's model too).
#[cfg(target_arch = "aarch64")]
pub fn cpu_features() -> String {
    // SAFETY: getauxval reads this process's auxiliary vector.
    let (hwcap, hwcap2) = unsafe { (libc::getauxval(libc::AT_HWCAP), libc::getauxval(libc::AT_HWCAP2)) };
    let midr = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1").unwrap_or_default();
    format!("{:x}.{:x}.{}", hwcap, hwcap2, midr.trim())
}

/// The executable's load bias: 0 for a position-dependent one (jitrun is
/// linked `-no-pie`), whose functions are where the file says.
pub fn executable_bias() -> Option<u64> {
    module_biases().into_iter().find(|(name, _)| name.as_bytes().is_empty()).map(|(_, bias)| bias)
}

/// Every loaded object's name and load bias, in the loader's order.
pub fn module_biases() -> Vec<(std::ffi::CString, u64)> {
    let mut modules = Vec::new();
    for_each_loaded_object(|object| {
        modules.push((object.name.to_owned(), object.bias));
        std::ops::ControlFlow::Continue(())
    });
    modules
}

/// The protection the dynamic loader gave the page holding `addr`, if a
/// loaded object's segment holds it: the segment's flags, read-only where
/// `PT_GNU_RELRO` covers the page (the loader protects the relro range
/// rounded down to pages at both ends). Read from the program headers,
/// which costs nothing, where asking the kernel means reading
/// `/proc/self/maps` (30-50 µs each time).
pub fn loader_protection(addr: u64) -> Option<region::Protection> {
    let page = crate::support::page_size();
    visit_object_containing(addr, |object| {
        let segment = object.segment_containing(addr)?;
        let relro = object.headers.iter().any(|h| {
            let start = object.bias.wrapping_add(h.p_vaddr);
            let (first, end) = (start / page * page, start.wrapping_add(h.p_memsz) / page * page);
            h.p_type == libc::PT_GNU_RELRO && first <= addr && addr < end
        });
        let mut protection = region::Protection::NONE;
        for (flag, granted) in [
            (libc::PF_R, region::Protection::READ),
            (libc::PF_W, region::Protection::WRITE),
            (libc::PF_X, region::Protection::EXECUTE),
        ] {
            if segment.p_flags & flag != 0 && !(relro && flag == libc::PF_W) {
                protection |= granted;
            }
        }
        Some(protection)
    })
    .flatten()
}

/// The loader's name for the loaded object whose segments contain `addr`
/// (the path it was opened by), `None` for the executable or no object.
/// A library's handle also finds its dependencies' definitions (libc's
/// `printf` through libm's): this says whose a found address really is.
pub fn defining_object_name(addr: u64) -> Option<String> {
    visit_object_containing(addr, |object| object.name.to_string_lossy().into_owned()).filter(|n| !n.is_empty())
}

/// Calls `visit` for each loaded object (`dl_iterate_phdr`, which holds the
/// loader's lock meanwhile) until it breaks.
pub fn for_each_loaded_object(mut visit: impl FnMut(&LoadedObject) -> std::ops::ControlFlow<()>) {
    type Visit<'v> = &'v mut dyn FnMut(&LoadedObject) -> std::ops::ControlFlow<()>;
    unsafe extern "C" fn trampoline(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info for this call, and
        // `data` is the `Visit` given below.
        let (info, visit) = unsafe { (&*info, &mut *(data as *mut Visit)) };
        // SAFETY: the loader's info, used during this call.
        let Some(object) = (unsafe { LoadedObject::from_info(info) }) else { return 0 };
        visit(&object).is_break() as libc::c_int
    }
    let mut visit: Visit = &mut visit;
    // SAFETY: the trampoline only hands the loader's data to `visit`, which
    // outlives the call. The loader's own list: not the image as a module.
    unsafe { loaders_dl_iterate_phdr()(Some(trampoline), &mut visit as *mut Visit as *mut libc::c_void) };
}

type PhdrCallback =
    Option<unsafe extern "C" fn(*mut libc::dl_phdr_info, libc::size_t, *mut libc::c_void) -> libc::c_int>;
type DlIteratePhdr = unsafe extern "C" fn(PhdrCallback, *mut libc::c_void) -> libc::c_int;

/// The definition of `name` (at `version`, else any) after jitrun's own
/// (RTLD_NEXT from this executable: the loader's or libc's, or a preloaded
/// sanitizer's wrapper of it), looked up once into `cache` (1: none).
fn next_definition(cache: &std::sync::atomic::AtomicUsize, name: &CStr, version: &CStr) -> Option<usize> {
    let mut found = cache.load(std::sync::atomic::Ordering::Acquire);
    if found == 0 {
        // SAFETY: dlvsym/dlsym with RTLD_NEXT and NUL-terminated names.
        found = unsafe {
            match libc::dlvsym(libc::RTLD_NEXT, name.as_ptr(), version.as_ptr()) as usize {
                0 => libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize,
                versioned => versioned,
            }
        };
        cache.store(found.max(1), std::sync::atomic::Ordering::Release);
    }
    (found > 1).then_some(found)
}

/// glibc's `dl_iterate_phdr`, which jitrun's own (below) wraps.
fn loaders_dl_iterate_phdr() -> DlIteratePhdr {
    static REAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let real = next_definition(&REAL, c"dl_iterate_phdr", c"GLIBC_2.2.5").expect("libc has dl_iterate_phdr");
    // SAFETY: the loader's function of this signature.
    unsafe { std::mem::transmute::<usize, DlIteratePhdr>(real) }
}

/// The image as a loaded module, for a sanitizer's symbolizer: its name is
/// a file holding the image's symbols at their addresses, its segments the
/// image's code.
struct SyntheticModule {
    /// The memory file holding the symbol file, named `/proc/PID/fd/N`
    /// with the current process's id (a forked child's own, which it
    /// inherited), and what it was (device, inode): listed only while the
    /// descriptor still is that file (a program may close it and reuse the
    /// number; a symbolizer that opened a pipe there would wait forever).
    fd: libc::c_int,
    identity: FileIdentity,
    /// Its segments, and its `.eh_frame_hdr` when it has one (see
    /// [`map_frame_search_table`]).
    headers: Vec<libc::Elf64_Phdr>,
}

impl SyntheticModule {
    /// The address of its `.eh_frame_hdr`, if it has one.
    fn frame_table(&self) -> Option<u64> {
        self.headers.iter().find(|h| h.p_type == libc::PT_GNU_EH_FRAME).map(|h| h.p_vaddr)
    }
}

/// Where the unwinder finds the image's frames in its module: an
/// `.eh_frame_hdr` with a binary search table, as a linker writes one,
/// mapped within 2 GiB of the image (its entries are 32-bit offsets).
/// Never unmapped: libgcc_s caches where a module's table is.
fn map_frame_search_table(eh_frame: (u64, u64)) -> Result<libc::Elf64_Phdr, String> {
    let (address, size) = eh_frame;
    // SAFETY: the image's .eh_frame, mapped and written before the image's
    // finalize actions run, for as long as the image.
    let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, size as usize) };
    let table = crate::graph::ehframe::search_table(address, bytes)?;
    let len = 12 + 8 * table.len();
    let near = |at: u64| at.abs_diff(address) < (1 << 31) - (1 << 24);
    let page = crate::support::page_size();
    let hints = [0, address.saturating_sub(1 << 24), address + (1 << 24), address.saturating_sub(1 << 28)];
    let header = hints
        .iter()
        .find_map(|&hint| {
            // SAFETY: a fresh private mapping at an address the kernel picks.
            let at = unsafe {
                libc::mmap(
                    (hint / page * page) as *mut libc::c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if at == libc::MAP_FAILED {
                return None;
            }
            if near(at as u64) && near(at as u64 + len as u64) {
                return Some(at as u64);
            }
            // SAFETY: unmapping the mapping just made.
            unsafe { libc::munmap(at, len) };
            None
        })
        .ok_or("no room for the search table within 2 GiB of the image")?;
    let offset = |to: u64| (to.wrapping_sub(header) as i64 as i32).to_le_bytes();
    let mut hdr = Vec::with_capacity(len);
    // Version 1; eh_frame_ptr pcrel sdata4; fde_count udata4; table datarel sdata4.
    hdr.extend_from_slice(&[1, 0x1b, 0x03, 0x3b]);
    hdr.extend_from_slice(&(address.wrapping_sub(header + 4) as i64 as i32).to_le_bytes());
    hdr.extend_from_slice(&(table.len() as u32).to_le_bytes());
    for &(pc_begin, fde) in &table {
        hdr.extend_from_slice(&offset(pc_begin));
        hdr.extend_from_slice(&offset(fde));
    }
    // SAFETY: `len` bytes just mapped writable; then made read-only.
    unsafe {
        std::ptr::copy_nonoverlapping(hdr.as_ptr(), header as *mut u8, len);
        libc::mprotect(header as *mut libc::c_void, len, libc::PROT_READ);
    }
    Ok(libc::Elf64_Phdr {
        p_type: libc::PT_GNU_EH_FRAME,
        p_flags: libc::PF_R,
        p_offset: 0,
        p_vaddr: header,
        p_paddr: header,
        p_filesz: len as u64,
        p_memsz: len as u64,
        p_align: 4,
    })
}

static SYNTHETIC_MODULE: std::sync::atomic::AtomicPtr<SyntheticModule> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// Lists the image as a module in every `dl_iterate_phdr` of the process
/// (see jitrun's `dl_iterate_phdr`): ASan, TSan and UBSan then name its
/// frames in their reports. `symbol_file` is an ELF file with the image's
/// functions at their addresses, kept in a memory file whose
/// `/proc/PID/fd/N` path the symbolizer (a child process) can open;
/// `segments` the image's (address, size, executable); `eh_frame` (address, size) the
/// image's `.eh_frame`, which libgcc_s's unwinder (C++ exceptions, the
/// sanitizer's stack traces) then finds through the module's search table,
/// or, when that cannot be made, through a registration. Returns the
/// listing: dropping it takes the module out again.
pub fn list_image_as_module(
    symbol_file: &[u8],
    segments: &[(u64, u64, bool)],
    eh_frame: Option<(u64, u64)>,
) -> Result<ListedModule> {
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: memfd_create with a NUL-terminated name; the descriptor is
    // owned by the File below, then kept open for the process's life.
    let fd = unsafe { libc::memfd_create(c"jitrun-image".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()).context("memfd_create");
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(symbol_file).context("writing the image's symbol file")?;
    // Moved high, out of the program's way: natively its first open()
    // returns 3.
    let file = match out_of_the_programs_way(&file) {
        Some(high) => high,
        None => file,
    };
    let identity = FileIdentity::of_descriptor(file.as_raw_fd()).context("fstat of the image's symbol file")?;
    let mut headers: Vec<_> = segments
        .iter()
        .map(|&(address, size, executable)| libc::Elf64_Phdr {
            p_type: libc::PT_LOAD,
            // Not writable: LeakSanitizer scans a module's writable
            // segments, and has the image's as root regions already.
            p_flags: libc::PF_R | if executable { libc::PF_X } else { 0 },
            p_offset: 0,
            p_vaddr: address,
            p_paddr: address,
            p_filesz: size,
            p_memsz: size,
            p_align: 4096,
        })
        .collect();
    let mut registration = None;
    if let Some(eh_frame) = eh_frame {
        match map_frame_search_table(eh_frame) {
            Ok(header) => {
                headers.push(header);
                // Looked up now, not in the middle of an unwind.
                loaders_dl_find_object();
            }
            Err(e) => {
                log::debug!("the image's module has no frame search table ({}): registering its frames", e);
                registration = crate::host::unwind::register_with_shared_unwinder(eh_frame.0);
            }
        }
    }
    let fd = file.as_raw_fd();
    let module = Box::into_raw(Box::new(SyntheticModule { fd, identity, headers }));
    retire(SYNTHETIC_MODULE.swap(module, std::sync::atomic::Ordering::AcqRel));
    Ok(ListedModule { module, _file: file, _registration: registration })
}

/// Keeps a module taken out of the list: a walk in progress on another
/// thread may still read it, so it is never freed, but stays reachable for
/// LeakSanitizer (a few bytes per image).
fn retire(module: *mut SyntheticModule) {
    static RETIRED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    if !module.is_null() {
        RETIRED.lock().unwrap_or_else(|e| e.into_inner()).push(module as usize);
    }
}

/// The image listed as a module (see [`list_image_as_module`]).
pub struct ListedModule {
    module: *mut SyntheticModule,
    _file: std::fs::File,
    /// The frames registered with libgcc_s when the module has no table.
    _registration: Option<crate::host::unwind::SharedRegistration>,
}

// SAFETY: the pointer is only compared, never dereferenced through this.
unsafe impl Send for ListedModule {}

impl Drop for ListedModule {
    fn drop(&mut self) {
        let taken = SYNTHETIC_MODULE.compare_exchange(
            self.module,
            std::ptr::null_mut(),
            std::sync::atomic::Ordering::AcqRel,
            std::sync::atomic::Ordering::Acquire,
        );
        if let Ok(module) = taken {
            retire(module);
        }
    }
}

/// `dl_iterate_phdr` for the whole process (jitrun exports it, so the
/// libraries' references bind here): the loader's list with the images
/// in place of jitrun's executable ([`images_as_the_program`]); with a
/// sanitizer preloaded, the loader's list as it is, then the image as a
/// module with a symbol file ([`list_image_as_module`]).
///
/// # Safety
/// As `dl_iterate_phdr(3)`.
#[no_mangle]
pub unsafe extern "C" fn dl_iterate_phdr(callback: PhdrCallback, data: *mut libc::c_void) -> libc::c_int {
    let module = SYNTHETIC_MODULE.load(std::sync::atomic::Ordering::Acquire);
    if module.is_null() {
        let Some(callback) = callback else { return 0 };
        let mut substitution = ProgramSubstitution { callback, data };
        let context = &mut substitution as *mut ProgramSubstitution as *mut libc::c_void;
        // SAFETY: the trampoline gets `context`, alive for the call.
        return unsafe { loaders_dl_iterate_phdr()(Some(images_as_the_program), context) };
    }
    // SAFETY: the caller's arguments, as the loader takes them.
    let result = unsafe { loaders_dl_iterate_phdr()(callback, data) };
    let Some(callback) = callback.filter(|_| result == 0) else { return result };
    // SAFETY: published modules are never freed.
    let module = unsafe { &*module };
    if FileIdentity::of_descriptor(module.fd) != Some(module.identity) {
        return result; // the program closed or replaced the symbol file
    }
    let name = proc_fd_path(module.fd);
    let mut info = libc::dl_phdr_info {
        dlpi_addr: 0,
        dlpi_name: name.as_bytes().as_ptr().cast(),
        dlpi_phdr: module.headers.as_ptr(),
        dlpi_phnum: module.headers.len() as u16,
        dlpi_adds: 0,
        dlpi_subs: 0,
        dlpi_tls_modid: 0,
        dlpi_tls_data: std::ptr::null_mut(),
    };
    // SAFETY: a complete info for the caller's callback, as the loader gives.
    unsafe { callback(&mut info, std::mem::size_of::<libc::dl_phdr_info>(), data) }
}

/// A `dl_iterate_phdr` caller's callback and data, for
/// [`images_as_the_program`].
struct ProgramSubstitution {
    callback: unsafe extern "C" fn(*mut libc::dl_phdr_info, usize, *mut libc::c_void) -> libc::c_int,
    data: *mut libc::c_void,
}

/// Passes each loaded object on to the caller, but for the executable,
/// jitrun's own: in its place, first in the list as natively, come the
/// images, as the program (empty name, its segments, the loader's counts
/// of loads and unloads, which libgcc's unwinder checks its cache
/// against). A garbage collector (Boehm's) finds the program's globals,
/// its roots, this way; a program listing its objects sees the native list.
unsafe extern "C" fn images_as_the_program(
    info: *mut libc::dl_phdr_info,
    size: usize,
    context: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: `context` is the ProgramSubstitution `dl_iterate_phdr` made;
    // `info` the loader's, valid for this call.
    let (substitution, loaded) = unsafe { (&*(context as *const ProgramSubstitution), &*info) };
    let ours = dl_iterate_phdr as *const () as u64;
    // SAFETY: the loader's info, used during this call.
    let is_jitrun = unsafe { LoadedObject::from_info(loaded) }.is_some_and(|object| object.contains(ours));
    if is_jitrun {
        let images = crate::host::dladdr::visit_image_headers(|headers| {
            let mut image = libc::dl_phdr_info {
                dlpi_addr: 0,
                dlpi_name: c"".as_ptr(),
                dlpi_phdr: headers.as_ptr(),
                dlpi_phnum: headers.len() as u16,
                dlpi_adds: loaded.dlpi_adds,
                dlpi_subs: loaded.dlpi_subs,
                dlpi_tls_modid: 0,
                dlpi_tls_data: std::ptr::null_mut(),
            };
            let size = size.min(std::mem::size_of::<libc::dl_phdr_info>());
            // SAFETY: a complete info for the caller's callback, as the loader gives.
            unsafe { (substitution.callback)(&mut image, size, substitution.data) }
        });
        if let Some(result) = images {
            return result;
        }
    }
    // SAFETY: the loader's info, passed on as it was given.
    unsafe { (substitution.callback)(info, size, substitution.data) }
}

/// A copy of `file` at a high descriptor, close-on-exec: 2048 or above
/// (past the 1024 that programs closing "all" descriptors, or `select`,
/// count to) where the limit on open files allows, else 1000; `None` if it
/// does not. Not much higher: a fork copies the descriptor table.
fn out_of_the_programs_way(file: &std::fs::File) -> Option<std::fs::File> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    let lowest = match limit.rlim_cur {
        4097.. => 2048,
        1001..=4096 => 1000,
        _ => return None,
    };
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor, owned by the File.
    let high = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, lowest) };
    // SAFETY: as above.
    (high >= 0).then(|| unsafe { std::fs::File::from_raw_fd(high) })
}

/// `/proc/PID/fd/FD`, formatted without allocating (it is named while a
/// sanitizer reports, maybe from a signal handler).
fn proc_fd_path(fd: libc::c_int) -> crate::support::fixed_buffer::FixedBuffer<48> {
    use std::fmt::Write as _;
    let mut path = crate::support::fixed_buffer::FixedBuffer::new();
    // SAFETY: getpid has no preconditions.
    let _ = write!(path, "/proc/{}/fd/{}\0", unsafe { libc::getpid() }, fd);
    path
}

/// glibc's `struct dl_find_object` on x86-64 (no `dlfo_eh_dbase` or
/// `dlfo_eh_count` there).
#[repr(C)]
pub struct DlFindObject {
    dlfo_flags: u64,
    dlfo_map_start: *mut libc::c_void,
    dlfo_map_end: *mut libc::c_void,
    dlfo_link_map: *mut libc::c_void,
    dlfo_eh_frame: *mut libc::c_void,
    reserved: [u64; 7],
}

type DlFindObjectFn = unsafe extern "C" fn(*mut libc::c_void, *mut DlFindObject) -> libc::c_int;

/// glibc's `_dl_find_object` (2.35 and later), which jitrun's own wraps;
/// `None` with an older loader.
fn loaders_dl_find_object() -> Option<DlFindObjectFn> {
    static REAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let real = next_definition(&REAL, c"_dl_find_object", c"GLIBC_2.35")?;
    // SAFETY: the loader's function of this signature.
    Some(unsafe { std::mem::transmute::<usize, DlFindObjectFn>(real) })
}

/// `_dl_find_object` for the whole process (jitrun exports it, so
/// libgcc_s's unwinder binds here): the image's code when it is listed as a
/// module with a frame search table (only with a sanitizer preloaded; see
/// [`list_image_as_module`]), else the loader's answer. libgcc_s asks this
/// rather than `dl_iterate_phdr` where frames are not registered with it.
///
/// # Safety
/// As `_dl_find_object(3)`.
#[no_mangle]
pub unsafe extern "C" fn _dl_find_object(pc: *mut libc::c_void, result: *mut DlFindObject) -> libc::c_int {
    let module = SYNTHETIC_MODULE.load(std::sync::atomic::Ordering::Acquire);
    // SAFETY: published modules are never freed.
    if let Some(module) = unsafe { module.as_ref() } {
        let pc = pc as u64;
        let code = module.headers.iter().find(|h| {
            h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 && pc >= h.p_vaddr && pc - h.p_vaddr < h.p_memsz
        });
        if let (Some(code), Some(table)) = (code, module.frame_table()) {
            // SAFETY: the caller's result block, as the loader fills it.
            unsafe {
                result.write(DlFindObject {
                    dlfo_flags: 0,
                    dlfo_map_start: code.p_vaddr as *mut libc::c_void,
                    dlfo_map_end: (code.p_vaddr + code.p_memsz) as *mut libc::c_void,
                    dlfo_link_map: std::ptr::null_mut(),
                    dlfo_eh_frame: table as *mut libc::c_void,
                    reserved: [0; 7],
                })
            };
            return 0;
        }
    }
    match loaders_dl_find_object() {
        // SAFETY: the caller's arguments, as the loader takes them.
        Some(real) => unsafe { real(pc, result) },
        None => -1,
    }
}

/// The file of the loaded shared object whose segments contain `addr`, and
/// its load bias, from the loader's list of objects (which, unlike
/// `dladdr`, searches no symbols). `None` for the executable itself.
fn object_containing(addr: u64) -> Option<(PathBuf, u64)> {
    use std::os::unix::ffi::OsStrExt;
    visit_object_containing(addr, |object| {
        (!object.name.is_empty())
            .then(|| (PathBuf::from(std::ffi::OsStr::from_bytes(object.name.to_bytes())), object.bias))
    })
    .flatten()
}

/// `visit`'s answer for the loaded object whose segments contain `addr`
/// (the loader's lock is held meanwhile), `None` if no object does.
fn visit_object_containing<T>(addr: u64, visit: impl FnOnce(&LoadedObject) -> T) -> Option<T> {
    let mut visit = Some(visit);
    let mut answer = None;
    for_each_loaded_object(|object| {
        if !object.contains(addr) {
            return std::ops::ControlFlow::Continue(());
        }
        answer = visit.take().map(|visit| visit(object));
        std::ops::ControlFlow::Break(())
    });
    answer
}

fn unsafe_zeroed_dl_info() -> libc::Dl_info {
    libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    }
}

/// Loads the shared library at `path`, whose bytes are `file`, as an
/// executable linked against it would have it (its thread-local block in
/// static TLS, see [`crate::host::tls::load_library_with_static_tls`]), and
/// appends it to `libraries`, last, after the object that pins its TLS.
///
/// A library that refers to names the program defines (`program`), and
/// nothing loaded defines, gets stand-ins for them first (see
/// [`stand_ins_for_the_program`]), kept before it in `libraries`.
pub fn load_library(
    path: &Path,
    file: &[u8],
    libraries: &mut Vec<SharedLibrary>,
    program: ProgramDefinitions,
) -> Result<()> {
    let path = &as_the_loader_names_it(path, file);
    let pin = crate::host::tls::load_library_with_static_tls(path, file)?;
    let stand_ins = stand_ins_for_the_program(path, file, program)?;
    let library = SharedLibrary::open(path)?;
    libraries.extend(pin);
    libraries.extend(stand_ins);
    libraries.push(library);
    Ok(())
}

/// For libraries loaded where the program's definitions are not known
/// (or do not matter): none.
pub fn no_program_definitions(_: &str) -> Option<ProgramDefinition> {
    None
}

/// A library that calls back into the program (`app_callback`) or reads
/// its variables: natively the executable defines those names for it, and
/// the loader binds the library to them when it loads, before the
/// executable's constructors. jitrun loads the libraries before the image
/// exists, so a library of stand-ins, loaded first, defines each name the
/// library refers to that the program defines and nothing loaded does:
/// zeroed memory for a variable, for a function one that stops the
/// process with a message (called only if the library's own constructor
/// calls the program). Once the image is mapped, the stand-ins' symbols
/// and every GOT entry bound to them point at the program's definitions
/// (`link::program_stand_in_patches`). `None` if the library needs none.
fn stand_ins_for_the_program(path: &Path, file: &[u8], program: ProgramDefinitions) -> Result<Option<SharedLibrary>> {
    let mut exports = Vec::new();
    for name in crate::graph::format::dynamic::undefined_symbols(file) {
        let Some(definition) = program(name) else { continue };
        let Ok(c_name) = CString::new(name) else { continue };
        if lookup_global(&c_name).is_some() {
            // Bound to that; the program's takes its place later, as an
            // executable's does (see `interpose::GotInterposition`).
            continue;
        }
        let address = if definition.is_function {
            program_function_called_too_early as *const () as u64
        } else {
            // Leaked: the library keeps pointing at it until the image is mapped.
            let words = vec![0u64; definition.size.div_ceil(8).max(1) as usize];
            words.leak().as_ptr() as u64
        };
        exports.push(crate::host::exports::Export {
            name: name.to_string(),
            address,
            size: definition.size,
            is_function: definition.is_function,
        });
    }
    if exports.is_empty() {
        return Ok(None);
    }
    log::debug!(
        "{} refers to the program's {}: stand-ins until the image is mapped",
        path.display(),
        exports.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
    );
    const NAME: &str = "jitrun-program-symbols.so";
    let mut library = SharedLibrary::open_from_memory(NAME, &crate::host::exports::shared_object(NAME, &exports)?)?;
    library.stand_ins = exports.into_iter().map(|e| std::sync::Arc::from(e.name)).collect();
    Ok(Some(library))
}

/// What a stand-in for a function of the program does if a library calls
/// it before the image is mapped: only a library's constructor can.
extern "C" fn program_function_called_too_early() {
    const MESSAGE: &[u8] =
        b"jitrun: a shared library's constructor called a function of the program, which is not loaded yet\n";
    // SAFETY: write(2) of a static buffer to stderr, then abort.
    unsafe {
        libc::write(2, MESSAGE.as_ptr() as *const libc::c_void, MESSAGE.len());
        libc::abort();
    }
}

/// The path the loader opens this library by when a program names it in
/// `DT_NEEDED`: its SONAME as the loader's cache resolves it
/// (`/lib/x86_64-linux-gnu/libz.so.1` for `-lz`'s `libz.so`), when that
/// is the same file. The loader names a library by the path it was opened
/// by (`dladdr`, `dl_iterate_phdr`, a sanitizer's module list), so the
/// program sees the names a native one does. Otherwise `path`.
fn as_the_loader_names_it(path: &Path, file: &[u8]) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let same_file = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    };
    crate::graph::format::dynamic::soname(file)
        .map(crate::graph::ldcache::system_library)
        .filter(|cached| cached.is_absolute() && cached != path && same_file(cached, path))
        .unwrap_or_else(|| path.to_path_buf())
}

/// A shared library named for the link (on the command line or in a
/// linker script), in command-line order, and where it stands.
pub enum NamedLibrary {
    /// Loaded when named: an index into the libraries given to
    /// [`HostResolver::resolve`].
    Loaded(usize),
    /// To load during resolution, once a strong reference needs a symbol it
    /// exports (ld's `--as-needed`): unused, it is never loaded and its
    /// constructors never run, as in a native link.
    OnDemand { path: PathBuf, file: std::sync::Arc<crate::support::input::InputData>, exports: ExportTable },
    /// To load when resolution starts, used or not (ld's `--no-as-needed`):
    /// then the objects' definitions are known, which the library may
    /// refer to (see [`stand_ins_for_the_program`]).
    Outright { path: PathBuf, file: std::sync::Arc<crate::support::input::InputData> },
    /// An `OnDemand` or `Outright` one resolution loaded: an index into
    /// what the resolver loaded ([`HostResolver::into_loaded_libraries`]).
    LoadedOnDemand(usize),
    /// An `OnDemand` one needed but refused by `dlopen` (the reference
    /// then says unresolved).
    Unloadable,
}

/// Caches `dlsym` answers: a hello world asks for the same few names many
/// times across objects, and a large program for thousands.
///
/// A name is looked up in the named libraries in order (loading one that
/// is not loaded yet if the reference is strong and it exports the name),
/// then in the other given libraries, each in its own definitions only (as
/// ld binds to a library on the command line; a definition in one of its
/// dependencies is bound as the loader binds it, from the whole process),
/// then in the whole process. A strong
/// reference found nowhere loads libgcc_s once and looks there, as `cc`
/// links it (`-lgcc_s --as-needed`) for helpers libc lacks, such as
/// `__divti3` or `__gcc_personality_v0` (jitrun has its own unwinder linked
/// in, not libgcc_s loaded). What loads here comes after the given
/// libraries: [`HostResolver::into_loaded_libraries`] hands it over.
#[derive(Default)]
pub struct HostResolver {
    cache: rustc_hash::FxHashMap<Box<str>, Option<(u64, Option<usize>)>>,
    name_buf: Vec<u8>,
    named: Vec<NamedLibrary>,
    /// What loaded here, in order (with the objects pinning their TLS).
    loaded: Vec<SharedLibrary>,
    /// libgcc_s: `None` until a strong reference missed everywhere, then
    /// its index in `loaded` if it loaded.
    compiler_runtime: Option<Option<usize>>,
    /// The file names (without directories) `LD_PRELOAD` lists, read once.
    preloaded: Option<Vec<Vec<u8>>>,
}

/// One name being resolved, with its C form for `dlsym`.
#[derive(Clone, Copy)]
struct Query<'a> {
    name: &'a str,
    c_name: &'a CStr,
    /// A strong reference: only such a reference loads a library.
    strong: bool,
    /// The program's definitions, which a library loaded now may need.
    program: ProgramDefinitions<'a>,
}

/// `LD_PRELOAD` as the process started with it, when the command line
/// changes it before linking (see [`note_preload_at_start`]).
static PRELOADED_AT_START: std::sync::OnceLock<std::ffi::OsString> = std::sync::OnceLock::new();

/// Records the `LD_PRELOAD` the loader saw at start-up: the libraries
/// preloaded then are what interposes on the program's references, even
/// once the variable is given back its original value for the program
/// (jitrun restarted with a sanitizer's runtime in it).
pub fn note_preload_at_start(list: std::ffi::OsString) {
    let _ = PRELOADED_AT_START.set(list);
}

/// The libraries preloaded when the process started (see
/// [`note_preload_at_start`]), as `LD_PRELOAD` lists them.
pub fn preload_list() -> std::ffi::OsString {
    PRELOADED_AT_START.get().cloned().or_else(|| std::env::var_os("LD_PRELOAD")).unwrap_or_default()
}

/// The definition of `base` in `version`, for a reference to that version
/// (`.symver old_memcpy, memcpy@GLIBC_2.2.5`: code built to run on older
/// glibc releases pins one so), bound as the loader binds a versioned
/// reference: an older, hidden version counts. Searched in the given and
/// loaded libraries (each with its dependencies), then the whole process;
/// the library's index as [`HostResolver::resolve`] counts them.
fn versioned_definition(
    base: &str,
    version: &str,
    given: &[SharedLibrary],
    loaded: &[SharedLibrary],
) -> Option<(u64, Option<usize>)> {
    let (base, version) = (CString::new(base).ok()?, CString::new(version).ok()?);
    // SAFETY: dlvsym with a handle we hold open (or RTLD_DEFAULT) and
    // NUL-terminated names.
    let find = |handle| unsafe { libc::dlvsym(handle, base.as_ptr(), version.as_ptr()) as u64 };
    given
        .iter()
        .chain(loaded)
        .enumerate()
        .find_map(|(i, library)| Some((find(library.handle), Some(i))).filter(|&(a, _)| a != 0))
        .or_else(|| Some((find(libc::RTLD_DEFAULT), None)).filter(|&(a, _)| a != 0))
}

/// The shared library `cc` links by default besides libc.
pub const COMPILER_RUNTIME_LIBRARY: &str = "libgcc_s.so.1";

impl HostResolver {
    /// A resolver for a link that named `named` libraries, in order.
    pub fn new(named: Vec<NamedLibrary>) -> HostResolver {
        HostResolver { named, ..HostResolver::default() }
    }

    /// Finds `name` (see above); returns the address and which library
    /// provided it, counting those loaded here from `libraries.len()` on.
    pub fn resolve(
        &mut self,
        name: &str,
        libraries: &[SharedLibrary],
        strong: bool,
        program: ProgramDefinitions,
    ) -> Option<(u64, Option<usize>)> {
        if let Some(hit) = self.cache.get(name).copied().flatten() {
            return Some(hit);
        }
        // The buffer is taken out while in use, so `self` stays free.
        let mut name_buf = std::mem::take(&mut self.name_buf);
        name_buf.clear();
        name_buf.extend_from_slice(name.as_bytes());
        name_buf.push(0);
        let found = CStr::from_bytes_with_nul(&name_buf)
            .ok()
            .and_then(|c_name| self.lookup(&Query { name, c_name, strong, program }, libraries));
        self.name_buf = name_buf;
        found
    }

    fn lookup(&mut self, query: &Query, libraries: &[SharedLibrary]) -> Option<(u64, Option<usize>)> {
        let Query { name, c_name, strong, .. } = *query;
        if let Some((base, version)) = name.split_once('@') {
            let found = versioned_definition(base, version.trim_start_matches('@'), libraries, &self.loaded);
            self.cache.insert(name.into(), found);
            return found;
        }
        // A weak reference that missed before misses again; a strong one
        // may load a library the weak one could not.
        let tried_before = self.cache.contains_key(name);
        let mut found = None;
        if !tried_before || strong {
            found = self
                .lookup_named(query, libraries)
                .or_else(|| {
                    let named_given =
                        |i: usize| self.named.iter().any(|n| matches!(n, NamedLibrary::Loaded(g) if *g == i));
                    libraries
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| !named_given(i))
                        .find_map(|(i, lib)| lib.lookup_own(c_name).map(|a| (a, Some(i))))
                })
                .or_else(|| lookup_global(c_name).map(|a| (a, None)))
                // A library's own definition never wins over one of a
                // library preloaded before them all.
                .map(|(addr, library)| match self.as_preloaded(c_name, addr) {
                    bound if bound == addr => (addr, library),
                    preloaded => (preloaded, None),
                });
        }
        if found.is_none() && strong {
            found = self.lookup_compiler_runtime(c_name, libraries.len());
        }
        self.cache.insert(name.into(), found);
        found
    }

    /// `addr`, found for `name`, or what a library preloaded with
    /// `LD_PRELOAD` defines instead for a reference in the version of the
    /// definition at `addr` ([`preloaded_definition`]), as the loader binds
    /// a native program's reference. Only a preloaded object's definition
    /// can win: libc's must not over a named library's (`-ljemalloc`'s
    /// malloc); without `LD_PRELOAD`, `addr` is the native binding.
    fn as_preloaded(&mut self, name: &CStr, addr: u64) -> u64 {
        let preloaded = self.preloaded.get_or_insert_with(|| {
            use std::os::unix::ffi::OsStrExt;
            preload_list()
                .as_bytes()
                .split(|&b| b == b' ' || b == b':')
                .filter(|entry| !entry.is_empty())
                .map(|entry| entry.rsplit(|&b| b == b'/').next().unwrap_or(entry).to_vec())
                .collect()
        });
        if preloaded.is_empty() {
            return addr;
        }
        let wanted = definition_version(name, addr);
        preloaded_definition(name, wanted.as_deref(), preloaded).unwrap_or(addr)
    }

    /// The named libraries, in order; a pending one that exports `name`
    /// loads now if the reference is strong.
    fn lookup_named(&mut self, query: &Query, libraries: &[SharedLibrary]) -> Option<(u64, Option<usize>)> {
        let Query { name, c_name, strong, program } = *query;
        for n in 0..self.named.len() {
            let index = match &self.named[n] {
                NamedLibrary::Loaded(i) => *i,
                NamedLibrary::LoadedOnDemand(k) => libraries.len() + *k,
                NamedLibrary::Unloadable | NamedLibrary::Outright { .. } => continue,
                NamedLibrary::OnDemand { file, exports, .. } => {
                    if !strong || !exports.defines(file.bytes(), name.as_bytes()) {
                        continue;
                    }
                    let NamedLibrary::OnDemand { path, file, .. } =
                        std::mem::replace(&mut self.named[n], NamedLibrary::Unloadable)
                    else {
                        unreachable!("matched above")
                    };
                    log::debug!("{} is needed (for `{}`)", path.display(), name);
                    let Some(k) = self.load(&path, file.bytes(), log::Level::Warn, program) else { continue };
                    self.named[n] = NamedLibrary::LoadedOnDemand(k);
                    libraries.len() + k
                }
            };
            let library = libraries.get(index).unwrap_or_else(|| &self.loaded[index - libraries.len()]);
            if let Some(address) = library.lookup_own(c_name) {
                return Some((address, Some(index)));
            }
        }
        None
    }

    fn lookup_compiler_runtime(&mut self, c_name: &CStr, first_index: usize) -> Option<(u64, Option<usize>)> {
        let runtime = match self.compiler_runtime {
            Some(runtime) => runtime,
            None => {
                let path = crate::graph::ldcache::system_library(COMPILER_RUNTIME_LIBRARY);
                let loaded = crate::support::input::InputData::open(&path)
                    .map_err(|e| log::debug!("{:#}", e))
                    .ok()
                    .and_then(|file| self.load(&path, file.bytes(), log::Level::Debug, &no_program_definitions));
                *self.compiler_runtime.insert(loaded)
            }
        };
        let k = runtime?;
        self.loaded[k].lookup(c_name).map(|a| (a, Some(first_index + k)))
    }

    /// Loads a library during resolution; its index in `loaded`, or `None`
    /// if it does not load (said at `level`: a warning for a library the
    /// command line named, whose references then stay unresolved).
    fn load(&mut self, path: &Path, file: &[u8], level: log::Level, program: ProgramDefinitions) -> Option<usize> {
        match load_library(path, file, &mut self.loaded, program) {
            Ok(()) => Some(self.loaded.len() - 1),
            Err(e) => {
                log::log!(level, "{:#}", e);
                None
            }
        }
    }

    /// The path of the library `resolve` named by `index`.
    pub fn library_path<'a>(&'a self, index: usize, libraries: &'a [SharedLibrary]) -> &'a Path {
        match libraries.get(index) {
            Some(lib) => &lib.path,
            None => &self.loaded[index - libraries.len()].path,
        }
    }

    /// Loads the libraries named outright (see [`NamedLibrary::Outright`]),
    /// in order, before any name is resolved.
    pub fn load_outright(&mut self, program: ProgramDefinitions) -> Result<()> {
        for n in 0..self.named.len() {
            if !matches!(self.named[n], NamedLibrary::Outright { .. }) {
                continue;
            }
            let NamedLibrary::Outright { path, file } = std::mem::replace(&mut self.named[n], NamedLibrary::Unloadable)
            else {
                unreachable!("matched above")
            };
            load_library(&path, file.bytes(), &mut self.loaded, program)?;
            self.named[n] = NamedLibrary::LoadedOnDemand(self.loaded.len() - 1);
        }
        Ok(())
    }

    /// Where the named libraries that loaded are among the given libraries
    /// (`given` of them) followed by those loaded here.
    pub fn named_and_loaded(&self, given: usize) -> Vec<usize> {
        self.named
            .iter()
            .filter_map(|named| match named {
                NamedLibrary::Loaded(i) => Some(*i),
                NamedLibrary::LoadedOnDemand(k) => Some(given + k),
                _ => None,
            })
            .collect()
    }

    /// Libraries loaded while resolving, to append to the given ones (which
    /// keeps the indexes `resolve` returned valid).
    /// Names one more library, after the others (before any name is
    /// resolved: the compiler driver's libraries, which come last).
    pub fn name(&mut self, library: NamedLibrary) {
        self.named.push(library);
    }

    /// The shared libraries named for the link.
    pub fn named(&self) -> &[NamedLibrary] {
        &self.named
    }

    pub fn into_loaded_libraries(self) -> Vec<SharedLibrary> {
        self.loaded
    }
}

/// This process as a link's [`ExternalSymbols`]: the shared libraries the
/// link named or loaded (`libraries`, then those `resolver` loads on
/// demand), the executable and what the loader loaded at start.
pub struct ThisProcess<'a> {
    pub resolver: &'a mut HostResolver,
    pub libraries: &'a [SharedLibrary],
    pub facts: HostSymbolFacts,
}

impl ExternalSymbols for ThisProcess<'_> {
    fn load_named(&mut self, program: ProgramDefinitions) -> Result<()> {
        self.resolver.load_outright(program)
    }

    fn find(&mut self, name: &str, strong: bool, program: ProgramDefinitions) -> Option<(u64, Option<usize>)> {
        self.resolver.resolve(name, self.libraries, strong, program)
    }

    fn object_at(&self, address: u64) -> Option<String> {
        defining_object_name(address)
    }

    fn symbol_info(&mut self, address: u64, name: &str) -> Option<ExternalSymbolInfo> {
        self.facts.info(address, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The protections read from the program headers are the kernel's,
    /// for every GOT entry of every loaded object (RELRO or not).
    #[test]
    fn loader_protection_agrees_with_the_kernel() {
        let mut slots = Vec::new();
        for_each_loaded_object(|object| {
            // SAFETY: the loader describes a module of this process and
            // holds its lock during the visit.
            if let Some(tables) = unsafe { dynamic_tables(object.bias, object.headers) } {
                // SAFETY: as above.
                unsafe { tables.for_each_got_entry(object.bias, |slot, _, _| slots.push(slot)) };
            }
            std::ops::ControlFlow::Continue(())
        });
        assert!(slots.len() > 100, "only {} GOT entries found", slots.len());
        let (mut read_only, mut writable) = (0, 0);
        for slot in slots {
            let kernel = region::query(slot as *const u8).unwrap().protection();
            assert_eq!(loader_protection(slot), Some(kernel), "GOT entry {:#x}", slot);
            if kernel.contains(region::Protection::WRITE) {
                writable += 1;
            } else {
                read_only += 1;
            }
        }
        // RELRO makes some read-only everywhere; writable ones (lazy
        // binding, pointers in .data) depend on how the system was built.
        assert!(read_only > 0, "{} read-only, {} writable entries", read_only, writable);
        let local = 0u64;
        assert_eq!(loader_protection(&local as *const u64 as u64), None);
    }

    #[test]
    fn start_up_objects_answer_as_dlsym_does() {
        note_startup_objects();
        if STARTUP_OBJECTS.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            return; // run with LD_PRELOAD: dlsym answers everything
        }
        // Plain functions and data, IFUNCs (memcpy, strlen), names with an
        // older hidden version beside the default (realpath,
        // pthread_cond_wait, memcpy), a loader's function.
        let names = [
            "printf",
            "memcpy",
            "strlen",
            "environ",
            "stderr",
            "optind",
            "realpath",
            "pthread_cond_wait",
            "qsort",
            "_dl_find_object",
            "__tls_get_addr",
            "no_such_symbol_anywhere",
        ];
        for name in names {
            let c_name = CString::new(name).unwrap();
            // SAFETY: RTLD_DEFAULT and a NUL-terminated name.
            let by_dlsym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c_name.as_ptr()) } as u64;
            match lookup_in_startup_objects(&c_name) {
                Some(found) => assert_eq!(found, by_dlsym, "{}", name),
                None => assert_eq!(by_dlsym, 0, "{} missed", name),
            }
        }
        assert!(lookup_in_startup_objects(c"printf").is_some() && lookup_in_startup_objects(c"memcpy").is_some());
        // A thread-local goes to the loader, which knows this thread's copy.
        assert_eq!(lookup_in_startup_objects(c"errno"), None);
    }

    #[test]
    fn symbol_facts_from_the_file_agree_with_dladdr1() {
        let mut facts = HostSymbolFacts::default();
        for name in ["stderr", "environ", "printf", "optind", "qsort"] {
            let c_name = CString::new(name).unwrap();
            let addr = lookup_global(&c_name).expect(name);
            let from_file =
                facts.read_from_file(addr, name).unwrap_or_else(|| panic!("{} not found in its file", name));
            let from_loader = symbol_info(addr).expect(name);
            assert_eq!(
                (from_file.is_function, from_file.size),
                (from_loader.is_function, from_loader.size),
                "{}",
                name
            );
        }
        // An IFUNC's address is the implementation it chose, no value in the
        // table: left to dladdr1, as is what no library's file holds.
        let memcpy = lookup_global(c"memcpy").unwrap();
        assert!(facts.read_from_file(memcpy, "memcpy").is_none());
        // (which knows no symbol there: the plan then gives it a stub, as a function)
        assert!(facts.info(memcpy, "memcpy").is_none_or(|info| info.is_function));
        assert!(facts.read_from_file(symbol_facts_from_the_file_agree_with_dladdr1 as *const () as u64, "x").is_none());
    }
}
