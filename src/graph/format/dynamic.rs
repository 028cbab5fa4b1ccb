//! What a shared library exports, read from its file without loading it:
//! a lookup by name in its GNU hash table. It decides whether a library
//! named for the link is needed at all (ld's `--as-needed`, the default of
//! `cc` here), before `dlopen` runs its constructors.
//!
//! The file is untrusted input: every read is bounds-checked, and a table
//! that does not parse makes the library count as needed (loaded as named,
//! as before), never an error.

use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::LittleEndian;

/// Where a library's `.gnu.hash`, `.dynsym` and `.dynstr` lie in its file.
#[derive(Clone, Debug)]
pub struct ExportTable {
    hash: std::ops::Range<usize>,
    symbols: std::ops::Range<usize>,
    strings: std::ops::Range<usize>,
}

const SYMBOL_SIZE: usize = 24;

impl ExportTable {
    /// The export table of the ELF64 little-endian shared library `file`,
    /// or `None` if it has no GNU hash table (or is malformed).
    pub fn parse(file: &[u8]) -> Option<ExportTable> {
        // `endian()` refuses a big-endian file.
        let header = elf::FileHeader64::<LittleEndian>::parse(file).ok()?;
        let endian = header.endian().ok()?;
        let sections = header.sections(endian, file).ok()?;
        let range = |index: usize| -> Option<std::ops::Range<usize>> {
            let section = sections.section(object::SectionIndex(index)).ok()?;
            let (offset, size) = section.file_range(endian)?;
            let start = usize::try_from(offset).ok()?;
            let end = start.checked_add(usize::try_from(size).ok()?)?;
            (end <= file.len()).then_some(start..end)
        };
        let (hash_index, hash_section) =
            sections.iter().enumerate().find(|(_, s)| s.sh_type(endian) == elf::SHT_GNU_HASH)?;
        let symbols_index = hash_section.sh_link(endian) as usize;
        let symbols_section = sections.section(object::SectionIndex(symbols_index)).ok()?;
        if symbols_section.sh_type(endian) != elf::SHT_DYNSYM {
            return None;
        }
        let strings_index = symbols_section.sh_link(endian) as usize;
        Some(ExportTable { hash: range(hash_index)?, symbols: range(symbols_index)?, strings: range(strings_index)? })
    }

    /// Whether the library (whose bytes are `file`, the ones parsed) defines
    /// `name` for other modules: a defined global, weak or unique symbol of
    /// default or protected visibility. Symbol versions are not looked at.
    pub fn defines(&self, file: &[u8], name: &[u8]) -> bool {
        self.find(file, name, |_| true).is_some()
    }

    /// The exported symbol `name` whose value (its address less the load
    /// bias) is `value`: of several versions of a name, the one the loader
    /// bound.
    pub fn find_at(&self, file: &[u8], name: &[u8], value: u64) -> Option<ExportedSymbol> {
        self.find(file, name, |sym| sym.value == value)
    }

    /// The first exported symbol `name` that `accept` takes, in hash-chain order.
    fn find(&self, file: &[u8], name: &[u8], accept: impl Fn(&ExportedSymbol) -> bool) -> Option<ExportedSymbol> {
        let table = file.get(self.hash.clone())?;
        let symbols = file.get(self.symbols.clone())?;
        let strings = file.get(self.strings.clone())?;
        let word = |at: usize| -> Option<u32> { Some(u32::from_le_bytes(table.get(at..at + 4)?.try_into().ok()?)) };
        gnu_hash_lookup(word, name, |index| {
            exported_symbol(symbols, strings, index as usize, name).filter(|s| accept(s))
        })
    }
}

/// What the symbol table says of an exported symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportedSymbol {
    /// `st_value`: its address less the library's load bias.
    pub value: u64,
    pub size: u64,
    pub is_function: bool,
}

