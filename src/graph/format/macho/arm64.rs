//! Mach-O arm64 relocations (`ARM64_RELOC_*`) → the aarch64 fixup kinds
//! ([`crate::arch::aarch64::Kind::from_macho`] holds the mapping; the
//! equations are the kinds' own, shared with ELF).
//!
//! | relocation | kind | addend |
//! |---|---|---|
//! | `UNSIGNED` 8/4 bytes | `Abs64`/`Abs32` (`TlsTpRel64` for a `__thread_vars` offset word) | in place; a section-relative one holds the target's object address |
//! | `SUBTRACTOR` + `UNSIGNED` 8/4 bytes | `Delta64`/`Delta32` (`S + A - B`) | in place |
//! | `BRANCH26` | `Call26` (a stub when external and far) | an `ADDEND` before it, else 0 |
//! | `PAGE21` | `AdrPrelPgHi21` | an `ADDEND` before it, else 0 |
//! | `PAGEOFF12` | `PageOffset12` (ADD, or LDR/STR with the access size read from the instruction) | an `ADDEND` before it, else 0 |
//! | `GOT_LOAD_PAGE21`/`GOT_LOAD_PAGEOFF12` | `AdrGotPage`/`Ld64GotLo12Nc` | 0 |
//! | `POINTER_TO_GOT` PC-relative 4 bytes / absolute 8 bytes | `PointerToGot32`/`PointerToGot64` | 0 |
//! | `TLVP_LOAD_PAGE21`/`TLVP_LOAD_PAGEOFF12` | `TlvpPage21`/`TlvpPageOffset12` (a slot holding the descriptor's address) | 0 |
//! | `ADDEND` | none: its 24-bit signed `r_symbolnum` is the addend of the `PAGE21`, `PAGEOFF12` or `BRANCH26` that follows at the same offset | |
//!
//! Instructions keep no addend: the immediates the assembler left in an
//! instruction a relocation patches must be zero, else the object means
//! something jitrun would silently drop, and is refused (as JITLink does).

use object::macho::*;

use super::{describe, Decoded, EdgeBuilder, RelocInfo, S_THREAD_LOCAL_VARIABLES};
use crate::arch::aarch64::Kind;
use crate::arch::EdgeKind;
use crate::graph::model::*;

/// `ARM64_RELOC_AUTHENTICATED_POINTER` (arm64e), which `object` does not name.
const ARM64_RELOC_AUTHENTICATED_POINTER: u8 = 11;

/// Name of an `ARM64_RELOC_*` number, for messages.
pub fn reloc_name(r_type: u8) -> &'static str {
    match r_type {
        ARM64_RELOC_UNSIGNED => "ARM64_RELOC_UNSIGNED",
        ARM64_RELOC_SUBTRACTOR => "ARM64_RELOC_SUBTRACTOR",
        ARM64_RELOC_BRANCH26 => "ARM64_RELOC_BRANCH26",
        ARM64_RELOC_PAGE21 => "ARM64_RELOC_PAGE21",
        ARM64_RELOC_PAGEOFF12 => "ARM64_RELOC_PAGEOFF12",
        ARM64_RELOC_GOT_LOAD_PAGE21 => "ARM64_RELOC_GOT_LOAD_PAGE21",
        ARM64_RELOC_GOT_LOAD_PAGEOFF12 => "ARM64_RELOC_GOT_LOAD_PAGEOFF12",
        ARM64_RELOC_POINTER_TO_GOT => "ARM64_RELOC_POINTER_TO_GOT",
        ARM64_RELOC_TLVP_LOAD_PAGE21 => "ARM64_RELOC_TLVP_LOAD_PAGE21",
        ARM64_RELOC_TLVP_LOAD_PAGEOFF12 => "ARM64_RELOC_TLVP_LOAD_PAGEOFF12",
        ARM64_RELOC_ADDEND => "ARM64_RELOC_ADDEND",
        ARM64_RELOC_AUTHENTICATED_POINTER => "ARM64_RELOC_AUTHENTICATED_POINTER",
        _ => "an unknown relocation type",
    }
}

/// The 24-bit signed addend an `ARM64_RELOC_ADDEND` carries in `r_symbolnum`.
fn addend_of(r: RelocInfo) -> i64 {
    ((r.symbolnum << 8) as i32 >> 8) as i64
}

