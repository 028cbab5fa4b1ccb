//! Thread-local storage in every access model, in several threads: C
//! programs from `testdata/tls` built with each model forced, compared
//! with native links.

mod common;

#[cfg(target_arch = "x86_64")]
const TLS_FLAG_SETS: &[&str] = &[
    "-O0",
    "-O2",
    "-O2 -fno-pic -fno-pie -ftls-model=local-exec",
    "-O2 -ftls-model=initial-exec",
    "-O2 -fPIC -ftls-model=global-dynamic",
    "-O2 -fPIC -ftls-model=local-dynamic",
    // `call *__tls_get_addr@GOTPCREL(%rip)` behind the sequence's
    // `data16 rex.W` prefixes, which a relaxed call must keep adjacent.
    "-O2 -fPIC -fno-plt -ftls-model=global-dynamic",
    "-O0 -fPIC -fno-plt -ftls-model=local-dynamic",
    "-O2 -fPIC -mtls-dialect=gnu2",
    "-O2 -fPIC -mtls-dialect=gnu2 -ftls-model=local-dynamic",
    "-O2 -mcmodel=large",
];

/// On aarch64: every model in both dialects (TLS descriptors are gcc's
/// default there, `trad` the general- and local-dynamic calls of
/// `__tls_get_addr`), and the tiny and large code models.
#[cfg(target_arch = "aarch64")]
const TLS_FLAG_SETS: &[&str] = &[
    "-O0",
    "-O2",
    "-O2 -fno-pic -fno-pie -ftls-model=local-exec",
    "-O2 -ftls-model=initial-exec",
    "-O2 -fPIC -ftls-model=global-dynamic",
    "-O2 -fPIC -ftls-model=local-dynamic",
    "-O2 -fPIC -mtls-dialect=trad -ftls-model=global-dynamic",
    "-O0 -fPIC -mtls-dialect=trad -ftls-model=local-dynamic",
    "-O2 -mcmodel=tiny",
    "-O2 -mcmodel=large -fno-pic -fno-pie",
];

#[test]
fn models() {
    common::check_program("tls", "models.c", TLS_FLAG_SETS);
}

#[test]
fn concurrent() {
    common::check_program("tls", "concurrent.c", TLS_FLAG_SETS);
}

#[test]
fn big_static_tls() {
    // Under qemu-aarch64 (10.0) a thread cannot be created once
    // glibc.rtld.optional_static_tls is raised past the default: the
    // natively linked program fails too (pthread_create: EEXIST), so there
    // is nothing to compare.
    if common::emulation_cannot_show("qemu-user cannot start threads with a large static TLS surplus") {
        return;
    }
    common::check_program("tls", "big_static_tls.c", &["-O2", "-O2 -fPIC -ftls-model=global-dynamic"]);
}

#[test]
fn aligned_past_a_cache_line() {
    common::check_program("tls", "aligned.c", TLS_FLAG_SETS);
}

/// Past jitrun's own static TLS alignment (128), jitrun starts again with
/// a module of the program's alignment preloaded.
#[test]
fn aligned_to_a_page() {
    common::check_program("tls", "aligned_page.c", TLS_FLAG_SETS);
}

/// Past what a restart offers (64 KiB), the link stops with one clear
/// message (natively such a program runs: its alignment sets the area's),
/// rather than letting glibc fail or misplace the block.
#[test]
fn aligned_past_what_jitrun_supports_is_refused_clearly() {
    let dir = common::scratch("tls-over-aligned");
    let object = common::compile_source(
        &dir,
        "over.c",
        "__thread char v[8] __attribute__((aligned(131072)));\n\
         int main(void) { return (int)((unsigned long)v % 131072); }\n",
        "-O2",
    );
    let out = common::jitrun(&[object.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{}", stderr);
    assert!(stderr.contains("thread-local variables aligned to 131072 bytes"), "{}", stderr);
    assert_eq!(stderr.lines().count(), 1, "{}", stderr);
}