/// Dynamic symbol `index` if it is `name`, defined and exported.
fn exported_symbol(symbols: &[u8], strings: &[u8], index: usize, name: &[u8]) -> Option<ExportedSymbol> {
    let at = index.checked_mul(SYMBOL_SIZE)?;
    let sym = symbols.get(at..at.checked_add(SYMBOL_SIZE)?)?;
    let field =
        |range: std::ops::Range<usize>| -> u64 { sym[range].iter().rev().fold(0, |acc, &b| (acc << 8) | u64::from(b)) };
    let (info, other, section) = (sym[4], sym[5], field(6..8) as u16);
    let text = strings.get(field(0..4) as usize..)?;
    let same_name = text.len() > name.len() && text.starts_with(name) && text[name.len()] == 0;
    let exported = matches!(info >> 4, elf::STB_GLOBAL | elf::STB_WEAK | elf::STB_GNU_UNIQUE)
        && matches!(other & 3, elf::STV_DEFAULT | elf::STV_PROTECTED)
        && section != elf::SHN_UNDEF;
    let st_type = info & 0xf;
    (same_name && exported).then(|| ExportedSymbol {
        value: field(8..16),
        size: field(16..24),
        is_function: st_type == elf::STT_FUNC || st_type == elf::STT_GNU_IFUNC,
    })
}

/// The GNU hash of a symbol name (the ELF `DT_GNU_HASH` function).
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

/// Looks `name` up in a GNU hash table (`.gnu.hash`, `DT_GNU_HASH`), read
/// through `word(offset)`, the table's little-endian 32-bit word at that
/// byte offset (`None` past its end: the lookup then fails). Each symbol
/// index whose hash matches goes to `candidate`, in chain order, until it
/// returns something: the caller compares the names and anything else.
///
/// The table: `nbuckets`, `symoffset`, `bloom_size`, `bloom_shift`; the
/// Bloom filter (`bloom_size` 64-bit words); the buckets (`nbuckets`
/// words); then one chain word per symbol from `symoffset` on, the last of
/// each chain with bit 0 set.
pub fn gnu_hash_lookup<T>(
    word: impl Fn(usize) -> Option<u32>,
    name: &[u8],
    mut candidate: impl FnMut(u32) -> Option<T>,
) -> Option<T> {
    let (buckets_len, first_hashed, bloom_len, bloom_shift) = (word(0)?, word(4)?, word(8)?, word(12)?);
    if buckets_len == 0 || bloom_len == 0 {
        return None;
    }
    let hash = gnu_hash(name);
    // The Bloom filter: two bits per name, most misses end here.
    let bloom_at = 16 + 8 * ((hash / 64) % bloom_len) as usize;
    let bloom = u64::from(word(bloom_at)?) | u64::from(word(bloom_at + 4)?) << 32;
    let mask = (1u64 << (hash % 64)) | (1u64 << ((hash >> (bloom_shift % 32)) % 64));
    if bloom & mask != mask {
        return None;
    }
    let buckets_at = 16 + 8 * bloom_len as usize;
    let chains_at = buckets_at + 4 * buckets_len as usize;
    let mut index = word(buckets_at + 4 * (hash % buckets_len) as usize)?;
    if index < first_hashed {
        return None;
    }
    loop {
        let chain = word(chains_at + 4 * (index - first_hashed) as usize)?;
        if chain | 1 == hash | 1 {
            if let Some(found) = candidate(index) {
                return Some(found);
            }
        }
        if chain & 1 != 0 {
            return None;
        }
        index = index.checked_add(1)?;
    }
}

/// A shared library's `DT_SONAME`.
pub fn soname(file: &[u8]) -> Option<&str> {
    use object::read::elf::{Dyn, FileHeader, SectionHeader};
    let header = object::elf::FileHeader64::<object::LittleEndian>::parse(file).ok()?;
    let endian = header.endian().ok()?;
    let sections = header.sections(endian, file).ok()?;
    let (entries, strings_index) = sections.iter().find_map(|s| s.dynamic(endian, file).ok().flatten())?;
    let strings = sections.strings(endian, file, strings_index).ok()?;
    let entry = entries.iter().find(|d| d.d_tag(endian) == u64::from(object::elf::DT_SONAME))?;
    std::str::from_utf8(strings.get(u32::try_from(entry.d_val(endian)).ok()?).ok()?).ok()
}

