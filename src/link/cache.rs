//! The link cache (`--link-cache DIR`): a run's image, once linked,
//! is kept in a file that a later jitrun asking for the same link maps
//! straight into its address space, as the kernel maps an executable,
//! instead of parsing, resolving, laying out and fixing up again.
//!
//! An entry is used only when everything the link depended on is as it was:
//! - the *key*: jitrun's own executable, the CPU's features (libc picks
//!   `memcpy` and friends by them), the kernel (its vDSO defines `time`
//!   and `clock_gettime`), the page size, the working directory,
//!   jitrun's arguments before `--` (but those that only decide how the
//!   program runs, see `cli::app::RUN_ONLY_OPTIONS`) and the environment
//!   variables that steer a link;
//! - every file the link read (objects, archives, scripts): same device,
//!   inode, size, modification and change times, and, for a file changed
//!   less than two seconds before the link (a timestamp may be as coarse
//!   as a timer tick, so a rewrite within one could keep them), the same
//!   XXH64 of its bytes;
//! - every library directory searched and every shared library loaded in
//!   the process at the time (libc, libm, ...): same stamp, so a library
//!   added, removed or upgraded invalidates the entry.
//!
//! What moves between processes is re-done at each use: the libraries'
//! addresses (ASLR) are found again, and every fixup that refers to a
//! symbol outside the image is applied again from the original bytes of
//! its instruction (a GOT load relaxed to `lea` for a nearby libc may need
//! the GOT again). The image itself goes back where it was linked (the
//! entry records the address, taken with `MAP_FIXED_NOREPLACE`); if that
//! range is taken, jitrun links as if there were no entry.
//!
//! A link made for the cache uses every copy relocation it planned (as
//! `ld` does for a PIE), not only those out of reach of where the library
//! happens to be: a variable of libc's that the code reads PC-relatively
//! must be reachable wherever libc is next time.
//!
//! Only links that need nothing else of the process are stored: no
//! thread-locals, IFUNCs, interposed allocators,
//! `--export-dynamic`, sanitizers, debugger registration, jitrun's own
//! functions placed in the image, or source lines. Others simply link.
//! Entries are written to a temporary file and renamed into place, never
//! changed where they are (a running program maps its entry privately),
//! and the directory is kept under its size limit, least recently used
//! entries first.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::arch::{aarch64, x86_64, EdgeKind, FixupValues};
use crate::graph::fixups::Addresses;
use crate::graph::layout::{Layout, Segment, SegmentKind};
use crate::graph::model::*;
use crate::graph::resolve::Target;
use crate::graph::tables::GotSlot;
use crate::host::loader::SharedLibrary;
use crate::image::{Finalizers, FunctionArray, Image, Initializers, MappedProgram, SymbolMap};
use crate::memory::{AllocInfo, InProcessMapper, MemoryMapper, Placement};
use crate::support::FileStamp;

const MAGIC: &[u8; 8] = b"JITRUNLC";
/// A mark ([`Mark`]): this magic, the format version, a state byte (0 seen,
/// 1 declined), the declined inputs' fingerprint and the hash of the key
/// whose mark it is.
const MARK_MAGIC: &[u8; 8] = b"JITRUNLM";
const MARK_SIZE: usize = 8 + 4 + 1 + 8 + 8;
/// Marks live in this many files, chosen by the key's hash, so that links
/// run once and never again (a new working directory per CI job) leave a
/// bounded number of them: entries are bounded by `--link-cache-max`, and a
/// mark would otherwise stay until the next store. Two links sharing a slot
/// only make one of them be stored a run later, or tried once more.
const MARK_SLOTS: u64 = 1024;
const FORMAT_VERSION: u32 = 2;
/// The fixed part at the start of an entry: magic, version, the offsets
/// and lengths of the metadata, the image and the crash table, then the
/// image's address and size (reserved first, before anything else of the
/// entry is mapped where the image must go).
const HEADER_SIZE: usize = 8 + 4 + 8 * 8;

/// What a run asks of the cache: where it is, the key of this link, and
/// how large the directory may grow.
#[derive(Clone, Debug)]
pub struct CacheRequest {
    pub dir: PathBuf,
    /// Everything outside the files that decides the link (see the module
    /// docs), compared byte for byte with an entry's.
    pub key: Vec<u8>,
    pub max_bytes: u64,
    /// `None` when the run asked for the cache (`--link-cache`,
    /// `$JITRUN_LINK_CACHE`): every link is stored at once and a failure
    /// to write is worth a warning. `Some` for jitrun's own cache (see
    /// [`DefaultCachePolicy`]), with the fingerprint of the inputs named on
    /// the command line: it stores a link the second time it sees it, and
    /// stays silent.
    pub default_policy: Option<DefaultCachePolicy>,
    /// Stamps this run already took of input files (the default policy
    /// takes them), in command-line order, which checking an entry's
    /// dependencies need not take again.
    pub input_stamps: Vec<(PathBuf, FileStamp)>,
}

/// How jitrun's default cache (no `--link-cache` given) decides, so that a
/// program run once pays nothing for it and only links worth keeping are
/// kept: a link whose inputs hold fewer than
/// [`DefaultCachePolicy::MIN_INPUT_BYTES`] is not looked up at all; the
/// first sighting of a link only leaves a mark (a few bytes); the second
/// stores it (or a later one, once the inputs are [`SETTLED`] old, so
/// that the entry need not checksum them at every use); the runs after
/// that map it. A link the cache cannot
/// reproduce leaves a mark saying so, for inputs of that fingerprint, so
/// that later runs do not link for the cache in vain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefaultCachePolicy {
    /// A hash of the stamps (device, inode, size, times) of the files the
    /// command line names.
    pub inputs_fingerprint: u64,
}

impl DefaultCachePolicy {
    /// Below this many bytes of inputs, a link costs less than a mapped
    /// entry's checks (a hello world: 1.7 ms linked, 1.8 ms mapped, median
    /// of 31 interleaved runs; Lua's 33 objects, 504 KiB: 3.8 and 2.2 ms).
    pub const MIN_INPUT_BYTES: u64 = 64 << 10;
}

/// What a miss found where the link's entry would be (see [`load`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Previously {
    /// Nothing: the link was never seen (or its entry was removed).
    Unseen,
    /// The default cache's mark of a first sighting.
    Seen,
    /// The default cache's mark that the link, with inputs of this
    /// fingerprint, cannot be stored.
    Declined { inputs_fingerprint: u64 },
    /// An entry that could not serve: stale, another link's, its address
    /// taken here, or unreadable.
    Entry,
    /// The default cache's directory is another user's, or others may
    /// write to it: its entries cannot be trusted, and nothing is written.
    Untrusted,
}

/// The result of looking a link up in the cache.
pub enum Lookup {
    Hit(Box<CachedImage>),
    Miss(Previously),
}

/// What the default cache leaves where an entry goes before there is one
/// ([`mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Seen,
    Declined { inputs_fingerprint: u64 },
}

