//! Mach-O objects: differential runs of C programs built as Mach-O for the
//! tests' CPU (x86-64, or arm64 when jitrun is built for aarch64) against
//! their native ELF builds, relocated bytes of every relocation kind at a
//! fixed base (x86-64 in memory; arm64 with `--noexec --check` on any
//! host), and the errors for what is refused.
//!
//! Needs clang-14, llc-14 and llvm-mc-14 (Debian: clang-14, llvm-14).

mod common;

#[cfg(target_arch = "x86_64")]
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(target_arch = "x86_64")]
use jitrun::{Image, LinkOptions, Linker};

/// Flag sets of the Mach-O builds (Mach-O code is always PIC; the ELF
/// code-model variants do not apply).
const MACHO_FLAG_SETS: &[&str] = &["-O0", "-O2"];

macro_rules! macho_programs {
    ($($test:ident => ($suite:literal, $file:literal),)*) => {
        $(
            #[test]
            fn $test() {
                common::check_macho_program($suite, $file, MACHO_FLAG_SETS);
            }
        )*
        const LISTED: &[(&str, &str)] = &[$(($suite, $file)),*];
    };
}

// Programs of testdata/c (shared with the ELF differential tests) and the
// Mach-O specific ones of testdata/macho. Add new ones here.
macho_programs! {
    c_hello => ("c", "hello.c"),
    tls_models => ("tls", "models.c"),
    tls_concurrent => ("tls", "concurrent.c"),
    cxx_exceptions_shared => ("cxx", "exceptions.cpp"),
    cxx_iostream_io => ("cxx", "iostream_io.cpp"),
    cxx_rtti_stl => ("cxx", "rtti_stl.cpp"),
    // std::call_once reads libstdc++'s thread-locals through
    // X86_64_RELOC_TLV: jitrun makes TLV descriptors for them.
    cxx_threads => ("cxx", "threads.cpp"),
    cxx_uncaught => ("cxx", "uncaught.cpp"),
    cxx_registry => ("cxx", "registry"),
    darwin_runtime => ("macho", "darwin_runtime.c"),
    tls_threads => ("macho", "tls_threads.c"),
    // printf and the like with many and floating-point arguments,
    // open/fcntl/dprintf, and the program's own variadic functions: on
    // arm64 through the bridges of Darwin's variadic convention.
    variadic => ("macho", "variadic.c"),
    cxx_exceptions => ("macho", "exceptions.cpp"),
}

#[test]
fn tls_big_static() {
    // As tests/tls.rs's big_static_tls: under qemu-user no thread starts
    // once glibc.rtld.optional_static_tls is raised, natively linked
    // programs included.
    if common::emulation_cannot_show("qemu-user cannot start threads with a large static TLS surplus") {
        return;
    }
    common::check_macho_program("tls", "big_static_tls.c", MACHO_FLAG_SETS);
}

#[test]
fn every_c_program_in_testdata_macho_has_a_test() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(common::testdata().join("macho")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if (name.ends_with(".c") || name.ends_with(".cpp")) && !LISTED.contains(&("macho", name.as_str())) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "add these to macho_programs!: {:?}", missing);
}

#[cfg(target_arch = "x86_64")]
fn link_at(objects: &[PathBuf], base: u64, defines: &[(&str, u64)]) -> anyhow::Result<Image> {
    let options = LinkOptions {
        base: Some(base),
        defines: defines.iter().map(|(n, v)| (n.to_string(), *v)).collect::<HashMap<_, _>>(),
        ..Default::default()
    };
    let mut linker = Linker::new(options);
    for object in objects {
        linker.add_file(object)?;
    }
    linker.link()
}

#[cfg(target_arch = "x86_64")]
/// Reads relocated bytes of a linked (not running) image.
struct Memory<'a>(&'a Image);

