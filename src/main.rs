//! The thin binary: parse arguments, set up logging, call the library, map
//! the outcome to an exit code.
#![no_main]

// An empty initialized thread-local section aligned to 128 bytes, kept by
// the linker (`R`, SHF_GNU_RETAIN), so that jitrun's TLS block, and with
// it every thread's static TLS area, is aligned so: glibc then places the
// image's thread-locals in static TLS with any alignment up to that (see
// `jitrun::host::tls::STATIC_TLS_ALIGNMENT`). In the first object of the link,
// so that it comes first in the segment and takes no room there.
std::arch::global_asm!(
    ".pushsection .tdata.jitrun_static_tls_alignment,\"awTR\",@progbits",
    ".p2align {}",
    ".popsection",
    const jitrun::host::tls::STATIC_TLS_ALIGNMENT.trailing_zeros(),
);

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};
use jitrun::cli::{Cli, Input};
use jitrun::graph::resolve::UnresolvedSymbols;
use jitrun::image::batch::{self, BatchDefaults};
use jitrun::image::runs::{self as run, StdinSource};
use jitrun::{GlobalValue, Image, Limits, LinkOptions, Linker, RunOutcome, RunSpec, RunStatus, EXIT_JITRUN_ERROR};

/// Set when jitrun has re-executed itself with more static TLS, to the
/// original `GLIBC_TUNABLES` (see [`reexec_with`]); removed again at
/// start-up so the program sees the environment it was given.
const TLS_REEXEC_ENV: &str = "JITRUN_TLS_REEXEC";
/// The same for a sanitizer runtime put in `LD_PRELOAD`.
const PRELOAD_REEXEC_ENV: &str = "JITRUN_PRELOAD_REEXEC";
/// The same for the program's answers to sanitizer hooks (see [`sanitizer_hooks`]).
const HOOKS_REEXEC_ENV: &str = "JITRUN_HOOKS_REEXEC";
/// The same for a module that aligns static TLS put in `LD_PRELOAD`.
const TLS_ALIGN_REEXEC_ENV: &str = "JITRUN_TLS_ALIGN_REEXEC";
/// Set for that restart: the alignment and the module's path.
const TLS_ALIGN_ENV: &str = "JITRUN_TLS_ALIGN";

/// jitrun's allocations stay out of the program's heap (see `jitrun::support::heap`).
#[global_allocator]
static HEAP: jitrun::support::heap::JitrunHeap = jitrun::support::heap::JitrunHeap;

/// The C entry point, without Rust's runtime set-up: that set-up reads
/// `/proc/self/maps` for a stack guard (allocating and freeing memory the
/// program would then find in its heap), installs a SIGSEGV handler and
/// ignores SIGPIPE, all of which a C program does not expect. `std` still
/// gets the arguments from glibc.
#[no_mangle]
// The C runtime calls it with its own argv: the signature is C's.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: the C runtime's own argc and argv, as the kernel laid them out.
    unsafe { jitrun::image::note_argument_area(argc, argv) };
    jitrun::host::loader::note_startup_objects();
    // Without Rust's runtime set-up, nothing here changes SIGPIPE, SIGSEGV
    // or SIGBUS: the program gets them as they are.
    jitrun::image::keep_signal_dispositions_for_program();
    real_main();
    0
}