impl CacheRequest {
    fn key_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.key.hash(&mut hasher);
        hasher.finish()
    }

    /// The entry's file: a hash of the key names it (the key itself is
    /// inside and compared in full).
    fn entry_path(&self) -> PathBuf {
        self.dir.join(format!("{:016x}.jitrun-link", self.key_hash()))
    }

    /// The file holding the default cache's mark for this link, if it is
    /// this link's (see [`MARK_SLOTS`]).
    fn mark_path(&self) -> PathBuf {
        self.dir.join(format!("{:03x}.jitrun-mark", self.key_hash() % MARK_SLOTS))
    }
}

/// The fixup kinds the cache re-applies for references outside the image,
/// numbered by their position (an entry names them by number, and only the
/// jitrun that wrote it reads it: its executable is part of the key), with
/// the bytes of the instruction each may rewrite, from the field's start:
/// an x86-64 GOT load relaxed to `lea` (or a call through the GOT to a
/// direct one) changes the three bytes before its field, so they are put
/// back from the object before the fixup is applied again. Another kind
/// referring outside the image keeps the link out of the cache.
const REAPPLIED_KINDS: [(EdgeKind, std::ops::Range<i64>); 36] = [
    (EdgeKind::X86_64(x86_64::Kind::Abs64), 0..8),
    (EdgeKind::X86_64(x86_64::Kind::Pc32), 0..4),
    (EdgeKind::X86_64(x86_64::Kind::Pc64), 0..8),
    (EdgeKind::X86_64(x86_64::Kind::Branch32), 0..4),
    (EdgeKind::X86_64(x86_64::Kind::GotPcRel32), 0..4),
    (EdgeKind::X86_64(x86_64::Kind::GotPcRelX), -3..5),
    (EdgeKind::X86_64(x86_64::Kind::RexGotPcRelX), -3..5),
    (EdgeKind::X86_64(x86_64::Kind::GotPcRel64), 0..8),
    (EdgeKind::X86_64(x86_64::Kind::GotOff64), 0..8),
    (EdgeKind::X86_64(x86_64::Kind::PltOff64), 0..8),
    (EdgeKind::X86_64(x86_64::Kind::GotEntry32), 0..4),
    (EdgeKind::X86_64(x86_64::Kind::GotEntry64), 0..8),
    (EdgeKind::Aarch64(aarch64::Kind::Abs64), 0..8),
    (EdgeKind::Aarch64(aarch64::Kind::Prel64), 0..8),
    (EdgeKind::Aarch64(aarch64::Kind::Prel32), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Plt32), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Jump26), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Call26), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::AdrPrelPgHi21), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::AddAbsLo12Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Ldst8AbsLo12Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Ldst16AbsLo12Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Ldst32AbsLo12Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Ldst64AbsLo12Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::AdrGotPage), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Ld64GotLo12Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::GotLdPrel19), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::Ld64GotPageLo15), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG0), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG0Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG1), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG1Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG2), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG2Nc), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::MovwUabsG3), 0..4),
    (EdgeKind::Aarch64(aarch64::Kind::LdPrelLo19), 0..4),
];

/// The longest window of [`REAPPLIED_KINDS`].
const WINDOW_MAX: usize = 8;
const _: () = {
    let mut i = 0;
    while i < REAPPLIED_KINDS.len() {
        let span = &REAPPLIED_KINDS[i].1;
        assert!(span.end - span.start <= WINDOW_MAX as i64);
        i += 1;
    }
};

fn kind_number(kind: EdgeKind) -> Option<u16> {
    REAPPLIED_KINDS.iter().position(|(k, _)| *k == kind).map(|i| i as u16)
}

/// A fixup applied again at each use: at image offset `at`, of `kind`,
/// to external `external`, with the link's own GOT and stub addresses
/// (the image goes back to the same address).
struct ExternalFixup {
    at: u64,
    kind: u16,
    addend: i64,
    external: u32,
    got: u64,
    got_entry: Option<u64>,
    stub: Option<u64>,
    /// The original bytes of the field and of the instruction bytes the
    /// fixup may rewrite, from image offset `window_at`.
    window_at: u64,
    window: Vec<u8>,
}

impl ExternalFixup {
    /// The bytes this fixup makes of its window for a symbol at `s`, the
    /// image at `base` (the window's length, zeros after); `None` if it
    /// cannot reach it.
    fn result(&self, base: u64, s: u64) -> Option<[u8; WINDOW_MAX]> {
        let mut window = [0; WINDOW_MAX];
        let bytes = window.get_mut(..self.window.len())?;
        bytes.copy_from_slice(&self.window);
        let kind = REAPPLIED_KINDS[self.kind as usize].0;
        let values = FixupValues {
            p: base + self.at,
            s,
            a: self.addend,
            got: self.got,
            g: self.got_entry,
            stub: self.stub,
            movable: true,
            ..Default::default()
        };
        kind.apply(bytes, (self.at - self.window_at) as usize, &values).ok()?;
        Some(window)
    }
}

/// An external as the entry keeps it: a loaded object (by the name the
/// loader gives it) and an offset from its load bias.
struct ExternalPlace {
    module: Vec<u8>,
    offset: u64,
}

/// A file the entry depends on, and how it is checked.
struct Dependency {
    path: PathBuf,
    /// `None`: nothing was there (a directory searched that did not exist).
    stamp: Option<FileStamp>,
    /// XXH64 of the contents, for the objects, archives and scripts read.
    checksum: Option<u64>,
    /// The file's status last changed well before the link read it: any
    /// change since would show in its stamp, and the checksum need not be
    /// computed again (see [`SETTLED`]).
    settled: bool,
}

/// How much older than the link a file's status-change time must be for
/// its stamp alone to tell a change: the kernel's timestamps may be as
/// coarse as a timer tick, so a file written twice within one tick can
/// keep its stamp; two seconds is far beyond any tick.
const SETTLED: i128 = 2_000_000_000;

/// Whether the file of `stamp` last changed [`SETTLED`] or more ago, so
/// that its stamp alone tells whether it changes again.
pub fn settled(stamp: &FileStamp) -> bool {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
    stamp.changed < now - SETTLED
}

impl Dependency {
    /// A file the link read: checksummed, unless it is a shared library
    /// (loaded, not linked in; its stamp says whether it changed).
    fn read(path: &Path, stamp: Option<FileStamp>) -> Dependency {
        let settled = stamp.as_ref().is_some_and(settled);
        // A settled file's stamp says it all; a shared library is loaded,
        // not linked in, and its stamp says whether it changed.
        let checksum = if settled || is_shared_library(path) { None } else { checksum_of(path) };
        if checksum.is_some() {
            log::debug!("link cache: {} is fresh: checksummed at each use until it settles", path.display());
        }
        Dependency { path: path.to_path_buf(), stamp, checksum, settled }
    }

    fn stamped(path: &Path) -> Dependency {
        Dependency { path: path.to_path_buf(), stamp: FileStamp::of_path(path), checksum: None, settled: true }
    }

    /// Whether the file is as the link read it; `stamp_now` is its stamp
    /// now if this run took it already (one `stat` fewer).
    fn unchanged(&self, stamp_now: Option<Option<FileStamp>>) -> bool {
        stamp_now.unwrap_or_else(|| FileStamp::of_path(&self.path)) == self.stamp
            && (self.settled || self.checksum.is_none() || checksum_of(&self.path) == self.checksum)
    }
}

