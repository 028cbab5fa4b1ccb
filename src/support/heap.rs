//! jitrun's own heap: the global allocator of the `jitrun` executable.
//!
//! Two reasons not to use glibc's malloc for jitrun's own allocations:
//! - The program shares the process, and glibc's heap is the program's
//!   heap. Natively a program's first allocations come from pages the
//!   kernel zeroed, and real programs come to depend on it; memory jitrun
//!   freed would come back to them dirty.
//! - Speed. A link allocates its working set once and touches every byte;
//!   on this kind of VM a 4 KiB page fault costs ~2.4 µs, and a large link
//!   takes thousands of them (the program with 280,000 relocations: ~2,000,
//!   a fifth of its time). Transparent huge pages fill 2 MiB per fault
//!   (~0.14 µs per 4 KiB).
//!
//! So the heap is [`dlmalloc`] (Doug Lea's allocator, the design glibc's
//! grew from; a pure-Rust port kept by the Rust project for its wasm
//! targets) over address space reserved 16 MiB at a time that it grows
//! into in 2 MiB steps, advised to use huge pages past a small first
//! piece (see [`FIRST_PIECE`]). Memory it grew into is kept for reuse,
//! never given back: jitrun's working set peaks during the link and later
//! runs reuse it, so the isolated-runs parent stays flat.
//!
//! There are two such heaps, the main thread's and the link's helper
//! threads', each with its lock; `pthread_atfork` handlers hold both
//! across `fork` while another of jitrun's threads may be allocating, so a
//! child never inherits one locked.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use dlmalloc::{Allocator, Dlmalloc};

/// Address space is reserved this much at a time, right after the last
/// reservation when that range is free (the heap stays one segment), and
/// no more than that: a program that limits its address space
/// (`setrlimit(RLIMIT_AS)`, `ulimit -v`) must not find it taken.
const RESERVATION: usize = 16 << 20;
/// The heap grows by whole huge pages, so that every fault in it can be
/// served by one (a huge page needs its whole aligned 2 MiB range mapped).
const HUGE_PAGE: usize = 2 << 20;
/// The heap's first piece, in small pages: the tail of its first huge
/// page's range, so that the next piece starts on a huge page boundary.
/// Every later piece uses huge pages. A hello world's link needs ~80 KiB
/// (C) to ~200 KiB (C++) and stays in it; past it, a link that grows its
/// heap page by page takes a fault per 4 KiB (~2.5 µs here), where a huge
/// page fills 2 MiB in one fault (its zeroing: ~0.1 ms). Lua's link
/// (33 objects) took 185 faults fewer and 10% less time, the 301-object
/// link 308 and 16%. A forked run also copies one entry for a huge page
/// instead of 512 (see `run.rs`).
const FIRST_PIECE: usize = 256 << 10;

/// The system side of the heap: hands out consecutive pieces of a
/// reservation (dlmalloc merges consecutive pieces into one segment), and
/// reserves more address space when one is used up.
struct HugePageRegion {
    /// The next piece's address, and the end of the current reservation.
    next: AtomicUsize,
    end: AtomicUsize,
    /// Where its reservations are, so that a block's address tells which
    /// heap it came from.
    reservations: &'static Reservations,
}

/// Reservations one region keeps track of (1 GiB and more of heap).
const MAX_RANGES: usize = 64;

/// A region's reservations as `[start, end)` pairs; a region with all of
/// them in use reserves no more (its heap then fails, see [`JitrunHeap`]).
struct Reservations {
    ranges: [AtomicUsize; 2 * MAX_RANGES],
    count: AtomicUsize,
}

impl Reservations {
    const fn new() -> Self {
        Reservations { ranges: [const { AtomicUsize::new(0) }; 2 * MAX_RANGES], count: AtomicUsize::new(0) }
    }

    /// Whether `address` lies in one of the reservations. Needs no lock: a
    /// block's range was recorded before the block existed, and ranges
    /// never change but for the last one growing.
    fn contain(&self, address: usize) -> bool {
        let count = self.count.load(Ordering::Acquire);
        (0..count).any(|i| {
            let start = self.ranges[2 * i].load(Ordering::Acquire);
            (start..self.ranges[2 * i + 1].load(Ordering::Acquire)).contains(&address)
        })
    }
}

