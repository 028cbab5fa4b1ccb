//! The bottom layer: what every other layer may use. Input files, jitrun's
//! own heap, threads of its own, fixed buffers for signal handlers, and the
//! facts of the machine (page size, exit statuses).

pub mod fixed_buffer;
pub mod heap;
pub mod input;
pub mod parallel;
pub mod threads;

/// Exit status for jitrun's own failures (usage, I/O, malformed input,
/// unresolved symbols, relocation errors), distinct from the program's.
pub const EXIT_JITRUN_ERROR: i32 = 125;

/// Exit status of a run stopped by its timeout, as timeout(1) exits.
pub const EXIT_TIMEOUT: i32 = 124;

/// The size of a memory page on this machine.
pub fn page_size() -> u64 {
    region::page::size() as u64
}

/// Parses an address or number: `0x`-prefixed hex, or decimal.
pub fn parse_address(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("`{}` is not a number (decimal or 0x hex)", s))
}
