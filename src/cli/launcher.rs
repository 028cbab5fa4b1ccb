//! Launchers: jitrun as the linker of a build's test executables.
//!
//! `jitrun --link-launcher OUT <cc link line>` checks in-process that the
//! inputs link (as `--noexec` would, missing symbols failing as `ld`
//! fails) and writes OUT, an executable text file whose first line makes
//! the kernel start jitrun itself on it:
//!
//! ```text
//! #!/abs/jitrun --run-launcher
//! exec '/abs/jitrun' --run-launcher "$0" "$@"
//! # jitrun launcher, format 1 ...
//! # output /abs/OUT
//! # jitrun SIZE SECONDS.NANOSECONDS /abs/jitrun
//! # arg /abs/main.o                 (jitrun's arguments, escaped)
//! # input SIZE SECONDS.NANOSECONDS HASH|- /abs/main.o
//! ```
//!
//! A script rather than a small ELF: the kernel hands the file to jitrun
//! with no shell between them, so the process that runs the program is
//! the one the caller started (its pid, signals, stdin, exit status), and
//! there is no machine code to keep for each CPU. The cost is the one
//! thing a script cannot keep: the caller's own `argv[0]` (the kernel
//! passes the path it executed, which is what callers give as `argv[0]`
//! but for `exec -a`). The second line makes the same file work through a
//! shell, used when jitrun's path is too long for a `#!` line or holds
//! blanks.
//!
//! `jitrun --run-launcher OUT ARGS` (what the `#!` line runs) checks that
//! every input the program is made of (objects, archives and their
//! members; not shared libraries, which a native executable also loads as
//! they are at run time) and jitrun itself are as they were when OUT was
//! written, by size and modification time, and by content for files
//! modified within a clock tick of that (a rewrite in the same tick keeps
//! the time), then runs the program as `OUT` (`--argv0`, `--self-exe`).
//! Anything changed is an error naming it: a launcher never runs
//! something other than what was built, and the build relinks it.

use std::ffi::{OsStr, OsString};
use std::hash::Hasher;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::cc_line::{self, LinkWord};
use crate::cli::{Cli, Input};
use crate::graph::resolve::UnresolvedSymbols;

/// The option that makes jitrun write a launcher; first on the command line.
pub const LINK_LAUNCHER: &str = "--link-launcher";
/// The option a launcher's `#!` line runs jitrun with.
pub const RUN_LAUNCHER: &str = "--run-launcher";
/// The option that makes jitrun a compiler driver that links with launchers.
pub const CC_DRIVER: &str = "--cc-driver";

/// The launcher file format this jitrun writes and reads.
const FORMAT: u32 = 1;

/// Linux reads at most this much of a `#!` line (BINPRM_BUF_SIZE).
const LONGEST_SHEBANG: usize = 255;

/// Environment variable naming the compiler driver that links what jitrun
/// cannot stand in for (`-shared`, `-r`, `-static`); `cc` by default.
pub const REAL_DRIVER_ENV: &str = "JITRUN_CC";

/// Links without running, as `--noexec` does (see [`link_launcher`]).
pub type LinkCheck<'a> = &'a dyn Fn(&Cli, &[Input]) -> Result<()>;

/// What the command line asks of jitrun, judged by its first argument.
#[derive(Debug, PartialEq, Eq)]
pub enum Mode {
    /// The ordinary command.
    Run,
    LinkLauncher,
    RunLauncher,
    CcDriver,
}

impl Mode {
    pub fn of(args: &[OsString]) -> Mode {
        let first = args.get(1).map(|a| a.as_bytes()).unwrap_or_default();
        let is = |option: &str| first == option.as_bytes() || first.starts_with(format!("{}=", option).as_bytes());
        if is(LINK_LAUNCHER) {
            Mode::LinkLauncher
        } else if first == RUN_LAUNCHER.as_bytes() {
            Mode::RunLauncher
        } else if is(CC_DRIVER) {
            Mode::CcDriver
        } else {
            Mode::Run
        }
    }
}

