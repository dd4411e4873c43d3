//! Trace readers against the real traces in <repo>/traces/ and small hand-written fixtures.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use crate::common::ScratchDir;

use flashlane_core::trace::{
    self, detect, open, open_with, BlkparseReader, BlockEvent, DiskmonReader, FioReader,
    GenericCsvReader, GenericCsvSpec, MsrReader, Op, ReaderOptions, SpcReader, TraceError,
    TraceFormat, TraceReader, TraceRecord,
};
use proptest::prelude::*;

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/");

fn real(name: &str) -> PathBuf {
    Path::new(TRACES).join(name)
}

/// A scratch directory unique to this call, removed when the test ends.
fn scratch_dir(name: &str) -> ScratchDir {
    ScratchDir::new(&format!("trace-{name}"))
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write fixture");
    path
}

fn read_all(reader: &mut dyn TraceReader) -> Result<Vec<TraceRecord>, TraceError> {
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record);
    }
    Ok(records)
}

fn read_path(path: &Path, format: TraceFormat) -> Vec<TraceRecord> {
    let mut reader = open(path, format).expect("open");
    read_all(&mut *reader).expect("read")
}

fn record(
    time_ns: u64,
    device: u32,
    stream: u32,
    offset_bytes: u64,
    size_bytes: u64,
    op: Op,
) -> TraceRecord {
    TraceRecord {
        time_ns,
        device,
        stream,
        offset_bytes,
        size_bytes,
        op,
    }
}

/// Checks count, read and write counts, first and last record.
fn check_summary(
    records: &[TraceRecord],
    count: usize,
    reads: usize,
    writes: usize,
    first: TraceRecord,
    last: TraceRecord,
) {
    assert_eq!(records.len(), count, "request count");
    assert_eq!(
        records.iter().filter(|r| r.op == Op::Read).count(),
        reads,
        "reads"
    );
    assert_eq!(
        records.iter().filter(|r| r.op == Op::Write).count(),
        writes,
        "writes"
    );
    assert_eq!(records.first(), Some(&first), "first record");
    assert_eq!(records.last(), Some(&last), "last record");
}

// ---------------------------------------------------------------- real traces

#[test]
fn tpcc_mqsim() {
    let records = read_path(&real("tpcc-small.mqsim"), TraceFormat::Mqsim);
    check_summary(
        &records,
        6999,
        4381,
        2618,
        record(938_513_000, 4, 4, 135_536_145_408, 8192, Op::Write),
        record(1_075_002_000, 7, 7, 81_949_365_248, 8192, Op::Write),
    );
}

#[test]
fn websearch_mqsim_without_final_newline() {
    let records = read_path(&real("websearch-small.mqsim"), TraceFormat::Mqsim);
    check_summary(
        &records,
        24_783,
        24_779,
        4,
        record(11_413_000, 0, 0, 336_756_736, 8192, Op::Read),
        record(60_066_625_000, 1, 1, 17_598_169_088, 32_768, Op::Read),
    );
}

#[test]
fn financial1_ssdsim_crlf() {
    let records = read_path(&real("financial1-head.ssdsim"), TraceFormat::Ssdsim);
    check_summary(
        &records,
        10_000,
        4077,
        5923,
        record(0, 0, 0, 155_426_304, 3584, Op::Write),
        record(259_601_203_125, 8, 8, 75_033_600, 512, Op::Write),
    );
}

#[test]
fn financial1_spc() {
    let records = read_path(&real("financial1-head.spc"), TraceFormat::Spc);
    check_summary(
        &records,
        10_000,
        4077,
        5923,
        record(0, 0, 0, 155_426_304, 3584, Op::Write),
        record(259_601_203_000, 8, 8, 75_033_600, 512, Op::Write),
    );
}

#[test]
fn msnfs_disksim_gz() {
    let records = read_path(&real("msnfs-30s.disksim.gz"), TraceFormat::Disksim);
    check_summary(
        &records,
        149_999,
        130_483,
        19_516,
        record(0, 5, 5, 89_202_720_768, 8192, Op::Read),
        record(143_068_077_000, 5, 5, 90_104_332_288, 8192, Op::Read),
    );
}

#[test]
fn msnfs_msr_gz() {
    let records = read_path(&real("msnfs-30s.msr.csv.gz"), TraceFormat::Msr);
    check_summary(
        &records,
        149_999,
        130_483,
        19_516,
        record(
            12_816_637_200_000_000_000,
            5,
            5,
            89_202_720_768,
            8192,
            Op::Read,
        ),
        record(
            12_816_637_343_068_077_000,
            5,
            5,
            90_104_332_288,
            8192,
            Op::Read,
        ),
    );
}

const NVME_DEVICE: u32 = 259 << 20 | 2;

#[test]
fn ycsb_blkparse_issue_events() {
    let mut reader = open(&real("ycsb-a-rocksdb.blkparse.gz"), TraceFormat::Blkparse).unwrap();
    let records = read_all(&mut *reader).unwrap();
    check_summary(
        &records,
        1694,
        1694,
        0,
        record(5462, NVME_DEVICE, 4020, 144_703_488, 4096, Op::Read),
        record(
            679_519_537,
            NVME_DEVICE,
            4118,
            411_750_375_424,
            131_072,
            Op::Read,
        ),
    );
    assert_eq!(reader.skipped_events(), 0);
    assert_eq!(reader.bad_lines(), 0);
    assert_eq!(reader.clamped_backsteps(), 0);
}

#[test]
fn ycsb_blkparse_queue_events() {
    let options = ReaderOptions {
        block_event: BlockEvent::Queue,
        ..ReaderOptions::default()
    };
    let path = real("ycsb-a-rocksdb.blkparse.gz");
    let mut reader = open_with(&path, TraceFormat::Blkparse, &options).unwrap();
    let records = read_all(&mut *reader).unwrap();
    check_summary(
        &records,
        1695,
        1695,
        0,
        record(0, NVME_DEVICE, 4020, 144_703_488, 4096, Op::Read),
        record(
            679_741_681,
            NVME_DEVICE,
            4124,
            69_994_242_048,
            131_072,
            Op::Read,
        ),
    );
}

