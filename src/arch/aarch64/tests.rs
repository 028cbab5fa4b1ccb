//! Tests of the kinds: the written bits against encodings `llvm-mc-14`
//! made, every range and alignment check at its bounds, the instruction
//! checks, stubs.

use super::*;
use crate::arch::{FarReference, FixupError, FixupOutcome, FixupValues, TlsAccess};

/// Every ELF relocation number `from_elf` knows, with its psABI name.
const ELF_NAMES: &[(u32, &str)] = {
    macro_rules! named {
        ($($name:ident),* $(,)?) => { &[$((object::elf::$name, stringify!($name))),*] };
    }
    named![
        R_AARCH64_NONE,
        R_AARCH64_ABS64,
        R_AARCH64_ABS32,
        R_AARCH64_ABS16,
        R_AARCH64_PREL64,
        R_AARCH64_PREL32,
        R_AARCH64_PREL16,
        R_AARCH64_MOVW_UABS_G0,
        R_AARCH64_MOVW_UABS_G0_NC,
        R_AARCH64_MOVW_UABS_G1,
        R_AARCH64_MOVW_UABS_G1_NC,
        R_AARCH64_MOVW_UABS_G2,
        R_AARCH64_MOVW_UABS_G2_NC,
        R_AARCH64_MOVW_UABS_G3,
        R_AARCH64_MOVW_SABS_G0,
        R_AARCH64_MOVW_SABS_G1,
        R_AARCH64_MOVW_SABS_G2,
        R_AARCH64_MOVW_PREL_G0,
        R_AARCH64_MOVW_PREL_G0_NC,
        R_AARCH64_MOVW_PREL_G1,
        R_AARCH64_MOVW_PREL_G1_NC,
        R_AARCH64_MOVW_PREL_G2,
        R_AARCH64_MOVW_PREL_G2_NC,
        R_AARCH64_MOVW_PREL_G3,
        R_AARCH64_LD_PREL_LO19,
        R_AARCH64_ADR_PREL_LO21,
        R_AARCH64_ADR_PREL_PG_HI21,
        R_AARCH64_ADR_PREL_PG_HI21_NC,
        R_AARCH64_ADD_ABS_LO12_NC,
        R_AARCH64_LDST8_ABS_LO12_NC,
        R_AARCH64_LDST16_ABS_LO12_NC,
        R_AARCH64_LDST32_ABS_LO12_NC,
        R_AARCH64_LDST64_ABS_LO12_NC,
        R_AARCH64_LDST128_ABS_LO12_NC,
        R_AARCH64_TSTBR14,
        R_AARCH64_CONDBR19,
        R_AARCH64_JUMP26,
        R_AARCH64_CALL26,
        R_AARCH64_GOT_LD_PREL19,
        R_AARCH64_ADR_GOT_PAGE,
        R_AARCH64_LD64_GOT_LO12_NC,
        R_AARCH64_LD64_GOTPAGE_LO15,
        R_AARCH64_TLSGD_ADR_PREL21,
        R_AARCH64_TLSGD_ADR_PAGE21,
        R_AARCH64_TLSGD_ADD_LO12_NC,
        R_AARCH64_TLSLD_ADR_PREL21,
        R_AARCH64_TLSLD_ADR_PAGE21,
        R_AARCH64_TLSLD_ADD_LO12_NC,
        R_AARCH64_TLSLD_LD_PREL19,
        R_AARCH64_TLSLD_MOVW_DTPREL_G2,
        R_AARCH64_TLSLD_MOVW_DTPREL_G1,
        R_AARCH64_TLSLD_MOVW_DTPREL_G1_NC,
        R_AARCH64_TLSLD_MOVW_DTPREL_G0,
        R_AARCH64_TLSLD_MOVW_DTPREL_G0_NC,
        R_AARCH64_TLSLD_ADD_DTPREL_HI12,
        R_AARCH64_TLSLD_ADD_DTPREL_LO12,
        R_AARCH64_TLSLD_ADD_DTPREL_LO12_NC,
        R_AARCH64_TLSLD_LDST8_DTPREL_LO12,
        R_AARCH64_TLSLD_LDST8_DTPREL_LO12_NC,
        R_AARCH64_TLSLD_LDST16_DTPREL_LO12,
        R_AARCH64_TLSLD_LDST16_DTPREL_LO12_NC,
        R_AARCH64_TLSLD_LDST32_DTPREL_LO12,
        R_AARCH64_TLSLD_LDST32_DTPREL_LO12_NC,
        R_AARCH64_TLSLD_LDST64_DTPREL_LO12,
        R_AARCH64_TLSLD_LDST64_DTPREL_LO12_NC,
        R_AARCH64_TLSLD_LDST128_DTPREL_LO12,
        R_AARCH64_TLSLD_LDST128_DTPREL_LO12_NC,
        R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21,
        R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC,
        R_AARCH64_TLSIE_LD_GOTTPREL_PREL19,
        R_AARCH64_TLSLE_MOVW_TPREL_G2,
        R_AARCH64_TLSLE_MOVW_TPREL_G1,
        R_AARCH64_TLSLE_MOVW_TPREL_G1_NC,
        R_AARCH64_TLSLE_MOVW_TPREL_G0,
        R_AARCH64_TLSLE_MOVW_TPREL_G0_NC,
        R_AARCH64_TLSLE_ADD_TPREL_HI12,
        R_AARCH64_TLSLE_ADD_TPREL_LO12,
        R_AARCH64_TLSLE_ADD_TPREL_LO12_NC,
        R_AARCH64_TLSLE_LDST8_TPREL_LO12,
        R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC,
        R_AARCH64_TLSLE_LDST16_TPREL_LO12,
        R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC,
        R_AARCH64_TLSLE_LDST32_TPREL_LO12,
        R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC,
        R_AARCH64_TLSLE_LDST64_TPREL_LO12,
        R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC,
        R_AARCH64_TLSLE_LDST128_TPREL_LO12,
        R_AARCH64_TLSLE_LDST128_TPREL_LO12_NC,
        R_AARCH64_TLSDESC_LD_PREL19,
        R_AARCH64_TLSDESC_ADR_PREL21,
        R_AARCH64_TLSDESC_ADR_PAGE21,
        R_AARCH64_TLSDESC_LD64_LO12,
        R_AARCH64_TLSDESC_ADD_LO12,
        R_AARCH64_TLSDESC_CALL,
        R_AARCH64_TLS_DTPMOD,
        R_AARCH64_TLS_DTPREL,
        R_AARCH64_TLS_TPREL,
    ]
};

/// The kinds only Mach-O maps to.
const MACHO_ONLY: [Kind; 7] = [
    Kind::Delta32,
    Kind::Delta64,
    Kind::PageOffset12,
    Kind::PointerToGot32,
    Kind::PointerToGot64,
    Kind::TlvpPage21,
    Kind::TlvpPageOffset12,
];

fn all_kinds() -> Vec<Kind> {
    let elf = ELF_NAMES.iter().map(|&(r_type, _)| Kind::from_elf(r_type).unwrap());
    let mut kinds: Vec<Kind> = elf.chain([Kind::Plt32]).chain(MACHO_ONLY).collect();
    kinds.dedup();
    kinds
}

#[test]
fn every_elf_number_round_trips_to_its_name() {
    let mut known: Vec<(u32, &str)> = ELF_NAMES.to_vec();
    known.push((314, "R_AARCH64_PLT32"));
    for &(r_type, name) in &known {
        assert_eq!(Kind::from_elf(r_type).map(Kind::name), Some(name), "{r_type}");
    }
    // And nothing else, but the withdrawn NONE.
    for r_type in 0..2048 {
        if let Some(kind) = Kind::from_elf(r_type) {
            assert!(known.iter().any(|&(n, _)| n == r_type) || (r_type == 256 && kind == Kind::None), "{r_type}");
        }
    }
    // Dynamic relocations and those jitrun does not handle are refused.
    use object::elf::*;
    for r_type in [
        R_AARCH64_COPY,
        R_AARCH64_GLOB_DAT,
        R_AARCH64_JUMP_SLOT,
        R_AARCH64_RELATIVE,
        R_AARCH64_TLSDESC,
        R_AARCH64_IRELATIVE,
        R_AARCH64_MOVW_GOTOFF_G0,
        R_AARCH64_GOTREL64,
        R_AARCH64_TLSDESC_OFF_G1,
        R_AARCH64_P32_ABS32,
    ] {
        assert_eq!(Kind::from_elf(r_type), None, "{r_type}");
    }
    // Every kind has a name of its own.
    let kinds = all_kinds();
    let mut names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), kinds.len());
    assert_eq!(Kind::Call26.to_string(), "R_AARCH64_CALL26");
}

