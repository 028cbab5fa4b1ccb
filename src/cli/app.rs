//! What the `jitrun` command does, from its C entry point to its exit
//! status: restarts, parsing, linking, then running once, isolated,
//! repeated or as a batch. `main.rs` only calls [`start`].

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::{launcher, relaunch, sanitizer_hooks, Cli, Input};
use crate::diagnostics::check::CheckedImage;
use crate::graph::resolve::UnresolvedSymbols;
use crate::graph::Limits;
use crate::image::batch::{self, BatchDefaults, BatchOptions};
use crate::image::runs::{self as run, GlobalValue, RunOutcome, RunSpec, RunStatus, StdinSource};
use crate::image::Image;
use crate::link::{LinkOptions, Linker};
use crate::support::EXIT_JITRUN_ERROR;

/// The C entry point's work, without Rust's runtime set-up (see `main.rs`):
/// notes what the process started with, then parses, links and runs, and
/// exits with the outcome.
///
/// # Safety
/// `argc` and `argv` are the C runtime's own, as the kernel laid them out.
pub unsafe fn start(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> ! {
    crate::support::program_break::note_start();
    // SAFETY: the caller's contract.
    unsafe { crate::image::note_argument_area(argc, argv) };
    crate::host::loader::note_startup_objects();
    // Without Rust's runtime set-up, nothing here changes SIGPIPE, SIGSEGV
    // or SIGBUS: the program gets them as they are.
    crate::image::keep_signal_dispositions_for_program();
    main_after_start();
    std::process::exit(0)
}

/// Everything after the C entry point: restart bookkeeping, parsing,
/// linking, running, and the exit status.
fn main_after_start() {
    // jitrun's memory is its own heap: glibc's is the program's, and is
    // left as a new process has it when the program starts.
    crate::host::glibc_heap::hand_over_to_the_program();
    // Asked before the environment loses the preload it started with.
    let sanitizer_preloaded = crate::host::driver_runtime::preloaded_sanitizer();
    sanitizer_hooks::keep_answers_from_restart();
    relaunch::restore_environment_after_reexec();
    relaunch::note_preloaded_tls_alignment();
    // Parse and link on this thread, which then runs the program. jitrun's
    // own memory comes from its own heap (`crate::support::heap`), so the program's
    // heap is as fresh as in a native process, where early allocations come
    // back zeroed (programs that read uninitialized heap memory depend on
    // it), and the program runs alone as natively (`unshare(CLONE_NEWUSER)`
    // and gtest's death tests need one thread): the link's helper threads
    // are joined. (An earlier link thread, for a malloc arena of its own,
    // cost ~0.1-0.15 ms per run to start and retire.) A sanitizer's runtime
    // numbers threads as they start: the program's first is T1, as natively.
    if sanitizer_preloaded {
        crate::host::driver_runtime::note_sanitizer_preloaded();
    }
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match launcher::Mode::of(&args) {
        launcher::Mode::Run => {}
        launcher::Mode::LinkLauncher => link_like_a_linker(&args, launcher::link_launcher),
        launcher::Mode::CcDriver => link_like_a_linker(&args, launcher::cc_driver),
        launcher::Mode::RunLauncher => match launcher::run_arguments(&args) {
            Ok(command) => args = command,
            Err(e) => {
                eprintln!("jitrun: error: {}", one_line(&format!("{:#}", e)));
                std::process::exit(EXIT_JITRUN_ERROR);
            }
        },
    }
    let (cli, linked) = parse_and_link(args);
    // What the program's runs need to show their own command line.
    crate::image::prepare_argument_area();
    // SAFETY: the link's helper threads were joined.
    unsafe { crate::image::declare_single_threaded() };
    let result = linked.and_then(|outcome| match outcome {
        Linked::Done(code) => Ok(code),
        Linked::Run(image, crash_table_coming) => run(&cli, *image, crash_table_coming),
    });
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            let e = restart_if_needed(e, &cli);
            let message = one_line(&format!("{:#}", e));
            if let Some(path) = &cli.report {
                if let Err(report_error) = crate::diagnostics::report::write_error(path, &message) {
                    eprintln!("jitrun: error: {}", one_line(&format!("{:#}", report_error)));
                }
            }
            eprintln!("jitrun: error: {}", message);
            std::process::exit(EXIT_JITRUN_ERROR);
        }
    }
}

