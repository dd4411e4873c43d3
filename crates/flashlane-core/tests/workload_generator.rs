//! Synthetic generator: determinism, and the statistics each spec promises (100k samples,
//! tolerances several standard errors wide).

use std::io::Cursor;
use std::path::PathBuf;

use flashlane_core::trace::{AsciiReader, Op, TraceFormat, TraceRecord};
use flashlane_core::workload::{
    write_trace, AddressSpec, ArrivalSpec, Characteristics, MixComponent, OutputFormat, SizeSpec,
    SyntheticReader, SyntheticSpec,
};

const N: u64 = 100_000;

fn spec(arrival: ArrivalSpec, size: SizeSpec, address: AddressSpec) -> SyntheticSpec {
    SyntheticSpec {
        label: "test".into(),
        requests: N,
        read_fraction: 0.36,
        device: 3,
        stream: 7,
        stream_count: 1,
        seed: 42,
        arrival,
        size,
        address,
        rewrite: None,
    }
}

fn base() -> SyntheticSpec {
    spec(
        ArrivalSpec::Poisson {
            mean_interarrival_ns: 58_000.0,
        },
        SizeSpec::Uniform {
            min_bytes: 4096,
            max_bytes: 131_072,
            align_bytes: 4096,
        },
        AddressSpec::Uniform {
            span_bytes: 1 << 32,
            align_bytes: 4096,
        },
    )
}

fn records(spec: &SyntheticSpec) -> Vec<TraceRecord> {
    SyntheticReader::new(spec).unwrap().collect()
}

fn measure(spec: &SyntheticSpec) -> Characteristics {
    let mut reader = SyntheticReader::new(spec).unwrap();
    Characteristics::measure(&mut || reader.next_record()).unwrap()
}

/// FNV-1a over the records' fields: a fingerprint of the exact output.
fn fingerprint(records: &[TraceRecord]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for r in records {
        for v in [
            r.time_ns,
            u64::from(r.device),
            u64::from(r.stream),
            r.offset_bytes,
            r.size_bytes,
            u64::from(r.op == Op::Read),
        ] {
            for b in v.to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

#[test]
fn same_spec_same_records_byte_for_byte() {
    let s = base();
    let a = records(&s);
    let b = records(&s);
    assert_eq!(a.len() as u64, N);
    assert_eq!(a, b);
    let mut out_a = Vec::new();
    let mut out_b = Vec::new();
    for out in [&mut out_a, &mut out_b] {
        let mut reader = SyntheticReader::new(&s).unwrap();
        write_trace(&mut || reader.next_record(), out, OutputFormat::Msr).unwrap();
    }
    assert_eq!(out_a, out_b);
    let mut other = s.clone();
    other.seed = 43;
    assert_ne!(records(&other), a);
}

/// Pins the exact output of one spec: a change here changes every generated trace, so it
/// must be deliberate (and noted for users who regenerate traces).
#[test]
fn output_is_pinned() {
    let mut s = base();
    s.requests = 1000;
    let r = records(&s);
    assert_eq!(fingerprint(&r), PINNED, "first: {:?}", r[0]);
}
const PINNED: u64 = 15_095_468_226_383_012_467;

#[test]
fn components_draw_from_independent_streams() {
    let a = records(&base());
    let mut other = base();
    other.size = SizeSpec::Fixed { bytes: 512 };
    other.address = AddressSpec::Zipf {
        span_bytes: 1 << 30,
        align_bytes: 512,
        theta: 0.9,
    };
    let b = records(&other);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((x.time_ns, x.op), (y.time_ns, y.op));
    }
}

#[test]
fn read_fraction_mean_size_and_poisson_gaps() {
    let s = base();
    let c = measure(&s);
    assert_eq!(c.records, N);
    assert!(
        (c.read_fraction() - 0.36).abs() < 0.01,
        "{}",
        c.read_fraction()
    );
    let want_size = (4096.0 + 131_072.0) / 2.0;
    assert!(
        (c.mean_size_bytes / want_size - 1.0).abs() < 0.01,
        "{}",
        c.mean_size_bytes
    );
    assert!((s.size.mean_bytes() - want_size).abs() < 1e-9);
    assert!(
        (c.mean_interarrival_ns / 58_000.0 - 1.0).abs() < 0.02,
        "{}",
        c.mean_interarrival_ns
    );
    // Exponential gaps: standard deviation equals the mean.
    let r = records(&s);
    let gaps: Vec<f64> = r
        .windows(2)
        .map(|w| (w[1].time_ns - w[0].time_ns) as f64)
        .collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / mean - 1.0).abs() < 0.03, "cv {}", sd / mean);
    assert_eq!(r[0].time_ns, 0);
    assert!(r.iter().all(|x| x.device == 3 && x.stream == 7));
    assert!(r
        .iter()
        .all(|x| x.size_bytes % 4096 == 0 && x.offset_bytes % 4096 == 0));
    assert!(r.iter().all(|x| x.offset_bytes + x.size_bytes <= 1 << 32));
}

