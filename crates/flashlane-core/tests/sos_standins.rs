//! The SOS stand-ins (`workload/sos_profiles.rs`): the figures measured on the shipped
//! Financial1 head are what the trace gives, and the generator's rewrite locality does what
//! its spec says.

use std::collections::HashMap;
use std::path::PathBuf;

use flashlane_core::trace::{self, Op, TraceFormat, TraceRecord};
use flashlane_core::workload::{
    self, AddressSpec, ArrivalSpec, RewriteSpec, SizeSpec, SyntheticReader, SyntheticSpec,
    FINANCIAL1_HEAD_REWRITE_BUCKETS, FINANCIAL1_HEAD_REWRITE_PAGE_BYTES, FINANCIAL1_HEAD_SIZES,
    FINANCIAL1_HEAD_WRITES,
};

fn financial1_head() -> Vec<TraceRecord> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/financial1-head.spc");
    let mut reader = trace::open(&path, TraceFormat::Spc).unwrap();
    let mut records = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        records.push(r);
    }
    records
}

/// For each write, the smallest `d` such that one of the previous `d` writes wrote one of
/// its `page_bytes` pages (None: no earlier write did).
fn rewrite_distances(records: &[TraceRecord], page_bytes: u64) -> Vec<Option<u64>> {
    let mut last_write = HashMap::<(u32, u64), u64>::new();
    let mut distances = Vec::new();
    let writes = records.iter().filter(|r| r.op == Op::Write);
    for (i, r) in writes.enumerate() {
        let i = i as u64;
        let first = r.offset_bytes / page_bytes;
        let last = (r.offset_bytes + r.size_bytes.max(1) - 1) / page_bytes;
        let mut nearest = None;
        for page in first..=last {
            if let Some(j) = last_write.insert((r.device, page), i) {
                nearest = Some(nearest.map_or(i - j, |n: u64| n.min(i - j)));
            }
        }
        distances.push(nearest);
    }
    distances
}

/// Writes per bucket `(previous bound, bound]` of `bounds`.
fn bucket_counts(distances: &[Option<u64>], bounds: &[u64]) -> Vec<u64> {
    let mut counts = vec![0; bounds.len()];
    for d in distances.iter().flatten() {
        if let Some(k) = bounds.iter().position(|b| d <= b) {
            counts[k] += 1;
        }
    }
    counts
}

#[test]
fn financial1_head_figures_are_what_the_trace_gives() {
    let records = financial1_head();
    let distances = rewrite_distances(&records, FINANCIAL1_HEAD_REWRITE_PAGE_BYTES);
    assert_eq!(distances.len() as u32, FINANCIAL1_HEAD_WRITES);
    let bounds: Vec<u64> = FINANCIAL1_HEAD_REWRITE_BUCKETS
        .iter()
        .map(|b| b.0)
        .collect();
    let want: Vec<u64> = FINANCIAL1_HEAD_REWRITE_BUCKETS
        .iter()
        .map(|b| u64::from(b.1))
        .collect();
    assert_eq!(bucket_counts(&distances, &bounds), want);
    for &(size, count) in FINANCIAL1_HEAD_SIZES {
        let n = records.iter().filter(|r| r.size_bytes == size).count();
        assert_eq!(n, count as usize, "size {size}");
    }
}

fn spec(rewrite: Option<RewriteSpec>) -> SyntheticSpec {
    SyntheticSpec {
        label: "test".into(),
        requests: 50_000,
        read_fraction: 0.5,
        device: 0,
        stream: 0,
        stream_count: 1,
        seed: 9,
        arrival: ArrivalSpec::Poisson {
            mean_interarrival_ns: 1000.0,
        },
        size: SizeSpec::Fixed { bytes: 4096 },
        address: AddressSpec::Uniform {
            span_bytes: 1 << 40,
            align_bytes: 4096,
        },
        rewrite,
    }
}

fn generate(spec: &SyntheticSpec) -> Vec<TraceRecord> {
    SyntheticReader::new(spec).unwrap().collect()
}

#[test]
fn rewrites_repeat_the_write_the_drawn_distance_back() {
    // Every write repeats the one just before it: after the first, one address only.
    let all = spec(Some(RewriteSpec {
        distance_upper_writes: vec![1],
        fraction_of_writes: vec![1.0],
    }));
    let writes: Vec<_> = generate(&all)
        .into_iter()
        .filter(|r| r.op == Op::Write)
        .collect();
    assert!(writes.len() > 20_000);
    assert!(writes
        .iter()
        .all(|w| w.offset_bytes == writes[0].offset_bytes));
    // 20 % at distance 1, 30 % at 2..=8, the rest fresh over 2^28 slots (collisions ~1e-4).
    let some = spec(Some(RewriteSpec {
        distance_upper_writes: vec![1, 8],
        fraction_of_writes: vec![0.2, 0.3],
    }));
    let records = generate(&some);
    let counts = bucket_counts(&rewrite_distances(&records, 4096), &[1, 8, 1 << 20]);
    let writes = records.iter().filter(|r| r.op == Op::Write).count() as f64;
    // Distances are reuse distances: a copied write is never one whose address was written
    // again since, so the measured buckets are the drawn ones (a few draws give up: fresh).
    let (d1, d8, far) = (
        counts[0] as f64 / writes,
        counts[1] as f64 / writes,
        counts[2] as f64 / writes,
    );
    assert!((d1 + d8 - 0.5).abs() < 0.01, "{d1} + {d8}");
    assert!(
        (d1 - 0.2).abs() < 0.01 && (d8 - 0.3).abs() < 0.015,
        "{d1} {d8}"
    );
    assert!(far < 0.001, "{far}");
}

