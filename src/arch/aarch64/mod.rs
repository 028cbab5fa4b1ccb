//! AArch64 fixup kinds: the closed set every front-end (ELF, Mach-O arm64)
//! maps its relocations onto, each with its equation and range check, and
//! the one pure function that applies them; the stub that reaches a far
//! function through its GOT entry; the fill patterns of code.
//!
//! Names follow the psABI (ELF for the Arm 64-bit Architecture, aaelf64):
//! `S`, `A`, `P`, `GOT`, `G`, `L`, `B` as in [`crate::arch`], and
//! `Page(x) = x & !0xfff`. `X` is the equation's value, `X[hi:lo]` its bits.
//! For TLS kinds the caller passes in `S` (or in the slot at `G`) the value
//! [`Kind::tls_access`] names; `S` of a local-exec kind is the offset
//! from the thread pointer, positive on AArch64 (TLS variant I: the thread
//! pointer addresses a 16-byte TCB, the static TLS blocks follow it).
//!
//! Instructions are little-endian words. A kind that patches an instruction
//! first checks that the instruction is of the class the kind is for, then
//! writes only its immediate bits (MOVW kinds of signed values also choose
//! between MOVZ and MOVN, as the psABI says).

mod instruction;
pub mod runtime;

#[cfg(test)]
mod tests;

use std::fmt;

use crate::arch::{
    aligned, field as bytes_at, in_range, signed_bits, DecodedOperand, FarReference, FixupError, FixupOutcome,
    FixupValues, PlainFixup, Range, TlsAccess, I32,
};
use instruction::{Form, MoveWideOp};

pub use instruction::decode_operand;

/// The name of an `R_AARCH64_*` number, also for those jitrun refuses.
pub fn elf_relocation_name(r_type: u32) -> String {
    if let Some(kind) = Kind::from_elf(r_type) {
        return kind.name().to_string();
    }
    use object::elf::*;
    let known = match r_type {
        R_AARCH64_COPY => "R_AARCH64_COPY",
        R_AARCH64_GLOB_DAT => "R_AARCH64_GLOB_DAT",
        R_AARCH64_JUMP_SLOT => "R_AARCH64_JUMP_SLOT",
        R_AARCH64_RELATIVE => "R_AARCH64_RELATIVE",
        R_AARCH64_TLSDESC => "R_AARCH64_TLSDESC",
        R_AARCH64_IRELATIVE => "R_AARCH64_IRELATIVE",
        _ => return "unknown to jitrun".to_string(),
    };
    format!("{}, which belongs in linked files, not in a relocatable object", known)
}

/// [`decode_operand`] of the instruction word at the start of `code`, at
/// `pc`, for `--check`.
pub fn decode_operand_at(code: &[u8], pc: u64, index: u64) -> Result<DecodedOperand, String> {
    let word = code.get(..4).ok_or_else(|| format!("no instruction at {:#x}: the image ends there", pc))?;
    let word = u32::from_le_bytes(word.try_into().expect("four bytes"));
    let index = u32::try_from(index).map_err(|_| format!("no operand {}", index))?;
    let value = decode_operand(word, index)
        .ok_or_else(|| format!("operand {} of the instruction {:#010x} at {:#x} is not known", index, word, pc))?;
    Ok(DecodedOperand { value: value as u64, next_pc: pc + 4 })
}

/// Whether the 4 bytes `before` a return address are a call: `bl` or `blr`.
pub fn follows_call(before: &[u8]) -> bool {
    let Ok(word) = <[u8; 4]>::try_from(before).map(u32::from_le_bytes) else { return false };
    word & 0xfc00_0000 == 0x9400_0000 || word & 0xffff_fc1f == 0xd63f_0000
}

/// `R_AARCH64_PLT32`, which `object` 0.36 does not name.
const R_AARCH64_PLT32: u32 = 314;
/// Withdrawn by the psABI: "treat as `R_AARCH64_NONE`".
const R_AARCH64_NONE_WITHDRAWN: u32 = 256;

