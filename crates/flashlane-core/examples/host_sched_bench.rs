//! Micro-benchmark: ns per push+pop decision for every host scheduler, 64 requests waiting,
//! random 1-8 page requests over 1 GiB, 8 channels x 8 chips, channel-first striping.
//!
//! Run: `cargo run --release -p flashlane-core --example host_sched_bench`

use std::hint::black_box;
use std::time::Instant;

use flashlane_core::geometry::{Geometry, Level, StaticMap};
use flashlane_core::host::{HostRequest, HostScheduler, HostSchedulerConfig, HostView};
use flashlane_core::trace::Op;

const DEPTH: usize = 64;
const DECISIONS: u64 = 400_000;

fn main() {
    let g = Geometry {
        channels: 8,
        chips_per_channel: 8,
        dies_per_chip: 2,
        planes_per_die: 2,
        blocks_per_plane: 1024,
        pages_per_block: 64,
        page_bytes: 4096,
    };
    let map = StaticMap::new(&g, [Level::Channel, Level::Chip, Level::Die, Level::Plane]);
    let per_chip = vec![0u32; g.chips() as usize];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Pre-generate so the timing holds only scheduler work.
    let requests: Vec<HostRequest> = (0..DECISIONS + DEPTH as u64)
        .map(|i| {
            let lpn = rand() % (1 << 18);
            let pages = 1 + (rand() % 8) as u32;
            HostRequest {
                id: i as u32, // id = index into `requests`
                seq: i,
                arrival_ns: i * 1_000,
                op: if rand() % 3 == 0 { Op::Write } else { Op::Read },
                offset_bytes: lpn * 4096,
                size_bytes: pages as u64 * 4096,
                first_lpn: lpn,
                pages,
                stream: (rand() % 8) as u32,
                chips: map.chips_of_range(lpn, pages as u64),
            }
        })
        .collect();
    println!("{:<14} {:>12}", "scheduler", "ns/decision");
    for cfg in HostSchedulerConfig::all_defaults() {
        let mut s = cfg.build();
        let mut next = 0usize;
        let mut out = Vec::with_capacity(8);
        let view = |now_ns| HostView {
            now_ns,
            geometry: &g,
            static_map: &map,
            outstanding_per_chip: &per_chip,
            outstanding: 0,
            device_free_slots: 32,
        };
        while s.len() < DEPTH {
            s.push(requests[next], &view(0));
            next += 1;
        }
        let start = Instant::now();
        for i in 0..DECISIONS {
            let now = (DEPTH as u64 + i) * 1_000;
            out.clear();
            s.pop(&view(now), &mut out);
            // Completing at once keeps the device empty, so no scheduler holds for conflicts.
            for id in &out {
                s.complete(&requests[*id as usize], &view(now));
            }
            while s.len() < DEPTH && next < requests.len() {
                s.push(requests[next], &view(now));
                next += 1;
            }
            black_box(&out);
        }
        let ns = start.elapsed().as_nanos() as f64 / DECISIONS as f64;
        println!("{:<14} {:>12.1}", cfg.name(), ns);
    }
}
