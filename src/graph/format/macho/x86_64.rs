//! Mach-O x86-64 relocations (`X86_64_RELOC_*`) → the x86-64 fixup kinds.
//!
//! | relocation | kind | addend |
//! |---|---|---|
//! | `UNSIGNED` 8/4 bytes | `Abs64`/`Abs32` (`TpOff64` for a `__thread_vars` offset word) | in place |
//! | `SIGNED`, `SIGNED_1/2/4` | `Pc32` (the `_N` forms address a field `N` bytes before the end of the instruction) | in place − 4 |
//! | `BRANCH` | `Branch32` (a stub when far) | in place − 4 |
//! | `GOT_LOAD`, `TLV` | `RexGotPcRelX` (relaxed to `lea` when near) | in place − 4 |
//! | `GOT` | `GotPcRel32` | in place − 4 |
//! | `SUBTRACTOR` + `UNSIGNED` | `Delta32`/`Delta64` (`S + A - B`) | in place |

use object::macho::*;

use super::{describe, Decoded, EdgeBuilder, RelocInfo, S_THREAD_LOCAL_VARIABLES};
use crate::arch::x86_64::Kind as X86;
use crate::arch::EdgeKind;
use crate::graph::model::*;

/// Name of an `X86_64_RELOC_*` number, for messages.
pub fn reloc_name(r_type: u8) -> &'static str {
    match r_type {
        X86_64_RELOC_UNSIGNED => "X86_64_RELOC_UNSIGNED",
        X86_64_RELOC_SIGNED => "X86_64_RELOC_SIGNED",
        X86_64_RELOC_BRANCH => "X86_64_RELOC_BRANCH",
        X86_64_RELOC_GOT_LOAD => "X86_64_RELOC_GOT_LOAD",
        X86_64_RELOC_GOT => "X86_64_RELOC_GOT",
        X86_64_RELOC_SUBTRACTOR => "X86_64_RELOC_SUBTRACTOR",
        X86_64_RELOC_SIGNED_1 => "X86_64_RELOC_SIGNED_1",
        X86_64_RELOC_SIGNED_2 => "X86_64_RELOC_SIGNED_2",
        X86_64_RELOC_SIGNED_4 => "X86_64_RELOC_SIGNED_4",
        X86_64_RELOC_TLV => "X86_64_RELOC_TLV",
        _ => "an unknown relocation type",
    }
}

/// Decodes the relocation at the start of `relocs` (with its pair, for a
/// `SUBTRACTOR`); returns it and how many entries it used.
pub(super) fn decode(b: &mut EdgeBuilder, section: usize, relocs: &[RelocInfo]) -> anyhow::Result<(Decoded, usize)> {
    let r = relocs[0];
    let offset = u64::from(r.address);
    b.check_bounds(section, r)?;
    let (pair, used) = if r.r_type == X86_64_RELOC_SUBTRACTOR {
        match relocs.get(1).copied() {
            Some(n)
                if n.r_type == X86_64_RELOC_UNSIGNED && n.address == r.address && n.length == r.length && !n.pcrel =>
            {
                (Some(n), 2)
            }
            _ => return Err(b.fail(
                section,
                offset,
                "X86_64_RELOC_SUBTRACTOR is not followed by its X86_64_RELOC_UNSIGNED pair (same offset and length)",
            )),
        }
    } else {
        (None, 1)
    };
    let inplace = b.read_signed(section, offset, 1 << r.length);
    let place = b.sections[section].addr + offset;
    let (kind, target, addend, subtrahend) = decode_one(b, section, r, pair, inplace, place)
        .map_err(|what| b.fail(section, offset, format_args!("{}: {}", describe(b.graph.cpu, r), what)))?;
    Ok((Decoded { r, kind, target, addend, subtrahend }, used))
}

