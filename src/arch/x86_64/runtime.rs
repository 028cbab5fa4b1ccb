//! jitrun's runtime pieces in x86-64 machine code (see
//! [`crate::arch::runtime`]), each with its assembly in a comment.

use super::Kind;
use crate::arch::runtime::*;
use crate::arch::EdgeKind;

const PC32: EdgeKind = EdgeKind::X86_64(Kind::Pc32);
const BRANCH32: EdgeKind = EdgeKind::X86_64(Kind::Branch32);
const GOTPCREL32: EdgeKind = EdgeKind::X86_64(Kind::GotPcRel32);
const ABS64: EdgeKind = EdgeKind::X86_64(Kind::Abs64);

pub static RUNTIME: RuntimeCode = RuntimeCode {
    pieces: PIECES,
    // `sub $8,%rsp`: the stack as a call leaves it is 8 bytes off the
    // ABI's 16; the fragments fall through from one to the next.
    init_prologue: &[0x48, 0x83, 0xec, 0x08],
    // `add $8,%rsp; ret`
    init_epilogue: &[0x48, 0x83, 0xc4, 0x08, 0xc3],
    entry_unwind_info: &ENTRY_UNWIND_INFO,
    entry_unwind_pc_begins: &ENTRY_UNWIND_PC_BEGINS,
    jump_to_absolute,
};

