//! Copying block contents into the image and applying every fixup, once
//! every address is known: targets become addresses ([`Addresses`]), each
//! edge is applied by its CPU's equation (the common ones on a fast path),
//! and the GOT and stubs are written. After this pass no edge is pending.

use anyhow::{anyhow, bail, Result};

use crate::arch::{FixupValues, PlainFixup, TlsAccess};
use crate::graph::layout::{Layout, SegmentKind, NOT_PLACED};
use crate::graph::model::*;
use crate::graph::resolve::{Boundary, ResolvedSymbols, Target};
use crate::graph::tables::{GotSlot, TableBlocks, Tables};

/// Where the image's thread-locals and those of the shared libraries it
/// reaches are, in the terms TLS fixups use: from the host's TLS module
/// when the image runs here, or a static executable's layout when it is
/// linked for another machine.
#[derive(Clone, Debug, Default)]
pub struct TlsPlacement {
    /// The module id of the image's block, the first word of a `tls_index`.
    pub module_id: u64,
    /// Offset of the image's block from the thread pointer, the same in
    /// every thread.
    pub tp_offset: i64,
    /// Address of the TLS descriptor function for static TLS.
    pub descriptor_resolver: u64,
    /// Thread-local variables of shared libraries, in the order of
    /// `Tables::tls_externals`.
    pub externals: Vec<ExternalTls>,
}

/// Where a shared library's thread-local variable is.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExternalTls {
    pub tp_offset: i64,
    pub module_id: u64,
    pub offset: u64,
}

/// Where a thread-local variable is, in the terms TLS fixups use.
struct TlsFacts {
    /// Offset from the thread pointer (static TLS).
    tp_offset: i64,
    /// The TLS module that holds it.
    module_id: u64,
    /// Offset inside that module's block.
    offset: u64,
}

/// Turns targets into addresses once the base is known.
pub struct Addresses<'a> {
    /// The CPU of the image (its stubs).
    pub cpu: crate::arch::Cpu,
    pub base: u64,
    pub layout: &'a Layout,
    pub res: &'a ResolvedSymbols,
    pub tables: &'a Tables,
    /// The graph of the GOT, stubs and copy slots, and its blocks.
    pub table_graph: u32,
    pub table_blocks: &'a TableBlocks,
    /// Which copy slots are used (see [`decide_copies`]).
    pub copies_in_use: &'a [bool],
    pub tls: Option<&'a TlsPlacement>,
    /// The libraries' symbols may be elsewhere when the image runs (the
    /// link cache): references to them go through stubs and the GOT.
    pub externals_move: bool,
}

