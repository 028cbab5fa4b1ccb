//! A linked, mapped image: a value with a lifetime.
//!
//! Running follows what `__libc_start_main` does for an executable:
//! register the image's finalizer with `__cxa_atexit` against its own
//! `__dso_handle` (so it runs after the program's own atexit handlers, and
//! also when the program calls `exit()`), run `.preinit_array` and
//! `.init_array` with `(argc, argv, envp)`, call the entry. Dropping the
//! image runs `__cxa_finalize(&__dso_handle)` (the program's atexit handlers,
//! C++ static destructors, then `.fini_array` in reverse), the mapper's
//! dealloc actions, unmaps, and closes the libraries last.

pub mod batch;
pub mod cgroups;
pub mod limits;
pub mod runs;
pub mod sandbox;
mod symbol_map;

pub(crate) use symbol_map::SymbolMap;

use std::ffi::{c_char, c_int, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;

use anyhow::{Context, Result};

use crate::host::loader::SharedLibrary;
use crate::memory::{InitKey, MemoryMapper};

extern "C" {
    fn __cxa_atexit(func: extern "C" fn(*mut c_void), arg: *mut c_void, dso_handle: *mut c_void) -> c_int;
    fn __cxa_finalize(dso_handle: *mut c_void);
    static mut environ: *mut *mut c_char;
}

/// An array of function pointers in the image: `[start, start + 8 * count)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FunctionArray {
    pub start: u64,
    pub count: u64,
}

/// What the image runs before the entry, in glibc's order for an
/// executable: `.preinit_array`, the `.init` code (what `_init` holds:
/// the objects' `.init` fragments between a prologue and an epilogue),
/// `.init_array`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Initializers {
    pub preinit: FunctionArray,
    pub init_code: Option<u64>,
    pub init: FunctionArray,
    /// The code's range, for objects built with `-pg` (they call `mcount`):
    /// profiling starts on it first, as gcrt1.o starts it, and `gmon.out`
    /// is written at exit.
    pub profiled_code: Option<(u64, u64)>,
}

/// What the image's finalizer runs once `exit()` or `__cxa_finalize` runs
/// it: `.fini_array` from last to first, then the `.fini` code (`_fini`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Finalizers {
    pub fini: FunctionArray,
    pub fini_code: Option<u64>,
}

type FiniFn = unsafe extern "C" fn();
/// `__jitrun_call_entry(f, argc, argv, envp, then)`, see [`crate::arch::runtime::CALL_ENTRY`].
/// What calling the program's entry needs: jitrun's trampoline (see
/// [`crate::arch::runtime::CALL_ENTRY`]) and the entry itself.
#[derive(Clone, Copy)]
pub(crate) struct EntryCall {
    trampoline: u64,
    entry: u64,
    /// The objects' own `_start`: entered as the kernel enters a program
    /// (see [`enter_like_the_kernel`]), not called.
    like_a_process: bool,
}

type CallEntryFn = unsafe extern "C" fn(u64, c_int, *mut *mut c_char, *mut *mut c_char, u64) -> c_int;
type ExitFn = unsafe extern "C" fn(c_int) -> !;

pub struct Image {
    pub(crate) mapper: Box<dyn MemoryMapper>,
    pub(crate) base: u64,
    pub(crate) size: u64,
    pub(crate) key: Option<InitKey>,
    /// Addresses and sizes (`st_size`, for `run::GlobalValue` writes) of the defined globals.
    pub(crate) symbols: SymbolMap,
    pub(crate) initializers: Initializers,
    pub(crate) finalizers: Finalizers,
    pub(crate) dso_handle: u64,
    /// Boxed so its address, given to `__cxa_atexit`, stays put.
    fini_state: Option<Box<Finalizers>>,
    /// Closed after everything else, since destructors may call into them.
    pub(crate) _libraries: Vec<SharedLibrary>,
    /// Keeps argv alive for as long as the program may look at it.
    argv: Option<ProgramArgs>,
    /// What the link made, for maps, reports and tools.
    pub(crate) link_info: std::sync::Arc<crate::graph::linkinfo::LinkInfo>,
    pub(crate) deferred_link_info: Option<crate::graph::deferred::DeferredLinkInfo>,
    /// When the image defines `malloc` (or another allocator function): the
    /// libraries' GOT entries to point at its definitions while it runs.
    pub(crate) got_interposition: Option<crate::host::interpose::GotInterposition>,
}

/// What the linker hands over to make an [`Image`]: the mapped memory and
/// what the runs need to find in it.
pub(crate) struct MappedProgram {
    pub mapper: Box<dyn MemoryMapper>,
    pub base: u64,
    pub size: u64,
    pub key: InitKey,
    pub symbols: SymbolMap,
    pub initializers: Initializers,
    pub finalizers: Finalizers,
    /// The address of `__dso_handle`, which `atexit` and C++ statics name.
    pub dso_handle: u64,
    /// Libraries the program uses, kept loaded as long as the image.
    pub libraries: Vec<SharedLibrary>,
}

// SAFETY: the image's memory belongs to the process, not to a thread; the
// raw argv pointers point into `argv`, owned by the image, or into the
// process's argument area.
unsafe impl Send for Image {}

impl Image {
    pub(crate) fn new(mapped: MappedProgram) -> Image {
        let MappedProgram { mapper, base, size, key, symbols, initializers, finalizers, dso_handle, libraries } =
            mapped;
        Image {
            mapper,
            base,
            size,
            key: Some(key),
            symbols,
            initializers,
            finalizers,
            dso_handle,
            fini_state: None,
            _libraries: libraries,
            argv: None,
            link_info: Default::default(),
            deferred_link_info: None,
            got_interposition: None,
        }
    }

    /// From here on the libraries allocate with the program's own malloc
    /// (if it has one) and read the program's definitions of their
    /// variables, as natively; once per process.
    pub(crate) fn install_got_interposition(&self) {
        if let Some(interposition) = &self.got_interposition {
            interposition.install();
        }
    }

    /// Address of a global symbol defined by the image.
    pub fn lookup(&self, name: &str) -> Option<u64> {
        self.symbols.address(name)
    }

