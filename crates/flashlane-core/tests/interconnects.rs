//! Closed forms and whole-run checks of the interconnect family on the Venice paper's
//! performance-optimized preset (4 KiB pages, 1.2 B/ns channels, 6 ns commands, tR 3 us).

use crate::common::{mqsim_trace, preset, run, spec};
use flashlane_core::config::Config;
use rand::{Rng, SeedableRng};

const T_R: f64 = 3000.0;
const PAGE: u64 = 4096;
/// Venice defaults: scout hop 2 ns, 7-byte commands, 8-bit links at 1 GHz (1 byte/ns).
const SCOUT_HOP: f64 = 2.0;
const COMMAND_BYTES: f64 = 7.0;

fn quiet(kind: &str, extra: &[(&str, &str)]) -> Config {
    let mut overrides = vec![
        ("precondition.write_trace_footprint", "false"),
        ("interconnect.kind", kind),
    ];
    overrides.extend_from_slice(extra);
    preset("venice-perf", &overrides)
}

fn ns(us: f64) -> f64 {
    (us * 1000.0).round()
}

/// Equation 1 with 1-byte links at 1 ns: (hops + bytes) ns.
fn equation_1(hops: f64, bytes: f64) -> f64 {
    hops + bytes
}

/// A transfer over a reservation of its own: the scout's round trip over a free shortest path
/// (hops out, hops back), then Equation 1.
fn venice_transfer(hops: f64, bytes: f64) -> f64 {
    2.0 * hops * SCOUT_HOP + equation_1(hops, bytes)
}

#[test]
fn venice_read_over_k_hops_follows_equation_1() {
    // Channel-first striping: logical page 8 * w sits on channel 0, chip (column) w. Controller
    // 0 sits west of row 0, so chip w is 1 + w links away.
    for w in [0u64, 5] {
        let hops = 1.0 + w as f64;
        // The paper's reading: one reservation, the data comes back over the command's path.
        let held = run(
            quiet("venice", &[]),
            &format!("venice-k{w}"),
            &[(0, 8 * w * PAGE, PAGE, true)],
        );
        let expected = venice_transfer(hops, COMMAND_BYTES) + T_R + equation_1(hops, PAGE as f64);
        assert_eq!(ns(held.figures.latency_us.read.max), expected, "chip {w}");
        // A new reservation for the data: a second scout round trip.
        let again = run(
            quiet(
                "venice",
                &[("interconnect.read_data_path", "new_reservation")],
            ),
            &format!("venice-k{w}-new"),
            &[(0, 8 * w * PAGE, PAGE, true)],
        );
        let expected =
            venice_transfer(hops, COMMAND_BYTES) + T_R + venice_transfer(hops, PAGE as f64);
        assert_eq!(ns(again.figures.latency_us.read.max), expected, "chip {w}");
        for s in [&held, &again] {
            let r = &s.interconnect.report;
            assert_eq!(r.path_hops, r.minimal_hops);
            assert_eq!(r.path_hops, 2 * hops as u64);
        }
        assert_eq!(held.interconnect.report.reservation_attempts, 1);
        assert_eq!(again.interconnect.report.reservation_attempts, 2);
    }
}

#[test]
fn two_reads_to_one_channel_overlap_on_venice_and_ideal_and_serialize_on_the_bus() {
    let reads = [(0, 0, PAGE, true), (0, 8 * PAGE, PAGE, true)];
    let bus_xfer = (PAGE as f64 / 1.2).ceil();
    let single_bus = 6.0 + T_R + bus_xfer;
    let bus = run(quiet("shared_bus", &[]), "pair-bus", &reads);
    assert!(ns(bus.figures.latency_us.read.max) >= single_bus + bus_xfer);
    let ideal = run(quiet("ideal", &[]), "pair-ideal", &reads);
    assert_eq!(ns(ideal.figures.latency_us.read.max), single_bus);
    let venice = run(quiet("venice", &[]), "pair-venice", &reads);
    // The second read takes another controller and a path of at most 3 links: it never waits
    // for the first read's transfer.
    let worst_single = venice_transfer(3.0, COMMAND_BYTES) + T_R + equation_1(3.0, PAGE as f64);
    assert!(ns(venice.figures.latency_us.read.max) <= worst_single);
    assert_eq!(venice.interconnect.report.path_conflicts, 0);
    // Per request (Figure 13): on the bus the second read's command waits 6 ns for the first
    // one's; on Venice and ideal neither request waits.
    assert_eq!(
        (
            bus.request_paths.measured_requests,
            bus.request_paths.conflict_free
        ),
        (2, 1)
    );
    assert_eq!(ideal.request_paths.conflict_free, 2);
    assert_eq!(venice.request_paths.conflict_free_fraction, 1.0);
}