/// Same requests; times equal after rebasing to the first record, within `tolerance_ns`
/// (the coarser layout's unit).
fn assert_same_requests(a: &[TraceRecord], b: &[TraceRecord], tolerance_ns: u64) {
    assert_eq!(a.len(), b.len());
    let (a0, b0) = (a[0].time_ns, b[0].time_ns);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(
            (x.op, x.offset_bytes, x.size_bytes, x.device),
            (y.op, y.offset_bytes, y.size_bytes, y.device),
            "request {i}"
        );
        let (tx, ty) = (x.time_ns - a0, y.time_ns - b0);
        assert!(
            tx.abs_diff(ty) <= tolerance_ns,
            "request {i}: {tx} ns vs {ty} ns"
        );
    }
}

#[test]
fn financial1_spc_and_ssdsim_agree() {
    let spc = read_path(&real("financial1-head.spc"), TraceFormat::Spc);
    let ssdsim = read_path(&real("financial1-head.ssdsim"), TraceFormat::Ssdsim);
    // SPC timestamps have microsecond precision (6 decimals), SSDsim nanoseconds.
    assert_same_requests(&spc, &ssdsim, 1000);
}

#[test]
fn msnfs_msr_and_disksim_agree() {
    let msr = read_path(&real("msnfs-30s.msr.csv.gz"), TraceFormat::Msr);
    let disksim = read_path(&real("msnfs-30s.disksim.gz"), TraceFormat::Disksim);
    // DiskSim times carry 3 decimals of milliseconds (1 us), MSR 100 ns ticks.
    assert_same_requests(&msr, &disksim, 1000);
}

// ---------------------------------------------------------------- detection

#[test]
fn detects_every_real_trace() {
    let expected = [
        ("tpcc-small.mqsim", TraceFormat::Mqsim),
        ("websearch-small.mqsim", TraceFormat::Mqsim),
        ("financial1-head.ssdsim", TraceFormat::Ssdsim),
        ("financial1-head.spc", TraceFormat::Spc),
        ("msnfs-30s.disksim.gz", TraceFormat::Disksim),
        ("msnfs-30s.msr.csv.gz", TraceFormat::Msr),
        ("ycsb-a-rocksdb.blkparse.gz", TraceFormat::Blkparse),
    ];
    for (name, format) in expected {
        assert_eq!(detect(&real(name)).unwrap(), format, "{name}");
    }
}

#[test]
fn five_integer_columns_without_extension_are_ambiguous() {
    let dir = scratch_dir("ambiguous");
    let text = std::fs::read(real("tpcc-small.mqsim")).unwrap();
    let path = write_file(&dir, "tpcc.trace", &text);
    let message = detect(&path).unwrap_err().to_string();
    assert!(message.contains("ambiguous"), "{message}");
    assert!(message.contains("mqsim, ssdsim, disksim"), "{message}");
    assert!(message.contains("--format"), "{message}");
    // The extension breaks the tie only among layouts that fit the content.
    let path = write_file(&dir, "tpcc.ssdsim", &text);
    assert_eq!(detect(&path).unwrap(), TraceFormat::Ssdsim);
}

#[test]
fn extension_does_not_override_content() {
    let dir = scratch_dir("extension");
    // Decimal times: only DiskSim fits, whatever the name says.
    let path = write_file(&dir, "x.mqsim", b"0.5 0 100 8 1\n1.25 0 200 8 0\n");
    assert_eq!(detect(&path).unwrap(), TraceFormat::Disksim);
}

#[test]
fn unknown_content_lists_what_was_tried() {
    let dir = scratch_dir("unknown");
    let path = write_file(&dir, "mystery.txt", b"hello world\nthis is not a trace\n");
    let message = detect(&path).unwrap_err().to_string();
    for name in [
        "msr", "spc", "blkparse", "fio", "mqsim", "ssdsim", "disksim",
    ] {
        assert!(message.contains(name), "{name} missing from: {message}");
    }
    let empty = write_file(&dir, "empty", b"");
    assert!(detect(&empty).is_err());
}