impl HugePageRegion {
    const fn new(reservations: &'static Reservations) -> Self {
        Self { next: AtomicUsize::new(0), end: AtomicUsize::new(0), reservations }
    }

    /// Reserves `len` bytes of address space (no access, no memory
    /// committed) at `at`, or anywhere aligned to a huge page. Returns the
    /// start.
    fn reserve(len: usize, at: Option<usize>) -> Option<usize> {
        let map = |hint: usize, len: usize, flags: i32| {
            // SAFETY: an anonymous mapping where nothing is mapped:
            // MAP_FIXED_NOREPLACE refuses to replace one, and without it
            // the kernel picks a free range.
            let mapped = unsafe {
                libc::mmap(
                    hint as *mut c_void,
                    len,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | flags,
                    -1,
                    0,
                )
            };
            (mapped != libc::MAP_FAILED).then_some(mapped as usize)
        };
        let unmap = |start: usize, len: usize| {
            if len > 0 {
                // SAFETY: part of a reservation just made here, unused.
                unsafe { libc::munmap(start as *mut c_void, len) };
            }
        };
        if let Some(at) = at {
            // Kernels before 4.17 take MAP_FIXED_NOREPLACE as a mere hint.
            let mapped = map(at, len, libc::MAP_FIXED_NOREPLACE)?;
            if mapped != at {
                unmap(mapped, len);
                return None;
            }
            return Some(at);
        }
        // One huge page more, so that an aligned start exists inside; the
        // rest is given back.
        let mapped = map(0, len.checked_add(HUGE_PAGE)?, 0)?;
        let start = mapped.next_multiple_of(HUGE_PAGE);
        unmap(mapped, start - mapped);
        unmap(start + len, mapped + HUGE_PAGE - start);
        Some(start)
    }
}

// SAFETY: every region `alloc` returns is fresh, zeroed, readable and
// writable memory of the reported size that nothing else uses; nothing is
// ever unmapped, so `free`/`free_part` report that they released nothing.
unsafe impl Allocator for HugePageRegion {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        const FAILED: (*mut u8, usize, u32) = (ptr::null_mut(), 0, 0);
        // Called with the heap's lock held: plain loads and stores suffice.
        let (mut next, mut end) = (self.next.load(Ordering::Relaxed), self.end.load(Ordering::Relaxed));
        // Pieces start and end on huge page boundaries.
        let piece_size = |next: usize| next.checked_add(size)?.checked_next_multiple_of(HUGE_PAGE).map(|e| e - next);
        let Some(mut size) = piece_size(next) else { return FAILED };
        if end - next < size {
            let more = size.max(RESERVATION);
            let first = end == 0;
            let (ranges, count) = (&self.reservations.ranges, self.reservations.count.load(Ordering::Relaxed));
            if end != 0 && Self::reserve(more, Some(end)).is_some() {
                end += more;
                ranges[2 * count - 1].store(end, Ordering::Release);
            } else {
                if count == MAX_RANGES {
                    return FAILED;
                }
                // Elsewhere: the smallest that will do if a limit on
                // address space refuses the usual amount.
                let Some((start, len)) =
                    [more, size].into_iter().find_map(|len| Self::reserve(len, None).map(|start| (start, len)))
                else {
                    return FAILED;
                };
                (next, end) = (start, start + len);
                let small_first = start + HUGE_PAGE - FIRST_PIECE;
                if first && piece_size(small_first).is_some_and(|size| small_first + size <= end) {
                    next = small_first;
                }
                ranges[2 * count].store(start, Ordering::Release);
                ranges[2 * count + 1].store(end, Ordering::Release);
                self.reservations.count.store(count + 1, Ordering::Release);
                let Some(new_size) = piece_size(next) else { return FAILED };
                size = new_size;
            }
        }
        // The part of the piece on huge page boundaries (all of it but in
        // the first piece).
        let huge_from = next.next_multiple_of(HUGE_PAGE);
        if huge_from < next + size {
            // SAFETY: advice on the new piece, inside a reservation and not
            // yet handed out; it changes no contents. Refused (no
            // transparent huge pages), the piece uses small pages.
            unsafe { libc::madvise(huge_from as *mut c_void, next + size - huge_from, libc::MADV_HUGEPAGE) };
        }
        // SAFETY: `[next, next + size)` lies inside a reservation, past
        // everything handed out: no live memory changes protection.
        if unsafe { libc::mprotect(next as *mut c_void, size, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
            return FAILED;
        }
        self.next.store(next + size, Ordering::Relaxed);
        self.end.store(end, Ordering::Relaxed);
        (next as *mut u8, size, 0)
    }

