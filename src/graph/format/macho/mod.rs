//! Mach-O relocatable objects (`MH_OBJECT`, x86-64 and arm64) → [`LinkGraph`].
//!
//! On Linux a Mach-O object of the host's CPU runs once linked: the CPU is
//! the same; the container, the relocation scheme and a few platform names
//! (and, on arm64, how variadic arguments are passed) differ. This
//! front-end translates them into the one link model, so every later pass
//! is shared with ELF.
//!
//! Where things are:
//! - this file: what is the same on every CPU (sections, atoms, symbols,
//!   literal sections, initializers, thread-local variables, `__eh_frame`,
//!   Darwin names);
//! - [`x86_64`]: `X86_64_RELOC_*` → the x86-64 fixup kinds;
//! - [`arm64`]: `ARM64_RELOC_*` (with `ADDEND` prefixes and `SUBTRACTOR`
//!   pairs) → the aarch64 fixup kinds, and what Darwin arm64 code needs
//!   of the C library (variadic calls: [`arm64::bind`]).
//!
//! - **Atoms.** With `MH_SUBSECTIONS_VIA_SYMBOLS` every symbol starts its
//!   own block, except private labels (`L…`, `l…`) and `.alt_entry`
//!   symbols, which stay inside the atom before them. `__eh_frame` stays one
//!   block. Each atom keeps the alignment its offset had in the section, so
//!   laying the atoms of a section out in order reproduces the section.
//! - **Addends.** x86-64 stores addends in the patched bytes; arm64 in the
//!   data it patches and in `ARM64_RELOC_ADDEND` entries for instructions.
//!   They are read into edges. Section-relative (non-extern) relocations
//!   store the target's address in the object; the block that holds it
//!   gets an anonymous symbol the edge points at.
//! - **`__eh_frame`** has pc-relative `pc_begin` and LSDA pointers that the
//!   assembler resolved without relocations; they become `Pc64`/`Pc32`
//!   edges here (as JITLink's `EHFrameEdgeFixer` does), so the unwinder
//!   sees correct addresses after layout; relocations the records hold
//!   about themselves (a CIE pointer as a `SUBTRACTOR` pair) are applied
//!   first (`ehframe::resolve_internal_edges`). `__compact_unwind` is
//!   dropped: unwinding uses `__eh_frame`.
//! - **Thread-locals.** `__thread_data`/`__thread_bss` become the TLS
//!   template. Each `__thread_vars` descriptor `{thunk, key, offset}` gets
//!   `thunk` = `__jitrun_tlv_get_addr` (the CPU's runtime piece), which
//!   returns the thread pointer + `offset`, and `offset` = the variable's
//!   thread-pointer offset (a `TpOff64`/`TlsTpRel64` edge): glibc places
//!   the template in static TLS of every thread (see [`crate::host::tls`]).
//! - **Initializers.** `__mod_init_func` → init array, `__mod_term_func` →
//!   fini array, `__init_offsets` (32-bit offsets) → an init array of
//!   pointers built here.
//! - **Names.** The leading `_` of C symbols is removed, so `_printf` binds
//!   to the host's `printf`; a name without it keeps its spelling. Then
//!   undefined references go through [`DARWIN_COMPAT`], which maps Darwin
//!   libc names to their glibc equivalents (or to jitrun runtime pieces).
//!   The front-end does the renaming so that resolution stays format-blind.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use object::macho;
use object::read::macho::{MachHeader, Nlist, Section as _, Segment as _};
use object::Endianness;

use crate::arch::{Cpu, EdgeKind};
use crate::graph::format::elf::MAX_SECTION_ALIGN;
use crate::graph::model::*;
use crate::support::input::InputData;

mod arm64;
mod x86_64;

const S_THREAD_LOCAL_VARIABLES: u32 = macho::S_THREAD_LOCAL_VARIABLES;

type Header = macho::MachHeader64<Endianness>;

/// Darwin libc names (after the leading `_` is removed) that Mac-built
/// objects reference, and what they mean on Linux with glibc. Only
/// undefined references are renamed; an object that defines one of these
/// names itself keeps its own definition.
///
/// | Darwin             | here                       | why                                   |
/// |--------------------|----------------------------|---------------------------------------|
/// | `__stdoutp` …      | `stdout`, `stderr`, `stdin`| the same `FILE *` variables           |
/// | `__error`          | `__errno_location`         | both return `int *` to this thread's errno |
/// | `__stack_chk_guard`| `__jitrun_stack_chk_guard` | glibc keeps the canary in the TCB; the image gets its own random guard word |
/// | `__stack_chk_fail` | `__stack_chk_fail`         | same function                         |
/// | `_NSGetEnviron`    | `__jitrun_NSGetEnviron`    | returns `&environ`                    |
/// | `environ`          | `environ`                  | same variable                         |
/// | `_tlv_bootstrap`   | `__jitrun_tlv_get_addr`    | thread-local descriptor thunk         |
/// | `__bzero`          | `bzero`                    | LLVM emits `__bzero` for Darwin       |
/// | `__exp10`, `__exp10f` | `exp10`, `exp10f`       | LLVM's Darwin libcall names           |
/// | `__sincos_stret`, `__sincosf_stret` | `__jitrun_sincos_stret`, `__jitrun_sincosf_stret` | return sin and cos in registers via glibc `sincos` |
/// | `__assert_rtn`     | `__jitrun_assert_rtn`      | glibc `__assert_fail` with its arguments reordered |
///
/// Symbol variants `NAME$UNIX2003`, `NAME$DARWIN_EXTSN` and `NAME$NOCANCEL`
/// bind to `NAME` (same behaviour on Linux). `$INODE64` variants are left
/// alone: their `struct stat`/`dirent` layouts differ from glibc's.
pub const DARWIN_COMPAT: &[(&str, &str)] = &[
    ("__stdoutp", "stdout"),
    ("__stderrp", "stderr"),
    ("__stdinp", "stdin"),
    ("__error", "__errno_location"),
    ("__stack_chk_guard", crate::arch::runtime::STACK_CHK_GUARD),
    ("__stack_chk_fail", "__stack_chk_fail"),
    ("_NSGetEnviron", "__jitrun_NSGetEnviron"),
    ("environ", "environ"),
    ("_tlv_bootstrap", crate::arch::runtime::TLV_GET_ADDR),
    ("__bzero", "bzero"),
    ("__exp10", "exp10"),
    ("__exp10f", "exp10f"),
    ("__sincos_stret", "__jitrun_sincos_stret"),
    ("__sincosf_stret", "__jitrun_sincosf_stret"),
    ("__assert_rtn", "__jitrun_assert_rtn"),
];

