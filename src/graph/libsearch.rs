//! Finding libraries like the system linker: `-lNAME` through `-L`
//! directories then the default ones, `libNAME.so` before `libNAME.a`
//! unless static libraries are preferred, and GNU ld scripts such as
//! `libc.so` (`GROUP`, `INPUT`, `AS_NEEDED`) expanded to the files they name.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use crate::support::machine::GCC_LIBRARY_DIRS;
/// ld's default search path on Debian and Ubuntu (`ld --verbose`).
pub use crate::support::machine::LIBRARY_DIRS as DEFAULT_DIRS;

/// GCC's static runtime, `libgcc.a`, which `cc` links into every program
/// (`-lgcc`): of the newest GCC version installed.
pub fn static_compiler_runtime() -> Option<PathBuf> {
    let version = |path: &Path| -> Vec<u32> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name.split('.').map(|part| part.parse().unwrap_or(0)).collect()
    };
    GCC_LIBRARY_DIRS
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|entry| entry.ok().map(|e| e.path().join("libgcc.a")))
        .filter(|path| path.is_file())
        .max_by_key(|path| path.parent().map(version))
}

/// Finds `-lNAME` like `ld`: in each directory (`-L` ones in order, then
/// the defaults) `libNAME.so`, then `libNAME.a`; then the dynamic loader's
/// cache. With `prefer_static`, every directory is first searched for
/// `libNAME.a` alone, and the shared search is the fallback.
pub fn find_library(name: &str, search: &[PathBuf], prefer_static: bool) -> Result<PathBuf> {
    let dirs = || search.iter().map(PathBuf::as_path).chain(DEFAULT_DIRS.iter().map(Path::new));
    let first_in_dirs =
        |files: &[String]| dirs().find_map(|dir| files.iter().map(|file| dir.join(file)).find(|path| path.is_file()));
    // `-l:file.so` names a file exactly.
    if let Some(exact) = name.strip_prefix(':') {
        let files = [exact.to_string()];
        return first_in_dirs(&files).ok_or_else(|| not_found(name, &files, search));
    }
    let (shared, archive) = (format!("lib{}.so", name), format!("lib{}.a", name));
    if prefer_static {
        if let Some(path) = first_in_dirs(std::slice::from_ref(&archive)) {
            return Ok(path);
        }
    }
    let files = [shared, archive];
    if let Some(path) = first_in_dirs(&files) {
        return Ok(path);
    }
    // The dynamic loader's cache knows runtime names (`libz.so.1`) even
    // when no development symlink is installed.
    if let Some(path) = crate::graph::ldcache::lookup(&files[0]) {
        return Ok(path);
    }
    Err(not_found(name, &files, search))
}

fn not_found(name: &str, files: &[String], search: &[PathBuf]) -> anyhow::Error {
    let searched: Vec<String> =
        search.iter().map(|p| p.display().to_string()).chain(DEFAULT_DIRS.iter().map(|s| s.to_string())).collect();
    anyhow!("cannot find library -l{}: no {} in {}", name, files.join(" or "), searched.join(", "))
}

/// One file a GNU ld script names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptInput {
    pub path: PathBuf,
    /// Inside `AS_NEEDED ( ... )`: a shared library there is loaded only if
    /// it provides a symbol nothing else does (`libm.so` names libmvec so).
    pub as_needed: bool,
}

