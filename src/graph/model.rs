//! The one in-memory link model, after LLVM JITLink's `LinkGraph`.
//!
//! A format front-end translates one object file into a [`LinkGraph`]:
//! sections → blocks (bytes + alignment) → symbols (name, scope, linkage,
//! block + offset) → edges (fixup kind, offset, target, addend). Every later
//! pass works on graphs only and never looks at raw file bytes again.

use std::ops::Range;
use std::sync::Arc;

use crate::arch::{Cpu, EdgeKind};
use crate::support::input::InputData;

/// Index of a section in its graph.
pub type SectionId = u32;
/// Index of a block in its graph.
pub type BlockId = u32;
/// Index of a symbol in its graph.
pub type SymbolId = u32;

/// A symbol's name: a span of a buffer shared by all the names of one
/// object, so translating an object allocates once for its names, not once
/// per symbol (a large link has hundreds of thousands), and the symbol
/// table, the resolution and the image hold references, not copies. It
/// reads, hashes and compares as the `str` it spans.
#[derive(Clone)]
pub struct Name {
    text: std::sync::Arc<String>,
    start: u32,
    len: u32,
}

/// Collects the names of one object into one buffer (see [`Name`]).
#[derive(Default)]
pub struct NameBuffer {
    text: String,
}

/// A name added to a [`NameBuffer`], made a [`Name`] by [`NameBuffer::name`].
#[derive(Clone, Copy)]
pub struct NameSpan {
    start: u32,
    len: u32,
}

impl NameBuffer {
    pub fn with_capacity(bytes: usize) -> NameBuffer {
        NameBuffer { text: String::with_capacity(bytes) }
    }

    /// Adds `name`; `None` once the buffer would pass 4 GiB.
    pub fn add(&mut self, name: &str) -> Option<NameSpan> {
        let start = u32::try_from(self.text.len()).ok()?;
        let len = u32::try_from(name.len()).ok()?;
        start.checked_add(len)?;
        self.text.push_str(name);
        Some(NameSpan { start, len })
    }

    /// The shared buffer, from which [`NameBuffer::name`] makes names.
    pub fn finish(self) -> std::sync::Arc<String> {
        std::sync::Arc::new(self.text)
    }

    pub fn name(text: &std::sync::Arc<String>, span: NameSpan) -> Name {
        Name { text: text.clone(), start: span.start, len: span.len }
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        // In bounds and on character boundaries: checked when made.
        &self.text[self.range()]
    }
}

impl std::borrow::Borrow<str> for Name {
    fn borrow(&self) -> &str {
        self
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self
    }
}

impl Name {
    fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }

    fn bytes(&self) -> &[u8] {
        &self.text.as_bytes()[self.range()]
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        let same_span = std::sync::Arc::ptr_eq(&self.text, &other.text) && self.start == other.start;
        (same_span && self.len == other.len) || self.bytes() == other.bytes()
    }
}

impl Eq for Name {}

impl std::hash::Hash for Name {
    // As `str` hashes, so that maps keyed by names find `&str` keys.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl From<&str> for Name {
    fn from(name: &str) -> Name {
        Name::from(name.to_string())
    }
}

impl From<String> for Name {
    fn from(name: String) -> Name {
        // Names longer than 4 GiB cannot come from an object; clamp anyway.
        let len = u32::try_from(name.len()).unwrap_or(0);
        let text = if len as usize == name.len() { name } else { String::new() };
        Name { text: std::sync::Arc::new(text), start: 0, len }
    }
}

