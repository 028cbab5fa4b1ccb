//! `.eh_frame`: checking what the unwinder will read, pruning of FDEs that
//! describe discarded code, and the search table of the FDEs (registering
//! it with this process's unwinders is `host::unwind`'s).
//!
//! A linker drops the FDEs of functions in discarded COMDAT copies; left
//! in, they would point at nothing and confuse the unwinder. We do the
//! same before resolution, rewriting the block and shifting its edges.

use anyhow::{anyhow, bail, Result};

use crate::graph::model::*;

/// Checks every `.eh_frame` block of a freshly translated graph (see
/// `validate`): the unwinder trusts every byte it is given, and a bad
/// encoding aborts the process the moment something unwinds. Front-ends
/// call it, so that it runs on the threads that translate objects.
pub fn check(graph: &LinkGraph) -> Result<()> {
    for block in &graph.blocks {
        if graph.sections[block.section as usize].kind != SectionKind::EhFrame {
            continue;
        }
        let Some(bytes) = block.bytes(graph.input.as_deref()) else {
            continue;
        };
        let edges = sorted_edges(block);
        let records = split_records(bytes).map_err(|e| anyhow!("{}: section .eh_frame: {}", graph.name, e))?;
        validate(bytes, &records, &edges).map_err(|e| anyhow!("{}: section .eh_frame{}", graph.name, e))?;
    }
    Ok(())
}

/// Applies now the `.eh_frame` relocations whose value the records decide
/// alone, as JITLink's `EHFrameEdgeFixer` does, so that every later reader
/// (the checks, pruning, the front-ends' pointer search, the unwinder) sees
/// the CIE pointers and addresses the relocations mean rather than the bytes
/// the assembler left:
///
/// - an edge whose target (and subtracted symbol) lie in the same
///   `.eh_frame` block has a value no layout changes (a Mach-O `SUBTRACTOR`
///   pair giving an FDE's CIE pointer, an ELF PC-relative relocation
///   against a label of the section): it is written into the bytes and
///   dropped;
/// - a difference `S + A - B` whose subtracted symbol `B` lies in the block
///   (an FDE's `pc_begin` as `function - FDE label`) is the PC-relative
///   `S + A' - P` with `A' = A + (P - B)`: the edge becomes that kind, so it
///   follows its record when pruning moves it.
///
/// Front-ends call it before [`check`].
pub fn resolve_internal_edges(graph: &mut LinkGraph) -> Result<()> {
    for b in 0..graph.blocks.len() {
        let block = &graph.blocks[b];
        if graph.sections[block.section as usize].kind != SectionKind::EhFrame {
            continue;
        }
        let in_block = |symbol: SymbolId| match graph.symbols.get(symbol as usize).map(|s| s.def) {
            Some(SymbolDef::Defined { block, offset }) if block as usize == b => Some(offset),
            _ => None,
        };
        let internal =
            |e: &Edge| in_block(e.target).is_some() || (e.kind.uses_subtrahend() && in_block(e.subtrahend).is_some());
        if !block.edges.iter().any(internal) {
            continue;
        }
        let Some(original) = block.bytes(graph.input.as_deref()) else {
            continue;
        };
        let mut bytes = original.to_vec();
        let cpu = graph.cpu;
        let mut kept = Vec::with_capacity(block.edges.len());
        for edge in &block.edges {
            let subtrahend = if edge.kind.uses_subtrahend() { in_block(edge.subtrahend) } else { None };
            match (in_block(edge.target), subtrahend) {
                (Some(s), b_offset) if b_offset.is_some() || !edge.kind.uses_subtrahend() => {
                    // Applied at two bases: equal bytes mean a value no
                    // layout changes. Otherwise (an absolute address) the
                    // edge stays for the linker.
                    let fail = |e: &dyn std::fmt::Display| {
                        anyhow!("{}: section .eh_frame+{:#x}: relocation {}: {}", graph.name, edge.offset, edge.kind, e)
                    };
                    let width = edge.kind.width() as usize;
                    let field = edge.offset as usize..edge.offset as usize + width;
                    let mut results = Vec::with_capacity(2);
                    for base in [0x1000_0000u64, 0x2000_0000] {
                        let mut scratch = bytes.clone();
                        let values = crate::arch::FixupValues {
                            p: base + u64::from(edge.offset),
                            s: base + s,
                            a: edge.addend,
                            got: 0,
                            g: None,
                            stub: None,
                            z: 0,
                            b: base + b_offset.unwrap_or(0),
                            movable: false,
                        };
                        edge.kind.apply(&mut scratch, edge.offset as usize, &values).map_err(|e| fail(&e))?;
                        results.push(scratch.get(field.clone()).ok_or_else(|| fail(&"runs past the block"))?.to_vec());
                    }
                    if results[0] == results[1] {
                        bytes[field].copy_from_slice(&results[0]);
                    } else {
                        kept.push(*edge);
                    }
                }
                (None, Some(b_offset)) => {
                    let kind = if edge.kind.width() == 8 { cpu.pc_relative64() } else { cpu.pc_relative32() };
                    let addend = edge.addend.wrapping_add(i64::from(edge.offset)).wrapping_sub(b_offset as i64);
                    kept.push(Edge::new(edge.offset, kind, edge.target, addend));
                }
                _ => kept.push(*edge),
            }
        }
        let block = &mut graph.blocks[b];
        block.content = Content::Owned(bytes);
        block.edges = kept;
    }
    Ok(())
}

