//! Links libgcc's unwinder (libgcc_eh.a) into jitrun instead of loading
//! libgcc_s.so at start-up: one shared library fewer to map, relocate and
//! initialize (its constructor probes the CPU with `cpuid`, slow in a VM)
//! on every run. Programs that need libgcc_s still get it (see
//! `HostResolver`); the image's frames are registered with both unwinders.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // A position-dependent executable: the loader has no relative
    // relocations to apply (4,000 of them, dirtying 16 pages) at every start.
    println!("cargo:rustc-link-arg-bins=-no-pie");
    // jitrun's dl_iterate_phdr wraps the loader's for every library (a
    // sanitizer's symbolizer then sees the image; see host.rs).
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=dl_iterate_phdr");
    // libgcc_s finds frames with _dl_find_object (glibc 2.35): jitrun's
    // answers for an image listed as a module (see host.rs).
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=_dl_find_object");
    // Sanitizer runtimes call these if the executable defines them: jitrun
    // answers with the program's (see main.rs, `sanitizer_hooks`).
    for hook in [
        "__asan_default_options",
        "__asan_default_suppressions",
        "__lsan_default_options",
        "__ubsan_default_options",
        "__tsan_default_options",
        "__tsan_default_suppressions",
        "__lsan_default_suppressions",
        "__lsan_is_turned_off",
        "__asan_on_error",
    ] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={hook}");
    }
    place_hot_functions_together();
    // The target's C compiler knows where the target's libgcc_eh.a is: for
    // a cross build, `CC_<target>` (as the cc crate names it) or TARGET_CC.
    let target = std::env::var("TARGET").unwrap_or_default();
    let target_cc = format!("CC_{}", target.replace('-', "_"));
    for variable in [target_cc.as_str(), "TARGET_CC", "CC"] {
        println!("cargo:rerun-if-env-changed={variable}");
    }
    let cross = std::env::var("HOST").is_ok_and(|host| host != target);
    let cc = [target_cc.as_str(), "TARGET_CC"]
        .iter()
        .find_map(|variable| std::env::var(variable).ok())
        .or_else(|| (!cross).then(|| std::env::var("CC").ok()).flatten())
        .unwrap_or_else(|| if cross { format!("{}-gcc", gnu_triple(&target)) } else { "cc".into() });
    let Ok(out) = Command::new(&cc).arg("-print-file-name=libgcc_eh.a").output() else {
        println!("cargo:warning=`{cc}` not found: jitrun will load libgcc_s.so at start-up");
        return;
    };
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    match path.parent().filter(|_| path.is_absolute() && path.exists()) {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            // Not bundled into the rlib: passed to every final link, ahead
            // of std's `-lgcc_s`, which `--as-needed` then drops.
            println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
        }
        None => println!("cargo:warning=no libgcc_eh.a: jitrun will load libgcc_s.so at start-up"),
    }
}

/// Has the linker put the functions common runs execute (listed by
/// `scripts/hot-functions.sh` in build/hot-functions.txt) side by side at
/// the start of `.text`: every run is a new process, and each 64 KiB of
/// code it touches is a page fault (an isolated run's child faults its
/// code in again). Only rust-lld, the linker rustc 1.90 and later use for
/// this target, takes a symbol ordering file; with another, nothing is
/// asked. Names missing from the build are skipped.
fn place_hot_functions_together() {
    let list = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("build/hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    if !list.exists() || std::env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return;
    }
    // A linker chosen by flags may not be rust-lld.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("link") {
        return;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Some(minor) = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|v| v.split_whitespace().nth(1)?.split('.').nth(1)?.parse::<u32>().ok())
    else {
        return;
    };
    if minor >= 90 {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", list.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The GNU triple of a Rust target (`aarch64-unknown-linux-gnu` is
/// `aarch64-linux-gnu`), as Debian names its cross compilers.
fn gnu_triple(target: &str) -> String {
    target.replace("-unknown-", "-")
}
