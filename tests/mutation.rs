//! Mutation test: thousands of deterministic corruptions of real objects,
//! each run through `jitrun --noexec`. Every run must end with status 0, or
//! with 125 and exactly one stderr line `jitrun: error: ...` — never a
//! panic (101), a signal or a hang.
//!
//! Corruptions: truncations at many lengths, single bit flips anywhere, and
//! overwrites of format fields (header, section headers, symbols,
//! relocations, group members, `.eh_frame` record words, string-table
//! terminators) with boundary values. The generic corruptions work on any
//! format; the field overwrites come from [`fields_of`], which knows ELF,
//! Mach-O (header, load commands, sections, relocations, nlist entries) and
//! archives (member headers, symbol index, and each member's own fields).
//!
//! `JITRUN_MUTATIONS=N` changes the number of cases (default 4000),
//! `JITRUN_MUTATION_SEED=S` the seed; a failure prints the seed and case
//! index, and `JITRUN_MUTATION_KEEP=DIR` keeps every failing input in DIR.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// splitmix64: deterministic, tiny, good enough to pick cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A field of a file: `width` bytes at `offset`, little-endian binary or
/// (in archive member headers) space-padded ASCII decimal.
#[derive(Clone, Debug)]
struct Field {
    offset: usize,
    width: usize,
    decimal: bool,
    what: String,
}

impl Field {
    fn binary(offset: usize, width: usize, what: String) -> Field {
        Field { offset, width, decimal: false, what }
    }

    fn read(&self, bytes: &[u8]) -> Option<u64> {
        if !self.decimal {
            return read_le(bytes, self.offset, self.width);
        }
        let text = std::str::from_utf8(bytes.get(self.offset..self.offset + self.width)?).ok()?;
        Some(text.trim().parse().unwrap_or(0))
    }

    fn write(&self, bytes: &mut [u8], value: u64) {
        let place = &mut bytes[self.offset..self.offset + self.width];
        if self.decimal {
            let text = format!("{:<width$}", value, width = self.width);
            place.copy_from_slice(&text.as_bytes()[..self.width]);
        } else {
            place.copy_from_slice(&value.to_le_bytes()[..self.width]);
        }
    }

    /// The largest value the field can hold.
    fn max(&self) -> u64 {
        match (self.decimal, self.width) {
            (true, w) if w < 20 => 10u64.pow(w as u32) - 1,
            (true, _) | (false, 8) => u64::MAX,
            (false, w) => (1u64 << (8 * w)) - 1,
        }
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    Truncate(usize),
    FlipBit(usize, u8),
    Overwrite(Field, u64),
}

impl Mutation {
    fn apply(&self, original: &[u8]) -> Vec<u8> {
        let mut bytes = original.to_vec();
        match self {
            Mutation::Truncate(len) => bytes.truncate(*len),
            Mutation::FlipBit(at, bit) => bytes[*at] ^= 1 << bit,
            Mutation::Overwrite(field, value) => field.write(&mut bytes, *value),
        }
        bytes
    }

    fn describe(&self) -> String {
        match self {
            Mutation::Truncate(len) => format!("truncate to {} bytes", len),
            Mutation::FlipBit(at, bit) => format!("flip bit {} of byte {:#x}", bit, at),
            Mutation::Overwrite(f, v) => format!("{} (at {:#x}, {} bytes) = {:#x}", f.what, f.offset, f.width, v),
        }
    }
}

fn read_le(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let slice = bytes.get(at..at.checked_add(width)?)?;
    let mut le = [0u8; 8];
    le[..width].copy_from_slice(slice);
    Some(u64::from_le_bytes(le))
}

/// The fields worth corrupting, for the formats this test knows.
fn fields_of(bytes: &[u8]) -> Vec<Field> {
    if bytes.starts_with(b"\x7fELF") {
        return elf_fields(bytes);
    }
    if bytes.starts_with(b"!<arch>\n") {
        return archive_fields(bytes);
    }
    if bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe]) {
        return macho_fields(bytes);
    }
    Vec::new()
}

