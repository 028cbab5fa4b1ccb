//! The libraries and archives a compiler driver adds to a link on its own:
//! the C++ runtime, sanitizer and OpenMP runtimes, libgcc, the profiling
//! runtimes; and jitrun's own functions the runtime object jumps to.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::graph::format::archive::{self, Archive};
use crate::graph::model::*;
use crate::graph::resolve::SymbolTable;
use crate::graph::Limits;
use crate::host::loader::{self as host, HostResolver, NamedLibrary, SharedLibrary, COMPILER_RUNTIME_LIBRARY};
use crate::support::input::InputData;

/// The profiling runtime the compiler driver links for code built with
/// `--coverage` (or `-fprofile-arcs`), found by the calls such code makes:
/// `__gcov_*` for GCC's libgcov.a (beside libgcc.a), `llvm_gcda_*` and
/// `llvm_gcov_init` for clang's `libclang_rt.profile-<cpu>.a`. Code built
/// with clang's `-fprofile-instr-generate` calls nothing: it has counter
/// sections, and the driver adds `-u __llvm_profile_runtime` (the member
/// that writes `default.profraw` at exit), returned here as a root. The
/// archives load with the command line's, so that their members' needs
/// (atexit, getenv, ...) are met as the objects' are.
pub(super) fn profiling_runtime(table: &SymbolTable, graphs: &[LinkGraph]) -> (Vec<Archive>, Option<&'static str>) {
    let (mut gcc, mut clang) = (false, false);
    for name in table.undefined_strong_names() {
        gcc |= name.starts_with("__gcov_");
        clang |= name.starts_with("llvm_gcda_") || name.starts_with("llvm_gcov_");
    }
    let instrumented =
        graphs.iter().any(|graph| graph.sections.iter().any(|section| section.name == "__llvm_prf_cnts"));
    clang |= instrumented;
    let gcov = || crate::graph::libsearch::static_compiler_runtime().map(|libgcc| libgcc.with_file_name("libgcov.a"));
    let clang_profile =
        || crate::host::driver_runtime::clang_runtime_library(crate::support::machine::clang_runtime!("profile", ".a"));
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
/// What loading libgcc.a's members works on (see [`StaticRuntime::load_if_needed`]).
pub(super) struct StaticRuntime<'a> {
    pub table: &'a mut SymbolTable,
    pub graphs: &'a mut Vec<LinkGraph>,
    pub host: &'a mut HostResolver,
    pub libraries: &'a [SharedLibrary],
    /// What each member goes through as it joins the link.
    pub admit: &'a mut dyn FnMut(&mut LinkGraph) -> Result<()>,
}

impl StaticRuntime<'_> {
    pub fn load_if_needed(&mut self, limits: &Limits) -> Result<()> {
        // libgcc's names all begin with two underscores.
        let missing = self
            .table
            .undefined_strong_names()
            .filter(|name| name.starts_with("__") && !crate::graph::resolve::may_be_linker_defined(name))
            .any(|name| self.host.resolve(name, self.libraries, true, &host::no_program_definitions).is_none());
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
        let loaded = archive::load_needed(&mut archive, self.table, self.graphs, &[], limits, &mut *self.admit)?;
        log::debug!("{} members of {} loaded", loaded, path.display());
        Ok(())
    }
}

/// The runtime's `_init`/`_fini` wrappers the objects need: those whose
/// `.init` (`.fini`) sections hold code, unless they define `_init`
/// (`_fini`) themselves, as crti.o does around the same fragments.
pub(super) fn init_code_wrappers_needed(graphs: &[LinkGraph], table: &SymbolTable) -> Vec<&'static str> {
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

/// jitrun's own version of a function the image calls instead of libc's
/// (see `graph::runtime`): the host's, and the diagnostics' (`_exit` for
/// `--report`, `__assert_fail` and the like for crash reports).
pub(super) fn jitruns_own_function(name: &str, replaces_allocator: bool) -> Option<u64> {
    crate::host::runtime::host_function(name, replaces_allocator)
        .or_else(|| crate::diagnostics::report::host_function(name).map(|a| a as u64))
        .or_else(|| crate::diagnostics::crash::host_function(name).map(|a| a as u64))
}

/// What `g++` links besides libc.
const CXX_RUNTIME_LIBRARIES: [&str; 3] = ["libstdc++.so.6", "libm.so.6", COMPILER_RUNTIME_LIBRARY];

/// The libraries `g++` names (`-lstdc++ -lm`, after the command line's)
/// for objects compiled from C++ ([`LinkGraph::built_from_cxx`]) that
/// [`load_runtime_libraries_if_needed`] did not load: named here as the
/// command line's libraries are, on demand (Debian's `g++` links with
/// `--as-needed`: a program that calls only `sqrt` gets libm, not
/// libstdc++), or outright with `--no-as-needed`. Those already loaded or
/// named are left alone. (libgcc_s, which `g++` names as needed too, loads
/// during resolution for what still misses.)
pub(super) fn name_cxx_runtime(host: &mut HostResolver, libraries: &[SharedLibrary], as_needed: bool) {
    for name in ["libstdc++", "libm"] {
        let already = host.named().iter().any(|n| {
            matches!(n, NamedLibrary::OnDemand { path, .. } | NamedLibrary::Outright { path, .. } if is_library(path, name))
        });
        if already || libraries.iter().any(|l| is_library(&l.path, name)) {
            continue;
        }
        let path = crate::graph::ldcache::system_library(&format!("{}.so.6", name));
        let file = match InputData::open(&path) {
            Ok(file) => Arc::new(file),
            Err(e) => {
                log::debug!("C++ runtime library: {:#}", e);
                continue;
            }
        };
        let exports = if as_needed { crate::graph::format::dynamic::ExportTable::parse(file.bytes()) } else { None };
        log::debug!("{} named for the objects compiled from C++, as g++ does", path.display());
        host.name(match exports {
            Some(exports) => NamedLibrary::OnDemand { path, file, exports },
            None => NamedLibrary::Outright { path, file },
        });
    }
}

/// Whether `path` is library `name` (`libm` for `/lib/x86_64-linux-gnu/libm.so.6`).
fn is_library(path: &std::path::Path, name: &str) -> bool {
    path.file_name()
        .and_then(|f| f.to_str())
        .is_some_and(|f| f.strip_prefix(name).is_some_and(|rest| rest.starts_with(".so") || rest.starts_with('-')))
}

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
pub(super) fn load_runtime_libraries_if_needed(
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
