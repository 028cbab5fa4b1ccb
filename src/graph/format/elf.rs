//! ELF64 relocatable objects, of every CPU in [`crate::arch`] → [`LinkGraph`].
//!
//! Every table is validated before it is trusted (after the Linux module
//! loader): header and machine, section table bounds, string tables,
//! symbol and relocation indices, relocation offsets plus field widths,
//! alignments. Each problem is one error naming file, section and offset.

use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::{LittleEndian, SectionIndex, SymbolIndex};

use crate::arch::{Cpu, EdgeKind, PlainFixup};
use crate::graph::model::*;
use crate::support::input::InputData;

// Every CPU jitrun links for is little-endian: fixing it here turns every
// field read into a plain load (a runtime `Endianness` tests it at each one).
type Header = elf::FileHeader64<LittleEndian>;

/// Largest alignment a section may ask for; more is a corrupt header.
pub const MAX_SECTION_ALIGN: u64 = 1 << 24;

/// Translates the ELF object in `input` (named `name` in messages).
pub fn parse(name: &str, input: Arc<InputData>, limits: &crate::graph::Limits) -> Result<LinkGraph> {
    // The header: a little-endian ELF64 relocatable object of a known CPU.
    let data = input.bytes();
    let (header, cpu) = read_header(name, data)?;
    let mut translation = Translation::new(name, &input, header, cpu, limits)?;
    // Sections that load (the others are tables, notes and debug info).
    translation.add_sections()?;
    // COMDAT groups, so that later copies can be discarded.
    translation.add_comdat_groups()?;
    // Symbols, each checked against the sections.
    translation.add_symbols()?;
    // Relocations, each checked against the symbols and the sections.
    translation.add_relocations()?;
    let mut graph = translation.graph;
    // `.eh_frame`: what the unwinder will trust, checked here on the
    // threads that translate objects.
    crate::graph::ehframe::resolve_internal_edges(&mut graph)?;
    crate::graph::ehframe::check(&graph)?;
    graph.keep_only_contents();
    Ok(graph)
}

/// The ELF header of `data`, checked: little-endian, relocatable, of a CPU
/// jitrun knows.
fn read_header<'a>(name: &str, data: &'a [u8]) -> Result<(&'a Header, Cpu)> {
    let err = |what: &dyn std::fmt::Display| anyhow!("{}: {}", name, what);
    let header = Header::parse(data).map_err(|e| err(&format_args!("invalid ELF header: {}", e)))?;
    let endian = header.endian().map_err(|_| {
        err(&format_args!(
            "ELF data encoding {} is not little-endian, as jitrun's CPUs' objects are",
            header.e_ident.data
        ))
    })?;
    let machine = header.e_machine(endian);
    let Some(cpu) = Cpu::from_elf_machine(machine) else {
        bail!(
            "{}: ELF machine {} is not supported (x86-64, EM_X86_64 = 62, and aarch64, EM_AARCH64 = 183, are)",
            name,
            machine
        );
    };
    if header.e_type(endian) != elf::ET_REL {
        let what = match header.e_type(endian) {
            elf::ET_EXEC => "an executable",
            elf::ET_DYN => "a shared object or PIE",
            _ => "not a relocatable object",
        };
        bail!(
            "{}: {}; jitrun loads relocatable objects (.o); pass shared libraries with -l or as a .so path",
            name,
            what
        );
    }
    Ok((header, cpu))
}

/// One object being translated: its tables, parsed once, and the graph so far.
struct Translation<'a> {
    name: &'a str,
    data: &'a [u8],
    endian: LittleEndian,
    sections: object::read::elf::SectionTable<'a, Header>,
    symtab: object::read::elf::SymbolTable<'a, Header>,
    limits: &'a crate::graph::Limits,
    graph: LinkGraph,
    /// ELF section index → model section (and its one block), if loaded.
    loaded: Vec<Option<(SectionId, BlockId)>>,
    /// Bytes the loaded sections (and commons) add up to, and the
    /// thread-local ones: each limit is checked as they grow.
    total_size: u64,
    total_tls_size: u64,
}

