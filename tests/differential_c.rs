//! The main correctness oracle: C programs from `testdata/c`, built with
//! `cc -c` under several flag sets, run natively and through jitrun;
//! stdout, stderr and exit status must match byte for byte.

mod common;

macro_rules! c_programs {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                common::check_program("c", $file, common::C_FLAG_SETS);
            }
        )*
        const LISTED: &[&str] = &[$($file),*];
    };
}

c_programs! {
    hello => "hello.c",
}

#[test]
fn every_program_in_testdata_c_has_a_test() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(common::testdata().join("c")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if (name.ends_with(".c") || !name.contains('.')) && !LISTED.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "add these to c_programs!: {:?}", missing);
}
