//! SSDsim's platform rules (each off by default) on small hand-made cases whose outcome each
//! test's comment derives, and the `ssdsim-platform` preset that gathers them.
//!
//! Timings of the `ssdsim-mlc-8x8` preset: command 175 ns, tR 20 us, tPROG 200 us, channel
//! 0.04 bytes/ns (a 2 KiB page crosses in 51,200 ns, a 512-byte sector in 12,800 ns).
//! Channel-first static allocation over 8 channels x 8 chips x 2 dies: logical page p is on
//! chip p mod 64 (chip c on channel c mod 8); pages 0 and 64 are dies 0 and 1 of chip 0.

use crate::common::ssdsim_8x8::{
    self, ns, CMD, PAGE, READ, SECTOR, SECTOR_XFER, T_PROG, T_R, WRITE, XFER,
};
use crate::common::{preset, run};
use flashlane_core::config::Config;

/// The small `ssdsim-mlc-8x8` drive with SSDsim's device order.
fn drive(extra: &[(&str, &str)]) -> Config {
    let mut o = vec![("device.scheduler.kind", "ssdsim")];
    o.extend_from_slice(extra);
    ssdsim_8x8::drive(&o)
}

#[test]
fn a_write_completes_when_its_data_is_in_the_chip_which_programs_on() {
    // t=0: write page 0 (chip 0, die 0): command and data cross by CMD + XFER, then tPROG.
    // t=10: read page 64 (chip 0, die 1): the chip is busy (SSDsim's chip-level busy) until
    // WRITE, so the read ends at WRITE + READ, latency WRITE + READ - 10, under both rules.
    // With `data_transferred` the write's latency is CMD + XFER; with the default, WRITE.
    let reqs = [(0, 0, PAGE, false), (10, 64 * PAGE, PAGE, true)];
    let acked = run(
        drive(&[("device.write_completion", "data_transferred")]),
        "ack-transfer",
        &reqs,
    );
    assert_eq!(ns(acked.figures.latency_us.write.max), CMD + XFER);
    assert_eq!(ns(acked.figures.latency_us.read.max), WRITE + READ - 10);
    let programmed = run(drive(&[]), "ack-program", &reqs);
    assert_eq!(ns(programmed.figures.latency_us.write.max), WRITE);
    assert_eq!(
        ns(programmed.figures.latency_us.read.max),
        WRITE + READ - 10
    );
}

#[test]
fn a_partial_write_over_data_reads_the_rest_of_the_page_first() {
    // The trace's footprint is written before it starts, so pages 0 and 1 hold all 4 sectors.
    // t=0: write sector 0 of page 0. Sectors 1-3 hold data: read them first (command, tR, 3
    // sectors out: CMD + T_R + 3 SECTOR_XFER), then program the merged page, all 4 sectors
    // (CMD + XFER + T_PROG = WRITE). t=1 ms: write all of page 1 (chip 1): nothing to read,
    // WRITE.
    let reqs = [(0, 0, SECTOR, false), (1_000_000, PAGE, PAGE, false)];
    let rules = [
        ("precondition.write_trace_footprint", "true"),
        ("ftl.partial_page_writes", "read_modify_write"),
    ];
    let s = run(drive(&rules), "rmw", &reqs);
    let rmw_write = CMD + T_R + 3 * SECTOR_XFER + WRITE;
    assert_eq!(ns(s.figures.latency_us.write.max), rmw_write);
    assert_eq!(ns(2.0 * s.figures.latency_us.write.mean), rmw_write + WRITE);
    assert_eq!(s.flash.read_modify_write_reads, 1);
    assert_eq!(s.flash.reads, 0);
    // Default: the partial page is programmed at once.
    let plain = run(
        drive(&[("precondition.write_trace_footprint", "true")]),
        "no-rmw",
        &reqs,
    );
    assert_eq!(
        ns(2.0 * plain.figures.latency_us.write.mean),
        CMD + SECTOR_XFER + T_PROG + WRITE
    );
    assert_eq!(plain.flash.read_modify_write_reads, 0);
}

