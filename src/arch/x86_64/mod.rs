//! x86-64 fixup kinds: the closed set every front-end maps its relocations
//! onto, each with its equation and range check, and the one pure function
//! that applies them; the stub, the fill bytes, the runtime pieces'
//! machine code ([`runtime`]) and the operand decoder of `--check`
//! ([`decode`]).
//!
//! Names follow the psABI, as [`crate::arch`] lists them. For TLS kinds the
//! caller passes in `S` the value [`Kind::tls_access`] names (thread-pointer
//! offset or offset inside the TLS block) and in `G` the GOT slot it
//! reserved. TLS is variant II: thread-pointer offsets are negative.

pub mod decode;
pub mod runtime;

use std::fmt;

use super::{field, in_range, FarReference, FixupError, FixupOutcome, FixupValues, PlainFixup, TlsAccess, I32, U32};

/// A fixup kind. The comment on each variant is its equation and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `R_X86_64_NONE`: nothing.
    None,
    /// `R_X86_64_64`: `S + A`, 64 bits.
    Abs64,
    /// `R_X86_64_32`: `S + A`, must fit u32.
    Abs32,
    /// `R_X86_64_32S`: `S + A`, must fit i32.
    Abs32S,
    /// `R_X86_64_16`: `S + A`, must fit u16 or i16.
    Abs16,
    /// `R_X86_64_8`: `S + A`, must fit u8 or i8.
    Abs8,
    /// `R_X86_64_PC64`: `S + A - P`, 64 bits.
    Pc64,
    /// `R_X86_64_PC32`: `S + A - P`, must fit i32. Falls back to `L` for a
    /// far function.
    Pc32,
    /// `R_X86_64_PC16`: `S + A - P`, must fit i16.
    Pc16,
    /// `R_X86_64_PC8`: `S + A - P`, must fit i8.
    Pc8,
    /// `R_X86_64_PLT32`: `S + A - P` when it fits i32, else `L + A - P`.
    Branch32,
    /// `R_X86_64_GOTPCREL`: `G + A - P`, must fit i32.
    GotPcRel32,
    /// `R_X86_64_GOTPCRELX`: like `GotPcRel32`, but `mov`/`call`/`jmp`
    /// through the GOT are relaxed to `lea`/direct `call`/`jmp` with
    /// `S + A - P` when that fits i32.
    GotPcRelX,
    /// `R_X86_64_REX_GOTPCRELX`: `GotPcRelX` of an instruction with a REX
    /// prefix. (A variant of its own, not a field: a kind without fields
    /// is one byte compared and matched in one instruction, and the link
    /// compares and matches kinds per relocation.)
    RexGotPcRelX,
    /// `R_X86_64_GOTPCREL64`: `G + A - P`, 64 bits.
    GotPcRel64,
    /// `R_X86_64_GOTPC32`: `GOT + A - P`, must fit i32.
    GotPc32,
    /// `R_X86_64_GOTPC64`: `GOT + A - P`, 64 bits.
    GotPc64,
    /// `R_X86_64_GOTOFF64`: `S + A - GOT`, 64 bits.
    GotOff64,
    /// `R_X86_64_GOT32`: `G - GOT + A`, must fit i32.
    GotEntry32,
    /// `R_X86_64_GOT64` and `R_X86_64_GOTPLT64`: `G - GOT + A`, 64 bits.
    GotEntry64,
    /// `R_X86_64_PLTOFF64`: `L - GOT + A` (`S - GOT + A` when no stub), 64 bits.
    PltOff64,
    /// `R_X86_64_SIZE32`: `Z + A`, must fit u32.
    Size32,
    /// `R_X86_64_SIZE64`: `Z + A`, 64 bits.
    Size64,
    /// `R_X86_64_TPOFF32`: `S + A` with `S` the thread-pointer offset, must fit i32.
    TpOff32,
    /// `R_X86_64_TPOFF64`: `S + A` with `S` the thread-pointer offset, 64 bits.
    TpOff64,
    /// `R_X86_64_GOTTPOFF`: `G + A - P`, the GOT slot holds the TP offset.
    GotTpOff32,
    /// `R_X86_64_TLSGD`: `G + A - P`, the GOT pair is `{module, offset}`.
    TlsGd32,
    /// `R_X86_64_TLSLD`: `G + A - P`, the GOT pair is `{module, 0}`.
    TlsLd32,
    /// `R_X86_64_DTPOFF32`: `S + A` with `S` the offset in the TLS block, must fit i32.
    DtpOff32,
    /// `R_X86_64_DTPOFF64`: `S + A` with `S` the offset in the TLS block.
    DtpOff64,
    /// `R_X86_64_DTPMOD64`: the TLS module id (passed in `S`).
    DtpMod64,
    /// `R_X86_64_GOTPC32_TLSDESC`: `G + A - P`, the GOT pair is a TLS descriptor.
    TlsDescGot32,
    /// `R_X86_64_TLSDESC_CALL`: marks the descriptor call; nothing to patch.
    TlsDescCall,
    /// Mach-O `X86_64_RELOC_SUBTRACTOR` + `UNSIGNED` pair, 32 bits:
    /// `S + A - B` with `B` the address of the edge's `subtrahend` (a
    /// symbol of the same graph), must fit i32.
    Delta32,
    /// The 64-bit `SUBTRACTOR` pair: `S + A - B`, 64 bits.
    Delta64,
}

