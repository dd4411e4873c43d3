//! `blkparse` default text output:
//! `MAJ,MIN CPU SEQ SECS.NSECS PID ACTION RWBS SECTOR + NSECTORS [COMM]`.
//!
//! One action (issue `D` by default, or queue `Q`) is taken as the request stream; every other
//! event line and the per-CPU summary block blkparse prints at the end are recognised and
//! skipped. Anything else is an error.

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_decimal_scaled, parse_u32, parse_u64, sectors_to_bytes, show,
    whitespace_fields, LineError, LineLayout, LineReader, Parsed,
};
use super::{BlockEvent, Op, ReaderOptions, TraceFormat, TraceRecord};

/// Action codes blkparse prints (see blkparse(1), "Trace actions"). `UT` is the timer unplug.
const KNOWN_ACTIONS: &[&[u8]] = &[
    b"A", b"B", b"C", b"D", b"F", b"G", b"I", b"M", b"P", b"Q", b"R", b"S", b"T", b"U", b"UT",
    b"X", b"m",
];

/// First words of the lines of blkparse's closing summary block.
const SUMMARY_STARTS: &[&[u8]] = &[b"Total (", b"Throughput (", b"Events (", b"Skips:"];

pub(crate) struct BlkparseLayout {
    wanted: &'static [u8],
}

impl BlkparseLayout {
    pub fn new(event: BlockEvent) -> Self {
        BlkparseLayout {
            wanted: match event {
                BlockEvent::Issue => b"D",
                BlockEvent::Queue => b"Q",
            },
        }
    }
}

/// `MAJ,MIN` → the kernel's `dev_t` encoding, `MAJ << 20 | MIN`.
fn parse_device(text: &[u8]) -> Option<u32> {
    let comma = memchr::memchr(b',', text)?;
    let major = parse_u32(&text[..comma])?;
    let minor = parse_u32(&text[comma + 1..])?;
    if major >= 1 << 12 || minor >= 1 << 20 {
        return None;
    }
    Some(major << 20 | minor)
}

/// Summary lines: known headings, or indented `Label: value` statistics.
fn is_summary_line(line: &[u8]) -> bool {
    let cpu_heading = line.starts_with(b"CPU") && line.get(3).is_some_and(u8::is_ascii_digit);
    if cpu_heading || SUMMARY_STARTS.iter().any(|start| line.starts_with(start)) {
        return true;
    }
    line.first().is_some_and(u8::is_ascii_whitespace) && memchr::memchr(b':', line).is_some()
}

impl LineLayout for BlkparseLayout {
    /// Its only state, the action taken as the request stream, is fixed when it is built.
    const PURE: bool = true;

    fn format(&self) -> TraceFormat {
        TraceFormat::Blkparse
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        let mut fields = whitespace_fields(line);
        let first = fields.next().unwrap_or_default();
        let Some(device) = parse_device(first) else {
            if is_summary_line(line) {
                return Ok(Parsed::Ignored);
            }
            return Err(LineError::bad(
                "not a blkparse event line (expected `MAJ,MIN CPU SEQ TIME PID ACTION ...`) \
                 nor a blkparse summary line",
            ));
        };
        let mut next = |name: &str| {
            fields
                .next()
                .ok_or_else(|| LineError::bad(format!("missing column `{name}`")))
        };
        let cpu = next("cpu")?;
        let sequence = next("sequence")?;
        let time = next("time")?;
        let pid = next("pid")?;
        let action = next("action")?;
        if parse_u64(cpu).is_none() || parse_u64(sequence).is_none() {
            return Err(LineError::bad(
                "columns `cpu` and `sequence` must be integers",
            ));
        }
        let time_ns = parse_decimal_scaled(time, 9).ok_or_else(|| {
            LineError::bad(format!(
                "column `time` is not SECONDS.NANOSECONDS: {:?}",
                show(time)
            ))
        })?;
        let stream = parse_u32(pid).ok_or_else(|| {
            LineError::bad(format!("column `pid` is not an integer: {:?}", show(pid)))
        })?;
        if !KNOWN_ACTIONS.contains(&action) {
            return Err(LineError::bad(format!(
                "unknown blkparse action {:?}",
                show(action)
            )));
        }
        if action != self.wanted {
            return Ok(Parsed::Ignored);
        }
        let rwbs = next("rwbs")?;
        // Discard, flush-only and other non-data requests carry neither R nor W.
        let op = if rwbs.contains(&b'R') {
            Op::Read
        } else if rwbs.contains(&b'W') {
            Op::Write
        } else {
            return Ok(Parsed::SkippedEvent);
        };
        let sector = match fields.next() {
            // A data-less request (e.g. an empty flush `FWS`) prints `[comm]` straight away.
            None => return Ok(Parsed::SkippedEvent),
            Some(text) if text.starts_with(b"[") => return Ok(Parsed::SkippedEvent),
            Some(text) => text,
        };
        let plus = fields.next();
        let sectors = fields.next();
        let (Some(b"+"), Some(sectors)) = (plus, sectors) else {
            return Err(LineError::bad(
                "expected `SECTOR + NSECTORS` after the RWBS column",
            ));
        };
        let sector = parse_u64(sector).ok_or_else(|| {
            LineError::bad(format!("sector is not an integer: {:?}", show(sector)))
        })?;
        let sectors = parse_u64(sectors).ok_or_else(|| {
            LineError::bad(format!(
                "sector count is not an integer: {:?}",
                show(sectors)
            ))
        })?;
        if sectors == 0 {
            // Zero-length data requests are flush/barrier markers, not I/O.
            return Ok(Parsed::SkippedEvent);
        }
        Ok(Parsed::Record(TraceRecord {
            time_ns,
            device,
            stream,
            offset_bytes: sectors_to_bytes(sector, "sector")?,
            size_bytes: sectors_to_bytes(sectors, "sector count")?,
            op,
        }))
    }
}

