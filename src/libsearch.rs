//! Finding libraries like the system linker: `-lNAME` through `-L`
//! directories then the default ones, `libNAME.so` before `libNAME.a`
//! unless static libraries are preferred, and GNU ld scripts such as
//! `libc.so` (`GROUP`, `INPUT`, `AS_NEEDED`) expanded to the files they name.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// ld's default search path on Debian/Ubuntu x86-64 (`ld --verbose`).
pub const DEFAULT_DIRS: &[&str] = &[
    "/usr/local/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/local/lib64",
    "/lib64",
    "/usr/lib64",
    "/usr/local/lib",
    "/lib",
    "/usr/lib",
];

/// Finds `-lNAME`. With `prefer_static`, `libNAME.a` wins in each directory.
pub fn find_library(name: &str, search: &[PathBuf], prefer_static: bool) -> Result<PathBuf> {
    // `-l:file.so` names a file exactly.
    let candidates: Vec<String> = match name.strip_prefix(':') {
        Some(exact) => vec![exact.to_string()],
        None if prefer_static => vec![format!("lib{}.a", name), format!("lib{}.so", name)],
        None => vec![format!("lib{}.so", name), format!("lib{}.a", name)],
    };
    let dirs = search.iter().map(PathBuf::as_path).chain(DEFAULT_DIRS.iter().map(Path::new));
    for dir in dirs {
        for file in &candidates {
            let path = dir.join(file);
            if path.is_file() {
                return Ok(path);
            }
        }
    }
    // The dynamic loader's cache knows runtime names (`libz.so.1`) even
    // when no development symlink is installed.
    if name.strip_prefix(':').is_none() && !prefer_static {
        if let Some(path) = crate::ldcache::lookup(&format!("lib{}.so", name)) {
            return Ok(path);
        }
    }
    let searched: Vec<String> =
        search.iter().map(|p| p.display().to_string()).chain(DEFAULT_DIRS.iter().map(|s| s.to_string())).collect();
    bail!("cannot find library -l{}: no {} in {}", name, candidates.join(" or "), searched.join(", "))
}

/// The files a GNU ld script names, resolved to paths.
pub fn expand_script(script_path: &Path, text: &str, search: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let text = strip_comments(text);
    let mut files = Vec::new();
    let tokens: Vec<String> = text.replace(['(', ')', ','], " ( ").split_whitespace().map(str::to_string).collect();
    let mut depth = 0usize;
    let mut in_list = false;
    for tok in tokens {
        match tok.as_str() {
            "GROUP" | "INPUT" | "AS_NEEDED" => in_list = true,
            "(" => depth += 1,
            ")" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    in_list = false;
                }
            }
            "OUTPUT_FORMAT" | "OUTPUT_ARCH" | "SEARCH_DIR" | "ENTRY" => in_list = false,
            file if in_list && depth > 0 => {
                if let Some(lib) = file.strip_prefix("-l") {
                    files.push(find_library(lib, search, false)?);
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
                    files.push(resolved);
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
        assert_eq!(
            files,
            vec![
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/usr/lib/x86_64-linux-gnu/libc_nonshared.a"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
    }

    #[test]
    fn empty_script_is_an_error() {
        assert!(expand_script(Path::new("x.so"), "/* nothing */ OUTPUT_FORMAT(elf64-x86-64)", &[]).is_err());
    }

    #[test]
    fn finds_libm() {
        let p = find_library("m", &[], false).unwrap();
        assert!(p.to_string_lossy().contains("libm"));
        assert!(find_library("surely_not_a_library_xyz", &[], false).is_err());
    }
}
