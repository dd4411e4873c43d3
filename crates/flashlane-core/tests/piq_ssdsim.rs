//! The PIQ paper's platform (SSDsim's queueing) and PIQ's batch cycles, on hand-made cases.
//!
//! Timings of the `ssdsim-mlc-8x8` preset: command 175 ns, tR 20 us, tPROG 200 us, channel
//! 0.04 bytes/ns (a 2 KiB page crosses in 51,200 ns). Channel-first static allocation over 8
//! channels x 8 chips x 2 dies: logical page p is on chip p mod 64 (chip c on channel c mod 8),
//! and pages 0 and 64 are dies 0 and 1 of chip 0.

use crate::common::run;
use crate::common::ssdsim_8x8::{drive, ns, PAGE, READ, WRITE};
use flashlane_core::geometry::{ChipSet, Geometry, Level, StaticMap};
use flashlane_core::host::{HostRequest, HostScheduler, HostView, Piq, PiqVariant, RequestId};
use flashlane_core::trace::Op;

#[test]
fn ssdsim_chip_runs_one_operation_across_both_dies() {
    // Reads of pages 0 and 64 (dies 0 and 1 of chip 0) at t = 0. With SSDsim's chip-level
    // busy the second starts only when the first is done (READ), so it ends at 2 x READ. The
    // per-die default (`out_of_order`) overlaps the second's array time with the first's, so
    // there it ends earlier.
    let reqs = [(0, 0, PAGE, true), (0, 64 * PAGE, PAGE, true)];
    let s = run(
        drive(&[("device.scheduler.kind", "ssdsim")]),
        "ssdsim-chip",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * READ);
    assert_eq!(ns(2.0 * s.figures.latency_us.read.mean), 3 * READ);
    let per_die = run(drive(&[]), "per-die-chip", &reqs);
    assert!(ns(per_die.figures.latency_us.read.max) < 2 * READ);
}

#[test]
fn ssdsim_reads_overtake_a_queued_write_on_their_chip() {
    // t=0: write page 0 (chip 0 die 0), busy until WRITE. t=10: write page 64 (chip 0, die 1)
    // waits for the chip. t=20: read page 0 (now mapped to chip 0) waits too. When the chip
    // frees at WRITE the read goes first (reads first), ending at WRITE + READ: latency
    // WRITE + READ - 20. The second write follows: it ends at WRITE + READ + WRITE, latency
    // 2 WRITE + READ - 10.
    let reqs = [
        (0, 0, PAGE, false),
        (10, 64 * PAGE, PAGE, false),
        (20, 0, PAGE, true),
    ];
    let s = run(
        drive(&[("device.scheduler.kind", "ssdsim")]),
        "ssdsim-reads-first",
        &reqs,
    );
    assert_eq!(ns(s.figures.latency_us.read.max), WRITE + READ - 20);
    assert_eq!(ns(s.figures.latency_us.write.max), 2 * WRITE + READ - 10);
    // The two writes' latencies sum to WRITE + (2 WRITE + READ - 10).
    assert_eq!(
        ns(2.0 * s.figures.latency_us.write.mean),
        3 * WRITE + READ - 10
    );
}

#[test]
fn ssdsim_request_queue_counts_outstanding_requests() {
    // Reads of pages 0 and 1 (chips 0 and 1, channels 0 and 1) at t = 0. With room for one
    // request inside the SSD (SSDsim's queue_length = 1) the second enters only when the first
    // completes: it ends at 2 x READ. With the host queue alone bounding waiting requests
    // both go at once and both take READ.
    let reqs = [(0, 0, PAGE, true), (0, PAGE, PAGE, true)];
    let one_inside = drive(&[
        ("device.scheduler.kind", "ssdsim"),
        ("host.queue_length_requests", "1"),
        ("host.queue_includes_outstanding", "true"),
    ]);
    let s = run(one_inside, "ssdsim-queue-1", &reqs);
    assert_eq!(ns(s.figures.latency_us.read.max), 2 * READ);
    assert_eq!(ns(2.0 * s.figures.latency_us.read.mean), 3 * READ);
    let host_only = drive(&[
        ("device.scheduler.kind", "ssdsim"),
        ("host.queue_length_requests", "1"),
    ]);
    let s = run(host_only, "ssdsim-queue-host", &reqs);
    assert_eq!(ns(s.figures.latency_us.read.max), READ);
}

fn request(id: RequestId, map: &StaticMap, lpn: u64, pages: u32) -> HostRequest {
    HostRequest {
        id,
        seq: id as u64,
        arrival_ns: 0,
        op: Op::Read,
        offset_bytes: lpn * 4096,
        size_bytes: pages as u64 * 4096,
        first_lpn: lpn,
        pages,
        stream: 0,
        chips: map.chips_of_range(lpn, pages as u64),
    }
}

fn pop_all(piq: &mut Piq, view: &HostView) -> Vec<RequestId> {
    let mut all = Vec::new();
    loop {
        let mut out = Vec::new();
        piq.pop(view, &mut out);
        if out.is_empty() {
            return all;
        }
        all.extend(out);
    }
}

/// PIQ Figure 7's reads with `batch_cycles`: V(R0) = {2,3}, V(R1) = {1,2}, V(R2) = {0,1};
/// B0 = {R0, R2}, B1 = {R1}. B0 is issued; R1 does not go while B0 is out. When R0 completes,
/// B0's vector is {0,1} (R2 still out), so a new R3 on chips {2,3} joins B0 and goes at once,
/// over-passing R1 (the paper's "worst case"). R1 goes only when R2 and R3 have completed.
#[test]
fn piq_batch_cycle_waits_for_its_members_and_takes_late_joiners() {
    let g = Geometry {
        channels: 4,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_bytes: 4096,
    };
    let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
    let per_chip = vec![0u32; 4];
    // The cycle rule does not look at per-chip counts, so an all-idle view is enough.
    let view = HostView {
        now_ns: 0,
        geometry: &g,
        static_map: &map,
        outstanding_per_chip: &per_chip,
        outstanding: 0,
        device_free_slots: 8,
    };
    let r = [
        request(0, &map, 2, 2),
        request(1, &map, 1, 2),
        request(2, &map, 0, 2),
        request(3, &map, 2, 2),
    ];
    let mut piq = Piq::new(PiqVariant::Piq, true, true).with_batch_cycles(true);
    for q in &r[..3] {
        piq.push(*q, &view);
    }
    assert_eq!(pop_all(&mut piq, &view), vec![0, 2]);
    piq.complete(&r[0], &view);
    assert_eq!(pop_all(&mut piq, &view), Vec::<RequestId>::new());
    piq.push(r[3], &view);
    let mut b0 = ChipSet::EMPTY;
    for c in [0, 1, 2, 3] {
        b0.insert(c);
    }
    assert_eq!(piq.batches(Op::Read)[0].0, b0);
    assert_eq!(pop_all(&mut piq, &view), vec![3]);
    piq.complete(&r[2], &view);
    assert_eq!(pop_all(&mut piq, &view), Vec::<RequestId>::new());
    piq.complete(&r[3], &view);
    assert_eq!(pop_all(&mut piq, &view), vec![1]);
    piq.complete(&r[1], &view);
    assert!(piq.is_empty());
    assert_eq!(piq.waiting_batches(Op::Read), 0);
}