/// Why a link by `--link-launcher` or `--cc-driver` failed; the caller
/// prints it and exits 1, as a linker does.
#[derive(Debug)]
pub struct LinkFailed(pub String);

impl std::fmt::Display for LinkFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LinkFailed {}

/// The option's value and the words after it: `--opt VALUE rest` or
/// `--opt=VALUE rest`.
fn option_value<'a>(args: &'a [OsString], option: &str) -> Result<(OsString, &'a [OsString])> {
    let first = args.get(1).map(|a| a.as_bytes()).unwrap_or_default();
    let inline = first.strip_prefix(format!("{}=", option).as_bytes());
    let (value, rest) = match inline {
        Some(value) => (Some(OsStr::from_bytes(value).to_os_string()), args.get(2..)),
        None => (args.get(2).cloned(), args.get(3..)),
    };
    match value.filter(|v| !v.is_empty()) {
        Some(value) => Ok((value, rest.unwrap_or_default())),
        None => bail!("{} needs a value", option),
    }
}

/// `jitrun --link-launcher OUT <cc link line>`: checks that the inputs link
/// and writes the launcher OUT. `link_check` links without running. What
/// jitrun cannot stand in for (`-shared`, ...) is handed to the real
/// driver, which replaces this process.
pub fn link_launcher(args: &[OsString], link_check: LinkCheck) -> Result<()> {
    let (output, rest) = option_value(args, LINK_LAUNCHER)?;
    let words = cc_line::expand_response_files(rest).map_err(|e| LinkFailed(e.to_string()))?;
    let mut line = cc_line::read_driver_line(&words);
    if let Some(why) = &line.not_for_jitrun {
        let mut real = rest.to_vec();
        if line.output.is_none() {
            real.extend(["-o".into(), output.clone()]);
        }
        return Err(exec_real_driver(&real_driver(), &real, why));
    }
    let output = PathBuf::from(output);
    if let Some(named) = &line.output {
        if absolute(named)? != absolute(&output)? {
            bail!(LinkFailed(format!(
                "{} names the output {} but -o names {}",
                LINK_LAUNCHER,
                output.display(),
                named.display()
            )));
        }
    }
    if let Some(problem) = line.problem.take() {
        bail!(LinkFailed(problem));
    }
    if let Some(source) = line.sources().next() {
        bail!(LinkFailed(format!(
            "{} is a source file: {} links objects (compile it first, or use {} COMPILER as the compiler)",
            source.display(),
            LINK_LAUNCHER,
            CC_DRIVER
        )));
    }
    write_launcher(&output, line.link, link_check)
}

/// `jitrun --cc-driver COMPILER ARGS`: a compiler driver for build systems
/// that link through it (Make's `$(CC)`, Meson). A link of an executable
/// compiles its source files with COMPILER into `OUT.jitrun-objects/` and
/// writes a launcher; everything else (compiling, `-shared`, `--version`,
/// ...) is COMPILER's, which replaces this process.
pub fn cc_driver(args: &[OsString], link_check: LinkCheck) -> Result<()> {
    let (compiler, rest) = option_value(args, CC_DRIVER)?;
    let words = cc_line::expand_response_files(rest).map_err(|e| LinkFailed(e.to_string()))?;
    let mut line = cc_line::read_driver_line(&words);
    let not_a_link = line.not_for_jitrun.clone().or_else(|| (!line.names_files()).then(|| "no input file".into()));
    if let Some(why) = not_a_link {
        return Err(exec_real_driver(&compiler, rest, &why));
    }
    if let Some(problem) = line.problem.take() {
        bail!(LinkFailed(problem));
    }
    // cc's default output.
    let output = line.output.clone().unwrap_or_else(|| "a.out".into());
    let objects_dir = append(&output, ".jitrun-objects");
    if line.sources().next().is_some() {
        std::fs::create_dir_all(&objects_dir)
            .with_context(|| format!("{}: cannot create the directory for compiled sources", objects_dir.display()))?;
    }
    for (index, word) in line.link.iter_mut().enumerate() {
        let LinkWord::Source(source) = word else { continue };
        let name = source.file_name().unwrap_or(source.as_os_str());
        let object = objects_dir.join(format!("{}-{}.o", index, name.to_string_lossy()));
        let status = std::process::Command::new(&compiler)
            .args(&line.compile_flags)
            .arg("-c")
            .arg(&*source)
            .arg("-o")
            .arg(&object)
            .status()
            .with_context(|| format!("cannot run the compiler {}", Path::new(&compiler).display()))?;
        if !status.success() {
            // The compiler said what went wrong.
            std::process::exit(status.code().unwrap_or(1));
        }
        *word = LinkWord::Input(object);
    }
    write_launcher(&output, line.link, link_check)
}