/// The files a GNU ld script names, resolved to paths.
pub fn expand_script(script_path: &Path, text: &str, search: &[PathBuf]) -> Result<Vec<ScriptInput>> {
    let text = strip_comments(text);
    let mut files = Vec::new();
    let tokens: Vec<String> =
        text.replace('(', " ( ").replace(')', " ) ").replace(',', " ").split_whitespace().map(str::to_string).collect();
    let mut depth = 0usize;
    let mut in_list = false;
    // The depth of the parenthesis an `AS_NEEDED` list opened, while in it.
    let mut as_needed_depth: Option<usize> = None;
    let mut as_needed_next = false;
    for tok in tokens {
        match tok.as_str() {
            "GROUP" | "INPUT" => in_list = true,
            "AS_NEEDED" => (in_list, as_needed_next) = (true, true),
            "(" => {
                depth += 1;
                if std::mem::take(&mut as_needed_next) {
                    as_needed_depth.get_or_insert(depth);
                }
            }
            ")" => {
                if as_needed_depth == Some(depth) {
                    as_needed_depth = None;
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    in_list = false;
                }
            }
            "OUTPUT_FORMAT" | "OUTPUT_ARCH" | "SEARCH_DIR" | "ENTRY" => in_list = false,
            file if in_list && depth > 0 => {
                let as_needed = as_needed_depth.is_some();
                if let Some(lib) = file.strip_prefix("-l") {
                    files.push(ScriptInput { path: find_library(lib, search, false)?, as_needed });
                } else {
                    let p = Path::new(file);
                    let resolved = if p.is_absolute() || p.exists() {
                        p.to_path_buf()
                    } else {
                        script_path
                            .parent()
                            .map(|d| d.join(p))
                            .filter(|c| c.exists())
                            .unwrap_or_else(|| p.to_path_buf())
                    };
                    files.push(ScriptInput { path: resolved, as_needed });
                }
            }
            _ => {}
        }
    }
    if files.is_empty() {
        bail!(
            "{}: a linker script that names no input files (jitrun understands GROUP, INPUT and AS_NEEDED)",
            script_path.display()
        );
    }
    Ok(files)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = match rest[start + 2..].find("*/") {
            Some(end) => &rest[start + 2 + end + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_libc_script() {
        let script = "/* GNU ld script\n   Use the shared library. */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n";
        let files = expand_script(Path::new("/usr/lib/x86_64-linux-gnu/libc.so"), script, &[]).unwrap();
        let input = |path: &str, as_needed| ScriptInput { path: PathBuf::from(path), as_needed };
        assert_eq!(
            files,
            vec![
                input("/lib/x86_64-linux-gnu/libc.so.6", false),
                input("/usr/lib/x86_64-linux-gnu/libc_nonshared.a", false),
                input("/lib64/ld-linux-x86-64.so.2", true)
            ]
        );
    }

    #[test]
    fn only_files_inside_as_needed_are_as_needed() {
        let script = "GROUP ( /l/libm.so.6 AS_NEEDED ( /l/libmvec.so.1 ) /l/after.a ) INPUT ( /l/x.a )";
        let files = expand_script(Path::new("/l/libm.so"), script, &[]).unwrap();
        let flags: Vec<bool> = files.iter().map(|f| f.as_needed).collect();
        assert_eq!(flags, [false, true, false, false]);
    }

    #[test]
    fn empty_script_is_an_error() {
        assert!(expand_script(Path::new("x.so"), "/* nothing */ OUTPUT_FORMAT(elf64-x86-64)", &[]).is_err());
    }

    /// A scratch directory per test under the system temp dir.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("jitrun-libsearch-{}-{}", name, std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn search_order_is_like_ld() {
        let root = temp_dir("order");
        let (a, b) = (root.join("a"), root.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("libjrtest.a"), b"!<arch>\n").unwrap();
        std::fs::write(b.join("libjrtest.so"), b"").unwrap();
        std::fs::write(b.join("libjrtest.a"), b"!<arch>\n").unwrap();
        // -L order first: an archive in an earlier directory wins over a later .so.
        assert_eq!(find_library("jrtest", &[a.clone(), b.clone()], false).unwrap(), a.join("libjrtest.a"));
        // In one directory the shared library wins, unless static is preferred.
        assert_eq!(find_library("jrtest", &[b.clone(), a.clone()], false).unwrap(), b.join("libjrtest.so"));
        assert_eq!(find_library("jrtest", &[b.clone(), a.clone()], true).unwrap(), b.join("libjrtest.a"));
        // Static preferred: any archive before any shared library.
        std::fs::remove_file(b.join("libjrtest.a")).unwrap();
        assert_eq!(find_library("jrtest", &[b.clone(), a.clone()], true).unwrap(), a.join("libjrtest.a"));
        // Falls back to the shared library when there is no archive.
        std::fs::remove_file(a.join("libjrtest.a")).unwrap();
        assert_eq!(find_library("jrtest", &[a.clone(), b.clone()], true).unwrap(), b.join("libjrtest.so"));
        // `-l:name` is an exact file name.
        assert_eq!(find_library(":libjrtest.so", &[a, b.clone()], false).unwrap(), b.join("libjrtest.so"));
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn finds_libm() {
        let p = find_library("m", &[], false).unwrap();
        assert!(p.to_string_lossy().contains("libm"));
        assert!(find_library("surely_not_a_library_xyz", &[], false).is_err());
    }
}