fn is_shared_library(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 64];
    File::open(path).and_then(|mut f| f.read_exact(&mut header)).is_ok()
        && crate::support::input::is_elf_shared_object(&header)
}

fn checksum_of(path: &Path) -> Option<u64> {
    crate::support::checksum::of_file(path)
}

/// What the entry needs of a finished link; see [`store`].
pub(super) struct Linked<'a> {
    pub addrs: Addresses<'a>,
    pub graphs: &'a [LinkGraph],
    pub layout: &'a Layout,
    pub symbols: &'a SymbolMap,
    pub libraries: &'a [SharedLibrary],
    pub initializers: Initializers,
    pub finalizers: Finalizers,
    pub dso_handle: u64,
    pub eh_frame: Option<(u64, u64)>,
    /// What the crash table is built from (`crash::TableRecording`).
    pub crash_table: Vec<u8>,
    pub search_dirs: &'a [PathBuf],
    pub opened: Vec<crate::support::input::OpenedFile>,
    pub mapper: &'a InProcessMapper,
    /// Copy relocations: the external, its slot's address and size.
    pub copies: Vec<(u32, u64, u64)>,
}

/// Writes the entry for a link that just finished (its image mapped at
/// `addrs.base`, fixed up, not yet run). Declines, with a debug note, a
/// link the cache cannot reproduce; fails only on what a user should hear
/// of (the directory cannot be written).
pub(super) fn store(request: &CacheRequest, linked: Linked) -> Result<Stored> {
    let mut meta = Writer::default();
    meta.bytes(&request.key);
    if describe(&linked, &mut meta)?.is_none() {
        return Ok(Stored::Declined);
    }
    let image = image_parts(&linked)?;
    let image_len = linked.layout.data_end() as usize;
    let crash = &linked.crash_table;
    let page = crate::support::page_size() as usize;
    let meta = meta.0;
    let meta_offset = HEADER_SIZE;
    let image_offset = (meta_offset + meta.len()).next_multiple_of(page);
    let crash_offset = image_offset + image_len.next_multiple_of(page);
    let mut header = Vec::with_capacity(HEADER_SIZE);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    for value in [meta_offset, meta.len(), image_offset, image_len, crash_offset, crash.len()] {
        header.extend_from_slice(&(value as u64).to_le_bytes());
    }
    for value in [linked.addrs.base, linked.layout.size] {
        header.extend_from_slice(&value.to_le_bytes());
    }
    // Written where they go; what lies between reads back as zeros.
    let mut parts: Vec<(usize, &[u8])> = vec![(0, &header[..]), (meta_offset, &meta[..]), (crash_offset, &crash[..])];
    parts.extend(image.iter().map(|&(offset, bytes)| (image_offset + offset as usize, bytes)));

    let path = write_entry(request, &parts, crash_offset + crash.len())?;
    log::debug!("link cache: stored {} ({} bytes)", path.display(), crash_offset + crash.len());
    keep_under_limit(&request.dir, request.max_bytes, &path);
    Ok(Stored::Written)
}

/// Whether [`store`] wrote an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    Written,
    /// The link needs what an entry cannot hold (said in the debug log).
    Declined,
}

/// Writes the file at `request`'s entry path, `len` bytes holding `parts`
/// (offset and bytes; zeros between them), aside and then renamed into
/// place. Creates the directory.
fn write_entry(request: &CacheRequest, parts: &[(usize, &[u8])], len: usize) -> Result<PathBuf> {
    create_dir(request)?;
    let path = request.entry_path();
    let temporary = request.dir.join(format!(".{}.{}.tmp", std::process::id(), unique_suffix()));
    let written = File::create(&temporary).and_then(|f| {
        use std::os::unix::fs::FileExt;
        f.set_len(len as u64)?;
        parts.iter().try_for_each(|&(offset, bytes)| f.write_all_at(bytes, offset as u64))
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&temporary, &path)) {
        let _ = std::fs::remove_file(&temporary);
        return Err(anyhow!("--link-cache {}: cannot write an entry: {}", request.dir.display(), e));
    }
    Ok(path)
}

fn unique_suffix() -> u64 {
    crate::support::random_u64(std::process::id().into())
}

/// Removes the least recently used entries until the directory holds at
/// most `max_bytes` (the entry just written stays, even if it alone is
/// larger). Use is what the file system records: the later of the last
/// write and the last read, which `relatime` (the usual mount option)
/// notes at the first read after a write and then once a day, and a run
/// that uses an entry notes itself when an hour has passed
/// ([`note_use`]), whatever the mount options.
fn keep_under_limit(dir: &Path, max_bytes: u64, keep: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    let now = seconds_since_epoch(std::time::SystemTime::now());
    let mut entries: Vec<(i64, u64, PathBuf)> = Vec::new();
    for entry in listing.filter_map(|e| e.ok()) {
        let (name, Ok(meta)) = (entry.file_name().to_string_lossy().into_owned(), entry.metadata()) else { continue };
        if name.ends_with(".jitrun-link") {
            entries.push((meta.mtime().max(meta.atime()), meta.size(), entry.path()));
        } else if name.ends_with(".tmp") && name.starts_with('.') && meta.mtime() < now - 3600 {
            // Left by a jitrun killed while writing.
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    entries.sort();
    for (_, size, path) in entries {
        if total <= max_bytes {
            break;
        }
        if path != keep && std::fs::remove_file(&path).is_ok() {
            total -= size;
        }
    }
}

/// The image's contents (zero-fill excluded), segment by segment, as
/// image offsets and views of the memory where it is mapped.
fn image_parts<'a>(linked: &'a Linked) -> Result<Vec<(u64, &'a [u8])>> {
    let filled = linked.layout.data_end();
    let mut parts = Vec::new();
    for segment in &linked.layout.segments {
        let (start, end) = (segment.offset, (segment.offset + segment.size).min(filled));
        if start < end {
            parts.push((start, linked.mapper.view(linked.addrs.base + start, end - start)?));
        }
    }
    Ok(parts)
}

/// What [`describe`] looks at in one placed block to find its fixups
/// that refer to externals.
struct FixupScan<'a> {
    addrs: &'a Addresses<'a>,
    targets: &'a [Target],
    block_size: u64,
    /// The block's bytes in its object, before any fixup.
    original: &'a [u8],
    /// The block's offset in the image.
    placed: u64,
}

/// The fixups found so far, and why the link cannot be stored, if so.
struct ScanState<'a> {
    fixups: &'a mut Vec<ExternalFixup>,
    declined: Option<String>,
}