/// The real driver for what jitrun cannot link: `$JITRUN_CC`, else `cc`.
fn real_driver() -> OsString {
    std::env::var_os(REAL_DRIVER_ENV).filter(|d| !d.is_empty()).unwrap_or_else(|| "cc".into())
}

/// Replaces this process with `driver args`; returns the error if that failed.
fn exec_real_driver(driver: &OsStr, args: &[OsString], why: &str) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    log::debug!("{}: for the real driver {}", why, Path::new(driver).display());
    let error = std::process::Command::new(driver).args(args).exec();
    anyhow!(LinkFailed(format!("cannot run {} for {}: {}", Path::new(driver).display(), why, error)))
}

/// Lexically absolute: `..` stays, as the kernel resolves it.
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("{}: cannot make the path absolute", path.display()))
}

fn append(path: &Path, suffix: &str) -> PathBuf {
    let mut text = path.as_os_str().to_os_string();
    text.push(suffix);
    text.into()
}

/// Checks that `link` links and writes the launcher `output` for it.
fn write_launcher(output: &Path, link: Vec<LinkWord>, link_check: LinkCheck) -> Result<()> {
    let arguments = jitrun_arguments(link)?;
    let mut check_line: Vec<OsString> = vec!["jitrun".into(), "--noexec".into()];
    check_line.extend(arguments.iter().cloned());
    let (cli, inputs) = Cli::parse_ordered(check_line).map_err(|e| LinkFailed(clap_message(&e)))?;
    if let Err(e) = link_check(&cli, &inputs) {
        // As ld does: no output from a failed link, so that no older one
        // looks current.
        if std::fs::symlink_metadata(output).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(output);
        }
        return Err(match e.downcast_ref::<UnresolvedSymbols>() {
            Some(missing) => anyhow!(LinkFailed(ld_style_report(missing, output))),
            None => e,
        });
    }
    let made_at = std::time::SystemTime::now();
    let mut stamps = Vec::new();
    for input in &inputs {
        if let Input::File(path) = input {
            stamp_input(path, made_at, &mut stamps)?;
        }
    }
    let launcher = Launcher { output: absolute(output)?, jitrun: running_jitrun()?, arguments, inputs: stamps };
    let text = launcher.render();
    // Written beside OUT and renamed over it: a launcher is whole or absent.
    let temporary = append(output, &format!(".jitrun-{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(&text)?;
            file.set_permissions(std::fs::Permissions::from_mode(0o755))
        })
        .and_then(|()| std::fs::rename(&temporary, output));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        bail!(LinkFailed(format!("{}: cannot write the launcher: {}", output.display(), e)));
    }
    Ok(())
}

/// The link as jitrun's arguments, with absolute paths (a launcher runs
/// from any directory), and `-lNAME` that finds an archive replaced by
/// that archive's path: its contents are part of the program, so the
/// launcher must notice when it changes. Shared libraries stay `-lNAME`,
/// found again at each run, as a native executable's are.
fn jitrun_arguments(link: Vec<LinkWord>) -> Result<Vec<OsString>> {
    let mut search = Vec::new();
    for word in &link {
        if let LinkWord::LibraryDir(dir) = word {
            search.push(absolute(dir)?);
        }
    }
    let mut arguments = Vec::with_capacity(link.len());
    for word in link {
        match word {
            LinkWord::Input(path) | LinkWord::Source(path) => arguments.push(absolute(&path)?.into_os_string()),
            LinkWord::LibraryDir(dir) => {
                let mut option = OsString::from("-L");
                option.push(absolute(&dir)?);
                arguments.push(option);
            }
            LinkWord::Library(name) => match crate::graph::libsearch::find_library(&name, &search, false) {
                Ok(path) if is_archive(&path) => arguments.push(absolute(&path)?.into_os_string()),
                // Not found: the link check says so, as ld would.
                _ => arguments.push(format!("-l{}", name).into()),
            },
            LinkWord::Option(option) => arguments.push(option),
        }
    }
    Ok(arguments)
}