#[test]
fn macho_relocations_map_by_type_length_and_pc_relativity() {
    use object::macho::*;
    use Kind as K;
    let mapped = [
        ((ARM64_RELOC_UNSIGNED, 3, false), K::Abs64),
        ((ARM64_RELOC_UNSIGNED, 2, false), K::Abs32),
        ((ARM64_RELOC_SUBTRACTOR, 3, false), K::Delta64),
        ((ARM64_RELOC_SUBTRACTOR, 2, false), K::Delta32),
        ((ARM64_RELOC_BRANCH26, 2, true), K::Call26),
        ((ARM64_RELOC_PAGE21, 2, true), K::AdrPrelPgHi21),
        ((ARM64_RELOC_PAGEOFF12, 2, false), K::PageOffset12),
        ((ARM64_RELOC_GOT_LOAD_PAGE21, 2, true), K::AdrGotPage),
        ((ARM64_RELOC_GOT_LOAD_PAGEOFF12, 2, false), K::Ld64GotLo12Nc),
        ((ARM64_RELOC_POINTER_TO_GOT, 2, true), K::PointerToGot32),
        ((ARM64_RELOC_POINTER_TO_GOT, 3, false), K::PointerToGot64),
        ((ARM64_RELOC_TLVP_LOAD_PAGE21, 2, true), K::TlvpPage21),
        ((ARM64_RELOC_TLVP_LOAD_PAGEOFF12, 2, false), K::TlvpPageOffset12),
    ];
    // Exactly these: every other type, width and PC-relativity is malformed
    // (ARM64_RELOC_ADDEND is folded into the next relocation by the
    // front-end; AUTHENTICATED_POINTER is arm64e's).
    for r_type in 0..=12 {
        for r_length in 0..=3 {
            for pc_rel in [false, true] {
                let expected = mapped.iter().find(|(key, _)| *key == (r_type, r_length, pc_rel)).map(|&(_, kind)| kind);
                assert_eq!(Kind::from_macho(r_type, r_length, pc_rel), expected, "{r_type} {r_length} {pc_rel}");
            }
        }
    }
}

#[test]
fn widths_are_the_bytes_patched() {
    for kind in all_kinds() {
        let name = kind.name();
        let expected = match kind {
            Kind::None | Kind::TlsDescCall => 0,
            Kind::Abs16 | Kind::Prel16 => 2,
            Kind::Delta64 | Kind::PointerToGot64 => 8,
            _ if name.ends_with("64") && !name.contains("LD64") && !name.contains("LDST64") => 8,
            _ if name.starts_with("R_AARCH64_TLS_") => 8,
            _ => 4,
        };
        assert_eq!(kind.width(), expected, "{name}");
    }
}

/// What each kind asks of the generic linker, checked against its name.
#[test]
fn classification_follows_the_relocation_names() {
    for kind in all_kinds() {
        let name = kind.name();
        let has = |part: &str| name.contains(part);
        let got_slot = has("GOT") && !has("GOTTPREL") && !has("POINTER_TO_GOT") || has("TLVP");
        assert_eq!(kind.uses_address_got(), got_slot || has("POINTER_TO_GOT"), "{name}");
        assert_eq!(
            kind.far_reference() == FarReference::ThroughStub,
            has("CALL26") || has("JUMP26") || has("PLT32"),
            "{name}"
        );
        assert_eq!(kind.needs_got_base(), has("GOTPAGE_LO15"), "{name}");
        assert_eq!(kind.uses_subtrahend(), has("SUBTRACTOR"), "{name}");
        let access = if has("TLSLE_") || has("TLS_TPREL") {
            Some(TlsAccess::TpOffset)
        } else if has("DTPREL") {
            Some(TlsAccess::DtpOffset)
        } else if has("DTPMOD") {
            Some(TlsAccess::ModuleId)
        } else if has("TLSIE_") {
            Some(TlsAccess::GotTpOffset)
        } else if has("TLSGD_") {
            Some(TlsAccess::GotTlsIndex)
        } else if has("TLSLD_") {
            Some(TlsAccess::GotTlsModule)
        } else if has("TLSDESC_") && !has("CALL") {
            Some(TlsAccess::GotTlsDescriptor)
        } else {
            None
        };
        assert_eq!(kind.tls_access(), access, "{name}");
        assert_eq!(kind.is_tls(), has("TLS") && !has("TLVP"), "{name}");
    }
    assert!(Kind::Abs32.is_abs32() && Kind::MovwUabsG1.is_abs32() && Kind::MovwSabsG1.is_abs32());
    assert!(!Kind::Abs64.is_abs32() && !Kind::MovwUabsG1Nc.is_abs32() && !Kind::Prel32.is_abs32());
}

/// One instruction patched: `before` (its immediate zero) becomes `after`,
/// `asm` as `llvm-mc-14` assembled it, with P, S, G, GOT and A.
struct Case {
    kind: Kind,
    before: u32,
    after: u32,
    asm: &'static str,
    p: u64,
    s: u64,
    g: u64,
    got: u64,
    a: i64,
}

macro_rules! case {
    ($kind:ident, $before:expr, $after:expr, $asm:expr, [$p:expr, $s:expr, $g:expr, $got:expr], $a:expr) => {
        Case { kind: Kind::$kind, before: $before, after: $after, asm: $asm, p: $p, s: $s, g: $g, got: $got, a: $a }
    };
}