#[test]
fn only_sectors_the_trace_reads_exist_under_a_reads_footprint() {
    // footprint_requests = reads: before the trace, page 2 holds only sector 0 (read at t=0)
    // and page 3 holds nothing (only written).
    // t=1 ms: write sectors 2-3 of page 2: sector 0 is outside it, read first (1 RMW read).
    // t=2 ms: write sector 1 of page 3: nothing held, no read.
    // t=3 ms: write sectors 0-1 of page 3 (sector 1 held, now covered; 2-3 empty): no read.
    // With the whole footprint written, page 3 holds all sectors: both of its writes read
    // first (3 RMW reads).
    let reqs = [
        (0, 2 * PAGE, SECTOR, true),
        (1_000_000, 2 * PAGE + 2 * SECTOR, 2 * SECTOR, false),
        (2_000_000, 3 * PAGE + SECTOR, SECTOR, false),
        (3_000_000, 3 * PAGE, 2 * SECTOR, false),
    ];
    let reads_only = run(
        drive(&[
            ("precondition.write_trace_footprint", "true"),
            ("precondition.footprint_requests", "reads"),
            ("ftl.partial_page_writes", "read_modify_write"),
        ]),
        "rmw-reads-footprint",
        &reqs,
    );
    assert_eq!(reads_only.flash.read_modify_write_reads, 1);
    let all = run(
        drive(&[
            ("precondition.write_trace_footprint", "true"),
            ("ftl.partial_page_writes", "read_modify_write"),
        ]),
        "rmw-all-footprint",
        &reqs,
    );
    assert_eq!(all.flash.read_modify_write_reads, 3);
}

#[test]
fn a_request_is_handed_over_at_the_next_device_event() {
    // t=0: read page 0 (chip 0): the device is idle, so it goes at once and takes READ. Its
    // events: command end at CMD, array done at CMD + T_R, done at READ.
    // t=1000: read page 1 (chip 1, another channel): the device is busy; the next event at or
    // after 1000 is the array done at CMD + T_R, where it is handed over: it ends at
    // CMD + T_R + READ, latency CMD + T_R + READ - 1000. By default it goes at 1000: READ.
    let reqs = [(0, 0, PAGE, true), (1000, PAGE, PAGE, true)];
    let s = run(
        drive(&[("host.handover_at", "next_device_event")]),
        "handover-event",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), CMD + T_R + READ - 1000);
    assert_eq!(
        ns(2.0 * s.figures.latency_us.read.mean),
        CMD + T_R + 2 * READ - 1000
    );
    let d = run(drive(&[]), "handover-arrival", &reqs);
    assert_eq!(ns(d.figures.latency_us.read.max), READ);
}

#[test]
fn one_request_per_pass() {
    // Reads of pages 0, 1, 2 (chips 0, 1, 2 on channels 0, 1, 2) at t=0 on an idle device.
    // One per pass: the first goes at 0; the next pass is its command's end at CMD, where the
    // second goes; its command ends at 2 CMD (the first pass's events at CMD are past), where
    // the third goes. Latencies READ, CMD + READ, 2 CMD + READ: mean READ + CMD.
    // All per pass: an idle device takes all three at 0: each READ.
    let reqs = [
        (0, 0, PAGE, true),
        (0, PAGE, PAGE, true),
        (0, 2 * PAGE, PAGE, true),
    ];
    let one = run(
        drive(&[
            ("host.handover_at", "next_device_event"),
            ("host.handover_per_pass", "one"),
        ]),
        "one-per-pass",
        &reqs,
    );
    assert_eq!(ns(one.figures.latency_us.read.max), 2 * CMD + READ);
    assert_eq!(
        ns(3.0 * one.figures.latency_us.read.mean),
        3 * READ + 3 * CMD
    );
    let all = run(
        drive(&[("host.handover_at", "next_device_event")]),
        "all-per-pass",
        &reqs,
    );
    assert_eq!(ns(all.figures.latency_us.read.max), READ);
}

