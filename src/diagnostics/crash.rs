//! Crash reports: when loaded code dies from SIGSEGV, SIGBUS, SIGILL,
//! SIGFPE or SIGABRT, say which signal, where, and through which loaded
//! functions, then die from the same signal so the exit status is 128+N as
//! for a native executable.
//!
//! The handler reads a sorted table of address ranges with preformatted
//! names and the source lines of objects built with `-g` (see
//! `line_table`), published through one atomic pointer, formats into a stack
//! buffer with `core::fmt` (no allocation, no locks) and calls `write(2)`.
//! The table is built before the program runs ([`install`]) or, by the
//! command line, only when a crash needs it ([`build_table_when_needed`]):
//! on a thread started then, so no thread of jitrun's runs beside the
//! program.
//!
//! Backtrace: `_Unwind_Backtrace` from the handler. libgcc's unwinder steps
//! through the kernel's signal frame (it recognizes `__restore_rt`) into
//! the faulting frame and then through the loaded code with the
//! `.eh_frame` jitrun registered, so it is right at `-O2` where frame
//! pointers are gone. Limits: the unwinder is not formally
//! async-signal-safe (it takes libgcc's object mutex, and
//! `dl_iterate_phdr`'s lock for frames outside the image); to keep it from
//! allocating in the handler, [`install`] makes it sort the image's
//! registered FDEs beforehand. A crash inside malloc or the loader can still
//! deadlock the report. When the unwinder cannot start (a jump to address 0
//! or into data has no FDE), a conservative scan of the stack lists words
//! that are return addresses into the image (the byte before them ends a
//! `call`), which may include stale frames; those lines are marked `?`.

use crate::support::fixed_buffer::FixedBuffer;
use std::ffi::{c_int, c_void, CString};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::graph::line_table::LineTable;
use crate::graph::linkinfo::LinkInfo;

const SIGNALS: [c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT];

/// One symbolizable range: `[start, end)` is a name, in a place
/// (`" (object.o, .text)"`). Compact (32 bytes, names in one buffer):
/// a parent that forks isolated runs copies its page tables at each fork,
/// and a table of one allocation per symbol cost ~60 µs per run for 8,000
/// functions.
struct Range {
    start: u64,
    end: u64,
    /// `CrashTable::names[name..name + name_len]`.
    name: u32,
    name_len: u32,
    /// Index into `CrashTable::places`, shared by every symbol of one input section.
    place: u32,
    is_function: bool,
    /// jitrun's own runtime pieces (the entry trampoline): left out of backtraces.
    is_runtime: bool,
    /// No size was recorded: `end` is the section's end, cut at the next
    /// symbol by [`Ranges::finish`].
    open_end: bool,
}

/// Prepared before the program runs; read by the handler only.
struct CrashTable {
    image: std::ops::Range<u64>,
    /// Executable ranges of the image, for the stack scan.
    code: Vec<std::ops::Range<u64>>,
    ranges: Vec<Range>,
    names: String,
    places: Vec<Box<str>>,
    lines: std::sync::Arc<LineTable>,
    /// Where the report's outcome goes, if `--report` was given.
    report: Option<ReportSink>,
    print: bool,
    /// Highest stack address the scan may read on the main thread.
    stack_top: u64,
}

/// The run report's preformatted head and its file, written by the handler.
pub struct ReportSink {
    pub path: CString,
    pub head: Vec<u8>,
}

static TABLE: AtomicPtr<CrashTable> = AtomicPtr::new(std::ptr::null_mut());
static ALT_STACK: AtomicUsize = AtomicUsize::new(0);

/// What a crash table is made of: the image, its executable ranges, and
/// its symbol ranges with their names and places. Built from the link info
/// ([`prepare`]) or straight from the link model
/// (`link::DeferredLinkInfo::prepare_crash_table`).
#[derive(Default)]
pub(crate) struct Ranges {
    pub(crate) image: std::ops::Range<u64>,
    pub(crate) code: Vec<std::ops::Range<u64>>,
    ranges: Vec<Range>,
    names: String,
    places: Vec<Box<str>>,
    /// Per place: whether it is in jitrun's runtime object.
    place_is_runtime: Vec<bool>,
    /// Source lines of the objects built with `-g`.
    pub(crate) lines: std::sync::Arc<LineTable>,
}

impl Ranges {
    /// No symbols yet, for the image at `image` with code at `code`.
    pub(crate) fn new(image: std::ops::Range<u64>, code: Vec<std::ops::Range<u64>>) -> Ranges {
        Ranges { image, code, ..Ranges::default() }
    }

    /// A place, `" (object.o, .text)"`; returns its index for [`Ranges::push`].
    pub(crate) fn add_place(&mut self, object: &str, section: &str) -> u32 {
        self.places.push(format!(" ({}, {})", object, section).into());
        self.place_is_runtime.push(object == crate::arch::runtime::RUNTIME_OBJECT);
        self.places.len() as u32 - 1
    }

    /// A symbol at `start`; `size` 0 means up to the next symbol, at most
    /// `section_end`.
    pub(crate) fn push(&mut self, start: u64, size: u64, section_end: u64, name: &str, place: u32, is_function: bool) {
        let is_runtime = self.place_is_runtime.get(place as usize).copied().unwrap_or(false);
        let (end, open_end) = if size > 0 { (start.saturating_add(size), false) } else { (section_end, true) };
        // Offsets past 4 GiB of names cannot happen for a table built in memory; clamp anyway.
        let offset = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push_str(name);
        let name_len = u32::try_from(name.len()).unwrap_or(0);
        let end = end.max(start + 1);
        self.ranges.push(Range { start, end, name: offset, name_len, place, is_function, is_runtime, open_end });
    }

