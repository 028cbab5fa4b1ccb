//! The memory manager's half: which blocks go into which segment, in what
//! order and at what offset. Deterministic for the same inputs, so link
//! maps can be diffed.
//!
//! Segments, each starting on a page, in this order:
//! text (RX) · read-only (R; in the text segment after the code where the
//! CPU's executables have it so, see [`SegmentRules`]) · relro (RW while
//! linking, R before the entry runs: GOT, init arrays, `.data.rel.ro`) ·
//! data (RW) · bss (RW, zero).
//! Thread-local blocks are laid out separately as the TLS template.

use rustc_hash::FxHashMap;

use crate::graph::model::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentKind {
    Text,
    ReadOnly,
    RelRo,
    Data,
    Bss,
}

impl SegmentKind {
    pub fn name(self) -> &'static str {
        match self {
            SegmentKind::Text => "text",
            SegmentKind::ReadOnly => "rodata",
            SegmentKind::RelRo => "relro",
            SegmentKind::Data => "data",
            SegmentKind::Bss => "bss",
        }
    }

    /// Protection once the image is initialized.
    pub fn final_protection(self) -> region::Protection {
        match self {
            SegmentKind::Text => region::Protection::READ_EXECUTE,
            SegmentKind::ReadOnly | SegmentKind::RelRo => region::Protection::READ,
            SegmentKind::Data | SegmentKind::Bss => region::Protection::READ_WRITE,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Segment {
    pub kind: SegmentKind,
    /// Offset from the image base; page aligned.
    pub offset: u64,
    pub size: u64,
}

#[derive(Clone, Debug)]
pub struct OutputSection {
    pub name: String,
    pub segment: SegmentKind,
    pub offset: u64,
    pub size: u64,
}

/// Where each block of each graph lives in the image.
pub struct Layout {
    pub segments: Vec<Segment>,
    pub sections: Vec<OutputSection>,
    /// Output section name → index in `sections` (looked up per fixup).
    section_index: FxHashMap<String, usize>,
    /// `block_offsets[graph][block]`: offset from the image base, or
    /// `NOT_PLACED` for discarded and thread-local blocks.
    pub block_offsets: Vec<Vec<u64>>,
    /// Offsets of thread-local blocks inside the TLS template.
    pub tls: TlsLayout,
    pub size: u64,
    /// Alignment the image base needs (at least a page).
    pub align: u64,
}

/// The TLS template: `.tdata` blocks (initialized) then `.tbss` (zero).
#[derive(Default, Clone, Debug)]
pub struct TlsLayout {
    /// `offsets[graph][block]` inside the template, or `NOT_PLACED`.
    pub offsets: Vec<Vec<u64>>,
    /// Bytes with initial contents (`.tdata`), a prefix of `size`.
    pub init_size: u64,
    pub size: u64,
    pub align: u64,
}

pub const NOT_PLACED: u64 = u64::MAX;

/// The output section an input section joins, as ld's default script names it.
pub fn output_section_name(name: &str, kind: SectionKind) -> &str {
    let base =
        |prefix: &'static str| name == prefix || name.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.'));
    match kind {
        SectionKind::InitArray(InitKind::PreinitArray) => ".preinit_array",
        SectionKind::InitArray(InitKind::InitArray | InitKind::Ctors) => ".init_array",
        SectionKind::InitArray(InitKind::FiniArray | InitKind::Dtors) => ".fini_array",
        SectionKind::EhFrame => ".eh_frame",
        SectionKind::TlsData => ".tdata",
        SectionKind::TlsZeroFill => ".tbss",
        SectionKind::RelRo => ".data.rel.ro",
        _ if base(".text") => ".text",
        _ if base(".rodata") => ".rodata",
        _ if base(".data") => ".data",
        _ if base(".bss") => ".bss",
        _ if base(".gcc_except_table") => ".gcc_except_table",
        _ => name,
    }
}

