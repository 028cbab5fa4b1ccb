//! Symbol resolution: the one meeting point of all objects.
//!
//! Order, first match wins:
//! 1. `--define NAME=ADDRESS` values;
//! 2. definitions in the input objects (and archive members they pulled in):
//!    strong over weak over common, the first weak one among weaks;
//! 3. the built-in runtime pieces (see [`crate::runtime`]);
//! 4. linker-defined names (`_GLOBAL_OFFSET_TABLE_`, `__start_SEC`/`__stop_SEC`,
//!    `__init_array_start`, `_end`, ...);
//! 5. shared libraries named with `-l` or given as paths, in command-line order;
//! 6. the host process (libc and everything jitrun itself loaded);
//! 7. weak references nobody defines become 0.
//!
//! After [`SymbolTable::finish`], every symbol of every graph has a
//! [`Target`] and no new symbols appear.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::{bail, Result};

use crate::host::{HostResolver, SharedLibrary};
use crate::model::*;

/// What a symbol reference is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Inside the image.
    Block { graph: u32, block: BlockId, offset: u64 },
    /// A fixed value: `SHN_ABS`, `--define`, or 0 for a missing weak reference.
    Absolute(u64),
    /// Outside the image; index into [`Resolution::externals`].
    External(u32),
    /// `_GLOBAL_OFFSET_TABLE_`.
    GotBase,
    /// `_TLS_MODULE_BASE_`: offset 0 of the image's TLS block, which
    /// local-dynamic TLS descriptors (`-mtls-dialect=gnu2`) refer to.
    TlsModuleBase,
    /// A linker-defined boundary; index into [`Resolution::boundaries`].
    Boundary(u32),
    /// A local symbol of a section that is not loaded (debug info, discarded
    /// COMDAT copy). Using it from loaded code is an error.
    NotLoaded,
}

/// A symbol found outside the image.
#[derive(Clone, Debug)]
pub struct External {
    pub name: Box<str>,
    pub address: u64,
    /// The library that provided it, or `None` for the host process.
    pub library: Option<usize>,
}

/// A linker-defined address, computed after layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Boundary {
    SectionStart(String),
    SectionEnd(String),
    ImageStart,
    TextEnd,
    DataEnd,
    ImageEnd,
}

#[derive(Default)]
struct GlobalEntry {
    /// Best definition so far: (graph, symbol, is_weak).
    def: Option<(u32, SymbolId, bool)>,
    /// Largest common so far: (graph, symbol, size, align).
    common: Option<(u32, SymbolId, u64, u64)>,
    /// Graphs that reference the name without defining it.
    referenced_by: Vec<u32>,
    strong_reference: bool,
}

/// The global symbol table, filled one graph at a time.
#[derive(Default)]
pub struct SymbolTable {
    index: HashMap<Box<str>, usize>,
    entries: Vec<(Box<str>, GlobalEntry)>,
    defines: HashMap<String, u64>,
}

pub struct Resolution {
    /// `targets[graph][symbol]`.
    pub targets: Vec<Vec<Target>>,
    pub externals: Vec<External>,
    pub boundaries: Vec<Boundary>,
    /// Every global name and what it became, for lookups after linking.
    pub globals: HashMap<Box<str>, Target>,
    /// Sizes of global definitions, for `R_X86_64_SIZE*` from other objects.
    pub sizes: HashMap<Box<str>, u64>,
}