/// A fixup kind. The comment on each variant is its equation and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `R_AARCH64_NONE` (and the withdrawn 256): nothing.
    None,

    // Data.
    /// `R_AARCH64_ABS64` (Mach-O `ARM64_RELOC_UNSIGNED`, 8 bytes): `S + A`, 64 bits.
    Abs64,
    /// `R_AARCH64_ABS32` (Mach-O `ARM64_RELOC_UNSIGNED`, 4 bytes): `S + A`,
    /// must lie in [-2^31, 2^32).
    Abs32,
    /// `R_AARCH64_ABS16`: `S + A`, must lie in [-2^15, 2^16).
    Abs16,
    /// `R_AARCH64_PREL64`: `S + A - P`, 64 bits.
    Prel64,
    /// `R_AARCH64_PREL32`: `S + A - P`, must lie in [-2^31, 2^32).
    Prel32,
    /// `R_AARCH64_PREL16`: `S + A - P`, must lie in [-2^15, 2^16).
    Prel16,
    /// `R_AARCH64_PLT32`: `S + A - P`, must fit i32; `L + A - P` through the
    /// stub when that does not fit and the target has one.
    Plt32,

    // MOVZ/MOVK of an unsigned absolute value, `X = S + A`.
    /// `R_AARCH64_MOVW_UABS_G0`: MOVZ/MOVK `imm16 = X[15:0]`, `0 <= X < 2^16`.
    MovwUabsG0,
    /// `R_AARCH64_MOVW_UABS_G0_NC`: MOVZ/MOVK `imm16 = X[15:0]`, no check.
    MovwUabsG0Nc,
    /// `R_AARCH64_MOVW_UABS_G1`: MOVZ/MOVK `imm16 = X[31:16]`, `0 <= X < 2^32`.
    MovwUabsG1,
    /// `R_AARCH64_MOVW_UABS_G1_NC`: MOVZ/MOVK `imm16 = X[31:16]`, no check.
    MovwUabsG1Nc,
    /// `R_AARCH64_MOVW_UABS_G2`: MOVZ/MOVK `imm16 = X[47:32]`, `0 <= X < 2^48`.
    MovwUabsG2,
    /// `R_AARCH64_MOVW_UABS_G2_NC`: MOVZ/MOVK `imm16 = X[47:32]`, no check.
    MovwUabsG2Nc,
    /// `R_AARCH64_MOVW_UABS_G3`: MOVZ/MOVK `imm16 = X[63:48]`, no check.
    MovwUabsG3,

    // MOVZ/MOVN of a signed absolute value, `X = S + A`: MOVZ with the bits
    // of X when X >= 0, else MOVN with the bits of !X.
    /// `R_AARCH64_MOVW_SABS_G0`: MOVZ/MOVN by sign, `X[15:0]`, `-2^16 <= X < 2^16`.
    MovwSabsG0,
    /// `R_AARCH64_MOVW_SABS_G1`: MOVZ/MOVN by sign, `X[31:16]`, `-2^32 <= X < 2^32`.
    MovwSabsG1,
    /// `R_AARCH64_MOVW_SABS_G2`: MOVZ/MOVN by sign, `X[47:32]`, `-2^48 <= X < 2^48`.
    MovwSabsG2,

    // MOVW of a PC-relative value, `X = S + A - P`.
    /// `R_AARCH64_MOVW_PREL_G0`: MOVZ/MOVN by sign, `X[15:0]`, `-2^16 <= X < 2^16`.
    MovwPrelG0,
    /// `R_AARCH64_MOVW_PREL_G0_NC`: MOVK `imm16 = X[15:0]`, no check.
    MovwPrelG0Nc,
    /// `R_AARCH64_MOVW_PREL_G1`: MOVZ/MOVN by sign, `X[31:16]`, `-2^32 <= X < 2^32`.
    MovwPrelG1,
    /// `R_AARCH64_MOVW_PREL_G1_NC`: MOVK `imm16 = X[31:16]`, no check.
    MovwPrelG1Nc,
    /// `R_AARCH64_MOVW_PREL_G2`: MOVZ/MOVN by sign, `X[47:32]`, `-2^48 <= X < 2^48`.
    MovwPrelG2,
    /// `R_AARCH64_MOVW_PREL_G2_NC`: MOVK `imm16 = X[47:32]`, no check.
    MovwPrelG2Nc,
    /// `R_AARCH64_MOVW_PREL_G3`: MOVZ/MOVN by sign, `X[63:48]`, no check.
    MovwPrelG3,

    // PC-relative addresses and their low-12-bit companions.
    /// `R_AARCH64_LD_PREL_LO19`: LDR (literal) `imm19 = (S + A - P) >> 2`,
    /// must fit ±1 MiB and be 4-aligned.
    LdPrelLo19,
    /// `R_AARCH64_ADR_PREL_LO21`: ADR `imm21 = S + A - P`, must fit ±1 MiB.
    AdrPrelLo21,
    /// `R_AARCH64_ADR_PREL_PG_HI21` (Mach-O `ARM64_RELOC_PAGE21`): ADRP
    /// `imm21 = (Page(S + A) - Page(P)) >> 12`, must fit ±4 GiB.
    AdrPrelPgHi21,
    /// `R_AARCH64_ADR_PREL_PG_HI21_NC`: ADRP `imm21 = (Page(S + A) - Page(P)) >> 12`, no check.
    AdrPrelPgHi21Nc,
    /// `R_AARCH64_ADD_ABS_LO12_NC`: ADD (immediate) `imm12 = (S + A)[11:0]`.
    AddAbsLo12Nc,
    /// `R_AARCH64_LDST8_ABS_LO12_NC`: 1-byte LDR/STR (unsigned offset) `imm12 = (S + A)[11:0]`.
    Ldst8AbsLo12Nc,
    /// `R_AARCH64_LDST16_ABS_LO12_NC`: 2-byte LDR/STR `imm12 = (S + A)[11:1]`, `S + A` 2-aligned.
    Ldst16AbsLo12Nc,
    /// `R_AARCH64_LDST32_ABS_LO12_NC`: 4-byte LDR/STR `imm12 = (S + A)[11:2]`, `S + A` 4-aligned.
    Ldst32AbsLo12Nc,
    /// `R_AARCH64_LDST64_ABS_LO12_NC`: 8-byte LDR/STR/PRFM `imm12 = (S + A)[11:3]`, `S + A` 8-aligned.
    Ldst64AbsLo12Nc,
    /// `R_AARCH64_LDST128_ABS_LO12_NC`: 16-byte LDR/STR `imm12 = (S + A)[11:4]`, `S + A` 16-aligned.
    Ldst128AbsLo12Nc,

    // Branches.
    /// `R_AARCH64_TSTBR14`: TBZ/TBNZ `imm14 = (S + A - P) >> 2`, must fit
    /// ±32 KiB and be 4-aligned.
    TstBr14,
    /// `R_AARCH64_CONDBR19`: B.cond/CBZ/CBNZ `imm19 = (S + A - P) >> 2`,
    /// must fit ±1 MiB and be 4-aligned.
    CondBr19,
    /// `R_AARCH64_JUMP26`: B (or BL) `imm26 = (S + A - P) >> 2`, must fit
    /// ±128 MiB and be 4-aligned; `(L + A - P) >> 2` through the stub when
    /// out of range and the target has one.
    Jump26,
    /// `R_AARCH64_CALL26` (Mach-O `ARM64_RELOC_BRANCH26`): BL (or B)
    /// `imm26 = (S + A - P) >> 2`, must fit ±128 MiB and be 4-aligned;
    /// `(L + A - P) >> 2` through the stub when out of range and the target has one.
    Call26,

    // Through a GOT entry holding S.
    /// `R_AARCH64_GOT_LD_PREL19`: LDR Xt (literal) `imm19 = (G + A - P) >> 2`,
    /// must fit ±1 MiB.
    GotLdPrel19,
    /// `R_AARCH64_ADR_GOT_PAGE` (Mach-O `ARM64_RELOC_GOT_LOAD_PAGE21`): ADRP
    /// `imm21 = (Page(G + A) - Page(P)) >> 12`, must fit ±4 GiB.
    AdrGotPage,
    /// `R_AARCH64_LD64_GOT_LO12_NC` (Mach-O `ARM64_RELOC_GOT_LOAD_PAGEOFF12`):
    /// LDR Xt (unsigned offset) `imm12 = (G + A)[11:3]`, `G + A` 8-aligned.
    Ld64GotLo12Nc,
    /// `R_AARCH64_LD64_GOTPAGE_LO15`: LDR Xt `imm12 = X[14:3]` with
    /// `X = G + A - Page(GOT)`, `0 <= X < 2^15`, 8-aligned.
    Ld64GotPageLo15,

    // General-dynamic TLS: G is the {module id, offset} pair.
    /// `R_AARCH64_TLSGD_ADR_PREL21`: ADR `imm21 = G + A - P`, must fit ±1 MiB.
    TlsGdAdrPrel21,
    /// `R_AARCH64_TLSGD_ADR_PAGE21`: ADRP `imm21 = (Page(G + A) - Page(P)) >> 12`, must fit ±4 GiB.
    TlsGdAdrPage21,
    /// `R_AARCH64_TLSGD_ADD_LO12_NC`: ADD `imm12 = (G + A)[11:0]`.
    TlsGdAddLo12Nc,

    // Local-dynamic TLS: G is the image's {module id, 0} pair; S of the
    // DTPREL kinds is the variable's offset in the image's TLS block.
    /// `R_AARCH64_TLSLD_ADR_PREL21`: ADR `imm21 = G + A - P`, must fit ±1 MiB.
    TlsLdAdrPrel21,
    /// `R_AARCH64_TLSLD_ADR_PAGE21`: ADRP `imm21 = (Page(G + A) - Page(P)) >> 12`, must fit ±4 GiB.
    TlsLdAdrPage21,
    /// `R_AARCH64_TLSLD_ADD_LO12_NC`: ADD `imm12 = (G + A)[11:0]`.
    TlsLdAddLo12Nc,
    /// `R_AARCH64_TLSLD_LD_PREL19`: LDR Xt (literal) `imm19 = (G + A - P) >> 2`, must fit ±1 MiB.
    TlsLdLdPrel19,
    /// `R_AARCH64_TLSLD_MOVW_DTPREL_G2`: `X = S + A`, MOVZ/MOVN by sign, `X[47:32]`, `-2^48 <= X < 2^48`.
    TlsLdMovwDtpRelG2,
    /// `R_AARCH64_TLSLD_MOVW_DTPREL_G1`: `X = S + A`, MOVZ/MOVN by sign, `X[31:16]`, `-2^32 <= X < 2^32`.
    TlsLdMovwDtpRelG1,
    /// `R_AARCH64_TLSLD_MOVW_DTPREL_G1_NC`: MOVK `imm16 = (S + A)[31:16]`, no check.
    TlsLdMovwDtpRelG1Nc,
    /// `R_AARCH64_TLSLD_MOVW_DTPREL_G0`: `X = S + A`, MOVZ/MOVN by sign, `X[15:0]`, `-2^16 <= X < 2^16`.
    TlsLdMovwDtpRelG0,
    /// `R_AARCH64_TLSLD_MOVW_DTPREL_G0_NC`: MOVK `imm16 = (S + A)[15:0]`, no check.
    TlsLdMovwDtpRelG0Nc,
    /// `R_AARCH64_TLSLD_ADD_DTPREL_HI12`: ADD (LSL #12) `imm12 = X[23:12]`, `X = S + A`, `0 <= X < 2^24`.
    TlsLdAddDtpRelHi12,
    /// `R_AARCH64_TLSLD_ADD_DTPREL_LO12`: ADD `imm12 = X[11:0]`, `X = S + A`, `0 <= X < 2^12`.
    TlsLdAddDtpRelLo12,
    /// `R_AARCH64_TLSLD_ADD_DTPREL_LO12_NC`: ADD `imm12 = (S + A)[11:0]`.
    TlsLdAddDtpRelLo12Nc,
    /// `R_AARCH64_TLSLD_LDST8_DTPREL_LO12`: 1-byte LDR/STR `imm12 = X[11:0]`, `0 <= X < 2^12`.
    TlsLdLdst8DtpRelLo12,
    /// `R_AARCH64_TLSLD_LDST8_DTPREL_LO12_NC`: 1-byte LDR/STR `imm12 = (S + A)[11:0]`.
    TlsLdLdst8DtpRelLo12Nc,
    /// `R_AARCH64_TLSLD_LDST16_DTPREL_LO12`: 2-byte LDR/STR `imm12 = X[11:1]`, `0 <= X < 2^12`, 2-aligned.
    TlsLdLdst16DtpRelLo12,
    /// `R_AARCH64_TLSLD_LDST16_DTPREL_LO12_NC`: 2-byte LDR/STR `imm12 = (S + A)[11:1]`, 2-aligned.
    TlsLdLdst16DtpRelLo12Nc,
    /// `R_AARCH64_TLSLD_LDST32_DTPREL_LO12`: 4-byte LDR/STR `imm12 = X[11:2]`, `0 <= X < 2^12`, 4-aligned.
    TlsLdLdst32DtpRelLo12,
    /// `R_AARCH64_TLSLD_LDST32_DTPREL_LO12_NC`: 4-byte LDR/STR `imm12 = (S + A)[11:2]`, 4-aligned.
    TlsLdLdst32DtpRelLo12Nc,
    /// `R_AARCH64_TLSLD_LDST64_DTPREL_LO12`: 8-byte LDR/STR `imm12 = X[11:3]`, `0 <= X < 2^12`, 8-aligned.
    TlsLdLdst64DtpRelLo12,
    /// `R_AARCH64_TLSLD_LDST64_DTPREL_LO12_NC`: 8-byte LDR/STR `imm12 = (S + A)[11:3]`, 8-aligned.
    TlsLdLdst64DtpRelLo12Nc,
    /// `R_AARCH64_TLSLD_LDST128_DTPREL_LO12`: 16-byte LDR/STR `imm12 = X[11:4]`, `0 <= X < 2^12`, 16-aligned.
    TlsLdLdst128DtpRelLo12,
    /// `R_AARCH64_TLSLD_LDST128_DTPREL_LO12_NC`: 16-byte LDR/STR `imm12 = (S + A)[11:4]`, 16-aligned.
    TlsLdLdst128DtpRelLo12Nc,

    // Initial-exec TLS: G is a slot holding the thread-pointer offset.
    /// `R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21`: ADRP `imm21 = (Page(G + A) - Page(P)) >> 12`, must fit ±4 GiB.
    TlsIeAdrGotTpRelPage21,
    /// `R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC`: LDR Xt `imm12 = (G + A)[11:3]`, 8-aligned.
    TlsIeLd64GotTpRelLo12Nc,
    /// `R_AARCH64_TLSIE_LD_GOTTPREL_PREL19`: LDR Xt (literal) `imm19 = (G + A - P) >> 2`, must fit ±1 MiB.
    TlsIeLdGotTpRelPrel19,

    // Local-exec TLS: S is the variable's offset from the thread pointer.
    /// `R_AARCH64_TLSLE_MOVW_TPREL_G2`: `X = S + A`, MOVZ/MOVN by sign, `X[47:32]`, `-2^48 <= X < 2^48`.
    TlsLeMovwTpRelG2,
    /// `R_AARCH64_TLSLE_MOVW_TPREL_G1`: `X = S + A`, MOVZ/MOVN by sign, `X[31:16]`, `-2^32 <= X < 2^32`.
    TlsLeMovwTpRelG1,
    /// `R_AARCH64_TLSLE_MOVW_TPREL_G1_NC`: MOVK `imm16 = (S + A)[31:16]`, no check.
    TlsLeMovwTpRelG1Nc,
    /// `R_AARCH64_TLSLE_MOVW_TPREL_G0`: `X = S + A`, MOVZ/MOVN by sign, `X[15:0]`, `-2^16 <= X < 2^16`.
    TlsLeMovwTpRelG0,
    /// `R_AARCH64_TLSLE_MOVW_TPREL_G0_NC`: MOVK `imm16 = (S + A)[15:0]`, no check.
    TlsLeMovwTpRelG0Nc,
    /// `R_AARCH64_TLSLE_ADD_TPREL_HI12`: ADD (LSL #12) `imm12 = X[23:12]`, `X = S + A`, `0 <= X < 2^24`.
    TlsLeAddTpRelHi12,
    /// `R_AARCH64_TLSLE_ADD_TPREL_LO12`: ADD `imm12 = X[11:0]`, `X = S + A`, `0 <= X < 2^12`.
    TlsLeAddTpRelLo12,
    /// `R_AARCH64_TLSLE_ADD_TPREL_LO12_NC`: ADD `imm12 = (S + A)[11:0]`.
    TlsLeAddTpRelLo12Nc,
    /// `R_AARCH64_TLSLE_LDST8_TPREL_LO12`: 1-byte LDR/STR `imm12 = X[11:0]`, `0 <= X < 2^12`.
    TlsLeLdst8TpRelLo12,
    /// `R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC`: 1-byte LDR/STR `imm12 = (S + A)[11:0]`.
    TlsLeLdst8TpRelLo12Nc,
    /// `R_AARCH64_TLSLE_LDST16_TPREL_LO12`: 2-byte LDR/STR `imm12 = X[11:1]`, `0 <= X < 2^12`, 2-aligned.
    TlsLeLdst16TpRelLo12,
    /// `R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC`: 2-byte LDR/STR `imm12 = (S + A)[11:1]`, 2-aligned.
    TlsLeLdst16TpRelLo12Nc,
    /// `R_AARCH64_TLSLE_LDST32_TPREL_LO12`: 4-byte LDR/STR `imm12 = X[11:2]`, `0 <= X < 2^12`, 4-aligned.
    TlsLeLdst32TpRelLo12,
    /// `R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC`: 4-byte LDR/STR `imm12 = (S + A)[11:2]`, 4-aligned.
    TlsLeLdst32TpRelLo12Nc,
    /// `R_AARCH64_TLSLE_LDST64_TPREL_LO12`: 8-byte LDR/STR `imm12 = X[11:3]`, `0 <= X < 2^12`, 8-aligned.
    TlsLeLdst64TpRelLo12,
    /// `R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC`: 8-byte LDR/STR `imm12 = (S + A)[11:3]`, 8-aligned.
    TlsLeLdst64TpRelLo12Nc,
    /// `R_AARCH64_TLSLE_LDST128_TPREL_LO12`: 16-byte LDR/STR `imm12 = X[11:4]`, `0 <= X < 2^12`, 16-aligned.
    TlsLeLdst128TpRelLo12,
    /// `R_AARCH64_TLSLE_LDST128_TPREL_LO12_NC`: 16-byte LDR/STR `imm12 = (S + A)[11:4]`, 16-aligned.
    TlsLeLdst128TpRelLo12Nc,

    // TLS descriptors: G is the two-word {resolver, argument} descriptor.
    /// `R_AARCH64_TLSDESC_LD_PREL19`: LDR Xt (literal) `imm19 = (G + A - P) >> 2`, must fit ±1 MiB.
    TlsDescLdPrel19,
    /// `R_AARCH64_TLSDESC_ADR_PREL21`: ADR `imm21 = G + A - P`, must fit ±1 MiB.
    TlsDescAdrPrel21,
    /// `R_AARCH64_TLSDESC_ADR_PAGE21`: ADRP `imm21 = (Page(G + A) - Page(P)) >> 12`, must fit ±4 GiB.
    TlsDescAdrPage21,
    /// `R_AARCH64_TLSDESC_LD64_LO12`: LDR Xt `imm12 = (G + A)[11:3]`, 8-aligned.
    TlsDescLd64Lo12,
    /// `R_AARCH64_TLSDESC_ADD_LO12`: ADD `imm12 = (G + A)[11:0]`.
    TlsDescAddLo12,
    /// `R_AARCH64_TLSDESC_CALL`: marks the `blr` to the resolver; nothing to patch.
    TlsDescCall,

    // TLS data words.
    /// `R_AARCH64_TLS_DTPMOD`: the module id (passed in `S`), 64 bits.
    TlsDtpMod64,
    /// `R_AARCH64_TLS_DTPREL`: `S + A` with `S` the offset in the TLS block, 64 bits.
    TlsDtpRel64,
    /// `R_AARCH64_TLS_TPREL`: `S + A` with `S` the thread-pointer offset, 64 bits.
    TlsTpRel64,

    // Mach-O arm64 only.
    /// `ARM64_RELOC_SUBTRACTOR` + `ARM64_RELOC_UNSIGNED` pair, 4 bytes:
    /// `S + A - B`, with `B` the subtracted symbol the edge records, must fit i32.
    Delta32,
    /// The 8-byte `SUBTRACTOR` pair: `S + A - B`, 64 bits.
    Delta64,
    /// `ARM64_RELOC_PAGEOFF12`: `X = S + A`; ADD (immediate) `imm12 = X[11:0]`,
    /// or LDR/STR (unsigned offset) of `2^n` bytes (n read from the
    /// instruction, 0 to 4) `imm12 = X[11:n]` with X `2^n`-aligned.
    PageOffset12,
    /// `ARM64_RELOC_POINTER_TO_GOT`, PC-relative 4 bytes: `G + A - P`, must fit i32.
    PointerToGot32,
    /// `ARM64_RELOC_POINTER_TO_GOT`, absolute 8 bytes: `G + A`, 64 bits.
    PointerToGot64,
    /// `ARM64_RELOC_TLVP_LOAD_PAGE21`: ADRP `imm21 = (Page(G + A) - Page(P)) >> 12`,
    /// must fit ±4 GiB, `G` the slot holding the address of the variable's
    /// thread-local descriptor (as a GOT entry holds `S`).
    TlvpPage21,
    /// `ARM64_RELOC_TLVP_LOAD_PAGEOFF12`: LDR Xt `imm12 = (G + A)[11:3]`,
    /// 8-aligned, `G` as for [`Kind::TlvpPage21`].
    TlvpPageOffset12,
}

