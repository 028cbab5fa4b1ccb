//! The GDB JIT interface: tell a debugger about loaded code.
//!
//! GDB (and LLDB) put a breakpoint on `__jit_debug_register_code` and read
//! `__jit_debug_descriptor` whenever it is called: a doubly linked list of
//! in-memory object files, and which entry was just added or removed. Each
//! image registers a small ELF symbol file: one `SHF_ALLOC` `.text`
//! section (no bits) at the real address of the image's code segment, a
//! `.symtab` naming every loaded function there, and a copy of the image's
//! `.eh_frame` at its real address, so the debugger unwinds through
//! optimized loaded code (no frame pointers) as through a native binary. It is registered as a
//! finalize action and unregistered by its dealloc pair, so the debugger
//! forgets the code before it is unmapped.

use std::sync::Mutex;

use anyhow::Result;
use object::elf;
use object::write::elf::{SectionHeader, Sym, Writer};
use object::Endianness;

use crate::graph::linkinfo::LinkInfo;
use crate::memory::ActionPair;

#[repr(C)]
pub struct JitCodeEntry {
    next: *mut JitCodeEntry,
    prev: *mut JitCodeEntry,
    symfile_addr: *const u8,
    symfile_size: u64,
}

#[repr(C)]
pub struct JitDescriptor {
    version: u32,
    /// 0: no action, 1: register `relevant_entry`, 2: unregister it.
    action_flag: u32,
    relevant_entry: *mut JitCodeEntry,
    first_entry: *mut JitCodeEntry,
}

const JIT_NOACTION: u32 = 0;
const JIT_REGISTER: u32 = 1;
const JIT_UNREGISTER: u32 = 2;

/// Read by the debugger; the name and layout are the protocol.
#[no_mangle]
#[used]
pub static mut __jit_debug_descriptor: JitDescriptor = JitDescriptor {
    version: 1,
    action_flag: JIT_NOACTION,
    relevant_entry: std::ptr::null_mut(),
    first_entry: std::ptr::null_mut(),
};

/// The debugger breaks here; it must be a real call, never inlined away.
#[no_mangle]
#[inline(never)]
pub extern "C" fn __jit_debug_register_code() {
    // An empty asm block keeps the call and the function from being folded.
    // SAFETY: no instructions.
    unsafe { std::arch::asm!("", options(nomem, nostack, preserves_flags)) };
}

/// Serializes changes to the descriptor's list.
static LIST_LOCK: Mutex<()> = Mutex::new(());

/// A registered entry and the symbol file it points to.
struct Registration {
    entry: *mut JitCodeEntry,
    _symfile: Box<[u8]>,
}

// SAFETY: the entry is only touched under LIST_LOCK.
unsafe impl Send for Registration {}

fn register(symfile: Box<[u8]>) -> Registration {
    let entry = Box::into_raw(Box::new(JitCodeEntry {
        next: std::ptr::null_mut(),
        prev: std::ptr::null_mut(),
        symfile_addr: symfile.as_ptr(),
        symfile_size: symfile.len() as u64,
    }));
    let _guard = LIST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the descriptor and the list are only changed under LIST_LOCK;
    // `entry` is a fresh allocation.
    unsafe {
        let descriptor = &mut *std::ptr::addr_of_mut!(__jit_debug_descriptor);
        (*entry).next = descriptor.first_entry;
        if !descriptor.first_entry.is_null() {
            (*descriptor.first_entry).prev = entry;
        }
        descriptor.first_entry = entry;
        descriptor.relevant_entry = entry;
        descriptor.action_flag = JIT_REGISTER;
        __jit_debug_register_code();
    }
    Registration { entry, _symfile: symfile }
}

fn unregister(registration: Registration) {
    let _guard = LIST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let entry = registration.entry;
    // SAFETY: `entry` is in the list (registered above, removed only here).
    unsafe {
        let descriptor = &mut *std::ptr::addr_of_mut!(__jit_debug_descriptor);
        if !(*entry).prev.is_null() {
            (*(*entry).prev).next = (*entry).next;
        } else {
            descriptor.first_entry = (*entry).next;
        }
        if !(*entry).next.is_null() {
            (*(*entry).next).prev = (*entry).prev;
        }
        descriptor.relevant_entry = entry;
        descriptor.action_flag = JIT_UNREGISTER;
        __jit_debug_register_code();
        descriptor.relevant_entry = std::ptr::null_mut();
        descriptor.action_flag = JIT_NOACTION;
        drop(Box::from_raw(entry));
    }
}