/// Mach-O 64: header, load commands, segments and their sections,
/// relocation entries, the symbol table and its string table's last byte.
fn macho_fields(bytes: &[u8]) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut add = |offset: usize, width: usize, what: String| {
        if offset + width <= bytes.len() {
            fields.push(Field::binary(offset, width, what));
        }
    };
    for (at, width, name) in [(4, 4, "cputype"), (12, 4, "filetype"), (16, 4, "ncmds"), (20, 4, "sizeofcmds")] {
        add(at, width, format!("Mach-O header {}", name));
    }
    let ncmds = read_le(bytes, 16, 4).unwrap_or(0).min(256);
    let mut at = 32usize;
    for c in 0..ncmds {
        let (Some(cmd), Some(cmdsize)) = (read_le(bytes, at, 4), read_le(bytes, at + 4, 4)) else { break };
        add(at + 4, 4, format!("load command {} cmdsize", c));
        match cmd {
            0x19 => {
                // LC_SEGMENT_64
                for (f, width, name) in [(32, 8, "vmsize"), (40, 8, "fileoff"), (48, 8, "filesize"), (64, 4, "nsects")]
                {
                    add(at + f, width, format!("segment {} {}", c, name));
                }
                let nsects = read_le(bytes, at + 64, 4).unwrap_or(0).min(256) as usize;
                for i in 0..nsects {
                    let sect = at + 72 + 80 * i;
                    for (f, width, name) in [
                        (32, 8, "addr"),
                        (40, 8, "size"),
                        (48, 4, "offset"),
                        (52, 4, "align"),
                        (56, 4, "reloff"),
                        (60, 4, "nreloc"),
                        (64, 4, "flags"),
                    ] {
                        add(sect + f, width, format!("section {} {}", i, name));
                    }
                    let reloff = read_le(bytes, sect + 56, 4).unwrap_or(0) as usize;
                    let nreloc = read_le(bytes, sect + 60, 4).unwrap_or(0).min(4096) as usize;
                    for r in 0..nreloc {
                        add(reloff + 8 * r, 4, format!("section {} relocation {} r_address", i, r));
                        add(reloff + 8 * r + 4, 4, format!("section {} relocation {} r_info", i, r));
                    }
                }
            }
            0x2 => {
                // LC_SYMTAB
                for (f, name) in [(8, "symoff"), (12, "nsyms"), (16, "stroff"), (20, "strsize")] {
                    add(at + f, 4, format!("symtab {}", name));
                }
                let symoff = read_le(bytes, at + 8, 4).unwrap_or(0) as usize;
                let nsyms = read_le(bytes, at + 12, 4).unwrap_or(0).min(65536) as usize;
                for i in 0..nsyms {
                    let sym = symoff + 16 * i;
                    for (f, width, name) in
                        [(0, 4, "n_strx"), (4, 1, "n_type"), (5, 1, "n_sect"), (6, 2, "n_desc"), (8, 8, "n_value")]
                    {
                        add(sym + f, width, format!("symbol {} {}", i, name));
                    }
                }
                let stroff = read_le(bytes, at + 16, 4).unwrap_or(0) as usize;
                let strsize = read_le(bytes, at + 20, 4).unwrap_or(0) as usize;
                if strsize > 0 {
                    add(stroff + strsize - 1, 1, "string table last byte".to_string());
                }
            }
            _ => {}
        }
        if cmdsize < 8 {
            break;
        }
        at += cmdsize as usize;
    }
    fields
}

