//! `--check FILE`: evaluate `jitlink-check:` lines against the linked image,
//! the way llvm-jitlink's RuntimeDyldChecker does, so linker tests written
//! for it run with jitrun.
//!
//! A check line holds `jitlink-check: LHS = RHS` (or `rtdyld-check:`;
//! `==` is accepted too); a line ending in `\` continues on the next
//! check line. Expressions, evaluated on 64-bit values with
//! wrapping arithmetic, binary operators left to right without precedence
//! (as in LLVM):
//!
//! - numbers (decimal or `0x` hex) and symbol names (their address; a
//!   thread-local symbol's is its offset in the image's TLS block, which
//!   has no address in the image: llvm-jitlink, which allocates `.tdata`
//!   and `.tbss` like data, gives the address of the initial data instead,
//!   so differences of two thread-locals agree);
//! - `*{N}EXPR`: the N-byte (1, 2, 4, 8) little-endian value at address EXPR
//!   in the image, where EXPR extends to the end of the enclosing expression
//!   (`*{1}label+5` reads at `label+5`);
//! - `got_addr(file, sym)`: the symbol's GOT entry: its address entry, or
//!   for a thread-local its initial-exec slot, TLS descriptor or
//!   `tls_index`, in that order; `got_addr(file, sym, KIND)` picks one
//!   ([`GOT_KINDS`]);
//! - `stub_addr(file, sym)` (a middle section argument, as RuntimeDyld had,
//!   is accepted and ignored), `section_addr(file, section)`;
//! - `next_pc(ADDR)`: the address after the instruction at ADDR, a label or
//!   any expression (`label + 8`);
//! - `decode_operand(ADDR, N)`: operand N of that instruction, numbered as
//!   LLVM's `MCInst` does (x86-64: a memory operand is five: base, scale,
//!   index, displacement, segment; a read-write register destination is
//!   counted twice, like LLVM's tied operands; branch targets and
//!   RIP-relative displacements are relative to the next instruction;
//!   AArch64: immediates as encoded, see `arch::aarch64::instruction`);
//! - `+ - & | << >>`, parentheses, and a bit slice `EXPR[HIGH:LOW]`.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::graph::linkinfo::LinkInfo;

/// What checks read of a linked image: its link info, its symbols, and its
/// bytes at their target addresses, wherever the image lies (mapped in
/// this process, or in a buffer for another machine).
pub trait CheckedImage {
    /// The CPU of the image's code (how its instructions decode).
    fn cpu(&self) -> crate::arch::Cpu;
    fn link_info(&self) -> &LinkInfo;
    /// The address of a global symbol of the image.
    fn lookup(&self, name: &str) -> Option<u64>;
    /// The image is of Mach-O objects: a check may name `_foo` for the
    /// image's `foo` (see [`crate::graph::resolve::command_line_symbol`]).
    fn macho_names(&self) -> bool;
    /// The image's bytes from `addr`: up to `len` of them, fewer where the
    /// image ends; `None` when `addr` is outside it.
    fn bytes_at(&self, addr: u64, len: u64) -> Option<&[u8]>;
}

/// One failed or malformed check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    pub line: usize,
    pub text: String,
    pub message: String,
}

/// Evaluates every check line of `path`; returns how many lines were
/// checked and the failures.
pub fn run_file(image: &dyn CheckedImage, path: &Path) -> Result<(usize, Vec<CheckFailure>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("--check {}: cannot read", path.display()))?;
    Ok(run_text(image, &text))
}

pub fn run_text(image: &dyn CheckedImage, text: &str) -> (usize, Vec<CheckFailure>) {
    let checker = Checker { image, info: image.link_info() };
    let mut failures = Vec::new();
    let checks = check_lines(text);
    for (line, expr) in &checks {
        if let Err(message) = checker.check(expr) {
            failures.push(CheckFailure { line: *line, text: expr.clone(), message });
        }
    }
    (checks.len(), failures)
}

/// The check expressions of a file with the line each starts on; a check
/// ending in `\` continues on the next check line, as in LLVM's tests.
fn check_lines(text: &str) -> Vec<(usize, String)> {
    let mut checks: Vec<(usize, String)> = Vec::new();
    let mut continuing = false;
    for (i, line) in text.lines().enumerate() {
        let Some(expr) = ["jitlink-check:", "rtdyld-check:"].iter().find_map(|p| line.split_once(p).map(|x| x.1))
        else {
            continuing = false;
            continue;
        };
        let expr = expr.trim();
        let (body, continues) = match expr.strip_suffix('\\') {
            Some(body) => (body.trim_end(), true),
            None => (expr, false),
        };
        match checks.last_mut() {
            Some((_, previous)) if continuing => {
                previous.push(' ');
                previous.push_str(body);
            }
            _ => checks.push((i + 1, body.to_string())),
        }
        continuing = continues;
    }
    checks
}

