//! `dladdr`, `dladdr1`, `backtrace_symbols` and `backtrace_symbols_fd`
//! that know the image. The dynamic loader has never heard of it (it is
//! not in its list of loaded objects), so libc's versions describe image
//! addresses as unknown: crash logs (Redis), assertion helpers and
//! programs looking for their own path get nothing. The image's references
//! to these four names are bound to the functions here instead (see
//! `runtime::HOST_FUNCTIONS`); they answer for image addresses as glibc
//! answers for a position-independent executable's, and pass every other
//! address to libc.
//!
//! As natively:
//! - the file name is the program's `argv[0]` (the very pointer);
//! - the base is the image's start, so addresses print as `prog(+0x1a2b)`;
//! - symbol names are those of the dynamic symbol table, which an
//!   executable has only with `-rdynamic` (`--export-dynamic`): the
//!   image's exported global definitions, else none.
//!
//! `backtrace_symbols_fd` stays usable in a signal handler for image
//! addresses: it reads tables built at link time and writes with one
//! `write` per line, allocating nothing.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::host::exports::Export;
use crate::host::loader::LazyLibcFunction;

/// `RTLD_DL_SYMENT` and `RTLD_DL_LINKMAP` of `dladdr1` (`<dlfcn.h>`).
const RTLD_DL_SYMENT: c_int = 1;
const RTLD_DL_LINKMAP: c_int = 2;

/// An `Elf64_Sym`, which `dladdr1(..., RTLD_DL_SYMENT)` hands out.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct ElfSymbol {
    name: u32,
    info: u8,
    other: u8,
    section: u16,
    value: u64,
    size: u64,
}

/// What `dladdr` needs to know of one image, built once at link time.
pub struct AddressTable {
    start: u64,
    end: u64,
    /// Exported symbols by address; among equal addresses, in export order
    /// (glibc takes the first of those).
    symbols: Vec<ElfSymbol>,
    /// `ends_so_far[i]`: the largest end of `symbols[..=i]`, so a lookup
    /// stops scanning back where no earlier symbol can contain the address.
    ends_so_far: Vec<u64>,
    /// The symbols' names, each NUL-terminated; `ElfSymbol::name` indexes it.
    names: Vec<u8>,
    /// The image's segments as program headers, for `dl_iterate_phdr`
    /// ([`AddressTable::with_segments`]).
    headers: Vec<libc::Elf64_Phdr>,
}

impl AddressTable {
    /// The image `[start, start + size)` with `exports` (empty unless the
    /// program is linked with `--export-dynamic`).
    pub fn new(start: u64, size: u64, exports: &[Export]) -> AddressTable {
        let mut names = Vec::with_capacity(exports.iter().map(|e| e.name.len() + 1).sum());
        let mut symbols: Vec<ElfSymbol> = exports
            .iter()
            .filter(|e| !e.name.contains('\0'))
            .map(|e| {
                let name = names.len() as u32;
                names.extend_from_slice(e.name.as_bytes());
                names.push(0);
                let kind = if e.is_function { object::elf::STT_FUNC } else { object::elf::STT_OBJECT };
                ElfSymbol {
                    name,
                    info: (object::elf::STB_GLOBAL << 4) | kind,
                    other: object::elf::STV_DEFAULT,
                    // Any defined section: the image has no section headers.
                    section: 1,
                    value: e.address,
                    size: e.size,
                }
            })
            .collect();
        symbols.sort_by_key(|s| s.value);
        let ends_so_far = symbols
            .iter()
            .scan(0u64, |end, s| {
                *end = (*end).max(s.value.saturating_add(s.size));
                Some(*end)
            })
            .collect();
        AddressTable { start, end: start.saturating_add(size), symbols, ends_so_far, names, headers: Vec::new() }
    }

    /// Describes the image's `segments` (at `base`) as a native
    /// executable's program headers do, so that `dl_iterate_phdr` lists
    /// the image with its code, read-only and writable data: a garbage
    /// collector (Boehm's) finds the program's globals, its roots, there.
    pub fn with_segments(mut self, base: u64, segments: &[crate::graph::layout::Segment]) -> AddressTable {
        use crate::graph::layout::SegmentKind;
        self.headers = segments
            .iter()
            .filter(|s| s.size > 0)
            .map(|s| {
                let protection = s.kind.final_protection();
                let flag = |p: region::Protection, f: u32| if protection.contains(p) { f } else { 0 };
                let flags = flag(region::Protection::READ, libc::PF_R)
                    | flag(region::Protection::WRITE, libc::PF_W)
                    | flag(region::Protection::EXECUTE, libc::PF_X);
                let file_size = if s.kind == SegmentKind::Bss { 0 } else { s.size };
                libc::Elf64_Phdr {
                    p_type: libc::PT_LOAD,
                    p_flags: flags,
                    p_offset: 0,
                    p_vaddr: base + s.offset,
                    p_paddr: base + s.offset,
                    p_filesz: file_size,
                    p_memsz: s.size,
                    p_align: crate::support::page_size(),
                }
            })
            .collect();
        self
    }

