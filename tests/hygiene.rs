//! Memory hygiene: W^X while a loaded program runs, and many
//! load/run/unload cycles through the library API leave the process's
//! resident memory and its number of mappings flat.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// The tests measure or map into the whole process (an image linked by one
/// shows in another's count of mappings), so they take turns.
static WHOLE_PROCESS: Mutex<()> = Mutex::new(());

#[test]
fn loaded_image_is_never_writable_and_executable() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    // Read-only data has a segment of its own on x86-64 and shares the
    // code's on aarch64, as in the CPUs' native executables.
    let rodata = if cfg!(target_arch = "aarch64") { "r-x" } else { "r--" };
    for (i, flags) in ["-O0", "-O2 -fPIC", "-O2 -fno-pic -fno-pie"].iter().enumerate() {
        // Non-PIC code needs no load-time relocation of the constant
        // pointer: the compiler puts it in .rodata.
        let relro = if flags.contains("-fno-pic") { rodata } else { "r--" };
        let expected = format!("text r-x\nrodata {}\nrelro {}\ndata rw-\nw+x mappings 0\n", rodata, relro);
        let dir = common::scratch(&format!("hygiene-wx-{}", i));
        let objects = common::compile(&[common::testdata().join("hygiene/wx_maps.c")], flags, &[], &dir);
        let out = common::run_with(common::jitrun_command().args(&objects), b"", Duration::from_secs(20));
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "[{}] stderr: {}", flags, {
            String::from_utf8_lossy(&out.stderr)
        });
        assert_eq!(out.status.code(), Some(0), "[{}]", flags);
    }
}

/// Resident set size in KiB and number of mappings of this process.
pub fn footprint() -> (u64, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap().lines().count();
    (rss, maps)
}

fn build_cycle_object(dir: &Path) -> PathBuf {
    let objects = common::compile(&[common::testdata().join("hygiene/cycle.cpp")], "-O2 -fPIC", &[], dir);
    objects.into_iter().next().unwrap()
}

fn cycle(object: &Path) {
    let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    linker.add_file(object).unwrap();
    let mut image = linker.link().unwrap();
    let status = image.run_main("main", "cycle", &["x".to_string()]).unwrap();
    assert_eq!(status, 0);
    drop(image);
}

/// Under qemu-user the process's RSS holds qemu's translations of every
/// image's code (each image at new addresses is translated anew) and its
/// maps qemu's view: the footprint checks are made on native hosts; the
/// loads themselves still run.
fn footprint_is_qemus() -> bool {
    common::emulation_cannot_show("RSS and mappings include qemu's own")
}

#[test]
fn load_run_unload_cycles_leave_memory_flat() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-cycles");
    let object = build_cycle_object(&dir);
    // Warm-up: libraries loaded once for good (libstdc++), allocator pools,
    // the unwinder's caches.
    for _ in 0..30 {
        cycle(&object);
    }
    let before = footprint();
    for _ in 0..300 {
        cycle(&object);
    }
    let after = footprint();
    eprintln!("300 cycles: RSS {} KiB -> {} KiB, mappings {} -> {}", before.0, after.0, before.1, after.1);
    if footprint_is_qemus() {
        return;
    }
    assert!(after.1 <= before.1 + 4, "mappings grew from {} to {}", before.1, after.1);
    // 300 leaked images of a few pages each would be several MiB.
    assert!(after.0 <= before.0 + 2048, "RSS grew from {} KiB to {} KiB", before.0, after.0);
}

#[repr(C)]
#[derive(Default)]
struct DwarfEhBases {
    tbase: usize,
    dbase: usize,
    func: usize,
}

extern "C" {
    /// libgcc's lookup of the FDE covering `pc` among registered frames and
    /// loaded objects: what every unwind asks.
    fn _Unwind_Find_FDE(pc: *mut std::ffi::c_void, bases: *mut DwarfEhBases) -> *const std::ffi::c_void;
}

