//! jitrun's runtime pieces as machine code: the names every CPU's pieces
//! answer to and the shape of the code each CPU provides (its module's
//! `runtime.rs`). `graph::runtime` builds the runtime object from them.

use super::EdgeKind;

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

/// One function (or datum) of the runtime, in one CPU's machine code.
pub struct Piece {
    pub name: &'static str,
    /// Linked into every image (jitrun itself uses it), not only on demand.
    pub always: bool,
    pub code: &'static [u8],
    /// (offset, kind, target, addend)
    pub fixups: &'static [(u32, EdgeKind, &'static str, i64)],
}

/// What one CPU provides for the runtime object.
pub struct RuntimeCode {
    pub pieces: &'static [Piece],
    /// What `_init`/`_fini` start with before the objects' `.init`/`.fini`
    /// fragments (crti.o's part), and end with after them (crtn.o's).
    pub init_prologue: &'static [u8],
    pub init_epilogue: &'static [u8],
    /// `.eh_frame` for [`CALL_ENTRY`] and [`CALL_MAIN`], whose FDEs hold
    /// their `pc_begin` at the offsets of `entry_unwind_pc_begins`, filled
    /// by a 32-bit PC-relative fixup against the function named there.
    pub entry_unwind_info: &'static [u8],
    pub entry_unwind_pc_begins: &'static [(u32, &'static str)],
    /// Code that jumps to an absolute address, from anywhere in the address
    /// space (to one of jitrun's own functions).
    pub jump_to_absolute: fn(u64) -> Vec<u8>,
}
