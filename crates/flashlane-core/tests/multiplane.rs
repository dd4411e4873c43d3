//! Multi-plane operations (`device.multiplane`) on the MQSim preset without preconditioning:
//! they form only from page operations of one die, on different planes, at the same page
//! index inside their blocks.

use crate::common::{preset, run};

const CMD: f64 = 21.0;
const T_R: f64 = 75_000.0;
const PAGE: u64 = 8192;

fn xfer(bytes: u64) -> f64 {
    (bytes as f64 / 0.333).ceil()
}

fn config(multiplane: bool) -> flashlane_core::config::Config {
    preset(
        "mqsim-ssd",
        &[
            ("precondition.write_trace_footprint", "false"),
            ("ftl.mapping_cache_bytes", "0"),
            ("device.multiplane", &multiplane.to_string()),
        ],
    )
}

// Static striping channel, chip, die, plane (8 x 4 x 2 x 2): logical pages 0 and 128 are on
// channel 0, chip 0, die 0, plane 0; page 64 on the same die, plane 1.

#[test]
fn reads_at_the_same_page_index_on_two_planes_form_one_command() {
    // Never-written pages are read at page 0 of block 0 of their plane: the same index.
    // A (page 0) starts at once; B (page 64, plane 1) and C (page 128, plane 0) wait for the
    // die. When A ends, B leads and takes C as its companion: one command, one array read,
    // both pages out back to back.
    let requests = [
        (0, 0, PAGE, true),
        (0, 64 * PAGE, PAGE, true),
        (0, 128 * PAGE, PAGE, true),
    ];
    let a = CMD + T_R + xfer(PAGE);
    let on = run(config(true), "mp-on", &requests);
    assert_eq!(on.flash.multiplane_operations, 1);
    assert_eq!(on.flash.reads, 3);
    assert_eq!(
        on.figures.latency_us.read.max * 1000.0,
        a + CMD + T_R + xfer(2 * PAGE)
    );
    // Off: B and C one after the other.
    let off = run(config(false), "mp-off", &requests);
    assert_eq!(off.flash.multiplane_operations, 0);
    assert_eq!(
        off.figures.latency_us.read.max * 1000.0,
        a + 2.0 * (CMD + T_R + xfer(PAGE))
    );
}

#[test]
fn different_page_indexes_or_one_plane_never_pair() {
    let ms = 10_000_000;
    let requests = [
        // Writes: page 0 twice (plane 0 fills pages 0 and 1 of its block), page 64 once
        // (plane 1, page 0). The second write of page 0 (index 1) finds no plane-1 write at
        // index 1, so no program pairs either.
        (0, 0, PAGE, false),
        (0, 0, PAGE, false),
        (0, 64 * PAGE, PAGE, false),
        // Reads 10 ms later: page 128 (unwritten: plane 0, index 0) occupies the die; then
        // page 64 (plane 1, index 0) leads, and page 0 (plane 0, now at index 1) does not fit.
        (ms, 128 * PAGE, PAGE, true),
        (ms, 64 * PAGE, PAGE, true),
        (ms, 0, PAGE, true),
        // Two reads of one plane (pages 0 and 128 are both plane 0) never pair.
        (2 * ms, 128 * PAGE, PAGE, true),
        (2 * ms, 0, PAGE, true),
        (2 * ms, 128 * PAGE, PAGE, true),
    ];
    let s = run(config(true), "mp-never", &requests);
    assert_eq!(s.flash.multiplane_operations, 0);
    assert_eq!((s.flash.reads, s.flash.programs), (6, 3));
}
