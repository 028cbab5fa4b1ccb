//! The CPU jitrun runs on (the host), for the code of this process: every
//! `cfg(target_arch)` of jitrun lives here, one function or constant per
//! concern, so that running on another CPU means adding one arm to each.
//! (The CPUs jitrun links code *for* are `crate::arch`'s.)

use std::ffi::c_void;

/// The thread pointer, from which static TLS offsets count: `%fs:0` on
/// x86-64 (the TCB's own address), `tpidr_el0` on aarch64.
#[inline]
pub fn thread_pointer() -> u64 {
    let tp: u64;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: on x86-64 Linux %fs:0 holds the thread control block's own
    // address; reading it has no side effects.
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: reading the thread ID register has no side effects.
    unsafe {
        std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nostack, nomem, preserves_flags))
    };
    tp
}

/// The program counter and stack pointer a signal interrupted.
///
/// # Safety
/// `context` is the `ucontext_t` the kernel passed an `SA_SIGINFO` handler.
pub unsafe fn signal_pc_and_sp(context: *const c_void) -> (u64, u64) {
    // SAFETY: the caller's contract.
    let uc = unsafe { &*(context as *const libc::ucontext_t) };
    #[cfg(target_arch = "x86_64")]
    let registers =
        (uc.uc_mcontext.gregs[libc::REG_RIP as usize] as u64, uc.uc_mcontext.gregs[libc::REG_RSP as usize] as u64);
    #[cfg(target_arch = "aarch64")]
    let registers = (uc.uc_mcontext.pc, uc.uc_mcontext.sp);
    registers
}