/// The model name of a Mach-O symbol: without the C underscore.
pub fn c_name(raw: &str) -> &str {
    raw.strip_prefix('_').unwrap_or(raw)
}

/// What an undefined reference binds to on this platform.
pub fn host_name(name: &str) -> &str {
    let base = ["$UNIX2003", "$DARWIN_EXTSN", "$NOCANCEL"].iter().find_map(|s| name.strip_suffix(s)).unwrap_or(name);
    DARWIN_COMPAT.iter().find(|(darwin, _)| *darwin == base).map_or(base, |(_, host)| host)
}

/// One input section and where its atoms went.
struct InSection {
    /// `__SEGMENT,__section`, as Apple's tools print it.
    name: String,
    addr: u64,
    size: u64,
    sect_type: u32,
    /// File range of the contents (empty for zero-fill).
    file: std::ops::Range<usize>,
    loaded: Option<SectionId>,
    /// Atoms in address order: (offset in the section, block).
    atoms: Vec<(u64, BlockId)>,
}

impl InSection {
    /// The atom holding section offset `offset` (an offset equal to the
    /// size lands at the end of the last atom) and the offset inside it.
    fn atom_at(&self, offset: u64) -> Option<(BlockId, u64)> {
        let i = self.atoms.partition_point(|&(start, _)| start <= offset);
        let (start, block) = *self.atoms.get(i.checked_sub(1)?)?;
        Some((block, offset - start))
    }

    fn contains(&self, addr: u64) -> bool {
        addr >= self.addr && addr - self.addr <= self.size
    }
}

