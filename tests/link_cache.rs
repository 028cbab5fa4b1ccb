//! The link cache (`--link-cache DIR`): a second run of the same link maps
//! the stored image and behaves as the first; anything the link depended
//! on that changes (an object, a library directory) makes it link again;
//! entries it cannot trust are ignored; the directory stays under its
//! limit. (Every differential test also runs each program through a cache
//! twice: see `common::differential_with`.)

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::{
    compile_source, jitrun_command, link_cache_entries, run_with, scratch, shell_status, take_cache_log, CACHE_LOG,
};

fn jitrun_cached(cache: &Path, args: &[&Path]) -> Output {
    jitrun_cached_logged(cache, args).0
}

/// [`jitrun_cached`], with what the cache did (its debug log, taken out
/// of stderr).
fn jitrun_cached_logged(cache: &Path, args: &[&Path]) -> (Output, String) {
    let mut cmd = jitrun_command();
    cmd.arg("--link-cache").arg(cache).args(args).env(CACHE_LOG.0, CACHE_LOG.1);
    let mut out = run_with(&mut cmd, b"", Duration::from_secs(30));
    let log = take_cache_log(&mut out);
    (out, log)
}

/// `dir/name`, created.
fn subdir(dir: &Path, name: &str) -> PathBuf {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    sub
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `objects` twice through a fresh cache in `dir`: both runs print
/// `expected`, the first stores one entry and the second maps it. Returns
/// the cache directory.
fn stored_then_used(dir: &Path, objects: &[&Path], expected: &str) -> PathBuf {
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let first = jitrun_cached(&cache, objects);
    assert_eq!(text(&first.stdout), expected, "{}", text(&first.stderr));
    let stored = link_cache_entries(&cache);
    assert_eq!(stored.len(), 1, "one entry stored: {:?}", stored);
    let (second, log) = jitrun_cached_logged(&cache, objects);
    assert_eq!(text(&second.stdout), expected, "{}", text(&second.stderr));
    assert_eq!((shell_status(&first), shell_status(&second)), (0, 0));
    assert!(log.contains("link cache: using"), "the second run linked again instead of mapping the entry:\n{}", log);
    assert_eq!(link_cache_entries(&cache).len(), 1);
    cache
}

const LIBC_USER: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
static int compare(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int (*pick)(const void *, const void *) = compare;
int main(void) {
    int v[] = {5, 3, 9, 1};
    qsort(v, 4, sizeof v[0], pick);
    char *s = strdup("copied");
    fprintf(stderr, "to stderr\n");
    printf("%d %d %d %d %s %.3f %p\n", v[0], v[1], v[2], v[3], s, sqrt(2.0), (void *)stdout == NULL ? NULL : (void *)1);
    free(s);
    return 0;
}
"#;

#[test]
fn a_second_run_maps_the_stored_image_in_every_code_model() {
    #[cfg(target_arch = "x86_64")]
    let models = ["-O0", "-O2", "-O2 -fPIC", "-O2 -mcmodel=large"];
    #[cfg(target_arch = "aarch64")]
    let models = ["-O0", "-O2", "-O2 -fPIC", "-O2 -mcmodel=large -fno-pic -fno-pie", "-O2 -mcmodel=tiny"];
    for (i, flags) in models.iter().enumerate() {
        let dir = scratch(&format!("link-cache-models-{}", i));
        let object = compile_source(&dir, "libc_user.c", LIBC_USER, flags);
        let math = PathBuf::from("-lm");
        stored_then_used(&dir, &[&object, &math], "1 3 5 9 copied 1.414 0x1\n");
    }
}

const PRINTS_ONE: &str = "#include <stdio.h>\nint main(void) { puts(\"one\"); return 0; }\n";

/// Rewrites `object`, built from [`PRINTS_ONE`], as the same program
/// printing "two" ([`make_it_print_two`]) and checks that a run through
/// `cache` prints it.
#[test]
fn isolated_repeated_and_mutated_runs_map_the_entry_of_a_plain_run() {
    let dir = scratch("cache-run-options");
    let object = common::compile(&[common::testdata().join("reuse/mutants.c")], "-O2", &[], &dir).remove(0);
    let plain = "mutant 0 label none constructor saw 0 run 1\n";
    let cache = stored_then_used(&dir, &[&object], plain);
    // Run-only options are not part of the key: the plain run's entry,
    // with `--set` written into it before constructors, run after run.
    let runs: [(&[&str], String, i32); 5] = [
        (&["--isolate", "--repeat", "3"], plain.repeat(3), 0),
        (&["--repeat", "2"], format!("{plain}mutant 0 label none constructor saw 0 run 2\n"), 0),
        (&["--isolate", "--set", "mutant_id=4"], "failing\n".into(), 3),
        (&["--set=label=mutated", "-j", "2", "--timeout", "20s"], plain.replace("none", "mutated"), 0),
        (&["--argv0", "--isolate", "--max-output=100"], plain.into(), 0),
    ];
    for (options, expected, status) in runs {
        let mut args: Vec<&Path> = vec![&object];
        args.extend(options.iter().map(Path::new));
        let (out, log) = jitrun_cached_logged(&cache, &args);
        assert_eq!((text(&out.stdout), shell_status(&out)), (expected, status), "{options:?}: {}", text(&out.stderr));
        assert!(log.contains("link cache: using"), "{options:?} linked again:\n{log}");
    }
    assert_eq!(link_cache_entries(&cache).len(), 1);
}

fn an_edit_is_seen(dir: &Path, object: &Path, cache: &Path) {
    make_it_print_two(dir, object);
    let out = jitrun_cached(cache, &[object]);
    assert_eq!(text(&out.stdout), "two\n", "{}", text(&out.stderr));
}

/// Rewrites `object`, built from [`PRINTS_ONE`], as the same program
/// printing "two": the same size, the same modification time, so that only
/// the status-change time and the contents tell.
fn make_it_print_two(dir: &Path, object: &Path) {
    let two = "#include <stdio.h>\nint main(void) { puts(\"two\"); return 0; }\n";
    let modified = std::fs::metadata(object).unwrap().modified().unwrap();
    let rebuilt = compile_source(&subdir(dir, "two"), "prog.c", two, "-O2");
    assert_eq!(std::fs::metadata(&rebuilt).unwrap().len(), std::fs::metadata(object).unwrap().len());
    std::fs::write(object, std::fs::read(&rebuilt).unwrap()).unwrap();
    std::fs::File::options().write(true).open(object).unwrap().set_modified(modified).unwrap();
}

#[test]
fn a_changed_object_is_linked_again() {
    let dir = scratch("link-cache-changed");
    let object = compile_source(&dir, "prog.c", PRINTS_ONE, "-O2");
    let cache = stored_then_used(&dir, &[&object], "one\n");
    an_edit_is_seen(&dir, &object, &cache);
}

/// An entry stored right after its object was compiled checksums the
/// object at every use (its stamp alone could miss a change within the
/// same clock tick); the first run after the object settled copies the
/// entry with the object noted as settled, and later runs use that copy.
#[test]
fn an_entry_of_fresh_inputs_is_noted_settled_once_they_are() {
    let dir = scratch("link-cache-settling");
    let object = compile_source(&dir, "prog.c", PRINTS_ONE, "-O2");
    let cache = dir.join("cache");
    // Stored while the object is fresh: written again just before, and the
    // log says so (were the machine so slow that the link came two seconds
    // later, it would be stored settled: then again).
    let fresh = (0..3).any(|_| {
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::write(&object, std::fs::read(&object).unwrap()).unwrap();
        let (out, log) = jitrun_cached_logged(&cache, &[&object]);
        assert_eq!(text(&out.stdout), "one\n", "{}", text(&out.stderr));
        log.contains("is fresh: checksummed at each use")
    });
    assert!(fresh, "the object was never stored fresh");
    let stored = link_cache_entries(&cache);
    settle(&object);
    let mut seen = Vec::new();
    for run in 0..3 {
        let (out, log) = jitrun_cached_logged(&cache, &[&object]);
        assert_eq!((text(&out.stdout), shell_status(&out)), ("one\n".into(), 0), "{}", text(&out.stderr));
        assert!(log.contains("link cache: using"), "run {}:\n{}", run, log);
        assert_eq!(log.contains("inputs settled unchanged"), run == 0, "run {}:\n{}", run, log);
        seen.push(link_cache_entries(&cache));
    }
    assert_eq!(seen[0].len(), 1);
    assert_eq!(seen[0][0].0, stored[0].0, "another entry was written: {:?} {:?}", stored, seen[0]);
    assert_ne!(seen[0][0].1, stored[0].1, "the entry was not replaced once its object settled");
    assert_eq!((&seen[1], &seen[2]), (&seen[0], &seen[0]), "the entry was replaced again");
    // Its stamp still tells a change of the same size and time.
    an_edit_is_seen(&dir, &object, &cache);
}

#[test]
fn a_library_added_to_a_directory_searched_first_is_linked() {
    let dir = scratch("link-cache-library");
    let (first, second) = (dir.join("first"), dir.join("second"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    let archive = |at: &Path, text: &str| {
        let member = compile_source(
            &subdir(&dir, &format!("{}-member", at.file_name().unwrap().to_string_lossy())),
            "greet.c",
            text,
            "-O2",
        );
        let _ = std::fs::remove_file(at.join("libgreet.a"));
        common::run_checked(common::ar().arg("rcs").arg(at.join("libgreet.a")).arg(&member));
    };
    archive(&second, "const char *greeting(void) { return \"from second\"; }\n");
    let main = compile_source(
        &dir,
        "main.c",
        "#include <stdio.h>\nconst char *greeting(void);\nint main(void) { puts(greeting()); return 0; }\n",
        "-O2",
    );
    let args = [main.clone(), format!("-L{}", first.display()).into(), format!("-L{}", second.display()).into()];
    let with_lib: Vec<&Path> = args.iter().map(PathBuf::as_path).chain([Path::new("-lgreet")]).collect();
    let cache = stored_then_used(&dir, &with_lib, "from second\n");
    // A library appears in a directory searched before: the link changes.
    archive(&first, "const char *greeting(void) { return \"from first\"; }\n");
    let out = jitrun_cached(&cache, &with_lib);
    assert_eq!(text(&out.stdout), "from first\n", "{}", text(&out.stderr));
}

#[test]
fn entries_that_cannot_be_trusted_are_ignored() {
    let dir = scratch("link-cache-corrupt");
    let object = compile_source(&dir, "prog.c", LIBC_USER, "-O2");
    let math = PathBuf::from("-lm");
    let cache = stored_then_used(&dir, &[&object, &math], "1 3 5 9 copied 1.414 0x1\n");
    let (name, _) = link_cache_entries(&cache).remove(0);
    let entry = cache.join(&name);
    let original = std::fs::read(&entry).unwrap();
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("truncated in its header", original[..20].to_vec()),
        ("truncated in its metadata", original[..200].to_vec()),
        ("with its metadata overwritten", {
            let mut bytes = original.clone();
            for b in bytes.iter_mut().skip(60).take(4000) {
                *b = 0xff;
            }
            bytes
        }),
        ("with its counts zeroed", {
            let mut bytes = original.clone();
            for b in bytes.iter_mut().skip(60).take(4000) {
                *b = 0;
            }
            bytes
        }),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&entry, &bytes).unwrap();
        let out = jitrun_cached(&cache, &[&object, &math]);
        assert_eq!(text(&out.stdout), "1 3 5 9 copied 1.414 0x1\n", "an entry {}: {}", what, text(&out.stderr));
        assert_eq!(text(&out.stderr), "to stderr\n", "an entry {}", what);
        assert_eq!(shell_status(&out), 0, "an entry {}", what);
    }
}

#[test]
fn a_crash_in_a_mapped_image_names_the_function() {
    let dir = scratch("link-cache-crash");
    let source = common::testdata().join("diagnostics").join("null_deref.c");
    let object = common::compile(&[source], "-O2", &[], &dir).remove(0);
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let mut reports = Vec::new();
    for run in ["storing", "mapped"] {
        let out = jitrun_cached(&cache, &[&object]);
        let stderr = text(&out.stderr);
        assert_eq!(shell_status(&out), 139, "{}: {}", run, stderr);
        assert!(stderr.contains("SIGSEGV") && stderr.contains("crash_here+0x"), "{}: {}", run, stderr);
        assert!(stderr.contains("null_deref.o, .text)"), "{}: {}", run, stderr);
        reports.push(stderr);
    }
    // The image is at the same address: the same report, frame by frame.
    assert_eq!(reports[0], reports[1]);
    assert_eq!(link_cache_entries(&cache).len(), 1);
}

#[test]
fn links_the_cache_cannot_reproduce_are_not_stored() {
    let dir = scratch("link-cache-declined");
    // Thread-locals live in a module of this process the entry cannot hold.
    let object = compile_source(
        &dir,
        "tls.c",
        "#include <stdio.h>\n__thread int counter = 41;\nint main(void) { printf(\"%d\\n\", ++counter); return 0; }\n",
        "-O2",
    );
    let cache = dir.join("cache");
    for _ in 0..2 {
        let out = jitrun_cached(&cache, &[&object]);
        assert_eq!(text(&out.stdout), "42\n", "{}", text(&out.stderr));
    }
    assert!(link_cache_entries(&cache).is_empty());
}

#[test]
fn the_directory_stays_under_its_limit_and_the_cache_can_be_turned_off() {
    let dir = scratch("link-cache-limit");
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    // Each entry holds a 300 KiB table: four do not fit in one MiB.
    for i in 0..4 {
        let text_of = format!(
            "#include <stdio.h>\nconst char table[300 * 1024] = {{{}}};\nint main(void) {{ printf(\"%d\\n\", table[0]); return 0; }}\n",
            i + 1
        );
        let object = compile_source(&subdir(&dir, &i.to_string()), "big.c", &text_of, "-O2");
        let mut cmd = jitrun_command();
        cmd.arg("--link-cache").arg(&cache).args(["--link-cache-max", "1"]).arg(&object);
        let out = run_with(&mut cmd, b"", Duration::from_secs(30));
        assert_eq!(text(&out.stdout), format!("{}\n", i + 1), "{}", text(&out.stderr));
        let total: u64 = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
        assert!(total <= 1 << 20, "{} bytes in the cache after {} links", total, i + 1);
    }
    assert!(link_cache_entries(&cache).len() < 4);

    // A directory that cannot be written: the program runs, with a warning.
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, b"").unwrap();
    let object =
        compile_source(&dir, "hello.c", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n", "-O2");
    let out = jitrun_cached(&blocked.join("cache"), &[&object]);
    assert_eq!((text(&out.stdout), shell_status(&out)), ("hi\n".to_string(), 0));
    assert!(text(&out.stderr).starts_with("jitrun: warning: --link-cache"), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));

    // --no-link-cache wins over the environment.
    let off = dir.join("off");
    let object =
        compile_source(&dir, "hello.c", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n", "-O2");
    let mut cmd = jitrun_command();
    cmd.env("JITRUN_LINK_CACHE", &off).arg("--no-link-cache").arg(&object);
    assert_eq!(text(&run_with(&mut cmd, b"", Duration::from_secs(30)).stdout), "hi\n");
    assert!(!off.exists());
    let mut cmd = jitrun_command();
    cmd.env("JITRUN_LINK_CACHE", &off).arg(&object);
    assert_eq!(text(&run_with(&mut cmd, b"", Duration::from_secs(30)).stdout), "hi\n");
    assert_eq!(link_cache_entries(&off).len(), 1);
}

/// jitrun with the environment's cache home set to `cache_home` (no
/// `--link-cache`: jitrun's own cache) and `extra` arguments.
fn jitrun_by_default(cache_home: &Path, extra: &[&str], object: &Path) -> Output {
    let mut cmd = jitrun_command();
    cmd.env("XDG_CACHE_HOME", cache_home).env_remove("JITRUN_LINK_CACHE").args(extra).arg(object);
    run_with(&mut cmd, b"", Duration::from_secs(30))
}

/// jitrun's own cache under `cache_home`.
#[derive(Debug, Default)]
struct DefaultCacheFiles {
    /// Each entry's name, inode and size.
    entries: Vec<(String, u64, u64)>,
    /// Each mark's name and contents.
    marks: Vec<(String, Vec<u8>)>,
}

fn default_cache_files(cache_home: &Path) -> DefaultCacheFiles {
    use std::os::unix::fs::MetadataExt;
    let mut files = DefaultCacheFiles::default();
    let Ok(listing) = std::fs::read_dir(cache_home.join("jitrun/links")) else { return files };
    for e in listing {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".jitrun-mark") {
            files.marks.push((name, std::fs::read(e.path()).unwrap()));
        } else {
            let meta = e.metadata().unwrap();
            files.entries.push((name, meta.ino(), meta.len()));
        }
    }
    files.entries.sort();
    files.marks.sort();
    files
}

/// A C program whose object holds a `kib` KiB table (and a thread-local
/// when `thread_local`), printing `value`.
fn program_of_size(dir: &Path, kib: usize, value: i32, thread_local: bool) -> PathBuf {
    let tls = if thread_local { "__thread int bump = 0;\n" } else { "int bump = 0;\n" };
    let source = format!(
        "#include <stdio.h>\n{}const char table[{} * 1024] = {{{}}};\nint main(void) {{ printf(\"%d\\n\", table[0] + bump++); return 0; }}\n",
        tls, kib, value
    );
    compile_source(dir, "prog.c", &source, "-O2")
}

/// Waits until `path` last changed more than two seconds ago: jitrun's own
/// cache stores no link of inputs changed more recently (an entry would
/// have to checksum them at every use).
fn settle(path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let changed =
        std::fs::metadata(path).unwrap().ctime() as f64 + 1e-9 * std::fs::metadata(path).unwrap().ctime_nsec() as f64;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let wait = changed + 2.2 - now;
    if wait > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
}

#[test]
fn jitruns_own_cache_keeps_a_large_link_seen_twice_and_stays_silent() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("link-cache-default");
    let home = dir.join("xdg");
    let object = program_of_size(&subdir(&dir, "large"), 80, 7, false);
    // Inputs changed in the last two seconds: seen, not stored.
    for _ in 0..2 {
        let out = jitrun_by_default(&home, &[], &object);
        assert_eq!((text(&out.stdout), text(&out.stderr)), ("7\n".into(), String::new()));
        let files = default_cache_files(&home);
        assert!(files.entries.is_empty() && files.marks.len() == 1, "a link of fresh inputs was stored: {:?}", files);
    }
    std::fs::remove_dir_all(&home).unwrap();
    settle(&object);
    // First sighting: a mark of a few bytes, no entry. Second: the entry.
    // Third and fourth: the entry mapped, not replaced.
    let mut seen = Vec::new();
    for run in 0..4 {
        let out = jitrun_by_default(&home, &[], &object);
        assert_eq!((text(&out.stdout), text(&out.stderr), shell_status(&out)), ("7\n".into(), String::new(), 0));
        let files = default_cache_files(&home);
        assert_eq!(files.marks.len(), 1, "run {}: {:?}", run + 1, files);
        assert!(files.marks[0].1.len() < 64, "run {}: a mark of more than a few bytes: {:?}", run + 1, files);
        seen.push(files.entries);
    }
    assert!(seen[0].is_empty(), "the first sighting wrote more than a mark: {:?}", seen[0]);
    assert!(seen[1].len() == 1 && seen[1][0].2 > 80 * 1024, "the second did not store the image: {:?}", seen[1]);
    assert_eq!((&seen[2], &seen[3]), (&seen[1], &seen[1]), "later runs replaced the entry instead of mapping it");
    let mode = std::fs::metadata(home.join("jitrun")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "jitrun's cache directory is open to others");

    // -v says what happened (a different command line: its own mark).
    let verbose = jitrun_by_default(&home, &["-v"], &object);
    assert!(text(&verbose.stderr).contains("link cache: marked"), "{}", text(&verbose.stderr));

    // An edited object is linked again; once it settled, stored again at
    // once (the link was seen before).
    let edited = program_of_size(&subdir(&dir, "large"), 80, 9, false);
    assert_eq!(edited, object);
    let entry_of = |home: &Path| default_cache_files(home).entries.into_iter().find(|f| f.0 == seen[1][0].0).unwrap();
    let out = jitrun_by_default(&home, &[], &object);
    assert_eq!(text(&out.stdout), "9\n", "{}", text(&out.stderr));
    assert_eq!(entry_of(&home), seen[1][0], "a link of an object just edited was stored");
    settle(&object);
    let out = jitrun_by_default(&home, &[], &object);
    assert_eq!(text(&out.stdout), "9\n", "{}", text(&out.stderr));
    let entry = entry_of(&home);
    assert_ne!(entry.1, seen[1][0].1, "the stale entry was not replaced");
    assert!(entry.2 > 80 * 1024);

    // Small links are not worth it: nothing is looked up or written.
    let small_home = dir.join("small-xdg");
    let small = program_of_size(&subdir(&dir, "small"), 1, 3, false);
    for _ in 0..3 {
        assert_eq!(text(&jitrun_by_default(&small_home, &[], &small).stdout), "3\n");
    }
    assert!(!small_home.exists(), "a small link used the cache");

    // Turned off: by the option, or by JITRUN_LINK_CACHE=off.
    let off_home = dir.join("off-xdg");
    for _ in 0..3 {
        assert_eq!(text(&jitrun_by_default(&off_home, &["--no-link-cache"], &object).stdout), "9\n");
        let mut cmd = jitrun_command();
        cmd.env("XDG_CACHE_HOME", &off_home).env("JITRUN_LINK_CACHE", "off").arg(&object);
        assert_eq!(text(&run_with(&mut cmd, b"", Duration::from_secs(30)).stdout), "9\n");
    }
    assert!(!off_home.exists(), "the cache was used although turned off");
    // Nor under a debugger (here asked for by JITRUN_GDB_JIT): it learns of
    // an image only as it is linked, so a mapped entry would hide it.
    for _ in 0..3 {
        let mut cmd = jitrun_command();
        cmd.env("XDG_CACHE_HOME", &off_home).env("JITRUN_GDB_JIT", "1").arg(&object);
        assert_eq!(text(&run_with(&mut cmd, b"", Duration::from_secs(30)).stdout), "9\n");
    }
    assert!(!off_home.exists(), "the cache was used for a debugger");

    // Without $XDG_CACHE_HOME, under $HOME/.cache.
    let home_dir = subdir(&dir, "home");
    for _ in 0..2 {
        let mut cmd = jitrun_command();
        cmd.env_remove("XDG_CACHE_HOME").env("HOME", &home_dir).arg(&object);
        assert_eq!(text(&run_with(&mut cmd, b"", Duration::from_secs(30)).stdout), "9\n");
    }
    assert_eq!(default_cache_files(&home_dir.join(".cache")).entries.len(), 1);

    // A cache directory others may write to is not trusted: its entry is
    // not run, and nothing is written there.
    let shared = dir.join("shared-xdg");
    let links = shared.join("jitrun/links");
    std::fs::create_dir_all(&links).unwrap();
    std::fs::set_permissions(&links, std::fs::Permissions::from_mode(0o777)).unwrap();
    for _ in 0..3 {
        assert_eq!(text(&jitrun_by_default(&shared, &[], &object).stdout), "9\n");
    }
    let files = default_cache_files(&shared);
    assert!(files.entries.is_empty() && files.marks.is_empty(), "{:?}", files);
    std::fs::set_permissions(&links, std::fs::Permissions::from_mode(0o700)).unwrap();
    for _ in 0..2 {
        assert_eq!(text(&jitrun_by_default(&shared, &[], &object).stdout), "9\n");
    }
    assert_eq!(default_cache_files(&shared).entries.len(), 1, "a private directory was not used");

    // A cache home that cannot be written: the program runs as natively,
    // not a word on stderr.
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, b"").unwrap();
    for _ in 0..3 {
        let out = jitrun_by_default(&blocked, &[], &object);
        assert_eq!((text(&out.stdout), text(&out.stderr), shell_status(&out)), ("9\n".into(), String::new(), 0));
    }
}

