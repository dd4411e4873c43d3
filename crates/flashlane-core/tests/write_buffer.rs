//! DRAM write buffer (`device.write_buffer_bytes`): closed-form timing on the MQSim preset,
//! integrity with QSL + WHM + GC, every request completes exactly once.

use crate::common::{mqsim_trace, preset, random_requests, run, sos_small_drive, spec};
use flashlane_core::config::Config;
use proptest::prelude::*;

const CMD: f64 = 21.0;
const T_R: f64 = 75_000.0;
const T_PROG: f64 = 750_000.0;
const PAGE: u64 = 8192;
const DRAM_NS: f64 = 2500.0;

fn xfer(bytes: u64) -> f64 {
    (bytes as f64 / 0.333).ceil()
}

fn close(us: f64, ns: f64) -> bool {
    (us * 1000.0 - ns).abs() < 1e-3
}

/// MQSim preset, nothing preconditioned, a buffer of `pages` pages flushing above `fraction`.
fn buffered(pages: u64, fraction: &str) -> Config {
    let bytes = (pages * PAGE).to_string();
    preset(
        "mqsim-ssd",
        &[
            ("precondition.write_trace_footprint", "false"),
            ("device.write_buffer_bytes", &bytes),
            ("device.write_buffer_page_ns", "2500"),
            ("device.write_buffer_flush_threshold_fraction", fraction),
        ],
    )
}

#[test]
fn a_buffered_write_completes_after_the_dram_time_not_tprog() {
    let s = run(buffered(4, "0.5"), "wb-one-write", &[(0, 0, PAGE, false)]);
    assert!(
        close(s.figures.latency_us.write.max, DRAM_NS),
        "{:?}",
        s.figures.latency_us
    );
    let b = s.write_buffer.unwrap();
    assert_eq!((b.write_pages, b.flushes, b.full_waits), (1, 0, 0));
    assert_eq!(s.flash.programs, 0);
    // Flushing at once (threshold 0) still completes the write from DRAM; the flush runs
    // behind it.
    let s = run(buffered(4, "0"), "wb-eager", &[(0, 0, PAGE, false)]);
    assert!(close(s.figures.latency_us.write.max, DRAM_NS));
    assert_eq!(s.write_buffer.unwrap().flushes, 1);
    assert_eq!(s.flash.programs, 1);
    // Two pages of one request move through the DRAM one after the other.
    let s = run(
        buffered(4, "0.5"),
        "wb-two-pages",
        &[(0, 0, 2 * PAGE, false)],
    );
    assert!(close(s.figures.latency_us.write.max, 2.0 * DRAM_NS));
}

#[test]
fn a_read_hit_costs_the_dram_time_and_a_miss_reads_flash() {
    let s = run(
        buffered(4, "0.5"),
        "wb-read-hit",
        &[
            (0, 0, PAGE, false),
            (10_000, 0, PAGE, true),
            (20_000, 8 * PAGE, PAGE, true),
        ],
    );
    // Two reads: the mean and the max give the other one.
    let hit_us = 2.0 * s.figures.latency_us.read.mean - s.figures.latency_us.read.max;
    assert!(close(hit_us, DRAM_NS), "{:?}", s.figures.latency_us);
    assert!(close(s.figures.latency_us.read.max, CMD + T_R + xfer(PAGE)));
    let b = s.write_buffer.unwrap();
    assert_eq!((b.read_pages, b.read_hits), (2, 1));
    assert_eq!(s.flash.reads, 1);
}

#[test]
fn a_rewrite_in_the_buffer_is_a_write_hit_and_never_reaches_flash() {
    let s = run(
        buffered(4, "0.5"),
        "wb-rewrite",
        &[(0, 0, PAGE, false), (10_000, 0, PAGE, false)],
    );
    let b = s.write_buffer.unwrap();
    assert_eq!((b.write_pages, b.write_hits, b.flushes), (2, 1, 0));
    assert!((b.write_hit_ratio - 0.5).abs() < 1e-12);
    assert!(close(s.figures.latency_us.write.max, DRAM_NS));
}

#[test]
fn a_full_buffer_makes_the_next_write_wait_exactly_until_one_flush_completes() {
    // One slot, flushing only when a write waits: the second write waits for the first
    // page's flush (command, transfer, tPROG), then moves through the DRAM.
    let s = run(
        buffered(1, "1"),
        "wb-full",
        &[(0, 0, PAGE, false), (10_000, PAGE, PAGE, false)],
    );
    let b = s.write_buffer.unwrap();
    assert_eq!((b.full_waits, b.flushes), (1, 1));
    let first_us = 2.0 * s.figures.latency_us.write.mean - s.figures.latency_us.write.max;
    assert!(close(first_us, DRAM_NS), "{:?}", s.figures.latency_us);
    assert!(
        close(
            s.figures.latency_us.write.max,
            CMD + xfer(PAGE) + T_PROG + DRAM_NS
        ),
        "{:?}",
        s.figures.latency_us
    );
}

