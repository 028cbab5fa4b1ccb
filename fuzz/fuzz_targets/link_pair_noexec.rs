//! Two inputs linked together (symbol resolution across objects, COMDAT
//! selection, duplicate definitions): the input is split at its first
//! occurrence of the separator `JITRUN-NEXT-INPUT`, or in the middle.
#![no_main]

use libfuzzer_sys::fuzz_target;

const SEPARATOR: &[u8] = b"JITRUN-NEXT-INPUT";

fuzz_target!(|data: &[u8]| {
    let split = data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR);
    let (first, second) = match split {
        Some(at) => (&data[..at], &data[at + SEPARATOR.len()..]),
        None => data.split_at(data.len() / 2),
    };
    let _ = jitrun::link::fuzzing::link_noexec(&[first, second]);
});