/// Relocations come sorted by offset from every assembler seen; a copy is
/// sorted only when they are not.
fn sorted_edges(block: &Block) -> std::borrow::Cow<'_, [Edge]> {
    if block.edges.is_sorted_by_key(|e| e.offset) {
        std::borrow::Cow::Borrowed(&block.edges)
    } else {
        let mut sorted = block.edges.clone();
        sorted.sort_by_key(|e| e.offset);
        std::borrow::Cow::Owned(sorted)
    }
}

/// Whether the records of a checked `.eh_frame` include a zero terminator.
fn has_terminator(bytes: &[u8]) -> bool {
    let mut pos = 0usize;
    while let Some(length) = bytes.get(pos..pos + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())) {
        if length == 0 {
            return true;
        }
        pos += 4 + length as usize;
    }
    false
}

/// Removes FDEs whose function lies in a discarded section, and any
/// zero terminators (the image gets exactly one, at the end), and keeps
/// each block a multiple of its alignment (see `pad_last_record`). The
/// graph's `.eh_frame` was checked by [`check`] when it was translated.
pub fn prune(graph: &mut LinkGraph) -> Result<()> {
    let has_discarded = graph.sections.iter().any(|s| s.discarded);
    for b in 0..graph.blocks.len() {
        let block = &graph.blocks[b];
        if graph.sections[block.section as usize].kind != SectionKind::EhFrame
            || graph.sections[block.section as usize].discarded
        {
            continue;
        }
        let Some(bytes) = block.bytes(graph.input.as_deref()) else {
            continue;
        };
        // Nearly always nothing to do: no COMDAT copy was discarded,
        // compilers write no terminator (crtend.o does) and pad their
        // records to the section's alignment.
        let align = padded_alignment(block.align);
        let misaligned = !(bytes.len() as u64).is_multiple_of(align);
        if !has_discarded && !has_terminator(bytes) && !misaligned {
            continue;
        }
        let edges = sorted_edges(block);
        let records = split_records(bytes).map_err(|e| anyhow!("{}: section .eh_frame: {}", graph.name, e))?;
        let dropped = |rec: &Record| -> bool {
            if rec.is_terminator {
                return true;
            }
            if !has_discarded || rec.cie_pointer == 0 {
                return false;
            }
            // The FDE's pc_begin field sits right after the CIE pointer.
            let pc_begin = rec.start + 8;
            let at = edges.partition_point(|e| u64::from(e.offset) < pc_begin);
            edges.get(at).filter(|e| u64::from(e.offset) == pc_begin).is_some_and(|e| {
                match graph.symbols[e.target as usize].def {
                    SymbolDef::Defined { block, .. } => !graph.is_block_live(block),
                    SymbolDef::NotLoaded => true,
                    _ => false,
                }
            })
        };
        if !records.iter().any(dropped) && !misaligned {
            continue;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut last_start = None;
        let mut new_start = vec![u64::MAX; records.len()];
        let mut new_edges = Vec::with_capacity(edges.len());
        for (i, rec) in records.iter().enumerate() {
            if dropped(rec) {
                continue;
            }
            let start = out.len() as u64;
            new_start[i] = start;
            last_start = Some(start as usize);
            out.extend_from_slice(&bytes[rec.start as usize..rec.end as usize]);
            if rec.cie_pointer != 0 {
                // Re-point the FDE at its CIE's new position.
                let cie_old = rec.start + 4 - rec.cie_pointer as u64;
                let cie = record_starting_at(&records, cie_old).ok_or_else(|| {
                    anyhow!("{}: section .eh_frame+{:#x}: FDE points at no CIE", graph.name, rec.start)
                })?;
                if new_start[cie] == u64::MAX {
                    bail!("{}: section .eh_frame+{:#x}: FDE precedes its CIE", graph.name, rec.start);
                }
                let pointer = (start + 4 - new_start[cie]) as u32;
                out[start as usize + 4..start as usize + 8].copy_from_slice(&pointer.to_le_bytes());
            }
            let first = edges.partition_point(|e| u64::from(e.offset) < rec.start);
            for e in edges[first..].iter().take_while(|e| u64::from(e.offset) < rec.end) {
                // Records only move towards the start: the offset still fits.
                new_edges.push(Edge { offset: (u64::from(e.offset) - rec.start + start) as u32, ..*e });
            }
        }
        pad_last_record(&mut out, last_start, align)
            .map_err(|e| anyhow!("{}: section .eh_frame: {}", graph.name, e))?;
        let block = &mut graph.blocks[b];
        block.size = out.len() as u64;
        block.content = Content::Owned(out);
        block.edges = new_edges;
    }
    Ok(())
}

/// What an `.eh_frame` block's size is kept a multiple of: its alignment,
/// and at least 8, the largest alignment compilers give the section, so
/// that whatever block follows starts right after it.
fn padded_alignment(align: u64) -> u64 {
    align.max(8)
}

/// Lengthens the last record of `records` (starting at `last_start`) with
/// `DW_CFA_nop` instructions (zero bytes) until the contents are a multiple
/// of `align`, as ld pads the records it keeps. The image's `.eh_frame`
/// is the blocks of every object one after the other, each at its
/// alignment, and the unwinder reads a zero word in a gap between them as
/// the end of the section: every record after it, and so the unwind info
/// of every function after it, would be lost (C++ exceptions thrown there
/// end in `std::terminate`).
fn pad_last_record(records: &mut Vec<u8>, last_start: Option<usize>, align: u64) -> Result<(), String> {
    let pad = if align > 1 { (align - records.len() as u64 % align) % align } else { 0 };
    if pad == 0 {
        return Ok(());
    }
    let Some(start) = last_start else {
        // No record left: nothing the unwinder would read.
        records.clear();
        return Ok(());
    };
    let length = records
        .get(start..start + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .and_then(|l| l.checked_add(pad as u32))
        .ok_or_else(|| format!("+{:#x}: record cannot be padded", start))?;
    records[start..start + 4].copy_from_slice(&length.to_le_bytes());
    records.resize(records.len() + pad as usize, 0);
    Ok(())
}

struct Record {
    start: u64,
    end: u64,
    /// 0 for a CIE; for an FDE, the distance back to its CIE.
    cie_pointer: u32,
    is_terminator: bool,
}

fn split_records(bytes: &[u8]) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    let mut pos = 0usize;
    let read_u32 = |at: usize| -> Result<u32, String> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .ok_or_else(|| format!("record at {:#x} is truncated", at))
    };
    while pos < bytes.len() {
        let length = read_u32(pos)?;
        if length == 0 {
            records.push(Record { start: pos as u64, end: pos as u64 + 4, cie_pointer: 0, is_terminator: true });
            pos += 4;
            continue;
        }
        if length == 0xffff_ffff {
            return Err(format!("64-bit record at {:#x} is not supported", pos));
        }
        let end = pos.checked_add(4 + length as usize).filter(|&e| e <= bytes.len()).ok_or_else(|| {
            format!("record at {:#x} with length {:#x} runs past the end of the section", pos, length)
        })?;
        let cie_pointer = read_u32(pos + 4)?;
        if cie_pointer as usize > pos + 4 {
            return Err(format!("FDE at {:#x} points before the start of the section", pos));
        }
        records.push(Record { start: pos as u64, end: end as u64, cie_pointer, is_terminator: false });
        pos = end;
    }
    Ok(records)
}

