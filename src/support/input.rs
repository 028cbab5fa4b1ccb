//! Input files: mapped once, shared read-only, detected by their magic.
//! A mapped object's large contents and its relocations are read from the
//! file where they are used ([`InputData::read_into`],
//! [`InputData::read_exact_at`]), so that its mapping holds only what the
//! link parses: headers, symbols, strings.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, RwLock};

use anyhow::{Context, Result};
use memmap2::Mmap;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::{LittleEndian, SectionIndex};

/// An ELF64 little-endian file header, as jitrun reads its objects.
type Header = elf::FileHeader64<LittleEndian>;

/// Ranges smaller than this are not given back one by one
/// ([`InputData::release`]).
const RELEASE_AT_LEAST: usize = 256 << 10;

/// Mapped files smaller than this keep their pages until they are unmapped
/// ([`InputData::release_except`]): giving back a SQLite-sized object's
/// pages after translation, only to fault them back in when its contents
/// are copied, cost more than the memory it saved for the short while
/// until the inputs are dropped. Dropping pages costs too: for the
/// generated program of nine 1.9 MB objects (280,000 relocations), the
/// `madvise` calls took 3 of 18.6 ms (task-clock) for 8.3 MiB less peak
/// memory; process exit unmaps the same pages in bulk for less.
const RELEASE_FILES_FROM: usize = 16 << 20;

/// Files smaller than this are read rather than mapped: for a page or
/// two, `read` costs less than `mmap` + a page fault + `munmap` (which
/// shows with hundreds of small objects).
const READ_BELOW: u64 = 64 << 10;

/// The bytes of one input file. Large files are mapped rather than read so
/// that parsing touches only the pages it needs.
pub enum InputData {
    /// A mapped file, and the file itself while few are open, to copy
    /// large section contents with `pread` ([`InputData::read_into`]),
    /// until the image is written ([`InputData::close_file`]).
    Mapped(Mmap, RwLock<Option<ReadableFile>>),
    Owned(Vec<u8>),
    /// A member of a static archive: a range of the archive's bytes, so
    /// members are parsed in place without copies.
    Member {
        archive: Arc<InputData>,
        range: Range<usize>,
    },
}

/// The whole of `file` if it is shorter than `limit` bytes, else `None`.
/// One read(2) into a `limit`-byte buffer that, for a file that fits,
/// shrinks in place to the file's size and is returned (no copy: malloc
/// splits the block); a full buffer means a larger file, and the buffer is
/// kept for the next probe rather than paid for again in fresh pages. Not
/// for pipes or terminals, whose reads may return less before their end.
fn read_if_smaller_than(file: &File, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::fd::AsRawFd;
    // A static, not a thread-local: a thread-local with a destructor has
    // glibc allocate a node on its thread's exit list, and on the program's
    // thread that node would reach a `free` the program replaced.
    static SPARE: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
    let mut buffer = std::mem::take(&mut *SPARE.lock().unwrap_or_else(|e| e.into_inner()));
    buffer.clear();
    buffer.reserve(limit);
    let read = loop {
        // SAFETY: read(2) writes at most `limit` bytes into the vector's
        // spare capacity, which has room for them; they count as
        // initialized (set_len) only once the kernel wrote them.
        let n = unsafe { libc::read(file.as_raw_fd(), buffer.as_mut_ptr() as *mut libc::c_void, limit) };
        if n >= 0 {
            break Ok(n as usize);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            break Err(error);
        }
    };
    match read {
        Ok(n) if n < limit => {
            // SAFETY: the kernel initialized the first `n` bytes.
            unsafe { buffer.set_len(n) };
            buffer.shrink_to_fit();
            Ok(Some(buffer))
        }
        other => {
            *SPARE.lock().unwrap_or_else(|e| e.into_inner()) = buffer;
            other.map(|_| None)
        }
    }
}