impl<'a> Translation<'a> {
    fn new(
        name: &'a str,
        input: &'a Arc<InputData>,
        header: &'a Header,
        cpu: Cpu,
        limits: &'a crate::graph::Limits,
    ) -> Result<Translation<'a>> {
        let (data, endian) = (input.bytes(), LittleEndian);
        let err = |what: &dyn std::fmt::Display| anyhow!("{}: {}", name, what);
        let sections = header.sections(endian, data).map_err(|e| err(&format_args!("section table: {}", e)))?;
        let symtab =
            sections.symbols(endian, data, elf::SHT_SYMTAB).map_err(|e| err(&format_args!("symbol table: {}", e)))?;
        Ok(Translation {
            name,
            data,
            endian,
            loaded: vec![None; sections.len()],
            sections,
            symtab,
            limits,
            graph: LinkGraph::new(name.to_string(), cpu, Some(input.clone())),
            total_size: 0,
            total_tls_size: 0,
        })
    }

    /// An error naming the object.
    fn err(&self, what: &dyn std::fmt::Display) -> anyhow::Error {
        anyhow!("{}: {}", self.name, what)
    }

    /// Sections that load become model sections of one block each, their
    /// sizes counted against the limits.
    fn add_sections(&mut self) -> Result<()> {
        // Room for the sections that load (a small object has three times as
        // many others: relocations, symbols, strings, notes).
        let loadable =
            self.sections.iter().filter(|s| s.sh_flags(self.endian) & u64::from(elf::SHF_ALLOC) != 0).count();
        self.graph.sections.reserve_exact(loadable);
        self.graph.blocks.reserve_exact(loadable);
        for (index, section) in self.sections.enumerate() {
            let sec_name = self
                .sections
                .section_name(self.endian, section)
                .map_err(|e| self.err(&format_args!("section {}: name: {}", index.0, e)))?;
            if sec_name.starts_with(b".gnu.lto_")
                && self
                    .symtab
                    .iter()
                    .any(|sym| self.symtab.symbol_name(self.endian, sym).is_ok_and(|n| n == b"__gnu_lto_slim"))
            {
                bail!(
                    "{}: holds only GCC LTO bytecode, no machine code; compile without -flto or add -ffat-lto-objects",
                    self.name
                );
            }
            // Sections that take no memory (symbol and string tables, relocations,
            // debug info) are not loaded: skip them before decoding the name.
            if section.sh_flags(self.endian) & u64::from(elf::SHF_ALLOC) == 0 {
                self.graph.has_line_info |= sec_name == b".debug_line";
                if sec_name == b".comment" {
                    // "clang version 14.0.6" (possibly after a vendor's name).
                    let comment = section.data(self.endian, self.data).unwrap_or_default();
                    self.graph.built_by_clang |= comment.windows(14).any(|w| w == b"clang version ");
                }
                continue;
            }
            let sec_name = text(sec_name);
            let Some(kind) = classify(section, self.endian, &sec_name) else {
                continue;
            };
            let flags = section.sh_flags(self.endian);
            if flags & u64::from(elf::SHF_WRITE) != 0 && flags & u64::from(elf::SHF_EXECINSTR) != 0 {
                bail!(
                    "{}: section {}: both writable and executable; jitrun keeps W^X and refuses it",
                    self.name,
                    sec_name
                );
            }
            let size = section.sh_size(self.endian);
            let align = section.sh_addralign(self.endian).max(1);
            if !align.is_power_of_two() || align > MAX_SECTION_ALIGN {
                bail!(
                    "{}: section {}: alignment {:#x} is not a power of two up to {:#x}",
                    self.name,
                    sec_name,
                    align,
                    MAX_SECTION_ALIGN
                );
            }
            self.total_size = super::add_section_size(
                self.name,
                &sec_name,
                self.total_size,
                size,
                super::SizeLimit::Image,
                self.limits,
            )?;
            if kind == SectionKind::TlsData || kind == SectionKind::TlsZeroFill {
                self.total_tls_size = super::add_section_size(
                    self.name,
                    &sec_name,
                    self.total_tls_size,
                    size,
                    super::SizeLimit::Tls,
                    self.limits,
                )?;
            }
            let content = if section.sh_type(self.endian) == elf::SHT_NOBITS {
                Content::Zero
            } else {
                Content::File(super::file_range(
                    self.name,
                    &sec_name,
                    section.sh_offset(self.endian),
                    size,
                    self.data.len(),
                )?)
            };
            let sid = self.graph.add_section(&sec_name, kind);
            self.graph.sections[sid as usize].priority = init_priority(kind, &sec_name);
            let bid = self.graph.add_block(sid, content, size, align);
            self.loaded[index.0] = Some((sid, bid));
        }

        Ok(())
    }

    /// COMDAT groups: which model sections each signature covers.
    fn add_comdat_groups(&mut self) -> Result<()> {
        // COMDAT groups: remember which model sections each signature covers.
        for (index, section) in self.sections.enumerate() {
            let Some((flag, members)) = section
                .group(self.endian, self.data)
                .map_err(|e| self.err(&format_args!("group section {}: {}", index.0, e)))?
            else {
                continue;
            };
            if flag & elf::GRP_COMDAT == 0 {
                continue;
            }
            let sym_index = section.sh_info(self.endian) as usize;
            let signature = self
                .symtab
                .symbol(SymbolIndex(sym_index))
                .and_then(|sym| self.symtab.symbol_name(self.endian, sym))
                .map_err(|e| {
                    self.err(&format_args!("group section {}: signature symbol {}: {}", index.0, sym_index, e))
                })?;
            let mut members_loaded = Vec::new();
            for member in members {
                let member = member.get(self.endian) as usize;
                if member == 0 || member >= self.sections.len() {
                    bail!("{}: group section {}: member section index {} does not exist", self.name, index.0, member);
                }
                if let Some((sid, _)) = self.loaded[member] {
                    members_loaded.push(sid);
                }
            }
            self.graph.comdats.push(Comdat { signature: text(signature).into(), sections: members_loaded });
        }

        Ok(())
    }

    /// Symbols, keeping their ELF index so that relocations map one to one.
    fn add_symbols(&mut self) -> Result<()> {
        // Symbols keep their ELF index, so relocations map one to one. Their
        // names go into one buffer, shared once every symbol is read.
        self.graph.symbols.reserve(self.symtab.len());
        let strings =
            self.sections.section(self.symtab.string_section()).ok().and_then(|s| s.data(self.endian, self.data).ok());
        let mut names = NameBuffer::with_capacity(strings.map_or(0, <[u8]>::len));
        // The string table checked as UTF-8 once, not name by name: a name in
        // it (NUL-delimited) is then valid too.
        let strings_text = strings.and_then(|bytes| std::str::from_utf8(bytes).ok());
        let mut name_spans: Vec<Option<NameSpan>> = Vec::with_capacity(self.symtab.len());
        for (index, sym) in self.symtab.enumerate() {
            let sym_name = self
                .symtab
                .symbol_name(self.endian, sym)
                .map_err(|e| self.err(&format_args!("symbol {}: name: {}", index.0, e)))?;
            if sym_name == b"__gnu_lto_slim" {
                bail!(
                    "{}: a GCC LTO object with no machine code (built with -flto); rebuild with -ffat-lto-objects or without -flto",
                    self.name
                );
            }
            let st_type = sym.st_type();
            self.graph.built_from_cxx |= names_cxx(sym_name, st_type);
            let kind = match st_type {
                elf::STT_GNU_IFUNC if sym.st_shndx(self.endian) != elf::SHN_UNDEF => SymbolKind::Ifunc,
                elf::STT_FUNC | elf::STT_GNU_IFUNC => SymbolKind::Function,
                elf::STT_OBJECT | elf::STT_COMMON => SymbolKind::Data,
                elf::STT_TLS => SymbolKind::Tls,
                elf::STT_SECTION => SymbolKind::Section,
                _ => SymbolKind::Unknown,
            };
            let scope = if sym.st_bind() == elf::STB_LOCAL { Scope::Local } else { Scope::Global };
            let linkage = if sym.st_bind() == elf::STB_WEAK { Linkage::Weak } else { Linkage::Strong };
            let shndx = sym.st_shndx(self.endian);
            let def = match shndx {
                elf::SHN_UNDEF => SymbolDef::Undefined,
                elf::SHN_ABS => SymbolDef::Absolute(sym.st_value(self.endian)),
                elf::SHN_COMMON => {
                    let align = sym.st_value(self.endian).max(1);
                    if !align.is_power_of_two() || align > MAX_SECTION_ALIGN {
                        bail!(
                            "{}: common symbol {}: alignment {:#x} is invalid",
                            self.name,
                            String::from_utf8_lossy(sym_name),
                            align
                        );
                    }
                    let size = sym.st_size(self.endian);
                    self.total_size = self.total_size.saturating_add(size.saturating_add(align));
                    self.limits.check_image_size(
                        &format_args!("{}: common symbol {}: the object", self.name, String::from_utf8_lossy(sym_name)),
                        self.total_size,
                    )?;
                    SymbolDef::Common { size, align: align as u32 } // checked above: at most 2^24
                }
                _ if st_type == elf::STT_FILE => SymbolDef::NotLoaded,
                _ => {
                    let section_index = if shndx == elf::SHN_XINDEX {
                        self.symtab.shndx(self.endian, index).ok_or_else(|| {
                            self.err(&format_args!("symbol {}: missing SHT_SYMTAB_SHNDX entry", index.0))
                        })? as usize
                    } else if shndx >= elf::SHN_LORESERVE {
                        bail!(
                            "{}: symbol {}: reserved section index {:#x}",
                            self.name,
                            String::from_utf8_lossy(sym_name),
                            shndx
                        );
                    } else {
                        shndx as usize
                    };
                    if section_index >= self.sections.len() {
                        bail!(
                            "{}: symbol {}: section index {} is out of range ({} sections)",
                            self.name,
                            String::from_utf8_lossy(sym_name),
                            section_index,
                            self.sections.len()
                        );
                    }
                    match self.loaded[section_index] {
                        Some((_, block)) => {
                            let offset = sym.st_value(self.endian);
                            let block_size = self.graph.blocks[block as usize].size;
                            if offset > block_size {
                                bail!(
                                    "{}: symbol {}: value {:#x} is past the end of its section {} ({:#x} bytes)",
                                    self.name,
                                    String::from_utf8_lossy(sym_name),
                                    offset,
                                    self.graph.sections[self.graph.blocks[block as usize].section as usize].name,
                                    block_size
                                );
                            }
                            SymbolDef::Defined { block, offset }
                        }
                        None => SymbolDef::NotLoaded,
                    }
                }
            };
            let visibility = sym.st_other() & 0x3;
            if scope == Scope::Global && matches!(visibility, elf::STV_HIDDEN | elf::STV_INTERNAL) {
                self.graph.hidden.push(self.graph.symbols.len() as SymbolId);
            }
            let named = !sym_name.is_empty() && st_type != elf::STT_SECTION;
            name_spans.push(if named { names.add(&symbol_text(strings_text, sym_name)) } else { None });
            self.graph.symbols.push(Symbol { name: None, def, scope, linkage, kind, size: sym.st_size(self.endian) });
        }
        let names = names.finish();
        for (sym, span) in self.graph.symbols.iter_mut().zip(name_spans) {
            sym.name = span.map(|span| NameBuffer::name(&names, span));
        }

        Ok(())
    }

    /// Relocations become edges (or, in a mapped file, stay there to be
    /// decoded where they are read).
    fn add_relocations(&mut self) -> Result<()> {
        // Relocations → edges.
        for (index, section) in self.sections.enumerate() {
            let sh_type = section.sh_type(self.endian);
            if sh_type == elf::SHT_REL {
                if let Some((_, block)) = self.loaded.get(section.sh_info(self.endian) as usize).copied().flatten() {
                    let target = &self.graph.sections[self.graph.blocks[block as usize].section as usize].name;
                    bail!(
                        "{}: section {}: SHT_REL relocations are not used on {} (expected SHT_RELA)",
                        self.name,
                        target,
                        self.graph.cpu
                    );
                }
                continue;
            }
            if sh_type != elf::SHT_RELA {
                continue;
            }
            let target_index = section.sh_info(self.endian) as usize;
            if target_index >= self.sections.len() {
                bail!(
                    "{}: relocation section {}: target section index {} is out of range",
                    self.name,
                    index.0,
                    target_index
                );
            }
            let Some((sid, block)) = self.loaded[target_index] else {
                continue;
            };
            let sec_name = self.graph.sections[sid as usize].name.as_str();
            let (relocs, link) = section
                .rela(self.endian, self.data)
                .map_err(|e| self.err(&format_args!("section {}: relocations: {}", sec_name, e)))?
                .expect("SHT_RELA checked above");
            if link != self.symtab.section() && !(link == SectionIndex(0) && relocs.is_empty()) {
                bail!(
                    "{}: section {}: relocations refer to section {} which is not the symbol table",
                    self.name,
                    sec_name,
                    link.0
                );
            }
            let block_size = self.graph.blocks[block as usize].size;
            let table_start = relocs.as_ptr() as usize - self.data.as_ptr() as usize;
            let table = table_start..table_start + std::mem::size_of_val(relocs);
            let symbol_count = self.graph.symbols.len();
            let is_zero_fill = matches!(self.graph.blocks[block as usize].content, Content::Zero);
            let block_ref = &mut self.graph.blocks[block as usize];
            // Relocations stay in the object's bytes (its file, for a mapped
            // one) and are decoded, with every check, where they are read
            // (planning, fixups), and only for the blocks that load, as ld
            // checks them: most are plain kinds that those passes read
            // straight from the table, and a large program has hundreds of
            // thousands, which would take 24 bytes each in fresh memory
            // here. (Decoding a small object's here took Lua's 33 objects
            // 0.33M instructions, and each decoded edge cost planning and
            // fixups more than a plain entry read from its table.)
            // `.eh_frame`'s (read by offset while pruning) and zero-fill
            // sections' (which must have none) are decoded now.
            let lazy = self.graph.sections[sid as usize].kind != SectionKind::EhFrame
                && !is_zero_fill
                && block_ref.elf_relocations.is_none();
            if lazy {
                block_ref.elf_relocations = Some(table);
                continue;
            }
            let mut edges = Vec::new();
            decode_relocations(self.graph.cpu, &self.data[table], block_size, symbol_count, &mut edges)
                .map_err(|problem| problem.into_error(self.name, sec_name))?;
            if is_zero_fill && !edges.is_empty() {
                bail!("{}: section {}: zero-fill section has relocations", self.name, sec_name);
            }
            if block_ref.edges.is_empty() {
                block_ref.edges = edges; // no second copy of a large table
            } else {
                block_ref.edges.extend(edges);
            }
        }
        Ok(())
    }
}