/// Where the unresolved-symbol report suggests looking.
fn library_hint(name: &str) -> Option<&'static str> {
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
    if MATH.contains(&name) || MATH.contains(&base) {
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

    fn entry(&mut self, name: &str) -> &mut GlobalEntry {
        let next = self.entries.len();
        let idx = *self.index.entry(name.into()).or_insert(next);
        if idx == next {
            self.entries.push((name.into(), GlobalEntry::default()));
        }
        &mut self.entries[idx].1
    }

    /// Adds the global symbols of graph number `g`. Fails on a second strong
    /// definition of a name.
    pub fn add_graph(&mut self, g: u32, graph: &LinkGraph, all: &[LinkGraph]) -> Result<()> {
        for (s, sym) in graph.symbols.iter().enumerate() {
            if sym.scope != Scope::Global {
                continue;
            }
            let Some(name) = sym.name.as_deref() else {
                continue;
            };
            let weak = sym.linkage == Linkage::Weak;
            let live_def = match sym.def {
                SymbolDef::Defined { block, .. } => graph.is_block_live(block),
                SymbolDef::Absolute(_) => true,
                _ => false,
            };
            let entry = self.entry(name);
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
                    let replace = match entry.common {
                        None => true,
                        Some((_, _, old_size, old_align)) => {
                            let keep_align = old_align.max(align);
                            if size <= old_size {
                                entry.common = entry.common.map(|(g0, s0, sz, _)| (g0, s0, sz, keep_align));
                                false
                            } else {
                                true
                            }
                        }
                    };
                    if replace {
                        let align = entry.common.map_or(align, |c| c.3.max(align));
                        entry.common = Some((g, s as SymbolId, size, align));
                    }
                }
                _ => {
                    if !entry.referenced_by.contains(&g) {
                        entry.referenced_by.push(g);
                    }
                    entry.strong_reference |= !weak;
                }
            }
        }
        Ok(())
    }

    /// Names referenced but not (yet) defined by any graph.
    pub fn undefined_names(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|(name, e)| e.def.is_none() && e.common.is_none() && !self.defines.contains_key(&**name))
            .map(|(name, _)| &**name)
    }

    pub fn is_defined(&self, name: &str) -> bool {
        self.index.get(name).is_some_and(|&i| {
            let e = &self.entries[i].1;
            e.def.is_some() || e.common.is_some()
        }) || self.defines.contains_key(name)
    }

    /// Binds every name, allocating commons in a new graph appended to
    /// `graphs`, and computes every symbol's target.
    pub fn finish(
        mut self,
        graphs: &mut Vec<LinkGraph>,
        libraries: &[SharedLibrary],
        host: &mut HostResolver,
        allow_unresolved: bool,
    ) -> Result<Resolution> {
        let section_names: HashSet<&str> =
            graphs.iter().flat_map(|g| g.sections.iter().filter(|s| !s.discarded).map(|s| s.name.as_str())).collect();
        let mut commons = LinkGraph::new("<common symbols>".to_string(), None);
        let common_section = commons.add_section(".bss", SectionKind::ZeroFill);
        let commons_graph = graphs.len() as u32;

        let mut globals: HashMap<Box<str>, Target> = HashMap::with_capacity(self.entries.len());
        let mut externals = Vec::new();
        let mut boundaries: Vec<Boundary> = Vec::new();
        let mut unresolved: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
        let mut sizes = HashMap::new();
        for (name, entry) in &self.entries {
            let target = if let Some(&value) = self.defines.get(&**name) {
                Target::Absolute(value)
            } else if let Some((g, s, _)) = entry.def.filter(|d| !d.2 || entry.common.is_none()) {
                let sym = &graphs[g as usize].symbols[s as usize];
                if sym.size != 0 {
                    sizes.insert(name.clone(), sym.size);
                }
                local_target(g, sym, &graphs[g as usize])
            } else if let Some((_, _, size, align)) = entry.common {
                sizes.insert(name.clone(), size);
                let block = commons.add_block(common_section, Content::Zero, size, align);
                Target::Block { graph: commons_graph, block, offset: 0 }
            } else if &**name == "_TLS_MODULE_BASE_" {
                Target::TlsModuleBase
            } else if let Some(boundary) = linker_defined(name, &section_names) {
                match boundary {
                    None => Target::GotBase,
                    Some(b) => {
                        let idx = boundaries.iter().position(|x| *x == b).unwrap_or_else(|| {
                            boundaries.push(b);
                            boundaries.len() - 1
                        });
                        Target::Boundary(idx as u32)
                    }
                }
            } else if let Some((address, library)) = host.resolve(name, libraries) {
                log::debug!(
                    "{} resolved to {:#x} in {}",
                    name,
                    address,
                    library.map_or("the host process".into(), |l| libraries[l].path.display().to_string())
                );
                externals.push(External { name: name.clone(), address, library });
                Target::External(externals.len() as u32 - 1)
            } else if !entry.strong_reference || allow_unresolved {
                Target::Absolute(0)
            } else {
                unresolved.insert(name, entry.referenced_by.clone());
                continue;
            };
            globals.insert(name.clone(), target);
        }
        if !unresolved.is_empty() {
            let mut msg =
                format!("{} undefined symbol{}:", unresolved.len(), if unresolved.len() == 1 { "" } else { "s" });
            for (name, refs) in &unresolved {
                let users: Vec<&str> = refs.iter().map(|&g| graphs[g as usize].name.as_str()).collect();
                msg.push_str(&format!("\n  {}, referenced by {}", name, users.join(", ")));
                if let Some(hint) = library_hint(name) {
                    msg.push_str(&format!(" (it usually comes from {})", hint));
                }
            }
            bail!(msg);
        }
        drop(section_names);
        graphs.push(commons);

        let targets = graphs
            .iter()
            .enumerate()
            .map(|(g, graph)| {
                graph
                    .symbols
                    .iter()
                    .map(|sym| match (sym.scope, sym.name.as_deref()) {
                        (Scope::Global, Some(name)) => globals.get(name).copied().unwrap_or(Target::Absolute(0)),
                        _ => local_target(g as u32, sym, graph),
                    })
                    .collect()
            })
            .collect();
        self.entries.clear();
        Ok(Resolution { targets, externals, boundaries, globals, sizes })
    }
}

/// The target of a symbol from its own definition.
fn local_target(g: u32, sym: &Symbol, graph: &LinkGraph) -> Target {
    match sym.def {
        SymbolDef::Defined { block, offset } if graph.is_block_live(block) => Target::Block { graph: g, block, offset },
        SymbolDef::Absolute(value) => Target::Absolute(value),
        _ => Target::NotLoaded,
    }
}

/// Names the linker defines: `Some(None)` is the GOT base, `Some(Some(b))`
/// a boundary, `None` not linker-defined.
fn linker_defined(name: &str, sections: &HashSet<&str>) -> Option<Option<Boundary>> {
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
        "etext" | "_etext" | "__etext" => Boundary::TextEnd,
        "edata" | "_edata" | "__bss_start" => Boundary::DataEnd,
        "end" | "_end" => Boundary::ImageEnd,
        _ => {
            if let Some(sec) = name.strip_prefix("__start_").filter(|s| is_c_ident(s) && sections.contains(s)) {
                Boundary::SectionStart(sec.to_string())
            } else if let Some(sec) = name.strip_prefix("__stop_").filter(|s| is_c_ident(s) && sections.contains(s)) {
                Boundary::SectionEnd(sec.to_string())
            } else {
                return None;
            }
        }
    };
    Some(Some(b))
}