#[test]
fn a_buffer_smaller_than_a_page_is_refused_with_the_key_named() {
    let overrides = vec![("device.write_buffer_bytes".to_string(), "100".to_string())];
    let err = Config::from_preset("mqsim-ssd", &overrides)
        .and_then(|c| {
            c.validate()
                .map(|_| c)
                .map_err(flashlane_core::Error::Config)
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains("device.write_buffer_bytes"), "{err}");
}

/// The SOS test drive with QSL and WHM on (GC within a few thousand writes).
fn small_drive(extra: &[(&str, &str)]) -> Config {
    let mut overrides = vec![
        ("device.scheduler.queue_size_leveller", "true"),
        ("device.scheduler.write_hit_manager", "true"),
    ];
    overrides.extend_from_slice(extra);
    sos_small_drive(&overrides)
}

#[test]
fn buffered_reads_see_the_newest_data_through_qsl_whm_and_gc_and_the_check_can_fail() {
    let config = small_drive(&[
        ("precondition.fill_fraction", "0.9"),
        ("device.write_buffer_bytes", "131072"),
        ("device.write_buffer_flush_threshold_fraction", "0.25"),
    ]);
    let capacity = (2 * 2 * 2 * 32 * 16) as f64 * 4096.0 * 0.8;
    // Hot small region half the time so rewrites and read hits happen in the buffer.
    let mut requests = random_requests(11, 12_000, (capacity * 0.9) as u64, 0.4, 600_000);
    for (i, r) in requests.iter_mut().enumerate() {
        if i % 2 == 0 {
            r.1 %= 64 * 4096;
        }
    }
    let path = mqsim_trace("wb-integrity", &requests);
    let mut spec = spec(config, path.clone());
    spec.check_integrity = true;
    let s = flashlane_core::run(&spec).unwrap();
    let broken = flashlane_core::run::run_losing_buffer_rewrites_for_test(&spec).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(s.figures.requests.completed, 12_000);
    let b = s.write_buffer.clone().unwrap();
    assert!(s.gc.runs > 100, "GC ran only {} times", s.gc.runs);
    assert!(s.device.moved_writes > 10, "{:?}", s.device);
    assert!(b.write_hits > 100 && b.read_hits > 100, "{b:?}");
    assert!(b.rewrites_while_flushing > 10, "{b:?}");
    assert!(b.full_waits > 0, "{b:?}");
    assert_eq!(s.integrity_violations, Some(0));
    assert!(
        broken.integrity_violations.unwrap() > 0,
        "losing rewrites went unnoticed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Every request completes exactly once with any buffer size, threshold and SOS switches;
    /// every host page is accounted for: reads from DRAM or flash, writes into the buffer,
    /// every flush programmed or cancelled by a write hit.
    #[test]
    fn every_request_completes_exactly_once_with_a_buffer(
        seed in 0u64..1000,
        n in 1usize..300,
        device_depth in 1u32..40,
        span_pages in 8u64..1024,
        gap_ns in 1u64..400_000,
        buffer_pages in 1u64..64,
        threshold in 0u32..=4,
        qsl in any::<bool>(),
        whm in any::<bool>(),
        multiplane in any::<bool>(),
    ) {
        let requests = random_requests(seed, n, span_pages * 4096 + 4 * 4096, 0.4, gap_ns);
        let device_depth = device_depth.to_string();
        let bytes = (buffer_pages * 4096).to_string();
        let fraction = (f64::from(threshold) / 4.0).to_string();
        let b = |x: bool| if x { "true" } else { "false" };
        let extra = vec![
            ("device.queue_depth_requests", device_depth.as_str()),
            ("precondition.fill_fraction", "0.5"),
            ("device.write_buffer_bytes", bytes.as_str()),
            ("device.write_buffer_flush_threshold_fraction", fraction.as_str()),
            ("device.scheduler.queue_size_leveller", b(qsl)),
            ("device.scheduler.write_hit_manager", b(whm)),
            ("device.multiplane", b(multiplane)),
        ];
        let s = run(small_drive(&extra), &format!("wb-prop-{seed}-{n}"), &requests);
        let reads: u64 = requests.iter().filter(|r| r.3).map(|r| r.2 / 4096).sum();
        let writes: u64 = requests.iter().filter(|r| !r.3).map(|r| r.2 / 4096).sum();
        prop_assert_eq!(s.figures.requests.completed, n as u64);
        prop_assert_eq!(s.figures.latency_us.all.count, n as u64);
        let wb = s.write_buffer.clone().unwrap();
        prop_assert_eq!(wb.write_pages, writes);
        prop_assert_eq!(wb.read_pages, reads);
        prop_assert_eq!(s.flash.reads + wb.read_hits, reads);
        prop_assert_eq!(s.flash.programs + s.device.write_hits, wb.flushes);
        prop_assert!(wb.flushes <= writes);
    }
}