impl Kind {
    /// Maps an ELF `R_X86_64_*` number to a kind; `None` for types a
    /// relocatable object must not contain or that we do not know.
    pub fn from_elf(r_type: u32) -> Option<Kind> {
        use object::elf::*;
        Some(match r_type {
            R_X86_64_NONE => Kind::None,
            R_X86_64_64 => Kind::Abs64,
            R_X86_64_PC32 => Kind::Pc32,
            R_X86_64_GOT32 => Kind::GotEntry32,
            R_X86_64_PLT32 => Kind::Branch32,
            R_X86_64_GOTPCREL => Kind::GotPcRel32,
            R_X86_64_32 => Kind::Abs32,
            R_X86_64_32S => Kind::Abs32S,
            R_X86_64_16 => Kind::Abs16,
            R_X86_64_PC16 => Kind::Pc16,
            R_X86_64_8 => Kind::Abs8,
            R_X86_64_PC8 => Kind::Pc8,
            R_X86_64_DTPMOD64 => Kind::DtpMod64,
            R_X86_64_DTPOFF64 => Kind::DtpOff64,
            R_X86_64_TPOFF64 => Kind::TpOff64,
            R_X86_64_TLSGD => Kind::TlsGd32,
            R_X86_64_TLSLD => Kind::TlsLd32,
            R_X86_64_DTPOFF32 => Kind::DtpOff32,
            R_X86_64_GOTTPOFF => Kind::GotTpOff32,
            R_X86_64_TPOFF32 => Kind::TpOff32,
            R_X86_64_PC64 => Kind::Pc64,
            R_X86_64_GOTOFF64 => Kind::GotOff64,
            R_X86_64_GOTPC32 => Kind::GotPc32,
            R_X86_64_GOT64 | R_X86_64_GOTPLT64 => Kind::GotEntry64,
            R_X86_64_GOTPCREL64 => Kind::GotPcRel64,
            R_X86_64_GOTPC64 => Kind::GotPc64,
            R_X86_64_PLTOFF64 => Kind::PltOff64,
            R_X86_64_SIZE32 => Kind::Size32,
            R_X86_64_SIZE64 => Kind::Size64,
            R_X86_64_GOTPC32_TLSDESC => Kind::TlsDescGot32,
            R_X86_64_TLSDESC_CALL => Kind::TlsDescCall,
            R_X86_64_GOTPCRELX => Kind::GotPcRelX,
            R_X86_64_REX_GOTPCRELX => Kind::RexGotPcRelX,
            _ => return None,
        })
    }

