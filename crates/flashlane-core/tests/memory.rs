//! Configs too large to allocate are refused before anything is allocated, with the estimate;
//! geometry counts that overflow u32 are refused by key instead of panicking.

use crate::common::{mqsim_trace, preset, spec};
use flashlane_core::config::Config;
use flashlane_core::run::{upfront_memory, MAX_UPFRONT_BYTES};

#[test]
fn geometry_counts_past_u32_are_refused_by_key() {
    for (a, b) in [("65536", "65536"), ("256", "16777217")] {
        let overrides = vec![
            ("geometry.channels".to_string(), a.to_string()),
            ("geometry.chips_per_channel".to_string(), b.to_string()),
        ];
        let e = Config::from_preset("mqsim-ssd", &overrides)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("geometry.channels x geometry.chips_per_channel"),
            "{e}"
        );
    }
}

/// A 35 TB write buffer (2^32 - 1 slots) used to abort the process on its allocation; it is
/// refused with its estimate, the buffer named as the part that does not fit.
#[test]
fn a_config_too_large_to_allocate_is_refused_with_its_estimate() {
    let trace = mqsim_trace("memory", &[(0, 0, 8192, false)]);
    let huge = preset(
        "mqsim-ssd",
        &[("device.write_buffer_bytes", "35184372080640")],
    );
    let spec = spec(huge, trace.clone());
    let estimate = upfront_memory(&spec);
    assert!(estimate.total() > MAX_UPFRONT_BYTES, "{estimate:?}");
    let e = flashlane_core::run(&spec).unwrap_err().to_string();
    assert!(
        e.contains("this config needs about 120.") && e.contains("write buffer slots 120."),
        "{e}"
    );
    assert!(e.contains("nothing was allocated"), "{e}");
    // The preset itself: its FTL records are a few MiB, and it runs.
    let plain = crate::common::spec(preset("mqsim-ssd", &[]), trace.clone());
    let bytes = upfront_memory(&plain).total();
    assert!(bytes > 1 << 20 && bytes < 64 << 20, "{bytes}");
    flashlane_core::run(&plain).unwrap();
    std::fs::remove_file(trace).unwrap();
}