#[test]
fn fixed_and_closed_loop_arrivals() {
    let mut s = base();
    s.arrival = ArrivalSpec::Fixed {
        interarrival_ns: 1234,
    };
    let r = records(&s);
    assert!(r
        .iter()
        .enumerate()
        .all(|(i, x)| x.time_ns == i as u64 * 1234));
    s.arrival = ArrivalSpec::ClosedLoop {
        queue_depth_requests: 32,
    };
    assert!(records(&s).iter().all(|x| x.time_ns == 0));
}

#[test]
fn extreme_read_fractions() {
    let mut s = base();
    s.read_fraction = 0.0;
    assert!(records(&s).iter().all(|x| x.op == Op::Write));
    s.read_fraction = 1.0;
    assert!(records(&s).iter().all(|x| x.op == Op::Read));
}

#[test]
fn empirical_sizes_follow_their_weights() {
    let mut s = base();
    s.size = SizeSpec::Empirical {
        sizes_bytes: vec![4096, 8192, 65_536, 1_048_576],
        weights: vec![5.0, 3.0, 2.0, 0.0],
    };
    let r = records(&s);
    let share = |b: u64| r.iter().filter(|x| x.size_bytes == b).count() as f64 / N as f64;
    assert!((share(4096) - 0.5).abs() < 0.01);
    assert!((share(8192) - 0.3).abs() < 0.01);
    assert!((share(65_536) - 0.2).abs() < 0.01);
    assert_eq!(share(1_048_576), 0.0);
}

/// Least-squares slope of ln(count) against ln(rank) over the top ranks.
fn rank_frequency_slope(theta: f64) -> f64 {
    let align = 4096u64;
    let slots = 1u64 << 20;
    let mut s = base();
    s.size = SizeSpec::Fixed { bytes: align };
    s.address = AddressSpec::Zipf {
        span_bytes: slots * align,
        align_bytes: align,
        theta,
    };
    let mut counts = vec![0u32; slots as usize];
    for r in SyntheticReader::new(&s).unwrap() {
        counts[(r.offset_bytes / align) as usize] += 1;
    }
    // Rank 1 sits at offset 0: counts are already in rank order.
    let top = 30;
    let pts: Vec<(f64, f64)> = (0..top)
        .map(|i| (((i + 1) as f64).ln(), f64::from(counts[i].max(1)).ln()))
        .collect();
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / top as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / top as f64;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

#[test]
fn zipf_rank_frequency_slope_is_minus_theta() {
    for theta in [0.8, 0.99, 1.2] {
        let slope = rank_frequency_slope(theta);
        assert!((slope + theta).abs() < 0.08, "theta {theta}: slope {slope}");
    }
}

#[test]
fn hot_cold_shares() {
    let span = 1u64 << 30;
    let mut s = base();
    s.size = SizeSpec::Fixed { bytes: 4096 };
    s.address = AddressSpec::HotCold {
        span_bytes: span,
        align_bytes: 4096,
        hot_fraction_of_span: 0.2,
        hot_fraction_of_accesses: 0.8,
    };
    let r = records(&s);
    let hot_end = span / 5;
    let share = |lo: u64, hi: u64| {
        r.iter()
            .filter(|x| x.offset_bytes >= lo && x.offset_bytes < hi)
            .count() as f64
            / N as f64
    };
    assert!((share(0, hot_end) - 0.8).abs() < 0.01);
    // Uniform inside each region.
    assert!((share(0, hot_end / 2) - 0.4).abs() < 0.01);
    assert!((share(hot_end, hot_end + (span - hot_end) / 2) - 0.1).abs() < 0.01);
}

#[test]
fn sequential_streams_are_sequential() {
    let streams = 4u64;
    let span = 4u64 << 20; // small, so streams wrap many times
    let mut s = base();
    s.address = AddressSpec::Sequential {
        span_bytes: span,
        streams: streams as u32,
    };
    let r = records(&s);
    let region = span / streams;
    let mut wraps = 0;
    for k in 0..streams {
        let mine: Vec<&TraceRecord> = r
            .iter()
            .skip(k as usize)
            .step_by(streams as usize)
            .collect();
        assert_eq!(mine[0].offset_bytes, k * region);
        for w in mine.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(
                b.offset_bytes >= k * region && b.offset_bytes + b.size_bytes <= (k + 1) * region
            );
            let next = a.offset_bytes + a.size_bytes;
            if b.offset_bytes != next {
                // A wrap, and only when the request would not have fit.
                assert_eq!(b.offset_bytes, k * region);
                assert!(next + b.size_bytes > (k + 1) * region);
                wraps += 1;
            }
        }
    }
    assert!(wraps > 100);
}