/// Who reads a symbol file: gdb's JIT interface takes a relocatable one,
/// symbolizers (llvm-symbolizer, addr2line) look up absolute addresses in
/// an executable one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SymbolFileFor {
    Debugger,
    Symbolizer,
}

/// An ELF symbol file for the image's code: `.text` (no bits) with
/// `sh_addr` at the code segment, function symbols relative to it
/// (`ET_REL`, for a debugger) or at their addresses (`ET_EXEC`, for a
/// symbolizer), and `eh_frame`, the image's `.eh_frame` address and bytes
/// (as written, so its PC-relative pointers hold at the same `sh_addr`),
/// then `debug`, DWARF at the image's addresses (see
/// [`merged_debug_sections`]), for source lines in a symbolizer's frames.
pub fn symbol_file(
    info: &LinkInfo,
    eh_frame: Option<(u64, &[u8])>,
    reader: SymbolFileFor,
    debug: &[DebugSection],
) -> Result<Vec<u8>> {
    let text = info.segments.iter().find(|s| s.protection.contains('x'));
    let (text_addr, text_size) = text.map_or((info.base, 0), |s| (s.address, s.size));
    // A symbolizer also names globals (ThreadSanitizer's "Location is
    // global 'x'"): the other segments, as sections without contents, and
    // their data symbols. Each symbol with its segment (None: text).
    let data_segments: Vec<_> = match reader {
        SymbolFileFor::Symbolizer => {
            info.segments.iter().filter(|s| !s.protection.contains('x') && s.size > 0).collect()
        }
        SymbolFileFor::Debugger => Vec::new(),
    };
    let in_segment =
        |address: u64| data_segments.iter().position(|s| address >= s.address && address - s.address < s.size);
    let mut functions: Vec<_> = info
        .symbols
        .iter()
        .filter_map(|sym| match sym.kind {
            "function" if sym.address >= text_addr && sym.address < text_addr + text_size => Some((sym, None)),
            "data" => in_segment(sym.address).map(|segment| (sym, Some(segment))),
            _ => None,
        })
        .collect();
    // ELF wants local symbols before global ones.
    functions.sort_by_key(|(f, _)| f.scope != "local");
    let num_local = 1 + functions.iter().filter(|(f, _)| f.scope == "local").count() as u32;

    let data_names: Vec<String> = data_segments.iter().map(|segment| format!(".{}", segment.name)).collect();

    let mut buffer = Vec::new();
    let mut writer = Writer::new(Endianness::Little, true, &mut buffer);
    writer.reserve_file_header();
    writer.reserve_null_section_index();
    let text_name = writer.add_section_name(b".text");
    let text_index = writer.reserve_section_index();
    let data_sections: Vec<_> = data_names
        .iter()
        .map(|name| (writer.add_section_name(name.as_bytes()), writer.reserve_section_index()))
        .collect();
    let eh_frame = eh_frame.map(|(address, bytes)| {
        let name = writer.add_section_name(b".eh_frame");
        writer.reserve_section_index();
        let offset = writer.reserve(bytes.len(), 8);
        (bytes, address, name, offset)
    });
    let debug_sections = reserve_debug_sections(&mut writer, debug);
    writer.reserve_null_symbol_index();
    let names: Vec<_> = functions.iter().map(|(f, _)| writer.add_string(f.name.as_bytes())).collect();
    let section_of = |segment: Option<usize>| segment.map_or(text_index, |segment| data_sections[segment].1);
    for (_, segment) in &functions {
        writer.reserve_symbol_index(Some(section_of(*segment)));
    }
    writer.reserve_symtab_section_index();
    writer.reserve_strtab_section_index();
    writer.reserve_shstrtab_section_index();
    writer.reserve_symtab();
    writer.reserve_strtab();
    writer.reserve_shstrtab();
    writer.reserve_section_headers();

    let (e_type, symbol_base) = match reader {
        SymbolFileFor::Debugger => (elf::ET_REL, text_addr),
        SymbolFileFor::Symbolizer => (elf::ET_EXEC, 0),
    };
    writer.write_file_header(&crate::graph::format::elf::file_header(crate::arch::HOST, e_type))?;
    if let Some((bytes, ..)) = eh_frame {
        writer.write_align(8);
        writer.write(bytes);
    }
    for (_, bytes) in debug {
        writer.write(bytes);
    }
    writer.write_null_symbol();
    for ((f, segment), name) in functions.iter().zip(&names) {
        let bind = if f.scope == "local" { elf::STB_LOCAL } else { elf::STB_GLOBAL };
        let kind = if segment.is_some() { elf::STT_OBJECT } else { elf::STT_FUNC };
        writer.write_symbol(&Sym {
            name: Some(*name),
            section: Some(section_of(*segment)),
            st_info: (bind << 4) | kind,
            st_other: elf::STV_DEFAULT,
            st_shndx: 0,
            st_value: f.address - symbol_base,
            st_size: f.size,
        });
    }
    writer.write_strtab();
    writer.write_shstrtab();
    writer.write_null_section_header();
    writer.write_section_header(&SectionHeader {
        name: Some(text_name),
        sh_type: elf::SHT_NOBITS,
        sh_flags: (elf::SHF_ALLOC | elf::SHF_EXECINSTR) as u64,
        sh_addr: text_addr,
        sh_offset: 0,
        sh_size: text_size,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 16,
        sh_entsize: 0,
    });
    for (segment, (name, _)) in data_segments.iter().zip(&data_sections) {
        let writable = if segment.protection.contains('w') { elf::SHF_WRITE } else { 0 };
        writer.write_section_header(&SectionHeader {
            name: Some(*name),
            sh_type: elf::SHT_NOBITS,
            sh_flags: u64::from(elf::SHF_ALLOC | writable),
            sh_addr: segment.address,
            sh_offset: 0,
            sh_size: segment.size,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 8,
            sh_entsize: 0,
        });
    }
    if let Some((bytes, address, name, offset)) = eh_frame {
        writer.write_section_header(&SectionHeader {
            name: Some(name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SHF_ALLOC as u64,
            sh_addr: address,
            sh_offset: offset as u64,
            sh_size: bytes.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 8,
            sh_entsize: 0,
        });
    }
    write_debug_section_headers(&mut writer, &debug_sections, debug);
    writer.write_symtab_section_header(num_local);
    writer.write_strtab_section_header();
    writer.write_shstrtab_section_header();
    Ok(buffer)
}

/// A `.debug_*` section: its name and contents.
pub type DebugSection = (Vec<u8>, Vec<u8>);

/// Reserves a section for each of `debug`: its name and file offset.
fn reserve_debug_sections<'a>(
    writer: &mut Writer<'a>,
    debug: &'a [DebugSection],
) -> Vec<(object::write::StringId, usize)> {
    debug
        .iter()
        .map(|(name, bytes)| {
            let name = writer.add_section_name(name);
            writer.reserve_section_index();
            (name, writer.reserve(bytes.len(), 1))
        })
        .collect()
}

