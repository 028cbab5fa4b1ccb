//! The mapper that maps images into this process: anonymous mappings,
//! reserved inaccessible, made writable to be filled, then given their
//! final protections (W^X throughout).

use std::collections::HashMap;

use anyhow::{bail, Context, Result};

use super::{AllocInfo, InitKey, MemoryMapper, Placement, SegmentProtection};

struct Reservation {
    /// Start of the mapping, which may be below `base` for over-aligned images.
    map_start: u64,
    map_len: usize,
    base: u64,
    size: u64,
    /// Bytes from `base` the mapping covers: `size`, rounded up to whole
    /// huge pages for an image that may use them.
    span: u64,
    /// Ranges `prepare` made writable (and `deinitialize` made so again).
    writable: Vec<std::ops::Range<u64>>,
    /// Made writable past the image by `prepare`, so that its last huge
    /// page is whole; `initialize` makes it inaccessible again.
    huge_page_tail: Option<std::ops::Range<u64>>,
}

impl Reservation {
    /// Whether `[addr, addr + size)` lies inside the reserved range.
    fn holds(&self, addr: u64, size: u64) -> bool {
        addr >= self.base && addr.checked_add(size).is_some_and(|end| end <= self.base + self.size)
    }
}

/// A dealloc action earned by a successful finalize action, with its name.
type Dealloc = (&'static str, Box<dyn FnOnce() + Send>);

struct Initialized {
    segments: Vec<SegmentProtection>,
    deallocs: Vec<Dealloc>,
}

/// Maps images into this process.
#[derive(Default)]
pub struct InProcessMapper {
    reservations: HashMap<u64, Reservation>,
    initialized: HashMap<InitKey, Initialized>,
    next_key: u64,
}

impl InProcessMapper {
    pub fn new() -> Self {
        Self::default()
    }

    fn reservation_containing(&self, addr: u64, size: u64) -> Option<&Reservation> {
        self.reservations.values().find(|r| r.holds(addr, size))
    }

    fn reservation_containing_mut(&mut self, addr: u64, size: u64) -> Option<&mut Reservation> {
        self.reservations.values_mut().find(|r| r.holds(addr, size))
    }
}

/// Low addresses tried for `Low32` when `MAP_32BIT` is full (or the CPU has
/// none); 4 MiB is where
/// a native non-PIE executable starts.
const LOW_CANDIDATES: [u64; 8] =
    [0x40_0000, 0x1000_0000, 0x2000_0000, 0x3000_0000, 0x4000_0000, 0x5000_0000, 0x6000_0000, 0x7000_0000];
const LOW_LIMIT: u64 = 1 << 31;
/// The size of a transparent huge page on x86-64.
const HUGE_PAGE: u64 = 2 << 20;
/// Written memory is backed by transparent huge pages from this much on
/// (per 2 MiB of image). On this kind of VM a 4 KiB page costs ~1.35 µs
/// to populate (allocation, zeroing, accounting) and a 2 MiB page ~120 µs,
/// so from 1 MiB on a huge page saves at least ~0.2 ms and adds at most
/// 1 MiB of memory (SQLite's image: 1.1 MiB). Images this large are
/// aligned to huge pages.
const HUGE_PAGES_FROM: u64 = 1 << 20;
/// Below this, populating costs more than the page faults it saves.
const POPULATE_FROM: u64 = 64 << 10;

fn mmap_none(hint: u64, len: usize, extra_flags: i32) -> Option<u64> {
    // SAFETY: an anonymous PROT_NONE mapping touches no existing memory;
    // MAP_FIXED_NOREPLACE (when given) refuses to replace a mapping.
    let ptr = unsafe {
        libc::mmap(
            hint as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | extra_flags,
            -1,
            0,
        )
    };
    (ptr != libc::MAP_FAILED).then_some(ptr as u64)
}

/// Reserves `span` bytes (a multiple of `align`) at a random multiple of
/// `align` in the second eighth of the address space, `[top/8, top/4)`,
/// `top` being the power of two above the stack and libc (either may be
/// elsewhere: a caller's own stack, a static executable). Kernels put mappings
/// near the top (libraries, thread stacks, heaps) and executables at 2/3
/// of it, at most a few GiB each, so with 47 or 48 address bits that is
/// 16 TiB (or 32) nothing else lands in, and a few tries find a free range.
/// `None` if they do not (a tool that confines the address space, such as
/// valgrind, may refuse it all).
fn reserve_repeatable(span: u64, align: u64) -> Option<u64> {
    let top = highest_known_address().checked_next_power_of_two()?;
    let (low, high) = (top / 8, top / 4);
    let choices = high.checked_sub(low.checked_add(span)?)? / align;
    if choices == 0 {
        return None;
    }
    (0..4u64)
        .find_map(|attempt| mmap_none_exactly_at(low + crate::support::random_u64(attempt) % choices * align, span))
}

/// An inaccessible reservation of `len` bytes at `at` exactly, if that
/// range is free.
fn mmap_none_exactly_at(at: u64, len: u64) -> Option<u64> {
    match mmap_none(at, len as usize, libc::MAP_FIXED_NOREPLACE) {
        Some(start) if start == at => Some(start),
        Some(elsewhere) => {
            // A kernel before 4.17 takes the flag for a mere hint.
            munmap(elsewhere, len as usize);
            None
        }
        None => None,
    }
}

/// Reserves `len` bytes below 2 GiB, clear of `heap` (the break area's
/// room to grow: [`heap_room`]): the kernel's low choice
/// (`MAP_32BIT`), else one of [`LOW_CANDIDATES`], else just above or
/// below that room; in its way only when nothing else is free.
fn reserve_low32(len: u64, heap: std::ops::Range<u64>) -> Option<u64> {
    let below_limit = |at: u64| at.checked_add(len).is_some_and(|end| end <= LOW_LIMIT);
    let clear_of_heap = |at: u64| at + len <= heap.start || at >= heap.end;
    let at_exactly = |at: u64| mmap_none_exactly_at(at, len);
    let kernels_choice = match crate::support::machine::MAP_LOW_2GIB {
        0 => None,
        flag => mmap_none(0, len as usize, flag).and_then(|start| {
            if below_limit(start) {
                return Some(start);
            }
            munmap(start, len as usize);
            None
        }),
    };
    if let Some(start) = kernels_choice.filter(|&start| clear_of_heap(start)) {
        return Some(start);
    }
    let page = crate::support::page_size();
    let beside_heap = [heap.end, heap.start.saturating_sub(len) / page * page];
    let candidates = || LOW_CANDIDATES.into_iter().chain(beside_heap).filter(|&at| at != 0 && below_limit(at));
    if let Some(clear) = candidates().filter(|&at| clear_of_heap(at)).find_map(at_exactly) {
        if let Some(in_the_way) = kernels_choice {
            munmap(in_the_way, len as usize);
        }
        return Some(clear);
    }
    kernels_choice.or_else(|| candidates().find_map(at_exactly))
}

/// How much room above its start the break area keeps free of a `Low32`
/// reservation: glibc's main heap grows up from there, and an image in
/// its way stops it (glibc then takes memory with `mmap`, and the heap is
/// no longer the one range it is in a native process). The kernel
/// randomizes the area's start over 1 GiB above jitrun's executable, so it
/// may sit right below `MAP_32BIT`'s range (1 GiB up); a native non-PIE
/// program's heap has the room it needs there.
const HEAP_ROOM: u64 = 512 << 20;

/// The range [`reserve_low32`] keeps clear: from the break area's start to
/// [`HEAP_ROOM`] above the break (empty if neither is known).
fn heap_room() -> std::ops::Range<u64> {
    use crate::support::program_break;
    let now = program_break::current();
    let Some(start) = program_break::start().or(now) else { return 0..0 };
    let now = now.unwrap_or(start).max(start);
    start..now.saturating_add(HEAP_ROOM).next_multiple_of(crate::support::page_size())
}

/// The higher of a stack variable's address and libc's `mmap`'s: both
/// normally near the top of the address space.
fn highest_known_address() -> u64 {
    let on_the_stack = 0u8;
    (std::ptr::addr_of!(on_the_stack) as u64).max(libc::mmap as *const () as u64)
}

/// Gives `[start, end)`, adjacent segments of a reservation this mapper
/// owns, their protection, if there is such a run.
fn protect_run(run: Option<(u64, u64, region::Protection)>) -> Result<()> {
    let Some((start, end, protection)) = run else { return Ok(()) };
    // SAFETY: the segments lie inside a reservation we own (checked by the
    // caller); W^X holds because protections are READ, READ_EXECUTE or
    // READ_WRITE.
    unsafe { region::protect(start as *const u8, (end - start) as usize, protection) }
        .with_context(|| format!("cannot protect segment at {:#x}", start))?;
    Ok(())
}

fn munmap(addr: u64, len: usize) {
    // SAFETY: only called on ranges this mapper mapped itself.
    unsafe { libc::munmap(addr as *mut libc::c_void, len) };
}

/// Readies `[addr, addr + filled)`, memory the linker is about to write in
/// full (not zero-fill, which a program may touch sparsely), so that the
/// copy does not take one page fault per 4 KiB (~2 µs each in a VM): up to
/// `huge_end` it is asked to use transparent huge pages (a fault per 2 MiB,
/// as the copy reaches them); the rest, if large enough, is populated in
/// one call. Advice only; where the system refuses (kernels before 5.14
/// lack MADV_POPULATE_WRITE), the copy faults as before.
fn prefault_for_writing(addr: u64, huge_end: u64, filled: u64) {
    let advise = |start: u64, end: u64, advice: libc::c_int| {
        // SAFETY: advice on mapped, writable memory of a reservation this
        // mapper owns: it leaves contents (zero) and protections as they are.
        unsafe { libc::madvise(start as *mut libc::c_void, (end - start) as usize, advice) };
    };
    if huge_end > addr {
        advise(addr, huge_end, libc::MADV_HUGEPAGE);
    }
    let populate_from = huge_end.max(addr);
    if addr + filled >= populate_from + POPULATE_FROM {
        advise(populate_from, addr + filled, libc::MADV_POPULATE_WRITE);
    }
}

impl InProcessMapper {
    /// The `len` bytes at `addr` of an initialized image: the range must
    /// lie in one of its segments, given a readable protection.
    pub fn view(&self, addr: u64, len: u64) -> Result<&[u8]> {
        let readable = self.initialized.values().flat_map(|i| &i.segments).any(|s| {
            s.protection.contains(region::Protection::READ) && s.addr <= addr && addr + len <= s.addr + s.size
        });
        if !readable || self.reservation_containing(addr, len).is_none() {
            bail!("read: [{:#x}, +{:#x}) is not in a readable segment of an image", addr, len);
        }
        // SAFETY: the range lies in a readable segment of a reservation this
        // mapper owns; the borrow of `self` keeps it mapped and its
        // protections as they are (only `&mut self` changes them), and no
        // loaded code runs while jitrun holds the view.
        Ok(unsafe { std::slice::from_raw_parts(addr as *const u8, len as usize) })
    }

    /// Maps `len` bytes of `file` from `offset` (page aligned), privately
    /// (copy on write), at `addr`, the start of a reservation made with
    /// `Placement::Fixed`, and makes the rest of the image up to `size`
    /// writable zero-fill: what `prepare` gives, with the contents already
    /// there (the link cache's image). The file's pages stay shared with
    /// the page cache until written.
    pub fn prepare_from_file(
        &mut self,
        addr: u64,
        size: u64,
        file: &std::fs::File,
        offset: u64,
        len: u64,
    ) -> Result<&mut [u8]> {
        use std::os::fd::AsRawFd;
        let page = crate::support::page_size();
        let Some(reservation) = self.reservation_containing_mut(addr, size) else {
            bail!("prepare: [{:#x}, +{:#x}) is not inside a reservation", addr, size);
        };
        if reservation.base != addr || len > size || !offset.is_multiple_of(page) || size == 0 {
            bail!("prepare: a file mapping must start the image, page aligned, within its size");
        }
        let mapped_len = len.div_ceil(page) * page;
        if addr + mapped_len > reservation.map_start + reservation.map_len as u64 {
            bail!("prepare: the cached image's file pages run past its reservation");
        }
        if mapped_len > 0 {
            // SAFETY: MAP_FIXED replaces only this mapper's own inaccessible
            // reservation, from its start; the mapping is private, so writes
            // to it never reach the file.
            let ptr = unsafe {
                libc::mmap(
                    addr as *mut libc::c_void,
                    mapped_len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_FIXED,
                    file.as_raw_fd(),
                    offset as libc::off_t,
                )
            };
            if ptr == libc::MAP_FAILED {
                bail!("cannot map the cached image: {}", std::io::Error::last_os_error());
            }
        }
        if size > mapped_len {
            // SAFETY: the zero-fill rest of the image, inside the reservation.
            unsafe {
                region::protect(
                    (addr + mapped_len) as *const u8,
                    (size - mapped_len) as usize,
                    region::Protection::READ_WRITE,
                )
            }
            .context("cannot make working memory writable")?;
        }
        reservation.writable.push(addr..addr + size.max(mapped_len));
        // SAFETY: the range is mapped read-write, owned by this mapper, and
        // the returned borrow of `self` keeps it from being released. Bytes
        // of the last file page past `len` are the file's (zero, as written).
        Ok(unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, size as usize) })
    }
}

