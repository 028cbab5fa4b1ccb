//! The linker: inputs in, an [`Image`] out, as a straight list of passes.

pub mod fuzzing;
mod read;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};

use crate::graph::deferred::DeferredLinkInfo;
use crate::graph::fixups::{self, Addresses};
use crate::graph::format::archive::{self, Archive};
use crate::graph::format::dynamic::ExportTable;
use crate::graph::layout::{self, SegmentKind, NOT_PLACED};
use crate::graph::linkinfo::{self, InputInfo, PhaseTimer};
use crate::graph::model::*;
use crate::graph::resolve::{Resolution, SymbolTable, Target};
use crate::graph::runtime;
use crate::graph::tables::{self, GotSlot};
use crate::graph::Limits;
use crate::graph::{ehframe, format, libsearch};
use crate::host::copyreloc;
use crate::host::loader::{self as host, HostResolver, NamedLibrary, SharedLibrary, COMPILER_RUNTIME_LIBRARY};
use crate::host::tls::{self};
use crate::image::{Finalizers, FunctionArray, Image, Initializers};
use crate::memory::{ActionPair, AllocInfo, InProcessMapper, MemoryMapper, Placement, SegmentProtection};
use crate::support::input::{detect, is_elf_shared_object, FileKind, InputData};

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
    named_libraries: Vec<((u64, u64), NamedLibrary)>,
    /// Archives whose members load on demand, with their files (device,
    /// inode): an archive named twice is searched once.
    archives: Vec<((u64, u64), Archive)>,
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

    /// Links everything added so far and maps it, ready to run.
    pub fn link(self) -> Result<Image> {
        let Linker {
            options,
            mut graphs,
            graphs_to_check,
            mut libraries,
            named_libraries,
            archives,
            on_linked,
            mut inputs,
            mut timer,
            object_format,
            ..
        } = self;
        timer.start();
        if let Some(path) = &options.self_exe {
            crate::host::selfexe::set(path).with_context(|| format!("--self-exe {}", path.display()))?;
        }
        for g in graphs_to_check {
            ehframe::check(&graphs[g])?;
        }

        // One copy of each COMDAT group: the first object's, as ld keeps.
        // FDEs of discarded functions would describe code that is not there.
        let mut comdats = ComdatSelection::default();
        let wrapped: rustc_hash::FxHashSet<Box<str>> = options.wraps.iter().map(|name| name.as_str().into()).collect();
        let mut admit = |graph: &mut LinkGraph| {
            crate::graph::resolve::wrap_references(graph, &wrapped);
            comdats.select(graph);
            ehframe::prune(graph)
        };
        for graph in &mut graphs {
            admit(graph)?;
        }

        // Resolution. After it, no new symbols appear.
        let mut table = SymbolTable::new(options.defines.clone());
        table.set_aliases(&options.aliases)?;
        table.reserve(graphs.iter().map(crate::graph::resolve::global_symbol_count).sum());
        for (g, graph) in graphs.iter().enumerate() {
            table.add_graph(g as u32, graph, &graphs)?;
        }
        // Archive members for what is still missing, until nothing new
        // loads; they come before the runtime pieces and libraries.
        let mut archives: Vec<Archive> = archives.into_iter().map(|(_, a)| a).collect();
        let (profiling, profiling_root) = profiling_runtime(&table, &graphs);
        archives.extend(profiling);
        let roots: Vec<String> = options.roots.iter().cloned().chain(profiling_root.map(String::from)).collect();
        let loaded = archive::load_needed(&mut archives, &mut table, &mut graphs, &roots, &options.limits, &mut admit)?;
        if !archives.is_empty() {
            log::debug!("{} archive members loaded", loaded);
        }
        if graphs.is_empty() {
            bail!("no input objects (archive members load only when something needs them; see --whole-archive)");
        }
        let cpu = one_cpu(&graphs)?;
        let replaces_allocator = crate::host::interpose::ALLOCATOR_FUNCTIONS.iter().any(|name| table.is_defined(name));
        let host_function = |name: &str| jitruns_own_function(name, replaces_allocator);
        let mut needed: HashSet<&str> =
            table.undefined_names().filter(|n| runtime::provides(cpu, n, &host_function)).collect();
        needed.extend(init_code_wrappers_needed(&graphs, &table));
        let runtime_graph = runtime::build(cpu, &needed, &host_function);
        table.add_graph(graphs.len() as u32, &runtime_graph, &graphs)?;
        graphs.push(runtime_graph);
        let named_libraries: Vec<NamedLibrary> = named_libraries.into_iter().map(|(_, named)| named).collect();
        let built_by_clang = graphs.iter().any(|g| g.built_by_clang);
        let calls_a_sanitizer = load_runtime_libraries_if_needed(
            &table,
            &named_libraries,
            &mut libraries,
            built_by_clang,
            &options.sanitize,
        )?;
        let mut host = HostResolver::new(named_libraries);
        if !matches!(object_format, Some((FileKind::MachO, _))) {
            load_static_compiler_runtime_if_needed(
                &mut table,
                &mut graphs,
                &mut host,
                &libraries,
                &options,
                &mut admit,
            )?;
        }
        let mut this_process =
            host::ThisProcess { resolver: &mut host, libraries: &libraries, facts: Default::default() };
        let res = table.finish(&mut graphs, &mut this_process, options.allow_unresolved)?;
        let mut symbol_facts = this_process.facts;
        let named_and_loaded = host.named_and_loaded(libraries.len());
        libraries.extend(host.into_loaded_libraries());
        timer.mark("resolve");

        // One scan over all edges sizes the GOT, stubs and copy slots.
        let tables = tables::plan(&graphs, &res, &mut |address, name| symbol_facts.info(address, name))?;
        let has_eh_frame =
            graphs.iter().any(|g| g.sections.iter().any(|s| s.kind == SectionKind::EhFrame && !s.discarded));
        let (table_graph, table_blocks) = tables::build_graph(cpu, &tables, has_eh_frame);
        graphs.push(table_graph);

        // Layout: every block gets an offset in a segment.
        let layout = layout::compute(&graphs, crate::support::page_size());
        timer.mark("layout");
        options.limits.check_image_size(&"the image", layout.size)?;
        options.limits.check_tls_size(&"the image", layout.tls.size)?;

        // Reserve the address range; after this every address is known.
        let placement = match options.base {
            Some(base) => Placement::Fixed(base),
            None if tables.needs_low_image => Placement::Low32,
            None => Placement::Anywhere,
        };
        let mut mapper = InProcessMapper::new();
        let base = mapper.reserve(layout.size, layout.align, placement)?;
        log::debug!("image at {:#x}, {} bytes, {:?}", base, layout.size, placement);
        timer.mark("map");

        let copies_in_use = fixups::decide_copies(&tables, &res, base, layout.size);
        let mut addrs = Addresses {
            cpu,
            base,
            layout: &layout,
            res: &res,
            tables: &tables,
            table_graph: graphs.len() as u32 - 1,
            table_blocks: &table_blocks,
            copies_in_use: &copies_in_use,
            tls: None,
        };

        // The TLS template first: its fixups use only ordinary addresses,
        // and the module must be loaded with its final contents.
        let mut tls_template = vec![0u8; layout.tls.size as usize];
        for (g, graph) in graphs.iter().enumerate() {
            for (b, block) in graph.blocks.iter().enumerate() {
                let tls_offset = layout.tls.offsets[g][b];
                if tls_offset == NOT_PLACED {
                    continue;
                }
                let bytes = &mut tls_template[tls_offset as usize..(tls_offset + block.size) as usize];
                block.write_content(graph.input_bytes(), bytes);
                fixups::apply_block_fixups(graph, g, b as BlockId, bytes, tls_offset, &addrs, &[], &mut Vec::new())?;
            }
        }
        let tls_module = if layout.tls.size > 0 || tables.uses_tls {
            let requests: Vec<tls::ExternalTlsRequest> = tables
                .tls_externals
                .iter()
                .map(|&(e, needs_tp_offset)| tls::ExternalTlsRequest {
                    name: res.externals[e as usize].name.to_string(),
                    needs_tp_offset,
                })
                .collect();
            let mut module = tls::allocate(&layout.tls, &tls_template, &requests)?;
            module.placement.descriptor_resolver =
                addrs.address(res.globals[crate::arch::runtime::TLSDESC_STATIC].target)?;
            Some(module)
        } else {
            None
        };
        addrs.tls = tls_module.as_ref().map(|module| &module.placement);

        // Copy contents and apply every fixup; after this no edge is pending.
        let symbols = {
            let memory = mapper.prepare(base, layout.size, layout.data_end())?;
            // The padding between `.init` (`.fini`) fragments is run through,
            // so it is NOPs, as ld fills it.
            for section in [".init", ".fini"].iter().filter_map(|name| layout.section(name)) {
                if let Some(bytes) = memory.get_mut(section.offset as usize..(section.offset + section.size) as usize) {
                    bytes.fill(0x90);
                }
            }
            // The global symbols' map is built meanwhile when there is much
            // to write: it needs only the final addresses.
            let build_symbols = || global_symbol_map(&res, &addrs);
            let threads = crate::support::parallel::link_threads();
            let symbols =
                if threads > 1 && fixups::placed_blocks_weight(&graphs, &layout) >= fixups::PARALLEL_FIXUP_WEIGHT {
                    let helper = vec![crate::support::heap::on_helper_heap(build_symbols)];
                    let (map, fixed) = crate::support::threads::run_beside(helper, || {
                        fixups::copy_and_fix_blocks(memory, &graphs, &layout, &addrs, threads)
                    });
                    fixed?;
                    map.into_iter().next().expect("one helper, one map")
                } else {
                    fixups::copy_and_fix_blocks(memory, &graphs, &layout, &addrs, 1)?;
                    build_symbols()
                };
            // Copied: their pages need not stay resident next to the image's,
            // nor their files open while the program runs.
            for input in graphs.iter().filter_map(|g| g.input.as_ref()) {
                input.release_except(std::iter::empty());
                input.close_file();
            }
            fixups::write_tables(memory, &addrs)?;
            symbols
        };
        timer.mark("fixups");
        let library_paths: Vec<String> = libraries.iter().map(|l| l.path.display().to_string()).collect();
        // Deferred collection keeps the graphs, so it excludes the hook that
        // takes them; a debugger wants the info before the program runs.
        // A sanitizer's reports name the image's frames (UBSan's, with
        // print_stacktrace=1, too; its runtime is loaded, not preloaded).
        let listed_for_symbolizer = crate::host::driver_runtime::sanitizer_preloaded_noted() || calls_a_sanitizer;
        let defer = options.defer_link_info
            && on_linked.is_none()
            && !crate::diagnostics::debugger::wanted()
            && !listed_for_symbolizer;
        let address_of = |g: usize, s: u32| fixups::symbol_address(&res, &addrs, g, s);
        // Source lines for a sanitizer's symbolizer: all objects' DWARF in
        // the one file it reads for the image.
        let symbolizer_debug = if listed_for_symbolizer {
            crate::diagnostics::debugger::merged_debug_sections(&graphs, address_of)
        } else {
            Vec::new()
        };
        let info = if defer {
            Arc::default()
        } else {
            // Taken, not cloned: only the deferred branch below reads them again.
            let (inputs, phases) = (std::mem::take(&mut inputs), std::mem::take(&mut timer.phases));
            let mut info =
                linkinfo::collect(&graphs, &addrs, &library_paths, &host::defining_object_name, inputs, phases);
            // The caller wanted the model kept for a crash table with source
            // lines, and cannot have it: the lines come with the info
            // (from the symbolizer's DWARF when there is one, relocated once).
            if options.defer_link_info && graphs.iter().any(|g| g.has_line_info) {
                let mut lines = crate::graph::line_table::LineTable::default();
                if listed_for_symbolizer {
                    crate::diagnostics::debugger::add_lines(&mut lines, &symbolizer_debug);
                } else {
                    crate::diagnostics::debugger::add_lines_of_objects(&mut lines, &graphs, address_of);
                }
                lines.finish();
                info.lines = Some(Arc::new(lines));
            }
            Arc::new(info)
        };
        let table_graph = addrs.table_graph;

        // Source lines for a debugger: each object's DWARF at the final addresses.
        let debug_files: Vec<Vec<u8>> = if crate::diagnostics::debugger::wanted() {
            graphs
                .iter()
                .enumerate()
                .filter_map(|(g, graph)| crate::diagnostics::debugger::object_debug_file(graph, |s| address_of(g, s)))
                .collect()
        } else {
            Vec::new()
        };
        let exports = if options.export_dynamic {
            crate::host::exports::collect(&graphs, &res, |target| addrs.address_if_any(target))
        } else {
            Vec::new()
        };
        // Where each IFUNC's resolver is and which GOT slot takes its answer.
        let ifuncs = res
            .ifuncs
            .iter()
            .enumerate()
            .map(|(i, ifunc)| {
                // The resolver runs at load time: it must be code.
                let Target::Block { graph, block, .. } = ifunc.resolver else {
                    bail!("IFUNC `{}`: its resolver is not in the image", ifunc.name)
                };
                let (graph, section) = (&graphs[graph as usize], graphs[graph as usize].block_section(block));
                if section.kind != SectionKind::Code {
                    bail!(
                        "{}: IFUNC `{}` is defined in {}, which is not code: its resolver cannot run",
                        graph.name,
                        ifunc.name,
                        section.name
                    );
                }
                let got_slot = addrs.got_entry(GotSlot::JumpSlot(Target::Ifunc(i as u32)));
                Ok(crate::host::ifunc::IfuncSlot {
                    name: ifunc.name.clone(),
                    resolver: addrs.address(ifunc.resolver)?,
                    got_slot: got_slot.ok_or_else(|| anyhow!("internal: IFUNC {} has no stub", ifunc.name))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;

        // A program with its own malloc gets it from every library too, and
        // libc reads the program's definitions of its variables.
        let image_definition = |name: &str| match res.globals.get(name)?.target {
            target @ Target::Block { .. } => addrs.address_if_any(target),
            _ => None,
        };
        let (mut preempting, mut entries) = program_stand_in_patches(&libraries, image_definition);
        preempting.extend(preempting_data(&res, &libraries, image_definition));
        // The C and C++ runtime's own references are left alone even when
        // named: the program's copies of what they define are the inline
        // functions of their headers (the same code), and patching
        // libstdc++'s read-only GOT cost a C++ hello world 5%.
        let named: Vec<&SharedLibrary> = named_and_loaded
            .iter()
            .filter_map(|&i| libraries.get(i))
            .filter(|library| !is_language_runtime(&library.path))
            .collect();
        entries.extend(preempting_named_libraries(&named, image_definition));
        let got_interposition = crate::host::interpose::GotInterposition::plan(image_definition, preempting, entries);
        // Protections, then finalize actions (with their dealloc pairs).
        let mut actions = Vec::new();
        if let Some(module) = tls_module {
            actions.push(tls::action(module));
        }
        for (i, copy) in tables.copies.iter().enumerate() {
            if !copies_in_use[i] {
                continue;
            }
            let ext = &res.externals[copy.external as usize];
            let (name, original, size) = (ext.name.to_string(), ext.address, copy.size);
            let slot = base + layout.block_offsets[table_graph as usize][table_blocks.copies[i] as usize];
            actions.push(ActionPair::with_state(
                "copy relocation",
                move || Ok(copyreloc::install(&name, original, slot, size)),
                move |patched| copyreloc::uninstall(original, slot, size, patched),
            ));
        }
        let eh_frame = layout.section(".eh_frame").filter(|s| s.size > 4).map(|eh| (base + eh.offset, eh.size));
        if let Some((addr, _)) = eh_frame {
            // With a sanitizer, libgcc_s finds the frames through the module
            // listed for it below, not through a registration.
            let with_shared_unwinder = !listed_for_symbolizer;
            // Dropping the registration unregisters.
            actions.push(ActionPair::with_state(
                "register eh_frame",
                move || Ok(crate::host::unwind::register(addr, with_shared_unwinder)),
                drop,
            ));
        }
        let page = crate::support::page_size();
        let segments = layout
            .segments
            .iter()
            .map(|s| SegmentProtection {
                addr: base + s.offset,
                size: s.size.div_ceil(page) * page,
                protection: s.kind.final_protection(),
            })
            .collect();
        let writable: Vec<(usize, usize)> = layout
            .segments
            .iter()
            .filter(|s| s.kind.final_protection().contains(region::Protection::WRITE))
            .map(|s| ((base + s.offset) as usize, s.size as usize))
            .collect();
        actions.push(ActionPair::with_state(
            "register with the leak checker",
            move || Ok(host::register_leak_checker_roots(writable)),
            drop,
        ));
        actions.extend(crate::diagnostics::debugger::action(&info, debug_files));
        if listed_for_symbolizer {
            // A sanitizer's reports name the image's functions and globals.
            let segments: Vec<(u64, u64, bool)> = info
                .segments
                .iter()
                .filter(|s| s.size > 0)
                .map(|s| (s.address, s.size, s.protection.contains('x')))
                .collect();
            let symbols = crate::diagnostics::debugger::symbol_file(
                &info,
                None,
                crate::diagnostics::debugger::SymbolFileFor::Symbolizer,
                &symbolizer_debug,
            )?;
            actions.push(ActionPair::with_state(
                "list with the sanitizer's symbolizer",
                move || host::list_image_as_module(&symbols, &segments, eh_frame),
                drop,
            ));
        }
        // Last: a resolver is loaded code, and may use what came before.
        if !ifuncs.is_empty() {
            actions.push(crate::host::ifunc::resolve_action(ifuncs));
        }
        // dladdr and backtrace_symbols know the image from here on, and
        // name its exported symbols (those a native executable's dynamic
        // symbol table would hold); dl_iterate_phdr lists it.
        let address_table =
            crate::host::dladdr::AddressTable::new(base, layout.size, &exports).with_segments(base, &layout.segments);
        actions.push(ActionPair::with_state(
            "register with dladdr",
            move || Ok(crate::host::dladdr::register(address_table)),
            drop,
        ));
        if options.export_dynamic {
            log::debug!("exporting {} symbols to libraries loaded later", exports.len());
            actions.push(ActionPair::with_state(
                "export symbols",
                move || {
                    let bytes = crate::host::exports::shared_object("jitrun-exports.so", &exports)?;
                    SharedLibrary::open_from_memory("jitrun-exports.so", &bytes)
                },
                drop,
            ));
        }
        let key = mapper.initialize(AllocInfo { segments, actions })?;

        let array = |name: &str| {
            layout
                .section(name)
                .map(|s| FunctionArray { start: base + s.offset, count: s.size / 8 })
                .unwrap_or_default()
        };
        // `_init`/`_fini`: jitrun's, or crti.o's when the objects include it.
        let code = |wrapper: &str, own: &str| symbols.address(wrapper).or_else(|| symbols.address(own));
        let calls_mcount = res.externals.iter().any(|e| matches!(&*e.name, "mcount" | "_mcount"));
        let initializers = Initializers {
            preinit: array(".preinit_array"),
            init_code: code(crate::arch::runtime::INIT_CODE, "_init"),
            init: array(".init_array"),
            profiled_code: layout
                .segment_start(SegmentKind::Text)
                .filter(|_| calls_mcount)
                .map(|start| (base + start, base + layout.segment_end(&[SegmentKind::Text]))),
        };
        let finalizers =
            Finalizers { fini: array(".fini_array"), fini_code: code(crate::arch::runtime::FINI_CODE, "_fini") };
        let dso_handle =
            symbols.address(crate::arch::runtime::DSO_HANDLE).ok_or_else(|| anyhow!("internal: no __dso_handle"))?;
        let mut image =
            Image::new(mapper, base, layout.size, key, symbols, (initializers, finalizers), dso_handle, libraries);
        image.link_info = info;
        image.got_interposition = got_interposition;
        if defer {
            image.deferred_link_info = Some(DeferredLinkInfo {
                cpu,
                graphs,
                layout,
                res,
                tables,
                table_blocks,
                copies_in_use,
                base,
                table_graph,
                library_paths,
                inputs,
                phases: timer.phases,
            });
            return Ok(image);
        }
        // The graphs are dropped here unless the caller asked for them back.
        if let Some(hook) = on_linked {
            hook(graphs);
        }
        Ok(image)
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

/// Keeps the first copy of each COMDAT group, graph by graph as they join
/// the link (archive members join late), and discards the later copies.
#[derive(Default)]
struct ComdatSelection {
    seen: rustc_hash::FxHashSet<Box<str>>,
}

impl ComdatSelection {
    fn select(&mut self, graph: &mut LinkGraph) {
        let mut discard = Vec::new();
        for comdat in &graph.comdats {
            if !self.seen.insert(comdat.signature.clone()) {
                discard.extend(comdat.sections.iter().copied());
            }
        }
        for s in discard {
            graph.sections[s as usize].discarded = true;
        }
    }
}

/// Which file `path` is (device and inode), whatever the path to it: one
/// `stat` where canonicalizing the path reads every link on the way.
fn file_identity(path: &Path) -> Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).with_context(|| format!("{}: cannot stat", path.display()))?;
    Ok((meta.dev(), meta.ino()))
}

/// The profiling runtime the compiler driver links for code built with
/// `--coverage` (or `-fprofile-arcs`), found by the calls such code makes:
/// `__gcov_*` for GCC's libgcov.a (beside libgcc.a), `llvm_gcda_*` and
/// `llvm_gcov_init` for clang's `libclang_rt.profile-x86_64.a`. Code built
/// with clang's `-fprofile-instr-generate` calls nothing: it has counter
/// sections, and the driver adds `-u __llvm_profile_runtime` (the member
/// that writes `default.profraw` at exit), returned here as a root. The
/// archives load with the command line's, so that their members' needs
/// (atexit, getenv, ...) are met as the objects' are.
fn profiling_runtime(table: &SymbolTable, graphs: &[LinkGraph]) -> (Vec<Archive>, Option<&'static str>) {
    let (mut gcc, mut clang) = (false, false);
    for name in table.undefined_strong_names() {
        gcc |= name.starts_with("__gcov_");
        clang |= name.starts_with("llvm_gcda_") || name.starts_with("llvm_gcov_");
    }
    let instrumented =
        graphs.iter().any(|graph| graph.sections.iter().any(|section| section.name == "__llvm_prf_cnts"));
    clang |= instrumented;
    let gcov = || crate::graph::libsearch::static_compiler_runtime().map(|libgcc| libgcc.with_file_name("libgcov.a"));
    let clang_profile = || crate::host::driver_runtime::clang_runtime_library("libclang_rt.profile-x86_64.a");
    let paths = [gcc.then(gcov).flatten(), clang.then(clang_profile).flatten()];
    let archives = paths
        .into_iter()
        .flatten()
        .filter_map(|path| match InputData::open(&path).and_then(|data| Archive::parse(&path, Arc::new(data))) {
            Ok(archive) => Some(archive),
            Err(e) => {
                log::debug!("{:#}", e);
                None
            }
        })
        .collect();
    (archives, instrumented.then_some("__llvm_profile_runtime"))
}

/// `cc` links libgcc.a too (`-lgcc`): names only it defines, such as
/// `__cpu_model` and `__cpu_indicator_init` that GCC's function
/// multiversioning resolvers use, load from there once nothing else —
/// objects, archives, runtime pieces, libraries, libgcc_s — has them. (Its
/// index costs ~2M instructions to read, so only then.) The host lookups
/// are cached for resolution.
fn load_static_compiler_runtime_if_needed(
    table: &mut SymbolTable,
    graphs: &mut Vec<LinkGraph>,
    host: &mut HostResolver,
    libraries: &[SharedLibrary],
    options: &LinkOptions,
    admit: &mut impl FnMut(&mut LinkGraph) -> Result<()>,
) -> Result<()> {
    // libgcc's names all begin with two underscores.
    let missing = table
        .undefined_strong_names()
        .filter(|name| name.starts_with("__") && !crate::graph::resolve::may_be_linker_defined(name))
        .any(|name| host.resolve(name, libraries, true, &host::no_program_definitions).is_none());
    if !missing {
        return Ok(());
    }
    let Some(path) = crate::graph::libsearch::static_compiler_runtime() else { return Ok(()) };
    let archive = InputData::open(&path).and_then(|data| Archive::parse(&path, Arc::new(data)));
    let mut archive = match archive {
        Ok(archive) => [archive],
        Err(e) => {
            log::debug!("{:#}", e);
            return Ok(());
        }
    };
    let loaded = archive::load_needed(&mut archive, table, graphs, &[], &options.limits, admit)?;
    log::debug!("{} members of {} loaded", loaded, path.display());
    Ok(())
}

/// The runtime's `_init`/`_fini` wrappers the objects need: those whose
/// `.init` (`.fini`) sections hold code, unless they define `_init`
/// (`_fini`) themselves, as crti.o does around the same fragments.
fn init_code_wrappers_needed(graphs: &[LinkGraph], table: &SymbolTable) -> Vec<&'static str> {
    let has_fragments = |name: &str| {
        graphs.iter().any(|graph| {
            graph.sections.iter().any(|section| {
                section.name == name
                    && section.kind == SectionKind::Code
                    && !section.discarded
                    && section.blocks.iter().any(|&b| graph.blocks[b as usize].size > 0)
            })
        })
    };
    [(crate::arch::runtime::INIT_CODE, ".init", "_init"), (crate::arch::runtime::FINI_CODE, ".fini", "_fini")]
        .into_iter()
        .filter(|&(_, section, own)| has_fragments(section) && !table.is_defined(own))
        .map(|(wrapper, ..)| wrapper)
        .collect()
}

/// The CPU every object is for: one image holds code of one CPU, and it
/// must be the one jitrun runs on.
fn one_cpu(graphs: &[LinkGraph]) -> Result<crate::arch::Cpu> {
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
    if crate::arch::Cpu::host() != Some(first.cpu) {
        bail!(
            "{}: {} objects are not supported yet (jitrun runs on {})",
            first.name,
            first.cpu,
            crate::arch::Cpu::host().map_or("another CPU", |c| c.name())
        );
    }
    Ok(first.cpu)
}

/// jitrun's own version of a function the image calls instead of libc's
/// (see `graph::runtime`): the host's, and the diagnostics' (`_exit` for
/// `--report`, `__assert_fail` and the like for crash reports).
fn jitruns_own_function(name: &str, replaces_allocator: bool) -> Option<u64> {
    crate::host::runtime::host_function(name, replaces_allocator)
        .or_else(|| crate::diagnostics::report::host_function(name).map(|a| a as u64))
        .or_else(|| crate::diagnostics::crash::host_function(name).map(|a| a as u64))
}

/// What `g++` links besides libc.
const CXX_RUNTIME_LIBRARIES: [&str; 3] = ["libstdc++.so.6", "libm.so.6", COMPILER_RUNTIME_LIBRARY];

/// `g++` links libstdc++, libm and libgcc_s; when objects need C++ runtime
/// symbols that nothing provides, load them the same way. Code that unwinds
/// through its own frames without C++ (thread cancellation, `backtrace()`)
/// gets libgcc_s now, so the image's frames are registered with it; other
/// missing helpers load it during resolution ([`HostResolver`]). Code built
/// with `-fopenmp` or `-fsanitize=...` gets the runtime the driver would
/// link (see [`crate::host::driver_runtime`]); one that must come first and is
/// not in the process yet fails the link with
/// [`crate::host::driver_runtime::RuntimeMustComeFirst`]. Returns whether the
/// code calls a sanitizer's runtime.
fn load_runtime_libraries_if_needed(
    table: &SymbolTable,
    named: &[NamedLibrary],
    libraries: &mut Vec<SharedLibrary>,
    built_by_clang: bool,
    requested: &[String],
) -> Result<bool> {
    const UNWINDS_WITHOUT_CXX: [&str; 5] =
        ["pthread_exit", "pthread_cancel", "thrd_exit", "backtrace", "__gcc_personality_v0"];
    // libc's, though named like the C++ ABI's (jitrun's `atexit` calls the first).
    const LIBC_CXA: [&str; 4] = ["__cxa_atexit", "__cxa_finalize", "__cxa_at_quick_exit", "__cxa_thread_atexit_impl"];
    let (mut wants_cxx, mut wants_unwinder) = (false, false);
    // The first name that calls for each driver runtime.
    let mut driver_runtimes: [Option<&str>; crate::host::driver_runtime::DRIVER_RUNTIMES.len()] = Default::default();
    for n in table.undefined_names() {
        let cxa = n.starts_with("__cxa_") && !LIBC_CXA.contains(&n);
        wants_cxx |= n.starts_with("_Z") || cxa || n.starts_with("__gxx_") || n.starts_with("_Unwind_");
        wants_unwinder |= UNWINDS_WITHOUT_CXX.contains(&n);
        for (runtime, first_call) in crate::host::driver_runtime::DRIVER_RUNTIMES.iter().zip(&mut driver_runtimes) {
            if first_call.is_none() && runtime.is_called_as(n) {
                *first_call = Some(n);
            }
        }
    }
    // `--sanitize KIND`: what `cc -fsanitize=KIND` links, called or not
    // (an empty name: no call asked for it).
    for (runtime, first_call) in crate::host::driver_runtime::DRIVER_RUNTIMES.iter().zip(&mut driver_runtimes) {
        if first_call.is_none() && requested.iter().any(|kind| runtime.flag.strip_prefix("-fsanitize=") == Some(kind)) {
            *first_call = Some("");
        }
    }
    let has = |libraries: &[SharedLibrary], name: &str| {
        let named_on_demand = named
            .iter()
            .any(|n| matches!(n, NamedLibrary::OnDemand { path, .. } | NamedLibrary::Outright { path, .. } if path.to_string_lossy().contains(name)));
        named_on_demand || libraries.iter().any(|l| l.path.to_string_lossy().contains(name))
    };
    let mut wanted: Vec<PathBuf> = Vec::new();
    let mut flags_served: Vec<&str> = Vec::new();
    for (runtime, first_call) in crate::host::driver_runtime::DRIVER_RUNTIMES.iter().zip(driver_runtimes) {
        let Some(symbol) = first_call else { continue };
        if flags_served.contains(&runtime.flag) {
            continue;
        }
        flags_served.push(runtime.flag);
        if runtime.is_loaded() {
            continue;
        }
        if runtime.must_come_first {
            let with = if wants_cxx {
                CXX_RUNTIME_LIBRARIES.map(crate::graph::ldcache::system_library).to_vec()
            } else {
                Vec::new()
            };
            let (flag, symbol, library) = (runtime.flag, symbol.to_string(), runtime.path(built_by_clang));
            return Err(crate::host::driver_runtime::RuntimeMustComeFirst { flag, symbol, library, with }.into());
        }
        if !has(libraries, runtime.library(built_by_clang)) {
            wanted.push(runtime.path(built_by_clang));
        }
    }
    if wants_cxx && !has(libraries, "libstdc++") {
        wanted.extend(CXX_RUNTIME_LIBRARIES.map(crate::graph::ldcache::system_library));
    } else if wants_unwinder && !has(libraries, "libgcc_s") {
        wanted.push(crate::graph::ldcache::system_library(COMPILER_RUNTIME_LIBRARY));
    }
    for path in wanted {
        let loaded = InputData::open(&path)
            .and_then(|file| host::load_library(&path, file.bytes(), libraries, &host::no_program_definitions));
        if let Err(e) = loaded {
            log::debug!("runtime library: {:#}", e);
        }
    }
    Ok(flags_served.iter().any(|flag| flag.starts_with("-fsanitize")))
}

/// The image's global symbols by name, for lookups once it is linked.
fn global_symbol_map(res: &Resolution, addrs: &Addresses) -> crate::image::SymbolMap {
    crate::image::SymbolMap::new(
        res.globals
            .iter()
            .filter(|(_, g)| matches!(g.target, Target::Block { .. } | Target::Absolute(_) | Target::Ifunc(_)))
            .filter_map(|(name, g)| addrs.address(g.target).ok().map(|a| (&**name, a, Some(g.size)))),
    )
}

/// A name with the image's definition of it.
type NamedAddress = (Arc<str>, u64);

/// What takes the place of the stand-ins libraries were given for the
/// program's definitions (see `host::stand_ins_for_the_program`): the
/// image's definition of each name, for the GOT entries bound to the
/// stand-in, and (slot, image address) for the stand-in's symbol value,
/// which later lookups (a lazily bound call) find.
fn program_stand_in_patches(
    libraries: &[SharedLibrary],
    image_definition: impl Fn(&str) -> Option<u64>,
) -> (Vec<NamedAddress>, Vec<(u64, u64)>) {
    let (mut names, mut values) = (Vec::new(), Vec::new());
    for (name, value_slot) in libraries.iter().flat_map(SharedLibrary::stand_in_values) {
        if let Some(address) = image_definition(&name) {
            values.push((value_slot, address));
            names.push((name, address));
        }
    }
    (names, values)
}

/// Whether `path` is one of the C or C++ runtime's shared libraries, which
/// `cc` and `g++` link without being asked.
fn is_language_runtime(path: &Path) -> bool {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
    let base = file.split(".so").next().unwrap_or_default();
    matches!(base, "libc" | "libm" | "libstdc++" | "libgcc_s" | "libpthread" | "libdl" | "librt" | "libmvec")
}

/// The GOT entries of libraries named for the link bound to their own
/// definitions of names the image defines too (a function a library calls
/// through its PLT, say), with the image's definitions, which take their
/// place as an executable's do: the loader finds the executable's first.
/// Not jitrun's runtime pieces (`__`-names), nor vtables and type
/// information (`_ZT`: copies behave the same). Each library's entries are
/// read once (see `SharedLibrary::interposable_got_entries`). (Another
/// library's references to such a name stay bound to the library's.)
fn preempting_named_libraries(
    named: &[&SharedLibrary],
    image_definition: impl Fn(&str) -> Option<u64>,
) -> Vec<(u64, u64)> {
    let replacement = |name: &str| {
        if name.starts_with("__") || name.starts_with("_ZT") {
            return None;
        }
        image_definition(name)
    };
    named.iter().flat_map(|library| library.interposable_got_entries(replacement)).collect()
}

/// The image's data definitions that take the place of a library's, as an
/// executable's do: glibc reads a program's `argp_program_version` through
/// its GOT, and a C++ library shares the program's copy of a template's
/// static member or an inline function's static. Names of data defined in
/// a start-up object (libc, the loader) or a library of the link too, with
/// the image's address.
fn preempting_data(
    res: &Resolution,
    libraries: &[SharedLibrary],
    image_definition: impl Fn(&str) -> Option<u64>,
) -> Vec<(Arc<str>, u64)> {
    let mut found = Vec::new();
    let mut c_name = Vec::new();
    for name in &res.data_definitions {
        c_name.clear();
        c_name.extend_from_slice(name.as_bytes());
        c_name.push(0);
        let Ok(c_name) = std::ffi::CStr::from_bytes_with_nul(&c_name) else { continue };
        if crate::host::loader::startup_objects_define_data(c_name) || libraries.iter().any(|l| l.defines_data(c_name))
        {
            if let Some(address) = image_definition(name) {
                found.push((Arc::from(&**name), address));
            }
        }
    }
    found
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