#[test]
fn hand_over_only_while_every_channel_is_idle() {
    // t=0: read page 0 (chip 0, channel 0): data out on channel 0 from CMD + T_R to READ.
    // t=30 us: read page 1 (chip 1, channel 1). Channel 0 carries data then, so with the rule
    // the request waits for the next event with every channel idle: READ (the first read's
    // end), and ends at 2 READ, latency 2 READ - 30 us. Without it: READ.
    let reqs = [(0, 0, PAGE, true), (30_000, PAGE, PAGE, true)];
    let s = run(
        drive(&[("host.handover_needs_idle_channels", "true")]),
        "idle-channels",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * READ - 30_000);
    let d = run(drive(&[]), "any-channels", &reqs);
    assert_eq!(ns(d.figures.latency_us.read.max), READ);
}

#[test]
fn a_channel_whose_transfer_ends_now_counts_as_idle() {
    // SSDsim tests its channels' state before it starts new work at an instant. Reads of
    // pages 0 and 8 (chips 0 and 8, both on channel 0) at t=0 go at once. Page 0's data
    // crosses channel 0 from CMD + T_R to READ; page 8's data waits for it and crosses from
    // READ to READ + XFER. A read of page 1 (channel 1) arriving at 30 us waits for a pass
    // with idle channels: at READ page 0's transfer has ended and page 8's starts at that very
    // instant, so channel 0 counts as idle and page 1 goes at READ, ending at 2 READ: latency
    // 2 READ - 30 us (not READ + XFER + READ - 30 us, as a test that counted the waiting
    // transfer as busy would give).
    let reqs = [
        (0, 0, PAGE, true),
        (0, 8 * PAGE, PAGE, true),
        (30_000, PAGE, PAGE, true),
    ];
    let s = run(
        drive(&[("host.handover_needs_idle_channels", "true")]),
        "idle-at-the-instant",
        &reqs,
    );
    // Latencies READ, READ + XFER (page 8) and 2 READ - 30 us.
    assert_eq!(
        ns(3.0 * s.figures.latency_us.read.mean),
        4 * READ + XFER - 30_000
    );
}

#[test]
fn piq_as_the_fork_runs_it_reorders_and_never_holds() {
    // R0 = page 64 (chip 0), R1 = pages 0-1 (chips 0 and 1), R2 = page 65 (chip 1), all at
    // t=0, all handed over at once to an idle device. The fork's PIQ order: pass 1 takes R0
    // and R2 (R1 meets chip 0), pass 2 takes R1: chip 0's queue is R0, R1's page 0; chip 1's
    // is R2, R1's page 1. Each chip runs one read at a time (READ each; separate channels):
    // R0 and R2 end at READ, R1 at 2 READ: mean 4/3 READ.
    // NOOP's order R0, R1, R2 queues R1's page 1 before R2 on chip 1: R2 ends at 2 READ too:
    // mean 5/3 READ.
    let reqs = [
        (0, 64 * PAGE, PAGE, true),
        (0, 0, 2 * PAGE, true),
        (0, 65 * PAGE, PAGE, true),
    ];
    let handover = [
        ("host.handover_at", "next_device_event"),
        ("host.handover_needs_idle_channels", "true"),
    ];
    let mut piq = handover.to_vec();
    piq.extend_from_slice(&[
        ("host.scheduler.kind", "piq"),
        ("host.scheduler.issue_rule", "ssdsim_passes"),
    ]);
    let p = run(drive(&piq), "piq-passes", &reqs);
    assert_eq!(ns(3.0 * p.figures.latency_us.read.mean), 4 * READ);
    assert_eq!(p.host_scheduler.report.batches, 2);
    let n = run(drive(&handover), "noop-passes", &reqs);
    assert_eq!(ns(3.0 * n.figures.latency_us.read.mean), 5 * READ);
}

