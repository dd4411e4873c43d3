//! The figures about a run's requests that both summaries carry: a simulation's
//! ([`super::Summary`], `flashlane run`) and a real drive's replay (`flashlane replay`'s
//! `ReplaySummary`). Both build them here from the same two recorders and write them with the
//! same text, so a statistic about requests added to this type (and to `RequestRecorder`)
//! reaches the JSON (flattened in place, keys unchanged) and the text summary of both commands
//! with no further edit.

use std::fmt::Write;

use serde::Serialize;

use super::{
    HostQueueRecorder, HostQueueStats, LatencyByOp, LatencyStats, RequestCounts, RequestRecorder,
    Throughput, TimeSplit,
};

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RequestFigures {
    pub requests: RequestCounts,
    /// Per-request latency in microseconds (measured requests only).
    pub latency_us: LatencyByOp,
    /// Where measured requests spent their time, mean microseconds.
    pub time_split_us: TimeSplit,
    /// Host-queue occupancy over the window (stats/host_queue.rs).
    pub host_queue: HostQueueStats,
    /// Measured requests and bytes completed per second of the measured window (simulated
    /// time for a simulation, wall-clock time for a replay).
    pub throughput: Throughput,
}

impl RequestFigures {
    /// The figures of a measured window of `window_ns` that ended at `window_end_ns`.
    pub fn from_recorders(
        requests: &RequestRecorder,
        host_queue: &HostQueueRecorder,
        window_ns: u64,
        window_end_ns: u64,
    ) -> Self {
        let seconds = window_ns as f64 / 1e9;
        let per_second = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
        let counts = requests.counts().clone();
        Self {
            throughput: Throughput {
                iops: per_second(counts.completed as f64),
                mib_per_s: per_second(requests.measured_bytes() as f64 / (1u64 << 20) as f64),
            },
            requests: counts,
            latency_us: requests.latency(),
            time_split_us: requests.time_split(),
            host_queue: host_queue.stats(window_end_ns),
        }
    }

    /// The text summary's request lines: counts, `input` (the inputs' own line, written by the
    /// caller, may be empty), the latency table, time split and host queue. `records`: the
    /// trace records read. Throughput is the caller's line (its window is named there).
    pub fn write_text(&self, out: &mut String, records: u64, input: &str) {
        let r = &self.requests;
        let _ = writeln!(
            out,
            "requests: {} measured ({} reads, {} writes), {} warm-up, {} records read",
            r.completed, r.reads, r.writes, r.warmup, records
        );
        out.push_str(input);
        write_latency_table(out, &self.latency_us);
        let split = &self.time_split_us;
        let _ = writeln!(
            out,
            "time split (mean us): host queue {:.1}, device {:.1}",
            split.host_queue, split.device
        );
        let q = &self.host_queue;
        let _ = writeln!(
            out,
            "host queue: mean {:.2} requests, max {} of {}, full {:.1} % of the time",
            q.length_mean,
            q.length_max,
            q.capacity_requests,
            q.full_fraction * 100.0
        );
    }
}

/// The latency table of a summary: a header, then read, write and all.
fn write_latency_table(out: &mut String, l: &LatencyByOp) {
    let _ = writeln!(
        out,
        "latency (us)  {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "count", "mean", "p50", "p99", "p99.9", "max"
    );
    latency_row(out, "read", &l.read);
    latency_row(out, "write", &l.write);
    latency_row(out, "all", &l.all);
}

fn latency_row(out: &mut String, name: &str, l: &LatencyStats) {
    let _ = writeln!(
        out,
        "  {name:<6} {:>9} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        l.count, l.mean, l.p50, l.p99, l.p999, l.max
    );
}