impl Kind {
    /// Maps an ELF `R_AARCH64_*` number to a kind; `None` for types a
    /// relocatable object must not contain or that we do not know.
    pub fn from_elf(r_type: u32) -> Option<Kind> {
        use object::elf::*;
        use Kind::*;
        Some(match r_type {
            R_AARCH64_NONE | R_AARCH64_NONE_WITHDRAWN => None,
            R_AARCH64_ABS64 => Abs64,
            R_AARCH64_ABS32 => Abs32,
            R_AARCH64_ABS16 => Abs16,
            R_AARCH64_PREL64 => Prel64,
            R_AARCH64_PREL32 => Prel32,
            R_AARCH64_PREL16 => Prel16,
            R_AARCH64_PLT32 => Plt32,
            R_AARCH64_MOVW_UABS_G0 => MovwUabsG0,
            R_AARCH64_MOVW_UABS_G0_NC => MovwUabsG0Nc,
            R_AARCH64_MOVW_UABS_G1 => MovwUabsG1,
            R_AARCH64_MOVW_UABS_G1_NC => MovwUabsG1Nc,
            R_AARCH64_MOVW_UABS_G2 => MovwUabsG2,
            R_AARCH64_MOVW_UABS_G2_NC => MovwUabsG2Nc,
            R_AARCH64_MOVW_UABS_G3 => MovwUabsG3,
            R_AARCH64_MOVW_SABS_G0 => MovwSabsG0,
            R_AARCH64_MOVW_SABS_G1 => MovwSabsG1,
            R_AARCH64_MOVW_SABS_G2 => MovwSabsG2,
            R_AARCH64_MOVW_PREL_G0 => MovwPrelG0,
            R_AARCH64_MOVW_PREL_G0_NC => MovwPrelG0Nc,
            R_AARCH64_MOVW_PREL_G1 => MovwPrelG1,
            R_AARCH64_MOVW_PREL_G1_NC => MovwPrelG1Nc,
            R_AARCH64_MOVW_PREL_G2 => MovwPrelG2,
            R_AARCH64_MOVW_PREL_G2_NC => MovwPrelG2Nc,
            R_AARCH64_MOVW_PREL_G3 => MovwPrelG3,
            R_AARCH64_LD_PREL_LO19 => LdPrelLo19,
            R_AARCH64_ADR_PREL_LO21 => AdrPrelLo21,
            R_AARCH64_ADR_PREL_PG_HI21 => AdrPrelPgHi21,
            R_AARCH64_ADR_PREL_PG_HI21_NC => AdrPrelPgHi21Nc,
            R_AARCH64_ADD_ABS_LO12_NC => AddAbsLo12Nc,
            R_AARCH64_LDST8_ABS_LO12_NC => Ldst8AbsLo12Nc,
            R_AARCH64_LDST16_ABS_LO12_NC => Ldst16AbsLo12Nc,
            R_AARCH64_LDST32_ABS_LO12_NC => Ldst32AbsLo12Nc,
            R_AARCH64_LDST64_ABS_LO12_NC => Ldst64AbsLo12Nc,
            R_AARCH64_LDST128_ABS_LO12_NC => Ldst128AbsLo12Nc,
            R_AARCH64_TSTBR14 => TstBr14,
            R_AARCH64_CONDBR19 => CondBr19,
            R_AARCH64_JUMP26 => Jump26,
            R_AARCH64_CALL26 => Call26,
            R_AARCH64_GOT_LD_PREL19 => GotLdPrel19,
            R_AARCH64_ADR_GOT_PAGE => AdrGotPage,
            R_AARCH64_LD64_GOT_LO12_NC => Ld64GotLo12Nc,
            R_AARCH64_LD64_GOTPAGE_LO15 => Ld64GotPageLo15,
            R_AARCH64_TLSGD_ADR_PREL21 => TlsGdAdrPrel21,
            R_AARCH64_TLSGD_ADR_PAGE21 => TlsGdAdrPage21,
            R_AARCH64_TLSGD_ADD_LO12_NC => TlsGdAddLo12Nc,
            R_AARCH64_TLSLD_ADR_PREL21 => TlsLdAdrPrel21,
            R_AARCH64_TLSLD_ADR_PAGE21 => TlsLdAdrPage21,
            R_AARCH64_TLSLD_ADD_LO12_NC => TlsLdAddLo12Nc,
            R_AARCH64_TLSLD_LD_PREL19 => TlsLdLdPrel19,
            R_AARCH64_TLSLD_MOVW_DTPREL_G2 => TlsLdMovwDtpRelG2,
            R_AARCH64_TLSLD_MOVW_DTPREL_G1 => TlsLdMovwDtpRelG1,
            R_AARCH64_TLSLD_MOVW_DTPREL_G1_NC => TlsLdMovwDtpRelG1Nc,
            R_AARCH64_TLSLD_MOVW_DTPREL_G0 => TlsLdMovwDtpRelG0,
            R_AARCH64_TLSLD_MOVW_DTPREL_G0_NC => TlsLdMovwDtpRelG0Nc,
            R_AARCH64_TLSLD_ADD_DTPREL_HI12 => TlsLdAddDtpRelHi12,
            R_AARCH64_TLSLD_ADD_DTPREL_LO12 => TlsLdAddDtpRelLo12,
            R_AARCH64_TLSLD_ADD_DTPREL_LO12_NC => TlsLdAddDtpRelLo12Nc,
            R_AARCH64_TLSLD_LDST8_DTPREL_LO12 => TlsLdLdst8DtpRelLo12,
            R_AARCH64_TLSLD_LDST8_DTPREL_LO12_NC => TlsLdLdst8DtpRelLo12Nc,
            R_AARCH64_TLSLD_LDST16_DTPREL_LO12 => TlsLdLdst16DtpRelLo12,
            R_AARCH64_TLSLD_LDST16_DTPREL_LO12_NC => TlsLdLdst16DtpRelLo12Nc,
            R_AARCH64_TLSLD_LDST32_DTPREL_LO12 => TlsLdLdst32DtpRelLo12,
            R_AARCH64_TLSLD_LDST32_DTPREL_LO12_NC => TlsLdLdst32DtpRelLo12Nc,
            R_AARCH64_TLSLD_LDST64_DTPREL_LO12 => TlsLdLdst64DtpRelLo12,
            R_AARCH64_TLSLD_LDST64_DTPREL_LO12_NC => TlsLdLdst64DtpRelLo12Nc,
            R_AARCH64_TLSLD_LDST128_DTPREL_LO12 => TlsLdLdst128DtpRelLo12,
            R_AARCH64_TLSLD_LDST128_DTPREL_LO12_NC => TlsLdLdst128DtpRelLo12Nc,
            R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 => TlsIeAdrGotTpRelPage21,
            R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC => TlsIeLd64GotTpRelLo12Nc,
            R_AARCH64_TLSIE_LD_GOTTPREL_PREL19 => TlsIeLdGotTpRelPrel19,
            R_AARCH64_TLSLE_MOVW_TPREL_G2 => TlsLeMovwTpRelG2,
            R_AARCH64_TLSLE_MOVW_TPREL_G1 => TlsLeMovwTpRelG1,
            R_AARCH64_TLSLE_MOVW_TPREL_G1_NC => TlsLeMovwTpRelG1Nc,
            R_AARCH64_TLSLE_MOVW_TPREL_G0 => TlsLeMovwTpRelG0,
            R_AARCH64_TLSLE_MOVW_TPREL_G0_NC => TlsLeMovwTpRelG0Nc,
            R_AARCH64_TLSLE_ADD_TPREL_HI12 => TlsLeAddTpRelHi12,
            R_AARCH64_TLSLE_ADD_TPREL_LO12 => TlsLeAddTpRelLo12,
            R_AARCH64_TLSLE_ADD_TPREL_LO12_NC => TlsLeAddTpRelLo12Nc,
            R_AARCH64_TLSLE_LDST8_TPREL_LO12 => TlsLeLdst8TpRelLo12,
            R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC => TlsLeLdst8TpRelLo12Nc,
            R_AARCH64_TLSLE_LDST16_TPREL_LO12 => TlsLeLdst16TpRelLo12,
            R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC => TlsLeLdst16TpRelLo12Nc,
            R_AARCH64_TLSLE_LDST32_TPREL_LO12 => TlsLeLdst32TpRelLo12,
            R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC => TlsLeLdst32TpRelLo12Nc,
            R_AARCH64_TLSLE_LDST64_TPREL_LO12 => TlsLeLdst64TpRelLo12,
            R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC => TlsLeLdst64TpRelLo12Nc,
            R_AARCH64_TLSLE_LDST128_TPREL_LO12 => TlsLeLdst128TpRelLo12,
            R_AARCH64_TLSLE_LDST128_TPREL_LO12_NC => TlsLeLdst128TpRelLo12Nc,
            R_AARCH64_TLSDESC_LD_PREL19 => TlsDescLdPrel19,
            R_AARCH64_TLSDESC_ADR_PREL21 => TlsDescAdrPrel21,
            R_AARCH64_TLSDESC_ADR_PAGE21 => TlsDescAdrPage21,
            R_AARCH64_TLSDESC_LD64_LO12 => TlsDescLd64Lo12,
            R_AARCH64_TLSDESC_ADD_LO12 => TlsDescAddLo12,
            R_AARCH64_TLSDESC_CALL => TlsDescCall,
            R_AARCH64_TLS_DTPMOD => TlsDtpMod64,
            R_AARCH64_TLS_DTPREL => TlsDtpRel64,
            R_AARCH64_TLS_TPREL => TlsTpRel64,
            _ => return Option::None,
        })
    }