#[test]
fn mix_splits_by_weight() {
    let span = 1u64 << 30;
    let mut s = base();
    s.size = SizeSpec::Fixed { bytes: 4096 };
    // Uniform over the lower half vs a Zipf so steep that it always picks offset 0: the
    // share of offset-0 requests measures the Zipf component's weight.
    s.address = AddressSpec::Mix {
        components: vec![
            MixComponent {
                weight: 3.0,
                pattern: AddressSpec::Uniform {
                    span_bytes: span / 2,
                    align_bytes: 4096,
                },
            },
            MixComponent {
                weight: 1.0,
                pattern: AddressSpec::Zipf {
                    span_bytes: span,
                    align_bytes: 4096,
                    theta: 100.0,
                },
            },
        ],
    };
    let r = records(&s);
    let zero = r.iter().filter(|x| x.offset_bytes == 0).count() as f64 / N as f64;
    assert!((zero - 0.25).abs() < 0.01, "{zero}");
    assert!(r.iter().all(|x| x.offset_bytes < span / 2));
}

#[test]
fn requests_that_would_overrun_the_span_are_moved_inside() {
    let mut s = base();
    s.size = SizeSpec::Fixed { bytes: 64 << 10 };
    s.address = AddressSpec::Uniform {
        span_bytes: 1 << 20,
        align_bytes: 4096,
    };
    let r = records(&s);
    assert!(r.iter().all(|x| x.offset_bytes + x.size_bytes <= 1 << 20));
    assert!(r.iter().any(|x| x.offset_bytes == (1 << 20) - (64 << 10)));
}

fn read_back(bytes: Vec<u8>) -> Vec<TraceRecord> {
    let mut reader = AsciiReader::new(
        PathBuf::from("generated.mqsim"),
        Box::new(Cursor::new(bytes)),
        TraceFormat::Mqsim,
    );
    let mut out = Vec::new();
    while let Some(r) = flashlane_core::trace::TraceReader::next_record(&mut reader).unwrap() {
        out.push(r);
    }
    out
}

#[test]
fn mqsim_export_reads_back_identically() {
    let mut s = base();
    s.requests = 5000;
    s.stream = s.device; // the layout has no stream column; readers use the device
    let mut bytes = Vec::new();
    let mut reader = SyntheticReader::new(&s).unwrap();
    let n = write_trace(
        &mut || reader.next_record(),
        &mut bytes,
        OutputFormat::Mqsim,
    )
    .unwrap();
    assert_eq!(n, 5000);
    assert_eq!(read_back(bytes), records(&s));
}

#[test]
fn mqsim_export_refuses_partial_sectors() {
    let mut s = base();
    s.size = SizeSpec::Fixed { bytes: 1000 };
    s.address = AddressSpec::Uniform {
        span_bytes: 1 << 20,
        align_bytes: 1000,
    };
    let mut reader = SyntheticReader::new(&s).unwrap();
    let err = write_trace(
        &mut || reader.next_record(),
        &mut Vec::new(),
        OutputFormat::Mqsim,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("record 1") && err.contains("512-byte sectors"),
        "{err}"
    );
    // MSR CSV holds bytes: fine.
    let mut reader = SyntheticReader::new(&s).unwrap();
    write_trace(
        &mut || reader.next_record(),
        &mut Vec::new(),
        OutputFormat::Msr,
    )
    .unwrap();
}