/// Contents at least this large are copied from the file into the image
/// with `pread` rather than through the mapping: mapped and copied, a
/// page of a large object's code counted in the peak memory twice (the
/// generated program of nine 1.9 MB objects: 7 MiB of it); read, it costs
/// one system call per block instead of a populate and a copy.
pub const READ_CONTENTS_FROM: usize = 16 << 10;

/// Files kept open for [`InputData::read_into`] at most at once, and at
/// most a quarter of the limit on open files (`ulimit -n`): a link of
/// thousands of large objects, or of a few dozen under a low limit, must
/// not run out of descriptors for the inputs still to open; beyond this,
/// contents are copied from the mapping.
const MAX_READABLE_FILES: usize = 256;

fn readable_files_allowed() -> usize {
    static ALLOWED: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit fills the struct passed.
        let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 { limit.rlim_cur } else { 0 };
        usize::try_from(soft / 4).unwrap_or(usize::MAX).min(MAX_READABLE_FILES)
    })
}

static READABLE_FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// An open input file, counted against [`readable_files_allowed`].
pub struct ReadableFile(File);

impl ReadableFile {
    fn keep(file: File) -> Option<ReadableFile> {
        use std::sync::atomic::Ordering;
        READABLE_FILES
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < readable_files_allowed()).then_some(n + 1))
            .ok()
            .map(|_| ReadableFile(file))
    }
}

