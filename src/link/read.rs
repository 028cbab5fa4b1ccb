//! Reading and translating many objects at once.
//!
//! Objects are independent until resolution (DESIGN.md, seed 000): each
//! front-end call reads only its own input bytes (shared read-only through
//! an `Arc`) and builds its own [`LinkGraph`], so objects can be translated
//! on several threads with no shared state at all. The symbol table, built
//! afterwards by [`crate::link::Linker::link`] on one thread, is the one
//! meeting point. Results keep input order, so links stay deterministic.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::graph::format;
use crate::graph::model::LinkGraph;
use crate::graph::Limits;
use crate::support::input::{is_relocatable_elf, InputData};
use crate::support::parallel::map_in_order_after;

/// Inputs are read and translated on one thread until they add up to
/// this many bytes; only then do helper threads take the rest. A helper
/// costs ~0.3 ms on a two-CPU VM (thread and stack, its heap's first
/// pages, waking the other CPU), more than it saves on the objects of a
/// Lua (33, 544 KB: 0.3 ms faster on one thread, median of 100
/// interleaved runs) or on 301 small ones (877 KB: 0.3 ms faster).
const PARALLEL_INPUT_BYTES: u64 = 1 << 20;

/// An input file, read, and translated if it is an ELF relocatable object.
pub enum ReadInput {
    /// An ELF relocatable object, translated. Only the graph holds its
    /// bytes now (perhaps only its section contents, see
    /// `format::elf::parse`), so `size` records the file's.
    Translated { name: String, size: u64, graph: Result<LinkGraph> },
    /// Anything else (archives, shared libraries, scripts...), which the
    /// caller handles in order.
    Other { data: Arc<InputData> },
}

/// Reads `paths` and translates the ELF relocatable objects among them:
/// in order on this thread, and once the inputs read reach
/// [`PARALLEL_INPUT_BYTES`], the rest on as many threads as CPUs (opening
/// and reading many files is a system call each, worth spreading too).
/// The input that reaches it is translated while the helpers start on the
/// next ones. Results keep input order.
pub fn read_and_parse(paths: &[PathBuf], limits: &Limits) -> Vec<Result<ReadInput>> {
    let open = |path: &PathBuf| InputData::open(path).map(Arc::new);
    let translate = |path: &PathBuf, data: Result<Arc<InputData>>| -> Result<ReadInput> {
        let data = data?;
        if !is_relocatable_elf(data.bytes()) {
            return Ok(ReadInput::Other { data });
        }
        let name = path.display().to_string();
        let size = data.bytes().len() as u64;
        let graph = format::elf::parse(&name, data, limits);
        Ok(ReadInput::Translated { name, size, graph })
    };
    let mut results = Vec::with_capacity(paths.len());
    let mut read_bytes = 0;
    for (i, path) in paths.iter().enumerate() {
        let data = open(path);
        read_bytes += data.as_ref().map_or(0, |d| d.bytes().len() as u64);
        let rest = &paths[i + 1..];
        if read_bytes >= PARALLEL_INPUT_BYTES && rest.len() >= 2 {
            let (rest, this) = map_in_order_after(rest, true, |p| translate(p, open(p)), || translate(path, data));
            results.push(this);
            results.extend(rest);
            return results;
        }
        results.push(translate(path, data));
    }
    results
}
