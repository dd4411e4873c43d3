//! `combined-8x8`, the drive where every paper's technique can act (docs/models/combined.md):
//! each technique, switched on alone (with the drive behaviour it needs on both sides), moves
//! the statistic its paper is about, against the preset as it is:
//!
//! * PIQ: the time reads wait for a busy chip (`conflicts.read_chip_wait_us`) falls: its
//!   batches leave out requests whose chips are taken;
//! * Venice: the share of requests whose every transfer got its path at once
//!   (`request_paths.conflict_free_fraction`, its Fig. 13) rises where the load is skewed
//!   over the channels (on an even load its mesh, with links at the channel's rate, finds
//!   no more free paths than the buses);
//! * SOS: the spread of the chips' mean queue lengths (largest minus smallest of
//!   `device.per_chip_queue_length_mean`) falls: its leveller moves writes to short queues;
//! * VIOS: the mean array program time of host writes (`variation.mean_host_program_us`)
//!   falls: conflicting writes go to fast blocks.
//!
//! * PASS: the array time crowded regions add (`region_slowdown.array_time_factor`) falls: its
//!   turns of at most 16 requests per region break the long runs of bursts by region.
//!
//! On tpcc at a quarter of its recorded rate (no run falls behind), Venice on the combinations
//! study's skewed workload, VIOS on its Table 1 stand-in of src (write-heavy, so writes open
//! new blocks where the choice acts), and PASS on bursts of writes by 4 GiB region that arrive
//! in clumps, the one condition where it has a choice to make on this drive
//! (docs/models/combined.md, "PASS on `combined-8x8`").

use crate::common::trace_path;
use flashlane_core::config::switches::settings_of;
use flashlane_core::config::Config;
use flashlane_core::run::{AddressPolicy, Replay, TraceInput};
use flashlane_core::stats::Summary;
use flashlane_core::trace::TraceFormat;
use flashlane_core::workload::{AddressSpec, ArrivalSpec, SizeSpec, SyntheticSpec};
use flashlane_core::RunSpec;

fn config(switches: &[&str]) -> Config {
    let overrides = settings_of(switches).unwrap();
    Config::from_preset("combined-8x8", &overrides).unwrap()
}

fn tpcc(switches: &[&str]) -> Summary {
    let path = trace_path("tpcc-small.mqsim");
    let mut spec = RunSpec::new(config(switches), path, Some(TraceFormat::Mqsim));
    spec.addresses = AddressPolicy::Remap;
    spec.replay = Replay::OpenLoop { time_scale: 4.0 };
    let s = flashlane_core::run(&spec).unwrap();
    assert!(s.warnings.is_empty(), "{switches:?}: {:?}", s.warnings);
    s
}

fn queue_spread(s: &Summary) -> f64 {
    let q = &s.device.per_chip_queue_length_mean;
    let max = q.iter().cloned().fold(f64::MIN, f64::max);
    let min = q.iter().cloned().fold(f64::MAX, f64::min);
    max - min
}

#[test]
fn piq_and_sos_each_move_their_own_statistic() {
    let base = tpcc(&[]);
    let piq = tpcc(&["piq"]);
    let (b, p) = (
        base.conflicts.read_chip_wait_us,
        piq.conflicts.read_chip_wait_us,
    );
    assert!(p < 0.9 * b, "PIQ: read chip wait {b:.1} -> {p:.1} us");

    let sos = tpcc(&["sos"]);
    let (b, s) = (queue_spread(&base), queue_spread(&sos));
    assert!(s < 0.9 * b, "SOS: queue-length spread {b:.3} -> {s:.3}");
    assert!(sos.device.moved_writes > 0, "SOS moved no write");
}

/// 8 KiB requests, 90 % of them on 16 of the 64 chips (4 of the 8 channels), at half the
/// channels' bandwidth: the combinations study's `skewed` condition (reproduce/combos.py).
const SKEWED: &str = r#"
label = "skewed: 90 % on 16 of 64 chips, load 0.5"
requests = 1500
read_fraction = 0.7
[arrival]
kind = "poisson"
mean_interarrival_ns = 51200.0
[size]
kind = "fixed"
bytes = 8192
[address]
kind = "hot_units"
span_bytes = 17179869184
align_bytes = 8192
unit_bytes = 8192
units = 4
hot_units = 1
hot_fraction_of_accesses = 0.9
"#;

