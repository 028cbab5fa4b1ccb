//! Documentation that must not drift from the code: the man page is
//! generated from the clap definition, and every option appears in the
//! changelog and the README's command is what CI runs.
//!
//! Regenerate the man page with `JITRUN_BLESS=1 cargo test --test docs`.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn render_man_page() -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(jitrun::cli::Cli::command()).render(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn man_page_is_generated_from_the_cli_definition() {
    let path = root().join("man/jitrun.1");
    let fresh = render_man_page();
    if std::env::var_os("JITRUN_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(current == fresh, "man/jitrun.1 is stale: run `JITRUN_BLESS=1 cargo test --test docs`");
}

#[test]
fn every_option_is_in_the_changelog() {
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains("## [Unreleased]"), "CHANGELOG.md needs an [Unreleased] section");
    let cmd = jitrun::cli::Cli::command();
    let missing: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{}", l)))
        .filter(|l| l != "--help" && l != "--version" && !changelog.contains(l.as_str()))
        .collect();
    assert!(missing.is_empty(), "options missing from CHANGELOG.md: {:?}", missing);
}

#[test]
fn ci_runs_the_readme_test_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let test_cmd = readme
        .lines()
        .find(|l| l.trim_start().starts_with("cargo test"))
        .expect("README.md names a `cargo test` command")
        .trim();
    assert!(ci.contains(test_cmd), ".ci/run must run `{}` from README.md", test_cmd);
    let run_cmd = readme
        .lines()
        .find(|l| l.trim_start().starts_with("cargo run --release --"))
        .expect("README.md names a `cargo run --release --` example")
        .trim();
    let example = run_cmd.split_whitespace().find(|w| w.starts_with("testdata/")).expect("the example uses testdata/");
    assert!(root().join(example).exists(), "README example input {} does not exist", example);
}

/// build/hot-functions.txt (see scripts/hot-functions.sh) names functions
/// by their mangled names, which a new toolchain or a large change renames:
/// the linker skips names that went away, so a stale list silently places
/// less. Most of its names must be in the built executable, and when the
/// linker took the list, the first of them lead its code.
#[test]
fn hot_function_list_matches_the_build() {
    let list = std::fs::read_to_string(root().join("build/hot-functions.txt")).unwrap();
    let listed: Vec<&str> = list.lines().filter(|l| !l.is_empty()).collect();
    let binary = std::fs::read(env!("CARGO_BIN_EXE_jitrun")).unwrap();
    let elf = goblin::elf::Elf::parse(&binary).unwrap();
    let addresses: std::collections::HashMap<&str, u64> = elf
        .syms
        .iter()
        .filter(|s| s.st_value != 0)
        .filter_map(|s| Some((elf.strtab.get_at(s.st_name)?, s.st_value)))
        .collect();
    let present = listed.iter().filter(|n| addresses.contains_key(**n)).count();
    assert!(
        present * 4 >= listed.len() * 3,
        "only {present} of {} names in build/hot-functions.txt are in the executable: \
         run scripts/hot-functions.sh",
        listed.len()
    );
    // Placed in list order at the start of .text (rust-lld took it), unless
    // this build's linker was another, which build.rs leaves alone.
    let text = elf.section_headers.iter().find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text")).unwrap();
    let first_placed = listed
        .iter()
        .filter_map(|n| addresses.get(n))
        .copied()
        .find(|&a| (text.sh_addr..text.sh_addr + text.sh_size).contains(&a));
    let comment = elf.section_headers.iter().find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".comment"));
    let linked_by_lld = comment.is_some_and(|c| {
        let bytes = &binary[c.sh_offset as usize..(c.sh_offset + c.sh_size) as usize];
        bytes.windows(11).any(|w| w == b"Linker: LLD")
    });
    if linked_by_lld {
        assert!(
            first_placed.is_some_and(|a| a < text.sh_addr + 4096),
            "the listed functions do not start .text: is build.rs passing --symbol-ordering-file?"
        );
    }
}
