//! The bottom layer: what every other layer may use. Input files, jitrun's
//! own heap, threads of its own, fixed buffers for signal handlers, and the
//! facts of the machine (page size, exit statuses).

pub mod fixed_buffer;
pub mod heap;
pub mod input;
pub mod machine;
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

/// Which file something is, whatever the path to it or the descriptor
/// open on it: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
}

impl FileIdentity {
    /// The file at `path`: one `stat`, where canonicalizing the path would
    /// read every link on the way.
    pub fn of_path(path: &std::path::Path) -> std::io::Result<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        Ok(FileIdentity { device: meta.dev(), inode: meta.ino() })
    }

    /// The file descriptor `fd` refers to (which may have been replaced).
    pub fn of_descriptor(fd: std::os::fd::RawFd) -> Option<FileIdentity> {
        // SAFETY: fstat fills the zeroed struct (plain data) passed.
        let stat = unsafe {
            let mut stat: libc::stat = std::mem::zeroed();
            (libc::fstat(fd, &mut stat) == 0).then_some(stat)?
        };
        Some(FileIdentity { device: stat.st_dev, inode: stat.st_ino })
    }
}