    /// Calls the image's `const char *name(void)` if it defines `name`, and
    /// copies the string returned (empty for NULL): how a sanitizer asks
    /// the program for its default options. `None` if it is not defined.
    ///
    /// # Safety
    /// The program's `name` must be such a function, and safe to call
    /// before the program's constructors run (as a sanitizer runtime
    /// calls it natively).
    pub unsafe fn call_string_function(&self, name: &str) -> Option<Vec<u8>> {
        let address = self.lookup(name)?;
        // SAFETY: by the caller, the address is a C function of this type.
        let returned = unsafe { std::mem::transmute::<u64, extern "C" fn() -> *const std::ffi::c_char>(address)() };
        if returned.is_null() {
            return Some(Vec::new());
        }
        // SAFETY: a C string the program returned, which it keeps alive.
        Some(unsafe { CStr::from_ptr(returned) }.to_bytes().to_vec())
    }

    /// The image's name for a global named on the command line: exact, or
    /// for Mach-O objects, `_foo` for `foo` (see
    /// [`crate::graph::resolve::command_line_symbol`]).
    pub fn command_line_name<'a>(&self, name: &'a str) -> &'a str {
        self.symbols.command_line_name(name)
    }

    /// Size in bytes of a global symbol defined by the image, when its
    /// object recorded one (`st_size`).
    pub fn symbol_size(&self, name: &str) -> Option<u64> {
        self.symbols.size(name)
    }

    /// The inputs of a link info that [`crate::LinkOptions::defer_link_info`]
    /// left to collect (on another thread, say); `link_info` is empty until
    /// [`Image::set_link_info`] gets the result.
    pub fn take_deferred_link_info(&mut self) -> Option<crate::graph::deferred::DeferredLinkInfo> {
        self.deferred_link_info.take()
    }

    pub fn set_link_info(&mut self, info: std::sync::Arc<crate::graph::linkinfo::LinkInfo>) {
        self.link_info = info;
    }

    /// Segments, sections, symbols, GOT entries and stubs of the link.
    pub fn link_info(&self) -> &crate::graph::linkinfo::LinkInfo {
        &self.link_info
    }

    /// Drops the link info (afterwards [`Image::link_info`] is empty), for
    /// a caller that has taken what it needs: a process that forks many
    /// runs pays for each of its resident pages at every fork.
    pub fn release_link_info(&mut self) {
        self.link_info = Default::default();
    }

    /// The address range the image occupies.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.base..self.base + self.size
    }

    /// The entry trampoline, looked up before a fork so that children do
    /// not hash (each code page a child touches first is a page fault).
    ///
    /// When the objects define `_start` themselves (a program linked with
    /// `cc -nostartfiles`, or written in assembly) and the entry is `main`
    /// or `_start`, that `_start` is the entry, as it is natively: it gets
    /// the stack the kernel gives a new process, and no constructors run
    /// first (nobody runs them natively either: `__libc_start_main` would,
    /// and such a program does not call it).
    pub(crate) fn entry_call(&self, entry: &str) -> Result<EntryCall> {
        let trampoline = self.lookup(crate::arch::runtime::CALL_ENTRY).context("internal: no entry trampoline")?;
        if let Some(start) = self.own_start(entry) {
            // Read before any fork: every child then has it.
            process_auxiliary_vector();
            return Ok(EntryCall { trampoline, entry: start, like_a_process: true });
        }
        Ok(EntryCall { trampoline, entry: self.entry_address(entry)?, like_a_process: false })
    }

    /// The objects' own `_start`, if running `entry` means entering it.
    fn own_start(&self, entry: &str) -> Option<u64> {
        matches!(self.symbols.command_line_name(entry), "main" | "_start").then(|| self.lookup("_start")).flatten()
    }

    /// Whether running `entry` enters the objects' own `_start` (see
    /// [`Image::entry_call`]). Such a program ends with a system call
    /// (`exit_group`) that returns nothing to jitrun in its process.
    pub fn starts_like_a_process(&self, entry: &str) -> bool {
        self.own_start(entry).is_some()
    }

    fn array_entries(array: FunctionArray) -> impl Iterator<Item = u64> {
        (0..array.count).map(move |i| {
            // SAFETY: the array lies inside the mapped, readable image
            // (layout placed it; initialize made it read-only).
            unsafe { std::ptr::read((array.start + 8 * i) as *const u64) }
        })
    }

    /// Address of `entry`, or an error saying it is missing.
    pub(crate) fn entry_address(&self, entry: &str) -> Result<u64> {
        self.lookup(self.symbols.command_line_name(entry))
            .with_context(|| format!("entry point `{}` is not defined by the loaded objects", entry))
    }

    /// Runs the initializers and calls `entry(argc, argv, envp)`; returns
    /// what it returned. `argv[0]` is `program`.
    ///
    /// Calling it again runs the constructors again on the same memory:
    /// global state persists between runs. The finalizer is registered once
    /// per [`Image::finalize`], so to run destructors between runs, call
    /// `finalize` after each run.
    pub fn run_main(&mut self, entry: &str, program: &str, args: &[String]) -> Result<i32> {
        self.run_main_with_os_args(entry, OsStr::new(program), args)
    }

    /// [`Image::run_main`] with arguments of any bytes but NUL (what a
    /// native program may be given), as the command line passes them.
    pub fn run_main_with_os_args<S: AsRef<OsStr>>(&mut self, entry: &str, program: &OsStr, args: &[S]) -> Result<i32> {
        self.run_main_then(entry, program, args, None)
    }

    /// [`Image::run_main_with_os_args`] as a process's last run: `exit` is
    /// called with the entry's status right where it returned, as
    /// `__libc_start_call_main` does (see [`crate::arch::runtime::CALL_ENTRY`]),
    /// so it never returns unless the run cannot start. (The phases of a
    /// `--report` need the moment the entry returned: a run with a report
    /// returns first, then [`Image::exit`].)
    pub fn run_main_then_exit_with_os_args<S: AsRef<OsStr>>(
        mut self,
        entry: &str,
        program: &OsStr,
        args: &[S],
    ) -> Result<std::convert::Infallible> {
        let status = self.run_main_then(entry, program, args, Some(libc::exit))?;
        self.exit(status)
    }

    fn run_main_then<S: AsRef<OsStr>>(
        &mut self,
        entry: &str,
        program: &OsStr,
        args: &[S],
        then: Option<ExitFn>,
    ) -> Result<i32> {
        let entry = self.entry_call(entry)?;
        let argv = self.argv.insert(ProgramArgs::new(program, args)?);
        let (argc, argv) = (argv.argc(), argv.install());
        if entry.like_a_process {
            // SAFETY: argv points into `self.argv` or the argument area,
            // which the process keeps to its end; the entry never returns.
            unsafe { self.enter_program(entry, argc, argv) }
        }
        if self.fini_state.is_none() {
            self.fini_state = Some(register_finalizer(self.finalizers, self.dso_handle));
        }
        // SAFETY: argv points into `self.argv` or the argument area, both
        // kept until the next run replaces them (or the process ends).
        Ok(unsafe { self.call_program(entry, argc, argv, true, then) })
    }

    /// What [`Image::run_main`] then [`Image::exit`] do, for a process that
    /// ends with this run (a forked child, see `run.rs`): it needs only
    /// `&self` because nothing outlives the process; argv and the
    /// finalizer's state are leaked.
    /// `argv` was built by [`ProgramArgs::new`] before the fork, so the
    /// child allocates nothing (each page it writes is a copy-on-write fault).
    pub(crate) fn run_main_then_exit(&self, entry: EntryCall, argv: &ProgramArgs) -> ! {
        if entry.like_a_process {
            // SAFETY: as below; the entry never returns.
            unsafe { self.enter_program(entry, argv.argc(), argv.install()) }
        }
        // The image's own field: `self` stays put until the process ends.
        let arg = &self.finalizers as *const Finalizers as *mut c_void;
        // SAFETY: as in register_finalizer; `arg` outlives every exit handler.
        unsafe { __cxa_atexit(run_finalizers, arg, self.dso_handle as *mut c_void) };
        // SAFETY: argv's strings live in the parent's copy-on-write memory,
        // valid until the process ends; the child only reads them.
        let status = unsafe { self.call_program(entry, argv.argc(), argv.install(), false, Some(libc::exit)) };
        exit_below_the_program(entry.trampoline, status)
    }

    /// Runs the initializers (see [`Initializers`]), then the entry.
    ///
    /// # Safety
    /// `argv` must hold `argc` valid C strings and a null terminator and stay
    /// valid while the program may use it; `entry_addr` is a function of
    /// the image with the C `main` signature.
    /// `timed` marks the phases for `--report` (in-process runs only).
    /// `then`, if given, is called with the entry's status from the
    /// trampoline's frame (an `exit`: it does not return).
    unsafe fn call_program(
        &self,
        entry: EntryCall,
        argc: c_int,
        argv: *mut *mut c_char,
        timed: bool,
        then: Option<ExitFn>,
    ) -> i32 {
        // SAFETY: reading libc's environ pointer.
        let envp = unsafe { environ };
        let EntryCall { trampoline, entry: entry_addr, .. } = entry;
        // SAFETY: the trampoline is the runtime piece in the image's text.
        let call_entry = unsafe { std::mem::transmute::<u64, CallEntryFn>(trampoline) };
        let mark = |at| {
            if timed {
                crate::diagnostics::report::RUN_CLOCK.mark(at)
            }
        };
        // Before the program's own malloc (if any) is bound for libraries.
        crate::host::glibc_heap::before_the_first_run();
        self.install_got_interposition();
        mark(&crate::diagnostics::report::RUN_CLOCK.init_start);
        thread_state_of_a_new_process();
        let Initializers { preinit, init_code, init, profiled_code } = self.initializers;
        if let Some(code) = profiled_code {
            start_profiling(code);
        }
        let arrays = |array| Image::array_entries(array).filter(|&f| f != 0 && f != u64::MAX);
        for f in arrays(preinit).chain(init_code).chain(arrays(init)) {
            // SAFETY: the address comes from the image's relocated init
            // arrays; calling it is what loading a program means.
            unsafe { call_entry(f, argc, argv, envp, 0) };
        }
        mark(&crate::diagnostics::report::RUN_CLOCK.entry_start);
        log::debug!("calling the entry at {:#x}", entry_addr);
        // SAFETY: the entry is a function in the image's executable segment
        // with the C `main` signature (the caller's contract).
        let status = unsafe { call_entry(entry_addr, argc, argv, envp, then.map_or(0, |f| f as usize as u64)) };
        mark(&crate::diagnostics::report::RUN_CLOCK.entry_end);
        status
    }

    /// Enters the objects' own `_start` (see [`Image::entry_call`]) with
    /// the process's state as a new process has it; no initializer runs.
    ///
    /// # Safety
    /// As for [`Image::call_program`]; `argv` stays valid to the process's end.
    unsafe fn enter_program(&self, entry: EntryCall, argc: c_int, argv: *mut *mut c_char) -> ! {
        crate::host::glibc_heap::before_the_first_run();
        self.install_got_interposition();
        thread_state_of_a_new_process();
        log::debug!("entering _start at {:#x} as a new process", entry.entry);
        // SAFETY: reading libc's environ pointer; `argv` holds `argc`
        // strings and a null (the caller's contract).
        let stack = unsafe { process_entry_stack(argc, argv, environ, entry.entry) };
        // SAFETY: the entry is the image's `_start`, which expects exactly
        // this stack and never returns.
        unsafe { crate::support::machine::enter_like_the_kernel(entry.entry, &stack) }
    }

    /// Ends the process the way returning from `main` does: `exit(status)`
    /// runs every atexit handler (this image's finalizer included) and
    /// flushes stdio.
    pub fn exit(self, status: i32) -> ! {
        let trampoline = self.lookup(crate::arch::runtime::CALL_ENTRY);
        // Leak the image: its code must stay mapped while exit() runs its
        // destructors, and the process is ending anyway.
        std::mem::forget(self);
        match trampoline {
            Some(trampoline) => exit_below_the_program(trampoline, status),
            // SAFETY: plain libc exit.
            None => unsafe { libc::exit(status) },
        }
    }

    /// Runs this image's destructors and atexit handlers, once.
    pub fn finalize(&mut self) {
        if self.fini_state.is_some() {
            // SAFETY: runs the handlers registered with this image's handle,
            // while its code is still mapped.
            unsafe { __cxa_finalize(self.dso_handle as *mut c_void) };
            self.fini_state = None;
        }
    }
}

