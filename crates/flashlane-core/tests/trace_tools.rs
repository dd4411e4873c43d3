//! Trace statistics (`trace::analysis`) and layout conversion (`trace::writer`): hand-computed
//! fixtures, the bundled real traces, round trips through every writable layout, refusal of
//! lossy conversions and atomic output.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::common::ScratchDir;

use flashlane_core::trace::analysis::{DeviceRequests, SizeBucket};
use flashlane_core::trace::writer::{
    convert, ConvertError, ConvertOptions, ConvertReport, WRITABLE_FORMATS,
};
use flashlane_core::trace::{
    open, open_with, Op, ReaderOptions, TraceFormat, TraceReader, TraceRecord, TraceStats,
};

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/");

/// Every bundled trace with its layout and exact (requests, reads, writes).
const BUNDLED: &[(&str, TraceFormat, u64, u64, u64)] = &[
    ("tpcc-small.mqsim", TraceFormat::Mqsim, 6999, 4381, 2618),
    ("websearch-small.mqsim", TraceFormat::Mqsim, 24783, 24779, 4),
    (
        "financial1-head.ssdsim",
        TraceFormat::Ssdsim,
        10000,
        4077,
        5923,
    ),
    ("financial1-head.spc", TraceFormat::Spc, 10000, 4077, 5923),
    (
        "msnfs-30s.disksim.gz",
        TraceFormat::Disksim,
        149999,
        130483,
        19516,
    ),
    (
        "msnfs-30s.msr.csv.gz",
        TraceFormat::Msr,
        149999,
        130483,
        19516,
    ),
    (
        "ycsb-a-rocksdb.blkparse.gz",
        TraceFormat::Blkparse,
        1694,
        1694,
        0,
    ),
];

fn real(name: &str) -> PathBuf {
    Path::new(TRACES).join(name)
}

/// A scratch directory unique to this call, removed when the test ends.
fn scratch_dir(name: &str) -> ScratchDir {
    ScratchDir::new(&format!("tools-{name}"))
}

fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write fixture");
    path
}

fn read_all(reader: &mut dyn TraceReader) -> Vec<TraceRecord> {
    let mut records = Vec::new();
    while let Some(record) = reader.next_record().expect("readable trace") {
        records.push(record);
    }
    records
}

fn read_path(path: &Path, format: TraceFormat) -> Vec<TraceRecord> {
    read_all(&mut *open(path, format).expect("open"))
}

