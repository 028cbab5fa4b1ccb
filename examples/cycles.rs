//! Load/run/unload the same objects many times through the library API and
//! print the process's resident memory and number of mappings as it goes;
//! both should stay flat.
//!
//!     g++ -c -O2 -fPIC testdata/hygiene/cycle.cpp -o /tmp/cycle.o
//!     cargo run --release --example cycles -- /tmp/cycle.o 10000
//!
//! Arguments: objects, then the number of cycles (default 10000). The
//! objects' `main` must return 0.

use std::path::PathBuf;
use std::time::Instant;

fn footprint() -> (u64, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default().lines().count();
    (rss, maps)
}

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let count: u64 = match args.last().and_then(|a| a.parse().ok()) {
        Some(n) => {
            args.pop();
            n
        }
        None => 10_000,
    };
    let objects: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
    anyhow::ensure!(!objects.is_empty(), "usage: cycles OBJECT... [COUNT]");
    let start = Instant::now();
    let report_every = (count / 10).max(1);
    for i in 0..count {
        let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
        for object in &objects {
            linker.add_file(object)?;
        }
        let mut image = linker.link()?;
        let status = image.run_main("main", "cycle", &[])?;
        anyhow::ensure!(status == 0, "cycle {}: main returned {}", i, status);
        drop(image);
        if i == 0 || (i + 1) % report_every == 0 {
            let (rss, maps) = footprint();
            println!(
                "cycle {:>6}: RSS {:>7} KiB, {:>4} mappings, {:.1} s",
                i + 1,
                rss,
                maps,
                start.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}