fn real_main() {
    // Asked before the environment loses the preload it started with.
    let sanitizer_preloaded = jitrun::host::driver_runtime::preloaded_sanitizer();
    sanitizer_hooks::keep_answers_from_restart();
    restore_environment_after_reexec();
    note_preloaded_tls_alignment();
    // Parse and link on this thread, which then runs the program. jitrun's
    // own memory comes from its own heap (`jitrun::support::heap`), so the program's
    // heap is as fresh as in a native process, where early allocations come
    // back zeroed (programs that read uninitialized heap memory depend on
    // it), and the program runs alone as natively (`unshare(CLONE_NEWUSER)`
    // and gtest's death tests need one thread): the link's helper threads
    // are joined. (An earlier link thread, for a malloc arena of its own,
    // cost ~0.1-0.15 ms per run to start and retire.) A sanitizer's runtime
    // numbers threads as they start: the program's first is T1, as natively.
    if sanitizer_preloaded {
        jitrun::host::driver_runtime::note_sanitizer_preloaded();
    }
    let (cli, linked) = parse_and_link();
    // What the program's runs need to show their own command line.
    jitrun::image::prepare_argument_area();
    // SAFETY: the link's helper threads were joined.
    unsafe { jitrun::image::declare_single_threaded() };
    let result = linked.and_then(|outcome| match outcome {
        Linked::Done(code) => Ok(code),
        Linked::Run(image, crash_table_coming) => run(&cli, *image, crash_table_coming),
    });
    match result {
        Ok(code) => std::process::exit(code),
        Err(mut e) => {
            let tls = e.downcast_ref::<jitrun::host::tls::TlsExhausted>().map(|exhausted| exhausted.needed);
            let first_library = e.downcast_ref::<jitrun::host::driver_runtime::RuntimeMustComeFirst>();
            let over_aligned = e.downcast_ref::<jitrun::host::tls::TlsOverAligned>().map(|o| o.align);
            if tls.is_some() || first_library.is_some() || over_aligned.is_some() {
                // A restart reads the inputs again: a pipe's bytes are gone.
                match input_not_from_a_file(&cli) {
                    Some(pipe) => {
                        e = e.context(format!(
                            "jitrun would have to start again, and cannot read {} a second time (a pipe, not a file)",
                            pipe.display()
                        ))
                    }
                    None => {
                        tls.into_iter().for_each(reexec_with_more_static_tls);
                        over_aligned.into_iter().for_each(reexec_with_aligned_static_tls);
                        first_library.into_iter().for_each(reexec_with_preloaded_runtime);
                    }
                }
            }
            let message = one_line(&format!("{:#}", e));
            if let Some(path) = &cli.report {
                if let Err(report_error) = jitrun::diagnostics::report::write_error(path, &message) {
                    eprintln!("jitrun: error: {}", one_line(&format!("{:#}", report_error)));
                }
            }
            eprintln!("jitrun: error: {}", message);
            std::process::exit(EXIT_JITRUN_ERROR);
        }
    }
}

/// Parses the command line and links.
fn parse_and_link() -> (Cli, Result<Linked>) {
    let (cli, inputs) = match Cli::parse_ordered(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_JITRUN_ERROR } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    init_logging(cli.verbose);
    let mut linked = link(&cli, &inputs);
    // The link model, from which a crash builds its table (most runs
    // never crash; see crash::build_table_when_needed).
    let deferred = match &mut linked {
        Ok(Linked::Run(image, _)) => image.take_deferred_link_info(),
        _ => None,
    };
    match deferred {
        Some(mut deferred) if !cli.no_crash_handler => {
            deferred.release_unneeded();
            jitrun::diagnostics::crash::build_table_when_needed(true, move || {
                jitrun::diagnostics::crash::prepare_from_link_model(deferred, true)
            });
            if let Ok(Linked::Run(_, table_coming)) = &mut linked {
                *table_coming = true;
            }
        }
        // The process's exit frees it: freeing it now would only delay
        // the program. Kept reachable, so that LeakSanitizer does not
        // report it as the program's leak.
        Some(deferred) => {
            KEPT_LINK_MODEL.store(Box::into_raw(Box::new(deferred)), std::sync::atomic::Ordering::Release)
        }
        None => {}
    }
    (cli, linked)
}