#[test]
fn packetized_bus_halves_transfer_time() {
    let read = [(0, 0, PAGE, true)];
    let bus = run(quiet("shared_bus", &[]), "one-bus", &read);
    let packets = run(
        quiet("packetized", &[("interconnect.packet_header_bytes", "0")]),
        "one-packetized",
        &read,
    );
    assert_eq!(
        ns(bus.figures.latency_us.read.max),
        6.0 + T_R + (PAGE as f64 / 1.2).ceil()
    );
    assert_eq!(
        ns(packets.figures.latency_us.read.max),
        3.0 + T_R + (PAGE as f64 / 2.4).ceil()
    );
}

/// Random 4 KiB requests, 60 % reads, bursts that keep many transfers in flight.
fn busy_trace(seed: u64, count: usize) -> Vec<crate::common::Req> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut t = 0u64;
    (0..count)
        .map(|_| {
            t += rng.random_range(0..1500);
            let page = rng.random_range(0..4096u64);
            (t, page * PAGE, PAGE, rng.random_bool(0.6))
        })
        .collect()
}

#[test]
fn every_interconnect_completes_every_request_with_intact_data_and_deterministically() {
    let requests = busy_trace(7, 3000);
    let path = mqsim_trace("family-integrity", &requests);
    // Venice also with a read's data on a new reservation and with the other resend policy.
    let venice_variants = [
        ("interconnect.read_data_path", "new_reservation"),
        ("interconnect.scout_retry", "after_reservation_end"),
    ];
    for (kind, variant) in [
        ("shared_bus", None),
        ("ideal", None),
        ("packetized", None),
        ("pnssd", None),
        ("nossd", None),
        ("venice", None),
        ("venice", Some(venice_variants[0])),
        ("venice", Some(venice_variants[1])),
    ] {
        let mut overrides = vec![
            ("interconnect.kind", kind),
            ("precondition.write_trace_footprint", "true"),
        ];
        overrides.extend(variant);
        let kind = format!("{kind} {variant:?}");
        let mut spec = spec(preset("venice-perf", &overrides), path.clone());
        spec.check_integrity = true;
        let first = flashlane_core::run(&spec).unwrap();
        assert_eq!(
            first.figures.requests.completed,
            requests.len() as u64,
            "{kind}"
        );
        assert_eq!(first.integrity_violations, Some(0), "{kind}");
        let again = flashlane_core::run(&spec).unwrap();
        assert_eq!(
            first.figures.latency_us.read.mean, again.figures.latency_us.read.mean,
            "{kind}"
        );
        assert_eq!(
            first.interconnect.report, again.interconnect.report,
            "{kind}"
        );
    }
    let _ = std::fs::remove_file(path);
}

#[test]
fn mesh_shapes_4x16_8x8_16x4_run_on_venice_and_nossd() {
    let requests = busy_trace(11, 800);
    for (rows, columns) in [("4", "16"), ("8", "8"), ("16", "4")] {
        for kind in ["venice", "nossd"] {
            let s = run(
                quiet(
                    kind,
                    &[
                        ("geometry.channels", rows),
                        ("geometry.chips_per_channel", columns),
                    ],
                ),
                &format!("shape-{kind}-{rows}x{columns}"),
                &requests,
            );
            assert_eq!(
                s.figures.requests.completed,
                requests.len() as u64,
                "{kind} {rows}x{columns}"
            );
            let r = s.interconnect.report;
            assert!(r.path_hops >= r.minimal_hops, "{kind} {rows}x{columns}");
            assert!(
                r.link_utilization_max_fraction <= 1.0 + 1e-9,
                "{kind} {rows}x{columns}"
            );
        }
    }
}

#[test]
fn too_many_controllers_is_a_clear_error() {
    let overrides = [
        ("interconnect.kind".to_string(), "venice".to_string()),
        (
            "interconnect.controllers_count".to_string(),
            "17".to_string(),
        ),
    ];
    let err = Config::from_preset("venice-perf", &overrides).unwrap_err();
    assert!(
        err.to_string().contains("interconnect.controllers_count"),
        "{err}"
    );
}