/// `exit(status)` (atexit handlers, the image's finalizer among them, then
/// stdio's flush) called through the entry trampoline, as `main`'s return
/// reaches it natively under `__libc_start_main`: an exception thrown out
/// of an exit handler then stops at the trampoline's end of stack and
/// `std::terminate` says so, instead of unwinding into jitrun's frames
/// (whose personality aborts silently on a foreign exception).
fn exit_below_the_program(trampoline: u64, status: c_int) -> ! {
    // SAFETY: the trampoline is the runtime piece in the image's text; it
    // calls `exit(status, ...)`, whose extra arguments are ignored.
    unsafe {
        let call_entry = std::mem::transmute::<u64, CallEntryFn>(trampoline);
        call_entry(libc::exit as *const () as u64, status, std::ptr::null_mut(), std::ptr::null_mut(), 0);
    }
    unreachable!("exit returned")
}

/// The kernel's auxiliary vector for this process, as (type, value)
/// pairs ending with `AT_NULL`, read once (`/proc/self/auxv`); just
/// `AT_NULL` if it cannot be read.
fn process_auxiliary_vector() -> &'static [u64] {
    static AUXV: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    AUXV.get_or_init(|| {
        let bytes = std::fs::read("/proc/self/auxv").unwrap_or_default();
        let mut words: Vec<u64> =
            bytes.chunks_exact(8).map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes"))).collect();
        let end = words.chunks_exact(2).position(|pair| pair[0] == libc::AT_NULL).map_or(words.len() & !1, |i| 2 * i);
        words.truncate(end);
        words.extend([libc::AT_NULL, 0]);
        words
    })
}

