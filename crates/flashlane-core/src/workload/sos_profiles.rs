//! Stand-ins for the SOS paper's workloads that have no shipped trace: Bonnie++, Postmark and
//! Financial2 ("SOS: Software-Based Out-of-Order Scheduling for High-Performance NAND
//! Flash-Based SSDs", Sec. IV-A, which names them and gives nothing else but their write-hit
//! ratios in Table I, an outcome we must not fit).
//!
//! Each is built from a stated reading of what the workload does (the readings and the
//! sentences they rest on are in `docs/workloads.md`, "SOS stand-ins"). Rewrite locality is
//! modelled explicitly, because SOS's write-hit manager depends on it: the benchmarks' from
//! how their documented tests touch their files, Financial2's from the rewrite distances
//! measured on the shipped head of Financial1, a trace of the same collection.

use super::profile::{Profile, Published};
use super::{AddressSpec, ArrivalSpec, RewriteSpec, SizeSpec, SyntheticSpec};

/// Requests each stand-in generates by default (the paper gives no counts).
pub const SOS_DEFAULT_REQUESTS: u64 = 100_000;
/// Both benchmarks run flat out, so they are replayed closed loop. Depth: the 32 tags of
/// SATA NCQ, the deepest queue a host of the paper's time kept at one SSD (our choice; the
/// paper does not say how its traces were replayed beyond "replayed them in our prototype").
pub const SOS_BENCHMARK_QUEUE_DEPTH_REQUESTS: u32 = 32;

/// Bonnie++'s chunk: the block I/O size of its write, rewrite and read tests.
const BONNIE_CHUNK_BYTES: u64 = 8192;
/// Bonnie++'s test file (our choice; the benchmark wants at least twice the host's RAM).
const BONNIE_FILE_BYTES: u64 = 1 << 30;

/// Postmark's defaults: 500 files of 500 to 10,000 bytes.
const POSTMARK_FILES: u64 = 500;
/// A file of up to 10,000 bytes takes one to three 4 KiB file-system blocks.
const POSTMARK_FS_BLOCK_BYTES: u64 = 4096;
const POSTMARK_MAX_FILE_BLOCKS: u64 = 3;

/// Financial2's read share as the SSD papers that use the UMass trace report it (not given
/// by the SOS paper; not checked against the trace, which we do not have).
const FINANCIAL2_READ_FRACTION: f64 = 0.82;
/// Measured on `traces/financial1-head.spc` (10,000 requests, 5,923 writes): request sizes
/// that make up 96.7 % of its requests, with their counts.
pub const FINANCIAL1_HEAD_SIZES: &[(u64, u32)] = &[
    (512, 1381),
    (1024, 1211),
    (1536, 199),
    (2048, 137),
    (2560, 286),
    (3072, 1996),
    (3584, 758),
    (4096, 140),
    (6656, 83),
    (8192, 3175),
    (12288, 84),
    (49152, 220),
];
/// Measured on the same head: of its 5,923 writes, how many rewrite a 2 KiB page (the
/// sos-4x4 page) that one of the previous `d` writes wrote, by the smallest such `d`, in
/// buckets `(previous bound, bound]`. Checked against the trace by
/// `tests/sos_standins.rs`.
pub const FINANCIAL1_HEAD_WRITES: u32 = 5923;
pub const FINANCIAL1_HEAD_REWRITE_BUCKETS: &[(u64, u32)] = &[
    (1, 419),
    (2, 404),
    (4, 558),
    (8, 744),
    (16, 742),
    (32, 658),
    (64, 540),
];
/// The page size those rewrite distances were measured at.
pub const FINANCIAL1_HEAD_REWRITE_PAGE_BYTES: u64 = 2048;
/// Mean inter-arrival of the same head: 259.601203 s over 9,999 gaps.
const FINANCIAL1_HEAD_MEAN_INTERARRIVAL_NS: f64 = 259_601_203_000.0 / 9999.0;
/// Financial2's fresh (not rewritten) addresses: uniform over 4 GiB in 4 KiB slots, the
/// profiles' neutral default.
const FINANCIAL2_SPAN_BYTES: u64 = 4 << 30;

/// The three SOS stand-ins, in the paper's Table I order.
pub fn profiles() -> Vec<Profile> {
    vec![bonnie(), postmark(), financial2()]
}

fn bonnie() -> Profile {
    let name = "Bonnie++";
    let source = "SOS paper Sec. IV-A (name only); reading of Bonnie's documented file tests";
    let read_fraction = 0.5;
    Profile {
        name: name.into(),
        published: Published {
            read_fraction,
            mean_size_bytes: Some(BONNIE_CHUNK_BYTES as f64),
            mean_interarrival_ns: None,
            requests: None,
        },
        spec: SyntheticSpec {
            label: format!(
                "synthetic stand-in for {name} matching only: our reading of its file tests ({source}): each chunk written twice, read-and-rewritten once, read twice (read 50 %), 8 KiB chunks, one sequential stream over a 1 GiB file, no rewrite of a chunk until a whole file pass later, closed loop at {SOS_BENCHMARK_QUEUE_DEPTH_REQUESTS} requests; no file-system metadata or journal"
            ),
            requests: SOS_DEFAULT_REQUESTS,
            read_fraction,
            device: 0,
            stream: 0,
            stream_count: 1,
            seed: 1,
            arrival: ArrivalSpec::ClosedLoop {
                queue_depth_requests: SOS_BENCHMARK_QUEUE_DEPTH_REQUESTS,
            },
            size: SizeSpec::Fixed {
                bytes: BONNIE_CHUNK_BYTES,
            },
            address: AddressSpec::Sequential {
                span_bytes: BONNIE_FILE_BYTES,
                streams: 1,
            },
            rewrite: None,
        },
        source: source.into(),
    }
}

