//! The linker: inputs in, an [`Image`] out, as a straight list of passes.

mod buffer;
pub mod cache;
pub mod fuzzing;
mod in_process;
mod interposition;
mod placed;
mod read;
mod runtime_libraries;

pub use buffer::BufferImage;
use placed::Placed;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use crate::graph::fixups::{self};
use crate::graph::format::archive::{self, Archive};
use crate::graph::format::dynamic::ExportTable;
use crate::graph::layout::{self};
use crate::graph::linkinfo::{InputInfo, PhaseTimer};
use crate::graph::model::*;
use crate::graph::resolve::{ExternalSymbols, NoExternals, SymbolTable};
use crate::graph::runtime;
use crate::graph::tables::{self};
use crate::graph::Limits;
use crate::graph::{ehframe, format, libsearch};
use crate::host::loader::{self as host, HostResolver, NamedLibrary, SharedLibrary};
use crate::image::Image;
use crate::memory::buffer::BufferMapper;
use crate::memory::{InProcessMapper, MemoryMapper, Placement};
use crate::support::input::{detect, is_elf_shared_object, FileKind, InputData};
use crate::support::FileIdentity;

#[derive(Clone, Debug, Default)]
pub struct LinkOptions {
    /// `-L` directories, searched before the default ones.
    pub search_paths: Vec<PathBuf>,
    /// `--define NAME=ADDRESS`: absolute symbols that win over everything.
    pub defines: HashMap<String, u64>,
    /// `--alias NEW=OLD`: NEW resolves to whatever OLD resolves to.
    pub aliases: Vec<(String, String)>,
    /// `--sanitize KIND` values (`address`, `thread`, `undefined`, `leak`):
    /// the runtime `cc -fsanitize=KIND` links is loaded even if no code
    /// calls it (LeakSanitizer's never is: it instruments nothing).
    pub sanitize: Vec<String>,
    /// `--wrap SYMBOL`: the objects' undefined references to SYMBOL go to
    /// `__wrap_SYMBOL`, those to `__real_SYMBOL` to SYMBOL (see
    /// [`crate::graph::resolve::wrap_references`]).
    pub wraps: Vec<String>,
    /// Names jitrun itself will look up (the entry point) and `-u` names:
    /// archive members defining them are loaded, as `crt1.o`'s reference to
    /// `main` makes `ld` load them. Unlike an object's reference, a missing
    /// root is no error.
    pub roots: Vec<String>,
    /// Missing strong symbols become 0 instead of an error (for `--noexec`).
    pub allow_unresolved: bool,
    /// Prefer `libNAME.a` over `libNAME.so` for `-l`.
    pub static_libs: bool,
    /// Load every shared library named outright, used or not (ld's
    /// `--no-as-needed`); by default one loads only if a strong reference
    /// needs a symbol it exports, as `cc` links here (`--as-needed`).
    pub no_as_needed: bool,
    /// Make the image's global symbols visible to shared libraries loaded
    /// later, as `cc -rdynamic` does for plugins (see [`crate::host::exports`]).
    pub export_dynamic: bool,
    /// `--self-exe`: what the program finds as its own executable instead
    /// of jitrun (see [`crate::host::selfexe`]); set once per process.
    pub self_exe: Option<PathBuf>,
    /// Lay the image out at this address.
    pub base: Option<u64>,
    pub limits: Limits,
    /// Leave the link info (maps, reports, crash tables) to be collected
    /// later, off the critical path, with [`Image::take_deferred_link_info`].
    pub defer_link_info: bool,
    /// `--link-cache`: store the image for later runs of the same link
    /// (see [`cache`]).
    pub link_cache: Option<cache::CacheRequest>,
}