/// An input that is not a regular file (a pipe, `/dev/stdin`): a restart
/// could not read it a second time.
fn input_not_from_a_file(cli: &Cli) -> Option<&std::path::PathBuf> {
    cli.inputs.iter().find(|p| !std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

/// Escapes control characters, so that names taken from a corrupt file
/// (a symbol name with a newline) cannot split the one error line.
fn one_line(message: &str) -> String {
    message.chars().flat_map(|c| if c.is_control() { c.escape_default().collect() } else { vec![c] }).collect()
}

/// The link model of a run without crash reports (see `real_main`).
static KEPT_LINK_MODEL: std::sync::atomic::AtomicPtr<jitrun::graph::deferred::DeferredLinkInfo> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// The outcome of a link.
enum Linked {
    /// Nothing to run (`--noexec`, `--print-unresolved`): exit with this.
    Done(i32),
    /// The image, and whether the crash handler's table is left for a
    /// crash (or an isolated run's parent) to build.
    Run(Box<Image>, bool),
}

/// glibc sizes its static TLS surplus at process start from the
/// `glibc.rtld.optional_static_tls` tunable; the only way to get more is to
/// start again with a larger value. Returns only if that was tried already.
fn reexec_with_more_static_tls(needed: u64) {
    if restarted_with(TLS_REEXEC_ENV) {
        return;
    }
    let original = std::env::var_os("GLIBC_TUNABLES").unwrap_or_default();
    let size = (needed + (64 << 10)).next_power_of_two();
    let mut tunables = std::ffi::OsString::from(format!("glibc.rtld.optional_static_tls={}", size));
    if !original.is_empty() {
        tunables = [original, tunables].join(std::ffi::OsStr::new(":"));
    }
    reexec_with(&[("GLIBC_TUNABLES", tunables)], TLS_REEXEC_ENV);
}

/// Thread-locals aligned past jitrun's own static TLS alignment fit only
/// once the area is aligned so, which a module loaded at start-up does:
/// start again with one of that alignment first in `LD_PRELOAD` (written to
/// a file the restart removes, see [`note_preloaded_tls_alignment`]).
/// Returns only if that was tried already or cannot be done.
fn reexec_with_aligned_static_tls(align: u64) {
    /// glibc aligns the static TLS area with `memalign`; past a few pages
    /// the padding in every thread's stack would be absurd.
    const MOST: u64 = 1 << 16;
    if restarted_with(TLS_ALIGN_REEXEC_ENV) || !align.is_power_of_two() || align > MOST {
        return;
    }
    let module =
        jitrun::host::tls::generated_module_dir().join(format!("jitrun-tls-align-{}-{}.so", std::process::id(), align));
    if let Err(e) = std::fs::write(&module, jitrun::host::tls::alignment_module(align)) {
        log::warn!("{}: cannot write the TLS alignment module: {}", module.display(), e);
        return;
    }
    let preload = preloaded_before_the_users(module.clone().into_os_string());
    let mut note = std::ffi::OsString::from(format!("{} ", align));
    note.push(&module);
    reexec_with(&[("LD_PRELOAD", preload), (TLS_ALIGN_ENV, note)], TLS_ALIGN_REEXEC_ENV);
    let _ = std::fs::remove_file(&module);
}

/// In a restart made by [`reexec_with_aligned_static_tls`]: records the
/// alignment the preloaded module gave static TLS, and removes its file
/// (mapped by now). A further restart writes it again ([`reexec_with`]).
fn note_preloaded_tls_alignment() {
    if let Some((align, module)) = preloaded_tls_alignment() {
        jitrun::host::tls::note_static_tls_alignment(align);
        let _ = std::fs::remove_file(module);
    }
}

/// The alignment and module path of this process's TLS alignment restart.
fn preloaded_tls_alignment() -> Option<(u64, std::path::PathBuf)> {
    let carried = CARRIED_OVER.get()?.iter().find(|c| c.marker == TLS_ALIGN_REEXEC_ENV)?;
    let (_, note) = carried.values.iter().find(|(name, _)| name == TLS_ALIGN_ENV)?;
    let (align, module) = note.to_str()?.split_once(' ')?;
    Some((align.parse().ok()?, module.into()))
}

/// The address and thread sanitizers' runtimes work only as the first
/// library of the process: start again with it in `LD_PRELOAD` (before the
/// user's own preloads), which gets its original value back at start-up,
/// so the program and what it runs see the environment they were given.
/// (The restarted jitrun links on its main thread: the runtime sees no
/// thread of jitrun's.) Returns only if that was tried already.
fn reexec_with_preloaded_runtime(first: &jitrun::host::driver_runtime::RuntimeMustComeFirst) {
    if restarted_with(PRELOAD_REEXEC_ENV) {
        return;
    }
    let runtime = std::iter::once(&first.library).chain(&first.with).map(|p| p.as_os_str());
    let preload = preloaded_before_the_users(runtime.collect::<Vec<_>>().join(std::ffi::OsStr::new(":")));
    reexec_with(&[("LD_PRELOAD", preload)], PRELOAD_REEXEC_ENV);
}

/// `LD_PRELOAD` with `first` ahead of the user's own preloads, if any.
fn preloaded_before_the_users(first: std::ffi::OsString) -> std::ffi::OsString {
    match std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        Some(original) => [first, original].join(std::ffi::OsStr::new(":")),
        None => first,
    }
}

/// Runs jitrun again with the same arguments and the environment
/// `changes`. The marker `marker` records each changed variable's original
/// value (`NAME=VALUE`, or `NAME` alone if it was unset), one per line,
/// for [`restore_environment_after_reexec`]. Returns only if exec failed.
fn reexec_with(changes: &[(&str, std::ffi::OsString)], marker: &str) {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut originals = Vec::new();
    for (name, _) in changes {
        originals.extend_from_slice(name.as_bytes());
        if let Some(value) = std::env::var_os(name) {
            originals.push(b'=');
            originals.extend_from_slice(value.as_bytes());
        }
        originals.push(b'\n');
    }
    log::debug!("re-executing with {:?}", changes);
    // The environment in its order (Command would sort it), changed in place.
    let mut environment: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    let mut set =
        |name: &std::ffi::OsStr, value: &std::ffi::OsStr| match environment.iter_mut().find(|(n, _)| n == name) {
            Some(variable) => variable.1 = value.to_os_string(),
            None => environment.push((name.to_os_string(), value.to_os_string())),
        };
    // An earlier restart's changes hold again (the runtime stays preloaded
    // when more static TLS is needed too), its TLS alignment module too.
    if let Some((align, module)) = preloaded_tls_alignment() {
        let _ = std::fs::write(module, jitrun::host::tls::alignment_module(align));
    }
    for carried in CARRIED_OVER.get().into_iter().flatten() {
        set(carried.marker.as_ref(), &carried.originals);
        carried.values.iter().for_each(|(n, v)| set(n, v));
    }
    set(marker.as_ref(), &std::ffi::OsString::from_vec(originals));
    for (name, value) in changes {
        set(name.as_ref(), value);
    }
    let c_string = |bytes: &[u8]| std::ffi::CString::new(bytes).ok();
    let args: Option<Vec<_>> = std::env::args_os().map(|a| c_string(a.as_bytes())).collect();
    let env: Option<Vec<_>> =
        environment.iter().map(|(n, v)| c_string(&[n.as_bytes(), b"=", v.as_bytes()].concat())).collect();
    let (Some(args), Some(env)) = (args, env) else {
        log::warn!("cannot re-execute jitrun: a NUL byte in an argument or variable");
        return;
    };
    let pointers = |strings: &[std::ffi::CString]| {
        strings.iter().map(|s| s.as_ptr()).chain([std::ptr::null()]).collect::<Vec<_>>()
    };
    let (argv, envp) = (pointers(&args), pointers(&env));
    // SAFETY: null-terminated arrays of C strings that outlive the call;
    // execve returns only on failure.
    unsafe { libc::execve(c"/proc/self/exe".as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    log::warn!("cannot re-execute jitrun: {}", std::io::Error::last_os_error());
}

/// Undoes what [`reexec_with`] changed in the environment, and keeps what
/// it undid (see [`CarriedOver`]).
fn restore_environment_after_reexec() {
    use std::os::unix::ffi::OsStrExt;
    let mut carried_over = Vec::new();
    for marker in [TLS_REEXEC_ENV, PRELOAD_REEXEC_ENV, HOOKS_REEXEC_ENV, TLS_ALIGN_REEXEC_ENV] {
        let Some(originals) = std::env::var_os(marker) else { continue };
        if marker == PRELOAD_REEXEC_ENV {
            jitrun::host::loader::note_preload_at_start(std::env::var_os("LD_PRELOAD").unwrap_or_default());
        }
        let mut values = Vec::new();
        // SAFETY (of the environment changes): still single-threaded at start-up.
        for line in originals.as_bytes().split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let mut parts = line.splitn(2, |&b| b == b'=');
            let name = std::ffi::OsStr::from_bytes(parts.next().unwrap_or_default());
            values.push((name.to_os_string(), std::env::var_os(name).unwrap_or_default()));
            match parts.next() {
                Some(value) => std::env::set_var(name, std::ffi::OsStr::from_bytes(value)),
                None => std::env::remove_var(name),
            }
        }
        // Keep the marker out of the program's view (the retry is
        // remembered in CARRIED_OVER).
        std::env::remove_var(marker);
        carried_over.push(CarriedOver { marker, originals, values });
    }
    if !carried_over.is_empty() {
        jitrun::image::show_environment_as_given();
    }
    let _ = CARRIED_OVER.set(carried_over);
}

/// A restart's changes to the environment, undone at start-up (see
/// [`restore_environment_after_reexec`]), for a further restart to make again.
struct CarriedOver {
    marker: &'static str,
    originals: std::ffi::OsString,
    /// The variables as this process started with them.
    values: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

static CARRIED_OVER: std::sync::OnceLock<Vec<CarriedOver>> = std::sync::OnceLock::new();

/// Whether this process is a restart marked with `marker`: it is not tried twice.
fn restarted_with(marker: &str) -> bool {
    CARRIED_OVER.get().is_some_and(|carried| carried.iter().any(|c| c.marker == marker))
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "debug",
        _ => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default))
        .format_timestamp(None)
        .target(env_logger::Target::Stderr)
        .init();
}

/// `--print-unresolved`: the report on stdout (it is what was asked for),
/// a one-line summary on stderr, 125 when something is missing.
fn print_unresolved(linker: Linker) -> Result<i32> {
    match linker.link() {
        Ok(_) => Ok(0),
        Err(e) => match e.downcast_ref::<UnresolvedSymbols>() {
            Some(missing) => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(missing.report().as_bytes())?;
                stdout.flush()?;
                let n = missing.symbols.len();
                eprintln!("jitrun: error: {} undefined symbol{}", n, if n == 1 { "" } else { "s" });
                Ok(EXIT_JITRUN_ERROR)
            }
            None => Err(e),
        },
    }
}