impl MemoryMapper for InProcessMapper {
    fn reserve(&mut self, size: u64, align: u64, placement: Placement) -> Result<u64> {
        let page = crate::support::page_size();
        let mut align = align.max(page);
        let mut span = size.max(page).next_multiple_of(page);
        if size >= HUGE_PAGES_FROM && !matches!(placement, Placement::Fixed(_)) {
            // So that huge pages fit (see `prefault_for_writing`).
            align = align.max(HUGE_PAGE);
            span = span.checked_next_multiple_of(HUGE_PAGE).context("image too large for this address space")?;
        }
        let size = size.max(page);
        // Over-reserve so an aligned base exists inside the mapping.
        let map_len = span
            .checked_add(align - page)
            .and_then(|len| usize::try_from(len).ok())
            .context("image too large for this address space")?;
        let anywhere = || -> Result<(u64, usize)> {
            let allocation =
                region::alloc(map_len, region::Protection::NONE).context("cannot reserve address space")?;
            let (ptr, _) = allocation.into_raw_parts::<u8>();
            Ok((ptr as u64, map_len))
        };
        let (map_start, map_len) = match placement {
            Placement::Anywhere => anywhere()?,
            Placement::Repeatable => match reserve_repeatable(span, align) {
                Some(start) => (start, span as usize),
                None => anywhere()?,
            },
            Placement::Low32 => match reserve_low32(map_len as u64, heap_room()) {
                Some(a) => (a, map_len),
                None => bail!(
                    "cannot reserve {} bytes below 2 GiB for code built without -fPIC/-fPIE (it stores addresses in 32 bits)",
                    size
                ),
            },
            Placement::Fixed(addr) => {
                if addr % align != 0 {
                    bail!("--base {:#x} is not aligned to {:#x}", addr, align);
                }
                match mmap_none(addr, map_len, libc::MAP_FIXED_NOREPLACE) {
                    Some(a) if a == addr => (a, map_len),
                    Some(a) => {
                        munmap(a, map_len);
                        bail!("cannot reserve {:#x} bytes at {:#x}: the range is taken", size, addr)
                    }
                    None => {
                        bail!("cannot reserve {:#x} bytes at {:#x}: {}", size, addr, std::io::Error::last_os_error())
                    }
                }
            }
        };
        let base = map_start.div_ceil(align) * align;
        self.reservations.insert(
            base,
            Reservation { map_start, map_len, base, size, span, writable: Vec::new(), huge_page_tail: None },
        );
        Ok(base)
    }

