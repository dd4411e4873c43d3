//! Every warning of the run summary (stats/warnings.rs, docs/summary.md "Warnings") appears
//! when its condition holds, with its count, and not on a clean run.

use std::io::Write;

use crate::common::{mqsim_trace_in, preset, spec, Req, ScratchDir};
use flashlane_core::run::Replay;
use flashlane_core::stats::Summary;
use flashlane_core::trace::TraceFormat;
use flashlane_core::RunSpec;

fn codes(s: &Summary) -> Vec<&str> {
    s.warnings.iter().map(|w| w.code).collect()
}

fn warning<'a>(s: &'a Summary, code: &str) -> &'a flashlane_core::stats::Warning {
    s.warnings
        .iter()
        .find(|w| w.code == code)
        .unwrap_or_else(|| panic!("no {code} warning in {:?}", s.warnings))
}

/// Write `text` as an MQSim trace file in `dir`.
fn text_trace(dir: &ScratchDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.mqsim"));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    path
}

/// Requests `gap_ns` apart, alternating reads and writes over a few MiB.
fn spaced(n: u64, gap_ns: u64) -> Vec<Req> {
    (0..n)
        .map(|i| (i * gap_ns, (i * 7919 % 1024) * 4096, 4096, i % 2 == 0))
        .collect()
}

fn run_spec(spec: &RunSpec) -> Summary {
    flashlane_core::run(spec).unwrap()
}

/// A burst of requests served in time: no warning at all, and no `warnings` key in the JSON.
#[test]
fn a_clean_run_has_no_warnings() {
    // Pairs arriving together at a one-request device queue: the host queue holds two.
    let config = preset("mqsim-ssd", &[("device.queue_depth_requests", "1")]);
    let pairs: Vec<Req> = spaced(200, 1_000_000)
        .into_iter()
        .enumerate()
        .map(|(i, (_, offset, bytes, read))| (i as u64 / 2 * 1_000_000, offset, bytes, read))
        .collect();
    let dir = ScratchDir::new("warn");
    let trace = mqsim_trace_in(&dir, "clean", &pairs);
    let s = run_spec(&spec(config, trace));
    assert_eq!(codes(&s), Vec::<&str>::new());
    let json = serde_json::to_value(&s).unwrap();
    assert!(json.get("warnings").is_none());
}

#[test]
fn skipped_clamped_and_far_future_lines_are_warned_with_their_counts() {
    let mut text = String::new();
    for i in 0..20u64 {
        let t = match i {
            // 0.4 s back from its predecessor: clamped.
            5 => 4_000_000_000 - 400_000_000,
            // A far-future time: every later line steps back past the tolerance.
            10 => 1 << 50,
            _ => i * 1_000_000_000,
        };
        text.push_str(&format!("{t} 0 {} 8 {}\n", i * 64, i % 2));
        if i == 2 {
            text.push_str("not a record\n");
        }
    }
    let dir = ScratchDir::new("warn");
    let trace = text_trace(&dir, "lines", &text);
    let mut spec = spec(preset("mqsim-ssd", &[]), trace);
    spec.traces[0].options.max_bad_lines = 100;
    let s = run_spec(&spec);
    let bad = warning(&s, "bad_lines_skipped");
    assert_eq!(
        bad.count,
        1 + 9,
        "the malformed line and the nine after the far one"
    );
    let clamped = warning(&s, "timestamps_clamped");
    assert_eq!(clamped.count, 1);
    assert!(
        clamped.message.contains("by up to 400000000 ns"),
        "{}",
        clamped.message
    );
    let far = warning(&s, "far_future_time");
    assert_eq!(far.count, 9);
    assert!(
        far.message.contains(&format!("{} ns", 1u64 << 50)),
        "{}",
        far.message
    );
}

#[test]
fn nothing_measured_is_warned() {
    let dir = ScratchDir::new("warn");
    // Warm-up as long as the trace.
    let trace = mqsim_trace_in(&dir, "warm", &spaced(50, 100_000));
    let mut warm = spec(preset("mqsim-ssd", &[]), trace.clone());
    warm.warmup_requests = 50;
    let s = run_spec(&warm);
    assert_eq!(codes(&s), ["warmup_covers_trace"]);
    // Another device's records only.
    let mut other = spec(preset("mqsim-ssd", &[]), trace);
    other.traces[0].device = Some(99);
    let s = run_spec(&other);
    let w = warning(&s, "no_requests_measured");
    assert!(
        w.message
            .contains("50 record(s) of other devices left out by --device 99"),
        "{}",
        w.message
    );
    // A CSV trace with its header only.
    let header = dir.join("header.csv");
    std::fs::write(
        &header,
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
    )
    .unwrap();
    let s = run_spec(&RunSpec::new(
        preset("mqsim-ssd", &[]),
        header,
        Some(TraceFormat::Msr),
    ));
    assert_eq!(s.figures.requests.completed, 0);
    assert!(warning(&s, "no_requests_measured")
        .message
        .contains("holds no request"));
}

/// Requests 1 ns apart (microsecond times read as nanoseconds) take far longer than the trace's
/// span; requests steadily faster than the SSD make it saturate instead.
#[test]
fn a_span_far_longer_than_the_trace_and_a_saturated_run_are_warned() {
    let dir = ScratchDir::new("warn");
    let config = preset("mqsim-ssd", &[]);
    let span = mqsim_trace_in(&dir, "span", &spaced(2000, 1));
    let s = run_spec(&spec(config.clone(), span));
    assert_eq!(codes(&s), ["span_longer_than_trace"]);
    // 20 us apart: a write every 40 us on one chip at a time is more than it can program.
    let one_chip = preset(
        "mqsim-ssd",
        &[
            ("geometry.channels", "1"),
            ("geometry.chips_per_channel", "1"),
        ],
    );
    let writes: Vec<Req> = (0..4000u64)
        .map(|i| (i * 20_000, (i % 512) * 4096, 4096, false))
        .collect();
    let s = run_spec(&spec(one_chip, mqsim_trace_in(&dir, "saturate", &writes)));
    let w = warning(&s, "open_loop_saturated");
    assert!(w.count > 100, "{w:?}");
    assert!(!codes(&s).contains(&"span_longer_than_trace"));
    // Closed-loop replay is never judged for either.
    let mut closed = spec(config, mqsim_trace_in(&dir, "closed", &spaced(2000, 1)));
    closed.replay = Replay::ClosedLoop { outstanding: 4 };
    assert_eq!(codes(&run_spec(&closed)), Vec::<&str>::new());
}

/// With a large device queue every request leaves the host queue at once: host schedulers
/// cannot differ, and a run with one that reorders says so; NOOP's run (nothing to reorder
/// anyway) does not.
#[test]
fn a_host_queue_that_never_held_two_requests_is_warned() {
    let dir = ScratchDir::new("warn");
    let trace = mqsim_trace_in(&dir, "oneatatime", &spaced(200, 200_000));
    let deadline = preset("mqsim-ssd", &[("host.scheduler.kind", "deadline")]);
    let s = run_spec(&spec(deadline, trace.clone()));
    assert_eq!(codes(&s), ["host_queue_never_held_two"]);
    let s = run_spec(&spec(preset("mqsim-ssd", &[]), trace));
    assert_eq!(codes(&s), Vec::<&str>::new());
}
