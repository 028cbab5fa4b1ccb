//! Runtime libraries the compiler driver adds for code built with
//! `-fopenmp` or `-fsanitize=...`: `cc -fsanitize=undefined foo.o` links
//! libubsan, `cc -fopenmp foo.o` libgomp. jitrun sees only the objects, so
//! it recognizes such code by the names it calls (`__ubsan_handle_*`,
//! `GOMP_*`) and loads the same libraries.
//!
//! The address and thread sanitizers replace malloc and watch every
//! thread, so their runtime must be the process's first library (loaded
//! later, it says so and stops the process). For them the link fails with
//! [`RuntimeMustComeFirst`], and the command line starts jitrun again with
//! the library in `LD_PRELOAD` (restored for the program once it started).

use std::ffi::CStr;
use std::path::PathBuf;

/// A runtime library that a compiler flag brings in.
pub struct DriverRuntime {
    /// The flag whose code calls it, for messages.
    pub flag: &'static str,
    /// What such code's calls into the runtime are named like.
    prefixes: &'static [&'static str],
    /// The library, as `ldcache::lookup` takes it (`libgomp.so` finds
    /// `libgomp.so.1`).
    library: &'static str,
    /// What clang links instead, when clang built the code: a library of
    /// its own resource directory (`libclang_rt.*`), else one the cache
    /// has. Used only if installed.
    clang_library: Option<&'static str>,
    /// A function the runtime defines: whether it is in the process already.
    defines: &'static CStr,
    /// Whether it must be loaded before everything else (`LD_PRELOAD`).
    pub must_come_first: bool,
}

/// What `gcc` and `clang` link for each flag: code clang built gets
/// clang's runtimes when they are installed (their messages differ: clang's
/// UBSan adds a `SUMMARY:` line and handles deadly signals), else GCC's.
/// For one flag the first runtime that the code calls is the one: clang's
/// OpenMP code (`__kmpc_*`) gets LLVM's libomp, whose `omp_*` functions it
/// must use, not libgomp's.
pub const DRIVER_RUNTIMES: [DriverRuntime; 6] = [
    DriverRuntime {
        flag: "-fopenmp",
        prefixes: &["__kmpc_"],
        library: "libomp.so",
        clang_library: None,
        defines: c"__kmpc_fork_call",
        must_come_first: false,
    },
    DriverRuntime {
        flag: "-fopenmp",
        prefixes: &["GOMP_", "GOACC_", "omp_"],
        library: "libgomp.so",
        clang_library: Some("libomp.so"),
        defines: c"GOMP_parallel",
        must_come_first: false,
    },
    DriverRuntime {
        flag: "-fsanitize=undefined",
        prefixes: &["__ubsan_handle_"],
        library: "libubsan.so",
        clang_library: Some(crate::support::machine::clang_runtime!("ubsan_standalone", ".so")),
        defines: c"__ubsan_handle_add_overflow",
        must_come_first: false,
    },
    DriverRuntime {
        flag: "-fsanitize=address",
        prefixes: &["__asan_"],
        library: "libasan.so",
        clang_library: Some(crate::support::machine::clang_runtime!("asan", ".so")),
        defines: c"__asan_init",
        must_come_first: true,
    },
    DriverRuntime {
        flag: "-fsanitize=thread",
        prefixes: &["__tsan_"],
        library: "libtsan.so",
        // Not clang's libclang_rt.tsan-x86_64.so: preloaded, it crashes as
        // the process starts (libstdc++'s constructor calls its
        // `__cxa_atexit` interceptor before it is initialized; even
        // `LD_PRELOAD=... /bin/true` dies). clang links its static runtime
        // natively, and GCC's runs clang's code.
        clang_library: None,
        defines: c"__tsan_init",
        must_come_first: true,
    },
    DriverRuntime {
        flag: "-fsanitize=leak",
        // LeakSanitizer instruments nothing: objects built with it look
        // like any others, and only `--sanitize leak` asks for its runtime.
        prefixes: &[],
        library: "liblsan.so",
        // clang's standalone runtime is a static archive only.
        clang_library: None,
        // AddressSanitizer's runtime defines it too: it runs LeakSanitizer.
        defines: c"__lsan_do_leak_check",
        must_come_first: true,
    },
];

impl DriverRuntime {
    /// Whether code that calls `name` was built with this runtime's flag.
    pub fn is_called_as(&self, name: &str) -> bool {
        self.prefixes.iter().any(|p| name.starts_with(p))
    }

    /// Whether the runtime is in the process already (preloaded, or a
    /// library that needed it).
    pub fn is_loaded(&self) -> bool {
        crate::host::loader::lookup_global(self.defines).is_some()
    }

