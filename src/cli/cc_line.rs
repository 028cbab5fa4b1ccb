//! A compiler driver's command line (`cc -o OUT a.o libx.a -lm ...`, as
//! build systems write it) read for jitrun: response files expanded, each
//! word sorted into what jitrun links with, what only a compiler needs,
//! and what a link by jitrun cannot stand for (`-shared`, `-r`,
//! `-static`), for `--link-launcher` and `--cc-driver`.
//!
//! The link options themselves are passed on in the driver's spelling:
//! [`super::Cli::parse_ordered`] already understands `-pthread`,
//! `-rdynamic`, `-fsanitize=`, `-nostartfiles` and `-Wl,` (see
//! `compiler_driver_spellings`), and refuses what it does not know.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// One word of the link, in command-line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkWord {
    /// An object, archive, shared library or linker script.
    Input(PathBuf),
    /// A source file the driver would compile first (`.c`, `.cpp`, `.s`, ...).
    Source(PathBuf),
    /// `-lNAME`.
    Library(String),
    /// `-L DIR`.
    LibraryDir(PathBuf),
    /// A link option in the driver's spelling, for jitrun's parser.
    Option(OsString),
}

/// What a driver command line asks for.
#[derive(Debug, Default)]
pub struct DriverLine {
    /// `-o OUT`.
    pub output: Option<PathBuf>,
    /// The link, in order, sources included.
    pub link: Vec<LinkWord>,
    /// The words a compiler needs to compile the sources as this command
    /// would (`-O2`, `-I`, `-D`, `-std=`, `-fsanitize=`, `-pthread`, ...).
    pub compile_flags: Vec<OsString>,
    /// Why this is no link jitrun can stand in for (`-shared`, `-c`, ...):
    /// the real compiler driver does it.
    pub not_for_jitrun: Option<String>,
    /// The first word a link by jitrun cannot take, and why (left for the
    /// caller: a compilation passes such words on to the compiler).
    pub problem: Option<String>,
}

impl DriverLine {
    /// The source files, in order.
    pub fn sources(&self) -> impl Iterator<Item = &PathBuf> {
        self.link.iter().filter_map(|word| if let LinkWord::Source(path) = word { Some(path) } else { None })
    }

    /// Whether any file is named (an object, archive, library or source).
    pub fn names_files(&self) -> bool {
        self.link.iter().any(|word| matches!(word, LinkWord::Input(_) | LinkWord::Source(_) | LinkWord::Library(_)))
    }
}

/// Most levels of response files naming response files (GCC stops at a
/// cycle only by running out of memory).
const MOST_NESTED_RESPONSE_FILES: usize = 16;

/// Replaces every `@FILE` word by the words in FILE, as GCC's driver does
/// (whitespace separates; single and double quotes group; a backslash
/// escapes the next character; nested `@FILE`s expand too). Unlike GCC,
/// which keeps `@FILE` as a word when FILE cannot be read, that is an error
/// naming the file: CMake and Ninja write the files they name.
pub fn expand_response_files(args: &[OsString]) -> Result<Vec<OsString>, String> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        expand_word(arg, &mut out, 0)?;
    }
    Ok(out)
}

fn expand_word(arg: &OsStr, out: &mut Vec<OsString>, depth: usize) -> Result<(), String> {
    let Some(file) = arg.as_bytes().strip_prefix(b"@").filter(|f| !f.is_empty()) else {
        out.push(arg.to_os_string());
        return Ok(());
    };
    let path = Path::new(OsStr::from_bytes(file));
    if depth >= MOST_NESTED_RESPONSE_FILES {
        return Err(format!(
            "response file {}: more than {} levels of response files (one names itself?)",
            path.display(),
            MOST_NESTED_RESPONSE_FILES
        ));
    }
    let text = std::fs::read(path).map_err(|e| format!("response file {}: cannot read it: {}", path.display(), e))?;
    for word in split_response_file(&text).map_err(|e| format!("response file {}:{}", path.display(), e))? {
        expand_word(&word, out, depth + 1)?;
    }
    Ok(())
}