/// The names a shared library's dynamic symbol table refers to without
/// defining them (its undefined global and weak symbols), read from its
/// file; none if the file does not parse.
pub fn undefined_symbols(file: &[u8]) -> Vec<&str> {
    use object::read::elf::{FileHeader, Sym};
    let Ok(header) = object::elf::FileHeader64::<object::LittleEndian>::parse(file) else { return Vec::new() };
    let Ok(endian) = header.endian() else { return Vec::new() };
    let Ok(sections) = header.sections(endian, file) else { return Vec::new() };
    let Ok(symbols) = sections.symbols(endian, file, object::elf::SHT_DYNSYM) else { return Vec::new() };
    symbols
        .iter()
        .filter(|sym| {
            sym.st_shndx(endian) == object::elf::SHN_UNDEF
                && matches!(sym.st_bind(), object::elf::STB_GLOBAL | object::elf::STB_WEAK)
                && sym.st_type() != object::elf::STT_TLS
        })
        .filter_map(|sym| std::str::from_utf8(symbols.symbol_name(endian, sym).ok()?).ok())
        .filter(|name| !name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libm() -> Vec<u8> {
        std::fs::read(crate::graph::ldcache::system_library("libm.so.6")).expect("libm.so.6")
    }

    #[test]
    fn finds_what_libm_exports_and_not_what_it_imports() {
        let file = libm();
        let table = ExportTable::parse(&file).expect("libm has a GNU hash table");
        for name in ["cos", "floor", "cbrtf", "lgamma"] {
            assert!(table.defines(&file, name.as_bytes()), "{}", name);
        }
        // Imported from libc, or nowhere.
        for name in ["memcpy", "printf", "no_such_function_anywhere", ""] {
            assert!(!table.defines(&file, name.as_bytes()), "{}", name);
        }
    }

    #[test]
    fn agrees_with_goblin_on_every_libm_export() {
        let file = libm();
        let table = ExportTable::parse(&file).unwrap();
        let parsed = goblin::elf::Elf::parse(&file).unwrap();
        let mut checked = 0;
        for sym in parsed.dynsyms.iter() {
            let exported = sym.st_shndx != 0 && sym.st_bind() != goblin::elf::sym::STB_LOCAL;
            let Some(name) = parsed.dynstrtab.get_at(sym.st_name) else { continue };
            if exported && !name.is_empty() && sym.st_visibility() == goblin::elf::sym::STV_DEFAULT {
                assert!(table.defines(&file, name.as_bytes()), "{}", name);
                // Each version of a name is found by its value.
                let found = table.find_at(&file, name.as_bytes(), sym.st_value).expect(name);
                let is_function = matches!(sym.st_type(), goblin::elf::sym::STT_FUNC | goblin::elf::sym::STT_GNU_IFUNC);
                assert_eq!((found.size, found.is_function), (sym.st_size, is_function), "{}", name);
                checked += 1;
            }
        }
        assert!(checked > 100, "only {} exports", checked);
    }

    #[test]
    fn truncated_or_garbage_files_are_not_tables() {
        let file = libm();
        for len in [0, 16, 64, 1000, file.len() / 2] {
            // Either no table (section headers are at the end) or lookups that fail softly.
            if let Some(table) = ExportTable::parse(&file[..len]) {
                let _ = table.defines(&file[..len], b"cos");
            }
        }
        let table = ExportTable::parse(&file).unwrap();
        let mut corrupt = file.clone();
        let hash = table.hash.clone();
        for b in &mut corrupt[hash] {
            *b = 0xff;
        }
        let _ = table.defines(&corrupt, b"cos");
        assert!(!table.defines(&[], b"cos"));
    }
}