#[test]
fn detects_fio_and_generic_needs_spec() {
    let dir = scratch_dir("detect-fio");
    let v2 = write_file(
        &dir,
        "a.log",
        b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n",
    );
    assert_eq!(detect(&v2).unwrap(), TraceFormat::Fio);
    let v3 = write_file(
        &dir,
        "b.log",
        b"fio version 3 iolog\n5 /dev/sdb read 0 4096\n",
    );
    assert_eq!(detect(&v3).unwrap(), TraceFormat::Fio);
    let message = match open(&v3, TraceFormat::GenericCsv) {
        Ok(_) => panic!("generic-csv without a spec must fail"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("column spec"), "{message}");
}

// ---------------------------------------------------------------- common checks and bad lines

fn mqsim_reader(text: &str, options: &ReaderOptions) -> Box<dyn TraceReader> {
    Box::new(trace::AsciiReader::with_options(
        PathBuf::from("fixture.mqsim"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        TraceFormat::Mqsim,
        options,
    ))
}

fn first_error(reader: &mut dyn TraceReader) -> String {
    loop {
        match reader.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("expected an error"),
            Err(e) => return e.to_string(),
        }
    }
}

#[test]
fn absurd_values_are_errors() {
    let cases = [
        ("0 0 100 0 1", "size is zero"),
        ("0 0 100 2097153 1", "exceeds the 1 GiB"),
        ("0 0 2251799813685248 8 1", "2^60"),
    ];
    for (line, expected) in cases {
        let text = format!("0 0 0 8 1\n{line}\n");
        let message = first_error(&mut *mqsim_reader(&text, &ReaderOptions::default()));
        assert!(message.contains("fixture.mqsim:2:"), "{message}");
        assert!(message.contains(expected), "{message}");
        assert!(message.contains(line), "{message}");
    }
}

#[test]
fn small_time_backsteps_are_clamped_large_ones_fail() {
    let text = "2000000000 0 0 8 1\n1500000000 0 8 8 1\n2100000000 0 16 8 1\n";
    let mut reader = mqsim_reader(text, &ReaderOptions::default());
    let records = read_all(&mut *reader).unwrap();
    assert_eq!(
        records.iter().map(|r| r.time_ns).collect::<Vec<_>>(),
        [2_000_000_000, 2_000_000_000, 2_100_000_000]
    );
    assert_eq!(reader.clamped_backsteps(), 1);

    let text = "3000000000 0 0 8 1\n1000000000 0 8 8 1\n";
    let message = first_error(&mut *mqsim_reader(text, &ReaderOptions::default()));
    assert!(
        message.contains(":2:") && message.contains("backwards"),
        "{message}"
    );
}

#[test]
fn bad_line_budget() {
    let text = "0 0 0 8 1\nnonsense\n10 0 8 8 1\n20 0 8 x 1\n30 0 16 8 0\n";
    let strict = first_error(&mut *mqsim_reader(text, &ReaderOptions::default()));
    assert!(
        strict.contains("fixture.mqsim:2:") && strict.contains("nonsense"),
        "{strict}"
    );

    let two = ReaderOptions {
        max_bad_lines: 2,
        ..ReaderOptions::default()
    };
    let mut reader = mqsim_reader(text, &two);
    assert_eq!(read_all(&mut *reader).unwrap().len(), 3);
    assert_eq!(reader.bad_lines(), 2);

    let one = ReaderOptions {
        max_bad_lines: 1,
        ..ReaderOptions::default()
    };
    let message = first_error(&mut *mqsim_reader(text, &one));
    assert!(message.contains("fixture.mqsim:4:"), "{message}");
    assert!(message.contains("bad line 2 of at most 1"), "{message}");
}

#[test]
fn ascii_errors_name_line_and_text() {
    let text = "0 0 0 8 1\n5 0 0 8 2\n";
    let message = first_error(&mut *mqsim_reader(text, &ReaderOptions::default()));
    assert!(message.contains("fixture.mqsim:2:"), "{message}");
    assert!(
        message.contains("must be 0 (write) or 1 (read)"),
        "{message}"
    );
    assert!(message.contains("5 0 0 8 2"), "{message}");

    let disksim = trace::AsciiReader::new(
        PathBuf::from("d.disksim"),
        Box::new(Cursor::new(b"1.5 0 0 8 1\n-2 0 0 8 1\n".to_vec())),
        TraceFormat::Disksim,
    );
    let mut disksim: Box<dyn TraceReader> = Box::new(disksim);
    let message = first_error(&mut *disksim);
    assert!(
        message.contains("d.disksim:2:") && message.contains("milliseconds"),
        "{message}"
    );
}

// ---------------------------------------------------------------- MSR

fn msr(text: &[u8]) -> MsrReader {
    MsrReader::new(
        PathBuf::from("t.csv"),
        Box::new(Cursor::new(text.to_vec())),
        &ReaderOptions::default(),
    )
}

#[test]
fn msr_header_case_and_crlf() {
    let text = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n\
        128166372000000000,hm,0,READ,4096,512,10\r\n\
        128166372000000010,hm,1,write,8192,4096,0\r\n";
    let records = read_all(&mut msr(text)).unwrap();
    assert_eq!(
        records,
        [
            record(12_816_637_200_000_000_000, 0, 0, 4096, 512, Op::Read),
            record(12_816_637_200_000_001_000, 1, 1, 8192, 4096, Op::Write),
        ]
    );
}

#[test]
fn msr_errors() {
    let cases: [(&[u8], &str); 4] = [
        (b"1,h,0,Read,0,512,0\n2,h,0,Trim,0,512,0\n", "Read or Write"),
        (b"1,h,0,Read,0,512,0\n2,h,0,Read,0,512\n", "found 6"),
        (b"1,h,0,Read,0,512,0\n2,h,0,Read,0,512,0,9\n", "found more"),
        (b"1,h,0,Read,0,512,0\n2,h,0,Read,-4,512,0\n", "Offset"),
    ];
    for (text, expected) in cases {
        let message = first_error(&mut msr(text));
        assert!(message.starts_with("t.csv:2:"), "{message}");
        assert!(message.contains(expected), "{message}");
    }
}

// ---------------------------------------------------------------- SPC

#[test]
fn spc_exact_times_and_errors() {
    let text = b"0,10,4096,r,0.1\n1,20,512,W,0.300000001,extra\n";
    let mut reader = SpcReader::new(
        PathBuf::from("t.spc"),
        Box::new(Cursor::new(text.to_vec())),
        &ReaderOptions::default(),
    );
    assert_eq!(
        read_all(&mut reader).unwrap(),
        [
            record(100_000_000, 0, 0, 5120, 4096, Op::Read),
            record(300_000_001, 1, 1, 10_240, 512, Op::Write),
        ]
    );
    for (text, expected) in [
        (&b"0,10,4096,r,0.1\n0,10,4096,x,0.2\n"[..], "Opcode"),
        (b"0,10,4096,r,0.1\n0,10,4096,r,2e-1\n", "Timestamp"),
        (b"0,10,4096,r,0.1\n0,10,4096\n", "missing column `Opcode`"),
    ] {
        let mut reader = SpcReader::new(
            PathBuf::from("t.spc"),
            Box::new(Cursor::new(text.to_vec())),
            &ReaderOptions::default(),
        );
        let message = first_error(&mut reader);
        assert!(
            message.starts_with("t.spc:2:") && message.contains(expected),
            "{message}"
        );
    }
}

// ---------------------------------------------------------------- blkparse

const BLKPARSE_SAMPLE: &str = "\
  8,0    1        1     0.000000000  1234  Q   W 1000 + 8 [dd]
  8,0    1        2     0.000001000  1234  G   W 1000 + 8 [dd]
  8,0    1        3     0.000002000  1234  P   N [dd]
  8,0    1        4     0.000003000  1234  D   W 1000 + 8 [dd]
  8,0    1        0     0.000003500     0  m   N cfq1234 insert_request
  8,0    1        5     0.000004000   200  D  FN [kworker/1:1]
  8,0    1        6     0.000005000   201  D   D 5000 + 64 [fstrim]
  8,0    1        7     0.000006000   202  D  FWS [jbd2/sda1-8]
  8,0    0        8     0.000007000  1235  D  RA 2000 + 16 [cat]
  8,0    0        9     0.000009000  1235  C  RA 2000 + 16 [0]
  8,0    0       10     0.000009500  1235  U   N [cat] 1
CPU0 (sda):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
 Read Dispatches:        1,        8KiB\t Write Dispatches:        1,        4KiB

Total (sda):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
Throughput (R/W): 0KiB/s / 0KiB/s
Events (sda): 11 entries
Skips: 0 forward (0 -   0.0%)
";

fn blkparse(text: &str, options: &ReaderOptions) -> BlkparseReader {
    BlkparseReader::new(
        PathBuf::from("t.blkparse"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        options,
    )
}

#[test]
fn blkparse_events_summary_and_skips() {
    let mut reader = blkparse(BLKPARSE_SAMPLE, &ReaderOptions::default());
    let records = read_all(&mut reader).unwrap();
    let sda = 8 << 20;
    assert_eq!(
        records,
        [
            record(3000, sda, 1234, 512_000, 4096, Op::Write),
            record(7000, sda, 1235, 1_024_000, 8192, Op::Read),
        ]
    );
    // FN (empty flush), D (discard) and FWS without data.
    assert_eq!(reader.skipped_events(), 3);

    let queue = ReaderOptions {
        block_event: BlockEvent::Queue,
        ..ReaderOptions::default()
    };
    let records = read_all(&mut blkparse(BLKPARSE_SAMPLE, &queue)).unwrap();
    assert_eq!(records, [record(0, sda, 1234, 512_000, 4096, Op::Write)]);
}

#[test]
fn blkparse_errors() {
    for (bad, expected) in [
        ("this is not blkparse output", "not a blkparse event line"),
        (
            "  8,0    1   12   0.000010000  1234  Z   W 1 + 8 [x]",
            "unknown blkparse action",
        ),
        (
            "  8,0    1   12   0.0000x0000  1234  D   W 1 + 8 [x]",
            "SECONDS.NANOSECONDS",
        ),
        (
            "  8,0    1   12   0.000010000  1234  D   W 1 - 8 [x]",
            "SECTOR + NSECTORS",
        ),
    ] {
        let text =
            format!("  8,0    1        1     0.000000000  1234  D   W 1000 + 8 [dd]\n{bad}\n");
        let message = first_error(&mut blkparse(&text, &ReaderOptions::default()));
        assert!(message.starts_with("t.blkparse:2:"), "{message}");
        assert!(message.contains(expected), "{message}");
        assert!(message.contains(bad.trim()), "{message}");
    }
}

// ---------------------------------------------------------------- fio

fn fio(text: &str) -> FioReader {
    FioReader::new(
        PathBuf::from("t.iolog"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        &ReaderOptions::default(),
    )
}

#[test]
fn fio_v2_with_waits() {
    let text = "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n\
        /dev/sdb write 0 4096\n/dev/sdb wait 1500 0\n/dev/sdc read 8192 512\n\
        /dev/sdb trim 0 4096\n/dev/sdb sync 0 0\n/dev/sdb close\n";
    let mut reader = fio(text);
    assert_eq!(
        read_all(&mut reader).unwrap(),
        [
            record(0, 0, 0, 0, 4096, Op::Write),
            record(1_500_000, 1, 1, 8192, 512, Op::Read),
        ]
    );
    assert_eq!(reader.skipped_events(), 2);
}

#[test]
fn fio_v3_timestamps() {
    let text = "fio version 3 iolog\n0 /dev/nvme0n1 add\n0 /dev/nvme0n1 open\n\
        3 /dev/nvme0n1 read 4096 4096\n7 /dev/nvme0n1 write 0 131072\n9 /dev/nvme0n1 trim 0 4096\n\
        9 /dev/nvme0n1 close\n";
    let mut reader = fio(text);
    assert_eq!(
        read_all(&mut reader).unwrap(),
        [
            record(3_000_000, 0, 0, 4096, 4096, Op::Read),
            record(7_000_000, 0, 0, 0, 131_072, Op::Write),
        ]
    );
    assert_eq!(reader.skipped_events(), 1);
}

#[test]
fn fio_errors() {
    let message = first_error(&mut fio("/dev/sdb read 0 4096\n"));
    assert!(
        message.starts_with("t.iolog:1:") && message.contains("header"),
        "{message}"
    );
    // A missing header is fatal even with a bad-line budget.
    let lenient = ReaderOptions {
        max_bad_lines: 10,
        ..ReaderOptions::default()
    };
    let mut reader = FioReader::new(
        PathBuf::from("t.iolog"),
        Box::new(Cursor::new(b"garbage\n/dev/sdb read 0 4096\n".to_vec())),
        &lenient,
    );
    assert!(reader.next_record().is_err());

    let message = first_error(&mut fio("fio version 2 iolog\n/dev/sdb frobnicate 0 1\n"));
    assert!(
        message.starts_with("t.iolog:2:") && message.contains("unknown fio action"),
        "{message}"
    );
    let message = first_error(&mut fio("fio version 3 iolog\nx /dev/sdb read 0 1\n"));
    assert!(
        message.starts_with("t.iolog:2:") && message.contains("timestamp"),
        "{message}"
    );
}

// ---------------------------------------------------------------- generic CSV

#[test]
fn generic_spec_syntax() {
    let spec: GenericCsvSpec = "time=0:ms,op=3:Read/Write,offset=4:bytes,size=5:bytes,delimiter=,"
        .parse()
        .unwrap();
    assert_eq!(spec.delimiter, trace::Delimiter::Byte(b','));
    assert_eq!(spec.time_unit, trace::TimeUnit::Ms);
    assert_eq!(spec.read_tokens, ["Read"]);
    assert_eq!((spec.offset_column, spec.size_column), (4, 5));

    let spec: GenericCsvSpec =
        "delimiter=tab,header=yes,time=1:ticks100ns,op=0:r|R/w|W/t,offset=2:sectors,size=3:sectors,device=4,stream=5"
            .parse()
            .unwrap();
    assert_eq!(spec.delimiter, trace::Delimiter::Byte(b'\t'));
    assert!(spec.has_header);
    assert_eq!(spec.skip_tokens, ["t"]);
    assert_eq!((spec.device_column, spec.stream_column), (Some(4), Some(5)));

    for (bad, expected) in [
        (
            "time=0,op=1:R/W,offset=2:bytes,size=3:bytes",
            "`time=` needs a unit",
        ),
        (
            "time=0:minutes,op=1:R/W,offset=2:bytes,size=3:bytes",
            "unknown unit \"minutes\"",
        ),
        ("time=0:s,op=1:R/W,offset=2:bytes", "missing `size="),
        (
            "time=0:s,op=1:R,offset=2:bytes,size=3:bytes",
            "read and one write token",
        ),
        (
            "time=a:s,op=1:R/W,offset=2:bytes,size=3:bytes",
            "0-based column number",
        ),
        (
            "time=0:s,op=1:R/W,offset=2:pages,size=3:bytes",
            "`offset=`: unknown unit",
        ),
        ("time=0:s,colour=blue", "unknown key \"colour\""),
        ("time=0:s,delimiter=;;", "one character"),
    ] {
        let message = bad.parse::<GenericCsvSpec>().unwrap_err();
        assert!(message.contains(expected), "{bad}: {message}");
    }
}

#[test]
fn generic_csv_reads_with_units() {
    let spec: GenericCsvSpec =
        "delimiter=whitespace,header=yes,time=1:us,op=0:r/w/t,offset=2:sectors,size=3:bytes,device=4"
            .parse()
            .unwrap();
    let text = "op time lba bytes dev\nR 1.5 8 4096 3\nt 2 0 4096 3\nw 10 16 512 2\n";
    let mut reader = GenericCsvReader::new(
        PathBuf::from("g.txt"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        spec.clone(),
        &ReaderOptions::default(),
    );
    assert_eq!(
        read_all(&mut reader).unwrap(),
        [
            record(1500, 3, 3, 4096, 4096, Op::Read),
            record(10_000, 2, 2, 8192, 512, Op::Write),
        ]
    );
    assert_eq!(reader.skipped_events(), 1);

    let text = "op time lba bytes dev\nR 1.5 8 4096 3\nX 2 0 4096 3\n";
    let mut reader = GenericCsvReader::new(
        PathBuf::from("g.txt"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        spec,
        &ReaderOptions::default(),
    );
    let message = first_error(&mut reader);
    assert!(
        message.starts_with("g.txt:3:") && message.contains("neither a read token"),
        "{message}"
    );

    // Through open_with, from a file.
    let dir = scratch_dir("generic");
    let path = write_file(&dir, "g.csv", b"5;W;100;7\n");
    let options = ReaderOptions {
        generic_csv: Some(
            "time=0:s,op=1:R/W,offset=2:bytes,size=3:bytes,delimiter=;"
                .parse()
                .unwrap(),
        ),
        ..ReaderOptions::default()
    };
    let mut reader = open_with(&path, TraceFormat::GenericCsv, &options).unwrap();
    assert_eq!(
        read_all(&mut *reader).unwrap(),
        [record(5_000_000_000, 0, 0, 100, 7, Op::Write)]
    );
}

// ---------------------------------------------------------------- binary blktrace

const ISSUE: u32 = 7;
const QUEUE: u32 = 1;
const CAT_READ: u32 = 1 << 16;
const CAT_WRITE: u32 = 2 << 16;
const CAT_NOTIFY: u32 = (1 << 10) << 16;
const CAT_DISCARD: u32 = (1 << 13) << 16;

/// One `struct blk_io_trace` plus payload, in the chosen byte order.
#[allow(clippy::too_many_arguments)]
fn blk_event(
    big_endian: bool,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    cpu: u32,
    pdu: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    let put32 = |out: &mut Vec<u8>, v: u32| {
        out.extend_from_slice(&if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        })
    };
    put32(&mut out, 0x6561_7407);
    put32(&mut out, 0); // sequence
    let time_bytes = if big_endian {
        time.to_be_bytes()
    } else {
        time.to_le_bytes()
    };
    out.extend_from_slice(&time_bytes);
    let sector_bytes = if big_endian {
        sector.to_be_bytes()
    } else {
        sector.to_le_bytes()
    };
    out.extend_from_slice(&sector_bytes);
    put32(&mut out, bytes);
    put32(&mut out, action);
    put32(&mut out, pid);
    put32(&mut out, device);
    put32(&mut out, cpu);
    let pdu_len = u16::try_from(pdu.len()).unwrap();
    let tail = if big_endian {
        [0u16.to_be_bytes(), pdu_len.to_be_bytes()]
    } else {
        [0u16.to_le_bytes(), pdu_len.to_le_bytes()]
    };
    out.extend_from_slice(&tail.concat());
    out.extend_from_slice(pdu);
    out
}

fn blktrace_capture(dir: &Path, big_endian: bool) {
    let dev = 8 << 20 | 16;
    let e = |time, sector, bytes, action, pid, cpu, pdu: &[u8]| {
        blk_event(big_endian, time, sector, bytes, action, pid, dev, cpu, pdu)
    };
    let cpu0 = [
        e(100, 10, 4096, QUEUE | CAT_WRITE, 1, 0, b""),
        e(150, 10, 4096, ISSUE | CAT_WRITE, 1, 0, b"\x01\x02\x03"),
        // A process-name notification: action code 1 like QUEUE, but never a request.
        e(160, 0, 0, 1 | CAT_NOTIFY, 1, 0, b"kworker\0"),
        e(400, 99, 8192, ISSUE | CAT_WRITE | CAT_DISCARD, 3, 0, b""),
        e(500, 30, 512, ISSUE | CAT_READ, 4, 0, b""),
    ]
    .concat();
    let cpu1 = [
        e(120, 20, 8192, QUEUE | CAT_READ, 2, 1, b""),
        e(300, 20, 8192, ISSUE | CAT_READ, 2, 1, b""),
    ]
    .concat();
    write_file(dir, "sdb.blktrace.0", &cpu0);
    write_file(dir, "sdb.blktrace.1", &cpu1);
}

#[test]
fn blktrace_merges_cpus_in_time_order() {
    for big_endian in [false, true] {
        let dir = scratch_dir(if big_endian { "blk-be" } else { "blk-le" });
        blktrace_capture(&dir, big_endian);
        let dev = 8 << 20 | 16;
        let expected = [
            record(150, dev, 1, 5120, 4096, Op::Write),
            record(300, dev, 2, 10_240, 8192, Op::Read),
            record(500, dev, 4, 15_360, 512, Op::Read),
        ];
        for path in [dir.to_path_buf(), dir.join("sdb")] {
            assert_eq!(detect(&path).unwrap(), TraceFormat::Blktrace);
            let mut reader = open(&path, TraceFormat::Blktrace).unwrap();
            assert_eq!(read_all(&mut *reader).unwrap(), expected);
            assert_eq!(reader.skipped_events(), 1, "the discard");
        }
        let single = dir.join("sdb.blktrace.1");
        assert_eq!(detect(&single).unwrap(), TraceFormat::Blktrace);

        let queue = ReaderOptions {
            block_event: BlockEvent::Queue,
            ..ReaderOptions::default()
        };
        let mut reader = open_with(&dir, TraceFormat::Blktrace, &queue).unwrap();
        assert_eq!(
            read_all(&mut *reader).unwrap(),
            [
                record(100, dev, 1, 5120, 4096, Op::Write),
                record(120, dev, 2, 10_240, 8192, Op::Read),
            ]
        );
    }
}

/// A capture missing a per-CPU file, or one per-CPU file given alone, says which CPUs it did
/// not read (the run's `blktrace_cpu_files_missing` warning); a whole capture says none.
#[test]
fn blktrace_notes_the_cpu_files_it_did_not_read() {
    let dir = scratch_dir("blk-missing");
    blktrace_capture(&dir, false);
    let whole = open(&dir, TraceFormat::Blktrace).unwrap();
    assert_eq!(whole.notes().missing_cpu_files, Vec::<u32>::new());
    let single = open(&dir.join("sdb.blktrace.1"), TraceFormat::Blktrace).unwrap();
    assert_eq!(single.notes().missing_cpu_files, vec![0]);
    std::fs::rename(dir.join("sdb.blktrace.1"), dir.join("sdb.blktrace.3")).unwrap();
    for path in [dir.to_path_buf(), dir.join("sdb")] {
        let gap = open(&path, TraceFormat::Blktrace).unwrap();
        assert_eq!(gap.notes().missing_cpu_files, vec![1, 2]);
    }
}

#[test]
fn blktrace_errors() {
    let dir = scratch_dir("blk-errors");
    let good = blk_event(false, 10, 1, 512, ISSUE | CAT_READ, 1, 0, 0, b"");
    let mut truncated = good.clone();
    truncated.extend_from_slice(&good[..20]);
    let path = write_file(&dir, "t.blktrace.0", &truncated);
    let mut reader = open(&path, TraceFormat::Blktrace).unwrap();
    let message = first_error(&mut *reader);
    assert!(
        message.contains("t.blktrace.0:2:") && message.contains("truncated"),
        "{message}"
    );
    // A truncated tail may be skipped as a bad event.
    let lenient = ReaderOptions {
        max_bad_lines: 1,
        ..ReaderOptions::default()
    };
    let mut reader = open_with(&path, TraceFormat::Blktrace, &lenient).unwrap();
    assert_eq!(read_all(&mut *reader).unwrap().len(), 1);
    assert_eq!(reader.bad_lines(), 1);

    let mut bad_magic = good.clone();
    bad_magic.extend_from_slice(&[0u8; 48]);
    let path = write_file(&dir, "m.blktrace.0", &bad_magic);
    let message = first_error(&mut *open_with(&path, TraceFormat::Blktrace, &lenient).unwrap());
    assert!(message.contains("bad magic"), "{message}");

    let huge = blk_event(false, 10, 1, 2 << 30, ISSUE | CAT_READ, 1, 0, 0, b"");
    let path = write_file(&dir, "h.blktrace.0", &huge);
    let message = first_error(&mut *open(&path, TraceFormat::Blktrace).unwrap());
    assert!(
        message.contains("h.blktrace.0:1:") && message.contains("1 GiB"),
        "{message}"
    );

    assert!(open(&dir.join("nothing"), TraceFormat::Blktrace).is_err());
}

#[test]
fn compressed_blktrace_capture_reads_the_same_requests() {
    let plain = scratch_dir("blk-plain");
    blktrace_capture(&plain, false);
    let expected = read_all(&mut *open(&plain, TraceFormat::Blktrace).unwrap()).unwrap();
    assert_eq!(expected.len(), 3);
    // CPU 0 gzip, CPU 1 zstd: each file is decompressed on its own.
    let packed = scratch_dir("blk-packed");
    let cpu0 = std::fs::read(plain.join("sdb.blktrace.0")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &cpu0).unwrap();
    write_file(&packed, "sdb.blktrace.0.gz", &gz.finish().unwrap());
    let cpu1 = std::fs::read(plain.join("sdb.blktrace.1")).unwrap();
    write_file(
        &packed,
        "sdb.blktrace.1.zst",
        &zstd::encode_all(&cpu1[..], 3).unwrap(),
    );
    for path in [packed.to_path_buf(), packed.join("sdb")] {
        assert_eq!(detect(&path).unwrap(), TraceFormat::Blktrace);
        let mut reader = open(&path, TraceFormat::Blktrace).unwrap();
        assert_eq!(read_all(&mut *reader).unwrap(), expected);
        assert_eq!(reader.skipped_events(), 1, "the discard");
    }
    // The same CPU twice (plain and compressed) would double its events: refused.
    std::fs::copy(plain.join("sdb.blktrace.1"), packed.join("sdb.blktrace.1")).unwrap();
    let message = open(&packed, TraceFormat::Blktrace)
        .err()
        .unwrap()
        .to_string();
    assert!(message.contains("two files for CPU 1"), "{message}");
}

// ---------------------------------------------------------------- DiskMon

const DISKMON_SAMPLE: &str = "#\tTime\tDuration (s)\tDisk\tRequest\tSector\tLength\r\n\
1\t0.000000\t0.00012000\t0\tRead\t2048\t8\r\n\
2\t0.531250\t0.00400000\t1\tWRITE\t100\t16\r\n\
3\t1.5\t0.0001\t0\twrite\t0\t1\r\n";

fn diskmon(text: &str, options: &ReaderOptions) -> DiskmonReader {
    DiskmonReader::new("dm.log".into(), input(text.as_bytes()), options)
}

#[test]
fn diskmon_reads_seconds_and_sectors() {
    let records = read_all(&mut diskmon(DISKMON_SAMPLE, &ReaderOptions::default())).unwrap();
    assert_eq!(
        records,
        [
            record(0, 0, 0, 2048 * 512, 8 * 512, Op::Read),
            record(531_250_000, 1, 1, 100 * 512, 16 * 512, Op::Write),
            record(1_500_000_000, 0, 0, 0, 512, Op::Write),
        ]
    );
    // Absolute clock stamps (DiskMon's other time mode) are times since midnight.
    let clock = "1\t1:02:03.25 PM\t0.0001\t0\tRead\t8\t8\n";
    let records = read_all(&mut diskmon(clock, &ReaderOptions::default())).unwrap();
    assert_eq!(
        records[0].time_ns,
        (13 * 3600 + 2 * 60 + 3) * 1_000_000_000 + 250_000_000
    );
}

#[test]
fn diskmon_errors_name_line_and_column() {
    let cases = [
        (
            "1\t0.0\t0.0\t0\tFlush\t0\t8\n",
            "`Request` must be Read or Write",
        ),
        (
            "1\t0.0\t0.0\t0\tRead\t0\n",
            "expected 7 tab-separated columns",
        ),
        ("1 0.0 0.0 0 Read 0 8\n", "expected 7 tab-separated columns"),
        ("1\t-1\t0.0\t0\tRead\t0\t8\n", "column `Time`"),
        ("1\t0.0\t0.0\tC:\tRead\t0\t8\n", "column `Disk`"),
        ("1\t0.0\t0.0\t0\tRead\t0x10\t8\n", "column `Sector`"),
        // A header is accepted only as the first line.
        (
            "1\t0.0\t0.0\t0\tRead\t0\t8\n#\tTime\tDuration\tDisk\tRequest\tSector\tLength\n",
            "dm.log:2:",
        ),
    ];
    for (text, expected) in cases {
        let message = first_error(&mut diskmon(text, &ReaderOptions::default()));
        assert!(message.contains(expected), "{text:?}: {message}");
        assert!(message.starts_with("dm.log:"), "{message}");
    }
}

#[test]
fn diskmon_is_detected_from_content() {
    let dir = scratch_dir("diskmon");
    let path = write_file(&dir, "capture.log", DISKMON_SAMPLE.as_bytes());
    assert_eq!(detect(&path).unwrap(), TraceFormat::Diskmon);
    assert_eq!(
        TraceFormat::from_name("diskmon"),
        Some(TraceFormat::Diskmon)
    );
    assert_eq!(read_path(&path, TraceFormat::Diskmon).len(), 3);
}

// ---------------------------------------------------------------- no panics on any input

/// Bytes drawn mostly from characters the layouts care about, so parsers get past line one.
fn trace_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let alphabet = b"0123456789,.+ \t\n\r-rwRWDQNFSabfioversn[]:/|".to_vec();
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..600),
        prop::collection::vec(prop::sample::select(alphabet), 0..600),
    ]
}

fn drain(reader: &mut dyn TraceReader) {
    // Stop at the first error, as a caller would; a reader must never panic on the way.
    for _ in 0..10_000 {
        match reader.next_record() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return,
        }
    }
}

