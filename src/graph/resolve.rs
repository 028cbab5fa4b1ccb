//! Symbol resolution: the one meeting point of all objects.
//!
//! Order, first match wins (after `--wrap` renamed the objects' undefined
//! references, [`wrap_references`]):
//! 1. `--define NAME=ADDRESS` values and `--alias NEW=OLD` (NEW becomes
//!    whatever OLD resolves to, even when an object defines NEW);
//! 2. definitions in the input objects (and `--whole-archive` members):
//!    strong over weak over common, the first weak one among weaks;
//! 3. archive members, loaded only for names still strongly referenced and
//!    undefined (see [`crate::graph::format::archive`]), which then count as objects;
//! 4. the built-in runtime pieces (see [`crate::graph::runtime`]);
//! 5. linker-defined names (`_GLOBAL_OFFSET_TABLE_`, `__start_SEC`/`__stop_SEC`,
//!    `__init_array_start`, `_end`, ...);
//! 6. shared libraries named with `-l` or given as paths, in command-line order;
//! 7. the host process (libc and everything jitrun itself loaded);
//! 8. for strong references still missing, libgcc_s (as `cc` links it);
//! 9. weak references nobody defines become 0 (and, with `--allow-unresolved`,
//!    strong ones too).
//!
//! The symbol table is incremental: graphs are added one at a time
//! ([`SymbolTable::add_graph`]) and [`SymbolTable::undefined_strong_names`]
//! tells the archive loop what is still missing. After
//! [`SymbolTable::finish`], every symbol of every graph has a [`Target`]
//! and no new symbols appear; `-v` logs what satisfied each name.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use anyhow::{bail, Result};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::graph::model::*;

/// A definition of the program that a library loaded during resolution may
/// bind to (a callback, a variable it reads), for [`ExternalSymbols`].
#[derive(Clone, Copy, Debug)]
pub struct ProgramDefinition {
    pub is_function: bool,
    pub size: u64,
}

/// The program's definition of a name, if it has one that a library can
/// bind to (not thread-local).
pub type ProgramDefinitions<'a> = &'a dyn Fn(&str) -> Option<ProgramDefinition>;

/// What a symbol outside the image is, as the object defining it says.
#[derive(Clone, Copy, Debug)]
pub struct ExternalSymbolInfo {
    pub is_function: bool,
    pub size: u64,
}

/// Where names the objects do not define are found: the shared libraries
/// and the process a link resolves against. `host::loader::ThisProcess`
/// answers for this process; [`NoExternals`] for an image made for
/// another machine, where only `--define` supplies addresses.
pub trait ExternalSymbols {
    /// Loads what must be there before names are looked up (the libraries
    /// named outright), telling them the program's definitions.
    fn load_named(&mut self, program: ProgramDefinitions) -> Result<()>;
    /// The address of `name` and the library that provided it (`None`: the
    /// process itself). A `strong` reference may load more (libgcc_s).
    fn find(&mut self, name: &str, strong: bool, program: ProgramDefinitions) -> Option<(u64, Option<usize>)>;
    /// The file of the object that defines `address`, for messages and maps.
    fn object_at(&self, address: u64) -> Option<String>;
    /// What the symbol `name` at `address` is (function or data, size).
    fn symbol_info(&mut self, address: u64, name: &str) -> Option<ExternalSymbolInfo>;
}

/// No symbol outside the image (a link for another machine).
pub struct NoExternals;

impl ExternalSymbols for NoExternals {
    fn load_named(&mut self, _: ProgramDefinitions) -> Result<()> {
        Ok(())
    }

    fn find(&mut self, _: &str, _: bool, _: ProgramDefinitions) -> Option<(u64, Option<usize>)> {
        None
    }

    fn object_at(&self, _: u64) -> Option<String> {
        None
    }

    fn symbol_info(&mut self, _: u64, _: &str) -> Option<ExternalSymbolInfo> {
        None
    }
}

/// What a symbol reference is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Inside the image.
    Block { graph: u32, block: BlockId, offset: u64 },
    /// A fixed value: `SHN_ABS`, `--define`, or 0 for a missing weak reference.
    Absolute(u64),
    /// Outside the image; index into [`ResolvedSymbols::externals`].
    External(u32),
    /// `_GLOBAL_OFFSET_TABLE_`.
    GotBase,
    /// `_TLS_MODULE_BASE_`: offset 0 of the image's TLS block, which
    /// local-dynamic TLS descriptors (`-mtls-dialect=gnu2`) refer to.
    TlsModuleBase,
    /// A linker-defined boundary; index into [`ResolvedSymbols::boundaries`].
    Boundary(u32),
    /// An `STT_GNU_IFUNC` function of the image; index into
    /// [`ResolvedSymbols::ifuncs`]. Every reference goes to its stub, whose GOT
    /// slot gets what the resolver returns once the image is mapped (a
    /// native link's PLT entry and `R_X86_64_IRELATIVE`).
    Ifunc(u32),
    /// A local symbol of a section that is not loaded (debug info, discarded
    /// COMDAT copy). Using it from loaded code is an error.
    NotLoaded,
}

/// A symbol found outside the image.
#[derive(Clone, Debug)]
pub struct External {
    pub name: Name,
    pub address: u64,
    /// The library that provided it, or `None` for the host process.
    pub library: Option<usize>,
}

/// An `STT_GNU_IFUNC` definition of the image.
#[derive(Clone, Debug)]
pub struct Ifunc {
    pub name: String,
    /// The resolver: where the symbol's value points.
    pub resolver: Target,
}

