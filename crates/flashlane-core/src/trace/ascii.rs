//! The three five-column ASCII layouts of the SSD simulators: MQSim, SSDsim and DiskSim.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::{Op, TraceError, TraceFormat, TraceReader, TraceRecord};

const SECTOR_BYTES: u64 = 512;

/// Reader for MQSim, SSDsim and DiskSim ASCII traces (whitespace-separated, five columns).
pub struct AsciiReader {
    path: PathBuf,
    input: Box<dyn BufRead>,
    format: TraceFormat,
    line: String,
    line_number: u64,
}

impl AsciiReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, format: TraceFormat) -> Self {
        AsciiReader {
            path,
            input,
            format,
            line: String::with_capacity(128),
            line_number: 0,
        }
    }

    fn error(&self, message: impl Into<String>) -> TraceError {
        TraceError::Line {
            path: self.path.clone(),
            line: self.line_number,
            text: self.line.trim_end().to_string(),
            message: message.into(),
        }
    }

    fn parse_line(&self) -> Result<TraceRecord, TraceError> {
        let mut fields = self.line.split_ascii_whitespace();
        let mut next = |name: &str| {
            fields
                .next()
                .ok_or_else(|| self.error(format!("missing column `{name}`")))
        };
        let time = next("time")?;
        let device = next("device")?;
        let address = next("address")?;
        let size = next("size")?;
        let kind = next("type")?;
        if fields.next().is_some() {
            return Err(self.error("more than five columns"));
        }
        let int = |text: &str, name: &str| -> Result<u64, TraceError> {
            text.parse::<u64>()
                .map_err(|_| self.error(format!("column `{name}` is not a non-negative integer")))
        };
        let time_ns = match self.format {
            TraceFormat::Disksim => {
                let ms: f64 = time
                    .parse()
                    .map_err(|_| self.error("column `time` (milliseconds) is not a number"))?;
                if !ms.is_finite() || ms < 0.0 {
                    return Err(
                        self.error("column `time` (milliseconds) is negative or not finite")
                    );
                }
                (ms * 1e6).round() as u64
            }
            _ => int(time, "time (ns)")?,
        };
        let device = u32::try_from(int(device, "device")?)
            .map_err(|_| self.error("device number too large"))?;
        let address = int(address, "address (sectors)")?;
        let sectors = int(size, "size (sectors)")?;
        if sectors == 0 {
            return Err(self.error("request size is zero sectors"));
        }
        let code = int(kind, "type")?;
        let op = match self.format {
            TraceFormat::Mqsim | TraceFormat::Ssdsim => match code {
                0 => Op::Write,
                1 => Op::Read,
                _ => return Err(self.error("column `type` must be 0 (write) or 1 (read)")),
            },
            TraceFormat::Disksim => {
                if code & 1 == 1 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        let offset_bytes = address
            .checked_mul(SECTOR_BYTES)
            .ok_or_else(|| self.error("address overflows 64-bit bytes"))?;
        let size_bytes = sectors
            .checked_mul(SECTOR_BYTES)
            .ok_or_else(|| self.error("size overflows"))?;
        Ok(TraceRecord {
            time_ns,
            device,
            stream: device,
            offset_bytes,
            size_bytes,
            op,
        })
    }
}

impl TraceReader for AsciiReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            self.line.clear();
            self.line_number += 1;
            let n = self
                .input
                .read_line(&mut self.line)
                .map_err(|e| TraceError::Line {
                    path: self.path.clone(),
                    line: self.line_number,
                    text: String::new(),
                    message: format!("read error: {e}"),
                })?;
            if n == 0 {
                return Ok(None);
            }
            if self.line.trim().is_empty() {
                continue;
            }
            return self.parse_line().map(Some);
        }
    }

    fn format(&self) -> TraceFormat {
        self.format
    }

    fn path(&self) -> &Path {
        &self.path
    }
}