fn stats_of(path: &Path, format: TraceFormat) -> TraceStats {
    TraceStats::from_reader(&mut *open(path, format).expect("open")).expect("stats")
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------- statistics, fixtures

/// Six requests on two devices; every expected value below is worked out by hand in comments.
const FIXTURE: &str = "\
0 0 0 8 1
1000 0 8 8 1
1500 1 0 16 0
4500 0 16 1 0
4500 0 17 2 0
10500 1 100 8 1
";

#[test]
fn fixture_stats_are_exact() {
    let dir = scratch_dir("fixture");
    let path = write_file(&dir, "six.mqsim", FIXTURE);
    let s = stats_of(&path, TraceFormat::Mqsim);
    assert_eq!(s.format, "mqsim");
    assert_eq!((s.requests, s.reads, s.writes), (6, 3, 3));
    // Reads 3 × 4096; writes 8192 + 512 + 1024.
    assert_eq!((s.bytes_read, s.bytes_written), (12_288, 9_728));

    // Sizes sorted: 512 1024 4096 4096 4096 8192; ranks ceil(q·6) = 3, 6, 6.
    let size = s.size.as_ref().unwrap();
    assert_eq!((size.min, size.max), (512, 8192));
    assert!((size.mean - 22_016.0 / 6.0).abs() < 1e-9);
    assert_eq!((size.p50, size.p90, size.p99), (4096, 8192, 8192));
    let bucket = |min_bytes: u64, count| SizeBucket {
        min_bytes,
        max_bytes: 2 * min_bytes - 1,
        count,
    };
    assert_eq!(
        size.histogram,
        [
            bucket(512, 1),
            bucket(1024, 1),
            bucket(4096, 3),
            bucket(8192, 1)
        ]
    );

    // Gaps 1000 500 3000 0 6000: mean 2100, sorted 0 500 1000 3000 6000 (ranks 3 and 5),
    // population variance (1100² + 1600² + 900² + 2100² + 3900²) / 5 = 2200².
    let gap = s.inter_arrival.as_ref().unwrap();
    assert_eq!(gap.count, 5);
    assert!((gap.mean - 2100.0).abs() < 1e-9);
    assert_eq!((gap.p50, gap.p99, gap.max), (1000, 6000, 6000));
    assert!((gap.cv - 2200.0 / 2100.0).abs() < 1e-9, "{}", gap.cv);

    // Device 0 touches pages 0, 1, 2 (the last two requests share page 2); device 1 pages 0, 1
    // and 12, 13 (bytes 51200..55295).
    assert_eq!(s.footprint_bytes, 7 * 4096);
    assert_eq!(
        (s.first_ns, s.last_ns, s.span_ns),
        (Some(0), Some(10_500), 10_500)
    );

    // Sequential: requests 2, 4 and 5 (4 starts where request 2 of device 0 ended, although
    // it is a write after a read); per direction only read 2 and write 5.
    let q = &s.sequential;
    assert_eq!((q.requests, q.reads, q.writes), (3, 1, 1));
    assert_eq!(q.fraction, 0.5);
    assert_eq!((q.read_fraction, q.write_fraction), (1.0 / 3.0, 1.0 / 3.0));

    assert_eq!(s.device_count, 2);
    assert_eq!(
        s.devices,
        [
            DeviceRequests {
                device: 0,
                requests: 4
            },
            DeviceRequests {
                device: 1,
                requests: 2
            }
        ]
    );
    assert_eq!(
        (s.bad_lines, s.skipped_events, s.clamped_backsteps),
        (0, 0, 0)
    );
}

#[test]
fn stats_json_has_the_documented_keys() {
    let dir = scratch_dir("json");
    let path = write_file(&dir, "six.mqsim", FIXTURE);
    let json = serde_json::to_value(stats_of(&path, TraceFormat::Mqsim)).unwrap();
    for key in [
        "requests",
        "reads",
        "writes",
        "bytes_read",
        "bytes_written",
        "size",
        "inter_arrival",
        "footprint_bytes",
        "span_ns",
        "sequential",
        "device_count",
        "devices",
        "bad_lines",
        "skipped_events",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(json["footprint_bytes"], 7 * 4096);
    assert_eq!(json["span_ns"], 10_500);
    let back: TraceStats = serde_json::from_value(json).unwrap();
    assert_eq!(back.requests, 6);
}

#[test]
fn empty_and_single_request_traces() {
    let dir = scratch_dir("tiny");
    let empty = stats_of(&write_file(&dir, "e.mqsim", ""), TraceFormat::Mqsim);
    assert_eq!(
        (empty.requests, empty.footprint_bytes, empty.span_ns),
        (0, 0, 0)
    );
    assert!(empty.size.is_none() && empty.inter_arrival.is_none() && empty.first_ns.is_none());
    assert_eq!(empty.sequential.fraction, 0.0);
    assert!(serde_json::to_string(&empty).is_ok());

    let one = stats_of(
        &write_file(&dir, "o.mqsim", "7 3 1 1 0\n"),
        TraceFormat::Mqsim,
    );
    assert_eq!((one.requests, one.writes, one.span_ns), (1, 1, 0));
    assert_eq!(one.footprint_bytes, 4096);
    assert!(one.inter_arrival.is_none());
    assert_eq!(one.size.unwrap().p99, 512);
}

#[test]
fn footprint_across_chunks_and_large_gaps() {
    // MSR: byte offsets. A 1 GiB request crossing the 128 MiB chunk boundaries of the bitset,
    // an unaligned 2-byte request straddling two pages, and a rewrite of part of the first.
    let dir = scratch_dir("chunks");
    let gib = 1u64 << 30;
    let text = format!(
        "0,h,0,Write,{},{gib},0\n10,h,0,Read,4095,2,0\n20000000000,h,0,Read,{},8192,0\n",
        100 * 4096 + 17,
        100 * 4096
    );
    let s = stats_of(&write_file(&dir, "c.csv", &text), TraceFormat::Msr);
    // 1 GiB starting 17 bytes into page 100 covers pages 100 ..= 100 + 262144.
    let expected_pages = 262_145 + 2;
    assert_eq!(s.footprint_bytes, expected_pages * 4096);
    let gap = s.inter_arrival.unwrap();
    assert_eq!(gap.max, 2_000_000_000_000 - 1000);
    // Beyond 2048 ns percentiles come from 0.1 %-wide buckets, never above the exact max.
    assert!(gap.p99 <= gap.max && gap.p99 as f64 >= gap.max as f64 * 0.999);
    assert_eq!(gap.p50, 1000);
}

#[test]
fn reader_counters_reach_the_stats() {
    let dir = scratch_dir("counters");
    let text = "fio version 3 iolog\n0 a add\n1 a write 0 4096\n2 a trim 0 4096\n\
                3 b read 8192 512\n4 a sync 0 0\n";
    let s = stats_of(&write_file(&dir, "t.fio", text), TraceFormat::Fio);
    assert_eq!((s.requests, s.skipped_events, s.device_count), (2, 2, 2));

    let bad = write_file(&dir, "bad.mqsim", "0 0 0 8 1\nnot a line\n5 0 8 8 1\n");
    let options = ReaderOptions {
        max_bad_lines: 1,
        ..ReaderOptions::default()
    };
    let mut reader = open_with(&bad, TraceFormat::Mqsim, &options).unwrap();
    let s = TraceStats::from_reader(&mut *reader).unwrap();
    assert_eq!((s.requests, s.bad_lines, s.sequential.requests), (2, 1, 1));
    // Without the budget the bad line is an error naming it.
    let error = TraceStats::from_reader(&mut *open(&bad, TraceFormat::Mqsim).unwrap());
    assert!(error.unwrap_err().to_string().contains(":2:"));
}

// ---------------------------------------------------------------- statistics, real traces

#[test]
fn bundled_trace_stats() {
    for &(name, format, requests, reads, writes) in BUNDLED {
        let path = real(name);
        let s = stats_of(&path, format);
        assert_eq!(
            (s.requests, s.reads, s.writes),
            (requests, reads, writes),
            "{name}"
        );

        // Independent: a plain set of (device, 4 KiB page) and first/last arrival.
        let records = read_path(&path, format);
        let mut pages = HashSet::new();
        let mut per_device: HashMap<u32, u64> = HashMap::new();
        for r in &records {
            for page in r.offset_bytes / 4096..=(r.offset_bytes + r.size_bytes - 1) / 4096 {
                pages.insert((r.device, page));
            }
            *per_device.entry(r.device).or_default() += 1;
        }
        assert_eq!(s.footprint_bytes, pages.len() as u64 * 4096, "{name}");
        let span = records.last().unwrap().time_ns - records[0].time_ns;
        assert_eq!(s.span_ns, span, "{name}");
        assert_eq!(s.device_count, per_device.len() as u64, "{name}");
        assert_eq!(s.devices.iter().map(|d| d.requests).sum::<u64>(), requests);
        assert!(s.devices.windows(2).all(|w| w[0].device < w[1].device));
        let independent_reads = records.iter().filter(|r| r.op == Op::Read).count() as u64;
        assert_eq!(
            (records.len() as u64, independent_reads),
            (requests, reads),
            "{name}"
        );
        let bytes: u64 = records.iter().map(|r| r.size_bytes).sum();
        assert_eq!(s.bytes_read + s.bytes_written, bytes, "{name}");
        let hist: u64 = s
            .size
            .as_ref()
            .unwrap()
            .histogram
            .iter()
            .map(|b| b.count)
            .sum();
        assert_eq!(hist, requests);
    }
}

#[test]
fn re_encoded_pairs_have_equal_stats() {
    let pairs = [
        ("financial1-head.ssdsim", "financial1-head.spc"),
        ("msnfs-30s.disksim.gz", "msnfs-30s.msr.csv.gz"),
    ];
    for (a, b) in pairs {
        let format = |name: &str| BUNDLED.iter().find(|t| t.0 == name).unwrap().1;
        let (sa, sb) = (stats_of(&real(a), format(a)), stats_of(&real(b), format(b)));
        assert_eq!(
            (
                sa.footprint_bytes,
                sa.size.clone(),
                sa.sequential.clone(),
                sa.devices.clone()
            ),
            (
                sb.footprint_bytes,
                sb.size.clone(),
                sb.sequential.clone(),
                sb.devices.clone()
            ),
            "{a} vs {b}"
        );
        // Times agree to the microsecond (the SPC file prints 6 decimals of seconds).
        assert!(sa.span_ns.abs_diff(sb.span_ns) <= 1000);
    }
}

// ---------------------------------------------------------------- conversion

/// What `record` must read back as from `to`, computed independently of the writer:
/// time truncated to the layout's unit, extent widened to whole sectors where it counts
/// sectors, stream = device, fio devices numbered by first appearance.
fn expected_after(records: &[TraceRecord], to: TraceFormat) -> Vec<TraceRecord> {
    let mut fio_ids: HashMap<u32, u32> = HashMap::new();
    records
        .iter()
        .map(|r| {
            let unit = match to {
                TraceFormat::Msr => 100,
                TraceFormat::Fio => 1_000_000,
                _ => 1,
            };
            let mut out = *r;
            out.time_ns -= r.time_ns % unit;
            if matches!(
                to,
                TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim | TraceFormat::Spc
            ) {
                out.offset_bytes = r.offset_bytes / 512 * 512;
                let end = r.offset_bytes + r.size_bytes;
                out.size_bytes = end - out.offset_bytes;
                if to != TraceFormat::Spc {
                    out.size_bytes = end.div_ceil(512) * 512 - out.offset_bytes;
                }
            }
            if to == TraceFormat::Fio {
                let next = fio_ids.len() as u32;
                out.device = *fio_ids.entry(r.device).or_insert(next);
            }
            out.stream = out.device;
            out
        })
        .collect()
}

#[test]
fn every_bundled_trace_round_trips_through_every_writable_layout() {
    let dir = scratch_dir("round-trip");
    for &(name, from, ..) in BUNDLED {
        let original = read_path(&real(name), from);
        for &to in WRITABLE_FORMATS {
            let expected = expected_after(&original, to);
            let exact = expected == original;
            let out = dir.join(format!("{name}.{to}"));

            let strict = convert(
                &mut *open(&real(name), from).unwrap(),
                to,
                &out,
                &ConvertOptions::default(),
            );
            match strict {
                Ok(report) => {
                    assert!(exact, "{name} -> {to} should have been refused");
                    assert!(report.is_lossless() && report.losses().is_empty());
                    assert_eq!(read_path(&out, to), original, "{name} -> {to}");
                    std::fs::remove_file(&out).unwrap();
                }
                Err(ConvertError::Lossy { index, .. }) => {
                    assert!(!exact, "{name} -> {to} is exact but was refused");
                    let first = expected.iter().zip(&original).position(|(e, o)| e != o);
                    assert_eq!(Some(index as usize - 1), first, "{name} -> {to}");
                    assert!(!out.exists());
                }
                Err(e) => panic!("{name} -> {to}: {e}"),
            }

            let options = ConvertOptions {
                allow_lossy: true,
                ..ConvertOptions::default()
            };
            let report = convert(&mut *open(&real(name), from).unwrap(), to, &out, &options)
                .unwrap_or_else(|e| panic!("{name} -> {to}: {e}"));
            assert_eq!(report.records, original.len() as u64);
            assert_eq!(report.is_lossless(), exact, "{name} -> {to}: {report:?}");
            let back = read_path(&out, to);
            assert_eq!(back, expected, "{name} -> {to}");
            let changed_streams = original.iter().filter(|r| r.stream != r.device).count();
            assert_eq!(report.streams_dropped, changed_streams as u64);
            let changed_times = expected
                .iter()
                .zip(&original)
                .filter(|(e, o)| e.time_ns != o.time_ns)
                .count();
            assert_eq!(
                report.times_truncated, changed_times as u64,
                "{name} -> {to}"
            );
            std::fs::remove_file(&out).unwrap();
        }
    }
    assert!(dir_entries(&dir).is_empty(), "{:?}", dir_entries(&dir));
}

#[test]
fn re_encoded_pairs_convert_into_each_other() {
    let dir = scratch_dir("pairs");
    let rebase = ConvertOptions {
        rebase_time: true,
        ..ConvertOptions::default()
    };
    // MSN-FS: MSR -> DiskSim (times rebased to 0, as in the DiskSim file) is byte for byte the
    // bundled DiskSim file; DiskSim -> MSR reads back as the bundled MSR records shifted by the
    // MSR file's first timestamp.
    let msr = real("msnfs-30s.msr.csv.gz");
    let disksim = real("msnfs-30s.disksim.gz");
    let out = dir.join("msnfs.disksim");
    let report = convert(
        &mut *open(&msr, TraceFormat::Msr).unwrap(),
        TraceFormat::Disksim,
        &out,
        &rebase,
    )
    .unwrap();
    assert!(report.is_lossless());
    let mut bundled = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&disksim).unwrap()),
        &mut bundled,
    )
    .unwrap();
    assert!(
        std::fs::read(&out).unwrap() == bundled,
        "not byte-identical"
    );

    let out = dir.join("msnfs.csv");
    let report = convert(
        &mut *open(&disksim, TraceFormat::Disksim).unwrap(),
        TraceFormat::Msr,
        &out,
        &ConvertOptions::default(),
    )
    .unwrap();
    assert!(report.is_lossless() && report.notes[0].contains("flashlane"));
    let msr_records = read_path(&msr, TraceFormat::Msr);
    let shift = msr_records[0].time_ns;
    let shifted: Vec<TraceRecord> = msr_records
        .iter()
        .map(|r| TraceRecord {
            time_ns: r.time_ns - shift,
            ..*r
        })
        .collect();
    assert_eq!(read_path(&out, TraceFormat::Msr), shifted);

    // Financial1: both directions are exact conversions, and the results equal the other
    // bundled file in every field; times within 1 us, because the SSDsim file holds
    // nanosecond times (e.g. 78643005 ns) that the SPC file printed to the microsecond.
    let spc = real("financial1-head.spc");
    let ssdsim = real("financial1-head.ssdsim");
    for (from, from_format, other, to) in [
        (&spc, TraceFormat::Spc, &ssdsim, TraceFormat::Ssdsim),
        (&ssdsim, TraceFormat::Ssdsim, &spc, TraceFormat::Spc),
    ] {
        let out = dir.join(format!("financial1.{to}"));
        let report = convert(
            &mut *open(from, from_format).unwrap(),
            to,
            &out,
            &ConvertOptions::default(),
        )
        .unwrap();
        assert!(report.is_lossless());
        let converted = read_path(&out, to);
        assert_eq!(converted, read_path(from, from_format));
        let reference = read_path(other, to);
        assert_eq!(converted.len(), reference.len());
        for (i, (c, r)) in converted.iter().zip(&reference).enumerate() {
            assert_eq!(
                (c.device, c.offset_bytes, c.size_bytes, c.op),
                (r.device, r.offset_bytes, r.size_bytes, r.op),
                "request {i}"
            );
            assert!(c.time_ns.abs_diff(r.time_ns) < 1000, "request {i}");
        }
    }
}