/// A linker-defined address, computed after layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Boundary {
    SectionStart(String),
    SectionEnd(String),
    ImageStart,
    TextStart,
    TextEnd,
    DataStart,
    DataEnd,
    ImageEnd,
}

/// What the objects say about one global name. Kept small (a large
/// program has tens of thousands): the rare parts (commons, a second
/// referencing graph, aliases) live in side tables of [`SymbolTable`].
struct GlobalEntry {
    /// Best definition so far: (graph, symbol, is_weak).
    def: Option<(u32, SymbolId, bool)>,
    /// Index of the largest common so far in `SymbolTable::commons`, or
    /// [`NONE`].
    common: u32,
    /// The first graph that references the name without defining it, or
    /// [`NONE`]; later ones are in `SymbolTable::more_referrers`.
    first_referrer: u32,
    /// The last graph recorded as a referrer: graphs are added in order,
    /// so each is recorded once.
    last_referrer: u32,
    strong_reference: bool,
}

impl Default for GlobalEntry {
    fn default() -> Self {
        GlobalEntry { def: None, common: NONE, first_referrer: NONE, last_referrer: NONE, strong_reference: false }
    }
}

/// `--wrap SYMBOL` for the objects, as ld does it: in `graph`, an
/// undefined reference to a wrapped SYMBOL becomes one to `__wrap_SYMBOL`,
/// and an undefined reference to `__real_SYMBOL` one to SYMBOL. A reference
/// inside the object that defines SYMBOL is to that definition, not
/// undefined, and stays (ld's rule). Libraries' references are not the
/// link's and stay too.
pub fn wrap_references(graph: &mut LinkGraph, wrapped: &FxHashSet<Box<str>>) {
    if wrapped.is_empty() {
        return;
    }
    for symbol in &mut graph.symbols {
        if symbol.scope != Scope::Global || symbol.def != SymbolDef::Undefined {
            continue;
        }
        let Some(name) = &symbol.name else { continue };
        let renamed = if wrapped.contains(&**name) {
            format!("__wrap_{}", &**name)
        } else if let Some(real) = name.strip_prefix("__real_").filter(|real| wrapped.contains(*real)) {
            real.to_string()
        } else {
            continue;
        };
        symbol.name = Some(renamed.into());
    }
}

/// The named global symbols of `graph`: an upper bound of the names it adds
/// (room for which [`SymbolTable::reserve`] makes once, for all the graphs).
pub fn global_symbol_count(graph: &LinkGraph) -> usize {
    graph.symbols.iter().filter(|s| s.scope == Scope::Global && s.name.is_some()).count()
}

/// No common, no referrer.
const NONE: u32 = u32::MAX;

/// A common symbol: (graph, symbol, size, align).
type Common = (u32, SymbolId, u64, u64);

/// Entry numbers by name: a table of `u32`s, each hashed and compared by
/// the name it numbers in the owner's list of entries, so that a name is
/// stored once (in the list) and a slot takes 4 bytes, where a map keyed
/// by names held a second reference to each (24-byte slots, and an atomic
/// count to update per name).
#[derive(Default)]
struct NameIndex {
    table: hashbrown::HashTable<u32>,
}

/// FxHash: one lookup per global symbol of every object, the hottest table
/// of a link; SipHash's flooding resistance buys nothing here.
fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

impl NameIndex {
    /// The entry named `name`; `name_of(i)` is entry `i`'s name.
    fn get<'a>(&self, name: &str, name_of: impl Fn(u32) -> &'a str) -> Option<usize> {
        self.table.find(name_hash(name), |&i| name_of(i) == name).map(|&i| i as usize)
    }

    /// The entry named `name`, or `None` after recording `next` as its
    /// entry (the caller then adds it): one hash and one probe either way,
    /// where a lookup then an insert took two of each (a large program's
    /// every global is new: 20,000 names twice took ~4% of its link).
    fn find_or_insert<'a>(&mut self, name: &str, next: usize, name_of: impl Fn(u32) -> &'a str) -> Option<usize> {
        match self.table.entry(name_hash(name), |&i| name_of(i) == name, |&i| name_hash(name_of(i))) {
            hashbrown::hash_table::Entry::Occupied(found) => Some(*found.get() as usize),
            hashbrown::hash_table::Entry::Vacant(free) => {
                free.insert(next as u32);
                None
            }
        }
    }

    fn reserve<'a>(&mut self, additional: usize, name_of: impl Fn(u32) -> &'a str) {
        self.table.reserve(additional, |&i| name_hash(name_of(i)));
    }
}

/// The global symbol table, filled one graph at a time.
#[derive(Default)]
pub struct SymbolTable {
    /// Numbers of `entries` by name.
    index: NameIndex,
    entries: Vec<(Name, GlobalEntry)>,
    defines: HashMap<String, u64>,
    /// `--alias NEW=OLD`, with chains followed: NEW → the last OLD.
    aliases: HashMap<Box<str>, Box<str>>,
    /// `symbol_entries[graph][symbol]`: the entry of each global symbol (or
    /// NO_ENTRY), so binding symbols to targets needs no second lookup.
    symbol_entries: Vec<Vec<u32>>,
    /// The largest common of each name that has one (see `GlobalEntry::common`).
    commons: Vec<Common>,
    /// (entry, graph): the referencing graphs after each name's first.
    more_referrers: Vec<(u32, u32)>,
    /// `--alias NEW=OLD` options (as written) by the entry their chain ends at.
    aliased_by: FxHashMap<u32, Vec<Box<str>>>,
}

