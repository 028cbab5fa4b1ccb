//! Limits on what one link may ask for.

use anyhow::{bail, Result};

/// Limits on what one link may ask for, so a corrupt or hostile object
/// gets an error instead of exhausting the machine.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Total bytes of sections (including zero-fill) one image may have.
    pub max_image_size: u64,
    /// Bytes of thread-local storage (`.tdata` + `.tbss`) one image may
    /// have; every thread of the process gets a block of this size.
    pub max_tls_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_image_size: 4 << 30, max_tls_size: 64 << 20 }
    }
}

impl Limits {
    /// Fails when `size` bytes exceed the image-size limit.
    pub fn check_image_size(&self, what: &dyn std::fmt::Display, size: u64) -> Result<()> {
        if size > self.max_image_size {
            bail!(
                "{} asks for {} bytes, more than the limit of {} bytes (raise it with --max-image-size)",
                what,
                size,
                self.max_image_size
            );
        }
        Ok(())
    }

    /// Fails when `size` bytes of thread-locals exceed their limit.
    pub fn check_tls_size(&self, what: &dyn std::fmt::Display, size: u64) -> Result<()> {
        if size > self.max_tls_size {
            bail!(
                "{} asks for {} bytes of thread-local storage, more than the limit of {} bytes (raise it with --max-tls-size)",
                what,
                size,
                self.max_tls_size
            );
        }
        Ok(())
    }
}
