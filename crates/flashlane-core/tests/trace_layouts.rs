//! The HP SRT binary layout (records built byte by byte from the documented layout), detection
//! of binary content that is no supported layout, and generic-csv row filters (`keep=`).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use crate::common::ScratchDir;
use flashlane_core::trace::{
    detect, open, open_with, GenericCsvReader, GenericCsvSpec, HpSrtReader, Op, ReaderOptions,
    TraceError, TraceFormat, TraceReader, TraceRecord,
};
use proptest::prelude::*;

fn read_all(reader: &mut dyn TraceReader) -> Result<Vec<TraceRecord>, TraceError> {
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record);
    }
    Ok(records)
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write fixture");
    path
}

fn record(time_ns: u64, device: u32, offset_bytes: u64, size_bytes: u64, op: Op) -> TraceRecord {
    TraceRecord {
        time_ns,
        device,
        stream: device,
        offset_bytes,
        size_bytes,
        op,
    }
}

// ---------------------------------------------------------------- HP SRT

const SHORT_IO: u32 = 1;
const SUSPECT_IO: u32 = 4;
const HPL_READ: u32 = 0x1;
const HPL_ASYNC: u32 = 0x100;
const HPL_SYNC: u32 = 0x0100_0000;

/// One SRT I/O record as DiskSim's `hpl` reader takes it: big-endian words size, id
/// (`version << 16 | type`), seconds, microseconds, start, stop, bytes, sector, devno,
/// driver type, cylinder, flags, info; then queue length (version 4) and suspect flags (type 4).
#[allow(clippy::too_many_arguments)]
fn srt_record(
    version: u32,
    kind: u32,
    seconds: u32,
    micros: u32,
    bytes: u32,
    sector: u32,
    devno: u32,
    flags: u32,
) -> Vec<u8> {
    let mut words = vec![
        0,
        version << 16 | kind,
        seconds,
        micros,
        40,   // start of service, µs after the enqueue
        9000, // stop
        bytes,
        sector,
        devno,
        3,    // driver type
        1234, // cylinder
        flags,
        0, // info
    ];
    if version == 4 {
        words.push(2); // queue length
    }
    if kind == SUSPECT_IO {
        words.push(0x8); // suspect flags
    }
    words[0] = 4 * words.len() as u32;
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

const SRT_HEADER: &[u8] =
    b"# HP SRT trace\ntracedate\t= \"Wed Apr 29 10:00:00 1992\";\nhost\t= \"hplajw\";\n\x0c";

/// Two requests and a suspect I/O between them: a version 4 asynchronous read on the disk in
/// bits 8-15 of devno (6), a version 3 synchronous write on disk 2.
fn srt_records() -> Vec<u8> {
    let mut bytes = srt_record(
        4,
        SHORT_IO,
        5,
        250_000,
        8192,
        1000,
        0x1f00_0600,
        HPL_READ | HPL_ASYNC,
    );
    bytes.extend(srt_record(4, SUSPECT_IO, 5, 250_000, 1024, 7, 0x600, 0));
    bytes.extend(srt_record(3, SHORT_IO, 7, 1, 512, 0, 0x200, HPL_SYNC));
    bytes
}

fn srt_expected() -> Vec<TraceRecord> {
    vec![
        record(5_250_000_000, 6, 1000 * 512, 8192, Op::Read),
        record(7_000_001_000, 2, 0, 512, Op::Write),
    ]
}

#[test]
fn hp_srt_records_give_times_offsets_sizes_ops_and_devices() {
    let dir = ScratchDir::new("srt");
    let headerless = write_file(&dir, "ajw.srt", &srt_records());
    let with_header = write_file(
        &dir,
        "ajw-header.srt",
        &[SRT_HEADER, &srt_records()].concat(),
    );
    for path in [&headerless, &with_header] {
        assert_eq!(
            detect(path).unwrap(),
            TraceFormat::HpSrt,
            "{}",
            path.display()
        );
        let mut reader = open(path, TraceFormat::HpSrt).unwrap();
        assert_eq!(read_all(&mut *reader).unwrap(), srt_expected());
        assert_eq!(
            reader.skipped_events(),
            1,
            "the suspect I/O is skipped and counted"
        );
        assert_eq!(reader.bad_lines(), 0);
        assert_eq!(reader.format(), TraceFormat::HpSrt);
    }
    assert_eq!(TraceFormat::from_name("hp-srt"), Some(TraceFormat::HpSrt));
    // Detected through compression too, as every layout.
    let gz = dir.join("ajw.srt.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    std::io::Write::write_all(&mut encoder, &srt_records()).unwrap();
    encoder.finish().unwrap();
    let mut reader = trace_open_detected(&gz);
    assert_eq!(read_all(&mut *reader).unwrap(), srt_expected());
}

fn trace_open_detected(path: &Path) -> Box<dyn TraceReader> {
    flashlane_core::trace::open_detected(path, None, &ReaderOptions::default()).unwrap()
}

fn srt_error(bytes: &[u8], options: &ReaderOptions) -> String {
    let dir = ScratchDir::new("srt-errors");
    let path = write_file(&dir, "bad.srt", bytes);
    let mut reader = open_with(&path, TraceFormat::HpSrt, options).unwrap();
    read_all(&mut *reader).unwrap_err().to_string()
}

#[test]
fn hp_srt_errors_name_the_file_record_and_byte_offset() {
    let good = srt_record(3, SHORT_IO, 1, 0, 4096, 8, 0x100, HPL_READ);
    let strict = ReaderOptions::default();

    // A record whose id word is no SRT version: the boundaries are lost, never skipped.
    let mut bytes = good.clone();
    bytes.extend(srt_record(7, SHORT_IO, 1, 5, 4096, 8, 0x100, 0));
    let lenient = ReaderOptions {
        max_bad_lines: 10,
        ..ReaderOptions::default()
    };
    let message = srt_error(&bytes, &lenient);
    assert!(
        message.contains("bad.srt:2: record at byte offset 52"),
        "{message}"
    );
    assert!(message.contains("version 7"), "{message}");

    // A size word that does not match the record's version and type.
    let mut wrong_size = srt_record(3, SHORT_IO, 1, 5, 4096, 8, 0x100, 0);
    wrong_size[3] = 56;
    let message = srt_error(&[&good[..], &wrong_size[..]].concat(), &strict);
    assert!(
        message.contains("bad.srt:2: record at byte offset 52"),
        "{message}"
    );
    assert!(message.contains("size word says 56"), "{message}");

    // Microseconds of a second or more.
    let message = srt_error(
        &[
            &good[..],
            &srt_record(3, SHORT_IO, 1, 1_000_000, 4096, 8, 0x100, 0),
        ]
        .concat(),
        &strict,
    );
    assert!(
        message.contains("bad.srt:2: record at byte offset 52"),
        "{message}"
    );
    assert!(message.contains("microseconds"), "{message}");

    // A record type that is no I/O: its size word lets the reader step over it when bad
    // records may be skipped.
    let mut other = srt_record(3, SHORT_IO, 1, 5, 4096, 8, 0x100, 0);
    other[7] = 2;
    let bytes = [&good[..], &other[..], &good[..]].concat();
    let message = srt_error(&bytes, &strict);
    assert!(
        message.contains("bad.srt:2: record at byte offset 52"),
        "{message}"
    );
    assert!(message.contains("record type 2"), "{message}");
    let dir = ScratchDir::new("srt-skip");
    let path = write_file(&dir, "skip.srt", &bytes);
    let mut reader = open_with(&path, TraceFormat::HpSrt, &lenient).unwrap();
    assert_eq!(read_all(&mut *reader).unwrap().len(), 2);
    assert_eq!(reader.bad_lines(), 1);

    // A truncated last record, after a text header: the offset counts the header's bytes.
    let bytes = [SRT_HEADER, &good[..], &good[..20]].concat();
    let message = srt_error(&bytes, &strict);
    let offset = SRT_HEADER.len() + 52;
    assert!(
        message.contains(&format!("bad.srt:2: record at byte offset {offset}")),
        "{message}"
    );
    assert!(
        message.contains("truncated record (20 of 52 bytes)"),
        "{message}"
    );

    // A text header that no form feed ends.
    let message = srt_error(b"tracedate\t= \"Wed Apr 29 10:00:00 1992\";\n", &strict);
    assert!(
        message.contains("bad.srt: not an HP SRT trace"),
        "{message}"
    );
    assert!(message.contains("form feed"), "{message}");
}

proptest! {
    /// Damaged SRT files (valid records with bytes overwritten or cut short) end in records or
    /// an error, never a panic, whatever the bad-record budget.
    #[test]
    fn hp_srt_never_panics(
        damage in proptest::collection::vec((0usize..200, any::<u8>()), 0..8),
        cut in 0usize..200,
        header in any::<bool>(),
        budget in 0u64..3,
    ) {
        let mut bytes = if header { SRT_HEADER.to_vec() } else { Vec::new() };
        bytes.extend(srt_records());
        for (at, byte) in damage {
            let at = at % bytes.len();
            bytes[at] = byte;
        }
        bytes.truncate(bytes.len() - cut.min(bytes.len()));
        let options = ReaderOptions { max_bad_lines: budget, ..ReaderOptions::default() };
        let mut reader =
            HpSrtReader::new(PathBuf::from("fuzz.srt"), Box::new(Cursor::new(bytes)), &options);
        for _ in 0..100 {
            match reader.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    prop_assert!(e.to_string().starts_with("fuzz.srt"), "{e}");
                    break;
                }
            }
        }
    }
}