#[test]
fn lossy_conversion_is_refused_then_counted() {
    let dir = scratch_dir("lossy");
    // Byte offsets and sizes: record 2 starts mid-sector, record 3 has a 100-byte size.
    let input = write_file(
        &dir,
        "in.csv",
        "1000,h,0,Read,0,4096,0\n2000,h,0,Write,4196,4096,0\n3050,h,1,Read,8192,100,0\n",
    );
    let out = dir.join("out.mqsim");
    let error = convert(
        &mut *open(&input, TraceFormat::Msr).unwrap(),
        TraceFormat::Mqsim,
        &out,
        &ConvertOptions::default(),
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, ConvertError::Lossy { index: 2, .. }),
        "{message}"
    );
    for part in ["record 2", "offset 4196 B", "--allow-lossy", "in.csv"] {
        assert!(message.contains(part), "{message}");
    }
    assert_eq!(dir_entries(&dir), ["in.csv"]);

    let options = ConvertOptions {
        allow_lossy: true,
        ..ConvertOptions::default()
    };
    let report = convert(
        &mut *open(&input, TraceFormat::Msr).unwrap(),
        TraceFormat::Mqsim,
        &out,
        &options,
    )
    .unwrap();
    assert_eq!(
        (
            report.offsets_rounded,
            report.sizes_rounded,
            report.times_truncated
        ),
        (1, 2, 0)
    );
    assert_eq!(report.losses().len(), 2);
    // Widened to sectors: 4096..8292 -> 4096..8704; 8192..8292 -> 8192..8704.
    let back = read_path(&out, TraceFormat::Mqsim);
    assert_eq!(
        back.iter()
            .map(|r| (r.offset_bytes, r.size_bytes))
            .collect::<Vec<_>>(),
        [(0, 4096), (4096, 4608), (8192, 512)]
    );

    // fio: times in whole ms, devices numbered by first appearance.
    let fio_out = dir.join("out.fio");
    let report = convert(
        &mut *open(&input, TraceFormat::Msr).unwrap(),
        TraceFormat::Fio,
        &fio_out,
        &options,
    )
    .unwrap();
    assert_eq!((report.times_truncated, report.devices_renumbered), (3, 0));
    let back = read_path(&fio_out, TraceFormat::Fio);
    assert_eq!(
        back.iter().map(|r| r.time_ns).collect::<Vec<_>>(),
        [0, 0, 0]
    );
    assert_eq!(back[1].offset_bytes, 4196);
    let text = std::fs::read_to_string(&fio_out).unwrap();
    assert!(
        text.starts_with("fio version 3 iolog\n0 dev0 add\n0 dev0 open\n"),
        "{text}"
    );
    assert!(text.ends_with("0 dev0 close\n0 dev1 close\n"), "{text}");
}

