//! An image's global symbols by name: what `--entry`, `--set` and the
//! runtime's own lookups (`__dso_handle`, init and fini wrappers) ask.
//!
//! A linked image builds the map in three allocations: the entries, their
//! names, and an open-addressing index of the entries by name hash. A hash
//! map of the link's shared names kept pages of the linker's freed memory
//! resident (each name pinned one), and a parent that forks isolated runs
//! pays for every resident page at each fork. (Sorting 20,000 entries
//! instead cost 7M instructions, by name 25M.)
//!
//! The link cache stores the map as those three arrays ([`SymbolMap::to_bytes`])
//! and a mapped run looks names up in the entry's file where it is mapped
//! ([`SymbolMap::mapped`]): a run asks for a few names, and building the
//! map again cost a mapped Lua run a quarter of its instructions.

use std::ops::Range;

use anyhow::{bail, Result};

/// The global symbols of an image; see the module docs.
#[derive(Default)]
pub(crate) struct SymbolMap {
    storage: Storage,
    /// The image is of Mach-O objects: a name from the command line may
    /// carry the C underscore (see [`SymbolMap::command_line_name`]).
    pub(crate) macho_names: bool,
}

enum Storage {
    Built {
        entries: Vec<SymbolEntry>,
        names: String,
        /// Entry numbers by `hash & (len - 1)`, linear probing; `EMPTY` is free.
        index: Vec<u32>,
    },
    /// The same arrays in their stored form (see [`SymbolMap::to_bytes`]),
    /// in a mapped file.
    Mapped { file: memmap2::Mmap, entries: Range<usize>, index: Range<usize>, names: Range<usize> },
}

impl Default for Storage {
    fn default() -> Self {
        Storage::Built { entries: Vec::new(), names: String::new(), index: Vec::new() }
    }
}

#[derive(Clone, Copy)]
struct SymbolEntry {
    hash: u64,
    /// `names[name..name + name_len]`.
    name: u32,
    name_len: u32,
    address: u64,
    /// 0 when the object recorded none.
    size: u64,
}

impl SymbolEntry {
    /// Its stored form: hash, name offset and length, address, size.
    const STORED_SIZE: usize = 8 + 4 + 4 + 8 + 8;

    fn name_range(&self) -> Range<usize> {
        self.name as usize..self.name as usize + self.name_len as usize
    }
}

const EMPTY: u32 = u32::MAX;
/// The stored form's header: the counts of entries, index slots and name bytes.
const HEADER_SIZE: usize = 3 * 8;

fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

