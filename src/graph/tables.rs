//! Linker-made tables: GOT entries, stubs (PLT entries) and copy slots,
//! sized in one scan over every edge before layout.
//!
//! - A GOT entry holds a target's address for `GOTPCREL`-style fixups (and,
//!   with TLS, thread-pointer offsets and module pairs).
//! - A stub is `jmp *GOT(%rip)`: the way a 32-bit branch or address reaches
//!   a function outside the image when it is out of range.
//! - A copy slot is the image's own copy of a host variable that the code
//!   addresses with 32 bits but that lies out of reach, as a native link's
//!   `R_X86_64_COPY` would make (see [`crate::host::copyreloc`]).

use std::collections::HashMap;

use anyhow::{bail, Result};
use rustc_hash::FxHashMap;

use crate::arch::{Cpu, EdgeKind, FarReference, PlainFixup, TlsAccess};
use crate::graph::model::*;
use crate::graph::resolve::{ExternalSymbolInfo, ResolvedSymbols, Target};

/// What a GOT slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GotSlot {
    /// The target's address.
    Address(Target),
    /// Where a stub jumps: the function's real address, even where the
    /// stub itself is the function's canonical address (see
    /// [`Tables::stubs_are_canonical`]).
    JumpSlot(Target),
    /// The target's offset from the thread pointer (initial-exec TLS).
    TpOffset(Target),
    /// `{module id, offset in block}` pair for general-dynamic TLS (two slots).
    TlsIndex(Target),
    /// `{module id, 0}` pair for local-dynamic TLS (two slots).
    TlsModule,
    /// `{resolver, argument}` TLS descriptor (two slots).
    TlsDescriptor(Target),
}

impl GotSlot {
    /// The slot a thread-local access of `target` reads, if it reads one.
    pub fn for_tls(access: TlsAccess, target: Target) -> Option<GotSlot> {
        match access {
            TlsAccess::GotTpOffset => Some(GotSlot::TpOffset(target)),
            TlsAccess::GotTlsIndex => Some(GotSlot::TlsIndex(target)),
            TlsAccess::GotTlsModule => Some(GotSlot::TlsModule),
            TlsAccess::GotTlsDescriptor => Some(GotSlot::TlsDescriptor(target)),
            TlsAccess::TpOffset | TlsAccess::DtpOffset | TlsAccess::ModuleId => None,
        }
    }

    pub fn words(self) -> u64 {
        match self {
            GotSlot::Address(_) | GotSlot::JumpSlot(_) | GotSlot::TpOffset(_) => 1,
            _ => 2,
        }
    }
}

pub struct CopySlot {
    pub external: u32,
    pub size: u64,
    /// The shortest reach of the references to the variable: beyond it
    /// from the image, the copy is used.
    pub reach: u64,
}

#[derive(Default)]
pub struct Tables {
    /// Slots in order with their word index in the GOT.
    pub got: Vec<(GotSlot, u64)>,
    // FxHash: these are asked once per edge while planning and again while
    // applying fixups.
    got_index: FxHashMap<GotSlot, u64>,
    pub got_words: u64,
    /// Stubs in order: (target, GOT word of its address).
    pub stubs: Vec<(Target, u64)>,
    stub_index: FxHashMap<Target, u32>,
    pub copies: Vec<CopySlot>,
    copy_index: FxHashMap<u32, u32>,
    /// Some fixup stores an image address in 32 bits.
    pub needs_low_image: bool,
    /// Some code needs a library function's stub as its one address.
    pub canonical_stubs: bool,
    /// Every edge's kind, counted, for reports.
    pub edge_counts: HashMap<&'static str, u64>,
    /// Whether any fixup uses thread-local storage.
    pub uses_tls: bool,
    /// Thread-local variables of shared libraries the image accesses, with
    /// whether a thread-pointer offset is needed, in first-use order.
    pub tls_externals: Vec<(u32, bool)>,
    /// Thread-local variables of shared libraries reached through Mach-O
    /// TLV descriptors, each given a descriptor in the image.
    pub tlv_descriptors: Vec<u32>,
    tlv_index: HashMap<u32, usize>,
    /// External → its index in `tls_externals` (hostile objects can have
    /// hundreds of thousands of them; no linear searches).
    tls_external_index: FxHashMap<u32, usize>,
    /// Whether some fixup needs `_GLOBAL_OFFSET_TABLE_` even with no entries.
    pub needs_got_base: bool,
}