/// Made by `testdata/arch/aarch64/encoding_cases.py`, which computes each immediate
/// from the psABI's equation and has `llvm-mc-14` encode both words.
#[rustfmt::skip]
const CASES: &[Case] = &[
    case!(AdrPrelPgHi21, 0x90000001, 0xb0000881, "adrp x1, #0x111000", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x10),
    case!(AdrPrelPgHi21Nc, 0x90000001, 0xb0000881, "adrp x1, #0x111000", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x10),
    case!(AdrPrelPgHi21, 0x90000001, 0xd0ffff61, "adrp x1, #-0x12000", [0x41_2344, 0x40_0ff0, 0x0, 0x0], 0x0),
    case!(AdrPrelPgHi21, 0x90000001, 0xd0000761, "adrp x1, #0xee000", [0x41_2ffc, 0x50_0010, 0x0, 0x0], 0x0),
    case!(AdrGotPage, 0x90000010, 0xd0001f70, "adrp x16, #0x3ee000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0xff8),
    case!(Ld64GotLo12Nc, 0xf9400000, 0xf9400800, "ldr x0, [x0, #0x10]", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x8),
    case!(AdrGotPage, 0x90000010, 0xb0001f70, "adrp x16, #0x3ed000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsGdAdrPage21, 0x90000010, 0xb0001f70, "adrp x16, #0x3ed000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsLdAdrPage21, 0x90000010, 0xb0001f70, "adrp x16, #0x3ed000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsIeAdrGotTpRelPage21, 0x90000010, 0xb0001f70, "adrp x16, #0x3ed000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsDescAdrPage21, 0x90000010, 0xb0001f70, "adrp x16, #0x3ed000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlvpPage21, 0x90000010, 0xb0001f70, "adrp x16, #0x3ed000", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(AdrPrelLo21, 0x10000002, 0x30f7fde2, "adr x2, #-0x10043", [0x41_2344, 0x40_2301, 0x0, 0x0], 0x0),
    case!(TlsGdAdrPrel21, 0x10000000, 0x1002e620, "adr x0, #0x5cc4", [0x41_2344, 0x99_9000, 0x41_8008, 0x0], 0x0),
    case!(TlsLdAdrPrel21, 0x10000000, 0x1002e620, "adr x0, #0x5cc4", [0x41_2344, 0x99_9000, 0x41_8008, 0x0], 0x0),
    case!(TlsDescAdrPrel21, 0x10000000, 0x1002e620, "adr x0, #0x5cc4", [0x41_2344, 0x99_9000, 0x41_8008, 0x0], 0x0),
    case!(AddAbsLo12Nc, 0x91000083, 0x91288083, "add x3, x4, #0xa20", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x10),
    case!(AddAbsLo12Nc, 0x11000083, 0x11288083, "add w3, w4, #0xa20", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x10),
    case!(PageOffset12, 0x91000083, 0x91288083, "add x3, x4, #0xa20", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x10),
    case!(TlsGdAddLo12Nc, 0x91000000, 0x91002000, "add x0, x0, #8", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsLdAddLo12Nc, 0x91000000, 0x91002000, "add x0, x0, #8", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsDescAddLo12, 0x91000000, 0x91002000, "add x0, x0, #8", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsLeAddTpRelLo12, 0x91000020, 0x91202020, "add x0, x1, #0x808", [0x41_2344, 0x10, 0x0, 0x0], 0x7f8),
    case!(TlsLdAddDtpRelLo12, 0x91000020, 0x91202020, "add x0, x1, #0x808", [0x41_2344, 0x10, 0x0, 0x0], 0x7f8),
    case!(TlsLeAddTpRelLo12Nc, 0x91000020, 0x91116020, "add x0, x1, #0x458", [0x41_2344, 0x12_3458, 0x0, 0x0], 0x0),
    case!(TlsLdAddDtpRelLo12Nc, 0x91000020, 0x91116020, "add x0, x1, #0x458", [0x41_2344, 0x12_3458, 0x0, 0x0], 0x0),
    case!(TlsLeAddTpRelHi12, 0x91400020, 0x91448c20, "add x0, x1, #0x123, lsl #12", [0x41_2344, 0x12_3458, 0x0, 0x0], 0x0),
    case!(TlsLeAddTpRelHi12, 0x91400020, 0x917ffc20, "add x0, x1, #0xfff, lsl #12", [0x41_2344, 0xff_f123, 0x0, 0x0], 0x0),
    case!(TlsLdAddDtpRelHi12, 0x91400020, 0x91448c20, "add x0, x1, #0x123, lsl #12", [0x41_2344, 0x12_3458, 0x0, 0x0], 0x0),
    case!(TlsLdAddDtpRelHi12, 0x91400020, 0x917ffc20, "add x0, x1, #0xfff, lsl #12", [0x41_2344, 0xff_f123, 0x0, 0x0], 0x0),
    case!(Ldst8AbsLo12Nc, 0x39400020, 0x39685c20, "ldrb w0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x39400020, 0x39685c20, "ldrb w0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(Ldst8AbsLo12Nc, 0x39000020, 0x39285c20, "strb w0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x39000020, 0x39285c20, "strb w0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(Ldst8AbsLo12Nc, 0x39800020, 0x39a85c20, "ldrsb x0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x39800020, 0x39a85c20, "ldrsb x0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(Ldst8AbsLo12Nc, 0x3d400020, 0x3d685c20, "ldr b0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x3d400020, 0x3d685c20, "ldr b0, [x1, #0xa17]", [0x41_2344, 0x52_3a13, 0x0, 0x0], 0x4),
    case!(TlsLeLdst8TpRelLo12, 0x39400020, 0x395fc020, "ldrb w0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLeLdst8TpRelLo12Nc, 0x39400020, 0x39514020, "ldrb w0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(TlsLdLdst8DtpRelLo12, 0x39400020, 0x395fc020, "ldrb w0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLdLdst8DtpRelLo12Nc, 0x39400020, 0x39514020, "ldrb w0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(Ldst16AbsLo12Nc, 0x79400020, 0x79542c20, "ldrh w0, [x1, #0xa16]", [0x41_2344, 0x52_3a12, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x79400020, 0x79542c20, "ldrh w0, [x1, #0xa16]", [0x41_2344, 0x52_3a12, 0x0, 0x0], 0x4),
    case!(Ldst16AbsLo12Nc, 0x79c00020, 0x79d42c20, "ldrsh w0, [x1, #0xa16]", [0x41_2344, 0x52_3a12, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x79c00020, 0x79d42c20, "ldrsh w0, [x1, #0xa16]", [0x41_2344, 0x52_3a12, 0x0, 0x0], 0x4),
    case!(Ldst16AbsLo12Nc, 0x7d000020, 0x7d142c20, "str h0, [x1, #0xa16]", [0x41_2344, 0x52_3a12, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x7d000020, 0x7d142c20, "str h0, [x1, #0xa16]", [0x41_2344, 0x52_3a12, 0x0, 0x0], 0x4),
    case!(TlsLeLdst16TpRelLo12, 0x79400020, 0x794fe020, "ldrh w0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLeLdst16TpRelLo12Nc, 0x79400020, 0x7948a020, "ldrh w0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(TlsLdLdst16DtpRelLo12, 0x79400020, 0x794fe020, "ldrh w0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLdLdst16DtpRelLo12Nc, 0x79400020, 0x7948a020, "ldrh w0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(Ldst32AbsLo12Nc, 0xb9400020, 0xb94a1420, "ldr w0, [x1, #0xa14]", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xb9400020, 0xb94a1420, "ldr w0, [x1, #0xa14]", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x4),
    case!(Ldst32AbsLo12Nc, 0xb9800020, 0xb98a1420, "ldrsw x0, [x1, #0xa14]", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xb9800020, 0xb98a1420, "ldrsw x0, [x1, #0xa14]", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x4),
    case!(Ldst32AbsLo12Nc, 0xbd000020, 0xbd0a1420, "str s0, [x1, #0xa14]", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xbd000020, 0xbd0a1420, "str s0, [x1, #0xa14]", [0x41_2344, 0x52_3a10, 0x0, 0x0], 0x4),
    case!(TlsLeLdst32TpRelLo12, 0xb9400020, 0xb947f020, "ldr w0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLeLdst32TpRelLo12Nc, 0xb9400020, 0xb9445020, "ldr w0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(TlsLdLdst32DtpRelLo12, 0xb9400020, 0xb947f020, "ldr w0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLdLdst32DtpRelLo12Nc, 0xb9400020, 0xb9445020, "ldr w0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(Ldst64AbsLo12Nc, 0xf9400020, 0xf9450820, "ldr x0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xf9400020, 0xf9450820, "ldr x0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(Ldst64AbsLo12Nc, 0xf9000020, 0xf9050820, "str x0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xf9000020, 0xf9050820, "str x0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(Ldst64AbsLo12Nc, 0xfd400020, 0xfd450820, "ldr d0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xfd400020, 0xfd450820, "ldr d0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(Ldst64AbsLo12Nc, 0xf9800020, 0xf9850820, "prfm pldl1keep, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0xf9800020, 0xf9850820, "prfm pldl1keep, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(TlsLeLdst64TpRelLo12, 0xf9400020, 0xf943f820, "ldr x0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLeLdst64TpRelLo12Nc, 0xf9400020, 0xf9422820, "ldr x0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(TlsLdLdst64DtpRelLo12, 0xf9400020, 0xf943f820, "ldr x0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLdLdst64DtpRelLo12Nc, 0xf9400020, 0xf9422820, "ldr x0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(Ldst128AbsLo12Nc, 0x3dc00020, 0x3dc28420, "ldr q0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x3dc00020, 0x3dc28420, "ldr q0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(Ldst128AbsLo12Nc, 0x3d800020, 0x3d828420, "str q0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(PageOffset12, 0x3d800020, 0x3d828420, "str q0, [x1, #0xa10]", [0x41_2344, 0x52_3a0c, 0x0, 0x0], 0x4),
    case!(TlsLeLdst128TpRelLo12, 0x3dc00020, 0x3dc1fc20, "ldr q0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLeLdst128TpRelLo12Nc, 0x3dc00020, 0x3dc11420, "ldr q0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(TlsLdLdst128DtpRelLo12, 0x3dc00020, 0x3dc1fc20, "ldr q0, [x1, #0x7f0]", [0x41_2344, 0x10, 0x0, 0x0], 0x7e0),
    case!(TlsLdLdst128DtpRelLo12Nc, 0x3dc00020, 0x3dc11420, "ldr q0, [x1, #0x450]", [0x41_2344, 0x12_3450, 0x0, 0x0], 0x0),
    case!(Ld64GotLo12Nc, 0xf9400000, 0xf9400400, "ldr x0, [x0, #8]", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsIeLd64GotTpRelLo12Nc, 0xf9400000, 0xf9400400, "ldr x0, [x0, #8]", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlsDescLd64Lo12, 0xf9400000, 0xf9400400, "ldr x0, [x0, #8]", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(TlvpPageOffset12, 0xf9400000, 0xf9400400, "ldr x0, [x0, #8]", [0x41_2344, 0x99_9000, 0x7f_f008, 0x0], 0x0),
    case!(Ld64GotPageLo15, 0xf9400000, 0xf9480400, "ldr x0, [x0, #0x1008]", [0x41_2344, 0x99_9000, 0x7f_f008, 0x7f_e010], 0x0),
    case!(LdPrelLo19, 0x18000000, 0x180091a0, "ldr w0, #0x1234", [0x41_2344, 0x41_3578, 0x0, 0x0], 0x0),
    case!(LdPrelLo19, 0x9c000003, 0x9cff6de3, "ldr q3, #-0x1244", [0x41_2344, 0x41_1110, 0x0, 0x0], -0x10),
    case!(LdPrelLo19, 0xd8000000, 0xd8000200, "prfm pldl1keep, #0x40", [0x41_2344, 0x41_2384, 0x0, 0x0], 0x0),
    case!(GotLdPrel19, 0x58000001, 0x58f80001, "ldr x1, #-0x10000", [0x41_2344, 0x99_9000, 0x40_2344, 0x0], 0x0),
    case!(TlsLdLdPrel19, 0x58000001, 0x58f80001, "ldr x1, #-0x10000", [0x41_2344, 0x99_9000, 0x40_2344, 0x0], 0x0),
    case!(TlsIeLdGotTpRelPrel19, 0x58000001, 0x58f80001, "ldr x1, #-0x10000", [0x41_2344, 0x99_9000, 0x40_2344, 0x0], 0x0),
    case!(TlsDescLdPrel19, 0x58000001, 0x58f80001, "ldr x1, #-0x10000", [0x41_2344, 0x99_9000, 0x40_2344, 0x0], 0x0),
    case!(TstBr14, 0xb7400005, 0xb743ffe5, "tbnz x5, #0x28, #0x7ffc", [0x41_2344, 0x41_a340, 0x0, 0x0], 0x0),
    case!(TstBr14, 0x36180005, 0x361c0005, "tbz w5, #3, #-0x8000", [0x41_2344, 0x40_a344, 0x0, 0x0], 0x0),
    case!(CondBr19, 0x54000001, 0x54800001, "b.ne #-0x100000", [0x41_2344, 0x31_2344, 0x0, 0x0], 0x0),
    case!(CondBr19, 0xb4000000, 0xb47fffe0, "cbz x0, #0xffffc", [0x41_2344, 0x51_2340, 0x0, 0x0], 0x0),
    case!(CondBr19, 0x35000007, 0x35000207, "cbnz w7, #0x40", [0x41_2344, 0x41_2374, 0x0, 0x0], 0x10),
    case!(Jump26, 0x14000000, 0x15ffffff, "b #0x7fffffc", [0x41_2344, 0x841_2340, 0x0, 0x0], 0x0),
    case!(Jump26, 0x94000000, 0x97fffff0, "bl #-0x40", [0x41_2344, 0x41_2304, 0x0, 0x0], 0x0),
    case!(Call26, 0x94000000, 0x96000000, "bl #-0x8000000", [0x41_2344, 0xffff_ffff_f841_2344, 0x0, 0x0], 0x0),
    case!(Call26, 0x14000000, 0x14000400, "b #0x1000", [0x41_2344, 0x41_3344, 0x0, 0x0], 0x0),
    case!(MovwUabsG0, 0xd2800000, 0xd29fffe0, "movz x0, #0xffff", [0x41_2344, 0xfff0, 0x0, 0x0], 0xf),
    case!(MovwUabsG0, 0x72800000, 0x72824680, "movk w0, #0x1234", [0x41_2344, 0x1234, 0x0, 0x0], 0x0),
    case!(MovwUabsG0Nc, 0xf2800000, 0xf28f1340, "movk x0, #0x789a", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x0),
    case!(MovwUabsG0Nc, 0xd2800000, 0xd28f1340, "movz x0, #0x789a", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x0),
    case!(MovwUabsG1, 0xd2a00000, 0xd2bfffe0, "movz x0, #0xffff, lsl #16", [0x41_2344, 0xffff_0000, 0x0, 0x0], 0x0),
    case!(MovwUabsG1Nc, 0xf2a00000, 0xf2a68ac0, "movk x0, #0x3456, lsl #16", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x0),
    case!(MovwUabsG2, 0xd2c00000, 0xd2cfe240, "movz x0, #0x7f12, lsl #32", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x0),
    case!(MovwUabsG2Nc, 0xf2c00000, 0xf2cfe240, "movk x0, #0x7f12, lsl #32", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x0),
    case!(MovwUabsG3, 0xf2e00000, 0xf2e20000, "movk x0, #0x1000, lsl #48", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x1000_0000_0000_0000),
    case!(MovwSabsG0, 0xd2800000, 0x92800020, "movn x0, #1", [0x41_2344, 0x0, 0x0, 0x0], -0x2),
    case!(MovwSabsG0, 0x92800000, 0xd28000a0, "movz x0, #5", [0x41_2344, 0x5, 0x0, 0x0], 0x0),
    case!(MovwSabsG1, 0xd2a00000, 0x92a00020, "movn x0, #1, lsl #16", [0x41_2344, 0x0, 0x0, 0x0], -0x1_2345),
    case!(MovwSabsG2, 0x92c00000, 0xd2cfe240, "movz x0, #0x7f12, lsl #32", [0x41_2344, 0x7f12_3456_789a, 0x0, 0x0], 0x0),
    case!(MovwPrelG0, 0xd2800000, 0x92801fe0, "movn x0, #0xff", [0x41_2344, 0x41_2244, 0x0, 0x0], 0x0),
    case!(MovwPrelG0Nc, 0xf2800000, 0xf29fe000, "movk x0, #0xff00", [0x41_2344, 0x41_2244, 0x0, 0x0], 0x0),
    case!(MovwPrelG1, 0xd2a00000, 0xd2aeca80, "movz x0, #0x7654, lsl #16", [0x41_2344, 0x7695_5554, 0x0, 0x0], 0x0),
    case!(MovwPrelG1Nc, 0xf2a00000, 0xf2bfffe0, "movk x0, #0xffff, lsl #16", [0x41_2344, 0x41_2244, 0x0, 0x0], 0x0),
    case!(MovwPrelG2, 0xd2c00000, 0x92c00000, "movn x0, #0, lsl #32", [0x41_2344, 0x41_2344, 0x0, 0x0], -0x1_0000_0000),
    case!(MovwPrelG2Nc, 0xf2c00000, 0xf2dfffe0, "movk x0, #0xffff, lsl #32", [0x41_2344, 0x41_2244, 0x0, 0x0], 0x0),
    case!(MovwPrelG3, 0xd2e00000, 0x92e00000, "movn x0, #0, lsl #48", [0x41_2344, 0x41_2244, 0x0, 0x0], 0x0),
    case!(MovwPrelG3, 0x92e00000, 0xd2e24680, "movz x0, #0x1234, lsl #48", [0x41_2344, 0x41_2344, 0x0, 0x0], 0x1234_0000_0000_0000),
    case!(TlsLeMovwTpRelG2, 0xd2c00000, 0xd2c00240, "movz x0, #0x12, lsl #32", [0x41_2344, 0x12_3456_7890, 0x0, 0x0], 0x0),
    case!(TlsLeMovwTpRelG1, 0xd2a00000, 0xd2a24680, "movz x0, #0x1234, lsl #16", [0x41_2344, 0x1234_5678, 0x0, 0x0], 0x0),
    case!(TlsLeMovwTpRelG1Nc, 0xf2a00000, 0xf2a24680, "movk x0, #0x1234, lsl #16", [0x41_2344, 0x1234_5678, 0x0, 0x0], 0x0),
    case!(TlsLeMovwTpRelG0, 0x92800000, 0xd28acf00, "movz x0, #0x5678", [0x41_2344, 0x5678, 0x0, 0x0], 0x0),
    case!(TlsLeMovwTpRelG0, 0xd2800000, 0x928001e0, "movn x0, #0xf", [0x41_2344, 0x0, 0x0, 0x0], -0x10),
    case!(TlsLeMovwTpRelG0Nc, 0xf2800000, 0xf28acf00, "movk x0, #0x5678", [0x41_2344, 0x1234_5678, 0x0, 0x0], 0x0),
    case!(TlsLdMovwDtpRelG2, 0xd2c00000, 0xd2c00240, "movz x0, #0x12, lsl #32", [0x41_2344, 0x12_3456_7890, 0x0, 0x0], 0x0),
    case!(TlsLdMovwDtpRelG1, 0xd2a00000, 0xd2a24680, "movz x0, #0x1234, lsl #16", [0x41_2344, 0x1234_5678, 0x0, 0x0], 0x0),
    case!(TlsLdMovwDtpRelG1Nc, 0xf2a00000, 0xf2a24680, "movk x0, #0x1234, lsl #16", [0x41_2344, 0x1234_5678, 0x0, 0x0], 0x0),
    case!(TlsLdMovwDtpRelG0, 0x92800000, 0xd28acf00, "movz x0, #0x5678", [0x41_2344, 0x5678, 0x0, 0x0], 0x0),
    case!(TlsLdMovwDtpRelG0, 0xd2800000, 0x928001e0, "movn x0, #0xf", [0x41_2344, 0x0, 0x0, 0x0], -0x10),
    case!(TlsLdMovwDtpRelG0Nc, 0xf2800000, 0xf28acf00, "movk x0, #0x5678", [0x41_2344, 0x1234_5678, 0x0, 0x0], 0x0),
];

fn patch(kind: Kind, word: u32, v: &FixupValues) -> Result<(FixupOutcome, u32), FixupError> {
    // The word in the middle of a block, at a misaligned offset too.
    let mut block = [0xaa; 11];
    block[5..9].copy_from_slice(&word.to_le_bytes());
    let outcome = apply_fixup(kind, &mut block, 5, v)?;
    assert_eq!(block[..5], [0xaa; 5]);
    assert_eq!(block[9..], [0xaa; 2]);
    Ok((outcome, u32::from_le_bytes(block[5..9].try_into().unwrap())))
}

#[test]
fn instructions_get_the_encodings_llvm_mc_gives() {
    for case in CASES {
        let v = FixupValues { p: case.p, s: case.s, a: case.a, g: Some(case.g), got: case.got, ..Default::default() };
        let expected = if kind_uses_got(case.kind) { FixupOutcome::ViaGot } else { FixupOutcome::Direct };
        let patched = patch(case.kind, case.before, &v);
        assert_eq!(patched, Ok((expected, case.after)), "{}: {} got {:#010x?}", case.kind, case.asm, patched);
        // Patching again replaces the immediate rather than merging bits into it.
        assert_eq!(patch(case.kind, case.after, &v), Ok((expected, case.after)), "{}: {}", case.kind, case.asm);
    }
}

fn kind_uses_got(kind: Kind) -> bool {
    kind.uses_address_got()
        || matches!(kind.tls_access(), Some(a) if a != TlsAccess::TpOffset && a != TlsAccess::DtpOffset && a != TlsAccess::ModuleId)
}

#[test]
fn every_instruction_kind_has_an_encoding_case() {
    for kind in all_kinds() {
        let patches_instruction =
            !matches!(kind.recipe().1, Field::None | Field::Data16(_) | Field::Data32(_) | Field::Data64);
        if patches_instruction {
            assert!(CASES.iter().any(|case| case.kind == kind), "no encoding case for {kind}");
        }
    }
}

#[test]
fn data_kinds_write_little_endian_values() {
    let far = FixupValues { p: 0x41_2344, s: 0x7f12_3456_789a, a: -0x1a, g: Some(0x41_0008), ..Default::default() };
    let near = FixupValues { s: 0x41_0000, a: 0x10, ..far };
    fn apply(kind: Kind, v: &FixupValues) -> Result<(FixupOutcome, [u8; 8]), FixupError> {
        let mut d = [0xaau8; 8];
        apply_fixup(kind, &mut d, 0, v).map(|outcome| (outcome, d))
    }
    let value64 = |kind, v| apply(kind, v).map(|(outcome, d)| (outcome, i64::from_le_bytes(d)));
    // The value, and whether the bytes after it are untouched.
    let value32 = |kind, v| {
        apply(kind, v)
            .map(|(outcome, d)| (outcome, i32::from_le_bytes(d[..4].try_into().unwrap()), d[4..] == [0xaa; 4]))
    };
    let value16 = |kind, v| apply(kind, v).map(|(_, d)| (i16::from_le_bytes([d[0], d[1]]), d[2..] == [0xaa; 6]));
    use FixupOutcome::{Direct, ViaGot};
    assert_eq!(value64(Kind::Abs64, &far), Ok((Direct, 0x7f12_3456_7880)));
    assert_eq!(value64(Kind::Prel64, &far), Ok((Direct, 0x7f12_3456_7880 - 0x41_2344)));
    assert_eq!(value64(Kind::PointerToGot64, &far), Ok((ViaGot, 0x41_0008 - 0x1a)));
    let delta = FixupValues { b: 0x7f12_3456_0000, ..far };
    assert_eq!(value64(Kind::Delta64, &delta), Ok((Direct, 0x7880)));
    let tls = FixupValues { s: 0x10, a: 0x28, ..far };
    for kind in [Kind::TlsDtpMod64, Kind::TlsDtpRel64, Kind::TlsTpRel64] {
        assert_eq!(value64(kind, &tls), Ok((Direct, 0x38)), "{kind}");
    }
    assert_eq!(value32(Kind::Prel32, &near), Ok((Direct, 0x41_0010 - 0x41_2344, true)));
    assert_eq!(value32(Kind::Plt32, &near), Ok((Direct, 0x41_0010 - 0x41_2344, true)));
    assert_eq!(value32(Kind::Abs32, &near), Ok((Direct, 0x41_0010, true)));
    assert_eq!(value32(Kind::PointerToGot32, &near), Ok((ViaGot, 0x41_0018 - 0x41_2344, true)));
    let delta = FixupValues { s: 0x1000, b: 0x1010, a: -2, ..far };
    assert_eq!(value32(Kind::Delta32, &delta), Ok((Direct, -0x12, true)));
    // ABS32 and PREL32 take unsigned values up to 2^32 too.
    let high = FixupValues { s: 0xffff_fff0, a: 0xf, ..far };
    assert_eq!(value32(Kind::Abs32, &high), Ok((Direct, -1, true)));
    let top = FixupValues { s: 0xfff0, a: 0xf, ..far };
    assert_eq!(value16(Kind::Abs16, &top), Ok((-1, true)));
    assert_eq!(value16(Kind::Prel16, &near), Ok((0x10 - 0x2344, true)));
}

/// Values that make `kind`'s equation come to `x`.
fn values_for(kind: Kind, x: i128) -> FixupValues {
    let p = 0x1000_0000;
    let a = i64::try_from(x).unwrap();
    match kind.recipe().0 {
        // P is page-aligned, S = G = P: X = A, and for ADRP A is whole pages.
        Equation::PcRelative | Equation::PageDelta | Equation::GotPcRelative | Equation::GotPageDelta => {
            FixupValues { p, s: p, g: Some(p), a, ..Default::default() }
        }
        _ => FixupValues { p, s: 0, g: Some(0), got: 0, b: 0, a, ..Default::default() },
    }
}

const NOP_WORD: u32 = 0xd503201f;

/// Checked kinds with an instruction of their class (0 for data) and the
/// psABI's range [lo, hi); `step` is the smallest change of X that the
/// field can hold (its alignment, or the page for ADRP).
#[rustfmt::skip]
const RANGES: &[(Kind, u32, i128, i128, i128)] = {
    use Kind::*;
    const ADRP: u32 = 0x90000001; // adrp x1, #0
    const ADR: u32 = 0x10000000; // adr x0, #0
    const ADD: u32 = 0x91000020; // add x0, x1, #0
    const ADD_HI: u32 = 0x91400020; // add x0, x1, #0, lsl #12
    const LDRB: u32 = 0x39400020; // ldrb w0, [x1]
    const LDRH: u32 = 0x79400020; // ldrh w0, [x1]
    const LDRW: u32 = 0xb9400020; // ldr w0, [x1]
    const LDRX: u32 = 0xf9400020; // ldr x0, [x1]
    const LDRQ: u32 = 0x3dc00020; // ldr q0, [x1]
    const LITERAL: u32 = 0x58000001; // ldr x1, #0
    const MOVZ: [u32; 3] = [0xd2800000, 0xd2a00000, 0xd2c00000]; // movz x0, #0, lsl #0/16/32
    &[
        (Abs32, 0, -(1 << 31), 1 << 32, 1),
        (Abs16, 0, -(1 << 15), 1 << 16, 1),
        (Prel32, 0, -(1 << 31), 1 << 32, 1),
        (Prel16, 0, -(1 << 15), 1 << 16, 1),
        (Plt32, 0, -(1 << 31), 1 << 31, 1),
        (Delta32, 0, -(1 << 31), 1 << 31, 1),
        (PointerToGot32, 0, -(1 << 31), 1 << 31, 1),
        (MovwUabsG0, MOVZ[0], 0, 1 << 16, 1),
        (MovwUabsG1, MOVZ[1], 0, 1 << 32, 1),
        (MovwUabsG2, MOVZ[2], 0, 1 << 48, 1),
        (MovwSabsG0, MOVZ[0], -(1 << 16), 1 << 16, 1),
        (MovwSabsG1, MOVZ[1], -(1 << 32), 1 << 32, 1),
        (MovwSabsG2, MOVZ[2], -(1 << 48), 1 << 48, 1),
        (MovwPrelG0, MOVZ[0], -(1 << 16), 1 << 16, 1),
        (MovwPrelG1, MOVZ[1], -(1 << 32), 1 << 32, 1),
        (MovwPrelG2, MOVZ[2], -(1 << 48), 1 << 48, 1),
        (TlsLeMovwTpRelG0, MOVZ[0], -(1 << 16), 1 << 16, 1),
        (TlsLeMovwTpRelG1, MOVZ[1], -(1 << 32), 1 << 32, 1),
        (TlsLeMovwTpRelG2, MOVZ[2], -(1 << 48), 1 << 48, 1),
        (TlsLdMovwDtpRelG0, MOVZ[0], -(1 << 16), 1 << 16, 1),
        (TlsLdMovwDtpRelG1, MOVZ[1], -(1 << 32), 1 << 32, 1),
        (TlsLdMovwDtpRelG2, MOVZ[2], -(1 << 48), 1 << 48, 1),
        (LdPrelLo19, LITERAL, -(1 << 20), 1 << 20, 4),
        (GotLdPrel19, LITERAL, -(1 << 20), 1 << 20, 4),
        (TlsLdLdPrel19, LITERAL, -(1 << 20), 1 << 20, 4),
        (TlsIeLdGotTpRelPrel19, LITERAL, -(1 << 20), 1 << 20, 4),
        (TlsDescLdPrel19, LITERAL, -(1 << 20), 1 << 20, 4),
        (AdrPrelLo21, ADR, -(1 << 20), 1 << 20, 1),
        (TlsGdAdrPrel21, ADR, -(1 << 20), 1 << 20, 1),
        (TlsLdAdrPrel21, ADR, -(1 << 20), 1 << 20, 1),
        (TlsDescAdrPrel21, ADR, -(1 << 20), 1 << 20, 1),
        (AdrPrelPgHi21, ADRP, -(1 << 32), 1 << 32, 4096),
        (AdrGotPage, ADRP, -(1 << 32), 1 << 32, 4096),
        (TlsGdAdrPage21, ADRP, -(1 << 32), 1 << 32, 4096),
        (TlsLdAdrPage21, ADRP, -(1 << 32), 1 << 32, 4096),
        (TlsIeAdrGotTpRelPage21, ADRP, -(1 << 32), 1 << 32, 4096),
        (TlsDescAdrPage21, ADRP, -(1 << 32), 1 << 32, 4096),
        (TlvpPage21, ADRP, -(1 << 32), 1 << 32, 4096),
        (TstBr14, 0x36180000, -(1 << 15), 1 << 15, 4),   // tbz w0, #3, #0
        (CondBr19, 0x54000000, -(1 << 20), 1 << 20, 4),  // b.eq #0
        (CondBr19, 0xb5000000, -(1 << 20), 1 << 20, 4),  // cbnz x0, #0
        (Jump26, 0x14000000, -(1 << 27), 1 << 27, 4),    // b #0
        (Call26, 0x94000000, -(1 << 27), 1 << 27, 4),    // bl #0
        (Ld64GotPageLo15, LDRX, 0, 1 << 15, 8),
        (TlsLeAddTpRelHi12, ADD_HI, 0, 1 << 24, 1),
        (TlsLdAddDtpRelHi12, ADD_HI, 0, 1 << 24, 1),
        (TlsLeAddTpRelLo12, ADD, 0, 1 << 12, 1),
        (TlsLdAddDtpRelLo12, ADD, 0, 1 << 12, 1),
        (TlsLeLdst8TpRelLo12, LDRB, 0, 1 << 12, 1),
        (TlsLeLdst16TpRelLo12, LDRH, 0, 1 << 12, 2),
        (TlsLeLdst32TpRelLo12, LDRW, 0, 1 << 12, 4),
        (TlsLeLdst64TpRelLo12, LDRX, 0, 1 << 12, 8),
        (TlsLeLdst128TpRelLo12, LDRQ, 0, 1 << 12, 16),
        (TlsLdLdst8DtpRelLo12, LDRB, 0, 1 << 12, 1),
        (TlsLdLdst16DtpRelLo12, LDRH, 0, 1 << 12, 2),
        (TlsLdLdst32DtpRelLo12, LDRW, 0, 1 << 12, 4),
        (TlsLdLdst64DtpRelLo12, LDRX, 0, 1 << 12, 8),
        (TlsLdLdst128DtpRelLo12, LDRQ, 0, 1 << 12, 16),
    ]
};

fn apply_to(kind: Kind, word: u32, v: &FixupValues) -> Result<FixupOutcome, FixupError> {
    let mut data = [0u8; 8];
    data[..4].copy_from_slice(&word.to_le_bytes());
    apply_fixup(kind, &mut data, 0, v)
}

#[test]
fn checked_kinds_refuse_values_just_outside_their_range() {
    for &(kind, word, lo, hi, step) in RANGES {
        let at = |x| apply_to(kind, word, &values_for(kind, x));
        let out_of_range = |value| Err(FixupError::OutOfRange { value, lo, hi });
        assert!(at(lo).is_ok(), "{kind}: {lo:#x}: {:?}", at(lo));
        assert!(at(hi - step).is_ok(), "{kind}: {:#x}", hi - step);
        assert_eq!(at(hi), out_of_range(hi), "{kind}");
        assert_eq!(at(lo - step), out_of_range(lo - step), "{kind}");
    }
}

#[test]
fn every_checked_kind_has_a_range_case() {
    for kind in all_kinds() {
        let name = kind.name();
        let unchecked = name.ends_with("_NC")
            || matches!(kind, Kind::None | Kind::TlsDescCall | Kind::PageOffset12)
            || matches!(kind.recipe().1, Field::Data64 | Field::GotLoadLo12 | Field::AddLo12 { checked: false })
            || matches!(kind.recipe().1, Field::MoveWide(3, _));
        assert_eq!(RANGES.iter().any(|r| r.0 == kind), !unchecked, "{name}");
    }
}

#[test]
fn unchecked_kinds_keep_the_bits_of_any_value() {
    // X = 2^33 + 2^20 + 0x40: 8 GiB away for ADRP, beyond every LO12 and G0-G1 check.
    let x = (1 << 33) + (1 << 20) + 0x40;
    let cases = [
        (Kind::AdrPrelPgHi21Nc, 0x90000001, 0x90000801), // adrp x1, #0x100000 (bits [32:12]; 2^33 dropped)
        (Kind::AddAbsLo12Nc, 0x91000020, 0x91010020),    // add x0, x1, #0x40
        (Kind::TlsLeAddTpRelLo12Nc, 0x91000020, 0x91010020),
        (Kind::Ldst64AbsLo12Nc, 0xf9400020, 0xf9402020), // ldr x0, [x1, #0x40]
        (Kind::TlsLdLdst32DtpRelLo12Nc, 0xb9400020, 0xb9404020), // ldr w0, [x1, #0x40]
        (Kind::MovwUabsG0Nc, 0xf2800000, 0xf2800800),    // movk x0, #0x40
        (Kind::MovwUabsG1Nc, 0xf2a00000, 0xf2a00200),    // movk x0, #0x10, lsl #16
        (Kind::TlsLeMovwTpRelG1Nc, 0xf2a00000, 0xf2a00200),
        (Kind::MovwUabsG3, 0xd2e00000, 0xd2e00000), // movz x0, #0, lsl #48
    ];
    for (kind, before, after) in cases {
        let v = values_for(kind, x);
        assert_eq!(patch(kind, before, &v).map(|(_, word)| word), Ok(after), "{kind}");
    }
}

/// Kinds whose field drops low bits of X, with an instruction and the alignment.
#[rustfmt::skip]
const ALIGNMENTS: &[(Kind, u32, u64)] = {
    use Kind::*;
    &[
        (Ldst16AbsLo12Nc, 0x79400020, 2), (Ldst32AbsLo12Nc, 0xb9400020, 4),
        (Ldst64AbsLo12Nc, 0xf9400020, 8), (Ldst128AbsLo12Nc, 0x3dc00020, 16),
        (TlsLeLdst16TpRelLo12, 0x79400020, 2), (TlsLeLdst16TpRelLo12Nc, 0x79400020, 2),
        (TlsLeLdst32TpRelLo12, 0xb9400020, 4), (TlsLeLdst32TpRelLo12Nc, 0xb9400020, 4),
        (TlsLeLdst64TpRelLo12, 0xf9400020, 8), (TlsLeLdst64TpRelLo12Nc, 0xf9400020, 8),
        (TlsLeLdst128TpRelLo12, 0x3dc00020, 16), (TlsLeLdst128TpRelLo12Nc, 0x3dc00020, 16),
        (TlsLdLdst16DtpRelLo12, 0x79400020, 2), (TlsLdLdst16DtpRelLo12Nc, 0x79400020, 2),
        (TlsLdLdst32DtpRelLo12, 0xb9400020, 4), (TlsLdLdst32DtpRelLo12Nc, 0xb9400020, 4),
        (TlsLdLdst64DtpRelLo12, 0xf9400020, 8), (TlsLdLdst64DtpRelLo12Nc, 0xf9400020, 8),
        (TlsLdLdst128DtpRelLo12, 0x3dc00020, 16), (TlsLdLdst128DtpRelLo12Nc, 0x3dc00020, 16),
        (Ld64GotLo12Nc, 0xf9400020, 8), (Ld64GotPageLo15, 0xf9400020, 8),
        (TlsIeLd64GotTpRelLo12Nc, 0xf9400020, 8), (TlsDescLd64Lo12, 0xf9400020, 8),
        (TlvpPageOffset12, 0xf9400020, 8),
        (PageOffset12, 0x79400020, 2), (PageOffset12, 0xf9400020, 8), (PageOffset12, 0x3dc00020, 16),
        (LdPrelLo19, 0x58000001, 4), (GotLdPrel19, 0x58000001, 4), (TlsIeLdGotTpRelPrel19, 0x58000001, 4),
        (TlsLdLdPrel19, 0x58000001, 4), (TlsDescLdPrel19, 0x58000001, 4),
        (TstBr14, 0x36180000, 4), (CondBr19, 0x54000000, 4), (Jump26, 0x14000000, 4), (Call26, 0x94000000, 4),
    ]
};

#[test]
fn scaled_fields_refuse_misaligned_values() {
    for &(kind, word, align) in ALIGNMENTS {
        let aligned = 0x100 + align as i128;
        assert!(apply_to(kind, word, &values_for(kind, aligned)).is_ok(), "{kind}");
        let misaligned = aligned + align as i128 / 2;
        let expected = Err(FixupError::Misaligned { value: misaligned, align });
        assert_eq!(apply_to(kind, word, &values_for(kind, misaligned)), expected, "{kind}");
    }
}

#[test]
fn every_scaled_kind_has_an_alignment_case() {
    for kind in all_kinds() {
        let scaled = match kind.recipe().1 {
            Field::LoadStoreLo12 { size_log2, .. } => size_log2 > 0,
            Field::GotLoadLo12 | Field::GotLoadLo15 | Field::PageOffsetLo12 => true,
            Field::LoadLiteral { .. } | Field::Branch26 | Field::ConditionalBranch19 | Field::TestBranch14 => true,
            _ => false,
        };
        assert_eq!(ALIGNMENTS.iter().any(|c| c.0 == kind), scaled, "{kind}");
    }
}

#[test]
fn instructions_of_another_class_are_refused() {
    // Every instruction kind refuses a NOP, naming what it expects.
    for case in CASES {
        let v = FixupValues { p: case.p, s: case.s, a: case.a, g: Some(case.g), got: case.got, ..Default::default() };
        match apply_to(case.kind, NOP_WORD, &v) {
            Err(FixupError::UnexpectedInstruction { word: NOP_WORD, expected }) => assert!(!expected.is_empty()),
            other => panic!("{}: {:?}", case.kind, other),
        }
    }
    // And the near misses: the right family, not the right form.
    #[rustfmt::skip]
    let near_misses = [
        (Kind::AdrPrelPgHi21, 0x10000001, "adrp"),                       // adr x1, #0
        (Kind::AdrPrelLo21, 0x90000001, "adr"),                          // adrp x1, #0
        (Kind::AddAbsLo12Nc, 0xd1000020, "add (immediate)"),             // sub x0, x1, #0
        (Kind::AddAbsLo12Nc, 0x91400020, "add (immediate)"),             // add x0, x1, #0, lsl #12
        (Kind::TlsLeAddTpRelHi12, 0x91000020, "add (immediate, lsl #12)"), // add x0, x1, #0
        (Kind::Ldst64AbsLo12Nc, 0xb9400020, "ldr/str/prfm (unsigned offset) of 8 bytes"), // ldr w0, [x1]
        (Kind::Ldst32AbsLo12Nc, 0xf9400020, "ldr/str (unsigned offset) of 4 bytes"), // ldr x0, [x1]
        (Kind::Ldst8AbsLo12Nc, 0x7d400020, "ldr/str (unsigned offset) of 1 byte"), // ldr h0, [x1]
        (Kind::Ld64GotLo12Nc, 0xfd400020, "ldr x (unsigned offset)"),   // ldr d0, [x1]
        (Kind::Ld64GotLo12Nc, 0xf9000020, "ldr x (unsigned offset)"),   // str x0, [x1]
        (Kind::GotLdPrel19, 0x18000001, "ldr x (literal)"),              // ldr w1, #0
        (Kind::TlsLdLdPrel19, 0x18000001, "ldr x (literal)"),
        (Kind::TlsIeLdGotTpRelPrel19, 0x18000001, "ldr x (literal)"),
        (Kind::TlsDescLdPrel19, 0x5c000001, "ldr x (literal)"),          // ldr d1, #0
        (Kind::TlsIeLd64GotTpRelLo12Nc, 0xfd400020, "ldr x (unsigned offset)"),
        (Kind::TlsDescLd64Lo12, 0xf9800020, "ldr x (unsigned offset)"), // prfm pldl1keep, [x1]
        (Kind::TlvpPageOffset12, 0x91000020, "ldr x (unsigned offset)"), // add x0, x1, #0
        (Kind::Ld64GotPageLo15, 0xb9400020, "ldr x (unsigned offset)"), // ldr w0, [x1]
        (Kind::LdPrelLo19, 0x54000000, "ldr (literal)"),                 // b.eq #0
        (Kind::Jump26, 0x54000000, "b or bl"),                           // b.eq #0
        (Kind::CondBr19, 0x36180000, "b.cond, cbz or cbnz"),             // tbz w0, #3, #0
        (Kind::TstBr14, 0xb4000000, "tbz or tbnz"),                      // cbz x0, #0
        (Kind::MovwUabsG1, 0xd2800000, "movz or movk, lsl #16"),         // movz x0, #0
        (Kind::MovwUabsG0, 0x92800000, "movz or movk"),                  // movn x0, #0
        (Kind::MovwSabsG0, 0xf2800000, "movz or movn"),                  // movk x0, #0
        (Kind::MovwPrelG0Nc, 0xd2800000, "movk"),                        // movz x0, #0
        (Kind::TlsLeMovwTpRelG2, 0xd2a00000, "movz or movn, lsl #32"),   // movz x0, #0, lsl #16
        (Kind::PageOffset12, 0xd1000020, "add or ldr/str (unsigned offset)"), // sub x0, x1, #0
    ];
    for (kind, word, expected) in near_misses {
        let result = apply_to(kind, word, &values_for(kind, 0x40));
        assert_eq!(result, Err(FixupError::UnexpectedInstruction { word, expected }), "{kind} on {word:#010x}");
    }
}

/// A symbol that may move (the link cache) is called through its stub even
/// in range, so that the call's bytes do not depend on where it is.
#[test]
fn calls_to_a_movable_symbol_go_through_the_stub_in_range_too() {
    let p = 0x7f00_0000_1000;
    let near = FixupValues { p, s: p + 0x100, stub: Some(p + 0x1000), movable: true, ..Default::default() };
    assert_eq!(patch(Kind::Call26, 0x94000000, &near), Ok((FixupOutcome::ViaStub, 0x94000400)));
    assert_eq!(patch(Kind::Jump26, 0x14000000, &near), Ok((FixupOutcome::ViaStub, 0x14000400)));
    // Without a stub it is reached directly, as any symbol.
    let no_stub = FixupValues { stub: None, ..near };
    assert_eq!(patch(Kind::Call26, 0x94000000, &no_stub), Ok((FixupOutcome::Direct, 0x94000040)));
}

#[test]
fn far_calls_and_jumps_go_through_the_stub() {
    // bl at P to a function 2^27 bytes away: out of range, so to the stub L.
    let p = 0x7f00_0000_1000;
    let far = FixupValues { p, s: p + (1 << 27), stub: Some(p + 0x1000), ..Default::default() };
    assert_eq!(patch(Kind::Call26, 0x94000000, &far), Ok((FixupOutcome::ViaStub, 0x94000400))); // bl #0x1000
    let far_back = FixupValues { s: p - (1 << 27) - 4, stub: Some(p - 0x1000), ..far };
    assert_eq!(patch(Kind::Jump26, 0x14000000, &far_back), Ok((FixupOutcome::ViaStub, 0x17fffc00))); // b #-0x1000
                                                                                                     // The addend applies to L as to S.
    let with_addend = FixupValues { a: 0x800, stub: Some(p), ..far };
    assert_eq!(patch(Kind::Jump26, 0x14000000, &with_addend), Ok((FixupOutcome::ViaStub, 0x14000200))); // b #0x800
                                                                                                        // In range: direct, stub or not.
    let near = FixupValues { s: p - (1 << 27), ..far };
    assert_eq!(patch(Kind::Call26, 0x94000000, &near), Ok((FixupOutcome::Direct, 0x96000000))); // bl #-0x8000000
                                                                                                // No stub: the range error.
    let no_stub = FixupValues { stub: None, ..far };
    let error = FixupError::OutOfRange { value: 1 << 27, lo: -(1 << 27), hi: 1 << 27 };
    assert_eq!(patch(Kind::Call26, 0x94000000, &no_stub), Err(error.clone()));
    // A stub out of range too.
    let far_stub = FixupValues { stub: Some(p + (1 << 28)), ..far };
    assert!(matches!(patch(Kind::Call26, 0x94000000, &far_stub), Err(FixupError::OutOfRange { .. })));
    // A misaligned target is an error, not a reason to take the stub.
    let misaligned = FixupValues { s: p + 2, ..far };
    assert_eq!(patch(Kind::Call26, 0x94000000, &misaligned), Err(FixupError::Misaligned { value: 2, align: 4 }));
    // Kinds that cannot take a stub ignore one.
    let cond = FixupValues { s: p + (1 << 20), ..far };
    assert!(matches!(patch(Kind::CondBr19, 0x54000000, &cond), Err(FixupError::OutOfRange { .. })));
    // PLT32 data: L + A - P.
    let mut data = [0u8; 4];
    let plt = FixupValues { s: p + (1 << 31), a: 4, ..far };
    assert_eq!(apply_fixup(Kind::Plt32, &mut data, 0, &plt), Ok(FixupOutcome::ViaStub));
    assert_eq!(i32::from_le_bytes(data), 0x1004);
}

#[test]
fn stubs_load_their_got_entry_and_branch() {
    let mut stub = [0u8; STUB_SIZE as usize];
    write_stub(&mut stub, 0x40_1000, 0x52_3a18).unwrap();
    let words: Vec<u32> = stub.chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    // adrp x16, #0x122000; ldr x16, [x16, #0xa18]; br x16; udf #0
    assert_eq!(words, [0xd0000910, 0xf9450e10, 0xd61f0200, 0x00000000]);
    // A GOT entry below the stub: adrp x16, #-0x1000; ldr x16, [x16, #8].
    write_stub(&mut stub, 0x10_0000_0010, 0x0f_ffff_f008).unwrap();
    assert_eq!(stub[..8], [0xf0, 0xff, 0xff, 0xf0, 0x10, 0x06, 0x40, 0xf9]);
    // 4 GiB away, or misaligned: refused.
    let far = write_stub(&mut stub, 0x40_1000, 0x40_1000 + (1 << 32));
    assert_eq!(far, Err(FixupError::OutOfRange { value: 1 << 32, lo: -(1 << 32), hi: 1 << 32 }));
    assert_eq!(write_stub(&mut stub, 0x40_1000, 0x52_3a1c), Err(FixupError::Misaligned { value: 0x52_3a1c, align: 8 }));
    assert_eq!(write_stub(&mut stub[..12], 0x40_1000, 0x52_3a18), Err(FixupError::OutOfBounds));
}

#[test]
fn a_stub_is_what_its_kinds_decode() {
    // The stub's own instructions read back, through the checker's decoder,
    // as the GOT entry's page and offset.
    let (stub_addr, got_entry) = (0x40_1000u64, 0x52_3a18u64);
    let mut stub = [0u8; STUB_SIZE as usize];
    write_stub(&mut stub, stub_addr, got_entry).unwrap();
    let word = |i: usize| u32::from_le_bytes(stub[4 * i..4 * i + 4].try_into().unwrap());
    let pages = (got_entry >> 12) as i64 - (stub_addr >> 12) as i64;
    assert_eq!(decode_operand(word(0), 1), Some(pages));
    assert_eq!(decode_operand(word(1), 2), Some(((got_entry & 0xfff) >> 3) as i64));
}

#[test]
fn jumps_to_host_functions_load_the_address_after_them() {
    let mut code = [0u8; JUMP_TO_ABSOLUTE_SIZE];
    write_jump_to_absolute(&mut code, 0x0000_ffff_8765_4321).unwrap();
    // ldr x16, #8; br x16 (llvm-mc-14), then the address.
    assert_eq!(code[..8], [0x50, 0x00, 0x00, 0x58, 0x00, 0x02, 0x1f, 0xd6]);
    assert_eq!(u64::from_le_bytes(code[8..].try_into().unwrap()), 0x0000_ffff_8765_4321);
    // The literal is where the ldr reads: 2 words on.
    assert_eq!(decode_operand(0x58000050, 1), Some(2));
    assert_eq!(write_jump_to_absolute(&mut code[..15], 0), Err(FixupError::OutOfBounds));
}

#[test]
fn fill_patterns_are_udf_and_nop() {
    // udf #0 and nop, as llvm-mc-14 encodes them.
    assert_eq!(CODE_FILL, [0x00, 0x00, 0x00, 0x00]);
    assert_eq!(NOP, [0x1f, 0x20, 0x03, 0xd5]);
    // Neither is a form any relocation patches.
    assert_eq!(instruction::decode(u32::from_le_bytes(CODE_FILL)), None);
    assert_eq!(instruction::decode(u32::from_le_bytes(NOP)), None);
}

#[test]
fn got_kinds_need_their_entry() {
    for kind in all_kinds() {
        let equation = kind.recipe().0;
        let uses_g = matches!(
            equation,
            Equation::GotEntry | Equation::GotPcRelative | Equation::GotPageDelta | Equation::GotEntryFromGotPage
        );
        let word = CASES.iter().find(|case| case.kind == kind).map_or(0, |case| case.before);
        let v = FixupValues { g: None, ..values_for(kind, 0) };
        let result = apply_to(kind, word, &v);
        assert_eq!(result == Err(FixupError::MissingGotEntry), uses_g, "{kind}: {result:?}");
    }
}

#[test]
fn fields_outside_the_block_are_refused() {
    let mut d = [0u8; 6];
    let v = values_for(Kind::Abs64, 0);
    assert_eq!(apply_fixup(Kind::Abs64, &mut d, 0, &v), Err(FixupError::OutOfBounds));
    assert_eq!(apply_fixup(Kind::Call26, &mut d, 3, &v), Err(FixupError::OutOfBounds));
    assert_eq!(apply_fixup(Kind::Abs16, &mut d, 5, &v), Err(FixupError::OutOfBounds));
    assert_eq!(apply_fixup(Kind::AdrPrelPgHi21, &mut d, usize::MAX - 1, &v), Err(FixupError::OutOfBounds));
    assert_eq!(d, [0; 6]);
}

#[test]
fn markers_touch_nothing() {
    let mut d = [0xd6, 0x3f, 0x00, 0x20]; // blr x1
    for kind in [Kind::TlsDescCall, Kind::None] {
        let v = FixupValues { s: 0x1234, g: None, ..Default::default() };
        assert_eq!(apply_fixup(kind, &mut d, 0, &v), Ok(FixupOutcome::Nothing));
        assert_eq!(d, [0xd6, 0x3f, 0x00, 0x20]);
    }
}

#[test]
fn tls_local_exec_offsets_are_positive_past_the_tcb() {
    // Variant I: a variable 0x18 into a block aligned to 64 sits at
    // TP + align_up(16, 64) + 0x18 = TP + 0x58; `add x0, x0, :tprel_lo12:v`.
    let tp_offset = 16u64.next_multiple_of(64) + 0x18;
    let v = FixupValues { s: tp_offset, ..Default::default() };
    assert_eq!(patch(Kind::TlsLeAddTpRelLo12, 0x91000000, &v), Ok((FixupOutcome::Direct, 0x91016000))); // add x0, x0, #0x58
                                                                                                        // A negative offset (variant II's) is refused where the psABI checks.
    let negative = FixupValues { s: (-0x58i64) as u64, ..Default::default() };
    let error = FixupError::OutOfRange { value: -0x58, lo: 0, hi: 1 << 12 };
    assert_eq!(patch(Kind::TlsLeAddTpRelLo12, 0x91000000, &negative), Err(error));
}

#[test]
fn calls_before_return_addresses_are_recognized() {
    assert!(follows_call(&0x9400_0010u32.to_le_bytes())); // bl .+0x40
    assert!(follows_call(&0xd63f_0200u32.to_le_bytes())); // blr x16
    assert!(!follows_call(&0x1400_0010u32.to_le_bytes())); // b .+0x40
    assert!(!follows_call(&0xd61f_0200u32.to_le_bytes())); // br x16
    assert!(!follows_call(&[0x10, 0, 0]));
}