/// Translates the Mach-O object in `input` (named `name` in messages).
pub fn parse(name: &str, input: Arc<InputData>, limits: &crate::graph::Limits) -> Result<LinkGraph> {
    let data = input.bytes();
    let err = |what: &dyn std::fmt::Display| anyhow!("{}: {}", name, what);
    let magic = data.get(..4).map(|m| u32::from_le_bytes(m.try_into().unwrap())).unwrap_or(0);
    match magic {
        macho::MH_MAGIC_64 => {}
        macho::MH_MAGIC => bail!("{}: 32-bit Mach-O objects are not supported (x86-64 and arm64 are)", name),
        _ => bail!("{}: not a little-endian 64-bit Mach-O file", name),
    }
    let header = Header::parse(data, 0).map_err(|e| err(&format_args!("invalid Mach-O header: {}", e)))?;
    let endian = header.endian().map_err(|e| err(&e))?;
    let cputype = header.cputype(endian);
    let cpu = match cputype {
        macho::CPU_TYPE_X86_64 => Cpu::X86_64,
        macho::CPU_TYPE_ARM64 => Cpu::Aarch64,
        macho::CPU_TYPE_ARM64_32 => {
            bail!(
                "{}: Mach-O object for arm64_32 (32-bit pointers, watchOS) is not supported (x86-64 and arm64 are)",
                name
            )
        }
        other => bail!("{}: Mach-O CPU type {:#x} is not supported (x86-64 and arm64 are)", name, other),
    };
    if header.filetype(endian) != macho::MH_OBJECT {
        let what = match header.filetype(endian) {
            macho::MH_EXECUTE => "a Mach-O executable",
            macho::MH_DYLIB => "a Mach-O dynamic library",
            macho::MH_BUNDLE => "a Mach-O bundle",
            _ => "not a Mach-O relocatable object",
        };
        bail!("{}: {}; jitrun loads relocatable objects (.o)", name, what);
    }
    let subsections = header.flags(endian) & macho::MH_SUBSECTIONS_VIA_SYMBOLS != 0;

    // Load commands: the sections (of the one unnamed segment, or several)
    // and the symbol table.
    let mut raw_sections: Vec<&macho::Section64<Endianness>> = Vec::new();
    let mut symtab_cmd = None;
    let mut commands = header.load_commands(endian, data, 0).map_err(|e| err(&format_args!("load commands: {}", e)))?;
    while let Some(command) = commands.next().map_err(|e| err(&format_args!("load commands: {}", e)))? {
        if let Some((segment, section_data)) =
            command.segment_64().map_err(|e| err(&format_args!("segment command: {}", e)))?
        {
            let sections =
                segment.sections(endian, section_data).map_err(|e| err(&format_args!("section headers: {}", e)))?;
            raw_sections.extend(sections.iter());
        } else if let Some(symtab) = command.symtab().map_err(|e| err(&format_args!("LC_SYMTAB: {}", e)))? {
            symtab_cmd = Some(symtab);
        }
    }
    let symbols = match symtab_cmd {
        Some(cmd) => {
            Some(cmd.symbols::<Header, _>(endian, data).map_err(|e| err(&format_args!("symbol table: {}", e)))?)
        }
        None => None,
    };
    let nlists: Vec<&macho::Nlist64<Endianness>> = symbols.as_ref().map(|s| s.iter().collect()).unwrap_or_default();
    let strings = symbols.as_ref().map(|s| s.strings());
    let mut names: Vec<String> = Vec::with_capacity(nlists.len());
    for (i, nlist) in nlists.iter().enumerate() {
        let raw = match strings {
            Some(strings) => nlist.name(endian, strings).map_err(|e| err(&format_args!("symbol {}: {}", i, e)))?,
            None => &[],
        };
        names.push(String::from_utf8_lossy(raw).into_owned());
    }

    let mut graph = LinkGraph::new(name.to_string(), cpu, Some(input.clone()));
    let mut sections: Vec<InSection> = Vec::with_capacity(raw_sections.len());
    let mut total_size: u64 = 0;
    for section in &raw_sections {
        let sec_name =
            format!("{},{}", String::from_utf8_lossy(section.segment_name()), String::from_utf8_lossy(section.name()));
        let flags = section.flags(endian);
        let sect_type = flags & macho::SECTION_TYPE;
        let (addr, size) = (section.addr(endian), section.size(endian));
        if addr.checked_add(size).is_none() {
            bail!("{}: section {}: address {:#x} plus size {:#x} overflows", name, sec_name, addr, size);
        }
        let zero_fill = matches!(sect_type, macho::S_ZEROFILL | macho::S_GB_ZEROFILL | macho::S_THREAD_LOCAL_ZEROFILL);
        let file = if zero_fill {
            0..0
        } else {
            super::file_range(name, &sec_name, u64::from(section.offset(endian)), size, data.len())?
        };
        let kind = classify(&sec_name, sect_type, flags)
            .map_err(|what| err(&format_args!("section {}: {}", sec_name, what)))?;
        let mut in_section =
            InSection { name: sec_name.clone(), addr, size, sect_type, file, loaded: None, atoms: Vec::new() };
        if let Some(kind) = kind {
            let align_log = section.align(endian);
            if align_log >= 64 || (1u64 << align_log) > MAX_SECTION_ALIGN {
                bail!(
                    "{}: section {}: alignment 2^{} is larger than {:#x}",
                    name,
                    sec_name,
                    align_log,
                    MAX_SECTION_ALIGN
                );
            }
            total_size = super::add_section_size(name, &sec_name, total_size, size, super::SizeLimit::Image, limits)?;
            let sid = graph.add_section(&sec_name, kind);
            if let SectionKind::InitArray(_) = kind {
                // Like ELF's unsuffixed `.init_array`: after prioritized entries.
                graph.sections[sid as usize].priority = 65536;
            }
            in_section.loaded = Some(sid);
            if sect_type == macho::S_INIT_FUNC_OFFSETS {
                // Filled with pointers when relocations are read.
                if size % 4 != 0 {
                    bail!("{}: section {}: size {:#x} is not a multiple of 4", name, sec_name, size);
                }
                let bytes = vec![0u8; (size * 2) as usize];
                let block = graph.add_block(sid, Content::Owned(bytes), size * 2, 8);
                in_section.atoms.push((0, block));
            } else {
                let splittable = subsections && kind != SectionKind::EhFrame;
                let mut starts = vec![0u64];
                if splittable {
                    for (i, nlist) in nlists.iter().enumerate() {
                        let n_type = nlist.n_type();
                        if n_type & macho::N_STAB != 0
                            || n_type & macho::N_TYPE != macho::N_SECT
                            || usize::from(nlist.n_sect()) != sections.len() + 1
                            || nlist.n_desc(endian) & macho::N_ALT_ENTRY != 0
                            || names[i].starts_with('L')
                            || names[i].starts_with('l')
                        {
                            continue;
                        }
                        let offset = nlist.n_value(endian).wrapping_sub(addr);
                        if offset < size {
                            starts.push(offset);
                        }
                    }
                    starts.sort_unstable();
                    starts.dedup();
                }
                let section_align = 1u64 << align_log;
                for (i, &start) in starts.iter().enumerate() {
                    let end = starts.get(i + 1).copied().unwrap_or(size);
                    let content = if zero_fill {
                        Content::Zero
                    } else {
                        Content::File(in_section.file.start + start as usize..in_section.file.start + end as usize)
                    };
                    // The alignment the atom's offset already had, so that
                    // atoms laid out in order keep their relative offsets.
                    let align = if start == 0 { section_align } else { section_align.min(1 << start.trailing_zeros()) };
                    let block = graph.add_block(sid, content, end - start, align);
                    graph.blocks[block as usize].input_offset = start;
                    in_section.atoms.push((start, block));
                }
            }
        }
        sections.push(in_section);
    }

    // Mach-O records no symbol sizes: as ld64's atoms, a symbol spans to
    // the next symbol of its section (assembler-local `L`/`l` labels
    // aside) or to the section's end. Crash reports, the map and
    // `--set`'s integer widths need them.
    let mut starts_by_section: Vec<Vec<u64>> = vec![Vec::new(); sections.len()];
    for (i, nlist) in nlists.iter().enumerate() {
        let n_type = nlist.n_type();
        if n_type & macho::N_STAB != 0
            || n_type & macho::N_TYPE != macho::N_SECT
            || names[i].starts_with('L')
            || names[i].starts_with('l')
        {
            continue;
        }
        if let Some(starts) = usize::from(nlist.n_sect()).checked_sub(1).and_then(|s| starts_by_section.get_mut(s)) {
            starts.push(nlist.n_value(endian));
        }
    }
    for starts in &mut starts_by_section {
        starts.sort_unstable();
        starts.dedup();
    }
    let size_in_section = |section: usize, value: u64| -> u64 {
        let starts = &starts_by_section[section];
        let end = starts.get(starts.partition_point(|&s| s <= value)).copied();
        let section_end = sections[section].addr + sections[section].size;
        end.unwrap_or(section_end).min(section_end).saturating_sub(value)
    };

    // Symbols keep their Mach-O index, so relocations map one to one.
    let defined_names: std::collections::HashSet<&str> = nlists
        .iter()
        .zip(&names)
        .filter(|(n, _)| n.n_type() & macho::N_STAB == 0 && n.n_type() & macho::N_TYPE != macho::N_UNDF)
        .map(|(_, raw)| c_name(raw))
        .collect();
    for (i, nlist) in nlists.iter().enumerate() {
        let raw = names[i].as_str();
        let n_type = nlist.n_type();
        let n_desc = nlist.n_desc(endian);
        let value = nlist.n_value(endian);
        if n_type & macho::N_STAB != 0 {
            // Debugger entries: keep the index, load nothing.
            graph.add_symbol(Symbol {
                name: None,
                def: SymbolDef::NotLoaded,
                scope: Scope::Local,
                linkage: Linkage::Strong,
                kind: SymbolKind::Unknown,
                size: 0,
            });
            continue;
        }
        let external = n_type & macho::N_EXT != 0;
        if external && raw.is_empty() {
            // ld64 and JITLink refuse it too: an external symbol is found
            // by its name, and this one has none.
            bail!("{}: symbol {}: an external (N_EXT) symbol has an empty name", name, i);
        }
        let scope = if external { Scope::Global } else { Scope::Local };
        let mut kind = SymbolKind::Unknown;
        let mut linkage = if n_desc & macho::N_WEAK_DEF != 0 { Linkage::Weak } else { Linkage::Strong };
        let mut size = 0;
        let def = match n_type & macho::N_TYPE {
            macho::N_UNDF if external && value != 0 => {
                let align = 1u32 << ((n_desc >> 8) & 0x0f);
                SymbolDef::Common { size: value, align }
            }
            macho::N_UNDF => {
                if n_desc & macho::N_WEAK_REF != 0 {
                    linkage = Linkage::Weak;
                }
                SymbolDef::Undefined
            }
            macho::N_ABS => SymbolDef::Absolute(value),
            macho::N_SECT => {
                let ordinal = usize::from(nlist.n_sect());
                let section = ordinal
                    .checked_sub(1)
                    .and_then(|s| sections.get(s))
                    .ok_or_else(|| err(&format_args!("symbol {}: section ordinal {} does not exist", raw, ordinal)))?;
                size = size_in_section(ordinal - 1, value);
                if !section.contains(value) {
                    bail!(
                        "{}: symbol {}: address {:#x} lies outside its section {} [{:#x}, {:#x}]",
                        name,
                        raw,
                        value,
                        section.name,
                        section.addr,
                        section.addr + section.size
                    );
                }
                match (section.loaded, section.atom_at(value - section.addr)) {
                    (Some(sid), Some((block, offset))) => {
                        kind = match graph.sections[sid as usize].kind {
                            SectionKind::Code => SymbolKind::Function,
                            SectionKind::TlsData | SectionKind::TlsZeroFill => SymbolKind::Tls,
                            _ => SymbolKind::Data,
                        };
                        SymbolDef::Defined { block, offset }
                    }
                    _ => SymbolDef::NotLoaded,
                }
            }
            macho::N_INDR => bail!("{}: symbol {}: indirect (N_INDR) symbols are not supported", name, raw),
            other => bail!("{}: symbol {}: unknown symbol type {:#x}", name, raw, other),
        };
        let mut model_name = c_name(raw);
        if def == SymbolDef::Undefined && !defined_names.contains(model_name) {
            model_name = host_name(model_name);
            if cpu == Cpu::Aarch64 {
                model_name = arm64::bind(model_name).map_err(|e| err(&format_args!("symbol {}: {}", raw, e)))?;
            }
        }
        let name_opt = if raw.is_empty() { None } else { Some(model_name.into()) };
        let id = graph.add_symbol(Symbol { name: name_opt, def, scope, linkage, kind, size });
        // A private extern (`__private_extern__`, hidden visibility) links
        // like a global but is never exported (`--export-dynamic`).
        if external && n_type & macho::N_PEXT != 0 {
            graph.hidden.push(id);
        }
    }

    let mut builder = EdgeBuilder { name, data, graph, sections: &sections, anonymous: HashMap::new() };
    for (index, section) in raw_sections.iter().enumerate() {
        let relocs =
            section.relocations(endian, data).map_err(|e| err(&format_args!("{}: {}", sections[index].name, e)))?;
        let compact_unwind = cpu == Cpu::Aarch64 && sections[index].name == "__LD,__compact_unwind";
        if relocs.is_empty() || (sections[index].loaded.is_none() && !compact_unwind) {
            continue;
        }
        if sections[index].file.is_empty() {
            bail!("{}: section {}: zero-fill section has relocations", name, sections[index].name);
        }
        let infos: Vec<RelocInfo> = relocs
            .iter()
            .map(|r| {
                if r.r_scattered(endian, cputype) {
                    Err(err(&format_args!(
                        "section {}: scattered relocation (used by 32-bit Mach-O only)",
                        sections[index].name
                    )))
                } else {
                    Ok(RelocInfo::from(r.info(endian)))
                }
            })
            .collect::<Result<_>>()?;
        if compact_unwind {
            // arm64 compilers describe most functions' frames only here;
            // the unwinders of Linux read DWARF.
            arm64::eh_frame_from_compact_unwind(&mut builder, index, &infos)?;
        } else {
            builder.add_relocations(index, &infos)?;
        }
    }
    crate::graph::ehframe::resolve_internal_edges(&mut builder.graph)?;
    for (index, section) in sections.iter().enumerate() {
        if section.loaded.is_some_and(|sid| builder.graph.sections[sid as usize].kind == SectionKind::EhFrame) {
            builder.add_eh_frame_edges(index)?;
        }
    }
    crate::graph::ehframe::check(&builder.graph)?;
    Ok(builder.graph)
}

