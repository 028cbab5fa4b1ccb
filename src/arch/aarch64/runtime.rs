//! The aarch64 machine code of jitrun's runtime pieces: what an executable
//! gets from `crt*.o` and `libc_nonshared.a` that `dlsym` cannot find, and
//! the Darwin shims of Mach-O objects. jitrun's `src/runtime.rs` builds them
//! into a small synthetic object per image (see its table of what each
//! does); this is the data it takes them from, in the same shape as its
//! x86-64 `PIECES`, with the unwind info of the two entry frames.
//!
//! Every piece's code is in `testdata/arch/aarch64/runtime.s`; the tests compare the
//! words and fixups here with what `llvm-mc-14` and `llvm-objdump-14` make
//! of it (`testdata/arch/aarch64/runtime.lst`).

use super::Kind;
use crate::arch::runtime::*;
use crate::arch::EdgeKind;

/// The little-endian bytes of instruction words, as a `&'static [u8]`.
macro_rules! instructions {
    ($($word:expr),* $(,)?) => {{
        const WORDS: &[u32] = &[$($word),*];
        const BYTES: [u8; WORDS.len() * 4] = little_endian(WORDS);
        &BYTES
    }};
}

const fn little_endian<const N: usize>(words: &[u32]) -> [u8; N] {
    let mut bytes = [0; N];
    let mut i = 0;
    while i < N {
        bytes[i] = (words[i / 4] >> (8 * (i % 4))) as u8;
        i += 1;
    }
    bytes
}

pub static RUNTIME: RuntimeCode = RuntimeCode {
    pieces: PIECES,
    init_prologue: INIT_PROLOGUE,
    init_epilogue: INIT_EPILOGUE,
    entry_unwind_info: &ENTRY_UNWIND_INFO,
    entry_unwind_pc_begins: &ENTRY_UNWIND_PC_BEGINS,
    jump_to_absolute,
};

/// `ldr x16, #8; br x16; .quad address`: a jump to one of jitrun's own
/// functions from anywhere (x16 is the register veneers may clobber).
fn jump_to_absolute(address: u64) -> Vec<u8> {
    let mut code = vec![0; super::JUMP_TO_ABSOLUTE_SIZE];
    super::write_jump_to_absolute(&mut code, address).expect("the buffer holds the jump");
    code
}

/// What the runtime names the bridge of a Darwin arm64 variadic call to
/// the C library function `NAME`: `__jitrun_darwin_NAME`.
pub const DARWIN_BRIDGE_PREFIX: &str = "__jitrun_darwin_";

/// The bridge piece for calls from Darwin arm64 code to the C library's
/// variadic function `name`, if it has one.
pub fn darwin_variadic_bridge(name: &str) -> Option<&'static str> {
    PIECES.iter().map(|p| p.name).find(|p| p.strip_prefix(DARWIN_BRIDGE_PREFIX) == Some(name))
}

/// `f(named..., ...)` → `vf(named..., va_list)`: builds an AAPCS64
/// `va_list` {`__stack`, `__gr_top`, `__vr_top`, `__gr_offs`, `__vr_offs`}
/// on its own stack with `__stack` at the caller's stack arguments and both
/// offsets 0 (no register arguments left), so `va_arg` reads every
/// argument from its 8-byte stack slot: Darwin's layout. The word at
/// index 7 passes the list's address in the register after the named
/// arguments (`mov xN, sp`); [`va_list_bridge`] sets it.
const VA_LIST_BRIDGE_1: [u32; 12] = [
    0xd100c3ff, // sub  sp, sp, #48
    0xa9027bfd, // stp  x29, x30, [sp, #32]
    0x910083fd, // add  x29, sp, #32
    0x9100c3e9, // add  x9, sp, #48       (the caller's stack arguments)
    0xf90003e9, // str  x9, [sp]          (__stack)
    0xa900ffff, // stp  xzr, xzr, [sp, #8] (__gr_top, __vr_top: unused)
    0xf9000fff, // str  xzr, [sp, #24]    (__gr_offs = __vr_offs = 0)
    0x910003e1, // mov  x1, sp            (the va_list, after 1 named argument)
    0x94000000, // bl   vf
    0xa9427bfd, // ldp  x29, x30, [sp, #32]
    0x9100c3ff, // add  sp, sp, #48
    0xd65f03c0, // ret
];

/// [`VA_LIST_BRIDGE_1`] for `named` named arguments (1 to 5).
const fn va_list_bridge(named: u32) -> [u8; 48] {
    let mut words = VA_LIST_BRIDGE_1;
    words[7] = 0x910003e0 | named;
    little_endian(&words)
}

