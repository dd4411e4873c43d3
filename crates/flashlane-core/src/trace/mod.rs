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
mod hp_srt;
mod msr;
mod spc;
pub mod writer;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use analysis::{StatsBuilder, TraceStats};
pub use ascii::AsciiReader;
pub use blkparse::BlkparseReader;
pub use blktrace::{blktrace_files, BlktraceReader};
pub use detect::{detect, detect_tolerating};
pub use diskmon::DiskmonReader;
pub use fio::FioReader;
pub use generic_csv::{
    AddressUnit, Delimiter, GenericCsvReader, GenericCsvSpec, RowFilter, TimeUnit,
};
pub use hp_srt::HpSrtReader;
pub use msr::MsrReader;
pub use spc::SpcReader;
pub use writer::{
    convert, convert_into, ConvertError, ConvertOptions, ConvertReport, WRITABLE_FORMATS,
};

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
    /// HP Labs SRT binary disk trace (the cello / hplajw traces; DiskSim's `hpl` format):
    /// big-endian records, time in s + µs, size in bytes, 512-byte sectors.
    HpSrt,
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
        TraceFormat::HpSrt,
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
            TraceFormat::HpSrt => "hp-srt",
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
    /// Appends the next records to `out`: at least one unless the trace ended, at most `max`,
    /// and every counter and note of the reader after the call as it was right after the
    /// first of them (so a caller that takes a batch where it would have taken one record
    /// sees the same reports at every point). The default is one [`TraceReader::next_record`].
    fn next_records(&mut self, out: &mut Vec<TraceRecord>, max: usize) -> Result<(), TraceError> {
        let _ = max;
        out.extend(self.next_record()?);
        Ok(())
    }
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
    /// What the reader saw that a run's warnings report (see [`ReaderNotes`]).
    fn notes(&self) -> ReaderNotes {
        ReaderNotes::default()
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

/// What a reader saw that may make a run's figures mean less than they seem (the run's
/// `warnings`, docs/summary.md). Covers every record read so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReaderNotes {
    /// Largest step back in time that was clamped (within the tolerance), ns.
    pub largest_clamped_backstep_ns: u64,
    /// The largest group of records refused because time stepped back past the tolerance
    /// from one and the same earlier record: (that record's time in ns, records refused). A
    /// record far in the future makes every later one "backwards" until time catches up.
    pub backwards_after_one_record: Option<(u64, u64)>,
    /// blktrace: CPU numbers of the capture whose per-CPU file was not read (a gap in the
    /// numbering, or files next to the one per-CPU file given).
    pub missing_cpu_files: Vec<u32>,
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

/// True when `path` names standard input: `-`.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// True when `path` can be read only once: standard input (`-`), a pipe or FIFO (`/dev/stdin`
/// under a pipe, `<(zcat ...)`), a socket or a character device. Such an input is read
/// through once ([`open_detected`]) or copied once ([`SpilledStream`]), never reopened.
pub fn is_stream(path: &Path) -> bool {
    is_stdin(path) || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The raw bytes of `path`: standard input for `-`, else the file.
fn open_raw(path: &Path) -> Result<Box<dyn Read>, TraceError> {
    if is_stdin(path) {
        return Ok(Box::new(std::io::stdin()));
    }
    let file = File::open(path).map_err(|e| TraceError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(Box::new(file))
}

/// `raw` as a buffered byte stream, decompressed when its first bytes are the gzip or zstd
/// magic. Only the buffered prefix is examined, so a pipe works as well as a file.
fn decompress(path: &Path, mut raw: Box<dyn Read>) -> Result<Box<dyn BufRead>, TraceError> {
    let file_error = |e: std::io::Error| TraceError::File {
        path: path.to_path_buf(),
        message: format!("read error: {e}"),
    };
    // A pipe may hand over fewer bytes than the magic in one read: read until four or the end.
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < magic.len() {
        match raw.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(file_error(e)),
        }
    }
    let magic = &magic[..got];
    let input = BufReader::with_capacity(1 << 16, std::io::Cursor::new(magic.to_vec()).chain(raw));
    let stream: Box<dyn Read> = if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::MultiGzDecoder::new(input))
    } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(zstd::stream::read::Decoder::with_buffer(input).map_err(file_error)?)
    } else {
        return Ok(Box::new(input));
    };
    Ok(Box::new(BufReader::with_capacity(1 << 16, stream)))
}

/// Open `path` (plain, gzip or zstd, told apart by magic bytes; `-` is standard input) as a
/// buffered byte stream.
pub fn open_decompressed(path: &Path) -> Result<Box<dyn BufRead>, TraceError> {
    decompress(path, open_raw(path)?)
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
    open_detected(path, Some(format), options)
}

/// Open a trace, opening `path` once: its layout (when `format` is `None`) is detected on a
/// buffered prefix of the decompressed bytes, which the reader then reads on from, so a pipe
/// or standard input (`-`) loses nothing. A capture directory or per-CPU prefix is binary
/// blktrace; so is content that starts with its magic.
pub fn open_detected(
    path: &Path,
    format: Option<TraceFormat>,
    options: &ReaderOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    if !is_stream(path)
        && !path.is_file()
        && matches!(format, None | Some(TraceFormat::Blktrace))
        && (path.is_dir() || blktrace_files(path).is_ok())
    {
        return Ok(Box::new(BlktraceReader::open(path, options)?));
    }
    if format == Some(TraceFormat::GenericCsv) && options.generic_csv.is_none() {
        // Before opening: a missing spec must not consume a pipe.
        return Err(generic_csv_needs_spec(path));
    }
    open_bytes(path, open_raw(path)?, format, options)
}

