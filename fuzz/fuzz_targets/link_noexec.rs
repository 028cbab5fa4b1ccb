//! One input file of any format jitrun reads (ELF object; Mach-O object and
//! archive once their front-ends land — detection is by magic, so the same
//! target covers them): parse, resolve, lay out, map, apply fixups,
//! protect, register and deregister, unmap. Nothing from the input runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = jitrun::link::fuzzing::link_noexec(&[data]);
});