fn segment_of(kind: SectionKind) -> Option<SegmentKind> {
    Some(match kind {
        SectionKind::Code => SegmentKind::Text,
        SectionKind::ReadOnly | SectionKind::EhFrame => SegmentKind::ReadOnly,
        SectionKind::RelRo | SectionKind::InitArray(_) => SegmentKind::RelRo,
        SectionKind::Data => SegmentKind::Data,
        SectionKind::ZeroFill => SegmentKind::Bss,
        SectionKind::TlsData | SectionKind::TlsZeroFill => return None,
    })
}

/// Well-known output sections come first in their segment, in this order;
/// others follow in order of first appearance.
fn section_rank(name: &str) -> u32 {
    match name {
        ".init" => 0,
        ".text" => 1,
        ".fini" => 2,
        ".plt" => 3,
        ".rodata" => 0,
        ".gcc_except_table" => 2,
        ".eh_frame" => 3,
        ".preinit_array" => 0,
        ".init_array" => 1,
        ".fini_array" => 2,
        ".data.rel.ro" => 3,
        ".got" => 4,
        ".data" => 0,
        ".bss" => 0,
        _ => 1,
    }
}

/// Rounds up; saturates instead of overflowing, so absurd sizes reach the
/// image-size limit check as huge numbers rather than wrapping around.
fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align).saturating_mul(align)
}

/// How the segments of an image are cut, by the machine it is for.
#[derive(Clone, Copy, Debug)]
pub struct SegmentRules {
    /// Segments start on these boundaries (the machine's page size).
    pub page: u64,
    /// Read-only data shares the code's segment (after the code), as GNU
    /// ld lays it out by default on aarch64 (`-z noseparate-code`); else
    /// it has a read-only segment of its own, as on x86-64.
    pub read_only_with_code: bool,
}

/// Lays out `graphs` in segments by `rules`.
pub fn compute(graphs: &[LinkGraph], rules: SegmentRules) -> Layout {
    let page = rules.page;
    // (segment, data after code, rank, first appearance, name) → blocks
    // with their sort keys.
    struct Pending<'a> {
        segment: SegmentKind,
        read_only_data: bool,
        rank: u32,
        first: usize,
        name: &'a str,
        blocks: Vec<(u32, u32, BlockId)>,
    }
    let mut by_name: FxHashMap<(SegmentKind, &str), usize> = FxHashMap::default();
    let mut pending: Vec<Pending> = Vec::new();
    let mut tls_blocks: Vec<(bool, u32, BlockId)> = Vec::new();
    for (g, graph) in graphs.iter().enumerate() {
        for section in graph.sections.iter().filter(|s| !s.discarded) {
            let out_name = output_section_name(&section.name, section.kind);
            let Some(segment) = segment_of(section.kind) else {
                let is_bss = section.kind == SectionKind::TlsZeroFill;
                tls_blocks.extend(section.blocks.iter().map(|&b| (is_bss, g as u32, b)));
                continue;
            };
            let read_only_data = segment == SegmentKind::ReadOnly;
            let segment = if read_only_data && rules.read_only_with_code { SegmentKind::Text } else { segment };
            let next = pending.len();
            let idx = *by_name.entry((segment, out_name)).or_insert(next);
            if idx == next {
                pending.push(Pending {
                    segment,
                    read_only_data,
                    rank: section_rank(out_name),
                    first: next,
                    name: out_name,
                    blocks: Vec::new(),
                });
            }
            pending[idx].blocks.extend(section.blocks.iter().map(|&b| (section.priority, g as u32, b)));
        }
    }
    pending.sort_by_key(|p| (p.segment, p.read_only_data, p.rank, p.first));

    let mut block_offsets: Vec<Vec<u64>> = graphs.iter().map(|g| vec![NOT_PLACED; g.blocks.len()]).collect();
    let mut segments: Vec<Segment> = Vec::new();
    let mut sections = Vec::new();
    let mut cursor = 0u64;
    let mut max_align = page;
    for p in &mut pending {
        if segments.last().is_none_or(|s: &Segment| s.kind != p.segment) {
            if let Some(last) = segments.last_mut() {
                last.size = cursor - last.offset;
            }
            cursor = align_up(cursor, page);
            segments.push(Segment { kind: p.segment, offset: cursor, size: 0 });
        }
        // Stable sort keeps input order among equal priorities.
        p.blocks.sort_by_key(|&(priority, g, _)| (priority, g));
        // Like ld, the output section is aligned to its most aligned input,
        // so the padding between inputs (which `__start_SEC`/`__stop_SEC`
        // users see) is the same as in a native link.
        let section_align =
            p.blocks.iter().map(|&(_, g, b)| graphs[g as usize].blocks[b as usize].align).max().unwrap_or(1);
        max_align = max_align.max(section_align);
        cursor = align_up(cursor, section_align);
        let start = cursor;
        for &(_, g, b) in &p.blocks {
            let block = &graphs[g as usize].blocks[b as usize];
            cursor = align_up(cursor, block.align);
            block_offsets[g as usize][b as usize] = cursor;
            cursor = cursor.saturating_add(block.size);
        }
        sections.push(OutputSection {
            name: p.name.to_string(),
            segment: p.segment,
            offset: start,
            size: cursor - start,
        });
    }
    if let Some(last) = segments.last_mut() {
        last.size = cursor - last.offset;
    }
    let size = align_up(cursor.max(1), page);

    // TLS template: initialized data first, then zero-fill, like PT_TLS.
    tls_blocks.sort_by_key(|&(is_bss, g, _)| (is_bss, g));
    let mut tls = TlsLayout {
        offsets: graphs.iter().map(|g| vec![NOT_PLACED; g.blocks.len()]).collect(),
        align: 1,
        ..Default::default()
    };
    let mut tls_cursor = 0u64;
    for &(is_bss, g, b) in &tls_blocks {
        let block = &graphs[g as usize].blocks[b as usize];
        tls.align = tls.align.max(block.align);
        tls_cursor = align_up(tls_cursor, block.align);
        tls.offsets[g as usize][b as usize] = tls_cursor;
        tls_cursor = tls_cursor.saturating_add(block.size);
        if !is_bss {
            tls.init_size = tls_cursor;
        }
    }
    tls.size = tls_cursor;

    // The first output section of a name wins, as a linear search would.
    let mut section_index = FxHashMap::default();
    for (i, s) in sections.iter().enumerate() {
        section_index.entry(s.name.clone()).or_insert(i);
    }
    Layout { segments, sections, section_index, block_offsets, tls, size, align: max_align }
}