/// The words of a response file; an error is `LINE: problem`.
fn split_response_file(text: &[u8]) -> Result<Vec<OsString>, String> {
    let mut words = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let mut quote: Option<(u8, usize)> = None;
    let mut line = 1;
    let mut bytes = text.iter().copied();
    while let Some(b) = bytes.next() {
        if b == b'\n' {
            line += 1;
        }
        match (quote, b) {
            (_, b'\\') => {
                let escaped = bytes.next().ok_or_else(|| format!("{}: a backslash ends the file", line))?;
                if escaped == b'\n' {
                    line += 1;
                }
                word.get_or_insert_with(Vec::new).push(escaped);
            }
            (Some((q, _)), _) if b == q => quote = None,
            (Some(_), _) => word.get_or_insert_with(Vec::new).push(b),
            (None, b'\'' | b'"') => {
                quote = Some((b, line));
                word.get_or_insert_with(Vec::new);
            }
            (None, _) if b.is_ascii_whitespace() => words.extend(word.take().map(OsString::from_vec)),
            (None, _) => word.get_or_insert_with(Vec::new).push(b),
        }
    }
    if let Some((q, opened)) = quote {
        return Err(format!("{}: the quote {} opened here is never closed", opened, q as char));
    }
    words.extend(word.map(OsString::from_vec));
    Ok(words)
}

/// File name endings the driver compiles rather than links.
const SOURCE_ENDINGS: [&str; 15] =
    [".c", ".cc", ".cpp", ".cxx", ".c++", ".cp", ".C", ".CPP", ".i", ".ii", ".s", ".S", ".sx", ".m", ".mm"];

/// Whether `path` names a source file the driver would compile.
pub fn is_source(path: &Path) -> bool {
    let name = path.as_os_str().as_bytes();
    SOURCE_ENDINGS.iter().any(|ending| name.ends_with(ending.as_bytes()) && name.len() > ending.len())
}

/// Driver options that make the command something other than a link of
/// an executable: the real driver does it.
const NOT_AN_EXECUTABLE: [(&str, &str); 10] = [
    ("-shared", "a shared library"),
    ("-r", "a relocatable object"),
    ("-static", "a static executable"),
    ("-static-pie", "a static executable"),
    ("-c", "a compilation"),
    ("-S", "a compilation"),
    ("-E", "preprocessing"),
    ("-M", "a dependency list"),
    ("-MM", "a dependency list"),
    ("-fsyntax-only", "a syntax check"),
];

/// Linker options given with `-Wl,` or `-Xlinker` that make the output
/// something other than an executable.
const LINKER_NOT_AN_EXECUTABLE: [&str; 5] = ["-r", "--relocatable", "-shared", "-Bshareable", "-i"];

/// Driver options that only print something (`--version`, `-print-*`).
fn only_prints(word: &str) -> bool {
    matches!(word, "--version" | "-v" | "--help" | "-###" | "-dumpversion" | "-dumpfullversion" | "-dumpmachine")
        || word.starts_with("-print-")
        || word.starts_with("--print-")
}

/// Options passed on to jitrun's parser, which knows them in the driver's
/// spelling.
const LINK_OPTIONS: [&str; 3] = ["-pthread", "-rdynamic", "-nostartfiles"];

/// Options that matter to a compilation and change nothing about a link
/// by jitrun (libraries the driver adds for them, libgomp, libgcov, are
/// loaded anyway when the objects use them; jitrun makes no executable for
/// the others to shape).
const COMPILE_ONLY: [&str; 9] = ["-pipe", "-w", "-MD", "-MMD", "-MP", "-fopenmp", "--coverage", "-pg", "-p"];