    /// The library for code built by clang (`clang`) or gcc: where the
    /// dynamic loader's cache or clang's resource directory has it, else
    /// the bare name for `dlopen`'s own search.
    pub fn path(&self, clang: bool) -> PathBuf {
        let clangs = self.clang_library.filter(|_| clang).and_then(|name| match name.strip_prefix("libclang_rt.") {
            Some(_) => clang_runtime_library(name),
            None => crate::graph::ldcache::lookup(name),
        });
        clangs.or_else(|| crate::graph::ldcache::lookup(self.library)).unwrap_or_else(|| PathBuf::from(self.library))
    }

    /// The library's name without its version (`libasan.so`), for code
    /// built by clang (`clang`) or gcc.
    pub fn library(&self, clang: bool) -> &'static str {
        self.clang_library.filter(|_| clang).unwrap_or(self.library)
    }
}

/// `name` in the newest clang's runtime directory
/// (`/usr/lib/llvm-N/lib/clang/VERSION/lib/linux`), if installed.
pub(crate) fn clang_runtime_library(name: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .ok()?
        .flatten()
        .filter(|llvm| llvm.file_name().to_string_lossy().starts_with("llvm-"))
        .filter_map(|llvm| std::fs::read_dir(llvm.path().join("lib/clang")).ok())
        .flat_map(|versions| versions.flatten().map(|v| v.path().join("lib/linux").join(name)))
        .filter(|path| path.is_file())
        .collect();
    // The highest version: compare the numbers, not the text ("9" > "14").
    let version = |path: &PathBuf| -> Vec<u32> {
        let dir = path.ancestors().nth(3).and_then(|v| v.file_name()).map(|v| v.to_string_lossy().into_owned());
        dir.unwrap_or_default().split('.').map(|n| n.parse().unwrap_or(0)).collect()
    };
    found.sort_by_key(version);
    found.pop()
}

/// The link needs `runtime`, which must be the process's first library and
/// is not loaded: start again with `library` in `LD_PRELOAD`.
#[derive(Debug)]
pub struct RuntimeMustComeFirst {
    /// The flag the code was built with.
    pub flag: &'static str,
    /// A name the code calls, for the message; empty when `--sanitize` asked.
    pub symbol: String,
    pub library: PathBuf,
    /// Libraries the link loads that the runtime intercepts calls into
    /// (the C++ runtime's `__cxa_throw`, `operator new`): it finds what it
    /// wraps when it starts, so they must be loaded then too, after it.
    pub with: Vec<PathBuf>,
}

impl std::fmt::Display for RuntimeMustComeFirst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.symbol.as_str() {
            "" => write!(f, "{} (--sanitize) asks for its runtime", self.flag)?,
            symbol => write!(f, "`{}` is called by code built with {}, whose runtime", symbol, self.flag)?,
        }
        write!(
            f,
            " {} must be loaded before any other library (as LD_PRELOAD={} would)",
            self.library.display(),
            self.library.display()
        )
    }
}

impl std::error::Error for RuntimeMustComeFirst {}

/// Whether a runtime that must come first (ASan's, TSan's) is in the
/// process. Such a runtime is preloaded, so without `LD_PRELOAD` nothing
/// is looked up.
pub fn preloaded_sanitizer() -> bool {
    !crate::host::loader::preload_list().is_empty()
        && DRIVER_RUNTIMES.iter().any(|runtime| runtime.must_come_first && runtime.is_loaded())
}

/// Set by the command line when [`preloaded_sanitizer`] said so at start:
/// links then list the image as a module for the sanitizer's symbolizer.
static SANITIZER_PRELOADED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records that a sanitizer's runtime was preloaded (see
/// [`SANITIZER_PRELOADED`]): it numbers and watches every thread the
/// process starts, so links start none of their own.
pub fn note_sanitizer_preloaded() {
    SANITIZER_PRELOADED.store(true, std::sync::atomic::Ordering::Relaxed);
    crate::support::threads::forbid_helper_threads();
}

