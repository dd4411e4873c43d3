//! flashlane-core: a deterministic, discrete-event simulator of NAND-flash SSDs.

pub mod geometry;
pub mod host;
pub mod trace;