/// One translated relocatable object.
pub struct LinkGraph {
    /// Name used in every message: `foo.o` or `libfoo.a(bar.o)`.
    pub name: String,
    /// The CPU the object's code is for; its edges are that CPU's kinds.
    pub cpu: Cpu,
    /// The bytes the graph's file-backed blocks point into.
    pub input: Option<Arc<InputData>>,
    pub sections: Vec<Section>,
    pub blocks: Vec<Block>,
    pub symbols: Vec<Symbol>,
    pub comdats: Vec<Comdat>,
    /// Global symbols with hidden or internal visibility (ELF `st_other`):
    /// linked like the others inside the image, never exported from it
    /// (`--export-dynamic`). Kept aside, not in [`Symbol`], which a large
    /// program has hundreds of thousands of.
    pub hidden: Vec<SymbolId>,
    /// The object has DWARF line tables (`.debug_line`): its input is kept
    /// after the link for the crash report's source lines.
    pub has_line_info: bool,
    /// Clang compiled it (its `.comment` says so): code built with
    /// `-fsanitize=...` or `-fopenmp` gets clang's runtimes, as clang links.
    pub built_by_clang: bool,
    /// It was compiled from C++ (see `format::elf::is_cxx_source`): linked
    /// as `g++` links, with libstdc++ and libm even when it calls neither
    /// through a C++ name.
    pub built_from_cxx: bool,
}

/// What a section is for; decides which segment its blocks land in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectionKind {
    Code,
    ReadOnly,
    /// Written by fixups only, then made read-only (`.data.rel.ro`).
    RelRo,
    Data,
    ZeroFill,
    TlsData,
    TlsZeroFill,
    /// Arrays of function pointers run by the lifecycle, with their order.
    InitArray(InitKind),
    /// `.eh_frame`: registered with the unwinder after linking.
    EhFrame,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InitKind {
    PreinitArray,
    InitArray,
    /// `.ctors`: merged into the init array like ld does.
    Ctors,
    FiniArray,
    /// `.dtors`: merged into the fini array like ld does.
    Dtors,
}

pub struct Section {
    /// Inline up to 24 bytes (most section names): no allocation each.
    pub name: compact_str::CompactString,
    pub kind: SectionKind,
    /// Sort key inside an init/fini array (`.init_array.NNNNN`), else 0.
    pub priority: u32,
    /// Set when the section belongs to a COMDAT group that another object won.
    pub discarded: bool,
    /// Nearly always one (an ELF section is one block), so kept inline:
    /// two allocations per section were a tenth of parsing many small objects.
    pub blocks: smallvec::SmallVec<[BlockId; 2]>,
}

/// Whether a debugger will read the objects' DWARF after the link, so that
/// their inputs stay whole (see [`LinkGraph::keep_only_contents`]): set
/// with [`keep_debug_info`] by whoever links, for the whole process.
static DEBUG_INFO_WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps each object's whole input after translation (for a debugger).
pub fn keep_debug_info(wanted: bool) {
    DEBUG_INFO_WANTED.store(wanted, std::sync::atomic::Ordering::Relaxed);
}

/// Relocation entries read from a file at a time (64 KiB of them): few
/// system calls, and a scratch buffer that stays in the cache.
const RELOCATION_CHUNK: usize =
    (64 << 10) / crate::graph::format::elf::RELA_SIZE * crate::graph::format::elf::RELA_SIZE;

/// Where a block's bytes come from.
pub enum Content {
    /// A range of the input file, shared and never copied until mapped.
    File(Range<usize>),
    /// Bytes the linker made or rewrote.
    Owned(Vec<u8>),
    /// Zero-fill (`.bss`): only a size.
    Zero,
}

pub struct Block {
    pub section: SectionId,
    /// Where the block starts in its input section: 0 unless the front-end
    /// split the section into several blocks (Mach-O atoms). Messages add
    /// it to edge offsets so they name section offsets, as tools show them.
    pub input_offset: u64,
    pub content: Content,
    pub size: u64,
    pub align: u64,
    /// Fixups, decoded. [`LinkGraph::edges`] also gives those of
    /// `elf_relocations`.
    pub edges: Vec<Edge>,
    /// The range of the input holding more of the block's fixups as ELF
    /// relocations, decoded (and checked) each time they are read: an
    /// object's relocation tables are not decoded into the model, and
    /// most entries are read straight from them (see
    /// `format::elf::for_each_relocation`).
    pub elf_relocations: Option<Range<usize>>,
}

