//! A link's graphs once placed: every block has its address, and the passes
//! that need addresses run here: the thread-local block, then contents
//! copied and every fixup applied in the mapper's working memory.

use anyhow::Result;

use super::{Destination, LinkOptions, LinkedGraphsHook};
use crate::arch::{Cpu, TlsVariant};
use crate::graph::deferred::DeferredLinkInfo;
use crate::graph::fixups::{self, Addresses, ExternalTls, TlsPlacement};
use crate::graph::layout::{Layout, TlsLayout, NOT_PLACED};
use crate::graph::linkinfo::{InputInfo, PhaseTimer};
use crate::graph::model::*;
use crate::graph::resolve::{ResolvedSymbols, Target};
use crate::graph::tables::{TableBlocks, Tables};
use crate::host::loader::SharedLibrary;
use crate::host::tls::{self, TlsModule};
use crate::image::SymbolMap;
use crate::memory::MemoryMapper;

/// What the passes have made of a link, up to a written image.
pub(super) struct Placed {
    pub destination: Destination,
    pub options: LinkOptions,
    pub cpu: Cpu,
    pub graphs: Vec<LinkGraph>,
    pub res: ResolvedSymbols,
    pub tables: Tables,
    /// The graph of the GOT, stubs and copy slots (the last), and its blocks.
    pub table_graph: u32,
    pub table_blocks: TableBlocks,
    pub layout: Layout,
    pub base: u64,
    pub copies_in_use: Vec<bool>,
    /// The image's thread-local block, loaded in this process.
    pub tls_module: Option<TlsModule>,
    /// Where thread-locals are, for fixups (the module's placement, or a
    /// static executable's for an image that will not run here).
    pub tls: Option<TlsPlacement>,
    /// The image's global symbols by name, once written.
    pub symbols: SymbolMap,
    pub libraries: Vec<SharedLibrary>,
    /// Which of `libraries` were named for the link and loaded.
    pub named_and_loaded: Vec<usize>,
    pub calls_a_sanitizer: bool,
    /// The runtime object holds a random stack guard (Mach-O).
    pub has_random_guard: bool,
    /// The runtime object jumps to jitrun's own functions (`dladdr`,
    /// `dlsym`, ...) at their addresses in this process.
    pub calls_jitrun: bool,
    pub on_linked: Option<LinkedGraphsHook>,
    pub inputs: Vec<InputInfo>,
    pub timer: PhaseTimer,
}

impl Placed {
    /// What the link info is later collected from (`--map`, reports,
    /// `--check`): the graphs and the decisions made about them.
    pub fn into_deferred_link_info(
        self,
        library_paths: Vec<String>,
        inputs: Vec<InputInfo>,
        phases: std::collections::BTreeMap<String, f64>,
    ) -> DeferredLinkInfo {
        DeferredLinkInfo {
            cpu: self.cpu,
            graphs: self.graphs,
            layout: self.layout,
            res: self.res,
            tables: self.tables,
            table_blocks: self.table_blocks,
            copies_in_use: self.copies_in_use,
            base: self.base,
            table_graph: self.table_graph,
            library_paths,
            inputs,
            phases,
        }
    }