/// Index of the record that starts at `start` (records are sorted).
fn record_starting_at(records: &[Record], start: u64) -> Option<usize> {
    records.binary_search_by_key(&start, |r| r.start).ok()
}

/// `DW_EH_PE_omit`: no value follows.
const ENCODING_OMIT: u8 = 0xff;

/// Checks what the unwinder will read: each FDE points at a CIE; each CIE
/// has a known version, a terminated augmentation string with known
/// letters, and pointer encodings the unwinder can decode; each FDE is long
/// enough for its address range; and fixups patch only the insides of
/// records, never their length or CIE fields. Errors start with `+offset: `.
fn validate(bytes: &[u8], records: &[Record], edges: &[Edge]) -> Result<(), String> {
    let mut fde_encoding_of_cie = rustc_hash::FxHashMap::default();
    // Compilers give every FDE of an object the same CIE: asked once.
    let mut last_cie: Option<(u64, u8)> = None;
    for rec in records.iter().filter(|r| !r.is_terminator) {
        let body = &bytes[rec.start as usize..rec.end as usize];
        if body.len() < 8 {
            return Err(format!("+{:#x}: record of {} bytes is too short", rec.start, body.len()));
        }
        if rec.cie_pointer == 0 {
            let encoding = parse_cie(body).map_err(|e| format!("+{:#x}: CIE: {}", rec.start, e))?;
            fde_encoding_of_cie.insert(rec.start, encoding);
        } else {
            let cie_start = rec.start + 4 - u64::from(rec.cie_pointer);
            let encoding = match last_cie {
                Some((start, encoding)) if start == cie_start => encoding,
                _ => {
                    let Some(&encoding) = fde_encoding_of_cie.get(&cie_start) else {
                        return Err(format!(
                            "+{:#x}: FDE points at {:#x}, which is not an earlier CIE",
                            rec.start, cie_start
                        ));
                    };
                    last_cie = Some((cie_start, encoding));
                    encoding
                }
            };
            // pc_begin and pc_range, then the augmentation data length.
            let needed = 8 + 2 * encoded_size(encoding).unwrap_or(1);
            if body.len() < needed {
                return Err(format!("+{:#x}: FDE of {} bytes cannot hold its address range", rec.start, body.len()));
            }
        }
    }
    // Edges come sorted by offset (`sorted_edges`), records are sorted and
    // contiguous: the record holding an edge is the last one starting at or
    // before it, found by walking both lists once.
    debug_assert!(edges.is_sorted_by_key(|e| e.offset));
    let mut holder = 0usize;
    for edge in edges {
        let offset = u64::from(edge.offset);
        let end = offset.saturating_add(edge.kind.width());
        while records.get(holder + 1).is_some_and(|r| r.start <= offset) {
            holder += 1;
        }
        let inside = records
            .get(holder)
            .is_some_and(|r| r.start <= offset && !r.is_terminator && offset >= r.start + 8 && end <= r.end);
        if !inside {
            return Err(format!(
                "+{:#x}: relocation {} patches a record's length or CIE pointer, or no record",
                edge.offset, edge.kind
            ));
        }
    }
    Ok(())
}