    /// Sorts the ranges and ends each size-less one at the next symbol.
    pub(crate) fn finish(&mut self) {
        // By start alone (cheaper to compare), then the few symbols that
        // share a start by end and name.
        self.ranges.sort_unstable_by_key(|r| r.start);
        for run in self.ranges.chunk_by_mut(|a, b| a.start == b.start) {
            if run.len() > 1 {
                run.sort_unstable_by_key(|r| (r.end, r.name));
            }
        }
        for i in 0..self.ranges.len() {
            if !self.ranges[i].open_end {
                continue;
            }
            let start = self.ranges[i].start;
            if let Some(next) = self.ranges[i + 1..].iter().map(|r| r.start).find(|&a| a > start) {
                let range = &mut self.ranges[i];
                range.end = range.end.min(next).max(start + 1);
            }
        }
        self.ranges.shrink_to_fit();
        self.names.shrink_to_fit();
    }
}

fn build_ranges(info: &LinkInfo) -> Ranges {
    // Input sections in the text segment, with their ends, by (object, name).
    let text: Vec<(u64, u64)> =
        info.sections.iter().filter(|o| o.segment == "text").map(|o| (o.address, o.address + o.size.max(1))).collect();
    let code_sections: std::collections::HashMap<(&str, &str), u64> = info
        .input_sections
        .iter()
        .filter(|s| text.iter().any(|&(start, end)| start <= s.address && s.address < end))
        .map(|s| ((s.object.as_str(), s.name.as_str()), s.address + s.size))
        .collect();
    let code = info.segments.iter().filter(|s| s.protection.contains('x')).map(|s| s.address..s.address + s.size);
    let mut out = Ranges::new(info.base..info.base + info.size, code.collect());
    let mut place_index: rustc_hash::FxHashMap<(&str, &str), u32> = Default::default();
    for sym in &info.symbols {
        let section_end = code_sections.get(&(sym.object.as_str(), sym.section.as_str())).copied();
        if sym.kind != "function" && section_end.is_none() {
            continue;
        }
        let place = *place_index
            .entry((sym.object.as_str(), sym.section.as_str()))
            .or_insert_with(|| out.add_place(&sym.object, &sym.section));
        let section_end = section_end.unwrap_or(sym.address + sym.size);
        out.push(sym.address, sym.size, section_end, &sym.name, place, sym.kind == "function");
    }
    // Stubs are code too: name them by their target.
    if !info.stubs.is_empty() {
        let place = out.add_place("<linker tables>", ".plt");
        for stub in &info.stubs {
            out.push(
                stub.address,
                stub.size,
                stub.address + stub.size,
                &format!("stub for {}", stub.target),
                place,
                true,
            );
        }
    }
    out.finish();
    out.lines = info.lines.clone().unwrap_or_default();
    out
}

/// Installs the handler for the image described by `info`. `print` says
/// whether to print the crash report on stderr; `report` receives the
/// outcome for `--report`. Call before the program's constructors run, so
/// handlers the program installs itself replace this one.
pub fn install(info: &LinkInfo, print: bool, report: Option<ReportSink>) {
    prepare(info, print, report);
    activate();
}

/// Builds and publishes the crash table without touching signal handlers:
/// a parent that forks isolated runs prepares once, and each child calls
/// [`activate`] after resetting its signals for the program.
pub fn prepare(info: &LinkInfo, print: bool, report: Option<ReportSink>) {
    publish(build_ranges(info), print, report);
}

/// Records the calling thread as the one that runs the program: its stack
/// is what the crash report's fallback scan reads, whichever thread builds
/// the table.
pub fn note_program_thread() {
    let stack_marker = 0u8;
    PROGRAM_STACK_TOP.store(&stack_marker as *const u8 as usize, Ordering::Release);
}

static PROGRAM_STACK_TOP: AtomicUsize = AtomicUsize::new(0);

/// Publishes a table built from `ranges` (see [`prepare`]).
pub(crate) fn publish(ranges: Ranges, print: bool, report: Option<ReportSink>) {
    let stack_marker = 0u8;
    let stack_top = match PROGRAM_STACK_TOP.load(Ordering::Acquire) {
        0 => &stack_marker as *const u8 as u64,
        top => top as u64,
    };
    let Ranges { image, code, ranges, names, places, lines, .. } = ranges;
    let table = Box::new(CrashTable { image, code, ranges, names, places, lines, report, print, stack_top });
    let old = TABLE.swap(Box::into_raw(table), Ordering::AcqRel);
    TABLE_PUBLISHED.store(1, Ordering::Release);
    futex_wake(&TABLE_PUBLISHED, i32::MAX);
    if !old.is_null() {
        // The old table may still be read by a handler running on another
        // thread; a few bytes are not worth that race, so it is leaked.
        log::trace!("replacing the crash table");
    }
}

/// How to build the table when a crash first needs it: building costs as
/// much as a third of a link and most runs never crash. Set by
/// [`build_table_when_needed`], taken (once) by whoever builds.
type TableSource = Box<dyn FnOnce() + Send>;
static TABLE_SOURCE: AtomicPtr<TableSource> = AtomicPtr::new(std::ptr::null_mut());