impl LinkOptions {
    /// Turns the symbol names of the options into those of the Mach-O
    /// objects `graphs` and the members of `archives`, which have no C
    /// underscore (see [`crate::graph::resolve::command_line_symbol`]).
    fn spell_names_for_macho(&mut self, graphs: &[LinkGraph], archives: &[(FileIdentity, Archive)]) {
        let in_objects = |name: &str| {
            archives.iter().any(|(_, a)| a.member_defining(name).is_some())
                || graphs.iter().any(|g| g.symbols.iter().any(|s| s.name.as_deref() == Some(name)))
        };
        let spell = |name: &str, exists: &dyn Fn(&str) -> bool| {
            if !name.starts_with('_') {
                return name.to_string(); // the common case: nothing to look up
            }
            let spelled = crate::graph::resolve::command_line_symbol(name, true, exists);
            if spelled != name {
                log::debug!("`{}` on the command line is the Mach-O symbol `{}`", name, spelled);
            }
            spelled.to_string()
        };
        self.defines = self.defines.iter().map(|(name, &value)| (spell(name, &in_objects), value)).collect();
        for name in self.wraps.iter_mut().chain(self.roots.iter_mut()) {
            *name = spell(name, &in_objects);
        }
        // An alias may stand for a --define'd name.
        let defines = &self.defines;
        let exists = |name: &str| defines.contains_key(name) || in_objects(name);
        for (new, old) in &mut self.aliases {
            (*new, *old) = (spell(new, &exists), spell(old, &exists));
        }
    }
}

/// Receives the link graphs once they are linked (see [`Linker::on_linked`]).
pub type LinkedGraphsHook = Box<dyn FnOnce(Vec<LinkGraph>) + Send>;

/// Collects inputs, then links them into an [`Image`].
///
/// The linker owns every parsed object until it is linked; linking mutates
/// the graphs, and afterwards they are dropped to free memory unless a hook
/// set with [`Linker::on_linked`] takes them. `Linker` is `Send` (build it on
/// one thread, link on another) but not `Sync`: adding inputs needs `&mut`.
pub struct Linker {
    options: LinkOptions,
    graphs: Vec<LinkGraph>,
    /// Graphs added as such ([`Linker::add_graph`]), which no front-end checked.
    graphs_to_check: Vec<usize>,
    libraries: Vec<SharedLibrary>,
    /// The shared libraries named, in order, with their files (device,
    /// inode): one named twice, or by two paths, counts once. Most load only
    /// if something needs them (see [`HostResolver`]).
    named_libraries: Vec<(FileIdentity, NamedLibrary)>,
    /// Archives whose members load on demand, with their files (device,
    /// inode): an archive named twice is searched once.
    archives: Vec<(FileIdentity, Archive)>,
    /// `--whole-archive` is in effect for archives added now.
    whole_archive: bool,
    on_linked: Option<LinkedGraphsHook>,
    /// The format of the relocatable objects (the first one's) and its name.
    object_format: Option<(FileKind, String)>,
    /// Inputs and parse time, for link maps and run reports.
    inputs: Vec<InputInfo>,
    timer: PhaseTimer,
}

impl Linker {
    pub fn new(options: LinkOptions) -> Linker {
        Linker {
            options,
            graphs: Vec::new(),
            graphs_to_check: Vec::new(),
            libraries: Vec::new(),
            named_libraries: Vec::new(),
            archives: Vec::new(),
            whole_archive: false,
            on_linked: None,
            object_format: None,
            inputs: Vec::new(),
            timer: PhaseTimer::default(),
        }
    }

    /// `--whole-archive` / `--no-whole-archive`: archives added while it is
    /// on contribute every member, as objects; otherwise members load only
    /// when they define a name that is still needed.
    pub fn set_whole_archive(&mut self, on: bool) {
        self.whole_archive = on;
    }

    /// Hands the graphs back after a successful link (with the synthetic
    /// runtime and table graphs appended), instead of dropping them, the
    /// way ORC's NotifyCompiled does: to inspect them or relink a variant.
    pub fn on_linked(&mut self, hook: impl FnOnce(Vec<LinkGraph>) + Send + 'static) {
        self.on_linked = Some(Box::new(hook));
    }