/// Parses a CIE (from its length field on); returns the FDE pointer
/// encoding (`R`), `DW_EH_PE_absptr` when absent.
fn parse_cie(body: &[u8]) -> Result<u8, String> {
    let mut r = Reader { bytes: body, pos: 8 };
    let version = r.u8()?;
    if version != 1 && version != 3 {
        return Err(format!("version {} is not 1 or 3", version));
    }
    let augmentation_start = r.pos;
    while r.u8()? != 0 {}
    let augmentation = &body[augmentation_start..r.pos - 1];
    if !augmentation.is_empty() && augmentation[0] != b'z' {
        return Err(format!("augmentation {:?} does not start with z", String::from_utf8_lossy(augmentation)));
    }
    r.uleb()?; // code alignment
    r.uleb()?; // data alignment (sleb; only its length matters here)
    if version == 1 {
        r.u8()?;
    } else {
        r.uleb()?;
    }
    let mut fde_encoding = 0;
    if augmentation.is_empty() {
        return Ok(fde_encoding);
    }
    let data_len = r.uleb()?;
    let data_end = (r.pos as u64).checked_add(data_len).filter(|&e| e <= body.len() as u64);
    let data_end = data_end.ok_or("augmentation data runs past the record")? as usize;
    for &letter in &augmentation[1..] {
        match letter {
            b'R' => {
                fde_encoding = r.u8()?;
                check_encoding(fde_encoding, false)?;
            }
            b'L' => check_encoding(r.u8()?, false)?,
            b'P' => {
                let encoding = r.u8()?;
                check_encoding(encoding, true)?;
                r.skip(encoded_size(encoding).ok_or("personality pointer with a variable-length encoding")?)?;
            }
            b'S' | b'B' => {}
            other => return Err(format!("unknown augmentation letter {:?}", other as char)),
        }
    }
    if r.pos > data_end {
        return Err("augmentation data is longer than its length says".into());
    }
    Ok(fde_encoding)
}

