//! Link maps (`--map`) and perf maps (`--perf-map`), both rendered from
//! [`LinkInfo`]. Layout is deterministic, so maps of the same inputs at the
//! same `--base` can be diffed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::graph::linkinfo::LinkInfo;

/// A readable table: segments, sections, symbols, GOT, stubs, externals.
pub fn render_text(info: &LinkInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Image {:#x}..{:#x} ({} bytes)", info.base, info.base + info.size, info.size);
    let _ = writeln!(out, "\nSegments\n  {:<18} {:>10}  prot  name", "address", "size");
    for s in &info.segments {
        let _ = writeln!(out, "  {:#018x} {:>#10x}  {}   {}", s.address, s.size, s.protection, s.name);
    }
    let _ = writeln!(out, "\nSections\n  {:<18} {:>10}  {:<7} name", "address", "size", "segment");
    for s in &info.sections {
        let _ = writeln!(out, "  {:#018x} {:>#10x}  {:<7} {}", s.address, s.size, s.segment, s.name);
    }
    let _ = writeln!(out, "\nInput sections\n  {:<18} {:>10}  object(section)", "address", "size");
    for s in &info.input_sections {
        let _ = writeln!(out, "  {:#018x} {:>#10x}  {}({})", s.address, s.size, s.object, s.name);
    }
    let _ = writeln!(
        out,
        "\nSymbols\n  {:<18} {:>10}  {:<8} {:<6} name  [object(section)]",
        "address", "size", "kind", "scope"
    );
    for s in &info.symbols {
        let _ = writeln!(
            out,
            "  {:#018x} {:>#10x}  {:<8} {:<6} {}  [{}({})]",
            s.address, s.size, s.kind, s.scope, s.name, s.object, s.section
        );
    }
    if !info.thread_locals.is_empty() {
        let _ = writeln!(
            out,
            "\nThread-locals (offsets in the TLS block)\n  {:<18} {:>10}  {:<6} name  [object(section)]",
            "offset", "size", "scope"
        );
        for t in &info.thread_locals {
            let _ = writeln!(
                out,
                "  {:#018x} {:>#10x}  {:<6} {}  [{}({})]",
                t.offset, t.size, t.scope, t.name, t.object, t.section
            );
        }
    }
    let _ = writeln!(out, "\nGOT entries\n  {:<18} {:<14} target", "address", "kind");
    for g in &info.got {
        let value = g.value.map(|v| format!(" = {:#x}", v)).unwrap_or_default();
        let _ = writeln!(out, "  {:#018x} {:<14} {}{}", g.address, g.kind, g.target, value);
    }
    let _ = writeln!(out, "\nStubs\n  {:<18} {:<18} target", "address", "GOT entry");
    for s in &info.stubs {
        let _ = writeln!(out, "  {:#018x} {:#018x} {} = {:#x}", s.address, s.got_entry, s.target, s.target_address);
    }
    let _ = writeln!(out, "\nExternals\n  {:<18} {:<32} from", "address", "name");
    for e in &info.externals {
        let _ = writeln!(out, "  {:#018x} {:<32} {}", e.address, e.name, e.library.as_deref().unwrap_or("<process>"));
    }
    out
}

pub fn render_json(info: &LinkInfo) -> String {
    let mut text = serde_json::to_string_pretty(info).expect("serializing plain data");
    text.push('\n');
    text
}

/// Where `--map` output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapDestination {
    /// stdout under `--noexec` (nothing else writes there), else stderr.
    Default,
    File(PathBuf),
}

pub fn write_map(info: &LinkInfo, json: bool, destination: &MapDestination, noexec: bool) -> Result<()> {
    let text = if json { render_json(info) } else { render_text(info) };
    match destination {
        MapDestination::File(path) => {
            std::fs::write(path, text).with_context(|| format!("--map {}: cannot write", path.display()))
        }
        MapDestination::Default if noexec => {
            print!("{}", text);
            Ok(())
        }
        MapDestination::Default => {
            eprint!("{}", text);
            Ok(())
        }
    }
}

/// The perf map path for this process: `/tmp/perf-PID.map`.
pub fn perf_map_path() -> PathBuf {
    PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()))
}

/// Writes `START SIZE NAME` (hex, no 0x) for every loaded function and
/// stub, the format `perf report` reads for JIT code.
pub fn write_perf_map(info: &LinkInfo, path: &Path) -> Result<()> {
    let mut out = String::new();
    for f in info.functions() {
        let _ = writeln!(out, "{:x} {:x} {}", f.address, f.size.max(1), f.name);
    }
    for s in &info.stubs {
        let _ = writeln!(out, "{:x} {:x} stub for {}", s.address, s.size, s.target);
    }
    std::fs::write(path, out).with_context(|| format!("{}: cannot write the perf map", path.display()))
}
