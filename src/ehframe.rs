//! `.eh_frame`: pruning of FDEs that describe discarded code, and
//! registration with the unwinder.
//!
//! A linker drops the FDEs of functions in discarded COMDAT copies; left
//! in, they would point at nothing and confuse the unwinder. We do the
//! same before resolution, rewriting the block and shifting its edges.

use anyhow::{anyhow, bail, Result};

use crate::model::*;

/// Removes FDEs whose function lies in a discarded section, and any
/// zero terminators (the image gets exactly one, at the end).
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
        let bytes = bytes.to_vec();
        let mut edges = block.edges.clone();
        edges.sort_by_key(|e| e.offset);
        let records = split_records(&bytes).map_err(|e| anyhow!("{}: section .eh_frame: {}", graph.name, e))?;
        let dropped = |rec: &Record| -> bool {
            if rec.is_terminator {
                return true;
            }
            if !has_discarded || rec.cie_pointer == 0 {
                return false;
            }
            // The FDE's pc_begin field sits right after the CIE pointer.
            let pc_begin = rec.start + 8;
            edges.iter().find(|e| e.offset == pc_begin).is_some_and(|e| match graph.symbols[e.target as usize].def {
                SymbolDef::Defined { block, .. } => !graph.is_block_live(block),
                SymbolDef::NotLoaded => true,
                _ => false,
            })
        };
        if !records.iter().any(dropped) {
            continue;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut new_start = vec![u64::MAX; records.len()];
        let mut new_edges = Vec::with_capacity(edges.len());
        for (i, rec) in records.iter().enumerate() {
            if dropped(rec) {
                continue;
            }
            let start = out.len() as u64;
            new_start[i] = start;
            out.extend_from_slice(&bytes[rec.start as usize..rec.end as usize]);
            if rec.cie_pointer != 0 {
                // Re-point the FDE at its CIE's new position.
                let cie_old = rec.start + 4 - rec.cie_pointer as u64;
                let cie = records.iter().position(|r| r.start == cie_old).ok_or_else(|| {
                    anyhow!("{}: section .eh_frame+{:#x}: FDE points at no CIE", graph.name, rec.start)
                })?;
                if new_start[cie] == u64::MAX {
                    bail!("{}: section .eh_frame+{:#x}: FDE precedes its CIE", graph.name, rec.start);
                }
                let pointer = (start + 4 - new_start[cie]) as u32;
                out[start as usize + 4..start as usize + 8].copy_from_slice(&pointer.to_le_bytes());
            }
            for e in edges.iter().filter(|e| e.offset >= rec.start && e.offset < rec.end) {
                new_edges.push(Edge { offset: e.offset - rec.start + start, ..*e });
            }
        }
        let block = &mut graph.blocks[b];
        block.size = out.len() as u64;
        block.content = Content::Owned(out);
        block.edges = new_edges;
    }
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

extern "C" {
    fn __register_frame(begin: *const u8);
    fn __deregister_frame(begin: *const u8);
}

/// Registers the image's `.eh_frame` (terminated by a zero word) with the
/// unwinder libgcc_s provides to this process.
pub fn register(eh_frame: u64) {
    // SAFETY: `eh_frame` points to a complete, relocated `.eh_frame` section
    // with a zero terminator, which stays mapped until `deregister`.
    unsafe { __register_frame(eh_frame as *const u8) }
}

pub fn deregister(eh_frame: u64) {
    // SAFETY: the same pointer was registered by `register`.
    unsafe { __deregister_frame(eh_frame as *const u8) }
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
}