impl Tables {
    /// Index of an external thread-local variable in `tls_externals`.
    pub fn tls_external(&self, external: u32) -> Option<usize> {
        self.tls_external_index.get(&external).copied()
    }

    pub fn got_word(&self, slot: GotSlot) -> Option<u64> {
        self.got_index.get(&slot).copied()
    }

    /// In a low image (code built without -fPIC/-fPIE) a library function
    /// with a stub has the stub as its address everywhere, as a native
    /// non-PIE link makes the PLT entry the canonical address: `&puts` in
    /// code and in data then compare equal. So too where code needs one
    /// address for it (see `EdgeKind::needs_canonical_address`).
    pub fn stubs_are_canonical(&self) -> bool {
        self.needs_low_image || self.canonical_stubs
    }

    /// Index of the TLV descriptor made for external `ext`, if any.
    pub fn tlv_descriptor_of(&self, ext: u32) -> Option<usize> {
        self.tlv_index.get(&ext).copied()
    }

    pub fn stub_of(&self, target: Target) -> Option<u32> {
        // Only targets outside the image get stubs (see `plan`); most calls
        // are inside it and need no lookup.
        if !matches!(target, Target::External(_) | Target::Absolute(_) | Target::Ifunc(_)) {
            return None;
        }
        self.stub_index.get(&target).copied()
    }

    pub fn copy_of(&self, external: u32) -> Option<u32> {
        self.copy_index.get(&external).copied()
    }

    fn add_got(&mut self, slot: GotSlot) -> u64 {
        if let Some(&w) = self.got_index.get(&slot) {
            return w;
        }
        let word = self.got_words;
        self.got_words += slot.words();
        self.got.push((slot, word));
        self.got_index.insert(slot, word);
        word
    }

    fn add_stub(&mut self, target: Target) {
        if self.stub_index.contains_key(&target) {
            return;
        }
        let word = self.add_got(GotSlot::JumpSlot(target));
        self.stub_index.insert(target, self.stubs.len() as u32);
        self.stubs.push((target, word));
    }

    fn add_copy(&mut self, external: u32, size: u64, reach: u64) {
        if let Some(&c) = self.copy_index.get(&external) {
            let copy = &mut self.copies[c as usize];
            copy.reach = copy.reach.min(reach);
            return;
        }
        self.copy_index.insert(external, self.copies.len() as u32);
        self.copies.push(CopySlot { external, size, reach });
    }
}

/// Scans every live edge once and reserves what the fixups may need.
///
/// Most edges are plain references into the image and need nothing; a
/// large program's graphs are scanned for the others on several threads,
/// then those few are planned in graph order, so the tables come out the
/// same however the scan was split.
/// What a symbol outside the image is (see
/// [`crate::graph::resolve::ExternalSymbols::symbol_info`]).
pub type SymbolInfo<'a> = &'a mut dyn FnMut(u64, &str) -> Option<ExternalSymbolInfo>;

