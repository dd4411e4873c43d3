//! MQSim's platform choices: the read-first device scheduler (`read_first`) and the
//! whole-chip-idle die issue rule (`device.die_issue`), on hand-made cases and under GC.
//!
//! The small drive: one channel, one chip, two dies of one plane, 8 KiB pages, static
//! channel-chip-die-plane striping, so logical page p lives on die p mod 2.

use crate::common::{mqsim_trace, preset, random_requests, run, spec};
use flashlane_core::config::{Config, GcBlockRelease};
use flashlane_core::ftl::cmt::TranslationPagesOnFlash;
use flashlane_core::ftl::UnwrittenReads;
use proptest::prelude::*;

const PAGE: u64 = 8192;

fn drive(extra: &[(&str, &str)]) -> Config {
    let mut o = vec![
        ("geometry.channels", "1"),
        ("geometry.chips_per_channel", "1"),
        ("geometry.dies_per_chip", "2"),
        ("geometry.planes_per_die", "1"),
        ("geometry.blocks_per_plane", "64"),
        ("geometry.pages_per_block", "64"),
        ("ftl.mapping_cache_bytes", "0"),
    ];
    o.extend_from_slice(extra);
    preset("mqsim-ssd", &o)
}

fn ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// Latency of one page read (or program) on an idle drive, ns.
fn alone(read: bool) -> u64 {
    let s = run(drive(&[]), "alone", &[(0, 0, PAGE, read)]);
    ns(if read {
        s.figures.latency_us.read.max
    } else {
        s.figures.latency_us.write.max
    })
}

#[test]
fn whole_chip_idle_runs_dies_of_a_chip_one_after_another() {
    // Reads of pages 0 and 1 (dies 0 and 1) queued together at t = 0. MQSim sends one die's
    // command at a time (TSU_Base::issue_command_to_chip), so the second ends at 2 x READ.
    let read = alone(true);
    let reqs = [(0, 0, PAGE, true), (0, PAGE, PAGE, true)];
    let s = run(
        drive(&[("device.die_issue", "whole_chip_idle")]),
        "chip-2",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * read);
    assert_eq!(ns(2.0 * s.figures.latency_us.read.mean), 3 * read);
    // Independent dies overlap the second read's array time with the first's.
    let s = run(drive(&[]), "die-2", &reqs);
    assert!(ns(s.figures.latency_us.read.max) < 2 * read);
}

#[test]
fn work_arriving_while_a_die_works_waits_for_the_whole_chip() {
    // A read on die 0 at t = 0, a read on die 1 at t = 10 us while die 0 works.
    let read = alone(true);
    let reqs = [(0, 0, PAGE, true), (10_000, PAGE, PAGE, true)];
    let s = run(
        drive(&[("device.die_issue", "whole_chip_idle")]),
        "chip-wait",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * read - 10_000);
    let s = run(drive(&[]), "die-wait", &reqs);
    assert!(ns(s.figures.latency_us.read.max) < 2 * read - 10_000);
}

#[test]
fn read_first_lets_a_read_pass_a_queued_write() {
    // Die 0: a write of page 0 at t = 0 (busy for WRITE), a write of page 2 at t = 10, a read
    // of page 4 at t = 20. Reads first: the read runs when the first write ends (latency
    // WRITE + READ - 20) and the second write after it. Per-chip FIFO (`out_of_order`): the
    // read waits for both writes.
    let (read, write) = (alone(true), alone(false));
    let reqs = [
        (0, 0, PAGE, false),
        (10, 2 * PAGE, PAGE, false),
        (20, 4 * PAGE, PAGE, true),
    ];
    let s = run(
        drive(&[("device.scheduler.kind", "read_first")]),
        "rf",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), write + read - 20);
    assert_eq!(ns(s.figures.latency_us.write.max), 2 * write + read - 10);
    let s = run(drive(&[]), "fifo", &reqs);
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * write + read - 20);
}