    fn contains(&self, addr: u64) -> bool {
        (self.start..self.end).contains(&addr)
    }

    /// The symbol glibc's `dladdr` would pick for `addr`: of those that
    /// contain it (or have no size and start at it), the one starting
    /// last, the first listed among equals.
    fn symbol_at(&self, addr: u64) -> Option<&ElfSymbol> {
        let mut i = self.symbols.partition_point(|s| s.value <= addr);
        let mut found: Option<usize> = None;
        while i > 0 && self.ends_so_far[i - 1] >= addr {
            i -= 1;
            let s = &self.symbols[i];
            let inside = addr < s.value.saturating_add(s.size) || (s.size == 0 && addr == s.value);
            match found {
                Some(f) if self.symbols[f].value != s.value => break,
                _ if inside => found = Some(i),
                _ => {}
            }
        }
        found.map(|i| &self.symbols[i])
    }

    fn name(&self, symbol: &ElfSymbol) -> *const c_char {
        self.names[symbol.name as usize..].as_ptr() as *const c_char
    }
}

/// Registered images. A fixed array of atomic pointers rather than a
/// locked list, so that a lookup from a signal handler can neither
/// deadlock nor see a half-updated list.
const SLOTS: usize = 64;
static IMAGES: [AtomicPtr<AddressTable>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// The running program's `argv[0]`, which `dladdr` reports as the image's
/// file name (glibc reports the executable's `argv[0]` pointer).
static PROGRAM_NAME: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Called with the `argv` a program is about to get.
pub(crate) fn set_program_name(argv0: *mut c_char) {
    PROGRAM_NAME.store(argv0, Ordering::Release);
}

/// An image's entry in the registry; dropping it removes the entry.
pub struct Registration {
    slot: Option<usize>,
}

/// Makes `table`'s image known to the functions here until the returned
/// registration drops.
pub fn register(table: AddressTable) -> Registration {
    let table = Box::into_raw(Box::new(table));
    for (slot, entry) in IMAGES.iter().enumerate() {
        if entry.compare_exchange(std::ptr::null_mut(), table, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Registration { slot: Some(slot) };
        }
    }
    log::warn!("more than {} images: dladdr does not know the latest", SLOTS);
    // SAFETY: made by Box::into_raw above and never published.
    drop(unsafe { Box::from_raw(table) });
    Registration { slot: None }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(slot) = self.slot else { return };
        let table = IMAGES[slot].swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !table.is_null() {
            // SAFETY: `register` published this pointer from Box::into_raw,
            // and the swap took it out, so nobody finds it any more. (A
            // thread still inside a lookup would be running the image's
            // code while it is unloaded, which is already undefined.)
            drop(unsafe { Box::from_raw(table) });
        }
    }
}

/// Calls `visit` with the program headers of each registered image that
/// has them, until it returns nonzero; returns that (else 0), or `None`
/// when no image has headers.
pub(crate) fn visit_image_headers(mut visit: impl FnMut(&[libc::Elf64_Phdr]) -> c_int) -> Option<c_int> {
    let mut visited = false;
    for table in registered().filter(|table| !table.headers.is_empty()) {
        visited = true;
        let result = visit(&table.headers);
        if result != 0 {
            return Some(result);
        }
    }
    visited.then_some(0)
}

/// The program headers of the registered image that contains `addr`, as
/// the kernel's `AT_PHDR` and `AT_PHNUM` would give them: where they lie
/// (alive while the image is registered) and how many.
pub(crate) fn image_headers_at(addr: u64) -> Option<(u64, u64)> {
    let table = image_containing(addr).filter(|table| !table.headers.is_empty())?;
    Some((table.headers.as_ptr() as u64, table.headers.len() as u64))
}