/// Decides whether and as what a section is loaded; `Ok(None)` for
/// sections that take no memory at run time.
fn classify(name: &str, sect_type: u32, flags: u32) -> Result<Option<SectionKind>, String> {
    let (segment, section) = name.split_once(',').unwrap_or(("", name));
    if flags & macho::S_ATTR_DEBUG != 0 || segment == "__DWARF" || segment == "__LD" {
        // Debug info, and `__LD,__compact_unwind` (unwinding uses __eh_frame).
        return Ok(None);
    }
    if section == "__eh_frame" {
        return Ok(Some(SectionKind::EhFrame));
    }
    let code = flags & (macho::S_ATTR_PURE_INSTRUCTIONS | macho::S_ATTR_SOME_INSTRUCTIONS) != 0;
    Ok(Some(match sect_type {
        macho::S_ZEROFILL | macho::S_GB_ZEROFILL => SectionKind::ZeroFill,
        macho::S_THREAD_LOCAL_ZEROFILL => SectionKind::TlsZeroFill,
        macho::S_THREAD_LOCAL_REGULAR => SectionKind::TlsData,
        macho::S_MOD_INIT_FUNC_POINTERS
        | macho::S_THREAD_LOCAL_INIT_FUNCTION_POINTERS
        | macho::S_INIT_FUNC_OFFSETS => SectionKind::InitArray(InitKind::InitArray),
        macho::S_MOD_TERM_FUNC_POINTERS => SectionKind::InitArray(InitKind::FiniArray),
        macho::S_THREAD_LOCAL_VARIABLES | macho::S_THREAD_LOCAL_VARIABLE_POINTERS => SectionKind::Data,
        macho::S_REGULAR
        | macho::S_COALESCED
        | macho::S_CSTRING_LITERALS
        | macho::S_4BYTE_LITERALS
        | macho::S_8BYTE_LITERALS
        | macho::S_16BYTE_LITERALS
        | macho::S_LITERAL_POINTERS => {
            if code {
                SectionKind::Code
            } else if segment == "__TEXT" {
                SectionKind::ReadOnly
            } else if segment == "__DATA_CONST" || (segment == "__DATA" && section == "__const") {
                SectionKind::RelRo
            } else {
                SectionKind::Data
            }
        }
        macho::S_NON_LAZY_SYMBOL_POINTERS
        | macho::S_LAZY_SYMBOL_POINTERS
        | macho::S_SYMBOL_STUBS
        | macho::S_LAZY_DYLIB_SYMBOL_POINTERS => {
            return Err(format!(
                "section type {:#x} (indirect symbol pointers or stubs) belongs in linked images, not in a relocatable object",
                sect_type
            ))
        }
        other => return Err(format!("section type {:#x} is not supported", other)),
    }))
}

