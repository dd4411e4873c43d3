//! The input pipeline: replay modes, address policies, device selection and trace mixes.

use crate::common::{mqsim_trace, preset, spec, trace_path};
use flashlane_core::run::{AddressPolicy, Replay, TraceInput};
use flashlane_core::trace::TraceFormat;

#[test]
fn closed_loop_of_one_serializes_requests() {
    // Two reads of one page each; with one request in the system the second starts when the
    // first ends, so the run lasts exactly two read service times.
    let path = mqsim_trace("closed1", &[(0, 0, 8192, true), (0, 8192, 8192, true)]);
    let mut s = spec(
        preset(
            "mqsim-ssd",
            &[("precondition.write_trace_footprint", "false")],
        ),
        path.clone(),
    );
    s.replay = Replay::ClosedLoop { outstanding: 1 };
    let summary = flashlane_core::run(&s).unwrap();
    std::fs::remove_file(path).unwrap();
    let one = 21 + 75_000 + (8192f64 / 0.333).ceil() as u64;
    assert_eq!(summary.sim_time_ns, 2 * one);
    assert_eq!(summary.figures.latency_us.read.max * 1000.0, one as f64);
}

#[test]
fn time_scale_compresses_arrivals() {
    let path = mqsim_trace(
        "scale",
        &[(0, 0, 4096, true), (10_000_000, 1 << 20, 4096, true)],
    );
    // The whole map in DRAM: no translation reads in the closed form.
    let config = preset("mqsim-ssd", &[("ftl.mapping_cache_bytes", "0")]);
    let mut s = spec(config, path.clone());
    s.replay = Replay::OpenLoop { time_scale: 0.5 };
    let summary = flashlane_core::run(&s).unwrap();
    std::fs::remove_file(path).unwrap();
    let one = 21 + 75_000 + (4096f64 / 0.333).ceil() as u64;
    assert_eq!(summary.sim_time_ns, 5_000_000 + one);
}

#[test]
fn fold_and_remap_bring_far_addresses_in_range() {
    let far = 1u64 << 40; // 1 TiB: past the 115 GiB of ssdsim-mlc-8x8
    let requests = [
        (0, far, 4096, false),
        (1000, far + 4096, 4096, true),
        (2000, 4096, 4096, true),
    ];
    let path = mqsim_trace("far", &requests);
    let config = preset("ssdsim-mlc-8x8", &[]);
    assert!(flashlane_core::run(&spec(config.clone(), path.clone())).is_err());
    for policy in [AddressPolicy::Fold, AddressPolicy::Remap] {
        let mut s = spec(config.clone(), path.clone());
        s.addresses = policy;
        let summary = flashlane_core::run(&s).unwrap();
        assert_eq!(summary.figures.requests.completed, 3, "{policy:?}");
        if policy == AddressPolicy::Fold {
            assert_eq!(summary.sources[0].input.folded_records, 2);
        }
    }
    std::fs::remove_file(path).unwrap();
}

#[test]
fn device_filter_keeps_one_disk() {
    let mut s = spec(preset("mqsim-ssd", &[]), trace_path("tpcc-small.mqsim"));
    s.traces[0].device = Some(4);
    let summary = flashlane_core::run(&s).unwrap();
    let expected = std::fs::read_to_string(trace_path("tpcc-small.mqsim"))
        .unwrap()
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("4"))
        .count() as u64;
    assert_eq!(summary.figures.requests.completed, expected);
    assert_eq!(summary.sources[0].input.filtered_records, 6999 - expected);
}

#[test]
fn a_mix_keeps_each_trace_in_its_own_share_with_its_own_statistics() {
    let mut s = spec(preset("mqsim-ssd", &[]), trace_path("tpcc-small.mqsim"));
    s.traces.push(TraceInput::new(
        trace_path("websearch-small.mqsim"),
        Some(TraceFormat::Mqsim),
    ));
    s.addresses = AddressPolicy::Remap;
    let summary = flashlane_core::run(&s).unwrap();
    assert_eq!(summary.sources.len(), 2);
    assert_eq!(summary.sources[0].requests.completed, 6999);
    assert_eq!(summary.sources[1].requests.completed, 24_783);
    assert_eq!(summary.sources[1].requests.writes, 4);
    assert_eq!(summary.figures.requests.completed, 6999 + 24_783);
    let share = summary.sources[1].input.address_base_bytes;
    assert_eq!(summary.sources[0].input.address_span_bytes, share);
    assert!(share > 0);
}