    /// Maps a Mach-O arm64 relocation (`r_type`, `r_length` as log2 of its
    /// width, `r_pcrel`) to a kind. `ARM64_RELOC_ADDEND` has none (the
    /// front-end folds it into the addend of the relocation it precedes),
    /// nor has `ARM64_RELOC_AUTHENTICATED_POINTER` (arm64e).
    pub fn from_macho(r_type: u8, r_length: u8, pc_rel: bool) -> Option<Kind> {
        use object::macho::*;
        use Kind::*;
        Some(match (r_type, r_length, pc_rel) {
            (ARM64_RELOC_UNSIGNED, 3, false) => Abs64,
            (ARM64_RELOC_UNSIGNED, 2, false) => Abs32,
            (ARM64_RELOC_SUBTRACTOR, 3, false) => Delta64,
            (ARM64_RELOC_SUBTRACTOR, 2, false) => Delta32,
            (ARM64_RELOC_BRANCH26, 2, true) => Call26,
            (ARM64_RELOC_PAGE21, 2, true) => AdrPrelPgHi21,
            (ARM64_RELOC_PAGEOFF12, 2, false) => PageOffset12,
            (ARM64_RELOC_GOT_LOAD_PAGE21, 2, true) => AdrGotPage,
            (ARM64_RELOC_GOT_LOAD_PAGEOFF12, 2, false) => Ld64GotLo12Nc,
            (ARM64_RELOC_POINTER_TO_GOT, 2, true) => PointerToGot32,
            (ARM64_RELOC_POINTER_TO_GOT, 3, false) => PointerToGot64,
            (ARM64_RELOC_TLVP_LOAD_PAGE21, 2, true) => TlvpPage21,
            (ARM64_RELOC_TLVP_LOAD_PAGEOFF12, 2, false) => TlvpPageOffset12,
            _ => return Option::None,
        })
    }

