//! The AArch64 instruction forms relocations patch: recognising them in a
//! word, replacing their immediate fields, and reading their operands back
//! the way LLVM's `MCInst` numbers them (for `--check`'s `decode_operand`).
//!
//! Bit layouts are those of the Arm Architecture Reference Manual's
//! encoding index ("Data Processing -- Immediate", "Branches, Exception
//! Generating and System instructions", "Loads and Stores").

/// An instruction form some relocation patches, recognised in a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `ADR Xd, label`: a 21-bit byte displacement.
    Adr,
    /// `ADRP Xd, label`: a 21-bit displacement in 4 KiB pages.
    Adrp,
    /// `ADD`, `ADDS`, `SUB`, `SUBS` (immediate): a 12-bit immediate,
    /// shifted left by 12 when `shifted`.
    AddSubImmediate { add: bool, shifted: bool },
    /// `LDR`, `STR`, `LDRS*`, `PRFM` (immediate, unsigned offset): a 12-bit
    /// offset in units of the access size, `1 << size_log2` bytes.
    LoadStoreUnsignedOffset { size_log2: u32, loads_x_register: bool, prefetch: bool },
    /// `LDR`, `LDRSW`, `PRFM` (literal): a 19-bit displacement in words.
    LoadLiteral { loads_x_register: bool, prefetch: bool },
    /// `B`, `BL`: a 26-bit displacement in words.
    Branch,
    /// `B.cond` (and `BC.cond`): a 19-bit displacement in words.
    ConditionalBranch,
    /// `CBZ`, `CBNZ`: a 19-bit displacement in words.
    CompareAndBranch,
    /// `TBZ`, `TBNZ`: a 14-bit displacement in words.
    TestAndBranch,
    /// `MOVN`, `MOVZ`, `MOVK`: a 16-bit immediate placed at bit `16 * hw`.
    MoveWide { op: MoveWideOp, hw: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MoveWideOp {
    /// Writes `!(imm16 << 16 * hw)`.
    Movn,
    /// Writes `imm16 << 16 * hw`.
    Movz,
    /// Replaces bits `[16 * hw + 15 : 16 * hw]`, keeping the others.
    Movk,
}

impl MoveWideOp {
    /// The `opc` field, bits 30:29.
    fn opc(self) -> u32 {
        match self {
            MoveWideOp::Movn => 0b00,
            MoveWideOp::Movz => 0b10,
            MoveWideOp::Movk => 0b11,
        }
    }
}

/// The `width` bits of `word` from bit `lsb` up.
pub(crate) fn bits(word: u32, lsb: u32, width: u32) -> u32 {
    (word >> lsb) & ((1 << width) - 1)
}

/// The same bits read as a two's-complement number.
fn signed(word: u32, lsb: u32, width: u32) -> i64 {
    let value = i64::from(bits(word, lsb, width));
    (value << (64 - width)) >> (64 - width)
}

/// `word` with its `width` bits from `lsb` up replaced by the low bits of
/// `value` (negative values are taken in two's complement).
pub(crate) fn with_bits(word: u32, lsb: u32, width: u32, value: i128) -> u32 {
    let mask = ((1u32 << width) - 1) << lsb;
    (word & !mask) | (((value as u32) << lsb) & mask)
}

/// Recognises the forms a relocation may patch; `None` for any other
/// instruction, and for the unallocated encodings inside these classes.
pub(crate) fn decode(word: u32) -> Option<Form> {
    if word & 0x1f00_0000 == 0x1000_0000 {
        return Some(if word >> 31 == 1 { Form::Adrp } else { Form::Adr });
    }
    if word & 0x1f80_0000 == 0x1100_0000 {
        // Bit 22 is the shift; bit 23 set would be the tagged ADDG/SUBG.
        return Some(Form::AddSubImmediate { add: bits(word, 30, 1) == 0, shifted: bits(word, 22, 1) == 1 });
    }
    if word & 0x3b00_0000 == 0x3900_0000 {
        return decode_load_store_unsigned_offset(word);
    }
    if word & 0x3b00_0000 == 0x1800_0000 {
        let (opc, vector) = (bits(word, 30, 2), bits(word, 26, 1) == 1);
        if vector && opc == 0b11 {
            return None;
        }
        let general = !vector;
        return Some(Form::LoadLiteral { loads_x_register: general && opc == 0b01, prefetch: general && opc == 0b11 });
    }
    if word & 0x7c00_0000 == 0x1400_0000 {
        return Some(Form::Branch);
    }
    if word & 0xff00_0000 == 0x5400_0000 {
        return Some(Form::ConditionalBranch);
    }
    if word & 0x7e00_0000 == 0x3400_0000 {
        return Some(Form::CompareAndBranch);
    }
    if word & 0x7e00_0000 == 0x3600_0000 {
        return Some(Form::TestAndBranch);
    }
    if word & 0x1f80_0000 == 0x1280_0000 {
        let op = match bits(word, 29, 2) {
            0b00 => MoveWideOp::Movn,
            0b10 => MoveWideOp::Movz,
            0b11 => MoveWideOp::Movk,
            _ => return None,
        };
        let (is_64bit, hw) = (bits(word, 31, 1) == 1, bits(word, 21, 2));
        // A W register has only the two low halfwords.
        if !is_64bit && hw >= 2 {
            return None;
        }
        return Some(Form::MoveWide { op, hw });
    }
    None
}

/// `size:111:V:01:opc:imm12:Rn:Rt`. The access size is `size`, except that
/// a vector register with `opc` = 1x is the 16-byte Q form.
fn decode_load_store_unsigned_offset(word: u32) -> Option<Form> {
    let (size, vector, opc) = (bits(word, 30, 2), bits(word, 26, 1) == 1, bits(word, 22, 2));
    let size_log2 = match (vector, size, opc) {
        (true, 0, 0b10 | 0b11) => 4,
        (true, _, 0b10 | 0b11) => return None,
        // LDRSW takes size 2 with opc 10; opc 11 (a 32-bit sign
        // extension of a 32-bit load) does not exist, nor does it for 64.
        (false, 2 | 3, 0b11) => return None,
        _ => size,
    };
    let general = !vector;
    Some(Form::LoadStoreUnsignedOffset {
        size_log2,
        loads_x_register: general && size == 3 && opc == 0b01,
        prefetch: general && size == 3 && opc == 0b10,
    })
}

/// ADR/ADRP with its 21-bit immediate (`immhi` at 5, `immlo` at 29) set to `imm`.
pub(crate) fn with_adr_immediate(word: u32, imm: i128) -> u32 {
    with_bits(with_bits(word, 29, 2, imm), 5, 19, imm >> 2)
}

/// ADD (immediate) and LDR/STR (unsigned offset) with `imm12` set.
pub(crate) fn with_imm12(word: u32, imm: i128) -> u32 {
    with_bits(word, 10, 12, imm)
}

/// LDR (literal), B.cond, CBZ/CBNZ with `imm19` set.
pub(crate) fn with_imm19(word: u32, imm: i128) -> u32 {
    with_bits(word, 5, 19, imm)
}

pub(crate) fn with_imm26(word: u32, imm: i128) -> u32 {
    with_bits(word, 0, 26, imm)
}

pub(crate) fn with_imm14(word: u32, imm: i128) -> u32 {
    with_bits(word, 5, 14, imm)
}

/// MOVN/MOVZ/MOVK made `op`, with `imm16` set (the shift `hw` is kept).
pub(crate) fn with_move_wide(word: u32, op: MoveWideOp, imm: i128) -> u32 {
    with_bits(with_bits(word, 29, 2, i128::from(op.opc())), 5, 16, imm)
}

/// Operand `index` of the instruction `word`, numbered and valued as LLVM's
/// disassembler builds its `MCInst` (which llvm-jitlink's `decode_operand`
/// returns, and its tests compare with): registers count but have no value
/// (`None`), MOVK's tied source register is counted twice, ADR/ADRP and
/// branch immediates are sign-extended and not scaled (ADRP's counts pages,
/// branches' count words), an unsigned load/store offset is the scaled
/// `imm12` field, ADD's shift is 0 or 12 and MOVZ/MOVK's 0, 16, 32 or 48.
/// `None` for an instruction of another form.
pub fn decode_operand(word: u32, index: u32) -> Option<i64> {
    let field = |lsb, width| i64::from(bits(word, lsb, width));
    match (decode(word)?, index) {
        // Rd, imm
        (Form::Adr | Form::Adrp, 1) => Some(signed(word, 5, 19) << 2 | field(29, 2)),
        // Rd, Rn, imm12, shift
        (Form::AddSubImmediate { .. }, 2) => Some(field(10, 12)),
        (Form::AddSubImmediate { shifted, .. }, 3) => Some(if shifted { 12 } else { 0 }),
        // Rt (a prefetch operation, an immediate, for PRFM), Rn, imm12
        (Form::LoadStoreUnsignedOffset { prefetch: true, .. }, 0) => Some(field(0, 5)),
        (Form::LoadStoreUnsignedOffset { .. }, 2) => Some(field(10, 12)),
        // Rt (or the prefetch operation), label
        (Form::LoadLiteral { prefetch: true, .. }, 0) => Some(field(0, 5)),
        (Form::LoadLiteral { .. }, 1) => Some(signed(word, 5, 19)),
        // label
        (Form::Branch, 0) => Some(signed(word, 0, 26)),
        // cond, label
        (Form::ConditionalBranch, 0) => Some(field(0, 4)),
        (Form::ConditionalBranch, 1) => Some(signed(word, 5, 19)),
        // Rt, label
        (Form::CompareAndBranch, 1) => Some(signed(word, 5, 19)),
        // Rt, bit number (b5:b40), label
        (Form::TestAndBranch, 1) => Some(field(31, 1) << 5 | field(19, 5)),
        (Form::TestAndBranch, 2) => Some(signed(word, 5, 14)),
        // Rd, Rd (tied), imm16, shift
        (Form::MoveWide { op: MoveWideOp::Movk, .. }, 2) => Some(field(5, 16)),
        (Form::MoveWide { op: MoveWideOp::Movk, hw }, 3) => Some(16 * i64::from(hw)),
        // Rd, imm16, shift
        (Form::MoveWide { op: MoveWideOp::Movk, .. }, _) => None,
        (Form::MoveWide { .. }, 1) => Some(field(5, 16)),
        (Form::MoveWide { hw, .. }, 2) => Some(16 * i64::from(hw)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words from `llvm-mc-14 -triple=aarch64-linux-gnu -show-encoding`,
    /// with the operand values `llvm-objdump-14 -d` prints for them
    /// (branch targets there are addresses: the values below are the
    /// displacement over 4, as the instruction holds it).
    /// (operand index, its value; `None` for a register)
    type Operands = &'static [(u32, Option<i64>)];

    const DECODED: &[(u32, &str, Operands)] = &[
        (0xb0091a21, "adrp x1, #0x12345000", &[(0, None), (1, Some(0x12345))]),
        (0xf0ffffe1, "adrp x1, #-4096", &[(1, Some(-1))]),
        (0x30ffffe2, "adr x2, #-3", &[(1, Some(-3))]),
        (0x10000002, "adr x2, #0", &[(1, Some(0))]),
        (0x91048c83, "add x3, x4, #291", &[(0, None), (1, None), (2, Some(291)), (3, Some(0))]),
        (0x91448c83, "add x3, x4, #291, lsl #12", &[(2, Some(291)), (3, Some(12))]),
        (0xd1000483, "sub x3, x4, #1", &[(2, Some(1)), (3, Some(0))]),
        (0x397ffc20, "ldrb w0, [x1, #4095]", &[(0, None), (1, None), (2, Some(4095))]),
        (0xf9400420, "ldr x0, [x1, #8]", &[(2, Some(1))]),
        (0x3dc00420, "ldr q0, [x1, #16]", &[(2, Some(1))]),
        (0xb9800420, "ldrsw x0, [x1, #4]", &[(2, Some(1))]),
        (0xf9800420, "prfm pldl1keep, [x1, #8]", &[(0, Some(0)), (2, Some(1))]),
        (0x58000050, "ldr x16, #8", &[(0, None), (1, Some(2))]),
        (0x18ffffe0, "ldr w0, #-4", &[(1, Some(-1))]),
        (0xd8000020, "prfm pldl1keep, #4", &[(0, Some(0)), (1, Some(1))]),
        (0x14000000, "b #0", &[(0, Some(0))]),
        (0x97ffffff, "bl #-4", &[(0, Some(-1))]),
        (0x54000040, "b.eq #8", &[(0, Some(0)), (1, Some(2))]),
        (0x54ffffc1, "b.ne #-8", &[(0, Some(1)), (1, Some(-2))]),
        (0xb4000020, "cbz x0, #4", &[(0, None), (1, Some(1))]),
        (0x35ffffe0, "cbnz w0, #-4", &[(1, Some(-1))]),
        (0x36180040, "tbz w0, #3, #8", &[(0, None), (1, Some(3)), (2, Some(2))]),
        (0xb7ffffc0, "tbnz x0, #63, #-8", &[(1, Some(63)), (2, Some(-2))]),
        (0xd2a00020, "movz x0, #1, lsl #16", &[(0, None), (1, Some(1)), (2, Some(16))]),
        (0x92ffffe0, "movn x0, #0xffff, lsl #48", &[(1, Some(0xffff)), (2, Some(48))]),
        (0xf2c24680, "movk x0, #0x1234, lsl #32", &[(0, None), (1, None), (2, Some(0x1234)), (3, Some(32))]),
        (0x52a000a0, "movz w0, #5, lsl #16", &[(1, Some(5)), (2, Some(16))]),
    ];

    #[test]
    fn operands_are_numbered_and_valued_as_llvm_does() {
        for &(word, asm, operands) in DECODED {
            for &(index, expected) in operands {
                assert_eq!(decode_operand(word, index), expected, "{asm}: operand {index}");
            }
        }
    }

    #[test]
    fn other_instructions_and_unallocated_encodings_have_no_operands() {
        for (word, what) in [
            (0xd503201f, "nop"),
            (0xd65f03c0, "ret"),
            (0xd61f0200, "br x16"),
            (0x00000000, "udf #0"),
            (0xaa0103e0, "mov x0, x1 (orr)"),
            (0xa9bf7bfd, "stp x29, x30, [sp, #-16]!"),
            (0x91800000, "addg (bit 23 set)"),
            (0x32800000, "move wide, opc 01 (unallocated)"),
            (0x52c00000, "movz w0, lsl #32 (unallocated)"),
            (0xb9c00000, "ldrs 32-bit from 32 bits (unallocated)"),
            (0x7dc00000, "ldr q with size 01 (unallocated)"),
            (0xdc000000, "ldr literal, vector opc 11 (unallocated)"),
        ] {
            assert_eq!(decode(word), None, "{what}");
            assert_eq!(decode_operand(word, 1), None, "{what}");
        }
    }

    #[test]
    fn field_writers_touch_only_their_bits() {
        assert_eq!(with_adr_immediate(0x90000001, 0x12345), 0xb0091a21);
        assert_eq!(with_adr_immediate(0xb0091a21, 0), 0x90000001);
        assert_eq!(with_adr_immediate(0x10000002, -3), 0x30ffffe2);
        assert_eq!(with_imm12(0x91000083, 291), 0x91048c83);
        assert_eq!(with_imm19(0x54000001, -2), 0x54ffffc1);
        assert_eq!(with_imm26(0x94000000, -1), 0x97ffffff);
        assert_eq!(with_imm14(0xb7f80000, -2), 0xb7ffffc0);
        assert_eq!(with_move_wide(0xf2c00000, MoveWideOp::Movk, 0x1234), 0xf2c24680);
        assert_eq!(with_move_wide(0xd2e00000, MoveWideOp::Movn, 0xffff), 0x92ffffe0);
    }
}