#[test]
fn every_bundled_trace_runs_on_the_mqsim_preset() {
    for (name, format, requests) in [
        ("tpcc-small.mqsim", "mqsim", 6999),
        ("websearch-small.mqsim", "mqsim", 24_783),
        ("financial1-head.ssdsim", "ssdsim", 10_000),
        ("financial1-head.spc", "spc", 10_000),
        ("msnfs-30s.disksim.gz", "disksim", 149_999),
        ("msnfs-30s.msr.csv.gz", "msr", 149_999),
        ("ycsb-a-rocksdb.blkparse.gz", "blkparse", 1694),
    ] {
        let mut s = flashlane_core::RunSpec::new(
            preset("mqsim-ssd", &[]),
            trace_path(name),
            TraceFormat::from_name(format),
        );
        // The YCSB capture comes from a drive larger than this one.
        s.addresses = AddressPolicy::Remap;
        let summary = flashlane_core::run(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(summary.figures.requests.completed, requests, "{name}");
    }
}

#[test]
fn a_synthetic_workload_runs_without_a_file_and_mixes_with_a_trace() {
    let profile = flashlane_core::workload::profile("hm_0").unwrap();
    let mut spec = profile.spec.clone();
    spec.requests = 3000;
    let mut s = spec_for_synthetic(spec.clone());
    let summary = flashlane_core::run(&s).unwrap();
    assert_eq!(summary.figures.requests.completed, 3000);
    assert_eq!(summary.sources[0].input.format, "synthetic");
    assert_eq!(
        summary.sources[0].input.label.as_deref(),
        Some(spec.label.as_str())
    );
    // Same spec and seed, same result.
    let again = flashlane_core::run(&s).unwrap();
    assert_eq!(summary.figures.latency_us, again.figures.latency_us);
    // Beside a real trace, each in its own share of the space.
    s.traces.insert(
        0,
        TraceInput::new(trace_path("tpcc-small.mqsim"), Some(TraceFormat::Mqsim)),
    );
    s.addresses = AddressPolicy::Remap;
    let mixed = flashlane_core::run(&s).unwrap();
    assert_eq!(mixed.sources[0].requests.completed, 6999);
    assert_eq!(mixed.sources[1].requests.completed, 3000);
}

fn spec_for_synthetic(spec: flashlane_core::workload::SyntheticSpec) -> flashlane_core::RunSpec {
    let mut s = flashlane_core::RunSpec::new(preset("venice-perf", &[]), "unused", None);
    s.traces = vec![TraceInput::synthetic("profile hm_0", spec)];
    s
}

#[test]
fn progress_reports_the_footprint_pass_then_the_simulation_with_its_total() {
    let requests: Vec<(u64, u64, u64, bool)> = (0..300_000u64)
        .map(|i| (i * 1000, (i % 5000) * 8192, 4096, i % 3 != 0))
        .collect();
    let path = mqsim_trace("progress", &requests);
    let config = preset("mqsim-ssd", &[("ftl.mapping_cache_bytes", "0")]);
    let mut reports = Vec::new();
    let summary =
        flashlane_core::run_with_progress(&spec(config, path.clone()), &mut |p| reports.push(p))
            .unwrap();
    std::fs::remove_file(path).unwrap();
    use flashlane_core::{Phase, Progress};
    let first_sim = reports
        .iter()
        .position(|p| p.phase == Phase::Simulation)
        .expect("simulation reports");
    // The footprint pass reports first, ending with its count, without a total.
    assert!(first_sim > 1);
    assert!(reports[..first_sim]
        .iter()
        .all(|p| p.phase == Phase::FootprintPass && p.total_records.is_none()));
    assert_eq!(reports[first_sim - 1].records, 300_000);
    // The simulation's reports carry that count as their total and end at it.
    assert!(reports[first_sim..]
        .iter()
        .all(|p| p.phase == Phase::Simulation && p.total_records == Some(300_000)));
    assert!(reports[first_sim..]
        .windows(2)
        .all(|w| w[0].records <= w[1].records));
    assert_eq!(
        reports.last(),
        Some(&Progress {
            phase: Phase::Simulation,
            records: 300_000,
            total_records: Some(300_000),
        })
    );
    assert_eq!(summary.trace.records, 300_000);
}

#[test]
fn a_run_stops_when_asked_and_says_how_far_it_got() {
    // 200,000 random requests: well over 65,536 events, so `interrupted` is asked several
    // times. Answering true at its third question stops the run with `Error::Interrupted`,
    // having read fewer records than the trace holds; answering false runs it to the end.
    let requests = crate::common::random_requests(7, 200_000, 1 << 30, 0.7, 20_000);
    let path = crate::common::mqsim_trace("interruptible", &requests);
    let spec = crate::common::spec(crate::common::preset("mqsim-ssd", &[]), path.clone());
    let asked = std::cell::Cell::new(0);
    let stopped = flashlane_core::run::run_interruptible(
        &spec,
        &mut |_: flashlane_core::Progress| {},
        &|| {
            asked.set(asked.get() + 1);
            asked.get() >= 3
        },
    );
    match stopped {
        Err(flashlane_core::Error::Interrupted { records }) => {
            assert!(records > 0 && records < 200_000, "{records}")
        }
        other => panic!("expected Interrupted, got {other:?}"),
    }
    assert_eq!(asked.get(), 3);
    let whole = flashlane_core::run::run_interruptible(
        &spec,
        &mut |_: flashlane_core::Progress| {},
        &|| false,
    )
    .unwrap();
    assert_eq!(whole.figures.requests.completed, 200_000);
    let _ = std::fs::remove_file(path);
}