impl Addresses<'_> {
    fn block_addr(&self, graph: u32, block: BlockId) -> u64 {
        self.base + self.layout.block_offsets[graph as usize][block as usize]
    }

    fn table_addr(&self, block: Option<BlockId>) -> u64 {
        block.map_or(self.base, |b| self.block_addr(self.table_graph, b))
    }

    pub fn got(&self) -> u64 {
        self.table_addr(self.table_blocks.got)
    }

    /// `S` for a target.
    pub fn address(&self, target: Target) -> Result<u64> {
        self.address_if_any(target).ok_or_else(|| match target {
            Target::NotLoaded => anyhow!("refers to a section that is not loaded"),
            Target::TlsModuleBase => anyhow!("uses _TLS_MODULE_BASE_ outside a thread-local access"),
            _ => anyhow!("refers to a thread-local symbol as if it were an ordinary one"),
        })
    }

    /// [`Addresses::address`] without the error (making one is costly:
    /// with `RUST_BACKTRACE` set it captures a backtrace).
    pub fn address_if_any(&self, target: Target) -> Option<u64> {
        Some(match target {
            Target::Block { graph, block, offset } => {
                let placed = self.layout.block_offsets[graph as usize][block as usize];
                if placed == NOT_PLACED {
                    return None;
                }
                self.base + placed + offset
            }
            Target::Absolute(value) => value,
            Target::External(e) => self.external_address(e, target),
            // The stub is the function's one address, as a native PLT
            // entry is for an IFUNC: every pointer to it compares equal.
            Target::Ifunc(_) => return self.stub(target),
            Target::GotBase => self.got(),
            Target::Boundary(i) => {
                let l = self.layout;
                self.base
                    + match &self.res.boundaries[i as usize] {
                        Boundary::SectionStart(name) => l.section(name).map_or(0, |s| s.offset),
                        Boundary::SectionEnd(name) => l.section(name).map_or(0, |s| s.offset + s.size),
                        Boundary::ImageStart => 0,
                        Boundary::TextStart => l.segment_start(SegmentKind::Text).unwrap_or(0),
                        Boundary::TextEnd => l.segment_end(&[SegmentKind::Text]),
                        Boundary::DataStart => l.segment_start(SegmentKind::Data).unwrap_or_else(|| l.data_end()),
                        Boundary::DataEnd => l.data_end(),
                        Boundary::ImageEnd => {
                            l.segment_end(&[SegmentKind::Bss]).max(l.segment_end(&[SegmentKind::Data]))
                        }
                    }
            }
            Target::NotLoaded | Target::TlsModuleBase => return None,
        })
    }

    /// Whether `target` is a symbol outside the image that references
    /// reach where it is (not through its copy or canonical stub), and so
    /// may move with its library ([`Addresses::externals_move`]).
    pub fn is_movable(&self, target: Target) -> bool {
        match target {
            Target::External(e) => {
                self.externals_move && self.external_address(e, target) == self.res.externals[e as usize].address
            }
            _ => false,
        }
    }

    /// Where a reference to external `e` goes: its linker-made TLV
    /// descriptor, its canonical stub, its copy, or the library's address.
    fn external_address(&self, e: u32, target: Target) -> u64 {
        if let Some(i) = self.tables.tlv_descriptor_of(e) {
            return self.block_addr(self.table_graph, self.table_blocks.tlv_descriptors[i]);
        }
        if self.tables.stubs_are_canonical() {
            if let Some(stub) = self.stub(target) {
                return stub;
            }
        }
        match self.tables.copy_of(e) {
            Some(c) if self.copies_in_use[c as usize] => {
                self.block_addr(self.table_graph, self.table_blocks.copies[c as usize])
            }
            _ => self.res.externals[e as usize].address,
        }
    }

    /// Offset of a thread-local target of the image inside its TLS block.
    fn tls_offset(&self, target: Target) -> Result<u64> {
        match target {
            Target::Block { graph, block, offset } => {
                let placed = self.layout.tls.offsets[graph as usize][block as usize];
                if placed == NOT_PLACED {
                    bail!("uses a thread-local access on a symbol that is not thread-local");
                }
                Ok(placed + offset)
            }
            Target::TlsModuleBase => Ok(0),
            _ => bail!("uses a thread-local access on a symbol that is not thread-local"),
        }
    }

    /// Everything a TLS fixup may need about its target, in the image or in
    /// a shared library.
    fn tls_facts(&self, target: Target) -> Result<TlsFacts> {
        let module = self.tls_module()?;
        if let Target::External(e) = target {
            let i = self.tables.tls_external(e).ok_or_else(|| anyhow!("internal: external TLS symbol not planned"))?;
            let ext = module.externals[i];
            return Ok(TlsFacts { tp_offset: ext.tp_offset, module_id: ext.module_id, offset: ext.offset });
        }
        let offset = self.tls_offset(target)?;
        Ok(TlsFacts { tp_offset: module.tp_offset + offset as i64, module_id: module.module_id, offset })
    }

    fn tls_module(&self) -> Result<&TlsPlacement> {
        self.tls.ok_or_else(|| anyhow!("internal: TLS used without a TLS module"))
    }

    pub fn got_entry(&self, slot: GotSlot) -> Option<u64> {
        self.tables.got_word(slot).map(|w| self.got() + 8 * w)
    }

    pub fn stub(&self, target: Target) -> Option<u64> {
        let stub_size = self.cpu.stub_size();
        self.tables.stub_of(target).map(|i| self.table_addr(self.table_blocks.stubs) + stub_size * i as u64)
    }
}

/// The common fixups, done without the general machinery below: a
/// [`PlainFixup`] to a symbol whose address is known, with the value in
/// range. Writes exactly what `EdgeKind::apply` would; anything else (out
/// of range, GOT, stubs, TLS, sizes) returns false and takes the general
/// path.
#[inline]
fn apply_direct_fixup(edge: &Edge, bytes: &mut [u8], block_addr: u64, symbol_addrs: &[Option<u64>]) -> bool {
    match edge.kind.plain() {
        Some(fixup) => apply_plain_fixup(fixup, edge, bytes, block_addr, symbol_addrs),
        None => false,
    }
}