const NO_ENTRY: u32 = u32::MAX;

/// What resolution made of every symbol: each graph's symbols' targets,
/// and the externals, boundaries and IFUNCs they point to.
pub struct ResolvedSymbols {
    /// `targets[graph][symbol]`.
    pub targets: Vec<Vec<Target>>,
    pub externals: Vec<External>,
    pub boundaries: Vec<Boundary>,
    pub ifuncs: Vec<Ifunc>,
    /// Every global name and what it became, for lookups after linking.
    pub globals: Globals,
    /// The global data the objects define that [`may_take_a_librarys_place`]:
    /// what may take the place of a library's
    /// variable of the same name (see `link::preempting_data`). Noted while
    /// binding, where each definition's symbol is at hand anyway.
    pub data_definitions: Vec<Name>,
}

/// Every global name and what it became: the symbol table's own index,
/// kept rather than copied into a second map (tens of thousands of names
/// in a large program).
#[derive(Default)]
pub struct Globals {
    index: NameIndex,
    /// By entry of the symbol table: the name, and what it became if it
    /// was bound (an unresolved weak name is bound to 0).
    entries: Vec<(Name, Option<Global>)>,
}

impl Globals {
    pub fn get(&self, name: &str) -> Option<&Global> {
        self.index.get(name, |i| &self.entries[i as usize].0).and_then(|i| self.entries[i].1.as_ref())
    }

    /// The bound names, in the order they were first seen.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &Global)> {
        self.entries.iter().filter_map(|(name, global)| Some((name, global.as_ref()?)))
    }

    fn bind(&mut self, name: &str, global: Global) {
        let entries = &self.entries;
        match self.index.find_or_insert(name, entries.len(), |i| &entries[i as usize].0) {
            Some(i) => self.entries[i].1 = Some(global),
            None => self.entries.push((name.into(), Some(global))),
        }
    }
}

impl std::ops::Index<&str> for Globals {
    type Output = Global;

    /// Panics if `name` is not bound: for names the link always binds.
    fn index(&self, name: &str) -> &Global {
        self.get(name).unwrap_or_else(|| panic!("no global named {}", name))
    }
}

impl<'a> IntoIterator for &'a Globals {
    type Item = (&'a Name, &'a Global);
    type IntoIter = Box<dyn Iterator<Item = (&'a Name, &'a Global)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// What a global name became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Global {
    pub target: Target,
    /// The size of its definition (`st_size`, a common's size), 0 if none
    /// was recorded: for `R_X86_64_SIZE*` from other objects and lookups.
    pub size: u64,
}

/// The link failed because strongly referenced names have no definition.
/// Its `Display` is the error message; [`UnresolvedSymbols::report`] is
/// the `--print-unresolved` table. Library users get it with
/// `error.downcast_ref::<UnresolvedSymbols>()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedSymbols {
    /// Sorted by name.
    pub symbols: Vec<UnresolvedSymbol>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedSymbol {
    pub name: String,
    /// Objects and archive members (`libfoo.a(bar.o)`) that reference the
    /// name, in load order, then `--alias NEW=NAME` options that need it.
    pub referenced_by: Vec<String>,
    /// The library that usually provides it (`-lm` for `sqrt`).
    pub hint: Option<&'static str>,
}

impl UnresolvedSymbols {
    /// One line per (symbol, referrer), tab-separated, sorted by symbol and
    /// then in load order, for scripts:
    /// `SYMBOL<TAB>REFERENCED-BY<TAB>HINT`, HINT being `-lNAME` or `-`.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for symbol in &self.symbols {
            for referrer in &symbol.referenced_by {
                out.push_str(&format!("{}\t{}\t{}\n", symbol.name, referrer, symbol.hint.unwrap_or("-")));
            }
        }
        out
    }
}