/// Registers `build`, which must [`publish`] the table, to run only when a
/// crash (or [`wait_for_table`]) needs it. A crash runs it on a thread
/// started then, so the program runs with no helper thread of jitrun's
/// beside it (a native process has one thread; `unshare(CLONE_NEWUSER)`
/// and gtest's death tests check) and the table is allocated in that
/// thread's malloc arena, not in the program's heap. A forked child builds
/// from its own copy, if it crashes. `print` says whether that table
/// prints reports (the handler prints the headline before asking for it).
pub fn build_table_when_needed(print: bool, build: impl FnOnce() + Send + 'static) {
    LAZY_TABLE_PRINTS.store(print, Ordering::Release);
    // Asked now: starting the builder must not look anything up.
    crate::host::driver_runtime::thread_sanitizer_is_loaded();
    let source: Box<TableSource> = Box::new(Box::new(build));
    let old = TABLE_SOURCE.swap(Box::into_raw(source), Ordering::AcqRel);
    if !old.is_null() {
        // SAFETY: a pointer from Box::into_raw above that nobody took.
        drop(unsafe { Box::from_raw(old) });
    }
}

/// Whether the table a registered source builds prints reports.
static LAZY_TABLE_PRINTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Takes the registered source, if any (async-signal-safe: one atomic swap).
fn take_table_source() -> Option<Box<TableSource>> {
    let source = TABLE_SOURCE.swap(std::ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: from Box::into_raw in build_table_when_needed; the swap makes
    // this the only owner.
    (!source.is_null()).then(|| unsafe { Box::from_raw(source) })
}

/// 1 once a table is published: the futex word its waiters sleep on.
static TABLE_PUBLISHED: AtomicI32 = AtomicI32::new(0);

/// Sleeps while `word` is 0, for at most `timeout`; returns at once if it
/// is not 0, and may return early (callers re-check). Async-signal-safe.
fn futex_wait(word: &AtomicI32, timeout: Option<&libc::timespec>) {
    let timeout = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: FUTEX_WAIT on a live word of this process, with a valid or
    // null timeout.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, 0, timeout) };
}

/// Wakes up to `waiters` threads sleeping on `word`. Async-signal-safe.
fn futex_wake(word: &AtomicI32, waiters: i32) {
    // SAFETY: FUTEX_WAKE on a live word of this process.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, waiters) };
}

/// Builds the table [`build_table_when_needed`] registered, on the calling
/// thread (not from a signal handler); whether one is published. A parent
/// of isolated runs calls it once, before the first fork.
pub fn wait_for_table() -> bool {
    if let Some(build) = take_table_source() {
        build();
    }
    is_prepared()
}

/// The table for a crash being handled: built on a new thread if only its
/// source is registered, waited for at most two seconds. Starting a thread
/// from a signal handler is not async-signal-safe (pthread_create
/// allocates the thread's TLS vector): a crash inside malloc can block it,
/// and the watchdog then ends the process with the crash's signal.
fn table_for_crash(sig: c_int) -> *mut CrashTable {
    const STEP_MS: i64 = 100;
    let table = TABLE.load(Ordering::Acquire);
    if !table.is_null() {
        return table;
    }
    // The first crashing thread starts the builder (under the watchdog);
    // one crashing at the same time waits for the same table.
    let started_here = match take_table_source() {
        Some(source) => {
            BUILDER_STARTED.store(true, Ordering::Release);
            WATCHED_STEP.store(STEP_TABLE, Ordering::Release);
            arm_unwind_watchdog(sig);
            start_table_builder(source);
            true
        }
        None if BUILDER_STARTED.load(Ordering::Acquire) => false,
        None => return table,
    };
    let mut waited_ms = 0;
    while TABLE_PUBLISHED.load(Ordering::Acquire) == 0 && waited_ms < 2000 {
        // Returns at once if the table was published meanwhile.
        futex_wait(&TABLE_PUBLISHED, Some(&libc::timespec { tv_sec: 0, tv_nsec: STEP_MS * 1_000_000 }));
        // A whole step even when woken early: a bound, not a clock.
        waited_ms += STEP_MS;
    }
    if started_here {
        disarm_unwind_watchdog();
        WATCHED_STEP.store(STEP_UNWIND, Ordering::Release);
    }
    TABLE.load(Ordering::Acquire)
}

/// Set once a crash started the table's builder thread.
static BUILDER_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What the watchdog interrupts: the unwinder, or the start of the
/// thread that builds the table.
static WATCHED_STEP: AtomicI32 = AtomicI32::new(STEP_UNWIND);
const STEP_UNWIND: i32 = 0;
const STEP_TABLE: i32 = 1;

/// Starts a thread that runs `source` (a builder that publishes the table).
/// If the thread cannot start, nobody publishes and the wait times out.
fn start_table_builder(source: Box<TableSource>) {
    let builder = crate::support::heap::counted_as_other_thread(move || {
        crate::support::threads::keep_signals_off_this_thread();
        // The report goes on without names rather than jitrun failing.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(source));
    });
    let detached = crate::host::driver_runtime::thread_sanitizer_is_loaded();
    let _ = crate::support::threads::spawn_unjoined_thread(c"jitrun-crash", detached, builder);
}

/// Whether [`prepare`] has published a table in this process.
pub fn is_prepared() -> bool {
    !TABLE.load(Ordering::Acquire).is_null()
}

/// Installs the handler for the prepared table (async-signal-safe calls
/// only, so a freshly forked child may call it). A signal that already has
/// another handler keeps it: a sanitizer's runtime (ASan, TSan), preloaded
/// or loaded for the program, reports crashes itself, with its own exit
/// status, as it does natively.
pub fn activate() {
    // SAFETY: getpid has no preconditions.
    REPORTING_PROCESS.store(unsafe { libc::getpid() }, Ordering::Relaxed);
    // Per thread: the thread that runs the program gets it.
    ensure_alternate_stack();
    let ours = handle_signal as *const () as usize;
    for sig in SIGNALS {
        // One system call per signal (each isolated run makes these): ours
        // goes in, and another handler found there goes back.
        // SAFETY: installing a handler with a zeroed, then filled sigaction,
        // and putting back the one the kernel returned.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ours;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, &action, &mut previous);
            if ![libc::SIG_DFL, libc::SIG_IGN, ours].contains(&previous.sa_sigaction) {
                libc::sigaction(sig, &previous, std::ptr::null_mut());
            }
        }
    }
}