fn is_archive(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && (&magic == b"!<arch>\n" || &magic == b"!<thin>\n")
}

/// clap's message without its `error: ` and usage lines.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// What GNU ld prints for missing symbols, one line per reference, then
/// the driver's closing line naming the output.
pub fn ld_style_report(missing: &UnresolvedSymbols, output: &Path) -> String {
    let mut out = String::new();
    for symbol in &missing.symbols {
        for referrer in &symbol.referenced_by {
            out.push_str(&format!("jitrun: {}: undefined reference to `{}'\n", referrer, symbol.name));
        }
        if let Some(hint) = symbol.hint {
            out.push_str(&format!("jitrun: note: `{}' usually comes from {}\n", symbol.name, hint));
        }
    }
    let n = missing.symbols.len();
    out.push_str(&format!(
        "linking {} failed: {} undefined symbol{} (the link exits 1, as ld does)",
        output.display(),
        n,
        if n == 1 { "" } else { "s" }
    ));
    out
}

/// What a launcher records of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    path: PathBuf,
    size: u64,
    /// Modification time: seconds and nanoseconds since the epoch.
    modified: (i64, i64),
    /// A hash of the contents, for a file modified so shortly before the
    /// launcher was written that a rewrite could keep its time.
    content: Option<u64>,
}

impl Stamp {
    fn of(path: &Path, metadata: &std::fs::Metadata) -> Stamp {
        Stamp { path: path.to_path_buf(), size: metadata.size(), modified: modified(metadata), content: None }
    }

    /// What changed since, if anything.
    fn change(&self) -> Option<String> {
        let metadata = match std::fs::metadata(&self.path) {
            Ok(metadata) => metadata,
            Err(e) => return Some(format!("{} cannot be read ({})", self.path.display(), e)),
        };
        if metadata.size() != self.size {
            return Some(format!(
                "{} changed size ({} bytes, now {})",
                self.path.display(),
                self.size,
                metadata.size()
            ));
        }
        if modified(&metadata) != self.modified {
            return Some(format!(
                "{} was modified (at {}, now {})",
                self.path.display(),
                show_time(self.modified),
                show_time(modified(&metadata))
            ));
        }
        match (self.content, std::fs::read(&self.path)) {
            (None, _) => None,
            (Some(hash), Ok(bytes)) if content_hash(&bytes) == hash => None,
            (Some(_), Ok(_)) => Some(format!("{}'s contents changed (same size and time)", self.path.display())),
            (Some(_), Err(e)) => Some(format!("{} cannot be read ({})", self.path.display(), e)),
        }
    }
}

fn modified(metadata: &std::fs::Metadata) -> (i64, i64) {
    (metadata.mtime(), metadata.mtime_nsec())
}

fn show_time((seconds, nanoseconds): (i64, i64)) -> String {
    format!("{}.{:09}", seconds, nanoseconds)
}

/// Files modified less than this before the launcher is written get a
/// content hash: the kernel stamps times from a clock that advances in
/// ticks (1-10 ms), so a rewrite within the tick keeps the time.
const RACY_NANOSECONDS: i128 = 50_000_000;
/// The same where the file system keeps whole seconds (the time has no
/// nanoseconds): FAT keeps two.
const RACY_NANOSECONDS_COARSE: i128 = 2_000_000_000;

fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write_usize(bytes.len());
    hasher.write(bytes);
    hasher.finish()
}

