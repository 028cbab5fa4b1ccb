//! The program's malloc heap as a new process has it.
//!
//! jitrun's own memory comes from its own heap (`crate::support::heap`),
//! but the C library still allocates from glibc's on jitrun's behalf before
//! the program starts: above all the dynamic loader, when jitrun `dlopen`s
//! the program's libraries (`libstdc++.so.6`, the small libraries that pin
//! static TLS): it grows and frees its tables as they fill (the unique
//! symbols of libstdc++, the global scope, scopes, `_dl_find_object`'s
//! arrays) and frees the name of a library it finds already loaded. A
//! native program gets those libraries from the loader at start-up, before
//! malloc exists, and its heap holds only what their constructors keep
//! (libstdc++'s exception pool). Under jitrun those frees left chunks in
//! the main thread's tcache and bins, and the program's first `new` or
//! `malloc` got them back holding the loader's old tables, where natively
//! it gets zeros from fresh pages (a C++ hello world: every block of up to
//! 80 bytes among its first four of each size). Programs that read memory
//! they never wrote (a bug, hidden natively) then behave differently.
//!
//! [`as_a_new_process`] gives the program a heap as fresh as natively, just
//! before its initializers: every free chunk of glibc's main arena (the
//! calling thread's tcache, fast bins, bins) is allocated and kept forever
//! (a few KiB), so that the program's blocks come from the top chunk, as
//! natively; and the top chunk's memory that was used and given back is
//! zeroed (its whole pages given back to the kernel, as `malloc_trim` does).
//! Not zeroing the free chunks instead: a native program would not get
//! them at all (and a tcache chunk keeps its list pointer). The libraries'
//! constructors ran inside `dlopen`, among the loader's frees, so a chunk
//! one of them freed is taken too, where natively it would come back to
//! the program (a native run with libstdc++, libm, libz, libssl,
//! libcrypto and libsqlite3 finds no such chunk).
//!
//! glibc publishes no way to empty a tcache, so this reads malloc's own
//! records: the chunk headers of the main arena's heap (contiguous, from
//! the start of the `brk` area to the break) and the calling thread's
//! `tcache_perthread_struct` (a chunk in that heap). Each is checked (every
//! chunk's size in bounds and the walk ending at the break with the top
//! chunk `mallinfo` reports; the tcache's counts matching its lists) and
//! nothing is done when a check fails, when another allocator replaced
//! glibc's `malloc` (a sanitizer's, a preloaded one), or when other arenas
//! exist (jitrun starts no thread that allocates from glibc before the
//! program: see `crate::support::threads`).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

extern "C" {
    /// glibc's own allocator, whatever `malloc` is bound to.
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_mallinfo() -> libc::mallinfo;
}

/// A chunk's header is two words (previous size, size with flag bits); its
/// memory starts after them.
const WORD: usize = std::mem::size_of::<usize>();
const HEADER: usize = 2 * WORD;
/// Chunks are multiples of (and at least) this.
const ALIGNMENT: usize = 2 * WORD;
const MIN_CHUNK: usize = 4 * WORD;
/// The size field's flags: the previous chunk is in use; mmapped; not the main arena.
const PREV_INUSE: usize = 1;
const FLAGS: usize = 7;
/// tcache bins: one per chunk size from `MIN_CHUNK` in steps of `ALIGNMENT`.
const TCACHE_BINS: usize = 64;
/// The chunk of a tcache record with counts of 2 or 1 bytes.
const fn record_size(count_bytes: usize) -> usize {
    (HEADER + TCACHE_BINS * count_bytes + TCACHE_BINS * WORD).next_multiple_of(ALIGNMENT)
}
const RECORD_SIZES: [usize; 2] = [record_size(2), record_size(1)];
/// Rounds of walking and allocating: each round takes every free chunk it
/// found; one more finds none.
const ROUNDS: usize = 4;

/// What [`as_a_new_process`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Freshened {
    /// Chunks taken from the tcache and from the bins.
    pub tcache_chunks: usize,
    pub bin_chunks: usize,
    /// Their bytes, headers included.
    pub bytes: usize,
    /// Bytes of the top chunk zeroed or given back.
    pub top_bytes: usize,
}

/// Why nothing was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotDone {
    /// `malloc` is not glibc's (a sanitizer's or a preloaded allocator).
    OtherAllocator,
    /// No main-arena heap yet (nothing allocated from glibc), or more than one arena.
    NoSingleHeap,
    /// The heap is not laid out as expected.
    Unexpected(&'static str),
}