/// Starts jitrun again when the link needs what only a new process gets
/// (more static TLS, a runtime loaded first, aligned TLS); returns the
/// error when that was tried already or cannot be done.
fn restart_if_needed(mut e: anyhow::Error, cli: &Cli) -> anyhow::Error {
    let tls = e.downcast_ref::<crate::host::tls::TlsExhausted>().map(|exhausted| exhausted.needed);
    let first_library = e.downcast_ref::<crate::host::driver_runtime::RuntimeMustComeFirst>();
    let over_aligned = e.downcast_ref::<crate::host::tls::TlsOverAligned>().map(|o| o.align);
    if tls.is_some() || first_library.is_some() || over_aligned.is_some() {
        // A restart reads the inputs again: a pipe's bytes are gone.
        match input_not_from_a_file(cli) {
            Some(pipe) => {
                e = e.context(format!(
                    "jitrun would have to start again, and cannot read {} a second time (a pipe, not a file)",
                    pipe.display()
                ))
            }
            None => {
                tls.into_iter().for_each(relaunch::reexec_with_more_static_tls);
                over_aligned.into_iter().for_each(relaunch::reexec_with_aligned_static_tls);
                first_library.into_iter().for_each(relaunch::reexec_with_preloaded_runtime);
            }
        }
    }
    e
}

/// `--link-launcher` and `--cc-driver`: link without running and write a
/// launcher, failing as a linker fails (its messages, exit status 1).
fn link_like_a_linker(
    args: &[std::ffi::OsString],
    mode: fn(&[std::ffi::OsString], launcher::LinkCheck) -> Result<()>,
) -> ! {
    init_logging(0);
    let checked = |cli: &Cli, inputs: &[Input]| -> Result<()> {
        match link(cli, inputs, None) {
            Ok(Linked::Done(0)) => Ok(()),
            Ok(_) => anyhow::bail!("the link check did not complete"),
            Err(e) => Err(restart_if_needed(e, cli)),
        }
    };
    match mode(args, &checked) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            match e.downcast_ref::<launcher::LinkFailed>() {
                // Several lines, as ld prints them; each kept to one.
                Some(failed) => {
                    let lines: Vec<&str> = failed.0.lines().collect();
                    for line in &lines[..lines.len().saturating_sub(1)] {
                        eprintln!("{}", one_line(line));
                    }
                    eprintln!("jitrun: error: {}", one_line(lines.last().copied().unwrap_or_default()));
                }
                None => eprintln!("jitrun: error: {}", one_line(&format!("{:#}", e))),
            }
            std::process::exit(1);
        }
    }
}

/// `--completions SHELL`: the script clap generates from the options.
fn print_completions(shell: clap_complete::Shell) -> ! {
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "jitrun", &mut std::io::stdout());
    std::process::exit(0);
}