impl Drop for ReadableFile {
    fn drop(&mut self) {
        READABLE_FILES.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The files [`InputData::open`] opened since [`record_opened_files`], or
/// `None` when nobody asked: what a link read, for the link cache.
static OPENED_FILES: std::sync::Mutex<Option<Vec<OpenedFile>>> = std::sync::Mutex::new(None);

/// A file opened while recording, and its stamp when it was opened.
pub type OpenedFile = (std::path::PathBuf, Option<crate::support::FileStamp>);

/// Starts listing the files inputs are opened from (see [`take_opened_files`]).
pub fn record_opened_files() {
    *OPENED_FILES.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
}

/// The files opened since [`record_opened_files`], in order; stops listing.
pub fn take_opened_files() -> Vec<OpenedFile> {
    OPENED_FILES.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default()
}

/// The first `len` bytes of `file`, mapped read-only (no copy, and no
/// fresh heap pages for them: the page cache's own pages are mapped).
pub fn map_start_of(file: &File, len: usize) -> std::io::Result<Mmap> {
    // SAFETY: read-only, as every input is mapped (see `InputData::open`);
    // the files mapped so are never changed in place, only replaced.
    unsafe { memmap2::MmapOptions::new().len(len).map(file) }
}

impl InputData {
    pub fn open(path: &Path) -> Result<InputData> {
        if let Some(opened) = OPENED_FILES.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            opened.push((path.to_path_buf(), crate::support::FileStamp::of_path(path)));
        }
        let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
        // A small file is read whole by one read(2) of up to READ_BELOW
        // bytes: a regular file's read returns less only at its end, so no
        // stat for its size and no second read for the end (301 objects:
        // 301 system calls fewer). A full buffer means a larger file: mapped.
        if let Some(bytes) = read_if_smaller_than(&file, READ_BELOW as usize)
            .with_context(|| format!("{}: cannot read", path.display()))?
        {
            return Ok(InputData::Owned(bytes));
        }
        // SAFETY: the mapping is read-only; if another process truncates
        // the file while we run, we may fault, which is the same contract
        // every linker has with its inputs.
        let map = unsafe { Mmap::map(&file) }.with_context(|| format!("{}: cannot map", path.display()))?;
        // Kept for reading what is copied out of objects (archive members
        // too); a shared library's or a script's is not read again.
        let (kind, relocatable) = (detect(&map), is_relocatable_elf(&map));
        let file = match kind {
            FileKind::Elf if !relocatable => None,
            FileKind::Elf | FileKind::MachO | FileKind::Archive => ReadableFile::keep(file),
            _ => None,
        };
        // What an object's link parses (headers, symbols) is mapped by one
        // call instead of a fault per 64 KiB (measured no slower than
        // faulting in only what translation reads). An archive is read
        // only where members are needed, and of a shared library only the
        // headers (libm: 900 KB).
        if relocatable {
            populate_parts_a_link_reads(&map, file.is_some());
        } else if kind == FileKind::MachO {
            let _ = map.advise(memmap2::Advice::PopulateRead);
        }
        Ok(InputData::Mapped(map, RwLock::new(file)))
    }

    /// A view of `range` of `archive`'s bytes, or `None` if it lies outside.
    pub fn member(archive: Arc<InputData>, range: Range<usize>) -> Option<InputData> {
        (range.start <= range.end && range.end <= archive.bytes().len()).then_some(InputData::Member { archive, range })
    }

    /// Gives back the memory of a mapped file except `keep` (sorted by
    /// start): once an object is translated, only its section contents are
    /// read again, and its symbols, relocations and strings (often half the
    /// file) need not stay resident until the image is written. The pages
    /// stay in the page cache and read back the same if touched again.
    pub fn release_except(&self, keep: impl Iterator<Item = Range<usize>>) {
        let InputData::Mapped(map, _) = self else { return };
        if map.len() < RELEASE_FILES_FROM {
            return;
        }
        let page = crate::support::page_size() as usize;
        let mut from = 0;
        let release = |start: usize, end: usize| {
            let (start, end) = (start.next_multiple_of(page), end / page * page);
            if start < end {
                // SAFETY: the mapping is read-only, so dropping its pages
                // loses nothing: the next read faults in the file's bytes
                // again. `[start, end)` lies inside the mapping.
                unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) }.ok();
            }
        };
        for range in keep {
            release(from, range.start);
            from = from.max(range.end);
        }
        release(from, map.len());
    }

    /// Gives back the memory of `range` of a mapped file, once read for
    /// the last time (see [`InputData::release_except`]), if it spans at
    /// least 256 KiB: smaller ranges are not worth a call.
    pub fn release(&self, range: Range<usize>) {
        if range.len() >= RELEASE_AT_LEAST {
            let end = self.bytes().len();
            self.release_except([0..range.start, range.end..end].into_iter());
        }
    }

    /// Whether `range`'s bytes are read with [`InputData::read_into`]
    /// rather than through the mapping (which then need not be populated
    /// there).
    pub fn reads_contents(&self, range: &Range<usize>) -> bool {
        range.len() >= READ_CONTENTS_FROM && self.is_readable()
    }

    /// Copies the bytes of `range` into `dest` (of its length): from the
    /// file where [`InputData::reads_contents`], else from memory.
    pub fn read_into(&self, range: Range<usize>, dest: &mut [u8]) {
        if self.reads_contents(&range) {
            self.read_exact_at(range, dest);
        } else {
            dest.copy_from_slice(&self.bytes()[range]);
        }
    }

    /// Whether the file can be read with `pread` ([`InputData::read_exact_at`]).
    pub fn is_readable(&self) -> bool {
        match self {
            InputData::Mapped(_, file) => file.read().is_ok_and(|file| file.is_some()),
            InputData::Owned(_) => false,
            InputData::Member { archive, .. } => archive.is_readable(),
        }
    }

    /// Reads `range` of the file into `dest` (of its length) with `pread`
    /// where [`InputData::is_readable`], else copies it from memory. The
    /// bytes are the same either way; a failed read (the file shrank) falls
    /// back to the mapping, which then fails as reading it would have.
    pub fn read_exact_at(&self, range: Range<usize>, dest: &mut [u8]) {
        if range.len() != dest.len() || !self.pread(range.start, dest) {
            dest.copy_from_slice(&self.bytes()[range]);
        }
    }

    fn pread(&self, offset: usize, dest: &mut [u8]) -> bool {
        use std::os::unix::fs::FileExt;
        match self {
            InputData::Mapped(_, file) => match &*file.read().unwrap_or_else(|e| e.into_inner()) {
                Some(ReadableFile(file)) => file.read_exact_at(dest, offset as u64).is_ok(),
                None => false,
            },
            InputData::Member { archive, range } => archive.pread(range.start + offset, dest),
            _ => false,
        }
    }

    /// Closes the file kept for reading (the mapping stays): once the
    /// image is written, the program must find the descriptors free that a
    /// native run would (its first `open` returns 3).
    pub fn close_file(&self) {
        match self {
            InputData::Mapped(_, file) => *file.write().unwrap_or_else(|e| e.into_inner()) = None,
            InputData::Member { archive, .. } => archive.close_file(),
            InputData::Owned(_) => {}
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            InputData::Mapped(map, _) => map,
            InputData::Owned(bytes) => bytes,
            InputData::Member { archive, range } => &archive.bytes()[range.clone()],
        }
    }
}