/// Why one `Elf64_Rela` entry cannot be used, at what section offset.
#[derive(Debug)]
pub(crate) struct RelaProblem {
    offset: u64,
    cpu: Cpu,
    kind: RelaProblemKind,
}

#[derive(Debug)]
enum RelaProblemKind {
    Unsupported(u32),
    NoSuchSymbol { kind: EdgeKind, symbol: u32, symbols: usize },
    PastEnd { kind: EdgeKind, block_size: u64 },
    BeyondFourGiB,
}

impl RelaProblem {
    /// The one-line error for object `name`, section `section`.
    #[cold]
    pub(crate) fn into_error(self, name: &str, section: &str) -> anyhow::Error {
        let offset = self.offset;
        match self.kind {
            RelaProblemKind::Unsupported(r_type) => anyhow!(
                "{}: section {}+{:#x}: unsupported relocation type {} ({})",
                name,
                section,
                offset,
                r_type,
                self.cpu.elf_relocation_name(r_type)
            ),
            RelaProblemKind::NoSuchSymbol { kind, symbol, symbols } => anyhow!(
                "{}: section {}+{:#x}: {} refers to symbol index {} (the table has {})",
                name,
                section,
                offset,
                kind,
                symbol,
                symbols
            ),
            RelaProblemKind::PastEnd { kind, block_size } => anyhow!(
                "{}: section {}+{:#x}: {} patches {} bytes past the end of the section ({:#x} bytes)",
                name,
                section,
                offset,
                kind,
                kind.width(),
                block_size
            ),
            RelaProblemKind::BeyondFourGiB => anyhow!(
                "{}: section {}+{:#x}: relocations beyond 4 GiB into a section are not supported",
                name,
                section,
                offset
            ),
        }
    }
}