// ---------------------------------------------------------------- unsupported layouts

#[test]
fn binary_content_is_no_supported_layout_and_generic_csv_is_not_suggested() {
    let dir = ScratchDir::new("binary");
    let junk: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    let path = write_file(&dir, "capture.bin", &junk);
    let message = detect(&path).unwrap_err().to_string();
    assert!(message.contains("capture.bin"), "{message}");
    assert!(message.contains("not a supported layout"), "{message}");
    assert!(message.contains("NUL byte"), "{message}");
    assert!(
        message.contains("binary layouts: blktrace, hp-srt; text layouts: msr, spc, blkparse"),
        "{message}"
    );
    assert!(!message.contains("--format generic-csv"), "{message}");

    // Control bytes without a NUL are binary too.
    let controls: Vec<u8> = (0..2048u32)
        .map(|i| [1u8, 2, 3, b'a'][i as usize % 4])
        .collect();
    let path = write_file(&dir, "controls.bin", &controls);
    let message = detect(&path).unwrap_err().to_string();
    assert!(message.contains("control bytes"), "{message}");
    assert!(!message.contains("--format generic-csv"), "{message}");

    // A compression flashlane does not read is named.
    let path = write_file(
        &dir,
        "trace.csv.xz",
        b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46",
    );
    let message = detect(&path).unwrap_err().to_string();
    assert!(message.contains("compressed with xz"), "{message}");

    // Opened without --format, binary junk fails the same way (not as a text line error).
    let path = write_file(&dir, "again.bin", &junk);
    let message = match flashlane_core::trace::open_detected(&path, None, &ReaderOptions::default())
    {
        Ok(_) => panic!("binary junk must not open"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("not a supported layout"), "{message}");
}

#[test]
fn generic_csv_is_suggested_for_delimited_text_only() {
    let dir = ScratchDir::new("delimited");
    let csv = write_file(
        &dir,
        "events.csv",
        b"when,kind,lba,len\n0.5,X,100,8\n0.7,X,108,8\n0.9,Y,200,16\n",
    );
    let message = detect(&csv).unwrap_err().to_string();
    assert!(message.contains("4 comma-separated columns"), "{message}");
    assert!(message.contains("--format generic-csv"), "{message}");

    let prose = write_file(
        &dir,
        "notes.txt",
        b"hello world\nthis is not a trace\nbut some notes about one\n",
    );
    let message = detect(&prose).unwrap_err().to_string();
    assert!(message.contains("not delimited columns"), "{message}");
    assert!(!message.contains("--format generic-csv"), "{message}");
}

// ---------------------------------------------------------------- generic-csv row filters

/// A blkparse-like event log exported as CSV: every request appears as queue (Q), issue (D) and
/// complete (C) events, with a message row (m) between.
const EVENT_LOG: &str = "time_s,event,rwbs,sector,sectors
0.000100,Q,R,2048,8
0.000150,D,R,2048,8
0.000900,C,R,2048,8
0.001000,m,N,cfq schedule dispatch
0.001200,Q,W,4096,16
0.001300,D,W,4096,16
0.002000,C,W,4096,16
";

fn generic(text: &str, spec: &str) -> GenericCsvReader {
    GenericCsvReader::new(
        PathBuf::from("events.csv"),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        spec.parse::<GenericCsvSpec>().unwrap(),
        &ReaderOptions::default(),
    )
}

const EVENT_SPEC: &str = "header=yes,time=0:s,op=2:R/W,offset=3:sectors,size=4:sectors";

#[test]
fn keep_reads_only_the_rows_of_one_event_kind() {
    // Without a filter every kind is a request, and the message row is an error.
    let message = read_all(&mut generic(EVENT_LOG, EVENT_SPEC))
        .unwrap_err()
        .to_string();
    assert!(message.starts_with("events.csv:5:"), "{message}");

    let mut reader = generic(EVENT_LOG, &format!("{EVENT_SPEC},keep=1:D"));
    assert_eq!(
        read_all(&mut reader).unwrap(),
        [
            record(150_000, 0, 2048 * 512, 8 * 512, Op::Read),
            record(1_300_000, 0, 4096 * 512, 16 * 512, Op::Write),
        ]
    );
    assert_eq!((reader.bad_lines(), reader.skipped_events()), (0, 0));

    // Several values of one filter are alternatives; several filters must all hold.
    let spec = format!("{EVENT_SPEC},keep=1:Q|D");
    assert_eq!(read_all(&mut generic(EVENT_LOG, &spec)).unwrap().len(), 4);
    let spec = format!("{EVENT_SPEC},keep=1:Q|D,keep=2:W");
    let records = read_all(&mut generic(EVENT_LOG, &spec)).unwrap();
    assert_eq!(
        records.iter().map(|r| r.time_ns).collect::<Vec<_>>(),
        [1_200_000, 1_300_000]
    );
    // Values compare exactly: `d` is not `D`.
    let spec = format!("{EVENT_SPEC},keep=1:d");
    assert!(read_all(&mut generic(EVENT_LOG, &spec)).unwrap().is_empty());
}

#[test]
fn keep_naming_a_missing_column_is_an_error_naming_the_clause() {
    let message = read_all(&mut generic(EVENT_LOG, &format!("{EVENT_SPEC},keep=9:D")))
        .unwrap_err()
        .to_string();
    assert!(message.starts_with("events.csv:2:"), "{message}");
    assert!(
        message.contains("`keep=9:D` names column 9, but this row has only 5 columns"),
        "{message}"
    );

    for (bad, expected) in [
        ("keep=1", "`keep=1` needs the values to keep"),
        ("keep=1:", "`keep=1:` needs the values to keep"),
        (
            "keep=x:D",
            "`keep=`: column must be a 0-based column number",
        ),
    ] {
        let message = format!("{EVENT_SPEC},{bad}")
            .parse::<GenericCsvSpec>()
            .unwrap_err();
        assert!(message.contains(expected), "{bad}: {message}");
    }
    let spec: GenericCsvSpec = format!("{EVENT_SPEC},keep=1:D|C").parse().unwrap();
    assert_eq!(spec.keep.len(), 1);
    assert_eq!(spec.keep[0].to_string(), "keep=1:D|C");
}
