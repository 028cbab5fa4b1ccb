//! Static TLS blocks outlive the images that used them, when they must.
//!
//! glibc hands out static TLS (where every image's TLS module lives, see
//! [`crate::host::tls`]) like a stack: unloading a module gives its space back
//! only when it is the most recently allocated one. Images whose lifetimes
//! overlap (load B, unload A, load C, ...) would otherwise leak a block per
//! load until `dlopen` fails — measured: 416 overlapping loads of a 4-byte
//! thread-local exhausted the default surplus.
//!
//! So an unloaded module that is not at the end stays loaded, in a pool,
//! and a later image whose TLS fits (size and alignment) reuses its block:
//! its module id and thread-pointer offset stay valid, the template the C
//! library copies into new threads is rewritten in place, and the loading
//! thread's own copy is reset. Modules at the end are closed, and pooled
//! ones that become the end are closed after them, so sequential
//! load/unload keeps glibc's own reuse and the pool stays empty.
//!
//! The remaining limit: threads that already existed when a pooled block
//! was handed out (other than the loading thread) keep the previous image's
//! values in it rather than the new template; a fresh module gives every
//! thread the template. Threads created afterwards always get the template.

use std::sync::Mutex;

use crate::arch::{TlsVariant, HOST};
use crate::host::loader::SharedLibrary;

/// A TLS module's block in static TLS, owned by one image at a time.
pub struct StaticBlock {
    pub module_id: u64,
    /// Offset from the thread pointer (negative on x86-64: allocated below it).
    pub tp_offset: i64,
    /// Bytes of the block, all of them initialized from the template.
    size: u64,
    align: u64,
    /// Where the loader keeps the template it copies into new threads.
    template_addr: u64,
    library: Option<SharedLibrary>,
}

struct Pooled {
    block_tp_offset: i64,
    module_id: u64,
    size: u64,
    align: u64,
    template_addr: u64,
    library: SharedLibrary,
}

#[derive(Default)]
struct Registry {
    /// Thread-pointer offsets of blocks in use.
    live: Vec<i64>,
    pool: Vec<Pooled>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { live: Vec::new(), pool: Vec::new() });

/// Orders blocks by when glibc handed them out, newest greatest: static
/// TLS grows down from the thread pointer on x86-64 (variant II), up from
/// it on aarch64 (variant I).
fn recency(tp_offset: i64) -> i64 {
    match HOST.tls_variant() {
        TlsVariant::II => -tp_offset,
        TlsVariant::I { .. } => tp_offset,
    }
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

impl StaticBlock {
    /// Takes ownership of a freshly loaded module's block.
    pub(crate) fn fresh(
        library: SharedLibrary,
        module_id: u64,
        tp_offset: i64,
        size: u64,
        align: u64,
        template_addr: u64,
    ) -> StaticBlock {
        registry().live.push(tp_offset);
        StaticBlock { module_id, tp_offset, size, align, template_addr, library: Some(library) }
    }

    /// Modules kept in the pool right now.
    pub fn pooled_count() -> usize {
        registry().pool.len()
    }
}

/// A pooled block that holds `template.len()` bytes aligned to `align`,
/// re-initialized with `template`; the smallest that fits.
pub(crate) fn reuse(template: &[u8], align: u64) -> Option<StaticBlock> {
    let mut reg = registry();
    let size = template.len() as u64;
    let (i, _) = reg
        .pool
        .iter()
        .enumerate()
        .filter(|(_, p)| p.size >= size && p.align >= align.max(1))
        .min_by_key(|(_, p)| p.size)?;
    let p = reg.pool.swap_remove(i);
    reg.live.push(p.block_tp_offset);
    drop(reg);
    let fill = |at: u64| {
        // SAFETY: `at` is either the module's template (inside its mapped
        // read-write PT_LOAD segment, `p.size` bytes, which the loader reads
        // only when it creates a thread) or this thread's own static block
        // for the module (`p.size` bytes at its fixed thread-pointer offset),
        // and no code of a live image uses the block (it was pooled).
        unsafe {
            std::ptr::copy_nonoverlapping(template.as_ptr(), at as *mut u8, template.len());
            std::ptr::write_bytes((at + size) as *mut u8, 0, (p.size - size) as usize);
        }
    };
    fill(p.template_addr);
    fill((crate::host::tls::thread_pointer() as i64 + p.block_tp_offset) as u64);
    log::debug!("TLS module {} reused: {} of {} bytes at tp{:+#x}", p.module_id, size, p.size, p.block_tp_offset);
    Some(StaticBlock {
        module_id: p.module_id,
        tp_offset: p.block_tp_offset,
        size: p.size,
        align: p.align,
        template_addr: p.template_addr,
        library: Some(p.library),
    })
}

impl Drop for StaticBlock {
    fn drop(&mut self) {
        let Some(library) = self.library.take() else { return };
        let mut reg = registry();
        if let Some(i) = reg.live.iter().position(|&t| t == self.tp_offset) {
            reg.live.swap_remove(i);
        }
        reg.pool.push(Pooled {
            block_tp_offset: self.tp_offset,
            module_id: self.module_id,
            size: self.size,
            align: self.align,
            template_addr: self.template_addr,
            library,
        });
        // Close pooled modules from the newest down while no live block is
        // newer: glibc then gives their space back.
        let mut closing = Vec::new();
        loop {
            let newest_live = reg.live.iter().map(|&t| recency(t)).max().unwrap_or(i64::MIN);
            let Some((i, _)) = reg.pool.iter().enumerate().max_by_key(|(_, p)| recency(p.block_tp_offset)) else {
                break;
            };
            if recency(reg.pool[i].block_tp_offset) < newest_live {
                break;
            }
            closing.push(reg.pool.swap_remove(i).library);
        }
        drop(reg);
        // Newest first, so each one is at the end when it closes.
        for library in closing {
            drop(library);
        }
    }
}