impl FixupScan<'_> {
    /// Adds `edge` to `found` if its bytes depend on where a library is;
    /// `false` (with the reason in `found`) if such a fixup cannot be
    /// applied again. Inlined up to the test that passes over most edges,
    /// which refer inside the image.
    #[inline]
    fn examine(&self, edge: &Edge, found: &mut ScanState) -> bool {
        let refers_inside =
            matches!(self.targets.get(edge.target as usize), Some(t) if !matches!(t, Target::External(_)));
        if refers_inside && !edge.kind.uses_subtrahend() {
            return true;
        }
        self.examine_further(edge, found)
    }

    #[inline(never)]
    fn examine_further(&self, edge: &Edge, found: &mut ScanState) -> bool {
        match self.external_fixup(edge) {
            Ok(fixup) => {
                found.fixups.extend(fixup);
                true
            }
            Err(why) => {
                found.declined.get_or_insert(why);
                false
            }
        }
    }

    /// For an edge [`FixupScan::examine`] did not pass over: an external
    /// or a difference of two symbols.
    fn external_fixup(&self, edge: &Edge) -> Result<Option<ExternalFixup>, String> {
        let (addrs, res) = (self.addrs, self.addrs.res);
        // Plain table entries come unchecked (the fixup pass checked them).
        let target_of = |symbol: u32| {
            self.targets.get(symbol as usize).copied().ok_or_else(|| format!("a fixup names symbol {}", symbol))
        };
        let target = target_of(edge.target)?;
        // An external whose references go to its copy or its canonical
        // stub is inside the image (see `is_movable`).
        if edge.kind.uses_subtrahend() && addrs.is_movable(target_of(edge.subtrahend)?) {
            return Err("a difference with a symbol outside the image".to_string());
        }
        let Target::External(external) = target else { return Ok(None) };
        if !addrs.is_movable(target) {
            return Ok(None);
        }
        let refers_outside = || format!("fixup {} refers outside the image", edge.kind);
        let kind = kind_number(edge.kind).ok_or_else(refers_outside)?;
        if edge.kind.is_tls() {
            return Err(refers_outside());
        }
        let field = u64::from(edge.offset);
        let span = &REAPPLIED_KINDS[kind as usize].1;
        let start = field.saturating_sub(span.start.unsigned_abs());
        let end = (field + span.end as u64).min(self.block_size);
        let window = self
            .original
            .get(start as usize..end as usize)
            .map(<[u8]>::to_vec)
            .ok_or("a fixup's instruction is not in the object")?;
        let may_use_stub = edge.kind.far_reference() != crate::arch::FarReference::Never;
        let fixup = ExternalFixup {
            at: self.placed + field,
            kind,
            addend: edge.addend,
            external,
            got: addrs.got(),
            got_entry: if edge.kind.uses_address_got() { addrs.got_entry(GotSlot::Address(target)) } else { None },
            stub: if may_use_stub { addrs.stub(target) } else { None },
            window_at: self.placed + start,
            window,
        };
        // Most go through a stub or the GOT (the link was made with
        // `Addresses::externals_move`): their bytes are the same wherever
        // the library is, and only the GOT changes.
        let address = res.externals[external as usize].address;
        let moves = fixup.result(addrs.base, address) != fixup.result(addrs.base, address ^ (1 << 40));
        Ok(moves.then_some(fixup))
    }
}

/// Writes the entry's metadata; `None` if the link is one the cache cannot
/// reproduce (why goes to the debug log).
fn describe(linked: &Linked, meta: &mut Writer) -> Result<Option<()>> {
    let decline = |why: &str| {
        log::debug!("link cache: not stored: {}", why);
        Ok(None)
    };
    let (addrs, graphs) = (&linked.addrs, linked.graphs);
    let res = addrs.res;
    if graphs.iter().any(|g| g.has_line_info) {
        return decline("objects with source lines (crash reports name them from the link)");
    }
    // Externals: where each is, as an object of the process and an offset.
    let mut places = Vec::with_capacity(res.externals.len());
    for external in &res.externals {
        match crate::host::loader::module_holding(external.address) {
            Some((name, bias))
                if name.as_bytes().is_empty()
                    || name.as_bytes().starts_with(b"linux-vdso")
                    || name.as_bytes().starts_with(b"linux-gate")
                    || Path::new(name.to_str().unwrap_or("")).is_file() =>
            {
                places.push(ExternalPlace { module: name.into_bytes(), offset: external.address.wrapping_sub(bias) })
            }
            _ => return decline(&format!("`{}` is not in a library file", external.name)),
        }
    }
    // Every fixup that refers to an external, with its original bytes:
    // the block's decoded edges, then its relocation table, read as the
    // fixup pass reads it (plain entries without building a list of edges).
    let mut fixups = Vec::new();
    let (mut decoded, mut scratch) = (Vec::new(), Vec::new());
    for (g, graph) in graphs.iter().enumerate() {
        for b in 0..graph.blocks.len() as BlockId {
            let placed = linked.layout.block_offsets[g][b as usize];
            if placed == crate::graph::layout::NOT_PLACED {
                continue;
            }
            let block = &graph.blocks[b as usize];
            let scan = FixupScan {
                addrs,
                // A graph of jitrun's own (no symbols) has no row.
                targets: res.targets.get(g).map_or(&[], Vec::as_slice),
                block_size: block.size,
                original: block.bytes(graph.input_bytes()).unwrap_or(&[]),
                placed,
            };
            let mut found = ScanState { fixups: &mut fixups, declined: None };
            if block.edges.iter().all(|edge| scan.examine(edge, &mut found)) {
                let scanned = graph.for_each_relocation_chunk(b, &mut scratch, |table| {
                    crate::graph::format::elf::for_each_relocation(
                        graph.cpu,
                        table,
                        &mut found,
                        |found, plain| scan.examine(&plain.edge, found),
                        |found, entry| {
                            graph.decode_relocations_into(b, entry, &mut decoded)?;
                            match decoded.iter().all(|edge| scan.examine(edge, found)) {
                                true => Ok(()),
                                false => bail!("declined"),
                            }
                        },
                    )
                });
                if found.declined.is_none() {
                    scanned?;
                }
            }
            if let Some(why) = found.declined {
                return decline(&why);
            }
        }
    }
    // GOT entries holding an external's address.
    let got_offset = addrs.got() - addrs.base;
    let mut got_slots = Vec::new();
    for &(slot, word) in &addrs.tables.got {
        match slot {
            GotSlot::Address(t @ Target::External(_)) if !addrs.is_movable(t) => {}
            GotSlot::Address(Target::External(e)) | GotSlot::JumpSlot(Target::External(e)) => {
                got_slots.push((got_offset + 8 * word, e))
            }
            GotSlot::Address(_) | GotSlot::JumpSlot(_) => {}
            _ => return decline("thread-local GOT entries"),
        }
    }

    // The dependencies: files read, directories searched, objects loaded.
    let mut dependencies: Vec<Dependency> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (path, stamp_when_opened) in &linked.opened {
        if !seen.insert(path.clone()) {
            continue;
        }
        let stamp = FileStamp::of_path(path);
        if stamp != *stamp_when_opened {
            return decline(&format!("{} changed during the link", path.display()));
        }
        dependencies.push(Dependency::read(path, stamp));
    }
    let dirs =
        linked.search_dirs.iter().cloned().chain(crate::graph::libsearch::DEFAULT_DIRS.iter().map(PathBuf::from));
    for dir in dirs.chain([PathBuf::from("/etc/ld.so.cache")]) {
        if seen.insert(dir.clone()) {
            dependencies.push(Dependency::stamped(&dir));
        }
    }
    for (name, _) in crate::host::loader::module_biases() {
        let path = PathBuf::from(name.to_string_lossy().into_owned());
        if path.is_file() && seen.insert(path.clone()) {
            dependencies.push(Dependency::stamped(&path));
        }
    }

    meta.u64(dependencies.len() as u64);
    for d in &dependencies {
        meta.bytes(d.path.as_os_str().as_encoded_bytes());
        match d.stamp {
            Some(s) => {
                meta.u8(1);
                for v in [s.device, s.inode, s.size] {
                    meta.u64(v);
                }
                meta.i128(s.modified);
                meta.i128(s.changed);
            }
            None => meta.u8(0),
        }
        meta.option(d.checksum);
        meta.u8(d.settled as u8);
    }
    meta.u64(linked.libraries.len() as u64);
    for library in linked.libraries {
        meta.bytes(library.path.as_os_str().as_encoded_bytes());
    }
    meta.u64(places.len() as u64);
    for place in &places {
        meta.bytes(&place.module);
        meta.u64(place.offset);
    }
    meta.u64(linked.layout.segments.len() as u64);
    for s in &linked.layout.segments {
        meta.u8(segment_kind_number(s.kind));
        meta.u64(s.offset);
        meta.u64(s.size);
    }
    meta.option(linked.eh_frame.map(|(a, _)| a));
    let arrays = [linked.initializers.preinit, linked.initializers.init, linked.finalizers.fini];
    for array in arrays {
        meta.u64(array.start);
        meta.u64(array.count);
    }
    meta.option(linked.initializers.init_code);
    meta.option(linked.finalizers.fini_code);
    meta.option(linked.initializers.profiled_code.map(|(start, _)| start));
    meta.u64(linked.dso_handle);
    meta.u8(linked.symbols.macho_names as u8);
    // In the map's own form: a mapped run looks names up where it is mapped.
    meta.bytes(&linked.symbols.to_bytes());
    meta.u64(fixups.len() as u64);
    for f in &fixups {
        meta.u64(f.at);
        meta.u64(f.kind.into());
        meta.u64(f.addend as u64);
        meta.u64(f.external.into());
        meta.u64(f.got);
        meta.option(f.got_entry);
        meta.option(f.stub);
        meta.u64(f.window_at);
        meta.bytes(&f.window);
    }
    meta.u64(got_slots.len() as u64);
    for (at, external) in got_slots {
        meta.u64(at);
        meta.u64(external.into());
    }
    meta.u64(linked.copies.len() as u64);
    for &(external, slot, size) in &linked.copies {
        meta.bytes(res.externals[external as usize].name.as_bytes());
        meta.u64(external.into());
        meta.u64(slot);
        meta.u64(size);
    }
    Ok(Some(()))
}

