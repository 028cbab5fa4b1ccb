//! Format front-ends. Each translates one file into a [`crate::model::LinkGraph`]
//! and nothing after them looks at raw file bytes.

pub mod archive;
pub mod elf;
