//! Named synthetic stand-ins for the workloads the papers characterise.
//!
//! A profile matches only the figures its paper publishes (read share, mean size, mean
//! inter-arrival, request count); everything else (address pattern, size spread, burstiness)
//! is a documented neutral default, so results on a profile are not results on the trace.
//! Each profile's label says so and must travel with anything produced from it.

use super::profile::{Profile, Published};
use super::{AddressSpec, ArrivalSpec, SizeSpec, SyntheticSpec};

/// Every profile's address span: 4 GiB fits the logical capacity of every bundled preset
/// (the smallest, sos-4x4, holds about 7.4 GiB).
pub const PROFILE_SPAN_BYTES: u64 = 4 << 30;
/// Requests a Venice profile generates by default (the paper gives no count).
pub const VENICE_DEFAULT_REQUESTS: u64 = 100_000;
/// Sizes are whole 4 KiB pages: the neutral alignment of the block layer and of most flash.
const PAGE_BYTES: u64 = 4096;
/// PIQ publishes no sizes: the median mean size of the ten MSR Cambridge rows of Venice
/// Table 2 (7.2, 8.8, 9.2, 9.6, 9.6 | 9.6, 22.8, 29.6, 43.2, 59.2 KB).
const PIQ_DEFAULT_MEAN_SIZE_KIB: f64 = 9.6;
/// PIQ publishes no inter-arrival times: the median of the same ten rows (19, 49, 50, 58,
/// 67 | 98, 129, 162, 242, 268 us).
const PIQ_DEFAULT_MEAN_INTERARRIVAL_US: f64 = 82.5;

/// Venice (ISCA 2023) Table 2: trace, read %, mean request size (KB), mean
/// inter-request arrival time (us), copied from the paper's text row by row.
const VENICE_TABLE_2: &[(&str, f64, f64, f64)] = &[
    ("hm_0", 36.0, 8.8, 58.0),
    ("mds_0", 12.0, 9.6, 268.0),
    ("proj_3", 95.0, 9.6, 19.0),
    ("prxy_0", 3.0, 7.2, 242.0),
    ("rsrch_0", 9.0, 9.6, 129.0),
    ("src1_0", 56.0, 43.2, 49.0),
    ("src2_1", 98.0, 59.2, 50.0),
    ("usr_0", 40.0, 22.8, 98.0),
    ("wdev_0", 20.0, 9.2, 162.0),
    ("web_1", 54.0, 29.6, 67.0),
    ("YCSB_B", 99.0, 65.7, 13.0),
    ("YCSB_D", 99.0, 62.0, 14.0),
    ("jenkins", 94.0, 33.4, 615.0),
    ("postgres", 82.0, 13.3, 382.0),
    ("LUN0", 76.0, 20.4, 218.0),
    ("LUN2", 73.0, 16.0, 320.0),
    ("LUN3", 7.0, 7.7, 3127.0),
    ("ssd-00", 91.0, 90.0, 5.0),
    ("ssd-10", 99.0, 11.5, 2.0),
];

/// PIQ ("Exploiting Parallelism in I/O Scheduling for Access Conflict Minimization in
/// Flash-based Solid State Drives") Table I: read and write I/O counts of its MSR Cambridge traces. The
/// paper's text keeps 12 of the 15 read counts and 10 of the 15 write counts, without the
/// trace names or row order; these are the 8 (read, write) pairs that add up to the
/// 500,000 I/Os per trace the paper states (within 101), the only pairing the text supports.
const PIQ_TABLE_1_PAIRS: &[(u64, u64)] = &[
    (129_066, 370_933),
    (484_454, 15_445),
    (75_305, 424_694),
    (346_001, 153_995),
    (419_058, 80_930),
    (15_385, 484_614),
    (97_924, 402_069),
    (99_000, 400_992),
];

/// VIOS (`shared/papers/vios-variation-aware-scheduler.txt`) Table 1:
/// trace, read I/Os, write I/Os of its 500,000-I/O heads of eleven MSR Cambridge traces and
/// Financial1 (`fin`), copied row by row. The conflict columns are outcomes of the paper's
/// simulation (NOOP at 12K P/E), not workload inputs, and are not used.
const VIOS_TABLE_1: &[(&str, u64, u64)] = &[
    ("prn", 61_422, 438_578),
    ("fin", 129_342, 370_658),
    ("hm", 139_527, 360_473),
    ("mds", 26_301, 473_699),
    ("proj", 151_549, 348_451),
    ("rsrch", 43_803, 456_197),
    ("src", 81_377, 418_623),
    ("stg", 43_818, 456_182),
    ("ts", 76_687, 423_313),
    ("usr", 206_983, 293_017),
    ("wdev", 102_663, 397_337),
    ("web", 239_458, 260_542),
];