    fn remap(&self, _ptr: *mut u8, _oldsize: usize, _newsize: usize, _can_move: bool) -> *mut u8 {
        ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _oldsize: usize, _newsize: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        4096
    }
}

/// The global allocator: `#[global_allocator] static HEAP: JitrunHeap = JitrunHeap;`.
///
/// Two heaps, each with its lock: one for the main thread, one for the
/// threads that parse and write in parallel ([`use_helper_heap`]), so that
/// those do not wait for each other's allocations (with one heap, 301
/// objects linked ~5% slower than with glibc's per-thread arenas). A block
/// goes back to the heap whose address range holds it.
pub struct JitrunHeap;

/// One dlmalloc and its lock: 0 free, 1 held, 2 held with waiters (a futex).
struct Heap {
    dlmalloc: std::cell::UnsafeCell<Dlmalloc<HugePageRegion>>,
    lock: AtomicU32,
}

// SAFETY: the dlmalloc is only reached with the lock held (`Heap::with`).
unsafe impl Sync for Heap {}

static MAIN_RESERVATIONS: Reservations = Reservations::new();
static HELPER_RESERVATIONS: Reservations = Reservations::new();
static MAIN: Heap = Heap::new(&MAIN_RESERVATIONS);
static HELPERS: Heap = Heap::new(&HELPER_RESERVATIONS);
static FORK_HANDLERS: std::sync::Once = std::sync::Once::new();

std::thread_local! {
    /// Set on the link's helper threads. A `Cell<bool>` needs no
    /// destructor, so reading it allocates nothing and registers nothing.
    static ON_HELPER_HEAP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes the calling thread allocate from the helpers' heap.
pub fn use_helper_heap() {
    ON_HELPER_HEAP.with(|on| on.set(true));
}

/// `f` as a helper thread's body: it allocates from the helpers' heap, so
/// that it and the thread that started it never wait for each other's lock.
pub fn on_helper_heap<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let f = counted_as_other_thread(f);
    move || {
        use_helper_heap();
        f()
    }
}

/// How many threads besides the main one may be allocating from these
/// heaps: helper threads from when they are planned (on the thread that
/// starts them) until their body returns. With none, a fork has no lock
/// to take, and takes none.
static OTHER_THREADS: AtomicUsize = AtomicUsize::new(0);

/// `f` as the body of a thread of jitrun's that allocates while the main
/// thread may fork: counted from now, on the starting thread (so no fork
/// can miss a thread about to start), until `f` returns or unwinds. A body
/// that never runs leaves the count high, which only costs a fork its
/// locks. (Past its body a thread may still free memory while it exits:
/// see [`lock_both`].)
pub fn counted_as_other_thread<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    struct Running;
    impl Drop for Running {
        fn drop(&mut self) {
            OTHER_THREADS.fetch_sub(1, Ordering::SeqCst);
        }
    }
    OTHER_THREADS.fetch_add(1, Ordering::SeqCst);
    move || {
        let _running = Running;
        f()
    }
}

impl Heap {
    const fn new(reservations: &'static Reservations) -> Self {
        Heap {
            dlmalloc: std::cell::UnsafeCell::new(Dlmalloc::new_with_allocator(HugePageRegion::new(reservations))),
            lock: AtomicU32::new(0),
        }
    }