    /// The psABI name (or the Mach-O one for Mach-O-only kinds), for messages.
    pub fn name(self) -> &'static str {
        use Kind::*;
        match self {
            None => "R_AARCH64_NONE",
            Abs64 => "R_AARCH64_ABS64",
            Abs32 => "R_AARCH64_ABS32",
            Abs16 => "R_AARCH64_ABS16",
            Prel64 => "R_AARCH64_PREL64",
            Prel32 => "R_AARCH64_PREL32",
            Prel16 => "R_AARCH64_PREL16",
            Plt32 => "R_AARCH64_PLT32",
            MovwUabsG0 => "R_AARCH64_MOVW_UABS_G0",
            MovwUabsG0Nc => "R_AARCH64_MOVW_UABS_G0_NC",
            MovwUabsG1 => "R_AARCH64_MOVW_UABS_G1",
            MovwUabsG1Nc => "R_AARCH64_MOVW_UABS_G1_NC",
            MovwUabsG2 => "R_AARCH64_MOVW_UABS_G2",
            MovwUabsG2Nc => "R_AARCH64_MOVW_UABS_G2_NC",
            MovwUabsG3 => "R_AARCH64_MOVW_UABS_G3",
            MovwSabsG0 => "R_AARCH64_MOVW_SABS_G0",
            MovwSabsG1 => "R_AARCH64_MOVW_SABS_G1",
            MovwSabsG2 => "R_AARCH64_MOVW_SABS_G2",
            MovwPrelG0 => "R_AARCH64_MOVW_PREL_G0",
            MovwPrelG0Nc => "R_AARCH64_MOVW_PREL_G0_NC",
            MovwPrelG1 => "R_AARCH64_MOVW_PREL_G1",
            MovwPrelG1Nc => "R_AARCH64_MOVW_PREL_G1_NC",
            MovwPrelG2 => "R_AARCH64_MOVW_PREL_G2",
            MovwPrelG2Nc => "R_AARCH64_MOVW_PREL_G2_NC",
            MovwPrelG3 => "R_AARCH64_MOVW_PREL_G3",
            LdPrelLo19 => "R_AARCH64_LD_PREL_LO19",
            AdrPrelLo21 => "R_AARCH64_ADR_PREL_LO21",
            AdrPrelPgHi21 => "R_AARCH64_ADR_PREL_PG_HI21",
            AdrPrelPgHi21Nc => "R_AARCH64_ADR_PREL_PG_HI21_NC",
            AddAbsLo12Nc => "R_AARCH64_ADD_ABS_LO12_NC",
            Ldst8AbsLo12Nc => "R_AARCH64_LDST8_ABS_LO12_NC",
            Ldst16AbsLo12Nc => "R_AARCH64_LDST16_ABS_LO12_NC",
            Ldst32AbsLo12Nc => "R_AARCH64_LDST32_ABS_LO12_NC",
            Ldst64AbsLo12Nc => "R_AARCH64_LDST64_ABS_LO12_NC",
            Ldst128AbsLo12Nc => "R_AARCH64_LDST128_ABS_LO12_NC",
            TstBr14 => "R_AARCH64_TSTBR14",
            CondBr19 => "R_AARCH64_CONDBR19",
            Jump26 => "R_AARCH64_JUMP26",
            Call26 => "R_AARCH64_CALL26",
            GotLdPrel19 => "R_AARCH64_GOT_LD_PREL19",
            AdrGotPage => "R_AARCH64_ADR_GOT_PAGE",
            Ld64GotLo12Nc => "R_AARCH64_LD64_GOT_LO12_NC",
            Ld64GotPageLo15 => "R_AARCH64_LD64_GOTPAGE_LO15",
            TlsGdAdrPrel21 => "R_AARCH64_TLSGD_ADR_PREL21",
            TlsGdAdrPage21 => "R_AARCH64_TLSGD_ADR_PAGE21",
            TlsGdAddLo12Nc => "R_AARCH64_TLSGD_ADD_LO12_NC",
            TlsLdAdrPrel21 => "R_AARCH64_TLSLD_ADR_PREL21",
            TlsLdAdrPage21 => "R_AARCH64_TLSLD_ADR_PAGE21",
            TlsLdAddLo12Nc => "R_AARCH64_TLSLD_ADD_LO12_NC",
            TlsLdLdPrel19 => "R_AARCH64_TLSLD_LD_PREL19",
            TlsLdMovwDtpRelG2 => "R_AARCH64_TLSLD_MOVW_DTPREL_G2",
            TlsLdMovwDtpRelG1 => "R_AARCH64_TLSLD_MOVW_DTPREL_G1",
            TlsLdMovwDtpRelG1Nc => "R_AARCH64_TLSLD_MOVW_DTPREL_G1_NC",
            TlsLdMovwDtpRelG0 => "R_AARCH64_TLSLD_MOVW_DTPREL_G0",
            TlsLdMovwDtpRelG0Nc => "R_AARCH64_TLSLD_MOVW_DTPREL_G0_NC",
            TlsLdAddDtpRelHi12 => "R_AARCH64_TLSLD_ADD_DTPREL_HI12",
            TlsLdAddDtpRelLo12 => "R_AARCH64_TLSLD_ADD_DTPREL_LO12",
            TlsLdAddDtpRelLo12Nc => "R_AARCH64_TLSLD_ADD_DTPREL_LO12_NC",
            TlsLdLdst8DtpRelLo12 => "R_AARCH64_TLSLD_LDST8_DTPREL_LO12",
            TlsLdLdst8DtpRelLo12Nc => "R_AARCH64_TLSLD_LDST8_DTPREL_LO12_NC",
            TlsLdLdst16DtpRelLo12 => "R_AARCH64_TLSLD_LDST16_DTPREL_LO12",
            TlsLdLdst16DtpRelLo12Nc => "R_AARCH64_TLSLD_LDST16_DTPREL_LO12_NC",
            TlsLdLdst32DtpRelLo12 => "R_AARCH64_TLSLD_LDST32_DTPREL_LO12",
            TlsLdLdst32DtpRelLo12Nc => "R_AARCH64_TLSLD_LDST32_DTPREL_LO12_NC",
            TlsLdLdst64DtpRelLo12 => "R_AARCH64_TLSLD_LDST64_DTPREL_LO12",
            TlsLdLdst64DtpRelLo12Nc => "R_AARCH64_TLSLD_LDST64_DTPREL_LO12_NC",
            TlsLdLdst128DtpRelLo12 => "R_AARCH64_TLSLD_LDST128_DTPREL_LO12",
            TlsLdLdst128DtpRelLo12Nc => "R_AARCH64_TLSLD_LDST128_DTPREL_LO12_NC",
            TlsIeAdrGotTpRelPage21 => "R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21",
            TlsIeLd64GotTpRelLo12Nc => "R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC",
            TlsIeLdGotTpRelPrel19 => "R_AARCH64_TLSIE_LD_GOTTPREL_PREL19",
            TlsLeMovwTpRelG2 => "R_AARCH64_TLSLE_MOVW_TPREL_G2",
            TlsLeMovwTpRelG1 => "R_AARCH64_TLSLE_MOVW_TPREL_G1",
            TlsLeMovwTpRelG1Nc => "R_AARCH64_TLSLE_MOVW_TPREL_G1_NC",
            TlsLeMovwTpRelG0 => "R_AARCH64_TLSLE_MOVW_TPREL_G0",
            TlsLeMovwTpRelG0Nc => "R_AARCH64_TLSLE_MOVW_TPREL_G0_NC",
            TlsLeAddTpRelHi12 => "R_AARCH64_TLSLE_ADD_TPREL_HI12",
            TlsLeAddTpRelLo12 => "R_AARCH64_TLSLE_ADD_TPREL_LO12",
            TlsLeAddTpRelLo12Nc => "R_AARCH64_TLSLE_ADD_TPREL_LO12_NC",
            TlsLeLdst8TpRelLo12 => "R_AARCH64_TLSLE_LDST8_TPREL_LO12",
            TlsLeLdst8TpRelLo12Nc => "R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC",
            TlsLeLdst16TpRelLo12 => "R_AARCH64_TLSLE_LDST16_TPREL_LO12",
            TlsLeLdst16TpRelLo12Nc => "R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC",
            TlsLeLdst32TpRelLo12 => "R_AARCH64_TLSLE_LDST32_TPREL_LO12",
            TlsLeLdst32TpRelLo12Nc => "R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC",
            TlsLeLdst64TpRelLo12 => "R_AARCH64_TLSLE_LDST64_TPREL_LO12",
            TlsLeLdst64TpRelLo12Nc => "R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC",
            TlsLeLdst128TpRelLo12 => "R_AARCH64_TLSLE_LDST128_TPREL_LO12",
            TlsLeLdst128TpRelLo12Nc => "R_AARCH64_TLSLE_LDST128_TPREL_LO12_NC",
            TlsDescLdPrel19 => "R_AARCH64_TLSDESC_LD_PREL19",
            TlsDescAdrPrel21 => "R_AARCH64_TLSDESC_ADR_PREL21",
            TlsDescAdrPage21 => "R_AARCH64_TLSDESC_ADR_PAGE21",
            TlsDescLd64Lo12 => "R_AARCH64_TLSDESC_LD64_LO12",
            TlsDescAddLo12 => "R_AARCH64_TLSDESC_ADD_LO12",
            TlsDescCall => "R_AARCH64_TLSDESC_CALL",
            TlsDtpMod64 => "R_AARCH64_TLS_DTPMOD",
            TlsDtpRel64 => "R_AARCH64_TLS_DTPREL",
            TlsTpRel64 => "R_AARCH64_TLS_TPREL",
            Delta32 => "ARM64_RELOC_SUBTRACTOR (32-bit)",
            Delta64 => "ARM64_RELOC_SUBTRACTOR (64-bit)",
            PageOffset12 => "ARM64_RELOC_PAGEOFF12",
            PointerToGot32 => "ARM64_RELOC_POINTER_TO_GOT (32-bit)",
            PointerToGot64 => "ARM64_RELOC_POINTER_TO_GOT (64-bit)",
            TlvpPage21 => "ARM64_RELOC_TLVP_LOAD_PAGE21",
            TlvpPageOffset12 => "ARM64_RELOC_TLVP_LOAD_PAGEOFF12",
        }
    }

    /// Bytes the fixup writes at its offset.
    pub fn width(self) -> u64 {
        match self.recipe().1 {
            Field::None => 0,
            Field::Data16(_) => 2,
            Field::Data64 => 8,
            // Data32 and every instruction.
            _ => 4,
        }
    }

    /// Whether the kind needs a GOT entry holding the target's address.
    pub fn uses_address_got(self) -> bool {
        use Kind::*;
        matches!(
            self,
            GotLdPrel19
                | AdrGotPage
                | Ld64GotLo12Nc
                | Ld64GotPageLo15
                | PointerToGot32
                | PointerToGot64
                | TlvpPage21
                | TlvpPageOffset12
        )
    }

    /// How a far target outside the image is reached (see [`FarReference`]):
    /// calls through stubs; the address-taking instructions of
    /// position-dependent code (`ADRP`/`ADR` and the low bits they pair
    /// with, `MOVW` of an absolute address, a literal load) reach a far
    /// variable through a copy in the image and a far function through its
    /// stub.
    pub fn far_reference(self) -> FarReference {
        use Kind::*;
        match self {
            Call26 | Jump26 | Plt32 => FarReference::ThroughStub,
            AdrPrelPgHi21 | AdrPrelPgHi21Nc | AdrPrelLo21 | LdPrelLo19 | AddAbsLo12Nc | Ldst8AbsLo12Nc
            | Ldst16AbsLo12Nc | Ldst32AbsLo12Nc | Ldst64AbsLo12Nc | Ldst128AbsLo12Nc | PageOffset12 | MovwUabsG0
            | MovwUabsG0Nc | MovwUabsG1 | MovwUabsG1Nc | MovwUabsG2 | MovwUabsG2Nc | MovwUabsG3 | MovwSabsG0
            | MovwSabsG1 | MovwSabsG2 => FarReference::StubOrCopy,
            _ => FarReference::Never,
        }
    }

    /// The farthest the kind reaches from the place (see `EdgeKind::reach`).
    pub fn reach(self) -> Option<u64> {
        use Kind::*;
        match self {
            AdrPrelPgHi21
            | AdrGotPage
            | TlsGdAdrPage21
            | TlsLdAdrPage21
            | TlsIeAdrGotTpRelPage21
            | TlsDescAdrPage21
            | TlvpPage21 => Some(1 << 32),
            Call26 | Jump26 => Some(1 << 27),
            AdrPrelLo21 | LdPrelLo19 | CondBr19 | GotLdPrel19 => Some(1 << 20),
            TstBr14 => Some(1 << 15),
            Prel32 | Plt32 | Delta32 | PointerToGot32 => Some(1 << 31),
            _ => Option::None,
        }
    }

    /// Whether a PC-relative reach of ±2 GiB or less limits the kind.
    pub fn is_near_pc_relative(self) -> bool {
        matches!(
            self,
            Kind::Call26
                | Kind::Jump26
                | Kind::CondBr19
                | Kind::TstBr14
                | Kind::LdPrelLo19
                | Kind::AdrPrelLo21
                | Kind::AdrPrelPgHi21
                | Kind::Prel32
                | Kind::Plt32
        )
    }

    /// The kind as a [`PlainFixup`], if it is one.
    #[inline]
    pub fn plain(self) -> Option<PlainFixup> {
        match self {
            Kind::Abs64 => Some(PlainFixup::Absolute64),
            _ => None,
        }
    }

    /// [`Kind::from_elf`] for the numbers of [`Kind::plain`] kinds only.
    #[inline]
    pub fn plain_from_elf(r_type: u32) -> Option<Kind> {
        match r_type {
            object::elf::R_AARCH64_ABS64 => Some(Kind::Abs64),
            _ => None,
        }
    }

    /// Whether the kind needs `GOT`, the table's base, even with no entry.
    pub fn needs_got_base(self) -> bool {
        self.recipe().0 == Equation::GotEntryFromGotPage
    }

    /// Whether the kind stores an absolute address checked to 32 bits, so
    /// a target in the image needs the image in the low 4 GiB.
    pub fn is_abs32(self) -> bool {
        matches!(self, Kind::Abs32 | Kind::MovwUabsG1 | Kind::MovwSabsG1)
    }

    /// Whether the edge records a subtracted symbol (`B`).
    pub fn uses_subtrahend(self) -> bool {
        self.recipe().0 == Equation::Difference
    }

    pub fn is_tls(self) -> bool {
        self.tls_access().is_some() || self == Kind::TlsDescCall
    }

    /// Which thread-local value the kind needs (see [`TlsAccess`]); `None`
    /// for kinds that are not TLS, and for the `TlsDescCall` marker.
    pub fn tls_access(self) -> Option<TlsAccess> {
        use Kind::*;
        Some(match self {
            TlsLeMovwTpRelG2
            | TlsLeMovwTpRelG1
            | TlsLeMovwTpRelG1Nc
            | TlsLeMovwTpRelG0
            | TlsLeMovwTpRelG0Nc
            | TlsLeAddTpRelHi12
            | TlsLeAddTpRelLo12
            | TlsLeAddTpRelLo12Nc
            | TlsLeLdst8TpRelLo12
            | TlsLeLdst8TpRelLo12Nc
            | TlsLeLdst16TpRelLo12
            | TlsLeLdst16TpRelLo12Nc
            | TlsLeLdst32TpRelLo12
            | TlsLeLdst32TpRelLo12Nc
            | TlsLeLdst64TpRelLo12
            | TlsLeLdst64TpRelLo12Nc
            | TlsLeLdst128TpRelLo12
            | TlsLeLdst128TpRelLo12Nc
            | TlsTpRel64 => TlsAccess::TpOffset,
            TlsLdMovwDtpRelG2
            | TlsLdMovwDtpRelG1
            | TlsLdMovwDtpRelG1Nc
            | TlsLdMovwDtpRelG0
            | TlsLdMovwDtpRelG0Nc
            | TlsLdAddDtpRelHi12
            | TlsLdAddDtpRelLo12
            | TlsLdAddDtpRelLo12Nc
            | TlsLdLdst8DtpRelLo12
            | TlsLdLdst8DtpRelLo12Nc
            | TlsLdLdst16DtpRelLo12
            | TlsLdLdst16DtpRelLo12Nc
            | TlsLdLdst32DtpRelLo12
            | TlsLdLdst32DtpRelLo12Nc
            | TlsLdLdst64DtpRelLo12
            | TlsLdLdst64DtpRelLo12Nc
            | TlsLdLdst128DtpRelLo12
            | TlsLdLdst128DtpRelLo12Nc
            | TlsDtpRel64 => TlsAccess::DtpOffset,
            TlsDtpMod64 => TlsAccess::ModuleId,
            TlsIeAdrGotTpRelPage21 | TlsIeLd64GotTpRelLo12Nc | TlsIeLdGotTpRelPrel19 => TlsAccess::GotTpOffset,
            TlsGdAdrPrel21 | TlsGdAdrPage21 | TlsGdAddLo12Nc => TlsAccess::GotTlsIndex,
            TlsLdAdrPrel21 | TlsLdAdrPage21 | TlsLdAddLo12Nc | TlsLdLdPrel19 => TlsAccess::GotTlsModule,
            TlsDescLdPrel19 | TlsDescAdrPrel21 | TlsDescAdrPage21 | TlsDescLd64Lo12 | TlsDescAddLo12 => {
                TlsAccess::GotTlsDescriptor
            }
            _ => return Option::None,
        })
    }

    /// The kind's equation and the field it writes the value into.
    fn recipe(self) -> (Equation, Field) {
        use Equation::*;
        use Field::{AddHi12, AddLo12, Branch26, ConditionalBranch19, GotLoadLo12, GotLoadLo15, LoadLiteral};
        use Field::{Adr, Adrp, Data16, Data32, Data64};
        use Field::{LoadStoreLo12, MoveWide, PageOffsetLo12, TestBranch14};
        use Kind::*;
        use MoveRule::{Movk, MovzOrMovk, MovzOrMovnBySign as Signed};
        let lo12 = |size_log2, checked| LoadStoreLo12 { size_log2, checked };
        match self {
            None | TlsDescCall => (Nothing, Field::None),
            Abs64 | TlsDtpMod64 | TlsDtpRel64 | TlsTpRel64 => (SymbolPlusAddend, Data64),
            Abs32 => (SymbolPlusAddend, Data32(DATA32)),
            Abs16 => (SymbolPlusAddend, Data16(DATA16)),
            Prel64 => (PcRelative, Data64),
            Prel32 => (PcRelative, Data32(DATA32)),
            Prel16 => (PcRelative, Data16(DATA16)),
            Plt32 => (PcRelative, Data32(I32)),
            MovwUabsG0 => (SymbolPlusAddend, MoveWide(0, MovzOrMovk { checked: true })),
            MovwUabsG0Nc => (SymbolPlusAddend, MoveWide(0, MovzOrMovk { checked: false })),
            MovwUabsG1 => (SymbolPlusAddend, MoveWide(1, MovzOrMovk { checked: true })),
            MovwUabsG1Nc => (SymbolPlusAddend, MoveWide(1, MovzOrMovk { checked: false })),
            MovwUabsG2 => (SymbolPlusAddend, MoveWide(2, MovzOrMovk { checked: true })),
            MovwUabsG2Nc => (SymbolPlusAddend, MoveWide(2, MovzOrMovk { checked: false })),
            MovwUabsG3 => (SymbolPlusAddend, MoveWide(3, MovzOrMovk { checked: false })),
            MovwSabsG0 => (SymbolPlusAddend, MoveWide(0, Signed { checked: true })),
            MovwSabsG1 => (SymbolPlusAddend, MoveWide(1, Signed { checked: true })),
            MovwSabsG2 => (SymbolPlusAddend, MoveWide(2, Signed { checked: true })),
            MovwPrelG0 => (PcRelative, MoveWide(0, Signed { checked: true })),
            MovwPrelG0Nc => (PcRelative, MoveWide(0, Movk)),
            MovwPrelG1 => (PcRelative, MoveWide(1, Signed { checked: true })),
            MovwPrelG1Nc => (PcRelative, MoveWide(1, Movk)),
            MovwPrelG2 => (PcRelative, MoveWide(2, Signed { checked: true })),
            MovwPrelG2Nc => (PcRelative, MoveWide(2, Movk)),
            MovwPrelG3 => (PcRelative, MoveWide(3, Signed { checked: false })),
            LdPrelLo19 => (PcRelative, LoadLiteral { x_register_only: false }),
            AdrPrelLo21 => (PcRelative, Adr),
            AdrPrelPgHi21 => (PageDelta, Adrp { checked: true }),
            AdrPrelPgHi21Nc => (PageDelta, Adrp { checked: false }),
            AddAbsLo12Nc => (SymbolPlusAddend, AddLo12 { checked: false }),
            Ldst8AbsLo12Nc => (SymbolPlusAddend, lo12(0, false)),
            Ldst16AbsLo12Nc => (SymbolPlusAddend, lo12(1, false)),
            Ldst32AbsLo12Nc => (SymbolPlusAddend, lo12(2, false)),
            Ldst64AbsLo12Nc => (SymbolPlusAddend, lo12(3, false)),
            Ldst128AbsLo12Nc => (SymbolPlusAddend, lo12(4, false)),
            TstBr14 => (PcRelative, TestBranch14),
            CondBr19 => (PcRelative, ConditionalBranch19),
            Jump26 | Call26 => (PcRelative, Branch26),
            GotLdPrel19 => (GotPcRelative, LoadLiteral { x_register_only: true }),
            AdrGotPage => (GotPageDelta, Adrp { checked: true }),
            Ld64GotLo12Nc => (GotEntry, GotLoadLo12),
            Ld64GotPageLo15 => (GotEntryFromGotPage, GotLoadLo15),
            TlsGdAdrPrel21 | TlsLdAdrPrel21 | TlsDescAdrPrel21 => (GotPcRelative, Adr),
            TlsGdAdrPage21 | TlsLdAdrPage21 | TlsIeAdrGotTpRelPage21 | TlsDescAdrPage21 | TlvpPage21 => {
                (GotPageDelta, Adrp { checked: true })
            }
            TlsGdAddLo12Nc | TlsLdAddLo12Nc | TlsDescAddLo12 => (GotEntry, AddLo12 { checked: false }),
            TlsLdLdPrel19 | TlsIeLdGotTpRelPrel19 | TlsDescLdPrel19 => {
                (GotPcRelative, LoadLiteral { x_register_only: true })
            }
            TlsIeLd64GotTpRelLo12Nc | TlsDescLd64Lo12 | TlvpPageOffset12 => (GotEntry, GotLoadLo12),
            TlsLdMovwDtpRelG2 | TlsLeMovwTpRelG2 => (SymbolPlusAddend, MoveWide(2, Signed { checked: true })),
            TlsLdMovwDtpRelG1 | TlsLeMovwTpRelG1 => (SymbolPlusAddend, MoveWide(1, Signed { checked: true })),
            TlsLdMovwDtpRelG1Nc | TlsLeMovwTpRelG1Nc => (SymbolPlusAddend, MoveWide(1, Movk)),
            TlsLdMovwDtpRelG0 | TlsLeMovwTpRelG0 => (SymbolPlusAddend, MoveWide(0, Signed { checked: true })),
            TlsLdMovwDtpRelG0Nc | TlsLeMovwTpRelG0Nc => (SymbolPlusAddend, MoveWide(0, Movk)),
            TlsLdAddDtpRelHi12 | TlsLeAddTpRelHi12 => (SymbolPlusAddend, AddHi12 { checked: true }),
            TlsLdAddDtpRelLo12 | TlsLeAddTpRelLo12 => (SymbolPlusAddend, AddLo12 { checked: true }),
            TlsLdAddDtpRelLo12Nc | TlsLeAddTpRelLo12Nc => (SymbolPlusAddend, AddLo12 { checked: false }),
            TlsLdLdst8DtpRelLo12 | TlsLeLdst8TpRelLo12 => (SymbolPlusAddend, lo12(0, true)),
            TlsLdLdst8DtpRelLo12Nc | TlsLeLdst8TpRelLo12Nc => (SymbolPlusAddend, lo12(0, false)),
            TlsLdLdst16DtpRelLo12 | TlsLeLdst16TpRelLo12 => (SymbolPlusAddend, lo12(1, true)),
            TlsLdLdst16DtpRelLo12Nc | TlsLeLdst16TpRelLo12Nc => (SymbolPlusAddend, lo12(1, false)),
            TlsLdLdst32DtpRelLo12 | TlsLeLdst32TpRelLo12 => (SymbolPlusAddend, lo12(2, true)),
            TlsLdLdst32DtpRelLo12Nc | TlsLeLdst32TpRelLo12Nc => (SymbolPlusAddend, lo12(2, false)),
            TlsLdLdst64DtpRelLo12 | TlsLeLdst64TpRelLo12 => (SymbolPlusAddend, lo12(3, true)),
            TlsLdLdst64DtpRelLo12Nc | TlsLeLdst64TpRelLo12Nc => (SymbolPlusAddend, lo12(3, false)),
            TlsLdLdst128DtpRelLo12 | TlsLeLdst128TpRelLo12 => (SymbolPlusAddend, lo12(4, true)),
            TlsLdLdst128DtpRelLo12Nc | TlsLeLdst128TpRelLo12Nc => (SymbolPlusAddend, lo12(4, false)),
            Delta32 => (Difference, Data32(I32)),
            Delta64 => (Difference, Data64),
            PageOffset12 => (SymbolPlusAddend, PageOffsetLo12),
            PointerToGot32 => (GotPcRelative, Data32(I32)),
            PointerToGot64 => (GotEntry, Data64),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What ABS32 and PREL32 accept: either a signed or an unsigned 32-bit value.
const DATA32: Range = (i32::MIN as i128, u32::MAX as i128 + 1);
/// What ABS16 and PREL16 accept.
const DATA16: Range = (i16::MIN as i128, u16::MAX as i128 + 1);

/// The psABI's operations, the value `X` a kind computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Equation {
    Nothing,
    /// `S + A`.
    SymbolPlusAddend,
    /// `S + A - P` (`L + A - P` through a stub).
    PcRelative,
    /// `Page(S + A) - Page(P)`.
    PageDelta,
    /// `G + A`.
    GotEntry,
    /// `G + A - P`.
    GotPcRelative,
    /// `Page(G + A) - Page(P)`.
    GotPageDelta,
    /// `G + A - Page(GOT)`.
    GotEntryFromGotPage,
    /// `S + A - B`.
    Difference,
}

/// Where a kind writes `X`, and what it checks first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    None,
    /// 8 bytes, any value.
    Data64,
    /// 4 bytes, in the range.
    Data32(Range),
    /// 2 bytes, in the range.
    Data16(Range),
    /// ADRP `imm21 = X >> 12`, checked to ±4 GiB or not.
    Adrp {
        checked: bool,
    },
    /// ADR `imm21 = X`, ±1 MiB.
    Adr,
    /// ADD (immediate, no shift) `imm12 = X[11:0]`, checked to [0, 2^12) or not.
    AddLo12 {
        checked: bool,
    },
    /// ADD (immediate, LSL #12) `imm12 = X[23:12]`, checked to [0, 2^24) or not.
    AddHi12 {
        checked: bool,
    },
    /// LDR/STR (unsigned offset) of `2^size_log2` bytes, `imm12 =
    /// X[11:size_log2]`, X aligned to the size, checked to [0, 2^12) or not.
    LoadStoreLo12 {
        size_log2: u32,
        checked: bool,
    },
    /// LDR Xt (unsigned offset) of a GOT entry, `imm12 = X[11:3]`, 8-aligned.
    GotLoadLo12,
    /// LDR Xt (unsigned offset) of a GOT entry, `imm12 = X[14:3]`, 8-aligned, [0, 2^15).
    GotLoadLo15,
    /// Mach-O's PAGEOFF12: ADD or LDR/STR, the scale read from the instruction.
    PageOffsetLo12,
    /// LDR (literal) `imm19 = X >> 2`, ±1 MiB, 4-aligned; of an X register
    /// only for GOT slots.
    LoadLiteral {
        x_register_only: bool,
    },
    /// B/BL `imm26 = X >> 2`, ±128 MiB, 4-aligned.
    Branch26,
    /// B.cond/CBZ/CBNZ `imm19 = X >> 2`, ±1 MiB, 4-aligned.
    ConditionalBranch19,
    /// TBZ/TBNZ `imm14 = X >> 2`, ±32 KiB, 4-aligned.
    TestBranch14,
    /// MOVZ/MOVN/MOVK of the halfword `X[16g + 15 : 16g]` of group `g`.
    MoveWide(u32, MoveRule),
}

