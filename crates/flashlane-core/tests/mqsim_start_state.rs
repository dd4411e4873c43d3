//! MQSim's start state and mapping rules as config choices: reads of never-written pages
//! allocate a page at the write frontier (`ftl.unwritten_reads = "allocate"`), the whole mapping
//! table is on flash at the start (`ftl.translation_pages_on_flash = "all"`), translation-page
//! reads form multi-plane commands with host reads (`device.multiplane_mapping_reads`), and
//! MQSim's never-served write-backs (`ftl.mapping_writebacks = "never_programmed"`). Latencies
//! are derived by hand from the `mqsim-platform` timings.

use crate::common::{preset, run};

const CMD: f64 = 21.0;
const T_R: f64 = 75_000.0;
const PAGE: u64 = 8192;
const MAPPING_READ: u64 = 512;
const MS: u64 = 1_000_000;

fn xfer(bytes: u64) -> f64 {
    (bytes as f64 / 0.333).ceil()
}

/// `mqsim-platform` (read-first order, one die per chip at a time, multi-plane on), empty at
/// the start; without its host link (tests/host_link.rs times that) and with write-backs
/// programmed unless a test says otherwise.
fn platform(overrides: &[(&str, &str)]) -> flashlane_core::config::Config {
    let mut all = vec![
        ("precondition.write_trace_footprint", "false"),
        ("host.link.kind", "none"),
        ("ftl.mapping_writebacks", "programmed"),
    ];
    all.extend_from_slice(overrides);
    preset("mqsim-platform", &all)
}

// Static striping channel, chip, die, plane (8 x 4 x 2 x 2): logical pages 0, 128 and 256 are
// on channel 0, chip 0, die 0, plane 0; page 64 on the same die, plane 1.

/// Under `static_location` every never-written page is read at index 0 of its plane, so reads
/// of pages 64 and 128 (planes 1 and 0) pair. Under `allocate` each such read takes the next
/// page of its plane's write frontier in dispatch order: page 256 takes plane 0's index 1 (the
/// write of page 0 took index 0), page 64 plane 1's index 0, page 128 plane 0's index 2, so
/// nothing pairs; a later read of page 64 finds the page it was given.
#[test]
fn reads_of_unwritten_pages_allocate_at_the_write_frontier() {
    let requests = [
        (0, 0, PAGE, false),
        (10 * MS, 256 * PAGE, PAGE, true),
        (10 * MS, 64 * PAGE, PAGE, true),
        (10 * MS, 128 * PAGE, PAGE, true),
        (20 * MS, 64 * PAGE, PAGE, true),
    ];
    let no_cmt = ("ftl.mapping_cache_bytes", "0");
    let one = CMD + T_R + xfer(PAGE);
    let fixed = run(
        platform(&[no_cmt, ("ftl.unwritten_reads", "static_location")]),
        "unwritten-static",
        &requests,
    );
    assert_eq!(fixed.flash.multiplane_operations, 1);
    assert_eq!(fixed.gc.unmapped_reads, 4);
    // Page 256 first, then 64 and 128 as one command.
    assert_eq!(
        fixed.figures.latency_us.read.max * 1000.0,
        one + CMD + T_R + xfer(2 * PAGE)
    );
    let allocated = run(
        platform(&[no_cmt, ("ftl.unwritten_reads", "allocate")]),
        "unwritten-allocate",
        &requests,
    );
    assert_eq!(allocated.flash.multiplane_operations, 0);
    assert_eq!(allocated.gc.unmapped_reads, 3);
    assert_eq!((allocated.flash.reads, allocated.flash.programs), (4, 1));
    // Three reads one after the other on the die.
    assert_eq!(allocated.figures.latency_us.read.max * 1000.0, 3.0 * one);
    assert_eq!(allocated.integrity_violations, fixed.integrity_violations);
}

/// Empty drive, cached mapping table: the first read of page 0 misses. Under
/// `mapped_at_start` its translation page was never written, so the miss costs no flash read;
/// under `all` (MQSim writes the whole table at the start) it reads one sector first.
#[test]
fn whole_table_on_flash_makes_every_first_miss_read_flash() {
    let requests = [(0, 0, PAGE, true)];
    let mapped = run(
        platform(&[("ftl.translation_pages_on_flash", "mapped_at_start")]),
        "tpages-mapped",
        &requests,
    );
    assert_eq!(mapped.flash.mapping_reads, 0);
    assert_eq!(
        mapped.figures.latency_us.read.max * 1000.0,
        CMD + T_R + xfer(PAGE)
    );
    let all = run(
        platform(&[("ftl.translation_pages_on_flash", "all")]),
        "tpages-all",
        &requests,
    );
    assert_eq!(all.flash.mapping_reads, 1);
    assert_eq!(
        all.figures.latency_us.read.max * 1000.0,
        CMD + T_R + xfer(MAPPING_READ) + CMD + T_R + xfer(PAGE)
    );
}

