//! The three five-column ASCII layouts of the SSD simulators: MQSim, SSDsim and DiskSim.

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_decimal_scaled, parse_u64, sectors_to_bytes, show, whitespace_fields,
    LineError, LineLayout, LineReader, Parsed,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

/// Line layout for MQSim, SSDsim and DiskSim (whitespace-separated, five columns).
pub(crate) struct AsciiLayout {
    format: TraceFormat,
}

impl AsciiLayout {
    pub fn new(format: TraceFormat) -> Self {
        AsciiLayout { format }
    }
}

impl LineLayout for AsciiLayout {
    fn format(&self) -> TraceFormat {
        self.format
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        let mut fields = whitespace_fields(line);
        let mut next = |name: &str| {
            fields
                .next()
                .ok_or_else(|| LineError::bad(format!("missing column `{name}`")))
        };
        let time = next("time")?;
        let device = next("device")?;
        let address = next("address")?;
        let size = next("size")?;
        let kind = next("type")?;
        if fields.next().is_some() {
            return Err(LineError::bad("more than five columns"));
        }
        let int = |text: &[u8], name: &str| {
            parse_u64(text).ok_or_else(|| {
                LineError::bad(format!(
                    "column `{name}` is not a non-negative integer: {:?}",
                    show(text)
                ))
            })
        };
        let time_ns = match self.format {
            // DiskSim times are decimal milliseconds; six decimals reach the nanosecond.
            TraceFormat::Disksim => parse_decimal_scaled(time, 6).ok_or_else(|| {
                LineError::bad(format!(
                    "column `time` is not a non-negative decimal number of milliseconds: {:?}",
                    show(time)
                ))
            })?,
            _ => int(time, "time (ns)")?,
        };
        let device = u32::try_from(int(device, "device")?)
            .map_err(|_| LineError::bad("device number does not fit in 32 bits"))?;
        let offset_bytes = sectors_to_bytes(int(address, "address (sectors)")?, "address")?;
        let size_bytes = sectors_to_bytes(int(size, "size (sectors)")?, "size")?;
        let code = int(kind, "type")?;
        let op = match self.format {
            TraceFormat::Mqsim | TraceFormat::Ssdsim => match code {
                0 => Op::Write,
                1 => Op::Read,
                _ => {
                    return Err(LineError::bad(
                        "column `type` must be 0 (write) or 1 (read)",
                    ))
                }
            },
            _ => {
                if code & 1 == 1 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
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

/// Reader for MQSim, SSDsim and DiskSim ASCII traces.
pub struct AsciiReader {
    inner: LineReader<AsciiLayout>,
}

impl AsciiReader {
    /// `format` must be one of the three ASCII layouts; any other value reads as DiskSim flags.
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, format: TraceFormat) -> Self {
        Self::with_options(path, input, format, &ReaderOptions::default())
    }

    pub fn with_options(
        path: PathBuf,
        input: Box<dyn BufRead>,
        format: TraceFormat,
        options: &ReaderOptions,
    ) -> Self {
        AsciiReader {
            inner: LineReader::new(path, input, AsciiLayout::new(format), options),
        }
    }
}

line_reader_impl!(AsciiReader);