/// The registered images' tables.
fn registered() -> impl Iterator<Item = &'static AddressTable> {
    // SAFETY: a non-null entry points to a live table (see `Registration`).
    IMAGES.iter().filter_map(|entry| unsafe { entry.load(Ordering::Acquire).as_ref() })
}

/// The registered image that contains `addr`.
fn image_containing(addr: u64) -> Option<&'static AddressTable> {
    registered().find(|table| table.contains(addr))
}

/// What `dladdr` says of an image address.
struct ImageAddress {
    table: &'static AddressTable,
    symbol: Option<&'static ElfSymbol>,
}

impl ImageAddress {
    fn find(addr: u64) -> Option<ImageAddress> {
        let table = image_containing(addr)?;
        Some(ImageAddress { table, symbol: table.symbol_at(addr) })
    }

    fn fill(&self, info: &mut libc::Dl_info) {
        info.dli_fname = PROGRAM_NAME.load(Ordering::Acquire);
        info.dli_fbase = self.table.start as *mut c_void;
        match self.symbol {
            Some(symbol) => {
                info.dli_sname = self.table.name(symbol);
                info.dli_saddr = symbol.value as *mut c_void;
            }
            None => {
                info.dli_sname = std::ptr::null();
                info.dli_saddr = std::ptr::null_mut();
            }
        }
    }

    /// glibc's line for `addr`: `prog(name+0x1f) [0x...]` (with
    /// `bracket_space`, as `backtrace_symbols` writes) or
    /// `prog(name+0x1f)[0x...]` (`backtrace_symbols_fd`); without a name,
    /// the offset is from the image's start. Written into `out`, which is
    /// large enough for any name of up to `out.len() - 64` bytes (longer
    /// ones are cut).
    fn describe(&self, addr: u64, symbol_style: OffsetStyle, out: &mut LineBuffer) {
        let fname = PROGRAM_NAME.load(Ordering::Acquire);
        // SAFETY: a non-null program name is the program's argv[0], a C string.
        let fname = (!fname.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(fname) }.to_bytes());
        if let Some(fname) = fname.filter(|f| !f.is_empty()) {
            out.push(fname);
            out.push(b"(");
            let base = match self.symbol {
                Some(symbol) => {
                    // SAFETY: `name` points into the table's NUL-terminated names.
                    out.push(unsafe { std::ffi::CStr::from_ptr(self.table.name(symbol)) }.to_bytes());
                    symbol.value
                }
                None => self.table.start,
            };
            let (sign, offset) = if addr >= base { (b"+", addr - base) } else { (b"-", base - addr) };
            out.push(sign);
            match symbol_style {
                // printf's `%#tx`: no prefix for zero.
                OffsetStyle::Printf if offset == 0 => out.push(b"0"),
                _ => {
                    out.push(b"0x");
                    out.push_hex(offset);
                }
            }
            out.push(b")");
            if symbol_style == OffsetStyle::Printf {
                out.push(b" ");
            }
        }
        out.push(b"[0x");
        out.push_hex(addr);
        out.push(b"]");
    }
}

/// How `describe` formats, after the two glibc functions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OffsetStyle {
    /// `backtrace_symbols`: `sprintf("%s(%s%c%#tx) [%p]")`.
    Printf,
    /// `backtrace_symbols_fd`: `+0x` and the digits, no space.
    Fd,
}

/// A line built on the stack (nothing allocated, for signal handlers).
struct LineBuffer {
    bytes: [u8; 1024],
    len: usize,
}

impl LineBuffer {
    fn new() -> LineBuffer {
        LineBuffer { bytes: [0; 1024], len: 0 }
    }

