//! Conservation, data integrity through garbage collection, determinism and clear errors.

use crate::common::{comparable, mqsim_trace, preset, run, spec, Req};
use flashlane_core::config::Config;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

/// A small drive so garbage collection runs within a few thousand writes.
fn small_drive(extra: &[(&str, &str)]) -> Config {
    let mut overrides = vec![
        ("geometry.channels", "2"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "2"),
        ("geometry.blocks_per_plane", "32"),
        ("geometry.pages_per_block", "16"),
        ("geometry.page_bytes", "4096"),
        ("ftl.overprovisioning_fraction", "0.2"),
        ("ftl.gc_threshold_fraction", "0.1"),
    ];
    overrides.extend_from_slice(extra);
    preset("mqsim-ssd", &overrides)
}

fn random_requests(seed: u64, n: usize, span_bytes: u64, read_share: f64) -> Vec<Req> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut t = 0;
    (0..n)
        .map(|_| {
            t += rng.random_range(0..40_000);
            let pages = rng.random_range(1..=4u64);
            let offset = rng.random_range(0..span_bytes / 4096 - pages) * 4096;
            (t, offset, pages * 4096, rng.random_bool(read_share))
        })
        .collect()
}

#[test]
fn reads_return_the_last_write_through_garbage_collection() {
    let config = small_drive(&[("precondition.fill_fraction", "0.9")]);
    let capacity = (2 * 2 * 2 * 32 * 16) as f64 * 4096.0 * 0.8;
    let requests = random_requests(3, 20_000, (capacity * 0.9) as u64, 0.4);
    let path = mqsim_trace("integrity", &requests);
    let mut spec = spec(config, path.clone());
    spec.check_integrity = true;
    let s = flashlane_core::run(&spec).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(s.figures.requests.completed, 20_000);
    assert!(s.gc.runs > 100, "GC ran only {} times", s.gc.runs);
    assert!(s.flash.erases > 0 && s.flash.copybacks > 0);
    assert!(s.waf > 1.0);
    assert_eq!(s.integrity_violations, Some(0));
}

#[test]
fn same_inputs_give_the_same_bytes() {
    let requests = random_requests(5, 3000, 1 << 30, 0.7);
    let config = preset("ssdsim-mlc-8x8", &[("precondition.fill_fraction", "0.01")]);
    let a = run(config.clone(), "det-a", &requests);
    let b = run(config, "det-b", &requests);
    assert_eq!(comparable(&a), comparable(&b));
}

#[test]
fn warmup_requests_are_simulated_but_not_measured() {
    let requests = random_requests(9, 1000, 1 << 28, 0.5);
    let path = mqsim_trace("warmup", &requests);
    let mut spec = spec(preset("mqsim-ssd", &[]), path.clone());
    spec.warmup_requests = 300;
    let s = flashlane_core::run(&spec).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(s.figures.requests.warmup, 300);
    assert_eq!(s.figures.requests.completed, 700);
    assert_eq!(s.figures.latency_us.all.count, 700);
    // The window starts at the arrival of request 300.
    let window_start = requests[300].0 - requests[0].0;
    let last_arrival = requests[999].0 - requests[0].0;
    assert!(s.sim_time_ns >= last_arrival - window_start);
}

#[test]
fn max_requests_stops_reading() {
    let requests = random_requests(11, 500, 1 << 28, 0.5);
    let path = mqsim_trace("max", &requests);
    let mut spec = spec(preset("mqsim-ssd", &[]), path.clone());
    spec.max_requests = Some(123);
    let s = flashlane_core::run(&spec).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(s.trace.records, 123);
    assert_eq!(s.figures.requests.completed, 123);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Every request completes exactly once, whatever the queues, schedulers and allocation.
    #[test]
    fn every_request_completes_exactly_once(
        seed in 0u64..1000,
        n in 1usize..400,
        host_queue in 1u32..70,
        device_depth in 1u32..40,
        in_order in any::<bool>(),
        dynamic in any::<bool>(),
        ideal in any::<bool>(),
    ) {
        let requests = random_requests(seed, n, 4 << 20, 0.5);
        let host_queue = host_queue.to_string();
        let device_depth = device_depth.to_string();
        let mut extra = vec![
            ("host.queue_length_requests", host_queue.as_str()),
            ("device.queue_depth_requests", device_depth.as_str()),
            ("precondition.fill_fraction", "0.5"),
        ];
        if in_order { extra.push(("device.scheduler.kind", "in_order")); }
        if dynamic { extra.push(("ftl.allocation.kind", "dynamic")); }
        if ideal { extra.push(("interconnect.kind", "ideal")); }
        let s = run(small_drive(&extra), &format!("prop-{seed}-{n}"), &requests);
        let reads = requests.iter().filter(|r| r.3).count() as u64;
        prop_assert_eq!(s.figures.requests.completed, n as u64);
        prop_assert_eq!(s.figures.requests.reads, reads);
        prop_assert_eq!(s.figures.latency_us.all.count, n as u64);
        prop_assert_eq!(s.flash.reads + s.flash.programs,
            requests.iter().map(|r| r.2 / 4096).sum::<u64>());
    }
}

