//! Source lines for the crash report: the DWARF line programs
//! (`.debug_line`) of objects built with `-g`, run with `gimli` over the
//! debug sections relocated to the image's addresses, kept as one array
//! sorted by address that a signal handler searches without allocating.
//!
//! Built only when a crash report needs its table (see `crash`), from the
//! objects' own bytes, which the link keeps for objects that have line
//! tables (`LinkGraph::has_line_info`).

use gimli::{AttributeValue, DebugLine, DebugLineOffset, DebugLineStr, DebugStr, EndianSlice, LittleEndian};

type Slice<'a> = EndianSlice<'a, LittleEndian>;

/// Address-sorted rows: each gives the line from its address up to the
/// next row's; a row with line 0 ends a sequence (no line there).
#[derive(Default)]
pub struct LineTable {
    rows: Vec<Row>,
    /// File paths, as the line programs name them.
    files: Vec<Box<str>>,
}

impl std::fmt::Debug for LineTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LineTable({} rows, {} files)", self.rows.len(), self.files.len())
    }
}

#[derive(Clone, Copy)]
struct Row {
    address: u64,
    file: u32,
    line: u32,
}

/// The debug sections one object's line programs read, relocated.
pub(crate) struct LineSections<'a> {
    pub debug_line: &'a [u8],
    pub debug_line_str: &'a [u8],
    pub debug_str: &'a [u8],
}

impl LineTable {
    /// Adds the rows of every line program in `sections`. A malformed
    /// program ends that object's contribution, keeping the rows before it
    /// (a crash report is no place to fail).
    pub(crate) fn add_object(&mut self, sections: &LineSections) {
        let debug_line = DebugLine::new(sections.debug_line, LittleEndian);
        let line_str = DebugLineStr::new(sections.debug_line_str, LittleEndian);
        let strings = DebugStr::new(sections.debug_str, LittleEndian);
        let mut offset = 0;
        while offset < sections.debug_line.len() {
            let Ok(program) = debug_line.program(DebugLineOffset(offset), 8, None, None) else { return };
            let header = program.header();
            let length = header.format().initial_length_size() as usize + header.unit_length();
            // This program's file indexes, to ours (filled as rows use them).
            let mut file_ids: Vec<Option<u32>> = Vec::new();
            let mut rows = program.rows();
            loop {
                let (header, row) = match rows.next_row() {
                    Ok(Some(next)) => next,
                    Ok(None) => break,
                    Err(_) => return,
                };
                if row.end_sequence() {
                    self.rows.push(Row { address: row.address(), file: 0, line: 0 });
                    continue;
                }
                let Some(line) = row.line().and_then(|l| u32::try_from(l.get()).ok()) else { continue };
                let index = row.file_index() as usize;
                if file_ids.len() <= index {
                    file_ids.resize(index + 1, None);
                }
                let file = match file_ids[index] {
                    Some(id) => id,
                    None => {
                        let path = file_path(header, row.file_index(), &line_str, &strings);
                        self.files.push(path.unwrap_or_else(|| "?".into()));
                        let id = self.files.len() as u32 - 1;
                        file_ids[index] = Some(id);
                        id
                    }
                };
                self.rows.push(Row { address: row.address(), file, line });
            }
            if length == 0 {
                return;
            }
            offset += length;
        }
    }

    /// Sorts the rows: by address, a sequence's end before another's start
    /// at the same address, rows at one address in program order.
    pub(crate) fn finish(&mut self) {
        self.rows.sort_by_key(|r| (r.address, r.line != 0));
        self.rows.shrink_to_fit();
    }

    /// The file and line of the code at `address`, if a line program covers it.
    pub(crate) fn lookup(&self, address: u64) -> Option<(&str, u32)> {
        let after = self.rows.partition_point(|r| r.address <= address);
        let row = self.rows.get(after.checked_sub(1)?)?;
        (row.line != 0).then(|| (self.files.get(row.file as usize).map_or("?", |f| f), row.line))
    }
}

/// A file's path as a line program names it: its directory joined in
/// front unless that is the compilation directory (entry 0) or the path is
/// absolute, as `gdb` shows source files.
fn file_path(
    header: &gimli::LineProgramHeader<Slice>,
    index: u64,
    line_str: &DebugLineStr<Slice>,
    strings: &DebugStr<Slice>,
) -> Option<Box<str>> {
    let file = header.file(index)?;
    let text = |value: AttributeValue<Slice>| -> Option<String> {
        let bytes = match value {
            AttributeValue::String(s) => s,
            AttributeValue::DebugLineStrRef(offset) => line_str.get_str(offset).ok()?,
            AttributeValue::DebugStrRef(offset) => strings.get_str(offset).ok()?,
            _ => return None,
        };
        Some(String::from_utf8_lossy(bytes.slice()).into_owned())
    };
    let name = text(file.path_name())?;
    let in_compilation_directory = file.directory_index() == 0;
    match file.directory(header).and_then(text) {
        Some(directory) if !name.starts_with('/') && !in_compilation_directory && !directory.is_empty() => {
            Some(format!("{}/{}", directory.trim_end_matches('/'), name).into())
        }
        _ => Some(name.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(u64, u32)]) -> LineTable {
        let rows = rows.iter().map(|&(address, line)| Row { address, file: 0, line }).collect();
        let mut table = LineTable { rows, files: vec!["a.c".into()] };
        table.finish();
        table
    }

    #[test]
    fn a_row_covers_up_to_the_next_and_a_sequence_end_covers_nothing() {
        // Two sequences, the second added first, meeting at 0x20.
        let table = table(&[(0x20, 7), (0x28, 8), (0x30, 0), (0x10, 3), (0x18, 4), (0x20, 0)]);
        assert_eq!(table.lookup(0x0f), None);
        assert_eq!(table.lookup(0x10), Some(("a.c", 3)));
        assert_eq!(table.lookup(0x1f), Some(("a.c", 4)));
        assert_eq!(table.lookup(0x20), Some(("a.c", 7)));
        assert_eq!(table.lookup(0x2f), Some(("a.c", 8)));
        assert_eq!(table.lookup(0x30), None);
        assert_eq!(table.lookup(u64::MAX), None);
    }

    #[test]
    fn malformed_line_programs_add_nothing_and_do_not_panic() {
        let mut table = LineTable::default();
        for bytes in [&[][..], &[0xff; 3], &[0x10, 0, 0, 0, 5, 0, 8, 0, 0, 0, 0, 0, 0, 0], &[1, 0, 0, 0, 0xff]] {
            table.add_object(&LineSections { debug_line: bytes, debug_line_str: &[], debug_str: &[] });
        }
        table.finish();
        assert_eq!(table.lookup(0), None);
    }
}
