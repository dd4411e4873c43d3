//! fio I/O logs (`write_iolog`), versions 2 and 3, told apart by the header line.
//!
//! - v2: `fio version 2 iolog`, then `FILE ACTION OFFSET LENGTH` or `FILE add|open|close`.
//!   No timestamps: time starts at 0 and advances only on `FILE wait USECS 0` lines.
//! - v3: `fio version 3 iolog`, then `TIME_MS FILE ACTION OFFSET LENGTH` or
//!   `TIME_MS FILE add|open|close`.
//!
//! `read`/`write` are requests; `trim`, `sync`, `datasync` and `sync_file_range` are skipped and
//! counted. Device numbers are given to file names in order of first appearance, from 0.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_u64, show, whitespace_fields, LineError, LineLayout, LineReader, Parsed,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

const HEADER_V2: &[u8] = b"fio version 2 iolog";
const HEADER_V3: &[u8] = b"fio version 3 iolog";
const NS_PER_MS: u64 = 1_000_000;
const NS_PER_US: u64 = 1_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Version {
    V2,
    V3,
}

pub(crate) struct FioLayout {
    version: Option<Version>,
    /// v2 only: the sum of `wait` lines seen so far.
    clock_ns: u64,
    devices: HashMap<Vec<u8>, u32>,
}

impl FioLayout {
    pub fn new() -> Self {
        FioLayout {
            version: None,
            clock_ns: 0,
            devices: HashMap::new(),
        }
    }

    fn device(&mut self, file: &[u8]) -> Result<u32, LineError> {
        if let Some(&device) = self.devices.get(file) {
            return Ok(device);
        }
        let device = u32::try_from(self.devices.len())
            .map_err(|_| LineError::fatal("more than 2^32 distinct file names"))?;
        self.devices.insert(file.to_vec(), device);
        Ok(device)
    }

    fn number(text: &[u8], name: &str) -> Result<u64, LineError> {
        parse_u64(text).ok_or_else(|| {
            LineError::bad(format!(
                "`{name}` is not a non-negative integer: {:?}",
                show(text)
            ))
        })
    }

    /// Handles `FILE ACTION [OFFSET LENGTH]` at time `time_ns`.
    fn action(
        &mut self,
        time_ns: u64,
        rest: &[&[u8]],
        version: Version,
    ) -> Result<Parsed, LineError> {
        match rest {
            [_file, b"add" | b"open" | b"close"] => Ok(Parsed::Ignored),
            [_file, action, offset, length] => {
                let op = match *action {
                    b"read" => Op::Read,
                    b"write" => Op::Write,
                    b"trim" | b"sync" | b"datasync" | b"sync_file_range" => {
                        return Ok(Parsed::SkippedEvent)
                    }
                    b"wait" => {
                        // fio's replay sleeps OFFSET microseconds on a v2 `wait` line.
                        if version == Version::V2 {
                            let wait_ns = Self::number(offset, "wait time (us)")?
                                .checked_mul(NS_PER_US)
                                .ok_or_else(|| LineError::bad("wait time overflows"))?;
                            self.clock_ns = self
                                .clock_ns
                                .checked_add(wait_ns)
                                .ok_or_else(|| LineError::bad("time overflows"))?;
                        }
                        return Ok(Parsed::Ignored);
                    }
                    other => {
                        return Err(LineError::bad(format!(
                            "unknown fio action {:?}",
                            show(other)
                        )))
                    }
                };
                let offset_bytes = Self::number(offset, "offset (bytes)")?;
                let size_bytes = Self::number(length, "length (bytes)")?;
                let device = self.device(rest[0])?;
                Ok(Parsed::Record(TraceRecord {
                    time_ns,
                    device,
                    stream: device,
                    offset_bytes,
                    size_bytes,
                    op,
                }))
            }
            _ => Err(LineError::bad(match version {
                Version::V2 => "expected `FILE ACTION OFFSET LENGTH` or `FILE add|open|close`",
                Version::V3 => {
                    "expected `TIME_MS FILE ACTION OFFSET LENGTH` or `TIME_MS FILE add|open|close`"
                }
            })),
        }
    }
}

impl LineLayout for FioLayout {
    fn format(&self) -> TraceFormat {
        TraceFormat::Fio
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        let Some(version) = self.version else {
            let header = super::common::trim(line);
            self.version = Some(match header {
                HEADER_V2 => Version::V2,
                HEADER_V3 => Version::V3,
                _ => {
                    return Err(LineError::fatal(
                        "expected the header `fio version 2 iolog` or `fio version 3 iolog`",
                    ))
                }
            });
            return Ok(Parsed::Ignored);
        };
        let mut fields = [&[][..]; 5];
        let mut count = 0;
        for field in whitespace_fields(line) {
            if count == fields.len() {
                return Err(LineError::bad("too many columns"));
            }
            fields[count] = field;
            count += 1;
        }
        let fields = &fields[..count];
        match version {
            Version::V2 => self.action(self.clock_ns, fields, version),
            Version::V3 => {
                let Some((time, rest)) = fields.split_first() else {
                    return Err(LineError::bad("empty line"));
                };
                let time_ns = Self::number(time, "timestamp (ms)")?
                    .checked_mul(NS_PER_MS)
                    .ok_or_else(|| LineError::bad("timestamp overflows 64-bit nanoseconds"))?;
                self.action(time_ns, rest, version)
            }
        }
    }
}

/// Streaming reader for fio iolog v2/v3 files.
pub struct FioReader {
    inner: LineReader<FioLayout>,
}

impl FioReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        FioReader {
            inner: LineReader::new(path, input, FioLayout::new(), options),
        }
    }
}

line_reader_impl!(FioReader);