/// Every profile: Venice Table 2 in table order, then the PIQ Table I pairs, then VIOS Table 1,
/// then the SOS workloads that have no shipped trace (`sos_profiles.rs`).
pub fn profiles() -> Vec<Profile> {
    let venice = VENICE_TABLE_2.iter().map(|&(name, read_pct, kb, us)| {
        let source = format!("Venice (ISCA 2023) Table 2, row {name}");
        Profile {
            name: name.to_string(),
            published: Published {
                read_fraction: read_pct / 100.0,
                mean_size_bytes: Some(kb * 1024.0),
                mean_interarrival_ns: Some(us * 1000.0),
                requests: None,
            },
            spec: SyntheticSpec {
                label: format!(
                    "synthetic stand-in for {name} matching only: read {read_pct} %, mean size {kb} KiB, mean inter-arrival {us} us ({source}); addresses uniform over 4 GiB, not the trace's"
                ),
                requests: VENICE_DEFAULT_REQUESTS,
                read_fraction: read_pct / 100.0,
                device: 0,
                stream: 0,
                stream_count: 1,
                seed: 1,
                arrival: ArrivalSpec::Poisson {
                    mean_interarrival_ns: us * 1000.0,
                },
                size: two_point_size(kb * 1024.0),
                address: neutral_address(),
                rewrite: None,
            },
            source,
        }
    });
    let piq = PIQ_TABLE_1_PAIRS.iter().map(|&(reads, writes)| {
        count_profile(
            format!("piq_r{reads}_w{writes}"),
            reads,
            writes,
            format!(
                "PIQ Table I, the row with {reads} read I/Os and {writes} write I/Os (trace name not recoverable from the paper's text)"
            ),
        )
    });
    let vios = VIOS_TABLE_1.iter().map(|&(trace, reads, writes)| {
        count_profile(
            format!("vios_{trace}"),
            reads,
            writes,
            format!("VIOS Table 1, row {trace}"),
        )
    });
    venice
        .chain(piq)
        .chain(vios)
        .chain(super::sos_profiles::profiles())
        .collect()
}

/// A stand-in that matches only a published read and write count (PIQ Table I, VIOS Table 1):
/// sizes and arrival times are the PIQ defaults, since neither paper publishes them.
fn count_profile(name: String, reads: u64, writes: u64, source: String) -> Profile {
    let requests = reads + writes;
    let read_fraction = reads as f64 / requests as f64;
    Profile {
        name: name.clone(),
        published: Published {
            read_fraction,
            mean_size_bytes: None,
            mean_interarrival_ns: None,
            requests: Some(requests),
        },
        spec: SyntheticSpec {
            label: format!(
                "synthetic stand-in for {name} matching only: {reads} reads and {writes} writes (read {:.2} %) ({source}); mean size {PIQ_DEFAULT_MEAN_SIZE_KIB} KiB and mean inter-arrival {PIQ_DEFAULT_MEAN_INTERARRIVAL_US} us are defaults, not published; addresses uniform over 4 GiB",
                read_fraction * 100.0
            ),
            requests,
            read_fraction,
            device: 0,
            stream: 0,
            stream_count: 1,
            seed: 1,
            arrival: ArrivalSpec::Poisson {
                mean_interarrival_ns: PIQ_DEFAULT_MEAN_INTERARRIVAL_US * 1000.0,
            },
            size: two_point_size(PIQ_DEFAULT_MEAN_SIZE_KIB * 1024.0),
            address: neutral_address(),
            rewrite: None,
        },
        source,
    }
}

/// The profile named `name` (exact match first, then ignoring ASCII case).
pub fn profile(name: &str) -> Option<Profile> {
    let all = profiles();
    let exact = all.iter().position(|p| p.name == name);
    let index = exact.or_else(|| all.iter().position(|p| p.name.eq_ignore_ascii_case(name)))?;
    all.into_iter().nth(index)
}

/// Whole pages only, with the published mean exactly: the two page multiples around it,
/// weighted so the expected size is the mean (the least spread a page-aligned size can have).
fn two_point_size(mean_bytes: f64) -> SizeSpec {
    let pages = (mean_bytes / PAGE_BYTES as f64).floor().max(1.0);
    let low = pages as u64 * PAGE_BYTES;
    // Rounded to 1e-6 so the written spec reads 0.2, not 0.20000000000000018.
    let high_weight =
        (((mean_bytes - low as f64) / PAGE_BYTES as f64).clamp(0.0, 1.0) * 1e6).round() / 1e6;
    if high_weight == 0.0 {
        return SizeSpec::Fixed { bytes: low };
    }
    SizeSpec::Empirical {
        sizes_bytes: vec![low, low + PAGE_BYTES],
        weights: vec![((1.0 - high_weight) * 1e6).round() / 1e6, high_weight],
    }
}

/// No paper publishes the address pattern: every 4 KiB slot of the span equally likely.
fn neutral_address() -> AddressSpec {
    AddressSpec::Uniform {
        span_bytes: PROFILE_SPAN_BYTES,
        align_bytes: PAGE_BYTES,
    }
}