/// The fields of one `relocation_info`.
#[derive(Clone, Copy, Debug)]
struct RelocInfo {
    address: u32,
    symbolnum: u32,
    pcrel: bool,
    length: u8,
    external: bool,
    r_type: u8,
}

impl From<macho::RelocationInfo> for RelocInfo {
    fn from(r: macho::RelocationInfo) -> Self {
        RelocInfo {
            address: r.r_address,
            symbolnum: r.r_symbolnum,
            pcrel: r.r_pcrel,
            length: r.r_length,
            external: r.r_extern,
            r_type: r.r_type,
        }
    }
}

/// Turns relocations (and `__eh_frame`'s implicit pointers) into edges.
struct EdgeBuilder<'a> {
    name: &'a str,
    data: &'a [u8],
    graph: LinkGraph,
    sections: &'a [InSection],
    /// Anonymous local symbols made for section-relative targets.
    anonymous: HashMap<(BlockId, u64), SymbolId>,
}

impl EdgeBuilder<'_> {
    /// An edge's offset within its block, which the model keeps in 32 bits.
    fn edge_offset(&self, section: usize, offset: u64) -> Result<u32> {
        u32::try_from(offset)
            .map_err(|_| self.fail(section, offset, "relocations beyond 4 GiB into an atom are not supported"))
    }

    fn fail(&self, section: usize, offset: u64, what: impl std::fmt::Display) -> anyhow::Error {
        anyhow!("{}: section {}+{:#x}: {}", self.name, self.sections[section].name, offset, what)
    }

    /// The in-place value of a field, sign-extended.
    fn read_signed(&self, section: usize, offset: u64, width: u64) -> i64 {
        let at = self.sections[section].file.start + offset as usize;
        let bytes = &self.data[at..at + width as usize];
        match width {
            1 => bytes[0] as i8 as i64,
            2 => i16::from_le_bytes(bytes.try_into().unwrap()) as i64,
            4 => i32::from_le_bytes(bytes.try_into().unwrap()) as i64,
            _ => i64::from_le_bytes(bytes.try_into().unwrap()),
        }
    }

    /// An anonymous symbol at `offset` in `block`.
    fn anonymous_symbol(&mut self, block: BlockId, offset: u64) -> SymbolId {
        if let Some(&s) = self.anonymous.get(&(block, offset)) {
            return s;
        }
        let s = self.graph.add_symbol(Symbol {
            name: None,
            def: SymbolDef::Defined { block, offset },
            scope: Scope::Local,
            linkage: Linkage::Strong,
            kind: SymbolKind::Unknown,
            size: 0,
        });
        self.anonymous.insert((block, offset), s);
        s
    }

    /// The symbol for object address `addr` in section `target` (an index),
    /// plus the addend that reaches `addr` from it. Addresses outside the
    /// section keep their distance from its nearest end.
    fn symbol_at_address(&mut self, target: usize, addr: i64) -> Result<(SymbolId, i64), String> {
        let section =
            self.sections.get(target).ok_or_else(|| format!("section ordinal {} does not exist", target + 1))?;
        if section.loaded.is_none() {
            return Err(format!("refers to section {}, which jitrun does not load", section.name));
        }
        let offset = (addr as i128 - section.addr as i128).clamp(0, section.size as i128) as u64;
        let (block, in_block) =
            section.atom_at(offset).ok_or_else(|| format!("section {} has no contents", section.name))?;
        let addend = addr.wrapping_sub((section.addr + offset) as i64);
        Ok((self.anonymous_symbol(block, in_block), addend))
    }

    /// The loaded section holding object address `addr`, as an index.
    fn section_of_address(&self, addr: u64) -> Option<usize> {
        self.sections.iter().position(|s| s.loaded.is_some() && s.size > 0 && addr >= s.addr && addr - s.addr < s.size)
    }

    fn symbol_index(&self, symbolnum: u32) -> Result<SymbolId, String> {
        if (symbolnum as usize) < self.graph.symbols.len() && self.graph.symbols[symbolnum as usize].name.is_some() {
            Ok(symbolnum)
        } else {
            Err(format!("refers to symbol index {}, which does not exist", symbolnum))
        }
    }

    fn add_relocations(&mut self, section: usize, relocs: &[RelocInfo]) -> Result<()> {
        let is_init_offsets = self.sections[section].sect_type == macho::S_INIT_FUNC_OFFSETS;
        let mut covered = vec![false; if is_init_offsets { (self.sections[section].size / 4) as usize } else { 0 }];
        let mut i = 0;
        while i < relocs.len() {
            let (decoded, used) = match self.graph.cpu {
                Cpu::X86_64 => x86_64::decode(self, section, &relocs[i..])?,
                Cpu::Aarch64 => arm64::decode(self, section, &relocs[i..])?,
            };
            i += used;
            let Decoded { r, kind, target, addend, subtrahend } = decoded;
            let offset = u64::from(r.address);
            if is_init_offsets {
                // Entry k (4 bytes) becomes pointer k (8 bytes).
                let cpu = self.graph.cpu;
                let reference32 = kind.width() == 4 && (kind.uses_subtrahend() || kind == cpu.absolute32());
                if offset % 4 != 0 || r.length != 2 || !reference32 {
                    return Err(self.fail(
                        section,
                        offset,
                        format_args!(
                            "{} in an init-offsets section: expected a 32-bit function reference",
                            describe(cpu, r)
                        ),
                    ));
                }
                covered[(offset / 4) as usize] = true;
                let block = self.sections[section].atoms[0].1;
                let edge_offset = self.edge_offset(section, offset * 2)?;
                let kind = self.graph.cpu.absolute64();
                self.graph.blocks[block as usize]
                    .edges
                    .push(Edge { subtrahend, ..Edge::new(edge_offset, kind, target, addend) });
                continue;
            }
            let (block, block_offset) =
                self.sections[section].atom_at(offset).expect("offset checked against the size");
            let block_size = self.graph.blocks[block as usize].size;
            if block_offset + kind.width() > block_size {
                return Err(self.fail(
                    section,
                    offset,
                    format_args!("{} straddles two atoms", describe(self.graph.cpu, r)),
                ));
            }
            let block_offset = self.edge_offset(section, block_offset)?;
            self.graph.blocks[block as usize]
                .edges
                .push(Edge { subtrahend, ..Edge::new(block_offset, kind, target, addend) });
        }
        // Init-offset entries without relocations are offsets of functions
        // in this object's address space.
        for (k, _) in covered.iter().enumerate().filter(|(_, c)| !**c) {
            let value = self.read_signed(section, 4 * k as u64, 4) as u32 as u64;
            let target_section = self.section_of_address(value).ok_or_else(|| {
                self.fail(section, 4 * k as u64, format_args!("init offset {:#x} points into no loaded section", value))
            })?;
            let (target, addend) = self
                .symbol_at_address(target_section, value as i64)
                .map_err(|e| self.fail(section, 4 * k as u64, e))?;
            let block = self.sections[section].atoms[0].1;
            let edge_offset = self.edge_offset(section, 8 * k as u64)?;
            let kind = self.graph.cpu.absolute64();
            self.graph.blocks[block as usize].edges.push(Edge::new(edge_offset, kind, target, addend));
        }
        Ok(())
    }

    /// Refuses a relocation whose field runs past the end of its section.
    fn check_bounds(&self, section: usize, r: RelocInfo) -> Result<()> {
        let offset = u64::from(r.address);
        let width = 1u64 << r.length;
        if offset.checked_add(width).is_none_or(|end| end > self.sections[section].size) {
            return Err(self.fail(
                section,
                offset,
                format_args!(
                    "{} patches {} bytes past the end of the section",
                    reloc_name(self.graph.cpu, r.r_type),
                    width
                ),
            ));
        }
        Ok(())
    }

    /// A thread-local variable's descriptor is the target of a TLV access.
    /// Marking an undefined one lets the linker make a descriptor for a
    /// shared library's thread-local variable (which has none) and refuse
    /// what it cannot serve.
    fn mark_thread_local_reference(&mut self, target: SymbolId) {
        let symbol = &mut self.graph.symbols[target as usize];
        if symbol.def == SymbolDef::Undefined {
            symbol.kind = SymbolKind::Tls;
        }
    }

    /// A `SUBTRACTOR` relocation `r` and its `UNSIGNED` `pair` (same field)
    /// → (minuend, addend, subtrahend): the field holds `minuend + addend -
    /// subtrahend`. The subtracted symbol must be a symbol; a section-relative
    /// minuend's object address is in place.
    fn subtractor_pair(
        &mut self,
        r: RelocInfo,
        pair: RelocInfo,
        inplace: i64,
    ) -> Result<(SymbolId, i64, SymbolId), String> {
        if !r.external {
            return Err("the subtracted symbol must be a symbol (r_extern = 1), not a section".to_string());
        }
        let subtrahend = self.symbol_index(r.symbolnum)?;
        let (minuend, addend) = if pair.external {
            (self.symbol_index(pair.symbolnum)?, inplace)
        } else {
            // The in-place value holds the minuend's object address.
            self.symbol_at_address((pair.symbolnum as usize).wrapping_sub(1), inplace)?
        };
        Ok((minuend, addend, subtrahend))
    }

    fn is_tls(&self, symbol: SymbolId) -> bool {
        match self.graph.symbols[symbol as usize].def {
            SymbolDef::Defined { block, .. } => {
                matches!(self.graph.block_section(block).kind, SectionKind::TlsData | SectionKind::TlsZeroFill)
            }
            _ => false,
        }
    }

    /// Adds edges for `__eh_frame` pointers the assembler resolved in place:
    /// CIE personality, FDE `pc_begin` and LSDA, when pc-relative and not
    /// already covered by a relocation.
    fn add_eh_frame_edges(&mut self, section: usize) -> Result<()> {
        let block = self.sections[section].atoms[0].1;
        // The block's bytes, with what the records say of themselves
        // already applied (`ehframe::resolve_internal_edges`).
        let bytes = match self.graph.blocks[block as usize].bytes(self.graph.input.as_deref()) {
            Some(bytes) => bytes.to_vec(),
            None => return Ok(()),
        };
        let bytes = &bytes[..];
        let covered: std::collections::HashSet<u64> =
            self.graph.blocks[block as usize].edges.iter().map(|e| u64::from(e.offset)).collect();
        let records = parse_eh_frame(bytes).map_err(|(at, what)| self.fail(section, at, what))?;
        for pointer in records {
            if covered.contains(&pointer.offset) {
                continue;
            }
            let fail = |this: &Self, what: &dyn std::fmt::Display| this.fail(section, pointer.offset, what);
            let Some(raw) = crate::graph::ehframe::encoded_value(bytes, pointer.offset as usize, pointer.encoding)
            else {
                return Err(fail(
                    self,
                    &format_args!(
                        "pointer encoding {:#x} (format {:#x}) is not supported",
                        pointer.encoding,
                        pointer.encoding & 0x0f
                    ),
                ));
            };
            let width = pointer.width();
            let (target_addr, kind) = match pointer.encoding & 0x70 {
                0x10 => {
                    let field_addr = self.sections[section].addr + pointer.offset;
                    let cpu = self.graph.cpu;
                    (
                        (field_addr as i64).wrapping_add(raw),
                        if width == 8 { cpu.pc_relative64() } else { cpu.pc_relative32() },
                    )
                }
                0x00 if width == 8 => (raw, self.graph.cpu.absolute64()),
                _ => {
                    return Err(fail(
                        self,
                        &format_args!("pointer encoding {:#x} is not supported without a relocation", pointer.encoding),
                    ))
                }
            };
            if pointer.optional && raw == 0 {
                continue;
            }
            let target_section = self.section_of_address(target_addr as u64).ok_or_else(|| {
                fail(self, &format_args!("pointer to {:#x} points into no loaded section", target_addr))
            })?;
            let (target, addend) = self.symbol_at_address(target_section, target_addr).map_err(|e| fail(self, &e))?;
            let edge_offset = self.edge_offset(section, pointer.offset)?;
            self.graph.blocks[block as usize].edges.push(Edge::new(edge_offset, kind, target, addend));
        }
        Ok(())
    }
}

