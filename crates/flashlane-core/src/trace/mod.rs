//! Trace ingestion: every reader turns one on-disk layout into a stream of [`TraceRecord`]s.
//!
//! Readers stream (never the whole file in memory) and open gzip/zstd transparently. A
//! malformed line is a [`TraceError`] naming the file, the line number and the text.
//! Layouts, units and policies are documented in docs/traces.md.

pub mod analysis;
mod ascii;
mod blkparse;
mod blktrace;
mod common;
mod detect;
mod diskmon;
mod fio;
mod generic_csv;
mod msr;
mod spc;
pub mod writer;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub use analysis::{StatsBuilder, TraceStats};
pub use ascii::AsciiReader;
pub use blkparse::BlkparseReader;
pub use blktrace::{blktrace_files, BlktraceReader};
pub use detect::detect;
pub use diskmon::DiskmonReader;
pub use fio::FioReader;
pub use generic_csv::{AddressUnit, Delimiter, GenericCsvReader, GenericCsvSpec, TimeUnit};
pub use msr::MsrReader;
pub use spc::SpcReader;
pub use writer::{convert, ConvertError, ConvertOptions, ConvertReport, WRITABLE_FORMATS};

/// Direction of a block request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
// Eight bytes wide, so a `TraceRecord` has no padding: records are copied several times on
// their way to the simulator, and copies of a padded tail stalled on store forwarding.
#[repr(u64)]
pub enum Op {
    Read,
    Write,
}

/// One block request as recorded in a trace, in layout-independent units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time in nanoseconds, on the trace's own clock (not yet rebased to zero).
    pub time_ns: u64,
    /// Device / disk / ASU number as the trace gives it.
    pub device: u32,
    /// Stream (process, application or device) the request belongs to; used by per-stream
    /// schedulers such as CFQ. Readers without such a column use the device number.
    pub stream: u32,
    /// Byte offset of the first byte accessed.
    pub offset_bytes: u64,
    /// Number of bytes accessed (> 0).
    pub size_bytes: u64,
    pub op: Op,
}

/// Trace layouts flashlane can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// MQSim ASCII: `t_ns dev lba_sector size_sectors type` (type 0 = write, 1 = read).
    Mqsim,
    /// SSDsim ASCII: `t_ns dev lsn size_sectors ope` (ope 1 = read, 0 = write).
    Ssdsim,
    /// DiskSim ASCII: `t_ms dev blkno size_sectors flags` (flags bit 0 = read).
    Disksim,
    /// MSR Cambridge / SNIA CSV: `Timestamp(100 ns ticks),Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// UMass SPC: `ASU,LBA(512 B),Size(bytes),Opcode(r/w),Timestamp(s)`.
    Spc,
    /// `blkparse` default text output; `D` (or `Q`, see [`ReaderOptions::block_event`]) events.
    Blkparse,
    /// Binary blktrace capture (`NAME.blktrace.N` per-CPU files, merged by time).
    Blktrace,
    /// fio iolog, version 2 or 3 (told apart by the header).
    Fio,
    /// Delimited text described by a [`GenericCsvSpec`] in [`ReaderOptions::generic_csv`].
    GenericCsv,
    /// Windows Sysinternals DiskMon log: tab-separated `# Time Duration Disk Request Sector Length`.
    Diskmon,
}

impl TraceFormat {
    /// Every layout, in the order used by help texts.
    pub const ALL: &'static [TraceFormat] = &[
        TraceFormat::Mqsim,
        TraceFormat::Ssdsim,
        TraceFormat::Disksim,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Blktrace,
        TraceFormat::Fio,
        TraceFormat::GenericCsv,
        TraceFormat::Diskmon,
    ];

    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Ssdsim => "ssdsim",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Blktrace => "blktrace",
            TraceFormat::Fio => "fio",
            TraceFormat::GenericCsv => "generic-csv",
            TraceFormat::Diskmon => "diskmon",
        }
    }

    /// Parse a command-line name.
    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A trace that cannot be read correctly. Always names the file; names the line where one is at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{path}:{line}: {message}: {text:?}")]
    Line {
        path: PathBuf,
        line: u64,
        text: String,
        message: String,
    },
}

