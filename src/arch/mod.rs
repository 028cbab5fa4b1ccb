//! Architecture specifics: the closed set of fixup kinds and how each is applied.

pub mod x86_64;
