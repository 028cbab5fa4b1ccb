//! A 64-bit checksum of file contents for the link cache: XXH64 (Yann
//! Collet's public-domain algorithm), written out here because it needs no
//! CPU feature detection (`cpuid` costs ~11 µs a call in this kind of VM,
//! more than checksumming a megabyte) and runs at memory speed on one core.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

fn round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2)).rotate_left(31).wrapping_mul(P1)
}

fn merge(acc: u64, value: u64) -> u64 {
    (acc ^ round(0, value)).wrapping_mul(P1).wrapping_add(P4)
}

fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

/// XXH64 of `data` with seed 0.
pub fn xxh64(data: &[u8]) -> u64 {
    let len = data.len() as u64;
    let mut rest = data;
    let mut h = if data.len() >= 32 {
        let mut v = [P1.wrapping_add(P2), P2, 0, 0u64.wrapping_sub(P1)];
        let mut stripes = rest.chunks_exact(32);
        for stripe in &mut stripes {
            for (lane, acc) in v.iter_mut().enumerate() {
                *acc = round(*acc, word(&stripe[8 * lane..]));
            }
        }
        rest = stripes.remainder();
        let h = v[0]
            .rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18));
        v.iter().fold(h, |h, &lane| merge(h, lane))
    } else {
        P5
    };
    h = h.wrapping_add(len);
    let mut words = rest.chunks_exact(8);
    for w in &mut words {
        h = (h ^ round(0, word(w))).rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    }
    rest = words.remainder();
    if rest.len() >= 4 {
        let half = u64::from(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")));
        h = (h ^ half.wrapping_mul(P1)).rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        rest = &rest[4..];
    }
    for &byte in rest {
        h = (h ^ u64::from(byte).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// XXH64 of the file at `path`, mapped (no copy, no heap), or `None` if it
/// cannot be read.
pub fn of_file(path: &std::path::Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() == 0 {
        return Some(xxh64(&[]));
    }
    // SAFETY: a read-only private mapping, read while we hold it; a file
    // truncated meanwhile may fault, the contract every linker has with
    // its inputs.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
    Some(xxh64(&map))
}

#[cfg(test)]
mod tests {
    use super::xxh64;

    #[test]
    fn matches_the_reference_values() {
        // XXH64's published values for seed 0.
        assert_eq!(xxh64(b""), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"a"), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc"), 0x44BC_2CF5_AD77_0999);
    }

    #[test]
    fn every_byte_and_length_counts() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut seen = std::collections::HashSet::new();
        for len in 0..data.len() {
            assert!(seen.insert(xxh64(&data[..len])), "length {}", len);
        }
        for i in 0..data.len() {
            let mut changed = data.clone();
            changed[i] ^= 1;
            assert_ne!(xxh64(&changed), xxh64(&data), "byte {}", i);
        }
    }
}
