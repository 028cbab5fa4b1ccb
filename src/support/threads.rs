//! Threads of jitrun's own: helpers that work beside the caller, a thread
//! that is never joined (a crash report's table builder), signal masks, and
//! what glibc believes about the process's threads.

use std::ffi::{c_void, CStr};

/// Blocks every signal on the calling thread, so signals sent to the
/// process reach the program's thread as in a one-thread native process
/// (jitrun's own helper threads call this).
pub fn keep_signals_off_this_thread() {
    // SAFETY: a zeroed sigset filled by sigfillset, applied to this thread only.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    }
}

/// Starts a thread that runs `f` (a crash report's table builder, while
/// the program's thread waits in a signal handler), so that it touches no
/// lock or cache the crashed thread may hold: glibc's `pthread_join` frees
/// the thread's TLS vector, and the program may have replaced `free`.
/// The start block is leaked (a few bytes, kept reachable
/// from [`LEAKED_THREAD_STARTS`]), the thread is never joined (joining
/// frees its TLS vector there too) and is named `name` for debuggers.
/// `detached` (under ThreadSanitizer, whose allocator keeps the program's
/// heap apart anyway, and which reports unjoined threads as leaks): the
/// thread is detached instead.
pub fn spawn_unjoined_thread<F: FnOnce() + Send + 'static>(name: &CStr, detached: bool, f: F) -> std::io::Result<()> {
    struct Start<F> {
        name: [u8; 16],
        f: F,
    }
    extern "C" fn start<F: FnOnce()>(arg: *mut c_void) -> *mut c_void {
        let start = arg as *mut Start<F>;
        // SAFETY: `arg` is the leaked Start<F> below; its closure is moved
        // out exactly once, here, and the allocation is never freed.
        let (name, f) = unsafe { ((*start).name, std::ptr::read(&(*start).f)) };
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
        // A panic must not unwind out of an extern "C" function; its
        // message is printed, and it is jitrun's failure.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
            std::process::exit(crate::support::EXIT_JITRUN_ERROR);
        }
        std::ptr::null_mut()
    }
    let mut short = [0u8; 16];
    let bytes = name.to_bytes();
    let n = bytes.len().min(15);
    short[..n].copy_from_slice(&bytes[..n]);
    let arg = Box::into_raw(Box::new(Start { name: short, f }));
    let slot = LEAKED_THREAD_STARTS_USED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some(slot) = LEAKED_THREAD_STARTS.get(slot) {
        slot.store(arg as usize, std::sync::atomic::Ordering::Relaxed);
    }
    // SAFETY: attributes initialized before use and destroyed after;
    // `start::<F>` takes ownership of `arg`'s closure. If creation fails
    // the box is reclaimed here.
    unsafe {
        let mut thread: libc::pthread_t = std::mem::zeroed();
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        // What std gives its threads; the default (RLIMIT_STACK) is larger.
        libc::pthread_attr_setstacksize(&mut attr, 2 << 20);
        if detached {
            libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        }
        let error = libc::pthread_create(&mut thread, &attr, start::<F>, arg as *mut c_void);
        libc::pthread_attr_destroy(&mut attr);
        if error != 0 {
            drop(Box::from_raw(arg));
            return Err(std::io::Error::from_raw_os_error(error));
        }
    }
    Ok(())
}