const PIECES: &[Piece] = &[
    Piece {
        name: "atexit",
        always: false,
        // xor %esi,%esi; lea __dso_handle(%rip),%rdx; jmp __cxa_atexit
        code: &[0x31, 0xf6, 0x48, 0x8d, 0x15, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0],
        fixups: &[(5, PC32, DSO_HANDLE, -4), (10, BRANCH32, "__cxa_atexit", -4)],
    },
    Piece {
        name: "at_quick_exit",
        always: false,
        // lea __dso_handle(%rip),%rsi; jmp __cxa_at_quick_exit
        code: &[0x48, 0x8d, 0x35, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0],
        fixups: &[(3, PC32, DSO_HANDLE, -4), (8, BRANCH32, "__cxa_at_quick_exit", -4)],
    },
    Piece {
        name: "pthread_atfork",
        always: false,
        // lea __dso_handle(%rip),%rcx; jmp __register_atfork
        code: &[0x48, 0x8d, 0x0d, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0],
        fixups: &[(3, PC32, DSO_HANDLE, -4), (8, BRANCH32, "__register_atfork", -4)],
    },
    Piece {
        name: CALL_ENTRY,
        always: true,
        // push %rbp; xor %ebp,%ebp; call __jitrun_call_main; pop %rbp; ret
        // -- %rbp is zero below the program, as `_start` leaves it: a
        // frame-pointer walk (ASan's on every malloc) stops there instead
        // of following whatever jitrun's own code kept in %rbp.
        code: &[0x55, 0x31, 0xed, 0xe8, 0, 0, 0, 0, 0x5d, 0xc3],
        fixups: &[(4, BRANCH32, CALL_MAIN, -4)],
    },
    Piece {
        name: CALL_MAIN,
        always: true,
        // push %rbp; push %rbx; sub $8,%rsp; mov %r8,%rbx (`then`);
        // mov %rdi,%rax; mov %esi,%edi; mov %rdx,%rsi; mov %rcx,%rdx;
        // call *%rax; test %rbx,%rbx; je 1f; mov %eax,%edi; call *%rbx;
        // 1: add $8,%rsp; pop %rbx; pop %rbp; ret
        code: &[
            0x55, 0x53, 0x48, 0x83, 0xec, 0x08, 0x4c, 0x89, 0xc3, 0x48, 0x89, 0xf8, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48,
            0x89, 0xca, 0xff, 0xd0, 0x48, 0x85, 0xdb, 0x74, 0x04, 0x89, 0xc7, 0xff, 0xd3, 0x48, 0x83, 0xc4, 0x08, 0x5b,
            0x5d, 0xc3,
        ],
        fixups: &[],
    },
    Piece {
        name: TLSDESC_STATIC,
        always: true,
        // mov 8(%rax),%rax; ret -- a TLS descriptor's argument is the
        // variable's thread-pointer offset (static TLS, see tls.rs).
        code: &[0x48, 0x8b, 0x40, 0x08, 0xc3],
        fixups: &[],
    },
    Piece {
        name: TLV_GET_ADDR,
        always: true,
        // mov %fs:0,%rax; add 16(%rdi),%rax; ret -- %rdi is the descriptor
        // {thunk, key, offset}; offset holds the thread-pointer offset.
        code: &[0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x03, 0x47, 0x10, 0xc3],
        fixups: &[],
    },
    Piece {
        name: "__ehdr_start",
        always: false,
        // What `ld` defines as the executable's own ELF header, which code
        // reads for its program headers (clang's profiling runtime, for
        // the build ID in PT_NOTE). The image has none: a 64-byte x86-64
        // ELF header that lists no program headers (e_phnum 0).
        code: &[
            0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, // e_ident: 64-bit, little-endian
            2, 0, 62, 0, 1, 0, 0, 0, // e_type ET_EXEC, e_machine x86-64, e_version
            0, 0, 0, 0, 0, 0, 0, 0, // e_entry
            64, 0, 0, 0, 0, 0, 0, 0, // e_phoff
            0, 0, 0, 0, 0, 0, 0, 0, // e_shoff
            0, 0, 0, 0, 64, 0, 56, 0, // e_flags, e_ehsize, e_phentsize
            0, 0, 64, 0, 0, 0, 0, 0, // e_phnum 0, e_shentsize, e_shnum, e_shstrndx
        ],
        fixups: &[],
    },
    Piece {
        name: "__jitrun_NSGetEnviron",
        always: false,
        // mov environ@GOTPCREL(%rip),%rax; ret
        code: &[0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3],
        fixups: &[(3, GOTPCREL32, "environ", -4)],
    },
    Piece {
        name: "__jitrun_sincos_stret",
        always: false,
        // sub $24,%rsp; lea 8(%rsp),%rdi; mov %rsp,%rsi; call sincos;
        // movsd 8(%rsp),%xmm0; movsd (%rsp),%xmm1; add $24,%rsp; ret
        code: &[
            0x48, 0x83, 0xec, 0x18, 0x48, 0x8d, 0x7c, 0x24, 0x08, 0x48, 0x89, 0xe6, 0xe8, 0, 0, 0, 0, 0xf2, 0x0f, 0x10,
            0x44, 0x24, 0x08, 0xf2, 0x0f, 0x10, 0x0c, 0x24, 0x48, 0x83, 0xc4, 0x18, 0xc3,
        ],
        fixups: &[(13, BRANCH32, "sincos", -4)],
    },
    Piece {
        name: "__jitrun_sincosf_stret",
        always: false,
        // sub $24,%rsp; lea 12(%rsp),%rdi; lea 8(%rsp),%rsi; call sincosf;
        // movss 12(%rsp),%xmm0; movss 8(%rsp),%xmm1; unpcklps %xmm1,%xmm0;
        // add $24,%rsp; ret
        code: &[
            0x48, 0x83, 0xec, 0x18, 0x48, 0x8d, 0x7c, 0x24, 0x0c, 0x48, 0x8d, 0x74, 0x24, 0x08, 0xe8, 0, 0, 0, 0, 0xf3,
            0x0f, 0x10, 0x44, 0x24, 0x0c, 0xf3, 0x0f, 0x10, 0x4c, 0x24, 0x08, 0x0f, 0x14, 0xc1, 0x48, 0x83, 0xc4, 0x18,
            0xc3,
        ],
        fixups: &[(15, BRANCH32, "sincosf", -4)],
    },
    Piece {
        name: "__jitrun_assert_rtn",
        always: false,
        // xchg %rcx,%rdi; jmp __assert_fail
        code: &[0x48, 0x87, 0xcf, 0xe9, 0, 0, 0, 0],
        fixups: &[(4, BRANCH32, "__assert_fail", -4)],
    },
    Piece {
        name: "__stack_chk_fail_local",
        always: false,
        // jmp __stack_chk_fail
        code: &[0xe9, 0, 0, 0, 0],
        fixups: &[(1, BRANCH32, "__stack_chk_fail", -4)],
    },
    // What crt1.o, crti.o and ld define in every executable, for programs
    // that name them (the Boehm GC refers to `_DYNAMIC`, older code reads
    // `_IO_stdin_used`):
    Piece {
        name: "_IO_stdin_used",
        always: false,
        // crt1.o's marker of the libio version the program was built for.
        code: &0x20001u32.to_le_bytes(),
        fixups: &[],
    },
    Piece {
        name: "_init",
        always: false,
        // ret: the image's .init code has run before the entry, as `_init`
        // runs it natively.
        code: &[0xc3],
        fixups: &[],
    },
    Piece {
        name: "_fini",
        always: false,
        // ret: the image's .fini code runs at exit.
        code: &[0xc3],
        fixups: &[],
    },
    Piece {
        name: "_DYNAMIC",
        always: false,
        // An executable's dynamic section as the loader leaves it, as far as
        // programs read it: DT_DEBUG (21) holding the loader's `_r_debug`
        // (where debuggers and GCs find the list of loaded objects), DT_NULL.
        code: &[21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        fixups: &[(8, ABS64, "_r_debug", 0)],
    },
];

/// `.eh_frame` for [`CALL_ENTRY`] and [`CALL_MAIN`]: one CIE (augmentation
/// `zR`: FDE addresses PC-relative 4-byte; at entry the CFA is `%rsp + 8`
/// and the return address at CFA - 8), then an FDE for each, whose
/// `pc_begin` (at [`ENTRY_UNWIND_PC_BEGINS`]) the fixups fill in. Call
/// frame instructions: `0x40 + N` advances N bytes, `0x0e N` sets the CFA
/// offset, `0x86 2` saves `%rbp` at CFA-16, `0x83 3` `%rbx` at CFA-24,
/// `0x07 16` leaves the return address undefined (the outermost frame).
const ENTRY_UNWIND_INFO: [u8; 104] = [
    // CIE: length, id, version, "zR", code alignment 1, data alignment -8,
    // return address column 16, augmentation data (1 byte: 0x1b),
    // DW_CFA_def_cfa %rsp+8, DW_CFA_offset %rip at CFA-8, padding.
    0x14, 0, 0, 0, 0, 0, 0, 0, 1, b'z', b'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0,
    // FDE of __jitrun_call_entry (10 bytes: push %rbp at 0, pop %rbp at 8):
    // length, CIE pointer, pc_begin, pc_range, no augmentation data.
    0x1c, 0, 0, 0, 0x1c, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x07, 16, 0x41, 0x0e, 16, 0x48, 0x0e, 8, 0, 0, 0, 0, 0, 0,
    0, // FDE of __jitrun_call_main (38 bytes: push %rbp at 0, push %rbx
    // at 1, sub at 2, add at 31, pop %rbx at 35, pop %rbp at 36).
    0x2c, 0, 0, 0, 0x3c, 0, 0, 0, 0, 0, 0, 0, 38, 0, 0, 0, 0, 0x41, 0x0e, 16, 0x86, 2, 0x41, 0x0e, 24, 0x83, 3, 0x44,
    0x0e, 32, 0x5d, 0x0e, 24, 0x41, 0x0e, 16, 0x41, 0x0e, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// Where [`ENTRY_UNWIND_INFO`]'s FDEs hold their `pc_begin`, and for what.
const ENTRY_UNWIND_PC_BEGINS: [(u32, &str); 2] = [(32, CALL_ENTRY), (64, CALL_MAIN)];

/// `movabs $address, %r11; jmp *%r11`: a jump to one of jitrun's own
/// functions from anywhere in the address space (%r11 is the scratch
/// register calls may clobber, as PLT stubs use it).
fn jump_to_absolute(address: u64) -> Vec<u8> {
    let mut code = vec![0x49, 0xbb];
    code.extend_from_slice(&address.to_le_bytes());
    code.extend_from_slice(&[0x41, 0xff, 0xe3]);
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_frames_unwind_info_is_well_formed() {
        // Record by record: each length covers its bytes up to the next.
        let mut at = 0;
        let mut records = Vec::new();
        while at < ENTRY_UNWIND_INFO.len() {
            let length = u32::from_le_bytes(ENTRY_UNWIND_INFO[at..at + 4].try_into().unwrap()) as usize;
            records.push((at, length));
            at += 4 + length;
        }
        assert_eq!(at, ENTRY_UNWIND_INFO.len());
        assert_eq!(records.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 24, 56]);
        for (start, _) in &records[1..] {
            // The CIE pointer leads back to offset 0; pc_begin is fixed up.
            let pointer = u32::from_le_bytes(ENTRY_UNWIND_INFO[start + 4..start + 8].try_into().unwrap()) as usize;
            assert_eq!(start + 4 - pointer, 0);
            assert!(ENTRY_UNWIND_PC_BEGINS.iter().any(|&(offset, _)| offset as usize == start + 8));
        }
        // The instructions end before the padding: each FDE's last one is
        // `DW_CFA_def_cfa_offset 8`, whole, at the function's `ret` (its
        // last byte), and the range is the function's code.
        for ((start, length), (_, function)) in records[1..].iter().zip(ENTRY_UNWIND_PC_BEGINS) {
            let code = PIECES.iter().find(|piece| piece.name == function).unwrap().code;
            let range = u32::from_le_bytes(ENTRY_UNWIND_INFO[start + 12..start + 16].try_into().unwrap());
            assert_eq!(range as usize, code.len(), "{function}");
            assert_eq!(code.last(), Some(&0xc3), "{function}");
            let body = &ENTRY_UNWIND_INFO[start + 17..start + 4 + length];
            let end = body.iter().rposition(|&b| b != 0).unwrap();
            assert_eq!(&body[end - 1..=end], &[0x0e, 8]);
            // DW_CFA_advance_loc deltas (0x40 + N) add up to the `ret`.
            let advanced: usize = body.iter().filter(|&&b| b & 0xc0 == 0x40).map(|&b| (b & 0x3f) as usize).sum();
            assert_eq!(advanced, code.len() - 1, "{function}");
        }
    }
}
