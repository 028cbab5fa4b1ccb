//! Utilities every layer may use: input files, jitrun's own heap, threads.

pub mod heap;
pub mod input;
pub mod parallel;
