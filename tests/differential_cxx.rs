//! C++ programs from `testdata/cxx` (exceptions, RTTI, STL, static objects
//! across units, threads, thread_local, iostreams, an uncaught exception),
//! built with `g++ -c` and compared with the same objects linked by `g++`.

mod common;

#[cfg(target_arch = "x86_64")]
const CXX_FLAG_SETS: &[&str] = &["-O0", "-O2", "-O2 -fPIC", "-O2 -fno-pic -fno-pie", "-O2 -mcmodel=large"];
#[cfg(target_arch = "aarch64")]
const CXX_FLAG_SETS: &[&str] =
    &["-O0", "-O2", "-O2 -fPIC", "-O2 -fno-pic -fno-pie", "-O2 -mcmodel=large -fno-pic -fno-pie", "-O2 -mcmodel=tiny"];

macro_rules! cxx_programs {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                common::check_program("cxx", $file, CXX_FLAG_SETS);
            }
        )*
        const LISTED: &[&str] = &[$($file),*];
    };
}

cxx_programs! {
    eh_frame_gap => "eh_frame_gap",
    exceptions => "exceptions.cpp",
    own_operator_new => "own_operator_new.cpp",
    rtti_stl => "rtti_stl.cpp",
    registry => "registry",
    threads => "threads.cpp",
    uncaught => "uncaught.cpp",
    iostream_io => "iostream_io.cpp",
    exit_handler_throws => "exit_handler_throws.cpp",
    c_functions_only => "c_functions_only.cpp",
    fresh_heap => "fresh_heap.cpp",
}

#[test]
fn every_program_in_testdata_cxx_has_a_test() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(common::testdata().join("cxx")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if (name.ends_with(".cpp") || !name.contains('.')) && !LISTED.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "add these to cxx_programs!: {:?}", missing);
}