fn lenient() -> ReaderOptions {
    ReaderOptions {
        max_bad_lines: 3,
        ..ReaderOptions::default()
    }
}

fn input(bytes: &[u8]) -> Box<dyn std::io::BufRead> {
    Box::new(Cursor::new(bytes.to_vec()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn ascii_never_panics(bytes in trace_like_bytes()) {
        for format in [TraceFormat::Mqsim, TraceFormat::Ssdsim, TraceFormat::Disksim] {
            drain(&mut trace::AsciiReader::with_options("p".into(), input(&bytes), format, &lenient()));
        }
    }

    #[test]
    fn msr_never_panics(bytes in trace_like_bytes()) {
        drain(&mut MsrReader::new("p".into(), input(&bytes), &lenient()));
    }

    #[test]
    fn diskmon_never_panics(bytes in trace_like_bytes()) {
        drain(&mut DiskmonReader::new("p".into(), input(&bytes), &lenient()));
    }

    #[test]
    fn spc_never_panics(bytes in trace_like_bytes()) {
        drain(&mut SpcReader::new("p".into(), input(&bytes), &lenient()));
    }

    #[test]
    fn blkparse_never_panics(bytes in trace_like_bytes()) {
        drain(&mut BlkparseReader::new("p".into(), input(&bytes), &lenient()));
    }

    #[test]
    fn fio_never_panics(bytes in trace_like_bytes()) {
        let mut with_header = b"fio version 3 iolog\n".to_vec();
        with_header.extend_from_slice(&bytes);
        drain(&mut FioReader::new("p".into(), input(&with_header), &lenient()));
        drain(&mut FioReader::new("p".into(), input(&bytes), &lenient()));
    }

    #[test]
    fn generic_csv_never_panics(bytes in trace_like_bytes(), spec in prop::sample::select(vec![
        "time=0:s,op=1:r/w,offset=2:sectors,size=3:bytes,delimiter=,",
        "time=4:ticks100ns,op=0:R|r/W|w/D,offset=1:bytes,size=2:sectors,device=3,delimiter=whitespace,header=yes",
    ])) {
        let spec: GenericCsvSpec = spec.parse().unwrap();
        drain(&mut GenericCsvReader::new("p".into(), input(&bytes), spec, &lenient()));
    }

    #[test]
    fn generic_spec_parser_never_panics(text in "[a-z0-9=:,/|;\\t ]{0,80}") {
        let _ = text.parse::<GenericCsvSpec>();
    }
}

proptest! {
    // These go through real files, so fewer cases.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn blktrace_never_panics(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        // Valid magic first, so the event decoder is exercised.
        prop::collection::vec(any::<u8>(), 0..400).prop_map(|mut tail| {
            let mut bytes = blk_event(false, 5, 1, 512, ISSUE | CAT_READ, 1, 0, 0, b"");
            bytes.append(&mut tail);
            bytes
        }),
    ]) {
        let dir = scratch_dir("prop-blk");
        let path = write_file(&dir, "p.blktrace.0", &bytes);
        if let Ok(mut reader) = open_with(&path, TraceFormat::Blktrace, &lenient()) {
            drain(&mut *reader);
        }
    }

    #[test]
    fn detect_never_panics(bytes in trace_like_bytes()) {
        let dir = scratch_dir("prop-detect");
        let path = write_file(&dir, "p.trace", &bytes);
        if let Ok(format) = detect(&path) {
            if format != TraceFormat::Blktrace {
                let mut reader = open_with(&path, format, &lenient()).unwrap();
                drain(&mut *reader);
            }
        }
    }
}