/// Leaves glibc's main arena as a new process's: nothing free in the
/// calling thread's tcache or in the bins, and the top chunk zeroed. Call
/// on the thread that runs the program, before its initializers, with no
/// other thread allocating. Idempotent, and cheap when there is nothing to
/// do (the walk reads a few hundred chunk headers).
pub fn as_a_new_process() -> Result<Freshened, NotDone> {
    if libc::malloc as *const () != __libc_malloc as *const () {
        return Err(NotDone::OtherAllocator);
    }
    // SAFETY: mallinfo only reads malloc's statistics (under its lock).
    let info = unsafe { __libc_mallinfo() };
    let end = crate::support::program_break::current().unwrap_or(0) as usize;
    // `arena` counts every arena's heap; with one, it is the main arena's.
    let (Ok(arena), Ok(top)) = (usize::try_from(info.arena), usize::try_from(info.keepcost)) else {
        return Err(NotDone::NoSingleHeap);
    };
    if arena == 0 || end == 0 || arena > end {
        return Err(NotDone::NoSingleHeap);
    }
    // One range from the start of the break area, or glibc took memory
    // elsewhere when the break could not grow (a mapping in its way), and
    // `arena` counts that too: the range below the break is not the heap.
    if !crate::support::program_break::is_start((end - arena) as u64) {
        return Err(NotDone::Unexpected("the main arena is not one range from the start of the break area"));
    }
    let heap = Heap { start: end - arena, end, top };
    let mut done = Freshened::default();
    let walk = heap.walk()?;
    if let Some(tcache) = walk.tcache {
        for (bin, count) in tcache.into_iter().enumerate() {
            let size = MIN_CHUNK + bin * ALIGNMENT;
            for _ in 0..count {
                done.bytes += keep(size)?;
                done.tcache_chunks += 1;
            }
        }
    }
    if walk.free.is_empty() && info.smblks == 0 {
        // Taking the tcache's chunks freed nothing into the bins.
        done.top_bytes = heap.zero_top(walk.top_chunk);
        return Ok(done);
    }
    if info.smblks > 0 {
        // Chunks in fast bins look in use; trimming moves them into the
        // bins (and gives whole free pages back).
        // SAFETY: malloc_trim only reorganizes and releases free memory.
        unsafe { libc::malloc_trim(0) };
    }
    for _ in 0..ROUNDS {
        // A trim may have moved the break.
        let end = crate::support::program_break::current().unwrap_or(0) as usize;
        // SAFETY: as above.
        let top = unsafe { __libc_mallinfo() }.keepcost as usize;
        let heap = Heap { start: heap.start, end, top };
        let walk = heap.walk()?;
        if walk.free.is_empty() {
            done.top_bytes = heap.zero_top(walk.top_chunk);
            return Ok(done);
        }
        for size in walk.free {
            done.bytes += keep(size)?;
            done.bin_chunks += 1;
        }
    }
    Err(NotDone::Unexpected("free chunks remain"))
}

/// Allocates a chunk of `size` bytes (headers included) from glibc and
/// keeps it forever. Returns `size`.
fn keep(size: usize) -> Result<usize, NotDone> {
    // The largest request that glibc rounds up to exactly `size`.
    // SAFETY: a plain allocation, never freed.
    let block = unsafe { __libc_malloc(size - WORD) };
    if block.is_null() {
        return Err(NotDone::Unexpected("malloc failed"));
    }
    Ok(size)
}

/// The main arena's heap: its chunks lie back to back from `start` to
/// `end` (the break), the last one the top chunk of `top` bytes.
#[derive(Clone, Copy)]
struct Heap {
    start: usize,
    end: usize,
    top: usize,
}

struct Walk {
    /// Sizes of the free chunks in bins (not the top chunk).
    free: Vec<usize>,
    /// The top chunk's address.
    top_chunk: usize,
    /// The tcache's count per bin, when its record was found with some
    /// chunks in it (an empty one is indistinguishable from zeroed data,
    /// and has nothing to take anyway).
    tcache: Option<[usize; TCACHE_BINS]>,
}

