//! The shape of the source tree, as ARCHITECTURE.md draws it: layers that
//! import only from layers below them, pure layers that touch nothing of
//! this process, and CPU specifics kept in their own modules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, bottom first: each folder of `src/` may use the ones before
/// it, never the ones after.
const LAYERS: [&str; 9] = ["support", "arch", "graph", "memory", "host", "diagnostics", "image", "link", "cli"];

/// Layers that must stay pure: no `unsafe`, no `libc`.
const PURE_LAYERS: [&str; 2] = ["arch", "graph"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The layer of a file under `root`: the folder it is in; `None` for the
/// files at the top (`lib.rs`, `main.rs`), which sit above every layer.
fn layer_of_file(root: &Path, path: &Path) -> Option<usize> {
    let first = path.strip_prefix(root).ok()?.components().next()?.as_os_str().to_str()?;
    LAYERS.iter().position(|&l| l == first)
}

/// The code of a file without its comments (doc links may point anywhere).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, line)| (i + 1, line)).filter(|(_, line)| !line.trim_start().starts_with("//"))
}

/// Each `crate::NAME` path in `line`: the first name after `crate::`.
fn crate_paths(line: &str) -> Vec<&str> {
    line.match_indices("crate::")
        .filter(|(at, _)| !line[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$'))
        .map(|(at, prefix)| {
            let rest = &line[at + prefix.len()..];
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// The imports of the files under `root` against the layers' direction,
/// one line each, naming file, line and the two layers.
fn upward_imports(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for path in rust_files(root) {
        let Some(layer) = layer_of_file(root, &path) else { continue };
        let relative = path.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (number, line) in code_lines(&text) {
            for name in crate_paths(line) {
                match LAYERS.iter().position(|&l| l == name) {
                    Some(used) if used > layer => found.push(format!(
                        "{}:{}: the {} layer uses the {} layer above it: {}",
                        relative,
                        number,
                        LAYERS[layer],
                        name,
                        line.trim()
                    )),
                    Some(_) => {}
                    // `crate::Image` and the like are the library's API,
                    // re-exported at the root for its users: inside the
                    // crate, a path names its layer.
                    None => found.push(format!(
                        "{}:{}: `crate::{}` does not name a layer: {}",
                        relative,
                        number,
                        name,
                        line.trim()
                    )),
                }
            }
        }
    }
    found
}

#[test]
fn every_source_file_is_in_a_layer() {
    for path in rust_files(&src()) {
        let relative = path.strip_prefix(src()).unwrap();
        assert!(
            layer_of_file(&src(), &path).is_some() || matches!(relative.to_str(), Some("lib.rs" | "main.rs")),
            "{}: not in a layer's folder (ARCHITECTURE.md lists them)",
            relative.display()
        );
    }
}

#[test]
fn layers_import_only_from_layers_below_them() {
    let found = upward_imports(&src());
    assert!(found.is_empty(), "{} imports against the layers' direction:\n{}", found.len(), found.join("\n"));
}

/// The check itself sees an upward import: a tree with one fails it,
/// naming the file, the line and both layers.
#[test]
fn an_upward_import_is_caught() {
    let tree = std::env::temp_dir().join(format!("jitrun-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tree);
    std::fs::create_dir_all(tree.join("graph")).unwrap();
    let model = "use crate::graph::layout;\n// crate::image in a comment\nuse crate::image::Image;\n";
    std::fs::write(tree.join("graph/model.rs"), model).unwrap();
    std::fs::write(tree.join("lib.rs"), "pub mod graph;\n").unwrap();
    let found = upward_imports(&tree);
    std::fs::remove_dir_all(&tree).unwrap();
    assert_eq!(found.len(), 1, "{:?}", found);
    assert_eq!(found[0], "graph/model.rs:3: the graph layer uses the image layer above it: use crate::image::Image;");
}

#[test]
fn pure_layers_use_no_unsafe_code_and_no_libc() {
    let mut found = Vec::new();
    for path in rust_files(&src()) {
        if !layer_of_file(&src(), &path).is_some_and(|l| PURE_LAYERS.contains(&LAYERS[l])) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (number, line) in code_lines(&text) {
            if line.contains("unsafe") || line.contains("libc::") {
                found.push(format!("{}:{}: {}", path.strip_prefix(src()).unwrap().display(), number, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the pure layers ({:?}) touch the process:\n{}", PURE_LAYERS, found.join("\n"));
}

#[test]
fn every_layer_has_a_folder_and_a_line_in_the_architecture_document() {
    let architecture = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).unwrap();
    let folders: BTreeSet<String> = std::fs::read_dir(src())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders, LAYERS.iter().map(|l| l.to_string()).collect::<BTreeSet<_>>());
    for layer in LAYERS {
        assert!(
            architecture.contains(&format!("`src/{}/`", layer)),
            "ARCHITECTURE.md does not describe src/{}/",
            layer
        );
    }
}