/// The process whose crashes are reported: the one that installed the
/// handler (jitrun's own, or an isolated run's child). A process the
/// program forks inherits the handler but dies as it would natively,
/// without a word: a death test (GoogleTest's `EXPECT_DEATH`) matches the
/// dying child's stderr, and the `--report` file is its parent's.
static REPORTING_PROCESS: AtomicI32 = AtomicI32::new(0);

/// Removes the handler and restores the default actions.
pub fn uninstall() {
    for sig in SIGNALS {
        // SAFETY: restoring the default disposition.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
}

/// A stack overflow in loaded code must still reach the handler: give this
/// thread an alternate signal stack large enough for the unwinder.
pub(crate) fn ensure_alternate_stack() {
    const SIZE: usize = 256 * 1024;
    if ALT_STACK.load(Ordering::Acquire) != 0 {
        return;
    }
    // Mapped, not allocated: its pages cost nothing until a signal uses
    // them (a zeroed heap block would be written in full).
    // SAFETY: a fresh anonymous mapping touches no existing memory.
    let memory = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if memory == libc::MAP_FAILED {
        return;
    }
    ALT_STACK.store(memory as usize, Ordering::Release);
    let stack = libc::stack_t { ss_sp: memory, ss_flags: 0, ss_size: SIZE };
    // SAFETY: the mapping is never unmapped, so it outlives every signal delivery.
    unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
}

/// Set once the program has installed an alternate signal stack of its own.
static PROGRAM_ALT_STACK: AtomicBool = AtomicBool::new(false);
/// Signals (bit `n - 1` for signal `n`) whose handler the program asked to
/// run on an alternate stack while the only one was jitrun's: installed
/// without `SA_ONSTACK` until the program installs a stack of its own.
static ONSTACK_DEFERRED: AtomicU64 = AtomicU64::new(0);

/// The bit of `sig` in [`ONSTACK_DEFERRED`].
fn signal_bit(sig: c_int) -> Option<u64> {
    (1..=64).contains(&sig).then(|| 1u64 << (sig - 1))
}

/// `sigaction` as the image calls it. A handler the program installs with
/// `SA_ONSTACK` before it has an alternate stack of its own would run on
/// jitrun's (the one for reporting stack overflows); natively, with no
/// alternate stack, it runs on the thread's stack. So the flag is held
/// back until the program installs a stack ([`jitrun_sigaltstack`]), and
/// reported to the program as it set it.
///
/// # Safety
/// As `sigaction(2)`.
unsafe extern "C" fn jitrun_sigaction(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) -> c_int {
    let bit = signal_bit(sig);
    let jitruns_stack_only = ALT_STACK.load(Ordering::Acquire) != 0 && !PROGRAM_ALT_STACK.load(Ordering::Acquire);
    // SAFETY: the caller's pointer, null or to a sigaction it owns.
    let new = unsafe { act.as_ref() };
    let held_back = new
        .filter(|_| jitruns_stack_only && bit.is_some())
        .filter(|a| a.sa_flags & libc::SA_ONSTACK != 0 && a.sa_sigaction > libc::SIG_IGN)
        .map(|a| libc::sigaction { sa_flags: a.sa_flags & !libc::SA_ONSTACK, ..*a });
    let hold_back = held_back.is_some();
    let act = held_back.as_ref().map_or(act, |a| a as *const _);
    let was_held_back = bit.is_some_and(|b| ONSTACK_DEFERRED.load(Ordering::Acquire) & b != 0);
    // SAFETY: the caller's arguments, or a copy of its action.
    let result = unsafe { libc::sigaction(sig, act, old) };
    if result != 0 {
        return result;
    }
    // SAFETY: on success the kernel filled `old`, which the caller owns.
    if let Some(old) = unsafe { old.as_mut() }.filter(|_| was_held_back) {
        old.sa_flags |= libc::SA_ONSTACK;
    }
    if let (Some(bit), Some(_)) = (bit, new) {
        if hold_back {
            ONSTACK_DEFERRED.fetch_or(bit, Ordering::AcqRel);
        } else {
            ONSTACK_DEFERRED.fetch_and(!bit, Ordering::AcqRel);
        }
    }
    result
}

/// Gives back `SA_ONSTACK` to the handlers [`jitrun_sigaction`] held it
/// back from, now that the program has a stack of its own.
fn restore_held_back_onstack() {
    let held = ONSTACK_DEFERRED.swap(0, Ordering::AcqRel);
    for sig in (1..=64).filter(|&sig| signal_bit(sig).is_some_and(|b| held & b != 0)) {
        // SAFETY: reading the current action into a zeroed sigaction and
        // installing it again with one more flag.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut current) == 0 {
                current.sa_flags |= libc::SA_ONSTACK;
                libc::sigaction(sig, &current, std::ptr::null_mut());
            }
        }
    }
}

