//! What the input hands the event flow: each request as it arrives ([`Arrival`]), the replay
//! mode that times it ([`Replay`], [`Pacing`]), the address policy, and what the input reports
//! per trace. Its own module so the flow (`sim`), the recorder (`stats`) and the run's set-up
//! (`run`) share these types without importing each other.

mod pacing;

use serde::Serialize;

use crate::trace::TraceRecord;

pub use pacing::Pacing;

/// Largest `--time-scale`.
pub const MAX_TIME_SCALE: f64 = 1e6;

/// How trace time drives arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Replay {
    /// Requests arrive at their trace times (rebased to 0) multiplied by `time_scale`
    /// (0.5 = twice as fast).
    OpenLoop { time_scale: f64 },
    /// Timestamps ignored; a new request arrives whenever fewer than `outstanding` requests
    /// are in the system (host queue plus device).
    ClosedLoop { outstanding: u32 },
    /// Timestamps ignored; a request arrives as soon as the host queue has room.
    AsFastAsPossible,
}

impl Default for Replay {
    fn default() -> Self {
        Replay::OpenLoop { time_scale: 1.0 }
    }
}

/// What to do with addresses past the simulated capacity (or past a trace's share of it when
/// several traces are mixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressPolicy {
    /// Such a request is an error.
    #[default]
    Strict,
    /// Offsets are taken modulo the capacity (a request that would run past the end is moved
    /// back to end there).
    Fold,
    /// The pages the trace touches are renumbered densely, in address order (a pre-pass over
    /// the trace), so the footprint fits whenever it is smaller than the capacity.
    Remap,
}

/// A record and the index of the trace it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub record: TraceRecord,
    pub source: u16,
    /// Byte offset of the record expected next, when the pipeline already holds it (a hint for
    /// prefetching: it may be wrong or missing without effect on results).
    pub next_offset_hint: Option<u64>,
}

/// Per-trace counters of what the pipeline did.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SourceReport {
    pub path: String,
    /// Layout read, or `synthetic`.
    pub format: String,
    /// For a synthetic workload, what it stands for (e.g. "synthetic stand-in for hm_0 ...").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// First byte of this trace's share of the logical space.
    pub address_base_bytes: u64,
    /// Bytes of logical space this trace may use.
    pub address_span_bytes: u64,
    /// Records passed to the simulator.
    pub records: u64,
    /// Records of other devices left out by `--device`.
    pub filtered_records: u64,
    /// Records whose offset was folded back into range (`--fold-addresses`).
    pub folded_records: u64,
    /// Malformed lines skipped under `--max-bad-lines`.
    pub bad_lines: u64,
    /// Non-request events skipped (flushes, trims, other blktrace actions).
    pub skipped_events: u64,
    /// Records that stepped back in time within the tolerance and were clamped.
    pub clamped_backsteps: u64,
}