/// The kinds of GOT entries `got_addr(file, sym)` finds, in the order it
/// prefers them: a symbol's address, then the thread-local forms (its
/// offset from the thread pointer, its TLS descriptor, its `tls_index`).
const GOT_KINDS: &[&str] = &["address", "tp-offset", "tls-descriptor", "tls-index"];

struct Checker<'a> {
    image: &'a dyn CheckedImage,
    info: &'a LinkInfo,
}

type Eval<T> = std::result::Result<T, String>;

/// Splits `LHS = RHS` at the top-level `=` (or `==`).
fn split_equation(expr: &str) -> Eval<(&str, &str)> {
    let bytes = expr.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'=' if depth == 0 => {
                let rhs_start = if bytes.get(i + 1) == Some(&b'=') { i + 2 } else { i + 1 };
                return Ok((&expr[..i], &expr[rhs_start..]));
            }
            _ => {}
        }
    }
    Err("expected `LHS = RHS`".to_string())
}

impl Checker<'_> {
    fn check(&self, expr: &str) -> Eval<()> {
        let (lhs, rhs) = split_equation(expr)?;
        let left = self.evaluate(lhs)?;
        let right = self.evaluate(rhs)?;
        if left == right {
            Ok(())
        } else {
            Err(format!("`{}` is {:#x} but `{}` is {:#x}", lhs.trim(), left, rhs.trim(), right))
        }
    }

    fn evaluate(&self, text: &str) -> Eval<u64> {
        let mut parser = Parser { text, pos: 0, checker: self };
        let value = parser.expr()?;
        parser.skip_space();
        if parser.pos != text.len() {
            return Err(format!("unexpected `{}` in `{}`", &text[parser.pos..], text.trim()));
        }
        Ok(value)
    }

    /// The names a check's `name` may have in the image, in order: exact,
    /// then, for Mach-O objects, without the C underscore the front-end
    /// drops (see [`crate::graph::resolve::command_line_symbol`]).
    fn spellings<'n>(&self, name: &'n str) -> impl Iterator<Item = &'n str> {
        let c_name = name.strip_prefix('_').filter(|c| self.image.macho_names() && !c.is_empty());
        std::iter::once(name).chain(c_name)
    }

    /// A symbol's value; the Mach-O front-end drops the C underscore that
    /// checks written for llvm-jitlink keep (`_main` is `main` there), while
    /// ELF names are exact.
    fn symbol(&self, name: &str) -> Eval<u64> {
        if name == "_GLOBAL_OFFSET_TABLE_" && self.image.lookup(name).is_none() {
            return self.info.got_base.ok_or_else(|| "the image has no GOT".to_string());
        }
        self.spellings(name).find_map(|n| self.exact_symbol(n)).ok_or_else(|| format!("no symbol `{}`", name))
    }

    fn exact_symbol(&self, name: &str) -> Option<u64> {
        if let Some(addr) = self.image.lookup(name) {
            return Some(addr);
        }
        if let Some(sym) = self.info.symbols.iter().find(|s| s.name == name) {
            return Some(sym.address);
        }
        // A thread-local symbol has no address in the image: its value is
        // its offset in the image's TLS block.
        if let Some(tls) = self.info.thread_locals.iter().find(|t| t.name == name) {
            return Some(tls.offset);
        }
        self.info.externals.iter().find(|e| e.name == name).map(|e| e.address)
    }

    fn read(&self, addr: u64, size: u64) -> Eval<u64> {
        if ![1, 2, 4, 8].contains(&size) {
            return Err(format!("cannot read {} bytes (1, 2, 4 or 8)", size));
        }
        let (start, end) = (self.info.base, self.info.base + self.info.size);
        let outside = || format!("address {:#x} is outside the image {:#x}..{:#x}", addr, start, end);
        let read = self.image.bytes_at(addr, size).filter(|bytes| bytes.len() == size as usize).ok_or_else(outside)?;
        let mut bytes = [0u8; 8];
        bytes[..read.len()].copy_from_slice(read);
        Ok(u64::from_le_bytes(bytes))
    }

    /// The bytes of the instruction at `place` (at most 15) and its
    /// address. `place` is a label, or any expression (`label + 12`, as
    /// newer LLVM takes).
    fn code_at(&self, place: &str) -> Eval<(&[u8], u64)> {
        let addr = self.evaluate(place)?;
        let not_in_image = || format!("`{}` at {:#x} is not in the image", place.trim(), addr);
        Ok((self.image.bytes_at(addr, 15).ok_or_else(not_in_image)?, addr))
    }

    fn decode_operand(&self, place: &str, index: u64) -> Eval<u64> {
        let (code, pc) = self.code_at(place)?;
        let decoded =
            self.image.cpu().decode_operand(code, pc, index).map_err(|e| format!("`{}`: {}", place.trim(), e))?;
        Ok(decoded.value)
    }

    fn next_pc(&self, place: &str) -> Eval<u64> {
        let (code, pc) = self.code_at(place)?;
        self.image.cpu().next_pc(code, pc).map_err(|e| format!("`{}`: {}", place.trim(), e))
    }

    fn matches_file(object: &str, file: &str) -> bool {
        object == file || Path::new(object).file_name().is_some_and(|n| n == file) || object.ends_with(file)
    }

    fn function(&self, name: &str, args: &[&str]) -> Eval<u64> {
        let want = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("{} takes {} arguments, got {}", name, n, args.len()))
            }
        };
        match name {
            "next_pc" => {
                want(1)?;
                self.next_pc(args[0])
            }
            "decode_operand" => {
                want(2)?;
                let index = self.evaluate(args[1])?;
                self.decode_operand(args[0], index)
            }
            "got_addr" => {
                if args.len() != 2 && args.len() != 3 {
                    return Err(format!("got_addr takes 2 arguments, got {}", args.len()));
                }
                let (file, sym) = (args[0], args[1]);
                // A symbol may have several kinds of entries (a thread-local
                // one, an initial-exec slot and a TLS descriptor): a third
                // argument names the kind; without it the first of
                // GOT_KINDS that the symbol has.
                let kinds: &[&str] = match args.get(2) {
                    Some(kind) if GOT_KINDS.contains(kind) => std::slice::from_ref(kind),
                    Some(kind) => {
                        return Err(format!("unknown GOT entry kind `{}` (one of {})", kind, GOT_KINDS.join(", ")))
                    }
                    None => GOT_KINDS,
                };
                self.spellings(sym)
                    .flat_map(|name| kinds.iter().map(move |kind| (name, kind)))
                    .find_map(|(name, kind)| {
                        self.info.got.iter().find(|g| {
                            g.kind == *kind
                                && g.target == name
                                && g.target_object.as_deref().is_none_or(|o| Self::matches_file(o, file))
                        })
                    })
                    .map(|g| g.address)
                    .ok_or_else(|| format!("no GOT entry for `{}` (from {})", sym, file))
            }
            "stub_addr" => {
                if args.len() != 2 && args.len() != 3 {
                    return Err(format!("stub_addr takes 2 arguments, got {}", args.len()));
                }
                // Three arguments are RuntimeDyld's (file, section, symbol) or
                // newer llvm-jitlink's (file, symbol, stub kind).
                let is_section = |a: &str| a.starts_with('.') || a.starts_with("__");
                let sym = if args.len() == 3 && is_section(args[1]) { args[2] } else { args[1] };
                let file = args[0];
                self.spellings(sym)
                    .find_map(|name| {
                        self.info.stubs.iter().find(|s| {
                            s.target == name && s.target_object.as_deref().is_none_or(|o| Self::matches_file(o, file))
                        })
                    })
                    .map(|s| s.address)
                    .ok_or_else(|| format!("no stub for `{}` (from {})", sym, file))
            }
            "section_addr" => {
                want(2)?;
                let (file, section) = (args[0], args[1]);
                self.info
                    .input_sections
                    .iter()
                    // Mach-O sections are named `__SEG,__sect`; checks name `__sect`.
                    .find(|s| {
                        (s.name == section || s.name.rsplit_once(',').is_some_and(|(_, sect)| sect == section))
                            && Self::matches_file(&s.object, file)
                    })
                    .map(|s| s.address)
                    .ok_or_else(|| format!("no section `{}` in {}", section, file))
            }
            _ => Err(format!("unknown function `{}`", name)),
        }
    }
}