#[test]
fn the_platform_preset_gathers_the_rules() {
    let c = preset("ssdsim-platform", &[]);
    let text = toml::to_string(&c).unwrap();
    for line in [
        "handover_at = \"second_device_event\"",
        "program_binding = \"at_transfer\"",
        "program_order = \"lowest_idle_chip\"",
        "gc = \"holds_channel\"",
        "read_transfer = \"held_sectors\"",
        "merged_read_ns = 1000",
        "gc_trigger = \"free_pages\"",
        "handover_per_pass = \"one\"",
        "queue_includes_outstanding = true",
        "write_completion = \"data_transferred\"",
        "partial_page_writes = \"read_modify_write\"",
        "kind = \"ssdsim\"",
        "arbitration = \"ssdsim_order\"",
        "fill_fraction = 1.0",
    ] {
        assert!(text.contains(line), "ssdsim-platform lacks {line}");
    }
    // Every rule is off in the preset it builds on.
    let base = toml::to_string(&preset("ssdsim-mlc-8x8", &[])).unwrap();
    for key in [
        "handover_at",
        "handover_per_pass",
        "write_completion",
        "partial_page_writes",
        "program_binding",
        "gc_trigger",
    ] {
        assert!(!base.contains(key), "ssdsim-mlc-8x8 sets {key}");
    }
}