fn link(cli: &Cli, inputs: &[Input]) -> Result<Linked> {
    if cli.report.is_some() {
        jitrun::diagnostics::report::intercept_immediate_exits();
    }
    let options = LinkOptions {
        search_paths: cli.library_path.clone(),
        defines: cli.defines().map_err(anyhow::Error::msg)?,
        aliases: cli.aliases().map_err(anyhow::Error::msg)?,
        wraps: cli.wrap.clone(),
        sanitize: cli.sanitize.clone(),
        roots: std::iter::once(&cli.entry).chain(&cli.undefined).cloned().collect(),
        // The report lists what --allow-unresolved would hide.
        allow_unresolved: cli.allow_unresolved && !cli.print_unresolved,
        static_libs: cli.static_libs,
        no_as_needed: cli.no_as_needed,
        export_dynamic: cli.export_dynamic,
        self_exe: cli.self_exe.clone(),
        base: cli.base,
        limits: Limits { max_image_size: cli.max_image_size, max_tls_size: cli.max_tls_size },
        // Maps, reports, checks and the perf map read the link info at once;
        // otherwise only the crash handler needs it, and it can wait.
        // Isolated runs get their crash table before the first fork.
        defer_link_info: cli.map.is_none() && cli.report.is_none() && cli.check.is_empty() && !cli.perf_map,
    };
    let mut linker = Linker::new(options);
    // Consecutive objects go in together so they are translated in parallel.
    let mut files = Vec::new();
    for input in inputs {
        match input {
            Input::File(path) => files.push(path.clone()),
            Input::Library(name) => {
                linker.add_files(&std::mem::take(&mut files))?;
                linker.add_library(name)?;
            }
            Input::WholeArchive(on) => {
                linker.add_files(&std::mem::take(&mut files))?;
                linker.set_whole_archive(*on);
            }
        }
    }
    linker.add_files(&files)?;
    if cli.print_unresolved {
        return print_unresolved(linker).map(Linked::Done);
    }
    let image = linker.link()?;
    let info = image.link_info();
    if let Some((destination, json)) = cli.map_request() {
        jitrun::diagnostics::map::write_map(info, json, &destination, cli.noexec)?;
    }
    if !cli.check.is_empty() {
        jitrun::diagnostics::check::run_files(&image, &cli.check)?;
    }
    if cli.perf_map {
        jitrun::diagnostics::map::write_perf_map(info, &jitrun::diagnostics::map::perf_map_path())?;
    }
    if cli.noexec {
        if let Some(path) = &cli.report {
            jitrun::diagnostics::report::write(
                path,
                &jitrun::diagnostics::report::head(info),
                jitrun::diagnostics::report::Outcome::NoExec,
            )?;
        }
        return Ok(Linked::Done(0));
    }
    Ok(Linked::Run(Box::new(image), false))
}

