//! Progress reports: the simulation phase is announced when it starts (records 0, after the
//! footprint pass and preconditioning), so a display measures its rate from there.

use crate::common::{mqsim_trace, preset, spec};
use flashlane_core::{Phase, Progress};

#[test]
fn the_simulation_phase_is_reported_when_it_starts() {
    let requests: Vec<crate::common::Req> = (0..2000u64)
        .map(|i| (i * 10_000, (i % 700) * 8192, 8192, i % 3 == 0))
        .collect();
    let path = mqsim_trace("progress", &requests);
    let config = preset("mqsim-ssd", &[("precondition.fill_fraction", "0.05")]);
    let mut reports: Vec<Progress> = Vec::new();
    flashlane_core::run_with_progress(&spec(config, path.clone()), &mut |p| reports.push(p))
        .unwrap();
    std::fs::remove_file(path).unwrap();
    let first = reports
        .iter()
        .position(|p| p.phase == Phase::Simulation)
        .expect("a simulation report");
    assert!(reports[..first]
        .iter()
        .all(|p| p.phase == Phase::FootprintPass));
    assert_eq!(
        reports[first],
        Progress {
            phase: Phase::Simulation,
            records: 0,
            total_records: Some(2000)
        }
    );
    assert_eq!(reports.last().unwrap().records, 2000);
}