/// Member headers (decimal sizes and the other ASCII fields, names), the
/// symbol index's count and offsets, and the fields of every ELF member.
fn archive_fields(bytes: &[u8]) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut at = 8;
    let mut member = 0;
    while at + 60 <= bytes.len() {
        let decimal = |offset: usize, width: usize, name: &str| Field {
            offset: at + offset,
            width,
            decimal: true,
            what: format!("member {} {}", member, name),
        };
        fields.push(decimal(48, 10, "ar_size"));
        fields.push(decimal(40, 8, "ar_mode"));
        fields.push(Field::binary(at, 4, format!("member {} ar_name", member)));
        fields.push(Field::binary(at + 58, 2, format!("member {} ar_fmag", member)));
        let Some(size) = fields[fields.len() - 4].read(bytes) else { break };
        let data = at + 60;
        let Some(end) = data.checked_add(size as usize).filter(|&e| e <= bytes.len()) else { break };
        let body = &bytes[data..end];
        if bytes[at..].starts_with(b"/ ") && body.len() >= 4 {
            // GNU symbol index: big-endian count, then offsets.
            for i in 0..(body.len() / 4).min(16) {
                fields.push(Field::binary(data + 4 * i, 4, format!("symbol index word {}", i)));
            }
        }
        for mut field in fields_of(body) {
            field.offset += data;
            field.what = format!("member {} {}", member, field.what);
            fields.push(field);
        }
        at = end + (end & 1);
        member += 1;
    }
    fields
}

fn elf_fields(bytes: &[u8]) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut add = |offset: usize, width: usize, what: String| {
        if offset + width <= bytes.len() {
            fields.push(Field::binary(offset, width, what));
        }
    };
    for (at, width, name) in [
        (4, 1, "EI_CLASS"),
        (5, 1, "EI_DATA"),
        (6, 1, "EI_VERSION"),
        (16, 2, "e_type"),
        (18, 2, "e_machine"),
        (20, 4, "e_version"),
        (32, 8, "e_phoff"),
        (40, 8, "e_shoff"),
        (52, 2, "e_ehsize"),
        (56, 2, "e_phnum"),
        (58, 2, "e_shentsize"),
        (60, 2, "e_shnum"),
        (62, 2, "e_shstrndx"),
    ] {
        add(at, width, format!("ELF header {}", name));
    }
    let (Some(shoff), Some(shnum)) = (read_le(bytes, 40, 8), read_le(bytes, 60, 2)) else {
        return fields;
    };
    for i in 0..shnum as usize {
        let sh = shoff as usize + 64 * i;
        let Some(sh_type) = read_le(bytes, sh + 4, 4) else { break };
        for (at, width, name) in [
            (0, 4, "sh_name"),
            (4, 4, "sh_type"),
            (8, 8, "sh_flags"),
            (24, 8, "sh_offset"),
            (32, 8, "sh_size"),
            (40, 4, "sh_link"),
            (44, 4, "sh_info"),
            (48, 8, "sh_addralign"),
            (56, 8, "sh_entsize"),
        ] {
            add(sh + at, width, format!("section {} {}", i, name));
        }
        let offset = read_le(bytes, sh + 24, 8).unwrap_or(0) as usize;
        let size = read_le(bytes, sh + 32, 8).unwrap_or(0) as usize;
        if offset.checked_add(size).is_none_or(|end| end > bytes.len()) {
            continue;
        }
        let entries = |entsize: usize| (0..size / entsize).map(move |e| offset + e * entsize);
        match sh_type as u32 {
            2 => {
                // SHT_SYMTAB
                for (e, at) in entries(24).enumerate() {
                    for (f, width, name) in [
                        (0, 4, "st_name"),
                        (4, 1, "st_info"),
                        (6, 2, "st_shndx"),
                        (8, 8, "st_value"),
                        (16, 8, "st_size"),
                    ] {
                        add(at + f, width, format!("symbol {} {}", e, name));
                    }
                }
            }
            4 => {
                // SHT_RELA
                for (e, at) in entries(24).enumerate() {
                    for (f, width, name) in
                        [(0, 8, "r_offset"), (8, 4, "r_type"), (12, 4, "r_sym"), (16, 8, "r_addend")]
                    {
                        add(at + f, width, format!("section {} relocation {} {}", i, e, name));
                    }
                }
            }
            3 if size > 0 => add(offset + size - 1, 1, format!("section {} (string table) last byte", i)),
            17 => {
                // SHT_GROUP: flag word, then member section indices.
                for (e, at) in entries(4).enumerate() {
                    add(at, 4, format!("group section {} word {}", i, e));
                }
            }
            _ => {}
        }
        let is_eh_frame = sh_type as u32 == 0x7000_0001
            || read_le(bytes, sh + 8, 8).is_some_and(|flags| flags & 2 != 0) && section_named(bytes, sh, ".eh_frame");
        if is_eh_frame {
            for (e, at) in entries(4).take(64).enumerate() {
                add(at, 4, format!("section {} (.eh_frame) word {}", i, e));
            }
        }
    }
    fields
}