#[test]
fn msr_export_layout() {
    let mut s = base();
    s.requests = 3;
    s.arrival = ArrivalSpec::Fixed {
        interarrival_ns: 250,
    };
    let mut bytes = Vec::new();
    let mut reader = SyntheticReader::new(&s).unwrap();
    write_trace(&mut || reader.next_record(), &mut bytes, OutputFormat::Msr).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let r = records(&s);
    for (line, rec) in text.lines().zip(&r) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 7);
        assert_eq!(f[0].parse::<u64>().unwrap(), rec.time_ns / 100);
        assert_eq!(f[2], "3");
        assert_eq!(f[3], if rec.op == Op::Read { "Read" } else { "Write" });
        assert_eq!(f[4].parse::<u64>().unwrap(), rec.offset_bytes);
        assert_eq!(f[5].parse::<u64>().unwrap(), rec.size_bytes);
    }
}

#[test]
fn empirical_sizes_from_a_trace() {
    let text = "0 0 0 8 1\n10 0 8 8 0\n20 0 16 16 1\n\n30 0 64 8 1\n";
    let mut reader = AsciiReader::new(
        PathBuf::from("t.mqsim"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        TraceFormat::Mqsim,
    );
    let size = SizeSpec::empirical_from_trace(&mut reader, None).unwrap();
    assert_eq!(
        size,
        SizeSpec::Empirical {
            sizes_bytes: vec![4096, 8192],
            weights: vec![3.0, 1.0],
        }
    );
    assert!((size.mean_bytes() - 5120.0).abs() < 1e-9);
    let mut empty = AsciiReader::new(
        PathBuf::from("empty.mqsim"),
        Box::new(Cursor::new(Vec::new())),
        TraceFormat::Mqsim,
    );
    let err = SizeSpec::empirical_from_trace(&mut empty, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty.mqsim"), "{err}");
}

#[test]
fn huge_spans_do_not_overflow() {
    let mut s = base();
    s.requests = 10_000;
    s.size = SizeSpec::Fixed { bytes: 1 << 20 };
    let max = flashlane_core::workload::MAX_SPAN_BYTES;
    for span in [max, u64::MAX] {
        for address in [
            AddressSpec::Uniform {
                span_bytes: span,
                align_bytes: 4096,
            },
            AddressSpec::Zipf {
                span_bytes: span,
                align_bytes: 512,
                theta: 0.5,
            },
            AddressSpec::Sequential {
                span_bytes: span,
                streams: 1,
            },
        ] {
            s.address = address;
            if span > max {
                // Past the offsets a trace holds: refused, naming the key.
                let Err(err) = SyntheticReader::new(&s) else {
                    panic!("a span of {span} bytes was accepted");
                };
                let err = err.to_string();
                assert!(err.contains("span_bytes") && err.contains("2^60"), "{err}");
                continue;
            }
            for r in records(&s) {
                assert!(r.offset_bytes + r.size_bytes <= max, "{r:?}");
            }
        }
    }
}

#[test]
fn stream_count_deals_records_to_streams_in_turn() {
    // stream = 7, stream_count = 3: records 0, 1, 2, 3, 4 carry streams 7, 8, 9, 7, 8.
    // Only the stream changes: addresses, sizes and ops equal those of stream_count = 1.
    let mut s = base();
    s.requests = 5;
    let plain = records(&s);
    s.stream_count = 3;
    let dealt = records(&s);
    let streams: Vec<u32> = dealt.iter().map(|r| r.stream).collect();
    assert_eq!(streams, vec![7, 8, 9, 7, 8]);
    for (a, b) in plain.iter().zip(&dealt) {
        assert_eq!(
            (a.time_ns, a.offset_bytes, a.size_bytes, a.op),
            (b.time_ns, b.offset_bytes, b.size_bytes, b.op)
        );
    }
    s.stream_count = 0;
    let err = SyntheticReader::new(&s).unwrap_err().to_string();
    assert!(err.contains("stream_count"), "{err}");
}