/// Up to 10,000 records and the error that stopped them, as text.
fn outcome(reader: Result<Box<dyn TraceReader>, TraceError>) -> (Vec<TraceRecord>, Option<String>) {
    let mut reader = match reader {
        Ok(reader) => reader,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut records = Vec::new();
    for _ in 0..10_000 {
        match reader.next_record() {
            Ok(Some(record)) => records.push(record),
            Ok(None) => return (records, None),
            Err(e) => return (records, Some(e.to_string())),
        }
    }
    (records, None)
}

proptest! {
    // Through real files, so fewer cases.
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Detecting on the prefix of the one open (`open_detected`, what a pipe needs), and
    /// reading a pipe's copy (`SpilledStream`), give exactly the records and the error that
    /// detecting on the file and opening it again give, plain or gzip-compressed.
    #[test]
    fn one_open_reads_what_detect_and_reopen_read(
        bytes in trace_like_bytes(),
        gzip in any::<bool>(),
    ) {
        use std::io::Write as _;
        let bytes = if gzip {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(&bytes).unwrap();
            encoder.finish().unwrap()
        } else {
            bytes
        };
        let dir = scratch_dir("prop-one-open");
        let path = write_file(&dir, "p.trace", &bytes);
        // Detection skips the malformed lines the options let the reader skip.
        let reopened = match trace::detect_tolerating(&path, lenient().max_bad_lines) {
            Ok(format) => outcome(open_with(&path, format, &lenient())),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let once = outcome(trace::open_detected(&path, None, &lenient()));
        let copy = trace::SpilledStream::copy(&path).unwrap();
        prop_assert_eq!(copy.len(), bytes.len() as u64);
        let spilled = outcome(copy.open(&path, None, &lenient()));
        prop_assert_eq!(&once, &reopened);
        prop_assert_eq!(&spilled, &reopened);
    }
}

#[test]
fn zstd_compressed_input_is_detected_and_read() {
    let dir = scratch_dir("zstd");
    let text =
        b"128166372000000000,hm,0,Read,4096,512,10\n128166372000000010,hm,1,Write,0,4096,0\n";
    let compressed = zstd::encode_all(&text[..], 3).unwrap();
    let path = write_file(&dir, "hm_0.csv.zst", &compressed);
    assert_eq!(detect(&path).unwrap(), TraceFormat::Msr);
    let records = read_path(&path, TraceFormat::Msr);
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[1],
        record(12_816_637_200_000_001_000, 1, 1, 0, 4096, Op::Write)
    );
}

// ---------------------------------------------------------------- byte order mark

/// Every text layout reads a file that starts with a UTF-8 byte order mark (as Windows tools
/// and spreadsheet exports write) exactly as the same file without it, and detection finds the
/// same layout.
#[test]
fn a_byte_order_mark_changes_nothing() {
    let first_lines = |name: &str, lines: usize| -> Vec<u8> {
        let text = std::fs::read_to_string(real(name)).unwrap();
        let mut kept: String = text.lines().take(lines).collect::<Vec<_>>().join("\n");
        kept.push('\n');
        kept.into_bytes()
    };
    let cases: Vec<(&str, TraceFormat, Vec<u8>)> = vec![
        (
            "t.mqsim",
            TraceFormat::Mqsim,
            first_lines("tpcc-small.mqsim", 30),
        ),
        (
            "t.ssdsim",
            TraceFormat::Ssdsim,
            first_lines("financial1-head.ssdsim", 30),
        ),
        (
            "t.spc",
            TraceFormat::Spc,
            first_lines("financial1-head.spc", 30),
        ),
        (
            "t.csv",
            TraceFormat::Msr,
            b"128166372003061629,usr,0,Read,4096,8192,2000\n\
              128166372003071629,usr,0,Write,0,4096,3000\n"
                .to_vec(),
        ),
        (
            "t.disksim",
            TraceFormat::Disksim,
            b"0.0 0 8 8 1\n1.5 0 0 16 0\n".to_vec(),
        ),
        (
            "t.blkparse",
            TraceFormat::Blkparse,
            BLKPARSE_SAMPLE.as_bytes().to_vec(),
        ),
        (
            "t.iolog",
            TraceFormat::Fio,
            b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n".to_vec(),
        ),
        (
            "t.log",
            TraceFormat::Diskmon,
            DISKMON_SAMPLE.as_bytes().to_vec(),
        ),
    ];
    let dir = scratch_dir("bom");
    for (name, format, text) in cases {
        let plain = write_file(&dir, name, &text);
        let mut with_bom = b"\xEF\xBB\xBF".to_vec();
        with_bom.extend_from_slice(&text);
        let marked = write_file(&dir, &format!("bom-{name}"), &with_bom);
        let expected = read_path(&plain, format);
        assert!(!expected.is_empty(), "{name}: fixture has records");
        assert_eq!(read_path(&marked, format), expected, "{name}");
        // Detection sees through the mark too (where the plain file is detected at all).
        if let Ok(found) = detect(&plain) {
            assert_eq!(detect(&marked).unwrap(), found, "{name}");
        }
    }
}

#[test]
fn diskmon_lines_that_end_with_a_tab_are_read() {
    // DiskMon's own "Save" writes a tab after the last column.
    let tabbed: String = DISKMON_SAMPLE.replace("\r\n", "\t\r\n");
    let expected = read_all(&mut diskmon(DISKMON_SAMPLE, &ReaderOptions::default())).unwrap();
    let got = read_all(&mut diskmon(&tabbed, &ReaderOptions::default())).unwrap();
    assert_eq!(got, expected);
    // A real eighth column is still refused.
    let eight = DISKMON_SAMPLE.replace("\t8\r\n", "\t8\t9\r\n");
    let message = first_error(&mut diskmon(&eight, &ReaderOptions::default()));
    assert!(message.contains("found more"), "{message}");
}

/// Detection skips as many malformed lines as `--max-bad-lines` allows the reader to (issue
/// 34, item 10): a DiskMon log whose first two records carry 8.5e18-sector addresses is
/// DiskMon with two bad lines allowed, and no layout without.
#[test]
fn detection_tolerates_the_bad_lines_the_reader_would() {
    let text = "#\tTime\tDuration (s)\tDisk\tRequest\tSector\tLength\r\n\
1\t0.000000\t0.00012000\t0\tRead\t8500000000000000000\t8\r\n\
2\t0.100000\t0.00012000\t0\tRead\t8500000000000000001\t8\r\n\
3\t0.531250\t0.00400000\t1\tWRITE\t100\t16\r\n\
4\t1.5\t0.0001\t0\twrite\t0\t1\r\n";
    let dir = std::env::temp_dir().join(format!("flashlane-detect-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("damaged.log");
    std::fs::write(&path, text).unwrap();
    let strict = flashlane_core::trace::detect(&path)
        .unwrap_err()
        .to_string();
    assert!(strict.contains("no known layout fits"), "{strict}");
    assert_eq!(
        flashlane_core::trace::detect_tolerating(&path, 2).unwrap(),
        TraceFormat::Diskmon
    );
    assert!(flashlane_core::trace::detect_tolerating(&path, 1).is_err());
    // Opened with the option, the reader skips the two and reads the rest.
    let options = ReaderOptions {
        max_bad_lines: 2,
        ..ReaderOptions::default()
    };
    let mut reader = flashlane_core::trace::open_detected(&path, None, &options).unwrap();
    let records = read_all(&mut *reader).unwrap();
    assert_eq!(records.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
