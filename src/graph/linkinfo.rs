//! What a link made, as plain data: segments, sections, every defined
//! symbol, GOT entries, stubs, externals and where they came from, counts
//! and phase times. [`crate::Linker::link`] fills it in once every address
//! is known; the link map, the run report, the crash handler, the perf map,
//! the debugger registration and `--check` all read it from the
//! [`crate::Image`] instead of keeping their own copies of the link state.
//!
//! Every list is sorted by address (then name), so the same inputs at the
//! same `--base` give byte-identical maps.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::graph::fixups::Addresses;
use crate::graph::layout::NOT_PLACED;
use crate::graph::model::*;
use crate::graph::resolve::Target;
use crate::graph::tables::GotSlot;

#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkInfo {
    pub base: u64,
    pub size: u64,
    pub inputs: Vec<InputInfo>,
    pub segments: Vec<SegmentInfo>,
    /// Output sections, in address order.
    pub sections: Vec<SectionInfo>,
    /// Input sections of each object at their final addresses.
    pub input_sections: Vec<InputSectionInfo>,
    /// Every defined, named symbol placed in the image (local ones too).
    pub symbols: Vec<SymbolInfo>,
    /// The image's thread-local symbols: they have no address in the
    /// image, only an offset in its thread-local block.
    pub thread_locals: Vec<ThreadLocalInfo>,
    pub got: Vec<GotEntryInfo>,
    /// `_GLOBAL_OFFSET_TABLE_`, when the image has a GOT.
    pub got_base: Option<u64>,
    pub stubs: Vec<StubInfo>,
    /// Symbols found outside the image, with the library that had them.
    pub externals: Vec<ExternalInfo>,
    pub counts: Counts,
    /// Seconds spent in each link phase: parse, resolve, layout, map, fixups.
    /// Not part of the map (it would make maps of one link differ).
    #[serde(skip)]
    pub phases: BTreeMap<String, f64>,
    /// The source lines of the objects built with `-g`, for crash reports,
    /// when the link computed them (see `link::line_table`).
    #[serde(skip)]
    pub(crate) lines: Option<std::sync::Arc<crate::graph::line_table::LineTable>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct InputInfo {
    pub path: String,
    pub size: u64,
    /// `elf-relocatable`, `elf-shared-library`, `linker-script`, ...
    pub format: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct SegmentInfo {
    pub name: String,
    pub address: u64,
    pub size: u64,
    /// `r-x`, `r--` or `rw-`, once the image is initialized.
    pub protection: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct SectionInfo {
    pub name: String,
    pub segment: String,
    pub address: u64,
    pub size: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct InputSectionInfo {
    pub object: String,
    pub name: String,
    pub address: u64,
    pub size: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SymbolInfo {
    pub name: String,
    pub address: u64,
    pub size: u64,
    /// `function`, `data`, `tls`, `unknown`.
    pub kind: &'static str,
    /// `global` or `local`.
    pub scope: &'static str,
    pub object: String,
    /// The input section the symbol is defined in.
    pub section: String,
}

/// A thread-local symbol of the image: where it is in the image's TLS
/// block (the template: `.tdata` then `.tbss`, as in a `PT_TLS` segment).
#[derive(Clone, Debug, Serialize)]
pub struct ThreadLocalInfo {
    pub name: String,
    /// Offset from the start of the image's TLS block (what a `tls_index`'s
    /// second word holds, the DTPREL value).
    pub offset: u64,
    pub size: u64,
    /// `global` or `local`.
    pub scope: &'static str,
    pub object: String,
    pub section: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct GotEntryInfo {
    pub address: u64,
    /// `address`, `tp-offset`, `tls-index`, `tls-module`, `tls-descriptor`.
    pub kind: &'static str,
    /// Name of what the entry refers to (empty for `tls-module`).
    pub target: String,
    /// The object defining a local target, so `got_addr(file, sym)` can
    /// tell two local symbols with one name apart.
    pub target_object: Option<String>,
    /// The address the entry holds, for `address` entries.
    pub value: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StubInfo {
    pub address: u64,
    /// Bytes of the stub (the CPU's stub size).
    pub size: u64,
    pub target: String,
    pub target_object: Option<String>,
    pub target_address: u64,
    pub got_entry: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExternalInfo {
    pub name: String,
    pub address: u64,
    /// The `-l`/`.so` library that provided it, or `None` for the jitrun
    /// process itself (libc and what it already had loaded).
    pub library: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub objects: u64,
    pub sections: u64,
    pub symbols: u64,
    /// Live relocations by psABI name.
    pub relocations: BTreeMap<String, u64>,
    pub got_entries: u64,
    pub stubs: u64,
}

/// The library among `library_paths` that defines the external at
/// `address`, which resolution found through library `found_through`'s
/// handle: that handle also sees its dependencies (libc's `printf` through
/// libm's), so the definition may be another library's or the process's.
fn defining_library(
    address: u64,
    found_through: Option<usize>,
    library_paths: &[String],
    object_at: ObjectAt,
) -> Option<String> {
    library_paths.get(found_through?)?;
    let name = object_at(address)?;
    library_paths.iter().find(|path| **path == name).cloned()
}

/// Wall-clock time per phase, in the order phases ended.
#[derive(Default)]
pub struct PhaseTimer {
    last: Option<Instant>,
    pub phases: BTreeMap<String, f64>,
}

impl PhaseTimer {
    pub fn start(&mut self) {
        self.last = Some(Instant::now());
    }

    /// Adds the time since the previous mark (or `start`) to `phase`.
    pub fn mark(&mut self, phase: &str) {
        let now = Instant::now();
        let spent = self.last.map_or(Duration::ZERO, |t| now - t);
        *self.phases.entry(phase.to_string()).or_insert(0.0) += spent.as_secs_f64();
        self.last = Some(now);
    }
}

fn protection_string(p: region::Protection) -> String {
    let flag = |f: region::Protection, c: char| if p.contains(f) { c } else { '-' };
    [flag(region::Protection::READ, 'r'), flag(region::Protection::WRITE, 'w'), flag(region::Protection::EXECUTE, 'x')]
        .iter()
        .collect()
}

/// The words link info spells kinds and scopes with: `word` as the
/// static string, or `unknown` (for link info read back from the link cache).
pub fn known_word(word: &str) -> &'static str {
    const KNOWN: [&str; 13] = [
        "function",
        "ifunc",
        "data",
        "tls",
        "section",
        "unknown",
        "global",
        "local",
        "address",
        "tp-offset",
        "tls-index",
        "tls-module",
        "tls-descriptor",
    ];
    KNOWN.iter().find(|known| **known == word).copied().unwrap_or("unknown")
}

fn kind_name(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::Function => "function",
        SymbolKind::Ifunc => "ifunc",
        SymbolKind::Data => "data",
        SymbolKind::Tls => "tls",
        SymbolKind::Section => "section",
        SymbolKind::Unknown => "unknown",
    }
}

/// Names targets for GOT entries and stubs: the first named symbol bound to
/// each target, globals before locals.
struct TargetNames {
    names: rustc_hash::FxHashMap<Target, (String, Option<String>)>,
}

impl TargetNames {
    /// Names the GOT and stub targets only: naming every symbol of a large
    /// program would cost more than the link.
    fn new(graphs: &[LinkGraph], addrs: &Addresses) -> TargetNames {
        let wanted: std::collections::HashSet<Target> = addrs
            .tables
            .got
            .iter()
            .filter_map(|&(slot, _)| match slot {
                GotSlot::Address(t)
                | GotSlot::JumpSlot(t)
                | GotSlot::TpOffset(t)
                | GotSlot::TlsIndex(t)
                | GotSlot::TlsDescriptor(t) => Some(t),
                GotSlot::TlsModule => None,
            })
            .chain(addrs.tables.stubs.iter().map(|&(t, _)| t))
            .collect();
        let mut names: rustc_hash::FxHashMap<Target, (String, Option<String>)> = Default::default();
        for (name, &crate::graph::resolve::Global { target, .. }) in &addrs.res.globals {
            if wanted.contains(&target) {
                names.entry(target).or_insert_with(|| (name.to_string(), None));
            }
        }
        if names.len() < wanted.len() {
            for (g, graph) in graphs.iter().enumerate() {
                for (s, sym) in graph.symbols.iter().enumerate() {
                    if let (Some(name), Scope::Local) = (&sym.name, sym.scope) {
                        let target = addrs.res.targets[g][s];
                        if wanted.contains(&target) {
                            names.entry(target).or_insert_with(|| (name.to_string(), Some(graph.name.clone())));
                        }
                    }
                }
            }
        }
        TargetNames { names }
    }

    fn name(&self, target: Target, addrs: &Addresses) -> (String, Option<String>) {
        if let Some(found) = self.names.get(&target) {
            return found.clone();
        }
        match target {
            Target::External(e) => (addrs.res.externals[e as usize].name.to_string(), None),
            Target::Ifunc(i) => (addrs.res.ifuncs[i as usize].name.clone(), None),
            Target::Absolute(v) => (format!("{:#x}", v), None),
            _ => (addrs.address(target).map_or_else(|_| "?".to_string(), |a| format!("{:#x}", a)), None),
        }
    }
}

/// The named symbols of graph `g` that are in the image, with their block
/// and address: live definitions, and globals only where they won.
pub(crate) fn image_symbols<'g>(
    graph: &'g LinkGraph,
    g: usize,
    addrs: &'g Addresses,
) -> impl Iterator<Item = (&'g str, &'g Symbol, BlockId, u64)> + 'g {
    graph.symbols.iter().enumerate().filter_map(move |(s, sym)| {
        let (Some(name), SymbolDef::Defined { block, .. }) = (&sym.name, sym.def) else { return None };
        if sym.kind == SymbolKind::Section || !graph.is_block_live(block) {
            return None;
        }
        // A global that lost to another definition is not in the image.
        let target = addrs.res.targets[g][s];
        if sym.scope == Scope::Global && !matches!(target, Target::Block { graph, .. } if graph as usize == g) {
            return None;
        }
        Some((&**name, sym, block, addrs.address_if_any(target)?))
    })
}

/// The named thread-local symbols of graph `g` in the image's TLS block,
/// globals only where they won.
fn image_thread_locals<'g>(
    graph: &'g LinkGraph,
    g: usize,
    addrs: &'g Addresses,
) -> impl Iterator<Item = ThreadLocalInfo> + 'g {
    graph.symbols.iter().enumerate().filter_map(move |(s, sym)| {
        let (Some(name), SymbolDef::Defined { block, offset }) = (&sym.name, sym.def) else { return None };
        if sym.kind == SymbolKind::Section || !graph.is_block_live(block) {
            return None;
        }
        let placed = *addrs.layout.tls.offsets.get(g)?.get(block as usize)?;
        let target = addrs.res.targets[g][s];
        if placed == NOT_PLACED
            || (sym.scope == Scope::Global && !matches!(target, Target::Block { graph, .. } if graph as usize == g))
        {
            return None;
        }
        Some(ThreadLocalInfo {
            name: name.to_string(),
            offset: placed + offset,
            size: sym.size,
            scope: if sym.scope == Scope::Local { "local" } else { "global" },
            object: graph.name.clone(),
            section: graph.block_section(block).name.to_string(),
        })
    })
}

/// Names the file of the object loaded at an address (see
/// [`crate::graph::resolve::ExternalSymbols::object_at`]).
pub type ObjectAt<'a> = &'a dyn Fn(u64) -> Option<String>;

/// Gathers the link info once every address is known.
pub(crate) fn collect(
    graphs: &[LinkGraph],
    addrs: &Addresses,
    library_paths: &[String],
    object_at: ObjectAt,
    inputs: Vec<InputInfo>,
    phases: BTreeMap<String, f64>,
) -> LinkInfo {
    let base = addrs.base;
    let layout = addrs.layout;
    let page = crate::support::page_size();
    let segments = layout
        .segments
        .iter()
        .map(|s| SegmentInfo {
            name: s.kind.name().to_string(),
            address: base + s.offset,
            size: s.size.div_ceil(page) * page,
            protection: protection_string(s.kind.final_protection()),
        })
        .collect();
    let mut sections: Vec<SectionInfo> = layout
        .sections
        .iter()
        .map(|s| SectionInfo {
            name: s.name.clone(),
            segment: s.segment.name().to_string(),
            address: base + s.offset,
            size: s.size,
        })
        .collect();
    sections.sort_by(|a, b| (a.address, &a.name).cmp(&(b.address, &b.name)));

    let mut input_sections = Vec::new();
    let mut symbols = Vec::new();
    let mut counts = Counts { objects: graphs.len() as u64, ..Counts::default() };
    for (g, graph) in graphs.iter().enumerate() {
        for section in graph.sections.iter().filter(|s| !s.discarded) {
            counts.sections += 1;
            let placed: Vec<(u64, u64)> = section
                .blocks
                .iter()
                .filter_map(|&b| {
                    let offset = layout.block_offsets[g][b as usize];
                    (offset != NOT_PLACED).then(|| (base + offset, base + offset + graph.blocks[b as usize].size))
                })
                .collect();
            if let (Some(start), Some(end)) = (placed.iter().map(|p| p.0).min(), placed.iter().map(|p| p.1).max()) {
                input_sections.push(InputSectionInfo {
                    object: graph.name.clone(),
                    name: section.name.to_string(),
                    address: start,
                    size: end - start,
                });
            }
        }
        for (name, sym, block, address) in image_symbols(graph, g, addrs) {
            counts.symbols += 1;
            symbols.push(SymbolInfo {
                name: name.to_string(),
                address,
                size: sym.size,
                kind: kind_name(sym.kind),
                scope: if sym.scope == Scope::Local { "local" } else { "global" },
                object: graph.name.clone(),
                section: graph.block_section(block).name.to_string(),
            });
        }
    }
    let mut thread_locals: Vec<ThreadLocalInfo> =
        graphs.iter().enumerate().flat_map(|(g, graph)| image_thread_locals(graph, g, addrs)).collect();
    thread_locals.sort_by(|a, b| (a.offset, &a.name, &a.object).cmp(&(b.offset, &b.name, &b.object)));
    input_sections.sort_by(|a, b| (a.address, &a.object, &a.name).cmp(&(b.address, &b.object, &b.name)));
    symbols.sort_by(|a, b| (a.address, &a.name, &a.object).cmp(&(b.address, &b.name, &b.object)));

    let names = TargetNames::new(graphs, addrs);
    let got = addrs
        .tables
        .got
        .iter()
        .map(|&(slot, _)| {
            let (kind, target) = match slot {
                // A stub's slot holds the function's address too.
                GotSlot::Address(t) | GotSlot::JumpSlot(t) => ("address", Some(t)),
                GotSlot::TpOffset(t) => ("tp-offset", Some(t)),
                GotSlot::TlsIndex(t) => ("tls-index", Some(t)),
                GotSlot::TlsModule => ("tls-module", None),
                GotSlot::TlsDescriptor(t) => ("tls-descriptor", Some(t)),
            };
            let (name, object) = target.map(|t| names.name(t, addrs)).unwrap_or_default();
            let value = match slot {
                GotSlot::Address(t) => addrs.address(t).ok(),
                GotSlot::JumpSlot(Target::External(e)) => Some(addrs.res.externals[e as usize].address),
                // Filled when the image is initialized, by the resolver.
                GotSlot::JumpSlot(Target::Ifunc(_)) => None,
                GotSlot::JumpSlot(t) => addrs.address(t).ok(),
                _ => None,
            };
            GotEntryInfo {
                address: addrs.got_entry(slot).unwrap_or(0),
                kind,
                target: name,
                target_object: object,
                value,
            }
        })
        .collect::<Vec<_>>();
    let stubs = addrs
        .tables
        .stubs
        .iter()
        .map(|&(target, word)| {
            let (name, object) = names.name(target, addrs);
            StubInfo {
                address: addrs.stub(target).unwrap_or(0),
                size: addrs.cpu.stub_size(),
                target: name,
                target_object: object,
                target_address: addrs.address(target).unwrap_or(0),
                got_entry: addrs.got() + 8 * word,
            }
        })
        .collect::<Vec<_>>();
    let mut externals: Vec<ExternalInfo> = addrs
        .res
        .externals
        .iter()
        .map(|e| ExternalInfo {
            name: e.name.to_string(),
            address: e.address,
            library: defining_library(e.address, e.library, library_paths, object_at),
        })
        .collect();
    externals.sort_by(|a, b| a.name.cmp(&b.name));

    counts.relocations = addrs.tables.edge_counts.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    counts.got_entries = got.len() as u64;
    counts.stubs = stubs.len() as u64;
    LinkInfo {
        base,
        size: layout.size,
        inputs,
        segments,
        sections,
        input_sections,
        symbols,
        thread_locals,
        got,
        got_base: addrs.table_blocks.got.map(|_| addrs.got()),
        stubs,
        externals,
        counts,
        phases,
        lines: None,
    }
}

impl LinkInfo {
    /// The symbol whose `[address, address + size)` holds `addr`, or the
    /// nearest one below it in the same input section when sizes are 0.
    pub fn symbolize(&self, addr: u64) -> Option<(&SymbolInfo, u64)> {
        let below = &self.symbols[..self.symbols.partition_point(|s| s.address <= addr)];
        let near = || below.iter().rev().take_while(|s| addr - s.address < (1 << 24));
        near()
            .find(|s| s.kind == "function" && addr < s.address + s.size.max(1))
            .or_else(|| {
                near().find(|s| {
                    (s.size > 0 && addr < s.address + s.size) || (s.size == 0 && self.same_input_section(s, addr))
                })
            })
            .map(|s| (s, addr - s.address))
    }

    fn same_input_section(&self, sym: &SymbolInfo, addr: u64) -> bool {
        self.input_sections.iter().any(|sec| {
            sec.object == sym.object
                && sec.name == sym.section
                && (sec.address..sec.address + sec.size).contains(&sym.address)
                && (sec.address..sec.address + sec.size).contains(&addr)
        })
    }

    /// The input section holding `addr`.
    pub fn input_section_at(&self, addr: u64) -> Option<&InputSectionInfo> {
        self.input_sections.iter().find(|s| (s.address..s.address + s.size.max(1)).contains(&addr))
    }

    /// Defined functions, for the perf map and the debugger.
    pub fn functions(&self) -> impl Iterator<Item = &SymbolInfo> {
        self.symbols.iter().filter(|s| s.kind == "function")
    }
}
