//! jitrun's own versions of functions the image calls instead of libc's,
//! because libc's cannot know the image: what `graph::runtime` makes the
//! runtime object jump to.

/// jitrun's own version of `name` in this layer, for a link whose objects
/// define an allocator function or not (`replaces_allocator`, see
/// [`crate::host::interpose`]). (Diagnostics add their own.)
pub fn host_function(name: &str, replaces_allocator: bool) -> Option<u64> {
    crate::host::dladdr::host_function(name)
        .or_else(|| crate::host::selfexe::host_function(name))
        .or_else(|| crate::host::interpose::host_function(name, replaces_allocator))
        .map(|address| address as u64)
}