fn unwinder_knows(pc: u64) -> bool {
    let mut bases = DwarfEhBases::default();
    // SAFETY: a lookup only; libgcc reads its own tables and the loaded
    // objects' headers, never the memory at `pc`.
    !unsafe { _Unwind_Find_FDE(pc as *mut std::ffi::c_void, &mut bases) }.is_null()
}

/// Objects the dynamic loader has loaded (the TLS module is one).
fn loaded_objects() -> usize {
    extern "C" fn count(_: *mut libc::dl_phdr_info, _: usize, n: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `n` is the counter passed below.
        unsafe { *(n as *mut usize) += 1 };
        0
    }
    let mut n = 0usize;
    // SAFETY: the callback only increments the counter it is given.
    unsafe { libc::dl_iterate_phdr(Some(count), &mut n as *mut usize as *mut libc::c_void) };
    n
}

#[test]
fn registrations_are_undone_on_unload() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-registrations");
    let object = build_cycle_object(&dir);
    cycle(&object); // libstdc++ and friends, once
    let objects_before = loaded_objects();
    let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    linker.add_file(&object).unwrap();
    let mut image = linker.link().unwrap();
    let main = image.lookup("main").unwrap();
    assert!(unwinder_knows(main + 1), "eh_frame not registered");
    assert!(loaded_objects() > objects_before, "no TLS module loaded");
    assert_eq!(image.run_main("main", "cycle", &[]).unwrap(), 0);
    drop(image);
    assert!(!unwinder_knows(main + 1), "eh_frame still registered after unload");
    assert_eq!(loaded_objects(), objects_before, "the TLS module stayed loaded");
}

/// glibc reclaims static TLS only from the end; images whose lifetimes
/// overlap used to exhaust it after a few hundred loads. Each load here
/// happens while the previous image is still loaded.
#[test]
fn overlapping_images_reuse_static_tls() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-overlap");
    let object = build_cycle_object(&dir);
    let load = |round: usize| {
        let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
        linker.add_file(&object).unwrap();
        let mut image = linker.link().unwrap_or_else(|e| panic!("round {}: {:#}", round, e));
        assert_eq!(image.run_main("main", "cycle", &["x".to_string()]).unwrap(), 0, "round {}", round);
        image
    };
    let mut previous = load(0);
    for round in 1..30 {
        previous = load(round);
    }
    let before = footprint();
    for round in 30..1030 {
        // The new image is loaded before the previous one is dropped.
        previous = load(round);
    }
    drop(previous);
    let after = footprint();
    eprintln!("1000 overlapping loads: RSS {} KiB -> {} KiB, mappings {} -> {}", before.0, after.0, before.1, after.1);
    assert!(jitrun::host::tls_pool::StaticBlock::pooled_count() <= 2);
    if footprint_is_qemus() {
        return;
    }
    assert!(after.1 <= before.1 + 4, "mappings grew from {} to {}", before.1, after.1);
    assert!(after.0 <= before.0 + 2048, "RSS grew from {} KiB to {} KiB", before.0, after.0);
}

/// The `VmFlags` line of the mapping of this process that holds `addr`.
fn vm_flags_at(addr: u64) -> String {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ').filter(|(r, _)| r.contains('-') && !r.ends_with(':')) {
            let (lo, hi) = range.split_once('-').unwrap();
            let (lo, hi) = (u64::from_str_radix(lo, 16).unwrap(), u64::from_str_radix(hi, 16).unwrap());
            inside = lo <= addr && addr < hi;
        } else if inside && line.starts_with("VmFlags:") {
            return line.to_string();
        }
    }
    panic!("no mapping holds {:#x}", addr)
}

/// Compiles `source` (`-O2`) in scratch directory `scratch` and links it alone.
fn link_source(scratch: &str, file: &str, source: &str) -> jitrun::Image {
    let object = common::compile_source(&common::scratch(scratch), file, source, "-O2");
    let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
    linker.add_file(&object).unwrap();
    linker.link().unwrap()
}

/// Whether the mapping that holds `addr` is advised to use huge pages.
fn advised_huge(addr: u64) -> bool {
    vm_flags_at(addr).split_whitespace().any(|f| f == "hg")
}