/// Copies `stack` (a process's initial stack: `argc`, `argv`, `envp`, the
/// auxiliary vector) below the current stack pointer, 16-byte aligned at
/// `argc` as both psABIs say a process starts, and jumps to `entry` with
/// no function for `atexit` (`%rdx`, `x0`: 0) and no frame above it
/// (frame pointer and, on aarch64, link register 0). The caller's frames
/// stay above, never returned to.
///
/// # Safety
/// `entry` must be code that expects a process's initial stack and never
/// returns (it ends with `exit` or the `exit` system call).
pub unsafe fn enter_like_the_kernel(entry: u64, stack: &[u64]) -> ! {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the stack below %rsp is this thread's, unused; the copy goes
    // there and nothing of Rust's runs after the jump.
    unsafe {
        std::arch::asm!(
            "lea rax, [rcx * 8]",
            "sub rsp, rax",
            "and rsp, -16",
            "mov rdi, rsp",
            "cld",
            "rep movsq",
            "xor edx, edx",
            "xor ebp, ebp",
            "jmp r8",
            in("rcx") stack.len(),
            in("rsi") stack.as_ptr(),
            in("r8") entry,
            options(noreturn)
        )
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as on x86-64: the stack below sp is this thread's, unused.
    unsafe {
        std::arch::asm!(
            "lsl x4, x1, #3",
            "sub x4, sp, x4",
            "and x4, x4, #-16",
            "mov x5, x4",
            "2:",
            "cbz x1, 3f",
            "ldr x6, [x2], #8",
            "str x6, [x5], #8",
            "sub x1, x1, #1",
            "b 2b",
            "3:",
            "mov sp, x4",
            "mov x0, xzr",
            "mov x29, xzr",
            "mov x30, xzr",
            "br x3",
            in("x1") stack.len(),
            in("x2") stack.as_ptr(),
            in("x3") entry,
            options(noreturn)
        )
    }
}

/// Gives the thread the floating-point environment a new process starts
/// with: no exception flags raised, round to nearest, every exception
/// masked.
pub fn reset_floating_point_environment() {
    #[cfg(target_arch = "x86_64")]
    {
        // What the kernel loads at exec: the default x87 control word
        // (0x37f, which FNINIT sets) and MXCSR.
        const MXCSR_AT_EXEC: u32 = 0x1f80;
        // SAFETY: FNINIT and LDMXCSR change only the floating-point state,
        // and no floating-point value lives across this call.
        unsafe { std::arch::asm!("fninit", "ldmxcsr [{}]", in(reg) &MXCSR_AT_EXEC, options(nostack)) };
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: FPCR 0 (round to nearest, no traps, no flush to zero) and a
    // clear FPSR are what a process starts with; they change only the
    // floating-point state.
    unsafe {
        std::arch::asm!("msr fpcr, xzr", "msr fpsr, xzr", options(nostack, nomem))
    };
}

/// An `mmap` flag that asks for an address in the low 2 GiB, where the CPU
/// has one (x86-64's `MAP_32BIT`); 0 elsewhere (the mapper then tries
/// fixed low addresses).
#[cfg(target_arch = "x86_64")]
pub const MAP_LOW_2GIB: i32 = libc::MAP_32BIT;
#[cfg(target_arch = "aarch64")]
pub const MAP_LOW_2GIB: i32 = 0;

/// Whether the instruction at `code` is the breakpoint a debugger plants
/// (`int3` on x86-64, `brk #0` on aarch64).
///
/// # Safety
/// `code` points to at least 4 readable bytes of code.
pub unsafe fn is_breakpoint(code: *const u8) -> bool {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract; volatile because a debugger may
    // change the byte behind our back.
    let planted = unsafe { std::ptr::read_volatile(code) } == 0xcc;
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above, a whole instruction word.
    let planted = unsafe { std::ptr::read_volatile(code as *const u32) } == 0xd420_0000;
    planted
}

/// Makes code written to `[start, start + len)` visible to instruction
/// fetch, on every core, before it runs: nothing on x86-64, whose caches
/// are coherent; on aarch64, clean the data cache and invalidate the
/// instruction cache by line (libgcc's `__clear_cache`, which ends with
/// the barriers every core's next fetch needs).
pub fn make_code_visible(start: u64, len: u64) {
    #[cfg(target_arch = "aarch64")]
    {
        extern "C" {
            fn __clear_cache(start: *mut std::ffi::c_char, end: *mut std::ffi::c_char);
        }
        // SAFETY: the range is memory of this process just written; the
        // call only maintains caches.
        unsafe { __clear_cache(start as *mut _, (start + len) as *mut _) };
    }
    #[cfg(target_arch = "x86_64")]
    let _ = (start, len);
}

/// What glibc passes an IFUNC resolver on this CPU, as the first two
/// arguments: nothing on x86-64 (zeros, which its resolvers do not read);
/// on aarch64 `AT_HWCAP` with `_IFUNC_ARG_HWCAP` (bit 62) set, and a
/// pointer to an `__ifunc_arg_t` (its size, `AT_HWCAP`, `AT_HWCAP2`).
pub fn ifunc_resolver_arguments() -> (u64, Box<[u64; 3]>) {
    #[cfg(target_arch = "aarch64")]
    {
        const IFUNC_ARG_HWCAP: u64 = 1 << 62;
        // SAFETY: getauxval only reads the auxiliary vector.
        let (hwcap, hwcap2) = unsafe { (libc::getauxval(libc::AT_HWCAP), libc::getauxval(libc::AT_HWCAP2)) };
        (hwcap | IFUNC_ARG_HWCAP, Box::new([24, hwcap, hwcap2]))
    }
    #[cfg(target_arch = "x86_64")]
    (0, Box::new([0; 3]))
}

/// ld's default library search path on Debian and Ubuntu (`ld --verbose`),
/// with this machine's multiarch directories.
#[cfg(target_arch = "x86_64")]
pub const LIBRARY_DIRS: &[&str] = &[
    "/usr/local/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/local/lib64",
    "/lib64",
    "/usr/lib64",
    "/usr/local/lib",
    "/lib",
    "/usr/lib",
];
#[cfg(target_arch = "aarch64")]
pub const LIBRARY_DIRS: &[&str] = &[
    "/usr/local/lib/aarch64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/local/lib64",
    "/lib64",
    "/usr/lib64",
    "/usr/local/lib",
    "/lib",
    "/usr/lib",
];

/// Where GCC keeps its own libraries (libgcc.a), per target triple.
#[cfg(target_arch = "x86_64")]
pub const GCC_LIBRARY_DIRS: &[&str] =
    &["/usr/lib/gcc/x86_64-linux-gnu", "/usr/lib/gcc/x86_64-pc-linux-gnu", "/usr/lib64/gcc/x86_64-pc-linux-gnu"];
#[cfg(target_arch = "aarch64")]
pub const GCC_LIBRARY_DIRS: &[&str] = &[
    "/usr/lib/gcc/aarch64-linux-gnu",
    "/usr/lib/gcc/aarch64-unknown-linux-gnu",
    "/usr/lib64/gcc/aarch64-unknown-linux-gnu",
    // Debian's cross compiler's, where an emulated arm64 jitrun (qemu-user
    // on another CPU, as the test suite runs) finds the target's libgcc.a.
    "/usr/lib/gcc-cross/aarch64-linux-gnu",
];

/// The flags of this machine's libraries in the dynamic loader's cache:
/// `FLAG_ELF_LIBC6` with `FLAG_X8664_LIB64` or `FLAG_AARCH64_LIB64`.
#[cfg(target_arch = "x86_64")]
pub const LD_CACHE_FLAGS: i32 = 0x0303;
#[cfg(target_arch = "aarch64")]
pub const LD_CACHE_FLAGS: i32 = 0x0a03;

/// The name of one of clang's runtime libraries for this machine:
/// `clang_runtime!("asan", ".so")` is `libclang_rt.asan-x86_64.so` here.
#[cfg(target_arch = "x86_64")]
macro_rules! clang_runtime {
    ($name:literal, $extension:literal) => {
        concat!("libclang_rt.", $name, "-x86_64", $extension)
    };
}
#[cfg(target_arch = "aarch64")]
macro_rules! clang_runtime {
    ($name:literal, $extension:literal) => {
        concat!("libclang_rt.", $name, "-aarch64", $extension)
    };
}
pub(crate) use clang_runtime;