#[test]
fn venice_finds_free_paths_where_the_load_is_skewed() {
    // Venice's links run at the channel's rate (the switch's setting): on an even load such
    // as tpcc's its mesh finds no more free paths than the buses (0.276 -> 0.233 when this was
    // written); its effect lives where the load falls on few channels (its effect map).
    let run = |switches: &[&str]| {
        let spec = SyntheticSpec::from_toml(SKEWED, "skewed").unwrap();
        let mut s = RunSpec::new(config(switches), "skewed", None);
        s.traces = vec![TraceInput::synthetic("skewed", spec)];
        flashlane_core::run(&s).unwrap()
    };
    let (base, venice) = (run(&[]), run(&["venice"]));
    let (b, v) = (
        base.request_paths.conflict_free_fraction,
        venice.request_paths.conflict_free_fraction,
    );
    assert!(v > 1.5 * b, "Venice: conflict-free share {b:.3} -> {v:.3}");
    let (b, v) = (
        base.figures.latency_us.all.mean,
        venice.figures.latency_us.all.mean,
    );
    assert!(v < 0.8 * b, "Venice: mean latency {b:.1} -> {v:.1} us");
}

#[test]
fn vios_sends_writes_to_faster_blocks() {
    let run = |switches: &[&str]| {
        let profile = flashlane_core::workload::profile("vios_src").unwrap();
        let mut spec = RunSpec::new(config(switches), "vios_src", None);
        spec.traces = vec![TraceInput::synthetic("vios_src", profile.spec)];
        spec.max_requests = Some(20_000);
        flashlane_core::run(&spec).unwrap()
    };
    // Both sides have process variation on: VIOS's block choice needs fast blocks to choose.
    let base = run(&["variation"]);
    let vios = run(&["vios"]);
    let program = |s: &Summary| s.variation.as_ref().unwrap().mean_host_program_us;
    let (b, v) = (program(&base), program(&vios));
    assert!(v < 0.97 * b, "VIOS: mean host program {b:.1} -> {v:.1} us");
    let fast = |s: &Summary| s.variation.as_ref().unwrap().write_fast_fraction;
    assert!(
        fast(&vios) > fast(&base),
        "{} -> {}",
        fast(&base),
        fast(&vios)
    );
}

/// 5,000 writes of 4 KiB in bursts of 64 to one of eight 4 GiB regions (PASS's region), the
/// next burst to another region, arriving as `arrival` says.
fn region_bursts(switches: &[&str], arrival: ArrivalSpec) -> Summary {
    let workload = SyntheticSpec {
        label: "bursts of 64 writes by 4 GiB region".into(),
        requests: 5000,
        read_fraction: 0.0,
        device: 0,
        stream: 0,
        stream_count: 1,
        seed: 1,
        arrival,
        size: SizeSpec::Fixed { bytes: 4096 },
        address: AddressSpec::RegionBursts {
            span_bytes: 8 << 32,
            align_bytes: 4096,
            region_bytes: 1 << 32,
            burst_requests: 64,
        },
        rewrite: None,
    };
    let mut spec = RunSpec::new(config(switches), "region_bursts", None);
    spec.traces = vec![TraceInput::synthetic("region_bursts", workload)];
    let s = flashlane_core::run(&spec).unwrap();
    assert!(s.warnings.is_empty(), "{switches:?}: {:?}", s.warnings);
    s
}

#[test]
fn pass_lowers_the_region_slowdown_of_bursts_that_arrive_in_clumps() {
    let factor = |s: &Summary| s.region_slowdown.as_ref().unwrap().array_time_factor;
    // About 64 requests at once every 2 ms: a clump holds the end of one burst and the start
    // of the next, so the host queue holds two regions' requests and PASS, 16 at a time,
    // breaks the runs Noop hands over whole. Both sides have PASS's drive behaviour on.
    let clumps = ArrivalSpec::OnOff {
        on_interarrival_ns: 1.0,
        on_duration_ns: 64,
        off_duration_ns: 2_000_000,
    };
    let drive = ["crowded_regions", "region_runs"];
    let (base, pass) = (
        region_bursts(&drive, clumps.clone()),
        region_bursts(&["pass"], clumps),
    );
    let (b, p) = (factor(&base), factor(&pass));
    assert!(b > 1.3, "the bursts crowd their regions: x{b:.3}");
    assert!(p < 0.9 * b, "PASS: region slowdown x{b:.3} -> x{p:.3}");
    assert!(pass.host_scheduler.report.batches > 0);
    // The same bursts at the same mean rate, one at a time (Poisson): the host queue rarely
    // holds two regions' requests, so PASS has nothing to choose and the factor stays.
    let poisson = ArrivalSpec::Poisson {
        mean_interarrival_ns: 31_250.0,
    };
    let (base, pass) = (
        region_bursts(&drive, poisson.clone()),
        region_bursts(&["pass"], poisson),
    );
    let (b, p) = (factor(&base), factor(&pass));
    assert!(b > 1.3 && (p / b - 1.0).abs() < 0.02, "x{b:.3} -> x{p:.3}");
}