/// How a MOVW kind treats the instruction and checks `X`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MoveRule {
    /// Unsigned groups: MOVZ or MOVK as assembled; `0 <= X < 2^(16(g+1))` when checked.
    MovzOrMovk { checked: bool },
    /// Signed groups: MOVZ with the bits of X when X >= 0, else MOVN with
    /// those of !X; `-2^(16(g+1)) <= X < 2^(16(g+1))` when checked.
    MovzOrMovnBySign { checked: bool },
    /// The `_NC` forms of signed groups: MOVK, no check.
    Movk,
}

/// Applies one fixup to `data` (the block's bytes) at `offset`.
///
/// Pure: it reads and writes only `data`, so unit tests can hit every kind
/// without mapping memory. A value that does not fit, a misaligned one and
/// an instruction of the wrong class are errors, never a truncated write.
pub fn apply_fixup(kind: Kind, data: &mut [u8], offset: usize, v: &FixupValues) -> Result<FixupOutcome, FixupError> {
    let (equation, field) = kind.recipe();
    // Addresses are user-space (below 2^52), and TLS offsets may be
    // negative: reading every value as signed 64-bit serves both.
    let signed = |x: u64| i128::from(x as i64);
    let (s, a, p) = (signed(v.s), i128::from(v.a), signed(v.p));
    let g = || v.g.map(signed).ok_or(FixupError::MissingGotEntry);
    let page = |x: i128| x & !0xfff;
    let x = match equation {
        Equation::Nothing => return Ok(FixupOutcome::Nothing),
        Equation::SymbolPlusAddend => s + a,
        Equation::PcRelative => s + a - p,
        Equation::PageDelta => page(s + a) - page(p),
        Equation::GotEntry => g()? + a,
        Equation::GotPcRelative => g()? + a - p,
        Equation::GotPageDelta => page(g()? + a) - page(p),
        Equation::GotEntryFromGotPage => g()? + a - page(signed(v.got)),
        Equation::Difference => s + a - signed(v.b),
    };
    let through_got = matches!(
        equation,
        Equation::GotEntry | Equation::GotPcRelative | Equation::GotPageDelta | Equation::GotEntryFromGotPage
    );
    let through_stub = kind.far_reference() == FarReference::ThroughStub;
    if let (true, true, Some(l)) = (v.movable, through_stub, v.stub) {
        write_field(field, data, offset, signed(l) + a - p)?;
        return Ok(FixupOutcome::ViaStub);
    }
    match (write_field(field, data, offset, x), v.stub) {
        (Ok(()), _) if through_got => Ok(FixupOutcome::ViaGot),
        (Ok(()), _) => Ok(FixupOutcome::Direct),
        // A failed check wrote nothing: the field takes the stub's displacement instead.
        (Err(FixupError::OutOfRange { .. }), Some(l)) if through_stub => {
            write_field(field, data, offset, signed(l) + a - p)?;
            Ok(FixupOutcome::ViaStub)
        }
        (Err(e), _) => Err(e),
    }
}

