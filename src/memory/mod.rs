//! The mapper's half (after JITLink's `MemoryMapper`, seed 004): it owns
//! the address space. `reserve` takes a range, `prepare` hands out working
//! memory to copy and fix up, `initialize` applies protections and runs
//! finalize actions, `deinitialize` runs their dealloc actions in reverse,
//! `release` gives the range back.
//!
//! In-process ([`in_process::InProcessMapper`]), working memory *is* the
//! target memory; the trait does not assume it: [`buffer::BufferMapper`]
//! writes an image for addresses it never maps (`--noexec`, another CPU's
//! objects), and a mapper that places code in another process fits too.

pub mod buffer;
pub mod in_process;

use anyhow::Result;

/// Where a reservation must lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Anywhere; the kernel's choice lands next to the shared libraries,
    /// which keeps 32-bit displacements to libc in range.
    Anywhere,
    /// Entirely below 2 GiB, for code that stores addresses in 32 bits
    /// (`-fno-pic`).
    Low32,
    /// At exactly this address (for `--base`); fails if it is taken.
    Fixed(u64),
    /// At a random address far below where the kernel puts mappings, so
    /// that a later run of the same link (the link cache's) most likely
    /// finds the range free again: next to the libraries, the range is
    /// often taken in the next process, whose libraries, stacks and heaps
    /// are elsewhere. Anywhere if no such range can be had.
    Repeatable,
}

#[derive(Clone, Copy, Debug)]
pub struct SegmentProtection {
    pub addr: u64,
    pub size: u64,
    pub protection: region::Protection,
}

/// A finalize action and the dealloc action it earns: registration and
/// deregistration of unwind info, of debugger info, and so on.
pub struct ActionPair {
    pub name: &'static str,
    pub finalize: Box<dyn FnOnce() -> Result<()> + Send>,
    pub dealloc: Box<dyn FnOnce() + Send>,
}

impl ActionPair {
    /// A pair whose finalize makes a value (a registration, the patches it
    /// made) that its dealloc gets back to undo.
    pub fn with_state<T: Send + 'static>(
        name: &'static str,
        finalize: impl FnOnce() -> Result<T> + Send + 'static,
        dealloc: impl FnOnce(T) + Send + 'static,
    ) -> ActionPair {
        let slot = std::sync::Arc::new(std::sync::Mutex::new(None));
        let slot_for_dealloc = slot.clone();
        ActionPair {
            name,
            finalize: Box::new(move || {
                let state = finalize()?;
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
                Ok(())
            }),
            dealloc: Box::new(move || {
                if let Some(state) = slot_for_dealloc.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    dealloc(state);
                }
            }),
        }
    }
}

pub struct AllocInfo {
    pub segments: Vec<SegmentProtection>,
    pub actions: Vec<ActionPair>,
}

/// Names an initialized allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InitKey(u64);

impl InitKey {
    /// The key a mapper gives its `number`th initialized allocation.
    pub fn new(number: u64) -> InitKey {
        InitKey(number)
    }
}

pub trait MemoryMapper: Send {
    /// Reserves `size` bytes aligned to `align`; returns the base address.
    fn reserve(&mut self, size: u64, align: u64, placement: Placement) -> Result<u64>;
    /// Working memory for `[addr, addr + size)` of a reservation, writable;
    /// the linker writes its first `filled` bytes in full (the rest is
    /// zero-fill), which the mapper may back with memory up front.
    fn prepare(&mut self, addr: u64, size: u64, filled: u64) -> Result<&mut [u8]>;
    /// Applies final protections, then runs finalize actions in order; if
    /// one fails, runs the dealloc actions already earned in reverse.
    fn initialize(&mut self, alloc: AllocInfo) -> Result<InitKey>;
    /// Runs all dealloc actions in reverse and makes the pages writable.
    fn deinitialize(&mut self, key: InitKey) -> Result<()>;
    /// Returns the reservation at `base` to the system.
    fn release(&mut self, base: u64) -> Result<()>;
}

pub use in_process::InProcessMapper;
