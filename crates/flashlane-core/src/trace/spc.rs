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
    /// No state: a line's record depends on the line alone.
    const PURE: bool = true;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading in batches gives what reading one record at a time gives: blank and CRLF
    /// lines, optional columns, bad lines (columns, opcode, numbers), clamped and refused
    /// steps back, lines across the input buffer's end, an overlong line, no last newline.
    #[test]
    fn batches_read_what_single_records_read() {
        let mut text = String::new();
        for i in 0..2000u64 {
            let t = format!("{}.{:06}", 10 + i / 1000, (i % 1000) * 1000);
            if i == 500 {
                // Far ahead: the next records step back past the tolerance.
                text.push_str(&format!("0,8,4096,r,{}.000000\n", 40 + i / 1000));
            }
            text.push_str(&match i % 53 {
                3 => "\n".to_string(),
                5 => "  \t\r\n".to_string(),
                7 => format!("1,{},4096,W,{t}\r\n", i * 8),
                11 => "not,a,record\n".to_string(),
                13 => format!("0,8,4096,r,{}.000000\n", 9 + i / 1000),
                17 => format!("0,8,4096,x,{t}\n"),
                19 => format!("2, {} ,512 , w ,{t},extra,columns\n", i * 8),
                23 => format!("0,x,4096,r,{t}\n"),
                29 if i < 1000 => format!("0,8,4096,r,{t},{}\n", "h".repeat(70_000)),
                _ => format!(
                    "{},{},4096,{},{t}\n",
                    i % 3,
                    i * 8,
                    ["r", "R", "w"][i as usize % 3]
                ),
            });
        }
        text.push_str("0,8,4096,w,12.5");
        crate::trace::common::assert_batches_read_what_single_records_read(
            &text,
            |input, options| SpcReader::new(PathBuf::from("t.spc"), input, options),
        );
    }
}