/// Random traffic with GC on a small drive: every read returns the last data written.
#[test]
fn read_first_keeps_integrity_through_gc() {
    for die_issue in ["independent", "whole_chip_idle"] {
        let config = crate::common::sos_small_drive(&[
            ("device.scheduler.kind", "read_first"),
            ("geometry.dies_per_chip", "2"),
            ("precondition.fill_fraction", "0.9"),
            ("ftl.mapping_cache_bytes", "4096"),
            ("device.die_issue", die_issue),
        ]);
        let capacity = (2 * 2 * 2 * 2 * 32 * 16) as f64 * 4096.0 * 0.8;
        let requests = random_requests(5, 12_000, (capacity * 0.9) as u64, 0.4, 2_000_000);
        let path = mqsim_trace(&format!("rf-integrity-{die_issue}"), &requests);
        let mut spec = spec(config, path.clone());
        spec.check_integrity = true;
        let s = flashlane_core::run(&spec).unwrap();
        std::fs::remove_file(path).unwrap();
        assert_eq!(s.figures.requests.completed, 12_000);
        assert!(s.gc.runs > 100, "GC ran only {} times", s.gc.runs);
        assert!(s.flash.mapping_reads > 100, "{:?}", s.flash);
        assert_eq!(s.integrity_violations, Some(0), "{die_issue}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Every request completes exactly once under both rules, with or without multi-plane.
    #[test]
    fn every_request_completes_exactly_once(
        seed in 0u64..1000,
        n in 1usize..300,
        device_depth in 1u32..40,
        span_pages in 8u64..1024,
        gap_ns in 1u64..400_000,
        whole_chip in any::<bool>(),
        multiplane in any::<bool>(),
    ) {
        let requests = random_requests(seed, n, span_pages * 4096 + 4 * 4096, 0.4, gap_ns);
        let device_depth = device_depth.to_string();
        let extra = [
            ("device.scheduler.kind", "read_first"),
            ("geometry.dies_per_chip", "2"),
            ("device.queue_depth_requests", device_depth.as_str()),
            ("precondition.fill_fraction", "0.5"),
            ("device.die_issue", if whole_chip { "whole_chip_idle" } else { "independent" }),
            ("device.multiplane", if multiplane { "true" } else { "false" }),
        ];
        let s = run(crate::common::sos_small_drive(&extra), &format!("rf-prop-{seed}-{n}"), &requests);
        let reads = requests.iter().filter(|r| r.3).count() as u64;
        prop_assert_eq!(s.figures.requests.completed, n as u64);
        prop_assert_eq!(s.figures.requests.reads, reads);
        prop_assert_eq!(s.figures.latency_us.all.count, n as u64);
        prop_assert_eq!(s.flash.reads + s.flash.programs,
            requests.iter().map(|r| r.2 / 4096).sum::<u64>());
    }
}

/// Overwrites on a drive with 64 blocks per plane: a floor of 10 blocks on the GC threshold
/// runs exactly as the fraction that gives 10 blocks (ceil(0.15625 x 64)), and collects more
/// than the 0.05 fraction alone (ceil(3.2) = 4 blocks).
#[test]
fn gc_threshold_floor_acts_as_the_matching_fraction() {
    let requests = random_requests(9, 20_000, 40 * 8192 * 64, 0.0, 20_000);
    let gc = |extra: &[(&str, &str)]| {
        let mut o = vec![
            ("precondition.write_trace_footprint", "false"),
            ("ftl.gc_threshold_fraction", "0.05"),
        ];
        o.extend_from_slice(extra);
        run(drive(&o), "gc-floor", &requests)
    };
    let floor = gc(&[("ftl.gc_threshold_min_blocks", "10")]);
    let fraction = gc(&[("ftl.gc_threshold_fraction", "0.15625")]);
    let plain = gc(&[]);
    assert_eq!(floor.gc.runs, fraction.gc.runs);
    assert_eq!(floor.flash.copybacks, fraction.flash.copybacks);
    assert_eq!(
        floor.figures.latency_us.all.mean,
        fraction.figures.latency_us.all.mean
    );
    assert!(plain.gc.runs > 0);
    assert!(
        floor.flash.copybacks > plain.flash.copybacks,
        "{} <= {}",
        floor.flash.copybacks,
        plain.flash.copybacks
    );
}

/// The `mqsim-platform` preset is mqsim-ssd's SSD with MQSim's four platform rules.
#[test]
fn mqsim_platform_preset_sets_mqsim_rules_on_mqsim_default_ssd() {
    let platform = preset("mqsim-platform", &[]);
    let default = preset("mqsim-ssd", &[]);
    assert_eq!(platform.geometry, default.geometry);
    assert_eq!(platform.device.scheduler.name(), "read_first");
    assert_eq!(platform.device.die_issue.name(), "whole_chip_idle");
    assert!(platform.device.multiplane);
    assert_eq!(platform.ftl.gc_threshold_min_blocks, 10);
    assert_eq!(default.ftl.gc_threshold_min_blocks, 0);
    // MQSim's start state: empty, pages allocated on first read, the whole table on flash.
    assert!(!platform.precondition.write_trace_footprint);
    assert_eq!(platform.ftl.unwritten_reads, UnwrittenReads::Allocate);
    assert_eq!(
        platform.ftl.translation_pages_on_flash,
        TranslationPagesOnFlash::All
    );
    assert!(platform.device.multiplane_mapping_reads);
    assert_eq!(default.ftl.unwritten_reads, UnwrittenReads::StaticLocation);
    assert!(!default.device.multiplane_mapping_reads);
    // MQSim's asynchronous GC, GC write frontier and translation write frontier.
    assert_eq!(platform.ftl.gc_block_release, GcBlockRelease::EraseDone);
    assert_eq!(platform.ftl.gc_max_victims_per_plane, 10);
    assert_eq!(platform.ftl.write_stall_below_free_blocks, 10);
    assert!(platform.ftl.gc_separate_write_block);
    assert_eq!(platform.ftl.translation_reserved_blocks_per_plane, 1);
    // Defaults: today's rules everywhere else.
    assert_eq!(default.ftl.gc_block_release, GcBlockRelease::Translation);
    assert_eq!(default.ftl.gc_max_victims_per_plane, 0);
    assert_eq!(default.ftl.write_stall_below_free_blocks, 0);
    assert!(!default.ftl.gc_separate_write_block);
    assert_eq!(default.ftl.translation_reserved_blocks_per_plane, 0);
    for name in flashlane_core::config::preset_names() {
        let config = preset(name, &[]);
        if name != "mqsim-platform" {
            assert_eq!(
                config.ftl.gc_block_release,
                GcBlockRelease::Translation,
                "{name}"
            );
            assert!(!config.ftl.gc_separate_write_block, "{name}");
            assert_eq!(
                config.ftl.translation_reserved_blocks_per_plane, 0,
                "{name}"
            );
        }
    }
    let s = run(
        platform,
        "platform",
        &[(0, 0, PAGE, true), (0, PAGE, PAGE, false)],
    );
    assert_eq!(s.figures.requests.completed, 2);
}

const DEFERRED: [(&str, &str); 4] = [
    ("ftl.gc_block_release", "erase_done"),
    // 32-block planes: 10 victims at once could hold more blocks than the pool has.
    ("ftl.gc_max_victims_per_plane", "2"),
    ("ftl.write_stall_below_free_blocks", "4"),
    ("ftl.gc_separate_write_block", "true"),
];

/// MQSim's asynchronous GC (`ftl.gc_block_release = "erase_done"`) under random traffic with
/// GC, with and without the cached mapping table: every request completes, reads return the
/// last data written, and the writes that waited for a plane's pool were all placed.
#[test]
fn deferred_gc_release_keeps_integrity_and_completes_every_request() {
    for cmt in ["0", "4096"] {
        let mut extra = vec![
            ("device.scheduler.kind", "read_first"),
            ("geometry.dies_per_chip", "2"),
            ("precondition.fill_fraction", "0.9"),
            ("ftl.mapping_cache_bytes", cmt),
            ("device.die_issue", "whole_chip_idle"),
            ("device.multiplane", "true"),
        ];
        let plain = crate::common::sos_small_drive(&extra);
        extra.extend_from_slice(&DEFERRED);
        let config = crate::common::sos_small_drive(&extra);
        let capacity = (2 * 2 * 2 * 2 * 32 * 16) as f64 * 4096.0 * 0.8;
        let requests = random_requests(7, 12_000, (capacity * 0.9) as u64, 0.3, 200_000);
        let path = mqsim_trace(&format!("deferred-gc-{cmt}"), &requests);
        let mut run_spec = spec(config, path.clone());
        run_spec.check_integrity = true;
        let s = flashlane_core::run(&run_spec).unwrap();
        let p = flashlane_core::run(&spec(plain, path.clone())).unwrap();
        std::fs::remove_file(path).unwrap();
        assert_eq!(s.figures.requests.completed, 12_000, "cmt {cmt}");
        assert_eq!(s.integrity_violations, Some(0), "cmt {cmt}");
        assert!(s.gc.runs > 100, "GC ran only {} times", s.gc.runs);
        let writes = requests
            .iter()
            .filter(|r| !r.3)
            .map(|r| r.2 / 4096)
            .sum::<u64>();
        assert_eq!(s.flash.programs, writes, "every host page programmed once");
        // Victims chosen ahead of need, and held until erased, have more valid pages here
        // (43,832 moves against 33,767 with the release at translation).
        assert!(
            s.flash.copybacks > p.flash.copybacks,
            "cmt {cmt}: {} <= {}",
            s.flash.copybacks,
            p.flash.copybacks
        );
    }
}

/// MQSim's asynchronous GC on a plane whose data and stall level do not fit: the host writes
/// that wait for a free block wait forever (every full block entirely valid, none being
/// erased). The run says so, with the plane, its figures and the keys to change, instead of
/// an internal error; with less data the same drive and trace complete.
#[test]
fn a_plane_that_can_never_free_a_block_is_named_with_the_keys_to_change() {
    let deferred = [
        ("ftl.gc_block_release", "erase_done"),
        ("ftl.gc_threshold_min_blocks", "10"),
        ("ftl.gc_max_victims_per_plane", "2"),
        ("ftl.write_stall_below_free_blocks", "10"),
        ("ftl.gc_separate_write_block", "true"),
    ];
    // 64 blocks of 64 pages per plane, 7 % over-provisioned: 4.5 spare blocks, below the 10
    // free blocks the stall level keeps.
    let requests = random_requests(3, 3000, 16 << 20, 0.0, 20_000);
    let path = mqsim_trace("stuck-plane", &requests);
    let full = drive(
        &[
            &deferred[..],
            &[
                ("precondition.fill_fraction", "0.9"),
                ("precondition.age", "true"),
            ],
        ]
        .concat(),
    );
    let e = flashlane_core::run(&spec(full, path.clone()))
        .unwrap_err()
        .to_string();
    let half = drive(&[&deferred[..], &[("precondition.fill_fraction", "0.5")]].concat());
    let s = flashlane_core::run(&spec(half, path.clone())).unwrap();
    std::fs::remove_file(path).unwrap();
    for part in [
        "the drive ran out of space it can reclaim",
        "below ftl.write_stall_below_free_blocks = 10, and no block being erased",
        "every full block is entirely valid",
        "blocks of 64 pages",
        "Lower precondition.fill_fraction",
        "raise ftl.overprovisioning_fraction",
    ] {
        assert!(e.contains(part), "{part:?} not in: {e}");
    }
    assert!(!e.contains("internal error"), "{e}");
    assert_eq!(s.figures.requests.completed, 3000);
}

/// Bad values of the asynchronous-GC keys are refused by name.
#[test]
fn deferred_gc_keys_are_validated() {
    let err = |o: &[(&str, &str)]| {
        let overrides: Vec<(String, String)> = o
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_preset("mqsim-platform", &overrides)
            .unwrap_err()
            .to_string()
    };
    let e = err(&[
        ("ftl.gc_block_release", "translation"),
        ("ftl.gc_max_victims_per_plane", "3"),
        ("ftl.write_stall_below_free_blocks", "0"),
    ]);
    assert!(e.contains("apply only with ftl.gc_block_release"), "{e}");
    let e = err(&[
        ("ftl.gc_block_release", "erase_done"),
        ("ftl.gc_max_victims_per_plane", "0"),
    ]);
    assert!(
        e.contains("ftl.gc_max_victims_per_plane must be at least 1"),
        "{e}"
    );
    let e = err(&[
        ("ftl.write_stall_below_free_blocks", "0"),
        ("ftl.gc_block_release", "erase_done"),
    ]);
    assert!(e.contains("ftl.write_stall_below_free_blocks 0"), "{e}");
    let e = err(&[
        ("geometry.blocks_per_plane", "64"),
        ("ftl.write_stall_below_free_blocks", "11"),
    ]);
    assert!(e.contains("must not exceed the GC threshold of 10"), "{e}");
    let e = err(&[("ftl.allocation.kind", "dynamic")]);
    assert!(e.contains("needs static allocation"), "{e}");
    let e = err(&[("ftl.gc_block_release", "later")]);
    assert!(e.contains("later"), "{e}");
    let e = err(&[("ftl.translation_reserved_blocks_per_plane", "1000")]);
    assert!(
        e.contains("ftl.translation_reserved_blocks_per_plane 1000"),
        "{e}"
    );
}
