//! Static archives, shared libraries and symbol control, checked against
//! the system linker: archives are built with `ar` (GNU, thin, without
//! index) and `llvm-ar` (BSD) at test time from `testdata/archives`, shared
//! libraries with `cc -shared`, and each jitrun run is compared with the
//! same program linked natively (stdout, stderr, exit status).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{compare_with_native, compile, jitrun, link_native, run_checked, scratch, testdata};

const UNUSED_MEMBER_RAN: &str = "unused.o LOADED";
const PLUGIN_RAN: &str = "plugin.o constructor";

fn sources(sub: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(testdata().join("archives").join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    files
}

fn source(name: &str) -> PathBuf {
    testdata().join("archives").join(name)
}

/// `ar`-style tool `tool` with `op` (e.g. `rcs`) making `archive` from
/// `members`, run in the archive's scratch directory with relative paths,
/// as a build system would (thin archives store the members' paths).
fn archive(tool: &str, op: &[&str], archive: &Path, members: &[PathBuf]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let relative = |p: &Path| p.strip_prefix(root).unwrap().to_path_buf();
    let _ = std::fs::remove_file(archive);
    run_checked(
        Command::new(tool).current_dir(root).args(op).arg(relative(archive)).args(members.iter().map(|m| relative(m))),
    );
    archive.to_path_buf()
}

/// The objects of the main program and its two archives' members, and
/// libshout.so, built with `flags` into `dir`.
struct Fixture {
    dir: PathBuf,
    main: PathBuf,
    geo: Vec<PathBuf>,
    fmt: Vec<PathBuf>,
}

impl Fixture {
    fn build(flags: &str, dir: &Path) -> Fixture {
        let main = compile(&[source("main.c")], flags, &[], dir).remove(0);
        let geo_dir = dir.join("geo");
        let fmt_dir = dir.join("fmt");
        std::fs::create_dir_all(&geo_dir).unwrap();
        std::fs::create_dir_all(&fmt_dir).unwrap();
        let geo = compile(&sources("geo"), flags, &[], &geo_dir);
        let fmt = compile(&sources("fmt"), flags, &[], &fmt_dir);
        run_checked(
            common::cc()
                .args(["-shared", "-fPIC", "-O2"])
                .arg(source("shout.c"))
                .arg("-o")
                .arg(dir.join("libshout.so")),
        );
        Fixture { dir: dir.to_path_buf(), main, geo, fmt }
    }

    /// libgeo.a and libfmt.a made by `tool op`, in `dir/sub`.
    fn archives(&self, tool: &str, op: &[&str], sub: &str) -> (PathBuf, PathBuf) {
        let out = self.dir.join(sub);
        std::fs::create_dir_all(&out).unwrap();
        (archive(tool, op, &out.join("libgeo.a"), &self.geo), archive(tool, op, &out.join("libfmt.a"), &self.fmt))
    }

    /// The native executable, linked with `archive_args` and libshout.so.
    fn native(&self, flags: &str, archive_args: &[String], name: &str) -> PathBuf {
        let exe = self.dir.join(name);
        let mut libs = archive_args.to_vec();
        libs.extend(self.shout_args());
        libs.push(format!("-Wl,-rpath,{}", self.dir.display()));
        link_native(std::slice::from_ref(&self.main), flags, false, &libs, &[], &exe);
        exe
    }

    fn shout_args(&self) -> Vec<String> {
        vec![format!("-L{}", self.dir.display()), "-lshout".to_string()]
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const FLAG_SETS: &[&str] = &["-O0", "-O2 -fPIC", "-O2 -fno-pic -fno-pie"];

/// Runs every jitrun argument list in `variants` against `exe`; also
/// asserts no member that nothing needs ran its constructor.
fn check_variants(label: &str, exe: &Path, variants: &[Vec<String>]) {
    let mut diffs = Vec::new();
    for (i, jit_args) in variants.iter().enumerate() {
        for args in [&[][..], &["x", "y"][..]] {
            diffs.extend(compare_with_native(&format!("{} variant {} {:?}", label, i, jit_args), exe, jit_args, args));
        }
        let out = jitrun(&[jit_args.clone(), vec!["--".into(), "x".into()]].concat());
        assert!(!stdout_of(&out).contains(UNUSED_MEMBER_RAN), "{:?} loaded unused.o:\n{}", jit_args, stdout_of(&out));
        assert!(!stdout_of(&out).contains(PLUGIN_RAN), "{:?} loaded plugin.o for a weak reference", jit_args);
        assert!(stdout_of(&out).contains("perimeter.o constructor"), "{:?}: {}", jit_args, stderr_of(&out));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}

#[test]
fn members_load_on_demand_whatever_the_archive_order() {
    for (n, flags) in FLAG_SETS.iter().enumerate() {
        let fx = Fixture::build(flags, &scratch(&format!("archives-order-{}", n)));
        let (geo, fmt) = fx.archives("ar", &["rcs"], "lib");
        // ld needs a group for members that need each other across archives.
        let exe = fx.native(flags, &["-Wl,--start-group".into(), s(&geo), s(&fmt), "-Wl,--end-group".into()], "a.out");
        let shout = s(&fx.dir.join("libshout.so"));
        let lib_dir = format!("-L{}", s(geo.parent().unwrap()));
        check_variants(
            &format!("indexed archives [{}]", flags),
            &exe,
            &[
                // Archives before the object that needs them, fmt before geo.
                vec![s(&fmt), s(&geo), s(&fx.main), shout.clone()],
                vec![s(&fx.main), s(&geo), s(&fmt), shout],
                // -l finds libNAME.a when there is no libNAME.so.
                [vec![lib_dir, "-lfmt".into(), s(&fx.main), "-lgeo".into()], fx.shout_args()].concat(),
            ],
        );
    }
}

#[test]
fn thin_archives_and_archives_without_index() {
    let flags = "-O2";
    let fx = Fixture::build(flags, &scratch("archives-thin"));
    let (geo, fmt) = fx.archives("ar", &["rcs"], "lib");
    let exe = fx.native(flags, &["-Wl,--start-group".into(), s(&geo), s(&fmt), "-Wl,--end-group".into()], "a.out");
    let shout = s(&fx.dir.join("libshout.so"));

    let (thin_geo, thin_fmt) = fx.archives("ar", &["rcT"], "thin");
    assert!(std::fs::read(&thin_geo).unwrap().starts_with(b"!<thin>\n"));
    let (bare_geo, bare_fmt) = fx.archives("ar", &["rcS"], "noindex");
    for bare in [&bare_geo, &bare_fmt] {
        let bytes = std::fs::read(bare).unwrap();
        let parsed = object::read::archive::ArchiveFile::parse(&*bytes).unwrap();
        assert!(parsed.symbols().unwrap().is_none(), "{} has a symbol index", bare.display());
    }
    // GNU ar writes only GNU archives; llvm-ar (Debian package llvm) writes BSD ones.
    let llvm_ar = ["llvm-ar-14", "llvm-ar"]
        .into_iter()
        .find(|tool| Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("llvm-ar is needed to write BSD archives: install the llvm package");
    let (bsd_geo, bsd_fmt) = fx.archives(llvm_ar, &["--format=bsd", "rcs"], "bsd");
    let (bsd_bare_geo, bsd_bare_fmt) = fx.archives(llvm_ar, &["--format=bsd", "rcS"], "bsd-noindex");
    assert_eq!(
        object::read::archive::ArchiveFile::parse(&*std::fs::read(&bsd_geo).unwrap()).unwrap().kind(),
        object::read::archive::ArchiveKind::Bsd
    );
    check_variants(
        "thin, index-less and BSD archives",
        &exe,
        &[
            vec![s(&thin_fmt), s(&fx.main), s(&thin_geo), shout.clone()],
            vec![s(&bare_fmt), s(&fx.main), s(&bare_geo), shout.clone()],
            vec![s(&bsd_fmt), s(&fx.main), s(&bsd_geo), shout.clone()],
            // Mixed: a thin archive needing a BSD one without index.
            vec![s(&fx.main), s(&thin_geo), s(&bsd_bare_fmt), shout],
        ],
    );
    let _ = bsd_bare_geo;
}

#[test]
fn whole_archive_loads_every_member_of_the_archives_after_it() {
    let flags = "-O2";
    let fx = Fixture::build(flags, &scratch("archives-whole"));
    let (geo, fmt) = fx.archives("ar", &["rcs"], "lib");
    let exe =
        fx.native(flags, &["-Wl,--whole-archive".into(), s(&fmt), "-Wl,--no-whole-archive".into(), s(&geo)], "a.out");
    let jit_args =
        [vec![s(&fx.main), "--whole-archive".into(), s(&fmt), "--no-whole-archive".into(), s(&geo)], fx.shout_args()]
            .concat();
    let diffs = compare_with_native("--whole-archive", &exe, &jit_args, &[]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
    let out = jitrun(&jit_args);
    assert!(stdout_of(&out).contains(PLUGIN_RAN) && stdout_of(&out).contains("plugin present"), "{}", stdout_of(&out));
    // --no-whole-archive ended it: libgeo.a's unused member stays out.
    assert!(!stdout_of(&out).contains(UNUSED_MEMBER_RAN));
}

#[test]
fn an_undefined_symbol_option_loads_the_member_that_defines_it() {
    let flags = "-O2";
    let fx = Fixture::build(flags, &scratch("archives-undefined"));
    let (geo, fmt) = fx.archives("ar", &["rcs"], "lib");
    let group = |first: String| vec![first, "-Wl,--start-group".into(), s(&geo), s(&fmt), "-Wl,--end-group".into()];
    let exe = fx.native(flags, &group("-Wl,-u,geo_never_called".into()), "a.out");
    for spelling in [vec!["-u".to_string(), "geo_never_called".into()], vec!["-Wl,--undefined=geo_never_called".into()]]
    {
        let jit_args = [vec![s(&fx.main)], spelling, vec![s(&geo), s(&fmt)], fx.shout_args()].concat();
        let diffs = compare_with_native("-u", &exe, &jit_args, &[]);
        assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
        // Nothing refers to unused.o's symbol: only -u brought it in.
        assert!(stdout_of(&jitrun(&jit_args)).contains(UNUSED_MEMBER_RAN), "{:?}", jit_args);
    }
    // A name nobody defines is no error, as with ld.
    let out = jitrun(
        &[[vec![s(&fx.main), "-u".into(), "nobody_defines_this".into(), s(&geo), s(&fmt)], fx.shout_args()].concat()]
            .concat(),
    );
    assert_eq!(common::shell_status(&out), 41, "{}", stderr_of(&out));
    assert!(!stdout_of(&out).contains(UNUSED_MEMBER_RAN));
}

#[test]
fn shared_library_named_by_path_outlives_the_image_destructors() {
    let flags = "-O2";
    let fx = Fixture::build(flags, &scratch("archives-so-path"));
    let (geo, fmt) = fx.archives("ar", &["rcs"], "lib");
    let exe = fx.native(flags, &["-Wl,--start-group".into(), s(&geo), s(&fmt), "-Wl,--end-group".into()], "a.out");
    let jit_args = vec![s(&fx.main), s(&geo), s(&fmt), s(&fx.dir.join("libshout.so"))];
    let diffs = compare_with_native(".so path", &exe, &jit_args, &[]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
    // The destructor calls into libshout.so after main returned.
    assert!(stdout_of(&jitrun(&jit_args)).ends_with("perimeter.o destructor\nMAIN.O DESTRUCTOR\n"));
}

#[test]
fn print_unresolved_lists_every_missing_symbol_and_who_needs_it() {
    let fx = Fixture::build("-O2", &scratch("archives-unresolved"));
    fx.archives("ar", &["rcs"], "lib");
    // Relative paths, so the report is the same wherever the test runs.
    let run = |args: &[&str]| {
        common::run_with(
            common::jitrun_command().args(args).current_dir(&fx.dir),
            b"",
            std::time::Duration::from_secs(20),
        )
    };
    let out = run(&["--print-unresolved", "main.o", "lib/libgeo.a"]);
    assert_eq!(
        stdout_of(&out),
        "fmt_banner\tmain.o\t-\n\
         fmt_calls\tmain.o\t-\n\
         fmt_number\tlib/libgeo.a(area.o)\t-\n\
         shout\tmain.o\t-\n"
    );
    assert_eq!(stderr_of(&out), "jitrun: error: 4 undefined symbols\n");
    assert_eq!(out.status.code(), Some(125));

    // Without the report, the error says the same in prose.
    let out = run(&["main.o", "lib/libgeo.a", "libshout.so"]);
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(
        stderr_of(&out),
        "jitrun: error: 3 undefined symbols: fmt_banner (referenced by main.o); \
         fmt_calls (referenced by main.o); fmt_number (referenced by lib/libgeo.a(area.o))\n"
    );

    let out = run(&["--print-unresolved", "main.o", "lib/libgeo.a", "lib/libfmt.a", "libshout.so"]);
    assert_eq!((stdout_of(&out).as_str(), stderr_of(&out).as_str(), out.status.code()), ("", "", Some(0)));
    // Nothing ran: --print-unresolved implies --noexec.
}

/// zlib, libm, libdl, libpthread by -l, shared and (zlib) static.
#[test]
fn system_libraries_by_name() {
    assert!(
        jitrun::graph::libsearch::find_library("z", &[], false).is_ok(),
        "zlib is missing: install zlib1g-dev (tests need libz.so and zlib.h)"
    );
    for (n, flags) in ["-O2", "-O2 -fno-pic -fno-pie"].iter().enumerate() {
        let dir = scratch(&format!("archives-syslibs-{}", n));
        let obj = compile(&[source("syslibs.c")], flags, &[], &dir).remove(0);
        let libs: Vec<String> = ["-lz", "-lm", "-ldl", "-lpthread"].map(String::from).to_vec();
        let exe = dir.join("a.out");
        link_native(std::slice::from_ref(&obj), flags, false, &libs, &[], &exe);
        let jit_args = [vec![s(&obj)], libs.clone()].concat();
        let mut diffs = compare_with_native(&format!("syslibs [{}]", flags), &exe, &jit_args, &[]);
        diffs.extend(compare_with_native(&format!("syslibs [{}]", flags), &exe, &jit_args, &["other text"]));

        // libz.a's members, loaded on demand, behave like libz.so.
        // (Only zlib: glibc's libm.a needs libc.a's internals, natively too.)
        let libz_a = jitrun::graph::libsearch::find_library("z", &[], true).unwrap();
        assert!(libz_a.extension().is_some_and(|e| e == "a"), "no libz.a: install zlib1g-dev");
        let static_exe = dir.join("a.static");
        let static_libs: Vec<String> = [s(&libz_a), "-lm".into(), "-ldl".into(), "-lpthread".into()].to_vec();
        link_native(std::slice::from_ref(&obj), flags, false, &static_libs, &[], &static_exe);
        let static_args = [vec![s(&obj)], static_libs].concat();
        diffs.extend(compare_with_native(
            &format!("syslibs --static-libs [{}]", flags),
            &static_exe,
            &static_args,
            &[],
        ));
        assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));

        let log = jitrun(&[vec!["-v".into()], static_args].concat());
        assert!(
            stderr_of(&log).contains("libz.a(") && stderr_of(&log).contains("for `compress`"),
            "{}",
            stderr_of(&log)
        );
    }
}

/// `libm.so` is a script naming libmvec `AS_NEEDED`: loaded only for a
/// program that calls it.
#[test]
fn as_needed_library_loads_only_when_something_uses_it() {
    if cfg!(target_arch = "aarch64") {
        // glibc 2.36's aarch64 libm.so is the library itself, with no
        // libmvec named AS_NEEDED (aarch64's libmvec came with glibc 2.38).
        eprintln!("note: no AS_NEEDED library in this aarch64 glibc's linker scripts");
        return;
    }
    let dir = scratch("archives-as-needed");
    let obj = compile(&[source("vector_math.c")], "-O2", &[], &dir).remove(0);
    let libs = vec!["-lm".to_string()];
    let exe = dir.join("a.out");
    link_native(std::slice::from_ref(&obj), "-O2", false, &libs, &[], &exe);
    let diffs = compare_with_native("vector_math", &exe, &[vec![s(&obj)], libs.clone()].concat(), &[]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
    let native = Command::new(&exe).output().unwrap();
    assert!(stdout_of(&native).contains("libmvec loaded"), "{}", stdout_of(&native));

    // A program that uses neither libmvec nor libz: neither is loaded, as
    // natively (cc links with --as-needed here); --no-as-needed loads libz.
    let probe = "#include <dlfcn.h>\n#include <stdio.h>\nstatic const char *state(const char *lib) {\n\
                 return dlopen(lib, RTLD_NOW | RTLD_NOLOAD) ? \"loaded\" : \"not loaded\"; }\n\
                 int main(void) { printf(\"libmvec %s, libz %s\\n\", state(\"libmvec.so.1\"), \
                 state(\"libz.so.1\")); return 0; }\n";
    let obj = compile_inline(&dir, &[("probe.c", probe)]).remove(0);
    let exe = dir.join("probe");
    let libs = vec!["-lm".to_string(), "-lz".to_string()];
    link_native(std::slice::from_ref(&obj), "-O2", false, &libs, &[], &exe);
    let diffs = compare_with_native("probe -lm -lz", &exe, &[vec![s(&obj)], libs.clone()].concat(), &[]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
    assert_eq!(stdout_of(&Command::new(&exe).output().unwrap()), "libmvec not loaded, libz not loaded\n");
    let eager = jitrun(&[vec!["--no-as-needed".to_string(), s(&obj)], libs.clone()].concat());
    assert_eq!(stdout_of(&eager), "libmvec not loaded, libz loaded\n");

    // Loaded or not, a library named is an input of the link.
    let report = dir.join("report.json");
    let out = jitrun(&[vec!["--noexec".to_string(), "--report".into(), s(&report), s(&obj)], libs].concat());
    assert!(out.status.success(), "{}", stderr_of(&out));
    let report = std::fs::read_to_string(&report).unwrap();
    for input in ["libz.so", "libm.so.6", "libmvec.so.1"] {
        assert!(report.contains(input), "{} not among the inputs: {}", input, report);
    }
}

#[test]
fn missing_library_symbols_get_a_hint() {
    let dir = scratch("archives-hint");
    let obj = compile(&[source("syslibs.c")], "-O2", &[], &dir).remove(0);
    let out = jitrun(&[s(&obj)]);
    assert_eq!(out.status.code(), Some(125));
    let err = stderr_of(&out);
    for name in ["compress", "crc32", "uncompress"] {
        assert!(
            err.contains(&format!("{} (referenced by {}; it usually comes from -lz)", name, obj.display())),
            "{}",
            err
        );
    }
    let report = stdout_of(&jitrun(&["--print-unresolved".to_string(), s(&obj)]));
    assert!(report.contains(&format!("crc32\t{}\t-lz\n", obj.display())), "{}", report);
}

#[test]
fn alias_and_define_steer_resolution() {
    let dir = scratch("archives-alias");
    let objs = compile(&[source("alias.c"), source("alias_impl.c")], "-O2", &[], &dir);
    let exe = dir.join("a.out");
    // ld's --defsym in a non-PIE executable is what --alias and --define do.
    run_checked(
        common::cc()
            .arg("-no-pie")
            .args(&objs)
            .args(["-Wl,--defsym=compute=square", "-Wl,--defsym=marker=0x401000", "-o"])
            .arg(&exe),
    );
    let base: Vec<String> = objs.iter().map(|o| s(o)).collect();
    let args = [base.clone(), ["--alias", "compute=square", "--define", "marker=0x401000"].map(String::from).to_vec()]
        .concat();
    let diffs = compare_with_native("--alias/--define", &exe, &args, &[]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
    assert_eq!(stdout_of(&jitrun(&args)), "compute(5) = 25\ntriple(5) = 15\nmarker = 0x401000\n");

    // An alias overrides a definition, and chains are followed.
    let chained =
        [args.clone(), ["--alias", "triple=twice_square", "--alias", "twice_square=square"].map(String::from).to_vec()]
            .concat();
    assert_eq!(stdout_of(&jitrun(&chained)), "compute(5) = 25\ntriple(5) = 25\nmarker = 0x401000\n");

    // A cycle and a missing target are errors that say so.
    let cycle = [base.clone(), ["--alias", "compute=a", "--alias", "a=compute"].map(String::from).to_vec()].concat();
    let out = jitrun(&cycle);
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr_of(&out).contains("cycle: compute -> a -> compute"), "{}", stderr_of(&out));
    let missing = [base, ["--alias", "compute=nothere", "--define", "marker=1"].map(String::from).to_vec()].concat();
    let out = jitrun(&missing);
    assert_eq!(
        stderr_of(&out),
        format!(
            "jitrun: error: 1 undefined symbol: nothere (referenced by {}, --alias compute=nothere)\n",
            objs[0].display()
        )
    );
}

#[test]
fn allow_unresolved_links_with_noexec() {
    let dir = scratch("archives-allow");
    let objs = compile(&[source("alias.c")], "-O2", &[], &dir);
    let args: Vec<String> = objs.iter().map(|o| s(o)).collect();
    let out = jitrun(&[args.clone(), vec!["--noexec".into()]].concat());
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr_of(&out).contains("3 undefined symbols"), "{}", stderr_of(&out));
    let out = jitrun(&[args, vec!["--noexec".into(), "--allow-unresolved".into()]].concat());
    assert_eq!((stdout_of(&out).as_str(), stderr_of(&out).as_str(), out.status.code()), ("", "", Some(0)));
}

/// Writes C `files` (name, text) into `dir` and compiles them.
fn compile_inline(dir: &Path, files: &[(&str, &str)]) -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    compile(&paths, "-O2", &[], dir)
}

#[test]
fn first_archive_that_defines_a_name_wins_and_duplicates_are_named() {
    let dir = scratch("archives-first");
    let objs = compile_inline(
        &dir,
        &[
            ("main.c", "#include <stdio.h>\nconst char *which(void);\nint main(void) { puts(which()); return 0; }\n"),
            ("one.c", "const char *which(void) { return \"one\"; }\nint only_one(void) { return 1; }\n"),
            ("two.c", "const char *which(void) { return \"two\"; }\nint only_two(void) { return 2; }\n"),
            ("both.c", "int only_one(void); int only_two(void);\nint both(void) { return only_one() + only_two(); }\n"),
        ],
    );
    let one = archive("ar", &["rcs"], &dir.join("libone.a"), &objs[1..2]);
    let two = archive("ar", &["rcs"], &dir.join("libtwo.a"), &objs[2..3]);
    let out = jitrun(&[s(&objs[0]), s(&two), s(&one)]);
    assert_eq!((stdout_of(&out).as_str(), out.status.code()), ("two\n", Some(0)), "{}", stderr_of(&out));
    let out = jitrun(&[s(&objs[0]), s(&one), s(&two)]);
    assert_eq!(stdout_of(&out), "one\n");
    // An object that needs both members makes `which` defined twice.
    let out = jitrun(&[s(&objs[0]), s(&objs[3]), s(&one), s(&two)]);
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr_of(&out).contains(&format!(
            "duplicate symbol which: defined in {}(one.o) and in {}(two.o)",
            s(&one),
            s(&two)
        )),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn broken_archives_get_one_clear_error() {
    let dir = scratch("archives-broken");
    let objs = compile_inline(
        &dir,
        &[
            ("main.c", "int helper(void);\nint main(void) { return helper(); }\n"),
            ("helper.c", "int helper(void) { return 3; }\n"),
        ],
    );
    // A GNU symbol index (the `/` member first: a big-endian count, then
    // the members' header offsets) whose entry points past the end.
    let indexed = archive("ar", &["rcs"], &dir.join("libindexed.a"), &objs[1..]);
    assert_eq!(jitrun(&[s(&objs[0]), s(&indexed)]).status.code(), Some(3));
    let mut bytes = std::fs::read(&indexed).unwrap();
    assert_eq!(&bytes[8..10], b"/ ", "the index is the first member");
    bytes[72..76].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    let bad_index = dir.join("libbadindex.a");
    std::fs::write(&bad_index, bytes).unwrap();
    let out = jitrun(&[s(&objs[0]), s(&bad_index)]);
    assert_eq!(out.status.code(), Some(125));
    let err = stderr_of(&out);
    assert!(
        err.starts_with(&format!(
            "jitrun: error: {}: symbol index: `helper` points to offset 0x7fff0000, where there is no member",
            s(&bad_index)
        )) && err.lines().count() == 1,
        "{}",
        err
    );

    // A thin archive whose member file is gone.
    let thin = archive("ar", &["rcT"], &dir.join("libthin.a"), &objs[1..]);
    assert_eq!(jitrun(&[s(&objs[0]), s(&thin)]).status.code(), Some(3));
    std::fs::remove_file(&objs[1]).unwrap();
    let out = jitrun(&[s(&objs[0]), s(&thin)]);
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(
        stderr_of(&out),
        format!(
            "jitrun: error: {}(helper.o): member of a thin archive: {}: cannot open: No such file or directory (os error 2)\n",
            s(&thin),
            s(&objs[1])
        )
    );

    // Truncated member header and garbage after the magic.
    for (name, bytes) in [
        ("truncated.a", b"!<arch>\nhelper.o/       0           0     0     644     9999      `\n\x7fELF".to_vec()),
        ("garbage.a", b"!<arch>\nthis is not a member header at all, just text..........\n".to_vec()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = jitrun(&[s(&objs[0]), s(&path)]);
        assert_eq!(out.status.code(), Some(125), "{}", stderr_of(&out));
        let err = stderr_of(&out);
        assert!(err.starts_with(&format!("jitrun: error: {}", s(&path))) && err.lines().count() == 1, "{}", err);
    }
}

#[test]
fn entry_point_is_looked_up_in_archives() {
    // Like crt1.o's reference to main: a program whose main is in an archive.
    let dir = scratch("archives-entry");
    let objs = compile_inline(
        &dir,
        &[
            ("helper.c", "int helper(int x) { return x * 2; }\n"),
            (
                "mainmod.c",
                "int helper(int);\nint main(int argc, char **argv) { (void)argv; return helper(argc + 20); }\n",
            ),
        ],
    );
    let lib = archive("ar", &["rcs"], &dir.join("libprog.a"), &objs);
    let exe = dir.join("a.out");
    link_native(std::slice::from_ref(&lib), "-O2", false, &[], &[], &exe);
    for jit_args in [vec![s(&lib)], vec![s(&objs[0]), s(&lib)]] {
        let diffs = compare_with_native("main in an archive", &exe, &jit_args, &["a"]);
        assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
    }
    let out = jitrun(&[s(&lib), "--entry".into(), "helper".into(), "--noexec".into()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
}

/// `--export-dynamic` (`-rdynamic`): a dlopen'ed plugin calls the program's
/// functions and changes its data, as with `cc -rdynamic`; hidden symbols
/// stay unexported; without the option the plugin does not load, natively
/// or under jitrun.
#[test]
fn plugins_reach_the_program_with_export_dynamic() {
    let dir = scratch("archives-plugin");
    let plugin = shared_library(&dir, "plugin.so", "plugin.c");
    for (n, flags) in ["-O2", "-O0 -fno-pic -fno-pie"].iter().enumerate() {
        let obj_dir = dir.join(n.to_string());
        std::fs::create_dir_all(&obj_dir).unwrap();
        let obj = compile(&[source("plugin_host.c")], flags, &[], &obj_dir).remove(0);
        let exe = dir.join(format!("host-rdynamic-{}", n));
        link_native(std::slice::from_ref(&obj), flags, false, &["-ldl".into()], &["-rdynamic".into()], &exe);
        let plugin_arg = [s(&plugin)];
        let plugin_args: Vec<&str> = plugin_arg.iter().map(String::as_str).collect();
        for option in ["--export-dynamic", "-rdynamic"] {
            let diffs = compare_with_native(
                &format!("plugin {} [{}]", option, flags),
                &exe,
                &[option.to_string(), s(&obj)],
                &plugin_args,
            );
            assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
        }
        let out = jitrun(&[s(&obj), "--".into(), s(&plugin)]);
        assert_eq!(stdout_of(&out), "dlopen failed\n", "without the option the program exports nothing");
    }
}

/// A program that replaces malloc and frees what a plugin it `dlopen`s
/// allocated: natively the plugin's malloc binds to the program's, and
/// under jitrun the program's `dlopen` re-points the new library's GOT.
#[test]
fn plugins_allocate_with_the_programs_own_malloc() {
    let dir = scratch("archives-alloc-plugin");
    let plugin = shared_library(&dir, "alloc_plugin.so", "alloc_plugin.c");
    let obj = compile(&[source("alloc_plugin_host.c")], "-O2", &[], &dir).remove(0);
    let exe = dir.join("alloc-plugin-host");
    link_native(std::slice::from_ref(&obj), "-O2", false, &["-ldl".into()], &[], &exe);
    let diffs =
        compare_with_native("plugin allocating for a program with its own malloc", &exe, &[s(&obj)], &[&s(&plugin)]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}

/// A library whose constructor started a thread leaves the process
/// multi-threaded when the program starts: jitrun must not tell glibc
/// otherwise once its own link thread is gone.
#[test]
fn a_thread_a_library_started_keeps_the_process_multi_threaded() {
    let dir = scratch("archives-thread-lib");
    shared_library(&dir, "libthread_lib.so", "thread_lib.c");
    let obj = compile(&[source("thread_lib_host.c")], "-O2", &[], &dir).remove(0);
    let exe = dir.join("thread-lib-host");
    let search = format!("-L{}", dir.display());
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    link_native(std::slice::from_ref(&obj), "-O2", false, &[search.clone(), "-lthread_lib".into(), rpath], &[], &exe);
    let jit_args = [s(&obj), search, "-lthread_lib".into()];
    let diffs = compare_with_native("a library's constructor starts a thread", &exe, &jit_args, &[]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}

/// A library preloaded with `LD_PRELOAD` that defines a plain `malloc`
/// gets the program's calls, as natively, also once jitrun has loaded a
/// library (libm) through whose handle it looks names up.
#[test]
fn a_preloaded_malloc_gets_the_programs_calls_after_a_library_loads() {
    let dir = scratch("archives-preload-counter");
    let counter = shared_library(&dir, "malloc_counter.so", "malloc_counter.c");
    let obj = compile(&[source("malloc_counter_host.c")], "-O2", &[], &dir).remove(0);
    let exe = dir.join("malloc-counter-host");
    link_native(std::slice::from_ref(&obj), "-O2", false, &["-lm".into()], &[], &exe);
    let run = |command: &mut Command| {
        command.env("LD_PRELOAD", &counter);
        common::run_with(command, b"", std::time::Duration::from_secs(20))
    };
    let native = run(&mut Command::new(&exe));
    let jit = run(common::jitrun_command().arg(&obj).arg("-lm"));
    assert!(String::from_utf8_lossy(&native.stderr).contains("saw 10 of 10"), "{:?}", native);
    let diffs = common::output_diffs("a preloaded malloc after libm loads", &native, &jit);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}

/// A `-l` library that defines `malloc` (as libjemalloc does) keeps the
/// program's calls when something unrelated is preloaded: only a
/// preloaded object's definition can win over it, not libc's.
#[test]
fn a_malloc_library_keeps_the_calls_when_something_else_is_preloaded() {
    let dir = scratch("archives-malloc-library");
    shared_library(&dir, "libmalloc_counter.so", "malloc_counter.c");
    let unrelated = shared_library(&dir, "libshout.so", "shout.c");
    let obj = compile(&[source("malloc_counter_host.c")], "-O2", &[], &dir).remove(0);
    let exe = dir.join("malloc-library-host");
    let search = format!("-L{}", dir.display());
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let libs = [search.clone(), "-lmalloc_counter".into(), "-lm".into(), rpath];
    link_native(std::slice::from_ref(&obj), "-O2", false, &libs, &[], &exe);
    let run = |command: &mut Command| {
        command.env("LD_PRELOAD", &unrelated);
        common::run_with(command, b"", std::time::Duration::from_secs(20))
    };
    let native = run(&mut Command::new(&exe));
    let jit = run(common::jitrun_command().arg(&obj).args([search.as_str(), "-lmalloc_counter", "-lm"]));
    assert!(String::from_utf8_lossy(&native.stderr).contains("saw 10 of 10"), "{:?}", native);
    let diffs = common::output_diffs("a malloc library with something else preloaded", &native, &jit);
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}

/// A C++ template's static members, an inline function's statics and an
/// inline variable that the program and its shared library both define
/// exist once, as natively: the program's, which the library's references
/// are bound to (g++ makes them unique symbols, clang weak ones).
#[test]
fn cxx_statics_are_shared_with_a_library_as_natively() {
    for toolchain in [common::Toolchain::Gcc, common::Toolchain::Clang] {
        if toolchain == common::Toolchain::Clang && !common::clang_available() {
            continue;
        }
        for flags in ["-O0", "-O2"] {
            let dir = scratch(&format!("archives-shared-statics-{:?}{}", toolchain, flags));
            let flags = format!("-std=c++17 {}", flags);
            run_checked(
                toolchain
                    .compiler(true)
                    .args(flags.split_whitespace())
                    .args(["-shared", "-fPIC", "-o"])
                    .arg(dir.join("libshared_statics.so"))
                    .arg(source("shared_statics_lib.cpp")),
            );
            let obj =
                common::compile_with(toolchain, &[source("shared_statics_host.cpp")], &flags, &[], &dir).remove(0);
            let exe = dir.join("shared-statics");
            let libs = [format!("-L{}", dir.display()), "-lshared_statics".into()];
            link_native(
                std::slice::from_ref(&obj),
                &flags,
                true,
                &[&libs[..], &[format!("-Wl,-rpath,{}", dir.display())]].concat(),
                &[],
                &exe,
            );
            let diffs = compare_with_native(
                &format!("C++ statics shared with a library ({:?} {})", toolchain, flags),
                &exe,
                &[&[s(&obj)], &libs[..]].concat(),
                &[],
            );
            assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
            let out = jitrun(&[&[s(&obj)], &libs[..]].concat());
            assert!(stdout_of(&out).contains("shared: count 1 name 1 calls 1 label 1 inline 1"), "{}", stdout_of(&out));
        }
    }
}

/// A shared library that refers to the program's functions and variables
/// (callbacks, settings) is bound to the program's definitions, as a
/// native executable's: for calls bound lazily or at load time
/// (`LD_BIND_NOW`), in isolated runs too, also loaded outright
/// (`--no-as-needed`). So are its own references to a
/// function and a variable the program defines too (interposition).
#[test]
fn a_library_uses_the_programs_functions_and_variables() {
    for flags in ["-O0", "-O2", "-O2 -fno-pic -fno-pie"] {
        let dir = scratch(&format!("archives-program-symbols{}", flags.replace(' ', "")));
        run_checked(
            common::cc()
                .args(["-shared", "-fPIC", "-O2", "-o"])
                .arg(dir.join("libprogram_symbols.so"))
                .arg(source("program_symbols_lib.c")),
        );
        let obj = compile(&[source("program_symbols_host.c")], flags, &[], &dir).remove(0);
        let exe = dir.join("program-symbols");
        let libs = [format!("-L{}", dir.display()), "-lprogram_symbols".to_string()];
        let rpath = format!("-Wl,-rpath,{}", dir.display());
        link_native(std::slice::from_ref(&obj), flags, false, &[&libs[..], &[rpath]].concat(), &[], &exe);
        let native = stdout_of(&common::run_with(&mut Command::new(&exe), b"", std::time::Duration::from_secs(20)));
        assert!(native.contains("log: from the library") && native.contains("101 4 host 1"), "{}", native);
        assert!(native.contains("interposed: 25"), "{}", native);
        for extra in [&[][..], &["--isolate", "--repeat", "2"][..], &["--no-as-needed"][..]] {
            for bind_now in [false, true] {
                let mut command = common::jitrun_command();
                command.arg(&obj).args(&libs).args(extra);
                if bind_now {
                    command.env("LD_BIND_NOW", "1");
                }
                let out = common::run_with(&mut command, b"", std::time::Duration::from_secs(20));
                let expected = native.repeat(if extra.contains(&"--repeat") { 2 } else { 1 });
                assert_eq!(
                    (stdout_of(&out), out.status.code()),
                    (expected, Some(0)),
                    "{} {:?} LD_BIND_NOW={}: {}",
                    flags,
                    extra,
                    bind_now,
                    stderr_of(&out)
                );
            }
        }
    }
}

/// Builds `source` (of testdata/archives) into the shared library `dir/name`.
fn shared_library(dir: &Path, name: &str, source_name: &str) -> PathBuf {
    let library = dir.join(name);
    run_checked(common::cc().args(["-shared", "-fPIC", "-O2", "-o"]).arg(&library).arg(source(source_name)));
    library
}

/// Whether clang can link profiled programs for the tests' CPU: its
/// profile runtime for another CPU than the machine's (qemu-user runs) is
/// not in Debian's amd64 packages.
fn clang_profile_runtime() -> bool {
    if !common::clang_available() {
        return false;
    }
    let runtime = format!("libclang_rt.profile-{}.a", std::env::consts::ARCH);
    let found = Command::new("clang-14")
        .arg(format!("--target={}", common::target_triple()))
        .arg(format!("-print-file-name={}", runtime))
        .output()
        .is_ok_and(|out| Path::new(String::from_utf8_lossy(&out.stdout).trim()).is_absolute());
    if !found && common::cross_testing() {
        eprintln!("note: no {} for clang-14 here; clang's profiling is checked on native hosts", runtime);
        return false;
    }
    true
}

/// Code built with `--coverage` gets the profiling runtime the compiler
/// driver links (GCC's libgcov.a, clang's libclang_rt.profile) and writes
/// the same `.gcda` counters as the native program, also merged over
/// isolated runs.
#[test]
fn coverage_counters_are_written_as_natively() {
    for toolchain in [common::Toolchain::Gcc, common::Toolchain::Clang] {
        if toolchain == common::Toolchain::Clang && !clang_profile_runtime() {
            continue;
        }
        let dir = scratch(&format!("archives-coverage-{:?}", toolchain));
        let obj = common::compile_with(toolchain, &[source("coverage.c")], "-O0 --coverage", &[], &dir).remove(0);
        let exe = dir.join("coverage");
        run_checked(toolchain.compiler(false).arg("--coverage").arg(&obj).arg("-o").arg(&exe));
        let counters = obj.with_extension("gcda");
        let counted = |run: &mut dyn FnMut()| {
            let _ = std::fs::remove_file(&counters);
            run();
            std::fs::read(&counters).unwrap_or_else(|e| panic!("{}: {}", counters.display(), e))
        };
        let native = counted(&mut || {
            for _ in 0..2 {
                run_checked(Command::new(&exe).arg("a"));
            }
        });
        let jit = counted(&mut || {
            let out = jitrun(&[s(&obj), "--isolate".into(), "--repeat".into(), "2".into(), "--".into(), "a".into()]);
            assert!(out.status.success(), "{:?}: {}", toolchain, String::from_utf8_lossy(&out.stderr));
        });
        assert!(native == jit, "{:?}: the .gcda files differ", toolchain);
    }
}

/// Code built with clang's `-fprofile-instr-generate` references nothing
/// of its runtime (the driver adds `-u __llvm_profile_runtime`): jitrun
/// loads it for the counter sections, and the profile counts what the
/// native program's does (the raw files differ in addresses and the
/// native build ID).
#[test]
fn instrumented_profiles_count_as_natively() {
    if !clang_profile_runtime() {
        return;
    }
    let dir = scratch("archives-profile-instr");
    let obj = common::compile_with(
        common::Toolchain::Clang,
        &[source("coverage.c")],
        "-O1 -fprofile-instr-generate",
        &[],
        &dir,
    )
    .remove(0);
    let exe = dir.join("profiled");
    run_checked(common::clang(false).arg("-fprofile-instr-generate").arg(&obj).arg("-o").arg(&exe));
    let counts = |name: &str, run: &mut Command| {
        let raw = dir.join(name);
        let _ = std::fs::remove_file(&raw);
        let out = run.env("LLVM_PROFILE_FILE", &raw).output().unwrap();
        assert!(out.status.success(), "{}: {}", name, String::from_utf8_lossy(&out.stderr));
        let shown = Command::new("llvm-profdata-14").args(["show", "--all-functions", "--counts"]).arg(&raw).output();
        String::from_utf8(shown.unwrap().stdout).unwrap()
    };
    let native = counts("native.profraw", Command::new(&exe).arg("a"));
    let jit = counts("jit.profraw", common::jitrun_command().args([s(&obj), "--".into(), "a".into()]));
    assert!(native.contains("Block counts"), "{}", native);
    assert_eq!(jit, native);
}

/// An executable among the inputs (a build script's mistake) is refused
/// with one message, as `ld` refuses it ("cannot use executable file as
/// input to a link"): a PIE is `ET_DYN` like a shared library, and was
/// loaded as one (a warning, then the program ran).
#[test]
fn an_executable_among_the_inputs_is_refused() {
    let dir = scratch("archives-executable-input");
    let object = common::compile_source(
        &dir,
        "uses_stdout.c",
        "#include <stdio.h>\nint main(void) { fputs(\"hi\\n\", stdout); return 0; }\n",
        "-O2",
    );
    for (name, flag) in [("pie", "-pie"), ("no_pie", "-no-pie")] {
        let executable = dir.join(name);
        run_checked(common::cc().arg(&object).arg(flag).arg("-o").arg(&executable));
        let out = jitrun(&[object.as_os_str(), executable.as_os_str()]);
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(125), "{}: {}", name, stderr);
        assert!(stderr.contains(&format!("{}: an executable", s(&executable))), "{}", stderr);
        assert_eq!(stderr.lines().count(), 1, "{}", stderr);
    }
}
