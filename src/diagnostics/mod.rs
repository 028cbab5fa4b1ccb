//! Crash reports, maps, run reports, `--check`, debugger support.

pub mod check;
pub mod crash;
pub mod debugger;
pub mod map;
pub mod report;