/// Whether [`note_sanitizer_preloaded`] was called.
pub fn sanitizer_preloaded_noted() -> bool {
    SANITIZER_PRELOADED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether ThreadSanitizer's runtime is in the process: it reports a
/// thread that ended without being joined or detached as a leak. Looked up
/// once (a preloaded runtime is there from the start): the answer is also
/// needed where `dlsym` must not run, when a crash starts a thread.
pub fn thread_sanitizer_is_loaded() -> bool {
    static LOADED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOADED.get_or_init(|| DRIVER_RUNTIMES[4].is_loaded())
}

/// A function a sanitizer runtime calls if the program defines it: the
/// runtime keeps a weak definition (or a weak reference) that the
/// executable's definition overrides. The runtime started before the image
/// existed, so the jitrun executable defines them all (see `main.rs`) and
/// answers with the program's: [`ProgramHook::read_at_start`] ones from the
/// environment of a restart, the others by calling the program's.
pub struct ProgramHook {
    pub name: &'static str,
    /// Where a restarted jitrun finds the program's answer to a hook
    /// [`ProgramHook::read_at_start`]: `JITRUN_HOOK_` and the name.
    pub variable: &'static CStr,
    /// Read once, as the runtime starts (options, suppressions for
    /// interceptors): the program's answer needs a restart to count.
    pub read_at_start: bool,
    /// The runtime that calls it: `DRIVER_RUNTIMES[runtime]`.
    runtime: usize,
}

impl ProgramHook {
    /// Whether the runtime that calls this hook is in the process.
    pub fn runtime_is_loaded(&self) -> bool {
        DRIVER_RUNTIMES[self.runtime].is_loaded()
    }
}

const ASAN: usize = 3;
const TSAN: usize = 4;
const UBSAN: usize = 2;
const LSAN: usize = 5;

/// The hooks GCC's and LLVM's sanitizer runtimes call (LeakSanitizer's are
/// answered when it runs inside AddressSanitizer's runtime too).
pub const PROGRAM_HOOKS: [ProgramHook; 9] = [
    ProgramHook {
        name: "__asan_default_options",
        variable: c"JITRUN_HOOK___asan_default_options",
        read_at_start: true,
        runtime: ASAN,
    },
    ProgramHook {
        name: "__asan_default_suppressions",
        variable: c"JITRUN_HOOK___asan_default_suppressions",
        read_at_start: true,
        runtime: ASAN,
    },
    ProgramHook {
        name: "__lsan_default_options",
        variable: c"JITRUN_HOOK___lsan_default_options",
        read_at_start: true,
        runtime: LSAN,
    },
    ProgramHook {
        name: "__ubsan_default_options",
        variable: c"JITRUN_HOOK___ubsan_default_options",
        read_at_start: true,
        runtime: UBSAN,
    },
    ProgramHook {
        name: "__tsan_default_options",
        variable: c"JITRUN_HOOK___tsan_default_options",
        read_at_start: true,
        runtime: TSAN,
    },
    ProgramHook {
        name: "__tsan_default_suppressions",
        variable: c"JITRUN_HOOK___tsan_default_suppressions",
        read_at_start: true,
        runtime: TSAN,
    },
    ProgramHook {
        name: "__lsan_default_suppressions",
        variable: c"JITRUN_HOOK___lsan_default_suppressions",
        read_at_start: false,
        runtime: LSAN,
    },
    ProgramHook {
        name: "__lsan_is_turned_off",
        variable: c"JITRUN_HOOK___lsan_is_turned_off",
        read_at_start: false,
        runtime: LSAN,
    },
    ProgramHook {
        name: "__asan_on_error",
        variable: c"JITRUN_HOOK___asan_on_error",
        read_at_start: false,
        runtime: ASAN,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_name_their_runtime() {
        let flag_of = |name: &str| DRIVER_RUNTIMES.iter().find(|r| r.is_called_as(name)).map(|r| r.flag);
        assert_eq!(flag_of("GOMP_parallel"), Some("-fopenmp"));
        assert_eq!(flag_of("omp_get_thread_num"), Some("-fopenmp"));
        assert_eq!(flag_of("__ubsan_handle_add_overflow"), Some("-fsanitize=undefined"));
        assert_eq!(flag_of("__asan_report_store4"), Some("-fsanitize=address"));
        assert_eq!(flag_of("__tsan_write4"), Some("-fsanitize=thread"));
        assert_eq!(flag_of("printf"), None);
        assert_eq!(flag_of("__kmpc_fork_call"), Some("-fopenmp"));
        assert!(DRIVER_RUNTIMES[4].flag.ends_with("thread"), "thread_sanitizer_is_loaded's index");
        assert!(DRIVER_RUNTIMES[LSAN].flag.ends_with("leak") && DRIVER_RUNTIMES[LSAN].must_come_first);
        for hook in &PROGRAM_HOOKS {
            // Each hook's runtime by its prefix (LeakSanitizer's by flag:
            // no code calls into it).
            let prefix = hook.name.replace("_default_options", "_handle_x");
            let runtime = match prefix.strip_prefix("__lsan_") {
                Some(_) => DRIVER_RUNTIMES.iter().position(|r| r.flag == "-fsanitize=leak"),
                None => DRIVER_RUNTIMES.iter().position(|r| r.is_called_as(&prefix)),
            };
            assert_eq!(runtime, Some(hook.runtime), "{}", hook.name);
            assert_eq!(hook.variable.to_str().ok(), Some(format!("JITRUN_HOOK_{}", hook.name)).as_deref());
        }
    }
}
