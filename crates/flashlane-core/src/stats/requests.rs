//! Per host request: counts, latency (in total and per trace of a mix), the split of its
//! latency between host queue and device, bytes moved, and PIQ's conflicts at arrival.

use super::{LatencyByOp, LatencyRecorder, RequestCounts, TimeSplit};
use crate::trace::Op;

/// What a request carries for the recorder from its admission to its completion; the flow
/// keeps it in the request's slab entry and hands it back with each report.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestMarks {
    /// When it was handed to the device.
    pub(super) dispatched_ns: u64,
    /// Index of the trace it came from (mixes).
    pub(super) source: u16,
    /// Past the warm-up: counted in the statistics.
    pub(super) measured: bool,
    /// One of its transfers waited for its path (Venice's Figure 13, per request).
    pub(super) path_conflict: bool,
}

impl RequestMarks {
    /// Marks of a request from trace `source`, counted in the statistics when `measured`
    /// (a real replay's; the simulator's come from `SimRecorder::request_admitted`).
    pub fn new(source: u16, measured: bool) -> Self {
        RequestMarks {
            source,
            measured,
            ..RequestMarks::default()
        }
    }

    #[inline]
    pub fn measured(&self) -> bool {
        self.measured
    }

    /// The request was handed to the device at `now`.
    pub fn dispatched_at(&mut self, now: u64) {
        self.dispatched_ns = now;
    }
}

pub(super) fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
    }
}

/// Collects the request figures of the summary.
#[derive(Debug, Clone)]
pub struct RequestRecorder {
    latency: [LatencyRecorder; 2],
    /// Per trace of a mix: counts and latency by read and write.
    per_source: Vec<(RequestCounts, [LatencyRecorder; 2])>,
    host_wait_sum_ns: u128,
    device_time_sum_ns: u128,
    measured_bytes: u64,
    counts: RequestCounts,
    /// Measured reads and writes that conflicted at arrival (`ConflictStats::read`, `write`).
    pub(super) conflicts: [u64; 2],
    /// When the last measured request completed.
    pub(super) last_completion_ns: u64,
}

impl RequestRecorder {
    pub fn new(sources: usize) -> Self {
        RequestRecorder {
            latency: [LatencyRecorder::default(), LatencyRecorder::default()],
            per_source: vec![(RequestCounts::default(), Default::default()); sources.max(1)],
            host_wait_sum_ns: 0,
            device_time_sum_ns: 0,
            measured_bytes: 0,
            counts: RequestCounts::default(),
            conflicts: [0; 2],
            last_completion_ns: 0,
        }
    }

    /// A request of `op` arrived at `arrival_ns`, was handed over at `marks.dispatched_ns`
    /// and completed at `now`.
    #[inline]
    pub fn completed(
        &mut self,
        now: u64,
        marks: RequestMarks,
        op: Op,
        arrival_ns: u64,
        bytes: u64,
    ) {
        if !marks.measured {
            self.counts.warmup += 1;
            self.per_source[marks.source as usize].0.warmup += 1;
            return;
        }
        let latency = now - arrival_ns;
        self.latency[op_index(op)].record(latency);
        let mixed = self.per_source.len() > 1;
        let (counts, recorders) = &mut self.per_source[marks.source as usize];
        if mixed {
            // With one trace its statistics are the totals; no need to record twice.
            recorders[op_index(op)].record(latency);
        }
        counts.completed += 1;
        match op {
            Op::Read => counts.reads += 1,
            Op::Write => counts.writes += 1,
        }
        self.host_wait_sum_ns += (marks.dispatched_ns - arrival_ns) as u128;
        self.device_time_sum_ns += (now - marks.dispatched_ns) as u128;
        self.measured_bytes += bytes;
        self.counts.completed += 1;
        match op {
            Op::Read => self.counts.reads += 1,
            Op::Write => self.counts.writes += 1,
        }
        self.last_completion_ns = now;
    }

    pub fn counts(&self) -> &RequestCounts {
        &self.counts
    }

    pub fn measured_bytes(&self) -> u64 {
        self.measured_bytes
    }

    pub fn latency(&self) -> LatencyByOp {
        Self::by_op(&self.latency)
    }

    /// Mean host-queue and device time of the measured requests, microseconds.
    pub fn time_split(&self) -> TimeSplit {
        let completed = self.counts.completed;
        let mean_us = |sum: u128| {
            if completed == 0 {
                0.0
            } else {
                sum as f64 / completed as f64 / 1000.0
            }
        };
        TimeSplit {
            host_queue: mean_us(self.host_wait_sum_ns),
            device: mean_us(self.device_time_sum_ns),
        }
    }

    /// Counts and latency per trace of a mix (one trace: its figures are the totals).
    pub fn per_source(&self) -> Vec<(RequestCounts, LatencyByOp)> {
        self.per_source
            .iter()
            .map(|(counts, r)| {
                let latency = if self.per_source.len() > 1 {
                    Self::by_op(r)
                } else {
                    self.latency()
                };
                (counts.clone(), latency)
            })
            .collect()
    }

    fn by_op(r: &[LatencyRecorder; 2]) -> LatencyByOp {
        LatencyByOp {
            read: r[0].stats(),
            write: r[1].stats(),
            all: LatencyRecorder::merged(&r[0], &r[1]).stats(),
        }
    }
}