#[test]
fn batch_cycles_with_the_fork_s_rule_is_refused_by_name() {
    let overrides: Vec<(String, String)> = [
        ("host.scheduler.kind", "piq"),
        ("host.scheduler.issue_rule", "ssdsim_passes"),
        ("host.scheduler.batch_cycles", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let err = Config::from_preset("ssdsim-platform", &overrides).unwrap_err();
    assert!(err.to_string().contains("batch_cycles"), "{err}");
    let rmw_big_sectors = [("geometry.page_bytes".to_string(), "32768".to_string())];
    let err = Config::from_preset("ssdsim-platform", &rmw_big_sectors).unwrap_err();
    assert!(err.to_string().contains("partial_page_writes"), "{err}");
}

/// Issue 31: each PIQ kind's default is the reading validated against the public SSDsim fork
/// (`ssdsim_passes`); the batch lists are a named option, and `batch_cycles` alone (which
/// belongs to them) is refused by name. The config echo names the rule either way.
#[test]
fn the_fork_s_passes_are_the_default_and_the_echo_names_the_rule() {
    use flashlane_core::host::{HostSchedulerConfig, PiqIssueRule};
    for kind in ["rws", "piq_r", "piq_w", "piq"] {
        let config = HostSchedulerConfig::default_for(kind).unwrap();
        let echo = serde_json::to_value(&config).unwrap();
        assert_eq!(echo["issue_rule"], "ssdsim_passes", "{kind}");
        let named: HostSchedulerConfig = serde_json::from_value(serde_json::json!({
            "kind": kind, "issue_rule": "batch_lists"
        }))
        .unwrap();
        let echo = serde_json::to_value(&named).unwrap();
        assert_eq!(echo["issue_rule"], "batch_lists", "{kind}");
    }
    assert_eq!(PiqIssueRule::default(), PiqIssueRule::SsdsimPasses);
    let cycles_alone: Vec<(String, String)> = [
        ("host.scheduler.kind", "piq"),
        ("host.scheduler.batch_cycles", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let err = Config::from_preset("ssdsim-mlc-8x8", &cycles_alone).unwrap_err();
    assert!(err.to_string().contains("batch_lists"), "{err}");
    let mut with_lists = cycles_alone.clone();
    with_lists.push((
        "host.scheduler.issue_rule".to_string(),
        "batch_lists".to_string(),
    ));
    assert!(Config::from_preset("ssdsim-mlc-8x8", &with_lists).is_ok());
}

#[test]
fn the_platform_preset_is_its_base_preset_with_the_set_chain_reproduce_used() {
    // The chain `flashlane reproduce piq` put on ssdsim-mlc-8x8 before the preset existed,
    // with the rules issue 30 added.
    let chain = preset(
        "ssdsim-mlc-8x8",
        &[
            ("precondition.fill_fraction", "1.0"),
            ("device.scheduler.kind", "ssdsim"),
            ("device.queue_depth_requests", "1024"),
            ("device.write_completion", "data_transferred"),
            ("host.queue_includes_outstanding", "true"),
            ("host.handover_at", "second_device_event"),
            ("host.handover_per_pass", "one"),
            ("interconnect.arbitration", "ssdsim_order"),
            ("ftl.partial_page_writes", "read_modify_write"),
            ("ftl.gc_trigger", "free_pages"),
            ("device.scheduler.program_binding", "at_transfer"),
            ("device.scheduler.program_order", "lowest_idle_chip"),
            ("device.scheduler.gc", "holds_channel"),
            ("device.scheduler.read_transfer", "held_sectors"),
            ("device.scheduler.merged_read_ns", "1000"),
        ],
    );
    let mut platform = preset("ssdsim-platform", &[]);
    platform.name = chain.name.clone();
    platform.description = chain.description.clone();
    platform.source = chain.source.clone();
    assert_eq!(platform, chain);
}

// Channel-first static allocation, chips numbered channel-major: logical page p is on
// channel p mod 8, way (chip of its channel) (p / 8) mod 8, die (p / 64) mod 2. Pages 0, 8
// and 72 are on channel 0: way 0 die 0, way 1 die 0, way 1 die 1; page 64 is way 0 die 1.

/// A full page's program on the channel: command and data in.
const W: u64 = CMD + XFER;

#[test]
fn a_program_takes_its_chip_only_at_its_transfer() {
    // t=0: writes of page 0 (way 0) and page 8 (way 1), both on channel 0; t=10 us: a read of
    // page 72 (way 1, die 1). Writes complete when their data is in (data_transferred).
    // at_transfer: the channel takes page 0's program at 0 (busy to W); page 8's program
    // waits on the channel, so way 1 is idle when the read comes: its command waits for the
    // channel, goes at W (commands before programs), its array read ends at W + CMD + T_R, its
    // data leaves by W + READ: latency W + READ - 10 us. Way 1 is then idle and the free
    // channel takes page 8's program: done at 2 W + READ.
    // at_issue (default): both programs take their chips at 0; page 8's waits for the channel
    // until W and programs to 2 W + T_PROG; the read follows: latency 2 W + T_PROG + READ -
    // 10 us; the writes end at W and 2 W.
    let reqs = [
        (0, 0, PAGE, false),
        (0, 8 * PAGE, PAGE, false),
        (10_000, 72 * PAGE, PAGE, true),
    ];
    let ack = ("device.write_completion", "data_transferred");
    let bound = run(
        drive(&[ack, ("device.scheduler.program_binding", "at_transfer")]),
        "program-at-transfer",
        &reqs,
    );
    assert_eq!(ns(bound.figures.latency_us.read.max), W + READ - 10_000);
    assert_eq!(ns(bound.figures.latency_us.write.max), 2 * W + READ);
    assert_eq!(ns(2.0 * bound.figures.latency_us.write.mean), 3 * W + READ);
    let issued = run(drive(&[ack]), "program-at-issue", &reqs);
    assert_eq!(
        ns(issued.figures.latency_us.read.max),
        2 * W + T_PROG + READ - 10_000
    );
    assert_eq!(ns(2.0 * issued.figures.latency_us.write.mean), 3 * W);
}

#[test]
fn a_free_channel_takes_the_lowest_idle_chip_s_program_die_0_first() {
    // Writes at t=0, in this order: page 64 (way 0, die 1), page 8 (way 1), then one sector
    // of page 0 (way 0, die 0; no read-modify-write here: its program moves one sector, WS).
    // Programs wait on channel 0 (at_transfer); writes complete when their data is in.
    // lowest_idle_chip: way 0 first, die 0 before die 1: page 0 [0, WS]; way 0 programs, so
    // way 1: page 8 [WS, WS + W]; then no idle chip has a program until way 0 ends its
    // program at WS + T_PROG: page 64 [WS + T_PROG, WS + T_PROG + W]. Sum of latencies
    // 3 WS + 2 W + T_PROG.
    // arrival: the oldest of an idle chip: page 64 [0, W], page 8 [W, 2 W], page 0 when way 0
    // is idle, [W + T_PROG, W + T_PROG + WS]. Sum 4 W + T_PROG + WS.
    const WS: u64 = CMD + SECTOR_XFER;
    let reqs = [
        (0, 64 * PAGE, PAGE, false),
        (0, 8 * PAGE, PAGE, false),
        (0, 0, SECTOR, false),
    ];
    let mut rules = vec![
        ("device.write_completion", "data_transferred"),
        ("device.scheduler.program_binding", "at_transfer"),
    ];
    let arrival = run(drive(&rules), "program-order-arrival", &reqs);
    assert_eq!(
        ns(3.0 * arrival.figures.latency_us.write.mean),
        4 * W + T_PROG + WS
    );
    rules.push(("device.scheduler.program_order", "lowest_idle_chip"));
    let lowest = run(drive(&rules), "program-order-lowest", &reqs);
    assert_eq!(
        ns(3.0 * lowest.figures.latency_us.write.mean),
        3 * WS + 2 * W + T_PROG
    );
    assert_eq!(ns(lowest.figures.latency_us.write.max), WS + T_PROG + W);
}

#[test]
fn a_request_arriving_at_a_busy_queue_is_handed_over_an_event_later() {
    // t=0: read page 0 (channel 0) into an empty queue of an idle device: at once, READ. Its
    // events: command end CMD, array done CMD + T_R, done READ.
    // t=1000: read page 1 (channel 1). The queue holds the first read, so SSDsim reads it in
    // at its first event at or after 1000 (the array done at CMD + T_R) after that event's
    // hand-over, and hands it over at the next event, READ: it ends at 2 READ, latency
    // 2 READ - 1000 (next_device_event: CMD + T_R + READ - 1000).
    let reqs = [(0, 0, PAGE, true), (1000, PAGE, PAGE, true)];
    let s = run(
        drive(&[("host.handover_at", "second_device_event")]),
        "handover-second-event",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * READ - 1000);
    assert_eq!(ns(2.0 * s.figures.latency_us.read.mean), 3 * READ - 1000);
}

#[test]
fn into_an_empty_queue_a_request_is_read_ahead() {
    // A read of page 3 (channel 3) at t=0 (traces start at 0) ends at READ and empties the
    // queue. Writes complete when their data is in; both arrive at t=1 ms into the empty
    // queue of an idle device (SSDsim's clock is still at READ: they are not due before it
    // moves).
    // A: one sector of page 0 (channel 0), program WS. B: page 1 (channel 1).
    // second_device_event: A is read ahead and handed over at 1 ms; B enters the queue at the
    // end of that instant and goes at the next event, A's transfer end 1 ms + WS: B ends at
    // 1 ms + WS + W. The queue is empty from then. A's program ends at 1 ms + WS + T_PROG,
    // B's at 1 ms + WS + W + T_PROG.
    // C: a read of page 2 (channel 2) at 1.23 ms, between them: a device event (A's program
    // end) came since the queue emptied, so SSDsim moves its clock to C's arrival: latency
    // READ. Writes: WS and WS + W.
    // next_device_event: A and B both at 1 ms (B ends at 1 ms + W); C finds B's chip
    // programming (a flash operation under way) and waits for the next event, B's program
    // end 1 ms + W + T_PROG: latency W + T_PROG + READ - 230 us.
    // (SSDsim, f87ee57 with the hand-over fix, FIFO: 13.0, 64.3 and 71.4 us.)
    const WS: u64 = CMD + SECTOR_XFER;
    let reqs = [
        (0, 3 * PAGE, PAGE, true),
        (1_000_000, 0, SECTOR, false),
        (1_000_000, PAGE, PAGE, false),
        (1_230_000, 2 * PAGE, PAGE, true),
    ];
    let ack = ("device.write_completion", "data_transferred");
    let s = run(
        drive(&[ack, ("host.handover_at", "second_device_event")]),
        "read-ahead",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), READ);
    assert_eq!(ns(2.0 * s.figures.latency_us.write.mean), 2 * WS + W);
    let next = run(
        drive(&[ack, ("host.handover_at", "next_device_event")]),
        "read-ahead-next-event",
        &reqs,
    );
    assert_eq!(
        ns(next.figures.latency_us.read.max),
        W + T_PROG + READ - 230_000
    );
    assert_eq!(ns(2.0 * next.figures.latency_us.write.mean), WS + W);
}

#[test]
fn records_due_at_the_start_are_read_together() {
    // Three reads at t=0 on channels 0, 1 and 2: SSDsim's clock starts at 0, so all three are
    // read before its first pass; one per pass (FIFO): the first goes at 0, the second at the
    // first command's end CMD, the third at 2 CMD: latencies READ, READ + CMD, READ + 2 CMD
    // (SSDsim: 71.4, 71.5, 71.7 us). Mean READ + CMD.
    let reqs = [
        (0, 0, PAGE, true),
        (0, PAGE, PAGE, true),
        (0, 2 * PAGE, PAGE, true),
    ];
    let s = run(
        drive(&[
            ("host.handover_at", "second_device_event"),
            ("host.handover_per_pass", "one"),
        ]),
        "due-at-start",
        &reqs,
    );
    assert_eq!(ns(3.0 * s.figures.latency_us.read.mean), 3 * (READ + CMD));
}

#[test]
fn a_read_of_a_page_being_read_merges() {
    // Reads of page 0 at t=0 and t=1000. Merged: the second completes 1000 ns after its
    // hand-over, with no flash read: latencies READ and 1000, one flash read. Without the
    // rule it waits for the chip: it ends at 2 READ, latency 2 READ - 1000.
    let reqs = [(0, 0, PAGE, true), (1000, 0, PAGE, true)];
    let merged = run(
        drive(&[("device.scheduler.merged_read_ns", "1000")]),
        "read-merge",
        &reqs,
    );
    assert_eq!(ns(2.0 * merged.figures.latency_us.read.mean), READ + 1000);
    assert_eq!(merged.flash.reads, 1);
    let plain = run(drive(&[]), "no-read-merge", &reqs);
    assert_eq!(ns(plain.figures.latency_us.read.max), 2 * READ - 1000);
    assert_eq!(plain.flash.reads, 2);
}

#[test]
fn a_read_moves_every_sector_its_page_holds() {
    // The footprint is written before the trace, so page 0 holds all 4 sectors. A one-sector
    // read moves them all under held_sectors: READ; by default one sector: CMD + T_R +
    // SECTOR_XFER.
    let reqs = [(0, 0, SECTOR, true)];
    let footprint = ("precondition.write_trace_footprint", "true");
    let held = run(
        drive(&[
            footprint,
            ("device.scheduler.read_transfer", "held_sectors"),
        ]),
        "read-held",
        &reqs,
    );
    assert_eq!(ns(held.figures.latency_us.read.max), READ);
    let asked = run(drive(&[footprint]), "read-asked", &reqs);
    assert_eq!(
        ns(asked.figures.latency_us.read.max),
        CMD + T_R + SECTOR_XFER
    );
}

#[test]
fn garbage_collection_holds_its_channel() {
    // One channel, two chips (ways), one die and plane each, 8 blocks of 4 pages; a quarter
    // over-provisioned; GC below ceil(8 x 0.2) = 2 free blocks. Even logical pages are on way
    // 0. One full-page write per ms to way 0, block by block: x, x, x, y_k with x = page 0 and
    // y_k = page 2k (k = 1..6), filling blocks 0-5; blocks 0-4 then hold 3 stale pages and
    // one valid (y_k). The 25th write (x) opens block 6, leaving 1 free block: GC collects one
    // of blocks 0-4, one page move and an erase. The write's program ends at
    // t_g = 24 ms + W + T_PROG, when way 0 is idle and the channel has no host work.
    // holds_channel: GC starts at t_g and holds the channel for one move, D = 2 CMD + T_R +
    // T_PROG + 2 XFER (the page out and back in). A read of page 1 (way 1) at t_g + 10 us
    // waits for the channel: latency D + READ - 10 us.
    // queued: the copyback and erase run on way 0 and use the channel only for commands, so
    // the read takes READ.
    let small = [
        ("geometry.channels", "1"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "1"),
        ("geometry.blocks_per_plane", "8"),
        ("geometry.pages_per_block", "4"),
        ("ftl.overprovisioning_fraction", "0.25"),
        ("ftl.gc_threshold_fraction", "0.2"),
    ];
    let mut reqs: Vec<(u64, u64, u64, bool)> = Vec::new();
    for k in 1..=6u64 {
        for _ in 0..3 {
            reqs.push((reqs.len() as u64 * 1_000_000, 0, PAGE, false));
        }
        reqs.push((reqs.len() as u64 * 1_000_000, 2 * k * PAGE, PAGE, false));
    }
    reqs.push((24_000_000, 0, PAGE, false));
    let t_g = 24_000_000 + W + T_PROG;
    reqs.push((t_g + 10_000, PAGE, PAGE, true));
    let d = 2 * CMD + T_R + T_PROG + 2 * XFER;
    let mut holds = small.to_vec();
    holds.push(("device.scheduler.gc", "holds_channel"));
    let s = run(drive(&holds), "gc-holds-channel", &reqs);
    assert_eq!((s.flash.copybacks, s.flash.erases), (1, 1));
    assert_eq!(ns(s.figures.latency_us.read.max), d + READ - 10_000);
    let q = run(drive(&small), "gc-queued", &reqs);
    assert_eq!((q.flash.copybacks, q.flash.erases), (1, 1));
    assert_eq!(ns(q.figures.latency_us.read.max), READ);
}

#[test]
fn gc_counts_free_pages_under_the_pages_trigger() {
    // The small drive of the test above: a plane of 8 blocks of 4 pages on each way, GC
    // threshold 0.2: ceil(8 x 0.2) = 2 free blocks, or ceil(32 x 0.2) = 7 free pages. Writes
    // to way 0 only, one per ms. The 25th write opens the 7th block: 1 free block is left
    // (below 2: GC under free_blocks) and 1 + 3 pages of the open block, 4 + 3 = 7 free pages
    // (not below 7: no GC under free_pages). The 26th leaves 6 free pages: GC under
    // free_pages too. One erase each time (one victim frees enough).
    let small = [
        ("geometry.channels", "1"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "1"),
        ("geometry.blocks_per_plane", "8"),
        ("geometry.pages_per_block", "4"),
        ("ftl.overprovisioning_fraction", "0.25"),
        ("ftl.gc_threshold_fraction", "0.2"),
    ];
    let writes = |n: usize| -> Vec<(u64, u64, u64, bool)> {
        (0..n)
            .map(|i| (i as u64 * 1_000_000, 2 * (i as u64 % 3) * PAGE, PAGE, false))
            .collect()
    };
    let mut pages = small.to_vec();
    pages.push(("ftl.gc_trigger", "free_pages"));
    for (n, blocks_rule, pages_rule) in [(25, 1, 0), (26, 1, 1)] {
        let b = run(drive(&small), "gc-free-blocks", &writes(n));
        let p = run(drive(&pages), "gc-free-pages", &writes(n));
        assert_eq!(
            (b.flash.erases, p.flash.erases),
            (blocks_rule, pages_rule),
            "{n} writes"
        );
    }
}

#[test]
fn the_ssdsim_switches_are_refused_where_they_cannot_act() {
    for (overrides, key) in [
        (
            vec![
                ("device.scheduler.kind", "ssdsim"),
                ("device.scheduler.program_order", "lowest_idle_chip"),
            ],
            "device.scheduler.program_binding",
        ),
        (
            vec![
                ("device.scheduler.kind", "ssdsim"),
                ("device.scheduler.gc", "holds_channel"),
                ("interconnect.kind", "ideal"),
            ],
            "interconnect.kind",
        ),
        (
            vec![
                ("device.scheduler.kind", "ssdsim"),
                ("device.scheduler.program_binding", "at_transfer"),
                ("device.multiplane", "true"),
            ],
            "device.multiplane",
        ),
    ] {
        let overrides: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let err = Config::from_preset("ssdsim-mlc-8x8", &overrides).unwrap_err();
        assert!(err.to_string().contains(key), "{err}");
    }
}
