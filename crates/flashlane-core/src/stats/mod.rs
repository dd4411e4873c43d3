//! Statistics: every number in the summary has its definition next to it (and in
//! `docs/summary.md`).

mod chip_activity;
mod device_queues;
mod dispatch_log;
mod energy;
mod flash_operations;
mod host_queue;
mod recorder;
mod region_slowdown;
mod request_figures;
mod request_paths;
mod requests;
mod warnings;

pub use chip_activity::ChipActivityRecorder;
pub use device_queues::{DeviceQueueRecorder, DeviceQueueStats};
pub use dispatch_log::{DispatchLog, DispatchRecord, DISPATCH_LOG_HEADER};
pub use energy::{energy_stats, EnergyStats};
pub use flash_operations::FlashOperationRecorder;
pub use host_queue::{HostQueueRecorder, HostQueueStats};
pub use recorder::{Models, RunEnd, RunShape, SimRecorder, SimResults};
pub use region_slowdown::{RegionSlowdownRecorder, RegionSlowdownStats};
pub use request_figures::RequestFigures;
pub use request_paths::{RequestPathRecorder, RequestPathStats};
pub use requests::{RequestMarks, RequestRecorder};
pub use warnings::{warnings, Warning, WarningInputs};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::config::Config;
use crate::ftl::PreconditionReport;
use crate::host::HostSchedulerReport;
use crate::interconnect::InterconnectReport;
use crate::replay::{AddressPolicy, Replay, SourceReport};

