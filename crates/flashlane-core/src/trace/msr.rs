//! MSR Cambridge / SNIA CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! Timestamp is in 100 ns Windows ticks; Offset and Size are bytes; Type is Read/Write in any
//! case. The originals run to tens of millions of lines, so the line parser is hand-rolled.

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_u32, parse_u64, show, LineError, LineLayout, LineReader, Parsed,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

const FIELDS: usize = 7;
const NS_PER_TICK: u64 = 100;

pub(crate) struct MsrLayout {
    /// A `Timestamp,...` header is accepted only as the first non-blank line.
    first_line_seen: bool,
}

impl MsrLayout {
    pub fn new() -> Self {
        MsrLayout {
            first_line_seen: false,
        }
    }

    #[cold]
    fn field_error(name: &str, unit: &str, text: &[u8]) -> LineError {
        LineError::bad(format!(
            "column `{name}` is not a non-negative integer{unit}: {:?}",
            show(text)
        ))
    }
}

impl LineLayout for MsrLayout {
    /// The header test reads `first_line_seen`, which the first non-blank line sets; batches
    /// start only after a record was read, when it is set for good.
    const PURE: bool = true;

    fn format(&self) -> TraceFormat {
        TraceFormat::Msr
    }

    #[inline]
    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        let mut fields: [&[u8]; FIELDS] = [&[]; FIELDS];
        let mut count = 0;
        let mut start = 0;
        for comma in memchr::memchr_iter(b',', line) {
            if count == FIELDS - 1 {
                return Err(LineError::bad(format!(
                    "expected {FIELDS} comma-separated columns, found more"
                )));
            }
            fields[count] = &line[start..comma];
            count += 1;
            start = comma + 1;
        }
        fields[count] = &line[start..];
        count += 1;
        if count != FIELDS {
            return Err(LineError::bad(format!(
                "expected {FIELDS} comma-separated columns \
                 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {count}"
            )));
        }
        let [timestamp, _hostname, disk, kind, offset, size, _response] = fields;
        let is_first_line = !std::mem::replace(&mut self.first_line_seen, true);
        if is_first_line && timestamp.eq_ignore_ascii_case(b"timestamp") {
            return Ok(Parsed::Ignored);
        }
        let ticks =
            parse_u64(timestamp).ok_or_else(|| Self::field_error("Timestamp", "", timestamp))?;
        let time_ns = ticks
            .checked_mul(NS_PER_TICK)
            .ok_or_else(|| LineError::bad("Timestamp overflows 64-bit nanoseconds"))?;
        let device = parse_u32(disk).ok_or_else(|| Self::field_error("DiskNumber", "", disk))?;
        let op = if kind.eq_ignore_ascii_case(b"read") {
            Op::Read
        } else if kind.eq_ignore_ascii_case(b"write") {
            Op::Write
        } else {
            return Err(LineError::bad(format!(
                "column `Type` must be Read or Write: {:?}",
                show(kind)
            )));
        };
        let offset_bytes =
            parse_u64(offset).ok_or_else(|| Self::field_error("Offset", " (bytes)", offset))?;
        let size_bytes =
            parse_u64(size).ok_or_else(|| Self::field_error("Size", " (bytes)", size))?;
        Ok(Parsed::Record(TraceRecord {
            time_ns,
            device,
            stream: device,
            offset_bytes,
            size_bytes,
            op,
        }))
    }
}

/// Streaming reader for MSR Cambridge / SNIA CSV traces.
pub struct MsrReader {
    inner: LineReader<MsrLayout>,
}

impl MsrReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        MsrReader {
            inner: LineReader::new(path, input, MsrLayout::new(), options),
        }
    }
}

line_reader_impl!(MsrReader);

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading in batches gives what reading one record at a time gives: a header, blank and
    /// CRLF lines, bad lines (columns, type, numbers), clamped and refused steps back, lines
    /// across the input buffer's end, an overlong line, no last newline.
    #[test]
    fn batches_read_what_single_records_read() {
        let mut text =
            String::from("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
        for i in 0..2000u64 {
            let t = 128_166_372_000_000_000 + i * 100_000;
            if i == 500 {
                // Far ahead: the next records step back past the tolerance.
                text.push_str(&format!("{},h,0,Read,8,4096,1\n", t + 15_000_000_000));
            }
            text.push_str(&match i % 53 {
                3 => "\n".to_string(),
                5 => "  \t\r\n".to_string(),
                7 => format!("{t},h,0,Write,{},4096,1\r\n", i * 4096),
                11 => "not,a,record\n".to_string(),
                13 => format!("{},h,0,Read,8,4096,1\n", t - 5),
                17 => format!("{t},h,0,Trim,8,4096,1\n"),
                19 => format!("{t},h,1,read,{},512,0\n", i * 512),
                23 => format!("{t},h,0,Read,x,4096,1\n"),
                29 if i < 1000 => format!("{t},{},0,Read,8,4096,1\n", "h".repeat(70_000)),
                _ => format!("{t},h,{},Read,{},4096,{}\n", i % 3, i * 4096, i % 2),
            });
        }
        text.push_str("128166372300000000,h,0,Write,8,4096,1");
        crate::trace::common::assert_batches_read_what_single_records_read(
            &text,
            |input, options| MsrReader::new(PathBuf::from("t.csv"), input, options),
        );
    }
}