fn segment_kind_number(kind: SegmentKind) -> u8 {
    match kind {
        SegmentKind::Text => 0,
        SegmentKind::ReadOnly => 1,
        SegmentKind::RelRo => 2,
        SegmentKind::Data => 3,
        SegmentKind::Bss => 4,
    }
}

fn segment_kind(number: u8) -> Option<SegmentKind> {
    Some(match number {
        0 => SegmentKind::Text,
        1 => SegmentKind::ReadOnly,
        2 => SegmentKind::RelRo,
        3 => SegmentKind::Data,
        4 => SegmentKind::Bss,
        _ => return None,
    })
}

/// A linked image taken from the cache, and where its crash table comes
/// from if a crash needs one.
pub struct CachedImage {
    pub image: Image,
    pub crash_info: CrashInfoSource,
}

/// The part of an entry that describes the image for crash reports, read
/// only when a crash needs it.
pub struct CrashInfoSource {
    path: PathBuf,
    stamp: Option<FileStamp>,
    offset: u64,
    len: u64,
}

impl CrashInfoSource {
    /// The recorded crash table (see `crash::TableRecording`), if the
    /// entry is still the one the image came from.
    pub fn read(&self) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        if FileStamp::of_path(&self.path) != self.stamp {
            return None;
        }
        let file = File::open(&self.path).ok()?;
        let mut bytes = vec![0u8; usize::try_from(self.len).ok()?];
        file.read_exact_at(&mut bytes, self.offset).ok()?;
        Some(bytes)
    }
}

/// The image of the entry for `request`, mapped and ready to run, if there
/// is a valid one. A miss says what was there instead: nothing, a mark of
/// the default cache, or an entry that could not serve (stale, its address
/// taken here; one that cannot be read is reported in the debug log).
/// Either way the run links as usual.
pub fn load(request: &CacheRequest) -> Lookup {
    let path = request.entry_path();
    if request.default_policy.is_some() && !is_private_directory(&request.dir) {
        log::debug!("link cache: not used: {} is not this user's alone", request.dir.display());
        return Lookup::Miss(Previously::Untrusted);
    }
    match try_load(request, &path) {
        Ok(Ok(image)) => {
            log::debug!("link cache: using {}", path.display());
            Lookup::Hit(Box::new(image))
        }
        Ok(Err(Previously::Unseen)) if request.default_policy.is_some() => {
            let previously = read_mark(request);
            log::debug!("link cache: no entry {}; its mark: {:?}", path.display(), previously);
            Lookup::Miss(previously)
        }
        Ok(Err(previously)) => {
            log::debug!("link cache: {} not used: {:?}", path.display(), previously);
            Lookup::Miss(previously)
        }
        Err(e) => {
            log::debug!("link cache: {}: {:#}", path.display(), e);
            Lookup::Miss(Previously::Entry)
        }
    }
}