#[test]
fn jitruns_own_cache_remembers_a_link_it_cannot_keep_until_its_inputs_change() {
    let dir = scratch("link-cache-default-declined");
    let home = dir.join("xdg");
    // Thread-locals keep a link out of the cache.
    let object = program_of_size(&dir, 80, 5, true);
    settle(&object);
    let mut seen = Vec::new();
    for _ in 0..4 {
        let out = jitrun_by_default(&home, &[], &object);
        assert_eq!((text(&out.stdout), text(&out.stderr)), ("5\n".into(), String::new()));
        let files = default_cache_files(&home);
        assert!(files.entries.is_empty() && files.marks.len() == 1, "{:?}", files);
        seen.push(files.marks[0].1.clone());
    }
    // Seen, then declined on the second run (the mark says so); the third
    // and fourth neither store nor mark again.
    assert_ne!(seen[0], seen[1], "the second run left no mark that it declined");
    assert_eq!((&seen[2], &seen[3]), (&seen[1], &seen[1]), "a declined link was linked for the cache again");
    // New inputs: the cache tries again (and declines again), once they
    // settled.
    program_of_size(&dir, 80, 6, true);
    settle(&object);
    let out = jitrun_by_default(&home, &[], &object);
    assert_eq!(text(&out.stdout), "6\n", "{}", text(&out.stderr));
    let after = default_cache_files(&home);
    assert!(after.entries.is_empty() && after.marks.len() == 1, "{:?}", after);
    assert_ne!(after.marks[0].1, seen[3], "changed inputs were not tried again");
}
