//! flashlane-core: a deterministic, discrete-event simulator of NAND-flash SSDs.
//!
//! The request journey mirrors `DESIGN.md`: trace reader -> host queue and host scheduler ->
//! device queue -> HIL (page split) -> FTL (mapping, allocation, GC) -> device scheduler
//! (per-chip queues) -> interconnect (path to the chip) -> flash timing -> completion.

pub mod config;
pub mod device;
pub mod energy;
pub mod engine;
pub mod error;
pub mod ftl;
pub mod geometry;
pub mod host;
pub mod int_map;
pub mod interconnect;
mod registry;
pub mod replay;
pub mod run;
pub mod sim;
pub mod stats;
pub mod timing;
pub mod trace;
pub mod transaction;
pub mod workload;

pub use error::Error;
pub use run::{run, run_with_dispatch_log, run_with_progress, Phase, Progress, RunSpec};
