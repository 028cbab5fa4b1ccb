//! The link model kept after a link whose info is collected later
//! ([`crate::link::LinkOptions::defer_link_info`]): the graphs, their layout
//! and resolution, from which maps, reports and crash tables are made off
//! the critical path.

use crate::arch::Cpu;
use crate::graph::fixups::Addresses;
use crate::graph::layout::Layout;
use crate::graph::linkinfo::{self, InputInfo};
use crate::graph::model::*;
use crate::graph::resolve::ResolvedSymbols;
use crate::graph::tables::{TableBlocks, Tables};

/// What link info is computed from, kept by an image linked with
/// `LinkOptions::defer_link_info` until someone collects it.
pub struct DeferredLinkInfo {
    pub cpu: Cpu,
    pub graphs: Vec<LinkGraph>,
    pub layout: Layout,
    pub res: ResolvedSymbols,
    pub tables: Tables,
    pub table_blocks: TableBlocks,
    pub copies_in_use: Vec<bool>,
    pub base: u64,
    pub table_graph: u32,
    pub library_paths: Vec<String>,
    pub inputs: Vec<InputInfo>,
    pub phases: std::collections::BTreeMap<String, f64>,
}

impl DeferredLinkInfo {
    /// The addresses of the model's targets.
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
            tls: None,
            externals_move: false,
        }
    }

    /// Frees what collecting does not read (relocations, section contents,
    /// the inputs but those with line tables): kept while the program runs,
    /// they would add to its peak memory. Call from a thread with nothing
    /// else to do.
    pub fn release_unneeded(&mut self) {
        for graph in &mut self.graphs {
            // Line tables are read from the object itself.
            if !graph.has_line_info {
                graph.input = None;
            }
            for block in &mut graph.blocks {
                block.edges = Vec::new();
                block.elf_relocations = None;
                if matches!(block.content, Content::Owned(_)) {
                    block.content = Content::Zero;
                }
            }
        }
    }

    /// Computes the link info (and frees the link model).
    /// `object_at` names the file of the object at an address (the
    /// libraries that defined externals).
    pub fn collect(mut self, object_at: linkinfo::ObjectAt) -> crate::graph::linkinfo::LinkInfo {
        let (inputs, phases) = (std::mem::take(&mut self.inputs), std::mem::take(&mut self.phases));
        linkinfo::collect(&self.graphs, &self.addresses(), &self.library_paths, object_at, inputs, phases)
    }
}