/// `sigaltstack` as the image calls it. The alternate stack jitrun gives
/// the main thread (for reporting stack overflows) is not the program's:
/// asked, it answers as natively, "none" (`SS_DISABLE`), until the program
/// installs its own, which then replaces jitrun's (reports use that).
///
/// # Safety
/// As `sigaltstack(2)`.
unsafe extern "C" fn jitrun_sigaltstack(stack: *const libc::stack_t, old: *mut libc::stack_t) -> c_int {
    // SAFETY: the caller's arguments, as the system call takes them.
    let result = unsafe { libc::sigaltstack(stack, old) };
    // SAFETY: the caller's pointer, null or to a stack_t it owns.
    if result == 0 && unsafe { stack.as_ref() }.is_some_and(|s| s.ss_flags & libc::SS_DISABLE == 0) {
        PROGRAM_ALT_STACK.store(true, Ordering::Release);
        restore_held_back_onstack();
    }
    let ours = ALT_STACK.load(Ordering::Acquire);
    // SAFETY: on success the kernel filled `old`, which the caller owns.
    if let Some(old) = unsafe { old.as_mut() }.filter(|o| result == 0 && ours != 0 && o.ss_sp as usize == ours) {
        *old = libc::stack_t {
            ss_sp: std::ptr::null_mut(),
            ss_flags: libc::SS_DISABLE | (old.ss_flags & libc::SS_ONSTACK),
            ss_size: 0,
        };
    }
    result
}

/// jitrun's own version of `name`, which the image calls instead of libc's.
pub fn host_function(name: &str) -> Option<usize> {
    match name {
        "sigaltstack" => Some(jitrun_sigaltstack as *const () as usize),
        "sigaction" => Some(jitrun_sigaction as *const () as usize),
        _ => None,
    }
}

extern "C" {
    fn _Unwind_Backtrace(trace: extern "C" fn(*mut c_void, *mut c_void) -> c_int, arg: *mut c_void) -> c_int;
    fn _Unwind_GetIPInfo(context: *mut c_void, ip_before_insn: *mut c_int) -> usize;
}

/// libgcc sorts a registered `.eh_frame` (allocating) on the first lookup
/// that reaches it; do that lookup now rather than in the signal handler.
/// The signal being reported, for the watchdog.
static CRASH_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// Seconds the unwinder may take before the watchdog ends the process.
const UNWIND_DEADLINE_SECONDS: u32 = 2;

/// The unwinder sorts its tables (and allocates) on first use. Doing that
/// ahead of time cost every run more than the link itself on programs
/// with many functions, so it happens only when a crash is reported. If the
/// crash left malloc's lock held, the unwinder would wait forever: a
/// watchdog alarm then ends the process with the crash's own signal, so the
/// exit status stays 128+N and CI never hangs.
fn arm_unwind_watchdog(sig: c_int) {
    CRASH_SIGNAL.store(sig, Ordering::Release);
    // SAFETY: sigaction and alarm are async-signal-safe; the action is zeroed then filled.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = unwind_watchdog as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
        libc::alarm(UNWIND_DEADLINE_SECONDS);
    }
}

fn disarm_unwind_watchdog() {
    // SAFETY: alarm is async-signal-safe.
    unsafe { libc::alarm(0) };
}

extern "C" fn unwind_watchdog(_: c_int) {
    let sig = CRASH_SIGNAL.load(Ordering::Acquire);
    let note: &[u8] = match WATCHED_STEP.load(Ordering::Acquire) {
        STEP_TABLE => b"jitrun: (report abandoned: its symbol table could not be built)\n",
        _ => b"jitrun: (backtrace abandoned: the unwinder did not finish)\n",
    };
    // SAFETY: write, signal, sigprocmask and raise are async-signal-safe;
    // the crash signal is unblocked so the re-raise takes effect at once.
    unsafe {
        libc::write(2, note.as_ptr() as *const c_void, note.len());
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig);
    }
}

/// One line of a crash report.
type StderrLine = FixedBuffer<512>;

pub fn signal_name(sig: c_int) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        _ => "signal",
    }
}

fn signal_description(sig: c_int) -> &'static str {
    match sig {
        libc::SIGSEGV => "Segmentation fault",
        libc::SIGBUS => "Bus error",
        libc::SIGILL => "Illegal instruction",
        libc::SIGFPE => "Floating point exception",
        libc::SIGABRT => "Aborted",
        _ => "",
    }
}

/// Whether `addr` is in the code of the process's executable: jitrun's
/// own, unless a host program links jitrun as a library. A crash there
/// before the program started is jitrun's, which the report should not
/// pass off as somewhere in a library.
fn in_the_executables_code(addr: u64) -> bool {
    extern "C" {
        /// Where the executable starts and its code ends (GNU ld and lld
        /// define both).
        static __executable_start: u8;
        static etext: u8;
    }
    let (start, end) = (std::ptr::addr_of!(__executable_start) as u64, std::ptr::addr_of!(etext) as u64);
    (start..end).contains(&addr)
}