impl Block {
    /// How many fixups the block has (counting any `R_X86_64_NONE`).
    pub fn edge_count(&self) -> usize {
        self.edges.len() + self.elf_relocations.as_ref().map_or(0, |r| r.len() / crate::graph::format::elf::RELA_SIZE)
    }

    /// Writes the block's initial bytes to `dest` (its size, zero-filled
    /// already), from the file itself where that is cheaper
    /// ([`InputData::read_into`]).
    pub fn write_content(&self, input: Option<&InputData>, dest: &mut [u8]) {
        match (&self.content, input) {
            (Content::File(range), Some(input)) => input.read_into(range.clone(), dest),
            (Content::Owned(bytes), _) => dest.copy_from_slice(bytes),
            (Content::File(_), None) | (Content::Zero, _) => {}
        }
    }

    /// The initial bytes of a block, or `None` for zero-fill.
    pub fn bytes<'a>(&'a self, input: Option<&'a InputData>) -> Option<&'a [u8]> {
        match &self.content {
            Content::File(range) => input.map(|i| &i.bytes()[range.clone()]),
            Content::Owned(bytes) => Some(bytes),
            Content::Zero => None,
        }
    }
}

/// A fixup: patch `kind` at `offset` in the block with the address of
/// `target` plus `addend`.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// Within the block; 32 bits keep an edge at 24 bytes (a large program
    /// has hundreds of thousands). Front-ends refuse larger offsets.
    pub offset: u32,
    pub kind: EdgeKind,
    pub target: SymbolId,
    /// The symbol whose address a difference kind subtracts (`B`, of a
    /// Mach-O `SUBTRACTOR` pair; see [`EdgeKind::uses_subtrahend`]); 0
    /// for every other kind. It fits in the padding of the other fields.
    pub subtrahend: SymbolId,
    pub addend: i64,
}

impl Edge {
    /// An edge of a kind that subtracts no symbol.
    pub fn new(offset: u32, kind: EdgeKind, target: SymbolId, addend: i64) -> Edge {
        Edge { offset, kind, target, subtrahend: 0, addend }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Visible in its own object only.
    Local,
    /// Visible to every object of the image (default, hidden, protected or
    /// internal visibility: all of them link the same inside one image).
    Global,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    Strong,
    Weak,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Unknown,
    Function,
    /// `STT_GNU_IFUNC` definition: the symbol's value is a resolver that
    /// returns the function's address, called once the image is mapped.
    Ifunc,
    Data,
    Tls,
    Section,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolDef {
    Defined {
        block: BlockId,
        offset: u64,
    },
    Undefined,
    Absolute(u64),
    /// `align` at most `format::elf::MAX_SECTION_ALIGN` (2^24); a u32 keeps
    /// this enum, and so every symbol, 8 bytes smaller.
    Common {
        size: u64,
        align: u32,
    },
    /// Defined in a section jitrun does not load (debug info) or that was
    /// discarded; a reference from loaded code is an error.
    NotLoaded,
}

#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: Option<Name>,
    pub def: SymbolDef,
    pub scope: Scope,
    pub linkage: Linkage,
    pub kind: SymbolKind,
    pub size: u64,
}

impl Symbol {
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("<anonymous>")
    }
}

/// A COMDAT group: of all groups with one signature, the first object's
/// copy is kept and the others' sections are discarded.
pub struct Comdat {
    pub signature: Box<str>,
    pub sections: Vec<SectionId>,
}

impl LinkGraph {
    pub fn new(name: String, cpu: Cpu, input: Option<Arc<InputData>>) -> Self {
        LinkGraph {
            name,
            cpu,
            input,
            sections: Vec::new(),
            blocks: Vec::new(),
            symbols: Vec::new(),
            comdats: Vec::new(),
            hidden: Vec::new(),
            has_line_info: false,
            built_by_clang: false,
            built_from_cxx: false,
        }
    }

    pub fn add_section(&mut self, name: &str, kind: SectionKind) -> SectionId {
        self.sections.push(Section {
            name: name.into(),
            kind,
            priority: 0,
            discarded: false,
            blocks: Default::default(),
        });
        (self.sections.len() - 1) as SectionId
    }