pub fn plan(graphs: &[LinkGraph], res: &ResolvedSymbols, symbol_info: SymbolInfo) -> Result<Tables> {
    let mut tables = Tables::default();
    // Each IFUNC gets its stub, referenced or not: it is the function's
    // address for lookups too.
    for i in 0..res.ifuncs.len() {
        tables.add_stub(Target::Ifunc(i as u32));
    }
    // What the loader says an external is (dladdr1 walks symbol tables), asked once each.
    let mut external_is_function: FxHashMap<u32, Option<ExternalSymbolInfo>> = FxHashMap::default();
    let mut external_info = |ext: u32| {
        *external_is_function.entry(ext).or_insert_with(|| {
            let external = &res.externals[ext as usize];
            symbol_info(external.address, &external.name)
        })
    };
    let mut kind_counts: FxHashMap<EdgeKind, u64> = FxHashMap::default();
    let edge_count: usize = graphs.iter().flat_map(|g| &g.blocks).map(|b| b.edge_count()).sum();
    let indices: Vec<usize> = (0..graphs.len()).collect();
    let targets_of = |g: usize| res.targets.get(g).map_or(&[][..], Vec::as_slice);
    let scans = crate::support::parallel::map_in_order(&indices, edge_count >= PARALLEL_SCAN_EDGES, |&g| {
        scan_edges(&graphs[g], targets_of(g))
    });
    for (g, scan) in scans.into_iter().enumerate() {
        let scan = scan?;
        for (kind, n) in scan.kind_counts {
            *kind_counts.entry(kind).or_insert(0) += n;
        }
        let graph = &graphs[g];
        let targets = targets_of(g);
        for &(block, ref edge) in &scan.special {
            let target = targets[edge.target as usize];
            let kind = edge.kind;
            let sym = &graph.symbols[edge.target as usize];
            if let (SymbolKind::Tls, false, Target::External(ext)) = (sym.kind, kind.is_tls(), target) {
                // A Mach-O TLV reference expects a descriptor; a shared
                // library's thread-local variable gets one made here,
                // holding its thread-pointer offset (static TLS).
                tables.uses_tls = true;
                plan_tls(&mut tables, TlsAccess::TpOffset, target);
                if !tables.tlv_index.contains_key(&ext) {
                    tables.tlv_index.insert(ext, tables.tlv_descriptors.len());
                    tables.tlv_descriptors.push(ext);
                }
                if kind.uses_address_got() {
                    tables.add_got(GotSlot::Address(target));
                }
                continue;
            }
            if kind.is_tls() {
                tables.uses_tls = true;
                if let Some(access) = kind.tls_access() {
                    plan_tls(&mut tables, access, target);
                }
                continue;
            }
            if kind.uses_address_got() {
                tables.add_got(GotSlot::Address(target));
            }
            // A 32-bit absolute address of anything but a fixed value
            // points into the image: at a block, or at the copy slot or
            // stub of an external (clang -O0 -fno-pic reads `stdout` with
            // `mov stdout, %rdi`, R_X86_64_32S, and may have no other
            // 32-bit reference at all).
            if kind.is_abs32() && !matches!(target, Target::Absolute(_)) {
                tables.needs_low_image = true;
            }
            // A PC-relative reference to a low absolute address (`--define
            // x=0x401000`, or 0 for `--allow-unresolved`) reaches it only
            // from an image in the low 2 GiB.
            if kind.is_near_pc_relative() && matches!(target, Target::Absolute(v) if v < 1 << 31) {
                tables.needs_low_image = true;
            }
            if kind.needs_got_base() || target == Target::GotBase {
                tables.needs_got_base = true;
            }
            let far = kind.far_reference();
            match target {
                // Calls go through a stub when far; asking the loader
                // what the target is (dladdr1 walks symbol tables) is
                // only needed for data-style references.
                Target::External(_) if far == FarReference::ThroughStub => tables.add_stub(target),
                Target::External(ext) if far == FarReference::StubOrCopy => {
                    let info = external_info(ext);
                    match info {
                        Some(info) if !info.is_function => {
                            tables.add_copy(ext, info.size.max(1), kind.reach().unwrap_or(1 << 31))
                        }
                        _ => {
                            tables.add_stub(target);
                            // Its stub is its address wherever code needs one.
                            tables.canonical_stubs |= kind.needs_canonical_address();
                        }
                    }
                }
                // A library function's address in read-only data (a table
                // of non-PIC code: PIC code puts it in `.data.rel.ro`) is,
                // natively, the non-PIE executable's PLT entry, which ld
                // makes the function's canonical address rather than
                // relocate read-only memory at start-up.
                Target::External(ext)
                    if kind.plain() == Some(PlainFixup::Absolute64)
                        && graph.block_section(block).kind == SectionKind::ReadOnly =>
                {
                    let info = external_info(ext);
                    if info.is_some_and(|info| info.is_function) {
                        tables.add_stub(target);
                        tables.canonical_stubs = true;
                    }
                }
                // Every reference to an IFUNC is to its stub.
                Target::Ifunc(_) => tables.add_stub(target),
                // A call to a missing weak function: native code would
                // jump to 0; a stub through a zero GOT entry does too.
                Target::Absolute(_) if far == FarReference::ThroughStub => tables.add_stub(target),
                _ => {}
            }
        }
    }
    tables.edge_counts = kind_counts.into_iter().map(|(kind, n)| (kind.name(), n)).collect();
    Ok(tables)
}

