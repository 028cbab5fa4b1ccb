//! Static archives (`.a`): GNU and BSD formats, with or without a symbol
//! index, and thin archives (`!<thin>`) whose members are files next to the
//! archive.
//!
//! An archive is not translated at once: its members become
//! [`LinkGraph`]s only when they are needed. [`load_needed`] pulls in every
//! member that defines a name some loaded object still references (with a
//! strong reference, as `ld` does: a weak reference never pulls a member),
//! and repeats until a pass loads nothing new. Unlike classic `ld`, which
//! looks at each archive once in command-line order, the order of archives
//! does not matter: members of one archive may need members of an archive
//! named earlier. When several archives define a name, the first archive on
//! the command line wins; inside an archive, the first member in its
//! symbol index.
//!
//! `--whole-archive` members are all translated up front by
//! [`Archive::load_all`] and join the link like objects named on the
//! command line.
//!
//! Member graphs are named `libfoo.a(bar.o)` in every message.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use object::read::archive::{ArchiveFile, ArchiveMember};
use object::{Object, ObjectSymbol};

use crate::graph::model::LinkGraph;
use crate::graph::resolve::SymbolTable;
use crate::graph::Limits;
use crate::support::input::{detect, FileKind, InputData};

/// Index of a member in its [`Archive`].
pub type MemberId = u32;

/// A parsed archive: its members and which member defines which name.
pub struct Archive {
    /// The archive's path as given; members are `name(member)`.
    pub name: String,
    data: Arc<InputData>,
    /// Thin archives name their members relative to this directory.
    dir: PathBuf,
    members: Vec<Member>,
    /// Global name → the member that defines it (the first one, in index
    /// order). FxHash: libcrypto's index has 9,000 names, and SipHash made
    /// building this map a tenth of OpenSSL's link.
    index: rustc_hash::FxHashMap<Box<str>, MemberId>,
    loaded: Vec<bool>,
    /// Per member: whether it is a Mach-O object, once known.
    macho_members: Vec<Option<bool>>,
}

struct Member {
    name: String,
    location: Location,
}

enum Location {
    /// The member's bytes inside the archive.
    Inline(Range<usize>),
    /// A thin archive's member: a file of its own.
    File(PathBuf),
}

/// Where the symbol index came from, for the debug log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexSource {
    /// The archive's own symbol table (`/`, `/SYM64/`, `__.SYMDEF`).
    Archive,
    /// Built by reading every member's symbol table (`ar rcS`, no ranlib).
    Scanned,
}

impl Archive {
    /// Reads the archive at `path` (already mapped as `data`): its member
    /// list and symbol index. Member contents are not translated yet.
    pub fn parse(path: &Path, data: Arc<InputData>) -> Result<Archive> {
        let name = path.display().to_string();
        let bytes = data.bytes();
        let file = ArchiveFile::parse(bytes).map_err(|e| anyhow!("{}: invalid archive: {}", name, e))?;
        let mut archive = Archive {
            name,
            data: data.clone(),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            members: Vec::new(),
            index: Default::default(),
            loaded: Vec::new(),
            macho_members: Vec::new(),
        };
        // A member is identified by where its contents start; thin members
        // all "start" at 0, so the name tells them apart.
        let mut by_key: rustc_hash::FxHashMap<(u64, &[u8]), MemberId> = Default::default();
        for (i, member) in file.members().enumerate() {
            let member = member.map_err(|e| anyhow!("{}: member {}: {}", archive.name, i + 1, e))?;
            let id = archive.members.len() as MemberId;
            archive.members.push(archive.describe(&member, bytes)?);
            by_key.entry(member_key(&member)).or_insert(id);
        }
        archive.loaded = vec![false; archive.members.len()];
        archive.macho_members = vec![None; archive.members.len()];

        let source = match file.symbols().map_err(|e| anyhow!("{}: symbol index: {}", archive.name, e))? {
            Some(symbols) => {
                // Most names are distinct: one allocation for the table.
                archive.index.reserve(symbols.clone().count());
                // The index lists a member's names together: its header is
                // parsed once per run of names, not once per name.
                let mut last: Option<(u64, MemberId)> = None;
                for symbol in symbols {
                    let symbol = symbol.map_err(|e| anyhow!("{}: symbol index: {}", archive.name, e))?;
                    let offset = symbol.offset().0;
                    let id = match last {
                        Some((at, id)) if at == offset => id,
                        _ => {
                            let id = archive.member_at(&file, &by_key, symbol.name(), offset)?;
                            last = Some((offset, id));
                            id
                        }
                    };
                    archive.add_to_index(symbol.name(), id);
                }
                IndexSource::Archive
            }
            None => {
                for id in 0..archive.members.len() as MemberId {
                    archive.scan_member(id)?;
                }
                IndexSource::Scanned
            }
        };
        log::debug!(
            "{}: {} members, {} indexed names ({:?} index{})",
            archive.name,
            archive.members.len(),
            archive.index.len(),
            source,
            if file.is_thin() { ", thin" } else { "" }
        );
        Ok(archive)
    }