/// Size of one `Elf64_Rela`.
pub(crate) const RELA_SIZE: usize = 24;

/// The fields of one `Elf64_Rela` (`RELA_SIZE` bytes): offset, symbol
/// index, type and addend.
#[inline]
pub(crate) fn rela_fields(entry: &[u8]) -> (u64, u32, u32, i64) {
    let word = |at: usize| u64::from_le_bytes(entry[at..at + 8].try_into().expect("an entry is 24 bytes"));
    let info = word(8);
    (word(0), (info >> 32) as u32, info as u32, word(16) as i64)
}

/// A relocation of a plain kind as [`for_each_relocation`] reads it.
pub(crate) struct PlainRelocation {
    /// Read but not checked: its `target` may be out of range (use it with
    /// `get`), its offset may lie past the section.
    pub edge: Edge,
    /// How its kind is written.
    pub fixup: PlainFixup,
    /// Its kind's slot in [`Cpu::plain_elf_kinds`].
    pub slot: usize,
}

/// Goes through the relocations of `table` (`Elf64_Rela` entries of a
/// `cpu` object) with `state`: each of a kind [`Cpu::plain_elf_kinds`]
/// knows at an offset below 4 GiB (nearly all of a large program's: on
/// x86-64 `R_X86_64_PC32`, `PLT32` and `64`) goes to `plain`, read in a
/// few instructions but not checked; when `plain` declines it (returns
/// false), and for every other entry, `other` gets the entry's bytes, to
/// decode with every check ([`decode_relocations`]).
#[inline]
pub(crate) fn for_each_relocation<S>(
    cpu: Cpu,
    table: &[u8],
    state: &mut S,
    mut plain: impl FnMut(&mut S, &PlainRelocation) -> bool,
    mut other: impl FnMut(&mut S, &[u8]) -> Result<()>,
) -> Result<()> {
    let kinds = cpu.plain_elf_kinds();
    for entry in table.chunks_exact(RELA_SIZE) {
        let (offset, target, r_type, addend) = rela_fields(entry);
        if let (Some(slot), Ok(offset)) = (kinds.slot(r_type), u32::try_from(offset)) {
            let (kind, fixup) = kinds.kind(slot);
            if plain(state, &PlainRelocation { edge: Edge::new(offset, kind, target, addend), fixup, slot }) {
                continue;
            }
        }
        other(state, entry)?;
    }
    Ok(())
}