/// What the kernel puts on a new process's stack, from where `%rsp`
/// points: `argc`, the `argv` pointers and a null, the `envp` pointers and
/// a null, then the auxiliary vector, with `AT_ENTRY` naming `entry` and
/// `AT_PHDR`/`AT_PHNUM` the image's program headers (those
/// `dl_iterate_phdr` lists), as an executable's would be.
///
/// # Safety
/// `argv` holds `argc` pointers and a null; `envp` is null or a
/// null-terminated array.
unsafe fn process_entry_stack(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char, entry: u64) -> Vec<u64> {
    let argc = argc.max(0) as usize;
    let mut words = Vec::with_capacity(argc + 64);
    words.push(argc as u64);
    // SAFETY: the caller's contract.
    words.extend((0..argc).map(|i| unsafe { *argv.add(i) } as u64));
    words.push(0);
    let mut entry_pointer = envp;
    // SAFETY: a null-terminated array (the caller's contract).
    while !entry_pointer.is_null() && !unsafe { *entry_pointer }.is_null() {
        // SAFETY: inside the array, before its null.
        unsafe {
            words.push(*entry_pointer as u64);
            entry_pointer = entry_pointer.add(1);
        }
    }
    words.push(0);
    let headers = crate::host::dladdr::image_headers_at(entry);
    words.extend(process_auxiliary_vector().chunks_exact(2).flat_map(|pair| {
        let value = match (pair[0], headers) {
            (libc::AT_ENTRY, _) => entry,
            (libc::AT_PHDR, Some((at, _))) => at,
            (libc::AT_PHNUM, Some((_, count))) => count,
            _ => pair[1],
        };
        [pair[0], value]
    }));
    words
}

extern "C" {
    // glibc's profiling (`-pg`), which gcrt1.o starts natively.
    fn __monstartup(lowpc: libc::c_ulong, highpc: libc::c_ulong);
    fn _mcleanup();
}

/// What gcrt1.o does before the initializers of a program built with
/// `-pg`: `mcount` records calls within `code` (and profiling samples the
/// program counter there), and `gmon.out` is written at exit, after every
/// exit handler registered later. Once per process: a second start would
/// write the file twice.
fn start_profiling((low, high): (u64, u64)) {
    static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if STARTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    extern "C" fn write_profile(_: *mut c_void) {
        // SAFETY: glibc's; profiling was started below.
        unsafe { _mcleanup() };
    }
    // SAFETY: glibc's profiling entry points, given the image's code range
    // (mapped for the process's life); the handler runs at exit.
    unsafe {
        __monstartup(low as libc::c_ulong, high as libc::c_ulong);
        __cxa_atexit(write_profile, std::ptr::null_mut(), std::ptr::null_mut());
    }
}

/// What a program finds in its thread as a new process: errno 0 (jitrun's
/// own calls leave theirs, ENOTTY from isatty, say) and the floating-point
/// environment the kernel sets.
fn thread_state_of_a_new_process() {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = 0 };
    crate::support::machine::reset_floating_point_environment();
}

/// A C `argv`: the strings and the null-terminated pointer array, and the
/// same arguments laid out for the process's argument area when it has
/// room for them (see [`ARGUMENT_AREA`]).
pub(crate) struct ProgramArgs {
    /// The strings back to back, each with its NUL, which `ptrs` point into.
    strings: Vec<u8>,
    ptrs: Vec<*mut c_char>,
    /// The area's new contents (the strings with zeros around them: see
    /// [`argument_area_layout`]) and the argv pointing into it. Prepared
    /// ahead, so a forked child only copies it.
    in_area: Option<(Vec<u8>, Vec<*mut c_char>)>,
}