impl Heap {
    /// The size field of the chunk at `chunk` (inside the heap: checked by the caller).
    fn size_field(&self, chunk: usize) -> usize {
        // SAFETY: `chunk + HEADER <= end`: the word lies in the heap, which
        // is mapped, readable memory from `start` to the break.
        unsafe { ((chunk + WORD) as *const usize).read() }
    }

    /// Walks every chunk from the heap's start to the top chunk.
    fn walk(&self) -> Result<Walk, NotDone> {
        let mut walk = Walk { free: Vec::new(), top_chunk: 0, tcache: None };
        // The first chunk of a tcache record's size is the record (the
        // first thing a thread allocates) when its contents agree.
        let mut record_seen = false;
        let mut chunk = self.start;
        if !chunk.is_multiple_of(ALIGNMENT) {
            return Err(NotDone::Unexpected("heap start not aligned"));
        }
        loop {
            if chunk + HEADER > self.end {
                return Err(NotDone::Unexpected("chunk past the break"));
            }
            let field = self.size_field(chunk);
            let size = field & !FLAGS;
            if size < MIN_CHUNK || !size.is_multiple_of(ALIGNMENT) || size > self.end - chunk {
                return Err(NotDone::Unexpected("chunk size out of bounds"));
            }
            if field & (FLAGS & !PREV_INUSE) != 0 {
                return Err(NotDone::Unexpected("chunk not of the main arena"));
            }
            if chunk + size == self.end {
                if size != self.top {
                    return Err(NotDone::Unexpected("top chunk not as reported"));
                }
                walk.top_chunk = chunk;
                return Ok(walk);
            }
            let next = chunk + size;
            if next + HEADER > self.end {
                return Err(NotDone::Unexpected("chunk past the break"));
            }
            if self.size_field(next) & PREV_INUSE == 0 {
                walk.free.push(size);
            } else if !record_seen && RECORD_SIZES.contains(&size) {
                record_seen = true;
                walk.tcache = self.tcache_at(chunk, size);
            }
            chunk = next;
        }
    }

    /// The counts of the tcache whose record (`tcache_perthread_struct`:
    /// a count per bin, then a list head per bin) is the chunk at `chunk`
    /// of `size` bytes, if it is one with chunks in it: counts of 16 bits
    /// (glibc 2.30 and later) or 8, each with a head in the heap exactly
    /// when nonzero.
    fn tcache_at(&self, chunk: usize, size: usize) -> Option<[usize; TCACHE_BINS]> {
        let data = chunk + HEADER;
        for count_bytes in [2usize, 1] {
            let heads_at = data + TCACHE_BINS * count_bytes;
            if size != record_size(count_bytes) {
                continue;
            }
            let mut counts = [0usize; TCACHE_BINS];
            let mut any = false;
            for (bin, count) in counts.iter_mut().enumerate() {
                // SAFETY: the record lies inside the chunk (size checked
                // above), inside the heap.
                let (n, head) = unsafe {
                    let n = match count_bytes {
                        2 => ((data + 2 * bin) as *const u16).read() as usize,
                        _ => ((data + bin) as *const u8).read() as usize,
                    };
                    (n, ((heads_at + bin * WORD) as *const usize).read())
                };
                let in_heap = head > self.start && head < self.end && head.is_multiple_of(ALIGNMENT);
                if (n == 0) != (head == 0) || (n != 0 && !in_heap) {
                    return None;
                }
                *count = n;
                any |= n != 0;
            }
            return any.then_some(counts);
        }
        None
    }

    /// Zeroes the top chunk's memory past its header, as fresh pages are:
    /// whole pages given back to the kernel (read as zeros again), the
    /// rest written. Returns the bytes.
    fn zero_top(&self, top_chunk: usize) -> usize {
        let from = top_chunk + HEADER;
        let page = crate::support::page_size() as usize;
        let whole = from.next_multiple_of(page).min(self.end);
        // SAFETY: the top chunk's memory, past its header: free, and no
        // one's until malloc hands it out.
        unsafe {
            std::ptr::write_bytes(from as *mut u8, 0, whole - from);
            if whole < self.end {
                libc::madvise(whole as *mut c_void, self.end - whole, libc::MADV_DONTNEED);
            }
        }
        self.end - from
    }
}

/// Whether the process's glibc heap is the program's: set by jitrun's
/// command line, whose own memory is elsewhere. A tool that uses the
/// library keeps its heap as it is (its free chunks are its own to reuse).
static FOR_THE_PROGRAM: AtomicBool = AtomicBool::new(false);