/// Appends to `out` the relocations of `table` (`Elf64_Rela` entries, in
/// the file's bytes, of a `cpu` object) as edges of a section of
/// `block_size` bytes whose object has `symbols` symbols, `R_*_NONE`
/// skipped, each checked.
pub(crate) fn decode_relocations(
    cpu: Cpu,
    table: &[u8],
    block_size: u64,
    symbols: usize,
    out: &mut Vec<Edge>,
) -> Result<(), RelaProblem> {
    out.reserve(table.len() / RELA_SIZE);
    for entry in table.chunks_exact(RELA_SIZE) {
        let (offset, symbol, r_type, addend) = rela_fields(entry);
        let problem = |kind| RelaProblem { offset, cpu, kind };
        let Some(kind) = cpu.edge_kind_from_elf(r_type) else {
            return Err(problem(RelaProblemKind::Unsupported(r_type)));
        };
        if kind.is_none() {
            continue;
        }
        if symbol as usize >= symbols || symbol == 0 {
            return Err(problem(RelaProblemKind::NoSuchSymbol { kind, symbol, symbols }));
        }
        if offset.checked_add(kind.width()).is_none_or(|end| end > block_size) {
            return Err(problem(RelaProblemKind::PastEnd { kind, block_size }));
        }
        let Ok(offset) = u32::try_from(offset) else {
            return Err(problem(RelaProblemKind::BeyondFourGiB));
        };
        out.push(Edge::new(offset, kind, symbol, addend));
    }
    Ok(())
}