impl ProgramArgs {
    pub(crate) fn new<S: AsRef<OsStr>>(program: &OsStr, args: &[S]) -> Result<ProgramArgs> {
        let mut strings = Vec::new();
        let mut offsets = Vec::with_capacity(args.len() + 1);
        for arg in std::iter::once(program).chain(args.iter().map(AsRef::as_ref)) {
            let arg = CString::new(arg.as_bytes()).context("an argument contains a NUL byte")?;
            offsets.push(strings.len());
            strings.extend_from_slice(arg.as_bytes_with_nul());
        }
        let pointers_from =
            |first: usize| offsets.iter().map(|&o| (first + o) as *mut c_char).chain([std::ptr::null_mut()]).collect();
        let ptrs = pointers_from(strings.as_ptr() as usize);
        // (The memory map is read now, before a fork: a child only copies it.)
        let in_area = ARGUMENT_AREA.get().and_then(|&area| {
            let (bytes, first) = argument_area_layout(&strings, area, memory_map().is_some())?;
            Some((bytes, pointers_from(first)))
        });
        if let Some(argv) = argument_vector_slots(args.len() + 1) {
            point_loaders_argv_at(argv);
        }
        Ok(ProgramArgs { strings, ptrs, in_area })
    }

    /// The argv to pass: in the argument area, written now (the process's
    /// own memory; a forked child's own copy of it), else the strings'.
    /// Either way the process's argument bounds are set to them (see
    /// [`fit_arguments`]).
    pub(crate) fn install(&self) -> *mut *mut c_char {
        let ptrs = match (&self.in_area, ARGUMENT_AREA.get()) {
            (Some((bytes, ptrs)), Some(&(start, end))) => {
                // SAFETY: `bytes` is exactly the area's size
                // (argument_area_layout), and the area is writable.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), start as *mut u8, bytes.len()) };
                // SAFETY: only the command line notes an argument area, and
                // it runs programs with no other thread of its own.
                unsafe { fit_arguments(end - self.strings.len(), end) };
                ptrs
            }
            (_, area) => {
                // Too long for the area (a batch run's arguments, say):
                // the command line shows them where they are.
                if area.is_some() {
                    let start = self.strings.as_ptr() as usize;
                    // SAFETY: as above; the strings live as long as the run.
                    unsafe { fit_arguments(start, start + self.strings.len()) };
                }
                &self.ptrs
            }
        };
        crate::host::dladdr::set_program_name(ptrs[0]);
        place_in_argument_vector(ptrs).unwrap_or(ptrs.as_ptr() as *mut _)
    }

    fn argc(&self) -> c_int {
        (self.ptrs.len() - 1) as c_int
    }
}

/// The process's argument strings as the kernel laid them out, `[start,
/// end)`: what `/proc/PID/cmdline` and `ps` show, and where programs such
/// as Redis or PostgreSQL write their process title. Recorded by the
/// command line only ([`note_argument_area`]); a library caller's own
/// arguments are never touched.
static ARGUMENT_AREA: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();

/// jitrun's own `argv` array as the kernel laid it out on the stack, and
/// its `argc`: the slots a program's shorter `argv` is moved into
/// ([`place_in_argument_vector`]). Recorded by the command line only.
static ARGUMENT_VECTOR: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();

/// Moves the null-terminated `ptrs` into the last slots of jitrun's own
/// `argv` array, with the count in the slot before them, and returns where
/// they start: natively, `argv[argc + 1]` is the first environment pointer
/// (`envp`), and after the environment's null come the auxiliary vector's
/// entries; programs that find their environment or auxiliary vector by
/// walking on from argv (startup code, old portability layers) need that.
/// `None` where no array was noted or the arguments outnumber jitrun's own.
fn place_in_argument_vector(ptrs: &[*mut c_char]) -> Option<*mut *mut c_char> {
    let argc = ptrs.len() - 1;
    let argv = argument_vector_slots(argc)?;
    // SAFETY: `argument_vector_slots` found `argc` slots at `argv` and one
    // before them in jitrun's own vector, whose null after them stays.
    // jitrun reads its own arguments only before a program runs.
    unsafe {
        std::ptr::copy_nonoverlapping(ptrs.as_ptr(), argv, argc);
        *(argv.sub(1) as *mut usize) = argc;
    }
    Some(argv)
}

/// Where in jitrun's own `argv` array (see [`place_in_argument_vector`]) a
/// program's `argc` arguments go: its last `argc` slots, with one more
/// before them for the count (at `argv[-1]` natively). `None` where no
/// array was noted or the arguments outnumber jitrun's own.
fn argument_vector_slots(argc: usize) -> Option<*mut *mut c_char> {
    let &(vector, vector_argc) = ARGUMENT_VECTOR.get()?;
    let first = vector_argc.checked_sub(argc).filter(|&first| first >= 1)?;
    // SAFETY: `vector` has `vector_argc` slots (note_argument_area's
    // contract), and `first` is one of them.
    Some(unsafe { (vector as *mut *mut c_char).add(first) })
}

/// Points the dynamic loader's `_dl_argv` at the program's `argv` (where
/// [`place_in_argument_vector`] will put it): the loader names the
/// executable by `_dl_argv[0]` (`dladdr` of an address in jitrun's own
/// code; its error messages), and once the program's arguments moved into
/// jitrun's vector that slot may hold the count (`dladdr` then reported the
/// file name 0x1, and printing it crashed). Written once per argument
/// count, before any fork.
fn point_loaders_argv_at(argv: *mut *mut c_char) {
    static LOADERS_ARGV: crate::host::loader::LazyLibcFunction =
        crate::host::loader::LazyLibcFunction::new(c"_dl_argv");
    let Some(slot) = LOADERS_ARGV.resolve() else { return };
    // SAFETY: the loader's `char **_dl_argv`, a pointer-sized variable.
    if unsafe { std::ptr::read_volatile(slot as *const usize) } != argv as usize {
        // In the loader's read-only-after-relocation data: written as a
        // GOT entry is.
        crate::host::copyreloc::write_protected_word(slot as u64, argv as u64);
    }
}