const VA_LIST_BRIDGES: [[u8; 48]; 5] =
    [va_list_bridge(1), va_list_bridge(2), va_list_bridge(3), va_list_bridge(4), va_list_bridge(5)];

macro_rules! va_list_bridge {
    ($name:literal => $v:literal, $named:literal) => {
        Piece {
            name: concat!("__jitrun_darwin_", $name),
            always: false,
            code: &VA_LIST_BRIDGES[$named - 1],
            fixups: &[(32, EdgeKind::Aarch64(Kind::Call26), $v, 0)],
        }
    };
}

/// `ldr x2, [sp]; b f`: the first stack slot into x2.
const LOAD_X2: &[u8] = instructions![0xf94003e2, 0x14000000];
/// `ldr x3, [sp]; b f`.
const LOAD_X3: &[u8] = instructions![0xf94003e3, 0x14000000];
/// `ldp x1, x2, [sp]; ldp x3, x4, [sp, #16]; ldp x5, x6, [sp, #32]; b f`.
const LOAD_X1_TO_X6: &[u8] = instructions![0xa9400be1, 0xa94113e3, 0xa9421be5, 0x14000000];

macro_rules! load_bridge {
    ($name:literal => $target:literal, $code:ident) => {
        Piece {
            name: concat!("__jitrun_darwin_", $name),
            always: false,
            code: $code,
            fixups: &[($code.len() as u32 - 4, EdgeKind::Aarch64(Kind::Jump26), $target, 0)],
        }
    };
}

const EXECL_BRIDGE: &[u8] = instructions![
    0xd10083ff, // sub  sp, sp, #32
    0xa9007bfd, // stp  x29, x30, [sp]
    0x910003fd, // mov  x29, sp
    0xf9000fe1, // str  x1, [sp, #24]     (argv[0], right below the stack arguments)
    0x910063e1, // add  x1, sp, #24       (argv)
    0x94000000, // bl   execv / execvp
    0xa9407bfd, // ldp  x29, x30, [sp]
    0x910083ff, // add  sp, sp, #32
    0xd65f03c0, // ret
];

const EXECLE_BRIDGE: &[u8] = instructions![
    0xd10083ff, // sub  sp, sp, #32
    0xa9007bfd, // stp  x29, x30, [sp]
    0x910003fd, // mov  x29, sp
    0xf9000fe1, // str  x1, [sp, #24]
    0x910063e9, // add  x9, sp, #24
    0xf840852a, // 1: ldr x10, [x9], #8
    0xb5ffffea, // cbnz x10, 1b
    0xf9400122, // ldr  x2, [x9]          (envp: the slot after the NULL)
    0x910063e1, // add  x1, sp, #24
    0x94000000, // bl   execve
    0xa9407bfd, // ldp  x29, x30, [sp]
    0x910083ff, // add  sp, sp, #32
    0xd65f03c0, // ret
];