struct Parser<'a, 'c> {
    text: &'a str,
    pos: usize,
    checker: &'c Checker<'c>,
}

impl<'a> Parser<'a, '_> {
    fn skip_space(&mut self) {
        while self.text[self.pos..].starts_with(|c: char| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.pos..].starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Eval<()> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(format!("expected `{}` at `{}`", token, &self.text[self.pos..]))
        }
    }

    fn expr(&mut self) -> Eval<u64> {
        let mut value = self.sliced()?;
        loop {
            self.skip_space();
            let rest = &self.text[self.pos..];
            let op = ["<<", ">>", "+", "-", "&", "|"].into_iter().find(|op| rest.starts_with(op));
            let Some(op) = op else { return Ok(value) };
            self.pos += op.len();
            let rhs = self.sliced()?;
            value = match op {
                "<<" => value.checked_shl(rhs as u32).unwrap_or(0),
                ">>" => value.checked_shr(rhs as u32).unwrap_or(0),
                "+" => value.wrapping_add(rhs),
                "-" => value.wrapping_sub(rhs),
                "&" => value & rhs,
                _ => value | rhs,
            };
        }
    }

    fn sliced(&mut self) -> Eval<u64> {
        let value = self.primary()?;
        if !self.eat("[") {
            return Ok(value);
        }
        let high = self.number()?;
        self.expect(":")?;
        let low = self.number()?;
        self.expect("]")?;
        if high < low || high > 63 {
            return Err(format!("bad slice [{}:{}]", high, low));
        }
        let width = high - low + 1;
        let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        Ok((value >> low) & mask)
    }

    fn number(&mut self) -> Eval<u64> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let len = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
        let token = &rest[..len];
        self.pos += len;
        crate::support::parse_address(token)
    }

    fn identifier(&mut self) -> &'a str {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '@')))
            .unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    /// Raw comma-separated arguments up to the matching `)`.
    fn arguments(&mut self) -> Eval<Vec<&'a str>> {
        let start = self.pos;
        let mut depth = 0;
        for (i, c) in self.text[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    self.pos = start + i + 1;
                    let inner = &self.text[start..start + i];
                    return Ok(split_top_level(inner));
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        Err("missing `)`".to_string())
    }

    fn primary(&mut self) -> Eval<u64> {
        if self.eat("(") {
            let value = self.expr()?;
            self.expect(")")?;
            return Ok(value);
        }
        if self.eat("*") {
            self.expect("{")?;
            let size = self.number()?;
            self.expect("}")?;
            // As in LLVM, the address is everything up to the end of the
            // enclosing expression: `*{1}label+5` reads the byte at label+5.
            let addr = self.expr()?;
            return self.checker.read(addr, size);
        }
        self.skip_space();
        let rest = &self.text[self.pos..];
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            return self.number();
        }
        let name = self.identifier();
        if name.is_empty() {
            return Err(format!("expected an expression at `{}`", rest));
        }
        if self.eat("(") {
            let args = self.arguments()?;
            return self.checker.function(name, &args);
        }
        self.checker.symbol(name)
    }
}

