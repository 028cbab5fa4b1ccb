//! jitrun: load relocatable ELF and Mach-O objects into memory, link them
//! and run them, with no linker and no executable on disk.
//!
//! The pipeline, one module per step, in its layer (ARCHITECTURE.md):
//!
//! parse ([`graph::format`]; archive members as they are needed) → resolve
//! ([`graph::resolve`], [`graph::runtime`]; the process through
//! [`host::loader`]) → plan GOT, stubs, copy slots ([`graph::tables`]) → lay
//! out segments ([`graph::layout`]) → map ([`memory`]) → copy and apply
//! fixups ([`graph::fixups`], each CPU's equations in [`arch`]) → initialize
//! (protections, unwind registration, TLS: [`host::unwind`], [`host::tls`])
//! → run ([`image`]) → finalize and release (dropping the [`Image`]).
//! [`link::Linker`] drives these steps.
//!
//! Link once, run many: [`Image::run_in_process`], [`Image::run_isolated`]
//! and [`Image::run_batch`] run a linked image again and again, each
//! isolated run in a forked child (see [`image::runs`]).
//!
//! ```no_run
//! use jitrun::{LinkOptions, Linker};
//! let mut linker = Linker::new(LinkOptions::default());
//! linker.add_file("hello.o".as_ref())?;
//! let mut image = linker.link()?;
//! let status = image.run_main("main", "hello", &[])?;
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod arch;
pub mod cli;
pub mod diagnostics;
pub mod graph;
pub mod host;
pub mod image;
pub mod link;
pub mod memory;
pub mod support;

pub use graph::Limits;
pub use image::runs::{GlobalValue, RunOutcome, RunSpec, RunStatus};
pub use image::Image;
pub use link::{LinkOptions, Linker};

pub use support::EXIT_JITRUN_ERROR;
