//! The papers' worked examples.

use flashlane_core::geometry::{ChipSet, Geometry, Level, StaticMap};
use flashlane_core::host::{
    HostRequest, HostScheduler, HostSchedulerConfig, HostView, Piq, PiqVariant, RequestId, Vios,
};
use flashlane_core::trace::Op;

fn geometry(channels: u32, ways: u32, page_bytes: u32) -> Geometry {
    Geometry {
        channels,
        chips_per_channel: ways,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_bytes,
    }
}

fn channel_first(g: &Geometry) -> StaticMap {
    StaticMap::new(g, [Level::Channel, Level::Chip, Level::Die, Level::Plane])
}

fn request(id: RequestId, op: Op, map: &StaticMap, lpn: u64, pages: u32) -> HostRequest {
    HostRequest {
        id,
        seq: id as u64,
        arrival_ns: 0,
        op,
        offset_bytes: lpn * 4096,
        size_bytes: pages as u64 * 4096,
        first_lpn: lpn,
        pages,
        stream: 0,
        chips: map.chips_of_range(lpn, pages as u64),
    }
}

fn set(chips: &[u32]) -> ChipSet {
    let mut s = ChipSet::EMPTY;
    for c in chips {
        s.insert(*c);
    }
    s
}

/// The paper's integer reading of a location vector: chip 0 is the most significant bit.
fn paper_vector(s: &ChipSet, chips: u32) -> u64 {
    s.iter().map(|c| 1u64 << (chips - 1 - c)).sum()
}

fn view<'a>(g: &'a Geometry, map: &'a StaticMap, per_chip: &'a [u32]) -> HostView<'a> {
    HostView {
        now_ns: 0,
        geometry: g,
        static_map: map,
        outstanding_per_chip: per_chip,
        outstanding: per_chip.iter().sum(),
        device_free_slots: 8,
    }
}

/// PIQ Section IV-A: NC = 8, SS = page = 4 KB, request (r, LBN 14854, 2 sectors) touches
/// chips 6 and 7; the paper writes its vector as 00000011 = 3.
#[test]
fn piq_location_vector_example() {
    let g = geometry(8, 1, 4096);
    let map = channel_first(&g);
    let sector_bytes = 4096u64;
    let lbn = 14854u64;
    let first_lpn = lbn * sector_bytes / g.page_bytes as u64;
    let last_lpn = (lbn + 2) * sector_bytes / g.page_bytes as u64 - 1;
    let chips = map.chips_of_range(first_lpn, last_lpn - first_lpn + 1);
    assert_eq!(chips, set(&[6, 7]));
    assert_eq!(paper_vector(&chips, 8), 3);
}

/// PIQ Figure 5: the paper's conflict examples, as integers with chip 0 as the top bit.
#[test]
fn piq_figure5_vectors_decode_to_the_named_chips() {
    // Eight chips, one per channel: page p is on chip p mod 8. Each pair of the figure as two
    // requests (first page, pages), the vectors the static map gives them, and the chip they
    // share by ChipSet's own test.
    let g = geometry(8, 1, 4096);
    let map = channel_first(&g);
    for ((a_lpn, a_pages, a_vec), (b_lpn, b_pages, b_vec), shared) in [
        ((4, 2, 12), (5, 2, 6), 5),
        ((1, 1, 64), (1, 2, 96), 1),
        ((5, 2, 6), (6, 2, 3), 6),
    ] {
        let a = request(0, Op::Read, &map, a_lpn, a_pages);
        let b = request(1, Op::Read, &map, b_lpn, b_pages);
        assert_eq!(
            (paper_vector(&a.chips, 8), paper_vector(&b.chips, 8)),
            (a_vec, b_vec)
        );
        assert!(a.chips.intersects(&b.chips), "{a_vec} & {b_vec} conflict");
        let both: Vec<u32> = a.chips.iter().filter(|c| b.chips.contains(*c)).collect();
        assert_eq!(both, vec![shared], "{a_vec} & {b_vec}");
    }
    // And a pair the figure shows without conflict: 12 & 3.
    let a = request(0, Op::Read, &map, 4, 2);
    let b = request(1, Op::Read, &map, 6, 2);
    assert!(!a.chips.intersects(&b.chips));
}