fn split_top_level(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner.trim().is_empty() {
        parts.push(inner[start..].trim());
    }
    parts
}

/// Runs every `--check` file; prints each failure on stderr; fails if any did.
pub fn run_files(image: &dyn CheckedImage, files: &[std::path::PathBuf]) -> Result<()> {
    let mut failed = 0;
    let mut total = 0;
    for file in files {
        let (checked, failures) = run_file(image, file)?;
        total += checked;
        for f in &failures {
            eprintln!("jitrun: check failed: {}:{}: {}: {}", file.display(), f.line, f.text, f.message);
        }
        failed += failures.len();
    }
    if failed > 0 {
        bail!("{} of {} checks failed", failed, total);
    }
    if total == 0 {
        bail!(
            "--check: no `jitlink-check:` lines in {}",
            files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_lines_join_continuations_and_keep_their_first_line() {
        let text = "x\n# jitlink-check: a = \\\n# jitlink-check:   b + 1\n# jitlink-check: c = d\n";
        assert_eq!(check_lines(text), vec![(2, "a = b + 1".to_string()), (4, "c = d".to_string())]);
    }

    #[test]
    fn equations_split_at_the_top_level_equals() {
        assert_eq!(split_equation("*{8}(x) == y").unwrap(), ("*{8}(x) ", " y"));
        assert_eq!(split_equation("f(a, b)[3:0] = 1").unwrap(), ("f(a, b)[3:0] ", " 1"));
        assert!(split_equation("no equation").is_err());
    }

    #[test]
    fn arguments_split_at_top_level_commas() {
        assert_eq!(split_top_level("file.o, f(a, b) , sym"), vec!["file.o", "f(a, b)", "sym"]);
        assert!(split_top_level("  ").is_empty());
    }
}