    /// Adds several inputs in order, translating consecutive relocatable
    /// objects on several threads (see [`crate::support::parallel`]).
    pub fn add_files(&mut self, paths: &[PathBuf]) -> Result<()> {
        self.timer.start();
        let read = read::read_and_parse(paths, &self.options.limits);
        self.timer.mark("parse");
        for (path, input) in paths.iter().zip(read) {
            match input? {
                // Archives, shared libraries, scripts: in command-line order.
                read::ReadInput::Other { data } => self.add_file_data(path, data, 0, false)?,
                read::ReadInput::Translated { name, size, graph } => {
                    self.note_object_format(FileKind::Elf, &name)?;
                    self.inputs.push(InputInfo { path: name, size, format: ELF_RELOCATABLE.to_string() });
                    self.graphs.push(graph?);
                }
            }
        }
        Ok(())
    }

    /// Adds an input named on the command line: a relocatable object, a
    /// shared library or a linker script naming them.
    pub fn add_file(&mut self, path: &Path) -> Result<()> {
        self.add_file_nested(path, 0, false)
    }

    /// Adds an object (or archive) held in memory, named `name` in
    /// messages. Shared libraries and linker scripts need a path.
    pub fn add_bytes(&mut self, name: &str, bytes: Vec<u8>) -> Result<()> {
        let data = Arc::new(InputData::Owned(bytes));
        let kind = detect(data.bytes());
        self.record_input(name.to_string(), &data, kind);
        self.timer.start();
        match kind {
            FileKind::Elf if is_elf_shared_object(data.bytes()) => {
                bail!("{}: a shared library; pass it by path", name)
            }
            FileKind::Text => bail!("{}: linker scripts are read from files only", name),
            _ => self.add_object_data(Path::new(name), data),
        }
    }

    /// Translates an object, or adds an archive, from its bytes; `path`
    /// names it in messages and locates the members of a thin archive.
    fn add_object_data(&mut self, path: &Path, data: Arc<InputData>) -> Result<()> {
        let name = path.display().to_string();
        match detect(data.bytes()) {
            kind @ (FileKind::Elf | FileKind::MachO) => {
                self.note_object_format(kind, &name)?;
                let graph = if kind == FileKind::Elf {
                    format::elf::parse(&name, data, &self.options.limits)?
                } else {
                    format::macho::parse(&name, data, &self.options.limits)?
                };
                self.timer.mark("parse");
                self.graphs.push(graph);
                Ok(())
            }
            FileKind::LlvmBitcode => {
                bail!("{}: LLVM bitcode (clang -flto), not machine code; rebuild without -flto", name)
            }
            FileKind::Archive | FileKind::ThinArchive => {
                // Members loaded on demand are parsed during resolution.
                let added = self.add_archive(path, data);
                self.timer.mark("parse");
                added
            }
            _ => bail!("{}: not an ELF or Mach-O object or archive", name),
        }
    }

    /// `as_needed`: named in a linker script's `AS_NEEDED` list.
    fn add_file_nested(&mut self, path: &Path, depth: u32, as_needed: bool) -> Result<()> {
        let data = Arc::new(InputData::open(path)?);
        self.add_file_data(path, data, depth, as_needed)
    }

    fn add_file_data(&mut self, path: &Path, data: Arc<InputData>, depth: u32, as_needed: bool) -> Result<()> {
        let name = path.display().to_string();
        let kind = detect(data.bytes());
        self.record_input(name.clone(), &data, kind);
        self.timer.start();
        match kind {
            FileKind::Elf if crate::support::input::is_position_independent_executable(data.bytes()) => bail!(
                "{}: an executable (position-independent); jitrun loads relocatable objects (.o) and links shared \
                 libraries, not executables",
                name
            ),
            FileKind::Elf if is_elf_shared_object(data.bytes()) => {
                self.add_shared_library_file(path, data, as_needed || !self.options.no_as_needed)
            }
            FileKind::Elf | FileKind::MachO | FileKind::LlvmBitcode | FileKind::Archive | FileKind::ThinArchive => {
                self.add_object_data(path, data)
            }
            FileKind::Text if depth < 8 => {
                let text = std::str::from_utf8(data.bytes()).with_context(|| format!("{}: not UTF-8", name))?;
                let files = libsearch::expand_script(path, text, &self.options.search_paths)?;
                for file in files {
                    self.add_file_nested(&file.path, depth + 1, file.as_needed)
                        .with_context(|| format!("{}: in linker script", name))?;
                }
                Ok(())
            }
            _ => bail!("{}: not an ELF or Mach-O object, archive or linker script", name),
        }
    }