#[test]
fn fio_renumbering_and_streams_are_losses() {
    let dir = scratch_dir("fio-devices");
    // Device 3 first: fio would read it back as device 0.
    let input = write_file(&dir, "in.mqsim", "0 3 0 8 1\n1000000 0 0 8 0\n");
    let out = dir.join("out.fio");
    let error = convert(
        &mut *open(&input, TraceFormat::Mqsim).unwrap(),
        TraceFormat::Fio,
        &out,
        &ConvertOptions::default(),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("device 3 would read back as device 0"),
        "{error}"
    );
    let options = ConvertOptions {
        allow_lossy: true,
        ..ConvertOptions::default()
    };
    let report: ConvertReport = convert(
        &mut *open(&input, TraceFormat::Mqsim).unwrap(),
        TraceFormat::Fio,
        &out,
        &options,
    )
    .unwrap();
    assert_eq!(report.devices_renumbered, 2);
    let back = read_path(&out, TraceFormat::Fio);
    assert_eq!(
        (back[0].device, back[1].device, back[1].time_ns),
        (0, 1, 1_000_000)
    );

    // blkparse records carry the PID as stream: refused for every layout.
    let blk = real("ycsb-a-rocksdb.blkparse.gz");
    let error = convert(
        &mut *open(&blk, TraceFormat::Blkparse).unwrap(),
        TraceFormat::Msr,
        &dir.join("ycsb.csv"),
        &ConvertOptions::default(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("stream 4020"), "{error}");
}

#[test]
fn failed_conversions_leave_no_output() {
    let dir = scratch_dir("atomic");
    // Line 3 is malformed: the error comes after two records were already written.
    let input = write_file(&dir, "in.mqsim", "0 0 0 8 1\n10 0 8 8 1\n20 0 zz 8 1\n");
    let fresh = dir.join("fresh.spc");
    let error = convert(
        &mut *open(&input, TraceFormat::Mqsim).unwrap(),
        TraceFormat::Spc,
        &fresh,
        &ConvertOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(error, ConvertError::Trace(_)), "{error}");
    assert!(error.to_string().contains(":3:"), "{error}");
    assert_eq!(dir_entries(&dir), ["in.mqsim"]);

    // An existing output keeps its old content.
    let existing = write_file(&dir, "old.spc", "old content\n");
    assert!(convert(
        &mut *open(&input, TraceFormat::Mqsim).unwrap(),
        TraceFormat::Spc,
        &existing,
        &ConvertOptions::default(),
    )
    .is_err());
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "old content\n");
    assert_eq!(dir_entries(&dir), ["in.mqsim", "old.spc"]);

    // Layouts without a writer, and an output directory that does not exist.
    let error = convert(
        &mut *open(&input, TraceFormat::Mqsim).unwrap(),
        TraceFormat::Blkparse,
        &dir.join("x"),
        &ConvertOptions::default(),
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("writable layouts: mqsim"),
        "{error}"
    );
    let missing = dir.join("no-such-dir").join("out.mqsim");
    assert!(matches!(
        convert(
            &mut *open(&input, TraceFormat::Mqsim).unwrap(),
            TraceFormat::Mqsim,
            &missing,
            &ConvertOptions::default(),
        ),
        Err(ConvertError::Io { .. })
    ));
    assert_eq!(dir_entries(&dir), ["in.mqsim", "old.spc"]);
}