/// Makes [`before_the_first_run`] leave the heap as a new process's.
pub fn hand_over_to_the_program() {
    FOR_THE_PROGRAM.store(true, Ordering::Relaxed);
}

/// [`as_a_new_process`] once per process, before the program's first run,
/// when the heap was handed over to it (see [`hand_over_to_the_program`]).
/// A run repeated in the same process finds the heap its previous run
/// left, as it finds the rest of the state; a forked child finds it done
/// by its parent.
pub fn before_the_first_run() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if !FOR_THE_PROGRAM.load(Ordering::Relaxed) || DONE.swap(true, Ordering::Relaxed) {
        return;
    }
    match as_a_new_process() {
        Ok(done) => log::debug!("the program's heap: {:?}", done),
        Err(why) => log::debug!("the program's heap is left as it is: {:?}", why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heap of `words` words laid out as glibc's main arena would be.
    struct Fake {
        words: Vec<u128>,
    }

    impl Fake {
        fn new(bytes: usize) -> Fake {
            Fake { words: vec![0; bytes / 16] }
        }
        fn start(&self) -> usize {
            self.words.as_ptr() as usize
        }
        fn set(&mut self, offset: usize, value: usize) {
            // SAFETY: inside the buffer, aligned to a word.
            unsafe { ((self.start() + offset) as *mut usize).write(value) };
        }
        fn set_u16(&mut self, offset: usize, value: u16) {
            // SAFETY: inside the buffer.
            unsafe { ((self.start() + offset) as *mut u16).write(value) };
        }
        fn heap(&self, top: usize) -> Heap {
            Heap { start: self.start(), end: self.start() + self.words.len() * 16, top }
        }
    }

    /// A tcache record with 2 chunks of 32 bytes and 1 of 80, a chunk in
    /// use, a free one, another in use, then the top chunk.
    fn example() -> (Fake, usize) {
        let mut fake = Fake::new(4096);
        let record = record_size(2);
        let (in_use, free, after) = (record, record + 64, record + 64 + 128);
        let top = after + 48;
        fake.set(8, record | PREV_INUSE);
        fake.set_u16(16, 2);
        fake.set_u16(16 + 2 * 3, 1);
        let heads = 16 + 2 * TCACHE_BINS;
        fake.set(heads, fake.start() + in_use + 16);
        fake.set(heads + 3 * WORD, fake.start() + in_use + 32);
        fake.set(in_use + 8, 64 | PREV_INUSE);
        fake.set(free + 8, 128 | PREV_INUSE);
        fake.set(after, 128); // the free chunk's size at its end
        fake.set(after + 8, 48); // its previous chunk is free
        fake.set(top + 8, (4096 - top) | PREV_INUSE);
        (fake, 4096 - top)
    }

    #[test]
    fn a_walk_finds_the_free_chunks_the_tcache_and_the_top() {
        let (fake, top_size) = example();
        let walk = fake.heap(top_size).walk().unwrap();
        assert_eq!(walk.free, [128]);
        assert_eq!(walk.top_chunk, fake.start() + 4096 - top_size);
        let counts = walk.tcache.unwrap();
        assert_eq!((counts[0], counts[3]), (2, 1));
        assert_eq!(counts.iter().sum::<usize>(), 3);
    }

    #[test]
    fn a_heap_not_laid_out_as_expected_is_refused() {
        let (fake, top_size) = example();
        assert_eq!(fake.heap(top_size + 16).walk().err(), Some(NotDone::Unexpected("top chunk not as reported")));
        let (mut fake, top_size) = example();
        fake.set(record_size(2) + 8, 8 | PREV_INUSE);
        assert_eq!(fake.heap(top_size).walk().err(), Some(NotDone::Unexpected("chunk size out of bounds")));
        let (mut fake, top_size) = example();
        fake.set(record_size(2) + 8, 64 | PREV_INUSE | 4);
        assert_eq!(fake.heap(top_size).walk().err(), Some(NotDone::Unexpected("chunk not of the main arena")));
    }

    #[test]
    fn a_record_whose_counts_and_lists_disagree_is_no_tcache() {
        let (mut fake, top_size) = example();
        fake.set_u16(16 + 2 * 5, 4); // a count without a list
        let walk = fake.heap(top_size).walk().unwrap();
        assert!(walk.tcache.is_none());
        assert_eq!(walk.free, [128]);
    }
}