/// Names as text. Valid UTF-8 (nearly always) is borrowed after a fast
/// check; anything else is replaced lossily for messages.
/// `name`, a slice of the string table, as text: borrowed from the table's
/// text when the whole table is valid UTF-8, else checked on its own.
/// Whether a symbol of an object says the object was compiled from C++:
/// the source file's name (`STT_FILE`, which gcc and clang write for every
/// object, `-g` or not) ends as GCC's C++ sources do, or the object defines
/// or calls a mangled (`_Z`) name, or uses the C++ personality routine.
/// (Not `.comment`: cc1 and cc1plus write the same one, and clang too. Not
/// `.gcc_except_table`: C with `-fexceptions` has it. Not DWARF's
/// `DW_AT_language`: only with `-g`, where `STT_FILE` is there too.)
fn names_cxx(name: &[u8], st_type: u8) -> bool {
    if st_type == elf::STT_FILE {
        return is_cxx_source(name);
    }
    name.starts_with(b"_Z") || name == b"__gxx_personality_v0"
}

/// A C++ source (or preprocessed, or module interface) file name, by the
/// suffixes `g++` and `clang++` compile as C++.
pub(crate) fn is_cxx_source(name: &[u8]) -> bool {
    const SUFFIXES: [&[u8]; 13] = [
        b".cc", b".cp", b".cxx", b".cpp", b".CPP", b".c++", b".C", b".ii", b".cppm", b".ixx", b".ccm", b".cxxm",
        b".c++m",
    ];
    SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
}

fn symbol_text<'a>(table: Option<&'a str>, name: &'a [u8]) -> std::borrow::Cow<'a, str> {
    let within = table.and_then(|t| {
        let offset = (name.as_ptr() as usize).checked_sub(t.as_ptr() as usize)?;
        t.get(offset..offset + name.len())
    });
    match within {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => text(name),
    }
}

fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Decides whether and as what a section is loaded. `None` for sections
/// that take no memory at run time (debug info, notes, symbol tables).
fn classify<S: SectionHeader<Endian = LittleEndian>>(
    section: &S,
    endian: LittleEndian,
    name: &str,
) -> Option<SectionKind> {
    let flags: u64 = section.sh_flags(endian).into();
    if flags & u64::from(elf::SHF_ALLOC) == 0 {
        return None;
    }
    let write = flags & u64::from(elf::SHF_WRITE) != 0;
    let exec = flags & u64::from(elf::SHF_EXECINSTR) != 0;
    let tls = flags & u64::from(elf::SHF_TLS) != 0;
    let kind = match section.sh_type(endian) {
        elf::SHT_NOBITS if tls => SectionKind::TlsZeroFill,
        elf::SHT_NOBITS => SectionKind::ZeroFill,
        elf::SHT_INIT_ARRAY => SectionKind::InitArray(InitKind::InitArray),
        elf::SHT_FINI_ARRAY => SectionKind::InitArray(InitKind::FiniArray),
        elf::SHT_PREINIT_ARRAY => SectionKind::InitArray(InitKind::PreinitArray),
        elf::SHT_X86_64_UNWIND => SectionKind::EhFrame,
        elf::SHT_PROGBITS => {
            if tls {
                SectionKind::TlsData
            } else if name == ".ctors" || name.starts_with(".ctors.") {
                SectionKind::InitArray(InitKind::Ctors)
            } else if name == ".dtors" || name.starts_with(".dtors.") {
                SectionKind::InitArray(InitKind::Dtors)
            } else if name == ".eh_frame" {
                SectionKind::EhFrame
            } else if exec {
                SectionKind::Code
            } else if write && (name == ".data.rel.ro" || name.starts_with(".data.rel.ro.")) {
                SectionKind::RelRo
            } else if write {
                SectionKind::Data
            } else {
                SectionKind::ReadOnly
            }
        }
        _ => return None,
    };
    Some(kind)
}