fn section_named(bytes: &[u8], sh: usize, wanted: &str) -> bool {
    let lookup = || -> Option<bool> {
        let shoff = read_le(bytes, 40, 8)? as usize;
        let strndx = read_le(bytes, 62, 2)? as usize;
        let strtab = read_le(bytes, shoff + 64 * strndx + 24, 8)? as usize;
        let name = read_le(bytes, sh, 4)? as usize;
        let start = strtab.checked_add(name)?;
        Some(bytes.get(start..start.checked_add(wanted.len() + 1)?)? == [wanted.as_bytes(), b"\0"].concat())
    };
    lookup().unwrap_or(false)
}

/// Values that break arithmetic: zero, one, sign bits, all ones, and the
/// neighbours of the original value and of the file size.
fn boundary_values(field: &Field, original: u64, file_len: usize) -> Vec<u64> {
    let max = field.max();
    let half = max >> 1;
    let mut values = vec![
        0,
        1,
        2,
        half,
        half + 1,
        max,
        max - 1,
        original.wrapping_sub(1) & max,
        original.wrapping_add(1) & max,
        file_len as u64 & max,
        (file_len as u64).wrapping_sub(1) & max,
        0x1000 & max,
        original.wrapping_mul(0x10000) & max,
    ];
    values.retain(|&v| v != original);
    values.sort_unstable();
    values.dedup();
    values
}

/// All cases for one object: every header field at every boundary value,
/// truncations, then a seeded sample of the rest to fill `budget`.
fn mutations(bytes: &[u8], budget: usize, rng: &mut Rng) -> Vec<Mutation> {
    let mut all = Vec::new();
    let fields = fields_of(bytes);
    let mut others = Vec::new();
    for field in &fields {
        let original = field.read(bytes).unwrap_or(0);
        for value in boundary_values(field, original, bytes.len()) {
            let m = Mutation::Overwrite(field.clone(), value);
            if field.offset < 64 {
                all.push(m);
            } else {
                others.push(m);
            }
        }
    }
    let truncations = 48.min(budget / 8);
    for i in 0..truncations {
        // Dense near the start (headers), then spread over the whole file.
        let len = if i < 16 { i * 5 } else { (bytes.len() * (i - 15)) / (truncations - 15) };
        all.push(Mutation::Truncate(len.min(bytes.len().saturating_sub(1))));
    }
    let remaining = budget.saturating_sub(all.len());
    let flips = remaining / 4;
    for _ in 0..flips {
        all.push(Mutation::FlipBit(rng.below(bytes.len()), rng.below(8) as u8));
    }
    for _ in 0..remaining - flips {
        if others.is_empty() {
            all.push(Mutation::FlipBit(rng.below(bytes.len()), rng.below(8) as u8));
        } else {
            let i = rng.below(others.len());
            all.push(others.swap_remove(i));
        }
    }
    all
}

struct Case {
    object: usize,
    mutation: Mutation,
    allow_unresolved: bool,
}