/// Records an input of the link, unless it is a shared library (a native
/// executable loads those as they are when it runs); a thin archive's
/// members are recorded with it, being its contents.
fn stamp_input(path: &Path, made_at: std::time::SystemTime, stamps: &mut Vec<Stamp>) -> Result<()> {
    let cannot_read = || format!("{}: cannot read it", path.display());
    let mut file = std::fs::File::open(path).with_context(cannot_read)?;
    let metadata = file.metadata().with_context(cannot_read)?;
    let mut head = Vec::with_capacity(64);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, 64), &mut head).with_context(cannot_read)?;
    if is_shared_library(&head) {
        return Ok(());
    }
    let mut stamp = Stamp::of(path, &metadata);
    let made_at_ns = made_at.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
    let modified_ns = stamp.modified.0 as i128 * 1_000_000_000 + stamp.modified.1 as i128;
    let racy = if stamp.modified.1 == 0 { RACY_NANOSECONDS_COARSE } else { RACY_NANOSECONDS };
    let thin = head.starts_with(b"!<thin>\n");
    // The whole file only when its contents are needed.
    let bytes = if made_at_ns - modified_ns < racy || thin {
        std::fs::read(path).with_context(cannot_read)?
    } else {
        Vec::new()
    };
    if made_at_ns - modified_ns < racy {
        stamp.content = Some(content_hash(&bytes));
    }
    stamps.push(stamp);
    if thin {
        let archive = object::read::archive::ArchiveFile::parse(&*bytes)
            .with_context(|| format!("{}: malformed thin archive", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("/"));
        for member in archive.members() {
            let member = member.with_context(|| format!("{}: malformed thin archive", path.display()))?;
            let member_path = dir.join(OsStr::from_bytes(member.name()));
            stamp_input(&member_path, made_at, stamps)?;
        }
    }
    Ok(())
}

fn is_shared_library(bytes: &[u8]) -> bool {
    // ELF with e_type ET_DYN (3), little-endian as on the CPUs jitrun runs on.
    bytes.len() > 18 && bytes.starts_with(b"\x7fELF") && bytes[16] == 3 && bytes[17] == 0
}

/// This jitrun, as a launcher records it: its path (by which the launcher
/// starts it) and its file's size and time.
fn running_jitrun() -> Result<Stamp> {
    let path = std::env::current_exe().context("cannot find jitrun's own path")?;
    let metadata = std::fs::metadata("/proc/self/exe").context("cannot read jitrun's own file")?;
    Ok(Stamp::of(&path, &metadata))
}

/// A launcher's contents.
#[derive(Debug, PartialEq, Eq)]
struct Launcher {
    /// Where it was written (absolute).
    output: PathBuf,
    jitrun: Stamp,
    /// jitrun's arguments for the link, before `--`.
    arguments: Vec<OsString>,
    inputs: Vec<Stamp>,
}

const HEADER: &str = "# jitrun launcher, format";

impl Launcher {
    fn render(&self) -> Vec<u8> {
        let jitrun = self.jitrun.path.as_os_str().as_bytes();
        let mut out = Vec::new();
        let direct = format!("#!{} {}\n", self.jitrun.path.display(), RUN_LAUNCHER);
        // The kernel splits nothing after the interpreter's path but at
        // the first blank, and reads so much of the line only.
        if direct.len() <= LONGEST_SHEBANG && !jitrun.iter().any(|b| b.is_ascii_whitespace()) {
            out.extend_from_slice(b"#!");
            out.extend_from_slice(jitrun);
            out.extend_from_slice(format!(" {}\n", RUN_LAUNCHER).as_bytes());
        } else {
            out.extend_from_slice(b"#!/bin/sh\n");
        }
        out.extend_from_slice(b"exec ");
        out.extend_from_slice(&shell_quote(jitrun));
        out.extend_from_slice(format!(" {} \"$0\" \"$@\"\n", RUN_LAUNCHER).as_bytes());
        out.extend_from_slice(
            format!(
                "{} {}: `jitrun {}` wrote it after checking that the inputs below link.\n\
                 ## Running it runs jitrun on them; once one of them or jitrun changes, it refuses to run\n\
                 ## until the build relinks it.\n",
                HEADER, FORMAT, LINK_LAUNCHER
            )
            .as_bytes(),
        );
        let mut record = |fields: String, path: &OsStr| {
            out.extend_from_slice(format!("# {} ", fields).as_bytes());
            out.extend_from_slice(escape(path.as_bytes()).as_bytes());
            out.push(b'\n');
        };
        record("output".into(), self.output.as_os_str());
        record(
            format!("jitrun {} {}", self.jitrun.size, show_time(self.jitrun.modified)),
            self.jitrun.path.as_os_str(),
        );
        for argument in &self.arguments {
            record("arg".into(), argument);
        }
        for input in &self.inputs {
            let hash = input.content.map_or_else(|| "-".to_string(), |h| format!("{:016x}", h));
            record(format!("input {} {} {}", input.size, show_time(input.modified), hash), input.path.as_os_str());
        }
        out
    }