/// Options that only shape the executable a linker writes, or what the
/// driver links by default (jitrun always has libc and the compiler's
/// runtime at hand): ignored.
const LINK_ONLY_IGNORED: [&str; 13] = [
    "-pie",
    "-no-pie",
    "-static-libgcc",
    "-shared-libgcc",
    "-static-libstdc++",
    "-static-libasan",
    "-static-libtsan",
    "-static-liblsan",
    "-static-libubsan",
    "-s",
    "-nodefaultlibs",
    "-nolibc",
    "-no-canonical-prefixes",
];

/// Compile options whose value is the next word.
const COMPILE_WITH_VALUE: [&str; 17] = [
    "-x",
    "-I",
    "-D",
    "-U",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-include",
    "-imacros",
    "-MF",
    "-MT",
    "-MQ",
    "--param",
    "-Xassembler",
    "-Xpreprocessor",
    "-dumpdir",
    "-dumpbase",
];

/// Compile options recognized by their start (`-O2`, `-g3`, `-std=c11`,
/// `-march=native`, `-DNAME`, `-Wall`, `-fPIC`, ...). `-Wl,` and
/// `-fsanitize=` are matched before these.
const COMPILE_PREFIXES: [&str; 13] =
    ["-O", "-g", "-f", "-m", "-W", "-std=", "-D", "-U", "-I", "-isystem", "-iquote", "-idirafter", "--std="];

/// Reads a driver command line (response files already expanded). The
/// first option a link by jitrun has no meaning for is recorded in
/// [`DriverLine::problem`], naming it.
pub fn read_driver_line(args: &[OsString]) -> DriverLine {
    let mut line = DriverLine::default();
    if let Err(problem) = read_words(args, &mut line) {
        line.problem = Some(problem);
    }
    line
}