/// One reader per layout. `next_record` returns `Ok(None)` at the end of the trace.
pub trait TraceReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError>;
    /// The layout this reader parses.
    fn format(&self) -> TraceFormat;
    /// The file being read.
    fn path(&self) -> &Path;
    /// Malformed lines skipped so far under [`ReaderOptions::max_bad_lines`].
    fn bad_lines(&self) -> u64 {
        0
    }
    /// Request-like events dropped because they are neither reads nor writes (trim, discard,
    /// flush, sync, ...).
    fn skipped_events(&self) -> u64 {
        0
    }
    /// Records whose time stepped back by at most the tolerance and were clamped to the
    /// previous record's time.
    fn clamped_backsteps(&self) -> u64 {
        0
    }
    /// The three counters above in one call: [bad lines, skipped events, clamped back-steps].
    fn counters(&self) -> [u64; 3] {
        [
            self.bad_lines(),
            self.skipped_events(),
            self.clamped_backsteps(),
        ]
    }
}

/// Which blktrace/blkparse event marks a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlockEvent {
    /// `D`: the request is issued to the device driver (what the device sees).
    #[default]
    Issue,
    /// `Q`: the request is queued by the block layer (what the application asked for).
    Queue,
}

/// Default for [`ReaderOptions::backstep_tolerance_ns`]: one second.
pub const DEFAULT_BACKSTEP_TOLERANCE_NS: u64 = 1_000_000_000;

/// Reader settings beyond the layout. `Default` is what [`open`] uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Malformed lines (or records with absurd values) to skip and count before the next one
    /// is an error. Structural errors (a missing fio header, a lost blktrace magic) are never
    /// skipped.
    pub max_bad_lines: u64,
    /// Time may step back by up to this much (the record is clamped to the previous time and
    /// counted); a larger step back is an error.
    pub backstep_tolerance_ns: u64,
    /// Event taken as the request by the blkparse and blktrace readers.
    pub block_event: BlockEvent,
    /// Column mapping; required for [`TraceFormat::GenericCsv`].
    pub generic_csv: Option<GenericCsvSpec>,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_bad_lines: 0,
            backstep_tolerance_ns: DEFAULT_BACKSTEP_TOLERANCE_NS,
            block_event: BlockEvent::Issue,
            generic_csv: None,
        }
    }
}

/// Open `path` (plain, gzip or zstd, told apart by magic bytes) as a buffered byte stream.
pub fn open_decompressed(path: &Path) -> Result<Box<dyn BufRead>, TraceError> {
    let file_error = |e: std::io::Error| TraceError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(file_error)?);
    let magic = file.fill_buf().map_err(file_error)?;
    let stream: Box<dyn Read> = if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::MultiGzDecoder::new(file))
    } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(zstd::stream::read::Decoder::with_buffer(file).map_err(file_error)?)
    } else {
        return Ok(Box::new(file));
    };
    Ok(Box::new(BufReader::with_capacity(1 << 16, stream)))
}

/// Open a trace in the given layout with default [`ReaderOptions`].
pub fn open(path: &Path, format: TraceFormat) -> Result<Box<dyn TraceReader>, TraceError> {
    open_with(path, format, &ReaderOptions::default())
}

/// Open a trace in the given layout. For [`TraceFormat::Blktrace`], `path` may also be a
/// capture directory or the common prefix of the per-CPU files.
pub fn open_with(
    path: &Path,
    format: TraceFormat,
    options: &ReaderOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let owned = path.to_path_buf();
    Ok(match format {
        TraceFormat::Blktrace => Box::new(BlktraceReader::open(path, options)?),
        TraceFormat::GenericCsv => {
            let Some(spec) = options.generic_csv.clone() else {
                return Err(TraceError::File {
                    path: owned,
                    message: "layout generic-csv needs a column spec (see docs/traces.md)".into(),
                });
            };
            let input = open_decompressed(path)?;
            Box::new(GenericCsvReader::new(owned, input, spec, options))
        }
        TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim => {
            let input = open_decompressed(path)?;
            Box::new(AsciiReader::with_options(owned, input, format, options))
        }
        TraceFormat::Msr => Box::new(MsrReader::new(owned, open_decompressed(path)?, options)),
        TraceFormat::Spc => Box::new(SpcReader::new(owned, open_decompressed(path)?, options)),
        TraceFormat::Blkparse => Box::new(BlkparseReader::new(
            owned,
            open_decompressed(path)?,
            options,
        )),
        TraceFormat::Fio => Box::new(FioReader::new(owned, open_decompressed(path)?, options)),
        TraceFormat::Diskmon => {
            Box::new(DiskmonReader::new(owned, open_decompressed(path)?, options))
        }
    })
}