/// Records jitrun's own `argc`/`argv` strings as the area a program's
/// arguments are later copied into ([`Image::run_main`]), if they are laid
/// out back to back as the kernel does, and the `argv` array itself, whose
/// last slots the program's `argv` then takes.
///
/// # Safety
/// `argv` must be the process's `argv` from the C runtime, with `argc`
/// valid strings and a null after them, and nothing may read those strings
/// or that array after the program's arguments replaced them (jitrun
/// copies its own at start-up).
pub unsafe fn note_argument_area(argc: c_int, argv: *const *const c_char) {
    if argc < 1 || argv.is_null() {
        return;
    }
    let _ = ARGUMENT_VECTOR.set((argv as usize, argc as usize));
    // SAFETY: the caller's contract: `argc` valid C strings.
    let strings: Vec<&CStr> = (0..argc as usize).map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }).collect();
    let start = strings[0].as_ptr() as usize;
    let mut end = start;
    for s in &strings {
        if s.as_ptr() as usize != end {
            return; // not contiguous: leave it alone
        }
        end += s.to_bytes_with_nul().len();
    }
    let _ = ARGUMENT_AREA.set((start, end));
}

/// The contents of the argument area `[start, end)` for `strings` (NUL-
/// terminated, back to back), zeros around them, and the address of the
/// first string there, or `None` if they do not fit.
///
/// With `at_end`, the strings end where the area ends (the zeros come
/// first), right before the environment strings, as the kernel lays out a
/// process started with these arguments; [`fit_arguments`] then moves the
/// process's argument bounds to them.
fn argument_area_layout(strings: &[u8], (start, end): (usize, usize), at_end: bool) -> Option<(Vec<u8>, usize)> {
    let room = end - start;
    let pad = room.checked_sub(strings.len())?;
    let before = if at_end { pad } else { 0 };
    let mut bytes = vec![0; room];
    bytes[before..before + strings.len()].copy_from_slice(strings);
    Some((bytes, start + before))
}

/// The kernel's record of where this process's code, data, heap, stack,
/// arguments and environment lie: `struct prctl_mm_map` of
/// `<linux/prctl.h>`, which `prctl(PR_SET_MM, PR_SET_MM_MAP)` takes whole.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct MemoryMap {
    start_code: u64,
    end_code: u64,
    start_data: u64,
    end_data: u64,
    start_brk: u64,
    brk: u64,
    start_stack: u64,
    arg_start: u64,
    arg_end: u64,
    env_start: u64,
    env_end: u64,
    auxv: u64,
    auxv_size: u32,
    exe_fd: u32,
}

/// Reads what a run needs to show the program's own command line (see
/// `fit_arguments`), if the command line noted an argument area:
/// call it where it costs nothing, such as on a thread waiting for the
/// link (reading `/proc/self/stat` takes ~30 µs here).
pub fn prepare_argument_area() {
    if ARGUMENT_AREA.get().is_some() {
        memory_map_as_read();
    }
}

/// The memory map as `/proc/self/stat` gave it, read once.
fn memory_map_as_read() -> Option<MemoryMap> {
    static MAP: std::sync::OnceLock<Option<MemoryMap>> = std::sync::OnceLock::new();
    *MAP.get_or_init(read_memory_map)
}

/// The memory map, if the kernel lets this process set it
/// (`prctl(PR_SET_MM_MAP)` needs no privilege, but a kernel built with
/// checkpoint/restore); checked once, by setting it unchanged, on the
/// thread about to run the program (its break must not move meanwhile).
fn memory_map() -> Option<MemoryMap> {
    static SETTABLE: std::sync::OnceLock<Option<MemoryMap>> = std::sync::OnceLock::new();
    // SAFETY: called only where an argument area was noted, by the command
    // line, whose other threads (the link's) are gone by then.
    *SETTABLE.get_or_init(|| memory_map_as_read().filter(|&map| unsafe { set_memory_map(map) }))
}

/// `map` as the process's memory map, with the current break.
///
/// # Safety
/// No other thread moves the break (`brk`) meanwhile: the kernel would
/// take back the break read here.
unsafe fn set_memory_map(mut map: MemoryMap) -> bool {
    if let Some(&(start, end)) = ENVIRONMENT_BLOCK.get() {
        (map.env_start, map.env_end) = (start, end);
    }
    // SAFETY: brk(0) only reports the current break; PR_SET_MM_MAP reads
    // a prctl_mm_map of the size passed.
    unsafe {
        map.brk = libc::syscall(libc::SYS_brk, 0) as u64;
        libc::prctl(
            libc::PR_SET_MM,
            libc::PR_SET_MM_MAP as libc::c_ulong,
            &map as *const MemoryMap as libc::c_ulong,
            std::mem::size_of::<MemoryMap>() as libc::c_ulong,
            0 as libc::c_ulong,
        ) == 0
    }
}

/// Fields 26-28 and 45-51 of `/proc/self/stat`. Read into a buffer on the
/// stack: on the main thread, a freed allocation would be the program's
/// first malloc's, and no longer zeroed.
fn read_memory_map() -> Option<MemoryMap> {
    let mut buffer = [0u8; 2048];
    // SAFETY: open/read/close of a proc file into a local buffer of the
    // size passed.
    let text = unsafe {
        let fd = libc::open(c"/proc/self/stat".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buffer.as_mut_ptr() as *mut c_void, buffer.len());
        libc::close(fd);
        &buffer[..usize::try_from(n).ok()?]
    };
    // The command name (field 2) is in parentheses and may hold spaces;
    // field 3, the state, follows its closing one.
    let rest = &text[text.iter().rposition(|&b| b == b')')? + 1..];
    let mut fields = [0u64; 52];
    // Fields 4 to 51; those read below are addresses (some others, such
    // as the terminal's process group, may be negative).
    for (i, field) in rest.split(|&b| b == b' ').filter(|f| !f.is_empty()).enumerate().skip(1).take(48) {
        fields[i + 3] = std::str::from_utf8(field).ok().and_then(|f| f.trim_end().parse().ok()).unwrap_or(0);
    }
    Some(MemoryMap {
        start_code: fields[26],
        end_code: fields[27],
        start_stack: fields[28],
        start_data: fields[45],
        end_data: fields[46],
        start_brk: fields[47],
        arg_start: fields[48],
        arg_end: fields[49],
        env_start: fields[50],
        env_end: fields[51],
        exe_fd: u32::MAX, // unchanged
        ..MemoryMap::default()
    })
    .filter(|m| m.arg_start < m.arg_end && m.env_start <= m.env_end)
}