    /// Adds a static archive: all its members now under `--whole-archive`,
    /// else it joins the archives searched for missing names.
    fn add_archive(&mut self, path: &Path, data: Arc<InputData>) -> Result<()> {
        let identity = file_identity(path)?;
        let known = self.archives.iter().position(|(file, _)| *file == identity);
        let index = match known {
            Some(i) => i,
            None => {
                self.archives.push((identity, Archive::parse(path, data)?));
                self.archives.len() - 1
            }
        };
        if self.whole_archive {
            let members = self.archives[index].1.load_all(&self.options.limits)?;
            self.graphs.extend(members);
        }
        Ok(())
    }

    /// Remembers the format of the first relocatable object and refuses
    /// objects of the other one: Mach-O and ELF objects follow different
    /// symbol naming and runtime conventions, so one image holds one kind.
    /// An input as link info and reports list it.
    fn record_input(&mut self, name: String, data: &InputData, kind: FileKind) {
        let bytes = data.bytes();
        self.inputs.push(InputInfo {
            path: name,
            size: bytes.len() as u64,
            format: input_format(kind, bytes).to_string(),
        });
    }

    fn note_object_format(&mut self, kind: FileKind, name: &str) -> Result<()> {
        let format_name = |k: FileKind| if k == FileKind::MachO { "Mach-O" } else { "ELF" };
        match &self.object_format {
            None => self.object_format = Some((kind, name.to_string())),
            Some((first, first_name)) if *first != kind => bail!(
                "{}: {} objects cannot be linked with {} objects (like {}) in one image",
                name,
                format_name(kind),
                format_name(*first),
                first_name
            ),
            Some(_) => {}
        }
        Ok(())
    }

    /// Adds `-lNAME`.
    pub fn add_library(&mut self, name: &str) -> Result<()> {
        let path = libsearch::find_library(name, &self.options.search_paths, self.options.static_libs)?;
        log::debug!("-l{} is {}", name, path.display());
        self.add_file(&path)
    }

    /// Names a shared library for the link (once): its symbols then
    /// resolve references. It loads when the link starts resolving with
    /// [`LinkOptions::no_as_needed`], else when a reference needs it.
    pub fn add_shared_library(&mut self, path: &Path) -> Result<()> {
        let data = Arc::new(InputData::open(path)?);
        self.add_shared_library_file(path, data, !self.options.no_as_needed)
    }

    /// Names a shared library for the link: loaded when resolution starts,
    /// or, `as_needed`, once a reference needs what it exports (if its
    /// export table reads).
    fn add_shared_library_file(&mut self, path: &Path, data: Arc<InputData>, as_needed: bool) -> Result<()> {
        let file = file_identity(path)?;
        let known = self.named_libraries.iter().position(|(f, _)| *f == file);
        if let Some(i) = known {
            // Named before: only an outright naming of an on-demand one changes it.
            if as_needed || matches!(self.named_libraries[i].1, NamedLibrary::Loaded(_) | NamedLibrary::Outright { .. })
            {
                return Ok(());
            }
        }
        // dlopen searches the system for a name without a slash; a path on
        // the command line means that file.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let exports = if as_needed { ExportTable::parse(data.bytes()) } else { None };
        let named = match exports {
            Some(exports) => NamedLibrary::OnDemand { path, file: data, exports },
            // Loaded when the link resolves, where the objects' definitions
            // are known (a library may refer to them).
            None => NamedLibrary::Outright { path, file: data },
        };
        match known {
            // Named before as needed, now outright: it loads, where it was named first.
            Some(i) => self.named_libraries[i].1 = named,
            None => self.named_libraries.push((file, named)),
        }
        Ok(())
    }

