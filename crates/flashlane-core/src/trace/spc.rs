//! UMass Trace Repository SPC layout: `ASU,LBA,Size,Opcode,Timestamp[,optional fields...]`.
//!
//! LBA is in 512-byte sectors, Size in bytes, Opcode r/R/w/W, Timestamp decimal seconds
//! (converted to nanoseconds digit by digit, never through floating point).

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_decimal_scaled, parse_u32, parse_u64, sectors_to_bytes, show, trim,
    LineError, LineLayout, LineReader, Parsed,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

pub(crate) struct SpcLayout;

impl LineLayout for SpcLayout {
    fn format(&self) -> TraceFormat {
        TraceFormat::Spc
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        let mut fields = line.split(|&b| b == b',').map(trim);
        let mut next = |name: &str| {
            fields.next().ok_or_else(|| {
                LineError::bad(format!(
                    "missing column `{name}` (expected ASU,LBA,Size,Opcode,Timestamp)"
                ))
            })
        };
        let asu = next("ASU")?;
        let lba = next("LBA")?;
        let size = next("Size")?;
        let opcode = next("Opcode")?;
        let timestamp = next("Timestamp")?;
        // Columns after the fifth are optional in the SPC specification and carry no request data.
        let not_integer = |name: &str, text: &[u8]| {
            LineError::bad(format!(
                "column `{name}` is not a non-negative integer: {:?}",
                show(text)
            ))
        };
        let device = parse_u32(asu).ok_or_else(|| not_integer("ASU", asu))?;
        let offset_bytes = sectors_to_bytes(
            parse_u64(lba).ok_or_else(|| not_integer("LBA", lba))?,
            "LBA",
        )?;
        let size_bytes = parse_u64(size).ok_or_else(|| not_integer("Size (bytes)", size))?;
        let op = match opcode {
            b"r" | b"R" => Op::Read,
            b"w" | b"W" => Op::Write,
            _ => {
                return Err(LineError::bad(format!(
                    "column `Opcode` must be r, R, w or W: {:?}",
                    show(opcode)
                )))
            }
        };
        let time_ns = parse_decimal_scaled(timestamp, 9).ok_or_else(|| {
            LineError::bad(format!(
                "column `Timestamp` is not a non-negative decimal number of seconds: {:?}",
                show(timestamp)
            ))
        })?;
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

/// Streaming reader for UMass SPC traces.
pub struct SpcReader {
    inner: LineReader<SpcLayout>,
}

impl SpcReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        SpcReader {
            inner: LineReader::new(path, input, SpcLayout, options),
        }
    }
}

line_reader_impl!(SpcReader);