/// Gaps between the parts of an object a link reads that are shorter
/// than this are mapped with them: a call more costs more than the pages
/// (a page from the page cache ~0.2 µs, a call a few µs). Not longer: a
/// CPython built with `-g` (147 objects, 48 MB, its debug information in
/// gaps of up to 256 KiB between the parts) mapped 31 MB that way, 49 MiB
/// peak; with 64 KiB, 35 MiB, and its link 15% faster.
const POPULATE_GAP: usize = 64 << 10;

/// Maps the pages of the ELF object `map` that a link reads (see
/// [`parts_a_link_reads`]) in one `madvise` each.
/// Debug information is left to fault in if it is ever read: mapped, it
/// would count in the peak memory (a QuickJS built with `-g`: 7 MiB) and
/// cost the time to map it; so are large contents when `contents_read`
/// ([`InputData::read_into`]).
fn populate_parts_a_link_reads(map: &Mmap, contents_read: bool) {
    let Some(spans) = spans_a_link_maps(map, contents_read) else {
        let _ = map.advise(memmap2::Advice::PopulateRead);
        return;
    };
    for span in &spans {
        let _ = map.advise_range(memmap2::Advice::PopulateRead, span.start, span.len());
    }
}

/// The page-aligned spans of the ELF object `bytes` that a link maps (one
/// `madvise` each): the parts it reads, joined across short gaps; and how
/// many bytes it reads, mapped or not. `None` if `bytes` is no ELF object.
pub fn spans_a_link_maps(bytes: &[u8], contents_read: bool) -> Option<Vec<Range<usize>>> {
    let LinkReads { parts, debug } = link_reads(bytes, contents_read.then_some(READ_CONTENTS_FROM))?;
    let page = crate::support::page_size() as usize;
    // Whether `gap` holds a page of debug information.
    let holds_debug =
        |gap: Range<usize>| debug.iter().any(|d| d.end.min(gap.end).saturating_sub(d.start.max(gap.start)) >= page);
    let mut spans: Vec<Range<usize>> = Vec::new();
    for part in parts {
        let (start, end) =
            (part.start / page * page, part.end.min(bytes.len()).next_multiple_of(page).min(bytes.len()));
        match spans.last_mut() {
            _ if part.is_empty() => {}
            Some(last) if start <= last.end + POPULATE_GAP && !holds_debug(last.end..start) => {
                last.end = last.end.max(end)
            }
            _ if start < end => spans.push(start..end),
            _ => {}
        }
    }
    Some(spans)
}

/// The `e_type` of an ELF file (at offset 16 in both classes; jitrun's
/// ELF inputs are little-endian), or `None` for anything else.
fn elf_type(bytes: &[u8]) -> Option<u16> {
    (detect(bytes) == FileKind::Elf).then(|| bytes.get(16..18)).flatten().map(|t| u16::from_le_bytes([t[0], t[1]]))
}

/// An ELF relocatable object (`.o`).
pub fn is_relocatable_elf(bytes: &[u8]) -> bool {
    elf_type(bytes) == Some(object::elf::ET_REL)
}

/// An ELF shared object (`.so`, or a PIE).
pub fn is_elf_shared_object(bytes: &[u8]) -> bool {
    elf_type(bytes) == Some(object::elf::ET_DYN)
}