impl fmt::Display for UnresolvedSymbols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.symbols.len();
        // All of them, on the one line every jitrun error gets.
        write!(f, "{} undefined symbol{}: ", n, if n == 1 { "" } else { "s" })?;
        for (i, symbol) in self.symbols.iter().enumerate() {
            let separator = if i == 0 { "" } else { "; " };
            write!(f, "{}{} (referenced by {}", separator, symbol.name, symbol.referenced_by.join(", "))?;
            if let Some(hint) = symbol.hint {
                write!(f, "; it usually comes from {}", hint)?;
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnresolvedSymbols {}

/// Where the unresolved-symbol report suggests looking.
pub fn library_hint(name: &str) -> Option<&'static str> {
    const MATH: &[&str] = &[
        "sqrt",
        "sin",
        "cos",
        "tan",
        "pow",
        "exp",
        "log",
        "log10",
        "log2",
        "floor",
        "ceil",
        "fmod",
        "atan2",
        "fabs",
        "round",
        "hypot",
        "cbrt",
        "lround",
        "trunc",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "exp2",
        "expm1",
        "log1p",
        "fmin",
        "fmax",
        "lrint",
        "rint",
        "nearbyint",
        "erf",
        "erfc",
        "tgamma",
        "lgamma",
        "frexp",
        "ldexp",
        "modf",
        "copysign",
    ];
    let base = name.trim_end_matches(['f', 'l']);
    // `_ZGV...`: a vector variant of a math function (libmvec, which
    // libm.so loads as needed), not C++.
    if MATH.contains(&name) || MATH.contains(&base) || name.starts_with("_ZGV") {
        return Some("-lm");
    }
    if name.starts_with("pthread_") || name.starts_with("sem_") {
        return Some("-lpthread");
    }
    if name.starts_with("dl") && ["dlopen", "dlsym", "dlclose", "dlerror", "dladdr"].contains(&name) {
        return Some("-ldl");
    }
    if ["deflate", "inflate", "compress", "uncompress", "crc32", "adler32", "gzopen", "zlibVersion"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return Some("-lz");
    }
    if name.starts_with("_Z") || name.starts_with("__cxa_") || name.starts_with("__gxx_") {
        return Some("-lstdc++");
    }
    if ["clock_gettime", "shm_open", "timer_create", "mq_open"].contains(&name) {
        return Some("-lrt");
    }
    None
}

impl SymbolTable {
    pub fn new(defines: HashMap<String, u64>) -> Self {
        SymbolTable { defines, ..Default::default() }
    }

    /// Makes room for `names` more global names at once: growing the index
    /// graph by graph rehashed it (and touched fresh memory) each time.
    pub fn reserve(&mut self, names: usize) {
        let entries = &self.entries;
        self.index.reserve(names, |i| &entries[i as usize].0);
        self.entries.reserve(names);
    }

    /// The entry named `name`, if there is one.
    fn find(&self, name: &str) -> Option<usize> {
        self.index.get(name, |i| &self.entries[i as usize].0)
    }

    /// Adds `--alias NEW=OLD` pairs: NEW resolves to whatever OLD resolves
    /// to, and OLD must resolve. Chains (`a=b`, `b=c`) are followed; cycles
    /// and names that are also `--define`d are errors. Call before adding
    /// graphs.
    pub fn set_aliases(&mut self, aliases: &[(String, String)]) -> Result<()> {
        let direct: HashMap<&str, &str> = aliases.iter().map(|(new, old)| (new.as_str(), old.as_str())).collect();
        for (new, direct_old) in aliases {
            if self.defines.contains_key(new) {
                bail!("--alias {}=...: {} is also given with --define", new, new);
            }
            let mut chain = vec![new.as_str()];
            let mut last = new.as_str();
            while let Some(&next) = direct.get(last) {
                chain.push(next);
                if chain[..chain.len() - 1].contains(&next) {
                    bail!("--alias: the aliases form a cycle: {}", chain.join(" -> "));
                }
                last = next;
            }
            self.aliases.insert(new.as_str().into(), last.into());
            let option: Box<str> = format!("--alias {}={}", new, direct_old).into();
            let idx = self.entry_index(last);
            self.entries[idx].1.strong_reference = true;
            let options = self.aliased_by.entry(idx as u32).or_default();
            if !options.contains(&option) {
                options.push(option);
            }
        }
        Ok(())
    }

    /// The entry of `name`, made on first sight; a name is copied only then.
    fn entry_index(&mut self, name: &str) -> usize {
        self.entry_or_new(name, || name.into())
    }

    /// As [`Self::entry_index`] for a name the graph already holds: a new
    /// entry shares it instead of copying it.
    fn entry_index_shared(&mut self, name: &Name) -> usize {
        self.entry_or_new(name, || name.clone())
    }

    /// The entry of `name`, or a new one keyed by `key()`.
    fn entry_or_new(&mut self, name: &str, key: impl FnOnce() -> Name) -> usize {
        let entries = &self.entries;
        let next = entries.len();
        self.index.find_or_insert(name, next, |i| &entries[i as usize].0).unwrap_or_else(|| {
            self.entries.push((key(), GlobalEntry::default()));
            next
        })
    }

    /// Adds the global symbols of graph number `g`. Fails on a second strong
    /// definition of a name.
    pub fn add_graph(&mut self, g: u32, graph: &LinkGraph, all: &[LinkGraph]) -> Result<()> {
        let mut symbol_entries = vec![NO_ENTRY; graph.symbols.len()];
        let has_aliases = !self.aliases.is_empty();
        for (s, sym) in graph.symbols.iter().enumerate() {
            if sym.scope != Scope::Global {
                continue;
            }
            let Some(shared_name) = &sym.name else {
                continue;
            };
            let name = &**shared_name;
            let weak = sym.linkage == Linkage::Weak;
            let live_def = match sym.def {
                SymbolDef::Defined { block, .. } => graph.is_block_live(block),
                SymbolDef::Absolute(_) => true,
                _ => false,
            };
            let idx = self.entry_index_shared(shared_name);
            symbol_entries[s] = idx as u32;
            let entry = &mut self.entries[idx].1;
            match sym.def {
                _ if live_def => match entry.def {
                    None => entry.def = Some((g, s as SymbolId, weak)),
                    Some((_, _, true)) if !weak => entry.def = Some((g, s as SymbolId, false)),
                    Some((other, _, false)) if !weak => {
                        let other_name =
                            if (other as usize) < all.len() { all[other as usize].name.as_str() } else { "?" };
                        bail!("duplicate symbol {}: defined in {} and in {}", name, other_name, graph.name);
                    }
                    Some(_) => {}
                },
                SymbolDef::Common { size, align } => {
                    let align = u64::from(align);
                    if entry.common == NONE {
                        entry.common = self.commons.len() as u32;
                        self.commons.push((g, s as SymbolId, size, align));
                    } else {
                        // The largest size wins; the alignment is the largest of all.
                        let common = &mut self.commons[entry.common as usize];
                        let align = common.3.max(align);
                        if size > common.2 {
                            *common = (g, s as SymbolId, size, align);
                        }
                        common.3 = align;
                    }
                }
                _ => {
                    entry.strong_reference |= !weak;
                    self.note_referrer(idx, g);
                    // A reference to NEW of `--alias NEW=OLD` is one to OLD.
                    if let Some(old) = has_aliases.then(|| self.aliases.get(name)).flatten().cloned() {
                        let target = self.entry_index(&old);
                        self.note_referrer(target, g);
                    }
                }
            }
        }
        if self.symbol_entries.len() <= g as usize {
            self.symbol_entries.resize(g as usize + 1, Vec::new());
        }
        self.symbol_entries[g as usize] = symbol_entries;
        Ok(())
    }

    /// Names referenced but not (yet) defined by any graph, in the order
    /// they were first seen.
    pub fn undefined_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter(|(name, e)| self.is_undefined(name, e)).map(|(name, _)| &**name)
    }

    /// Undefined names with at least one strong reference: the ones an
    /// archive member is loaded for (a weak reference never loads one).
    pub fn undefined_strong_names(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|(name, e)| e.strong_reference && self.is_undefined(name, e))
            .map(|(name, _)| &**name)
    }

    fn is_undefined(&self, name: &str, e: &GlobalEntry) -> bool {
        e.def.is_none() && e.common == NONE && !self.defines.contains_key(name) && !self.aliases.contains_key(name)
    }

    pub fn is_defined(&self, name: &str) -> bool {
        self.find(name).is_some_and(|i| {
            let e = &self.entries[i].1;
            e.def.is_some() || e.common != NONE
        }) || self.defines.contains_key(name)
            || self.aliases.contains_key(name)
    }

    /// Records that graph `g` references entry `idx` without defining it.
    fn note_referrer(&mut self, idx: usize, g: u32) {
        let entry = &mut self.entries[idx].1;
        if entry.last_referrer == g {
            return;
        }
        entry.last_referrer = g;
        if entry.first_referrer == NONE {
            entry.first_referrer = g;
        } else {
            self.more_referrers.push((idx as u32, g));
        }
    }

    /// The graphs that reference `name` without defining it, in order.
    /// (A scan of the side table: for messages, not for hot paths.)
    pub fn referrers(&self, name: &str) -> Vec<u32> {
        let Some(idx) = self.find(name) else { return Vec::new() };
        let more = self.more_referrers.iter().filter(|&&(e, _)| e as usize == idx).map(|&(_, g)| g);
        self.entry_referrers(idx, more).collect()
    }

    /// Entry `idx`'s referencing graphs in order: its first, then `more`.
    fn entry_referrers(&self, idx: usize, more: impl Iterator<Item = u32>) -> impl Iterator<Item = u32> {
        let first = self.entries[idx].1.first_referrer;
        (first != NONE).then_some(first).into_iter().chain(more)
    }

    /// Binds every name, allocating commons in a new graph appended to
    /// `graphs`, and computes every symbol's target.
    pub fn finish(
        mut self,
        graphs: &mut Vec<LinkGraph>,
        externals_outside: &mut dyn ExternalSymbols,
        allow_unresolved: bool,
    ) -> Result<ResolvedSymbols> {
        let section_names: FxHashSet<&str> =
            graphs.iter().flat_map(|g| g.sections.iter().filter(|s| !s.discarded).map(|s| s.name.as_str())).collect();
        // Every graph is of one CPU (the linker checks); the commons' graph
        // has no code, so an empty link's choice does not matter.
        let cpu = graphs.first().map_or(crate::arch::Cpu::X86_64, |g| g.cpu);
        let mut commons = LinkGraph::new("<common symbols>".to_string(), cpu, None);
        let common_section = commons.add_section(".bss", SectionKind::ZeroFill);
        let commons_graph = graphs.len() as u32;

        // What each entry became (aliases, bound below, and unresolved names stay None).
        let mut bound: Vec<Option<Global>> = vec![None; self.entries.len()];
        let mut externals = Vec::new();
        let mut boundaries: Vec<Boundary> = Vec::new();
        let mut ifuncs: Vec<Ifunc> = Vec::new();
        let mut unresolved: BTreeMap<&str, usize> = BTreeMap::new();
        let mut data_definitions = Vec::new();
        let (has_defines, has_aliases) = (!self.defines.is_empty(), !self.aliases.is_empty());
        // What satisfied each name, for -v: only written when logged.
        let explain = log::log_enabled!(log::Level::Debug);
        // The objects' definitions, for a library loaded now that refers to them.
        let program = |name: &str| {
            let entry = &self.entries[self.find(name)?].1;
            let (is_function, size) = match entry.def {
                Some((g, s, _)) => {
                    let sym = &graphs[g as usize].symbols[s as usize];
                    match sym.kind {
                        SymbolKind::Tls => return None,
                        kind => (matches!(kind, SymbolKind::Function | SymbolKind::Ifunc), sym.size),
                    }
                }
                None => (false, self.commons.get(entry.common as usize)?.2),
            };
            Some(ProgramDefinition { is_function, size })
        };
        externals_outside.load_named(&program)?;
        for (i, (name, entry)) in self.entries.iter().enumerate() {
            if has_aliases && self.aliases.contains_key(&**name) {
                continue; // bound below, once its target is known
            }
            let mut provider = String::new();
            let mut size = 0;
            let target = if let Some(&value) = has_defines.then(|| self.defines.get(&**name)).flatten() {
                provider.push_str("--define");
                Target::Absolute(value)
            } else if let Some((g, s, weak)) = entry.def.filter(|d| !d.2 || entry.common == NONE) {
                let sym = &graphs[g as usize].symbols[s as usize];
                size = sym.size;
                if sym.kind == SymbolKind::Data && may_take_a_librarys_place(name) {
                    data_definitions.push(name.clone());
                }
                if explain {
                    provider = format!("{}{}", graphs[g as usize].name, if weak { " (weak)" } else { "" });
                }
                local_target(g, sym, &graphs[g as usize], &mut ifuncs)
            } else if let Some(&(g, _, common_size, align)) = self.commons.get(entry.common as usize) {
                size = common_size;
                if explain {
                    provider = format!("{} (common, {} bytes)", graphs[g as usize].name, size);
                }
                let block = commons.add_block(common_section, Content::Zero, size, align);
                Target::Block { graph: commons_graph, block, offset: 0 }
            } else if &**name == "_TLS_MODULE_BASE_" {
                Target::TlsModuleBase
            } else if let Some(boundary) = linker_defined(name, &|s| section_names.contains(s)) {
                provider.push_str("the linker");
                match boundary {
                    None => Target::GotBase,
                    Some(b) => {
                        // Each name is bound once, so each boundary is new.
                        boundaries.push(b);
                        Target::Boundary(boundaries.len() as u32 - 1)
                    }
                }
            } else if let Some((address, library)) = externals_outside.find(name, entry.strong_reference, &program) {
                if explain {
                    // Through a library's handle: maybe one of its dependencies'.
                    let library = library.and_then(|_| externals_outside.object_at(address));
                    provider = format!("{} at {:#x}", library.as_deref().unwrap_or("the host process"), address);
                }
                externals.push(External { name: name.clone(), address, library });
                Target::External(externals.len() as u32 - 1)
            } else if !entry.strong_reference {
                provider.push_str("nothing: an undefined weak reference is 0");
                Target::Absolute(0)
            } else if allow_unresolved {
                provider.push_str("nothing: 0 because of --allow-unresolved");
                Target::Absolute(0)
            } else {
                unresolved.insert(name, i);
                continue;
            };
            if explain {
                log::debug!("`{}` resolved by {}", name, provider);
            }
            bound[i] = Some(Global { target, size });
        }
        // `--alias NEW=OLD` names not otherwise seen get entries below.
        let mut unseen_aliases = Vec::new();
        for (new, old) in &self.aliases {
            // An unresolved OLD is reported with the others.
            if let Some(global) = self.find(old).and_then(|i| bound[i]) {
                log::debug!("`{}` resolved by --alias {}={}", new, new, old);
                match self.find(new) {
                    Some(i) => bound[i] = Some(global),
                    None => unseen_aliases.push((new, global)),
                }
            }
        }
        if !unresolved.is_empty() {
            return Err(self.unresolved_error(unresolved, graphs));
        }
        drop(section_names);
        graphs.push(commons);
        let mut globals = Globals {
            index: std::mem::take(&mut self.index),
            entries: std::mem::take(&mut self.entries).into_iter().map(|(name, _)| name).zip(bound).collect(),
        };
        for (new, global) in unseen_aliases {
            globals.bind(new, global);
        }

        // Each symbol's target through its entry.
        let targets = self.symbol_targets(graphs, &globals, &mut ifuncs);
        Ok(ResolvedSymbols { targets, externals, boundaries, ifuncs, globals, data_definitions })
    }

    /// The error for the names nothing defines, each with the objects (and
    /// `--alias` options) that refer to it.
    fn unresolved_error(&self, unresolved: BTreeMap<&str, usize>, graphs: &[LinkGraph]) -> anyhow::Error {
        let mut more_referrers: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &(e, g) in &self.more_referrers {
            more_referrers.entry(e).or_default().push(g);
        }
        let symbols = unresolved
            .into_iter()
            .map(|(name, i)| {
                let more = more_referrers.get(&(i as u32)).map_or(&[][..], Vec::as_slice);
                let mut referenced_by: Vec<String> =
                    self.entry_referrers(i, more.iter().copied()).map(|g| graphs[g as usize].name.clone()).collect();
                let aliases = self.aliased_by.get(&(i as u32)).map_or(&[][..], Vec::as_slice);
                referenced_by.extend(aliases.iter().map(|option| option.to_string()));
                UnresolvedSymbol { name: name.to_string(), referenced_by, hint: library_hint(name) }
            })
            .collect();
        UnresolvedSymbols { symbols }.into()
    }

    /// Every symbol's target, through its entry in the table (`globals`);
    /// local IFUNC definitions join `ifuncs`.
    fn symbol_targets(&self, graphs: &[LinkGraph], globals: &Globals, ifuncs: &mut Vec<Ifunc>) -> Vec<Vec<Target>> {
        // Per graph, on several
        // threads for a large link. A local IFUNC definition (rare) is set
        // aside and gets its `ifuncs` entry afterwards, in graph order.
        let targets_of = |&g: &usize| -> (Vec<Target>, Vec<usize>) {
            let graph = &graphs[g];
            let entries = self.symbol_entries.get(g).map_or(&[][..], Vec::as_slice);
            let mut local_ifuncs = Vec::new();
            let targets = graph
                .symbols
                .iter()
                .enumerate()
                .map(|(s, sym)| match (entries.get(s), sym.scope, sym.name.as_deref()) {
                    (Some(&e), _, _) if e != NO_ENTRY => {
                        globals.entries[e as usize].1.map_or(Target::Absolute(0), |g| g.target)
                    }
                    (_, Scope::Global, Some(name)) => globals.get(name).map_or(Target::Absolute(0), |g| g.target),
                    _ if sym.kind == SymbolKind::Ifunc => {
                        local_ifuncs.push(s);
                        Target::NotLoaded
                    }
                    _ => local_target(g as u32, sym, graph, &mut Vec::new()),
                })
                .collect();
            (targets, local_ifuncs)
        };
        let symbol_count: usize = graphs.iter().map(|g| g.symbols.len()).sum();
        let indices: Vec<usize> = (0..graphs.len()).collect();
        let per_graph = crate::support::parallel::map_in_order(&indices, symbol_count >= PARALLEL_TARGETS, targets_of);
        per_graph
            .into_iter()
            .enumerate()
            .map(|(g, (mut targets, local_ifuncs))| {
                let graph = &graphs[g];
                for s in local_ifuncs {
                    targets[s] = local_target(g as u32, &graph.symbols[s], graph, ifuncs);
                }
                targets
            })
            .collect()
    }
}