/// Runs the linked program on the main thread, like a native process.
fn run(cli: &Cli, mut image: Image, crash_table_coming: bool) -> Result<i32> {
    // Dropped before the image (a parameter): a hook must not call into
    // unmapped code, as LeakSanitizer's check at the exit of an isolated
    // runs' parent would.
    let _hooks = sanitizer_hooks::answer_with_the_programs(cli, &image);
    let info = image.link_info();
    // Before run_main: the report's exit hook must run after the image's
    // finalizer, and the crash handler must be in place before constructors.
    let sink = cli.report.as_deref().map(|path| jitrun::diagnostics::report::arm(path, info)).transpose()?;
    // Natively argv[0] is how the executable was named: with --self-exe, that file.
    let program = cli
        .argv0
        .clone()
        .or_else(|| cli.self_exe.clone().map(std::path::PathBuf::into_os_string))
        .unwrap_or_else(|| cli.inputs[0].clone().into_os_string());
    let sets = cli.sets().map_err(anyhow::Error::msg)?;
    // A program with its own `_start` ends with exit_group, after which
    // nothing of this process writes the report: it runs in a child.
    let isolated = cli.isolated() || (sink.is_some() && image.starts_like_a_process(&cli.entry));
    jitrun::diagnostics::crash::note_program_thread();
    if isolated && !cli.no_crash_handler {
        // Each forked run reports its own crash (into its captured stderr
        // in a batch); the table is built once, before the first fork.
        if crash_table_coming {
            jitrun::diagnostics::crash::wait_for_table();
        } else {
            jitrun::diagnostics::crash::prepare(info, true, None);
        }
    }
    if isolated {
        if sink.is_none() {
            // The crash table has what it needs (the map was written at
            // link time); every page kept would be paid for at each fork.
            image.release_link_info();
        }
        return match &cli.batch {
            Some(plan) => run_batch(cli, &image, plan, program, sets),
            None => run_isolated(cli, &image, program, sets),
        };
    }
    // This restores default signal actions, so the crash handler comes after.
    jitrun::image::prepare_process_for_program(&program);
    if cli.no_crash_handler {
    } else if crash_table_coming {
        // A crash builds the table (see crash::build_table_when_needed).
        jitrun::diagnostics::crash::activate();
    } else {
        jitrun::diagnostics::crash::install(info, true, sink);
    }
    for (name, value) in &sets {
        image.write_global(name, value)?;
    }
    // Runs before the last end with the image's finalizers; the last one
    // ends the way a native program does, with exit().
    let mut first_failure = None;
    for _ in 1..cli.repeat {
        let status = image.run_main_with_os_args(&cli.entry, &program, &cli.args)?;
        image.finalize();
        first_failure = first_failure.or((status != 0).then_some(status));
    }
    if first_failure.is_none() && cli.report.is_none() {
        match image.run_main_then_exit_with_os_args(&cli.entry, &program, &cli.args)? {}
    }
    let status = image.run_main_with_os_args(&cli.entry, &program, &cli.args)?;
    image.exit(first_failure.unwrap_or(status))
}

