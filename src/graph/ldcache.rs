//! Reads the dynamic loader's cache (`/etc/ld.so.cache`, format
//! `glibc-ld.so.cache1.1`) to find runtime libraries such as `libz.so.1`
//! when no `libz.so` development link exists.

use std::path::PathBuf;

const MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const HEADER: usize = 48;
const ENTRY: usize = 24;
/// The flags of this machine's libraries (`FLAG_ELF_LIBC6` and its CPU's).
const THIS_MACHINES_LIBRARIES: i32 = crate::support::machine::LD_CACHE_FLAGS;

/// Path of the first cached library whose name is `prefix` followed by a
/// version (`libz.so` → `libz.so.1`).
pub fn lookup(prefix: &str) -> Option<PathBuf> {
    // Read once per process: a C++ link asks for three libraries.
    static CACHE: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();
    let data = CACHE.get_or_init(|| std::fs::read("/etc/ld.so.cache").ok()).as_deref()?;
    lookup_in(data, prefix)
}

/// Where the dynamic loader finds the system library `name` (a full
/// soname such as `libgcc_s.so.1`): its cache entry, else the file in one
/// of the loader's default directories (a cache without this machine's
/// entries: an arm64 system run under emulation), else the bare name for
/// `dlopen`'s own search.
pub fn system_library(name: &str) -> PathBuf {
    lookup(name)
        .or_else(|| {
            crate::support::machine::LIBRARY_DIRS
                .iter()
                .map(|dir| std::path::Path::new(dir).join(name))
                .find(|path| path.is_file())
        })
        .unwrap_or_else(|| PathBuf::from(name))
}

fn lookup_in(data: &[u8], prefix: &str) -> Option<PathBuf> {
    if !data.starts_with(MAGIC) || data.len() < HEADER {
        return None;
    }
    let u32_at = |at: usize| data.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()));
    let nlibs = u32_at(20)? as usize;
    let c_str = |off: usize| {
        let tail = data.get(off..)?;
        let end = tail.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&tail[..end]).ok()
    };
    for i in 0..nlibs {
        let entry = HEADER + i * ENTRY;
        let flags = u32_at(entry)? as i32;
        if flags & 0xffff != THIS_MACHINES_LIBRARIES {
            continue;
        }
        let key = c_str(u32_at(entry + 4)? as usize)?;
        let value = c_str(u32_at(entry + 8)? as usize)?;
        let versioned = key.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.') || rest.is_empty());
        if versioned {
            let path = PathBuf::from(value);
            if path.exists() {
                return Some(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_libc_in_this_machines_cache() {
        if let Some(p) = lookup("libc.so") {
            assert!(p.to_string_lossy().contains("libc.so.6"));
        }
        assert_eq!(lookup_in(b"not a cache", "libc.so"), None);
        assert_eq!(lookup_in(b"glibc-ld.so.cache1.1", "libc.so"), None);
    }
}