    fn push(&mut self, text: &[u8]) {
        let n = text.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&text[..n]);
        self.len += n;
    }

    fn push_hex(&mut self, value: u64) {
        let mut digits = [0u8; 16];
        let mut i = digits.len();
        let mut v = value;
        loop {
            i -= 1;
            digits[i] = b"0123456789abcdef"[(v & 0xf) as usize];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// libc's own versions, looked up when an image first calls them (see
/// [`LazyLibcFunction`]).
static BACKTRACE_SYMBOLS: LazyLibcFunction = LazyLibcFunction::new(c"backtrace_symbols");
static BACKTRACE_SYMBOLS_FD: LazyLibcFunction = LazyLibcFunction::new(c"backtrace_symbols_fd");
type BacktraceSymbolsFn = unsafe extern "C" fn(*const *mut c_void, c_int) -> *mut *mut c_char;
type BacktraceSymbolsFdFn = unsafe extern "C" fn(*const *mut c_void, c_int, c_int);

/// `dladdr` for the image's code.
///
/// # Safety
/// As `dladdr(3)`: `info` points to a writable `Dl_info`.
pub unsafe extern "C" fn jitrun_dladdr(addr: *const c_void, info: *mut libc::Dl_info) -> c_int {
    // SAFETY: the caller's contract: null or a writable Dl_info.
    match (ImageAddress::find(addr as u64), unsafe { info.as_mut() }) {
        (Some(found), Some(info)) => {
            found.fill(info);
            1
        }
        // SAFETY: the caller's arguments, as libc takes them.
        _ => unsafe { libc::dladdr(addr, info) },
    }
}

/// `dladdr1` for the image's code: `RTLD_DL_SYMENT` gives the symbol's
/// `Elf64_Sym` (or null), `RTLD_DL_LINKMAP` null (the image has no link map).
///
/// # Safety
/// As `dladdr1(3)`: `info` and `extra` point to writable memory.
pub unsafe extern "C" fn jitrun_dladdr1(
    addr: *const c_void,
    info: *mut libc::Dl_info,
    extra: *mut *mut c_void,
    flags: c_int,
) -> c_int {
    let Some(found) = ImageAddress::find(addr as u64) else {
        // SAFETY: the caller's arguments, as libc takes them.
        return unsafe { libc::dladdr1(addr, info, extra, flags) };
    };
    // SAFETY: the caller's contract.
    let (Some(info), Some(extra)) = (unsafe { info.as_mut() }, unsafe { extra.as_mut() }) else { return 0 };
    found.fill(info);
    *extra = match flags {
        RTLD_DL_SYMENT => found.symbol.map_or(std::ptr::null_mut(), |s| s as *const ElfSymbol as *mut c_void),
        RTLD_DL_LINKMAP => std::ptr::null_mut(),
        _ => *extra,
    };
    1
}

/// `backtrace_symbols` for arrays that may hold image addresses: one
/// `malloc`ed block of the string pointers and the strings, as glibc's.
///
/// # Safety
/// As `backtrace_symbols(3)`: `array` holds `size` addresses.
pub unsafe extern "C" fn jitrun_backtrace_symbols(array: *const *mut c_void, size: c_int) -> *mut *mut c_char {
    let count = size.max(0) as usize;
    if array.is_null() && count > 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract: `size` addresses.
    let addresses = if count == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(array, count) } };
    let mut lines: Vec<Vec<u8>> = Vec::with_capacity(count);
    for &addr in addresses {
        match ImageAddress::find(addr as u64) {
            Some(found) => {
                let mut line = LineBuffer::new();
                found.describe(addr as u64, OffsetStyle::Printf, &mut line);
                lines.push(line.as_bytes().to_vec());
            }
            None => {
                let Some(theirs) = BACKTRACE_SYMBOLS.get() else { return std::ptr::null_mut() };
                // SAFETY: libc's backtrace_symbols (resolved by name), one
                // address, as glibc takes it; its block is freed below.
                let theirs = unsafe { std::mem::transmute::<usize, BacktraceSymbolsFn>(theirs)(&addr, 1) };
                if theirs.is_null() {
                    return std::ptr::null_mut();
                }
                // SAFETY: glibc's block holds one pointer to a C string.
                lines.push(unsafe { std::ffi::CStr::from_ptr(*theirs) }.to_bytes().to_vec());
                // SAFETY: glibc allocated it with malloc; the caller frees ours.
                unsafe { libc::free(theirs as *mut c_void) };
            }
        }
    }
    let pointers = count * std::mem::size_of::<*mut c_char>();
    let total = pointers + lines.iter().map(|l| l.len() + 1).sum::<usize>();
    // SAFETY: plain allocation; the caller frees it with free(), as glibc's.
    let block = unsafe { libc::malloc(total.max(1)) } as *mut u8;
    if block.is_null() {
        return std::ptr::null_mut();
    }
    let mut at = pointers;
    for (i, line) in lines.iter().enumerate() {
        // SAFETY: `block` has `total` bytes: `count` pointers, then every
        // line and its NUL, which `at` walks through in order.
        unsafe {
            let text = block.add(at);
            std::ptr::copy_nonoverlapping(line.as_ptr(), text, line.len());
            *text.add(line.len()) = 0;
            *(block as *mut *mut c_char).add(i) = text as *mut c_char;
        }
        at += line.len() + 1;
    }
    block as *mut *mut c_char
}