/// From this many edges, [`plan`] scans graphs on several threads.
const PARALLEL_SCAN_EDGES: usize = 50_000;

/// What [`scan_edges`] found in one graph.
struct EdgeScan {
    /// Edges by kind, for the link report.
    kind_counts: Vec<(EdgeKind, u64)>,
    /// The live edges that may need a GOT entry, stub, copy or TLS slot,
    /// with their blocks, in order.
    special: Vec<(BlockId, Edge)>,
}

/// Counts the live edges of `graph` by kind and picks out those [`plan`]
/// must look at; fails on an edge to a symbol in a section not loaded.
fn scan_edges(graph: &LinkGraph, targets: &[Target]) -> Result<EdgeScan> {
    let mut scan = EdgeScan { kind_counts: Vec::new(), special: Vec::new() };
    // Counted per kind here, named once at the end: hashing a name per edge
    // showed in profiles. Decoded edges of one kind come in runs, each
    // counted once; plain ones still in a relocation table, by kind.
    let mut run: Option<(EdgeKind, u64)> = None;
    // Per slot of the CPU's plain kinds.
    let plain_kinds = graph.cpu.plain_elf_kinds();
    let mut plain_counts = [0u64; crate::arch::PlainElfKinds::SLOTS];
    let (mut decoded, mut scratch) = (Vec::new(), Vec::new());
    for b in 0..graph.blocks.len() as BlockId {
        if !graph.is_block_live(b) {
            continue;
        }
        for &edge in &graph.blocks[b as usize].edges {
            match &mut run {
                Some((kind, n)) if *kind == edge.kind => *n += 1,
                _ => scan.kind_counts.extend(run.replace((edge.kind, 1))),
            }
            note_edge(graph, targets, b, edge, &mut scan.special)?;
        }
        // Plain references into the image are only counted here; the
        // fixups write them with checked lookups, and decode (with every
        // check) whatever those decline.
        let into_image = |counts: &mut [u64; crate::arch::PlainElfKinds::SLOTS],
                          plain: &crate::graph::format::elf::PlainRelocation| {
            let into_image = matches!(targets.get(plain.edge.target as usize), Some(Target::Block { .. }));
            counts[plain.slot] += u64::from(into_image);
            into_image
        };
        graph.for_each_relocation_chunk(b, &mut scratch, |table| {
            crate::graph::format::elf::for_each_relocation(
                graph.cpu,
                table,
                &mut plain_counts,
                into_image,
                |_, entry| {
                    graph.decode_relocations_into(b, entry, &mut decoded)?;
                    for &edge in &decoded {
                        scan.kind_counts.push((edge.kind, 1));
                        note_edge(graph, targets, b, edge, &mut scan.special)?;
                    }
                    Ok(())
                },
            )
        })?;
    }
    scan.kind_counts.extend(run);
    let counted = plain_counts.into_iter().enumerate().filter(|&(_, n)| n > 0);
    scan.kind_counts.extend(counted.map(|(slot, n)| (plain_kinds.kind(slot).0, n)));
    Ok(scan)
}