/// qemu-user does not pass `madvise` advice on to the kernel, so under
/// emulation (another CPU's test build) no mapping shows `hg`.
fn advice_unseen() -> bool {
    common::cross_testing()
}

/// An image of several MiB is copied in full right after mapping: it asks
/// for transparent huge pages (fewer page faults), but its zero-fill part,
/// which a program may touch sparsely, does not.
#[test]
fn large_images_ask_for_huge_pages_except_zero_fill() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let mut image = link_source(
        "hygiene-huge",
        "big.c",
        "char table[3 << 20] = {1};\nstatic char zeros[8 << 20];\n\
         char *zero_fill(void) { return zeros; }\nint main(void) { return table[0] + zeros[table[1]]; }\n",
    );
    let table = image.lookup("table").unwrap();
    assert!(advice_unseen() || advised_huge(table), "{}", vm_flags_at(table));
    let zero_fill = image.lookup("zero_fill").unwrap();
    // SAFETY: a function of the image with this signature.
    let zeros = unsafe { std::mem::transmute::<u64, extern "C" fn() -> u64>(zero_fill)() };
    // Its start may share the last huge page of the written part, not more.
    let zeros_end = zeros + (8 << 20) - 1;
    assert!(advice_unseen() || !advised_huge(zeros_end), "{}", vm_flags_at(zeros_end));
    assert_eq!(image.run_main("main", "big", &[]).unwrap(), 1);
}

/// An image with over a MiB to write (SQLite's is 1.1 MiB) is backed by
/// one huge page, not hundreds of 4 KiB ones, and the part of that page past
/// the image is inaccessible once the image is ready, as the address space
/// past a native executable is.
#[test]
fn a_megabyte_image_uses_a_huge_page_and_hides_what_lies_past_it() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let mut image = link_source(
        "hygiene-huge-small",
        "mib.c",
        "char table[1200 << 10] = {1};\nint main(void) { return table[0] + table[sizeof table - 1]; }\n",
    );
    let table = image.lookup("table").unwrap();
    assert!(advice_unseen() || advised_huge(table), "{}", vm_flags_at(table));
    let past = image.range().end.next_multiple_of(4096);
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let line = smaps.lines().find(|l| l.starts_with(&format!("{:x}-", past))).expect("a mapping right past the image");
    assert!(line.split_whitespace().nth(1).unwrap().starts_with("---p"), "{}", line);
    assert_eq!(image.run_main("main", "mib", &[]).unwrap(), 1);
}

