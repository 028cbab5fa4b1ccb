//! The bottom layer: what every other layer may use. Input files, jitrun's
//! own heap, threads of its own, fixed buffers for signal handlers, the
//! program break, and the facts of the machine (page size, exit statuses).

pub mod checksum;
pub mod fixed_buffer;
pub mod heap;
pub mod input;
pub mod machine;
pub mod parallel;
pub mod program_break;
pub mod threads;

/// Exit status for jitrun's own failures (usage, I/O, malformed input,
/// unresolved symbols, relocation errors), distinct from the program's.
pub const EXIT_JITRUN_ERROR: i32 = 125;

/// Exit status of a run stopped by its timeout, as timeout(1) exits.
pub const EXIT_TIMEOUT: i32 = 124;

/// A random word, different at each call: `salt` hashed with a fresh
/// `RandomState`, whose keys come from the OS's random source (once per
/// thread, then stepped).
pub fn random_u64(salt: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(salt);
    hasher.finish()
}

/// The size of a memory page on this machine.
pub fn page_size() -> u64 {
    region::page::size() as u64
}

/// The effective user id of this process.
pub fn effective_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Parses an address or number: `0x`-prefixed hex, or decimal.
pub fn parse_address(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("`{}` is not a number (decimal or 0x hex)", s))
}

/// What a file looks like from the outside: enough to tell, with one
/// `stat`, that it was replaced or written since (the link cache's test
/// for shared libraries and directories; for objects it adds a checksum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FileStamp {
    pub device: u64,
    pub inode: u64,
    pub size: u64,
    /// Modification and status-change times, in nanoseconds.
    pub modified: i128,
    pub changed: i128,
}

impl FileStamp {
    /// The stamp of what `path` names (following links), or `None` if
    /// there is nothing there.
    pub fn of_path(path: &std::path::Path) -> Option<FileStamp> {
        std::fs::metadata(path).ok().map(|meta| FileStamp::of_metadata(&meta))
    }

    /// The stamp of the file `meta` describes.
    pub fn of_metadata(meta: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        let nanos = |secs: i64, nsecs: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsecs);
        FileStamp {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified: nanos(meta.mtime(), meta.mtime_nsec()),
            changed: nanos(meta.ctime(), meta.ctime_nsec()),
        }
    }
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