    /// Reads a launcher; an error names its line.
    fn parse(file: &Path, bytes: &[u8]) -> Result<Launcher> {
        let error = |line: usize, problem: &str| anyhow!("{}:{}: {}", file.display(), line, problem);
        let mut lines = bytes.split(|&b| b == b'\n').enumerate().map(|(i, l)| (i + 1, l));
        let mut next = |what: &str| lines.next().ok_or_else(|| error(0, &format!("ends before {}", what)));
        let (n, shebang) = next("its first line")?;
        if !shebang.starts_with(b"#!") {
            return Err(error(n, "not a jitrun launcher (no #! line)"));
        }
        let (n, exec) = next("the exec line")?;
        if !exec.starts_with(b"exec ") {
            return Err(error(n, "not a jitrun launcher (the second line is not `exec ...`)"));
        }
        let (n, header) = next("the format line")?;
        let format = std::str::from_utf8(header)
            .ok()
            .and_then(|h| h.strip_prefix(HEADER))
            .and_then(|rest| rest.trim_start().split(':').next())
            .ok_or_else(|| error(n, "not a jitrun launcher (no format line)"))?;
        if format != FORMAT.to_string() {
            return Err(error(
                n,
                &format!("a launcher of format {}, this jitrun reads format {}: relink it", format, FORMAT),
            ));
        }
        let (mut output, mut jitrun) = (None, None);
        let (mut arguments, mut inputs) = (Vec::new(), Vec::new());
        for (n, line) in lines {
            if !line.starts_with(b"# ") {
                if line.is_empty() || line.starts_with(b"#") {
                    continue;
                }
                return Err(error(n, "a line that is not a `# ` record"));
            }
            let text = std::str::from_utf8(&line[2..]).map_err(|_| error(n, "not UTF-8 (paths are escaped)"))?;
            let (kind, rest) = text.split_once(' ').unwrap_or((text, ""));
            let field_error = |what: &str| error(n, &format!("`{}` record: {}", kind, what));
            let unescaped = |text: &str| unescape(text).map(OsString::from_vec).map_err(|e| field_error(&e));
            // The fields before the path, then the path (which may hold blanks).
            let fields = |count: usize| -> Result<(Vec<&str>, OsString)> {
                let parts: Vec<&str> = rest.splitn(count + 1, ' ').collect();
                if parts.len() != count + 1 || parts[count].is_empty() {
                    return Err(field_error(&format!("expected {} fields and a path", count)));
                }
                Ok((parts[..count].to_vec(), unescaped(parts[count])?))
            };
            let size = |text: &str| text.parse::<u64>().map_err(|_| field_error(&format!("bad size `{}`", text)));
            let time = |text: &str| parse_time(text).ok_or_else(|| field_error(&format!("bad time `{}`", text)));
            match kind {
                "output" => output = Some(PathBuf::from(fields(0)?.1)),
                "jitrun" => {
                    let (values, path) = fields(2)?;
                    jitrun = Some(Stamp {
                        path: path.into(),
                        size: size(values[0])?,
                        modified: time(values[1])?,
                        content: None,
                    });
                }
                "arg" => arguments.push(unescaped(rest)?),
                "input" => {
                    let (values, path) = fields(3)?;
                    let content = match values[2] {
                        "-" => None,
                        hash => Some(
                            u64::from_str_radix(hash, 16).map_err(|_| field_error(&format!("bad hash `{}`", hash)))?,
                        ),
                    };
                    inputs.push(Stamp {
                        path: path.into(),
                        size: size(values[0])?,
                        modified: time(values[1])?,
                        content,
                    });
                }
                _ => return Err(error(n, &format!("unknown record `{}`", kind))),
            }
        }
        let output = output.ok_or_else(|| error(0, "no `output` record"))?;
        let jitrun = jitrun.ok_or_else(|| error(0, "no `jitrun` record"))?;
        if !arguments.iter().any(|a| !a.as_bytes().starts_with(b"-")) {
            return Err(error(0, "no input among the `arg` records"));
        }
        Ok(Launcher { output, jitrun, arguments, inputs })
    }