    /// Adds an object already translated into the link model. (Its
    /// `.eh_frame` is checked when it links, as front-ends check theirs.)
    pub fn add_graph(&mut self, graph: LinkGraph) {
        self.graphs_to_check.push(self.graphs.len());
        self.graphs.push(graph);
    }

    /// Links everything added so far and maps it into this process, ready
    /// to run.
    pub fn link(self) -> Result<Image> {
        let mut mapper = InProcessMapper::new();
        let placed = self.place(Destination::ThisProcess, &mut mapper)?;
        in_process::finish(placed, mapper)
    }

    /// Links everything added so far into a buffer, at `--base` or an
    /// address of jitrun's choosing, for what can be known without running
    /// it: the link map, `--check`, a report. The objects may be another
    /// CPU's. Nothing of the image is mapped in this process and nothing of
    /// it runs; objects of this machine's CPU resolve against its libraries,
    /// another CPU's only against `--define`.
    pub fn link_into_buffer(self) -> Result<BufferImage> {
        let mut mapper = BufferMapper::new();
        let placed = self.place(Destination::Buffer, &mut mapper)?;
        buffer::finish(placed, mapper)
    }

    /// The passes every link makes, in order, up to an image whose bytes
    /// are all written in `mapper`'s working memory.
    fn place(self, destination: Destination, mapper: &mut dyn MemoryMapper) -> Result<Placed> {
        let Linker {
            mut options,
            mut graphs,
            graphs_to_check,
            mut libraries,
            named_libraries,
            archives,
            on_linked,
            inputs,
            mut timer,
            object_format,
            ..
        } = self;
        timer.start();
        // A running program finds `--self-exe` where it looks for itself.
        if let (Destination::ThisProcess, Some(path)) = (destination, &options.self_exe) {
            crate::host::selfexe::set(path).with_context(|| format!("--self-exe {}", path.display()))?;
        }
        // Graphs given as such get the checks front-ends give theirs.
        for g in graphs_to_check {
            ehframe::check(&graphs[g])?;
        }
        // Names on the command line in the objects' spelling: Mach-O `_foo`
        // is `foo` (see resolve::command_line_symbol).
        let macho = matches!(object_format, Some((FileKind::MachO, _)));
        if macho {
            options.spell_names_for_macho(&graphs, &archives);
        }
        // As ld reads each object: --wrap's renames, one copy of each
        // COMDAT group (the first), no FDEs of the discarded copies' code.
        let mut admission = Admission::new(&options.wraps);
        for graph in &mut graphs {
            admission.admit(graph)?;
        }
        // Every object's symbols in one table; archive members for what is
        // still missing, until nothing new loads, before runtime pieces
        // and libraries.
        let mut table = SymbolTable::new(options.defines.clone());
        table.set_aliases(&options.aliases)?;
        table.reserve(graphs.iter().map(crate::graph::resolve::global_symbol_count).sum());
        for (g, graph) in graphs.iter().enumerate() {
            table.add_graph(g as u32, graph, &graphs)?;
        }
        load_archive_members(archives, &mut table, &mut graphs, &options, &mut admission)?;
        // One image, one CPU: this machine's to run it here.
        let cpu = one_cpu(&graphs, destination)?;
        // This process is where names the objects do not define are found,
        // unless the image is for another CPU.
        let in_this_process = destination == Destination::ThisProcess || cpu == crate::arch::HOST;
        // jitrun's runtime pieces, for the names only it defines.
        let replaces_allocator = crate::host::interpose::ALLOCATOR_FUNCTIONS.iter().any(|name| table.is_defined(name));
        let own_function = |name: &str| {
            in_this_process.then(|| runtime_libraries::jitruns_own_function(name, replaces_allocator)).flatten()
        };
        let mut needed: HashSet<&str> =
            table.undefined_names().filter(|n| runtime::provides(cpu, n, &own_function)).collect();
        needed.extend(runtime_libraries::init_code_wrappers_needed(&graphs, &table));
        let has_random_guard = needed.contains(crate::arch::runtime::STACK_CHK_GUARD);
        let calls_jitrun = needed.iter().any(|name| own_function(name).is_some());
        let runtime_graph = runtime::build(cpu, &needed, &own_function);
        table.add_graph(graphs.len() as u32, &runtime_graph, &graphs)?;
        graphs.push(runtime_graph);
        // The shared libraries `cc` and `g++` would link: the C++ runtime,
        // sanitizers and OpenMP runtimes, libgcc.
        let named_libraries: Vec<NamedLibrary> = named_libraries.into_iter().map(|(_, named)| named).collect();
        let mut host = HostResolver::new(named_libraries);
        let mut calls_a_sanitizer = false;
        if in_this_process {
            let built_by_clang = graphs.iter().any(|g| g.built_by_clang);
            calls_a_sanitizer = runtime_libraries::load_runtime_libraries_if_needed(
                &table,
                host.named(),
                &mut libraries,
                built_by_clang,
                &options.sanitize,
            )?;
            // As g++ links C++ objects, even those calling only C functions.
            let from_cxx = |g: &LinkGraph| {
                g.built_from_cxx
                    // The Mach-O front-end has no source name to go by.
                    || (matches!(object_format, Some((FileKind::MachO, _)))
                        && g.symbols.iter().any(|s| {
                            s.name.as_deref().is_some_and(|n| n.starts_with("_Z") || n == "__gxx_personality_v0")
                        }))
            };
            if graphs.iter().any(from_cxx) {
                runtime_libraries::name_cxx_runtime(&mut host, &libraries, !options.no_as_needed);
            }
            // Mach-O x86-64 objects get none of libgcc.a. Mach-O arm64 code
            // lowered from Linux IR calls its outline atomics
            // (`__aarch64_ldadd4_acq_rel`: clang's default
            // `+outline-atomics` for aarch64 Linux), which only libgcc.a
            // defines; its members are ELF, of the same CPU, and the graph
            // does not mind.
            if !matches!(object_format, Some((FileKind::MachO, _))) || cpu == crate::arch::Cpu::Aarch64 {
                let mut static_runtime = runtime_libraries::StaticRuntime {
                    table: &mut table,
                    graphs: &mut graphs,
                    host: &mut host,
                    libraries: &libraries,
                    admit: &mut |graph| admission.admit(graph),
                };
                static_runtime.load_if_needed(&options.limits)?;
            }
        }
        // ResolvedSymbols: every reference bound. After it, no new symbols appear.
        let mut this_process =
            host::ThisProcess { resolver: &mut host, libraries: &libraries, facts: Default::default() };
        let externals: &mut dyn ExternalSymbols = if in_this_process { &mut this_process } else { &mut NoExternals };
        let res = table.finish(&mut graphs, externals, options.allow_unresolved)?;
        let mut symbol_facts = this_process.facts;
        let named_and_loaded = host.named_and_loaded(libraries.len());
        libraries.extend(host.into_loaded_libraries());
        timer.mark("resolve");

        // One scan over all edges sizes the GOT, stubs and copy slots.
        let tables = if in_this_process {
            tables::plan(&graphs, &res, &mut |address, name| symbol_facts.info(address, name))?
        } else {
            tables::plan(&graphs, &res, &mut |_, _| None)?
        };
        let has_eh_frame =
            graphs.iter().any(|g| g.sections.iter().any(|s| s.kind == SectionKind::EhFrame && !s.discarded));
        let (table_graph, table_blocks) = tables::build_graph(cpu, &tables, has_eh_frame);
        graphs.push(table_graph);

        // Layout: every block gets an offset in a segment, segments start on
        // the pages of the machine the image is for.
        let page =
            if destination == Destination::ThisProcess { crate::support::page_size() } else { cpu.max_page_size() };
        let rules = layout::SegmentRules { page, read_only_with_code: cpu.read_only_data_with_code() };
        let layout = layout::compute(&graphs, rules);
        timer.mark("layout");
        options.limits.check_image_size(&"the image", layout.size)?;
        options.limits.check_tls_size(&"the image", layout.tls.size)?;

        // The mapper reserves the address range: every address is known
        // from here on.
        let placement = match options.base {
            Some(base) => Placement::Fixed(base),
            None if tables.needs_low_image => Placement::Low32,
            // Its entry is mapped back at this address (see `cache`). Not
            // where a sanitizer's runtime keeps its shadow: it is never
            // stored anyway.
            None if options.link_cache.is_some() && destination == Destination::ThisProcess && !calls_a_sanitizer => {
                Placement::Repeatable
            }
            None => Placement::Anywhere,
        };
        let base = mapper.reserve(layout.size, layout.align, placement)?;
        log::debug!("image at {:#x}, {} bytes, {:?}", base, layout.size, placement);
        timer.mark("map");

        // For the link cache, all of them: libraries move (see `cache`).
        let copies_in_use = match options.link_cache {
            Some(_) if destination == Destination::ThisProcess => vec![true; tables.copies.len()],
            _ => fixups::decide_copies(&tables, &res, base, layout.size),
        };
        let mut placed = Placed {
            destination,
            options,
            cpu,
            // For the link cache, all of them: libraries move (see `cache`).
            copies_in_use,
            table_graph: graphs.len() as u32 - 1,
            graphs,
            res,
            tables,
            table_blocks,
            layout,
            base,
            tls_module: None,
            tls: None,
            symbols: Default::default(),
            libraries,
            named_and_loaded,
            calls_a_sanitizer,
            has_random_guard,
            calls_jitrun,
            on_linked,
            inputs,
            timer,
        };
        // The thread-local block, whose template's fixups use only ordinary
        // addresses: loaded here with its final contents, or placed as in a
        // static executable for an image that will not run here.
        placed.place_thread_locals()?;
        // Contents copied and every fixup applied: no edge is pending after this.
        placed.write_image(mapper)?;
        placed.symbols.macho_names = macho;
        placed.timer.mark("fixups");
        Ok(placed)
    }
}