impl CrashTable {
    fn lookup(&self, addr: u64) -> Option<(&Range, u64)> {
        let idx = self.ranges.partition_point(|r| r.start <= addr);
        let candidates = || self.ranges[..idx].iter().rev().take(32).filter(|r| addr < r.end);
        // A function wins over a label inside it.
        candidates().find(|r| r.is_function).or_else(|| candidates().next()).map(|r| (r, addr - r.start))
    }

    /// Writes `addr` and the function holding `within` (the address itself,
    /// or for a return address the call just before it).
    fn describe(&self, out: &mut StderrLine, addr: u64, within: u64) {
        let _ = match self.lookup(within) {
            Some((range, _)) => {
                let name = self.names.get(range.name as usize..(range.name + range.name_len) as usize).unwrap_or("?");
                let place = self.places.get(range.place as usize).map_or("", |p| p);
                let _ = write!(out, "{:#x} {}+{:#x}{}", addr, name, addr - range.start, place);
                match self.lines.lookup(within) {
                    Some((file, line)) => write!(out, " at {}:{}", file, line),
                    None => Ok(()),
                }
            }
            None if self.image.contains(&addr) => write!(out, "{:#x} (in the image)", addr),
            None if in_the_executables_code(addr) => write!(out, "{:#x} (in jitrun's own code)", addr),
            None => write!(out, "{:#x} (outside the image)", addr),
        };
    }

    fn in_code(&self, addr: u64) -> bool {
        self.code.iter().any(|c| c.contains(&addr))
    }
}

struct Walk<'a> {
    table: &'a CrashTable,
    frames: usize,
    printed: usize,
    /// Frames are skipped until the signal frame (the handler's own).
    past_signal_frame: bool,
}

extern "C" fn trace_frame(context: *mut c_void, arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the Walk passed to _Unwind_Backtrace below.
    let walk = unsafe { &mut *(arg as *mut Walk) };
    let mut before = 0;
    // SAFETY: `context` is the unwinder's context for this frame.
    let ip = unsafe { _Unwind_GetIPInfo(context, &mut before) } as u64;
    if !walk.past_signal_frame {
        // The interrupted frame is the first one the kernel's signal frame
        // describes exactly (ip_before_insn is set for it).
        if before == 0 {
            return 0;
        }
        walk.past_signal_frame = true;
    }
    walk.frames += 1;
    if walk.frames > 256 {
        return 5; // _URC_END_OF_STACK
    }
    // A return address points after the call; symbolize the call itself.
    let lookup = if before != 0 { ip } else { ip.wrapping_sub(1) };
    let is_runtime = walk.table.lookup(lookup).is_some_and(|(range, _)| range.is_runtime);
    if walk.table.image.contains(&lookup) && !is_runtime {
        let mut line = StderrLine::new();
        let _ = write!(line, "jitrun:   #{} ", walk.printed);
        walk.table.describe(&mut line, ip, lookup);
        let _ = line.write_str("\n");
        line.flush_to(2);
        walk.printed += 1;
    }
    0
}

/// Conservative fallback: words on the stack that are return addresses
/// into the image's code.
fn scan_stack(table: &CrashTable, rsp: u64, first: usize) {
    if rsp == 0 || rsp > table.stack_top || table.stack_top - rsp > (64 << 20) {
        return;
    }
    let end = table.stack_top.min(rsp + 64 * 1024);
    let mut printed = first;
    let mut at = rsp;
    while at + 8 <= end && printed < 64 {
        // SAFETY: [rsp, stack_top) is this thread's live stack.
        let word = unsafe { std::ptr::read_volatile(at as *const u64) };
        let before = word.wrapping_sub(CALL_LOOKBACK as u64);
        if table.in_code(word) && table.in_code(before) && follows_call(word) {
            let mut line = StderrLine::new();
            let _ = write!(line, "jitrun:   #{} ? ", printed);
            table.describe(&mut line, word, word - 1);
            let _ = line.write_str("\n");
            line.flush_to(2);
            printed += 1;
        }
        at += 8;
    }
}

/// Bytes before a return address that may hold the call (this CPU's).
const CALL_LOOKBACK: usize = crate::arch::HOST.call_lookback();

/// Whether the instruction before `ret` is a call (see `arch::Cpu::follows_call`).
fn follows_call(ret: u64) -> bool {
    // SAFETY: the caller checked that ret-CALL_LOOKBACK..ret lies in the
    // image's code.
    let before = unsafe { std::ptr::read_unaligned((ret - CALL_LOOKBACK as u64) as *const [u8; CALL_LOOKBACK]) };
    crate::arch::HOST.follows_call(&before)
}

extern "C" fn handle_signal(sig: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: the kernel passes a valid ucontext_t for SA_SIGINFO handlers.
    let (pc, rsp) = unsafe { crate::support::machine::signal_pc_and_sp(context) };
    // SAFETY: getpid has no preconditions (and is async-signal-safe).
    if unsafe { libc::getpid() } != REPORTING_PROCESS.load(Ordering::Relaxed) {
        return die_from(sig);
    }
    // The headline needs no table: printed first, it is there even when
    // building the table fails (a crash inside malloc).
    // SAFETY: published once, never freed.
    let published = unsafe { TABLE.load(Ordering::Acquire).as_ref() };
    let print = published.map_or_else(
        || !TABLE_SOURCE.load(Ordering::Acquire).is_null() && LAZY_TABLE_PRINTS.load(Ordering::Acquire),
        |t| t.print,
    );
    if print {
        print_headline(sig, info);
    }
    // SAFETY: published once, never freed.
    if let Some(table) = unsafe { table_for_crash(sig).as_ref() } {
        if print && table.print {
            report_crash(table, sig, pc, rsp);
        }
        if let Some(sink) = &table.report {
            crate::diagnostics::report::write_signal_outcome(sink, sig);
        }
    }
    die_from(sig);
}

