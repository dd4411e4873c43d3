//! Closed-form timing cases on the MQSim preset (no preconditioning, so nothing but the
//! requests themselves touches the flash).

use crate::common::{preset, run};

const CMD: f64 = 21.0;
const T_R: f64 = 75_000.0;
const T_PROG: f64 = 750_000.0;
const PAGE: u64 = 8192;

fn xfer(bytes: u64) -> f64 {
    (bytes as f64 / 0.333).ceil()
}

fn ns(us: f64) -> f64 {
    us * 1000.0
}

fn quiet() -> flashlane_core::config::Config {
    preset(
        "mqsim-ssd",
        &[("precondition.write_trace_footprint", "false")],
    )
}

#[test]
fn one_read_on_idle_ssd_is_command_plus_read_plus_transfer() {
    let s = run(quiet(), "one-read", &[(0, 0, PAGE, true)]);
    assert_eq!(s.figures.requests.completed, 1);
    assert_eq!(ns(s.figures.latency_us.read.max), CMD + T_R + xfer(PAGE));
}

#[test]
fn one_write_on_idle_ssd_is_command_plus_transfer_plus_program() {
    let s = run(quiet(), "one-write", &[(0, 0, PAGE, false)]);
    assert_eq!(
        ns(s.figures.latency_us.write.max),
        CMD + xfer(PAGE) + T_PROG
    );
}

#[test]
fn partial_page_read_transfers_only_its_bytes() {
    let s = run(quiet(), "partial-read", &[(0, 4096, 4096, true)]);
    assert_eq!(ns(s.figures.latency_us.read.max), CMD + T_R + xfer(4096));
}

#[test]
fn reads_on_different_channels_overlap_completely() {
    // Channel-first striping: logical pages 0 and 1 sit on channels 0 and 1.
    let s = run(
        quiet(),
        "two-channels",
        &[(0, 0, PAGE, true), (0, PAGE, PAGE, true)],
    );
    let single = CMD + T_R + xfer(PAGE);
    assert_eq!(ns(s.figures.latency_us.read.max), single);
    assert_eq!(ns(s.figures.latency_us.read.mean), single);
}

#[test]
fn reads_on_one_channel_overlap_array_time_and_serialize_transfers() {
    // Logical page 8 is channel 0, chip (way) 1: same bus as page 0, another chip.
    let s = run(
        quiet(),
        "one-channel",
        &[(0, 0, PAGE, true), (0, 8 * PAGE, PAGE, true)],
    );
    let first = CMD + T_R + xfer(PAGE);
    // The second command waits for the first (CMD), its array time overlaps the first's, and
    // its transfer waits for the first transfer to end.
    let second = CMD + T_R + 2.0 * xfer(PAGE);
    assert_eq!(ns(s.figures.latency_us.read.max), second);
    assert!((ns(s.figures.latency_us.read.mean) - (first + second) / 2.0).abs() < 1.0);
    assert!(s.conflicts.read_path_wait_us > 0.0);
}

#[test]
fn saturated_sequential_reads_reach_channel_bandwidth() {
    // 4000 reads of 256 KiB each, all at t = 0: every channel's bus is always busy.
    let requests: Vec<_> = (0..4000u64)
        .map(|i| (0, i * 256 * 1024, 256 * 1024, true))
        .collect();
    let s = run(quiet(), "seq-read", &requests);
    let ideal_mib_per_s = 8.0 * 0.333e9 / (1u64 << 20) as f64;
    let ratio = s.figures.throughput.mib_per_s / ideal_mib_per_s;
    assert!(
        (0.98..=1.0).contains(&ratio),
        "throughput {} MiB/s is {ratio} of {ideal_mib_per_s}",
        s.figures.throughput.mib_per_s
    );
}

#[test]
fn write_then_read_of_a_page_goes_to_the_chip_written() {
    let s = run(
        quiet(),
        "write-read",
        &[(0, 0, PAGE, false), (2_000_000, 0, PAGE, true)],
    );
    assert_eq!(s.gc.unmapped_reads, 0);
    assert_eq!(ns(s.figures.latency_us.read.max), CMD + T_R + xfer(PAGE));
}

#[test]
fn chip_utilization_counts_busy_chips_over_the_window_and_while_active() {
    // One read at 0 and one at 10 ms on another channel: each chip is busy for one read time.
    let s = run(
        quiet(),
        "util",
        &[(0, 0, PAGE, true), (10_000_000, PAGE, PAGE, true)],
    );
    let busy = CMD + T_R + xfer(PAGE);
    let window = 10_000_000.0 + busy;
    assert_eq!(s.sim_time_ns as f64, window);
    assert!((s.chips.utilization - 2.0 * busy / window / 32.0).abs() < 1e-12);
    assert_eq!(s.chips.active_ns as f64, 2.0 * busy);
    assert!((s.chips.active_utilization - 1.0 / 32.0).abs() < 1e-12);
    assert!((s.chips.per_chip_utilization[0] - busy / window).abs() < 1e-12);
}