fn read_words(args: &[OsString], line: &mut DriverLine) -> Result<(), String> {
    let mut words = args.iter();
    // Consecutive `-Xlinker` words form one `-Wl,` option (`-Xlinker
    // --wrap -Xlinker f`).
    let mut xlinker: Vec<String> = Vec::new();
    let flush_xlinker = |xlinker: &mut Vec<String>, line: &mut DriverLine| {
        if !xlinker.is_empty() {
            line.link.push(LinkWord::Option(format!("-Wl,{}", xlinker.join(",")).into()));
            xlinker.clear();
        }
    };
    while let Some(arg) = words.next() {
        let mut value_of = |option: &str| -> Result<OsString, String> {
            words.next().cloned().ok_or_else(|| format!("option `{}` needs a value after it", option))
        };
        let Some(word) = arg.to_str() else {
            // Only a file name may be other than UTF-8.
            if arg.as_bytes().starts_with(b"-") {
                return Err(format!("option `{}` is not valid UTF-8", arg.to_string_lossy()));
            }
            flush_xlinker(&mut xlinker, line);
            add_file(line, PathBuf::from(arg));
            continue;
        };
        if word == "-Xlinker" {
            let value = value_of(word)?.into_string().map_err(|v| format!("-Xlinker {:?} is not UTF-8", v))?;
            if value.contains(',') {
                return Err(format!("-Xlinker {}: a comma would split it; give it as -Wl,...", value));
            }
            if LINKER_NOT_AN_EXECUTABLE.contains(&value.as_str()) {
                line.not_for_jitrun.get_or_insert(format!("-Xlinker {} (not an executable)", value));
            }
            xlinker.push(value);
            continue;
        }
        flush_xlinker(&mut xlinker, line);
        if word == "-o" {
            line.output = Some(value_of(word)?.into());
        } else if let Some(out) = word.strip_prefix("-o").filter(|o| !o.is_empty()) {
            line.output = Some(out.into());
        } else if word == "-l" {
            let name = value_of(word)?.into_string().map_err(|v| format!("-l {:?} is not UTF-8", v))?;
            line.link.push(LinkWord::Library(name));
        } else if let Some(name) = word.strip_prefix("-l").filter(|n| !n.is_empty()) {
            line.link.push(LinkWord::Library(name.to_string()));
        } else if word == "-L" {
            line.link.push(LinkWord::LibraryDir(value_of(word)?.into()));
        } else if let Some(dir) = word.strip_prefix("-L").filter(|d| !d.is_empty()) {
            line.link.push(LinkWord::LibraryDir(dir.into()));
        } else if let Some(linker) = word.strip_prefix("-Wl,") {
            if let Some(item) = linker.split(',').find(|item| LINKER_NOT_AN_EXECUTABLE.contains(item)) {
                line.not_for_jitrun.get_or_insert(format!("-Wl,{} (not an executable)", item));
            }
            line.link.push(LinkWord::Option(arg.clone()));
        } else if word == "-z" {
            let keyword = value_of(word)?.into_string().map_err(|v| format!("-z {:?} is not UTF-8", v))?;
            line.link.push(LinkWord::Option(format!("-Wl,-z,{}", keyword).into()));
        } else if word == "-u" {
            let symbol = value_of(word)?.into_string().map_err(|v| format!("-u {:?} is not UTF-8", v))?;
            line.link.push(LinkWord::Option(format!("--undefined={}", symbol).into()));
        } else if let Some(&(_, what)) = NOT_AN_EXECUTABLE.iter().find(|(option, _)| *option == word) {
            line.not_for_jitrun.get_or_insert(format!("{} ({})", word, what));
            line.compile_flags.push(arg.clone());
        } else if only_prints(word) {
            line.not_for_jitrun.get_or_insert(format!("{} (the driver prints something)", word));
        } else if word.starts_with("-fsanitize=") {
            // Both: the compiler instruments, jitrun loads the runtime.
            line.link.push(LinkWord::Option(arg.clone()));
            line.compile_flags.push(arg.clone());
        } else if word == "-pthread" {
            line.link.push(LinkWord::Option(arg.clone()));
            line.compile_flags.push(arg.clone());
        } else if LINK_OPTIONS.contains(&word) {
            line.link.push(LinkWord::Option(arg.clone()));
        } else if word == "-nostdlib" {
            // -nostartfiles and -nodefaultlibs; only the first matters here.
            line.link.push(LinkWord::Option("-nostartfiles".into()));
        } else if LINK_ONLY_IGNORED.contains(&word) || word.starts_with("-fuse-ld=") {
        } else if COMPILE_ONLY.contains(&word) {
            line.compile_flags.push(arg.clone());
        } else if COMPILE_WITH_VALUE.contains(&word) {
            let value = value_of(word)?;
            line.compile_flags.extend([arg.clone(), value]);
        } else if word.starts_with("--sysroot") || word == "-B" || word.starts_with("-B") || word.starts_with("-specs")
        {
            return Err(format!(
                "option `{}` changes where the driver finds the C library and start files: \
                 jitrun links against this system's; build this target with the real linker",
                word
            ));
        } else if COMPILE_PREFIXES.iter().any(|prefix| word.starts_with(prefix)) {
            line.compile_flags.push(arg.clone());
        } else if word.starts_with('-') {
            return Err(format!(
                "option `{}` is not one a link by jitrun knows (it takes cc's link options: -o, -l, -L, -Wl,..., \
                 -Xlinker, -pthread, -rdynamic, -fsanitize=, -nostartfiles, -u; and ignores compile options \
                 and -pie, -no-pie, -static-lib*, -s, -fuse-ld=)",
                word
            ));
        } else {
            add_file(line, PathBuf::from(arg));
        }
    }
    flush_xlinker(&mut xlinker, line);
    Ok(())
}