enum Outcome {
    /// Linked (status 0) or refused with one error line (125).
    Fine(i32),
    Failed(String),
}

fn run_case(bytes: &[u8], input: &Path, stderr_path: &Path, allow_unresolved: bool) -> Outcome {
    std::fs::write(input, bytes).unwrap();
    let stderr = std::fs::File::create(stderr_path).unwrap();
    let mut cmd = common::jitrun_command();
    cmd.arg("--noexec");
    if bytes.starts_with(b"!<arch>\n") {
        cmd.arg("--whole-archive");
    }
    if allow_unresolved {
        cmd.arg("--allow-unresolved");
    }
    let mut child = cmd.arg(input).stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr).spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            return Outcome::Failed("timed out after 20 s".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let stderr = std::fs::read_to_string(stderr_path).unwrap_or_default();
    let first_line = stderr.lines().next().unwrap_or("").to_string();
    match common::shell_status_of(status) {
        0 => Outcome::Fine(0),
        125 if stderr.lines().count() == 1 && first_line.starts_with("jitrun: error: ") => Outcome::Fine(125),
        125 => Outcome::Failed(format!("status 125 but stderr is not one error line:\n{}", stderr)),
        code => Outcome::Failed(format!("status {}; stderr:\n{}", code, stderr)),
    }
}

/// The objects to corrupt: C, C++ (COMDAT groups, `.eh_frame`, many
/// relocation kinds) and thread-locals, at two flag sets.
fn build_objects(dir: &Path) -> Vec<PathBuf> {
    // The shipped example is an x86-64 object: on other CPUs it would link
    // only with --noexec.
    let mut objects: Vec<PathBuf> =
        cfg!(target_arch = "x86_64").then(|| common::testdata().join("examples/hello.o")).into_iter().collect();
    for (source, flags) in [
        ("c/hello.c", "-O0"),
        ("c/hello.c", "-O2 -fno-pic -fno-pie"),
        ("cxx/exceptions.cpp", "-O2"),
        ("cxx/rtti_stl.cpp", "-O0 -fPIC"),
        ("tls/models.c", "-O2 -fPIC"),
        // (aarch64's large model has no PIC, the compilers' default there)
        (
            "tls/models.c",
            if cfg!(target_arch = "aarch64") { "-O0 -mcmodel=large -fno-pic -fno-pie" } else { "-O0 -mcmodel=large" },
        ),
    ] {
        let out = dir.join(format!("{}{}", source.replace('/', "_"), flags.replace(' ', "")));
        std::fs::create_dir_all(&out).unwrap();
        objects.extend(common::compile(&[common::testdata().join(source)], flags, &[], &out));
    }
    // Mach-O objects of the same programs (clang-14 IR, llc-14 codegen),
    // x86-64 ones: where they link and run.
    if cfg!(target_arch = "x86_64") {
        let macho_dir = dir.join("macho");
        std::fs::create_dir_all(&macho_dir).unwrap();
        let macho_sources = ["c/hello.c", "tls/models.c"].map(|s| common::testdata().join(s));
        objects.extend(common::compile_macho(&macho_sources, "-O1", &[], &macho_dir));
    }
    // An archive (with a symbol index) of a thread-local program and a
    // helper, linked with --whole-archive so that every member is translated.
    let helper = common::compile_source(
        dir,
        "helper.c",
        "__thread int helper_tls = 3;\nint helper_data[4] = {1, 2};\nint helper(int x) { return x + helper_tls + helper_data[1]; }\n",
        "-O2 -fPIC",
    );
    let archive = dir.join("libmixed.a");
    let status = Command::new("ar").arg("rcs").arg(&archive).arg(&helper).arg(&objects[5]).status().expect("ar runs");
    assert!(status.success());
    objects.push(archive);
    objects
}

