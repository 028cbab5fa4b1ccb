//! The last passes of a link that runs here: its link info, and the
//! actions that make the image part of this process (thread-locals, copy
//! relocations, unwind and debugger registration, IFUNCs, `dladdr`,
//! exports), in the order their dealloc pairs undo them; then the image.

use std::sync::Arc;

use anyhow::{anyhow, bail, Result};

use super::{interposition, Placed};
use crate::graph::fixups;
use crate::graph::layout::{Segment, SegmentKind};
use crate::graph::linkinfo;
use crate::graph::model::*;
use crate::graph::resolve::Target;
use crate::graph::tables::GotSlot;
use crate::host::copyreloc;
use crate::host::loader::{self as host, SharedLibrary};
use crate::host::tls;
use crate::image::{Finalizers, FunctionArray, Image, Initializers, MappedProgram};
use crate::memory::{ActionPair, AllocInfo, InProcessMapper, MemoryMapper, SegmentProtection};

/// Makes the placed image a running part of this process.
pub(super) fn finish(mut placed: Placed, mut mapper: InProcessMapper) -> Result<Image> {
    let (base, tls_module) = (placed.base, placed.tls_module.take());
    let has_thread_locals = tls_module.is_some();
    let symbols = std::mem::take(&mut placed.symbols);
    let mut inputs = std::mem::take(&mut placed.inputs);
    let mut phases = std::mem::take(&mut placed.timer.phases);
    let layout = &placed.layout;
    let addrs = placed.addresses();
    let library_paths: Vec<String> = placed.libraries.iter().map(|l| l.path.display().to_string()).collect();
    // Deferred collection keeps the graphs, so it excludes the hook that
    // takes them; a debugger wants the info before the program runs.
    // A sanitizer's reports name the image's frames (UBSan's, with
    // print_stacktrace=1, too; its runtime is loaded, not preloaded).
    let listed_for_symbolizer = crate::host::driver_runtime::sanitizer_preloaded_noted() || placed.calls_a_sanitizer;
    let defer = placed.options.defer_link_info
        && placed.on_linked.is_none()
        && !crate::diagnostics::debugger::wanted()
        && !listed_for_symbolizer;
    let address_of = |g: usize, s: u32| fixups::symbol_address(&placed.res, &addrs, g, s);
    // Source lines for a sanitizer's symbolizer: all objects' DWARF in
    // the one file it reads for the image.
    let symbolizer_debug = if listed_for_symbolizer {
        crate::diagnostics::debugger::merged_debug_sections(&placed.graphs, address_of)
    } else {
        Vec::new()
    };
    let info = if defer {
        Arc::default()
    } else {
        // Taken, not cloned: only the deferred branch below reads them again.
        let (inputs, phases) = (std::mem::take(&mut inputs), std::mem::take(&mut phases));
        let mut info =
            linkinfo::collect(&placed.graphs, &addrs, &library_paths, &host::defining_object_name, inputs, phases);
        // The caller wanted the model kept for a crash table with source
        // lines, and cannot have it: the lines come with the info
        // (from the symbolizer's DWARF when there is one, relocated once).
        if placed.options.defer_link_info && placed.graphs.iter().any(|g| g.has_line_info) {
            let mut lines = crate::graph::line_table::LineTable::default();
            if listed_for_symbolizer {
                crate::diagnostics::debugger::add_lines(&mut lines, &symbolizer_debug);
            } else {
                crate::diagnostics::debugger::add_lines_of_objects(&mut lines, &placed.graphs, address_of);
            }
            lines.finish();
            info.lines = Some(Arc::new(lines));
        }
        Arc::new(info)
    };

    // Source lines for a debugger: each object's DWARF at the final addresses.
    let debug_files: Vec<Vec<u8>> = if crate::diagnostics::debugger::wanted() {
        placed
            .graphs
            .iter()
            .enumerate()
            .filter_map(|(g, graph)| crate::diagnostics::debugger::object_debug_file(graph, |s| address_of(g, s)))
            .collect()
    } else {
        Vec::new()
    };
    let exports = if placed.options.export_dynamic {
        crate::host::exports::collect(&placed.graphs, &placed.res, |target| addrs.address_if_any(target))
    } else {
        Vec::new()
    };
    // Where each IFUNC's resolver is and which GOT slot takes its answer.
    let ifuncs = placed
        .res
        .ifuncs
        .iter()
        .enumerate()
        .map(|(i, ifunc)| {
            // The resolver runs at load time: it must be code.
            let Target::Block { graph, block, .. } = ifunc.resolver else {
                bail!("IFUNC `{}`: its resolver is not in the image", ifunc.name)
            };
            let (graph, section) = (&placed.graphs[graph as usize], placed.graphs[graph as usize].block_section(block));
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

    let ifuncs_none = ifuncs.is_empty();
    // A program with its own malloc gets it from every library too, and
    // libc reads the program's definitions of its variables.
    let image_definition = |name: &str| match placed.res.globals.get(name)?.target {
        target @ Target::Block { .. } => addrs.address_if_any(target),
        _ => None,
    };
    let (mut preempting, mut entries) = interposition::program_stand_in_patches(&placed.libraries, image_definition);
    preempting.extend(interposition::preempting_data(&placed.res, &placed.libraries, image_definition));
    // The C and C++ runtime's own references are left alone even when
    // named: the program's copies of what they define are the inline
    // functions of their headers (the same code), and patching
    // libstdc++'s read-only GOT cost a C++ hello world 5%.
    let named: Vec<&SharedLibrary> = placed
        .named_and_loaded
        .iter()
        .filter_map(|&i| placed.libraries.get(i))
        .filter(|library| !interposition::is_language_runtime(&library.path))
        .collect();
    entries.extend(interposition::preempting_named_libraries(&named, image_definition));
    let got_interposition = crate::host::interpose::GotInterposition::plan(image_definition, preempting, entries);
    // Protections, then finalize actions (with their dealloc pairs).
    let mut actions = Vec::new();
    if let Some(module) = tls_module {
        actions.push(tls::action(module));
    }
    let (mut copies, mut relocations) = (Vec::new(), Vec::new());
    for (i, copy) in placed.tables.copies.iter().enumerate() {
        if !placed.copies_in_use[i] {
            continue;
        }
        let ext = &placed.res.externals[copy.external as usize];
        let slot = base + layout.block_offsets[placed.table_graph as usize][placed.table_blocks.copies[i] as usize];
        copies.push((copy.external, slot, copy.size));
        relocations.push(copyreloc::CopyRelocation {
            name: ext.name.to_string(),
            original: ext.address,
            copy: slot,
            size: copy.size,
        });
    }
    if !relocations.is_empty() {
        actions.push(copy_relocations_action(relocations));
    }
    let eh_frame = layout.section(".eh_frame").filter(|s| s.size > 4).map(|eh| (base + eh.offset, eh.size));
    // With a sanitizer, libgcc_s finds the frames through the module
    // listed for it below, not through a registration.
    actions.extend(eh_frame.map(|(addr, _)| eh_frame_action(addr, !listed_for_symbolizer)));
    let segments = protections(base, &layout.segments);
    actions.push(leak_checker_action(base, &layout.segments));
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
    actions.push(dladdr_action(base, layout.size, &exports, &layout.segments));
    if placed.options.export_dynamic {
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
        layout.section(name).map(|s| FunctionArray { start: base + s.offset, count: s.size / 8 }).unwrap_or_default()
    };
    // `_init`/`_fini`: jitrun's, or crti.o's when the objects include it.
    let code = |wrapper: &str, own: &str| symbols.address(wrapper).or_else(|| symbols.address(own));
    let calls_mcount = placed.res.externals.iter().any(|e| matches!(&*e.name, "mcount" | "_mcount"));
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
    if let Some(request) = &placed.options.link_cache {
        // What the cache restores: an image needing nothing else of this process.
        let needs = [
            (has_thread_locals, "thread-local variables"),
            (!ifuncs_none, "IFUNCs"),
            (placed.options.export_dynamic, "--export-dynamic"),
            (crate::diagnostics::debugger::wanted(), "a debugger's registration"),
            (listed_for_symbolizer || !placed.options.sanitize.is_empty(), "a sanitizer"),
            (got_interposition.is_some(), "libraries' GOT entries pointed at the image"),
            (calls_mcount, "profiling (-pg)"),
            (placed.has_random_guard, "a random stack guard"),
            // Where they are is fixed with jitrun's executable (part of the
            // cache's key) unless it is position-independent.
            (placed.calls_jitrun && crate::host::loader::executable_bias() != Some(0), "jitrun's own functions"),
            (placed.options.base.is_some() || placed.tables.needs_low_image, "a fixed or low address"),
            (placed.on_linked.is_some(), "its link graphs handed back"),
            (placed.options.self_exe.is_some(), "--self-exe"),
            (!placed.libraries.iter().all(|l| l.path.is_file()), "a library made in memory"),
        ];
        let unmet = needs.iter().find(|(needed, _)| *needed).map(|(_, what)| *what);
        if let Some(what) = unmet {
            log::debug!("link cache: not stored: the image needs {}", what);
        }
        let mut stored = Ok(super::cache::Stored::Declined);
        if unmet.is_none() {
            let crash_table = crate::diagnostics::crash::TableRecording::of_image(&addrs, &placed.graphs).into_bytes();
            stored = super::cache::store(
                request,
                super::cache::Linked {
                    addrs: placed.addresses(),
                    graphs: &placed.graphs,
                    layout,
                    symbols: &symbols,
                    libraries: &placed.libraries,
                    initializers,
                    finalizers,
                    dso_handle,
                    eh_frame,
                    crash_table,
                    search_dirs: &placed.options.search_paths,
                    opened: crate::support::input::take_opened_files(),
                    mapper: &mapper,
                    copies,
                },
            );
        }
        // The program runs either way: an entry that cannot be written is
        // worth a warning (a debug note for the default cache), not a
        // failed run.
        match (stored, request.default_policy) {
            (Ok(super::cache::Stored::Declined), Some(policy)) => super::cache::mark(
                request,
                super::cache::Mark::Declined { inputs_fingerprint: policy.inputs_fingerprint },
            ),
            (Err(e), Some(_)) => log::debug!("link cache: {:#}", e),
            (Err(e), None) => eprintln!("jitrun: warning: {:#}", e),
            (Ok(_), _) => {}
        }
    }
    let mut image = Image::new(MappedProgram {
        mapper: Box::new(mapper),
        base,
        size: layout.size,
        key,
        symbols,
        initializers,
        finalizers,
        dso_handle,
        libraries: std::mem::take(&mut placed.libraries),
    });
    image.link_info = info;
    image.got_interposition = got_interposition;
    if defer {
        image.deferred_link_info = Some(placed.into_deferred_link_info(library_paths, inputs, phases));
        return Ok(image);
    }
    // The graphs are dropped here unless the caller asked for them back.
    if let Some(hook) = placed.on_linked {
        hook(placed.graphs);
    }
    Ok(image)
}

/// The final protection of each segment of an image at `base`.
pub(super) fn protections(base: u64, segments: &[Segment]) -> Vec<SegmentProtection> {
    let page = crate::support::page_size();
    segments
        .iter()
        .map(|s| SegmentProtection {
            addr: base + s.offset,
            size: s.size.div_ceil(page) * page,
            protection: s.kind.final_protection(),
        })
        .collect()
}

/// Copies each library variable into its slot in the image and points the
/// libraries at the copies, as copy relocations do; undone at teardown.
pub(super) fn copy_relocations_action(copies: Vec<copyreloc::CopyRelocation>) -> ActionPair {
    ActionPair::with_state(
        "copy relocations",
        move || {
            let patched = copyreloc::install(&copies);
            Ok((copies, patched))
        },
        |(copies, patched)| copyreloc::uninstall(&copies, patched),
    )
}

/// Registers the image's `.eh_frame` at `addr` with the unwinders
/// (dropping the registration unregisters).
fn eh_frame_action(addr: u64, with_shared_unwinder: bool) -> ActionPair {
    ActionPair::with_state(
        "register eh_frame",
        move || Ok(crate::host::unwind::register(addr, with_shared_unwinder)),
        drop,
    )
}

/// Makes the image's writable segments roots of a leak checker's scan.
fn leak_checker_action(base: u64, segments: &[Segment]) -> ActionPair {
    let writable: Vec<(usize, usize)> = segments
        .iter()
        .filter(|s| s.kind.final_protection().contains(region::Protection::WRITE))
        .map(|s| ((base + s.offset) as usize, s.size as usize))
        .collect();
    ActionPair::with_state(
        "register with the leak checker",
        move || Ok(host::register_leak_checker_roots(writable)),
        drop,
    )
}

/// Makes `dladdr`, `backtrace_symbols` and `dl_iterate_phdr` know the
/// image, naming `exports`.
fn dladdr_action(base: u64, size: u64, exports: &[crate::host::exports::Export], segments: &[Segment]) -> ActionPair {
    let address_table = crate::host::dladdr::AddressTable::new(base, size, exports).with_segments(base, segments);
    ActionPair::with_state("register with dladdr", move || Ok(crate::host::dladdr::register(address_table)), drop)
}

/// The actions of an image that needs nothing of this process but its
/// unwinders, a leak checker and `dladdr` (the link cache's images), in
/// the order [`finish`] takes them.
pub(super) fn actions_of_any_image(
    base: u64,
    size: u64,
    segments: &[Segment],
    eh_frame: Option<u64>,
    with_shared_unwinder: bool,
) -> Vec<ActionPair> {
    let mut actions: Vec<ActionPair> =
        eh_frame.map(|addr| eh_frame_action(addr, with_shared_unwinder)).into_iter().collect();
    actions.push(leak_checker_action(base, segments));
    actions.push(dladdr_action(base, size, &[], segments));
    actions
}