/// Parses the command line and links.
fn parse_and_link(args: Vec<std::ffi::OsString>) -> (Cli, Result<Linked>) {
    let (cli, inputs) = match Cli::parse_ordered(args.iter().cloned()) {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_JITRUN_ERROR } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    if let Some(shell) = cli.completions {
        print_completions(shell);
    }
    let misplaced = [
        (cli.link_launcher.is_some(), launcher::LINK_LAUNCHER),
        (cli.run_launcher.is_some(), launcher::RUN_LAUNCHER),
        (cli.cc_driver.is_some(), launcher::CC_DRIVER),
    ];
    if let Some((_, option)) = misplaced.iter().find(|(given, _)| *given) {
        eprintln!("jitrun: error: {} must be jitrun's first argument", option);
        std::process::exit(EXIT_JITRUN_ERROR);
    }
    init_logging(cli.verbose);
    if cli.contained.merge_results {
        std::process::exit(merge_results(&cli));
    }
    let mut linked = link(&cli, &inputs, Some(&args));
    // The link model, from which a crash builds its table (most runs
    // never crash; see crash::build_table_when_needed).
    let deferred = match &mut linked {
        Ok(Linked::Run(image, _)) => image.take_deferred_link_info(),
        _ => None,
    };
    match deferred {
        Some(mut deferred) if !cli.no_crash_handler => {
            deferred.release_unneeded();
            crate::diagnostics::crash::build_table_when_needed(true, move || {
                crate::diagnostics::crash::prepare_from_link_model(deferred, true)
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
pub fn input_not_from_a_file(cli: &Cli) -> Option<&std::path::PathBuf> {
    cli.inputs.iter().find(|p| !std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

/// Escapes control characters, so that names taken from a corrupt file
/// (a symbol name with a newline) cannot split the one error line.
fn one_line(message: &str) -> String {
    message.chars().flat_map(|c| if c.is_control() { c.escape_default().collect() } else { vec![c] }).collect()
}

/// The link model of a run without crash reports (see `main_after_start`).
static KEPT_LINK_MODEL: std::sync::atomic::AtomicPtr<crate::graph::deferred::DeferredLinkInfo> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// The outcome of a link.
enum Linked {
    /// Nothing to run (`--noexec`, `--print-unresolved`): exit with this.
    Done(i32),
    /// The image, and whether the crash handler's table is left for a
    /// crash (or an isolated run's parent) to build.
    Run(Box<Image>, bool),
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "debug",
        _ => "trace",
    };
    // env_logger's filter (`RUST_LOG`'s syntax), jitrun's own printing.
    let filter = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default)).build();
    log::set_max_level(filter.filter());
    let _ = log::set_boxed_logger(Box::new(StderrLog(filter)));
}

/// Log records straight to stderr, as env_logger prints them (`[LEVEL
/// target] message`, no timestamp). env_logger formats each record in a
/// buffer kept in a thread-local with a destructor: glibc allocates that
/// destructor's registration with its own malloc and frees it at `exit`,
/// by then through the `free` of a program that defines its own allocator,
/// which may abort on a block it did not make (`-v` did, on such programs).
struct StderrLog(env_logger::Logger);

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        self.0.enabled(metadata)
    }

    fn log(&self, record: &log::Record) {
        if self.0.matches(record) {
            let _ = writeln!(std::io::stderr().lock(), "[{:<5} {}] {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

/// `--print-unresolved`: the report on stdout (it is what was asked for),
/// a one-line summary on stderr, 125 when something is missing.
fn print_unresolved(linker: Linker) -> Result<i32> {
    match linker.link_into_buffer() {
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

/// The link cache this run may use (see `crate::link::cache`): runs that
/// need the image only, not the link's model (a map, a report, checks).
/// `args` is jitrun's whole command line. Without `--link-cache` or
/// `$JITRUN_LINK_CACHE` (`off` turns it off, as `--no-link-cache` does),
/// jitrun's own cache in `$XDG_CACHE_HOME/jitrun/links` (else
/// `~/.cache/jitrun/links`), for links of inputs large enough to gain from
/// it (see `DefaultCachePolicy`).
fn link_cache_request(
    cli: &Cli,
    inputs: &[Input],
    args: &[std::ffi::OsString],
) -> Option<crate::link::cache::CacheRequest> {
    if cli.no_link_cache {
        return None;
    }
    let asked = cli
        .link_cache
        .clone()
        .or_else(|| std::env::var_os("JITRUN_LINK_CACHE").filter(|v| !v.is_empty()).map(std::path::PathBuf::from));
    if asked.as_deref() == Some(Path::new("off")) {
        return None;
    }
    // What reads the link's model needs a link.
    let only_runs = !cli.noexec
        && !cli.print_unresolved
        && cli.map.is_none()
        && cli.report.is_none()
        && cli.check.is_empty()
        && !cli.perf_map;
    if !only_runs {
        log::debug!("link cache: not used: a map, report, check or perf map asked of the link");
        return None;
    }
    if crate::diagnostics::debugger::wanted() {
        // A debugger learns of a linked image only as it is linked.
        log::debug!("link cache: not used: a debugger wants the image registered");
        return None;
    }
    let (dir, default_policy, input_stamps) = match asked {
        Some(dir) => (dir, None, Default::default()),
        None => {
            let (policy, stamps) = default_cache_policy(inputs)?;
            (default_cache_dir()?, Some(policy), stamps)
        }
    };
    // jitrun's own arguments: the program's (the tail) do not change the link.
    let own = &args[..args.len().saturating_sub(cli.args.len())];
    Some(crate::link::cache::CacheRequest {
        dir,
        key: link_cache_key(own),
        max_bytes: cli.link_cache_max.saturating_mul(1 << 20),
        default_policy,
        input_stamps,
    })
}

/// Everything outside the files read that decides a link (see
/// `crate::link::cache`): jitrun's version and executable, the CPU's
/// features, the kernel, the page size, the working directory, the
/// variables that steer a link and jitrun's arguments `own`. Each part is
/// length-prefixed bytes, so that no two keys read alike and nothing needs
/// escaping (formatting them with `{:?}` cost ~0.1M instructions a run).
fn link_cache_key(own: &[std::ffi::OsString]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut key = Vec::with_capacity(1024);
    let mut part = |bytes: &[u8]| {
        key.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        key.extend_from_slice(bytes);
    };
    part(env!("CARGO_PKG_VERSION").as_bytes());
    let exe = crate::support::FileStamp::of_path(Path::new("/proc/self/exe")).unwrap_or_default();
    for field in [exe.device, exe.inode, exe.size] {
        part(&field.to_le_bytes());
    }
    for time in [exe.modified, exe.changed] {
        part(&time.to_le_bytes());
    }
    part(crate::host::loader::cpu_features().as_bytes());
    part(crate::host::loader::kernel_identity().as_bytes());
    part(&crate::support::page_size().to_le_bytes());
    part(std::env::current_dir().map(|d| d.into_os_string()).unwrap_or_default().as_bytes());
    let mut environment: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.as_bytes();
            (k.starts_with(b"LD_") || k.starts_with(b"JITRUN_") || k == b"GLIBC_TUNABLES") && k != b"JITRUN_LINK_CACHE"
        })
        .collect();
    // The environment's order does not change a link.
    environment.sort();
    part(&(environment.len() as u64).to_le_bytes());
    for (name, value) in &environment {
        part(name.as_bytes());
        part(value.as_bytes());
    }
    part(&(arguments_of_the_link(own).count() as u64).to_le_bytes());
    for arg in arguments_of_the_link(own) {
        part(arg.as_bytes());
    }
    key
}

/// jitrun's options that decide only how the linked program runs (how
/// often, isolated or not, its limits, `--set` values, argv[0]), with
/// whether each takes a value: one entry serves them all, so a mutation
/// loop that runs `--isolate --set mutant=N` per mutant maps one image.
const RUN_ONLY_OPTIONS: [(&str, bool); 20] = [
    ("--repeat", true),
    ("--isolate", false),
    ("--timeout", true),
    ("--batch", true),
    ("--jobs", true),
    ("--set", true),
    ("--argv0", true),
    ("--max-output", true),
    ("--max-memory", true),
    ("--cpu-time", true),
    ("--max-processes", true),
    ("--max-file-size", true),
    ("--max-open-files", true),
    ("--core-dumps", false),
    ("--sandbox", false), // its mode only as `--sandbox=MODE`
    ("--allow-write", true),
    ("--no-network", false),
    ("--stats", false),
    ("--shard", true),
    ("--resume", true),
];

/// `own` (jitrun's arguments, the program's excluded) without
/// [`RUN_ONLY_OPTIONS`] and their values. Only `--argv0` takes a value
/// that starts with `-`, and it is one of them, so a value is never
/// mistaken for an option here.
fn arguments_of_the_link(own: &[std::ffi::OsString]) -> impl Iterator<Item = &std::ffi::OsStr> {
    use std::os::unix::ffi::OsStrExt;
    let mut skip_value = false;
    let mut past_separator = false;
    own.iter().map(|a| a.as_os_str()).filter(move |arg| {
        let bytes = arg.as_bytes();
        if past_separator {
            return true;
        }
        if std::mem::take(&mut skip_value) {
            return false;
        }
        if bytes == b"--" {
            past_separator = true;
            return true;
        }
        if let Some(jobs) = bytes.strip_prefix(b"-j") {
            skip_value = jobs.is_empty();
            return false;
        }
        let name = bytes.split(|&b| b == b'=').next().unwrap_or_default();
        match RUN_ONLY_OPTIONS.iter().find(|(option, _)| option.as_bytes() == name) {
            Some(&(_, takes_value)) => {
                skip_value = takes_value && name.len() == bytes.len();
                false
            }
            None => true,
        }
    })
}

/// Where jitrun's own link cache lives: `$XDG_CACHE_HOME/jitrun/links`, or
/// `$HOME/.cache/jitrun/links`; `None` (no cache) without either as an
/// absolute path.
fn default_cache_dir() -> Option<std::path::PathBuf> {
    let absolute = |name| std::env::var_os(name).map(std::path::PathBuf::from).filter(|p| p.is_absolute());
    let base = absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("jitrun").join("links"))
}

/// The default cache's policy for a link of `inputs`, with the stamps of
/// the files the command line names (one `stat` each, which an entry's
/// check then reuses); `None` when they hold too few bytes for a mapped
/// entry to start the program sooner than a link does.
fn default_cache_policy(
    inputs: &[Input],
) -> Option<(crate::link::cache::DefaultCachePolicy, Vec<(PathBuf, crate::support::FileStamp)>)> {
    use std::hash::{Hash, Hasher};
    let files: Vec<&PathBuf> =
        inputs.iter().filter_map(|i| if let Input::File(f) = i { Some(f) } else { None }).collect();
    let stamps: Vec<crate::support::FileStamp> =
        files.iter().map(|path| crate::support::FileStamp::of_path(path)).collect::<Option<_>>()?;
    let bytes = stamps.iter().fold(0u64, |sum, stamp| sum.saturating_add(stamp.size));
    if bytes < crate::link::cache::DefaultCachePolicy::MIN_INPUT_BYTES {
        log::debug!("link cache: not used: {} bytes of inputs", bytes);
        return None;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (path, stamp) in files.iter().zip(&stamps) {
        (path, stamp.device, stamp.inode, stamp.size, stamp.modified, stamp.changed).hash(&mut hasher);
    }
    let policy = crate::link::cache::DefaultCachePolicy { inputs_fingerprint: hasher.finish() };
    Some((policy, files.into_iter().cloned().zip(stamps).collect()))
}

fn link(cli: &Cli, inputs: &[Input], args: Option<&[std::ffi::OsString]>) -> Result<Linked> {
    if cli.report.is_some() {
        crate::diagnostics::report::intercept_immediate_exits();
    }
    let mut link_cache = args.and_then(|args| link_cache_request(cli, inputs, args));
    if let Some(request) = &link_cache {
        use crate::link::cache::{Lookup, Mark, Previously};
        let previously = match crate::link::cache::load(request) {
            Lookup::Hit(cached) => {
                let cached = *cached;
                if cli.no_crash_handler {
                    return Ok(Linked::Run(Box::new(cached.image), false));
                }
                let source = cached.crash_info;
                crate::diagnostics::crash::build_table_when_needed(true, move || {
                    crate::diagnostics::crash::publish_recorded_table(&source.read().unwrap_or_default(), true)
                });
                return Ok(Linked::Run(Box::new(cached.image), true));
            }
            Lookup::Miss(previously) => previously,
        };
        // The default cache stores a link the second time it sees it, once
        // its inputs settled (an entry of inputs changed in the last two
        // seconds would checksum them at every use), and not again one it
        // could not store from the same inputs.
        let inputs_settled = || {
            let settled = request.input_stamps.iter().all(|(_, stamp)| crate::link::cache::settled(stamp));
            if !settled {
                log::debug!("link cache: not stored yet: inputs changed less than two seconds ago");
            }
            settled
        };
        let store_now = match (request.default_policy, previously) {
            (None, _) => true,
            (Some(_), Previously::Seen | Previously::Entry) => inputs_settled(),
            (Some(_), Previously::Untrusted) => false,
            (Some(_), Previously::Unseen) => {
                crate::link::cache::mark(request, Mark::Seen);
                false
            }
            (Some(policy), Previously::Declined { inputs_fingerprint }) => {
                inputs_fingerprint != policy.inputs_fingerprint && inputs_settled()
            }
        };
        if store_now {
            crate::support::input::record_opened_files();
        } else {
            link_cache = None;
        }
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
        link_cache,
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
    if cli.noexec {
        // Nothing runs: the image is written into a buffer, for any CPU.
        let image = linker.link_into_buffer()?;
        // The link info is collected only if something reads it.
        if cli.map_request().is_some() || !cli.check.is_empty() || cli.perf_map {
            inspect(cli, image.link_info(), &image)?;
        }
        if let Some(path) = &cli.report {
            let head = crate::diagnostics::report::head(image.link_info());
            crate::diagnostics::report::write(path, &head, crate::diagnostics::report::Outcome::NoExec)?;
        }
        return Ok(Linked::Done(0));
    }
    let image = linker.link()?;
    inspect(cli, image.link_info(), &image)?;
    Ok(Linked::Run(Box::new(image), false))
}

/// What the command line asks to know of a linked image: its map, its
/// `--check` files, a perf map.
fn inspect(cli: &Cli, info: &crate::graph::linkinfo::LinkInfo, image: &dyn CheckedImage) -> Result<()> {
    if let Some((destination, json)) = cli.map_request() {
        crate::diagnostics::map::write_map(info, json, &destination, cli.noexec)?;
    }
    if !cli.check.is_empty() {
        crate::diagnostics::check::run_files(image, &cli.check)?;
    }
    if cli.perf_map {
        crate::diagnostics::map::write_perf_map(info, &crate::diagnostics::map::perf_map_path())?;
    }
    Ok(())
}

/// `--wrap` of the entry point spelled another way than `--entry` (Mach-O
/// `--wrap _main` for `main`, see `SYMBOL NAMES ON THE COMMAND LINE`): the
/// options with the entry called as `__wrap_ENTRY`, as crt1.o's call is.
/// (The same spelling was settled when the command line was parsed.)
fn wrapped_macho_entry(cli: &Cli, image: &Image) -> Option<Cli> {
    let entry = image.command_line_name(&cli.entry);
    if entry.starts_with("__wrap_") || !cli.wrap.iter().any(|w| image.command_line_name(w) == entry) {
        return None;
    }
    Some(Cli { entry: format!("__wrap_{}", entry), ..cli.clone() })
}

/// Runs the linked program on the main thread, like a native process.
fn run(cli: &Cli, mut image: Image, crash_table_coming: bool) -> Result<i32> {
    let wrapped = wrapped_macho_entry(cli, &image);
    let cli = wrapped.as_ref().unwrap_or(cli);
    // Dropped before the image (a parameter): a hook must not call into
    // unmapped code, as LeakSanitizer's check at the exit of an isolated
    // runs' parent would.
    let _hooks = sanitizer_hooks::answer_with_the_programs(cli, &image);
    let info = image.link_info();
    // Before run_main: the report's exit hook must run after the image's
    // finalizer, and the crash handler must be in place before constructors.
    let sink = cli.report.as_deref().map(|path| crate::diagnostics::report::arm(path, info)).transpose()?;
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
    crate::diagnostics::crash::note_program_thread();
    if isolated && !cli.no_crash_handler {
        // Each forked run reports its own crash (into its captured stderr
        // in a batch); the table is built once, before the first fork.
        if crash_table_coming {
            crate::diagnostics::crash::wait_for_table();
        } else {
            crate::diagnostics::crash::prepare(info, true, None);
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
    crate::image::prepare_process_for_program(&program);
    if cli.no_crash_handler {
    } else if crash_table_coming {
        // A crash builds the table (see crash::build_table_when_needed).
        crate::diagnostics::crash::activate();
    } else {
        crate::diagnostics::crash::install(info, true, sink);
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
        // Out before the next run starts, as each run's exit would have it.
        crate::host::stdio::flush_c_streams();
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
        limits: cli.contained.limits(),
        sandbox: cli.contained.sandbox(),
        ..RunSpec::default()
    };
    let rss_before = run::resident_set_kib();
    let mut first_failure: Option<RunOutcome> = None;
    // The deciding run's figures, kept as plain data and made JSON once, at
    // the end: a JSON value built after every run allocated in the parent
    // after every fork, and each heap page the parent writes after a fork is
    // a page fault (6 of an isolated run's 42).
    let mut deciding_resources = None;
    let jobs = cli.jobs.unwrap_or(1) as usize;
    let result = image.run_repeated(&spec, cli.repeat as usize, jobs, |index, outcome| {
        if cli.contained.stats {
            print_stats(&(index + 1).to_string(), &outcome);
        }
        if first_failure.is_none() {
            deciding_resources = outcome.resources.clone().map(|r| (r, outcome.duration));
            if !outcome.succeeded() {
                first_failure = Some(outcome);
            }
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
        let resources = deciding_resources.map(|(usage, wall)| usage.to_json(wall));
        settle_report(first_failure.as_ref().map(|f| &f.status), cli.timeout, resources)?;
    }
    let Some(failure) = first_failure else { return Ok(0) };
    match failure.status {
        RunStatus::Exited(code) => Ok(code),
        RunStatus::Signaled(signal) => Ok(die_of_signal(signal)),
        RunStatus::Timeout => {
            eprintln!("jitrun: the program ran longer than {:?} and was killed", cli.timeout.unwrap_or_default());
            Ok(run::EXIT_TIMEOUT)
        }
        RunStatus::Limit(kind) => {
            eprintln!("jitrun: the program reached its {} limit ({}) and was stopped", kind.name(), kind.option());
            Ok(run::limit_exit_status(kind))
        }
        RunStatus::Error(message) => Err(anyhow::Error::msg(message)),
    }
}

/// `--stats`: one line per run on stderr.
fn print_stats(run: &str, outcome: &RunOutcome) {
    let status = match &outcome.status {
        RunStatus::Exited(code) => format!("exited {}", code),
        RunStatus::Signaled(signal) => format!("signal {}", signal),
        RunStatus::Timeout => "timeout".to_string(),
        RunStatus::Limit(kind) => format!("limit {}", kind.name()),
        RunStatus::Error(_) => "error".to_string(),
    };
    match &outcome.resources {
        Some(resources) => eprintln!("jitrun: run {}: {}; {}", run, status, resources.summary(outcome.duration)),
        None => eprintln!("jitrun: run {}: {}", run, status),
    }
}

/// `--merge-results`: the exit status (0, or 125 with one error line).
fn merge_results(cli: &Cli) -> i32 {
    let mut out = std::io::stdout().lock();
    match batch::merge_results(&cli.inputs, cli.batch.as_deref(), &mut out) {
        Ok(summary) => {
            if summary.duplicates > 0 {
                eprintln!(
                    "jitrun: {} results merged; {} later results of ids already merged were left out",
                    summary.results, summary.duplicates
                );
            }
            0
        }
        Err(e) => {
            eprintln!("jitrun: error: {}", one_line(&format!("{:#}", e)));
            EXIT_JITRUN_ERROR
        }
    }
}

/// Writes the outcome of the run that decides jitrun's exit status (`None`:
/// every run succeeded) into the `--report` file; an error is reported by
/// the caller's error path instead.
fn settle_report(
    deciding: Option<&RunStatus>,
    timeout: Option<std::time::Duration>,
    resources: Option<serde_json::Value>,
) -> Result<()> {
    use crate::diagnostics::report::Outcome;
    let outcome = match deciding {
        None => Outcome::Exited(0),
        Some(RunStatus::Exited(code)) => Outcome::Exited(*code),
        Some(RunStatus::Signaled(signal)) => Outcome::Signal(*signal),
        Some(RunStatus::Timeout) => {
            Outcome::Timeout(timeout.map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)))
        }
        Some(RunStatus::Limit(kind)) => Outcome::Limit(kind.name(), run::limit_exit_status(*kind)),
        Some(RunStatus::Error(_)) => return Ok(()),
    };
    crate::diagnostics::report::settle_with_resources(outcome, resources)
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
    let defaults = BatchDefaults {
        entry: cli.entry.clone(),
        argv0: program,
        args: cli.args.clone(),
        set,
        timeout: cli.timeout,
        output_limit: usize::try_from(cli.max_output).unwrap_or(usize::MAX),
        limits: cli.contained.limits(),
        sandbox: cli.contained.sandbox(),
    };
    let options = BatchOptions {
        jobs: cli.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize),
        progress: std::io::stderr().is_terminal() && !cli.contained.stats,
        shard: cli.contained.shard,
        resume: cli.contained.resume.clone(),
        resume_is_output: cli.contained.resume.as_deref().is_some_and(is_stdout),
    };
    let mut out = std::io::stdout().lock();
    let stats = cli.contained.stats;
    batch::run_plan(image, plan, &defaults, &options, &mut out, |id, outcome| {
        if stats {
            print_stats(&id.to_string(), outcome);
        }
    })
    .map_err(die_if_interrupted)?;
    Ok(0)
}

/// Whether `path` is the file stdout writes to (`--resume FILE >> FILE`).
fn is_stdout(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(file) = std::fs::metadata(path) else { return false };
    // SAFETY: fstat fills a zeroed stat for descriptor 1.
    let mut out: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(1, &mut out) } == 0) && out.st_dev == file.dev() && out.st_ino == file.ino()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn link_part(args: &[&str]) -> Vec<String> {
        let own: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        arguments_of_the_link(&own).map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn run_only_options_and_their_values_are_left_out_of_the_key() {
        let link = ["jitrun", "-L", "lib", "a.o", "-lm", "--entry", "start"];
        let with_run_options = [
            &link[..3],
            &["--repeat", "5", "--isolate", "--set", "x=1", "--set=y=2", "-j4", "-j", "2", "--timeout=3s"],
            &link[3..],
            &["--argv0", "--set", "--sandbox", "--sandbox=strict", "--allow-write", "/tmp", "--stats"],
        ]
        .concat();
        assert_eq!(link_part(&with_run_options), link);
        // What follows `--` is left alone, and options that change the
        // link stay, spelled as given.
        assert_eq!(link_part(&["a.o", "--", "--isolate"]), ["a.o", "--", "--isolate"]);
        assert_eq!(link_part(&["a.o", "--define=x=0x10", "-vj2"]), ["a.o", "--define=x=0x10", "-vj2"]);
        // A name that merely starts like a run-only option is another option.
        assert_eq!(link_part(&["--settle", "--isolated"]), ["--settle", "--isolated"]);
    }
}