impl Layout {
    pub fn section(&self, name: &str) -> Option<&OutputSection> {
        self.section_index.get(name).map(|&i| &self.sections[i])
    }

    pub fn segment_end(&self, kinds: &[SegmentKind]) -> u64 {
        self.segments.iter().filter(|s| kinds.contains(&s.kind)).map(|s| s.offset + s.size).max().unwrap_or(0)
    }

    /// Where the first segment of `kind` starts, if there is one.
    pub fn segment_start(&self, kind: SegmentKind) -> Option<u64> {
        self.segments.iter().filter(|s| s.kind == kind).map(|s| s.offset).min()
    }

    /// Where initialized data ends (`_edata`): past everything but zero-fill.
    pub fn data_end(&self) -> u64 {
        self.segment_end(&[SegmentKind::Text, SegmentKind::ReadOnly, SegmentKind::RelRo, SegmentKind::Data])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;
    const RULES: SegmentRules = SegmentRules { page: PAGE, read_only_with_code: false };

    fn graph_with(sections: &[(&str, SectionKind, u64, u64)]) -> LinkGraph {
        let mut g = LinkGraph::new("t.o".into(), crate::arch::Cpu::X86_64, None);
        for &(name, kind, size, align) in sections {
            let s = g.add_section(name, kind);
            g.add_block(s, Content::Zero, size, align);
        }
        g
    }

    #[test]
    fn output_names_follow_ld() {
        assert_eq!(output_section_name(".text.hot.main", SectionKind::Code), ".text");
        assert_eq!(output_section_name(".textual", SectionKind::Code), ".textual");
        assert_eq!(output_section_name(".rodata.str1.1", SectionKind::ReadOnly), ".rodata");
        assert_eq!(output_section_name("my_items", SectionKind::Data), "my_items");
        assert_eq!(output_section_name(".ctors.65435", SectionKind::InitArray(InitKind::Ctors)), ".init_array");
    }

    #[test]
    fn segments_are_page_aligned_and_ordered_by_protection() {
        let g = graph_with(&[
            (".data", SectionKind::Data, 10, 8),
            (".text", SectionKind::Code, 100, 16),
            (".bss", SectionKind::ZeroFill, 5000, 4096),
            (".rodata", SectionKind::ReadOnly, 3, 1),
        ]);
        let layout = compute(&[g], RULES);
        let kinds: Vec<_> = layout.segments.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [SegmentKind::Text, SegmentKind::ReadOnly, SegmentKind::Data, SegmentKind::Bss]);
        for s in &layout.segments {
            assert_eq!(s.offset % PAGE, 0);
        }
        assert_eq!(layout.block_offsets[0][2] % 4096, 0);
        assert_eq!(layout.align, PAGE.max(4096));
        assert!(layout.size >= layout.segment_end(&[SegmentKind::Bss]));
    }