/// [`apply_direct_fixup`] for an edge known to be a `fixup`.
#[inline(always)]
fn apply_plain_fixup(
    fixup: PlainFixup,
    edge: &Edge,
    bytes: &mut [u8],
    block_addr: u64,
    symbol_addrs: &[Option<u64>],
) -> bool {
    let Some(&Some(s)) = symbol_addrs.get(edge.target as usize) else { return false };
    let offset = edge.offset as usize;
    match fixup {
        PlainFixup::PcRelative32 => {
            let p = block_addr + u64::from(edge.offset);
            let value = (s as i64).checked_add(edge.addend).and_then(|v| v.checked_sub(p as i64));
            match (value.and_then(|v| i32::try_from(v).ok()), bytes.get_mut(offset..offset + 4)) {
                (Some(v), Some(field)) => field.copy_from_slice(&v.to_le_bytes()),
                _ => return false,
            }
        }
        PlainFixup::Absolute64 => match bytes.get_mut(offset..offset + 8) {
            Some(field) => field.copy_from_slice(&s.wrapping_add(edge.addend as u64).to_le_bytes()),
            None => return false,
        },
    }
    true
}

/// Below this much work ([`placed_blocks_weight`]: about a millisecond),
/// a second thread for the fixups costs more than it saves.
pub const PARALLEL_FIXUP_WEIGHT: u64 = 8 << 20;

/// What writing a block costs, in bytes copied (zero-fill is not), an
/// edge counting as 64.
fn block_weight(block: &Block) -> u64 {
    let copied = if matches!(block.content, Content::Zero) { 0 } else { block.size };
    copied + 64 * block.edge_count() as u64
}

/// What writing the image costs (see [`block_weight`]).
pub fn placed_blocks_weight(graphs: &[LinkGraph], layout: &Layout) -> u64 {
    let mut weight = 0;
    for (g, graph) in graphs.iter().enumerate() {
        for (b, block) in graph.blocks.iter().enumerate() {
            if layout.block_offsets[g][b] != NOT_PLACED {
                weight += block_weight(block);
            }
        }
    }
    weight
}

/// Copies every placed block's contents into `memory` (the image) and
/// applies its fixups, on `threads` threads: the blocks, in address order,
/// are cut into runs of about equal work, each with its own slice of the
/// image, so no two threads write the same bytes.
pub fn copy_and_fix_blocks(
    memory: &mut [u8],
    graphs: &[LinkGraph],
    layout: &Layout,
    addrs: &Addresses,
    threads: usize,
) -> Result<()> {
    // Each symbol's address once, not once per edge that uses it. (The
    // GOT and stub graph, made after resolution, has none.)
    let symbol_addrs: Vec<Vec<Option<u64>>> = (0..graphs.len())
        .map(|g| {
            let targets = addrs.res.targets.get(g).map_or(&[][..], Vec::as_slice);
            // A symbol that may move takes the general path, which routes
            // it through the tables.
            targets.iter().map(|&t| if addrs.is_movable(t) { None } else { addrs.address_if_any(t) }).collect()
        })
        .collect();
    let mut placed: Vec<(u64, u32, BlockId)> = Vec::new();
    for (g, graph) in graphs.iter().enumerate() {
        for b in 0..graph.blocks.len() {
            let offset = layout.block_offsets[g][b];
            if offset != NOT_PLACED {
                placed.push((offset, g as u32, b as BlockId));
            }
        }
    }
    let weight = |&(_, g, b): &(u64, u32, BlockId)| block_weight(&graphs[g as usize].blocks[b as usize]);
    // Blocks of one graph are spread over segments; address order lets
    // each run own one contiguous slice.
    if threads > 1 {
        placed.sort_unstable_by_key(|&(offset, ..)| offset);
    }
    let run_blocks = |memory: &mut [u8], memory_start: u64, blocks: &[(u64, u32, BlockId)]| -> Result<()> {
        let mut scratch = Vec::new();
        for &(offset, g, b) in blocks {
            let graph = &graphs[g as usize];
            let block = &graph.blocks[b as usize];
            let start = (offset - memory_start) as usize;
            let bytes = &mut memory[start..start + block.size as usize];
            block.write_content(graph.input_bytes(), bytes);
            let symbol_addrs = &symbol_addrs[g as usize];
            let block_fixups = BlockFixups { graph, g: g as usize, b, block_addr: addrs.base + offset };
            block_fixups.apply(bytes, addrs, symbol_addrs, &mut scratch)?;
            // Read for the last time: a large block's pages of the input
            // need not stay resident while the rest of the image is written.
            if let Some(input) = &graph.input {
                if let Content::File(range) = &block.content {
                    if !input.reads_contents(range) {
                        input.release(range.clone());
                    }
                }
                if let Some(range) = block.elf_relocations.as_ref().filter(|_| !input.is_readable()) {
                    input.release(range.clone());
                }
            }
        }
        Ok(())
    };
    if threads < 2 || placed.len() < 2 {
        return run_blocks(memory, 0, &placed);
    }
    let per_run = placed.iter().map(weight).sum::<u64>().div_ceil(threads as u64);
    let mut runs: Vec<&[(u64, u32, BlockId)]> = Vec::with_capacity(threads);
    let mut rest = &placed[..];
    while !rest.is_empty() {
        // Blocks until the run holds its share (at least one).
        let mut sum = 0;
        let len = rest
            .iter()
            .take_while(|p| {
                let before = sum;
                sum += weight(p);
                before < per_run
            })
            .count();
        let (run, tail) = rest.split_at(len);
        runs.push(run);
        rest = tail;
    }
    log::debug!("image written on {} threads", runs.len());
    let (last, others) = runs.split_last().expect("at least one run");
    let mut memory = memory;
    let mut memory_start = 0u64;
    let mut helpers = Vec::with_capacity(others.len());
    for (i, run) in others.iter().enumerate() {
        // This run's slice ends where the next run's first block starts.
        let end = runs[i + 1][0].0;
        let (mine, tail) = std::mem::take(&mut memory).split_at_mut((end - memory_start) as usize);
        let start = memory_start;
        helpers.push(crate::support::heap::on_helper_heap(move || run_blocks(mine, start, run)));
        memory = tail;
        memory_start = end;
    }
    let (theirs, last_result) = crate::support::threads::run_beside(helpers, || run_blocks(memory, memory_start, last));
    // The first error in address order, after every run has ended.
    theirs.into_iter().chain([last_result]).collect::<Result<Vec<()>>>().map(drop)
}