fn add_file(line: &mut DriverLine, path: PathBuf) {
    line.link.push(if is_source(&path) { LinkWord::Source(path) } else { LinkWord::Input(path) });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(Into::into).collect()
    }

    #[test]
    fn response_files_split_as_gcc_splits_them() {
        let words = split_response_file(b"a.o  'b c.o'\n\"d\\\"e\" f\\ g -lm\n").unwrap();
        assert_eq!(words, os(&["a.o", "b c.o", "d\"e", "f g", "-lm"]));
        assert_eq!(split_response_file(b"''").unwrap(), os(&[""]));
        let error = split_response_file(b"a.o\nb.o 'c.o\n").unwrap_err();
        assert!(error.starts_with("2: the quote ' opened here"), "{}", error);
        assert!(split_response_file(b"a\\").unwrap_err().contains("backslash"));
    }

    #[test]
    fn response_files_expand_in_place_and_nest() {
        let dir = std::env::temp_dir().join(format!("jitrun-rsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let inner = dir.join("inner.rsp");
        let outer = dir.join("outer.rsp");
        std::fs::write(&inner, "b.o -lm").unwrap();
        std::fs::write(&outer, format!("a.o @{}\n c.o", inner.display())).unwrap();
        let args = vec![OsString::from("-o"), "prog".into(), format!("@{}", outer.display()).into(), "d.o".into()];
        assert_eq!(expand_response_files(&args).unwrap(), os(&["-o", "prog", "a.o", "b.o", "-lm", "c.o", "d.o"]));
        std::fs::write(&inner, format!("@{}", outer.display())).unwrap();
        assert!(expand_response_files(&args).unwrap_err().contains("levels of response files"));
        let missing = expand_response_files(&[format!("@{}", dir.join("none").display()).into()]).unwrap_err();
        assert!(missing.contains("none: cannot read it"), "{}", missing);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cmake_link_line_reads_as_a_link() {
        let line = read_driver_line(&os(&[
            "-O2",
            "-g",
            "-DNDEBUG",
            "-fPIE",
            "-rdynamic",
            "-pthread",
            "CMakeFiles/t.dir/t.c.o",
            "-o",
            "t",
            "-Wl,-rpath,/b/lib",
            "libutil.a",
            "-L/b",
            "-lm",
            "-Xlinker",
            "--wrap",
            "-Xlinker",
            "f",
            "-static-libgcc",
            "-no-pie",
            "-fuse-ld=gold",
        ]));
        assert_eq!(line.problem, None);
        assert_eq!(line.output, Some(PathBuf::from("t")));
        assert_eq!(line.not_for_jitrun, None);
        assert_eq!(
            line.link,
            [
                LinkWord::Option("-rdynamic".into()),
                LinkWord::Option("-pthread".into()),
                LinkWord::Input("CMakeFiles/t.dir/t.c.o".into()),
                LinkWord::Option("-Wl,-rpath,/b/lib".into()),
                LinkWord::Input("libutil.a".into()),
                LinkWord::LibraryDir("/b".into()),
                LinkWord::Library("m".into()),
                LinkWord::Option("-Wl,--wrap,f".into()),
            ]
        );
        assert_eq!(line.compile_flags, os(&["-O2", "-g", "-DNDEBUG", "-fPIE", "-pthread"]));
    }

    #[test]
    fn what_is_not_an_executable_goes_to_the_real_driver() {
        for args in [&["-shared", "a.o", "-o", "liba.so"][..], &["-c", "a.c"], &["-Wl,-r", "a.o"], &["--version"]] {
            assert!(read_driver_line(&os(args)).not_for_jitrun.is_some(), "{:?}", args);
        }
    }

    #[test]
    fn sources_are_set_apart_and_unknown_options_named() {
        let line = read_driver_line(&os(&["main.c", "x.o", "t.cpp", "-o", "p"]));
        assert_eq!(line.sources().collect::<Vec<_>>(), [Path::new("main.c"), Path::new("t.cpp")]);
        assert_eq!(line.link[1], LinkWord::Input("x.o".into()));
        let problem = |args: &[&str]| read_driver_line(&os(args)).problem.unwrap_or_default();
        assert!(problem(&["a.o", "-fno-frobnicate", "-zz"]).contains("`-zz`"));
        assert!(problem(&["a.o", "-o"]).contains("needs a value"));
        assert!(problem(&["a.o", "--sysroot=/x"]).contains("--sysroot"));
        assert!(problem(&["a.o", "-z", "relro"]).is_empty());
    }
}