/// A position-independent executable (`DF_1_PIE` among its dynamic
/// flags): `ET_DYN` like a shared library, but not one to link against.
pub fn is_position_independent_executable(bytes: &[u8]) -> bool {
    use object::read::elf::{Dyn, FileHeader, ProgramHeader};
    let pie = || -> Option<bool> {
        let header = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes).ok()?;
        let endian = header.endian().ok()?;
        let segments = header.program_headers(endian, bytes).ok()?;
        let dynamic = segments.iter().find_map(|segment| segment.dynamic(endian, bytes).ok().flatten())?;
        Some(dynamic.iter().any(|entry| {
            entry.d_tag(endian) == u64::from(object::elf::DT_FLAGS_1)
                && entry.d_val(endian) & u64::from(object::elf::DF_1_PIE) != 0
        }))
    };
    is_elf_shared_object(bytes) && pie().unwrap_or(false)
}

/// What kind of file an input is, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Elf,
    MachO,
    Archive,
    ThinArchive,
    /// LLVM bitcode, what `clang -flto -c` writes instead of an object.
    LlvmBitcode,
    /// Text, e.g. a GNU ld script such as `libc.so`.
    Text,
    Unknown,
}

pub fn detect(bytes: &[u8]) -> FileKind {
    if bytes.starts_with(b"\x7fELF") {
        FileKind::Elf
    } else if bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe]) || bytes.starts_with(&[0xce, 0xfa, 0xed, 0xfe]) {
        FileKind::MachO
    } else if bytes.starts_with(b"!<arch>\n") {
        FileKind::Archive
    } else if bytes.starts_with(b"!<thin>\n") {
        FileKind::ThinArchive
    } else if bytes.starts_with(b"BC\xc0\xde") || bytes.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        FileKind::LlvmBitcode
    } else if !bytes.is_empty() && bytes.iter().take(256).all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        FileKind::Text
    } else {
        FileKind::Unknown
    }
}

/// The parts of the ELF object `data` that a link reads, as sorted,
/// disjoint byte ranges: the headers, the sections that load, their
/// relocations, and the symbol, string and group tables. What is left
/// out, debug information and its relocations, is often most of an
/// object built with `-g` (QuickJS: 7 of 8.3 MB) and is read only if a
/// crash report or a debugger asks for source lines. With
/// `contents_read_from` (the file is read as well as mapped), loaded
/// contents of at least that size are left out too (they are copied into
/// the image with `pread`), and so are relocations, read in pieces where
/// they are decoded; `.eh_frame` and its relocations, which the link
/// parses, are not. `None` if the headers do not parse (the parser will
/// say why).
pub fn parts_a_link_reads(data: &[u8], contents_read_from: Option<usize>) -> Option<Vec<std::ops::Range<usize>>> {
    link_reads(data, contents_read_from).map(|reads| reads.parts)
}

/// What a link reads of an ELF object (see [`parts_a_link_reads`]), and
/// where its debug information lies (`.debug_*` sections and their
/// relocations): never read by a link, so never worth mapping to save a
/// call (see `input::spans_a_link_maps`).
pub struct LinkReads {
    pub parts: Vec<std::ops::Range<usize>>,
    pub debug: Vec<std::ops::Range<usize>>,
}