/// Whether `dir` is missing (it will be made private) or is owned by this
/// process's user and writable by no one else: an entry is code that runs,
/// and jitrun's own cache must not run what someone else put there.
fn is_private_directory(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(dir) {
        Ok(meta) => meta.uid() == crate::support::effective_user() && meta.mode() & 0o022 == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Leaves `mark` in the slot of `request`'s link (replacing another
/// link's mark there). Failures only go to the debug log: the default
/// cache was not asked for.
pub fn mark(request: &CacheRequest, mark: Mark) {
    let (state, inputs_fingerprint) = match mark {
        Mark::Seen => (0, 0),
        Mark::Declined { inputs_fingerprint } => (1, inputs_fingerprint),
    };
    let mut bytes = Vec::with_capacity(MARK_SIZE);
    bytes.extend_from_slice(MARK_MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.push(state);
    bytes.extend_from_slice(&inputs_fingerprint.to_le_bytes());
    bytes.extend_from_slice(&request.key_hash().to_le_bytes());
    if let Mark::Declined { .. } = mark {
        // An entry that could not serve is what a declined link tried to
        // replace: without it, later runs go straight to the mark.
        let _ = std::fs::remove_file(request.entry_path());
    }
    match write_mark_file(request, &bytes) {
        Ok(path) => log::debug!("link cache: marked {} {:?}", path.display(), mark),
        Err(e) => log::debug!("link cache: {:#}", e),
    }
}

/// Writes `bytes` over the mark file of `request`'s slot, in place (three
/// system calls; a run first seeing a link must cost no more than a link),
/// creating the directory if it is missing. A reader that catches the file
/// half-written finds no mark of its link, which only means storing it a
/// run later.
fn write_mark_file(request: &CacheRequest, bytes: &[u8]) -> Result<PathBuf> {
    use std::io::Write;
    let path = request.mark_path();
    let open = || File::options().write(true).create(true).truncate(true).open(&path);
    let opened = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_dir(request).and_then(|()| Ok(open()?)),
        other => Ok(other?),
    };
    opened
        .and_then(|mut file| Ok(file.write_all(bytes)?))
        .with_context(|| format!("--link-cache {}: cannot write a mark", request.dir.display()))?;
    Ok(path)
}

/// Creates the cache's directory (only its owner may use jitrun's own).
fn create_dir(request: &CacheRequest) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    if request.default_policy.is_some() {
        builder.mode(0o700);
    }
    builder
        .create(&request.dir)
        .with_context(|| format!("--link-cache {}: cannot create the directory", request.dir.display()))
}

/// What the mark in `request`'s slot says of its link: [`Previously::Unseen`]
/// when the slot is empty, holds another link's mark or is unreadable.
fn read_mark(request: &CacheRequest) -> Previously {
    use std::io::Read;
    let mut bytes = [0u8; MARK_SIZE + 1];
    let read = File::open(request.mark_path()).and_then(|mut file| file.read(&mut bytes)).unwrap_or(0);
    if read != MARK_SIZE {
        return Previously::Unseen;
    }
    let mut r = Reader { data: &bytes[..read], at: 0 };
    let (Ok(magic), Ok(version), Ok(state), Ok(inputs_fingerprint), Ok(key_hash)) =
        (r.take(8), r.take(4), r.u8(), r.u64(), r.u64())
    else {
        return Previously::Unseen;
    };
    if magic != MARK_MAGIC || version != FORMAT_VERSION.to_le_bytes() || key_hash != request.key_hash() {
        return Previously::Unseen;
    }
    match state {
        0 => Previously::Seen,
        1 => Previously::Declined { inputs_fingerprint },
        _ => Previously::Unseen,
    }
}

/// How stale an entry's access time may get before a run that opens it
/// sets it: eviction goes by last use ([`keep_under_limit`]), which the
/// file system notes once a day under `relatime` and never under
/// `noatime`. Setting it costs two system calls, once an hour per entry.
const USE_NOTED_EVERY_SECONDS: i64 = 3600;

/// Sets `file`'s access time to now if it is [`USE_NOTED_EVERY_SECONDS`]
/// old; whether it did. An entry of another user's (a shared directory)
/// keeps its time.
fn note_use(file: &File, metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let now = std::time::SystemTime::now();
    metadata.atime() <= seconds_since_epoch(now) - USE_NOTED_EVERY_SECONDS
        && file.set_times(std::fs::FileTimes::new().set_accessed(now)).is_ok()
}

/// `time` in whole seconds since 1970, as file times are compared here.
fn seconds_since_epoch(time: std::time::SystemTime) -> i64 {
    time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

fn try_load(request: &CacheRequest, path: &Path) -> Result<Result<CachedImage, Previously>> {
    use std::os::unix::fs::FileExt;
    let Ok(file) = File::open(path) else { return Ok(Err(Previously::Unseen)) };
    // One stat of the open file: its stamp (the crash table is read from
    // it later, if it is still this file) and its length.
    let mut metadata = file.metadata()?;
    if note_use(&file, &metadata) {
        // The status-change time moved with it.
        metadata = file.metadata()?;
    }
    let stamp = Some(FileStamp::of_metadata(&metadata));
    let mut header = [0u8; HEADER_SIZE];
    let mut read = 0;
    while read < HEADER_SIZE {
        match file.read_at(&mut header[read..], read as u64).context("cannot read the header")? {
            0 => break,
            n => read += n,
        }
    }
    if read < HEADER_SIZE {
        bail!("the file ends inside the header");
    }
    if &header[..8] != MAGIC || header[8..12] != FORMAT_VERSION.to_le_bytes() {
        bail!("not a link cache entry of this version");
    }
    let field = |i: usize| u64::from_le_bytes(header[12 + 8 * i..20 + 8 * i].try_into().expect("8 bytes"));
    let (meta_offset, meta_len, image_offset, image_len, crash_offset, crash_len) =
        (field(0), field(1), field(2), field(3), field(4), field(5));
    let (base, size) = (field(6), field(7));
    // Back where it was linked, or not at all; first, so that nothing else
    // of this run takes the range.
    let mut mapper = InProcessMapper::new();
    if let Err(e) = mapper.reserve(size, crate::support::page_size(), Placement::Fixed(base)) {
        log::debug!("link cache: {:#}", e);
        return Ok(Err(Previously::Entry));
    }
    let file_len = metadata.len();
    for (offset, len) in [(meta_offset, meta_len), (image_offset, image_len), (crash_offset, crash_len)] {
        if offset.checked_add(len).is_none_or(|end| end > file_len) {
            bail!("a part at offset {:#x} runs past the end of the file", offset);
        }
    }
    // Parsed where it is mapped, from the file already open: read into the
    // heap, a large program's metadata would grow it by a fresh huge page
    // (and a small one's by fresh pages). Only the metadata is mapped.
    // (Entries are never changed in place, only replaced.)
    let meta_end = usize::try_from(meta_offset + meta_len).context("the metadata is too large")?;
    let mapped = crate::support::input::map_start_of(&file, meta_end).context("cannot map the metadata")?;
    let meta = mapped.get(meta_offset as usize..meta_end).context("the file shrank")?;
    let mut r = Reader { data: meta, at: 0 };
    // The key first: a different link is no error, merely another entry.
    let key = r.bytes()?;
    if key != request.key.as_slice() {
        log::debug!("link cache: another link's entry ({})", String::from_utf8_lossy(key));
        return Ok(Err(Previously::Entry));
    }
    let mut stamps_taken = StampsTaken { stamps: &request.input_stamps, next: 0 };
    // Where the entry's flags of dependencies that settled since it was
    // stored are (see `mark_settled`).
    let mut now_settled = Vec::new();
    for _ in 0..r.count(11)? {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(r.bytes()?));
        let stamp = match r.u8()? {
            0 => None,
            _ => Some(FileStamp {
                device: r.u64()?,
                inode: r.u64()?,
                size: r.u64()?,
                modified: r.i128()?,
                changed: r.i128()?,
            }),
        };
        let checksum = r.option()?;
        let settled_flag_at = meta_offset + r.at as u64;
        let dependency = Dependency { path, stamp, checksum, settled: r.u8()? != 0 };
        if !dependency.unchanged(stamps_taken.find(&dependency.path).map(Some)) {
            log::debug!("link cache: {} changed", dependency.path.display());
            return Ok(Err(Previously::Entry));
        }
        // Checksummed just now and unchanged, and old enough by now that
        // its stamp alone will tell a change: the entry can say so.
        if !dependency.settled && dependency.checksum.is_some() && dependency.stamp.as_ref().is_some_and(settled) {
            now_settled.push(settled_flag_at);
        }
    }
    let mut libraries = Vec::new();
    for _ in 0..r.count(8)? {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(r.bytes()?));
        libraries.push(SharedLibrary::open(&path)?);
    }
    let biases = crate::host::loader::module_biases();
    let mut externals = Vec::new();
    for _ in 0..r.count(16)? {
        let module = r.bytes()?;
        let offset = r.u64()?;
        let Some((_, bias)) = biases.iter().find(|(name, _)| name.as_bytes() == module) else {
            log::debug!("link cache: {} is not loaded", String::from_utf8_lossy(module));
            return Ok(Err(Previously::Entry));
        };
        externals.push(bias.wrapping_add(offset));
    }
    let mut segments = Vec::new();
    for _ in 0..r.count(17)? {
        let kind = segment_kind(r.u8()?).ok_or_else(|| anyhow!("a segment of unknown kind"))?;
        let (offset, seg_size) = (r.u64()?, r.u64()?);
        if offset.checked_add(seg_size).is_none_or(|end| end > size) {
            bail!("a segment lies outside the image");
        }
        segments.push(Segment { kind, offset, size: seg_size });
    }
    if image_len > size {
        bail!("the image's contents are larger than the image");
    }
    let memory = mapper.prepare_from_file(base, size, &file, image_offset, image_len)?;

    let inside = |address: u64| address >= base && address - base < size;
    let checked = |address: Option<u64>| match address {
        Some(a) if !inside(a) => Err(anyhow!("an address {:#x} outside the image", a)),
        other => Ok(other),
    };
    let eh_frame = checked(r.option()?)?;
    let mut arrays = [FunctionArray::default(); 3];
    for array in &mut arrays {
        *array = FunctionArray { start: r.u64()?, count: r.u64()? };
        if array.count > 0
            && (!inside(array.start) || array.count.checked_mul(8).is_none_or(|n| array.start - base + n > size))
        {
            bail!("a function array lies outside the image");
        }
    }
    let init_code = checked(r.option()?)?;
    let fini_code = checked(r.option()?)?;
    if r.option()?.is_some() {
        bail!("a profiled image");
    }
    let dso_handle = checked(Some(r.u64()?))?.unwrap_or_default();
    let macho_names = r.u8()? != 0;
    // Looked up where it is mapped (see `SymbolMap::mapped`), at the end.
    let symbols_len = r.bytes()?.len();
    let symbols_at = meta_offset as usize + r.at - symbols_len;
    // Applied as they are read: no list of them on the heap.
    for _ in 0..r.count(62)? {
        let at = r.u64()?;
        let kind = REAPPLIED_KINDS.get(r.u64()? as usize).ok_or_else(|| anyhow!("an unknown fixup kind"))?.0;
        let addend = r.u64()? as i64;
        let s = *externals.get(r.u64()? as usize).ok_or_else(|| anyhow!("an unknown external"))?;
        let got = r.u64()?;
        let (g, stub) = (r.option()?, r.option()?);
        let window_at = r.u64()?;
        let window = r.bytes()?;
        if window_at.checked_add(window.len() as u64).is_none_or(|end| end > size) || at >= size {
            bail!("a fixup lies outside the image");
        }
        let start = window_at as usize;
        memory[start..start + window.len()].copy_from_slice(window);
        let values = FixupValues { p: base + at, s, a: addend, got, g, stub, movable: true, ..Default::default() };
        kind.apply(memory, at as usize, &values).map_err(|e| anyhow!("fixup {} at {:#x}: {}", kind, at, e))?;
    }
    for _ in 0..r.count(16)? {
        let at = r.u64()?;
        let address = *externals.get(r.u64()? as usize).ok_or_else(|| anyhow!("an unknown external"))?;
        if at.checked_add(8).is_none_or(|end| end > size) {
            bail!("a GOT entry lies outside the image");
        }
        memory[at as usize..at as usize + 8].copy_from_slice(&address.to_le_bytes());
    }
    let mut copies = Vec::new();
    for _ in 0..r.count(32)? {
        let name = String::from_utf8_lossy(r.bytes()?).into_owned();
        let original = *externals.get(r.u64()? as usize).ok_or_else(|| anyhow!("an unknown external"))?;
        let (slot, slot_size) = (r.u64()?, r.u64()?);
        if !inside(slot) || slot_size > size - (slot - base) {
            bail!("a copy relocation's slot lies outside the image");
        }
        copies.push(crate::host::copyreloc::CopyRelocation { name, original, copy: slot, size: slot_size });
    }
    let mut symbols = SymbolMap::mapped(mapped, symbols_at, symbols_len).context("the symbols")?;
    symbols.macho_names = macho_names;

    let layout_size = size;
    let mut actions = Vec::new();
    if !copies.is_empty() {
        actions.push(super::in_process::copy_relocations_action(copies));
    }
    actions.extend(super::in_process::actions_of_any_image(base, layout_size, &segments, eh_frame, true));
    let key = mapper.initialize(AllocInfo { segments: super::in_process::protections(base, &segments), actions })?;

    let [preinit, init, fini] = arrays;
    let image = Image::new(MappedProgram {
        mapper: Box::new(mapper),
        base,
        size,
        key,
        symbols,
        initializers: Initializers { preinit, init_code, init, profiled_code: None },
        finalizers: Finalizers { fini, fini_code },
        dso_handle,
        libraries,
    });
    let stamp = if now_settled.is_empty() { stamp } else { mark_settled(request, &file, path, &now_settled).or(stamp) };
    let crash_info = CrashInfoSource { path: path.to_path_buf(), stamp, offset: crash_offset, len: crash_len };
    Ok(Ok(CachedImage { image, crash_info }))
}