/// An encoding the unwinder decodes without aborting: a known value format
/// applied absolutely or PC-relative (indirect only where allowed).
fn check_encoding(encoding: u8, indirect_allowed: bool) -> Result<(), String> {
    if encoding == ENCODING_OMIT {
        return Ok(());
    }
    let indirect = encoding & 0x80 != 0;
    let known_format = matches!(encoding & 0x0f, 0x0..=0x4 | 0x9..=0xc);
    let known_application = matches!(encoding & 0x70, 0x00 | 0x10);
    if !known_format || !known_application || (indirect && !indirect_allowed) {
        return Err(format!("pointer encoding {:#04x} is not supported", encoding));
    }
    Ok(())
}

/// The value of a fixed-width encoded pointer at `at` in `bytes`, before
/// its application (absolute or PC-relative) is applied: 8 bytes
/// (`absptr`, `udata8`, `sdata8`), `udata4` or `sdata4` (sign-extended).
/// `None` for other formats, or when the field runs past `bytes`.
pub(crate) fn encoded_value(bytes: &[u8], at: usize, encoding: u8) -> Option<i64> {
    let field = |width: usize| bytes.get(at..at.checked_add(width)?);
    match encoding & 0x0f {
        0x0 | 0x4 | 0xc => Some(i64::from_le_bytes(field(8)?.try_into().ok()?)),
        0x3 => Some(i64::from(u32::from_le_bytes(field(4)?.try_into().ok()?))),
        0xb => Some(i64::from(i32::from_le_bytes(field(4)?.try_into().ok()?))),
        _ => None,
    }
}

/// Bytes an encoded pointer takes, `None` for LEB128 formats.
pub(crate) fn encoded_size(encoding: u8) -> Option<usize> {
    match encoding & 0x0f {
        0x0 | 0x4 | 0xc => Some(8),
        0x2 | 0xa => Some(2),
        0x3 | 0xb => Some(4),
        _ => None,
    }
}

/// Reads `.eh_frame` fields (both front-ends' parsers use it); errors say
/// what ran out.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl Reader<'_> {
    pub(crate) fn u8(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or("truncated")?;
        self.pos += 1;
        Ok(b)
    }
    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        let field = self.bytes.get(self.pos..self.pos.saturating_add(4)).ok_or("truncated")?;
        self.pos += 4;
        Ok(u32::from_le_bytes(field.try_into().expect("four bytes")))
    }
    pub(crate) fn uleb(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("LEB128 number longer than 64 bits".into())
    }
    pub(crate) fn skip(&mut self, n: usize) -> Result<(), String> {
        self.pos = self.pos.checked_add(n).filter(|&p| p <= self.bytes.len()).ok_or("truncated")?;
        Ok(())
    }
}