/// Writes `x` into `field` at `offset`, after the checks the field needs.
fn write_field(field: Field, data: &mut [u8], offset: usize, x: i128) -> Result<(), FixupError> {
    match field {
        Field::None => Ok(()),
        Field::Data64 => {
            *bytes_at::<8>(data, offset)? = (x as u64).to_le_bytes();
            Ok(())
        }
        Field::Data32(range) => {
            let bytes = bytes_at::<4>(data, offset)?;
            in_range(x, range)?;
            *bytes = (x as u32).to_le_bytes();
            Ok(())
        }
        Field::Data16(range) => {
            let bytes = bytes_at::<2>(data, offset)?;
            in_range(x, range)?;
            *bytes = (x as u16).to_le_bytes();
            Ok(())
        }
        _ => {
            let bytes = bytes_at::<4>(data, offset)?;
            let word = u32::from_le_bytes(*bytes);
            *bytes = patch_instruction(field, word, x)?.to_le_bytes();
            Ok(())
        }
    }
}

/// `word` with `x` in the immediate `field` names, once the word is known
/// to be of the expected class and `x` to fit.
fn patch_instruction(field: Field, word: u32, x: i128) -> Result<u32, FixupError> {
    use instruction::*;
    let form = decode(word);
    let expect = |ok: bool, expected: &'static str| {
        if ok {
            Ok(())
        } else {
            Err(FixupError::UnexpectedInstruction { word, expected })
        }
    };
    let check_if = |checked: bool, range: Range| if checked { in_range(x, range) } else { Ok(()) };
    match field {
        Field::Adrp { checked } => {
            expect(form == Some(Form::Adrp), "adrp")?;
            check_if(checked, signed_bits(33))?;
            Ok(with_adr_immediate(word, x >> 12))
        }
        Field::Adr => {
            expect(form == Some(Form::Adr), "adr")?;
            in_range(x, signed_bits(21))?;
            Ok(with_adr_immediate(word, x))
        }
        Field::AddLo12 { checked } => {
            expect(form == Some(Form::AddSubImmediate { add: true, shifted: false }), "add (immediate)")?;
            check_if(checked, (0, 1 << 12))?;
            Ok(with_imm12(word, x))
        }
        Field::AddHi12 { checked } => {
            expect(form == Some(Form::AddSubImmediate { add: true, shifted: true }), "add (immediate, lsl #12)")?;
            check_if(checked, (0, 1 << 24))?;
            Ok(with_imm12(word, x >> 12))
        }
        Field::LoadStoreLo12 { size_log2, checked } => {
            let size_matches =
                matches!(form, Some(Form::LoadStoreUnsignedOffset { size_log2: s, .. }) if s == size_log2);
            expect(size_matches, LOAD_STORE_OF_SIZE[size_log2 as usize])?;
            check_if(checked, (0, 1 << 12))?;
            aligned(x, 1 << size_log2)?;
            Ok(with_imm12(word, (x & 0xfff) >> size_log2))
        }
        Field::GotLoadLo12 => {
            expect(is_ldr_x(form), "ldr x (unsigned offset)")?;
            aligned(x, 8)?;
            Ok(with_imm12(word, (x & 0xfff) >> 3))
        }
        Field::GotLoadLo15 => {
            expect(is_ldr_x(form), "ldr x (unsigned offset)")?;
            in_range(x, (0, 1 << 15))?;
            aligned(x, 8)?;
            Ok(with_imm12(word, x >> 3))
        }
        Field::PageOffsetLo12 => {
            let size_log2 = match form {
                Some(Form::AddSubImmediate { add: true, shifted: false }) => 0,
                Some(Form::LoadStoreUnsignedOffset { size_log2, .. }) => size_log2,
                _ => {
                    return Err(FixupError::UnexpectedInstruction {
                        word,
                        expected: "add or ldr/str (unsigned offset)",
                    })
                }
            };
            aligned(x, 1 << size_log2)?;
            Ok(with_imm12(word, (x & 0xfff) >> size_log2))
        }
        Field::LoadLiteral { x_register_only } => {
            let loads = matches!(form, Some(Form::LoadLiteral { loads_x_register, .. }) if loads_x_register || !x_register_only);
            expect(loads, if x_register_only { "ldr x (literal)" } else { "ldr (literal)" })?;
            in_range(x, signed_bits(21))?;
            aligned(x, 4)?;
            Ok(with_imm19(word, x >> 2))
        }
        Field::Branch26 => {
            expect(form == Some(Form::Branch), "b or bl")?;
            in_range(x, signed_bits(28))?;
            aligned(x, 4)?;
            Ok(with_imm26(word, x >> 2))
        }
        Field::ConditionalBranch19 => {
            expect(matches!(form, Some(Form::ConditionalBranch | Form::CompareAndBranch)), "b.cond, cbz or cbnz")?;
            in_range(x, signed_bits(21))?;
            aligned(x, 4)?;
            Ok(with_imm19(word, x >> 2))
        }
        Field::TestBranch14 => {
            expect(form == Some(Form::TestAndBranch), "tbz or tbnz")?;
            in_range(x, signed_bits(16))?;
            aligned(x, 4)?;
            Ok(with_imm14(word, x >> 2))
        }
        Field::MoveWide(group, rule) => patch_move_wide(word, form, group, rule, x),
        Field::None | Field::Data64 | Field::Data32(_) | Field::Data16(_) => unreachable!("not an instruction field"),
    }
}

