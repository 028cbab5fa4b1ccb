//! The program break: the `brk` area where glibc's main heap lives, which
//! starts above the executable and grows up from there.

use std::sync::atomic::{AtomicU64, Ordering};

/// The break [`note_start`] saw, 0 if it was not called.
static NOTED_AT_START: AtomicU64 = AtomicU64::new(0);

/// Notes the break as the process starts, before anything allocates from
/// glibc: where the break area starts when `/proc/self/stat` does not say
/// (qemu's user-mode emulation shows its own there). jitrun's `main` calls
/// it first thing.
pub fn note_start() {
    NOTED_AT_START.store(current().unwrap_or(0), Ordering::Relaxed);
}

/// Where the kernel started this process's break area (its `start_brk`),
/// which is where glibc's main heap starts when nothing moved the break
/// before glibc's first `malloc`. The kernel randomizes it over 1 GiB above
/// the executable (jitrun's own, at 2 MiB), so it may lie right below the
/// range x86-64's `MAP_32BIT` hands out. Read once from `/proc/self/stat`
/// (about 3 µs), else the break [`note_start`] saw; `None` if neither.
pub fn start() -> Option<u64> {
    known_starts().into_iter().flatten().next()
}

/// Whether `address` is where the break area started, as
/// `/proc/self/stat` says or as [`note_start`] saw it. Either may be
/// wrong: valgrind keeps a break of its own for the program (the kernel's
/// is valgrind's), a preloaded library may have grown the heap before
/// jitrun's `main`.
pub fn is_start(address: u64) -> bool {
    known_starts().contains(&Some(address))
}

/// The start from `/proc/self/stat` (read once), and the one noted.
fn known_starts() -> [Option<u64>; 2] {
    static FROM_PROC: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let from_proc = *FROM_PROC.get_or_init(|| start_brk_of_stat_line(&std::fs::read("/proc/self/stat").ok()?));
    let noted = NOTED_AT_START.load(Ordering::Relaxed);
    [from_proc, (noted != 0).then_some(noted)]
}

/// The break now, or `None` if the system call fails.
pub fn current() -> Option<u64> {
    // SAFETY: sbrk(0) only reports the break; it moves nothing.
    let now = unsafe { libc::sbrk(0) };
    (now as isize != -1).then_some(now as u64)
}

/// Field 47 of a `/proc/PID/stat` line (`start_brk`, since Linux 3.5).
/// The second field, the command name in parentheses, may hold spaces and
/// parentheses itself, so fields are counted after the last `)`.
fn start_brk_of_stat_line(line: &[u8]) -> Option<u64> {
    const FIELD: usize = 47;
    const FIRST_AFTER_NAME: usize = 3;
    let after_name = &line[line.iter().rposition(|&b| b == b')')? + 1..];
    let field =
        after_name.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()).nth(FIELD - FIRST_AFTER_NAME)?;
    std::str::from_utf8(field).ok()?.parse().ok().filter(|&start| start != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_break_area_starts_at_or_below_the_break() {
        // Under qemu, /proc/self/stat is the emulator's, which names none.
        note_start();
        let start = start().expect("/proc/self/stat names start_brk, or the break was noted");
        assert!(start <= current().unwrap(), "{:#x}", start);
    }

    #[test]
    fn fields_are_counted_after_the_command_name() {
        let mut line = b"77 (a) b (c)) R".to_vec();
        for field in 4..=52 {
            line.extend_from_slice(format!(" {}", if field == 47 { 0x5000_0000 } else { field }).as_bytes());
        }
        line.push(b'\n');
        assert_eq!(start_brk_of_stat_line(&line), Some(0x5000_0000));
        assert_eq!(start_brk_of_stat_line(&line[..40]), None, "cut short");
        assert_eq!(start_brk_of_stat_line(b"77 no name"), None);
    }
}
