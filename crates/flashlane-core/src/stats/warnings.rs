//! Warnings: conditions under which a run's figures are not wrong by its own rules, but may
//! well not be what its user meant (a skipped line, a clamped time, a run that measured
//! nothing). Judged once at the end of the run from counts kept anyway; each is listed in
//! docs/summary.md ("Warnings") with the meaning of its count.

use serde::Serialize;

use super::RunShape;
use crate::replay::{Replay, SourceReport};
use crate::trace::ReaderNotes;

/// One warning: a stable `code`, how many records or requests it concerns (`count`; 1 for a
/// condition of the whole run) and a one-line `message` saying what happened and what to do.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Warning {
    pub code: &'static str,
    pub count: u64,
    pub message: String,
}

/// The measured window is longer than this many times the span of the trace's arrivals:
/// requests came nearly all at once (a time unit misread).
pub const SPAN_RATIO_LIMIT: u64 = 100;
/// Windows shorter than this are never judged too long (a handful of requests at one instant
/// is a fine test).
pub const SPAN_FLOOR_NS: u64 = 1_000_000;
/// An open-loop run saturates when the drain after its last arrival is at least this share
/// (1 / N) of the measured window and at least [`SATURATION_FLOOR_NS`].
pub const SATURATION_SHARE_DIVISOR: u64 = 10;
pub const SATURATION_FLOOR_NS: u64 = 10_000_000;

/// What the warnings are judged from.
pub struct WarningInputs<'a> {
    pub replay: Replay,
    pub warmup_requests: u64,
    pub device_filter: Option<u32>,
    pub backstep_tolerance_ns: u64,
    pub host_queue_length: u64,
    /// The host scheduler may reorder (any but `noop`): only then does a host queue that
    /// never held two requests hide an effect.
    pub host_scheduler_reorders: bool,
    pub reports: &'a [SourceReport],
    pub notes: &'a [ReaderNotes],
    /// Trace records simulated (warm-up included) and measured requests completed.
    pub records: u64,
    pub completed: u64,
    pub shape: RunShape,
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn s(ns: u64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

/// The run's warnings, in a fixed order; empty when nothing is amiss.
pub fn warnings(w: &WarningInputs) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut push = |code, count, message: String| {
        out.push(Warning {
            code,
            count,
            message,
        })
    };
    let bad: u64 = w.reports.iter().map(|r| r.bad_lines).sum();
    if bad > 0 {
        push(
            "bad_lines_skipped",
            bad,
            format!(
                "{bad} malformed trace line(s) skipped under --max-bad-lines: their requests \
                 are not simulated"
            ),
        );
    }
    let clamped: u64 = w.reports.iter().map(|r| r.clamped_backsteps).sum();
    if clamped > 0 {
        let largest = w
            .notes
            .iter()
            .map(|n| n.largest_clamped_backstep_ns)
            .max()
            .unwrap_or(0);
        push(
            "timestamps_clamped",
            clamped,
            format!(
                "{clamped} record(s) stepped back in time (by up to {largest} ns, within the \
                 {} ns tolerance) and were moved to the previous record's time: they arrive \
                 together with it",
                w.backstep_tolerance_ns
            ),
        );
    }
    for (report, notes) in w.reports.iter().zip(w.notes) {
        if let Some((at_ns, refused)) = notes.backwards_after_one_record {
            if refused >= 2 {
                push(
                    "far_future_time",
                    refused,
                    format!(
                        "{}: {refused} records were refused as going back in time from one \
                         record at trace time {at_ns} ns: that record's time is probably \
                         wrong, and the lines after it were skipped as bad",
                        report.path
                    ),
                );
            }
        }
        if !notes.missing_cpu_files.is_empty() {
            let cpus: Vec<String> = notes.missing_cpu_files.iter().map(u32::to_string).collect();
            push(
                "blktrace_cpu_files_missing",
                notes.missing_cpu_files.len() as u64,
                format!(
                    "{}: the blktrace capture has no per-CPU file read for CPU {}: the events \
                     of those CPUs are not in the run (pass the capture's directory or common \
                     prefix, with every NAME.blktrace.N file)",
                    report.path,
                    cpus.join(", ")
                ),
            );
        }
    }
    if w.warmup_requests > 0 && w.warmup_requests >= w.records {
        push(
            "warmup_covers_trace",
            1,
            format!(
                "--warmup {} is not less than the {} request(s) simulated: nothing was \
                 measured",
                w.warmup_requests, w.records
            ),
        );
    } else if w.completed == 0 {
        let filtered: u64 = w.reports.iter().map(|r| r.filtered_records).sum();
        let why = match w.device_filter {
            Some(device) => {
                format!(" ({filtered} record(s) of other devices left out by --device {device})")
            }
            None if w.records == 0 => " (the trace holds no request)".into(),
            None => String::new(),
        };
        push(
            "no_requests_measured",
            1,
            format!("no request was measured{why}: every figure of this run is 0 or empty"),
        );
    }
    let shape = w.shape;
    let window = shape.window_end_ns - shape.window_start_ns;
    let mut span_warned = false;
    if let Replay::OpenLoop { .. } = w.replay {
        let span = shape.last_arrival_ns.saturating_sub(shape.window_start_ns);
        if w.completed >= 2 && window >= SPAN_FLOOR_NS && window / SPAN_RATIO_LIMIT > span {
            span_warned = true;
            push(
                "span_longer_than_trace",
                1,
                format!(
                    "the measured window lasted {}, over {SPAN_RATIO_LIMIT} times the {} over \
                     which its requests arrived: they came nearly all at once (a trace read \
                     with the wrong --format or time unit, or a too small --time-scale, does \
                     this)",
                    s(window),
                    s(span)
                ),
            );
        }
        if let Some((ended_ns, backlog)) = shape.input_end {
            let drain = shape.window_end_ns.saturating_sub(shape.last_arrival_ns);
            if !span_warned
                && w.completed >= 2
                && drain >= SATURATION_FLOOR_NS
                && drain >= window / SATURATION_SHARE_DIVISOR
            {
                push(
                    "open_loop_saturated",
                    backlog,
                    format!(
                        "open-loop replay outran the SSD: {backlog} request(s) were waiting \
                         or in service when the last one was admitted ({} after its trace \
                         time), and the run ended {} after the last arrival ({:.0} % of the \
                         window): queueing grew to the end, so latencies depend on the \
                         trace's length (--time-scale > 1 or --closed-loop avoid it)",
                        ms(ended_ns.saturating_sub(shape.last_arrival_ns)),
                        ms(drain),
                        drain as f64 * 100.0 / window.max(1) as f64
                    ),
                );
            }
        }
    }
    if w.completed >= 2 && shape.host_queue_max < 2 && w.host_scheduler_reorders {
        push(
            "host_queue_never_held_two",
            1,
            format!(
                "the host queue never held two requests at once (host.queue_length_requests = \
                 {}): every host scheduler saw one request at a time and had nothing to \
                 reorder, so host schedulers cannot differ in this run",
                w.host_queue_length
            ),
        );
    }
    out
}