/// The peak memory that `jitrun --report` reports for running `object`.
fn peak_rss_kib(object: &Path, dir: &Path) -> u64 {
    let report = dir.join(format!("{}.json", object.file_stem().unwrap().to_string_lossy()));
    let out = common::jitrun(&[object.as_os_str(), "--report".as_ref(), report.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&report).unwrap();
    let field = text.split("\"peak_rss_kib\":").nth(1).expect("report has peak_rss_kib");
    field.trim_start().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

/// A large object's contents and relocations are read from its file where
/// the link uses them, not mapped: the peak memory holds the image once
/// and the object not at all. Here a table of 400,000 pointers: 3.2 MB of
/// data and 9.6 MB of relocations (mapped, they took 20.8 MiB at the
/// peak; the native executable takes 13.6, its loader reading as many
/// dynamic relocations).
#[test]
fn a_large_objects_contents_and_relocations_stay_out_of_memory() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-large-object");
    let entries = 400_000;
    let mut source = String::from("static const char *const table[] = {\n");
    for i in 0..entries {
        source.push_str(&format!("\"s{}\",", i % 1000));
    }
    source.push_str("};\nint main(int argc, char **argv) { (void)argv; return table[argc * 1001][1] - '1'; }\n");
    let large = common::compile_source(&dir, "table.c", &source, "-O0");
    let trivial = common::compile_source(&dir, "trivial.c", "int main(void) { return 0; }\n", "-O0");
    let object_size = std::fs::metadata(&large).unwrap().len();
    assert!(object_size > 12 << 20, "the object should be over 12 MiB: {}", object_size);

    let (trivial_kib, large_kib) = (peak_rss_kib(&trivial, &dir), peak_rss_kib(&large, &dir));
    let table_kib = entries * 8 / 1024;
    assert!(
        large_kib < trivial_kib + table_kib + 4096,
        "a {} KiB object with {} KiB of data raised the peak memory from {} to {} KiB",
        object_size / 1024,
        table_kib,
        trivial_kib,
        large_kib
    );
}

/// Large objects and archives are read from their files while the image
/// is written, and closed before the program starts: its first `open`
/// gets descriptor 3, as natively (an object built with `-g` keeps its
/// mapping for line tables, not its descriptor).
#[test]
fn input_files_are_closed_before_the_program_runs() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-input-descriptors");
    let main = common::compile_source(
        &dir,
        "main.c",
        "#include <fcntl.h>\n#include <stdio.h>\nextern const char table[];\nstatic const char own[100000] = {1};\n\
         int main(void) { printf(\"first descriptor %d %d\\n\", open(\"/dev/null\", O_RDONLY), table[0] + own[0]); return 0; }\n",
        "-O0 -g",
    );
    let member = common::compile_source(&dir, "table.c", "const char table[100000] = {2};\n", "-O0 -g");
    let unused = common::compile_source(&dir, "unused.c", "const char unused[100000] = {3};\n", "-O0");
    for (member, archive) in [(&member, "libtable.a"), (&unused, "libunused.a")] {
        common::run_checked(Command::new("ar").arg("rcs").arg(dir.join(archive)).arg(member));
    }
    let out =
        common::jitrun(&[main.as_os_str(), dir.join("libtable.a").as_os_str(), dir.join("libunused.a").as_os_str()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "first descriptor 3 3\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Files kept open for reading large contents count against the limit
/// on open files: under `ulimit -n 32`, forty mapped objects (70 KB each)
/// still link, as they did when every input was closed once mapped.
#[test]
fn many_large_objects_link_under_a_low_limit_on_open_files() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-open-file-limit");
    let count = 40;
    let mut objects = Vec::new();
    let mut main = String::from("#include <stdio.h>\n");
    for i in 1..=count {
        let text = format!("const char blob{i}[70000] = {{{i}}};\nint get{i}(void) {{ return blob{i}[0]; }}\n");
        objects.push(common::compile_source(&dir, &format!("o{i}.c"), &text, "-O2"));
        main.push_str(&format!("int get{i}(void);\n"));
    }
    main.push_str("int main(void) { int sum = 0;\n");
    for i in 1..=count {
        main.push_str(&format!("sum += get{i}();\n"));
    }
    main.push_str("printf(\"%d\\n\", sum); return 0; }\n");
    objects.insert(0, common::compile_source(&dir, "main.c", &main, "-O2"));
    let paths: Vec<String> = objects.iter().map(|o| o.display().to_string()).collect();
    let script = format!("ulimit -n 32 && exec {} {}", common::jitrun_bin().display(), paths.join(" "));
    let out =
        Command::new("sh").arg("-c").arg(&script).env("XDG_CACHE_HOME", common::test_cache_home()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "820\n", "{}", String::from_utf8_lossy(&out.stderr));
}

/// Ordinary `-g` objects (CPython's: 147 of them, 48 MB) carry debug
/// sections of tens to hundreds of KiB between the parts a link reads: none
/// of those pages is mapped (they were, joined with the parts around
/// them, and made CPython's link peak at 49 MiB instead of 35).
#[test]
fn debug_sections_between_the_parts_a_link_reads_stay_unmapped() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-debug-gaps");
    let mut source = String::from("#include <stdio.h>\n#include <string.h>\n");
    source.push_str("struct rec { int a; long b; char name[32]; double v[4]; struct rec *next; };\n");
    for i in 0..120 {
        source.push_str(&format!(
            "long f{i}(struct rec *r, int n) {{ long s = 0; char buf[64];\n\
             for (int i = 0; i < n; i++) {{ s += r->a * i + r->b; r->v[i & 3] += s * 0.5;\n\
             if (s > {i}) {{ snprintf(buf, sizeof buf, \"%ld\", s); s -= strlen(buf); }} r = r->next ? r->next : r; }}\n\
             return s + {i}; }}\n"
        ));
    }
    let object = common::compile_source(&dir, "gaps.c", &source, "-O2 -g");
    let bytes = std::fs::read(&object).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let name = |sh: &goblin::elf::SectionHeader| elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("").to_string();
    let debug: Vec<_> = elf
        .section_headers
        .iter()
        .filter(|sh| sh.sh_size >= 4096 && name(sh).contains(".debug"))
        .map(|sh| (name(sh), sh.sh_offset as usize..(sh.sh_offset + sh.sh_size) as usize))
        .collect();
    let debug_bytes: usize = debug.iter().map(|(_, range)| range.len()).sum();
    assert!(debug_bytes > 64 << 10, "the object should carry debug sections: {:?}", debug);
    for contents_read in [false, true] {
        let spans = jitrun::support::input::spans_a_link_maps(&bytes, contents_read).unwrap();
        for (section, range) in &debug {
            // Pages it shares with a part the link reads may be mapped.
            let inner = range.start.next_multiple_of(4096)..range.end / 4096 * 4096;
            let mapped: usize =
                spans.iter().map(|s| s.end.min(inner.end).saturating_sub(s.start.max(inner.start))).sum();
            assert_eq!(mapped, 0, "{} ({:x?}) is mapped: {:x?}", section, range, spans);
        }
    }
}

/// Debug information (here 9 MB of `-g3` macro tables) is not read by a
/// link, so it adds nothing to the peak memory: the pages of the object
/// that a link maps are its loaded sections, their relocations and its
/// tables, as `goblin` (a second parser) sees them.
#[test]
fn debug_information_stays_out_of_memory() {
    let _turn = WHOLE_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::scratch("hygiene-debug-info");
    let mut source: String = (0..150_000).map(|i| format!("#define MACRO_NUMBER_{i} ({i} + 1)\n")).collect();
    source.push_str("int main(void) { return MACRO_NUMBER_41 - 42; }\n");
    let plain = common::compile_source(&dir, "plain.c", &source, "-O2");
    let with_debug = common::compile_source(&dir, "with_debug.c", &source, "-O2 -g3");

    let bytes = std::fs::read(&with_debug).unwrap();
    let parts = jitrun::support::input::parts_a_link_reads(&bytes, None).unwrap();
    let covered = |start: usize, size: usize| parts.iter().any(|p| p.start <= start && start + size <= p.end);
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let name = |sh: &goblin::elf::SectionHeader| elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("").to_string();
    let mut debug_bytes = 0;
    for sh in &elf.section_headers {
        let (start, size) = (sh.sh_offset as usize, sh.sh_size as usize);
        let target = elf.section_headers.get(sh.sh_info as usize);
        let needed = match sh.sh_type {
            goblin::elf::section_header::SHT_NOBITS | goblin::elf::section_header::SHT_NULL => continue,
            goblin::elf::section_header::SHT_RELA => target.is_some_and(|t| t.is_alloc()),
            goblin::elf::section_header::SHT_PROGBITS => sh.is_alloc(),
            _ => true,
        };
        if needed {
            assert!(covered(start, size), "{} ({:#x}+{:#x}) is read by a link: {:x?}", name(sh), start, size, parts);
        } else if size >= 4096 {
            let overlap: usize = parts.iter().map(|p| p.end.min(start + size).saturating_sub(p.start.max(start))).sum();
            assert_eq!(overlap, 0, "{} ({:#x}+{:#x}) is not read by a link: {:x?}", name(sh), start, size, parts);
            debug_bytes += size;
        }
    }
    assert!(debug_bytes > 8 << 20, "the test object should carry over 8 MiB of debug information: {}", debug_bytes);

    let (plain_kib, with_debug_kib) = (peak_rss_kib(&plain, &dir), peak_rss_kib(&with_debug, &dir));
    assert!(
        with_debug_kib < plain_kib + 1024,
        "9 MB of debug information raised the peak memory from {} to {} KiB",
        plain_kib,
        with_debug_kib
    );
}