    /// The first change since the launcher was written, if any.
    fn staleness(&self) -> Option<String> {
        match std::fs::metadata("/proc/self/exe") {
            Ok(metadata) if metadata.size() == self.jitrun.size && modified(&metadata) == self.jitrun.modified => {}
            _ => {
                return Some(format!(
                    "jitrun ({}) is not the one that checked the link (rebuilt or reinstalled since)",
                    self.jitrun.path.display()
                ))
            }
        }
        self.inputs.iter().find_map(Stamp::change)
    }
}

fn parse_time(text: &str) -> Option<(i64, i64)> {
    let (seconds, nanoseconds) = text.split_once('.')?;
    let nanoseconds: i64 = nanoseconds.parse().ok().filter(|n| (0..1_000_000_000).contains(n))?;
    Some((seconds.parse().ok()?, nanoseconds))
}

/// `'text'`, with `'` as `'\''`.
fn shell_quote(text: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in text {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// Bytes as one line of text: `\\`, and `\xHH` for control bytes and
/// bytes outside UTF-8.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{:02x}", b));
        }
    }
    out
}

fn unescape(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex = [bytes.next(), bytes.next()];
                let digits = hex.iter().flatten().map(|&d| d as char).collect::<String>();
                out.push(
                    u8::from_str_radix(&digits, 16)
                        .ok()
                        .filter(|_| digits.len() == 2)
                        .ok_or_else(|| format!("bad escape `\\x{}`", digits))?,
                );
            }
            other => {
                return Err(format!("bad escape `\\{}`", other.map_or(String::new(), |b| (b as char).to_string())))
            }
        }
    }
    Ok(out)
}