/// One block's fixups: the block `b` of graph `graph` (number `g`) at
/// `block_addr`.
pub struct BlockFixups<'a> {
    pub graph: &'a LinkGraph,
    pub g: usize,
    pub b: BlockId,
    pub block_addr: u64,
}

impl BlockFixups<'_> {
    /// Applies every fixup of the block to `bytes`, its contents.
    /// `symbol_addrs[s]`: the address of the graph's symbol `s`, or `None`
    /// where [`Addresses::address`] fails (it is asked again, for the
    /// error); an empty slice computes every address on the way. `scratch`
    /// holds relocations read from the file
    /// ([`LinkGraph::for_each_relocation_chunk`]).
    pub fn apply(
        &self,
        bytes: &mut [u8],
        addrs: &Addresses,
        symbol_addrs: &[Option<u64>],
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        let BlockFixups { graph, b, block_addr, .. } = *self;
        let apply_edges = |bytes: &mut [u8], edges: &[Edge]| -> Result<()> {
            for edge in edges {
                if !apply_direct_fixup(edge, bytes, block_addr, symbol_addrs) {
                    self.apply_any_kind(edge, bytes, addrs, symbol_addrs)?;
                }
            }
            Ok(())
        };
        apply_edges(bytes, &graph.blocks[b as usize].edges)?;
        let mut decoded = Vec::new();
        // The direct path reads the symbol's address and the field with `get`
        // and declines what does not fit, so it takes entries unchecked.
        let direct = |bytes: &mut &mut [u8], plain: &crate::graph::format::elf::PlainRelocation| {
            apply_plain_fixup(plain.fixup, &plain.edge, bytes, block_addr, symbol_addrs)
        };
        graph.for_each_relocation_chunk(b, scratch, |table| {
            crate::graph::format::elf::for_each_relocation(
                graph.cpu,
                table,
                &mut &mut *bytes,
                direct,
                |bytes, entry| {
                    graph.decode_relocations_into(b, entry, &mut decoded)?;
                    apply_edges(bytes, &decoded)
                },
            )
        })
    }

    /// Applies `edge` of the block to `bytes`, whatever its kind: GOT
    /// entries, stubs, TLS offsets, sizes.
    fn apply_any_kind(
        &self,
        edge: &Edge,
        bytes: &mut [u8],
        addrs: &Addresses,
        symbol_addrs: &[Option<u64>],
    ) -> Result<()> {
        let BlockFixups { graph, g, b, block_addr } = *self;
        let target = addrs.res.targets[g][edge.target as usize];
        let fail = |what: &dyn std::fmt::Display| {
            let sym = &graph.symbols[edge.target as usize];
            let sym_name = match (&sym.name, sym.def) {
                (Some(n), _) => n.to_string(),
                (None, SymbolDef::Defined { block, .. }) => graph.block_section(block).name.to_string(),
                _ => "<anonymous>".to_string(),
            };
            anyhow!("{}: relocation {} against `{}` {}", graph.edge_location(b, edge), edge.kind, sym_name, what)
        };
        let kind = edge.kind;
        let mut values = FixupValues {
            p: block_addr + u64::from(edge.offset),
            a: edge.addend,
            got: addrs.got(),
            ..Default::default()
        };
        if kind.is_tls() {
            let facts = || addrs.tls_facts(target).map_err(|e| fail(&e));
            match kind.tls_access() {
                Some(TlsAccess::TpOffset) => values.s = facts()?.tp_offset as u64,
                Some(TlsAccess::DtpOffset) => values.s = facts()?.offset,
                Some(TlsAccess::ModuleId) => values.s = facts()?.module_id,
                Some(access) => values.g = GotSlot::for_tls(access, target).and_then(|slot| addrs.got_entry(slot)),
                // A marker (`R_X86_64_TLSDESC_CALL`): nothing to compute.
                None => {}
            }
        } else {
            let address_of = |s: SymbolId| match symbol_addrs.get(s as usize).copied().flatten() {
                Some(a) => Ok(a),
                None => addrs.address(addrs.res.targets[g][s as usize]).map_err(|e| fail(&e)),
            };
            values.s = address_of(edge.target)?;
            values.movable = addrs.is_movable(target);
            if kind.uses_subtrahend() {
                values.b = address_of(edge.subtrahend)?;
            }
            if kind.uses_address_got() {
                values.g = addrs.got_entry(GotSlot::Address(target));
            }
            // Only externals, absolute targets and IFUNCs get stubs (tables::plan).
            let may_use_stub = kind.far_reference() != crate::arch::FarReference::Never;
            if may_use_stub && matches!(target, Target::External(_) | Target::Absolute(_) | Target::Ifunc(_)) {
                values.stub = addrs.stub(target);
            }
            if kind.uses_symbol_size() {
                values.z = symbol_size(graph, edge.target, addrs.res);
            }
        }
        kind.apply(bytes, edge.offset as usize, &values).map_err(|e| fail(&e)).map(drop)
    }
}