/// `--isolate`, `--timeout`: each run a forked child, output passed through.
fn run_isolated(cli: &Cli, image: &Image, program: std::ffi::OsString, set: Vec<(String, GlobalValue)>) -> Result<i32> {
    run::stop_runs_on_termination_signals();
    // A child in its own process group reading the terminal would be
    // stopped (SIGTTIN), so it gets an empty stdin instead.
    let stdin = if std::io::stdin().is_terminal() { StdinSource::Bytes(Vec::new()) } else { StdinSource::Inherit };
    let spec = RunSpec {
        entry: cli.entry.clone(),
        argv0: program,
        args: cli.args.clone(),
        stdin,
        set,
        timeout: cli.timeout,
        ..RunSpec::default()
    };
    let rss_before = run::resident_set_kib();
    let mut first_failure: Option<RunOutcome> = None;
    let jobs = cli.jobs.unwrap_or(1) as usize;
    let result = image.run_repeated(&spec, cli.repeat as usize, jobs, |_, outcome| {
        if !outcome.succeeded() && first_failure.is_none() {
            first_failure = Some(outcome);
        }
    });
    result.map_err(die_if_interrupted)?;
    let kib = |rss: Option<u64>| rss.map_or_else(|| "unknown".to_string(), |k| format!("{} KiB", k));
    log::debug!(
        "parent RSS before {} isolated runs: {}, after: {}",
        cli.repeat,
        kib(rss_before),
        kib(run::resident_set_kib())
    );
    if cli.report.is_some() {
        settle_report(first_failure.as_ref().map(|f| &f.status), cli.timeout)?;
    }
    let Some(failure) = first_failure else { return Ok(0) };
    match failure.status {
        RunStatus::Exited(code) => Ok(code),
        RunStatus::Signaled(signal) => Ok(die_of_signal(signal)),
        RunStatus::Timeout => {
            eprintln!("jitrun: the program ran longer than {:?} and was killed", cli.timeout.unwrap_or_default());
            Ok(run::EXIT_TIMEOUT)
        }
        RunStatus::Error(message) => Err(anyhow::Error::msg(message)),
    }
}

/// Writes the outcome of the run that decides jitrun's exit status (`None`:
/// every run succeeded) into the `--report` file; an error is reported by
/// the caller's error path instead.
fn settle_report(deciding: Option<&RunStatus>, timeout: Option<std::time::Duration>) -> Result<()> {
    use jitrun::diagnostics::report::Outcome;
    let outcome = match deciding {
        None => Outcome::Exited(0),
        Some(RunStatus::Exited(code)) => Outcome::Exited(*code),
        Some(RunStatus::Signaled(signal)) => Outcome::Signal(*signal),
        Some(RunStatus::Timeout) => {
            Outcome::Timeout(timeout.map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)))
        }
        Some(RunStatus::Error(_)) => return Ok(()),
    };
    jitrun::diagnostics::report::settle(outcome)
}

