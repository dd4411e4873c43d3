//! PASS's drive behaviour (`device.region_contention`): operations of a region slow down only
//! while more requests are outstanding to it than the curve's flat part allows.

mod common;

use common::{preset, run, Req};

const MIB: u64 = 1 << 20;

/// 64 writes of 4 KiB arriving together, `regions` 1 MiB regions holding them evenly. Writes:
/// their program time (900 us) is what a crowd stretches; a read burst on this drive waits for
/// its channel (8 pages of 102 us each), which hides a longer tR.
fn burst(regions: u64) -> Vec<Req> {
    (0..64u64)
        .map(|i| {
            let region = i % regions;
            (0, region * MIB + (i / regions) * 4096, 4096, false)
        })
        .collect()
}

fn summary(requests: &[Req], contention: bool, name: &str) -> flashlane_core::stats::Summary {
    let mut overrides = vec![("device.queue_depth_requests", "64")];
    if contention {
        overrides.extend([
            ("device.region_contention.region_bytes", "1048576"),
            (
                "device.region_contention.outstanding_requests",
                "[1, 8, 64]",
            ),
            (
                "device.region_contention.service_time_factor",
                "[1.0, 1.0, 3.0]",
            ),
        ]);
    }
    run(preset("pass-ssd1", &overrides), name, requests)
}

#[test]
fn a_crowded_region_slows_and_a_spread_load_does_not() {
    // Eight regions of eight requests each: never past the flat part, so nothing changes.
    let spread = burst(8);
    let off = summary(&spread, false, "spread-off");
    let on = summary(&spread, true, "spread-on");
    assert_eq!(off.latency_us, on.latency_us);
    assert_eq!(off.sim_time_ns, on.sim_time_ns);
    // All 64 in one region: its programs stretch (up to 3x tPROG), so they take longer.
    let crowded = burst(1);
    let off = summary(&crowded, false, "crowded-off");
    let on = summary(&crowded, true, "crowded-on");
    assert!(
        on.latency_us.write.mean > off.latency_us.write.mean,
        "{} vs {}",
        on.latency_us.write.mean,
        off.latency_us.write.mean
    );
    assert!(on.sim_time_ns > off.sim_time_ns);
    assert_eq!(on.requests.completed, 64);
}

#[test]
fn a_bad_curve_is_refused_naming_the_key() {
    let e = flashlane_core::config::Config::from_preset(
        "pass-ssd1",
        &[
            (
                "device.region_contention.region_bytes".into(),
                "4096".into(),
            ),
            (
                "device.region_contention.outstanding_requests".into(),
                "[8, 4]".into(),
            ),
            (
                "device.region_contention.service_time_factor".into(),
                "[1.0, 2.0]".into(),
            ),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("device.region_contention.outstanding_requests must increase"),
        "{e}"
    );
}