/// How a run report names an input's format.
const ELF_RELOCATABLE: &str = "elf-relocatable";

fn input_format(kind: FileKind, bytes: &[u8]) -> &'static str {
    match kind {
        FileKind::Elf if is_elf_shared_object(bytes) => "elf-shared-library",
        FileKind::Elf => ELF_RELOCATABLE,
        FileKind::MachO => "mach-o",
        FileKind::Archive => "archive",
        FileKind::ThinArchive => "thin-archive",
        FileKind::Text => "linker-script",
        FileKind::LlvmBitcode => "llvm-bitcode",
        FileKind::Unknown => "unknown",
    }
}

/// Where a link puts its image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Destination {
    /// Mapped into this process, to run here.
    ThisProcess,
    /// Written into a buffer, to inspect (`--noexec`); perhaps for another CPU.
    Buffer,
}

/// What each object goes through as it joins the link, in the order ld
/// reads them (archive members join late): `--wrap`'s renames, the first
/// copy of each COMDAT group kept and the later ones discarded, and the
/// FDEs of discarded code pruned (they would describe code that is not there).
struct Admission {
    wrapped: rustc_hash::FxHashSet<Box<str>>,
    comdats_seen: rustc_hash::FxHashSet<Box<str>>,
}

impl Admission {
    fn new(wraps: &[String]) -> Admission {
        Admission { wrapped: wraps.iter().map(|name| name.as_str().into()).collect(), comdats_seen: Default::default() }
    }