    pub fn add_block(&mut self, section: SectionId, content: Content, size: u64, align: u64) -> BlockId {
        let id = self.blocks.len() as BlockId;
        self.blocks.push(Block {
            section,
            input_offset: 0,
            content,
            size,
            align: align.max(1),
            edges: Vec::new(),
            elf_relocations: None,
        });
        self.sections[section as usize].blocks.push(id);
        id
    }

    pub fn add_symbol(&mut self, symbol: Symbol) -> SymbolId {
        self.symbols.push(symbol);
        (self.symbols.len() - 1) as SymbolId
    }

    /// Adds a global undefined symbol (a reference to be resolved).
    pub fn add_external(&mut self, name: &str) -> SymbolId {
        self.add_symbol(Symbol {
            name: Some(name.into()),
            def: SymbolDef::Undefined,
            scope: Scope::Global,
            linkage: Linkage::Strong,
            kind: SymbolKind::Unknown,
            size: 0,
        })
    }

    pub fn block_section(&self, block: BlockId) -> &Section {
        &self.sections[self.blocks[block as usize].section as usize]
    }

    pub fn is_block_live(&self, block: BlockId) -> bool {
        !self.block_section(block).discarded
    }

    pub fn input_bytes(&self) -> Option<&InputData> {
        self.input.as_deref()
    }

    /// Where `edge` of block `b` patches, as messages name it:
    /// `object.o: section .text+0x1c`.
    pub fn edge_location(&self, b: BlockId, edge: &Edge) -> String {
        let block = &self.blocks[b as usize];
        format!(
            "{}: section {}+{:#x}",
            self.name,
            self.block_section(b).name,
            block.input_offset + u64::from(edge.offset)
        )
    }

    /// Calls `f` with the entries of the ELF relocation table of block `b`
    /// still in the input, if any (see [`Block::elf_relocations`]): the
    /// mapped bytes, or, from a file that can be read, pieces of it read
    /// into `scratch`, so that the table's pages never count in the peak
    /// memory (the generated program of 280,000 relocations: 6.7 MB).
    pub fn for_each_relocation_chunk(
        &self,
        b: BlockId,
        scratch: &mut Vec<u8>,
        mut f: impl FnMut(&[u8]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let Some(range) = &self.blocks[b as usize].elf_relocations else { return Ok(()) };
        let input = self.input.as_deref().filter(|input| input.bytes().len() >= range.end).ok_or_else(|| {
            anyhow::anyhow!("{}: section {}: internal: its relocations are gone", self.name, self.block_section(b).name)
        })?;
        if !input.is_readable() {
            return f(&input.bytes()[range.clone()]);
        }
        // Grown, never shrunk: zero-filled once, not for every table.
        if scratch.len() < range.len().min(RELOCATION_CHUNK) {
            scratch.resize(range.len().min(RELOCATION_CHUNK), 0);
        }
        for start in range.clone().step_by(RELOCATION_CHUNK) {
            let end = (start + RELOCATION_CHUNK).min(range.end);
            let chunk = &mut scratch[..end - start];
            input.read_exact_at(start..end, chunk);
            f(chunk)?;
        }
        Ok(())
    }

    /// The edges of `entries`, entries of block `b`'s relocation table,
    /// decoded and checked into `out` (cleared first).
    pub fn decode_relocations_into(&self, b: BlockId, entries: &[u8], out: &mut Vec<Edge>) -> anyhow::Result<()> {
        out.clear();
        crate::graph::format::elf::decode_relocations(
            self.cpu,
            entries,
            self.blocks[b as usize].size,
            self.symbols.len(),
            out,
        )
        .map_err(|problem| problem.into_error(&self.name, &self.block_section(b).name))
    }

    /// The fixups of block `b`, in order: the decoded ones, and those
    /// still in the input's relocation table, decoded and checked. (The
    /// linker's own passes read tables straight, with
    /// `format::elf::for_each_relocation`.)
    pub fn edges(&self, b: BlockId) -> anyhow::Result<std::borrow::Cow<'_, [Edge]>> {
        let block = &self.blocks[b as usize];
        if block.elf_relocations.is_none() {
            return Ok(std::borrow::Cow::Borrowed(&block.edges));
        }
        let (mut edges, mut decoded) = (block.edges.clone(), Vec::new());
        self.for_each_relocation_chunk(b, &mut Vec::new(), |entries| {
            self.decode_relocations_into(b, entries, &mut decoded)?;
            edges.extend_from_slice(&decoded);
            Ok(())
        })?;
        Ok(std::borrow::Cow::Owned(edges))
    }

