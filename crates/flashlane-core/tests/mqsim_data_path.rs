//! MQSim's data path as config choices, on hand-made cases whose outcomes the comments derive:
//! the PCIe host link (`host.link`), update reads of partial-page writes whose program keeps
//! its place in the queue (`ftl.partial_page_writes = "update_read"`), and GC page moves by a
//! read and a program over the channel (`ftl.gc_page_move = "read_and_program"`).
//!
//! Timings are `mqsim-platform`'s: command 21 ns, tR 75 us, tPROG 750 us, tBERS 3.8 ms,
//! 0.333 bytes/ns on the channel; the link is 4 lanes of 1 byte/ns with 128-byte TLPs and 28
//! bytes of overhead per TLP.

use crate::common::{preset, run};
use flashlane_core::config::Config;

const CMD: u64 = 21;
const T_R: u64 = 75_000;
const T_PROG: u64 = 750_000;
const T_BERS: u64 = 3_800_000;
const PAGE: u64 = 8192;
const MS: u64 = 1_000_000;

/// Channel time of `bytes`, ns (rounded up, as the bus model does).
fn xfer(bytes: u64) -> u64 {
    (bytes as f64 / 0.333).ceil() as u64
}

fn ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// `mqsim-platform`, whole map in DRAM (no mapping reads), with `extra` on top.
fn platform(extra: &[(&str, &str)]) -> Config {
    let mut all = vec![("ftl.mapping_cache_bytes", "0")];
    all.extend_from_slice(extra);
    preset("mqsim-platform", &all)
}

/// One 4 KiB read, then (on another run) one 4 KiB write, on an idle drive.
/// - Read: the doorbell (2 + 28 bytes over 4 lanes: 8 ns) goes to the device while the device
///   asks for the submission entry (a 32-byte read request to the host: 8 ns); the 64-byte
///   entry then crosses in (64 + 28) / 4 = 23 ns: the command is at the device at 31 ns. The
///   never-written page is allocated and read: command, tR, 4 KiB out (12,301 ns). Its data
///   cross the link in 32 TLPs x 156 bytes / 4 lanes = 1,248 ns, the 16-byte completion
///   entry in 11 ns.
/// - Write: after the entry (31 ns) the device asks for the data (8 ns) and receives them
///   (1,248 ns); the program moves 4 KiB in (command + 12,301 ns) and takes tPROG; then the
///   completion entry (11 ns).
///
/// Without the link both are the flash time alone.
#[test]
fn the_host_link_adds_mqsims_message_times() {
    let read_flash = CMD + T_R + xfer(4096);
    let write_flash = CMD + xfer(4096) + T_PROG;
    for (link, read, write) in [
        (
            "pcie",
            31 + read_flash + 1248 + 11,
            31 + 8 + 1248 + write_flash + 11,
        ),
        ("none", read_flash, write_flash),
    ] {
        let config = platform(&[("host.link.kind", link)]);
        let r = run(config.clone(), "link-read", &[(0, 0, 4096, true)]);
        assert_eq!(ns(r.figures.latency_us.read.max), read, "{link}");
        let w = run(config, "link-write", &[(0, 0, 4096, false)]);
        assert_eq!(ns(w.figures.latency_us.write.max), write, "{link}");
    }
}

/// Each direction of the link is one FIFO. Reads A (page 0 on channel 0) and B (page 1 on
/// channel 1) arrive at t = 0. To the device: A's doorbell [0, 8], A's entry [8, 31] (its
/// fetch request crossed to the host in [0, 8]); B's doorbell [31, 39], B's entry [39, 62]
/// (fetch request [8, 16]). Each channel reads its page in CMD + tR + xfer(8 KiB) = 99,622
/// ns, so A's flash work ends at 99,653 and B's at 99,684. To the host: A's 8 KiB (64 TLPs of
/// 156 bytes over 4 lanes, 2,496 ns) and completion entry (11 ns) end at 102,160; B's data
/// wait for them and end, with B's entry, at 104,667. Without the link both take 99,622 ns.
#[test]
fn read_data_queue_on_the_link_to_the_host() {
    let requests = [(0, 0, PAGE, true), (0, PAGE, PAGE, true)];
    let flash = CMD + T_R + xfer(PAGE);
    assert_eq!(flash, 99_622);
    for (link, a, b) in [("pcie", 102_160, 104_667), ("none", flash, flash)] {
        let s = run(
            platform(&[("host.link.kind", link)]),
            "link-fifo",
            &requests,
        );
        assert_eq!(ns(2.0 * s.figures.latency_us.read.mean), a + b, "{link}");
        assert_eq!(ns(s.figures.latency_us.read.max), b, "{link}");
    }
}

