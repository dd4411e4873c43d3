//! Generic-csv row filters (`keep=`).

use std::io::Cursor;
use std::path::PathBuf;

use flashlane_core::trace::{
    GenericCsvReader, GenericCsvSpec, Op, ReaderOptions, TraceError, TraceReader, TraceRecord,
};

fn read_all(reader: &mut dyn TraceReader) -> Result<Vec<TraceRecord>, TraceError> {
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record);
    }
    Ok(records)
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