/// From this many symbols in all, [`SymbolTable::finish`] finds their
/// targets on several threads (the generated program of 45,000: ~3M
/// instructions).
const PARALLEL_TARGETS: usize = 20_000;

/// The target of a symbol from its own definition (an IFUNC's is new in
/// `ifuncs`: each definition is asked for once).
fn local_target(g: u32, sym: &Symbol, graph: &LinkGraph, ifuncs: &mut Vec<Ifunc>) -> Target {
    match sym.def {
        SymbolDef::Defined { block, offset } if graph.is_block_live(block) => {
            let target = Target::Block { graph: g, block, offset };
            if sym.kind != SymbolKind::Ifunc {
                return target;
            }
            ifuncs.push(Ifunc { name: sym.display_name().to_string(), resolver: target });
            Target::Ifunc(ifuncs.len() as u32 - 1)
        }
        SymbolDef::Absolute(value) => Target::Absolute(value),
        _ => Target::NotLoaded,
    }
}

/// The symbol a name on the command line (`--define`, `--alias`, `--wrap`,
/// `-u`, `--entry`, `--set`, a batch line's `set`, `--check`) means: the
/// symbol of exactly that name when `exists` says there is one; else, in
/// a link of Mach-O objects, whose front-end drops the C underscore
/// (Mach-O `_foo` is `foo` here), the name without its leading underscore
/// when that one exists. So `foo` (the C name) and `_foo` (as `nm` prints
/// it on macOS) both name Mach-O `_foo`, and `__wrap_foo` stays the C name
/// `__wrap_foo`. In an ELF link names are exact: `_foo` is not `foo`.
pub fn command_line_symbol(name: &str, macho: bool, exists: impl Fn(&str) -> bool) -> &str {
    match name.strip_prefix('_') {
        Some(c_name) if macho && !c_name.is_empty() && !exists(name) && exists(c_name) => c_name,
        _ => name,
    }
}

