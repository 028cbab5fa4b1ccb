//! An image linked into a buffer (`--noexec`): its bytes, link info and
//! symbols at the addresses it was linked for, for maps, `--check` and
//! reports. It never runs.

use std::sync::{Mutex, OnceLock};

use anyhow::Result;

use super::{Destination, Placed};
use crate::arch::HOST;
use crate::diagnostics::check::CheckedImage;
use crate::graph::deferred::DeferredLinkInfo;
use crate::graph::linkinfo::{self, LinkInfo};
use crate::image::SymbolMap;
use crate::memory::buffer::BufferMapper;
use crate::memory::{AllocInfo, MemoryMapper, SegmentProtection};

/// A linked image in a buffer.
pub struct BufferImage {
    cpu: crate::arch::Cpu,
    mapper: BufferMapper,
    /// The link info, collected when first asked for (from `model`).
    info: OnceLock<LinkInfo>,
    /// What the link info is collected from, until it is: a plain
    /// `--noexec` never asks, and collecting took a large link longer
    /// than the link itself.
    model: Mutex<Option<DeferredLinkInfo>>,
    symbols: SymbolMap,
}

impl BufferImage {
    /// Where everything went: segments, sections, symbols, GOT and stubs.
    pub fn link_info(&self) -> &LinkInfo {
        self.info.get_or_init(|| {
            let model = self.model.lock().unwrap_or_else(|e| e.into_inner()).take();
            let model = model.expect("the model stays until the info is collected");
            // This process's loader knows the libraries an image of its own
            // CPU was resolved against.
            let cpu = model.cpu;
            model.collect(&|address| (cpu == HOST).then(|| crate::host::loader::defining_object_name(address))?)
        })
    }

    /// The address of a global symbol of the image.
    pub fn lookup(&self, name: &str) -> Option<u64> {
        self.symbols.address(name)
    }

    /// The image's addresses.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.mapper.base()..self.mapper.base() + self.mapper.bytes().len() as u64
    }

    /// The image's bytes, from its base.
    pub fn bytes(&self) -> &[u8] {
        self.mapper.bytes()
    }

    /// The segments with their final protections.
    pub fn segments(&self) -> &[SegmentProtection] {
        self.mapper.segments()
    }
}

impl CheckedImage for BufferImage {
    fn cpu(&self) -> crate::arch::Cpu {
        self.cpu
    }

    fn link_info(&self) -> &LinkInfo {
        BufferImage::link_info(self)
    }

    fn lookup(&self, name: &str) -> Option<u64> {
        BufferImage::lookup(self, name)
    }

    fn macho_names(&self) -> bool {
        self.symbols.macho_names
    }

    fn bytes_at(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let start = addr.checked_sub(self.mapper.base())? as usize;
        let bytes = self.mapper.bytes().get(start..)?;
        Some(&bytes[..bytes.len().min(len as usize)])
    }
}

/// Records the image's protections and collects its link info.
pub(super) fn finish(mut placed: Placed, mut mapper: BufferMapper) -> Result<BufferImage> {
    debug_assert_eq!(placed.destination, Destination::Buffer);
    let segments = placed
        .layout
        .segments
        .iter()
        .map(|s| SegmentProtection {
            addr: placed.base + s.offset,
            size: s.size.next_multiple_of(placed.cpu.max_page_size()),
            protection: s.kind.final_protection(),
        })
        .collect();
    mapper.initialize(AllocInfo { segments, actions: Vec::new() })?;
    let library_paths: Vec<String> = placed.libraries.iter().map(|l| l.path.display().to_string()).collect();
    let symbols = std::mem::take(&mut placed.symbols);
    let (cpu, hook) = (placed.cpu, placed.on_linked.take());
    let (inputs, phases) = (std::mem::take(&mut placed.inputs), std::mem::take(&mut placed.timer.phases));
    let defer = placed.options.defer_link_info;
    // Loaded until the info is collected below: it names the library
    // defining each external by its loaded address.
    let _libraries = std::mem::take(&mut placed.libraries);
    let model = placed.into_deferred_link_info(library_paths, inputs, phases);
    let image = BufferImage { cpu, mapper, info: OnceLock::new(), model: Mutex::new(None), symbols };
    match hook {
        // The caller wants the graphs back: the info is collected now.
        Some(hook) => {
            let mut model = model;
            let (inputs, phases) = (std::mem::take(&mut model.inputs), std::mem::take(&mut model.phases));
            let object_at = |address| (cpu == HOST).then(|| crate::host::loader::defining_object_name(address))?;
            let info =
                linkinfo::collect(&model.graphs, &model.addresses(), &model.library_paths, &object_at, inputs, phases);
            let _ = image.info.set(info);
            hook(model.graphs);
        }
        None => {
            *image.model.lock().unwrap_or_else(|e| e.into_inner()) = Some(model);
            if !defer {
                image.link_info();
            }
        }
    }
    Ok(image)
}