fn generic_csv_needs_spec(path: &Path) -> TraceError {
    TraceError::File {
        path: path.to_path_buf(),
        message: "layout generic-csv needs a column spec (see docs/traces.md)".into(),
    }
}

/// A reader over `raw`, the undecompressed bytes of `path`, detecting the layout on a buffered
/// prefix when `format` is `None`.
fn open_bytes(
    path: &Path,
    raw: Box<dyn Read>,
    format: Option<TraceFormat>,
    options: &ReaderOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let mut input = decompress(path, raw)?;
    let format = match format {
        Some(format) => format,
        None => {
            let mut sample = Vec::new();
            (&mut input)
                .take(detect::SNIFF_BYTES)
                .read_to_end(&mut sample)
                .map_err(|e| TraceError::File {
                    path: path.to_path_buf(),
                    message: format!("read error: {e}"),
                })?;
            let format = detect::detect_sample(path, &sample, options.max_bad_lines)?;
            // The reader starts again at the first byte: the sample, then the rest.
            input = Box::new(std::io::Cursor::new(sample).chain(input));
            format
        }
    };
    reader_for(path, format, input, options)
}

/// The reader of `format` over the decompressed stream `input` of `path`.
fn reader_for(
    path: &Path,
    format: TraceFormat,
    input: Box<dyn BufRead>,
    options: &ReaderOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let owned = path.to_path_buf();
    Ok(match format {
        TraceFormat::Blktrace => Box::new(BlktraceReader::from_stream(owned, input, options)),
        TraceFormat::GenericCsv => {
            let Some(spec) = options.generic_csv.clone() else {
                return Err(generic_csv_needs_spec(path));
            };
            Box::new(GenericCsvReader::new(owned, input, spec, options))
        }
        TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim => {
            Box::new(AsciiReader::with_options(owned, input, format, options))
        }
        TraceFormat::Msr => Box::new(MsrReader::new(owned, input, options)),
        TraceFormat::Spc => Box::new(SpcReader::new(owned, input, options)),
        TraceFormat::Blkparse => Box::new(BlkparseReader::new(owned, input, options)),
        TraceFormat::Fio => Box::new(FioReader::new(owned, input, options)),
        TraceFormat::Diskmon => Box::new(DiskmonReader::new(owned, input, options)),
        TraceFormat::HpSrt => Box::new(HpSrtReader::new(owned, input, options)),
    })
}

/// The bytes of a stream (see [`is_stream`]) copied once, as they came (still compressed),
/// into an unnamed temporary file, so that a command that reads its input twice (a remap or
/// footprint pre-pass, several runs) reads the copy. The file is unlinked as soon as it is
/// created: nothing is left on disk on any exit, even a kill.
#[derive(Debug, Clone)]
pub struct SpilledStream {
    file: Arc<File>,
    bytes: u64,
}

impl SpilledStream {
    /// Copy all of `path` (`-` = standard input).
    pub fn copy(path: &Path) -> Result<SpilledStream, TraceError> {
        let fail = |message: String| TraceError::File {
            path: path.to_path_buf(),
            message,
        };
        let mut raw = open_raw(path)?;
        let dir = std::env::temp_dir();
        let mut file = unnamed_temp_file(&dir).map_err(|e| {
            fail(format!(
                "a pipe must be copied to be read twice, and no temporary file could be \
                 created in {}: {e}; save the input to a file and pass that",
                dir.display()
            ))
        })?;
        let bytes = std::io::copy(&mut raw, &mut file).map_err(|e| {
            fail(format!(
                "copying the pipe to a temporary file in {}: {e}; save the input to a file \
                 and pass that",
                dir.display()
            ))
        })?;
        Ok(SpilledStream {
            file: Arc::new(file),
            bytes,
        })
    }

    /// Bytes copied.
    pub fn len(&self) -> u64 {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Open the copy from its first byte as the trace `path` (each call reads independently).
    pub fn open(
        &self,
        path: &Path,
        format: Option<TraceFormat>,
        options: &ReaderOptions,
    ) -> Result<Box<dyn TraceReader>, TraceError> {
        if format == Some(TraceFormat::GenericCsv) && options.generic_csv.is_none() {
            return Err(generic_csv_needs_spec(path));
        }
        let raw = PositionedReader {
            file: Arc::clone(&self.file),
            position: 0,
        };
        open_bytes(path, Box::new(raw), format, options)
    }
}

/// Reads a shared file from its own position (positioned reads), so readers of one copy on
/// several threads never disturb each other.
struct PositionedReader {
    file: Arc<File>,
    position: u64,
}

impl Read for PositionedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(&*self.file, buf, self.position)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(&*self.file, buf, self.position)?;
        self.position += n as u64;
        Ok(n)
    }
}

/// A new file in `dir` that no other process can name: created exclusively, then unlinked.
fn unnamed_temp_file(dir: &Path) -> std::io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let path = dir.join(format!(
            "flashlane-stream-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            // A file left by an earlier process of the same pid: take the next name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}
