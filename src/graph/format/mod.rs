//! Format front-ends. Each translates one file into a [`crate::graph::model::LinkGraph`]
//! and nothing after them looks at raw file bytes; [`dynamic`] reads what a
//! shared library exports, to decide whether to load it.

pub mod archive;
pub mod dynamic;
pub mod elf;
pub mod macho;

/// Which per-object limit a section counts toward.
#[derive(Clone, Copy)]
pub(crate) enum SizeLimit {
    /// Every loaded section: `--max-image-size`.
    Image,
    /// Thread-local sections, copied into every thread: `--max-tls-size`.
    Tls,
}

/// Adds a section's size to the object's running total for `limit`,
/// refusing objects that ask for more. Checked per object so that no later
/// pass ever sees sums that overflow.
pub(crate) fn add_section_size(
    file: &str,
    section: &str,
    total: u64,
    size: u64,
    limit: SizeLimit,
    limits: &crate::graph::Limits,
) -> anyhow::Result<u64> {
    let total = total.saturating_add(size);
    let what = format_args!("{}: section {}: the object", file, section);
    match limit {
        SizeLimit::Image => limits.check_image_size(&what, total)?,
        SizeLimit::Tls => limits.check_tls_size(&what, total)?,
    }
    Ok(total)
}

/// The file range of a section's contents, checked against the file size.
pub(crate) fn file_range(
    file: &str,
    section: &str,
    offset: u64,
    size: u64,
    file_len: usize,
) -> anyhow::Result<std::ops::Range<usize>> {
    match offset.checked_add(size).filter(|&end| end <= file_len as u64) {
        Some(end) => Ok(offset as usize..end as usize),
        None => anyhow::bail!(
            "{}: section {}: contents at offset {:#x} size {:#x} lie outside the file ({:#x} bytes)",
            file,
            section,
            offset,
            size,
            file_len
        ),
    }
}
