//! Writing records as a trace file other tools (and flashlane's readers) understand.

use std::io::Write;

use crate::trace::{Op, TraceError, TraceRecord};

const SECTOR_BYTES: u64 = 512;

/// Trace layouts `flashlane gen` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// MQSim ASCII: `t_ns dev lba_sector size_sectors type` (type 0 = write, 1 = read).
    Mqsim,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`,
    /// timestamp in 100 ns ticks, offset and size in bytes, response time 0 (unknown).
    Msr,
}

impl OutputFormat {
    pub const ALL: &'static [OutputFormat] = &[OutputFormat::Mqsim, OutputFormat::Msr];

    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Mqsim => "mqsim",
            OutputFormat::Msr => "msr",
        }
    }

    pub fn from_name(name: &str) -> Option<OutputFormat> {
        OutputFormat::ALL.iter().copied().find(|f| f.name() == name)
    }
}

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A record the layout cannot hold exactly (e.g. not whole sectors in MQSim's layout).
    #[error("record {record}: {message}")]
    Unrepresentable { record: u64, message: String },
}

/// Write every record `next` yields to `out` in `format`; returns the number written.
///
/// MQSim's layout counts 512-byte sectors, so offsets and sizes must be whole sectors (an
/// error otherwise, never a silent rounding). MSR's 100 ns ticks are the time rounded down.
/// Neither layout has a stream column: the stream id is not written.
pub fn write_trace(
    next: &mut dyn FnMut() -> Result<Option<TraceRecord>, TraceError>,
    out: &mut dyn Write,
    format: OutputFormat,
) -> Result<u64, ExportError> {
    let mut n = 0u64;
    while let Some(r) = next()? {
        n += 1;
        match format {
            OutputFormat::Mqsim => {
                if r.offset_bytes % SECTOR_BYTES != 0 || r.size_bytes % SECTOR_BYTES != 0 {
                    return Err(ExportError::Unrepresentable {
                        record: n,
                        message: format!(
                            "offset {} or size {} bytes is not a whole number of 512-byte sectors, which the mqsim layout needs; use sector-aligned sizes and align_bytes, or --to msr",
                            r.offset_bytes, r.size_bytes
                        ),
                    });
                }
                let kind = match r.op {
                    Op::Write => 0,
                    Op::Read => 1,
                };
                writeln!(
                    out,
                    "{} {} {} {} {}",
                    r.time_ns,
                    r.device,
                    r.offset_bytes / SECTOR_BYTES,
                    r.size_bytes / SECTOR_BYTES,
                    kind
                )?;
            }
            OutputFormat::Msr => {
                let kind = match r.op {
                    Op::Write => "Write",
                    Op::Read => "Read",
                };
                writeln!(
                    out,
                    "{},synthetic,{},{},{},{},0",
                    r.time_ns / 100,
                    r.device,
                    kind,
                    r.offset_bytes,
                    r.size_bytes
                )?;
            }
        }
    }
    Ok(n)
}