/// Dies from `sig`: default action, re-raised; it is blocked while the
/// handler runs and is delivered when the handler returns.
fn die_from(sig: c_int) {
    // SAFETY: signal and raise are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

fn print_headline(sig: c_int, info: *mut libc::siginfo_t) {
    let mut line = StderrLine::new();
    let _ = write!(line, "jitrun: the program died from {} ({})", signal_name(sig), signal_description(sig));
    // SAFETY: the kernel's siginfo for this signal.
    let info = unsafe { &*info };
    if info.si_code > 0 {
        // Raised by a fault, so si_addr is where.
        // SAFETY: si_addr is valid when the kernel raised the signal.
        let _ = write!(line, ", fault address {:#x}", unsafe { info.si_addr() } as u64);
    } else if sig != libc::SIGABRT {
        // Sent (kill, raise, sigqueue): si_addr's bytes are the sender's
        // pid and uid. abort()'s own SIGABRT needs no sender.
        // SAFETY: si_pid is valid for signals sent by a process.
        let _ = write!(line, ", sent by process {}", unsafe { info.si_pid() });
    }
    let _ = line.write_str("\n");
    line.flush_to(2);
}

/// The report after the headline: the pc and the loaded frames.
fn report_crash(table: &CrashTable, sig: c_int, pc: u64, rsp: u64) {
    let mut line = StderrLine::new();
    let _ = line.write_str("jitrun:   pc ");
    table.describe(&mut line, pc, pc);
    let _ = line.write_str("\njitrun: backtrace of loaded code (innermost first):\n");
    line.flush_to(2);
    let mut walk = Walk { table, frames: 0, printed: 0, past_signal_frame: false };
    arm_unwind_watchdog(sig);
    // SAFETY: the callback only reads the context and our table.
    unsafe { _Unwind_Backtrace(trace_frame, &mut walk as *mut Walk as *mut c_void) };
    disarm_unwind_watchdog();
    if walk.printed == 0 {
        if table.image.contains(&pc) {
            let mut line = StderrLine::new();
            let _ = line.write_str("jitrun:   #0 ");
            table.describe(&mut line, pc, pc);
            let _ = line.write_str("\n");
            line.flush_to(2);
            walk.printed = 1;
        }
        scan_stack(table, rsp, walk.printed);
    }
}

/// What a crash table is built from, symbol by symbol: [`Ranges`] itself,
/// or a recording of it ([`TableRecording`]).
pub(crate) trait RangeSink {
    fn add_place(&mut self, object: &str, section: &str) -> u32;
    fn push(&mut self, start: u64, size: u64, section_end: u64, name: &str, place: u32, is_function: bool);
}

impl RangeSink for Ranges {
    fn add_place(&mut self, object: &str, section: &str) -> u32 {
        Ranges::add_place(self, object, section)
    }
    fn push(&mut self, start: u64, size: u64, section_end: u64, name: &str, place: u32, is_function: bool) {
        Ranges::push(self, start, size, section_end, name, place, is_function)
    }
}

/// An empty table for the image `addrs` describes: its range and code.
fn ranges_of_image(addrs: &crate::graph::fixups::Addresses) -> Ranges {
    let page = crate::support::page_size();
    let code = addrs
        .layout
        .segments
        .iter()
        .filter(|s| s.kind.final_protection().contains(region::Protection::EXECUTE))
        .map(|s| addrs.base + s.offset..addrs.base + s.offset + s.size.div_ceil(page) * page);
    Ranges::new(addrs.base..addrs.base + addrs.layout.size, code.collect())
}

/// The symbols a crash report names, straight from the link model: live
/// definitions, globals only where they won, those that are functions or
/// lie in code, and the stubs.
fn walk_image_symbols(
    addrs: &crate::graph::fixups::Addresses,
    graphs: &[crate::graph::model::LinkGraph],
    sink: &mut dyn RangeSink,
) {
    use crate::graph::layout::{SegmentKind, NOT_PLACED};
    use crate::graph::model::{SectionId, SymbolKind};
    use crate::graph::resolve::Target;
    let (base, layout) = (addrs.base, addrs.layout);
    let text: Vec<_> = layout
        .segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Text)
        .map(|s| base + s.offset..base + s.offset + s.size)
        .collect();
    for (g, graph) in graphs.iter().enumerate() {
        let mut places: rustc_hash::FxHashMap<SectionId, u32> = Default::default();
        for (name, sym, block, address) in crate::graph::linkinfo::image_symbols(graph, g, addrs) {
            let placed = layout.block_offsets[g][block as usize];
            if placed == NOT_PLACED {
                continue;
            }
            let block_start = base + placed;
            let in_code = text.iter().any(|t| t.contains(&block_start));
            if sym.kind != SymbolKind::Function && !in_code {
                continue;
            }
            let section = graph.blocks[block as usize].section;
            let place = *places
                .entry(section)
                .or_insert_with(|| sink.add_place(&graph.name, &graph.sections[section as usize].name));
            let section_end =
                if in_code { block_start + graph.blocks[block as usize].size } else { address + sym.size };
            sink.push(address, sym.size, section_end, name, place, sym.kind == SymbolKind::Function);
        }
    }
    if !addrs.tables.stubs.is_empty() {
        let stub_size = addrs.cpu.stub_size();
        let place = sink.add_place("<linker tables>", ".plt");
        for &(target, _) in &addrs.tables.stubs {
            let Some(address) = addrs.stub(target) else { continue };
            let name = match target {
                Target::External(e) => format!("stub for {}", addrs.res.externals[e as usize].name),
                Target::Ifunc(i) => format!("stub for {}", addrs.res.ifuncs[i as usize].name),
                _ => "stub".to_string(),
            };
            sink.push(address, stub_size, address + stub_size, &name, place, true);
        }
    }
}