    fn admit(&mut self, graph: &mut LinkGraph) -> Result<()> {
        crate::graph::resolve::wrap_references(graph, &self.wrapped);
        let mut discard = Vec::new();
        for comdat in &graph.comdats {
            if !self.comdats_seen.insert(comdat.signature.clone()) {
                discard.extend(comdat.sections.iter().copied());
            }
        }
        for s in discard {
            graph.sections[s as usize].discarded = true;
        }
        ehframe::prune(graph)
    }
}

/// Loads the members of `archives` (and of the profiling runtimes the code
/// calls) that define what is still missing, until nothing new loads.
fn load_archive_members(
    archives: Vec<(FileIdentity, Archive)>,
    table: &mut SymbolTable,
    graphs: &mut Vec<LinkGraph>,
    options: &LinkOptions,
    admission: &mut Admission,
) -> Result<()> {
    let mut archives: Vec<Archive> = archives.into_iter().map(|(_, a)| a).collect();
    let (profiling, profiling_root) = runtime_libraries::profiling_runtime(table, graphs);
    archives.extend(profiling);
    let roots: Vec<String> = options.roots.iter().cloned().chain(profiling_root.map(String::from)).collect();
    let loaded =
        archive::load_needed(&mut archives, table, graphs, &roots, &options.limits, |graph| admission.admit(graph))?;
    if !archives.is_empty() {
        log::debug!("{} archive members loaded", loaded);
    }
    if graphs.is_empty() {
        bail!("no input objects (archive members load only when something needs them; see --whole-archive)");
    }
    Ok(())
}