/// Name of a relocation number of `cpu`, for messages.
pub fn reloc_name(cpu: Cpu, r_type: u8) -> &'static str {
    match cpu {
        Cpu::X86_64 => x86_64::reloc_name(r_type),
        Cpu::Aarch64 => arm64::reloc_name(r_type),
    }
}

/// One relocation, or the pair that describes one field (`SUBTRACTOR` +
/// `UNSIGNED`, `ARM64_RELOC_ADDEND` + its relocation), as the CPU's module
/// decoded it. `r` is the entry that names the field, for messages.
struct Decoded {
    r: RelocInfo,
    kind: EdgeKind,
    target: SymbolId,
    addend: i64,
    subtrahend: SymbolId,
}

fn describe(cpu: Cpu, r: RelocInfo) -> String {
    format!(
        "{} (type {}, {}pc-relative, {} bytes, {})",
        reloc_name(cpu, r.r_type),
        r.r_type,
        if r.pcrel { "" } else { "not " },
        1u32 << r.length,
        if r.external { "against a symbol" } else { "section-relative" }
    )
}

/// A pointer field in `__eh_frame` that may need an edge.
#[derive(Debug, PartialEq, Eq)]
struct EhPointer {
    offset: u64,
    encoding: u8,
    /// LSDA and personality pointers may be 0 (none).
    optional: bool,
}