    /// The member whose header is at `offset`, which the index names for `name`.
    fn member_at(
        &self,
        file: &ArchiveFile,
        by_key: &rustc_hash::FxHashMap<(u64, &[u8]), MemberId>,
        name: &[u8],
        offset: u64,
    ) -> Result<MemberId> {
        let member = file.member(object::read::archive::ArchiveOffset(offset)).map_err(|e| {
            anyhow!(
                "{}: symbol index: `{}` points to offset {:#x}, where there is no member: {}",
                self.name,
                String::from_utf8_lossy(name),
                offset,
                e
            )
        })?;
        by_key.get(&member_key(&member)).copied().ok_or_else(|| {
            anyhow!(
                "{}: symbol index: `{}` points to offset {:#x}, which is not the start of a member",
                self.name,
                String::from_utf8_lossy(name),
                offset
            )
        })
    }

    fn describe(&self, member: &ArchiveMember, bytes: &[u8]) -> Result<Member> {
        let member_name = String::from_utf8_lossy(member.name()).into_owned();
        let location = if member.is_thin() {
            let path = Path::new(&member_name);
            Location::File(if path.is_absolute() { path.to_path_buf() } else { self.dir.join(path) })
        } else {
            let (offset, size) = member.file_range();
            let range = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(size).ok())
                .and_then(|(start, size)| Some(start..start.checked_add(size)?))
                .filter(|r| r.end <= bytes.len())
                .ok_or_else(|| {
                    anyhow!(
                        "{}({}): contents at offset {:#x} size {:#x} lie outside the archive ({:#x} bytes)",
                        self.name,
                        member_name,
                        offset,
                        size,
                        bytes.len()
                    )
                })?;
            Location::Inline(range)
        };
        Ok(Member { name: member_name, location })
    }

    fn add_to_index(&mut self, name: &[u8], id: MemberId) {
        // The Mach-O front-end drops the C underscore (`_foo` is `foo`), so
        // the index of Mach-O members must too.
        let name = match name.strip_prefix(b"_") {
            Some(stripped) if self.member_is_macho(id) => stripped,
            _ => name,
        };
        // Checked as UTF-8 first: the lossy conversion is slower even for valid names.
        let name: Box<str> = match std::str::from_utf8(name) {
            Ok(valid) => valid.into(),
            Err(_) => String::from_utf8_lossy(name).into(),
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = self.index.entry(name) {
            slot.insert(id);
        }
    }

    /// Adds the global definitions of member `id` to the index (for
    /// archives without one). Members that are not objects are skipped,
    /// as `ar s` skips them.
    fn scan_member(&mut self, id: MemberId) -> Result<()> {
        let data = self.member_data(id)?;
        if !matches!(detect(data.bytes()), FileKind::Elf | FileKind::MachO) {
            log::debug!("{}: not an object, not indexed", self.member_name(id));
            return Ok(());
        }
        let file = object::File::parse(data.bytes())
            .map_err(|e| anyhow!("{}: cannot read its symbol table: {}", self.member_name(id), e))?;
        let names: Vec<Vec<u8>> = file
            .symbols()
            .filter(|s| s.is_global() && !s.is_undefined())
            .filter_map(|s| s.name_bytes().ok().map(<[u8]>::to_vec))
            .collect();
        for name in names {
            self.add_to_index(&name, id);
        }
        Ok(())
    }

    /// Whether member `id` is a Mach-O object (read once, then remembered).
    fn member_is_macho(&mut self, id: MemberId) -> bool {
        if let Some(known) = self.macho_members[id as usize] {
            return known;
        }
        let is_macho = self.member_data(id).is_ok_and(|d| detect(d.bytes()) == FileKind::MachO);
        self.macho_members[id as usize] = Some(is_macho);
        is_macho
    }

    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// `libfoo.a(bar.o)`.
    pub fn member_name(&self, id: MemberId) -> String {
        format!("{}({})", self.name, self.members[id as usize].name)
    }

    fn member_data(&self, id: MemberId) -> Result<Arc<InputData>> {
        Ok(Arc::new(match &self.members[id as usize].location {
            Location::Inline(range) => InputData::member(self.data.clone(), range.clone())
                .ok_or_else(|| anyhow!("{}: contents lie outside the archive", self.member_name(id)))?,
            Location::File(path) => {
                InputData::open(path).with_context(|| format!("{}: member of a thin archive", self.member_name(id)))?
            }
        }))
    }

    /// The not yet loaded member that defines `symbol`, if any.
    pub fn member_defining(&self, symbol: &str) -> Option<MemberId> {
        self.index.get(symbol).copied().filter(|&id| !self.loaded[id as usize])
    }

    /// Translates member `id` into a graph; a member is loaded at most once.
    pub fn load_member(&mut self, id: MemberId, limits: &Limits) -> Result<LinkGraph> {
        self.loaded[id as usize] = true;
        self.translate_member(id, limits)
    }

    /// Member `id` as a graph, without marking it loaded (several threads
    /// may translate members ahead of deciding which load).
    fn translate_member(&self, id: MemberId, limits: &Limits) -> Result<LinkGraph> {
        let name = self.member_name(id);
        let data = self.member_data(id)?;
        match detect(data.bytes()) {
            FileKind::Elf => crate::graph::format::elf::parse(&name, data, limits),
            FileKind::MachO => crate::graph::format::macho::parse(&name, data, limits),
            FileKind::Archive | FileKind::ThinArchive => {
                bail!("{}: an archive inside an archive is not supported", name)
            }
            _ => bail!("{}: not an ELF object", name),
        }
    }

    /// Every member that is an object (`--whole-archive`), in archive order.
    pub fn load_all(&mut self, limits: &Limits) -> Result<Vec<LinkGraph>> {
        let mut graphs = Vec::new();
        for id in 0..self.members.len() as MemberId {
            if self.loaded[id as usize] {
                continue;
            }
            let data = self.member_data(id)?;
            if !matches!(detect(data.bytes()), FileKind::Elf | FileKind::MachO) {
                log::debug!("{}: not an object, skipped by --whole-archive", self.member_name(id));
                continue;
            }
            graphs.push(self.load_member(id, limits)?);
        }
        Ok(graphs)
    }
}