/// Which file `path` is, whatever the path to it.
fn file_identity(path: &Path) -> Result<FileIdentity> {
    FileIdentity::of_path(path).with_context(|| format!("{}: cannot stat", path.display()))
}

/// The CPU every object is for: one image holds code of one CPU, and to
/// run here it must be the one jitrun runs on.
fn one_cpu(graphs: &[LinkGraph], destination: Destination) -> Result<crate::arch::Cpu> {
    let first = &graphs[0];
    if let Some(other) = graphs.iter().find(|g| g.cpu != first.cpu) {
        bail!(
            "{}: {} objects cannot be linked with {} objects (like {}) in one image",
            other.name,
            other.cpu,
            first.cpu,
            first.name
        );
    }
    if destination == Destination::ThisProcess && first.cpu != crate::arch::HOST {
        bail!(
            "{}: {} code cannot run on this {} machine (`--noexec` links it, with `--map` and `--check`)",
            first.name,
            first.cpu,
            crate::arch::HOST
        );
    }
    Ok(first.cpu)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::arch::x86_64::Kind;
    use crate::arch::{Cpu, EdgeKind};
    use crate::graph::model::*;
    use crate::graph::resolve::SymbolTable;
    use crate::graph::tables::{plan, Tables};
    use crate::host::loader::{HostResolver, ThisProcess};

    /// One code block with an edge of `kind` against `name`, resolved in
    /// this process.
    fn plan_one_edge(kind: Kind, name: &str) -> Tables {
        let mut graph = LinkGraph::new("t.o".into(), Cpu::X86_64, None);
        let text = graph.add_section(".text", SectionKind::Code);
        let block = graph.add_block(text, Content::Owned(vec![0; 16]), 16, 16);
        let target = graph.add_external(name);
        graph.blocks[block as usize].edges.push(Edge::new(4, EdgeKind::X86_64(kind), target, 0));
        let mut graphs = vec![graph];
        let mut table = SymbolTable::new(HashMap::new());
        table.add_graph(0, &graphs[0], &[]).unwrap();
        let mut resolver = HostResolver::default();
        let mut process = ThisProcess { resolver: &mut resolver, libraries: &[], facts: Default::default() };
        let res = table.finish(&mut graphs, &mut process, false).unwrap();
        plan(&graphs, &res, &mut |address, name| process.facts.info(address, name)).unwrap()
    }

    #[test]
    fn absolute_32_bit_reference_to_a_host_variable_needs_a_low_image() {
        let tables = plan_one_edge(Kind::Abs32S, "stdout");
        assert_eq!(tables.copies.len(), 1, "stdout gets a copy slot");
        assert!(tables.needs_low_image, "the copy slot must be addressable with 32 bits");
    }

    #[test]
    fn pc_relative_reference_to_a_host_variable_does_not_need_a_low_image() {
        let tables = plan_one_edge(Kind::Pc32, "stdout");
        assert_eq!(tables.copies.len(), 1);
        assert!(!tables.needs_low_image);
    }

    /// A linker can be built on one thread and link on another.
    #[test]
    fn a_linker_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<super::Linker>();
    }
}
