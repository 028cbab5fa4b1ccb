//! The thin binary: the C entry point hands over to the library's command
//! line ([`jitrun::cli::app`]), which parses, links, runs and exits.
#![no_main]

// An empty initialized thread-local section aligned to 128 bytes, kept by
// the linker (`R`, SHF_GNU_RETAIN), so that jitrun's TLS block, and with
// it every thread's static TLS area, is aligned so: glibc then places the
// image's thread-locals in static TLS with any alignment up to that (see
// `jitrun::host::tls::STATIC_TLS_ALIGNMENT`). In the first object of the
// link, so that it comes first in the segment and takes no room there.
std::arch::global_asm!(
    ".pushsection .tdata.jitrun_static_tls_alignment,\"awTR\",%progbits",
    ".p2align {}",
    ".popsection",
    const jitrun::host::tls::STATIC_TLS_ALIGNMENT.trailing_zeros(),
);

/// jitrun's allocations stay out of the program's heap (see `jitrun::support::heap`).
#[global_allocator]
static HEAP: jitrun::support::heap::JitrunHeap = jitrun::support::heap::JitrunHeap;

/// The C entry point, without Rust's runtime set-up: that set-up reads
/// `/proc/self/maps` for a stack guard (allocating and freeing memory the
/// program would then find in its heap), installs a SIGSEGV handler and
/// ignores SIGPIPE, all of which a C program does not expect. `std` still
/// gets the arguments from glibc.
#[no_mangle]
// The C runtime calls it with its own argv: the signature is C's.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: the C runtime's own argc and argv.
    unsafe { jitrun::cli::app::start(argc, argv) }
}

// The functions sanitizer runtimes call if the executable defines them,
// answered with the program's (see `jitrun::cli::sanitizer_hooks`).
jitrun::program_hooks!();