    /// The psABI name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::None => "R_X86_64_NONE",
            Kind::Abs64 => "R_X86_64_64",
            Kind::Abs32 => "R_X86_64_32",
            Kind::Abs32S => "R_X86_64_32S",
            Kind::Abs16 => "R_X86_64_16",
            Kind::Abs8 => "R_X86_64_8",
            Kind::Pc64 => "R_X86_64_PC64",
            Kind::Pc32 => "R_X86_64_PC32",
            Kind::Pc16 => "R_X86_64_PC16",
            Kind::Pc8 => "R_X86_64_PC8",
            Kind::Branch32 => "R_X86_64_PLT32",
            Kind::GotPcRel32 => "R_X86_64_GOTPCREL",
            Kind::GotPcRelX => "R_X86_64_GOTPCRELX",
            Kind::RexGotPcRelX => "R_X86_64_REX_GOTPCRELX",
            Kind::GotPcRel64 => "R_X86_64_GOTPCREL64",
            Kind::GotPc32 => "R_X86_64_GOTPC32",
            Kind::GotPc64 => "R_X86_64_GOTPC64",
            Kind::GotOff64 => "R_X86_64_GOTOFF64",
            Kind::GotEntry32 => "R_X86_64_GOT32",
            Kind::GotEntry64 => "R_X86_64_GOT64",
            Kind::PltOff64 => "R_X86_64_PLTOFF64",
            Kind::Size32 => "R_X86_64_SIZE32",
            Kind::Size64 => "R_X86_64_SIZE64",
            Kind::TpOff32 => "R_X86_64_TPOFF32",
            Kind::TpOff64 => "R_X86_64_TPOFF64",
            Kind::GotTpOff32 => "R_X86_64_GOTTPOFF",
            Kind::TlsGd32 => "R_X86_64_TLSGD",
            Kind::TlsLd32 => "R_X86_64_TLSLD",
            Kind::DtpOff32 => "R_X86_64_DTPOFF32",
            Kind::DtpOff64 => "R_X86_64_DTPOFF64",
            Kind::DtpMod64 => "R_X86_64_DTPMOD64",
            Kind::TlsDescGot32 => "R_X86_64_GOTPC32_TLSDESC",
            Kind::TlsDescCall => "R_X86_64_TLSDESC_CALL",
            Kind::Delta32 => "X86_64_RELOC_SUBTRACTOR (32-bit)",
            Kind::Delta64 => "X86_64_RELOC_SUBTRACTOR (64-bit)",
        }
    }

    /// Bytes the fixup writes at its offset.
    pub fn width(self) -> u64 {
        match self {
            Kind::None | Kind::TlsDescCall => 0,
            Kind::Abs8 | Kind::Pc8 => 1,
            Kind::Abs16 | Kind::Pc16 => 2,
            Kind::Abs64
            | Kind::Pc64
            | Kind::GotPcRel64
            | Kind::GotPc64
            | Kind::GotOff64
            | Kind::GotEntry64
            | Kind::PltOff64
            | Kind::Size64
            | Kind::TpOff64
            | Kind::DtpOff64
            | Kind::DtpMod64
            | Kind::Delta64 => 8,
            _ => 4,
        }
    }

    /// Whether the kind needs a GOT entry holding the target's address.
    pub fn uses_address_got(self) -> bool {
        matches!(
            self,
            Kind::GotPcRel32
                | Kind::GotPcRelX
                | Kind::RexGotPcRelX
                | Kind::GotPcRel64
                | Kind::GotEntry32
                | Kind::GotEntry64
        )
    }

    /// Whether the kind stores a 32-bit absolute address, so the target must
    /// lie in the low 2 or 4 GiB.
    pub fn is_abs32(self) -> bool {
        matches!(self, Kind::Abs32 | Kind::Abs32S)
    }

    /// Whether the edge subtracts its `subtrahend` (`B`).
    pub fn uses_subtrahend(self) -> bool {
        matches!(self, Kind::Delta32 | Kind::Delta64)
    }

    /// Whether the kind uses the target's size (`Z`).
    pub fn uses_symbol_size(self) -> bool {
        matches!(self, Kind::Size32 | Kind::Size64)
    }

    /// How a far target outside the image is reached (see [`FarReference`]).
    pub fn far_reference(self) -> FarReference {
        match self {
            Kind::Branch32 | Kind::PltOff64 => FarReference::ThroughStub,
            Kind::Pc32 | Kind::Abs32 | Kind::Abs32S => FarReference::StubOrCopy,
            _ => FarReference::Never,
        }
    }

    /// Whether the kind needs `GOT` itself, even with no entry.
    pub fn needs_got_base(self) -> bool {
        matches!(self, Kind::GotPc32 | Kind::GotPc64 | Kind::GotOff64 | Kind::PltOff64)
    }

    /// Whether a PC-relative reach of ±2 GiB limits the kind.
    pub fn is_near_pc_relative(self) -> bool {
        self == Kind::Pc32
    }

    /// The farthest the kind reaches from the place (see `EdgeKind::reach`).
    pub fn reach(self) -> Option<u64> {
        match self {
            Kind::Pc32 | Kind::Branch32 | Kind::GotPcRel32 | Kind::GotPcRelX => Some(1 << 31),
            _ => None,
        }
    }

    /// The kind as a [`PlainFixup`], if it is one.
    #[inline]
    pub fn plain(self) -> Option<PlainFixup> {
        match self {
            Kind::Pc32 | Kind::Branch32 => Some(PlainFixup::PcRelative32),
            Kind::Abs64 => Some(PlainFixup::Absolute64),
            _ => None,
        }
    }

    /// [`Kind::from_elf`] for the numbers of [`Kind::plain`] kinds only.
    #[inline]
    pub fn plain_from_elf(r_type: u32) -> Option<Kind> {
        match r_type {
            object::elf::R_X86_64_PC32 => Some(Kind::Pc32),
            object::elf::R_X86_64_PLT32 => Some(Kind::Branch32),
            object::elf::R_X86_64_64 => Some(Kind::Abs64),
            _ => None,
        }
    }

    /// Which thread-local value the kind needs; `None` for other kinds and
    /// for the `TlsDescCall` marker.
    pub fn tls_access(self) -> Option<TlsAccess> {
        Some(match self {
            Kind::TpOff32 | Kind::TpOff64 => TlsAccess::TpOffset,
            Kind::DtpOff32 | Kind::DtpOff64 => TlsAccess::DtpOffset,
            Kind::DtpMod64 => TlsAccess::ModuleId,
            Kind::GotTpOff32 => TlsAccess::GotTpOffset,
            Kind::TlsGd32 => TlsAccess::GotTlsIndex,
            Kind::TlsLd32 => TlsAccess::GotTlsModule,
            Kind::TlsDescGot32 => TlsAccess::GotTlsDescriptor,
            _ => return None,
        })
    }

    pub fn is_tls(self) -> bool {
        matches!(
            self,
            Kind::TpOff32
                | Kind::TpOff64
                | Kind::GotTpOff32
                | Kind::TlsGd32
                | Kind::TlsLd32
                | Kind::DtpOff32
                | Kind::DtpOff64
                | Kind::DtpMod64
                | Kind::TlsDescGot32
                | Kind::TlsDescCall
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn fits_i32(value: i128) -> bool {
    in_range(value, I32).is_ok()
}

fn put32(data: &mut [u8], offset: usize, value: i128, range: (i128, i128)) -> Result<(), FixupError> {
    in_range(value, range)?;
    *field::<4>(data, offset)? = (value as u32).to_le_bytes();
    Ok(())
}

fn put64(data: &mut [u8], offset: usize, value: i128) -> Result<(), FixupError> {
    *field::<8>(data, offset)? = (value as u64).to_le_bytes();
    Ok(())
}

/// Applies one fixup to `data` (the block's bytes) at `offset`.
///
/// Pure: it reads and writes only `data`, so unit tests can hit every kind
/// without mapping memory. A value that does not fit is an error, never a
/// truncated write.
pub fn apply_fixup(kind: Kind, data: &mut [u8], offset: usize, v: &FixupValues) -> Result<FixupOutcome, FixupError> {
    // Addresses are user-space (below 2^47), and TLS offsets are negative:
    // reading every value as signed 64-bit serves both.
    let s = v.s as i64 as i128;
    let a = v.a as i128;
    let p = v.p as i64 as i128;
    let got = v.got as i64 as i128;
    let g = || v.g.map(|g| g as i64 as i128).ok_or(FixupError::MissingGotEntry);
    match kind {
        Kind::None | Kind::TlsDescCall => Ok(FixupOutcome::Nothing),
        Kind::Abs64 | Kind::TpOff64 | Kind::DtpOff64 | Kind::DtpMod64 => {
            put64(data, offset, s + a)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::Abs32 | Kind::Abs32S => {
            let range = if kind == Kind::Abs32 { U32 } else { I32 };
            match (put32(data, offset, s + a, range), v.stub) {
                (Ok(()), _) => Ok(FixupOutcome::Direct),
                (Err(_), Some(stub)) => {
                    put32(data, offset, stub as i64 as i128 + a, range)?;
                    Ok(FixupOutcome::ViaStub)
                }
                (Err(e), None) => Err(e),
            }
        }
        Kind::Abs16 => {
            let value = s + a;
            in_range(value, (i16::MIN as i128, u16::MAX as i128 + 1))?;
            *field::<2>(data, offset)? = (value as u16).to_le_bytes();
            Ok(FixupOutcome::Direct)
        }
        Kind::Abs8 => {
            let value = s + a;
            in_range(value, (i8::MIN as i128, u8::MAX as i128 + 1))?;
            field::<1>(data, offset)?[0] = value as u8;
            Ok(FixupOutcome::Direct)
        }
        Kind::Pc64 => {
            put64(data, offset, s + a - p)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::Pc32 | Kind::Branch32 => {
            // Through the stub when out of reach, or when `S` may move.
            let direct = if v.movable && v.stub.is_some() { Ok(()) } else { put32(data, offset, s + a - p, I32) };
            match (direct, v.stub) {
                (Ok(()), Some(stub)) if v.movable => {
                    put32(data, offset, stub as i64 as i128 + a - p, I32)?;
                    Ok(FixupOutcome::ViaStub)
                }
                (Ok(()), _) => Ok(FixupOutcome::Direct),
                (Err(_), Some(stub)) => {
                    put32(data, offset, stub as i64 as i128 + a - p, I32)?;
                    Ok(FixupOutcome::ViaStub)
                }
                (Err(e), None) => Err(e),
            }
        }
        Kind::Pc16 => {
            let value = s + a - p;
            in_range(value, (i16::MIN as i128, i16::MAX as i128 + 1))?;
            *field::<2>(data, offset)? = (value as i16).to_le_bytes();
            Ok(FixupOutcome::Direct)
        }
        Kind::Pc8 => {
            let value = s + a - p;
            in_range(value, (i8::MIN as i128, i8::MAX as i128 + 1))?;
            field::<1>(data, offset)?[0] = value as i8 as u8;
            Ok(FixupOutcome::Direct)
        }
        Kind::GotPcRelX | Kind::RexGotPcRelX => {
            let rex = kind == Kind::RexGotPcRelX;
            if v.g.is_none() || (fits_i32(s + a - p) && !v.movable) {
                if let Some(resolution) = relax_got_load(data, offset, rex, s + a - p)? {
                    return Ok(resolution);
                }
            }
            put32(data, offset, g()? + a - p, I32)?;
            Ok(FixupOutcome::ViaGot)
        }
        Kind::GotPcRel32 | Kind::GotTpOff32 | Kind::TlsGd32 | Kind::TlsLd32 | Kind::TlsDescGot32 => {
            put32(data, offset, g()? + a - p, I32)?;
            Ok(FixupOutcome::ViaGot)
        }
        Kind::GotPcRel64 => {
            put64(data, offset, g()? + a - p)?;
            Ok(FixupOutcome::ViaGot)
        }
        Kind::GotPc32 => {
            put32(data, offset, got + a - p, I32)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::GotPc64 => {
            put64(data, offset, got + a - p)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::GotOff64 => {
            put64(data, offset, s + a - got)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::GotEntry32 => {
            put32(data, offset, g()? - got + a, I32)?;
            Ok(FixupOutcome::ViaGot)
        }
        Kind::GotEntry64 => {
            put64(data, offset, g()? - got + a)?;
            Ok(FixupOutcome::ViaGot)
        }
        Kind::PltOff64 => {
            let (target, resolution) = match v.stub {
                Some(stub) => (stub as i64 as i128, FixupOutcome::ViaStub),
                None => (s, FixupOutcome::Direct),
            };
            put64(data, offset, target - got + a)?;
            Ok(resolution)
        }
        Kind::Size32 => {
            put32(data, offset, v.z as i128 + a, U32)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::Size64 => {
            put64(data, offset, v.z as i128 + a)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::TpOff32 | Kind::DtpOff32 => {
            put32(data, offset, s + a, I32)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::Delta32 => {
            put32(data, offset, s + a - (v.b as i64 as i128), I32)?;
            Ok(FixupOutcome::Direct)
        }
        Kind::Delta64 => {
            put64(data, offset, s + a - (v.b as i64 as i128))?;
            Ok(FixupOutcome::Direct)
        }
    }
}

/// Rewrites `mov foo@GOTPCREL(%rip), %reg` to `lea foo(%rip), %reg`,
/// `call *foo@GOTPCREL(%rip)` to `addr32 call foo` (`call foo; nop` after
/// a REX prefix, which must stay next to the opcode: the TLS sequence
/// `data16 rex.W call *__tls_get_addr@GOTPCREL(%rip)` of `-fno-plt` code)
/// and `jmp *foo@GOTPCREL(%rip)` to `jmp foo; nop`, as the psABI allows for
/// `GOTPCRELX`. `pcrel` is `S + A - P`, already known to fit. Returns
/// `None` when the instruction is not one of these (the GOT is used then).
fn relax_got_load(data: &mut [u8], offset: usize, rex: bool, pcrel: i128) -> Result<Option<FixupOutcome>, FixupError> {
    if offset < 2 || offset + 4 > data.len() {
        return Err(FixupError::OutOfBounds);
    }
    let (opcode, modrm) = (data[offset - 2], data[offset - 1]);
    let after_rex_prefix = offset >= 3 && data[offset - 3] & 0xf0 == 0x40;
    let rex_ok = !rex || after_rex_prefix;
    match (opcode, modrm) {
        (0x8b, _) if rex_ok && modrm & 0xc7 == 0x05 => {
            data[offset - 2] = 0x8d;
            put32(data, offset, pcrel, I32)?;
            Ok(Some(FixupOutcome::Relaxed))
        }
        (0xff, 0x15) if !rex && !after_rex_prefix => {
            data[offset - 2] = 0x67;
            data[offset - 1] = 0xe8;
            put32(data, offset, pcrel, I32)?;
            Ok(Some(FixupOutcome::Relaxed))
        }
        // An `addr32` prefix between REX and the opcode would void REX
        // (and leave `data16` making a 16-bit call on AMD processors).
        (0xff, 0x15) if !rex => Ok(relax_to_rel32_then_nop(data, offset, 0xe8, pcrel)),
        (0xff, 0x25) if !rex => Ok(relax_to_rel32_then_nop(data, offset, 0xe9, pcrel)),
        _ => Ok(None),
    }
}

/// Writes `opcode rel32; nop` over the 6-byte `ff /2` or `ff /4` whose
/// displacement is at `offset`: the rel32 form is one byte shorter, and the
/// nop keeps the length (and a call's return address lands on it).
fn relax_to_rel32_then_nop(data: &mut [u8], offset: usize, opcode: u8, pcrel: i128) -> Option<FixupOutcome> {
    let pcrel = pcrel + 1;
    if !fits_i32(pcrel) {
        return None;
    }
    data[offset - 2] = opcode;
    data[offset - 1..offset + 3].copy_from_slice(&(pcrel as i32).to_le_bytes());
    data[offset + 3] = 0x90;
    Some(FixupOutcome::Relaxed)
}

/// Size of one stub (PLT entry), padded for alignment.
pub const STUB_SIZE: u64 = 8;

/// `int3`: what fills code between functions, and stubs.
pub const CODE_FILL: [u8; 1] = [0xcc];

/// `nop`: what fills the `.init`/`.fini` code between fragments, which runs
/// through it.
pub const NOP: [u8; 1] = [0x90];

/// The name of an `R_X86_64_*` number, also for those jitrun refuses.
pub fn elf_relocation_name(r_type: u32) -> String {
    if let Some(kind) = Kind::from_elf(r_type) {
        return kind.name().to_string();
    }
    let known = match r_type {
        object::elf::R_X86_64_COPY => "R_X86_64_COPY",
        object::elf::R_X86_64_GLOB_DAT => "R_X86_64_GLOB_DAT",
        object::elf::R_X86_64_JUMP_SLOT => "R_X86_64_JUMP_SLOT",
        object::elf::R_X86_64_RELATIVE => "R_X86_64_RELATIVE",
        object::elf::R_X86_64_TLSDESC => "R_X86_64_TLSDESC",
        object::elf::R_X86_64_IRELATIVE => "R_X86_64_IRELATIVE",
        object::elf::R_X86_64_RELATIVE64 => "R_X86_64_RELATIVE64",
        _ => return "unknown to jitrun".to_string(),
    };
    format!("{}, which belongs in linked files, not in a relocatable object", known)
}

/// Writes a stub at `stub` that jumps through the GOT entry `got_entry`:
/// `jmp *disp32(%rip)` followed by padding.
pub fn write_stub(out: &mut [u8], stub: u64, got_entry: u64) -> Result<(), FixupError> {
    let code = field::<8>(out, 0)?;
    code[..2].copy_from_slice(&[0xff, 0x25]);
    let disp = got_entry as i128 - (stub as i128 + 6);
    in_range(disp, I32)?;
    code[2..6].copy_from_slice(&(disp as i32).to_le_bytes());
    code[6..8].copy_from_slice(&[CODE_FILL[0]; 2]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(p: u64, s: u64, a: i64) -> FixupValues {
        FixupValues { p, s, a, ..Default::default() }
    }

    #[test]
    fn every_elf_number_round_trips_to_its_name() {
        for r_type in 0..64 {
            if let Some(kind) = Kind::from_elf(r_type) {
                assert!(kind.name().starts_with("R_X86_64_"));
                if r_type != object::elf::R_X86_64_GOTPLT64 {
                    assert_eq!(Kind::from_elf(r_type).map(|k| k.name()), Some(kind.name()), "{}", r_type);
                }
            }
        }
        assert_eq!(Kind::from_elf(object::elf::R_X86_64_COPY), None);
        assert_eq!(Kind::from_elf(object::elf::R_X86_64_JUMP_SLOT), None);
        assert_eq!(Kind::from_elf(200), None);
    }

    #[test]
    fn abs64_writes_s_plus_a() {
        let mut d = [0u8; 8];
        apply_fixup(Kind::Abs64, &mut d, 0, &values(0, 0x1234_5678_9abc, -4)).unwrap();
        assert_eq!(u64::from_le_bytes(d), 0x1234_5678_9ab8);
    }

    #[test]
    fn abs32_checks_unsigned_and_abs32s_signed() {
        let mut d = [0u8; 4];
        apply_fixup(Kind::Abs32, &mut d, 0, &values(0, 0xffff_fff0, 0xf)).unwrap();
        assert_eq!(u32::from_le_bytes(d), 0xffff_ffff);
        let err = apply_fixup(Kind::Abs32, &mut d, 0, &values(0, 0xffff_fff0, 0x10)).unwrap_err();
        assert_eq!(err, FixupError::OutOfRange { value: 0x1_0000_0000, lo: 0, hi: 0x1_0000_0000 });
        assert!(apply_fixup(Kind::Abs32S, &mut d, 0, &values(0, 0x8000_0000, 0)).is_err());
        apply_fixup(Kind::Abs32S, &mut d, 0, &values(0, 0x7fff_ffff, 0)).unwrap();
        // A negative 32S value sign-extends to the same 64-bit address.
        apply_fixup(Kind::Abs32S, &mut d, 0, &values(0, 0, -8)).unwrap();
        assert_eq!(i32::from_le_bytes(d), -8);
    }

    #[test]
    fn abs32_to_far_function_uses_stub() {
        let mut d = [0u8; 4];
        let v = FixupValues { s: 0x7fff_0000_0000, stub: Some(0x40_1000), ..Default::default() };
        assert_eq!(apply_fixup(Kind::Abs32, &mut d, 0, &v).unwrap(), FixupOutcome::ViaStub);
        assert_eq!(u32::from_le_bytes(d), 0x40_1000);
    }

    #[test]
    fn small_fields_check_their_width() {
        let mut d = [0u8; 2];
        apply_fixup(Kind::Abs16, &mut d, 0, &values(0, 0xffff, 0)).unwrap();
        assert!(apply_fixup(Kind::Abs16, &mut d, 0, &values(0, 0x1_0000, 0)).is_err());
        apply_fixup(Kind::Abs8, &mut d, 1, &values(0, 0xff, 0)).unwrap();
        assert!(apply_fixup(Kind::Abs8, &mut d, 1, &values(0, 0x100, 0)).is_err());
        apply_fixup(Kind::Pc16, &mut d, 0, &values(0x10000, 0x10000 - 0x8000, 0)).unwrap();
        assert_eq!(i16::from_le_bytes(d), -0x8000);
        assert!(apply_fixup(Kind::Pc16, &mut d, 0, &values(0x10000, 0x10000 + 0x8000, 0)).is_err());
        apply_fixup(Kind::Pc8, &mut d, 1, &values(0x100, 0x100 + 127, 0)).unwrap();
        assert_eq!(d[1], 127);
        assert!(apply_fixup(Kind::Pc8, &mut d, 1, &values(0x100, 0x100 + 128, 0)).is_err());
    }

    #[test]
    fn pc32_is_s_plus_a_minus_p_and_falls_back_to_stub() {
        let mut d = [0u8; 8];
        apply_fixup(Kind::Pc32, &mut d, 4, &values(0x1000, 0x2000, -4)).unwrap();
        assert_eq!(i32::from_le_bytes(d[4..].try_into().unwrap()), 0xffc);
        let far = FixupValues { p: 0x1000, s: 0x7f00_0000_0000, a: -4, stub: None, ..Default::default() };
        let err = apply_fixup(Kind::Branch32, &mut d, 0, &far).unwrap_err();
        assert!(matches!(err, FixupError::OutOfRange { .. }));
        assert!(err.to_string().starts_with("out of range: V is 0x7effffffeffc not in [-0x80000000, 0x80000000)"));
        let far = FixupValues { stub: Some(0x3000), ..far };
        assert_eq!(apply_fixup(Kind::Branch32, &mut d, 0, &far).unwrap(), FixupOutcome::ViaStub);
        assert_eq!(i32::from_le_bytes(d[..4].try_into().unwrap()), 0x3000 - 4 - 0x1000);
    }

    #[test]
    fn pc64_and_got_relative_kinds() {
        let mut d = [0u8; 8];
        apply_fixup(Kind::Pc64, &mut d, 0, &values(0x7f00_0000_0000, 0x1000, 0)).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x1000 - 0x7f00_0000_0000);
        let v = FixupValues { p: 0x1000, s: 0x5000, a: 8, got: 0x4000, g: Some(0x4010), z: 24, ..Default::default() };
        apply_fixup(Kind::GotOff64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x1008);
        apply_fixup(Kind::GotPc64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x4000 + 8 - 0x1000);
        apply_fixup(Kind::GotEntry64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x18);
        apply_fixup(Kind::GotPcRel64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x4010 + 8 - 0x1000);
        apply_fixup(Kind::PltOff64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x5000 - 0x4000 + 8);
        apply_fixup(Kind::Size64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), 32);
        apply_fixup(Kind::GotPc32, &mut d, 0, &v).unwrap();
        assert_eq!(i32::from_le_bytes(d[..4].try_into().unwrap()), 0x4000 + 8 - 0x1000);
        apply_fixup(Kind::GotEntry32, &mut d, 0, &v).unwrap();
        assert_eq!(i32::from_le_bytes(d[..4].try_into().unwrap()), 0x18);
        apply_fixup(Kind::Size32, &mut d, 0, &v).unwrap();
        assert_eq!(u32::from_le_bytes(d[..4].try_into().unwrap()), 32);
        let no_got = FixupValues { g: None, ..v };
        assert_eq!(apply_fixup(Kind::GotPcRel32, &mut d, 0, &no_got), Err(FixupError::MissingGotEntry));
    }

    #[test]
    fn gotpcrelx_relaxes_mov_to_lea() {
        // mov 0(%rip), %rax  => 48 8b 05 <disp32>
        let mut code = [0x48, 0x8b, 0x05, 0, 0, 0, 0];
        let v = FixupValues { p: 0x1003, s: 0x2000, a: -4, g: Some(0x3000), ..Default::default() };
        assert_eq!(apply_fixup(Kind::RexGotPcRelX, &mut code, 3, &v).unwrap(), FixupOutcome::Relaxed);
        assert_eq!(code[..3], [0x48, 0x8d, 0x05]);
        assert_eq!(i32::from_le_bytes(code[3..].try_into().unwrap()), 0x2000 - 4 - 0x1003);
    }

    /// A symbol that may move (the link cache) keeps its GOT load and is
    /// called through its stub, in range or not.
    #[test]
    fn a_movable_symbol_is_reached_through_the_got_and_its_stub() {
        let mut code = [0x48, 0x8b, 0x05, 0, 0, 0, 0];
        let v = FixupValues { p: 0x1003, s: 0x2000, a: -4, g: Some(0x3000), movable: true, ..Default::default() };
        assert_eq!(apply_fixup(Kind::RexGotPcRelX, &mut code, 3, &v).unwrap(), FixupOutcome::ViaGot);
        assert_eq!(code[..3], [0x48, 0x8b, 0x05]);
        assert_eq!(i32::from_le_bytes(code[3..].try_into().unwrap()), 0x3000 - 4 - 0x1003);
        let mut call = [0u8; 4];
        let near = FixupValues { p: 0x1000, s: 0x1100, a: -4, stub: Some(0x3000), movable: true, ..Default::default() };
        assert_eq!(apply_fixup(Kind::Branch32, &mut call, 0, &near).unwrap(), FixupOutcome::ViaStub);
        assert_eq!(i32::from_le_bytes(call), 0x3000 - 4 - 0x1000);
        let no_stub = FixupValues { stub: None, ..near };
        assert_eq!(apply_fixup(Kind::Branch32, &mut call, 0, &no_stub).unwrap(), FixupOutcome::Direct);
    }

    #[test]
    fn gotpcrelx_relaxes_call_and_jmp() {
        let mut call = [0xff, 0x15, 0, 0, 0, 0];
        let v = FixupValues { p: 0x1002, s: 0x2000, a: -4, g: Some(0x3000), ..Default::default() };
        apply_fixup(Kind::GotPcRelX, &mut call, 2, &v).unwrap();
        assert_eq!(call[..2], [0x67, 0xe8]);
        assert_eq!(i32::from_le_bytes(call[2..].try_into().unwrap()), 0x2000 - 0x1006);
        let mut jmp = [0xff, 0x25, 0, 0, 0, 0];
        apply_fixup(Kind::GotPcRelX, &mut jmp, 2, &v).unwrap();
        assert_eq!(jmp[0], 0xe9);
        // The jmp starts at P-2 and is 5 bytes long: its next pc is P+3.
        assert_eq!(i32::from_le_bytes(jmp[1..5].try_into().unwrap()), 0x2000 - 0x1005);
        assert_eq!(jmp[5], 0x90);
        // data16 rex.W call *__tls_get_addr@GOTPCREL(%rip): REX stays next
        // to the opcode, and the call returns to the nop.
        let mut tls_call = [0x66, 0x48, 0xff, 0x15, 0, 0, 0, 0];
        let v = FixupValues { p: 0x1004, ..v };
        apply_fixup(Kind::GotPcRelX, &mut tls_call, 4, &v).unwrap();
        assert_eq!(tls_call[..3], [0x66, 0x48, 0xe8]);
        assert_eq!(i32::from_le_bytes(tls_call[3..7].try_into().unwrap()), 0x2000 - 0x1007);
        assert_eq!(tls_call[7], 0x90);
    }

    #[test]
    fn gotpcrelx_keeps_got_when_far_or_not_relaxable() {
        let mut code = [0x48, 0x8b, 0x05, 0, 0, 0, 0];
        let far = FixupValues { p: 0x1003, s: 0x7f00_0000_0000, a: -4, g: Some(0x3000), ..Default::default() };
        assert_eq!(apply_fixup(Kind::RexGotPcRelX, &mut code, 3, &far).unwrap(), FixupOutcome::ViaGot);
        assert_eq!(code[1], 0x8b);
        assert_eq!(i32::from_le_bytes(code[3..].try_into().unwrap()), 0x3000 - 4 - 0x1003);
        // test %rax, foo@GOTPCREL(%rip) (48 85 05) is not relaxed.
        let mut test = [0x48, 0x85, 0x05, 0, 0, 0, 0];
        let near = FixupValues { s: 0x2000, ..far };
        assert_eq!(apply_fixup(Kind::RexGotPcRelX, &mut test, 3, &near).unwrap(), FixupOutcome::ViaGot);
        assert_eq!(test[1], 0x85);
    }

    #[test]
    fn tls_kinds_use_their_inputs() {
        let mut d = [0u8; 8];
        let v = FixupValues { p: 0x1000, s: (-0x40i64) as u64, a: 0, g: Some(0x2000), ..Default::default() };
        apply_fixup(Kind::TpOff32, &mut d, 0, &v).unwrap();
        assert_eq!(i32::from_le_bytes(d[..4].try_into().unwrap()), -0x40);
        apply_fixup(Kind::TpOff64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), -0x40);
        for kind in [Kind::GotTpOff32, Kind::TlsGd32, Kind::TlsLd32, Kind::TlsDescGot32] {
            apply_fixup(kind, &mut d, 0, &FixupValues { a: -4, ..v }).unwrap();
            assert_eq!(i32::from_le_bytes(d[..4].try_into().unwrap()), 0x2000 - 4 - 0x1000);
        }
        assert_eq!(apply_fixup(Kind::TlsDescCall, &mut d, 0, &v).unwrap(), FixupOutcome::Nothing);
    }

    #[test]
    fn fields_outside_the_block_are_refused() {
        let mut d = [0u8; 6];
        assert_eq!(apply_fixup(Kind::Abs64, &mut d, 0, &values(0, 1, 0)), Err(FixupError::OutOfBounds));
        assert_eq!(apply_fixup(Kind::Pc32, &mut d, 3, &values(0, 0, 0)), Err(FixupError::OutOfBounds));
        assert_eq!(apply_fixup(Kind::Abs32, &mut d, usize::MAX - 1, &values(0, 0, 0)), Err(FixupError::OutOfBounds));
        let v = FixupValues { g: Some(0), ..Default::default() };
        assert_eq!(apply_fixup(Kind::RexGotPcRelX, &mut d, 1, &v), Err(FixupError::OutOfBounds));
    }

    #[test]
    fn deltas_subtract_the_second_symbol() {
        let mut d = [0u8; 8];
        let v = FixupValues { s: 0x1000, b: 0x1010, a: -2, ..Default::default() };
        apply_fixup(Kind::Delta64, &mut d, 0, &v).unwrap();
        assert_eq!(i64::from_le_bytes(d), -0x12);
        apply_fixup(Kind::Delta32, &mut d, 4, &v).unwrap();
        assert_eq!(i32::from_le_bytes(d[4..].try_into().unwrap()), -0x12);
        // Far apart: the 64-bit form holds it, the 32-bit form refuses.
        let far = FixupValues { s: 0x7f00_0000_0000, b: 0x1000, a: 0, ..Default::default() };
        apply_fixup(Kind::Delta64, &mut d, 0, &far).unwrap();
        assert_eq!(i64::from_le_bytes(d), 0x7eff_ffff_f000);
        assert!(matches!(apply_fixup(Kind::Delta32, &mut d, 0, &far), Err(FixupError::OutOfRange { .. })));
        assert!(Kind::Delta32.uses_subtrahend());
        assert_eq!(Kind::Delta64.width(), 8);
        assert!(!Kind::Pc32.uses_subtrahend());
    }

    #[test]
    fn stub_jumps_through_its_got_entry() {
        let mut s = [0u8; 8];
        write_stub(&mut s, 0x1000, 0x2000).unwrap();
        assert_eq!(s[..2], [0xff, 0x25]);
        assert_eq!(i32::from_le_bytes(s[2..6].try_into().unwrap()), 0x2000 - 0x1006);
    }
}
