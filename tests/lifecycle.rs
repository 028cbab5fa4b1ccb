//! The image as a value with a lifetime: loading, running and dropping the
//! same objects twice in one process runs every constructor/destructor pair
//! twice, in order, and exceptions work in both loads.

mod common;

use std::process::Command;

#[test]
fn load_run_unload_twice_runs_each_pair_twice() {
    let dir = common::scratch("lifecycle");
    let obj = dir.join("counted.o");
    let src = common::testdata().join("lifecycle/counted.cpp");
    let status = Command::new("g++").args(["-c", "-O2", "-fPIC"]).arg(&src).arg("-o").arg(&obj).status().unwrap();
    assert!(status.success());
    let log = dir.join("log.txt");
    std::env::set_var("LIFECYCLE_LOG", &log);
    for round in 1..=2 {
        let mut linker = jitrun::Linker::new(jitrun::LinkOptions::default());
        linker.add_file(&obj).unwrap();
        let mut image = linker.link().unwrap();
        let status = image.run_main("entry", "counted", &["a".to_string()]).unwrap();
        assert_eq!(status, 3 + 2, "round {}", round);
        drop(image);
    }
    let order = std::fs::read_to_string(&log).unwrap();

    // The same object linked natively, with a main that calls the entry
    // like jitrun does, gives the order of one round.
    let main_src = dir.join("main.cpp");
    std::fs::write(
        &main_src,
        "extern \"C\" int entry(int, char**);\nint main(int, char** argv) { return entry(2, argv); }\n",
    )
    .unwrap();
    let exe = dir.join("native");
    let status = Command::new("g++").arg(&main_src).arg(&obj).arg("-o").arg(&exe).status().unwrap();
    assert!(status.success());
    let native_log = dir.join("native.txt");
    let status = Command::new(&exe).env("LIFECYCLE_LOG", &native_log).status().unwrap();
    assert_eq!(status.code(), Some(5));
    let one_round = std::fs::read_to_string(&native_log).unwrap();
    assert_eq!(one_round.len(), 6, "native log: {}", one_round);
    assert_eq!(order, one_round.repeat(2));
}