#[cfg(target_arch = "x86_64")]
impl Memory<'_> {
    fn bytes<const N: usize>(&self, addr: u64) -> [u8; N] {
        let range = self.0.range();
        assert!(range.start <= addr && addr + N as u64 <= range.end, "{:#x} is outside the image {:x?}", addr, range);
        // SAFETY: the range lies inside the mapped image (checked above),
        // whose segments are all readable once linked.
        unsafe { std::ptr::read_unaligned(addr as *const [u8; N]) }
    }

    fn u64(&self, addr: u64) -> u64 {
        u64::from_le_bytes(self.bytes(addr))
    }

    fn i32(&self, addr: u64) -> i64 {
        i32::from_le_bytes(self.bytes(addr)) as i64
    }

    fn u8(&self, addr: u64) -> u8 {
        self.bytes::<1>(addr)[0]
    }

    /// The target of a rip-relative field at `field` in an instruction
    /// that ends at `next_pc`.
    fn rip_target(&self, field: u64, next_pc: u64) -> u64 {
        (next_pc as i64 + self.i32(field)) as u64
    }

    /// Reads a 64-bit word outside the image (a GOT entry is inside; the
    /// host's variables are not).
    fn host_u64(addr: u64) -> u64 {
        // SAFETY: only called with addresses of live host variables.
        unsafe { std::ptr::read(addr as *const u64) }
    }
}

#[cfg(target_arch = "x86_64")]
const FAR_DATA: u64 = 0xdead_beef;
#[cfg(target_arch = "x86_64")]
const FAR_FUNC: u64 = 0xcafe_f00d;