/// `jitrun --run-launcher FILE ARGS...` (a launcher's `#!` line) as the
/// ordinary command line that runs the program FILE stands for, once FILE
/// is found current: `jitrun --argv0 FILE --self-exe FILE ARGUMENTS -- ARGS`.
pub fn run_arguments(args: &[OsString]) -> Result<Vec<OsString>> {
    let file = args.get(2).ok_or_else(|| anyhow!("{} needs the launcher's path", RUN_LAUNCHER))?;
    let path = Path::new(file);
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read the launcher", path.display()))?;
    let launcher = Launcher::parse(path, &bytes)?;
    if let Some(change) = launcher.staleness() {
        bail!("{}: {} since this launcher was written: relink it (rebuild the target)", path.display(), change);
    }
    // What a native executable's /proc/self/exe reads: its real path.
    let self_exe =
        std::fs::canonicalize(path).with_context(|| format!("{}: cannot resolve its path", path.display()))?;
    let mut command: Vec<OsString> = Vec::with_capacity(args.len() + launcher.arguments.len() + 6);
    command.extend([args[0].clone(), "--argv0".into(), file.clone(), "--self-exe".into(), self_exe.into()]);
    command.extend(launcher.arguments);
    command.push("--".into());
    command.extend(args[3..].iter().cloned());
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Launcher {
        Launcher {
            output: "/b/tests/t 1".into(),
            jitrun: Stamp { path: "/usr/bin/jitrun".into(), size: 10, modified: (1700000000, 5), content: None },
            arguments: vec!["-rdynamic".into(), "/b/a b.o".into(), OsString::from_vec(b"/b/\xff\n\\.o".to_vec())],
            inputs: vec![
                Stamp { path: "/b/a b.o".into(), size: 1, modified: (1, 2), content: Some(0xfeed) },
                Stamp { path: "/b/libu.a".into(), size: 3, modified: (4, 0), content: None },
            ],
        }
    }

    #[test]
    fn a_launcher_reads_back_as_written() {
        let launcher = sample();
        let text = launcher.render();
        assert!(text.starts_with(b"#!/usr/bin/jitrun --run-launcher\nexec '/usr/bin/jitrun' --run-launcher"));
        assert_eq!(Launcher::parse(Path::new("t"), &text).unwrap(), launcher);
    }

    #[test]
    fn a_long_or_blank_jitrun_path_goes_through_the_shell() {
        let mut launcher = sample();
        launcher.jitrun.path = "/opt/my tools/jitrun".into();
        let text = launcher.render();
        assert!(text.starts_with(b"#!/bin/sh\nexec '/opt/my tools/jitrun' --run-launcher \"$0\" \"$@\"\n"));
        assert_eq!(Launcher::parse(Path::new("t"), &text).unwrap(), launcher);
        launcher.jitrun.path = format!("/{}/jitrun", "d".repeat(300)).into();
        assert!(launcher.render().starts_with(b"#!/bin/sh\n"));
    }

    #[test]
    fn a_tampered_launcher_is_refused_naming_the_line() {
        let text = String::from_utf8(sample().render()).unwrap();
        let cases = [
            (text.replace("# input 1 ", "# input x "), ":11: `input` record: bad size `x`"),
            (text.replace("format 1:", "format 7:"), ":3: a launcher of format 7"),
            (text.replace("# arg -rdynamic", "# frob x"), ":8: unknown record `frob`"),
            (text.replace("# arg -rdynamic", "arg"), ":8: a line that is not a `# ` record"),
            (text.replace("\\xff", "\\xf"), "bad escape"),
            (text.replace("4.000000000 -", "4.5000000000 -"), "bad time"),
            (text.replace("#!", ""), ":1: not a jitrun launcher"),
            (text.lines().filter(|l| !l.starts_with("# jitrun 10 ")).collect::<Vec<_>>().join("\n"), "no `jitrun`"),
        ];
        for (bad, expected) in cases {
            let error = Launcher::parse(Path::new("t"), bad.as_bytes()).unwrap_err().to_string();
            assert!(error.contains(expected), "{:?} does not contain {:?}", error, expected);
        }
    }

    #[test]
    fn escapes_round_trip() {
        for bytes in [&b"plain"[..], b"a\\b", b"\xff\xfe", b"line\nbreak\t", "é".as_bytes()] {
            assert_eq!(unescape(&escape(bytes)).unwrap(), bytes);
            assert!(!escape(bytes).contains('\n'));
        }
    }

    #[test]
    fn modes_are_told_by_the_first_argument() {
        let mode = |args: &[&str]| Mode::of(&args.iter().map(Into::into).collect::<Vec<_>>());
        assert_eq!(mode(&["jitrun", "--link-launcher", "t", "a.o"]), Mode::LinkLauncher);
        assert_eq!(mode(&["jitrun", "--link-launcher=t", "a.o"]), Mode::LinkLauncher);
        assert_eq!(mode(&["jitrun", "--run-launcher", "t"]), Mode::RunLauncher);
        assert_eq!(mode(&["jitrun", "--cc-driver=cc", "a.c"]), Mode::CcDriver);
        assert_eq!(mode(&["jitrun", "a.o", "--link-launcher"]), Mode::Run);
        assert_eq!(mode(&["jitrun"]), Mode::Run);
    }
}
