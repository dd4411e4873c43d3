//! The summary of a real replay: the simulator's summary where it applies (same keys, same
//! definitions: docs/summary.md), the target in `device` (`device.kind = "real"`), and the
//! figures a real drive cannot give (chips, flash operations, GC, WAF, interconnect, energy)
//! left out rather than zero. Definitions in docs/summary.md, "Real replay".

use serde::Serialize;

use flashlane_core::geometry::Level;
use flashlane_core::host::{HostConfig, HostSchedulerReport};
use flashlane_core::stats::{
    NamedReport, RequestFigures, RunOptions, SourceSummary, TraceSummary, Warning,
};

use crate::target::TargetInfo;

/// Layout version of the real replay's summary.
pub const REPLAY_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplaySummary {
    pub schema_version: u32,
    /// What of the config a real replay uses: the host side and the device queue depth.
    pub config: ReplayConfig,
    pub trace: TraceSummary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    pub run: RunOptions,
    /// The request figures of a simulation's summary, at the same place in the JSON
    /// (stats/request_figures.rs in flashlane-core).
    #[serde(flatten)]
    pub figures: RequestFigures,
    /// Measured window in wall-clock ns: arrival of the first measured request to the last
    /// completion (the simulator's `sim_time_ns`).
    pub window_ns: u64,
    pub host_scheduler: NamedReport<HostSchedulerReport>,
    pub device: RealDevice,
    pub replay: ReplayFacts,
    pub sources: Vec<SourceSummary>,
    pub engine: ReplayEngine,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplayConfig {
    pub name: String,
    pub host: HostConfig,
    pub device: QueueDepth,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QueueDepth {
    /// Device commands in flight at most (io_uring submissions).
    pub queue_depth_requests: u32,
}

/// The target, and what the host scheduler assumed of it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RealDevice {
    #[serde(flatten)]
    pub target: TargetInfo,
    /// For PIQ and VIOS (which group requests by chip): the config's static map, an assumed
    /// layout; the drive's real layout is unknown. Absent for other schedulers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assumed_chip_layout: Option<AssumedLayout>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AssumedLayout {
    /// Where it comes from (the config's name).
    pub from_config: String,
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub page_bytes: u32,
    pub order: [Level; 4],
    pub stripe_unit_pages: u64,
    pub note: &'static str,
}

/// What the replay did besides the trace's requests.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplayFacts {
    /// `--reads-only`: the trace's writes were left out.
    pub reads_only: bool,
    /// Writes left out by `--reads-only`.
    pub writes_left_out: u64,
    /// Requests whose offset or size was not a multiple of the direct-I/O alignment, widened
    /// to it (the drive moved the wider range).
    pub realigned_requests: u64,
    /// Bytes written before the replay so every byte the trace reads holds data (a created
    /// target; 0 otherwise).
    pub fill_bytes: u64,
    /// Open loop: how late the replay noticed arrivals, microseconds (its own timing error;
    /// included in latencies, as a late arrival keeps its trace time). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival_lag_us: Option<Lag>,
    /// `--verify` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyStats>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Lag {
    pub mean: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VerifyStats {
    /// 512-byte blocks read and checked.
    pub checked_blocks: u64,
    /// Of those, blocks that held no version flashlane could have left there.
    pub mismatched_blocks: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplayEngine {
    /// `io_uring`, with O_DIRECT.
    pub io_engine: &'static str,
    /// I/Os submitted in the replay (a merged command of contiguous requests is one).
    pub ios_submitted: u64,
    /// Wall-clock seconds of the replay proper (after the fill).
    pub wall_s: f64,
    /// Seconds spent filling a created target.
    pub fill_wall_s: f64,
}
