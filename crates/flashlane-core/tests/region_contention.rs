//! PASS's drive behaviour (`device.region_contention`): operations of a region slow down only
//! while more requests are outstanding to it than the curve's flat part allows.

use crate::common::{preset, preset_error, run, Req};

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
    assert_eq!(off.figures.latency_us, on.figures.latency_us);
    assert_eq!(off.sim_time_ns, on.sim_time_ns);
    // The summary says so: 64 host programs (4 KiB pages), none slowed; absent with the key off.
    let slowdown = on.region_slowdown.as_ref().unwrap();
    assert_eq!(
        (slowdown.host_operations, slowdown.slowed_operations),
        (64, 0)
    );
    assert_eq!(slowdown.array_time_factor, 1.0);
    assert!(off.region_slowdown.is_none());
    // All 64 in one region: its programs stretch (up to 3x tPROG), so they take longer.
    let crowded = burst(1);
    let off = summary(&crowded, false, "crowded-off");
    let on = summary(&crowded, true, "crowded-on");
    assert!(
        on.figures.latency_us.write.mean > off.figures.latency_us.write.mean,
        "{} vs {}",
        on.figures.latency_us.write.mean,
        off.figures.latency_us.write.mean
    );
    assert!(on.sim_time_ns > off.sim_time_ns);
    assert_eq!(on.figures.requests.completed, 64);
    // A program slows when more than 8 requests are outstanding in the region as it gets its
    // path: so the early ones do (up to 3x), the last 8 do not.
    let slowdown = on.region_slowdown.as_ref().unwrap();
    assert_eq!(slowdown.host_operations, 64);
    assert!(
        (1..=56).contains(&slowdown.slowed_operations),
        "{slowdown:?}"
    );
    assert!((1.0..=3.0).contains(&slowdown.array_time_factor) && slowdown.array_time_factor > 1.0);
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

/// A `flashlane probe` JSON with one measured read curve for 1 MiB regions (peak at 8: the
/// factors are 1, 1, 1.5, 3) and a write curve for another size.
fn probe_json(dir: &std::path::Path) -> std::path::PathBuf {
    let point = |k: u32, mib: f64| {
        format!(
            r#"{{"outstanding_requests":{k},"requests":100,"iops":{},"mib_per_s":{mib},"mean_latency_us":10.0}}"#,
            mib * 256.0
        )
    };
    let text = format!(
        r#"{{"schema_version":1,"target":{{"path":"x"}},"parallelism":[
        {{"operation":"read","region_bytes":1048576,"block_bytes":4096,"points":[{},{},{},{}],
          "peak_outstanding_requests":8,"service_time_factor":[1,1,1.5,3]}},
        {{"operation":"write","region_bytes":2097152,"block_bytes":4096,"points":[{}],
          "peak_outstanding_requests":1,"service_time_factor":[1]}}]}}"#,
        point(1, 30.0),
        point(8, 90.0),
        point(16, 60.0),
        point(64, 30.0),
        point(1, 10.0)
    );
    let path = dir.join("probe.json");
    std::fs::write(&path, text).unwrap();
    path
}

/// `device.region_contention.probe_path` reads the measured curve as the points the mapping of
/// docs/models/pass.md gives, and the run equals one given those points directly.
#[test]
fn a_probe_json_gives_the_curve() {
    let dir = crate::common::ScratchDir::new("probe-curve");
    let probe = probe_json(&dir);
    let probe_text = probe.display().to_string();
    let base = [
        ("device.queue_depth_requests", "64"),
        ("device.region_contention.region_bytes", "1048576"),
    ];
    let mut from_probe = base.to_vec();
    from_probe.push(("device.region_contention.probe_path", &probe_text));
    let config = preset("pass-ssd1", &from_probe);
    let c = config.device.region_contention.clone().unwrap();
    assert_eq!(c.outstanding_requests, vec![1, 8, 16, 64]);
    assert_eq!(c.service_time_factor, vec![1.0, 1.0, 1.5, 3.0]);
    let mut given = base.to_vec();
    given.extend([
        (
            "device.region_contention.outstanding_requests",
            "[1, 8, 16, 64]",
        ),
        (
            "device.region_contention.service_time_factor",
            "[1.0, 1.0, 1.5, 3.0]",
        ),
    ]);
    let a = run(config, "probe-a", &burst(1));
    let b = run(preset("pass-ssd1", &given), "probe-b", &burst(1));
    assert_eq!(a.figures.latency_us, b.figures.latency_us);
    assert_eq!(a.sim_time_ns, b.sim_time_ns);

    // Errors name the key and what is wrong.
    let error = |extra: &[(&str, &str)]| {
        let mut o = from_probe.clone();
        o.extend_from_slice(extra);
        preset_error("pass-ssd1", &o)
    };
    let e = error(&[("device.region_contention.region_bytes", "2097152")]);
    assert!(
        e.contains("no read curve") && e.contains("measured region_bytes: 1048576"),
        "{e}"
    );
    let e = error(&[("device.region_contention.probe_operation", "\"write\"")]);
    assert!(e.contains("no write curve") && e.contains("2097152"), "{e}");
    let e = error(&[(
        "device.region_contention.service_time_factor",
        "[1.0, 1.0, 1.0, 1.0]",
    )]);
    assert!(e.contains("give one or the other"), "{e}");
    let e = error(&[(
        "device.region_contention.probe_path",
        "\"/nonexistent/probe.json\"",
    )]);
    assert!(
        e.contains("probe_path /nonexistent/probe.json: cannot read"),
        "{e}"
    );
}
