//! Every timing, rate and replay option has a bound that keeps the engine's arithmetic exact;
//! a value past it is refused up front, naming the key. Latencies past a day still get exact
//! percentiles.

use crate::common::{mqsim_trace, preset, spec, Req};
use flashlane_core::config::Config;
use flashlane_core::run::Replay;

fn refused(overrides: &[(&str, &str)]) -> String {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match Config::from_preset("mqsim-ssd", &overrides) {
        Ok(_) => panic!("{overrides:?} accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn zero_and_huge_timings_and_tiny_rates_are_refused_by_key() {
    for key in [
        "timing.page_read_ns",
        "timing.page_program_ns",
        "timing.block_erase_ns",
    ] {
        let e = refused(&[(key, "0")]);
        assert!(e.contains(key) && e.contains("at least 1 ns"), "{e}");
    }
    let near_max = i64::MAX.to_string();
    for key in [
        "timing.page_read_ns",
        "timing.block_erase_ns",
        "timing.command_transfer_ns",
    ] {
        let e = refused(&[(key, &near_max)]);
        assert!(
            e.contains(key) && e.contains("limit of 1099511627776 ns"),
            "{e}"
        );
    }
    let e = refused(&[("timing.channel_bytes_per_ns", "1e-300")]);
    assert!(e.contains("timing.channel_bytes_per_ns = 1e-300"), "{e}");
    // The same bounds reach every duration and ratio key, by name.
    let e = refused(&[
        ("host.scheduler.kind", "deadline"),
        ("host.scheduler.read_expire_ns", &near_max),
    ]);
    assert!(e.contains("host.scheduler.read_expire_ns"), "{e}");
    let e = refused(&[
        ("interconnect.kind", "packetized"),
        ("interconnect.rate_ratio", "1e-9"),
    ]);
    assert!(e.contains("interconnect.rate_ratio"), "{e}");
    // The limits themselves are accepted.
    Config::from_preset(
        "mqsim-ssd",
        &[
            ("timing.page_read_ns".into(), "1099511627776".into()),
            ("timing.page_read_ns".into(), "1".into()),
        ],
    )
    .unwrap();
}

#[test]
fn replay_times_past_the_clock_are_refused() {
    let trace = mqsim_trace("scale", &[(0, 0, 4096, true), (1000, 4096, 4096, true)]);
    let mut scaled = spec(preset("mqsim-ssd", &[]), trace.clone());
    scaled.replay = Replay::OpenLoop { time_scale: 1e30 };
    let e = flashlane_core::run(&scaled).unwrap_err().to_string();
    assert!(
        e.contains("--time-scale 1000000000000000000000000000000"),
        "{e}"
    );
    // Within the scale bound, an arrival that the scale carries past 2^60 ns is refused by
    // record, naming the scale: 2^50 ns x 1e6 is about 1.1e21 ns.
    let far = mqsim_trace("far", &[(0, 0, 4096, true), (1 << 50, 4096, 4096, true)]);
    let mut scaled = spec(preset("mqsim-ssd", &[]), far.clone());
    scaled.replay = Replay::OpenLoop { time_scale: 1e6 };
    let e = flashlane_core::run(&scaled).unwrap_err().to_string();
    assert!(
        e.contains("record 2") && e.contains("2^60 ns") && e.contains("at --time-scale 1000000"),
        "{e}"
    );
    // Unscaled, an arrival past 2^60 ns is refused by record.
    let late = mqsim_trace("late", &[(0, 0, 4096, true), (1 << 62, 4096, 4096, true)]);
    let e = flashlane_core::run(&spec(preset("mqsim-ssd", &[]), late.clone()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("record 2") && e.contains("2^60 ns"), "{e}");
    let near = std::env::temp_dir().join(format!(
        "flashlane-bounds-{}-near.mqsim",
        std::process::id()
    ));
    std::fs::write(&near, format!("0 0 0 8 1\n{} 0 8 8 1\n", u64::MAX - 5)).unwrap();
    let e = flashlane_core::run(&spec(preset("mqsim-ssd", &[]), near.clone()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("record 2") || e.contains(":2"), "{e}");
    for path in [trace, far, late, near] {
        let _ = std::fs::remove_file(path);
    }
}

/// 100,000 writes of 4.29 s each on one plane: the last waits about five days, past the 2^48 ns
/// (3.3 days) the latency histogram used to hold, so its percentiles sat at that top, below
/// the samples.
#[test]
fn percentiles_of_latencies_past_a_day_are_exact() {
    let config = preset(
        "mqsim-ssd",
        &[
            ("geometry.channels", "1"),
            ("geometry.chips_per_channel", "1"),
            ("geometry.dies_per_chip", "1"),
            ("geometry.planes_per_die", "1"),
            ("geometry.blocks_per_plane", "2048"),
            ("geometry.pages_per_block", "64"),
            ("ftl.mapping_cache_bytes", "0"),
            ("timing.page_program_ns", "4294967295"),
        ],
    );
    let page = u64::from(config.geometry.page_bytes);
    let writes: Vec<Req> = (0..100_000u64)
        .map(|i| (0, i * page, page, false))
        .collect();
    let s = crate::common::run(config, "two-days", &writes);
    let w = &s.figures.latency_us.write;
    assert!(w.max > 4.2e11, "{w:?}");
    assert!(w.p999 >= w.max * 0.998 && w.p99 >= w.max * 0.98, "{w:?}");
    assert!(w.p50 >= w.mean * 0.98, "{w:?}");
}