/// `backtrace_symbols_fd` for arrays that may hold image addresses: one
/// line per address; image addresses are described without allocating.
///
/// # Safety
/// As `backtrace_symbols_fd(3)`: `array` holds `size` addresses.
pub unsafe extern "C" fn jitrun_backtrace_symbols_fd(array: *const *mut c_void, size: c_int, fd: c_int) {
    if array.is_null() {
        return;
    }
    for i in 0..size.max(0) as usize {
        // SAFETY: the caller's contract: `size` addresses.
        let addr = unsafe { *array.add(i) };
        match ImageAddress::find(addr as u64) {
            Some(found) => {
                let mut line = LineBuffer::new();
                found.describe(addr as u64, OffsetStyle::Fd, &mut line);
                line.push(b"\n");
                let bytes = line.as_bytes();
                // SAFETY: writes the line's initialized bytes.
                unsafe { libc::write(fd, bytes.as_ptr() as *const c_void, bytes.len()) };
            }
            None => {
                if let Some(theirs) = BACKTRACE_SYMBOLS_FD.get() {
                    // SAFETY: libc's backtrace_symbols_fd (resolved by name),
                    // one address, as glibc takes it.
                    unsafe { std::mem::transmute::<usize, BacktraceSymbolsFdFn>(theirs)(&addr, 1, fd) }
                }
            }
        }
    }
}

/// The functions above by the name the image calls them with. Looks up
/// the libc versions they fall back on, so that they can run in signal
/// handlers later.
pub fn host_function(name: &str) -> Option<usize> {
    Some(match name {
        "dladdr" => jitrun_dladdr as *const () as usize,
        "dladdr1" => jitrun_dladdr1 as *const () as usize,
        "backtrace_symbols" => {
            BACKTRACE_SYMBOLS.resolve()?;
            jitrun_backtrace_symbols as *const () as usize
        }
        "backtrace_symbols_fd" => {
            BACKTRACE_SYMBOLS_FD.resolve()?;
            jitrun_backtrace_symbols_fd as *const () as usize
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(name: &str, address: u64, size: u64) -> Export {
        Export { name: name.into(), address, size, is_function: true }
    }

    #[test]
    fn picks_the_containing_symbol_that_starts_last_and_the_first_of_aliases() {
        let table = AddressTable::new(
            0x1000,
            0x1000,
            &[
                export("outer", 0x1100, 0x100),
                export("nested", 0x1140, 0x10),
                export("alias_b", 0x1300, 0x20),
                export("alias_a", 0x1300, 0x20),
                export("marker", 0x1400, 0),
            ],
        );
        let name = |addr| table.symbol_at(addr).map(|s| unsafe { std::ffi::CStr::from_ptr(table.name(s)) });
        assert_eq!(name(0x1100).unwrap().to_str().unwrap(), "outer");
        assert_eq!(name(0x1145).unwrap().to_str().unwrap(), "nested");
        assert_eq!(name(0x1150).unwrap().to_str().unwrap(), "outer");
        assert_eq!(name(0x1310).unwrap().to_str().unwrap(), "alias_b");
        assert_eq!(name(0x1400).unwrap().to_str().unwrap(), "marker");
        assert!(name(0x1401).is_none());
        assert!(name(0x1250).is_none());
        assert!(name(0x1000).is_none());
    }

    #[test]
    fn lines_follow_glibc() {
        let table: &'static AddressTable =
            Box::leak(Box::new(AddressTable::new(0x10000, 0x1000, &[export("run", 0x10100, 0x40)])));
        let program = std::ffi::CString::new("./prog").unwrap();
        set_program_name(program.as_ptr() as *mut c_char);
        let line = |addr, style| {
            let mut out = LineBuffer::new();
            ImageAddress { table, symbol: table.symbol_at(addr) }.describe(addr, style, &mut out);
            String::from_utf8(out.as_bytes().to_vec()).unwrap()
        };
        assert_eq!(line(0x10109, OffsetStyle::Printf), "./prog(run+0x9) [0x10109]");
        assert_eq!(line(0x10100, OffsetStyle::Printf), "./prog(run+0) [0x10100]");
        assert_eq!(line(0x10100, OffsetStyle::Fd), "./prog(run+0x0)[0x10100]");
        assert_eq!(line(0x10200, OffsetStyle::Fd), "./prog(+0x200)[0x10200]");
        set_program_name(std::ptr::null_mut());
        assert_eq!(line(0x10200, OffsetStyle::Printf), "[0x10200]");
    }
}
