//! The cached mapping table (`ftl.mapping_cache_bytes`) on the MQSim preset: hit and miss
//! counts derived by hand, and the closed-form delay of a miss.

use crate::common::{preset, run};

const CMD: f64 = 21.0;
const T_R: f64 = 75_000.0;
const PAGE: u64 = 8192;
/// Logical pages per translation page on the MQSim geometry: 2^26 physical pages and 16
/// sectors per page give 6-byte entries on flash, 8192 / 6 = 1365 per page.
const PER_TPAGE: u64 = 1365;

fn xfer(bytes: u64) -> f64 {
    (bytes as f64 / 0.333).ceil()
}

/// The MQSim preset with a cache of `entries` entries of 9 bytes (MQSim's sizing: 2 x 26
/// address bits plus a 16-sector bitmap, rounded up to bytes). The trace footprint is written
/// before the run, so every translation page the trace touches is on flash.
fn with_cache(entries: u64) -> flashlane_core::config::Config {
    preset(
        "mqsim-ssd",
        &[("ftl.mapping_cache_bytes", &(9 * entries).to_string())],
    )
}

#[test]
fn hits_misses_and_mapping_traffic_match_a_hand_count() {
    // Two cache entries, LRU. One request every 10 ms, so every flash operation of one request
    // has ended before the next arrives. Translation page t holds pages t*1365 .. t*1365+1364.
    let ms = 10_000_000;
    let requests = [
        // 1. read 0: miss, read translation page 0.               cache [0]          reads 1
        (0, 0, PAGE, true),
        // 2. read 1: miss, page 0 again (the earlier read ended).  cache [1 0]        reads 2
        (ms, PAGE, PAGE, true),
        // 3. read 0: hit.                                           cache [0 1]
        (2 * ms, 0, PAGE, true),
        // 4. write 2000 (page 1): miss, evicts 1 (clean), read.     cache [2000* 0]    reads 3
        (3 * ms, 2000 * PAGE, PAGE, false),
        // 5. read 0: hit.                                           cache [0 2000*]
        (4 * ms, 0, PAGE, true),
        // 6. read 5000 (page 3): miss, evicts 2000 (dirty): write back translation page 1
        //    (merge read + program), then read page 3.             cache [5000 0]     reads 5, programs 1
        (5 * ms, 5000 * PAGE, PAGE, true),
        // 7. read 2001 (page 1): miss, evicts 0 (clean); the write-back has ended, so read.
        //                                                           cache [2001 5000]  reads 6
        (6 * ms, 2001 * PAGE, PAGE, true),
    ];
    let s = run(with_cache(2), "cmt-hand", &requests);
    let cmt = s.cmt.expect("cache statistics");
    assert_eq!((cmt.hits, cmt.misses), (2, 5));
    assert_eq!(s.flash.mapping_reads, 6);
    assert_eq!(s.flash.mapping_programs, 1);
    assert_eq!((s.flash.reads, s.flash.programs), (6, 1));
    assert_eq!(cmt.capacity_entries, 2);
    assert_eq!(cmt.entries_per_translation_page, PER_TPAGE);
    assert!((cmt.hit_ratio - 2.0 / 7.0).abs() < 1e-12);
    // One host program and one mapping program: WAF counts both; the host-and-GC figure not.
    assert_eq!((s.waf, s.waf_host_gc), (2.0, 1.0));
}

#[test]
fn a_miss_delays_the_request_by_one_translation_read() {
    // Whole map in DRAM: command, array read, page out.
    let dram = run(
        preset("mqsim-ssd", &[("ftl.mapping_cache_bytes", "0")]),
        "cmt-off",
        &[(0, 0, PAGE, true)],
    );
    let plain = CMD + T_R + xfer(PAGE);
    assert_eq!(dram.figures.latency_us.read.max * 1000.0, plain);
    assert_eq!(dram.flash.mapping_reads, 0);
    assert!(dram.cmt.is_none());
    // Cached table, cold: first the translation page (one 512-byte sector out), then the data.
    let cold = run(with_cache(16), "cmt-cold", &[(0, 0, PAGE, true)]);
    assert_eq!(cold.flash.mapping_reads, 1);
    assert_eq!(
        cold.figures.latency_us.read.max * 1000.0,
        (CMD + T_R + xfer(512)) + plain
    );
}

#[test]
fn concurrent_misses_on_one_translation_page_share_its_read() {
    // Pages 0 and 1 (channels 0 and 1) arrive together; both entries are in translation page 0.
    let s = run(
        with_cache(16),
        "cmt-shared",
        &[(0, 0, PAGE, true), (0, PAGE, PAGE, true)],
    );
    let cmt = s.cmt.unwrap();
    assert_eq!((cmt.hits, cmt.misses), (0, 2));
    assert_eq!(s.flash.mapping_reads, 1);
    // Both wait for the one translation read, then read on their own channels in parallel.
    let both = (CMD + T_R + xfer(512)) + (CMD + T_R + xfer(PAGE));
    assert_eq!(s.figures.latency_us.read.max * 1000.0, both);
    assert_eq!(s.figures.latency_us.read.mean * 1000.0, both);
}

#[test]
fn pages_never_written_need_no_translation_read() {
    // Without preconditioning no translation page exists on flash: misses cost nothing.
    let mut config = with_cache(2);
    config.precondition.write_trace_footprint = false;
    let s = run(
        config,
        "cmt-fresh",
        &[(0, 0, PAGE, true), (0, 3 * PAGE, PAGE, false)],
    );
    assert_eq!(s.cmt.unwrap().misses, 2);
    assert_eq!(s.flash.mapping_reads, 0);
    assert_eq!(
        s.figures.latency_us.read.max * 1000.0,
        CMD + T_R + xfer(PAGE)
    );
}
