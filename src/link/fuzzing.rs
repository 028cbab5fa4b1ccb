//! The body of the fuzz targets in `fuzz/`: link inputs held in memory the
//! way `jitrun --noexec` does, then unload. Kept in the library so that the
//! targets stay one line and any harness (libFuzzer, AFL, a plain loop over
//! a corpus) runs exactly the same code.
//!
//! Nothing from the input is executed: [`Linker::link`] stops before
//! constructors and the entry. Its finalize actions do touch the process —
//! `.eh_frame` is handed to the unwinder (validated first by
//! [`crate::graph::ehframe`], since a bad encoding would abort the next unwind),
//! a TLS module is loaded, copy relocations re-point library GOT entries —
//! and dropping the image undoes each of them before unmapping.

use anyhow::Result;

use crate::graph::Limits;
use crate::link::{LinkOptions, Linker};

/// Limits small enough for a fuzzer's memory budget (libFuzzer's default
/// `-rss_limit_mb` is 2048).
pub fn fuzzing_limits() -> Limits {
    Limits { max_image_size: 256 << 20, max_tls_size: 1 << 20 }
}

/// Links `inputs` (objects or archives, any supported format) with
/// unresolved symbols allowed, and unloads the result.
pub fn link_noexec(inputs: &[&[u8]]) -> Result<()> {
    let options = LinkOptions { allow_unresolved: true, limits: fuzzing_limits(), ..LinkOptions::default() };
    let mut linker = Linker::new(options);
    for (i, bytes) in inputs.iter().enumerate() {
        linker.add_bytes(&format!("input{}", i), bytes.to_vec())?;
    }
    drop(linker.link()?);
    Ok(())
}
