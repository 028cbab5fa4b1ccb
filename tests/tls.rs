//! Thread-local storage in every access model, in several threads: C
//! programs from `testdata/tls` built with each model forced, compared
//! with native links.

mod common;

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
    common::check_program("tls", "big_static_tls.c", &["-O2", "-O2 -fPIC -ftls-model=global-dynamic"]);
}

#[test]
fn aligned_past_a_cache_line() {
    common::check_program("tls", "aligned.c", TLS_FLAG_SETS);
}