    /// The addresses of the link's targets.
    pub fn addresses(&self) -> Addresses<'_> {
        Addresses {
            cpu: self.cpu,
            base: self.base,
            layout: &self.layout,
            res: &self.res,
            tables: &self.tables,
            table_graph: self.table_graph,
            table_blocks: &self.table_blocks,
            copies_in_use: &self.copies_in_use,
            tls: self.tls.as_ref(),
            externals_move: self.options.link_cache.is_some() && self.destination == Destination::ThisProcess,
        }
    }

    /// Places the thread-local block: in this process, a TLS module loaded
    /// with the template's final contents; for a buffer, where a static
    /// executable's block would be.
    pub fn place_thread_locals(&mut self) -> Result<()> {
        if self.layout.tls.size == 0 && !self.tables.uses_tls {
            return Ok(());
        }
        // The template's fixups use only ordinary addresses.
        let template = self.tls_template()?;
        let addrs = self.addresses();
        let descriptor_resolver = addrs.address(self.res.globals[crate::arch::runtime::TLSDESC_STATIC].target)?;
        match self.destination {
            Destination::ThisProcess => {
                let requests: Vec<tls::ExternalTlsRequest> = self
                    .tables
                    .tls_externals
                    .iter()
                    .map(|&(e, needs_tp_offset)| tls::ExternalTlsRequest {
                        name: self.res.externals[e as usize].name.to_string(),
                        needs_tp_offset,
                    })
                    .collect();
                let mut module = tls::allocate(&self.layout.tls, &template, &requests)?;
                module.placement.descriptor_resolver = descriptor_resolver;
                self.tls = Some(module.placement.clone());
                self.tls_module = Some(module);
            }
            Destination::Buffer => {
                let externals = self.tables.tls_externals.len();
                self.tls = Some(static_tls_placement(self.cpu, &self.layout.tls, descriptor_resolver, externals));
            }
        }
        Ok(())
    }

    /// The thread-local blocks' initial contents, fixed up.
    fn tls_template(&self) -> Result<Vec<u8>> {
        let addrs = self.addresses();
        let mut template = vec![0u8; self.layout.tls.size as usize];
        for (g, graph) in self.graphs.iter().enumerate() {
            for (b, block) in graph.blocks.iter().enumerate() {
                let tls_offset = self.layout.tls.offsets[g][b];
                if tls_offset == NOT_PLACED {
                    continue;
                }
                let bytes = &mut template[tls_offset as usize..(tls_offset + block.size) as usize];
                block.write_content(graph.input_bytes(), bytes);
                let block_fixups = fixups::BlockFixups { graph, g, b: b as BlockId, block_addr: tls_offset };
                block_fixups.apply(bytes, &addrs, &[], &mut Vec::new())?;
            }
        }
        Ok(template)
    }

    /// Copies every block's contents into the image in `mapper`'s working
    /// memory, applies every fixup, and writes the GOT and stubs; builds
    /// the map of global symbols meanwhile.
    pub fn write_image(&mut self, mapper: &mut dyn MemoryMapper) -> Result<()> {
        let symbols = {
            let (graphs, layout, cpu) = (&self.graphs, &self.layout, self.cpu);
            let addrs = self.addresses();
            let memory = mapper.prepare(self.base, layout.size, layout.data_end())?;
            // The padding between `.init` (`.fini`) fragments is run through,
            // so it is no-ops, as ld fills it.
            for section in [".init", ".fini"].iter().filter_map(|name| layout.section(name)) {
                if let Some(bytes) = memory.get_mut(section.offset as usize..(section.offset + section.size) as usize) {
                    Cpu::fill(bytes, cpu.nop());
                }
            }
            // The global symbols' map is built meanwhile when there is much
            // to write: it needs only the final addresses.
            let build_symbols = || global_symbol_map(&self.res, &addrs);
            let threads = crate::support::parallel::link_threads();
            let symbols =
                if threads > 1 && fixups::placed_blocks_weight(graphs, layout) >= fixups::PARALLEL_FIXUP_WEIGHT {
                    let helper = vec![crate::support::heap::on_helper_heap(build_symbols)];
                    let (map, fixed) = crate::support::threads::run_beside(helper, || {
                        fixups::copy_and_fix_blocks(memory, graphs, layout, &addrs, threads)
                    });
                    fixed?;
                    map.into_iter().next().expect("one helper, one map")
                } else {
                    fixups::copy_and_fix_blocks(memory, graphs, layout, &addrs, 1)?;
                    build_symbols()
                };
            // Copied: their pages need not stay resident next to the image's,
            // nor their files open while the program runs.
            for input in graphs.iter().filter_map(|g| g.input.as_ref()) {
                input.release_except(std::iter::empty());
                input.close_file();
            }
            fixups::write_tables(memory, &addrs)?;
            symbols
        };
        self.symbols = symbols;
        Ok(())
    }
}

/// Where a static executable's thread-local block would be: module 1, at
/// the thread-pointer offset the CPU's TLS variant gives the first block.
/// A shared library's variable has no place there (offset 0).
fn static_tls_placement(cpu: Cpu, tls: &TlsLayout, descriptor_resolver: u64, externals: usize) -> TlsPlacement {
    let align = tls.align.max(1);
    let tp_offset = match cpu.tls_variant() {
        TlsVariant::II => -(tls.size.next_multiple_of(align) as i64),
        TlsVariant::I { tcb_size } => tcb_size.next_multiple_of(align) as i64,
    };
    TlsPlacement { module_id: 1, tp_offset, descriptor_resolver, externals: vec![ExternalTls::default(); externals] }
}

/// The image's global symbols by name, for lookups once it is linked.
fn global_symbol_map(res: &ResolvedSymbols, addrs: &Addresses) -> SymbolMap {
    SymbolMap::new(
        res.globals
            .iter()
            .filter(|(_, g)| matches!(g.target, Target::Block { .. } | Target::Absolute(_) | Target::Ifunc(_)))
            .filter_map(|(name, g)| addrs.address(g.target).ok().map(|a| (&**name, a, Some(g.size)))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_executables_thread_locals_sit_by_the_cpus_variant() {
        let tls = TlsLayout { offsets: Vec::new(), init_size: 8, size: 24, align: 16 };
        assert_eq!(static_tls_placement(Cpu::X86_64, &tls, 0, 0).tp_offset, -32);
        assert_eq!(static_tls_placement(Cpu::Aarch64, &tls, 0, 0).tp_offset, 16);
        let wide = TlsLayout { align: 64, ..tls };
        assert_eq!(static_tls_placement(Cpu::Aarch64, &wide, 0, 2).tp_offset, 64);
        assert_eq!(static_tls_placement(Cpu::Aarch64, &wide, 0, 2).externals.len(), 2);
    }
}