/// Replaces the entry at `path` (open as `file`) with a copy whose flags
/// at `flag_offsets` say their dependencies are settled: stored fresh,
/// they were checksummed by every run that mapped the entry (the large
/// program of `bench_reuse.sh`, 1.8 MB of object: ~1.5 ms a run); now old
/// enough that their stamps alone tell a change, and unchanged, they need
/// not be again. The copy is renamed over the entry, as entries are never
/// changed in place (runs map them). Returns the new file's stamp, or
/// `None` (said in the debug log) if it could not be written.
fn mark_settled(request: &CacheRequest, file: &File, path: &Path, flag_offsets: &[u64]) -> Option<FileStamp> {
    use std::os::unix::fs::FileExt;
    let temporary = request.dir.join(format!(".{}.{}.tmp", std::process::id(), unique_suffix()));
    let copied = File::options().write(true).create_new(true).open(&temporary).and_then(|mut copy| {
        use std::io::Seek;
        let mut source = file;
        source.seek(std::io::SeekFrom::Start(0))?;
        // `copy_file_range`: the kernel copies (or shares) the bytes.
        std::io::copy(&mut source, &mut copy)?;
        flag_offsets.iter().try_for_each(|&offset| copy.write_all_at(&[1], offset))?;
        let stamp = FileStamp::of_metadata(&copy.metadata()?);
        std::fs::rename(&temporary, path)?;
        Ok(stamp)
    });
    match copied {
        Ok(stamp) => {
            log::debug!("link cache: {}: {} inputs settled unchanged", path.display(), flag_offsets.len());
            Some(stamp)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            log::debug!("link cache: {}: cannot note settled inputs: {}", path.display(), e);
            None
        }
    }
}

/// The stamps a run took of its inputs, searched from after the last one
/// found: an entry lists the objects it read in command-line order too.
struct StampsTaken<'a> {
    stamps: &'a [(PathBuf, FileStamp)],
    next: usize,
}