/// The headers of `debug`, whose names and file offsets `reserved` holds.
fn write_debug_section_headers(
    writer: &mut Writer,
    reserved: &[(object::write::StringId, usize)],
    debug: &[DebugSection],
) {
    for ((name, offset), (_, bytes)) in reserved.iter().zip(debug) {
        writer.write_section_header(&SectionHeader {
            name: Some(*name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: 0,
            sh_addr: 0,
            sh_offset: *offset as u64,
            sh_size: bytes.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
}

/// The finalize/dealloc pair that registers the image with the debugger:
/// its symbol file, then `object_files` (see [`object_debug_file`]).
pub fn action(info: &LinkInfo, object_files: Vec<Vec<u8>>) -> Option<ActionPair> {
    // Building the symbol file costs as much as a large link; only a
    // debugger that is there to read it (gdb runs jitrun, or attached
    // before the link) gets it, or anyone who sets JITRUN_GDB_JIT=1.
    if !wanted() {
        return None;
    }
    info.functions().next()?;
    let eh_frame = info.sections.iter().find(|s| s.name == ".eh_frame" && s.size > 4).map(|s| {
        // SAFETY: the image's .eh_frame, mapped and written by the link
        // (this runs before the image is handed out), read only.
        (s.address, unsafe { std::slice::from_raw_parts(s.address as *const u8, s.size as usize) })
    });
    let symfile = match symbol_file(info, eh_frame, SymbolFileFor::Debugger, &[]) {
        Ok(bytes) => bytes.into_boxed_slice(),
        Err(e) => {
            log::warn!("cannot build the debugger symbol file: {}", e);
            return None;
        }
    };
    let files: Vec<Box<[u8]>> =
        std::iter::once(symfile).chain(object_files.into_iter().map(Vec::into_boxed_slice)).collect();
    Some(ActionPair::with_state(
        "register with the debugger",
        move || Ok(files.into_iter().map(register).collect::<Vec<_>>()),
        |registrations| registrations.into_iter().rev().for_each(unregister),
    ))
}

/// Whether images should be registered: a debugger is attached, or
/// `JITRUN_GDB_JIT=1` asks for it.
pub fn wanted() -> bool {
    // The variable is read once: the front-end asks for every object.
    static ASKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    debugger_attached() || *ASKED.get_or_init(|| std::env::var_os("JITRUN_GDB_JIT").is_some_and(|v| v == "1"))
}

/// Whether a debugger listens: GDB and LLDB plant a software breakpoint
/// (`int3` on x86-64, `brk #0` on aarch64) on `__jit_debug_register_code`
/// as soon as they see it, so its first instruction says so. One load instead of parsing /proc/self/status
/// (TracerPid), which cost ~40 µs of every run; it also ignores tracers
/// that are not debuggers (strace).
fn debugger_attached() -> bool {
    let code = __jit_debug_register_code as *const () as *const u8;
    // SAFETY: the first instruction of a function of ours, in mapped,
    // readable text.
    unsafe { crate::support::machine::is_breakpoint(code) }
}

/// A symbol file with object `graph`'s DWARF, for source lines and
/// variables in the debugger: its `.debug_*` sections with their
/// relocations applied (see [`relocated_debug_sections`]), and its code
/// sections as `SHF_ALLOC` sections without contents at their final
/// addresses. `None` when the object has no `.debug_info` (or is not an
/// ELF object).
pub fn object_debug_file(
    graph: &crate::graph::model::LinkGraph,
    address_of: impl Fn(u32) -> Option<u64>,
) -> Option<Vec<u8>> {
    use object::read::elf::{FileHeader as _, SectionHeader as _, Sym as _};
    let debug = relocated_debug_sections(graph, &address_of, |_| true, |_| 0)?;
    if !debug.iter().any(|(name, _)| name == b".debug_info") {
        return None;
    }
    let data = graph.input_bytes()?.bytes();
    let endian = object::LittleEndian;
    let header = elf::FileHeader64::<object::LittleEndian>::parse(data).ok()?;
    let sections = header.sections(endian, data).ok()?;
    // Code sections at their final addresses, through their section symbols.
    let symbols = sections.symbols(endian, data, elf::SHT_SYMTAB).ok()?;
    let mut code = Vec::new();
    for (index, sym) in symbols.enumerate() {
        if sym.st_type() != elf::STT_SECTION {
            continue;
        }
        let Ok(section) = sections.section(object::SectionIndex(sym.st_shndx(endian) as usize)) else { continue };
        let executable = section.sh_flags(endian) & u64::from(elf::SHF_EXECINSTR) != 0;
        let name = sections.section_name(endian, section).ok();
        if let (true, Some(address), Some(name)) = (executable, address_of(index.0 as u32), name) {
            code.push((name.to_vec(), address, section.sh_size(endian)));
        }
    }
    write_debug_file(&code, &debug).ok()
}

/// Object `graph`'s `.debug_*` sections that `wanted` accepts (by name),
/// as (name, bytes) with their relocations applied: `address_of` gives a
/// symbol's final address, `None` for symbols outside the image (then 0).
/// A reference into a debug section (an offset into `.debug_str`, say) is
/// its offset there plus `debug_base(name)`: 0 for the object's own debug
/// file, where that section was put when merging several objects' DWARF.
/// `None` if the object is not an ELF object.
pub(crate) fn relocated_debug_sections(
    graph: &crate::graph::model::LinkGraph,
    address_of: impl Fn(u32) -> Option<u64>,
    wanted: impl Fn(&[u8]) -> bool,
    debug_base: impl Fn(&[u8]) -> u64,
) -> Option<Vec<DebugSection>> {
    use object::read::elf::{FileHeader as _, SectionHeader as _, Sym as _};
    let data = graph.input_bytes()?.bytes();
    let endian = object::LittleEndian;
    let header = elf::FileHeader64::<object::LittleEndian>::parse(data).ok()?;
    let sections = header.sections(endian, data).ok()?;
    let name_of = |s: &elf::SectionHeader64<object::LittleEndian>| sections.section_name(endian, s).ok();
    let symbols = sections.symbols(endian, data, elf::SHT_SYMTAB).ok()?;
    // Where a symbol defined in a debug section points, if it is one.
    let debug_offset = |index: u32| {
        let symbol = symbols.symbol(object::SymbolIndex(index as usize)).ok()?;
        let section = sections.section(object::SectionIndex(usize::from(symbol.st_shndx(endian)))).ok()?;
        let name = name_of(section).filter(|n| n.starts_with(b".debug_"))?;
        Some(debug_base(name).wrapping_add(symbol.st_value(endian)))
    };
    let mut debug = Vec::new();
    for (index, section) in sections.enumerate() {
        let Some(name) = name_of(section).filter(|n| n.starts_with(b".debug_") && wanted(n)) else { continue };
        let Ok(bytes) = section.data(endian, data) else { continue };
        let compressed = section.sh_flags(endian) & u64::from(elf::SHF_COMPRESSED) != 0;
        let Some(mut bytes) = (if compressed { decompressed(bytes) } else { Some(bytes.to_vec()) }) else {
            continue;
        };
        let relocations =
            sections.iter().filter(|r| r.sh_type(endian) == elf::SHT_RELA && r.sh_info(endian) as usize == index.0);
        for rela in relocations {
            let Ok(table) = rela.data(endian, data) else { continue };
            for entry in table.chunks_exact(crate::graph::format::elf::RELA_SIZE) {
                let (offset, r_sym, r_type, addend) = crate::graph::format::elf::rela_fields(entry);
                let target = debug_offset(r_sym).or_else(|| address_of(r_sym));
                let value = target.unwrap_or(0).wrapping_add(addend as u64);
                // TLS offsets and the like are left as they are.
                let Some(width) = graph.cpu.absolute_data_width(r_type) else { continue };
                let Some(field) = usize::try_from(offset).ok().and_then(|o| bytes.get_mut(o..o + width)) else {
                    continue;
                };
                field.copy_from_slice(&value.to_le_bytes()[..width]);
            }
        }
        debug.push((name.to_vec(), bytes));
    }
    Some(debug)
}

/// The contents of a section compressed with zlib (`-gz`): after the
/// `Elf64_Chdr` (type, reserved, size, alignment), a zlib stream of `size`
/// bytes. `None` for another compression (zstd) or a corrupt stream.
fn decompressed(bytes: &[u8]) -> Option<Vec<u8>> {
    let field = |at: usize, width: usize| -> Option<u64> {
        let raw = bytes.get(at..at + width)?;
        Some(raw.iter().rev().fold(0u64, |value, &b| (value << 8) | u64::from(b)))
    };
    if field(0, 4)? != u64::from(elf::ELFCOMPRESS_ZLIB) {
        return None;
    }
    // At most 1 GiB, whatever a corrupt header claims.
    let size = usize::try_from(field(8, 8)?).ok().filter(|&size| size <= 1 << 30)?;
    let data = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(bytes.get(24..)?, size).ok()?;
    (data.len() == size).then_some(data)
}

/// The DWARF of all of `graphs` as one file holds it, as a linker merges
/// it: each `.debug_*` section the concatenation of the objects' (in
/// order), with their relocations applied (`address_of(graph, symbol)`
/// gives a symbol's final address) and references between debug sections
/// moved by where the referenced object's part landed. Compressed
/// sections (`-gz`) are left out.
pub(crate) fn merged_debug_sections(
    graphs: &[crate::graph::model::LinkGraph],
    address_of: impl Fn(usize, u32) -> Option<u64>,
) -> Vec<DebugSection> {
    let mut merged: Vec<DebugSection> = Vec::new();
    for (g, graph) in graphs.iter().enumerate() {
        // This object's parts go after the earlier objects' parts.
        let base = |name: &[u8]| merged.iter().find(|(n, _)| n == name).map_or(0, |(_, bytes)| bytes.len() as u64);
        let Some(sections) = relocated_debug_sections(graph, |s| address_of(g, s), |_| true, base) else {
            continue;
        };
        for (name, bytes) in sections {
            match merged.iter_mut().find(|(n, _)| *n == name) {
                Some((_, all)) => all.extend_from_slice(&bytes),
                None => merged.push((name, bytes)),
            }
        }
    }
    merged
}

/// The ELF file of [`object_debug_file`].
fn write_debug_file(code: &[(Vec<u8>, u64, u64)], debug: &[DebugSection]) -> Result<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut writer = Writer::new(Endianness::Little, true, &mut buffer);
    writer.reserve_file_header();
    writer.reserve_null_section_index();
    let code_sections: Vec<_> =
        code.iter().map(|(name, ..)| (writer.add_section_name(name), writer.reserve_section_index())).collect();
    let debug_sections = reserve_debug_sections(&mut writer, debug);
    writer.reserve_shstrtab_section_index();
    writer.reserve_shstrtab();
    writer.reserve_section_headers();

    writer.write_file_header(&crate::graph::format::elf::file_header(crate::arch::HOST, elf::ET_REL))?;
    for (_, bytes) in debug {
        writer.write(bytes);
    }
    writer.write_shstrtab();
    writer.write_null_section_header();
    for ((name, _), (_, address, size)) in code_sections.iter().zip(code) {
        writer.write_section_header(&SectionHeader {
            name: Some(*name),
            sh_type: elf::SHT_NOBITS,
            sh_flags: (elf::SHF_ALLOC | elf::SHF_EXECINSTR) as u64,
            sh_addr: *address,
            sh_offset: 0,
            sh_size: *size,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    write_debug_section_headers(&mut writer, &debug_sections, debug);
    writer.write_shstrtab_section_header();
    Ok(buffer)
}

/// Adds the line programs of `sections` (relocated `.debug_*` sections) to `table`.
pub fn add_lines(
    table: &mut crate::graph::line_table::LineTable,
    sections: &[crate::diagnostics::debugger::DebugSection],
) {
    let named = |wanted: &[u8]| sections.iter().find(|(name, _)| name == wanted).map_or(&[][..], |(_, b)| b);
    table.add_object(&crate::graph::line_table::LineSections {
        debug_line: named(b".debug_line"),
        debug_line_str: named(b".debug_line_str"),
        debug_str: named(b".debug_str"),
    });
}

/// Adds the source lines of each object of `graphs` built with `-g`, at
/// their final addresses (`address_of(graph, symbol)`), to `table`.
pub fn add_lines_of_objects(
    table: &mut crate::graph::line_table::LineTable,
    graphs: &[crate::graph::model::LinkGraph],
    address_of: impl Fn(usize, u32) -> Option<u64>,
) {
    for (g, graph) in graphs.iter().enumerate().filter(|(_, graph)| graph.has_line_info) {
        let wanted = |name: &[u8]| matches!(name, b".debug_line" | b".debug_line_str" | b".debug_str");
        if let Some(sections) =
            crate::diagnostics::debugger::relocated_debug_sections(graph, |s| address_of(g, s), wanted, |_| 0)
        {
            add_lines(table, &sections);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `Elf64_Chdr` of `kind` claiming `size` bytes, then `stream`.
    fn compressed(kind: u32, size: u64, stream: &[u8]) -> Vec<u8> {
        let mut bytes = kind.to_le_bytes().to_vec();
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&size.to_le_bytes());
        bytes.extend_from_slice(&1u64.to_le_bytes());
        bytes.extend_from_slice(stream);
        bytes
    }

    #[test]
    fn compressed_debug_sections_inflate_and_corrupt_ones_are_skipped() {
        let text = b"a line program, say".repeat(20);
        let stream = miniz_oxide::deflate::compress_to_vec_zlib(&text, 6);
        let zlib = elf::ELFCOMPRESS_ZLIB;
        assert_eq!(decompressed(&compressed(zlib, text.len() as u64, &stream)).as_deref(), Some(&text[..]));
        // A size that does not match, a truncated stream, zstd, a bare header.
        assert_eq!(decompressed(&compressed(zlib, text.len() as u64 + 1, &stream)), None);
        assert_eq!(decompressed(&compressed(zlib, text.len() as u64, &stream[..stream.len() / 2])), None);
        assert_eq!(decompressed(&compressed(elf::ELFCOMPRESS_ZSTD, text.len() as u64, &stream)), None);
        assert_eq!(decompressed(&compressed(zlib, u64::MAX, &stream)), None);
        assert_eq!(decompressed(&[1, 0, 0]), None);
    }
}