/// Version of the JSON summary layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Latency recorder: exact count, sum and max; percentiles from an HDR histogram with three
/// significant digits (relative error <= 0.1 %).
#[derive(Debug, Clone)]
pub struct LatencyRecorder {
    histogram: Histogram<u64>,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        LatencyRecorder {
            // 1 ns to 2^62 ns: above any latency of a run (arrivals end by 2^60 ns, every
            // operation is bounded), so no sample saturates and no percentile falls below the
            // samples it summarises. The bucket layout depends only on the lowest value and
            // the precision, so the percentiles are those of a narrower histogram.
            histogram: Histogram::new_with_bounds(1, 1 << 62, 3).expect("valid histogram bounds"),
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl LatencyRecorder {
    pub fn record(&mut self, latency_ns: u64) {
        // Saturating: recording cannot fail for any u64 (none reaches the top; see new).
        self.histogram.saturating_record(latency_ns.max(1));
        self.sum_ns += latency_ns as u128;
        self.max_ns = self.max_ns.max(latency_ns);
    }

    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The recorder of both sets of samples (so "all" need not be recorded separately).
    pub fn merged(a: &Self, b: &Self) -> Self {
        let mut histogram = a.histogram.clone();
        // Same bounds and precision on both sides: adding cannot fail.
        histogram
            .add(&b.histogram)
            .expect("histograms with identical bounds");
        LatencyRecorder {
            histogram,
            sum_ns: a.sum_ns + b.sum_ns,
            max_ns: a.max_ns.max(b.max_ns),
        }
    }

    pub fn stats(&self) -> LatencyStats {
        let n = self.histogram.len();
        if n == 0 {
            return LatencyStats::default();
        }
        // HDR quantiles report the top of their bucket; never above the exact maximum.
        let us = |ns: u64| ns.min(self.max_ns) as f64 / 1000.0;
        LatencyStats {
            count: n,
            mean: self.sum_ns as f64 / n as f64 / 1000.0,
            p50: us(self.histogram.value_at_quantile(0.50)),
            p99: us(self.histogram.value_at_quantile(0.99)),
            p999: us(self.histogram.value_at_quantile(0.999)),
            max: us(self.max_ns),
        }
    }
}

/// Latency of requests in microseconds: arrival at the host queue to completion of the last
/// page. Percentiles are the smallest recorded value v such that the given share of requests
/// took <= v (within 0.1 %); mean and max are exact.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LatencyStats {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    /// Version of this layout.
    pub schema_version: u32,
    /// Seed every random stream of the run derives from.
    pub seed: u64,
    /// The fully resolved configuration (preset plus overrides).
    pub config: Config,
    pub trace: TraceSummary,
    /// Conditions under which the figures may not be what was meant (stats/warnings.rs);
    /// absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    pub run: RunOptions,
    /// `requests`, `latency_us`, `time_split_us`, `host_queue`, `throughput`: the figures a
    /// replay's summary carries too (stats/request_figures.rs), at the same place in the JSON.
    #[serde(flatten)]
    pub figures: RequestFigures,
    /// Measured window: arrival of the first measured request to the end of the last flash
    /// operation (host or GC), ns.
    pub sim_time_ns: u64,
    pub chips: ChipStats,
    pub conflicts: ConflictStats,
    /// Flash operations started in the measured window (host and GC).
    pub flash: FlashCounts,
    pub gc: GcStats,
    /// Cached mapping table statistics; absent when the whole map is in DRAM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmt: Option<CmtStats>,
    /// Process-variation statistics (`[variation]` on only; see ftl::variation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variation: Option<crate::ftl::VariationStats>,
    /// Write amplification in the measured window: every page program (host + GC page moves +
    /// mapping-table write-backs) / host page programs; 0 when no page was written.
    pub waf: f64,
    /// The same without mapping-table programs: (host page programs + GC page moves) / host
    /// page programs (what `waf` was before mapping programs were counted).
    pub waf_host_gc: f64,
    pub host_scheduler: NamedReport<HostSchedulerReport>,
    pub device_scheduler: String,
    /// Device queues: per-chip queue lengths, per-chip idle share, SOS's moved and cancelled
    /// writes.
    pub device: DeviceQueueStats,
    /// DRAM write buffer figures (device/write_buffer.rs); absent without a buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_buffer: Option<crate::device::WriteBufferStats>,
    /// PASS's drive behaviour: the array time it added to host page operations
    /// (stats/region_slowdown.rs); absent when `device.region_contention` and
    /// `device.region_runs` are off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region_slowdown: Option<RegionSlowdownStats>,
    pub interconnect: NamedReport<InterconnectReport>,
    /// Host requests whose every transfer got its path at once (Venice's Figure 13).
    pub request_paths: RequestPathStats,
    /// SSD energy: flash operations, interconnect transfers, static power (stats/energy.rs).
    pub energy: EnergyStats,
    pub precondition: PreconditionReport,
    /// Each trace replayed (one entry, or one per trace of a mix) and its own statistics.
    pub sources: Vec<SourceSummary>,
    pub memory: MemoryStats,
    /// Reads that found a physical page not holding the last written version (only counted
    /// with `--check-integrity`; must be 0).
    pub integrity_violations: Option<u64>,
    pub engine: EngineStats,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceSummary {
    pub path: String,
    pub format: String,
    /// Trace records simulated (including warm-up requests), over all traces.
    pub records: u64,
    /// Malformed lines skipped under `--max-bad-lines`, over all traces.
    pub bad_lines: u64,
}

/// One trace of the run, with what the input pipeline did to it and its own statistics.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SourceSummary {
    #[serde(flatten)]
    pub input: SourceReport,
    pub requests: RequestCounts,
    pub latency_us: LatencyByOp,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunOptions {
    /// The first this-many requests (trace order) are simulated but not measured.
    pub warmup_requests: u64,
    /// Reading stopped after this many records (null = whole trace).
    pub max_requests: Option<u64>,
    /// How trace time drove arrivals.
    pub replay: Replay,
    /// What happened to addresses past the capacity.
    pub addresses: AddressPolicy,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RequestCounts {
    /// Measured requests that completed (every request completes; warm-up ones are excluded).
    pub completed: u64,
    pub reads: u64,
    pub writes: u64,
    /// Requests simulated as warm-up and left out of every statistic.
    pub warmup: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LatencyByOp {
    pub read: LatencyStats,
    pub write: LatencyStats,
    pub all: LatencyStats,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TimeSplit {
    /// Arrival to dispatch to the device (waiting for host-queue room and for the scheduler).
    pub host_queue: f64,
    /// Dispatch to completion (inside the SSD).
    pub device: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Throughput {
    /// Measured requests completed per second of simulated time (sim_time_ns).
    pub iops: f64,
    /// Measured request bytes completed per simulated second, in MiB/s (2^20 bytes).
    pub mib_per_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ChipStats {
    pub count: u32,
    /// Time-weighted mean number of busy chips over the window, divided by the chip count. A
    /// chip is busy while any of its dies runs a flash operation: from the operation's first
    /// bus cycle (its command, or program command and data) to the end of its last data
    /// transfer or array time, including a wait for the bus to carry read data out (the page
    /// register holds it), excluding the wait for the bus before the first command.
    pub utilization: f64,
    /// Mean number of busy chips over the part of the window in which at least one chip was
    /// busy, divided by the chip count: how much of the parallelism the SSD used while it
    /// worked (PIQ's "average number of utilized chips", over the chip count).
    pub active_utilization: f64,
    /// Time in the window during which at least one chip was busy, ns.
    pub active_ns: u64,
    /// The same as `utilization`, per chip (index = channel * chips_per_channel + way).
    pub per_chip_utilization: Vec<f64>,
}

/// Conflicts and the waiting they cause.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ConflictStats {
    /// Measured reads whose chip set (static allocation) intersected that of a request
    /// outstanding in the device or waiting ahead of it in the host queue when it arrived
    /// (PIQ's definition).
    pub read: u64,
    /// The same for writes.
    pub write: u64,
    /// Mean time a host page operation waited in its chip queue because its die was busy
    /// (enqueue to start), microseconds; separate for reads and writes.
    pub read_chip_wait_us: f64,
    pub write_chip_wait_us: f64,
    /// Mean time a host page operation waited for its path (channel) to free, summed over its
    /// command and data transfers, microseconds.
    pub read_path_wait_us: f64,
    pub write_path_wait_us: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct FlashCounts {
    /// Page reads (host).
    pub reads: u64,
    /// Page programs (host).
    pub programs: u64,
    /// GC page moves: each a copyback read plus program inside the plane or, under
    /// `ftl.gc_page_move = "read_and_program"`, a read out and a program in over the channel
    /// (counted when its program starts).
    pub copybacks: u64,
    /// Block erases.
    pub erases: u64,
    /// Translation-page reads of the cached mapping table (0 when `ftl.mapping_cache_bytes` = 0).
    pub mapping_reads: u64,
    /// Translation-page programs (write-backs) of the cached mapping table.
    pub mapping_programs: u64,
    /// Multi-plane commands started (each covers two or more of the page reads or programs
    /// above); 0 unless `device.multiplane`.
    pub multiplane_operations: u64,
    /// Page reads a partial-page host write made first, to fetch the page's other sectors
    /// (`ftl.partial_page_writes = "read_modify_write"` or `"update_read"`; not in `reads`).
    /// Absent when 0.
    #[serde(skip_serializing_if = "is_zero_count")]
    pub read_modify_write_reads: u64,
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

/// The cached mapping table in the measured window (`None` when the whole map is in DRAM).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CmtStats {
    /// Page translations that found their entry cached.
    pub hits: u64,
    /// Page translations that did not (each reads its translation page unless that page is
    /// already being read, was never written, or is being written back).
    pub misses: u64,
    /// hits / (hits + misses); 0 with no translation.
    pub hit_ratio: f64,
    /// Entries the cache holds: `ftl.mapping_cache_bytes / entry_bytes`.
    pub capacity_entries: u64,
    /// Bytes of one cached entry (LPN, PPN, sector bitmap; MQSim's sizing).
    pub entry_bytes: u64,
    /// Mapping entries in one translation page.
    pub entries_per_translation_page: u64,
    /// Translation-page write-backs submitted (one per eviction of a dirty entry whose page
    /// was not written back since): each is a page program in `flash.mapping_programs` once
    /// served; under `ftl.mapping_writebacks = "never_programmed"` none is.
    pub writebacks: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct GcStats {
    /// Victim blocks collected.
    pub runs: u64,
    /// Valid pages moved out of victims.
    pub pages_moved: u64,
    /// Reads of logical pages never written: served from their static location, or, under
    /// `ftl.unwritten_reads = "allocate"`, the reads that gave such a page its physical page.
    pub unmapped_reads: u64,
    /// Largest minus smallest erase count over all blocks at the end of the run.
    pub erase_count_spread: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NamedReport<R> {
    pub name: String,
    #[serde(flatten)]
    pub report: R,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MemoryStats {
    /// Bytes of FTL mapping state allocated at the end (grows with pages touched).
    pub mapping_bytes: u64,
}

/// Engine figures; `wall_s` and `requests_per_s` depend on the machine and are the only
/// fields that differ between two runs of the same inputs.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds of the simulation proper (after preconditioning).
    pub wall_s: f64,
    /// Requests simulated (warm-up included) per wall-clock second.
    pub requests_per_s: f64,
}