impl StampsTaken<'_> {
    fn find(&mut self, path: &Path) -> Option<FileStamp> {
        // Byte for byte, as the paths were given: `Path`'s own comparison
        // walks components (~400 instructions a comparison).
        let wanted = path.as_os_str().as_bytes();
        let n = self.stamps.len();
        let found = (0..n).map(|i| (self.next + i) % n).find(|&i| self.stamps[i].0.as_os_str().as_bytes() == wanted)?;
        self.next = found + 1;
        Some(self.stamps[found].1)
    }
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i128(&mut self, v: i128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
    }
    fn option(&mut self, v: Option<u64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.u64(v);
            }
            None => self.u8(0),
        }
    }
}

/// Reads what [`Writer`] wrote; every read is bounds-checked and names the
/// offset where the entry ends too early.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.data.len());
        let Some(end) = end else { bail!("truncated at offset {:#x}", self.at) };
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn i128(&mut self) -> Result<i128> {
        Ok(i128::from_le_bytes(self.take(16)?.try_into().expect("16 bytes")))
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let len = usize::try_from(self.u64()?)?;
        self.take(len)
    }
    fn option(&mut self) -> Result<Option<u64>> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.u64()?),
        })
    }
    /// A count of items of at least `item_size` bytes each, no more than
    /// the rest of the data could hold.
    fn count(&mut self, item_size: usize) -> Result<usize> {
        let n = usize::try_from(self.u64()?)?;
        if n.checked_mul(item_size.max(1)).is_none_or(|bytes| bytes > self.data.len() - self.at) {
            bail!("a count of {} at offset {:#x} exceeds the entry", n, self.at - 8);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entries_go_first() {
        let dir = std::env::temp_dir().join(format!("jitrun-cache-lru-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let now = std::time::SystemTime::now();
        let ago = |seconds| now - std::time::Duration::from_secs(seconds);
        // (name, written, last read): the oldest entry was read last.
        for (name, written, read) in [("old-but-used", 300, 10), ("unused", 200, 200), ("newer", 100, 100)] {
            let file = File::create(dir.join(format!("{name}.jitrun-link"))).unwrap();
            file.set_len(100).unwrap();
            file.set_times(std::fs::FileTimes::new().set_modified(ago(written)).set_accessed(ago(read))).unwrap();
        }
        let just_stored = dir.join("just-stored.jitrun-link");
        std::fs::write(&just_stored, [0u8; 100]).unwrap();
        keep_under_limit(&dir, 300, &just_stored);
        let mut left: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        assert_eq!(left, ["just-stored.jitrun-link", "newer.jitrun-link", "old-but-used.jitrun-link"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An entry's use is noted in its access time once that is an hour old,
    /// and not again within the hour. (Through a run this cannot be told
    /// from the file system's own noting: setting a time moves the
    /// status-change time, after which `relatime` notes the next read.)
    #[test]
    fn a_use_is_noted_once_an_hour() {
        use std::os::unix::fs::MetadataExt;
        let path = std::env::temp_dir().join(format!("jitrun-cache-use-{}.jitrun-link", std::process::id()));
        std::fs::write(&path, [0u8; 100]).unwrap();
        let now = std::time::SystemTime::now();
        let written = now - std::time::Duration::from_secs(3 * 3600);
        let times =
            std::fs::FileTimes::new().set_modified(written).set_accessed(now - std::time::Duration::from_secs(7200));
        File::options().write(true).open(&path).unwrap().set_times(times).unwrap();
        let file = File::open(&path).unwrap();
        assert!(note_use(&file, &file.metadata().unwrap()));
        let noted = file.metadata().unwrap();
        assert!(noted.atime() >= seconds_since_epoch(now), "{} before {}", noted.atime(), seconds_since_epoch(now));
        assert_eq!(noted.mtime(), seconds_since_epoch(written));
        assert!(!note_use(&file, &noted), "noted again within the hour");
        std::fs::remove_file(&path).unwrap();
    }

    /// Stamps are found in any order, fastest in the order they were taken.
    #[test]
    fn stamps_taken_are_found_by_path_in_any_order() {
        let stamp = |size| FileStamp { size, ..FileStamp::default() };
        let stamps: Vec<(PathBuf, FileStamp)> =
            ["a.o", "b.o", "c.o"].iter().zip(1..).map(|(p, size)| (PathBuf::from(p), stamp(size))).collect();
        let mut taken = StampsTaken { stamps: &stamps, next: 0 };
        let sizes: Vec<Option<u64>> = ["a.o", "b.o", "c.o", "b.o", "d.o", "a.o"]
            .iter()
            .map(|p| taken.find(Path::new(p)).map(|s| s.size))
            .collect();
        assert_eq!(sizes, [Some(1), Some(2), Some(3), Some(2), None, Some(1)]);
        assert_eq!(StampsTaken { stamps: &[], next: 0 }.find(Path::new("a.o")), None);
    }

    /// Marks fill a bounded number of files; a slot shared by two links
    /// holds the mark of the one that wrote last, and the other reads it
    /// as no mark at all.
    #[test]
    fn marks_share_a_bounded_number_of_slots_and_tell_their_links_apart() {
        let dir = std::env::temp_dir().join(format!("jitrun-mark-slots-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let request = |key: String| CacheRequest {
            dir: dir.clone(),
            key: key.into_bytes(),
            max_bytes: 1 << 20,
            default_policy: Some(DefaultCachePolicy { inputs_fingerprint: 7 }),
            input_stamps: Vec::new(),
        };
        let links: Vec<CacheRequest> = (0..3 * MARK_SLOTS).map(|i| request(format!("link {}", i))).collect();
        for link in &links {
            assert_eq!(read_mark(link), Previously::Unseen);
            mark(link, Mark::Seen);
        }
        let files = std::fs::read_dir(&dir).unwrap().count();
        assert!(files as u64 <= MARK_SLOTS, "{} marks for {} links", files, links.len());
        assert_eq!(read_mark(links.last().unwrap()), Previously::Seen);

        let first = &links[0];
        let sharer = links[1..].iter().find(|l| l.mark_path() == first.mark_path()).expect("3x the slots share one");
        mark(first, Mark::Declined { inputs_fingerprint: 42 });
        assert_eq!(read_mark(first), Previously::Declined { inputs_fingerprint: 42 });
        assert_eq!(read_mark(sharer), Previously::Unseen);
        mark(sharer, Mark::Seen);
        assert_eq!((read_mark(first), read_mark(sharer)), (Previously::Unseen, Previously::Seen));

        // A declined link's stale entry goes, so later runs read the mark.
        std::fs::write(first.entry_path(), b"stale").unwrap();
        mark(first, Mark::Declined { inputs_fingerprint: 43 });
        assert!(!first.entry_path().exists());
        assert!(matches!(load(first), Lookup::Miss(Previously::Declined { inputs_fingerprint: 43 })));
        // A torn or foreign file in the slot is no mark.
        std::fs::write(first.mark_path(), &b"JITRUNLM"[..]).unwrap();
        assert_eq!(read_mark(first), Previously::Unseen);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
