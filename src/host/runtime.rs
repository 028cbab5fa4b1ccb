//! The C runtime pieces an executable gets from `crt*.o` and
//! `libc_nonshared.a` that `dlsym` cannot find, built per image as a small
//! synthetic object so they go through the same resolution and fixups as
//! everything else.
//!
//! | symbol                   | what it does                                         |
//! |--------------------------|------------------------------------------------------|
//! | `__dso_handle`           | this image's identity for `__cxa_atexit`/`__cxa_finalize` |
//! | `atexit(f)`              | `__cxa_atexit(f, NULL, &__dso_handle)`               |
//! | `at_quick_exit(f)`       | `__cxa_at_quick_exit(f, &__dso_handle)`              |
//! | `pthread_atfork(p,a,c)`  | `__register_atfork(p, a, c, &__dso_handle)`          |
//! | `__stack_chk_fail_local` | tail call to `__stack_chk_fail`                      |
//! | `__jitrun_call_entry`    | calls constructors and the entry through `__jitrun_call_main`; the outermost frame (its unwind info ends the stack, as `_start`'s does) |
//! | `__jitrun_call_main`     | `f(argc, argv, envp)`, then `then(status)` if given, with unwind info |
//! | `__jitrun_tlsdesc_static`| TLS descriptor function: returns the stored offset   |
//! | `__jitrun_init`, `__jitrun_fini` | `_init`/`_fini`: prologue and epilogue around the objects' `.init`/`.fini` fragments |
//!
//! And jumps to jitrun's own versions of functions whose libc versions
//! cannot know the image (see [`crate::host::dladdr`]): `dladdr`, `dladdr1`,
//! `backtrace_symbols`, `backtrace_symbols_fd`; with `--self-exe`, of those
//! that look up or execute `/proc/self/exe` (see [`crate::host::selfexe`]); with
//! `--report`, of `_exit`, `_Exit` and `quick_exit` (see [`crate::diagnostics::report`]).
//!
//! For Mach-O objects (see `format::macho::DARWIN_COMPAT`, which maps the
//! Darwin names onto these):
//!
//! | symbol                     | what it does                                       |
//! |----------------------------|----------------------------------------------------|
//! | `__jitrun_tlv_get_addr`    | thread-local descriptor thunk: `%fs:0 + desc->offset`, clobbers only `%rax` and flags |
//! | `__jitrun_stack_chk_guard` | the image's stack-protector guard word (random)    |
//! | `__jitrun_NSGetEnviron`    | returns `&environ`                                 |
//! | `__jitrun_sincos_stret`    | `sincos(x)` with sin in `%xmm0`, cos in `%xmm1`    |
//! | `__jitrun_sincosf_stret`   | `sincosf(x)` with `{sin, cos}` packed in `%xmm0`   |
//! | `__jitrun_assert_rtn`      | Darwin `__assert_rtn(func, file, line, expr)` → glibc `__assert_fail(expr, file, line, func)` |

use std::collections::HashSet;

use crate::arch::x86_64::EdgeKind;
use crate::graph::model::*;

/// Name of the synthetic object in messages.
pub const RUNTIME_OBJECT: &str = "<jitrun runtime>";
pub const DSO_HANDLE: &str = "__dso_handle";
/// `__jitrun_call_entry(f, argc, argv, envp, then)` calls
/// `f(argc, argv, envp)` (through [`CALL_MAIN`]) and, when `then` is not
/// null, `then(status)` from the same frame, as `__libc_start_call_main`
/// calls `exit` right where `main` returned: what the program left on
/// the stack below is then overwritten as natively (LeakSanitizer's scan
/// at exit found a dead copy of a leaked pointer when jitrun called `exit`
/// from deeper down). jitrun calls constructors and the entry through
/// it because its unwind info ends the stack (the return address is
/// undefined, as in `_start`'s): an exception nobody catches stops there
/// with "end of stack" and `std::terminate` runs, as under
/// `__libc_start_main`, instead of unwinding into jitrun's own frames.
/// Below the program's frames a stack walk finds two of jitrun's, as it
/// finds libc's start-up frames natively: a sanitizer's unwinder that gets
/// fewer than three frames falls back to following frame pointers, which
/// code built without them turns into garbage.
pub const CALL_ENTRY: &str = "__jitrun_call_entry";
/// The frame between [`CALL_ENTRY`] and the program's function.
pub const CALL_MAIN: &str = "__jitrun_call_main";
/// The resolver of TLS descriptors (`-mtls-dialect=gnu2`); always present.
pub const TLSDESC_STATIC: &str = "__jitrun_tlsdesc_static";
/// The thunk of Mach-O thread-local descriptors.
pub const TLV_GET_ADDR: &str = "__jitrun_tlv_get_addr";
/// The stack-protector guard word Darwin code reads from memory.
pub const STACK_CHK_GUARD: &str = "__jitrun_stack_chk_guard";
/// The `.init` code as one function: what `crti.o` and `crtn.o` put
/// around the objects' `.init` fragments to make `_init`.
pub const INIT_CODE: &str = "__jitrun_init";
/// The `.fini` code as one function (`_fini`).
pub const FINI_CODE: &str = "__jitrun_fini";
/// The sort key of the objects' `.init`/`.fini` fragments in their output
/// section, between the runtime's prologue (0) and epilogue (2).
pub const INIT_FRAGMENT_PRIORITY: u32 = 1;