/// Decodes the relocation at the start of `relocs` (with the `ADDEND`
/// before it or the `UNSIGNED` after a `SUBTRACTOR`); returns it and how
/// many entries it used.
pub(super) fn decode(b: &mut EdgeBuilder, section: usize, relocs: &[RelocInfo]) -> anyhow::Result<(Decoded, usize)> {
    let first = relocs[0];
    let (r, explicit_addend, mut used) = if first.r_type == ARM64_RELOC_ADDEND {
        let offset = u64::from(first.address);
        match relocs.get(1).copied() {
            Some(next)
                if matches!(next.r_type, ARM64_RELOC_PAGE21 | ARM64_RELOC_PAGEOFF12 | ARM64_RELOC_BRANCH26)
                    && next.address == first.address =>
            {
                if first.external {
                    return Err(b.fail(section, offset, "ARM64_RELOC_ADDEND refers to a symbol (r_extern = 1); its addend is r_symbolnum"));
                }
                (next, Some(addend_of(first)), 2)
            }
            Some(next) if next.address == first.address => {
                return Err(b.fail(
                    section,
                    offset,
                    format_args!(
                        "ARM64_RELOC_ADDEND is followed by {}; it may only precede ARM64_RELOC_PAGE21, ARM64_RELOC_PAGEOFF12 or ARM64_RELOC_BRANCH26",
                        describe(b.graph.cpu, next)
                    ),
                ))
            }
            _ => {
                return Err(b.fail(
                    section,
                    offset,
                    "ARM64_RELOC_ADDEND is not followed by the ARM64_RELOC_PAGE21, ARM64_RELOC_PAGEOFF12 or ARM64_RELOC_BRANCH26 at the same offset it adds to",
                ))
            }
        }
    } else {
        (first, None, 1)
    };
    let offset = u64::from(r.address);
    b.check_bounds(section, r)?;
    let pair = if r.r_type == ARM64_RELOC_SUBTRACTOR {
        match relocs.get(used).copied() {
            Some(n)
                if n.r_type == ARM64_RELOC_UNSIGNED && n.address == r.address && n.length == r.length && !n.pcrel =>
            {
                used += 1;
                Some(n)
            }
            _ => {
                return Err(b.fail(
                    section,
                    offset,
                    "ARM64_RELOC_SUBTRACTOR is not followed by its ARM64_RELOC_UNSIGNED pair (same offset and length)",
                ))
            }
        }
    } else {
        None
    };
    let (kind, target, addend, subtrahend) = decode_one(b, section, r, pair, explicit_addend)
        .map_err(|what| b.fail(section, offset, format_args!("{}: {}", describe(b.graph.cpu, r), what)))?;
    Ok((Decoded { r, kind: EdgeKind::Aarch64(kind), target, addend, subtrahend }, used))
}

/// One relocation (with its addend or pair) → (kind, target, addend, subtrahend).
fn decode_one(
    b: &mut EdgeBuilder,
    section: usize,
    r: RelocInfo,
    pair: Option<RelocInfo>,
    explicit_addend: Option<i64>,
) -> Result<(Kind, SymbolId, i64, SymbolId), String> {
    if r.r_type == ARM64_RELOC_AUTHENTICATED_POINTER {
        return Err("arm64e pointer authentication is not supported (build for arm64, not arm64e)".to_string());
    }
    let kind = Kind::from_macho(r.r_type, r.length, r.pcrel)
        .ok_or_else(|| "this combination of type, pc-relative flag and length is not supported".to_string())?;
    let offset = u64::from(r.address);
    let inplace = b.read_signed(section, offset, 1 << r.length);
    let symbol = |b: &EdgeBuilder| -> Result<SymbolId, String> {
        if !r.external {
            return Err("must refer to a symbol (r_extern = 1), not a section".to_string());
        }
        b.symbol_index(r.symbolnum)
    };
    // An instruction's own immediate must be zero: addends come from ADDEND.
    let instruction_immediate_is_zero = |mask: u32| {
        if (inplace as u32) & mask != 0 {
            Err(format!(
                "the instruction {:#010x} carries an immediate; Mach-O arm64 keeps addends in ARM64_RELOC_ADDEND",
                inplace as u32
            ))
        } else {
            Ok(())
        }
    };
    match r.r_type {
        ARM64_RELOC_UNSIGNED => {
            let (target, addend) = if r.external {
                (b.symbol_index(r.symbolnum)?, inplace)
            } else {
                b.symbol_at_address((r.symbolnum as usize).wrapping_sub(1), inplace)?
            };
            let kind =
                if kind == Kind::Abs64 && b.sections[section].sect_type == S_THREAD_LOCAL_VARIABLES && b.is_tls(target)
                {
                    // A descriptor's `offset` word: the variable's
                    // thread-pointer offset, for __jitrun_tlv_get_addr.
                    Kind::TlsTpRel64
                } else {
                    kind
                };
            Ok((kind, target, addend, 0))
        }
        ARM64_RELOC_SUBTRACTOR => {
            let pair = pair.expect("checked by the caller");
            let (minuend, addend, subtrahend) = b.subtractor_pair(r, pair, inplace)?;
            Ok((kind, minuend, addend, subtrahend))
        }
        ARM64_RELOC_BRANCH26 => {
            instruction_immediate_is_zero(0x03ff_ffff)?;
            Ok((kind, symbol(b)?, explicit_addend.unwrap_or(0), 0))
        }
        ARM64_RELOC_PAGE21 => {
            instruction_immediate_is_zero(0x60ff_ffe0)?;
            Ok((kind, symbol(b)?, explicit_addend.unwrap_or(0), 0))
        }
        ARM64_RELOC_PAGEOFF12 => {
            instruction_immediate_is_zero(0x003f_fc00)?;
            Ok((kind, symbol(b)?, explicit_addend.unwrap_or(0), 0))
        }
        ARM64_RELOC_GOT_LOAD_PAGE21 | ARM64_RELOC_TLVP_LOAD_PAGE21 => {
            instruction_immediate_is_zero(0x60ff_ffe0)?;
            let target = symbol(b)?;
            if r.r_type == ARM64_RELOC_TLVP_LOAD_PAGE21 {
                b.mark_thread_local_reference(target);
            }
            Ok((kind, target, 0, 0))
        }
        ARM64_RELOC_GOT_LOAD_PAGEOFF12 | ARM64_RELOC_TLVP_LOAD_PAGEOFF12 => {
            instruction_immediate_is_zero(0x003f_fc00)?;
            let target = symbol(b)?;
            if r.r_type == ARM64_RELOC_TLVP_LOAD_PAGEOFF12 {
                b.mark_thread_local_reference(target);
            }
            Ok((kind, target, 0, 0))
        }
        // The assembler leaves bytes of its own there (the field's distance
        // from the section start, negated); as for JITLink, the addend is 0.
        ARM64_RELOC_POINTER_TO_GOT => Ok((kind, symbol(b)?, 0, 0)),
        _ => Err("this relocation type is not supported".to_string()),
    }
}