    /// Once an object is translated, only its section contents and the
    /// relocation tables left in it are read again, and later: a mapped
    /// file gives all its pages back (they fault back from the page cache
    /// when read); a file read into memory is replaced by a copy of its
    /// contents when that saves at least half.
    pub fn keep_only_contents(&mut self) {
        let Some(input) = self.input.clone() else { return };
        let file_ranges = || {
            self.blocks.iter().filter_map(|b| match &b.content {
                Content::File(range) => Some(range.clone()),
                _ => None,
            })
        };
        let relocation_tables = || self.blocks.iter().filter_map(|b| b.elf_relocations.clone());
        match &*input {
            InputData::Owned(bytes) => {
                let kept: usize = file_ranges().chain(relocation_tables()).map(|r| r.len()).sum();
                // A debugger reads the object's DWARF after the link
                // (`debugger::object_debug_file`), a crash report its line
                // tables.
                if kept * 2 > bytes.len()
                    || self.has_line_info
                    || DEBUG_INFO_WANTED.load(std::sync::atomic::Ordering::Relaxed)
                {
                    return;
                }
                let mut compact = Vec::with_capacity(kept);
                let mut keep = |range: &mut Range<usize>| {
                    let start = compact.len();
                    compact.extend_from_slice(&bytes[range.clone()]);
                    *range = start..compact.len();
                };
                for block in &mut self.blocks {
                    if let Content::File(range) = &mut block.content {
                        keep(range);
                    }
                    if let Some(range) = &mut block.elf_relocations {
                        keep(range);
                    }
                }
                self.input = Some(Arc::new(InputData::Owned(compact)));
            }
            // Given back again as each large block is written (see
            // `link::copy_and_fix_blocks`), so that a large program's inputs
            // are not all resident at once next to its image.
            _ => input.release_except(std::iter::empty()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Name, NameBuffer};

    #[test]
    fn names_from_one_buffer_read_hash_and_compare_as_their_text() {
        let mut buffer = NameBuffer::with_capacity(16);
        let spans: Vec<_> = ["printf", "main", "", "ma"].iter().map(|n| buffer.add(n).unwrap()).collect();
        let text = buffer.finish();
        let names: Vec<Name> = spans.iter().map(|&s| NameBuffer::name(&text, s)).collect();
        assert_eq!(names.iter().map(|n| &**n).collect::<Vec<_>>(), ["printf", "main", "", "ma"]);
        // Equal to the same text from elsewhere; unequal to a prefix.
        assert_eq!(names[1], Name::from("main"));
        assert_ne!(names[1], names[3]);
        // Maps keyed by names find plain `&str` keys.
        let map: rustc_hash::FxHashMap<Name, usize> = names.iter().cloned().zip(0..).collect();
        assert_eq!(map.get("main"), Some(&1));
        assert_eq!(map.get("printf"), Some(&0));
        assert_eq!(map.get("mai"), None);
        assert_eq!(format!("{} {:?}", names[0], names[1]), "printf \"main\"");
    }

    /// A large program has hundreds of thousands of edges: each byte here
    /// is hundreds of kilobytes of memory touched (page faults) per link.
    #[test]
    fn an_edge_is_24_bytes() {
        assert_eq!(std::mem::size_of::<super::Edge>(), 24);
    }

    /// One per symbol table entry of every object (20,000 in the large
    /// benchmark): a u64 alignment of commons made it 56.
    #[test]
    fn a_symbol_is_48_bytes() {
        assert_eq!(std::mem::size_of::<super::Symbol>(), 48);
    }
}