fn symbol_size(graph: &LinkGraph, sym: SymbolId, res: &ResolvedSymbols) -> u64 {
    let s = &graph.symbols[sym as usize];
    if s.size != 0 || s.scope == Scope::Local {
        return s.size;
    }
    s.name.as_deref().and_then(|n| res.globals.get(n)).map_or(0, |g| g.size)
}

/// Fills GOT entries and stubs.
pub fn write_tables(memory: &mut [u8], addrs: &Addresses) -> Result<()> {
    let got_offset = addrs.got() - addrs.base;
    for &(slot, word) in &addrs.tables.got {
        let words: [u64; 2] = match slot {
            GotSlot::Address(t) => [addrs.address(t)?, 0],
            GotSlot::JumpSlot(Target::External(e)) => [addrs.res.externals[e as usize].address, 0],
            // What the resolver returns, written once the image is mapped
            // (see `ifunc::resolve_action`).
            GotSlot::JumpSlot(Target::Ifunc(_)) => [0, 0],
            GotSlot::JumpSlot(t) => [addrs.address(t)?, 0],
            GotSlot::TpOffset(t) => [addrs.tls_facts(t)?.tp_offset as u64, 0],
            GotSlot::TlsIndex(t) => {
                let facts = addrs.tls_facts(t)?;
                [facts.module_id, facts.offset]
            }
            GotSlot::TlsModule => [addrs.tls_module()?.module_id, 0],
            GotSlot::TlsDescriptor(t) => {
                [addrs.tls_module()?.descriptor_resolver, addrs.tls_facts(t)?.tp_offset as u64]
            }
        };
        for (i, w) in words.iter().take(slot.words() as usize).enumerate() {
            let at = (got_offset + 8 * (word + i as u64)) as usize;
            memory[at..at + 8].copy_from_slice(&w.to_le_bytes());
        }
    }
    for (i, &ext) in addrs.tables.tlv_descriptors.iter().enumerate() {
        let thunk = addrs
            .res
            .globals
            .get(crate::arch::runtime::TLV_GET_ADDR)
            .map(|g| addrs.address(g.target))
            .ok_or_else(|| anyhow!("internal: no TLV thunk"))??;
        let tp_offset = addrs.tls_facts(Target::External(ext))?.tp_offset;
        let at = (addrs.block_addr(addrs.table_graph, addrs.table_blocks.tlv_descriptors[i]) - addrs.base) as usize;
        memory[at..at + 8].copy_from_slice(&thunk.to_le_bytes());
        memory[at + 16..at + 24].copy_from_slice(&tp_offset.to_le_bytes());
    }
    if let Some(stubs) = addrs.table_blocks.stubs {
        let stubs_addr = addrs.block_addr(addrs.table_graph, stubs);
        let (cpu, stub_size) = (addrs.cpu, addrs.cpu.stub_size());
        for (i, &(_, word)) in addrs.tables.stubs.iter().enumerate() {
            let stub_addr = stubs_addr + stub_size * i as u64;
            let at = (stub_addr - addrs.base) as usize;
            cpu.write_stub(&mut memory[at..at + stub_size as usize], stub_addr, addrs.got() + 8 * word)
                .map_err(|e| anyhow!("stub {}: {}", i, e))?;
        }
    }
    Ok(())
}

