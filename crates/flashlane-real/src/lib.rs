//! flashlane on a real drive (Linux: io_uring with O_DIRECT).
//!
//! * `replay`: a trace replayed onto a file or block device through the simulator's own host
//!   schedulers, trace readers and replay modes, summarised as a simulation is
//!   (docs/real-drive.md).
//! * `probe`: the drive's curves of PASS's Figs. 1-3 (throughput against outstanding requests
//!   per region size, sequential against random, read/write interference), written as the
//!   JSON `device.region_contention.probe_path` reads, and as a figure.
//!
//! One file per concern: `target.rs` (the target and the safety rules), `uring.rs` (the
//! io_uring engine), `verify.rs` (data patterns and `--verify`), `replay.rs` (the replay
//! loop), `summary.rs` (its summary), `probe.rs` (the probe), `figure.rs` (its SVG).

#![cfg(target_os = "linux")]

pub mod figure;
pub mod probe;
pub mod replay;
pub mod summary;
pub mod target;
pub mod uring;
pub mod verify;

pub use probe::{probe, ProbeReport, ProbeSpec};
pub use replay::{replay, Callbacks, ReplayProgress, ReplaySpec};
pub use summary::ReplaySummary;
pub use target::TargetOptions;
pub use uring::unavailable as io_uring_unavailable;