/// `--batch`: one JSON result line per run on stdout.
fn run_batch(
    cli: &Cli,
    image: &Image,
    plan: &Path,
    program: std::ffi::OsString,
    set: Vec<(String, GlobalValue)>,
) -> Result<i32> {
    run::stop_runs_on_termination_signals();
    let text =
        std::fs::read_to_string(plan).with_context(|| format!("{}: cannot read the batch plan", plan.display()))?;
    let defaults = BatchDefaults {
        entry: cli.entry.clone(),
        argv0: program,
        args: cli.args.clone(),
        set,
        timeout: cli.timeout,
        output_limit: usize::try_from(cli.max_output).unwrap_or(usize::MAX),
    };
    let jobs = cli.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
    let progress = std::io::stderr().is_terminal();
    let mut out = std::io::stdout().lock();
    batch::run_plan(image, &text, &defaults, jobs, progress, &mut out).map_err(die_if_interrupted)?;
    Ok(0)
}

/// After the runs in flight were killed, die of the signal that stopped us.
fn die_if_interrupted(e: anyhow::Error) -> anyhow::Error {
    match e.downcast_ref::<run::Interrupted>() {
        Some(run::Interrupted(signal)) => std::process::exit(die_of_signal(*signal)),
        None => e,
    }
}

/// Ends jitrun by `signal` so the shell sees what the program died of;
/// returns the 128+N status if the signal does not end the process.
fn die_of_signal(signal: i32) -> i32 {
    // SAFETY: default disposition, then raising the signal at ourselves.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    128 + signal
}

/// The functions a sanitizer runtime calls if the executable defines them
/// (`__asan_default_options`, `__lsan_default_suppressions`, ...; see
/// `driver_runtime::PROGRAM_HOOKS`). The runtime starts before the image
/// exists and sees only jitrun's definitions, so jitrun defines them all
/// and answers with the program's: those the runtime calls later by
/// calling the program's; those it reads as it starts from the variables
/// of a restart, which jitrun makes once the program's answers (called
/// after the link, before its constructors, as natively) differ from what
/// the runtime was told. Defined in the executable only: a library user's
/// own program keeps its hooks.
mod sanitizer_hooks {
    use std::ffi::{c_char, c_int};
    use std::os::unix::ffi::OsStringExt;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

    use jitrun::host::driver_runtime::PROGRAM_HOOKS;
    use jitrun::Image;

    /// [`super::HOOKS_REEXEC_ENV`] as a C string, for `getenv` before `main`.
    const HOOKS_REEXEC_MARKER: &std::ffi::CStr = c"JITRUN_HOOKS_REEXEC";
    const _: () = assert!(same(super::HOOKS_REEXEC_ENV, "JITRUN_HOOKS_REEXEC"));

    /// What each hook read at start answered (its variable's value, or "").
    static ANSWERED_AT_START: [AtomicPtr<c_char>; PROGRAM_HOOKS.len()] =
        [const { AtomicPtr::new(std::ptr::null_mut()) }; PROGRAM_HOOKS.len()];
    /// The program's definition of each hook called later, once linked.
    static PROGRAMS: [AtomicUsize; PROGRAM_HOOKS.len()] = [const { AtomicUsize::new(0) }; PROGRAM_HOOKS.len()];

    /// The answer to hook `index` read at start. Called by the runtime as
    /// it starts, before `main`: no allocation (the sanitizer's allocator
    /// is not ready), only `getenv`.
    fn answer_at_start(index: usize) -> *const c_char {
        let answered = ANSWERED_AT_START[index].load(Ordering::Acquire);
        if !answered.is_null() {
            return answered;
        }
        // Only a restart's answers: the variables alone, from elsewhere,
        // must not change the runtime's options.
        // SAFETY: getenv with NUL-terminated names; the value lives as
        // long as the process's initial environment block.
        let restarted = unsafe { !libc::getenv(HOOKS_REEXEC_MARKER.as_ptr()).is_null() };
        // SAFETY: as above.
        let value = if restarted {
            unsafe { libc::getenv(PROGRAM_HOOKS[index].variable.as_ptr()) }
        } else {
            std::ptr::null_mut()
        };
        let value = if value.is_null() { c"".as_ptr() } else { value.cast_const() };
        ANSWERED_AT_START[index].store(value.cast_mut(), Ordering::Release);
        value
    }

    /// Takes the restart's answers before the environment loses them: a
    /// runtime loaded during the link (UBSan's) asks only then.
    pub fn keep_answers_from_restart() {
        for (index, hook) in PROGRAM_HOOKS.iter().enumerate() {
            if hook.read_at_start {
                answer_at_start(index);
            }
        }
    }

    /// The program's definition of hook `index`, if it has one.
    fn program(index: usize) -> Option<usize> {
        Some(PROGRAMS[index].load(Ordering::Acquire)).filter(|&address| address != 0)
    }