#[test]
fn times_keep_full_precision_where_the_layout_allows() {
    let dir = scratch_dir("precision");
    // Nanosecond times that are not whole microseconds, and a large absolute time.
    let input = write_file(
        &dir,
        "in.mqsim",
        "1 0 0 1 1\n1999999 0 1 1 0\n12816637200000000123 2 7 3 1\n",
    );
    let original = read_path(&input, TraceFormat::Mqsim);
    for to in [TraceFormat::Ssdsim, TraceFormat::Disksim, TraceFormat::Spc] {
        let out = dir.join(format!("out.{to}"));
        let report = convert(
            &mut *open(&input, TraceFormat::Mqsim).unwrap(),
            to,
            &out,
            &ConvertOptions::default(),
        )
        .unwrap();
        assert!(report.is_lossless());
        assert_eq!(read_path(&out, to), original, "{to}");
    }
    let text = std::fs::read_to_string(dir.join("out.disksim")).unwrap();
    assert!(
        text.starts_with("0.000001 0 0 1 1\n1.999999 0 1 1 0\n"),
        "{text}"
    );
    let text = std::fs::read_to_string(dir.join("out.spc")).unwrap();
    assert!(
        text.ends_with("2,7,1536,r,12816637200.000000123\n"),
        "{text}"
    );
    // MSR ticks are 100 ns: refused.
    assert!(convert(
        &mut *open(&input, TraceFormat::Mqsim).unwrap(),
        TraceFormat::Msr,
        &dir.join("out.csv"),
        &ConvertOptions::default(),
    )
    .is_err());
}