/// The FDEs of an `.eh_frame` section at `address` (`bytes`, relocated, as
/// the unwinder reads it): the address each one's code starts at and the
/// FDE's own address, sorted by the former, for the search table of an
/// `.eh_frame_hdr` (which a linker writes: the unwinder then finds a frame
/// by binary search, with no lock and no allocation).
pub fn search_table(address: u64, bytes: &[u8]) -> Result<Vec<(u64, u64)>, String> {
    let records = split_records(bytes)?;
    let mut fde_encoding_of_cie = rustc_hash::FxHashMap::default();
    let mut table = Vec::new();
    for rec in records.iter().filter(|r| !r.is_terminator) {
        let body = &bytes[rec.start as usize..rec.end as usize];
        if rec.cie_pointer == 0 {
            fde_encoding_of_cie.insert(rec.start, parse_cie(body)?);
            continue;
        }
        let cie_start = rec.start + 4 - u64::from(rec.cie_pointer);
        let &encoding = fde_encoding_of_cie.get(&cie_start).ok_or("an FDE without an earlier CIE")?;
        let field = address + rec.start + 8;
        let value = encoded_value(body, 8, encoding)
            .ok_or_else(|| format!("FDE pointer encoding {:#x} is not supported", encoding))?
            as u64;
        let pc_begin = if encoding & 0x70 == 0x10 { field.wrapping_add(value) } else { value };
        table.push((pc_begin, address + rec.start));
    }
    table.sort_unstable();
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cie_fde_and_terminator() {
        let mut b = Vec::new();
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(&16u32.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&0u32.to_le_bytes());
        let r = split_records(&b).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[1].cie_pointer, 16);
        assert!(r[2].is_terminator);
        assert!(split_records(&b[..10]).is_err());
    }

    /// A CIE with augmentation "zR" (FDE pointers: pcrel sdata4) and one FDE.
    fn cie_and_fde() -> Vec<u8> {
        let mut b = Vec::new();
        let cie_body = [0, 0, 0, 0, 1, b'z', b'R', 0, 1, 0x78, 16, 1, 0x1b, 0, 0, 0];
        b.extend_from_slice(&(cie_body.len() as u32).to_le_bytes());
        b.extend_from_slice(&cie_body);
        let fde_start = b.len() as u32;
        b.extend_from_slice(&16u32.to_le_bytes());
        b.extend_from_slice(&(fde_start + 4).to_le_bytes());
        b.extend_from_slice(&[0; 12]);
        b
    }

    fn check(bytes: &[u8], edge_offsets: &[u32]) -> Result<(), String> {
        let records = split_records(bytes)?;
        let edges: Vec<Edge> = edge_offsets
            .iter()
            .map(|&offset| Edge::new(offset, crate::arch::Cpu::X86_64.pc_relative32(), 1, 0))
            .collect();
        validate(bytes, &records, &edges)
    }

    /// A CIE at 0 and FDEs at 20 and 40, 20 bytes each: 60 bytes.
    fn cie_and_two_fdes() -> Vec<u8> {
        let mut b = cie_and_fde();
        let second = b.len() as u32;
        b.extend_from_slice(&16u32.to_le_bytes());
        b.extend_from_slice(&(second + 4).to_le_bytes());
        b.extend_from_slice(&[0; 12]);
        b
    }

    #[test]
    fn validation_accepts_what_compilers_emit() {
        let b = cie_and_fde();
        assert_eq!(check(&b, &[28]), Ok(()));
    }

    #[test]
    fn padding_lengthens_the_last_record_with_nops() {
        let mut b = cie_and_two_fdes();
        pad_last_record(&mut b, Some(40), 8).unwrap();
        assert_eq!(b.len(), 64);
        let records = split_records(&b).unwrap();
        assert_eq!((records.len(), records[2].end), (3, 64), "no zero word after the last record");
        assert!(b[60..].iter().all(|&x| x == 0), "DW_CFA_nop");
        assert_eq!(check(&b, &[28, 48]), Ok(()));
        let mut aligned = b.clone();
        pad_last_record(&mut aligned, Some(40), 8).unwrap();
        assert_eq!(aligned, b);
    }

    #[test]
    fn validation_walks_edges_across_several_fdes() {
        let b = cie_and_two_fdes();
        assert_eq!(check(&b, &[28, 32, 48, 52]), Ok(()));
        assert!(check(&b, &[28, 44]).unwrap_err().starts_with("+0x2c:"));
        assert!(check(&b, &[28, 60]).unwrap_err().contains("or no record"));
    }

    #[test]
    fn validation_refuses_what_would_crash_the_unwinder() {
        let mut bad_version = cie_and_fde();
        bad_version[8] = 2;
        assert!(check(&bad_version, &[]).unwrap_err().contains("version 2"));
        let mut bad_encoding = cie_and_fde();
        bad_encoding[16] = 0x5b;
        assert!(check(&bad_encoding, &[]).unwrap_err().contains("encoding 0x5b"));
        let mut unknown_letter = cie_and_fde();
        unknown_letter[10] = b'Q';
        assert!(check(&unknown_letter, &[]).unwrap_err().contains("unknown augmentation"));
        let mut fde_to_nowhere = cie_and_fde();
        fde_to_nowhere[24] = 8;
        assert!(check(&fde_to_nowhere, &[]).unwrap_err().contains("not an earlier CIE"));
        let b = cie_and_fde();
        assert!(check(&b, &[20]).unwrap_err().contains("length or CIE pointer"));
        assert!(check(&b, &[38]).unwrap_err().contains("length or CIE pointer"));
    }
}
