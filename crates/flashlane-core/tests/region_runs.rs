//! PASS's drive behaviour, second reading (`device.region_runs`): a request's array times slow
//! with its place in a run of requests handed to the device in a row to one region.

use crate::common::{preset, preset_error, run, Req};

const MIB: u64 = 1 << 20;
/// pass-ssd1's tPROG, us.
const PROGRAM_US: f64 = 900.0;

/// 32 writes of 4 KiB arriving together in this order: all in region 0 (logical pages 0..31),
/// or alternating between regions 0 and 1.
fn writes(alternate: bool) -> Vec<Req> {
    (0..32u64)
        .map(|i| {
            let offset = if alternate {
                (i % 2) * MIB + (i / 2) * 4096
            } else {
                i * 4096
            };
            (0, offset, 4096, false)
        })
        .collect()
}

/// The runs' curve: x1 up to the 8th request in a row, x1.25 at the 16th, x2 at the 64th.
const RUNS: [(&str, &str); 3] = [
    ("device.region_runs.region_bytes", "1048576"),
    ("device.region_runs.run_length_requests", "[1, 8, 16, 64]"),
    (
        "device.region_runs.service_time_factor",
        "[1.0, 1.0, 1.25, 2.0]",
    ),
];

fn summary(requests: &[Req], extra: &[(&str, &str)], name: &str) -> flashlane_core::stats::Summary {
    // All 32 are handed to the device at time 0, in trace order (Noop, 64 device slots).
    let mut overrides = vec![("device.queue_depth_requests", "64")];
    overrides.extend_from_slice(extra);
    run(preset("pass-ssd1", &overrides), name, requests)
}

/// Sum over the places n = 1..=32 of a run of (factor(n) - 1) for the curve of `RUNS`:
/// places 9..=16 add 0.25 x m/8 (m = 1..=8): 0.25 x 36/8 = 1.125; places 17..=32 add
/// 0.25 + 0.75 x m/48 (m = 1..=16): 16 x 0.25 + 0.75 x 136/48 = 6.125. Total 7.25.
const EXTRA_FACTOR_SUM: f64 = 7.25;

#[test]
fn a_run_of_32_to_one_region_slows_by_its_places_and_alternating_does_not() {
    // Derivation. pass-ssd1 stripes logical pages channel, chip, die, plane first: pages 0..31
    // land on 32 different dies, one write each. A write's latency is its wait for the channel,
    // its transfer, and its tPROG; the channel transfers come before any program and in the
    // same order whatever tPROG is, and no die has a second write waiting. So the option changes
    // the write at place n of the run by exactly its array time's growth, tPROG x factor(n)
    // rounded to the ns, less tPROG. For places 17..=32, 900 000 ns x m/64 is a half ns for odd
    // m, rounded up: 8 x 0.5 ns more. The mean write latency grows by
    // (900 us x 7.25 + 0.004 us) / 32 = 203.906375 us.
    let off = summary(&writes(false), &[], "run-off");
    let on = summary(&writes(false), &RUNS, "run-on");
    assert_eq!(on.figures.requests.completed, 32);
    let grown = on.figures.latency_us.write.mean - off.figures.latency_us.write.mean;
    let expected = (PROGRAM_US * EXTRA_FACTOR_SUM + 0.004) / 32.0;
    assert!((grown - expected).abs() < 1e-6, "{grown} vs {expected}");
    // The last write (place 32, factor 1.25 + 0.75 x 16/48 = 1.5) is the slowest.
    assert!(on.sim_time_ns > off.sim_time_ns);

    // Alternating between two regions: every request is first of its run (factor 1), so the
    // run is byte-identical to the option off.
    let off = summary(&writes(true), &[], "alternate-off");
    let on = summary(&writes(true), &RUNS, "alternate-on");
    assert_eq!(off.figures.latency_us, on.figures.latency_us);
    assert_eq!(off.sim_time_ns, on.sim_time_ns);
    assert_eq!(off.figures.requests, on.figures.requests);
}

#[test]
fn with_region_contention_on_too_the_factors_multiply() {
    // A flat crowd curve (x2 at any number outstanding) and the runs' curve: the write at place
    // n takes tPROG x 2 x factor(n), so against the option off it grows by tPROG x
    // (2 factor(n) - 1); summed over the 32 places: 900 us x (2 x (32 + 7.25) - 32) =
    // 900 us x 46.5, a mean of 1307.8125 us (same derivation as the test above; 2 factor(n) is
    // a multiple of 1/32, so every array time is a whole ns).
    let mut both = RUNS.to_vec();
    both.extend([
        ("device.region_contention.region_bytes", "1048576"),
        ("device.region_contention.outstanding_requests", "[1]"),
        ("device.region_contention.service_time_factor", "[2.0]"),
    ]);
    let off = summary(&writes(false), &[], "both-off");
    let on = summary(&writes(false), &both, "both-on");
    let grown = on.figures.latency_us.write.mean - off.figures.latency_us.write.mean;
    let expected = PROGRAM_US * (2.0 * (32.0 + EXTRA_FACTOR_SUM) - 32.0) / 32.0;
    assert!((grown - expected).abs() < 1e-6, "{grown} vs {expected}");
}

#[test]
fn a_bad_curve_is_refused_naming_the_key() {
    let error = |extra: &[(&str, &str)]| {
        let mut o = RUNS.to_vec();
        o.extend_from_slice(extra);
        preset_error("pass-ssd1", &o)
    };
    let e = error(&[("device.region_runs.run_length_requests", "[1, 16, 8, 64]")]);
    assert!(
        e.contains("device.region_runs.run_length_requests must increase: [1, 16, 8, 64]"),
        "{e}"
    );
    let e = error(&[(
        "device.region_runs.service_time_factor",
        "[1.0, 0.9, 1.25, 2.0]",
    )]);
    assert!(
        e.contains("device.region_runs.service_time_factor 0.9 must be a number in [1, 1000]"),
        "{e}"
    );
    let e = error(&[("device.region_runs.service_time_factor", "[1.0, 2.0]")]);
    assert!(
        e.contains("device.region_runs: run_length_requests and service_time_factor must be")
            && e.contains("got 4 and 2"),
        "{e}"
    );
    let e = error(&[("device.region_runs.run_length", "[1]")]);
    assert!(e.contains("run_length"), "{e}");
}