struct Piece {
    name: &'static str,
    /// Linked into every image (jitrun itself uses it), not only on demand.
    always: bool,
    code: &'static [u8],
    /// (offset, kind, target, addend)
    fixups: &'static [(u32, EdgeKind, &'static str, i64)],
}

const PIECES: &[Piece] = &[
    Piece {
        name: "atexit",
        always: false,
        // xor %esi,%esi; lea __dso_handle(%rip),%rdx; jmp __cxa_atexit
        code: &[0x31, 0xf6, 0x48, 0x8d, 0x15, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0],
        fixups: &[(5, EdgeKind::Pc32, DSO_HANDLE, -4), (10, EdgeKind::Branch32, "__cxa_atexit", -4)],
    },
    Piece {
        name: "at_quick_exit",
        always: false,
        // lea __dso_handle(%rip),%rsi; jmp __cxa_at_quick_exit
        code: &[0x48, 0x8d, 0x35, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0],
        fixups: &[(3, EdgeKind::Pc32, DSO_HANDLE, -4), (8, EdgeKind::Branch32, "__cxa_at_quick_exit", -4)],
    },
    Piece {
        name: "pthread_atfork",
        always: false,
        // lea __dso_handle(%rip),%rcx; jmp __register_atfork
        code: &[0x48, 0x8d, 0x0d, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0],
        fixups: &[(3, EdgeKind::Pc32, DSO_HANDLE, -4), (8, EdgeKind::Branch32, "__register_atfork", -4)],
    },
    Piece {
        name: CALL_ENTRY,
        always: true,
        // push %rbp; xor %ebp,%ebp; call __jitrun_call_main; pop %rbp; ret
        // -- %rbp is zero below the program, as `_start` leaves it: a
        // frame-pointer walk (ASan's on every malloc) stops there instead
        // of following whatever jitrun's own code kept in %rbp.
        code: &[0x55, 0x31, 0xed, 0xe8, 0, 0, 0, 0, 0x5d, 0xc3],
        fixups: &[(4, EdgeKind::Branch32, CALL_MAIN, -4)],
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
        fixups: &[(3, EdgeKind::GotPcRel32, "environ", -4)],
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
        fixups: &[(13, EdgeKind::Branch32, "sincos", -4)],
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
        fixups: &[(15, EdgeKind::Branch32, "sincosf", -4)],
    },
    Piece {
        name: "__jitrun_assert_rtn",
        always: false,
        // xchg %rcx,%rdi; jmp __assert_fail
        code: &[0x48, 0x87, 0xcf, 0xe9, 0, 0, 0, 0],
        fixups: &[(4, EdgeKind::Branch32, "__assert_fail", -4)],
    },
    Piece {
        name: "__stack_chk_fail_local",
        always: false,
        // jmp __stack_chk_fail
        code: &[0xe9, 0, 0, 0, 0],
        fixups: &[(1, EdgeKind::Branch32, "__stack_chk_fail", -4)],
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
        fixups: &[(8, EdgeKind::Abs64, "_r_debug", 0)],
    },
];

/// Names the runtime can define for a link whose objects define an
/// allocator function or not (`replaces_allocator`, see [`crate::host::interpose`]).
pub fn provides(name: &str, replaces_allocator: bool) -> bool {
    name == DSO_HANDLE
        || name == STACK_CHK_GUARD
        || PIECES.iter().any(|p| p.name == name)
        || host_function(name, replaces_allocator).is_some()
}

/// jitrun's own version of `name`, which the image calls instead of libc's.
fn host_function(name: &str, replaces_allocator: bool) -> Option<usize> {
    crate::host::dladdr::host_function(name)
        .or_else(|| crate::host::selfexe::host_function(name))
        .or_else(|| crate::host::interpose::host_function(name, replaces_allocator))
        .or_else(|| crate::diagnostics::report::host_function(name))
        .or_else(|| crate::diagnostics::crash::host_function(name))
}