/// [`LinkReads`] of `data`, from one pass over its section headers.
pub fn link_reads(data: &[u8], contents_read_from: Option<usize>) -> Option<LinkReads> {
    let endian = LittleEndian;
    let header = Header::parse(data).ok()?;
    let sections = header.sections(endian, data).ok()?;
    let table_start = usize::try_from(header.e_shoff(endian)).ok()?;
    let table_size = sections.len() * std::mem::size_of::<elf::SectionHeader64<LittleEndian>>();
    let mut ranges = vec![0..std::mem::size_of::<Header>(), table_start..table_start.checked_add(table_size)?];
    let mut debug = Vec::new();
    let loads = |index: u32| sections.section(SectionIndex(index as usize)).is_ok_and(|s| is_loaded(s, endian));
    let named = |section: &elf::SectionHeader64<LittleEndian>, prefix: &[u8]| {
        sections.section_name(endian, section).is_ok_and(|name| name.starts_with(prefix))
    };
    for section in sections.iter() {
        let (needed, read_separately, is_debug) = match section.sh_type(endian) {
            elf::SHT_NOBITS => (false, false, false),
            elf::SHT_REL | elf::SHT_RELA => {
                let target = sections.section(SectionIndex(section.sh_info(endian) as usize));
                // Read with `pread` where they are decoded (see
                // `LinkGraph::for_each_relocation_chunk`), but for
                // `.eh_frame`'s, decoded while parsing.
                let read_separately = contents_read_from.is_some()
                    && target.is_ok_and(|t| t.sh_type(endian) == elf::SHT_PROGBITS && !named(t, b".eh_frame"));
                (loads(section.sh_info(endian)), read_separately, target.is_ok_and(|t| named(t, b".debug")))
            }
            elf::SHT_PROGBITS => {
                let size = section.sh_size(endian);
                let read_separately =
                    contents_read_from.is_some_and(|from| size >= from as u64) && !named(section, b".eh_frame");
                // Small unloaded ones (`.comment`, notes) too, but not debug
                // information: read only for a crash report or a debugger,
                // it would make the parts around it one span.
                let is_debug = named(section, b".debug");
                (is_loaded(section, endian) || (size < 4096 && !is_debug), read_separately, is_debug)
            }
            _ => (true, false, named(section, b".debug")),
        };
        if needed || is_debug {
            let (start, size) = (usize::try_from(section.sh_offset(endian)).ok()?, section.sh_size(endian));
            let range = start..start.checked_add(usize::try_from(size).ok()?)?;
            if needed && !read_separately {
                ranges.push(range.clone());
            }
            if is_debug {
                debug.push(range);
            }
        }
    }
    ranges.sort_unstable_by_key(|range| range.start);
    Some(LinkReads { parts: ranges, debug })
}

fn is_loaded(section: &elf::SectionHeader64<LittleEndian>, endian: LittleEndian) -> bool {
    section.sh_flags(endian) & u64::from(elf::SHF_ALLOC) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_llvm_bitcode_raw_and_wrapped() {
        assert_eq!(detect(b"BC\xc0\xde\x35\x14\x00\x00"), FileKind::LlvmBitcode);
        assert_eq!(detect(&[0xde, 0xc0, 0x17, 0x0b, 0, 0, 0, 0]), FileKind::LlvmBitcode);
        assert_eq!(detect(b"\x7fELF\x02\x01\x01"), FileKind::Elf);
    }

    /// Below READ_BELOW a file is read whole (one read, no stat); from
    /// READ_BELOW on it is mapped; either way the bytes are the file's.
    #[test]
    fn small_files_are_read_and_others_mapped_at_the_boundary() {
        let dir = std::env::temp_dir();
        for (len, mapped) in
            [(0, false), (100, false), (READ_BELOW - 1, false), (READ_BELOW, true), (READ_BELOW + 1, true)]
        {
            let bytes: Vec<u8> = (0..len as usize).map(|i| (i * 13 % 251) as u8).collect();
            let path = dir.join(format!("jitrun-read-{}-{}", std::process::id(), len));
            std::fs::write(&path, &bytes).unwrap();
            let input = InputData::open(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            assert_eq!(matches!(input, InputData::Mapped(..)), mapped, "{} bytes", len);
            assert_eq!(input.bytes(), &bytes[..], "{} bytes", len);
        }
    }

    #[test]
    fn released_pages_of_a_mapped_file_read_back_unchanged() {
        let bytes: Vec<u8> = (0..RELEASE_FILES_FROM + 100_000).map(|i| (i * 7 % 251) as u8).collect();
        let path = std::env::temp_dir().join(format!("jitrun-release-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let input = InputData::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(input, InputData::Mapped(..)));
        input.release_except([1000..5000, 70_000..90_000].into_iter());
        assert_eq!(input.bytes(), &bytes[..]);
    }
}