/// PIQ Figures 6/7: four chips, one per channel; V(R0)=3, V(R1)=6, V(R2)=12. R0 opens B0, R1
/// conflicts with B0 (3 & 6 = 2) and opens B1, R2 joins B0 (3 & 12 = 0), B0 becomes 15. Two
/// read cycles instead of NOOP's three.
#[test]
fn piq_figure7_batches_and_cycles() {
    let g = geometry(4, 1, 4096);
    let map = channel_first(&g);
    // Chip = lpn mod 4 here; two pages each.
    let r0 = request(0, Op::Read, &map, 2, 2); // chips 2,3 -> 0011 = 3
    let r1 = request(1, Op::Read, &map, 1, 2); // chips 1,2 -> 0110 = 6
    let r2 = request(2, Op::Read, &map, 0, 2); // chips 0,1 -> 1100 = 12
    assert_eq!([r0, r1, r2].map(|r| paper_vector(&r.chips, 4)), [3, 6, 12]);
    let mut per_chip = vec![0u32; 4];
    let mut piq = Piq::new(PiqVariant::Piq, true, true);
    for r in [r0, r1, r2] {
        piq.push(r, &view(&g, &map, &per_chip));
    }
    let batches = piq.batches(Op::Read);
    assert_eq!(batches.len(), 2);
    assert_eq!(paper_vector(&batches[0].0, 4), 15);
    assert_eq!(batches[0].1, vec![0, 2]);
    assert_eq!(paper_vector(&batches[1].0, 4), 6);
    assert_eq!(batches[1].1, vec![1]);

    // Cycle 1 issues B0 (R0, R2) together; R1 waits for its chips; cycle 2 issues B1.
    let mut out = Vec::new();
    let mut cycles = 0;
    let mut order = Vec::new();
    while !piq.is_empty() {
        cycles += 1;
        loop {
            out.clear();
            piq.pop(&view(&g, &map, &per_chip), &mut out);
            let Some(&id) = out.first() else { break };
            order.push(id);
            for c in [r0, r1, r2][id as usize].chips.iter() {
                per_chip[c as usize] += 1;
            }
        }
        per_chip.iter_mut().for_each(|n| *n = 0); // the cycle's requests complete
    }
    assert_eq!(order, vec![0, 2, 1]);
    assert_eq!(cycles, 2);

    // NOOP (the scheduler itself) issues in FIFO order; each request conflicts with the one
    // before it, so each waits for its predecessor's chips: three cycles.
    let mut noop = HostSchedulerConfig::default_for("noop").unwrap().build();
    let idle = vec![0u32; 4];
    for r in [r0, r1, r2] {
        noop.push(r, &view(&g, &map, &idle));
    }
    let mut fifo = Vec::new();
    while !noop.is_empty() {
        out.clear();
        noop.pop(&view(&g, &map, &idle), &mut out);
        fifo.extend(out.iter().map(|&id| [r0, r1, r2][id as usize]));
    }
    assert_eq!(fifo.iter().map(|r| r.id).collect::<Vec<_>>(), vec![0, 1, 2]);
    let noop_cycles = 1 + fifo
        .windows(2)
        .filter(|w| w[0].chips.intersects(&w[1].chips))
        .count();
    assert_eq!(noop_cycles, 3);
    assert_eq!(piq.report().batches, 2);
}

/// PIQ Figure 7: read batches are issued before write batches.
#[test]
fn piq_reads_before_writes() {
    let g = geometry(4, 1, 4096);
    let map = channel_first(&g);
    let per_chip = vec![0u32; 4];
    let mut piq = HostSchedulerConfig::default_for("piq").unwrap().build();
    piq.push(
        request(0, Op::Write, &map, 0, 2),
        &view(&g, &map, &per_chip),
    );
    piq.push(request(1, Op::Read, &map, 2, 2), &view(&g, &map, &per_chip));
    let mut out = Vec::new();
    piq.pop(&view(&g, &map, &per_chip), &mut out);
    assert_eq!(out, vec![1]);
    assert_eq!(piq.report().reads_prioritized, 1);
}

/// VIOS Figure 3: 8 chips on 4 channels, channel-first allocation, so the paper's chip p is
/// logical page p and sits on channel p mod 4. After five requests, one accessing chips
/// {6, 7} joins the first chip batch (A_chip becomes {0,1,2,4,5,6,7}) and its second channel
/// batch (A_channel becomes {0,1,2,3}).
#[test]
fn vios_figure3_example() {
    let g = geometry(4, 2, 4096);
    let map = channel_first(&g);
    let per_chip = vec![0u32; 8];
    let paper_chips = |lpns: &[u64]| {
        let mut s = ChipSet::EMPTY;
        for l in lpns {
            s.insert(map.chip_of(*l));
        }
        s
    };
    let mut vios = Vios::new(true);
    let reqs = [
        request(0, Op::Read, &map, 0, 2), // paper chips {0,1}: chip batch 1, channel batch 1
        request(1, Op::Read, &map, 2, 1), // {2}: channel batch 1 -> channels {0,1,2}
        request(2, Op::Read, &map, 4, 2), // {4,5}: channels {0,1} clash -> channel batch 2
        request(3, Op::Read, &map, 0, 1), // {0}: chip conflict -> chip batch 2
        request(4, Op::Read, &map, 1, 2), // {1,2}: chip batch 2
    ];
    for r in reqs {
        vios.push(r, &view(&g, &map, &per_chip));
    }
    let b = vios.batches(Op::Read);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].0, paper_chips(&[0, 1, 2, 4, 5]));
    assert_eq!(b[0].1.len(), 2);
    assert_eq!(b[0].1[0].0, set(&[0, 1, 2]));

    vios.push(request(5, Op::Read, &map, 6, 2), &view(&g, &map, &per_chip));
    let b = vios.batches(Op::Read);
    assert_eq!(b[0].0, paper_chips(&[0, 1, 2, 4, 5, 6, 7]));
    assert_eq!(b[0].1.len(), 2);
    assert_eq!(b[0].1[1].0, set(&[0, 1, 2, 3]));
    assert_eq!(b[0].1[1].1, vec![2, 5]);
    assert_eq!(b[1].1, vec![(set(&[0, 1, 2]), vec![3, 4])]);

    // Global chip-state vector: waiting requests per chip (paper chips 0 and 1: two each).
    assert_eq!(vios.chip_state()[map.chip_of(0) as usize], 2);
    assert_eq!(vios.chip_state()[map.chip_of(1) as usize], 2);
    let mut out = Vec::new();
    vios.pop(&view(&g, &map, &per_chip), &mut out);
    assert_eq!(out, vec![0]);
    assert_eq!(vios.chip_state()[map.chip_of(1) as usize], 1);
}