/// A crash table's makings as bytes, to build it in another process (the
/// link cache keeps them with its entry): see [`publish_recorded_table`].
#[derive(Default)]
pub struct TableRecording(Vec<u8>, u32);

impl TableRecording {
    /// Records the table of the image `addrs` describes (its objects: `graphs`).
    pub fn of_image(
        addrs: &crate::graph::fixups::Addresses,
        graphs: &[crate::graph::model::LinkGraph],
    ) -> TableRecording {
        let ranges = ranges_of_image(addrs);
        let mut recording = TableRecording::default();
        for v in [ranges.image.start, ranges.image.end, ranges.code.len() as u64] {
            recording.word(v);
        }
        for code in &ranges.code {
            recording.word(code.start);
            recording.word(code.end);
        }
        walk_image_symbols(addrs, graphs, &mut recording);
        recording
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    fn word(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn text(&mut self, s: &str) {
        self.word(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
}

impl RangeSink for TableRecording {
    fn add_place(&mut self, object: &str, section: &str) -> u32 {
        self.0.push(0);
        self.text(object);
        self.text(section);
        // Numbered in order, as the replay's `Ranges::add_place` numbers them.
        self.1 += 1;
        self.1 - 1
    }
    fn push(&mut self, start: u64, size: u64, section_end: u64, name: &str, place: u32, is_function: bool) {
        self.0.push(1 + is_function as u8);
        for v in [start, size, section_end, place.into()] {
            self.word(v);
        }
        self.text(name);
    }
}

/// Builds the table a [`TableRecording`] recorded and publishes it (an
/// empty one, naming nothing, if the bytes are not a recording: the
/// crash is still reported).
pub fn publish_recorded_table(bytes: &[u8], print: bool) {
    /// Reads what [`TableRecording`] wrote, bounds-checked.
    struct Bytes<'a>(&'a [u8]);
    impl<'a> Bytes<'a> {
        fn take(&mut self, n: usize) -> Option<&'a [u8]> {
            let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
            self.0 = rest;
            Some(head)
        }
        fn word(&mut self) -> Option<u64> {
            Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
        }
        fn text(&mut self) -> Option<String> {
            let len = usize::try_from(self.word()?).ok()?;
            Some(String::from_utf8_lossy(self.take(len)?).into_owned())
        }
    }
    fn replay(bytes: &[u8]) -> Option<Ranges> {
        let mut r = Bytes(bytes);
        let (start, end, count) = (r.word()?, r.word()?, r.word()?);
        let mut code = Vec::new();
        for _ in 0..count.min(1 << 16) {
            code.push(r.word()?..r.word()?);
        }
        let mut ranges = Ranges::new(start..end, code);
        let mut places = 0u64;
        while let Some(&[tag]) = r.take(1) {
            if tag == 0 {
                let (object, section) = (r.text()?, r.text()?);
                ranges.add_place(&object, &section);
                places += 1;
            } else {
                let (start, size, section_end, place) = (r.word()?, r.word()?, r.word()?, r.word()?);
                let place = u32::try_from(place).ok().filter(|&p| u64::from(p) < places)?;
                ranges.push(start, size, section_end, &r.text()?, place, tag == 2);
            }
        }
        ranges.finish();
        Some(ranges)
    }
    publish(replay(bytes).unwrap_or_default(), print, None);
}

/// Builds and publishes the crash table straight from the link model,
/// without the link info's strings (a tenth of the work of
/// [`DeferredLinkInfo::collect`](crate::graph::deferred::DeferredLinkInfo::collect) followed by [`prepare`]).
/// The same symbols as the link info's: live definitions, globals only
/// where they won, those that are functions or lie in code. Frees the
/// model.
pub fn prepare_from_link_model(model: crate::graph::deferred::DeferredLinkInfo, print: bool) {
    let addrs = model.addresses();
    let mut ranges = ranges_of_image(&addrs);
    walk_image_symbols(&addrs, &model.graphs, &mut ranges);
    ranges.finish();
    let mut lines = crate::graph::line_table::LineTable::default();
    crate::diagnostics::debugger::add_lines_of_objects(&mut lines, &model.graphs, |g, s| {
        crate::graph::fixups::symbol_address(&model.res, &addrs, g, s)
    });
    lines.finish();
    ranges.lines = std::sync::Arc::new(lines);
    // The model is freed before the table is published: a parent about
    // to fork isolated runs trims malloc's free memory once it has the
    // table, and every page still resident then is paid at each fork.
    drop(model);
    publish(ranges, print, None);
}
