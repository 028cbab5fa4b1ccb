//! This process: its loader, shared libraries, thread-locals, interposition, jitrun's runtime pieces.

pub mod copyreloc;
pub mod dladdr;
pub mod driver_runtime;
pub mod exports;
pub mod glibc_heap;
pub mod ifunc;
pub mod interpose;
pub mod loader;
pub mod runtime;
pub mod selfexe;
pub mod stdio;
pub mod tls;
pub mod tls_pool;
pub mod unwind;
