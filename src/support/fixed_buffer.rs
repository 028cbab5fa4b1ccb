//! Output that a signal handler may write: formatted into a fixed buffer
//! without allocating, written with write(2).

use std::ffi::{c_int, c_void};

/// A fixed buffer that formats without allocating and flushes with
/// write(2): what a signal handler (or an exit hook after a crash) may use.
pub struct FixedBuffer<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Default for FixedBuffer<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> FixedBuffer<N> {
    pub fn new() -> Self {
        FixedBuffer { buf: [0; N], len: 0 }
    }

    /// What was formatted (text beyond N bytes was cut).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Writes what was formatted (text beyond N bytes was cut) and empties the buffer.
    pub fn flush_to(&mut self, fd: c_int) {
        write_fd(fd, &self.buf[..self.len]);
        self.len = 0;
    }
}

impl<const N: usize> std::fmt::Write for FixedBuffer<N> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(N - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// write(2) until all of `bytes` is written or the descriptor fails.
pub fn write_fd(fd: c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writing initialized bytes we hold to a descriptor.
        let n = unsafe { libc::write(fd, bytes.as_ptr() as *const c_void, bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}