/// The environment a restarted jitrun gave back to the program (see
/// [`show_environment_as_given`]), `[start, end)`.
static ENVIRONMENT_BLOCK: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();

/// Makes `/proc/self/environ` show the environment as it is now: for a
/// jitrun that restarted itself with changes to its environment
/// (`LD_PRELOAD` with a sanitizer's runtime, more static TLS) and undid
/// them, so that the program sees there what it was given, as `environ`
/// shows it. Takes effect with the program's arguments (`fit_arguments`).
/// Command line only, at start-up, single-threaded.
pub fn show_environment_as_given() {
    extern "C" {
        static environ: *const *const c_char;
    }
    let mut block = Vec::new();
    // SAFETY: the process's environment array, null-terminated, read at
    // start-up while no other thread changes it.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            block.extend_from_slice(CStr::from_ptr(*entry).to_bytes_with_nul());
            entry = entry.add(1);
        }
    }
    // Kept for the process's life: the kernel reads it for /proc/PID/environ.
    let block = block.leak();
    let start = block.as_ptr() as u64;
    let _ = ENVIRONMENT_BLOCK.set((start, start + block.len() as u64));
}

/// Sets the process's argument bounds to `[start, end)`, if [`memory_map`]
/// found that allowed: the process then looks as if the kernel had started
/// it with the program's arguments. `/proc/self/cmdline`, what `ps` and
/// `pgrep -f` read, is exactly them, not jitrun's longer command line
/// padded with empty arguments; in the argument area they end where the
/// environment strings begin ([`argument_area_layout`] put them there), so
/// that a program setting its process title over argv and environ (Redis,
/// PostgreSQL, perl's `$0`) finds the room it would natively. One `prctl`.
///
/// # Safety
/// As for [`set_memory_map`].
unsafe fn fit_arguments(start: usize, end: usize) {
    let Some(mut map) = memory_map() else { return };
    map.arg_start = start as u64;
    map.arg_end = end as u64;
    // SAFETY: the caller's contract.
    unsafe { set_memory_map(map) };
}

/// Registers the finalizers to run at `exit()` or `__cxa_finalize`, the way
/// `__libc_start_main` registers the executable's finalizer before running
/// constructors (so it runs after atexit handlers registered later). The
/// returned box must live until `__cxa_finalize(dso_handle)` or `exit()` ran it.
fn register_finalizer(finalizers: Finalizers, dso_handle: u64) -> Box<Finalizers> {
    let state = Box::new(finalizers);
    let arg = &*state as *const Finalizers as *mut c_void;
    // SAFETY: `arg` stays valid as long as the caller keeps the box, which
    // it does until the handlers for this image's unique `__dso_handle` ran.
    unsafe { __cxa_atexit(run_finalizers, arg, dso_handle as *mut c_void) };
    state
}

extern "C" fn run_finalizers(arg: *mut c_void) {
    // SAFETY: `arg` is the Finalizers registered by `register_finalizer`
    // (or the image's own, for a process that ends with its run).
    let state = unsafe { &*(arg as *const Finalizers) };
    let fini_array = (0..state.fini.count).rev().map(|i| {
        // SAFETY: inside the mapped `.fini_array`.
        unsafe { std::ptr::read((state.fini.start + 8 * i) as *const u64) }
    });
    for f in fini_array.filter(|&f| f != 0 && f != u64::MAX).chain(state.fini_code) {
        // SAFETY: a relocated destructor address of the image, or its
        // `.fini` code, which returns like a function.
        unsafe { std::mem::transmute::<u64, FiniFn>(f)() };
    }
}

impl crate::diagnostics::check::CheckedImage for Image {
    fn cpu(&self) -> crate::arch::Cpu {
        crate::arch::HOST
    }

    fn link_info(&self) -> &crate::graph::linkinfo::LinkInfo {
        Image::link_info(self)
    }

    fn lookup(&self, name: &str) -> Option<u64> {
        Image::lookup(self, name)
    }

    fn macho_names(&self) -> bool {
        self.symbols.macho_names
    }

    fn bytes_at(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let image = self.range();
        if !image.contains(&addr) {
            return None;
        }
        let len = (image.end - addr).min(len) as usize;
        // SAFETY: [addr, addr + len) lies inside the mapped image, whose
        // segments are all readable once initialized, for as long as the
        // image (borrowed here) lives.
        Some(unsafe { std::slice::from_raw_parts(addr as *const u8, len) })
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        self.finalize();
        // Before the allocator's code goes (blocks libc got from it stay
        // with libc: dropping an image that replaced malloc is a risk).
        if let Some(interposition) = &self.got_interposition {
            interposition.uninstall();
        }
        if let Some(key) = self.key.take() {
            if let Err(e) = self.mapper.deinitialize(key) {
                log::warn!("deinitialize: {:#}", e);
            }
        }
        if let Err(e) = self.mapper.release(self.base) {
            log::warn!("release: {:#}", e);
        }
        // Libraries close after the image is gone (field drop order).
    }
}

/// Undoes what the Rust runtime changed in the process that a C program
/// expects at its defaults, and names the process after the program.
///
/// - SIGPIPE: Rust ignores it; a C program dies of it.
/// - SIGSEGV/SIGBUS: Rust's stack-overflow handler would turn a deep
///   recursion (SIGSEGV natively) into an abort with a Rust message.
/// - `program_invocation_name`/`program_invocation_short_name` (used by
///   `assert()`, `err()`, `error()`, `getopt` messages) follow `argv[0]`
///   without a `.o` suffix.
pub fn prepare_process_for_program(argv0: &OsStr) {
    default_program_signals();
    // libc keeps pointing at these until the next call replaces them, so
    // they live in a static: one pair at a time, not one leak per run.
    static NAMES: std::sync::Mutex<Option<ProcessNames>> = std::sync::Mutex::new(None);
    let names = ProcessNames::new(argv0);
    let mut current = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    names.install();
    // The previous pair is dropped only now that nothing points at it.
    *current = Some(names);
}