    /// The heap a thread allocates from.
    fn current() -> &'static Heap {
        if ON_HELPER_HEAP.with(|on| on.get()) {
            &HELPERS
        } else {
            &MAIN
        }
    }

    /// A new block from the calling thread's heap; when the helpers' heap
    /// can reserve no more (all its ranges in use), from the main heap.
    fn allocate(make: impl Fn(&mut Dlmalloc<HugePageRegion>) -> *mut u8) -> *mut u8 {
        let heap = Heap::current();
        let block = heap.with(&make);
        if block.is_null() && ptr::eq(heap, &HELPERS) {
            return MAIN.with(make);
        }
        block
    }

    /// The heap `block` came from.
    fn of(block: *mut u8) -> &'static Heap {
        if HELPER_RESERVATIONS.contain(block as usize) {
            &HELPERS
        } else {
            &MAIN
        }
    }

    /// Takes the lock. The parallel threads allocate at the same time and
    /// hold a lock for ~100 ns: a short spin settles most contention
    /// without a system call (a plain pthread mutex made 170 futex calls
    /// in a 300-object link).
    fn lock(&self) {
        for _ in 0..100 {
            if self.lock.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return;
            }
            std::hint::spin_loop();
        }
        while self.lock.swap(2, Ordering::Acquire) != 0 {
            // SAFETY: FUTEX_WAIT on a static word; it returns at once if
            // the word is no longer 2.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.lock.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    2,
                    ptr::null::<c_void>(),
                )
            };
        }
    }

    /// Releases the lock, waking a waiter if there is one.
    fn unlock(&self) {
        if self.lock.swap(0, Ordering::Release) == 2 {
            // SAFETY: FUTEX_WAKE on a static word wakes at most one waiter.
            unsafe {
                libc::syscall(libc::SYS_futex, self.lock.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1)
            };
        }
    }

    /// Releases the lock if the fork's prepare handler took it (in a
    /// child, the forking thread held it: its copy is the only thread).
    fn unlock_if_held(&self) {
        if self.lock.load(Ordering::Relaxed) != 0 {
            self.unlock();
        }
    }

    /// Runs `f` on this heap with its lock held.
    fn with<T>(&self, f: impl FnOnce(&mut Dlmalloc<HugePageRegion>) -> T) -> T {
        // Outside the locks: pthread_atfork allocates with glibc's malloc,
        // not these heaps, and must not run inside a fork's prepare handler.
        FORK_HANDLERS.call_once(|| {
            // SAFETY: plain functions that take and release both locks.
            unsafe { libc::pthread_atfork(Some(lock_both), Some(unlock_both), Some(unlock_both)) };
        });
        self.lock();
        // SAFETY: the lock gives this thread the only reference.
        let result = f(unsafe { &mut *self.dlmalloc.get() });
        self.unlock();
        result
    }
}

/// Held across `fork` while another of jitrun's threads may allocate, so
/// that a child never inherits a heap locked by that thread. A fork from
/// the only such thread (every isolated run's) takes no lock: the lock
/// words are then not written after the fork, where each write costs the
/// parent and the child a copy-on-write fault of the page.
extern "C" fn lock_both() {
    // libc's flag too: a helper whose body returned may still be exiting
    // (freeing its thread's memory), and jitrun declares the process
    // single-threaded only once the kernel counts one thread.
    if OTHER_THREADS.load(Ordering::SeqCst) == 0 && crate::support::threads::libc_says_single_threaded() {
        return;
    }
    MAIN.lock();
    HELPERS.lock();
}

extern "C" fn unlock_both() {
    HELPERS.unlock_if_held();
    MAIN.unlock_if_held();
}