#[cfg(target_arch = "x86_64")]
extern "C" {
    static stdout: *mut std::ffi::c_void;
    static stderr: *mut std::ffi::c_void;
    static environ: *mut *mut std::ffi::c_char;
    fn __errno_location() -> *mut i32;
    fn bzero(p: *mut std::ffi::c_void, n: usize);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn every_relocation_kind_is_applied() {
    let dir = common::scratch("macho-relocations");
    let object = common::assemble_macho(&common::testdata().join("macho/relocations.s"), &dir);
    let base = 0x4000_0000;
    let image = link_at(&[object], base, &[("far_data", FAR_DATA), ("far_func", FAR_FUNC)]).unwrap();
    assert_eq!(image.range().start, base);
    let m = Memory(&image);
    let sym = |name: &str| image.lookup(name).unwrap_or_else(|| panic!("{} is not defined", name));
    let local_target = sym("local_target");
    let private_func = local_target - 16;
    let data_word = sym("data_word");
    let private_data = data_word - 24;

    // BRANCH: e8 rel32.
    let t = sym("t_branch_local");
    assert_eq!(m.rip_target(t + 1, t + 5), local_target);
    // BRANCH to a far function: through a stub `jmp *GOT(%rip)`.
    let t = sym("t_branch_far");
    let stub = m.rip_target(t + 1, t + 5);
    assert_eq!(m.bytes::<2>(stub), [0xff, 0x25]);
    assert_eq!(m.u64(m.rip_target(stub + 2, stub + 6)), FAR_FUNC);
    // GOT_LOAD, far: the movq stays and reads the GOT entry.
    let t = sym("t_gotload_far");
    assert_eq!(m.bytes::<3>(t), [0x48, 0x8b, 0x05]);
    let far_data_got = m.rip_target(t + 3, t + 7);
    assert_eq!(m.u64(far_data_got), FAR_DATA);
    // GOT_LOAD, near: relaxed to leaq of the symbol itself.
    let t = sym("t_gotload_near");
    assert_eq!(m.bytes::<3>(t), [0x48, 0x8d, 0x0d]);
    assert_eq!(m.rip_target(t + 3, t + 7), data_word);
    // GOT with an immediate after the field: cmpq $0, x@GOTPCREL(%rip).
    let t = sym("t_got_cmp");
    assert_eq!(m.rip_target(t + 3, t + 8), far_data_got);
    // SIGNED and SIGNED_1/2/4: the field sits 0/1/2/4 bytes before the end.
    for (name, field, len, target) in [
        ("t_signed", 3, 7, data_word),
        ("t_signed1", 2, 7, data_word),
        ("t_signed2", 3, 9, data_word),
        ("t_signed4", 2, 10, data_word),
        ("t_signed_anon", 3, 7, private_data + 8),
        ("t_signed1_anon", 2, 7, private_data),
        ("t_signed2_anon", 3, 9, private_data),
        ("t_signed4_anon", 2, 10, private_data),
    ] {
        let t = sym(name);
        assert_eq!(m.rip_target(t + field, t + len), target, "{}", name);
    }
    // The immediates after the fields are untouched.
    assert_eq!(m.u8(sym("t_signed1") + 6), 0x11);
    assert_eq!(m.bytes::<4>(sym("t_signed4") + 6), [0x44; 4]);
    // TLV: leaq of the descriptor {thunk, key, thread-pointer offset}.
    let t = sym("t_tlv");
    assert_eq!(m.bytes::<3>(t), [0x48, 0x8d, 0x3d]);
    let descriptor = sym("tls_var");
    assert_eq!(m.rip_target(t + 3, t + 7), descriptor);
    assert_eq!(m.u64(descriptor), sym("__jitrun_tlv_get_addr"));
    let tp_offset = m.u64(descriptor + 16) as i64;
    assert!(tp_offset < 0 && tp_offset % 4 == 0, "thread-pointer offset {}", tp_offset);

    // UNSIGNED, 64 and 32 bits, extern and section-relative.
    assert_eq!(m.u64(sym("u64_extern")), local_target + 5);
    assert_eq!(m.i32(sym("u32_extern")) as u32 as u64, FAR_FUNC);
    assert_eq!(m.u64(sym("u64_anon")), private_func);
    assert_eq!(m.i32(sym("u32_anon")) as u64, private_data + 4);
    // SUBTRACTOR pairs: private minuends, both directions, 64 and 32 bits,
    // an alt-entry minuend, symbols in different sections.
    let delta = |a: u64, b: u64, c: i64| (a as i64 - b as i64 + c) as u64;
    assert_eq!(m.u64(private_data + 8), delta(private_data + 8, data_word, -3));
    assert_eq!(m.i32(private_data + 16) as u64, delta(private_data + 16, data_word, -3));
    let s = sym("sub_minuend_here64");
    assert_eq!(m.u64(s), delta(s, data_word, 7));
    let s = sym("sub_subtrahend_here64");
    assert_eq!(m.u64(s), delta(data_word, s, -7));
    let s = sym("sub_minuend_here32");
    assert_eq!(m.i32(s) as u64, delta(s, data_word, 7));
    let s = sym("sub_subtrahend_here32");
    assert_eq!(m.i32(s) as u64, delta(data_word, s, -7));
    let s = sym("sub_anon_minuend64");
    assert_eq!(m.u64(s), delta(private_data, s, 1));
    assert_eq!(sym("data_word_alt"), data_word + 8);
    assert_eq!(m.u64(sym("sub_alt_entry64")), delta(data_word + 8, sym("u64_extern"), 0));
    assert_eq!(m.u64(sym("sub_far_apart64")), delta(local_target, data_word, 0));
    // GOT in data: the entry's distance from the field.
    let s = sym("got_in_data");
    assert_eq!(m.i32(s) as u64, delta(far_data_got, s, 0));

    // Weak definitions, private externs, absolute symbols, weak references.
    assert_eq!(m.u64(sym("weak_word")), 0x77);
    assert_eq!(m.u64(sym("hidden_word")), sym("hidden_word"));
    assert_eq!(sym("absolute_sym"), 0x12345);
    assert_eq!(m.u64(sym("abs_ref")), 0x12345);
    assert_eq!(m.u64(sym("weak_ref")), 0);
    // Darwin libc names bound to glibc.
    let names = sym("darwin_names");
    let expected = [
        std::ptr::addr_of!(stdout) as u64,
        std::ptr::addr_of!(stderr) as u64,
        __errno_location as *const () as u64,
        std::ptr::addr_of!(environ) as u64,
        bzero as *const () as u64,
    ];
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(m.u64(names + 8 * i as u64), *want, "darwin_names[{}]", i);
    }
    assert_ne!(Memory::host_u64(expected[0]), 0);
    // Common, zero-fill and aligned sections.
    let common = sym("common_sym");
    assert_eq!(common % 32, 0);
    assert_eq!(m.bytes::<16>(common), [0; 16]);
    let zerofill = sym("zerofill_sym");
    assert_eq!(zerofill % 16, 0);
    assert_eq!(m.bytes::<24>(zerofill), [0; 24]);
    let aligned = sym("aligned_byte");
    assert_eq!(aligned % 64, 0);
    assert_eq!(m.u8(aligned), 1);
}

