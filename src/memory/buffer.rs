//! A mapper whose working memory is a plain buffer and whose target
//! addresses are chosen, never mapped: an image written for inspection
//! (`--noexec`, `--map`, `--check`) or for another machine's CPU. Nothing
//! of this process's address space is touched, at the image's base or
//! anywhere else, and nothing runs: finalize actions are refused.

use anyhow::{bail, Result};

use super::{AllocInfo, InitKey, MemoryMapper, Placement};

/// Where an image goes when the link leaves it free: code that stores
/// addresses in 32 bits needs the low 2 GiB (4 MiB: where a native non-PIE
/// executable starts), other code goes where the kernel puts mappings
/// (below the 47-bit user address space of both CPUs).
const LOW_BASE: u64 = 0x40_0000;
const ANYWHERE_BASE: u64 = 0x7f00_0000_0000;

/// One image in a buffer at a chosen address.
#[derive(Default)]
pub struct BufferMapper {
    base: u64,
    /// Fresh anonymous pages: zero until written, and never cleared by
    /// hand (a zeroed heap allocation cost a large image 7M instructions
    /// of `memset`).
    memory: Option<memmap2::MmapMut>,
    /// The image's size (the mapping has at least one byte).
    size: usize,
    /// The final protections, recorded by `initialize` (not applied: the
    /// buffer is never executed).
    segments: Vec<super::SegmentProtection>,
}

impl BufferMapper {
    pub fn new() -> Self {
        Self::default()
    }

    /// The address the image's first byte has.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The image's bytes, from its base.
    pub fn bytes(&self) -> &[u8] {
        self.memory.as_deref().map_or(&[], |m| &m[..self.size])
    }

    /// The segments' final protections, once initialized.
    pub fn segments(&self) -> &[super::SegmentProtection] {
        &self.segments
    }
}

impl MemoryMapper for BufferMapper {
    fn reserve(&mut self, size: u64, align: u64, placement: Placement) -> Result<u64> {
        if self.memory.is_some() {
            bail!("internal: a buffer holds one image");
        }
        let align = align.max(1);
        let base = match placement {
            Placement::Fixed(base) if base % align != 0 => {
                bail!("--base {:#x} is not aligned to the image's {:#x} bytes", base, align)
            }
            Placement::Fixed(base) => base,
            Placement::Low32 => LOW_BASE.next_multiple_of(align),
            Placement::Anywhere | Placement::Repeatable => ANYWHERE_BASE.next_multiple_of(align),
        };
        let Some(end) = base.checked_add(size).filter(|&end| end <= 1 << 47) else {
            bail!("an image of {:#x} bytes at {:#x} does not fit in a 47-bit address space", size, base);
        };
        if placement == Placement::Low32 && end > 1 << 31 {
            bail!("an image of {:#x} bytes does not fit in the low 2 GiB its 32-bit addresses need", size);
        }
        let size = usize::try_from(size).map_err(|_| anyhow::anyhow!("an image of {:#x} bytes", size))?;
        // Untouched zero-fill costs nothing.
        let memory = memmap2::MmapMut::map_anon(size.max(1))
            .map_err(|e| anyhow::anyhow!("cannot allocate {:#x} bytes for the image: {}", size, e))?;
        self.memory = Some(memory);
        self.size = size;
        self.base = base;
        Ok(base)
    }

    fn prepare(&mut self, addr: u64, size: u64, _filled: u64) -> Result<&mut [u8]> {
        let start = addr.checked_sub(self.base).map(|s| s as usize);
        let range = start.and_then(|start| Some(start..start.checked_add(usize::try_from(size).ok()?)?));
        let memory = self.memory.as_deref_mut().map_or(&mut [][..], |m| &mut m[..self.size]);
        match range.filter(|r| r.end <= memory.len()) {
            Some(range) => Ok(&mut memory[range]),
            None => bail!("{:#x}+{:#x} is not in the buffer's image at {:#x}", addr, size, self.base),
        }
    }

    fn initialize(&mut self, alloc: AllocInfo) -> Result<InitKey> {
        if let Some(action) = alloc.actions.first() {
            bail!("internal: `{}` would run in this process, but the image is in a buffer", action.name);
        }
        self.segments = alloc.segments;
        Ok(InitKey::new(0))
    }

    fn deinitialize(&mut self, _key: InitKey) -> Result<()> {
        Ok(())
    }

    fn release(&mut self, _base: u64) -> Result<()> {
        self.memory = None;
        self.size = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_image_lies_where_asked_and_runs_nothing() {
        let mut mapper = BufferMapper::new();
        let base = mapper.reserve(0x3000, 0x1000, Placement::Fixed(0x1000_0000)).unwrap();
        assert_eq!(base, 0x1000_0000);
        mapper.prepare(0x1000_1000, 4, 4).unwrap().copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(&mapper.bytes()[0x1000..0x1004], &[1, 2, 3, 4]);
        assert!(mapper.prepare(0x1000_2ffe, 4, 4).is_err(), "past the end");
        assert!(mapper.prepare(0x0fff_ffff, 4, 4).is_err(), "before the base");
        let action = super::super::ActionPair::with_state("register eh_frame", || Ok(()), |_| {});
        let err = mapper.initialize(AllocInfo { segments: Vec::new(), actions: vec![action] }).unwrap_err();
        assert!(err.to_string().contains("register eh_frame"), "{}", err);
        assert!(BufferMapper::new().reserve(0x3000, 0x1000, Placement::Fixed(0x1000_0800)).is_err(), "misaligned");
        let low = BufferMapper::new().reserve(0x3000, 0x1000, Placement::Low32).unwrap();
        assert!(low < 1 << 31);
    }
}