    /// Where the CPU keeps read-only data with the code (aarch64), it
    /// follows the code in the text segment, even when it comes first.
    #[test]
    fn read_only_data_may_share_the_code_segment() {
        let g = graph_with(&[
            (".rodata", SectionKind::ReadOnly, 3, 1),
            (".text", SectionKind::Code, 100, 16),
            (".data", SectionKind::Data, 10, 8),
        ]);
        let layout = compute(&[g], SegmentRules { page: PAGE, read_only_with_code: true });
        let kinds: Vec<_> = layout.segments.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [SegmentKind::Text, SegmentKind::Data]);
        assert_eq!(layout.block_offsets[0][1], 0, "code first");
        assert_eq!(layout.block_offsets[0][0], 100, "then the read-only data, in the same page");
        assert_eq!(layout.section(".rodata").map(|s| s.segment), Some(SegmentKind::Text));
    }

    #[test]
    fn init_arrays_sort_by_priority_then_input_order() {
        let mut g = LinkGraph::new("t.o".into(), crate::arch::Cpu::X86_64, None);
        for (name, prio) in [(".init_array", 65536), (".init_array.00200", 200), (".init_array.00101", 101)] {
            let s = g.add_section(name, SectionKind::InitArray(InitKind::InitArray));
            g.sections[s as usize].priority = prio;
            g.add_block(s, Content::Zero, 8, 8);
        }
        let layout = compute(&[g], RULES);
        let off = &layout.block_offsets[0];
        assert!(off[2] < off[1] && off[1] < off[0]);
        let init = layout.section(".init_array").unwrap();
        assert_eq!(init.size, 24);
    }

    #[test]
    fn output_section_starts_at_its_largest_input_alignment() {
        // Two objects contribute to `my_numbers`: 8 bytes aligned 8, then 16
        // aligned 16. ld aligns the output section to 16, so the first input
        // starts there and 8 bytes of padding follow it: 32 bytes in all.
        let mut g = graph_with(&[(".rodata", SectionKind::ReadOnly, 8, 8)]);
        let s = g.add_section("my_numbers", SectionKind::ReadOnly);
        g.add_block(s, Content::Zero, 8, 8);
        let h = graph_with(&[("my_numbers", SectionKind::ReadOnly, 16, 16)]);
        let layout = compute(&[g, h], RULES);
        let section = layout.section("my_numbers").unwrap();
        assert_eq!(section.offset % 16, 0);
        assert_eq!(layout.block_offsets[0][1], section.offset);
        assert_eq!(layout.block_offsets[1][0], section.offset + 16);
        assert_eq!(section.size, 32);
    }

    #[test]
    fn tls_template_puts_tdata_before_tbss() {
        let g = graph_with(&[(".tbss", SectionKind::TlsZeroFill, 8, 8), (".tdata", SectionKind::TlsData, 4, 4)]);
        let layout = compute(&[g], RULES);
        assert_eq!(layout.tls.offsets[0][1], 0);
        assert_eq!(layout.tls.offsets[0][0], 8);
        assert_eq!(layout.tls.init_size, 4);
        assert_eq!(layout.tls.size, 16);
        assert_eq!(layout.block_offsets[0], vec![NOT_PLACED, NOT_PLACED]);
    }
}