pub const PIECES: &[Piece] = &[
    Piece {
        name: "atexit",
        always: false,
        // __cxa_atexit(f, NULL, &__dso_handle)
        code: instructions![
            0xaa1f03e1, // mov  x1, xzr
            0x90000002, // adrp x2, __dso_handle
            0x91000042, // add  x2, x2, :lo12:__dso_handle
            0x14000000, // b    __cxa_atexit
        ],
        fixups: &[
            (4, EdgeKind::Aarch64(Kind::AdrPrelPgHi21), DSO_HANDLE, 0),
            (8, EdgeKind::Aarch64(Kind::AddAbsLo12Nc), DSO_HANDLE, 0),
            (12, EdgeKind::Aarch64(Kind::Jump26), "__cxa_atexit", 0),
        ],
    },
    Piece {
        name: "at_quick_exit",
        always: false,
        // __cxa_at_quick_exit(f, &__dso_handle)
        code: instructions![
            0x90000001, // adrp x1, __dso_handle
            0x91000021, // add  x1, x1, :lo12:__dso_handle
            0x14000000, // b    __cxa_at_quick_exit
        ],
        fixups: &[
            (0, EdgeKind::Aarch64(Kind::AdrPrelPgHi21), DSO_HANDLE, 0),
            (4, EdgeKind::Aarch64(Kind::AddAbsLo12Nc), DSO_HANDLE, 0),
            (8, EdgeKind::Aarch64(Kind::Jump26), "__cxa_at_quick_exit", 0),
        ],
    },
    Piece {
        name: "pthread_atfork",
        always: false,
        // __register_atfork(prepare, parent, child, &__dso_handle)
        code: instructions![
            0x90000003, // adrp x3, __dso_handle
            0x91000063, // add  x3, x3, :lo12:__dso_handle
            0x14000000, // b    __register_atfork
        ],
        fixups: &[
            (0, EdgeKind::Aarch64(Kind::AdrPrelPgHi21), DSO_HANDLE, 0),
            (4, EdgeKind::Aarch64(Kind::AddAbsLo12Nc), DSO_HANDLE, 0),
            (8, EdgeKind::Aarch64(Kind::Jump26), "__register_atfork", 0),
        ],
    },
    Piece {
        name: CALL_ENTRY,
        always: true,
        // __jitrun_call_entry(f, argc, argv, envp, then): calls
        // __jitrun_call_main with the same arguments from a frame record
        // of its own whose saved x29 is zero, as `_start` leaves it: a
        // frame-pointer walk from main sees two frames below it, as under
        // glibc's start-up code, and stops there instead of following
        // whatever jitrun's own code kept in x29 (saved apart, restored on
        // return). Its unwind info leaves the return address undefined,
        // which ends the stack for an unwinder.
        code: instructions![
            0xa9be7bfd, // stp  x29, x30, [sp, #-32]!
            0xa9017bff, // stp  xzr, x30, [sp, #16]
            0x910043fd, // add  x29, sp, #16
            0x94000000, // bl   __jitrun_call_main
            0xa8c27bfd, // ldp  x29, x30, [sp], #32
            0xd65f03c0, // ret
        ],
        fixups: &[(12, EdgeKind::Aarch64(Kind::Call26), CALL_MAIN, 0)],
    },
    Piece {
        name: CALL_MAIN,
        always: true,
        // status = f(argc, argv, envp); if (then) then(status); return
        // status -- `then` is called from this same frame, and the status
        // is already its argument in w0.
        code: instructions![
            0xa9be7bfd, // stp  x29, x30, [sp, #-32]!
            0x910003fd, // mov  x29, sp
            0xf9000bf3, // str  x19, [sp, #16]
            0xaa0403f3, // mov  x19, x4          (then)
            0xaa0003e5, // mov  x5, x0           (f)
            0x2a0103e0, // mov  w0, w1           (argc)
            0xaa0203e1, // mov  x1, x2           (argv)
            0xaa0303e2, // mov  x2, x3           (envp)
            0xd63f00a0, // blr  x5
            0xb4000053, // cbz  x19, 1f
            0xd63f0260, // blr  x19
            0xf9400bf3, // 1: ldr x19, [sp, #16]
            0xa8c27bfd, // ldp  x29, x30, [sp], #32
            0xd65f03c0, // ret
        ],
        fixups: &[],
    },
    Piece {
        name: TLSDESC_STATIC,
        always: true,
        // A TLS descriptor function gets x0 = &descriptor {resolver,
        // argument}, returns in x0 the variable's offset from tpidr_el0 and
        // must keep every other register (the caller only gives up x0 and
        // x30). The argument is that offset (static TLS, see tls.rs).
        code: instructions![
            0xf9400400, // ldr  x0, [x0, #8]
            0xd65f03c0, // ret
        ],
        fixups: &[],
    },
    Piece {
        name: TLV_GET_ADDR,
        always: true,
        // Darwin's thread-local descriptor thunk: x0 = &descriptor {thunk,
        // key, offset}, returns the variable's address in x0. The offset
        // holds the thread-pointer offset. Darwin's own `tlv_get_addr` may
        // clobber x16 and x17 besides x0 (callers assume it: LLVM's
        // CSR_AArch64_TLS_Darwin), so x16 serves as the scratch register.
        code: instructions![
            0xd53bd050, // mrs  x16, tpidr_el0
            0xf9400800, // ldr  x0, [x0, #16]
            0x8b000200, // add  x0, x16, x0
            0xd65f03c0, // ret
        ],
        fixups: &[],
    },
    Piece {
        name: "__ehdr_start",
        always: false,
        // What `ld` defines as the executable's own ELF header, which code
        // reads for its program headers. The image has none: a 64-byte
        // AArch64 ELF header that lists no program headers (e_phnum 0).
        code: &[
            0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, // e_ident: 64-bit, little-endian
            2, 0, 183, 0, 1, 0, 0, 0, // e_type ET_EXEC, e_machine EM_AARCH64, e_version
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
        // return &environ;
        code: instructions![
            0x90000000, // adrp x0, :got:environ
            0xf9400000, // ldr  x0, [x0, :got_lo12:environ]
            0xd65f03c0, // ret
        ],
        fixups: &[
            (0, EdgeKind::Aarch64(Kind::AdrGotPage), "environ", 0),
            (4, EdgeKind::Aarch64(Kind::Ld64GotLo12Nc), "environ", 0),
        ],
    },
    // clang lowers sin(x) and cos(x) of one x to `__sincos_stret` on
    // Darwin arm64 too (AArch64 LowerFSINCOS), which returns the pair as a
    // homogeneous aggregate: sin in d0/s0, cos in d1/s1 (unlike x86-64,
    // where the float pair comes packed in %xmm0).
    Piece {
        name: "__jitrun_sincos_stret",
        always: false,
        // sincos(x, &sin, &cos), then return {sin, cos} in d0, d1
        code: instructions![
            0xa9be7bfd, // stp  x29, x30, [sp, #-32]!
            0x910003fd, // mov  x29, sp
            0x910043e0, // add  x0, sp, #16
            0x910063e1, // add  x1, sp, #24
            0x94000000, // bl   sincos
            0x6d4107e0, // ldp  d0, d1, [sp, #16]
            0xa8c27bfd, // ldp  x29, x30, [sp], #32
            0xd65f03c0, // ret
        ],
        fixups: &[(16, EdgeKind::Aarch64(Kind::Call26), "sincos", 0)],
    },
    Piece {
        name: "__jitrun_sincosf_stret",
        always: false,
        // sincosf(x, &sin, &cos), then return {sin, cos} in s0, s1
        code: instructions![
            0xa9be7bfd, // stp  x29, x30, [sp, #-32]!
            0x910003fd, // mov  x29, sp
            0x910043e0, // add  x0, sp, #16
            0x910053e1, // add  x1, sp, #20
            0x94000000, // bl   sincosf
            0x2d4207e0, // ldp  s0, s1, [sp, #16]
            0xa8c27bfd, // ldp  x29, x30, [sp], #32
            0xd65f03c0, // ret
        ],
        fixups: &[(16, EdgeKind::Aarch64(Kind::Call26), "sincosf", 0)],
    },
    Piece {
        name: "__jitrun_assert_rtn",
        always: false,
        // Darwin __assert_rtn(func, file, line, expr) to glibc
        // __assert_fail(expr, file, line, func): swap x0 and x3.
        code: instructions![
            0xaa0003e4, // mov  x4, x0
            0xaa0303e0, // mov  x0, x3
            0xaa0403e3, // mov  x3, x4
            0x14000000, // b    __assert_fail
        ],
        fixups: &[(12, EdgeKind::Aarch64(Kind::Jump26), "__assert_fail", 0)],
    },
    Piece {
        name: "__stack_chk_fail_local",
        always: false,
        code: instructions![
            0x14000000, // b    __stack_chk_fail
        ],
        fixups: &[(0, EdgeKind::Aarch64(Kind::Jump26), "__stack_chk_fail", 0)],
    },
    // What crt1.o, crti.o and ld define in every executable, for programs
    // that name them:
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
        // The image's .init code has run before the entry, as `_init` runs it natively.
        code: instructions![
            0xd65f03c0, // ret
        ],
        fixups: &[],
    },
    Piece {
        name: "_fini",
        always: false,
        // The image's .fini code runs at exit.
        code: instructions![
            0xd65f03c0, // ret
        ],
        fixups: &[],
    },
    Piece {
        name: "_DYNAMIC",
        always: false,
        // DT_DEBUG (21) holding the loader's `_r_debug`, then DT_NULL.
        code: &[21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        fixups: &[(8, EdgeKind::Aarch64(Kind::Abs64), "_r_debug", 0)],
    },
    // Darwin arm64 passes every variadic argument on the stack, in 8-byte
    // slots; glibc's variadic functions (AAPCS64) read them from registers
    // first. A Mach-O arm64 object's calls to the C library's variadic
    // functions go to these bridges instead (`graph::format::macho::arm64`
    // renames them): see [`DARWIN_BRIDGE_PREFIX`].
    va_list_bridge!("printf" => "vprintf", 1),
    va_list_bridge!("fprintf" => "vfprintf", 2),
    va_list_bridge!("sprintf" => "vsprintf", 2),
    va_list_bridge!("snprintf" => "vsnprintf", 3),
    va_list_bridge!("dprintf" => "vdprintf", 2),
    va_list_bridge!("asprintf" => "vasprintf", 2),
    va_list_bridge!("scanf" => "vscanf", 1),
    va_list_bridge!("fscanf" => "vfscanf", 2),
    va_list_bridge!("sscanf" => "vsscanf", 2),
    va_list_bridge!("__isoc99_scanf" => "__isoc99_vscanf", 1),
    va_list_bridge!("__isoc99_fscanf" => "__isoc99_vfscanf", 2),
    va_list_bridge!("__isoc99_sscanf" => "__isoc99_vsscanf", 2),
    va_list_bridge!("wprintf" => "vwprintf", 1),
    va_list_bridge!("fwprintf" => "vfwprintf", 2),
    va_list_bridge!("swprintf" => "vswprintf", 3),
    va_list_bridge!("wscanf" => "vwscanf", 1),
    va_list_bridge!("fwscanf" => "vfwscanf", 2),
    va_list_bridge!("swscanf" => "vswscanf", 2),
    va_list_bridge!("__isoc99_wscanf" => "__isoc99_vwscanf", 1),
    va_list_bridge!("__isoc99_fwscanf" => "__isoc99_vfwscanf", 2),
    va_list_bridge!("__isoc99_swscanf" => "__isoc99_vswscanf", 2),
    va_list_bridge!("syslog" => "vsyslog", 2),
    va_list_bridge!("err" => "verr", 2),
    va_list_bridge!("errx" => "verrx", 2),
    va_list_bridge!("warn" => "vwarn", 1),
    va_list_bridge!("warnx" => "vwarnx", 1),
    va_list_bridge!("__printf_chk" => "__vprintf_chk", 2),
    va_list_bridge!("__fprintf_chk" => "__vfprintf_chk", 3),
    va_list_bridge!("__sprintf_chk" => "__vsprintf_chk", 4),
    va_list_bridge!("__snprintf_chk" => "__vsnprintf_chk", 5),
    va_list_bridge!("__dprintf_chk" => "__vdprintf_chk", 3),
    va_list_bridge!("__asprintf_chk" => "__vasprintf_chk", 3),
    va_list_bridge!("__syslog_chk" => "__vsyslog_chk", 3),
    va_list_bridge!("__wprintf_chk" => "__vwprintf_chk", 2),
    va_list_bridge!("__fwprintf_chk" => "__vfwprintf_chk", 3),
    va_list_bridge!("__swprintf_chk" => "__vswprintf_chk", 5),
    // One optional argument after the named ones, loaded from its stack
    // slot into the register AAPCS64 reads it from (a slot the caller did
    // not fill is read but not used: the stack above is always mapped).
    load_bridge!("open" => "open", LOAD_X2),
    load_bridge!("open64" => "open64", LOAD_X2),
    load_bridge!("fcntl" => "fcntl", LOAD_X2),
    load_bridge!("fcntl64" => "fcntl64", LOAD_X2),
    load_bridge!("ioctl" => "ioctl", LOAD_X2),
    load_bridge!("openat" => "openat", LOAD_X3),
    load_bridge!("openat64" => "openat64", LOAD_X3),
    // syscall(number, ...): six argument slots into x1..x6.
    load_bridge!("syscall" => "syscall", LOAD_X1_TO_X6),
    // execl(path, arg0, ..., NULL): argv is arg0 stored right below the
    // stack arguments, which follow it to the NULL; execle's envp is the
    // slot after the NULL.
    Piece {
        name: "__jitrun_darwin_execl",
        always: false,
        code: EXECL_BRIDGE,
        fixups: &[(20, EdgeKind::Aarch64(Kind::Call26), "execv", 0)],
    },
    Piece {
        name: "__jitrun_darwin_execlp",
        always: false,
        code: EXECL_BRIDGE,
        fixups: &[(20, EdgeKind::Aarch64(Kind::Call26), "execvp", 0)],
    },
    Piece {
        name: "__jitrun_darwin_execle",
        always: false,
        code: EXECLE_BRIDGE,
        fixups: &[(36, EdgeKind::Aarch64(Kind::Call26), "execve", 0)],
    },
];

/// What `_init` and `_fini` run before the objects' `.init`/`.fini`
/// fragments, as crti.o has it: the fragments call functions, so the
/// return address must be saved. The fragments are padded with
/// [`super::NOP`], which execution runs through.
pub const INIT_PROLOGUE: &[u8] = instructions![
    0xa9bf7bfd, // stp  x29, x30, [sp, #-16]!
    0x910003fd, // mov  x29, sp
];

/// What follows the fragments, as crtn.o has it.
pub const INIT_EPILOGUE: &[u8] = instructions![
    0xa8c17bfd, // ldp  x29, x30, [sp], #16
    0xd65f03c0, // ret
];

/// `.eh_frame` for [`CALL_ENTRY`] and [`CALL_MAIN`]: one CIE (augmentation
/// `zR`: FDE addresses PC-relative 4-byte; code alignment 4, data alignment
/// -8, return address in x30; at entry the CFA is `sp + 0`), then an FDE
/// for each, whose `pc_begin` (at [`ENTRY_UNWIND_PC_BEGINS`]) the fixups
/// fill in. Call frame instructions: `0x40 + N` advances N instructions,
/// `0x0e N` sets the CFA offset, `0x80 + R, N` saves register R at CFA - 8N,
/// `0xc0 + R` restores it, `0x07 30` leaves the return address undefined
/// (the outermost frame, as `_start`'s), `0x00` pads.
pub const ENTRY_UNWIND_INFO: [u8; 96] = [
    // CIE: length, id, version, "zR", code alignment 4, data alignment -8,
    // return address column 30, augmentation data (1 byte: 0x1b),
    // DW_CFA_def_cfa sp+0, padding.
    0x14, 0, 0, 0, 0, 0, 0, 0, 1, b'z', b'R', 0, 4, 0x78, 30, 1, 0x1b, 0x0c, 31, 0, 0, 0, 0, 0,
    // FDE of __jitrun_call_entry (6 instructions: stp at 0, ldp at 16):
    // length, CIE pointer, pc_begin, pc_range, no augmentation data;
    // x30 undefined; after the first stp: CFA sp+32, x29 at CFA-32; after
    // ldp: CFA sp+0, x29 restored; padding.
    0x1c, 0, 0, 0, 0x1c, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0x07, 30, 0x41, 0x0e, 32, 0x9d, 4, 0x44, 0x0e, 0, 0xdd, 0,
    0, 0, 0,
    // FDE of __jitrun_call_main (14 instructions: stp at 0, str x19 at 8,
    // ldr x19 at 44, ldp at 48): after stp: CFA sp+32, x29 at CFA-32, x30
    // at CFA-24; after str: x19 at CFA-16; after ldr: x19 restored; after
    // ldp: CFA sp+0, x29 and x30 restored; padding.
    0x24, 0, 0, 0, 0x3c, 0, 0, 0, 0, 0, 0, 0, 56, 0, 0, 0, 0, 0x41, 0x0e, 32, 0x9d, 4, 0x9e, 3, 0x42, 0x93, 2, 0x49,
    0xd3, 0x41, 0x0e, 0, 0xdd, 0xde, 0, 0, 0, 0, 0, 0,
];

/// Where [`ENTRY_UNWIND_INFO`]'s FDEs hold their `pc_begin`, and for what;
/// each gets an [`Kind::Prel32`] fixup to the function.
pub const ENTRY_UNWIND_PC_BEGINS: [(u32, &str); 2] = [(32, CALL_ENTRY), (64, CALL_MAIN)];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::aarch64::decode_operand;
    use crate::arch::FixupValues;

    /// `llvm-objdump-14 -dr` of `testdata/arch/aarch64/runtime.s`.
    const LISTING: &str = include_str!("../../../testdata/arch/aarch64/runtime.lst");

    /// A listed function: its bytes, and its relocations as (offset, name, symbol).
    struct Listed {
        bytes: Vec<u8>,
        relocations: Vec<(u32, String, String)>,
    }

    fn listed(label: &str) -> Listed {
        let header = format!("<{label}>:");
        let mut lines = LISTING.lines().skip_while(|line| !line.ends_with(&header)).skip(1);
        let mut listed = Listed { bytes: Vec::new(), relocations: Vec::new() };
        for line in lines.by_ref().take_while(|line| !line.ends_with(">:")) {
            let (address, rest) = line.trim().split_once(':').unwrap();
            let address = u32::from_str_radix(address, 16).unwrap();
            let mut words = rest.split_whitespace();
            let first = words.next().unwrap();
            if first.starts_with("R_AARCH64_") {
                listed.relocations.push((address, first.to_string(), words.next().unwrap().to_string()));
            } else {
                let bytes = std::iter::once(first).chain(words.by_ref().take(3));
                listed.bytes.extend(bytes.map(|b| u8::from_str_radix(b, 16).unwrap()));
            }
        }
        assert!(!listed.bytes.is_empty(), "{label} is not in the listing");
        listed
    }

    fn piece(name: &str) -> &'static Piece {
        PIECES.iter().find(|piece| piece.name == name).unwrap()
    }

    #[test]
    fn code_and_fixups_are_what_the_assembler_makes_of_the_source() {
        let code_pieces = PIECES.iter().filter(|p| !matches!(p.name, "__ehdr_start" | "_IO_stdin_used" | "_DYNAMIC"));
        let mut checked = 0;
        for piece in code_pieces {
            // `_fini` is `_init`'s twin; the Darwin bridges share templates
            // and differ in the function they go to.
            let template = bridge_template(piece);
            let label = match template {
                Some(label) => label,
                None if piece.name == "_fini" => "_init",
                None => piece.name,
            };
            let listed = listed(label);
            assert_eq!(piece.code, listed.bytes.as_slice(), "{}", piece.name);
            let fixups: Vec<_> = piece
                .fixups
                .iter()
                .map(|&(offset, kind, target, addend)| {
                    assert_eq!(addend, 0);
                    (offset, kind.name().to_string(), target.to_string())
                })
                .collect();
            let mut expected = listed.relocations.clone();
            if template.is_some() {
                for (relocation, fixup) in expected.iter_mut().zip(&fixups) {
                    relocation.2.clone_from(&fixup.2);
                }
            }
            assert_eq!(fixups, expected, "{}", piece.name);
            checked += 1;
        }
        assert_eq!(checked, PIECES.len() - 3);
        assert_eq!(INIT_PROLOGUE, listed("init_prologue").bytes);
        assert_eq!(INIT_EPILOGUE, listed("init_epilogue").bytes);
    }

    /// The label of the template a Darwin bridge's code is, in the listing.
    fn bridge_template(piece: &Piece) -> Option<&'static str> {
        piece.name.strip_prefix(DARWIN_BRIDGE_PREFIX)?;
        let templates: [(&'static str, &[u8]); 10] = [
            ("__jitrun_darwin_va_list_1", &VA_LIST_BRIDGES[0]),
            ("__jitrun_darwin_va_list_2", &VA_LIST_BRIDGES[1]),
            ("__jitrun_darwin_va_list_3", &VA_LIST_BRIDGES[2]),
            ("__jitrun_darwin_va_list_4", &VA_LIST_BRIDGES[3]),
            ("__jitrun_darwin_va_list_5", &VA_LIST_BRIDGES[4]),
            ("__jitrun_darwin_load_x2", LOAD_X2),
            ("__jitrun_darwin_load_x3", LOAD_X3),
            ("__jitrun_darwin_load_x1_to_x6", LOAD_X1_TO_X6),
            ("__jitrun_darwin_execl", EXECL_BRIDGE),
            ("__jitrun_darwin_execle", EXECLE_BRIDGE),
        ];
        let found = templates.iter().find(|(_, code)| *code == piece.code).map(|(label, _)| *label);
        Some(found.unwrap_or_else(|| panic!("{}: no template has its code", piece.name)))
    }

    #[test]
    fn darwin_bridges_are_found_by_the_c_name() {
        assert_eq!(darwin_variadic_bridge("printf"), Some("__jitrun_darwin_printf"));
        assert_eq!(darwin_variadic_bridge("__isoc99_sscanf"), Some("__jitrun_darwin___isoc99_sscanf"));
        assert_eq!(darwin_variadic_bridge("execle"), Some("__jitrun_darwin_execle"));
        assert_eq!(darwin_variadic_bridge("puts"), None);
        // printf's va_list goes in x1, snprintf's (3 named) in x3.
        let word = |name: &str, index: usize| {
            let code = piece(name).code;
            u32::from_le_bytes(code[4 * index..4 * index + 4].try_into().unwrap())
        };
        assert_eq!(word("__jitrun_darwin_printf", 7), 0x910003e1);
        assert_eq!(word("__jitrun_darwin_snprintf", 7), 0x910003e3);
    }

    #[test]
    fn every_fixup_lands_on_an_instruction_its_kind_patches() {
        for piece in PIECES {
            for &(offset, kind, target, addend) in piece.fixups {
                let mut code = piece.code.to_vec();
                let p = 0x40_0000 + u64::from(offset);
                let v = FixupValues { p, s: 0x41_2348, a: addend, g: Some(0x42_0010), ..Default::default() };
                let applied = kind.apply(&mut code, offset as usize, &v);
                assert!(applied.is_ok(), "{} + {offset}: {kind} to {target}: {applied:?}", piece.name);
            }
        }
    }

    #[test]
    fn call_main_skips_a_null_then() {
        let code = piece(CALL_MAIN).code;
        let word = |index: usize| u32::from_le_bytes(code[4 * index..4 * index + 4].try_into().unwrap());
        // cbz x19 at instruction 9 jumps 2 instructions, over `blr x19`, to the x19 reload.
        assert_eq!(decode_operand(word(9), 1), Some(2));
        assert_eq!(word(10), 0xd63f0260);
        assert_eq!(word(11), 0xf9400bf3);
    }

    #[test]
    fn the_elf_header_says_aarch64() {
        let header = piece("__ehdr_start").code;
        assert_eq!(header.len(), 64);
        assert_eq!(u16::from_le_bytes([header[18], header[19]]), object::elf::EM_AARCH64);
        assert_eq!(header[4], object::elf::ELFCLASS64);
        assert_eq!(header[5], object::elf::ELFDATA2LSB);
    }

    /// The records of `.eh_frame`: (start, length after the length field).
    fn records() -> Vec<(usize, usize)> {
        let mut at = 0;
        let mut records = Vec::new();
        while at < ENTRY_UNWIND_INFO.len() {
            let length = u32::from_le_bytes(ENTRY_UNWIND_INFO[at..at + 4].try_into().unwrap()) as usize;
            records.push((at, length));
            at += 4 + length;
        }
        assert_eq!(at, ENTRY_UNWIND_INFO.len());
        records
    }

    #[test]
    fn the_entry_frames_unwind_info_is_well_formed() {
        let records = records();
        assert_eq!(records.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 24, 56]);
        // Each record keeps the next 8-aligned, as assemblers pad them.
        assert!(records.iter().all(|&(_, length)| (4 + length) % 8 == 0));
        // CIE: code alignment 4, data alignment -8, return address x30,
        // then DW_CFA_def_cfa sp, 0.
        assert_eq!(&ENTRY_UNWIND_INFO[8..20], &[1, b'z', b'R', 0, 4, 0x78, 30, 1, 0x1b, 0x0c, 31, 0]);
        for ((start, length), (pc_begin, function)) in records[1..].iter().zip(ENTRY_UNWIND_PC_BEGINS) {
            // The CIE pointer leads back to offset 0; pc_begin is fixed up.
            let pointer = u32::from_le_bytes(ENTRY_UNWIND_INFO[start + 4..start + 8].try_into().unwrap()) as usize;
            assert_eq!(start + 4 - pointer, 0);
            assert_eq!(pc_begin as usize, start + 8);
            // The range is the function's code, which ends in `ret`.
            let code = piece(function).code;
            let range = u32::from_le_bytes(ENTRY_UNWIND_INFO[start + 12..start + 16].try_into().unwrap());
            assert_eq!(range as usize, code.len(), "{function}");
            assert_eq!(code[code.len() - 4..], 0xd65f03c0u32.to_le_bytes(), "{function}");
            // The instructions end before the padding with the CFA back at
            // sp + 0 and the saved registers restored, at the `ret`: the
            // DW_CFA_advance_loc deltas add up to its offset.
            let body = &ENTRY_UNWIND_INFO[start + 17..start + 4 + length];
            let end = body.iter().rposition(|&b| b != 0).unwrap();
            let advanced: usize = body.iter().filter(|&&b| b & 0xc0 == 0x40).map(|&b| 4 * (b & 0x3f) as usize).sum();
            assert_eq!(advanced, code.len() - 4, "{function}");
            let restores = body[..=end].iter().rev().take_while(|&&b| b & 0xc0 == 0xc0).count();
            assert_eq!(&body[end - restores - 1..end - restores + 1], &[0x0e, 0], "{function}");
        }
    }

    #[test]
    fn only_call_entry_ends_the_stack() {
        let records = records();
        let instructions = |(start, _): (usize, usize)| &ENTRY_UNWIND_INFO[start + 17..start + 19];
        // DW_CFA_undefined x30 first, before any instruction of call_entry runs.
        assert_eq!(instructions(records[1]), &[0x07, 30]);
        assert_ne!(instructions(records[2]), &[0x07, 30]);
        assert!(!ENTRY_UNWIND_INFO[records[2].0..].windows(2).any(|w| w == [0x07, 30]));
    }
}