impl EhPointer {
    /// LEB128 formats are not used for pointers; they count as 8.
    fn width(&self) -> u64 {
        crate::graph::ehframe::encoded_size(self.encoding).unwrap_or(8) as u64
    }
}

/// Finds the pointer fields of every CIE and FDE. Errors carry the
/// offset of the record at fault.
fn parse_eh_frame(bytes: &[u8]) -> Result<Vec<EhPointer>, (u64, String)> {
    const OMIT: u8 = 0xff;
    struct Cie {
        fde_encoding: u8,
        lsda_encoding: u8,
        augmented: bool,
    }
    let mut cies: HashMap<u64, Cie> = HashMap::new();
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 4 <= bytes.len() {
        let start = pos as u64;
        let bad = |what: &str| (start, format!("__eh_frame record: {}", what));
        let length = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap());
        if length == 0 {
            pos += 4;
            continue;
        }
        if length == u32::MAX {
            return Err(bad("64-bit DWARF records are not supported"));
        }
        let end = pos
            .checked_add(4 + length as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad("runs past the end of the section"))?;
        let mut reader = crate::graph::ehframe::Reader { bytes: &bytes[..end], pos: pos + 4 };
        let id = reader.u32().map_err(|_| bad("truncated"))?;
        if id == 0 {
            let version = reader.u8().map_err(|_| bad("truncated CIE"))?;
            let aug_start = reader.pos;
            let aug_len = bytes[aug_start..end]
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| bad("unterminated augmentation string"))?;
            let augmentation = bytes[aug_start..aug_start + aug_len].to_vec();
            reader.pos += aug_len + 1;
            reader.uleb().map_err(|_| bad("truncated CIE"))?; // code alignment
            reader.uleb().map_err(|_| bad("truncated CIE"))?; // data alignment (sleb, same length)
            if version == 1 {
                reader.u8().map_err(|_| bad("truncated CIE"))?;
            } else {
                reader.uleb().map_err(|_| bad("truncated CIE"))?;
            }
            let mut cie = Cie { fde_encoding: 0, lsda_encoding: OMIT, augmented: augmentation.first() == Some(&b'z') };
            if cie.augmented {
                reader.uleb().map_err(|_| bad("truncated CIE"))?;
                for &c in &augmentation[1..] {
                    match c {
                        b'R' => cie.fde_encoding = reader.u8().map_err(|_| bad("truncated CIE"))?,
                        b'L' => cie.lsda_encoding = reader.u8().map_err(|_| bad("truncated CIE"))?,
                        b'P' => {
                            let encoding = reader.u8().map_err(|_| bad("truncated CIE"))?;
                            let pointer = EhPointer { offset: reader.pos as u64, encoding, optional: true };
                            reader.skip(pointer.width() as usize).map_err(|_| bad("truncated personality"))?;
                            out.push(pointer);
                        }
                        b'S' | b'B' => {}
                        _ => break,
                    }
                }
            }
            cies.insert(start, cie);
        } else {
            let cie_at = (pos as u64 + 4)
                .checked_sub(u64::from(id))
                .ok_or_else(|| bad("CIE pointer points before the section"))?;
            let cie = cies.get(&cie_at).ok_or_else(|| bad("FDE points at no CIE before it"))?;
            let pc_begin = EhPointer { offset: reader.pos as u64, encoding: cie.fde_encoding, optional: false };
            let width = pc_begin.width();
            reader.skip(2 * width as usize).map_err(|_| bad("truncated FDE"))?;
            out.push(pc_begin);
            if cie.augmented {
                reader.uleb().map_err(|_| bad("truncated FDE"))?;
                if cie.lsda_encoding != OMIT {
                    let lsda = EhPointer { offset: reader.pos as u64, encoding: cie.lsda_encoding, optional: true };
                    reader.skip(lsda.width() as usize).map_err(|_| bad("truncated LSDA pointer"))?;
                    out.push(lsda);
                }
            }
        }
        pos = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_the_c_underscore_and_map_darwin_libc() {
        assert_eq!(c_name("_printf"), "printf");
        assert_eq!(c_name("named_func"), "named_func");
        assert_eq!(host_name(c_name("___stdoutp")), "stdout");
        assert_eq!(host_name(c_name("___error")), "__errno_location");
        assert_eq!(host_name(c_name("_fopen$DARWIN_EXTSN")), "fopen");
        assert_eq!(host_name(c_name("_stat$INODE64")), "stat$INODE64");
        assert_eq!(host_name(c_name("__tlv_bootstrap")), crate::arch::runtime::TLV_GET_ADDR);
        assert_eq!(host_name("puts"), "puts");
    }

    #[test]
    fn eh_frame_pointers_are_found() {
        // CIE "zPLR": personality sdata4|pcrel|indirect, LSDA pcrel absptr,
        // FDE pcrel absptr; then one FDE with an LSDA.
        let mut cie = vec![0u8; 4];
        cie.extend_from_slice(&0u32.to_le_bytes());
        cie.push(1);
        cie.extend_from_slice(b"zPLR\0");
        cie.extend_from_slice(&[1, 0x78, 16]);
        cie.extend_from_slice(&[7, 0x9b, 0, 0, 0, 0, 0x10, 0x10]);
        let len = (cie.len() - 4) as u32;
        cie[..4].copy_from_slice(&len.to_le_bytes());
        let fde_start = cie.len();
        let mut fde = vec![0u8; 4];
        fde.extend_from_slice(&((fde_start + 4) as u32).to_le_bytes());
        fde.extend_from_slice(&[0; 16]);
        fde.push(8);
        fde.extend_from_slice(&[0; 8]);
        let len = (fde.len() - 4) as u32;
        fde[..4].copy_from_slice(&len.to_le_bytes());
        let mut bytes = cie;
        bytes.extend_from_slice(&fde);
        let pointers = parse_eh_frame(&bytes).unwrap();
        let offsets: Vec<(u64, u8)> = pointers.iter().map(|p| (p.offset, p.encoding)).collect();
        let personality = 4 + 4 + 1 + 5 + 3 + 1 + 1;
        assert_eq!(
            offsets,
            vec![(personality as u64, 0x9b), (fde_start as u64 + 8, 0x10), (fde_start as u64 + 8 + 16 + 1, 0x10)]
        );
        assert!(parse_eh_frame(&bytes[..bytes.len() - 3]).is_err());
    }

    #[test]
    fn sections_are_classified_by_type() {
        assert_eq!(
            classify("__TEXT,__text", macho::S_REGULAR, macho::S_ATTR_PURE_INSTRUCTIONS),
            Ok(Some(SectionKind::Code))
        );
        assert_eq!(classify("__TEXT,__cstring", macho::S_CSTRING_LITERALS, 0), Ok(Some(SectionKind::ReadOnly)));
        assert_eq!(classify("__DATA,__bss", macho::S_ZEROFILL, 0), Ok(Some(SectionKind::ZeroFill)));
        assert_eq!(
            classify("__DATA,__mod_term_func", macho::S_MOD_TERM_FUNC_POINTERS, 0),
            Ok(Some(SectionKind::InitArray(InitKind::FiniArray)))
        );
        assert_eq!(
            classify("__DATA,__thread_bss", macho::S_THREAD_LOCAL_ZEROFILL, 0),
            Ok(Some(SectionKind::TlsZeroFill))
        );
        assert_eq!(classify("__LD,__compact_unwind", macho::S_REGULAR, macho::S_ATTR_DEBUG), Ok(None));
        assert_eq!(classify("__TEXT,__eh_frame", macho::S_COALESCED, 0), Ok(Some(SectionKind::EhFrame)));
        assert!(classify("__DATA,__la_symbol_ptr", macho::S_LAZY_SYMBOL_POINTERS, 0).is_err());
    }
}