/// Page 0 is written whole at t = 0. At 10 ms, W1 writes its first 4 KiB (sectors 0-7), so
/// the other 4 KiB, which hold data, must be read first; 1 ns later W2 writes page 128, whole,
/// on the same plane (static striping over 128 planes). The update read R1 goes first (reads
/// before writes), alone on the die: command, tR, 4 KiB out.
/// - `update_read` (MQSim): W1's program kept its place ahead of W2's; it moves only the
///   host's 4 KiB, then W2's 8 KiB go: W1 = R1 + (CMD + xfer(4 KiB) + tPROG),
///   W2 = W1 + (CMD + xfer(8 KiB) + tPROG) - 1.
/// - `read_modify_write` (SSDsim's rule, composed here with MQSim's GC keys): W1's program
///   re-enters the queue when R1 ends, behind W2, and carries the merged 8 KiB:
///   W2 = R1 + (CMD + xfer(8 KiB) + tPROG) - 1, W1 = W2 + 1 + (CMD + xfer(8 KiB) + tPROG).
///
/// Both count one read-modify-write read; without reads first there is none and W1 is a
/// plain 4 KiB program.
#[test]
fn an_update_read_s_program_keeps_its_place_and_carries_the_host_sectors() {
    let requests = [
        (0, 0, PAGE, false),
        (10 * MS, 0, 4096, false),
        (10 * MS + 1, 128 * PAGE, PAGE, false),
    ];
    let read = CMD + T_R + xfer(4096);
    let half = CMD + xfer(4096) + T_PROG;
    let whole = CMD + xfer(PAGE) + T_PROG;
    let sum = |w1: u64, w2: u64| whole + w1 + w2;
    for (rule, rmw_reads, w1, w2) in [
        ("update_read", 1, read + half, read + half + whole - 1),
        (
            "read_modify_write",
            1,
            read + whole + whole,
            read + whole - 1,
        ),
        ("whole_page", 0, half, half + whole - 1),
    ] {
        let s = run(
            platform(&[
                ("host.link.kind", "none"),
                ("ftl.partial_page_writes", rule),
            ]),
            &format!("update-read-{rule}"),
            &requests,
        );
        assert_eq!(s.flash.read_modify_write_reads, rmw_reads, "{rule}");
        assert_eq!(
            ns(3.0 * s.figures.latency_us.write.mean),
            sum(w1, w2),
            "{rule}"
        );
        assert_eq!(
            ns(s.figures.latency_us.write.max),
            whole.max(w1).max(w2),
            "{rule}"
        );
    }
}

/// A read of a never-written page holds only the sectors it read (MQSim's
/// `online_create_entry_for_reads` records the read's bitmap): after a read of page 0's first
/// 4 KiB, a write of the same 4 KiB covers every sector that holds data and reads nothing,
/// while a write of the other 4 KiB must read the first half back.
#[test]
fn an_allocating_read_holds_only_the_sectors_it_read() {
    for (offset, rmw_reads) in [(0, 0), (4096, 1)] {
        let s = run(
            platform(&[("host.link.kind", "none")]),
            &format!("alloc-sectors-{offset}"),
            &[(0, 0, 4096, true), (MS, offset, 4096, false)],
        );
        assert_eq!(
            s.flash.read_modify_write_reads, rmw_reads,
            "offset {offset}"
        );
    }
}

/// Update reads under MQSim's asynchronous GC, with the cached mapping table on and off:
/// random 4 KiB writes at 512-byte offsets over a small drive that runs GC. Every request
/// completes, every read returns the last data written, and partial-page writes read first.
#[test]
fn update_reads_compose_with_asynchronous_gc() {
    for cmt in ["0", "65536"] {
        let config = preset(
            "mqsim-platform",
            &[
                ("geometry.blocks_per_plane", "32"),
                ("geometry.pages_per_block", "16"),
                ("geometry.channels", "2"),
                ("geometry.chips_per_channel", "1"),
                ("ftl.gc_threshold_min_blocks", "4"),
                ("ftl.gc_max_victims_per_plane", "2"),
                ("ftl.write_stall_below_free_blocks", "4"),
                ("ftl.mapping_cache_bytes", cmt),
            ],
        );
        let logical = (2 * 2 * 2 * 32 * 16) as f64 * PAGE as f64 * 0.93;
        let span = (logical * 0.7) as u64 / 512;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let requests: Vec<_> = (0..12_000u64)
            .map(|i| {
                let sector = next() % (span - 8);
                (i * 300_000, sector * 512, 4096, next() % 4 == 0)
            })
            .collect();
        let path = crate::common::mqsim_trace(&format!("update-gc-{cmt}"), &requests);
        let mut spec = crate::common::spec(config, path.clone());
        spec.check_integrity = true;
        let s = flashlane_core::run(&spec).unwrap();
        std::fs::remove_file(path).unwrap();
        assert_eq!(s.figures.requests.completed, 12_000, "cmt {cmt}");
        assert_eq!(s.integrity_violations, Some(0), "cmt {cmt}");
        assert!(s.gc.runs > 50, "cmt {cmt}: GC ran {} times", s.gc.runs);
        assert!(
            s.flash.read_modify_write_reads > 1000,
            "cmt {cmt}: {:?}",
            s.flash
        );
    }
}