/// `movabs $address, %r11; jmp *%r11`: a jump to one of jitrun's own
/// functions from anywhere in the address space (%r11 is the scratch
/// register calls may clobber, as PLT stubs use it).
fn jump_to_host(address: usize) -> Vec<u8> {
    let mut code = vec![0x49, 0xbb];
    code.extend_from_slice(&(address as u64).to_le_bytes());
    code.extend_from_slice(&[0x41, 0xff, 0xe3]);
    code
}

/// Builds the runtime object with `__dso_handle` and the pieces in `needed`.
pub fn build(needed: &HashSet<&str>, replaces_allocator: bool) -> LinkGraph {
    let mut graph = LinkGraph::new(RUNTIME_OBJECT.to_string(), None);
    let data = graph.add_section(".data", SectionKind::Data);
    // Eight bytes so the handle is a real, unique address in this image.
    let handle_block = graph.add_block(data, Content::Owned(vec![0; 8]), 8, 8);
    define(&mut graph, DSO_HANDLE, handle_block, SymbolKind::Data, 8);
    if needed.contains(STACK_CHK_GUARD) {
        let guard = graph.add_block(data, Content::Owned(random_guard().to_le_bytes().to_vec()), 8, 8);
        define(&mut graph, STACK_CHK_GUARD, guard, SymbolKind::Data, 8);
    }

    let text = graph.add_section(".text", SectionKind::Code);
    for piece in PIECES.iter().filter(|p| p.always || needed.contains(p.name)) {
        let block = graph.add_block(text, Content::Owned(piece.code.to_vec()), piece.code.len() as u64, 16);
        define(&mut graph, piece.name, block, SymbolKind::Function, piece.code.len() as u64);
        for &(offset, kind, target, addend) in piece.fixups {
            let target = graph.add_external(target);
            graph.blocks[block as usize].edges.push(Edge { offset, kind, target, addend });
        }
    }
    add_entry_unwind_info(&mut graph);
    // `_init`/`_fini`: the output section's fragments (which fall through
    // from one to the next) behind `sub $8,%rsp` (the stack as a call
    // leaves it is 8 bytes off the ABI's 16) and ahead of `add $8,%rsp;
    // ret`. The layout orders blocks of one output section by priority.
    for (name, section) in [(INIT_CODE, ".init"), (FINI_CODE, ".fini")] {
        if !needed.contains(name) {
            continue;
        }
        let prologue = graph.add_section(section, SectionKind::Code);
        let block = graph.add_block(prologue, Content::Owned(vec![0x48, 0x83, 0xec, 0x08]), 4, 16);
        define(&mut graph, name, block, SymbolKind::Function, 0);
        let epilogue = graph.add_section(section, SectionKind::Code);
        graph.sections[epilogue as usize].priority = INIT_FRAGMENT_PRIORITY + 1;
        graph.add_block(epilogue, Content::Owned(vec![0x48, 0x83, 0xc4, 0x08, 0xc3]), 5, 1);
    }
    // In the image, not absolute: calls and address-taking reach them
    // like any function of the program's.
    let mut needed_host: Vec<&str> = needed.iter().copied().collect();
    needed_host.sort_unstable();
    for name in needed_host {
        let Some(address) = host_function(name, replaces_allocator) else { continue };
        let code = jump_to_host(address);
        let size = code.len() as u64;
        let block = graph.add_block(text, Content::Owned(code), size, 16);
        define(&mut graph, name, block, SymbolKind::Function, size);
    }
    graph
}

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

fn add_entry_unwind_info(graph: &mut LinkGraph) {
    let section = graph.add_section(".eh_frame", SectionKind::EhFrame);
    let size = ENTRY_UNWIND_INFO.len() as u64;
    let block = graph.add_block(section, Content::Owned(ENTRY_UNWIND_INFO.to_vec()), size, 8);
    for (offset, function) in ENTRY_UNWIND_PC_BEGINS {
        let target = graph.add_external(function);
        graph.blocks[block as usize].edges.push(Edge { offset, kind: EdgeKind::Pc32, target, addend: 0 });
    }
}

/// A random guard word with a zero low byte, as glibc makes its canary
/// (a string overflow cannot reproduce it). `RandomState` is seeded from
/// the OS's random source.
fn random_guard() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(std::process::id().into());
    hasher.finish() & !0xff
}

fn define(graph: &mut LinkGraph, name: &str, block: BlockId, kind: SymbolKind, size: u64) {
    graph.add_symbol(Symbol {
        name: Some(name.into()),
        def: SymbolDef::Defined { block, offset: 0 },
        scope: Scope::Global,
        linkage: Linkage::Strong,
        kind,
        size,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_frames_unwind_info_is_well_formed() {
        let graph = build(&HashSet::new(), false);
        crate::graph::ehframe::check(&graph).expect("valid .eh_frame");
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