/// Whether the linker may define `name` (`__start_SEC` counts whatever the
/// sections: they are not known yet).
pub fn may_be_linker_defined(name: &str) -> bool {
    name == "_TLS_MODULE_BASE_" || linker_defined(name, &|_| true).is_some()
}

/// Names the linker defines: `Some(None)` is the GOT base, `Some(Some(b))`
/// a boundary, `None` not linker-defined.
fn linker_defined(name: &str, has_section: &dyn Fn(&str) -> bool) -> Option<Option<Boundary>> {
    let is_c_ident = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let b = match name {
        "_GLOBAL_OFFSET_TABLE_" => return Some(None),
        "__init_array_start" => Boundary::SectionStart(".init_array".into()),
        "__init_array_end" => Boundary::SectionEnd(".init_array".into()),
        "__fini_array_start" => Boundary::SectionStart(".fini_array".into()),
        "__fini_array_end" => Boundary::SectionEnd(".fini_array".into()),
        "__preinit_array_start" => Boundary::SectionStart(".preinit_array".into()),
        "__preinit_array_end" => Boundary::SectionEnd(".preinit_array".into()),
        "__executable_start" => Boundary::ImageStart,
        // crt1.o's: `_start` begins the text natively, `data_start` the data.
        "_start" => Boundary::TextStart,
        "etext" | "_etext" | "__etext" => Boundary::TextEnd,
        "__data_start" | "data_start" => Boundary::DataStart,
        "edata" | "_edata" | "__bss_start" => Boundary::DataEnd,
        "end" | "_end" => Boundary::ImageEnd,
        _ => {
            if let Some(sec) = name.strip_prefix("__start_").filter(|s| is_c_ident(s) && has_section(s)) {
                Boundary::SectionStart(sec.to_string())
            } else if let Some(sec) = name.strip_prefix("__stop_").filter(|s| is_c_ident(s) && has_section(s)) {
                Boundary::SectionEnd(sec.to_string())
            } else {
                return None;
            }
        }
    };
    Some(Some(b))
}