// SAFETY: each call goes to a dlmalloc under its lock, with the layout the
// caller gives (dlmalloc honours size and alignment); a block is freed or
// resized by the heap that made it.
unsafe impl GlobalAlloc for JitrunHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded under GlobalAlloc's own contract.
        Heap::allocate(|heap| unsafe { heap.malloc(layout.size(), layout.align()) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        Heap::allocate(|heap| unsafe { heap.calloc(layout.size(), layout.align()) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator with `layout` (the caller's contract).
        Heap::of(ptr).with(|heap| unsafe { heap.free(ptr, layout.size(), layout.align()) })
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`.
        Heap::of(ptr).with(|heap| unsafe { heap.realloc(ptr, layout.size(), layout.align(), new_size) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(size: usize, align: usize, byte: u8) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, align).unwrap();
        // SAFETY: a layout of non-zero size.
        let block = unsafe { JitrunHeap.alloc(layout) };
        assert!(!block.is_null() && (block as usize).is_multiple_of(align), "{size} bytes aligned to {align}");
        // SAFETY: the block just allocated has `size` bytes.
        unsafe { block.write_bytes(byte, size) };
        (block, layout)
    }

    #[test]
    fn blocks_of_every_size_keep_their_contents_through_realloc() {
        let mut blocks = Vec::new();
        for (i, &(size, align)) in
            [(1, 1), (24, 8), (4000, 16), (70_000, 64), (1 << 20, 4096), (5 << 20, 8), (100, 1 << 21)]
                .iter()
                .enumerate()
        {
            blocks.push((filled(size, align, i as u8 + 1), i as u8 + 1));
        }
        for ((block, layout), byte) in blocks {
            let grown = layout.size() * 3 + 5;
            // SAFETY: `block` came from this allocator with `layout`.
            let moved = unsafe { JitrunHeap.realloc(block, layout, grown) };
            assert!(!moved.is_null());
            // SAFETY: the first `layout.size()` bytes were written above and kept by realloc.
            let kept = unsafe { std::slice::from_raw_parts(moved, layout.size()) };
            assert!(kept.iter().all(|&b| b == byte));
            // SAFETY: `moved` has the grown size and the original alignment.
            unsafe { JitrunHeap.dealloc(moved, Layout::from_size_align(grown, layout.align()).unwrap()) };
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_even_where_memory_is_reused() {
        for size in [64, 5000, 300_000] {
            let (block, layout) = filled(size, 8, 0xa5);
            // SAFETY: from this allocator with this layout.
            unsafe { JitrunHeap.dealloc(block, layout) };
            // SAFETY: a non-zero size.
            let zeroed = unsafe { JitrunHeap.alloc_zeroed(layout) };
            // SAFETY: `size` bytes were allocated.
            assert!(unsafe { std::slice::from_raw_parts(zeroed, size) }.iter().all(|&b| b == 0), "{size}");
            // SAFETY: from this allocator with this layout.
            unsafe { JitrunHeap.dealloc(zeroed, layout) };
        }
    }

    #[test]
    fn blocks_of_the_helpers_heap_go_back_to_it_from_any_thread() {
        let made: Vec<(usize, Layout)> = std::thread::spawn(|| {
            use_helper_heap();
            (0..100).map(|i| filled(16 + i * 97, 8, 7)).map(|(block, layout)| (block as usize, layout)).collect()
        })
        .join()
        .unwrap();
        for (block, layout) in made {
            assert!(HELPER_RESERVATIONS.contain(block) && !MAIN_RESERVATIONS.contain(block));
            assert!(ptr::eq(Heap::of(block as *mut u8), &HELPERS));
            // SAFETY: from this allocator with this layout; resized and
            // freed here, on another thread than the one that made it.
            let grown = unsafe { JitrunHeap.realloc(block as *mut u8, layout, layout.size() * 2) };
            assert!(HELPER_RESERVATIONS.contain(grown as usize));
            // SAFETY: the first `layout.size()` bytes were kept by realloc.
            assert!(unsafe { std::slice::from_raw_parts(grown, layout.size()) }.iter().all(|&b| b == 7));
            // SAFETY: the grown block's layout.
            unsafe { JitrunHeap.dealloc(grown, Layout::from_size_align(layout.size() * 2, 8).unwrap()) };
        }
    }

    #[test]
    fn threads_allocating_at_once_never_share_a_block() {
        let workers: Vec<_> = (0..4u8)
            .map(|t| {
                std::thread::spawn(move || {
                    let mut live = Vec::new();
                    for round in 0..2000usize {
                        let size = 16 + (round * 37 + t as usize * 101) % 3000;
                        live.push(filled(size, 16, t));
                        if round % 3 == 0 {
                            let (block, layout) = live.swap_remove(round % live.len());
                            // SAFETY: only this thread wrote `t` into its blocks.
                            assert!(unsafe { std::slice::from_raw_parts(block, layout.size()) }
                                .iter()
                                .all(|&b| b == t));
                            // SAFETY: from this allocator with this layout.
                            unsafe { JitrunHeap.dealloc(block, layout) };
                        }
                    }
                    for (block, layout) in live {
                        // SAFETY: as above.
                        assert!(unsafe { std::slice::from_raw_parts(block, layout.size()) }.iter().all(|&b| b == t));
                        // SAFETY: from this allocator with this layout.
                        unsafe { JitrunHeap.dealloc(block, layout) };
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
    }
}