#[test]
fn corrupted_objects_get_one_error_line_never_a_crash() {
    let dir = common::scratch("mutation");
    let objects = build_objects(&dir);
    let total: usize = std::env::var("JITRUN_MUTATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    let seed: u64 = std::env::var("JITRUN_MUTATION_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x6a69_7472);
    let keep = std::env::var_os("JITRUN_MUTATION_KEEP").map(PathBuf::from);
    let originals: Vec<Vec<u8>> = objects.iter().map(|o| std::fs::read(o).unwrap()).collect();

    // Every corruption starts from an input that links.
    for (object, bytes) in objects.iter().zip(&originals) {
        match run_case(bytes, &dir.join("baseline.o"), &dir.join("baseline.err"), false) {
            Outcome::Fine(0) => {}
            Outcome::Fine(_) => panic!("{} does not link unmodified: {}", object.display(), {
                std::fs::read_to_string(dir.join("baseline.err")).unwrap_or_default()
            }),
            Outcome::Failed(why) => panic!("{} unmodified: {}", object.display(), why),
        }
    }

    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for (object, bytes) in originals.iter().enumerate() {
        for mutation in mutations(bytes, total / originals.len(), &mut rng) {
            let allow_unresolved = rng.below(2) == 0;
            cases.push(Case { object, mutation, allow_unresolved });
        }
    }

    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    let by_status: Mutex<BTreeMap<&str, usize>> = Mutex::new(BTreeMap::new());
    let started = Instant::now();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (cases, originals, objects, next, failures, by_status, dir, keep) =
                (&cases, &originals, &objects, &next, &failures, &by_status, &dir, &keep);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let bytes = case.mutation.apply(&originals[case.object]);
                let input = dir.join(format!("worker{}.o", w));
                let outcome = run_case(&bytes, &input, &dir.join(format!("worker{}.err", w)), case.allow_unresolved);
                let label = match &outcome {
                    Outcome::Fine(0) => "linked",
                    Outcome::Fine(_) => "refused",
                    Outcome::Failed(_) => "failed",
                };
                *by_status.lock().unwrap().entry(label).or_default() += 1;
                if let Outcome::Failed(why) = outcome {
                    let object = objects[case.object].file_name().unwrap().to_string_lossy().into_owned();
                    if let Some(keep) = keep {
                        std::fs::create_dir_all(keep).unwrap();
                        std::fs::write(keep.join(format!("case{}-{}", i, object)), &bytes).unwrap();
                    }
                    let message = format!(
                        "case {} (seed {:#x}): {} of {}{}: {}",
                        i,
                        seed,
                        case.mutation.describe(),
                        object,
                        if case.allow_unresolved { " with --allow-unresolved" } else { "" },
                        why
                    );
                    failures.lock().unwrap().push((i, message));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|f| f.0);
    eprintln!(
        "mutation test: {} cases over {} objects in {:.1} s: {:?}",
        cases.len(),
        objects.len(),
        started.elapsed().as_secs_f64(),
        by_status.into_inner().unwrap()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corrupted objects were mishandled:\n{}",
        failures.len(),
        cases.len(),
        failures.iter().map(|f| f.1.as_str()).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn boundary_values_cover_the_edges_of_each_width() {
    let v = boundary_values(&Field::binary(0, 2, "u16".into()), 0x40, 1000);
    for expected in [0, 1, 0x7fff, 0x8000, 0xffff, 0x3f, 0x41, 1000, 999] {
        assert!(v.contains(&expected), "{:#x} missing from {:x?}", expected, v);
    }
    assert!(!v.contains(&0x40));
    assert!(boundary_values(&Field::binary(0, 8, "u64".into()), 5, 10).contains(&u64::MAX));
    let size = Field { offset: 0, width: 10, decimal: true, what: "ar_size".into() };
    assert!(boundary_values(&size, 120, 10).contains(&9_999_999_999));
    let mut header = *b"120       ";
    size.write(&mut header, 7);
    assert_eq!(&header, b"7         ");
}