/// One relocation (or SUBTRACTOR pair) → (kind, target, addend, subtrahend).
fn decode_one(
    this: &mut EdgeBuilder,
    section: usize,
    r: RelocInfo,
    pair: Option<RelocInfo>,
    inplace: i64,
    place: u64,
) -> Result<(EdgeKind, SymbolId, i64, SymbolId), String> {
    // For a section-relative pc-relative field the in-place value is
    // the distance from the end of the instruction (`N` bytes of
    // immediate after the 4-byte field) to the target.
    let pcrel_by_address = |this: &mut EdgeBuilder, extra: i64| {
        let target_addr = (place as i64).wrapping_add(4 + extra).wrapping_add(inplace);
        let (sym, addend) = this.symbol_at_address((r.symbolnum as usize).wrapping_sub(1), target_addr)?;
        Ok::<_, String>((sym, addend - 4 - extra))
    };
    let target_of = |this: &mut EdgeBuilder| -> Result<SymbolId, String> {
        if !r.external {
            return Err("must refer to a symbol (r_extern = 1)".to_string());
        }
        this.symbol_index(r.symbolnum)
    };
    match (r.r_type, r.pcrel, r.length) {
        (X86_64_RELOC_UNSIGNED, false, 2 | 3) => {
            let kind = if r.length == 3 { X86::Abs64 } else { X86::Abs32 };
            let (target, addend) = if r.external {
                (this.symbol_index(r.symbolnum)?, inplace)
            } else {
                this.symbol_at_address((r.symbolnum as usize).wrapping_sub(1), inplace)?
            };
            let kind = if kind == X86::Abs64
                && this.sections[section].sect_type == S_THREAD_LOCAL_VARIABLES
                && this.is_tls(target)
            {
                // A descriptor's `offset` word: the variable's
                // thread-pointer offset, for __jitrun_tlv_get_addr.
                X86::TpOff64
            } else {
                kind
            };
            Ok((EdgeKind::X86_64(kind), target, addend, 0))
        }
        (X86_64_RELOC_SIGNED | X86_64_RELOC_SIGNED_1 | X86_64_RELOC_SIGNED_2 | X86_64_RELOC_SIGNED_4, true, 2) => {
            let extra = match r.r_type {
                X86_64_RELOC_SIGNED_1 => 1,
                X86_64_RELOC_SIGNED_2 => 2,
                X86_64_RELOC_SIGNED_4 => 4,
                _ => 0,
            };
            if r.external {
                Ok((EdgeKind::X86_64(X86::Pc32), this.symbol_index(r.symbolnum)?, inplace - 4, 0))
            } else {
                let (sym, addend) = pcrel_by_address(this, extra)?;
                Ok((EdgeKind::X86_64(X86::Pc32), sym, addend, 0))
            }
        }
        (X86_64_RELOC_BRANCH, true, 2) => {
            if r.external {
                Ok((EdgeKind::X86_64(X86::Branch32), this.symbol_index(r.symbolnum)?, inplace - 4, 0))
            } else {
                let (sym, addend) = pcrel_by_address(this, 0)?;
                Ok((EdgeKind::X86_64(X86::Branch32), sym, addend, 0))
            }
        }
        (X86_64_RELOC_GOT_LOAD | X86_64_RELOC_TLV, true, 2) => {
            let target = target_of(this)?;
            if r.r_type == X86_64_RELOC_TLV {
                this.mark_thread_local_reference(target);
            }
            Ok((EdgeKind::X86_64(X86::RexGotPcRelX), target, inplace - 4, 0))
        }
        (X86_64_RELOC_GOT, true, 2) => Ok((EdgeKind::X86_64(X86::GotPcRel32), target_of(this)?, inplace - 4, 0)),
        (X86_64_RELOC_SUBTRACTOR, false, 2 | 3) => {
            let pair = pair.expect("checked by the caller");
            let (minuend, addend, subtrahend) = this.subtractor_pair(r, pair, inplace)?;
            let kind = if r.length == 3 { X86::Delta64 } else { X86::Delta32 };
            Ok((EdgeKind::X86_64(kind), minuend, addend, subtrahend))
        }
        _ => Err("this combination of type, pc-relative flag and length is not supported".to_string()),
    }
}
