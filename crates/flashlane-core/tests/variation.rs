//! Process variation (`[variation]`) and variation-aware block allocation, end to end.

use crate::common::{preset, run, Req};

/// A small SSDsim-like drive: 4 chips of one plane, 64 blocks of 64 pages.
fn small(extra: &[(&str, &str)]) -> flashlane_core::config::Config {
    let mut overrides = vec![
        ("geometry.channels", "2"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "1"),
        ("geometry.blocks_per_plane", "64"),
        ("timing.page_program_ns", "600000"),
        ("precondition.fill_fraction", "1.0"),
    ];
    overrides.extend_from_slice(extra);
    preset("ssdsim-mlc-8x8", &overrides)
}

/// Bursts of writes (and some reads) over a deterministic scatter of pages.
fn workload() -> Vec<Req> {
    (0..3000u64)
        .map(|i| {
            let page = (i * 7919) % 12_000;
            (i / 16 * 2_000_000, page * 2048, 2048, i % 5 == 0)
        })
        .collect()
}

#[test]
fn variation_sets_program_latency_and_is_deterministic() {
    let at = |pe: &str, seed_name: &str| {
        let config = small(&[
            ("variation.enabled", "true"),
            ("variation.initial_pe_cycles", pe),
        ]);
        run(config, seed_name, &workload())
    };
    let fresh = at("6000", "var-6k");
    let worn = at("15000", "var-15k");
    let again = at("15000", "var-15k-again");
    let (v6, v15) = (fresh.variation.unwrap(), worn.variation.clone().unwrap());
    // Same config, trace and seed: same variation map and same latencies.
    assert_eq!(worn.variation, again.variation);
    assert_eq!(worn.figures.latency_us, again.figures.latency_us);
    // Every host write was classified; the shares add up.
    let sum = v15.write_fast_fraction + v15.write_medium_fraction + v15.write_slow_fraction;
    assert!((sum - 1.0).abs() < 1e-9, "{v15:?}");
    // Wear makes programs slower, and the writes' latency follows the blocks' latency.
    assert!(
        v15.mean_host_program_us > v6.mean_host_program_us,
        "{v6:?} {v15:?}"
    );
    assert!(v15.median_program_us > v6.median_program_us);
    assert!(worn.figures.latency_us.write.mean > fresh.figures.latency_us.write.mean);
    // At 6K most blocks may use the largest step (0.6 V -> 300 us at 600 us for 0.3 V).
    assert_eq!(v6.block_program_us_histogram[0].0, 300.0);
    assert!(v15.block_program_us_histogram.len() > v6.block_program_us_histogram.len());
}

/// Without `[variation]` the faster-block choice would change nothing: refused, naming the key
/// that turns variation on.
#[test]
fn block_choice_without_variation_is_refused() {
    let overrides = vec![(
        "ftl.block_choice".to_string(),
        "fastest_for_conflicts".to_string(),
    )];
    let e = flashlane_core::config::Config::from_preset("mqsim-ssd", &overrides)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.block_choice") && e.contains("variation.enabled = true"),
        "{e}"
    );
}

#[test]
fn conflicting_writes_go_to_faster_blocks() {
    let with = |choice: &str, name: &str| {
        let config = small(&[
            ("variation.enabled", "true"),
            ("variation.initial_pe_cycles", "15000"),
            ("ftl.block_choice", choice),
        ]);
        run(config, name, &workload())
    };
    let in_order = with("in_order", "order").variation.unwrap();
    let aware = with("fastest_for_conflicts", "aware").variation.unwrap();
    assert_eq!(in_order.fast_stream_write_fraction, 0.0);
    assert!(aware.conflict_write_fraction > 0.1, "{aware:?}");
    assert_eq!(
        aware.fast_stream_write_fraction,
        aware.conflict_write_fraction
    );
    // With most writes conflicting, the fast end serves most of them: more writes land in
    // fast blocks and the mean program time of host writes falls.
    assert!(
        aware.write_fast_fraction > in_order.write_fast_fraction,
        "{in_order:?} {aware:?}"
    );
    assert!(
        aware.mean_host_program_us < in_order.mean_host_program_us,
        "{in_order:?} {aware:?}"
    );
}

#[test]
fn a_faster_block_choice_costs_no_extra_garbage_collection() {
    // An aged, full drive of 16 planes: every plane sits at its GC threshold. The choice only
    // decides *which* free block a plane opens (fastest for a conflicting write), never opens
    // more blocks than the writes need, so the same trace consumes as many blocks and runs GC
    // as often as without it. (A second open block per plane for conflicting writes, the
    // earlier reading, cost each plane a block's worth of victims: 2.5x the GC runs on the
    // ssdsim-mlc-8x8 drive with the tpcc trace.)
    let with = |choice: &str, name: &str| {
        let config = small(&[
            ("geometry.planes_per_die", "4"),
            ("precondition.age", "true"),
            ("variation.enabled", "true"),
            ("variation.initial_pe_cycles", "9000"),
            ("ftl.block_choice", choice),
        ]);
        run(config, name, &workload())
    };
    let in_order = with("in_order", "gc-order");
    let aware = with("fastest_for_conflicts", "gc-aware");
    assert!(in_order.gc.runs > 100, "{:?}", in_order.gc);
    assert_eq!(aware.flash.programs, in_order.flash.programs);
    assert_eq!(
        aware.gc.runs, in_order.gc.runs,
        "{:?} {:?}",
        in_order.gc, aware.gc
    );
    // And it still pays: host writes land on faster blocks.
    let (o, a) = (in_order.variation.unwrap(), aware.variation.unwrap());
    assert!(
        a.mean_host_program_us < o.mean_host_program_us,
        "{o:?} {a:?}"
    );
}

#[test]
fn bad_variation_keys_are_named() {
    let overrides = vec![
        ("variation.enabled".to_string(), "true".to_string()),
        ("variation.ecc_limit_ber".to_string(), "2.0".to_string()),
    ];
    let err = flashlane_core::config::Config::from_preset("ssdsim-mlc-8x8", &overrides)
        .unwrap_err()
        .to_string();
    assert!(err.contains("variation.ecc_limit_ber"), "{err}");
    let overrides = vec![("variation.ecc_limit".to_string(), "0.1".to_string())];
    let err = flashlane_core::config::Config::from_preset("ssdsim-mlc-8x8", &overrides)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ecc_limit"), "{err}");
}
