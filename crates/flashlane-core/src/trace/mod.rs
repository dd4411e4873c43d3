//! Trace ingestion: every reader turns one on-disk layout into a stream of [`TraceRecord`]s.
//!
//! Readers stream (never the whole file in memory) and open gzip/zstd transparently. A
//! malformed line is a [`TraceError`] naming the file, the line number and the text.

mod ascii;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub use ascii::AsciiReader;

/// Direction of a block request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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
}

impl TraceFormat {
    /// Every layout, in the order used by help texts.
    pub const ALL: &'static [TraceFormat] = &[
        TraceFormat::Mqsim,
        TraceFormat::Ssdsim,
        TraceFormat::Disksim,
    ];

    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Ssdsim => "ssdsim",
            TraceFormat::Disksim => "disksim",
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

/// Open a trace in the given layout.
pub fn open(path: &Path, format: TraceFormat) -> Result<Box<dyn TraceReader>, TraceError> {
    let input = open_decompressed(path)?;
    Ok(match format {
        TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim => {
            Box::new(AsciiReader::new(path.to_path_buf(), input, format))
        }
    })
}

/// Decide the layout of `path` from its content. (Placeholder until the detection work lands:
/// refuses to guess.)
pub fn detect(path: &Path) -> Result<TraceFormat, TraceError> {
    Err(TraceError::File {
        path: path.to_path_buf(),
        message: "layout detection is not available yet; pass --format (mqsim, ssdsim, disksim)"
            .into(),
    })
}
