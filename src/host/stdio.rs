//! glibc's stdio streams, as far as forking a run needs them: output still
//! in a stream's buffer when the process forks would be written twice, by
//! the caller and by the child's `exit`.

use std::ffi::{c_char, c_int, c_void};

use crate::host::loader::LazyLibcFunction;

/// The head of every open stream's list (`_IO_list_all`), looked up when
/// first needed rather than imported (see [`LazyLibcFunction`]).
static STREAM_LIST: LazyLibcFunction = LazyLibcFunction::new(c"_IO_list_all");

/// glibc's `struct _IO_FILE` up to `_mode`, as `<bits/types/struct_FILE.h>`
/// (an installed header: the layout is ABI) declares it on 64-bit targets.
#[repr(C)]
struct Stream {
    flags: c_int,
    read_ptr: *mut c_char,
    read_end: *mut c_char,
    read_base: *mut c_char,
    write_base: *mut c_char,
    write_ptr: *mut c_char,
    write_end: *mut c_char,
    buf_base: *mut c_char,
    buf_end: *mut c_char,
    save_base: *mut c_char,
    backup_base: *mut c_char,
    save_end: *mut c_char,
    markers: *mut c_void,
    chain: *const Stream,
    fileno: c_int,
    flags2: c_int,
    old_offset: i64,
    cur_column: u16,
    vtable_offset: i8,
    shortbuf: [c_char; 1],
    lock: *mut c_void,
    offset: i64,
    codecvt: *mut c_void,
    wide_data: *mut c_void,
    freeres_list: *mut c_void,
    freeres_buf: *mut c_void,
    pad5: usize,
    mode: c_int,
}

const _: () = assert!(std::mem::offset_of!(Stream, chain) == 104 && std::mem::offset_of!(Stream, mode) == 192);

/// Writes out what C streams hold (before a fork, and when an in-process
/// run ends, as the program's `exit` would): as `fflush(NULL)`, which
/// it calls unless no stream holds output. Checking first reads only, and
/// the flush writes stdio's list lock and the thread's cleanup record: in
/// a parent forking run after run, each such write after a fork is a
/// copy-on-write fault (two per isolated run, of its ~10).
pub fn flush_c_streams() {
    if !holds_no_output() {
        // SAFETY: fflush(NULL) flushes every C stream.
        unsafe { libc::fflush(std::ptr::null_mut()) };
    }
}

/// Whether no stream has output waiting, walked without stdio's lock: so
/// only while libc counts one thread (no stream can be opened or closed
/// meanwhile); `false` otherwise, or where glibc's list is not found.
fn holds_no_output() -> bool {
    if !crate::support::threads::libc_says_single_threaded() {
        return false;
    }
    let Some(list) = STREAM_LIST.resolve() else { return false };
    // SAFETY: `_IO_list_all` is a `struct _IO_FILE *` naming the first
    // open stream (or null); the process has one thread, this one, which
    // is not inside stdio.
    unsafe { none_holds_output(*(list as *const *const Stream)) }
}

/// Whether no stream on the list from `first` has output waiting, by the
/// test glibc's own flush of all streams makes (`_IO_flush_all`): a
/// byte-oriented stream's write pointer past its write base. A
/// wide-oriented stream counts as holding output.
///
/// # Safety
/// `first` is null or a live stream whose `_chain` links live streams,
/// none of them changed meanwhile.
unsafe fn none_holds_output(first: *const Stream) -> bool {
    let mut stream = first;
    while !stream.is_null() {
        // SAFETY: the caller's contract; fields are only read.
        let Stream { mode, write_base, write_ptr, chain, .. } = unsafe { &*stream };
        if *mode > 0 || write_ptr > write_base {
            return false;
        }
        stream = *chain;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Stream {
        // SAFETY: every field is an integer or a raw pointer: zero is valid.
        unsafe { std::mem::zeroed() }
    }

    #[test]
    fn a_stream_with_bytes_past_its_write_base_holds_output() {
        let mut buffer = [0 as c_char; 8];
        let (mut last, mut first) = (stream(), stream());
        first.chain = &last;
        // SAFETY: a list of two local streams.
        assert!(unsafe { none_holds_output(&first) });
        assert!(unsafe { none_holds_output(std::ptr::null()) });
        last.write_base = buffer.as_mut_ptr();
        // SAFETY: one past the first byte of `buffer`.
        last.write_ptr = unsafe { buffer.as_mut_ptr().add(1) };
        first.chain = &last;
        // SAFETY: as above.
        assert!(!unsafe { none_holds_output(&first) }, "the second stream holds a byte");
        let mut wide = stream();
        wide.mode = 1;
        // SAFETY: one local stream.
        assert!(!unsafe { none_holds_output(&wide) }, "wide streams are flushed");
    }

    #[test]
    fn the_layout_is_glibcs() {
        // SAFETY: a stream of this test's own, fully buffered so that a
        // byte stays in its buffer until flushed.
        unsafe {
            let out = libc::fopen(c"/dev/null".as_ptr(), c"w".as_ptr());
            assert!(!out.is_null());
            assert_eq!(libc::setvbuf(out, std::ptr::null_mut(), libc::_IOFBF, 4096), 0);
            libc::fputc(0, out);
            let seen = &*(out as *const Stream);
            assert_eq!(seen.write_ptr.offset_from(seen.write_base), 1);
            assert!(seen.mode < 0, "byte-oriented once written to");
            // It holds output: the walk stops there, before streams other
            // tests may be opening or closing.
            assert!(!none_holds_output(seen));
            libc::fflush(out);
            assert_eq!(seen.write_ptr, seen.write_base);
            libc::fclose(out);
        }
    }
}