/// Adds `edge` of block `b` to `special` unless it is a plain reference
/// into the image, which needs no GOT entry, stub, copy or TLS slot.
fn note_edge(
    graph: &LinkGraph,
    targets: &[Target],
    b: BlockId,
    edge: Edge,
    special: &mut Vec<(BlockId, Edge)>,
) -> Result<()> {
    let target = targets[edge.target as usize];
    if matches!(target, Target::Block { .. }) && edge.kind.plain().is_some() {
        return Ok(());
    }
    if target == Target::NotLoaded {
        let sym = &graph.symbols[edge.target as usize];
        let what = sym.name.as_deref().map_or_else(|| "a section symbol".to_string(), |n| format!("`{}`", n));
        bail!(
            "{}: {} refers to {} in a section jitrun does not load (a discarded COMDAT copy or a non-allocated section)",
            graph.edge_location(b, &edge),
            edge.kind,
            what
        );
    }
    special.push((b, edge));
    Ok(())
}

fn plan_tls(tables: &mut Tables, access: TlsAccess, target: Target) {
    if let Target::External(ext) = target {
        let needs_tp = access.needs_tp_offset();
        match tables.tls_external_index.get(&ext) {
            Some(&i) => tables.tls_externals[i].1 |= needs_tp,
            None => {
                tables.tls_external_index.insert(ext, tables.tls_externals.len());
                tables.tls_externals.push((ext, needs_tp));
            }
        }
    }
    if let Some(slot) = GotSlot::for_tls(access, target) {
        tables.add_got(slot);
    }
}

/// Builds the synthetic graph that holds the GOT, the stubs, the copy slots
/// and the `.eh_frame` terminator, so layout places them like any block.
pub struct TableBlocks {
    pub got: Option<BlockId>,
    pub stubs: Option<BlockId>,
    pub copies: Vec<BlockId>,
    pub eh_frame_end: Option<BlockId>,
    pub tlv_descriptors: Vec<BlockId>,
}

pub fn build_graph(cpu: Cpu, tables: &Tables, has_eh_frame: bool) -> (LinkGraph, TableBlocks) {
    let mut graph = LinkGraph::new("<linker tables>".to_string(), cpu, None);
    let mut blocks =
        TableBlocks { got: None, stubs: None, copies: Vec::new(), eh_frame_end: None, tlv_descriptors: Vec::new() };
    if !tables.tlv_descriptors.is_empty() {
        // {thunk, key, offset}, filled once the TLS module is loaded.
        let s = graph.add_section("__DATA,__thread_vars", SectionKind::Data);
        for _ in &tables.tlv_descriptors {
            blocks.tlv_descriptors.push(graph.add_block(s, Content::Owned(vec![0; 24]), 24, 8));
        }
    }
    if tables.got_words > 0 || tables.needs_got_base {
        let s = graph.add_section(".got", SectionKind::RelRo);
        let size = tables.got_words.max(1) * 8;
        blocks.got = Some(graph.add_block(s, Content::Owned(vec![0; size as usize]), size, 8));
    }
    if !tables.stubs.is_empty() {
        let s = graph.add_section(".plt", SectionKind::Code);
        let mut code = vec![0; tables.stubs.len() * cpu.stub_size() as usize];
        Cpu::fill(&mut code, cpu.code_fill());
        let size = code.len() as u64;
        blocks.stubs = Some(graph.add_block(s, Content::Owned(code), size, 16));
    }
    if !tables.copies.is_empty() {
        let s = graph.add_section(".data.copy", SectionKind::Data);
        for copy in &tables.copies {
            blocks.copies.push(graph.add_block(s, Content::Zero, copy.size, 16));
        }
    }
    if has_eh_frame {
        let s = graph.add_section(".eh_frame", SectionKind::EhFrame);
        blocks.eh_frame_end = Some(graph.add_block(s, Content::Owned(vec![0; 4]), 4, 4));
    }
    (graph, blocks)
}