/// Streaming reader for `blkparse` text output.
pub struct BlkparseReader {
    inner: LineReader<BlkparseLayout>,
}

impl BlkparseReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        BlkparseReader {
            inner: LineReader::new(
                path,
                input,
                BlkparseLayout::new(options.block_event),
                options,
            ),
        }
    }
}

line_reader_impl!(BlkparseReader);

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading in batches gives what reading one record at a time gives: other actions,
    /// data-less and zero-length requests (skipped events), blank and CRLF lines, bad lines
    /// (device, action, columns, numbers), clamped and refused steps back, lines across the
    /// input buffer's end, an overlong line, the closing summary, no last newline.
    #[test]
    fn batches_read_what_single_records_read() {
        let mut text = String::new();
        for i in 0..2000u64 {
            let t = format!("{}.{:09}", 1 + i / 1000, (i % 1000) * 1_000_000);
            let sector = i * 8;
            if i == 500 {
                // Far ahead: the next records step back past the tolerance.
                text.push_str("8,0 0 1 40.000000000 7 D R 8 + 8 [fio]\n");
            }
            text.push_str(&match i % 53 {
                3 => "\n".to_string(),
                5 => "  \t\r\n".to_string(),
                7 => format!("8,0 1 {i} {t} 4162 D WS {sector} + 8 [kjournald]\r\n"),
                11 => "not a blkparse line\n".to_string(),
                13 => "8,0 0 1 0.500000000 7 D R 8 + 8 [fio]\n".to_string(),
                17 => format!("8,0 0 {i} {t} 7 Z R {sector} + 8 [fio]\n"),
                19 => format!("8,0 0 {i} {t} 7 D FWS [fio]\n"),
                23 => format!("8,0 0 {i} {t} 7 D R x + 8 [fio]\n"),
                29 if i < 1000 => format!(
                    "8,0 0 {i} {t} 7 D R {sector} + 8 [{}]\n",
                    "h".repeat(70_000)
                ),
                31 => format!("8,0 0 {i} {t} 7 D R {sector} + 0 [fio]\n"),
                37 => format!("8,16 0 {i} {t} 9 Q W {sector} + 16 [fio]\n"),
                41 => format!("8,0 0 {i} {t} 7 D N {sector} + 8 [fio]\n"),
                _ => format!(
                    "8,{} 0 {i} {t} {} D R {sector} + 8 [fio]\n",
                    i % 2 * 16,
                    i % 5
                ),
            });
        }
        text.push_str("CPU0 (8,0):\n Reads Queued: 1, 4KiB\nTotal (8,0):\n");
        text.push_str("8,0 0 1 3.000000000 7 D W 8 + 8 [fio]");
        crate::trace::common::assert_batches_read_what_single_records_read(
            &text,
            |input, options| BlkparseReader::new(PathBuf::from("t.blkparse"), input, options),
        );
    }
}
