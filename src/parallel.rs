//! Translating many objects at once.
//!
//! Objects are independent until resolution (DESIGN.md, seed 000): each
//! front-end call reads only its own input bytes (shared read-only through
//! an `Arc`) and builds its own [`LinkGraph`], so objects can be translated
//! on several threads with no shared state at all. The symbol table, built
//! afterwards by [`crate::link::Linker::link`] on one thread, is the one
//! meeting point. Results keep input order, so links stay deterministic.

use std::sync::Arc;

use anyhow::Result;

use crate::input::InputData;
use crate::model::LinkGraph;
use crate::{format, Limits};

/// Below this many objects, starting threads costs more than it saves.
const PARALLEL_THRESHOLD: usize = 8;

/// Translates ELF relocatable objects `(name, bytes)` into link graphs, in
/// input order; the first failing input (in input order) is the error.
pub fn parse_objects(objects: Vec<(String, Arc<InputData>)>, limits: &Limits) -> Result<Vec<LinkGraph>> {
    // Asking for the CPU count reads cgroup files: only when it matters.
    let threads = if objects.len() < PARALLEL_THRESHOLD {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    if threads < 2 {
        return objects.into_iter().map(|(name, data)| format::elf::parse(&name, data, limits)).collect();
    }
    let chunk_size = objects.len().div_ceil(threads);
    let mut chunks: Vec<Vec<(String, Arc<InputData>)>> = Vec::new();
    let mut objects = objects.into_iter().peekable();
    while objects.peek().is_some() {
        chunks.push(objects.by_ref().take(chunk_size).collect());
    }
    let parsed: Vec<Vec<Result<LinkGraph>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk.into_iter().map(|(name, data)| format::elf::parse(&name, data, limits)).collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    parsed.into_iter().flatten().collect()
}