    fn prepare(&mut self, addr: u64, size: u64, filled: u64) -> Result<&mut [u8]> {
        let Some(reservation) = self.reservation_containing_mut(addr, size) else {
            bail!("prepare: [{:#x}, +{:#x}) is not inside a reservation", addr, size);
        };
        if size == 0 {
            return Ok(&mut []);
        }
        let filled = filled.min(size);
        // Huge pages need their whole aligned 2 MiB writable (one mapping).
        let huge_end = match (filled % HUGE_PAGE, addr % HUGE_PAGE) {
            (rest, 0) if rest >= HUGE_PAGES_FROM => addr + filled.next_multiple_of(HUGE_PAGE),
            (_, 0) => addr + filled / HUGE_PAGE * HUGE_PAGE,
            _ => addr,
        }
        .min(reservation.base + reservation.span);
        let end = (addr + size).max(huge_end);
        // SAFETY: the range lies inside a reservation this mapper owns and
        // no initialized segment overlaps it (prepare precedes initialize).
        unsafe { region::protect(addr as *const u8, (end - addr) as usize, region::Protection::READ_WRITE) }
            .context("cannot make working memory writable")?;
        reservation.writable.push(addr..end);
        if end > addr + size {
            reservation.huge_page_tail = Some(addr + size..end);
        }
        prefault_for_writing(addr, huge_end, filled);

        // SAFETY: the range is mapped read-write, owned by this mapper, and
        // the returned borrow of `self` keeps it from being released.
        Ok(unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, size as usize) })
    }

    fn initialize(&mut self, alloc: AllocInfo) -> Result<InitKey> {
        // Instruction cache coherence, a step of its own: the code just
        // written must be what every core fetches (on aarch64 its lines
        // are cleaned and the instruction cache invalidated; x86-64's
        // caches are coherent).
        for seg in alloc.segments.iter().filter(|s| s.protection.contains(region::Protection::EXECUTE)) {
            crate::support::machine::make_code_visible(seg.addr, seg.size);
        }
        // One mprotect per run of adjacent segments that get the same
        // protection, none for writable ones already so (each call ~5 µs).
        let mut pending: Option<(u64, u64, region::Protection)> = None;
        for seg in alloc.segments.iter().filter(|s| s.size > 0) {
            let Some(reservation) = self.reservation_containing(seg.addr, seg.size) else {
                bail!("initialize: segment at {:#x} is not inside a reservation", seg.addr);
            };
            let already_so = seg.protection == region::Protection::READ_WRITE
                && reservation.writable.iter().any(|w| w.start <= seg.addr && seg.addr + seg.size <= w.end);
            match &mut pending {
                Some((_, end, protection)) if !already_so && *end == seg.addr && *protection == seg.protection => {
                    *end = seg.addr + seg.size;
                }
                _ => {
                    protect_run(pending.take())?;
                    pending = (!already_so).then_some((seg.addr, seg.addr + seg.size, seg.protection));
                }
            }
        }
        protect_run(pending)?;
        let first = alloc.segments.first().map(|s| s.addr);
        if let Some(r) = first.and_then(|addr| self.reservations.values_mut().find(|r| r.holds(addr, 0))) {
            protect_run(r.huge_page_tail.take().map(|tail| (tail.start, tail.end, region::Protection::NONE)))?;
        }
        let mut deallocs: Vec<Dealloc> = Vec::new();
        for action in alloc.actions {
            if let Err(e) = (action.finalize)() {
                for (_, dealloc) in deallocs.into_iter().rev() {
                    dealloc();
                }
                return Err(e.context(format!("finalize action `{}` failed", action.name)));
            }
            deallocs.push((action.name, action.dealloc));
        }
        let key = InitKey::new(self.next_key);
        self.next_key += 1;
        self.initialized.insert(key, Initialized { segments: alloc.segments, deallocs });
        Ok(key)
    }

    fn deinitialize(&mut self, key: InitKey) -> Result<()> {
        let Some(init) = self.initialized.remove(&key) else { bail!("deinitialize: unknown allocation") };
        for (name, dealloc) in init.deallocs.into_iter().rev() {
            log::trace!("dealloc action {}", name);
            dealloc();
        }
        for seg in init.segments.iter().filter(|s| s.size > 0) {
            // SAFETY: the segment is inside a reservation we own and no
            // loaded code runs any more (its dealloc actions have run).
            unsafe { region::protect(seg.addr as *const u8, seg.size as usize, region::Protection::READ_WRITE) }?;
        }
        Ok(())
    }

    fn release(&mut self, base: u64) -> Result<()> {
        let Some(r) = self.reservations.remove(&base) else { bail!("release: no reservation at {:#x}", base) };
        munmap(r.map_start, r.map_len);
        Ok(())
    }
}