/// Runs each of `helpers` on a thread of its own while `main` runs on this
/// one, and returns their results once all have ended (a panic in any is
/// resumed here, after every thread is joined, since they may borrow this
/// thread's data).
///
/// Threads from `pthread_create`, not `std::thread`: std's spawn sets a
/// thread-local of the *spawning* thread (its spawn hooks) whose destructor
/// glibc registers with a node from its `malloc`, and frees at `exit()`
/// with the `free` bound then, which for a program with its own allocator
/// is the program's (bash's aborted: "free: called with unallocated
/// block"). It also set one in each new thread, which had glibc create a
/// malloc arena per link. A helper that cannot be started runs here, after
/// `main`.
pub fn run_beside<R: Send, M>(helpers: Vec<impl FnOnce() -> R + Send>, main: impl FnOnce() -> M) -> (Vec<R>, M) {
    struct Slot<F, R> {
        f: Option<F>,
        result: Option<std::thread::Result<R>>,
    }
    extern "C" fn start<F: FnOnce() -> R, R>(arg: *mut c_void) -> *mut c_void {
        // SAFETY: `arg` is a Slot<F, R> that outlives the thread (joined
        // before the slot is read or dropped) and only this thread touches
        // until then.
        let slot = unsafe { &mut *(arg as *mut Slot<F, R>) };
        if let Some(f) = slot.f.take() {
            slot.result = Some(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        }
        std::ptr::null_mut()
    }
    let mut slots: Vec<Box<Slot<_, R>>> =
        helpers.into_iter().map(|f| Box::new(Slot { f: Some(f), result: None })).collect();
    let mut threads = Vec::with_capacity(slots.len());
    for slot in slots.iter_mut() {
        let arg = &mut **slot as *mut Slot<_, R> as *mut c_void;
        // SAFETY: attributes initialized before use and destroyed after; the
        // slot (boxed, so it does not move) outlives the thread, which is
        // joined below on every path.
        unsafe {
            let mut thread: libc::pthread_t = std::mem::zeroed();
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            libc::pthread_attr_init(&mut attr);
            // What std gives its threads; the default (RLIMIT_STACK) is larger.
            libc::pthread_attr_setstacksize(&mut attr, 2 << 20);
            let error = libc::pthread_create(&mut thread, &attr, start_of(&**slot), arg);
            libc::pthread_attr_destroy(&mut attr);
            if error == 0 {
                threads.push(thread);
            }
        }
    }
    // The type of `start` for a slot (closures have no names to spell).
    fn start_of<F: FnOnce() -> R, R>(_: &Slot<F, R>) -> extern "C" fn(*mut c_void) -> *mut c_void {
        start::<F, R>
    }
    let main_result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(main));
    for thread in threads {
        // SAFETY: joining a thread created above, once.
        unsafe { libc::pthread_join(thread, std::ptr::null_mut()) };
    }
    let results: Vec<R> = slots
        .into_iter()
        .map(|mut slot| {
            // One whose thread did not start runs here.
            let result = slot.result.take().unwrap_or_else(|| {
                let f = slot.f.take().expect("a helper runs once");
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            });
            result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect();
    (results, main_result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
}

/// The start blocks [`spawn_unjoined_thread`] leaks, so that a
/// leak checker (LeakSanitizer, with `-fsanitize=address` code) finds them
/// reachable rather than report jitrun's few bytes as the program's leak.
/// jitrun starts one such thread at most (a crash's table).
static LEAKED_THREAD_STARTS: [std::sync::atomic::AtomicUsize; 4] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 4];

static LEAKED_THREAD_STARTS_USED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// CPUs this thread may run on: one system call, where
/// `std::thread::available_parallelism` also reads cgroup files.
pub(crate) fn cpu_count() -> usize {
    thread_affinity().map_or(1, |set| cpu_set_count(&set).max(1))
}

/// The calling thread's CPU mask.
pub fn thread_affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t (plain data) filled by sched_getaffinity
    // for this thread, with its size passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
    }
}

pub fn cpu_set_count(set: &libc::cpu_set_t) -> usize {
    // SAFETY: CPU_COUNT only reads the set.
    unsafe { libc::CPU_COUNT(set) as usize }
}

/// Where libc's `__libc_single_threaded` flag is, once the host layer has
/// looked it up (`image::declare_single_threaded`); 0 before.
static LIBC_SINGLE_THREADED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Records where libc's `__libc_single_threaded` flag is.
pub fn note_libc_single_threaded_flag(address: usize) {
    LIBC_SINGLE_THREADED.store(address, std::sync::atomic::Ordering::Release);
}

/// Whether libc knows the process to be single-threaded: glibc clears the
/// flag when a thread starts, and only `image::declare_single_threaded`
/// sets it again, once the kernel counts one thread. `false` until the
/// flag's address is noted. Async-signal-safe (no lookup), for a fork
/// handler.
pub fn libc_says_single_threaded() -> bool {
    let flag = LIBC_SINGLE_THREADED.load(std::sync::atomic::Ordering::Acquire);
    // SAFETY: the address of libc's one-byte flag, which stays mapped.
    flag != 0 && unsafe { *(flag as *const libc::c_char) } != 0
}

/// Set when jitrun must start no helper thread of its own (a sanitizer's
/// runtime watches every thread of the process).
static HELPER_THREADS_FORBIDDEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, work that could spread over helper threads stays on the
/// calling thread.
pub fn forbid_helper_threads() {
    HELPER_THREADS_FORBIDDEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`forbid_helper_threads`] was called.
pub fn helper_threads_forbidden() -> bool {
    HELPER_THREADS_FORBIDDEN.load(std::sync::atomic::Ordering::Relaxed)
}
