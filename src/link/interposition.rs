//! What takes the place of the libraries' own definitions once the image
//! exists, as an executable's definitions do natively: the program's
//! `malloc` for every library, its variables for libc, its callbacks for
//! the libraries named on the command line.

use std::path::Path;
use std::sync::Arc;

use crate::graph::resolve::ResolvedSymbols;
use crate::host::loader::SharedLibrary;

/// A name with the image's definition of it.
type NamedAddress = (Arc<str>, u64);

/// What takes the place of the stand-ins libraries were given for the
/// program's definitions (see `host::stand_ins_for_the_program`): the
/// image's definition of each name, for the GOT entries bound to the
/// stand-in, and (slot, image address) for the stand-in's symbol value,
/// which later lookups (a lazily bound call) find.
pub(super) fn program_stand_in_patches(
    libraries: &[SharedLibrary],
    image_definition: impl Fn(&str) -> Option<u64>,
) -> (Vec<NamedAddress>, Vec<(u64, u64)>) {
    let (mut names, mut values) = (Vec::new(), Vec::new());
    for (name, value_slot) in libraries.iter().flat_map(SharedLibrary::stand_in_values) {
        if let Some(address) = image_definition(&name) {
            values.push((value_slot, address));
            names.push((name, address));
        }
    }
    (names, values)
}

/// Whether `path` is one of the C or C++ runtime's shared libraries, which
/// `cc` and `g++` link without being asked.
pub(super) fn is_language_runtime(path: &Path) -> bool {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
    let base = file.split(".so").next().unwrap_or_default();
    matches!(base, "libc" | "libm" | "libstdc++" | "libgcc_s" | "libpthread" | "libdl" | "librt" | "libmvec")
}

/// The GOT entries of libraries named for the link bound to their own
/// definitions of names the image defines too (a function a library calls
/// through its PLT, say), with the image's definitions, which take their
/// place as an executable's do: the loader finds the executable's first.
/// Not jitrun's runtime pieces (`__`-names), nor vtables and type
/// information (`_ZT`: copies behave the same). Each library's entries are
/// read once (see `SharedLibrary::interposable_got_entries`). (Another
/// library's references to such a name stay bound to the library's.)
pub(super) fn preempting_named_libraries(
    named: &[&SharedLibrary],
    image_definition: impl Fn(&str) -> Option<u64>,
) -> Vec<(u64, u64)> {
    let replacement = |name: &str| {
        if name.starts_with("__") || name.starts_with("_ZT") {
            return None;
        }
        image_definition(name)
    };
    named.iter().flat_map(|library| library.interposable_got_entries(replacement)).collect()
}

/// The image's data definitions that take the place of a library's, as an
/// executable's do: glibc reads a program's `argp_program_version` through
/// its GOT, and a C++ library shares the program's copy of a template's
/// static member or an inline function's static. Names of data defined in
/// a start-up object (libc, the loader) or a library of the link too, with
/// the image's address.
pub(super) fn preempting_data(
    res: &ResolvedSymbols,
    libraries: &[SharedLibrary],
    image_definition: impl Fn(&str) -> Option<u64>,
) -> Vec<(Arc<str>, u64)> {
    let mut found = Vec::new();
    let mut c_name = Vec::new();
    for name in &res.data_definitions {
        c_name.clear();
        c_name.extend_from_slice(name.as_bytes());
        c_name.push(0);
        let Ok(c_name) = std::ffi::CStr::from_bytes_with_nul(&c_name) else { continue };
        if crate::host::loader::startup_objects_define_data(c_name) || libraries.iter().any(|l| l.defines_data(c_name))
        {
            if let Some(address) = image_definition(name) {
                found.push((Arc::from(&**name), address));
            }
        }
    }
    found
}