/// The order key ld's `SORT_BY_INIT_PRIORITY` gives an init/fini section:
/// `.init_array.N` → N, `.ctors.N` → 65535 - N, no suffix → after all.
fn init_priority(kind: SectionKind, name: &str) -> u32 {
    const UNSUFFIXED: u32 = 65536;
    let SectionKind::InitArray(init) = kind else {
        // `.init`/`.fini` fragments go between the runtime's prologue and
        // epilogue of `_init`/`_fini`.
        let fragment = kind == SectionKind::Code && matches!(name, ".init" | ".fini");
        return if fragment { crate::arch::runtime::INIT_FRAGMENT_PRIORITY } else { 0 };
    };
    let Some(suffix) =
        name.rsplit_once('.').map(|(_, s)| s).filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    else {
        return UNSUFFIXED;
    };
    let Ok(n) = suffix.parse::<u32>() else {
        return UNSUFFIXED;
    };
    match init {
        InitKind::Ctors | InitKind::Dtors => 65535u32.saturating_sub(n),
        _ => n.min(65535),
    }
}

/// The file header of an ELF file jitrun writes for `cpu` (symbol files
/// for debuggers and symbolizers, the export table of `--export-dynamic`).
pub fn file_header(cpu: Cpu, e_type: u16) -> object::write::elf::FileHeader {
    object::write::elf::FileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type,
        e_machine: cpu.elf_machine(),
        e_entry: 0,
        e_flags: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_bytes(bytes: Vec<u8>) -> Result<LinkGraph> {
        let dir = std::env::temp_dir().join(format!("jitrun-elf-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("slim.o");
        std::fs::write(&path, bytes).unwrap();
        let input = Arc::new(InputData::open(&path).unwrap());
        let result = parse("slim.o", input, &crate::graph::Limits::default());
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    #[test]
    fn objects_compiled_from_cxx_are_told_by_their_source_name_or_mangled_names() {
        for name in ["x.cpp", "dir/x.cc", "x.cxx", "x.C", "x.c++", "x.ii", "x.cppm"] {
            assert!(names_cxx(name.as_bytes(), elf::STT_FILE), "{}", name);
        }
        for name in ["x.c", "x.s", "x.S", "x.i", "x.f90", "x.rs", "cc", ""] {
            assert!(!names_cxx(name.as_bytes(), elf::STT_FILE), "{}", name);
        }
        assert!(names_cxx(b"_ZL6helperv", elf::STT_FUNC));
        assert!(names_cxx(b"_ZSt4cout", elf::STT_NOTYPE));
        assert!(names_cxx(b"__gxx_personality_v0", elf::STT_NOTYPE));
        // C's own, however C++-like: the personality of C cleanups, libc's atexit.
        assert!(!names_cxx(b"__gcc_personality_v0", elf::STT_NOTYPE));
        assert!(!names_cxx(b"__cxa_atexit", elf::STT_NOTYPE));
        assert!(!names_cxx(b"main", elf::STT_FUNC));
        // A file symbol is its source name, nothing else.
        assert!(!names_cxx(b"_Zfile.c", elf::STT_FILE));
    }

    #[test]
    fn slim_gcc_lto_objects_are_refused_with_a_reason() {
        use object::write::{Object, Symbol as WriteSymbol, SymbolSection};
        let mut obj = Object::new(object::BinaryFormat::Elf, object::Architecture::X86_64, object::Endianness::Little);
        // What `gcc -flto -c` leaves in the ELF symbol table: one common.
        obj.add_symbol(WriteSymbol {
            name: b"__gnu_lto_slim".to_vec(),
            value: 1,
            size: 1,
            kind: object::SymbolKind::Data,
            scope: object::SymbolScope::Dynamic,
            weak: false,
            section: SymbolSection::Common,
            flags: object::SymbolFlags::None,
        });
        let err = parse_bytes(obj.write().unwrap()).err().expect("a slim LTO object must be refused");
        assert!(err.to_string().contains("-ffat-lto-objects"), "{}", err);
    }

    /// A mapped object's relocations stay in its file; read back through
    /// the model (decoded whole, and through the plain/other split the
    /// planner and fixups use) they are what goblin, a second parser, reads.
    #[test]
    fn relocations_left_in_a_mapped_file_read_back_as_goblin_reads_them() {
        use object::write::{Object, Relocation, Symbol as WriteSymbol, SymbolSection};
        use object::RelocationFlags;
        let mut obj = Object::new(object::BinaryFormat::Elf, object::Architecture::X86_64, object::Endianness::Little);
        let text = obj.section_id(object::write::StandardSection::Text);
        // Room for relocations enough to be read in several pieces.
        obj.append_section_data(text, &vec![0x90; 48 << 10], 16);
        // Large enough to be mapped rather than read.
        let rodata = obj.section_id(object::write::StandardSection::ReadOnlyData);
        obj.append_section_data(rodata, &vec![7u8; 96 << 10], 16);
        let symbol = |obj: &mut Object, name: &str, section| {
            obj.add_symbol(WriteSymbol {
                name: name.as_bytes().to_vec(),
                value: 0,
                size: 0,
                kind: object::SymbolKind::Text,
                scope: object::SymbolScope::Linkage,
                weak: false,
                section,
                flags: object::SymbolFlags::None,
            })
        };
        let local = symbol(&mut obj, "here", SymbolSection::Section(text));
        let external = symbol(&mut obj, "elsewhere", SymbolSection::Undefined);
        let types = [
            object::elf::R_X86_64_PC32,
            object::elf::R_X86_64_PLT32,
            object::elf::R_X86_64_64,
            object::elf::R_X86_64_REX_GOTPCRELX,
            object::elf::R_X86_64_32S,
            object::elf::R_X86_64_NONE,
        ];
        for i in 0..7200u64 {
            let r_type = types[i as usize % types.len()];
            let flags = RelocationFlags::Elf { r_type };
            let target = if i % 3 == 0 { external } else { local };
            obj.add_relocation(text, Relocation { offset: i * 6, symbol: target, addend: i as i64 - 300, flags })
                .unwrap();
        }
        let bytes = obj.write().unwrap();
        assert!(bytes.len() >= 64 << 10);

        let dir = std::env::temp_dir().join(format!("jitrun-elf-lazy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mapped.o");
        std::fs::write(&path, &bytes).unwrap();
        let input = Arc::new(InputData::open(&path).unwrap());
        assert!(matches!(*input, InputData::Mapped(..)));
        let graph = parse("mapped.o", input, &crate::graph::Limits::default()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        let text_block =
            graph.blocks.iter().position(|b| b.elf_relocations.is_some()).expect("relocations left in the file");
        let b = text_block as BlockId;
        let ours: Vec<_> = graph
            .edges(b)
            .unwrap()
            .iter()
            .map(|e| (u64::from(e.offset), e.kind, e.target as usize, e.addend))
            .collect();
        // The same through the split: plain entries as read, others decoded.
        let mut split = Vec::new();
        let mut decoded = Vec::new();
        let mut chunks = 0;
        graph
            .for_each_relocation_chunk(b, &mut Vec::new(), |table| {
                chunks += 1;
                for_each_relocation(
                    Cpu::X86_64,
                    table,
                    &mut split,
                    |split, plain| {
                        let e = &plain.edge;
                        split.push((u64::from(e.offset), e.kind, e.target as usize, e.addend));
                        true
                    },
                    |split, entry| {
                        graph.decode_relocations_into(b, entry, &mut decoded)?;
                        split
                            .extend(decoded.iter().map(|e| (u64::from(e.offset), e.kind, e.target as usize, e.addend)));
                        Ok(())
                    },
                )
            })
            .unwrap();
        assert_eq!(split, ours);
        assert_eq!(chunks, 3, "7,200 entries are read 2,730 at a time");

        let elf = goblin::elf::Elf::parse(&bytes).unwrap();
        let theirs: Vec<_> = elf
            .shdr_relocs
            .iter()
            .flat_map(|(_, relocs)| relocs.iter())
            .filter(|r| r.r_type != object::elf::R_X86_64_NONE)
            .map(|r| (r.r_offset, Cpu::X86_64.edge_kind_from_elf(r.r_type).unwrap(), r.r_sym, r.r_addend.unwrap()))
            .collect();
        assert_eq!(ours.len(), 6000);
        assert_eq!(ours, theirs);
    }

    #[test]
    fn init_priorities_follow_ld() {
        let init = SectionKind::InitArray(InitKind::InitArray);
        let ctors = SectionKind::InitArray(InitKind::Ctors);
        assert_eq!(init_priority(init, ".init_array.00101"), 101);
        assert_eq!(init_priority(init, ".init_array"), 65536);
        assert_eq!(init_priority(ctors, ".ctors.65434"), 101);
        assert_eq!(init_priority(ctors, ".ctors"), 65536);
        assert_eq!(init_priority(SectionKind::Code, ".text.startup"), 0);
    }

    #[test]
    fn symbol_names_come_from_the_checked_table_or_are_checked_alone() {
        use std::borrow::Cow;
        let table = b"\0main\0printf\0";
        let text = std::str::from_utf8(table).ok();
        let name = &table[6..12];
        assert!(matches!(symbol_text(text, name), Cow::Borrowed("printf")));
        // Not valid UTF-8 as a whole: each name on its own, lossily.
        let bad = b"\0m\xffin\0ok\0";
        let bad_text = std::str::from_utf8(std::hint::black_box(&bad[..])).ok();
        assert!(bad_text.is_none());
        assert_eq!(symbol_text(bad_text, &bad[1..5]), "m\u{fffd}in");
        assert_eq!(symbol_text(None, &bad[6..8]), "ok");
        // A name from elsewhere is not read out of the table.
        let elsewhere = b"other".to_vec();
        assert_eq!(symbol_text(text, &elsewhere), "other");
    }
}