#[test]
fn a_spec_without_rewrite_gives_the_bytes_it_gave_before() {
    // The rewrite stream is separate: an empty rewrite (all writes fresh) changes nothing.
    let none = generate(&spec(None));
    let empty = generate(&spec(Some(RewriteSpec {
        distance_upper_writes: vec![4],
        fraction_of_writes: vec![0.0],
    })));
    assert_eq!(none, empty);
}

#[test]
fn bad_rewrite_specs_are_errors_naming_the_key() {
    let bad = |bounds: Vec<u64>, fractions: Vec<f64>| {
        spec(Some(RewriteSpec {
            distance_upper_writes: bounds,
            fraction_of_writes: fractions,
        }))
        .validate()
        .unwrap_err()
    };
    assert!(bad(vec![], vec![]).contains("rewrite.distance_upper_writes"));
    assert!(bad(vec![4, 2], vec![0.1, 0.1]).contains("strictly increasing"));
    assert!(bad(vec![0], vec![0.1]).contains("at least 1"));
    assert!(bad(vec![1, 2], vec![0.1]).contains("rewrite.fraction_of_writes"));
    assert!(bad(vec![1, 2], vec![0.7, 0.7]).contains("at most 1"));
    assert!(bad(vec![1], vec![-0.1]).contains("rewrite.fraction_of_writes[0]"));
    assert!(bad(vec![1 << 30], vec![0.1]).contains("must not exceed"));
}

#[test]
fn financial2_stand_in_has_financial1s_rewrite_locality() {
    let p = workload::profile("Financial2").unwrap();
    let mut spec = p.spec.clone();
    spec.requests = 100_000;
    let records = generate(&spec);
    let distances = rewrite_distances(&records, FINANCIAL1_HEAD_REWRITE_PAGE_BYTES);
    let bounds: Vec<u64> = FINANCIAL1_HEAD_REWRITE_BUCKETS
        .iter()
        .map(|b| b.0)
        .collect();
    let counts = bucket_counts(&distances, &bounds);
    let writes = distances.len() as f64;
    let mut report = String::new();
    for (k, &(bound, n)) in FINANCIAL1_HEAD_REWRITE_BUCKETS.iter().enumerate() {
        let want = f64::from(n) / f64::from(FINANCIAL1_HEAD_WRITES);
        let got = counts[k] as f64 / writes;
        report += &format!("<= {bound}: {got:.4} vs {want:.4}\n");
    }
    eprintln!("{report}");
    let total_want: u32 = FINANCIAL1_HEAD_REWRITE_BUCKETS.iter().map(|b| b.1).sum();
    let total_want = f64::from(total_want) / f64::from(FINANCIAL1_HEAD_WRITES);
    let total_got = counts.iter().sum::<u64>() as f64 / writes;
    // Each bucket within 1 point; the total a little short (rewrites that find only
    // superseded candidates in REDRAWS draws keep a fresh address), within 2 points.
    for (k, &(_, n)) in FINANCIAL1_HEAD_REWRITE_BUCKETS.iter().enumerate() {
        let want = f64::from(n) / f64::from(FINANCIAL1_HEAD_WRITES);
        assert!((counts[k] as f64 / writes - want).abs() < 0.01, "{report}");
    }
    assert!((total_got - total_want).abs() < 0.02, "{report}");
}

#[test]
fn benchmark_stand_ins_read_what_their_reading_says() {
    let bonnie = workload::profile("bonnie++").unwrap();
    assert_eq!(bonnie.spec.read_fraction, 0.5);
    assert!(bonnie.spec.label.contains("no file-system metadata"));
    // Bonnie++: one sequential stream, so no write repeats a page of the last 64 writes.
    let mut spec = bonnie.spec.clone();
    spec.requests = 20_000;
    let d = rewrite_distances(&generate(&spec), 2048);
    assert!(d.iter().flatten().all(|d| *d > 64));
    // Postmark: 500 equally likely files, so a write's file was written by one of the last
    // 64 writes with probability 1 - (1 - 1/500)^64 = 12.0 %.
    let postmark = workload::profile("postmark").unwrap();
    let mut spec = postmark.spec.clone();
    spec.requests = 60_000;
    let d = rewrite_distances(&generate(&spec), 4096);
    let within = d.iter().flatten().filter(|d| **d <= 64).count() as f64 / d.len() as f64;
    let want = 1.0 - (1.0 - 1.0 / 500.0f64).powi(64);
    assert!((within - want).abs() < 0.01, "{within} vs {want}");
}