fn jitrun(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::jitrun_command().args(args).output().unwrap()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// An arm64 object runs on an aarch64 host; on another one jitrun
/// refuses to run it and says how to link it.
#[test]
fn arm64_objects_run_on_arm64_and_link_anywhere() {
    let dir = common::scratch("macho-arm64");
    let source = dir.join("arm.s");
    std::fs::write(&source, ".globl _main\n.p2align 2\n_main:\n  mov w0, #7\n  ret\n").unwrap();
    let object = common::assemble_macho_for(common::MACHO_ARM64_TRIPLE, &source, &dir);
    let out = jitrun(&[object.as_os_str()]);
    if cfg!(target_arch = "aarch64") {
        assert_eq!(out.status.code(), Some(7), "{}", stderr_of(&out));
    } else {
        assert_eq!(out.status.code(), Some(125));
        let err = stderr_of(&out);
        assert!(err.contains("arm.o") && err.contains("aarch64") && err.contains("--noexec"), "{}", err);
    }
    let out = jitrun(&["--noexec".as_ref(), "--base".as_ref(), "0x7000000000".as_ref(), object.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
}

/// The check files of `testdata/macho/arm64/checks`: each is assembled for
/// arm64 and linked at the base its `# jitrun-args:` line gives, on any
/// host, and every `jitlink-check:` expression must hold (or, with
/// `# expect-error: TEXT`, the link must fail saying TEXT).
#[test]
fn arm64_check_files_hold_at_a_fixed_base() {
    let dir = common::scratch("macho-arm64-checks");
    let checks = common::testdata().join("macho/arm64/checks");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&checks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{:?}", files);
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let directive = |name: &str| {
            text.lines().find_map(|l| l.strip_prefix(&format!("# {}:", name)).map(|v| v.trim().to_string()))
        };
        let args = directive("jitrun-args").unwrap_or_else(|| panic!("{}: no `# jitrun-args:` line", file.display()));
        let object = format!("{}.o", file.file_stem().unwrap().to_string_lossy());
        common::assemble_macho_for(common::MACHO_ARM64_TRIPLE, file, &dir);
        let out = common::jitrun_command()
            .current_dir(&dir)
            .arg("--noexec")
            .args(args.split_whitespace())
            .arg("--check")
            .arg(file)
            .arg(&object)
            .output()
            .unwrap();
        let name = file.file_name().unwrap().to_string_lossy();
        match directive("expect-error") {
            Some(expected) => {
                if out.status.code() != Some(125) || !stderr_of(&out).contains(&expected) {
                    failures.push(format!(
                        "{}: expected an error with {:?}, got {:?}: {}",
                        name,
                        expected,
                        out.status,
                        stderr_of(&out)
                    ));
                }
            }
            None => {
                if !out.status.success() {
                    failures.push(format!("{}: {}", name, stderr_of(&out)));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mach_o_and_elf_objects_do_not_mix() {
    let dir = common::scratch("macho-mix");
    let hello = common::testdata().join("c/hello.c");
    let elf = common::compile(std::slice::from_ref(&hello), "-O2", &[], &dir);
    let macho = common::compile_macho(&[hello], "-O2", &[], &dir);
    let out = jitrun(&[elf[0].as_os_str(), macho[0].as_os_str()]);
    assert_eq!(out.status.code(), Some(125));
    let err = stderr_of(&out);
    assert!(err.contains("Mach-O objects cannot be linked with ELF objects"), "{}", err);
}

/// Offset in the file of the first relocation entry of `section`.
fn relocations_offset(object: &Path, section: &[u8]) -> u64 {
    use object::read::macho::{MachHeader, Section, Segment};
    let data = std::fs::read(object).unwrap();
    let header = object::macho::MachHeader64::<object::Endianness>::parse(&*data, 0).unwrap();
    let endian = header.endian().unwrap();
    let mut commands = header.load_commands(endian, &*data, 0).unwrap();
    while let Some(command) = commands.next().unwrap() {
        if let Some((segment, section_data)) = command.segment_64().unwrap() {
            for s in segment.sections(endian, section_data).unwrap() {
                if s.name() == section {
                    return u64::from(s.reloff(endian));
                }
            }
        }
    }
    panic!("no section {:?}", String::from_utf8_lossy(section));
}

#[test]
fn unknown_relocations_name_file_section_and_offset() {
    let dir = common::scratch("macho-bad-reloc");
    let object = common::assemble_macho(&common::testdata().join("macho/relocations.s"), &dir);
    let mut bytes = std::fs::read(&object).unwrap();
    // The first entry of __text is the TLV at 0x7e; make its type 15.
    let at = relocations_offset(&object, b"__text") as usize;
    let address = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    bytes[at + 7] = (bytes[at + 7] & 0x0f) | 0xf0;
    let bad = dir.join("bad.o");
    std::fs::write(&bad, bytes).unwrap();
    let out = jitrun(&[std::ffi::OsStr::new("--noexec"), bad.as_os_str()]);
    assert_eq!(out.status.code(), Some(125));
    let err = stderr_of(&out);
    let place = format!("bad.o: section __TEXT,__text+{:#x}", address);
    assert!(err.contains(&place) && err.contains("type 15"), "{}", err);
}

#[test]
fn truncated_objects_are_errors_not_panics() {
    let dir = common::scratch("macho-truncated");
    let object = common::assemble_macho(&common::testdata().join("macho/relocations.s"), &dir);
    let bytes = std::fs::read(&object).unwrap();
    for len in [16, 40, 200, bytes.len() / 2, bytes.len() - 8] {
        let cut = dir.join(format!("cut{}.o", len));
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let out = jitrun(&[std::ffi::OsStr::new("--noexec"), cut.as_os_str()]);
        assert_eq!(out.status.code(), Some(125), "length {}: {}", len, stderr_of(&out));
        assert!(stderr_of(&out).starts_with("jitrun: error: "), "{}", stderr_of(&out));
    }
}

#[test]
fn mach_o_archive_members_load_on_demand() {
    let dir = common::scratch("macho-archive");
    let src = common::testdata().join("macho/archive");
    let objects =
        common::compile_macho(&[src.join("main.c"), src.join("helper.c"), src.join("unused.c")], "-O2", &[], &dir);
    // With the archive's own symbol index (`_helper_add`) and without one.
    for (archive, flag) in [("libhelper.a", "rc"), ("libhelper_noindex.a", "rcS")] {
        let path = dir.join(archive);
        let _ = std::fs::remove_file(&path);
        let status = Command::new("llvm-ar-14").arg(flag).arg(&path).args(&objects[1..]).status().unwrap();
        assert!(status.success());
        let out = jitrun(&[objects[0].as_os_str(), path.as_os_str()]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "from a Mach-O archive member 5\n", "{}", stderr_of(&out));
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    }
}

/// Mach-O records no symbol sizes; each symbol spans to the next one of its
/// section, as ld64's atoms do. With them `--set` writes an integer global
/// of a Mach-O image (the mull-style loop) and the map shows real sizes.
#[test]
fn mach_o_symbols_have_sizes_so_set_and_the_map_work() {
    let dir = common::scratch("macho-sizes");
    let object = common::compile_macho(&[common::testdata().join("reuse/mutants.c")], "-O2", &[], &dir).remove(0);
    let out = jitrun(&[object.as_os_str(), "--set".as_ref(), "mutant_id=4".as_ref()]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    let out = jitrun(&[object.as_os_str(), "--isolate".as_ref(), "--set".as_ref(), "label=set".as_ref()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("label set"), "{}", String::from_utf8_lossy(&out.stdout));
    let map = jitrun(&["--noexec".as_ref(), "--map".as_ref(), object.as_os_str()]);
    let map = String::from_utf8_lossy(&map.stdout);
    let size_of = |name: &str| {
        let line = map.lines().find(|l| l.split_whitespace().nth(4) == Some(name)).unwrap_or_else(|| panic!("{}", map));
        line.split_whitespace().nth(1).unwrap().to_string()
    };
    assert_eq!(size_of("mutant_id"), "0x4", "{}", map);
    assert_eq!(size_of("answer"), "0x4", "{}", map);
    assert_ne!(size_of("main"), "0x0", "{}", map);
}

/// Where `section`'s contents and relocation entries start in `object`,
/// and where its symbol table and string table start.
#[derive(Clone, Copy)]
struct Layout {
    text: u64,
    text_relocs: u64,
    data_relocs: u64,
    symbols: u64,
    strings: u64,
}

fn layout(object: &Path) -> Layout {
    use object::read::macho::{MachHeader, Section, Segment};
    let data = std::fs::read(object).unwrap();
    let header = object::macho::MachHeader64::<object::Endianness>::parse(&*data, 0).unwrap();
    let endian = header.endian().unwrap();
    let mut commands = header.load_commands(endian, &*data, 0).unwrap();
    let mut layout = Layout { text: 0, text_relocs: 0, data_relocs: 0, symbols: 0, strings: 0 };
    while let Some(command) = commands.next().unwrap() {
        if let Some((segment, section_data)) = command.segment_64().unwrap() {
            for s in segment.sections(endian, section_data).unwrap() {
                match s.name() {
                    b"__text" => (layout.text, layout.text_relocs) = (s.offset(endian).into(), s.reloff(endian).into()),
                    b"__data" => layout.data_relocs = s.reloff(endian).into(),
                    _ => {}
                }
            }
        } else if let Some(symtab) = command.symtab().unwrap() {
            layout.symbols = symtab.symoff.get(endian).into();
            layout.strings = symtab.stroff.get(endian).into();
        }
    }
    layout
}

/// Malformed arm64 relocations and symbols: each one error naming the
/// file, the section and offset, and what is wrong; never a panic.
#[test]
fn arm64_malformed_relocations_are_clear_errors() {
    let dir = common::scratch("macho-arm64-malformed");
    let object = common::assemble_macho_for(
        common::MACHO_ARM64_TRIPLE,
        &common::testdata().join("macho/arm64/malformed.s"),
        &dir,
    );
    let original = std::fs::read(&object).unwrap();
    let l = layout(&object);
    // Relocation entries (as llvm-mc writes them, last first): __text: 0
    // BRANCH26 at 8, 1 ADDEND at 4, 2 PAGEOFF12 at 4, 3 ADDEND at 0, 4
    // PAGE21 at 0; __data: 0 SUBTRACTOR at 0x20, 1 UNSIGNED at 0x20. The
    // last byte of an entry: type << 4 | extern << 3 | length << 1 | pcrel.
    let (text_relocs, data_relocs) = (l.text_relocs, l.data_relocs);
    let text_entry = move |i: u64| (text_relocs + 8 * i) as usize;
    let data_entry = move |i: u64| (data_relocs + 8 * i) as usize;
    let first_nul = l.strings as usize + original[l.strings as usize..].iter().position(|&b| b == 0).unwrap();
    type Patch = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Patch, &[&str])> = vec![
        (
            "addend_before_unsigned",
            Box::new(move |b| b[text_entry(2) + 7] &= 0x0f),
            &["section __TEXT,__text+0x4", "ARM64_RELOC_ADDEND is followed by ARM64_RELOC_UNSIGNED"],
        ),
        (
            "addend_alone",
            Box::new(move |b| b[text_entry(1)..text_entry(1) + 4].copy_from_slice(&0xcu32.to_le_bytes())),
            &["section __TEXT,__text+0xc", "ARM64_RELOC_ADDEND is not followed by"],
        ),
        (
            "subtractor_alone",
            Box::new(move |b| b[data_entry(1) + 7] = (b[data_entry(1) + 7] & 0x0f) | 0x20),
            &["section __DATA,__data+0x20", "ARM64_RELOC_SUBTRACTOR is not followed by its ARM64_RELOC_UNSIGNED"],
        ),
        (
            "branch_of_8_bytes",
            Box::new(move |b| b[text_entry(0) + 7] |= 0x06),
            &["section __TEXT,__text+0x8", "ARM64_RELOC_BRANCH26", "8 bytes", "not supported"],
        ),
        (
            "branch_with_an_immediate",
            Box::new(move |b| b[l.text as usize + 8] = 0x01),
            &["section __TEXT,__text+0x8", "ARM64_RELOC_BRANCH26", "carries an immediate"],
        ),
        (
            "branch_past_the_end",
            Box::new(move |b| b[text_entry(0)..text_entry(0) + 4].copy_from_slice(&0x20u32.to_le_bytes())),
            &["section __TEXT,__text+0x20", "past the end of the section"],
        ),
        (
            // Symbol 2 is `_d`, an external definition nothing refers to.
            "external_symbol_without_a_name",
            Box::new(move |b| {
                let at = l.symbols as usize + 2 * 16;
                b[at..at + 4].copy_from_slice(&((first_nul - l.strings as usize) as u32).to_le_bytes())
            }),
            &["symbol 2", "external (N_EXT) symbol has an empty name"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, patch, expected) in &cases {
        let mut bytes = original.clone();
        patch(&mut bytes);
        let bad = dir.join(format!("{}.o", name));
        std::fs::write(&bad, bytes).unwrap();
        let out = jitrun(&["--noexec".as_ref(), "--base".as_ref(), "0x7000000000".as_ref(), bad.as_os_str()]);
        let err = stderr_of(&out);
        let named = format!("{}.o: ", name);
        if out.status.code() != Some(125)
            || !err.starts_with("jitrun: error: ")
            || !err.contains(&named)
            || expected.iter().any(|e| !err.contains(e))
        {
            failures.push(format!("{}: expected {:?}, got {:?}: {}", name, expected, out.status.code(), err));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 33, item 5: an FDE's CIE pointer and `pc_begin` given by
/// relocations (Mach-O `SUBTRACTOR` pairs; an ELF relocation against the
/// section's own label) are applied before the FDE is read, as JITLink's
/// `EHFrameEdgeFixer` does. Both objects were refused before ("CIE
/// pointer points before the section", "CIE: version 0").
#[test]
fn eh_frame_relocations_are_applied_before_fdes_are_read() {
    let dir = common::scratch("eh-frame-relocated");
    let source = common::testdata().join("macho/eh_frame_subtractor.s");
    let object = common::assemble_macho(&source, &dir);
    let out = jitrun(&[
        "--noexec".as_ref(),
        "--base".as_ref(),
        "0x7000000000".as_ref(),
        "--check".as_ref(),
        source.as_os_str(),
        object.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    if cfg!(target_arch = "x86_64") {
        // The ELF twin runs: its FDE describes main's frame.
        let elf = dir.join("cie_pointer.o");
        common::run_checked(
            common::cc()
                .arg("-c")
                .arg(common::testdata().join("eh_frame/x86_64_cie_pointer_relocation.s"))
                .arg("-o")
                .arg(&elf),
        );
        let out = jitrun(&[elf.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    }
}

/// Darwin arm64 passes variadic arguments on the stack: a call to `printf`
/// goes to its bridge, and one to a variadic C library function without a
/// bridge is refused naming it (never a silently wrong call).
#[test]
fn arm64_variadic_calls_are_bridged_or_refused() {
    let dir = common::scratch("macho-arm64-variadic");
    let assemble = |name: &str, callee: &str| {
        let source = dir.join(format!("{}.s", name));
        std::fs::write(&source, format!(".globl _main\n.p2align 2\n_main:\n  bl _{}\n  ret\n", callee)).unwrap();
        common::assemble_macho_for(common::MACHO_ARM64_TRIPLE, &source, &dir)
    };
    let link = |object: &Path| {
        jitrun(&[
            "--noexec".as_ref(),
            "--allow-unresolved".as_ref(),
            "--base".as_ref(),
            "0x7000000000".as_ref(),
            "--map".as_ref(),
            object.as_os_str(),
        ])
    };
    let out = link(&assemble("calls_printf", "printf"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let map = String::from_utf8_lossy(&out.stdout);
    assert!(map.contains("__jitrun_darwin_printf"), "{}", map);
    let out = link(&assemble("calls_prctl", "prctl"));
    assert_eq!(out.status.code(), Some(125));
    let err = stderr_of(&out);
    assert!(err.contains("calls_prctl.o") && err.contains("`prctl` is a variadic C library function"), "{}", err);
}

/// A symbol on the command line may be named as in C (`helper_add`) or as
/// Mach-O spells it (`_helper_add`, what `nm` shows on macOS), in every
/// option that names one: `--define`, `--alias`, `--wrap`, `-u`, `--set`,
/// `--entry`, `--check`. The exact name wins (`__wrap_helper_add` is the C
/// name). In an ELF link `_helper_add` is another symbol.
#[test]
fn mach_o_symbols_are_named_with_or_without_the_c_underscore() {
    let dir = common::scratch("macho-names");
    let src = common::testdata().join("macho/archive");
    let wrapper = dir.join("wrapper.c");
    std::fs::write(
        &wrapper,
        "int __real_helper_add(int, int);\nint __wrap_helper_add(int a, int b) { return __real_helper_add(a, b) * 10; }\n",
    )
    .unwrap();
    let main_wrapper = dir.join("main_wrapper.c");
    std::fs::write(&main_wrapper, "int __real_main(void);\nint __wrap_main(void) { return __real_main() + 1; }\n")
        .unwrap();
    let objects = common::compile_macho(
        &[
            src.join("main.c"),
            src.join("helper.c"),
            src.join("unused.c"),
            wrapper,
            common::testdata().join("reuse/mutants.c"),
            main_wrapper,
        ],
        "-O2",
        &[],
        &dir,
    );
    let [main, helper, unused, wrapper, mutants, main_wrapper] = [0, 1, 2, 3, 4, 5].map(|i| objects[i].as_os_str());
    let archive = dir.join("libhelper.a");
    let _ = std::fs::remove_file(&archive);
    assert!(Command::new("llvm-ar-14").arg("rc").arg(&archive).args([helper, unused]).status().unwrap().success());
    let archive = archive.as_os_str();
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let run = |args: &[&std::ffi::OsStr]| {
        let out = jitrun(args);
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), stderr_of(&out))
    };
    let check_file = dir.join("names.s");
    std::fs::write(
        &check_file,
        "# jitlink-check: _helper_add = helper_add\n# jitlink-check: *{4}_helper_add = *{4}helper_add\n",
    )
    .unwrap();

    for underscore in ["_", ""] {
        let name = |n: &str| std::ffi::OsString::from(format!("{}{}", underscore, n));
        let arg = |s: String| std::ffi::OsString::from(s);
        // --entry
        let (status, out, err) = run(&[os("--entry"), &name("main"), main, helper]);
        assert_eq!((status, out.as_str()), (Some(2), "from a Mach-O archive member 5\n"), "{}", err);
        // --define: both references resolve, so the link succeeds.
        let defines =
            [arg(format!("{}helper_add=0x1000", underscore)), arg(format!("{}helper_name=0x2000", underscore))];
        let (status, _, err) = run(&[os("--noexec"), os("--define"), &defines[0], os("--define"), &defines[1], main]);
        assert_eq!(status, Some(0), "--define {}helper_add: {}", underscore, err);
        // --alias NEW=OLD, both names spelled either way.
        let alias = arg(format!("{}helper_add={}main", underscore, underscore));
        let (status, _, err) = run(&[os("--noexec"), os("--alias"), &alias, os("--define"), &defines[1], main]);
        assert_eq!(status, Some(0), "--alias {:?}: {}", alias, err);
        // --wrap: the call goes to __wrap_helper_add (times 10).
        let (status, out, err) = run(&[os("--wrap"), &name("helper_add"), main, helper, wrapper]);
        assert_eq!((status, out.as_str()), (Some(20), "from a Mach-O archive member 50\n"), "{}", err);
        // --wrap of the entry point: called as __wrap_main.
        let (status, out, err) = run(&[os("--wrap"), &name("main"), main, helper, main_wrapper]);
        assert_eq!((status, out.as_str()), (Some(3), "from a Mach-O archive member 5\n"), "{}", err);
        // -u: loads the archive member defining unused_fn (and its constructor runs).
        let (status, out, err) = run(&[os("-u"), &name("unused_fn"), main, archive]);
        assert!(out.starts_with("unused member must not load\n") && status == Some(2), "{}{}", out, err);
        // --set, in process and in an isolated run.
        let set = arg(format!("{}mutant_id=4", underscore));
        for isolate in [&[][..], &[os("--isolate")][..]] {
            let (status, out, err) = run(&[isolate, &[os("--set"), &set, mutants]].concat());
            assert_eq!((status, out.as_str()), (Some(3), "failing\n"), "--set {:?}: {}", set, err);
        }
    }
    // --check: `_helper_add` is `helper_add`.
    let (status, _, err) = run(&[os("--noexec"), os("--check"), check_file.as_os_str(), main, helper]);
    assert_eq!(status, Some(0), "{}", err);

    // ELF: `_helper_add` is not `helper_add`.
    let elf = common::compile(&[src.join("main.c"), src.join("helper.c")], "-O2", &[], &dir);
    let (elf_main, elf_helper) = (elf[0].as_os_str(), elf[1].as_os_str());
    let (status, _, err) = run(&[os("--entry"), os("_main"), elf_main, elf_helper]);
    assert_eq!(status, Some(125), "{}", err);
    assert!(err.contains("entry point `_main` is not defined"), "{}", err);
    let (status, _, err) = run(&[
        os("--noexec"),
        os("--define"),
        os("_helper_add=0x1000"),
        os("--define"),
        os("_helper_name=0x2000"),
        elf_main,
    ]);
    assert_eq!(status, Some(125), "{}", err);
    assert!(err.contains("2 undefined symbols: helper_add (referenced by "), "{}", err);
    let (status, _, err) = run(&[os("--noexec"), os("--check"), check_file.as_os_str(), elf_main, elf_helper]);
    assert_eq!(status, Some(125), "{}", err);
    assert!(err.contains("no symbol `_helper_add`"), "{}", err);
}