impl Drop for InProcessMapper {
    fn drop(&mut self) {
        let keys: Vec<InitKey> = self.initialized.keys().copied().collect();
        for key in keys {
            let _ = self.deinitialize(key);
        }
        for (_, r) in self.reservations.drain() {
            munmap(r.map_start, r.map_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::ActionPair;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn reserve_prepare_initialize_release() {
        let mut m = InProcessMapper::new();
        let base = m.reserve(3 * 4096, 4096, Placement::Anywhere).unwrap();
        m.prepare(base, 8192, 8192).unwrap()[0] = 0xc3;
        let seg = SegmentProtection { addr: base, size: 4096, protection: region::Protection::READ_EXECUTE };
        let key = m.initialize(AllocInfo { segments: vec![seg], actions: vec![] }).unwrap();
        let info = region::query(base as *const u8).unwrap();
        assert_eq!(info.protection(), region::Protection::READ_EXECUTE);
        m.deinitialize(key).unwrap();
        m.release(base).unwrap();
        assert!(m.release(base).is_err());
    }

    #[test]
    fn low32_lands_below_2gib() {
        let mut m = InProcessMapper::new();
        let base = m.reserve(1 << 20, 65536, Placement::Low32).unwrap();
        assert!(base + (1 << 20) <= LOW_LIMIT);
        assert_eq!(base % 65536, 0);
        let heap = heap_room();
        assert!(base + (1 << 20) <= heap.start || base >= heap.end, "{base:#x} in the heap's room {heap:x?}");
    }

    /// A break area that starts right below where the kernel puts low
    /// mappings (it may, one run in a few hundred) keeps its room: the
    /// reservation goes elsewhere below 2 GiB. A CI run's program crashed
    /// when glibc's heap could not grow past its image.
    #[test]
    fn low32_keeps_clear_of_the_heaps_room_to_grow() {
        let len = 3 << 20;
        // x86-64's MAP_32BIT range starts at 1 GiB (randomized over its
        // first 32 MiB): all of that is in the way here.
        let heap = (1 << 30) - 4096..(1 << 30) + HEAP_ROOM;
        let at = reserve_low32(len, heap.clone()).unwrap();
        assert!(at + len <= LOW_LIMIT, "{at:#x}");
        assert!(at + len <= heap.start || at >= heap.end, "{at:#x} in {heap:x?}");
        munmap(at, len as usize);
    }

    #[test]
    fn repeatable_lands_far_from_the_kernels_choices_and_can_be_had_again() {
        let top = highest_known_address().next_power_of_two();
        let near_libraries = InProcessMapper::new().reserve(4096, 4096, Placement::Anywhere).unwrap();
        let mut m = InProcessMapper::new();
        let mut bases = Vec::new();
        for (size, align) in [(3 * 4096, 4096), (3 << 20, HUGE_PAGE)] {
            let base = m.reserve(size, align, Placement::Repeatable).unwrap();
            assert!(base >= top / 8 && base + size <= top / 4, "{base:#x} outside the second eighth below {top:#x}");
            assert_eq!(base % align, 0);
            assert!(base.abs_diff(near_libraries) > 1 << 40, "{base:#x} next to {near_libraries:#x}");
            bases.push((base, size));
        }
        // What the link cache does in the next run, here after a release.
        for (base, size) in bases {
            m.release(base).unwrap();
            assert_eq!(m.reserve(size, 4096, Placement::Fixed(base)).unwrap(), base);
            assert!(m.reserve(size, 4096, Placement::Fixed(base)).is_err(), "taken, so refused");
            m.release(base).unwrap();
        }
    }

    #[test]
    fn failing_finalize_runs_earned_deallocs_in_reverse() {
        let mut m = InProcessMapper::new();
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut actions = Vec::new();
        for name in ["first", "second"] {
            let (o, c) = (order.clone(), calls.clone());
            actions.push(ActionPair {
                name,
                finalize: Box::new(move || {
                    c.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }),
                dealloc: Box::new(move || o.lock().unwrap().push(name)),
            });
        }
        actions.push(ActionPair {
            name: "fails",
            finalize: Box::new(|| bail!("no")),
            dealloc: Box::new(|| panic!("never earned")),
        });
        let err = m.initialize(AllocInfo { segments: vec![], actions }).unwrap_err();
        assert!(format!("{:#}", err).contains("fails"));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(*order.lock().unwrap(), vec!["second", "first"]);
    }
}