/// Translation page t is on the plane the static order gives logical page t, at index
/// t / 128 (128 planes): pages 0 and 64 are on die 0 of chip 0, planes 0 and 1, index 0.
/// Read A (page 0, translation page 0) and read B (page 87,360 = 64 x 1,365, translation page
/// 64) both miss at time 0: A's mapping read M0 starts, B's M64 waits. When M0 ends, A's data
/// read (plane 0, index 0) is queued and M64 (plane 1, index 0) leads the next command.
/// With `multiplane_mapping_reads` A's read joins M64; without, M64 runs alone and A's and B's
/// data reads (planes 0 and 1, index 0) pair after it.
#[test]
fn mapping_reads_lead_multi_plane_commands_with_host_reads() {
    let requests = [(0, 0, PAGE, true), (0, 87_360 * PAGE, PAGE, true)];
    let m0 = CMD + T_R + xfer(MAPPING_READ);
    let mut latency = Vec::new();
    for mapping_reads in ["true", "false"] {
        let s = run(
            platform(&[
                ("ftl.translation_pages_on_flash", "all"),
                ("device.multiplane_mapping_reads", mapping_reads),
            ]),
            &format!("mp-mapping-{mapping_reads}"),
            &requests,
        );
        assert_eq!((s.flash.mapping_reads, s.flash.reads), (2, 2));
        assert_eq!(s.flash.multiplane_operations, 1);
        latency.push((
            s.figures.latency_us.read.mean * 2000.0,
            s.figures.latency_us.read.max * 1000.0,
        ));
    }
    // (sum of the two latencies, the larger one), ns.
    let a = m0 + CMD + T_R + xfer(MAPPING_READ + PAGE);
    let b = a + CMD + T_R + xfer(PAGE);
    assert_eq!(latency[0], (a + b, b));
    let both = m0 + CMD + T_R + xfer(MAPPING_READ) + CMD + T_R + xfer(2 * PAGE);
    assert_eq!(latency[1], (2.0 * both, both));
}

/// A one-entry cache (9 bytes, one entry on this geometry). Logical pages 0, 1 and 2 share
/// translation page 0 (on chip 0), their data sit on channels 0, 1 and 2. Reads of unwritten
/// pages do not allocate here (`static_location`), so only the write dirties an entry.
/// - 0 ms, write page 0: miss, translation page 0 read, entry dirty.
/// - 10 ms, read page 1: miss; the insert evicts the dirty entry of page 0, which writes
///   translation page 0 back (a merge read, then a program); the page is held by the controller
///   meanwhile ("departing"), so the miss itself reads nothing.
/// - 20 ms, read page 2: miss (evicting page 1's clean entry, no write-back). With the program
///   done long ago (`programmed`) the page is on flash again and the miss reads it; under
///   `never_programmed` (MQSim's defect) the program never ran and the page is still held, so
///   the miss reads nothing.
#[test]
fn never_programmed_write_backs_keep_their_page_held() {
    let requests = [
        (0, 0, PAGE, false),
        (10 * MS, PAGE, PAGE, true),
        (20 * MS, 2 * PAGE, PAGE, true),
    ];
    let read = CMD + T_R + xfer(PAGE);
    let mut results = Vec::new();
    for writebacks in ["programmed", "never_programmed"] {
        let s = run(
            platform(&[
                ("ftl.mapping_cache_bytes", "9"),
                ("ftl.unwritten_reads", "static_location"),
                ("ftl.mapping_writebacks", writebacks),
            ]),
            &format!("writebacks-{writebacks}"),
            &requests,
        );
        let cmt = s.cmt.expect("cache on");
        assert_eq!(
            (cmt.capacity_entries, cmt.writebacks),
            (1, 1),
            "{writebacks}"
        );
        results.push((
            s.flash.mapping_reads,
            s.flash.mapping_programs,
            s.figures.latency_us.read.max * 1000.0,
        ));
    }
    let mapping_read = CMD + T_R + xfer(MAPPING_READ);
    assert_eq!(results[0], (3, 1, mapping_read + read));
    assert_eq!(results[1], (2, 0, read));
}

/// A read that allocates changes the page's mapping, so its cached entry is dirty (MQSim's
/// `online_create_entry_for_reads` updates the CMT entry, which marks it dirty). One-entry cache:
/// reading page 1 evicts page 0's entry; only if page 0's read allocated is that a write-back.
#[test]
fn an_allocating_read_dirties_its_entry() {
    let requests = [(0, 0, PAGE, true), (10 * MS, PAGE, PAGE, true)];
    for (unwritten, writebacks, mapping_reads) in [("allocate", 1, 2), ("static_location", 0, 2)] {
        let s = run(
            platform(&[
                ("ftl.mapping_cache_bytes", "9"),
                ("ftl.unwritten_reads", unwritten),
            ]),
            &format!("alloc-dirty-{unwritten}"),
            &requests,
        );
        let cmt = s.cmt.expect("cache on");
        assert_eq!(cmt.writebacks, writebacks, "{unwritten}");
        // The first miss reads translation page 0. Under `allocate` the eviction's write-back
        // reads it again (the merge read) and the second miss finds the page held
        // (departing), reading nothing; under `static_location` the second miss reads it.
        assert_eq!(s.flash.mapping_reads, mapping_reads, "{unwritten}");
        assert_eq!(s.flash.mapping_programs, writebacks, "{unwritten}");
    }
}

/// Bad values name the key.
#[test]
fn unknown_start_state_values_are_errors() {
    for (key, value) in [
        ("ftl.unwritten_reads", "guess"),
        ("ftl.translation_pages_on_flash", "some"),
        ("device.multiplane_mapping_reads", "3"),
        ("ftl.mapping_writebacks", "sometimes"),
    ] {
        let overrides = [(key.to_string(), value.to_string())];
        let err = flashlane_core::config::Config::from_preset("mqsim-platform", &overrides);
        let message = format!("{}", err.expect_err(key));
        assert!(
            message.contains(key.rsplit('.').next().unwrap()),
            "{key}: {message}"
        );
    }
}