/// `mqsim-platform`'s rules are its own: no other preset sets the data-path keys.
#[test]
fn only_mqsim_platform_sets_mqsims_data_path() {
    use flashlane_core::ftl::{GcPageMove, PartialPageWrites};
    let platform = preset("mqsim-platform", &[]);
    assert!(!platform.host.link.is_none());
    assert_eq!(
        platform.ftl.partial_page_writes,
        PartialPageWrites::UpdateRead
    );
    assert_eq!(platform.ftl.gc_page_move, GcPageMove::ReadAndProgram);
    for name in flashlane_core::config::preset_names() {
        let config = preset(name, &[]);
        if name != "mqsim-platform" {
            assert!(config.host.link.is_none(), "{name}");
            assert_eq!(config.ftl.gc_page_move, GcPageMove::Copyback, "{name}");
            assert_ne!(
                config.ftl.partial_page_writes,
                PartialPageWrites::UpdateRead,
                "{name}"
            );
        }
    }
}

/// Bad link and rule values are refused by name; `update_read` is refused with SOS.
#[test]
fn data_path_keys_are_validated() {
    for (key, value, says) in [
        ("host.link.lane_count", "0", "host.link.lane_count"),
        (
            "host.link.lane_bytes_per_ns",
            "0",
            "host.link.lane_bytes_per_ns",
        ),
        ("host.link.kind", "usb", "usb"),
        ("ftl.gc_page_move", "teleport", "teleport"),
        ("device.scheduler.kind", "sos", "update_read"),
    ] {
        let err = Config::from_preset("mqsim-platform", &[(key.into(), value.into())])
            .expect_err(key)
            .to_string();
        assert!(err.contains(says), "{key}={value}: {err}");
    }
}

/// GC by read and program on a one-plane drive of 4 blocks of 2 pages (8 KiB), half of it
/// logical, MQSim's read-first order: writes of pages 0, 1, 0, 2, 3, 2 fill three blocks, each
/// with one stale page; the write of page 3 at 60 ms opens the last block and GC collects one
/// victim, moving its one valid page. A read of page 1 arrives 1 ns later and waits, on the
/// one die, for the GC work (which goes before host reads) and then reads:
/// - copyback: CMD + tR + CMD + tPROG, then the erase (CMD + tBERS);
/// - read and program: CMD + tR + the page out (xfer 8 KiB), then CMD + the page in + tPROG,
///   then the erase: the same flash work plus the page twice over the channel.
///
/// Both move one page and erase one block.
#[test]
fn gc_moves_by_read_and_program_cross_the_channel() {
    let writes = [0, 1, 0, 2, 3, 2, 3];
    let mut requests: Vec<_> = writes
        .iter()
        .enumerate()
        .map(|(i, &page)| (i as u64 * 10 * MS, page * PAGE, PAGE, false))
        .collect();
    requests.push((60 * MS + 1, PAGE, PAGE, true));
    let read = CMD + T_R + xfer(PAGE);
    let erase = CMD + T_BERS;
    let mut latency = Vec::new();
    for moves in ["copyback", "read_and_program"] {
        let config = preset(
            "mqsim-ssd",
            &[
                ("geometry.channels", "1"),
                ("geometry.chips_per_channel", "1"),
                ("geometry.dies_per_chip", "1"),
                ("geometry.planes_per_die", "1"),
                ("geometry.blocks_per_plane", "4"),
                ("geometry.pages_per_block", "2"),
                ("ftl.overprovisioning_fraction", "0.5"),
                ("ftl.gc_threshold_fraction", "0.25"),
                ("ftl.mapping_cache_bytes", "0"),
                ("precondition.write_trace_footprint", "false"),
                ("device.scheduler.kind", "read_first"),
                ("ftl.gc_page_move", moves),
            ],
        );
        let s = run(config, &format!("gc-move-{moves}"), &requests);
        assert_eq!((s.flash.copybacks, s.flash.erases), (1, 1), "{moves}");
        latency.push(ns(s.figures.latency_us.read.max));
    }
    assert_eq!(latency[0], CMD + T_R + CMD + T_PROG + erase + read - 1);
    assert_eq!(
        latency[1],
        CMD + T_R + xfer(PAGE) + CMD + xfer(PAGE) + T_PROG + erase + read - 1
    );
}