#[test]
fn ops_survive_every_layout() {
    let dir = scratch_dir("ops");
    let input = write_file(&dir, "in.mqsim", "0 0 0 8 1\n0 0 0 8 0\n");
    for &to in WRITABLE_FORMATS {
        let out = dir.join(format!("o.{to}"));
        convert(
            &mut *open(&input, TraceFormat::Mqsim).unwrap(),
            to,
            &out,
            &ConvertOptions::default(),
        )
        .unwrap();
        let ops: Vec<Op> = read_path(&out, to).iter().map(|r| r.op).collect();
        assert_eq!(ops, [Op::Read, Op::Write], "{to}");
    }
}

// ---------------------------------------------------------------- no panics on any records

/// Replays arbitrary records, including values no reader would produce (time going back,
/// huge sizes and offsets), to show the tools never panic.
struct VecReader {
    records: std::vec::IntoIter<TraceRecord>,
    path: PathBuf,
}

impl TraceReader for VecReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, flashlane_core::trace::TraceError> {
        Ok(self.records.next())
    }
    fn format(&self) -> TraceFormat {
        TraceFormat::Msr
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

fn any_record() -> impl proptest::strategy::Strategy<Value = TraceRecord> {
    use proptest::prelude::*;
    let edge = prop_oneof![Just(0u64), Just(u64::MAX), Just(1u64 << 62), 0u64..1 << 40];
    (edge.clone(), 0u32..4, edge.clone(), edge, any::<bool>()).prop_map(
        |(time_ns, device, offset_bytes, size_bytes, read)| TraceRecord {
            time_ns,
            device,
            stream: device,
            offset_bytes,
            size_bytes: size_bytes % (1 << 31),
            op: if read { Op::Read } else { Op::Write },
        },
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn tools_never_panic(records in proptest::collection::vec(any_record(), 0..12)) {
        let dir = scratch_dir("never-panic");
        let reader = || VecReader { records: records.clone().into_iter(), path: dir.join("in") };
        let stats = TraceStats::from_reader(&mut reader()).unwrap();
        proptest::prop_assert_eq!(stats.requests, records.len() as u64);
        for &to in WRITABLE_FORMATS {
            for allow_lossy in [false, true] {
                let options = ConvertOptions { allow_lossy, rebase_time: true };
                let _ = convert(&mut reader(), to, &dir.join("out"), &options);
            }
        }
    }
}
