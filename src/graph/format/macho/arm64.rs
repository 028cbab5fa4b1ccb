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

/// Variadic C library functions without a bridge. Darwin arm64 code
/// passes their variadic arguments on the stack, where glibc does not
/// look, so a call would be silently wrong: the reference is refused.
pub const UNBRIDGED_VARIADIC: &[&str] = &[
    "prctl",
    "ulimit",
    "mq_open",
    "sem_open",
    "semctl",
    "ptrace",
    "clone",
    "mremap",
    "makecontext",
    "strfmon",
    "strfmon_l",
    "error",
    "error_at_line",
];

/// What an undefined reference of a Mach-O arm64 object to the C name
/// `name` (after the Darwin names are mapped) binds to: the variadic
/// bridge of a C library function that has one
/// ([`crate::arch::aarch64::runtime::darwin_variadic_bridge`]), the name
/// itself otherwise; an error for a variadic function without a bridge.
pub fn bind(name: &str) -> Result<&str, String> {
    if let Some(bridge) = crate::arch::aarch64::runtime::darwin_variadic_bridge(name) {
        return Ok(bridge);
    }
    if UNBRIDGED_VARIADIC.contains(&name) {
        return Err(format!(
            "`{}` is a variadic C library function: Darwin arm64 code passes its variadic arguments on the stack, \
             glibc reads them from registers, and jitrun has no bridge for this one (see README, \"Mach-O arm64\")",
            name
        ));
    }
    Ok(name)
}

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
        ARM64_RELOC_GOT_LOAD_PAGE21
        | ARM64_RELOC_TLVP_LOAD_PAGE21
        | ARM64_RELOC_GOT_LOAD_PAGEOFF12
        | ARM64_RELOC_TLVP_LOAD_PAGEOFF12 => {
            // ADRP's immediate, or the LDR's offset.
            let page = matches!(r.r_type, ARM64_RELOC_GOT_LOAD_PAGE21 | ARM64_RELOC_TLVP_LOAD_PAGE21);
            instruction_immediate_is_zero(if page { 0x60ff_ffe0 } else { 0x003f_fc00 })?;
            let target = symbol(b)?;
            if matches!(r.r_type, ARM64_RELOC_TLVP_LOAD_PAGE21 | ARM64_RELOC_TLVP_LOAD_PAGEOFF12) {
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

/// `__LD,__compact_unwind` entry fields (32 bytes each).
const CU_ENTRY: u64 = 32;
const UNWIND_ARM64_MODE_MASK: u32 = 0x0f00_0000;
const UNWIND_ARM64_MODE_FRAMELESS: u32 = 0x0200_0000;
const UNWIND_ARM64_MODE_DWARF: u32 = 0x0300_0000;
const UNWIND_ARM64_MODE_FRAME: u32 = 0x0400_0000;

/// Translates arm64 compact unwind entries into an `__eh_frame` of DWARF
/// records, which Linux's unwinders (libgcc's, for C++ exceptions and
/// backtraces) read; LLVM writes DWARF for arm64 Darwin only for frames
/// compact unwind cannot describe. Each entry `{function, length,
/// encoding, personality, LSDA}` becomes an FDE with absolute 8-byte
/// pointers (`Abs64` edges) under a CIE per personality:
///
/// - frame-based (`UNWIND_ARM64_MODE_FRAME`): CFA = x29 + 16, x29 and x30
///   saved at CFA-16 and CFA-8, and the register pairs the encoding lists
///   (x19/x20 … x27/x28, then d8/d9 … d14/d15) below, first register
///   highest, as libunwind's `CompactUnwinder_arm64` reads them;
/// - frameless (`UNWIND_ARM64_MODE_FRAMELESS`, and an entry with no
///   encoding): CFA = sp + 16 × the encoded stack size, the pairs below
///   the CFA, the return address still in x30;
/// - `UNWIND_ARM64_MODE_DWARF`: the function has its FDE in `__eh_frame`
///   already.
///
/// Like compact unwind itself, the rules hold from the end of the
/// prologue to the start of the epilogue, where calls are: what
/// exceptions and backtraces unwind through.
pub(super) fn eh_frame_from_compact_unwind(
    b: &mut EdgeBuilder,
    section: usize,
    relocs: &[RelocInfo],
) -> anyhow::Result<()> {
    let size = b.sections[section].size;
    if !size.is_multiple_of(CU_ENTRY) {
        return Err(b.fail(section, 0, format_args!("size {:#x} is not a multiple of {} bytes", size, CU_ENTRY)));
    }
    // The relocations of each entry, by field: function (0), personality
    // (16), LSDA (24).
    let mut fields: std::collections::HashMap<u64, (SymbolId, i64)> = std::collections::HashMap::new();
    let mut i = 0;
    while i < relocs.len() {
        let (decoded, used) = decode(b, section, &relocs[i..])?;
        i += used;
        let offset = u64::from(decoded.r.address);
        if decoded.kind != EdgeKind::Aarch64(Kind::Abs64) || !matches!(offset % CU_ENTRY, 0 | 16 | 24) {
            return Err(b.fail(
                section,
                offset,
                format_args!(
                    "{}: a compact unwind entry has 8-byte pointers at 0, 16 and 24 only",
                    describe(b.graph.cpu, decoded.r)
                ),
            ));
        }
        fields.insert(offset, (decoded.target, decoded.addend));
    }
    let mut out = EhFrameWriter::default();
    for entry in 0..size / CU_ENTRY {
        let at = entry * CU_ENTRY;
        let length = b.read_signed(section, at + 8, 4) as u32;
        let encoding = b.read_signed(section, at + 12, 4) as u32;
        let mode = encoding & UNWIND_ARM64_MODE_MASK;
        if mode == UNWIND_ARM64_MODE_DWARF {
            continue;
        }
        let Some(&function) = fields.get(&at) else {
            return Err(b.fail(section, at, "compact unwind entry without a relocation for its function"));
        };
        let instructions = match mode {
            UNWIND_ARM64_MODE_FRAME => frame_instructions(encoding),
            UNWIND_ARM64_MODE_FRAMELESS | 0 => frameless_instructions(encoding),
            other => {
                return Err(b.fail(
                    section,
                    at + 12,
                    format_args!("compact unwind mode {:#x} is not an arm64 one", other >> 24),
                ))
            }
        };
        let personality = fields.get(&(at + 16)).copied();
        let lsda = fields.get(&(at + 24)).copied();
        out.fde(function, u64::from(length), personality, lsda, &instructions);
    }
    if out.bytes.is_empty() {
        return Ok(());
    }
    let sid = b.graph.add_section("__TEXT,__eh_frame", SectionKind::EhFrame);
    let size = out.bytes.len() as u64;
    let block = b.graph.add_block(sid, Content::Owned(out.bytes), size, 8);
    b.graph.blocks[block as usize].edges = out.edges;
    Ok(())
}

/// DWARF register numbers: x0..x30 are 0..30, sp 31, v0..v31 64..95.
const DW_SP: u8 = 31;
const DW_FP: u8 = 29;
const DW_LR: u8 = 30;

/// The register pairs a compact encoding saves, in libunwind's order:
/// (bit, first register, second register).
const SAVED_PAIRS: [(u32, u8, u8); 9] = [
    (0x001, 19, 20),
    (0x002, 21, 22),
    (0x004, 23, 24),
    (0x008, 25, 26),
    (0x010, 27, 28),
    (0x100, 64 + 8, 64 + 9),
    (0x200, 64 + 10, 64 + 11),
    (0x400, 64 + 12, 64 + 13),
    (0x800, 64 + 14, 64 + 15),
];

/// `DW_CFA_offset` (or `_extended` past register 63) of `register` saved
/// at CFA - 8 × `slots`.
fn save(out: &mut Vec<u8>, register: u8, slots: u64) {
    if register < 64 {
        out.push(0x80 | register);
    } else {
        out.push(0x05);
        uleb(out, u64::from(register));
    }
    uleb(out, slots);
}

fn uleb(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The saved pairs, from CFA - 8 × `first_slot` downwards.
fn save_pairs(out: &mut Vec<u8>, encoding: u32, first_slot: u64) {
    let mut slot = first_slot;
    for (bit, first, second) in SAVED_PAIRS {
        if encoding & bit != 0 {
            save(out, first, slot);
            save(out, second, slot + 1);
            slot += 2;
        }
    }
}

fn frame_instructions(encoding: u32) -> Vec<u8> {
    // DW_CFA_def_cfa x29, 16; x30 at CFA-8, x29 at CFA-16.
    let mut out = vec![0x0c, DW_FP, 16];
    save(&mut out, DW_LR, 1);
    save(&mut out, DW_FP, 2);
    save_pairs(&mut out, encoding, 3);
    out
}

fn frameless_instructions(encoding: u32) -> Vec<u8> {
    let stack = 16 * u64::from((encoding >> 12) & 0xfff);
    // DW_CFA_def_cfa sp, stack.
    let mut out = vec![0x0c, DW_SP];
    uleb(&mut out, stack);
    save_pairs(&mut out, encoding, 1);
    out
}

/// Writes CIEs and FDEs with absolute 8-byte pointers.
#[derive(Default)]
struct EhFrameWriter {
    bytes: Vec<u8>,
    edges: Vec<Edge>,
    /// The CIE of each personality (`None`: no personality), by offset.
    cies: Vec<(Option<(SymbolId, i64)>, u64)>,
}

impl EhFrameWriter {
    fn absolute(&mut self, (target, addend): (SymbolId, i64)) {
        let offset = self.bytes.len() as u32;
        self.edges.push(Edge::new(offset, EdgeKind::Aarch64(Kind::Abs64), target, addend));
        self.bytes.extend_from_slice(&[0; 8]);
    }

    /// Pads the record that starts at `start` to a multiple of 8 bytes with
    /// `DW_CFA_nop` and writes its length.
    fn finish(&mut self, start: usize) {
        while !(self.bytes.len() - start).is_multiple_of(8) {
            self.bytes.push(0);
        }
        let length = (self.bytes.len() - start - 4) as u32;
        self.bytes[start..start + 4].copy_from_slice(&length.to_le_bytes());
    }

    fn cie(&mut self, personality: Option<(SymbolId, i64)>) -> u64 {
        if let Some(&(_, at)) = self.cies.iter().find(|(p, _)| *p == personality) {
            return at;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 1]); // length, CIE id, version
                                                                    // Augmentation; code alignment 4, data alignment -8, return address x30.
        if let Some(personality) = personality {
            self.bytes.extend_from_slice(b"zPLR\0");
            self.bytes.extend_from_slice(&[4, 0x78, DW_LR, 11, 0x00]);
            self.absolute(personality);
            self.bytes.extend_from_slice(&[0x00, 0x00]); // LSDA and FDE pointers: absolute, 8 bytes
        } else {
            self.bytes.extend_from_slice(b"zR\0");
            self.bytes.extend_from_slice(&[4, 0x78, DW_LR, 1, 0x00]);
        }
        self.bytes.extend_from_slice(&[0x0c, DW_SP, 0]); // DW_CFA_def_cfa sp, 0
        self.finish(start);
        self.cies.push((personality, start as u64));
        start as u64
    }

    fn fde(
        &mut self,
        function: (SymbolId, i64),
        length: u64,
        personality: Option<(SymbolId, i64)>,
        lsda: Option<(SymbolId, i64)>,
        instructions: &[u8],
    ) {
        // An LSDA needs a CIE that says it has one (`L`): the personality's.
        let cie = self.cie(personality);
        let start = self.bytes.len();
        let pointer = (start + 4) as u64 - cie;
        self.bytes.extend_from_slice(&[0; 4]);
        self.bytes.extend_from_slice(&(pointer as u32).to_le_bytes());
        self.absolute(function);
        self.bytes.extend_from_slice(&length.to_le_bytes());
        if personality.is_some() {
            self.bytes.push(8);
            match lsda {
                Some(lsda) => self.absolute(lsda),
                None => self.bytes.extend_from_slice(&[0; 8]),
            }
        } else {
            self.bytes.push(0);
        }
        self.bytes.extend_from_slice(instructions);
        self.finish(start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addends_are_24_bit_signed() {
        let r = |symbolnum| RelocInfo {
            address: 0,
            symbolnum,
            pcrel: false,
            length: 2,
            external: false,
            r_type: ARM64_RELOC_ADDEND,
        };
        assert_eq!(addend_of(r(0x10)), 0x10);
        assert_eq!(addend_of(r(0xff_fff0)), -0x10);
        assert_eq!(addend_of(r(0x7f_ffff)), 0x7f_ffff);
    }

    #[test]
    fn compact_unwind_encodings_become_cfa_rules() {
        // Frame-based, x19/x20 and x23/x24 saved: CFA = x29 + 16, x30 at
        // CFA-8, x29 at CFA-16, then x19, x20, x23, x24 downwards.
        assert_eq!(
            frame_instructions(UNWIND_ARM64_MODE_FRAME | 0x1 | 0x4),
            [0x0c, 29, 16, 0x9e, 1, 0x9d, 2, 0x93, 3, 0x94, 4, 0x97, 5, 0x98, 6]
        );
        // Frameless, 48 bytes of stack, d8/d9 saved at its top.
        assert_eq!(
            frameless_instructions(UNWIND_ARM64_MODE_FRAMELESS | (3 << 12) | 0x100),
            [0x0c, 31, 48, 0x05, 72, 1, 0x05, 73, 2]
        );
        // No encoding: the return address still in x30, CFA = sp.
        assert_eq!(frameless_instructions(0), [0x0c, 31, 0]);
    }

    #[test]
    fn synthesized_records_are_what_the_unwinder_checks_accept() {
        let mut out = EhFrameWriter::default();
        out.fde((1, 0), 0x40, Some((2, 0)), Some((3, 8)), &frame_instructions(UNWIND_ARM64_MODE_FRAME));
        out.fde((4, 0), 0x10, None, None, &frameless_instructions(0));
        out.fde((5, 0), 0x20, Some((2, 0)), None, &frameless_instructions(0));
        // Two CIEs (with and without the personality), three FDEs, each
        // record a multiple of 8 bytes; edges at the personality, the
        // pc_begins and the one LSDA.
        assert_eq!(out.cies.len(), 2);
        assert!(out.bytes.len().is_multiple_of(8));
        assert_eq!(out.edges.len(), 5);
        let mut graph = LinkGraph::new("cu.o".into(), crate::arch::Cpu::Aarch64, None);
        let sid = graph.add_section("__TEXT,__eh_frame", SectionKind::EhFrame);
        let size = out.bytes.len() as u64;
        let block = graph.add_block(sid, Content::Owned(out.bytes), size, 8);
        graph.blocks[block as usize].edges = out.edges;
        crate::graph::ehframe::check(&graph).unwrap();
    }
}