impl SymbolMap {
    /// From `(name, address, size)`; for a name given twice, the first wins.
    pub(crate) fn new<'n>(symbols: impl Iterator<Item = (&'n str, u64, Option<u64>)>) -> SymbolMap {
        // Sized from the iterator's bound rather than collected first: a
        // large program's copy of every name and address took fresh pages.
        let Some(count) = symbols.size_hint().1 else {
            // The index must have room for every name: count them first.
            return SymbolMap::new(symbols.collect::<Vec<_>>().into_iter());
        };
        let mut map = SymbolMap {
            storage: Storage::Built {
                entries: Vec::with_capacity(count),
                names: String::with_capacity(count * 16),
                // At most half full, so probe sequences stay short.
                index: vec![EMPTY; (2 * count).next_power_of_two().max(8)],
            },
            macho_names: false,
        };
        for (name, address, size) in symbols {
            let hash = name_hash(name);
            let Err(slot) = map.probe(name, hash) else { continue };
            let Storage::Built { entries, names, index } = &mut map.storage else { unreachable!("built above") };
            let entry = SymbolEntry {
                hash,
                name: names.len() as u32,
                name_len: name.len() as u32,
                address,
                size: size.unwrap_or(0),
            };
            names.push_str(name);
            index[slot] = entries.len() as u32;
            entries.push(entry);
        }
        map
    }

    /// The map in the form [`SymbolMap::mapped`] reads: the header (counts
    /// of entries, index slots and name bytes), the entries, the index and
    /// the names, little-endian.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        // Both forms keep the names packed in entry order, so entries and
        // names are written as they are.
        let (count, slots, names) = (self.entry_count(), self.index_len(), self.names());
        let mut out = Vec::with_capacity(HEADER_SIZE + count * SymbolEntry::STORED_SIZE + slots * 4 + names.len());
        for n in [count, slots, names.len()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        for e in (0..count).filter_map(|i| self.entry(i)) {
            out.extend_from_slice(&e.hash.to_le_bytes());
            out.extend_from_slice(&e.name.to_le_bytes());
            out.extend_from_slice(&e.name_len.to_le_bytes());
            out.extend_from_slice(&e.address.to_le_bytes());
            out.extend_from_slice(&e.size.to_le_bytes());
        }
        for slot in 0..slots {
            out.extend_from_slice(&self.slot(slot).to_le_bytes());
        }
        out.extend_from_slice(names);
        out
    }

    /// The map stored by [`SymbolMap::to_bytes`] at `at` in `file`, looked
    /// up where it is mapped. An error if its parts do not add up; a
    /// damaged entry or index slot within them reads as no symbol.
    pub(crate) fn mapped(file: memmap2::Mmap, at: usize, len: usize) -> Result<SymbolMap> {
        let Some(stored) = at.checked_add(len).and_then(|end| file.get(at..end)) else {
            bail!("the symbols lie outside the file");
        };
        if len < HEADER_SIZE {
            bail!("the symbols' header is cut short");
        }
        let count = |i: usize| usize::try_from(u64_at(stored, 8 * i)).ok();
        let parts = (count(0), count(1), count(2));
        let (Some(entries), Some(slots), Some(names)) = parts else { bail!("the symbols' counts are too large") };
        let entries_len = entries.checked_mul(SymbolEntry::STORED_SIZE);
        let index_len = slots.checked_mul(4);
        let total = entries_len
            .zip(index_len)
            .and_then(|(e, i)| HEADER_SIZE.checked_add(e)?.checked_add(i)?.checked_add(names));
        let (Some(entries_len), Some(index_len), Some(len)) = (entries_len, index_len, total) else {
            bail!("the symbols' counts are too large")
        };
        // No slots at all only in the map of no symbols.
        if len != stored.len() || !(slots.is_power_of_two() || slots == 0 && entries == 0) {
            bail!("the symbols' parts do not add up");
        }
        let entries_at = at + HEADER_SIZE;
        let index_at = entries_at + entries_len;
        let names_at = index_at + index_len;
        Ok(SymbolMap {
            storage: Storage::Mapped {
                file,
                entries: entries_at..index_at,
                index: index_at..names_at,
                names: names_at..names_at + names,
            },
            macho_names: false,
        })
    }

    fn entry_count(&self) -> usize {
        match &self.storage {
            Storage::Built { entries, .. } => entries.len(),
            Storage::Mapped { entries, .. } => entries.len() / SymbolEntry::STORED_SIZE,
        }
    }

    fn index_len(&self) -> usize {
        match &self.storage {
            Storage::Built { index, .. } => index.len(),
            Storage::Mapped { index, .. } => index.len() / 4,
        }
    }

    /// The index's slot `slot` (below [`SymbolMap::index_len`]).
    fn slot(&self, slot: usize) -> u32 {
        match &self.storage {
            Storage::Built { index, .. } => index[slot],
            Storage::Mapped { file, index, .. } => u32_at(file, index.start + 4 * slot),
        }
    }

    fn entry(&self, i: usize) -> Option<SymbolEntry> {
        match &self.storage {
            Storage::Built { entries, .. } => entries.get(i).copied(),
            Storage::Mapped { file, entries, .. } => {
                let at = entries.start.checked_add(i.checked_mul(SymbolEntry::STORED_SIZE)?)?;
                if at >= entries.end {
                    return None;
                }
                Some(SymbolEntry {
                    hash: u64_at(file, at),
                    name: u32_at(file, at + 8),
                    name_len: u32_at(file, at + 12),
                    address: u64_at(file, at + 16),
                    size: u64_at(file, at + 24),
                })
            }
        }
    }

    /// Every name, packed in entry order.
    fn names(&self) -> &[u8] {
        match &self.storage {
            Storage::Built { names, .. } => names.as_bytes(),
            Storage::Mapped { file, names, .. } => &file[names.clone()],
        }
    }

    fn name_of(&self, e: &SymbolEntry) -> Option<&[u8]> {
        self.names().get(e.name_range())
    }

    /// Every entry: name, address, size (0 when unknown), in insertion order.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (&str, u64, u64)> + '_ {
        (0..self.entry_count()).filter_map(|i| {
            let e = self.entry(i)?;
            Some((std::str::from_utf8(self.name_of(&e)?).ok()?, e.address, e.size))
        })
    }

    /// `Ok(entry)` for `name`, or `Err(free slot)` where it would go
    /// (`Err(index_len)`, no slot, only for a damaged stored index).
    fn probe(&self, name: &str, hash: u64) -> Result<usize, usize> {
        let slots = self.index_len();
        let mask = slots.wrapping_sub(1);
        let mut slot = hash as usize & mask;
        for _ in 0..slots {
            let i = self.slot(slot);
            if i == EMPTY {
                return Err(slot);
            }
            let matches = self.entry(i as usize).filter(|e| e.hash == hash && self.name_of(e) == Some(name.as_bytes()));
            if matches.is_some() {
                return Ok(i as usize);
            }
            slot = (slot + 1) & mask;
        }
        Err(slots)
    }

    fn find(&self, name: &str) -> Option<SymbolEntry> {
        self.probe(name, name_hash(name)).ok().and_then(|i| self.entry(i))
    }

    pub(crate) fn address(&self, name: &str) -> Option<u64> {
        self.find(name).map(|e| e.address)
    }

    /// The image's name for a global named on the command line (`--entry`,
    /// `--set`, a batch line's `set`): exact, or for Mach-O objects without
    /// the C underscore (see [`crate::graph::resolve::command_line_symbol`]).
    pub(crate) fn command_line_name<'a>(&self, name: &'a str) -> &'a str {
        crate::graph::resolve::command_line_symbol(name, self.macho_names, |n| self.find(n).is_some())
    }

    pub(crate) fn size(&self, name: &str) -> Option<u64> {
        self.find(name).map(|e| e.size).filter(|&s| s != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::SymbolMap;

    fn check_lookups(map: &SymbolMap, names: &[String]) {
        assert_eq!(map.address("main"), Some(0x1000));
        assert_eq!(map.size("main"), Some(42));
        assert_eq!((map.address("a"), map.size("a")), (Some(0x3000), None));
        assert_eq!((map.address("b"), map.size("b")), (Some(0x2000), None));
        assert_eq!(map.address("c"), None);
        assert_eq!(map.address(""), None);
        for (i, name) in names.iter().enumerate() {
            assert_eq!((map.address(name), map.size(name)), (Some(i as u64), Some(i as u64 + 1)), "{}", name);
        }
        assert_eq!(map.address("f5000"), None);
    }

    fn sample() -> (SymbolMap, Vec<String>) {
        let names: Vec<String> = (0..5000).map(|i| format!("f{}", i)).collect();
        let fixed =
            [("main", 0x1000, Some(42)), ("b", 0x2000, None), ("a", 0x3000, Some(0)), ("main", 0x4000, Some(1))];
        let numbered = names.iter().enumerate().map(|(i, n)| (n.as_str(), i as u64, Some(i as u64 + 1)));
        (SymbolMap::new(fixed.into_iter().chain(numbered)), names)
    }

    /// `bytes` in a file, mapped.
    fn mapped(bytes: &[u8], name: &str) -> memmap2::Mmap {
        let path = std::env::temp_dir().join(format!("jitrun-symbol-map-{}-{}", name, std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        crate::support::input::map_start_of(&file, bytes.len()).unwrap()
    }

    #[test]
    fn the_symbol_map_finds_names_and_sizes_and_keeps_the_first_of_a_name() {
        let (map, names) = sample();
        check_lookups(&map, &names);
        assert_eq!(SymbolMap::default().address("main"), None);
    }

    #[test]
    fn a_stored_symbol_map_answers_as_the_built_one_where_it_is_mapped() {
        let (built, names) = sample();
        let stored = built.to_bytes();
        let mut file = b"before".to_vec();
        file.extend_from_slice(&stored);
        file.extend_from_slice(b"after");
        let map = SymbolMap::mapped(mapped(&file, "whole"), 6, stored.len()).unwrap();
        check_lookups(&map, &names);
        assert!(map.iter().eq(built.iter()));
        assert_eq!(map.to_bytes(), stored);
        assert_eq!(
            SymbolMap::mapped(mapped(&SymbolMap::default().to_bytes(), "empty"), 0, 24).unwrap().address("a"),
            None
        );
    }

    #[test]
    fn a_damaged_stored_symbol_map_is_refused_or_finds_nothing_but_never_panics() {
        let (built, _) = sample();
        let stored = built.to_bytes();
        // Parts that do not add up: refused.
        for (at, len) in [(0, stored.len() - 1), (1, stored.len()), (0, 23), (stored.len(), 24)] {
            assert!(SymbolMap::mapped(mapped(&stored, "short"), at, len).is_err(), "{} {}", at, len);
        }
        let mut huge = stored.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(SymbolMap::mapped(mapped(&huge, "huge"), 0, huge.len()).is_err());
        // Entries, slots and names overwritten: lookups miss, and a full
        // index (no free slot) ends the probe.
        let entries = 24 + 5003 * 32;
        for (from, to, byte) in [(24, entries, 0xff), (entries, stored.len(), 0x00), (entries, stored.len(), 0x7f)] {
            let mut damaged = stored.clone();
            damaged[from..to].fill(byte);
            let map = SymbolMap::mapped(mapped(&damaged, "damaged"), 0, damaged.len()).unwrap();
            for name in ["main", "f17", "missing"] {
                let _ = (map.address(name), map.size(name), map.command_line_name(name));
            }
            assert!(map.iter().count() <= 5003);
        }
    }
}
