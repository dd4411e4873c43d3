//! Energy model closed forms (stats/energy.rs) on the Venice paper's performance-optimized
//! preset: 64 chips, 4 KiB pages, 1.2 B/ns channels, 6 ns commands, tR 3 us, tPROG 100 us,
//! default `[energy]` constants (33 mW active chip, 0.033 mW idle chip, 10.8 mW bus, 1.08 mW
//! link, 0.241 mW router, 0 mW controller). mW x ns = pJ.

use crate::common::{preset, run};
use flashlane_core::config::Config;
use flashlane_core::stats::Summary;

const PAGE: u64 = 4096;
const CHIPS: f64 = 64.0;
const PJ: f64 = 1e-12;

fn quiet(kind: &str) -> Config {
    preset(
        "venice-perf",
        &[
            ("precondition.write_trace_footprint", "false"),
            ("interconnect.kind", kind),
        ],
    )
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want.abs() * 1e-9,
        "{what}: got {got}, want {want}"
    );
}

/// Check every part of the energy against hand-derived link time, flash energy and window.
fn check(
    s: &Summary,
    link_active_ns: u64,
    link_mw: f64,
    flash_pj: f64,
    window_ns: u64,
    routers: f64,
) {
    assert_eq!(s.interconnect.report.link_active_ns, link_active_ns);
    assert_eq!(s.sim_time_ns, window_ns);
    let e = &s.energy;
    let w = window_ns as f64;
    assert_close(e.flash_j, flash_pj * PJ, "flash_j");
    assert_close(
        e.interconnect_j,
        link_active_ns as f64 * link_mw * PJ,
        "interconnect_j",
    );
    assert_close(e.chip_idle_j, CHIPS * 0.033 * w * PJ, "chip_idle_j");
    assert_close(
        e.router_static_j,
        routers * 0.241 * w * PJ,
        "router_static_j",
    );
    assert_eq!(e.controller_static_j, 0.0);
    let total =
        (flash_pj + link_active_ns as f64 * link_mw + CHIPS * 0.033 * w + routers * 0.241 * w) * PJ;
    assert_close(e.total_j, total, "total_j");
    assert_close(e.average_power_w, total / (w * 1e-9), "average_power_w");
    assert_close(
        e.per_request_uj,
        total * 1e6,
        "per_request_uj (one request)",
    );
}

#[test]
fn one_read_on_the_shared_bus() {
    // Command 6 ns + data ceil(4096 / 1.2) = 3414 ns on the channel bus: 3420 ns at 10.8 mW.
    // Array read: 33 mW x 3000 ns = 99 000 pJ. Window: 6 + 3000 + 3414 = 6420 ns. No routers.
    let s = run(
        quiet("shared_bus"),
        "energy-bus-read",
        &[(0, 0, PAGE, true)],
    );
    check(&s, 3420, 10.8, 99_000.0, 6420, 0.0);
}

#[test]
fn one_write_on_the_shared_bus() {
    // Program sequence: command 6 ns + data 3414 ns = 3420 ns at 10.8 mW. Array program:
    // 33 mW x 100 000 ns = 3 300 000 pJ. Window: 3420 + 100 000 ns.
    let s = run(
        quiet("shared_bus"),
        "energy-bus-write",
        &[(0, 0, PAGE, false)],
    );
    check(&s, 3420, 10.8, 3_300_000.0, 103_420, 0.0);
}

#[test]
fn one_read_over_a_two_hop_venice_path() {
    // Logical page 8 sits on row 0, column 1: controller link + one mesh hop = 2 hops, plus the
    // router's port to its chip = 3 links carrying bits. Equation 1 with 1-byte 1 ns links:
    // command (2 + 7) ns, data (2 + 4096) ns; active link time 3 x (9 + 4098) = 12 321 ns at
    // 1.08 mW. The read's one reservation (its data comes back over the command's path) costs
    // a scout round trip of 2 x 2 hops x 2 ns = 8 ns, so the window is (8 + 9) + 3000 + 4098
    // = 7115 ns; 64 routers x 0.241 mW over it.
    let s = run(
        quiet("venice"),
        "energy-venice-read",
        &[(0, 8 * PAGE, PAGE, true)],
    );
    check(&s, 12_321, 1.08, 99_000.0, 7115, CHIPS);
}

#[test]
fn one_write_over_a_two_hop_venice_path() {
    // One program sequence of 7 + 4096 bytes: (2 + 4103) ns on 3 links = 12 315 ns at 1.08 mW;
    // window 8 (scout) + 4105 + 100 000 ns.
    let s = run(
        quiet("venice"),
        "energy-venice-write",
        &[(0, 8 * PAGE, PAGE, false)],
    );
    check(&s, 12_315, 1.08, 3_300_000.0, 104_113, CHIPS);
}

#[test]
fn energy_keys_override_and_bad_values_are_rejected() {
    let mut config = quiet("shared_bus");
    config.energy.flash_read_nj = Some(50.0);
    let s = run(config.clone(), "energy-override", &[(0, 0, PAGE, true)]);
    assert_close(s.energy.flash_j, 50e-9, "given read energy");
    config.energy.link_active_mw = -1.0;
    let err = config.validate().unwrap_err();
    assert!(err.contains("energy.link_active_mw"), "{err}");
}