fn postmark() -> Profile {
    let name = "Postmark";
    let source =
        "SOS paper Sec. IV-A (name only); reading of PostMark's documented defaults and transactions";
    // Per transaction: one read or one append (even odds), and one create (a write) or one
    // delete (no data I/O): 1.5 requests of which 0.5 a read.
    let read_fraction = 1.0 / 3.0;
    let slot_bytes = POSTMARK_FS_BLOCK_BYTES * POSTMARK_MAX_FILE_BLOCKS;
    let size = SizeSpec::Uniform {
        min_bytes: POSTMARK_FS_BLOCK_BYTES,
        max_bytes: slot_bytes,
        align_bytes: POSTMARK_FS_BLOCK_BYTES,
    };
    Profile {
        name: name.into(),
        published: Published {
            read_fraction,
            mean_size_bytes: Some(size.mean_bytes()),
            mean_interarrival_ns: None,
            requests: None,
        },
        spec: SyntheticSpec {
            label: format!(
                "synthetic stand-in for {name} matching only: our reading of its defaults and transactions ({source}): {POSTMARK_FILES} files of 1-3 4 KiB blocks, each request on a file chosen uniformly (so a file is written again about every {POSTMARK_FILES} writes), read 1/3, closed loop at {SOS_BENCHMARK_QUEUE_DEPTH_REQUESTS} requests; no file-system metadata or journal"
            ),
            requests: SOS_DEFAULT_REQUESTS,
            read_fraction,
            device: 0,
            stream: 0,
            stream_count: 1,
            seed: 1,
            arrival: ArrivalSpec::ClosedLoop {
                queue_depth_requests: SOS_BENCHMARK_QUEUE_DEPTH_REQUESTS,
            },
            size,
            // One slot per file: a request covers the first 1-3 blocks of its file.
            address: AddressSpec::Uniform {
                span_bytes: POSTMARK_FILES * slot_bytes,
                align_bytes: slot_bytes,
            },
            rewrite: None,
        },
        source: source.into(),
    }
}

fn financial2() -> Profile {
    let name = "Financial2";
    let source = "SOS paper Sec. IV-A (name only); read share as commonly reported for the UMass trace; sizes, rewrite distances and mean inter-arrival measured on the shipped Financial1 head";
    let sizes = SizeSpec::Empirical {
        sizes_bytes: FINANCIAL1_HEAD_SIZES.iter().map(|(s, _)| *s).collect(),
        weights: FINANCIAL1_HEAD_SIZES
            .iter()
            .map(|(_, n)| f64::from(*n))
            .collect(),
    };
    let rewrite = RewriteSpec {
        distance_upper_writes: FINANCIAL1_HEAD_REWRITE_BUCKETS
            .iter()
            .map(|(d, _)| *d)
            .collect(),
        fraction_of_writes: FINANCIAL1_HEAD_REWRITE_BUCKETS
            .iter()
            .map(|(_, n)| f64::from(*n) / f64::from(FINANCIAL1_HEAD_WRITES))
            .collect(),
    };
    let rewritten: u32 = FINANCIAL1_HEAD_REWRITE_BUCKETS.iter().map(|(_, n)| n).sum();
    Profile {
        name: name.into(),
        published: Published {
            read_fraction: FINANCIAL2_READ_FRACTION,
            mean_size_bytes: None,
            mean_interarrival_ns: None,
            requests: None,
        },
        spec: SyntheticSpec {
            label: format!(
                "synthetic stand-in for {name} matching only: read {} % ({source}); Financial1's sizes, its rewrite locality ({:.1} % of writes rewrite one of the previous 64 writes) and its mean inter-arrival {:.1} ms (Poisson); other addresses uniform over 4 GiB",
                FINANCIAL2_READ_FRACTION * 100.0,
                100.0 * f64::from(rewritten) / f64::from(FINANCIAL1_HEAD_WRITES),
                FINANCIAL1_HEAD_MEAN_INTERARRIVAL_NS / 1e6
            ),
            requests: SOS_DEFAULT_REQUESTS,
            read_fraction: FINANCIAL2_READ_FRACTION,
            device: 0,
            stream: 0,
            stream_count: 1,
            seed: 1,
            arrival: ArrivalSpec::Poisson {
                mean_interarrival_ns: FINANCIAL1_HEAD_MEAN_INTERARRIVAL_NS,
            },
            size: sizes,
            address: AddressSpec::Uniform {
                span_bytes: FINANCIAL2_SPAN_BYTES,
                align_bytes: 4096,
            },
            rewrite: Some(rewrite),
        },
        source: source.into(),
    }
}
