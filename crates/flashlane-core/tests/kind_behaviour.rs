//! Behaviour every device scheduler and every interconnect owes the simulation, checked for
//! each pair of kinds (`DeviceSchedulerConfig::NAMES` x `InterconnectConfig::NAMES`, so a kind
//! added to either list is checked with no edit here) on random traces over a small drive that
//! is 90 % full, so garbage collection runs among the host's operations:
//!
//! * every request completes, and every one is measured (no transaction is lost or served
//!   twice: a lost one would leave its request open, and the run would end without it);
//! * every read returns the last version written (`--check-integrity`), through GC;
//! * the same inputs give the same summary;
//! * the figures stay in their ranges: chip utilization and the conflict-free share in
//!   [0, 1], and the ideal interconnect never makes a transfer wait for its path.

use crate::common::{comparable, mqsim_trace, spec, Req};
use flashlane_core::config::Config;
use flashlane_core::device::DeviceSchedulerConfig;
use flashlane_core::interconnect::InterconnectConfig;
use flashlane_core::stats::Summary;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

/// 4 channels x 2 chips (NoSSD's 8 controllers need 4 channels), 2 planes of 16 blocks of 16
/// pages of 4 KiB: 8 MiB raw.
fn small_drive(device: &str, interconnect: &str) -> Config {
    let overrides: Vec<(String, String)> = [
        ("geometry.channels", "4"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "2"),
        ("geometry.blocks_per_plane", "16"),
        ("geometry.pages_per_block", "16"),
        ("geometry.page_bytes", "4096"),
        ("ftl.overprovisioning_fraction", "0.2"),
        ("ftl.gc_threshold_fraction", "0.1"),
        ("precondition.fill_fraction", "0.9"),
        ("device.scheduler.kind", device),
        ("interconnect.kind", interconnect),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    Config::from_preset("mqsim-ssd", &overrides)
        .unwrap_or_else(|e| panic!("{device} on {interconnect}: {e}"))
}

/// `n` random requests of 1-4 pages within the first 5 MiB of the logical space (its 6.4 MiB
/// are 90 % filled), arriving 0-`max_gap_ns` apart.
fn requests(seed: u64, n: usize, read_share: f64, max_gap_ns: u64) -> Vec<Req> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let span_pages = (5 << 20) / 4096;
    let mut t = 0;
    (0..n)
        .map(|_| {
            t += rng.random_range(0..=max_gap_ns);
            let pages = rng.random_range(1..=4u64);
            let offset = rng.random_range(0..span_pages - pages) * 4096;
            (t, offset, pages * 4096, rng.random_bool(read_share))
        })
        .collect()
}

fn run(config: Config, name: &str, requests: &[Req]) -> Summary {
    let path = mqsim_trace(name, requests);
    let mut spec = spec(config, path.clone());
    spec.check_integrity = true;
    let summary = flashlane_core::run(&spec);
    let _ = std::fs::remove_file(path);
    summary.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check_pair(device: &str, interconnect: &str, trace: &[Req]) -> Result<(), TestCaseError> {
    let what = format!("{device} on {interconnect}");
    let s = run(
        small_drive(device, interconnect),
        &what.replace(' ', "-"),
        trace,
    );
    let n = trace.len() as u64;
    let reads = trace.iter().filter(|r| r.3).count() as u64;
    let r = &s.figures.requests;
    prop_assert_eq!(r.completed, n, "{}: completed", what);
    prop_assert_eq!(
        (r.reads, r.writes),
        (reads, n - reads),
        "{}: reads, writes",
        what
    );
    prop_assert_eq!(s.figures.latency_us.all.count, n, "{}: measured", what);
    prop_assert_eq!(s.integrity_violations, Some(0), "{}: stale reads", what);
    prop_assert!(
        (0.0..=1.0).contains(&s.chips.utilization),
        "{}: utilization",
        what
    );
    let free = s.request_paths.conflict_free_fraction;
    prop_assert!(
        (0.0..=1.0).contains(&free),
        "{}: conflict-free {}",
        what,
        free
    );
    if interconnect == "ideal" {
        let c = &s.conflicts;
        prop_assert_eq!(
            (c.read_path_wait_us, c.write_path_wait_us),
            (0.0, 0.0),
            "{}",
            what
        );
        prop_assert_eq!(free, 1.0, "{}: a transfer waited for its path", what);
    }
    let again = run(
        small_drive(device, interconnect),
        &format!("{what}-again"),
        trace,
    );
    prop_assert_eq!(
        comparable(&s),
        comparable(&again),
        "{}: not deterministic",
        what
    );
    Ok(())
}

proptest! {
    // Each case runs every pair twice (30 pairs today, about 0.15 s a case).
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn every_device_scheduler_on_every_interconnect_completes_each_request_correctly(
        seed in any::<u64>(),
        n in 50usize..400,
        read_share in 0.0f64..1.0,
        max_gap_ns in prop::sample::select(vec![0u64, 20_000, 200_000]),
    ) {
        let trace = requests(seed, n, read_share, max_gap_ns);
        for device in DeviceSchedulerConfig::NAMES {
            for interconnect in InterconnectConfig::NAMES {
                check_pair(device, interconnect, &trace)?;
            }
        }
    }
}

#[test]
fn the_pairs_gc_runs_among_host_operations() {
    // The drive and trace above make GC run (else "through GC" above would not be tested).
    let trace = requests(7, 400, 0.3, 20_000);
    let s = run(small_drive("out_of_order", "shared_bus"), "kind-gc", &trace);
    assert!(s.gc.runs > 0, "no GC: {:?}", s.gc);
}