const LOAD_STORE_OF_SIZE: [&str; 5] = [
    "ldr/str (unsigned offset) of 1 byte",
    "ldr/str (unsigned offset) of 2 bytes",
    "ldr/str (unsigned offset) of 4 bytes",
    "ldr/str/prfm (unsigned offset) of 8 bytes",
    "ldr/str (unsigned offset) of 16 bytes",
];

fn is_ldr_x(form: Option<Form>) -> bool {
    matches!(form, Some(Form::LoadStoreUnsignedOffset { loads_x_register: true, .. }))
}

/// MOVZ/MOVK/MOVN of group `group`: the instruction must be one the rule
/// allows, with the shift the group means (the assembler sets it).
fn patch_move_wide(word: u32, form: Option<Form>, group: u32, rule: MoveRule, x: i128) -> Result<u32, FixupError> {
    const MOVZ_OR_MOVK: [&str; 4] =
        ["movz or movk", "movz or movk, lsl #16", "movz or movk, lsl #32", "movz or movk, lsl #48"];
    const MOVZ_OR_MOVN: [&str; 4] =
        ["movz or movn", "movz or movn, lsl #16", "movz or movn, lsl #32", "movz or movn, lsl #48"];
    const MOVK: [&str; 4] = ["movk", "movk, lsl #16", "movk, lsl #32", "movk, lsl #48"];
    let (allowed, expected) = match rule {
        MoveRule::MovzOrMovk { .. } => ([MoveWideOp::Movz, MoveWideOp::Movk], MOVZ_OR_MOVK),
        MoveRule::MovzOrMovnBySign { .. } => ([MoveWideOp::Movz, MoveWideOp::Movn], MOVZ_OR_MOVN),
        MoveRule::Movk => ([MoveWideOp::Movk, MoveWideOp::Movk], MOVK),
    };
    let matches = matches!(form, Some(Form::MoveWide { op, hw }) if allowed.contains(&op) && hw == group);
    if !matches {
        return Err(FixupError::UnexpectedInstruction { word, expected: expected[group as usize] });
    }
    let shift = 16 * group;
    let limit = 1i128 << (shift + 16);
    let halfword = |value: i128| (value >> shift) & 0xffff;
    match rule {
        MoveRule::MovzOrMovk { checked } => {
            if checked {
                in_range(x, (0, limit))?;
            }
            Ok(instruction::with_bits(word, 5, 16, halfword(x)))
        }
        MoveRule::MovzOrMovnBySign { checked } => {
            if checked {
                in_range(x, (-limit, limit))?;
            }
            Ok(if x >= 0 {
                instruction::with_move_wide(word, MoveWideOp::Movz, halfword(x))
            } else {
                instruction::with_move_wide(word, MoveWideOp::Movn, halfword(!x))
            })
        }
        MoveRule::Movk => Ok(instruction::with_bits(word, 5, 16, halfword(x))),
    }
}

/// Size of one stub (PLT entry).
pub const STUB_SIZE: u64 = 16;

/// What every stub starts with but the ADRP and LDR immediates: `adrp x16,
/// 0; ldr x16, [x16]; br x16; udf #0`. x16 (IP0) is the register the
/// procedure-call standard lets veneers clobber.
const STUB_TEMPLATE: [u32; 4] = [0x90000010, 0xf9400210, 0xd61f0200, 0x00000000];

/// Writes the stub at `stub_addr` (`out` is its [`STUB_SIZE`] bytes) that
/// jumps through the GOT entry `got_entry`:
/// `adrp x16, Page(got_entry); ldr x16, [x16, #lo12(got_entry)]; br x16`,
/// then a trapping `udf #0`. The entry must be within ±4 GiB of the stub
/// and 8-aligned.
pub fn write_stub(out: &mut [u8], stub_addr: u64, got_entry: u64) -> Result<(), FixupError> {
    let code = bytes_at::<16>(out, 0)?;
    let [adrp, ldr, br, filler] = STUB_TEMPLATE;
    let page = |x: u64| i128::from(x & !0xfff);
    let adrp = patch_instruction(Field::Adrp { checked: true }, adrp, page(got_entry) - page(stub_addr))?;
    let ldr = patch_instruction(Field::GotLoadLo12, ldr, i128::from(got_entry))?;
    for (slot, word) in code.chunks_exact_mut(4).zip([adrp, ldr, br, filler]) {
        slot.copy_from_slice(&word.to_le_bytes());
    }
    Ok(())
}

/// Bytes of [`write_jump_to_absolute`]'s sequence.
pub const JUMP_TO_ABSOLUTE_SIZE: usize = 16;

/// Writes `ldr x16, #8; br x16; .quad address` into `out`: a jump to a
/// host function (one of jitrun's own) anywhere in the address space.
/// The literal sits 8 bytes in, so a 16-aligned block keeps it 8-aligned.
pub fn write_jump_to_absolute(out: &mut [u8], address: u64) -> Result<(), FixupError> {
    let code = bytes_at::<JUMP_TO_ABSOLUTE_SIZE>(out, 0)?;
    code[0..4].copy_from_slice(&0x58000050u32.to_le_bytes());
    code[4..8].copy_from_slice(&0xd61f0200u32.to_le_bytes());
    code[8..16].copy_from_slice(&address.to_le_bytes());
    Ok(())
}

/// What fills code where no instruction was placed: `udf #0`, all zero
/// bits, a permanently undefined encoding. Executing it raises SIGILL,
/// which jitrun's crash report catches (it does not catch SIGTRAP, what
/// `brk` raises), and memory that was never written, zero, traps the same.
pub const CODE_FILL: [u8; 4] = 0x00000000u32.to_le_bytes();

/// `nop` (`hint #0`): the padding between `.init`/`.fini` fragments, which
/// execution runs through from one fragment to the next.
pub const NOP: [u8; 4] = 0xd503201fu32.to_le_bytes();