/// SIGPIPE, SIGSEGV and SIGBUS at their defaults, as a C program starts
/// (a Rust caller's runtime ignores SIGPIPE and handles the other two).
pub(crate) fn default_program_signals() {
    default_program_signals_but_crashes();
    if SIGNALS_AS_STARTED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    for signal in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: restoring a signal's default disposition.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
}

/// SIGPIPE at its default, for a run whose crash handler is about to take
/// SIGSEGV and SIGBUS anyway.
pub(crate) fn default_program_signals_but_crashes() {
    if SIGNALS_AS_STARTED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    // SAFETY: restoring a signal's default disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Set by the command line, which changes none of these signals'
/// dispositions itself: the program gets them as the process started (an
/// ignored SIGPIPE stays ignored, as across exec) and as the libraries
/// loaded for it set them (ASan's SIGSEGV handler), as natively.
static SIGNALS_AS_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Leaves SIGPIPE, SIGSEGV and SIGBUS as the process has them for the
/// program (see [`SIGNALS_AS_STARTED`]); for a caller that never changes them.
pub fn keep_signal_dispositions_for_program() {
    SIGNALS_AS_STARTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// glibc's `program_invocation_name` and `program_invocation_short_name`
/// for a program run as `argv0`.
pub(crate) struct ProcessNames {
    full: CString,
    short: CString,
}

impl ProcessNames {
    /// `prog.o` runs as `prog` would after `cc prog.o -o prog`: messages
    /// from assert(), err() and error() name the program, not the object file.
    pub(crate) fn new(argv0: &OsStr) -> ProcessNames {
        let argv0 = argv0.as_bytes();
        let name = argv0.strip_suffix(b".o").filter(|n| !n.is_empty() && !n.ends_with(b"/")).unwrap_or(argv0);
        let full = CString::new(name).unwrap_or_default();
        let short = CString::new(name.rsplit(|&b| b == b'/').next().unwrap_or(name)).unwrap_or_default();
        ProcessNames { full, short }
    }

    /// Points glibc's variables at these strings, which must then outlive
    /// every use (until replaced, or until the process ends), and names the
    /// calling thread (the process's `comm`, as `ps` shows it) after the program.
    pub(crate) fn install(&self) {
        // SAFETY: PR_SET_NAME copies at most 16 bytes of a NUL-terminated
        // string. The system call itself: as exec names the process, unseen
        // by a sanitizer's `prctl` wrapper (which would put the name on the
        // main thread in its reports).
        unsafe { libc::syscall(libc::SYS_prctl, libc::PR_SET_NAME, self.short.as_ptr()) };
        let slots = process_name_slots();
        for (slot, value) in [(slots[0], &self.full), (slots[1], &self.short)] {
            // The image's copy too, if `-fno-pic` code made one: libc and
            // the program read that one then.
            let copy = slot.and_then(crate::host::copyreloc::copy_of);
            for addr in slot.into_iter().chain(copy) {
                // SAFETY: the glibc variable (or the image's copy of it) is
                // a `char *`; the caller keeps the string alive while it is
                // installed.
                unsafe { std::ptr::write(addr as *mut *const c_char, value.as_ptr()) };
            }
        }
    }
}

/// Where glibc keeps `program_invocation_name` and
/// `program_invocation_short_name`, looked up once: a parent that forks
/// runs looks them up before the first fork (see `run.rs`), so children
/// do not pay for `dlsym`.
pub(crate) fn process_name_slots() -> [Option<u64>; 2] {
    static SLOTS: std::sync::OnceLock<[Option<u64>; 2]> = std::sync::OnceLock::new();
    *SLOTS.get_or_init(|| {
        [
            crate::host::loader::lookup_global(c"program_invocation_name"),
            crate::host::loader::lookup_global(c"program_invocation_short_name"),
        ]
    })
}

/// libc's `__libc_single_threaded`. Looked up, not imported: an import's
/// GOT entry is one a copy relocation re-points, and the compiler assumes
/// it never changes.
static LIBC_SINGLE_THREADED: crate::host::loader::LazyLibcFunction =
    crate::host::loader::LazyLibcFunction::new(c"__libc_single_threaded");

/// Tells glibc that the calling thread is again the process's only one,
/// as it is in a native process that never started a thread. glibc's fork
/// then skips locking every malloc arena and stdio's list (fewer
/// copy-on-write faults in each isolated run), malloc and system-call
/// wrappers take their single-threaded paths, and the program, libstdc++'s
/// reference counts included, sees the value a native program would.
///
/// Like glibc's own `pthread_create`, which clears it, this writes libc's
/// `__libc_single_threaded` and, through libc's GOT, the copy a program
/// built without `-fPIC` reads (a copy relocation in the image).
///
/// Nothing happens if another thread lives (one a library's constructor
/// started).
///
/// # Safety
/// No other thread of jitrun's own runs user code, now or until one is
/// created again (which clears the flag): the link's scoped helpers are
/// joined.
pub unsafe fn declare_single_threaded() {
    let Some(own) = LIBC_SINGLE_THREADED.resolve() else { return };
    crate::support::threads::note_libc_single_threaded_flag(own);
    // Still set: no thread was started since the process began or since
    // the flag and its copies were last set here (glibc only ever clears
    // it), so all is as it should be; most runs start no thread.
    if crate::support::threads::libc_says_single_threaded() {
        return;
    }
    // A library's constructor may have started a thread of its own, which
    // natively would have cleared the flag too (procfs counts a task
    // directory's links as its threads plus two; a short path's stat
    // allocates nothing).
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self/task").map_or(true, |task| task.nlink() != 3) {
        return;
    }
    let copies = crate::host::loader::got_values_of(own as u64, c"__libc_single_threaded");
    for flag in std::iter::once(own as u64).chain(copies) {
        // SAFETY: a byte of libc's or of the image's copy of it; the
        // caller guarantees that no other thread reads or writes it.
        unsafe { *(flag as *mut libc::c_char) = 1 };
    }
}
