//! The link graph and the pure link steps: formats building it, resolution, tables, layout, fixups.

pub mod deferred;
pub mod ehframe;
pub mod fixups;
pub mod format;
pub mod layout;
pub mod ldcache;
pub mod libsearch;
mod limits;
pub mod line_table;
pub mod linkinfo;
pub mod model;
pub mod resolve;
pub mod runtime;
pub mod tables;

pub use limits::Limits;