    /// Whether `a` and `b` are the same text (for the checks below).
    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Defines hook `PROGRAM_HOOKS[$index]` as read at start.
    macro_rules! answered_at_start {
        ($name:ident, $index:expr) => {
            const _: () = assert!(same(stringify!($name), PROGRAM_HOOKS[$index].name));
            const _: () = assert!(PROGRAM_HOOKS[$index].read_at_start);
            #[no_mangle]
            pub extern "C" fn $name() -> *const c_char {
                answer_at_start($index)
            }
        };
    }
    answered_at_start!(__asan_default_options, 0);
    answered_at_start!(__asan_default_suppressions, 1);
    answered_at_start!(__lsan_default_options, 2);
    answered_at_start!(__ubsan_default_options, 3);
    answered_at_start!(__tsan_default_options, 4);
    answered_at_start!(__tsan_default_suppressions, 5);

    const _: () = assert!(same(PROGRAM_HOOKS[6].name, "__lsan_default_suppressions"));
    const _: () = assert!(same(PROGRAM_HOOKS[7].name, "__lsan_is_turned_off"));
    const _: () = assert!(same(PROGRAM_HOOKS[8].name, "__asan_on_error"));

    /// The program's suppressions, read when LeakSanitizer checks; none by default.
    #[no_mangle]
    pub extern "C" fn __lsan_default_suppressions() -> *const c_char {
        match program(6) {
            // SAFETY: the program's `const char *__lsan_default_suppressions(void)`.
            Some(f) => unsafe { std::mem::transmute::<usize, extern "C" fn() -> *const c_char>(f)() },
            None => c"".as_ptr(),
        }
    }

    /// Whether the program turns leak checking off; not by default.
    #[no_mangle]
    pub extern "C" fn __lsan_is_turned_off() -> c_int {
        match program(7) {
            // SAFETY: the program's `int __lsan_is_turned_off(void)`.
            Some(f) => unsafe { std::mem::transmute::<usize, extern "C" fn() -> c_int>(f)() },
            None => 0,
        }
    }

    /// Called when AddressSanitizer reports an error; nothing by default.
    #[no_mangle]
    pub extern "C" fn __asan_on_error() {
        if let Some(f) = program(8) {
            // SAFETY: the program's `void __asan_on_error(void)`.
            unsafe { std::mem::transmute::<usize, extern "C" fn()>(f)() }
        }
    }

    /// The program's hooks called later, recorded while its image lives:
    /// dropping this forgets them (the runtimes' defaults answer again).
    pub struct ProgramsHooks;

    impl Drop for ProgramsHooks {
        fn drop(&mut self) {
            PROGRAMS.iter().for_each(|address| address.store(0, Ordering::Release));
        }
    }

    /// Gives the runtimes the program's hooks: records the definitions of
    /// those called later, and restarts jitrun if a hook read at start
    /// answers differently for the program (once; a program read from a
    /// pipe cannot be read again: a warning then).
    pub fn answer_with_the_programs(cli: &jitrun::cli::Cli, image: &Image) -> ProgramsHooks {
        let mut changes = Vec::new();
        for (index, hook) in PROGRAM_HOOKS.iter().enumerate() {
            let Some(address) = image.lookup(hook.name) else { continue };
            if !hook.runtime_is_loaded() {
                continue;
            }
            if !hook.read_at_start {
                PROGRAMS[index].store(address as usize, Ordering::Release);
                continue;
            }
            // SAFETY: a sanitizer hook is `const char *(void)`, which the
            // runtime calls before constructors run, as here.
            let answer = unsafe { image.call_string_function(hook.name) }.unwrap_or_default();
            // SAFETY: set by answer_at_start to a C string that lives on.
            let told = unsafe { std::ffi::CStr::from_ptr(answer_at_start(index)) };
            if answer != told.to_bytes() {
                changes.push((hook.variable.to_str().unwrap_or_default(), std::ffi::OsString::from_vec(answer)));
            }
        }
        if changes.is_empty() {
            return ProgramsHooks;
        }
        let names = changes.iter().map(|(v, _)| v.trim_start_matches("JITRUN_HOOK_")).collect::<Vec<_>>();
        match super::input_not_from_a_file(cli) {
            Some(pipe) => eprintln!(
                "jitrun: warning: the program's {} cannot take effect: the sanitizer read its options when jitrun \
                 started, and {} cannot be read a second time (a pipe, not a file)",
                names.join(", "),
                pipe.display()
            ),
            None if super::restarted_with(super::HOOKS_REEXEC_ENV) => {
                eprintln!("jitrun: warning: the program's {} answered differently when asked again", names.join(", "))
            }
            None => super::reexec_with(&changes, super::HOOKS_REEXEC_ENV),
        }
        ProgramsHooks
    }
}
