//! The C runtime pieces an executable gets from `crt*.o` and
//! `libc_nonshared.a` that `dlsym` cannot find, built per image as a small
//! synthetic object so they go through the same resolution and fixups as
//! everything else. Each CPU provides their machine code
//! ([`crate::arch::runtime`]); jitrun's own functions they jump to are
//! named by the caller (`host::runtime` finds them).
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
//! For Mach-O objects (see `graph::format::macho::DARWIN_COMPAT`, which maps the
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
//! | `__jitrun_darwin_NAME` (arm64) | Darwin's variadic call of the C library's `NAME` (arguments on the stack) → glibc's: `printf` → `vprintf` with an AAPCS64 `va_list` of the stack slots, `open` with its slot loaded into x2, `execl` → `execv`, ... (`arch/aarch64/runtime.rs`) |

use std::collections::HashSet;

use crate::arch::runtime::*;
use crate::arch::Cpu;
use crate::graph::model::*;

/// Finds jitrun's own version of a function the image should call instead
/// of libc's, and its address.
pub type HostFunctions<'a> = &'a dyn Fn(&str) -> Option<u64>;

/// Names the runtime can define for `cpu`: its pieces', and those
/// `host_function` knows.
pub fn provides(cpu: Cpu, name: &str, host_function: HostFunctions) -> bool {
    name == DSO_HANDLE
        || name == STACK_CHK_GUARD
        || cpu.runtime().pieces.iter().any(|p| p.name == name)
        || host_function(name).is_some()
}

/// Builds the runtime object of `cpu` with `__dso_handle` and the pieces in
/// `needed`, jumping to `host_function`'s functions for the names it knows.
pub fn build(cpu: Cpu, needed: &HashSet<&str>, host_function: HostFunctions) -> LinkGraph {
    let code = cpu.runtime();
    let mut graph = LinkGraph::new(RUNTIME_OBJECT.to_string(), cpu, None);
    let data = graph.add_section(".data", SectionKind::Data);
    // Eight bytes so the handle is a real, unique address in this image.
    let handle_block = graph.add_block(data, Content::Owned(vec![0; 8]), 8, 8);
    define(&mut graph, DSO_HANDLE, handle_block, SymbolKind::Data, 8);
    if needed.contains(STACK_CHK_GUARD) {
        let guard = graph.add_block(data, Content::Owned(random_guard().to_le_bytes().to_vec()), 8, 8);
        define(&mut graph, STACK_CHK_GUARD, guard, SymbolKind::Data, 8);
    }

    let text = graph.add_section(".text", SectionKind::Code);
    for piece in code.pieces.iter().filter(|p| p.always || needed.contains(p.name)) {
        let block = graph.add_block(text, Content::Owned(piece.code.to_vec()), piece.code.len() as u64, 16);
        define(&mut graph, piece.name, block, SymbolKind::Function, piece.code.len() as u64);
        for &(offset, kind, target, addend) in piece.fixups {
            let target = graph.add_external(target);
            graph.blocks[block as usize].edges.push(Edge::new(offset, kind, target, addend));
        }
    }
    add_entry_unwind_info(&mut graph);
    // `_init`/`_fini`: the output section's fragments (which fall through
    // from one to the next) between the CPU's prologue and epilogue. The
    // layout orders blocks of one output section by priority.
    for (name, section) in [(INIT_CODE, ".init"), (FINI_CODE, ".fini")] {
        if !needed.contains(name) {
            continue;
        }
        let prologue = graph.add_section(section, SectionKind::Code);
        let size = code.init_prologue.len() as u64;
        let block = graph.add_block(prologue, Content::Owned(code.init_prologue.to_vec()), size, 16);
        define(&mut graph, name, block, SymbolKind::Function, 0);
        let epilogue = graph.add_section(section, SectionKind::Code);
        graph.sections[epilogue as usize].priority = INIT_FRAGMENT_PRIORITY + 1;
        let size = code.init_epilogue.len() as u64;
        graph.add_block(epilogue, Content::Owned(code.init_epilogue.to_vec()), size, 4);
    }
    // In the image, not absolute: calls and address-taking reach them
    // like any function of the program's.
    let mut needed_host: Vec<&str> = needed.iter().copied().collect();
    needed_host.sort_unstable();
    for name in needed_host {
        let Some(address) = host_function(name) else { continue };
        let jump = (code.jump_to_absolute)(address);
        let size = jump.len() as u64;
        let block = graph.add_block(text, Content::Owned(jump), size, 16);
        define(&mut graph, name, block, SymbolKind::Function, size);
    }
    graph
}

/// The CPU's unwind info of [`CALL_ENTRY`] and [`CALL_MAIN`], its
/// `pc_begin` fields filled by fixups.
fn add_entry_unwind_info(graph: &mut LinkGraph) {
    let code = graph.cpu.runtime();
    let section = graph.add_section(".eh_frame", SectionKind::EhFrame);
    let size = code.entry_unwind_info.len() as u64;
    let block = graph.add_block(section, Content::Owned(code.entry_unwind_info.to_vec()), size, 8);
    let pc_relative = graph.cpu.pc_relative32();
    for &(offset, function) in code.entry_unwind_pc_begins {
        let target = graph.add_external(function);
        graph.blocks[block as usize].edges.push(Edge::new(offset, pc_relative, target, 0));
    }
}

/// A random guard word with a zero low byte, as glibc makes its canary
/// (a string overflow cannot reproduce it).
fn random_guard() -> u64 {
    crate::support::random_u64(std::process::id().into()) & !0xff
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

    /// Every CPU's runtime object has valid unwind info, and its pieces'
    /// fixups are of that CPU.
    #[test]
    fn every_cpus_runtime_object_is_well_formed() {
        for cpu in [Cpu::X86_64, Cpu::Aarch64] {
            let needed: HashSet<&str> = cpu.runtime().pieces.iter().map(|p| p.name).chain([INIT_CODE]).collect();
            let graph = build(cpu, &needed, &|name| (name == "dladdr").then_some(0x1234_5678));
            crate::graph::ehframe::check(&graph).expect("valid .eh_frame");
            for block in &graph.blocks {
                assert!(block.edges.iter().all(|e| e.kind.cpu() == cpu), "{:?}", cpu);
            }
            let names: Vec<&str> = graph.symbols.iter().filter_map(|s| s.name.as_deref()).collect();
            assert!(names.contains(&CALL_ENTRY) && names.contains(&INIT_CODE), "{:?}", names);
        }
    }
}