/// Whether a data definition named `name` is one a library's variable of
/// the same name may give way to: C names but the implementation's
/// (`__dso_handle`, `_IO_stdin_used` stay each object's own), and C++
/// variables (`_Z`) but the vtables and type information (`_ZT`, a C++
/// program has thousands; copies of them behave the same, and comparing
/// each with every library cost 1 ms for pugixml's tests).
fn may_take_a_librarys_place(name: &str) -> bool {
    !name.starts_with('_') || (name.starts_with("_Z") && !name.starts_with("_ZT"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_names_take_the_mach_o_underscore_only_in_mach_o_links() {
        let exists = |n: &str| ["foo", "__wrap_foo", "_bar", "bar"].contains(&n);
        assert_eq!(command_line_symbol("_foo", true, exists), "foo");
        assert_eq!(command_line_symbol("foo", true, exists), "foo");
        // Exact first: the C names `__wrap_foo` and `_bar`.
        assert_eq!(command_line_symbol("__wrap_foo", true, exists), "__wrap_foo");
        assert_eq!(command_line_symbol("_bar", true, exists), "_bar");
        // Neither exists: the name as given (so messages show it).
        assert_eq!(command_line_symbol("_baz", true, exists), "_baz");
        assert_eq!(command_line_symbol("_", true, |_| true), "_");
        // ELF: exact.
        assert_eq!(command_line_symbol("_foo", false, exists), "_foo");
    }

    #[test]
    fn vector_math_names_hint_at_libm_not_libstdcxx() {
        assert_eq!(library_hint("_ZGVbN2v_sin"), Some("-lm"));
        assert_eq!(library_hint("_ZNSt6vectorIiE9push_backEi"), Some("-lstdc++"));
        assert_eq!(library_hint("cbrtf"), Some("-lm"));
    }

    fn graph(name: &str, defines: &[&str], strong_uses: &[&str], weak_uses: &[&str]) -> LinkGraph {
        let mut g = LinkGraph::new(name.to_string(), crate::arch::Cpu::X86_64, None);
        let text = g.add_section(".text", SectionKind::Code);
        let block = g.add_block(text, Content::Owned(vec![0xc3]), 1, 1);
        for d in defines {
            g.add_symbol(Symbol {
                name: Some((*d).into()),
                def: SymbolDef::Defined { block, offset: 0 },
                scope: Scope::Global,
                linkage: Linkage::Strong,
                kind: SymbolKind::Function,
                size: 1,
            });
        }
        for u in strong_uses {
            g.add_external(u);
        }
        for u in weak_uses {
            let s = g.add_external(u);
            g.symbols[s as usize].linkage = Linkage::Weak;
        }
        g
    }

    #[test]
    fn weak_references_do_not_ask_for_archive_members() {
        let graphs = vec![graph("main.o", &["main"], &["needed"], &["optional"])];
        let mut table = SymbolTable::new(HashMap::new());
        table.add_graph(0, &graphs[0], &graphs).unwrap();
        assert_eq!(table.undefined_names().collect::<Vec<_>>(), ["needed", "optional"]);
        assert_eq!(table.undefined_strong_names().collect::<Vec<_>>(), ["needed"]);
        assert_eq!(table.referrers("needed"), [0]);
    }

    #[test]
    fn wrapping_renames_undefined_references_only() {
        let mut g =
            graph("wrap.o", &["compute", "__real_defined_here"], &["compute_user", "__real_compute", "free"], &[]);
        let weak = g.add_external("malloc");
        g.symbols[weak as usize].linkage = Linkage::Weak;
        let wrapped: FxHashSet<Box<str>> = ["compute", "malloc", "defined_here"].into_iter().map(Into::into).collect();
        wrap_references(&mut g, &wrapped);
        let names: Vec<&str> = g.symbols.iter().filter_map(|s| s.name.as_deref()).collect();
        // The definitions stay; undefined `__real_compute` is `compute`,
        // undefined `malloc` (weak too) is `__wrap_malloc`; names nobody
        // wraps stay.
        assert_eq!(
            names,
            ["compute", "__real_defined_here", "compute_user", "compute", "free", "__wrap_malloc"],
            "{:?}",
            names
        );
    }

    #[test]
    fn aliases_follow_chains_refuse_cycles_and_need_their_target() {
        let mut table = SymbolTable::new(HashMap::new());
        let err = table.set_aliases(&[("a".into(), "b".into()), ("b".into(), "a".into())]).unwrap_err();
        assert!(err.to_string().contains("cycle"), "{}", err);

        let mut graphs = vec![graph("main.o", &["main", "c"], &["a"], &[])];
        let mut table = SymbolTable::new(HashMap::new());
        table.set_aliases(&[("a".into(), "b".into()), ("b".into(), "c".into())]).unwrap();
        table.add_graph(0, &graphs[0], &graphs).unwrap();
        assert!(table.is_defined("a") && table.undefined_names().next().is_none());
        let res = table.finish(&mut graphs, &mut NoExternals, false).unwrap();
        assert_eq!(res.globals["a"], res.globals["c"]);
        assert_eq!(res.globals["b"], res.globals["c"]);

        // An alias to a name nobody defines is reported with who needs it.
        let mut graphs = vec![graph("main.o", &["main"], &["a"], &[])];
        let mut table = SymbolTable::new(HashMap::new());
        table.set_aliases(&[("a".into(), "jitrun_test_nowhere".into())]).unwrap();
        table.add_graph(0, &graphs[0], &graphs).unwrap();
        let err = table.finish(&mut graphs, &mut NoExternals, false).err().unwrap();
        let missing = err.downcast_ref::<UnresolvedSymbols>().unwrap();
        assert_eq!(
            missing.report(),
            "jitrun_test_nowhere\tmain.o\t-\njitrun_test_nowhere\t--alias a=jitrun_test_nowhere\t-\n"
        );
    }
}