fn member_key<'data>(member: &ArchiveMember<'data>) -> (u64, &'data [u8]) {
    let (offset, _) = member.file_range();
    (offset, if member.is_thin() { member.name() } else { &[] })
}

/// From this many members to translate in one pass, [`load_needed`] uses
/// several threads.
const PARALLEL_MEMBERS: usize = 8;

/// Pulls archive members into the link until every strongly referenced
/// name that some archive defines is defined: each loaded member joins
/// `table` and `graphs` (after `admit`, which selects COMDAT copies and
/// prunes unwind entries), and may reference names that pull more members.
/// `roots` (the entry point) are wanted too, without anything referencing them.
pub fn load_needed(
    archives: &mut [Archive],
    table: &mut SymbolTable,
    graphs: &mut Vec<LinkGraph>,
    roots: &[String],
    limits: &Limits,
    mut admit: impl FnMut(&mut LinkGraph) -> Result<()>,
) -> Result<usize> {
    let mut loaded = 0;
    let defining = |archives: &[Archive], name: &str| {
        archives.iter().enumerate().find_map(|(a, archive)| archive.member_defining(name).map(|id| (a, id)))
    };
    loop {
        // Each wanted name nothing defines yet, with the member that would.
        // They load in archive order, then member order, as ld loads them
        // walking each archive's index (its constructors run in that order),
        // not in the order the names were first referenced.
        let mut wanted: Vec<((usize, MemberId), Box<str>)> = roots
            .iter()
            .map(String::as_str)
            .chain(table.undefined_strong_names())
            .filter(|name| !table.is_defined(name))
            .filter_map(|name| defining(archives, name).map(|member| (member, name.into())))
            .collect();
        wanted.sort_by_key(|(member, _)| *member);
        // Every member that defines a wanted name is translated first, on
        // several threads when there are many (CPython's libpython: 145
        // members); the pass below then loads exactly the ones one member
        // at a time would, and drops the rest.
        let mut candidates: Vec<(usize, MemberId)> = wanted.iter().map(|(member, _)| *member).collect();
        candidates.dedup();
        let mut translated: rustc_hash::FxHashMap<(usize, MemberId), Result<LinkGraph>> = Default::default();
        if candidates.len() >= PARALLEL_MEMBERS {
            let shared: &[Archive] = archives;
            let graphs = crate::support::parallel::map_in_order(&candidates, true, |&(a, id)| {
                shared[a].translate_member(id, limits)
            });
            translated.extend(candidates.into_iter().zip(graphs));
        }
        let mut progress = false;
        for names in wanted.chunk_by(|x, y| x.0 == y.0) {
            let (a, id) = names[0].0;
            // An earlier member of this pass may have defined them already.
            let Some(name) = names.iter().map(|(_, name)| name).find(|name| !table.is_defined(name)) else {
                continue;
            };
            let mut graph = match translated.remove(&(a, id)) {
                Some(graph) => {
                    archives[a].loaded[id as usize] = true;
                    graph?
                }
                None => archives[a].load_member(id, limits)?,
            };
            if log::log_enabled!(log::Level::Debug) {
                let mut referrers: Vec<&str> =
                    table.referrers(name).iter().map(|&g| graphs[g as usize].name.as_str()).collect();
                if roots.iter().any(|r| **r == **name) {
                    referrers.push("the command line (the entry point, -u)");
                }
                log::debug!("loading {} for `{}` (referenced by {})", graph.name, name, referrers.join(", "));
            }
            admit(&mut graph)?;
            table.add_graph(graphs.len() as u32, &graph, graphs)?;
            graphs.push(graph);
            loaded += 1;
            progress = true;
        }
        if !progress {
            return Ok(loaded);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::write::{Object as WriteObject, Symbol as WriteSymbol, SymbolSection};
    use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolKind, SymbolScope};

    /// A relocatable x86-64 ELF object defining `defines` and referencing `uses`.
    fn object_file(defines: &[&str], uses: &[&str]) -> Vec<u8> {
        let mut obj = WriteObject::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let text = obj.section_id(object::write::StandardSection::Text);
        for (i, name) in defines.iter().enumerate() {
            let offset = obj.append_section_data(text, &[0xc3], 1);
            obj.add_symbol(WriteSymbol {
                name: name.as_bytes().to_vec(),
                value: offset,
                size: 1,
                kind: SymbolKind::Text,
                scope: SymbolScope::Linkage,
                weak: i % 2 == 1,
                section: SymbolSection::Section(text),
                flags: SymbolFlags::None,
            });
        }
        for name in uses {
            obj.add_symbol(WriteSymbol {
                name: name.as_bytes().to_vec(),
                value: 0,
                size: 0,
                kind: SymbolKind::Text,
                scope: SymbolScope::Linkage,
                weak: false,
                section: SymbolSection::Undefined,
                flags: SymbolFlags::None,
            });
        }
        obj.write().unwrap()
    }

    /// A GNU archive without symbol index (`ar rcS`) of `members`.
    fn gnu_archive(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut out = b"!<arch>\n".to_vec();
        for (name, data) in members {
            out.extend(
                format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", format!("{}/", name), 0, 0, 0, 644, data.len()).bytes(),
            );
            out.extend(data);
            if data.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
        out
    }

    #[test]
    fn index_is_built_from_members_and_members_load_once() {
        let bytes = gnu_archive(&[
            ("a.o", object_file(&["alpha", "shared_name"], &["beta"])),
            ("notes.txt", b"not an object\n".to_vec()),
            ("b.o", object_file(&["beta", "shared_name"], &[])),
        ]);
        let mut archive = Archive::parse(Path::new("libt.a"), Arc::new(InputData::Owned(bytes))).unwrap();
        assert_eq!(archive.member_count(), 3);
        // The first member that defines a name provides it (weak or not).
        assert_eq!(archive.member_defining("shared_name"), Some(0));
        assert_eq!(archive.member_defining("beta"), Some(2));
        assert_eq!(archive.member_defining("missing"), None);
        // Member contents start at offset 68: not 8-aligned, parsed in place.
        let graph = archive.load_member(0, &Limits::default()).unwrap();
        assert_eq!(graph.name, "libt.a(a.o)");
        assert!(graph.symbols.iter().any(|s| s.name.as_deref() == Some("alpha")));
        assert_eq!(archive.member_defining("alpha"), None, "a loaded member is not offered again");
        let all = archive.load_all(&Limits::default()).unwrap();
        assert_eq!(all.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(), ["libt.a(b.o)"]);
    }

    /// Many members wanted at once are translated on several threads; the
    /// link still loads exactly what one member at a time loads: not a
    /// member whose only wanted name an earlier one of the same pass
    /// defined, and the members a loaded one needs, in a later pass.
    #[test]
    fn members_translated_in_parallel_load_as_one_at_a_time() {
        let mut members = Vec::new();
        for i in 0..12 {
            let name = format!("f{}", i);
            // f0 also defines f11, whose own member must then stay out.
            let defines: Vec<&str> = if i == 0 { vec!["f0", "f11"] } else { vec![&name] };
            let uses: Vec<&str> = if i == 3 { vec!["deep"] } else { vec![] };
            members.push((format!("m{}.o", i), object_file(&defines, &uses)));
        }
        members.push(("deep.o".to_string(), object_file(&["deep"], &[])));
        let members: Vec<(&str, Vec<u8>)> = members.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
        let mut archives =
            vec![Archive::parse(Path::new("libmany.a"), Arc::new(InputData::Owned(gnu_archive(&members)))).unwrap()];
        let wanted: Vec<String> = (0..12).map(|i| format!("f{}", i)).collect();
        let uses: Vec<&str> = wanted.iter().map(String::as_str).collect();
        let main = crate::graph::format::elf::parse(
            "main.o",
            Arc::new(InputData::Owned(object_file(&["main"], &uses))),
            &Limits::default(),
        )
        .unwrap();
        let mut graphs = vec![main];
        let mut table = crate::graph::resolve::SymbolTable::new(Default::default());
        table.add_graph(0, &graphs[0], &graphs).unwrap();
        let loaded = load_needed(&mut archives, &mut table, &mut graphs, &[], &Limits::default(), |_| Ok(())).unwrap();
        let names: Vec<&str> = graphs.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(loaded, 12, "{:?}", names);
        let expected: Vec<String> = std::iter::once("main.o".to_string())
            .chain((0..11).map(|i| format!("libmany.a(m{}.o)", i)))
            .chain(std::iter::once("libmany.a(deep.o)".to_string()))
            .collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn member_outside_the_file_is_an_error_naming_the_archive() {
        let mut bytes = gnu_archive(&[("a.o", object_file(&["alpha"], &[]))]);
        bytes.truncate(bytes.len() - 100);
        let err = Archive::parse(Path::new("libt.a"), Arc::new(InputData::Owned(bytes))).err().unwrap();
        assert!(format!("{:#}", err).starts_with("libt.a"), "{:#}", err);
    }
}