/// Whether each copy slot is needed: the variable is out of the reach of
/// its references (see `CopySlot::reach`) from somewhere in the image.
pub fn decide_copies(tables: &Tables, res: &ResolvedSymbols, base: u64, size: u64) -> Vec<bool> {
    let within = |addr: u64, reach: u64| {
        let lo = (base as i128) - (addr as i128);
        let hi = (base as i128 + size as i128) - (addr as i128);
        let limit = reach as i128 - 1;
        lo.abs() < limit && hi.abs() < limit
    };
    tables.copies.iter().map(|c| !within(res.externals[c.external as usize].address, c.reach)).collect()
}

/// The final address of symbol `symbol` of graph `graph`, if it has one in
/// the image (or outside it, resolved).
pub fn symbol_address(res: &ResolvedSymbols, addrs: &Addresses, graph: usize, symbol: u32) -> Option<u64> {
    res.targets.get(graph)?.get(symbol as usize).and_then(|&t| addrs.address_if_any(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::x86_64::Kind;
    use crate::arch::EdgeKind;

    /// The direct path writes what the general one would, and declines
    /// whatever it cannot do the same way.
    #[test]
    fn direct_fixups_match_the_general_path() {
        let block_addr = 0x7f00_0000_1000u64;
        let targets = [block_addr + 0x40, block_addr - 0x7fff_0000, block_addr + 0x9000_0000, 0, u64::MAX >> 17];
        let addends = [0i64, -4, 8, i64::MIN, i64::MAX, 0x7fff_ffff];
        let (mut direct_count, mut declined) = (0, 0);
        for kind in [Kind::Pc32, Kind::Branch32, Kind::Abs64, Kind::Abs32S, Kind::GotPcRel32].map(EdgeKind::X86_64) {
            for &s in &targets {
                for &a in &addends {
                    for offset in [0u32, 8, 13] {
                        let edge = Edge::new(offset, kind, 1, a);
                        let mut direct = [0xaau8; 16];
                        let took = apply_direct_fixup(&edge, &mut direct, block_addr, &[None, Some(s)]);
                        if !took {
                            declined += 1;
                            continue;
                        }
                        direct_count += 1;
                        assert!(kind.plain().is_some());
                        let mut general = [0xaau8; 16];
                        let values = FixupValues { p: block_addr + u64::from(offset), s, a, ..FixupValues::default() };
                        assert!(kind.apply(&mut general, offset as usize, &values).is_ok(), "{:?}", edge);
                        assert_eq!(direct, general, "{:?} s={:#x}", edge, s);
                    }
                }
                let edge = Edge::new(0, kind, 0, 0);
                assert!(!apply_direct_fixup(&edge, &mut [0u8; 16], block_addr, &[None, Some(s)]), "unknown address");
            }
        }
        assert!(direct_count > 50 && declined > 50, "{} direct, {} declined", direct_count, declined);
    }
}