fn error_text(result: Result<impl std::fmt::Debug, flashlane_core::Error>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn unknown_preset_is_named() {
    let e = error_text(Config::from_preset("nope", &[]));
    assert!(
        e.contains("unknown preset `nope`") && e.contains("mqsim-ssd"),
        "{e}"
    );
}

#[test]
fn unknown_config_key_names_key_file_and_line() {
    let text = flashlane_core::config::preset_text("mqsim-ssd")
        .unwrap()
        .replace("page_read_ns", "page_raed_ns");
    let path = std::env::temp_dir().join(format!("flashlane-{}-bad.toml", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let e = error_text(Config::from_file(&path, &[]));
    std::fs::remove_file(&path).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("page_raed_ns"))
        .unwrap()
        + 1;
    assert!(e.contains("page_raed_ns"), "{e}");
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains(&format!("line {line}")), "{e}");
}

#[test]
fn bad_values_and_override_keys_are_named() {
    let e = error_text(Config::from_preset(
        "mqsim-ssd",
        &[("ftl.overprovisioning_fraction".into(), "2".into())],
    ));
    assert!(e.contains("ftl.overprovisioning_fraction"), "{e}");
    let e = error_text(Config::from_preset(
        "mqsim-ssd",
        &[("ftl.over_provisioning".into(), "0.2".into())],
    ));
    assert!(
        e.contains("over_provisioning") && e.contains("--set"),
        "{e}"
    );
    let e = error_text(Config::from_preset(
        "mqsim-ssd",
        &[("timing.page_read_ns".into(), "fast".into())],
    ));
    assert!(
        e.contains("page_read_ns") && e.contains("--set timing.page_read_ns=fast"),
        "{e}"
    );
    let e = error_text(Config::from_preset(
        "mqsim-ssd",
        &[("host.scheduler.kind".into(), "magic".into())],
    ));
    assert!(e.contains("magic"), "{e}");
}

#[test]
fn malformed_trace_line_names_file_line_and_text() {
    let path = std::env::temp_dir().join(format!("flashlane-{}-bad.mqsim", std::process::id()));
    std::fs::write(&path, "0 0 0 8 1\n100 0 8 eight 1\n").unwrap();
    let e = error_text(flashlane_core::run(&spec(
        preset("mqsim-ssd", &[]),
        path.clone(),
    )));
    std::fs::remove_file(&path).unwrap();
    assert!(e.contains(&format!("{}:2", path.display())), "{e}");
    assert!(e.contains("100 0 8 eight 1"), "{e}");
}

#[test]
fn requests_past_capacity_are_errors() {
    let path = mqsim_trace("past", &[(0, 1 << 40, 4096, true)]);
    let result = flashlane_core::run(&spec(preset("ssdsim-mlc-8x8", &[]), path.clone()));
    std::fs::remove_file(path).unwrap();
    let e = error_text(result);
    assert!(
        e.contains("past the") && e.contains("--fold-addresses"),
        "{e}"
    );
}

#[test]
fn waiting_for_room_in_the_host_queue_counts_in_latency() {
    // With FIFO scheduling the host queue length only moves where requests wait, so latency
    // must not depend on it — including for requests that arrived while the queue was full.
    let requests = random_requests(21, 2000, 1 << 26, 0.6);
    let burst: Vec<Req> = requests
        .iter()
        .map(|r| (r.0 / 100, r.1, r.2, r.3))
        .collect();
    let short = run(
        preset(
            "mqsim-ssd",
            &[
                ("host.queue_length_requests", "1"),
                ("device.queue_depth_requests", "4"),
            ],
        ),
        "hq1",
        &burst,
    );
    let long = run(
        preset(
            "mqsim-ssd",
            &[
                ("host.queue_length_requests", "512"),
                ("device.queue_depth_requests", "4"),
            ],
        ),
        "hq512",
        &burst,
    );
    assert!(
        short.figures.time_split_us.host_queue > 100.0,
        "the burst must back up: {}",
        short.figures.time_split_us.host_queue
    );
    assert_eq!(short.figures.latency_us, long.figures.latency_us);
    assert_eq!(short.figures.time_split_us, long.figures.time_split_us);
}

#[test]
fn host_queue_occupancy_obeys_littles_law_and_counts_time_full() {
    // A burst into a queue that never fills: every request's host-queue time is spent inside
    // the queue, so the time-weighted mean occupancy times the window is the sum of those
    // times (Little's law, exactly).
    let requests = random_requests(22, 2000, 1 << 26, 0.6);
    let burst: Vec<Req> = requests
        .iter()
        .map(|r| (r.0 / 100, r.1, r.2, r.3))
        .collect();
    let roomy = run(
        preset(
            "mqsim-ssd",
            &[
                ("host.queue_length_requests", "4096"),
                ("device.queue_depth_requests", "4"),
            ],
        ),
        "hq-roomy",
        &burst,
    );
    let q = &roomy.figures.host_queue;
    let waits_ns =
        roomy.figures.time_split_us.host_queue * 1000.0 * roomy.figures.requests.completed as f64;
    let area_ns = q.length_mean * roomy.sim_time_ns as f64;
    assert!(waits_ns > 0.0, "the burst must back up");
    assert!(
        (area_ns - waits_ns).abs() <= 1e-6 * waits_ns,
        "occupancy integral {area_ns} vs summed host-queue waits {waits_ns}"
    );
    assert_eq!(q.capacity_requests, 4096);
    assert_eq!(q.full_fraction, 0.0);
    assert!(q.length_max > 4 && q.length_max < 4096, "{q:?}");
    // A queue of one fills at once and stays full while the burst backs up.
    let tight = run(
        preset(
            "mqsim-ssd",
            &[
                ("host.queue_length_requests", "1"),
                ("device.queue_depth_requests", "4"),
            ],
        ),
        "hq-tight",
        &burst,
    );
    let q = &tight.figures.host_queue;
    assert_eq!(q.length_max, 1);
    assert!(q.full_fraction > 0.5, "{q:?}");
    assert!((q.length_mean - q.full_fraction).abs() < 1e-9, "{q:?}");
}
