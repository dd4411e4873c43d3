//! Binary blktrace captures: one `NAME.blktrace.CPU` file per CPU, each a sequence of
//! `struct blk_io_trace` (48 bytes) followed by `pdu_len` bytes of payload. The per-CPU files
//! are merged in time order (ties: lower CPU file first, then file order).
//!
//! Header layout (byte offset: field): 0 magic (`0x65617400 | version`), 4 sequence, 8 time (ns),
//! 16 sector, 24 bytes, 28 action, 32 pid, 36 device (`MAJ << 20 | MIN`), 40 cpu, 44 error,
//! 46 pdu_len. Byte order is whatever makes the magic read right.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use super::common::{hex, read_full, RecordChecks, SECTOR_BYTES};
use super::{
    open_decompressed, BlockEvent, Op, ReaderOptions, TraceError, TraceFormat, TraceReader,
    TraceRecord,
};

const HEADER_BYTES: usize = 48;
const MAGIC: u32 = 0x6561_7400;
const MAGIC_MASK: u32 = 0xffff_ff00;
const SUPPORTED_VERSION: u32 = 0x07;

const ACTION_QUEUE: u32 = 1;
const ACTION_ISSUE: u32 = 7;
const CATEGORY_READ: u32 = 1 << 0;
const CATEGORY_WRITE: u32 = 1 << 1;
const CATEGORY_PC: u32 = 1 << 9;
const CATEGORY_NOTIFY: u32 = 1 << 10;
const CATEGORY_DISCARD: u32 = 1 << 13;

/// True when the first bytes of a stream are a blktrace event header (either byte order).
pub(crate) fn has_blktrace_magic(bytes: &[u8]) -> bool {
    let Some(magic) = bytes.get(..4) else {
        return false;
    };
    let magic: [u8; 4] = [magic[0], magic[1], magic[2], magic[3]];
    u32::from_le_bytes(magic) & MAGIC_MASK == MAGIC
        || u32::from_be_bytes(magic) & MAGIC_MASK == MAGIC
}

/// Suffixes of compressed per-CPU files (`NAME.blktrace.N.gz`); the content is told apart by
/// its magic bytes when opened, as for every other layout.
const COMPRESSED_SUFFIXES: [&str; 3] = [".gz", ".zst", ".zstd"];

/// `NAME.blktrace.N` (optionally compressed: `.gz`, `.zst`, `.zstd`) → (`NAME`, N).
fn split_cpu_file_name(name: &str) -> Option<(&str, u32)> {
    let name = COMPRESSED_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(name);
    let (prefix, cpu) = name.rsplit_once(".blktrace.")?;
    if prefix.is_empty() || cpu.is_empty() || !cpu.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((prefix, cpu.parse().ok()?))
}

fn list_cpu_files(dir: &Path) -> Result<Vec<(String, u32, PathBuf)>, TraceError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TraceError::File {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some((prefix, cpu)) = split_cpu_file_name(name) {
            files.push((prefix.to_owned(), cpu, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// The paths of one capture's files, refusing two files for one CPU (`sdb.blktrace.0` next to
/// `sdb.blktrace.0.gz` would read that CPU's events twice).
fn one_file_per_cpu(
    dir: &Path,
    files: Vec<(String, u32, PathBuf)>,
) -> Result<Vec<PathBuf>, TraceError> {
    if let Some(pair) = files
        .windows(2)
        .find(|pair| pair[0].0 == pair[1].0 && pair[0].1 == pair[1].1)
    {
        return Err(TraceError::File {
            path: dir.to_path_buf(),
            message: format!(
                "two files for CPU {} of capture {}: {} and {}; keep one",
                pair[0].1,
                pair[0].0,
                pair[0].2.display(),
                pair[1].2.display()
            ),
        });
    }
    Ok(files.into_iter().map(|(_, _, p)| p).collect())
}

/// CPU numbers of the capture `read` belongs to that have no file among `read`: gaps below
/// the highest CPU number, and the capture's other files next to a per-CPU file given alone.
fn missing_cpus(read: &[PathBuf]) -> Vec<u32> {
    let cpu_of = |p: &PathBuf| {
        let name = p.file_name()?.to_str()?;
        split_cpu_file_name(name).map(|(prefix, cpu)| (prefix.to_owned(), cpu))
    };
    let read_cpus: Vec<(String, u32)> = read.iter().filter_map(cpu_of).collect();
    let Some((prefix, _)) = read_cpus.first() else {
        return Vec::new();
    };
    let dir = match read[0].parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let siblings = list_cpu_files(dir).unwrap_or_default();
    let highest = siblings
        .iter()
        .filter(|(p, _, _)| p == prefix)
        .map(|(_, cpu, _)| *cpu)
        .chain(read_cpus.iter().map(|(_, cpu)| *cpu))
        .max()
        .unwrap_or(0);
    // A CPU number far past the files present is a name, not a machine's CPU count.
    if highest as usize > read.len() + 4096 {
        return Vec::new();
    }
    (0..=highest)
        .filter(|cpu| !read_cpus.iter().any(|(_, c)| c == cpu))
        .collect()
}

/// The per-CPU files of one capture, by CPU number. `path` is a capture directory, the common
/// prefix (`dir/NAME` for `dir/NAME.blktrace.*`), or one per-CPU file (read alone).
pub fn blktrace_files(path: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let error = |message: String| TraceError::File {
        path: path.to_path_buf(),
        message,
    };
    if path.is_dir() {
        let files = list_cpu_files(path)?;
        let mut prefixes: Vec<&str> = files.iter().map(|(p, _, _)| p.as_str()).collect();
        prefixes.dedup();
        return match prefixes.len() {
            0 => Err(error(
                "directory holds no NAME.blktrace.N files (plain, .gz, .zst or .zstd)".into(),
            )),
            1 => one_file_per_cpu(path, files),
            _ => Err(error(format!(
                "directory holds several captures ({}); pass DIR/NAME for one of them",
                prefixes.join(", ")
            ))),
        };
    }
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let prefix = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| error("no such file or capture prefix".into()))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let files: Vec<(String, u32, PathBuf)> = list_cpu_files(parent)
        .unwrap_or_default()
        .into_iter()
        .filter(|(p, _, _)| p == prefix)
        .collect();
    if files.is_empty() {
        return Err(error(format!(
            "no such file, and no {prefix}.blktrace.N files next to it"
        )));
    }
    one_file_per_cpu(parent, files)
}

/// One per-CPU file, read one event ahead.
struct CpuFile {
    path: PathBuf,
    input: Box<dyn BufRead>,
    big_endian: Option<bool>,
    /// Events read so far (the 1-based number of the last one read).
    events: u64,
    byte_offset: u64,
    skipped_events: u64,
}

/// Why an event could not be read; `skippable` ones count against `max_bad_lines`.
struct EventFault {
    error: TraceError,
    skippable: bool,
}

impl CpuFile {
    fn fault(&self, offset: u64, header: &[u8], message: String, skippable: bool) -> EventFault {
        EventFault {
            error: TraceError::Line {
                path: self.path.clone(),
                line: self.events,
                text: hex(header),
                message: format!("event at byte offset {offset}: {message}"),
            },
            skippable,
        }
    }

    /// Next event of the wanted kind that is a read or a write, with its 1-based event number.
    fn next_request(&mut self, wanted: u32) -> Result<Option<(TraceRecord, u64)>, EventFault> {
        let mut header = [0u8; HEADER_BYTES];
        loop {
            let offset = self.byte_offset;
            let filled = read_full(&mut *self.input, &mut header)
                .map_err(|e| self.fault(offset, &[], format!("read error: {e}"), false))?;
            if filled == 0 {
                return Ok(None);
            }
            self.events += 1;
            if filled < HEADER_BYTES {
                return Err(self.fault(
                    offset,
                    &header[..filled],
                    format!("truncated event header ({filled} of {HEADER_BYTES} bytes)"),
                    true,
                ));
            }
            let magic_bytes = [header[0], header[1], header[2], header[3]];
            let big_endian = match self.big_endian {
                Some(big) => big,
                None => {
                    let big = u32::from_le_bytes(magic_bytes) & MAGIC_MASK != MAGIC;
                    self.big_endian = Some(big);
                    big
                }
            };
            let u32_at = |at: usize| {
                let b = [header[at], header[at + 1], header[at + 2], header[at + 3]];
                if big_endian {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                }
            };
            let u64_at = |at: usize| {
                let (high, low) = if big_endian {
                    (u32_at(at), u32_at(at + 4))
                } else {
                    (u32_at(at + 4), u32_at(at))
                };
                u64::from(high) << 32 | u64::from(low)
            };
            let magic = u32_at(0);
            if magic & MAGIC_MASK != MAGIC {
                // Without a valid magic the event boundaries are lost; nothing after is trustworthy.
                return Err(self.fault(
                    offset,
                    &header,
                    "bad magic (not a blktrace event)".into(),
                    false,
                ));
            }
            if magic & !MAGIC_MASK != SUPPORTED_VERSION {
                return Err(self.fault(
                    offset,
                    &header,
                    format!(
                        "unsupported blktrace version {} (supported: {SUPPORTED_VERSION})",
                        magic & !MAGIC_MASK
                    ),
                    false,
                ));
            }
            let pdu_bytes = if big_endian {
                u16::from_be_bytes([header[46], header[47]])
            } else {
                u16::from_le_bytes([header[46], header[47]])
            };
            let skipped = std::io::copy(
                &mut (&mut self.input).take(u64::from(pdu_bytes)),
                &mut std::io::sink(),
            )
            .map_err(|e| self.fault(offset, &header, format!("read error: {e}"), false))?;
            if skipped < u64::from(pdu_bytes) {
                return Err(self.fault(
                    offset,
                    &header,
                    format!("truncated payload ({skipped} of {pdu_bytes} bytes)"),
                    true,
                ));
            }
            self.byte_offset += HEADER_BYTES as u64 + u64::from(pdu_bytes);
            let action = u32_at(28);
            let category = action >> 16;
            if category & CATEGORY_NOTIFY != 0 || action & 0xffff != wanted {
                continue;
            }
            let bytes = u32_at(24);
            let op = if category & (CATEGORY_PC | CATEGORY_DISCARD) != 0 || bytes == 0 {
                None
            } else if category & CATEGORY_WRITE != 0 {
                Some(Op::Write)
            } else if category & CATEGORY_READ != 0 {
                Some(Op::Read)
            } else {
                None
            };
            let Some(op) = op else {
                self.skipped_events += 1;
                continue;
            };
            let Some(offset_bytes) = u64_at(16).checked_mul(SECTOR_BYTES) else {
                return Err(self.fault(
                    offset,
                    &header,
                    "sector overflows 64-bit bytes".into(),
                    true,
                ));
            };
            let record = TraceRecord {
                time_ns: u64_at(8),
                device: u32_at(36),
                stream: u32_at(32),
                offset_bytes,
                size_bytes: u64::from(bytes),
                op,
            };
            return Ok(Some((record, self.events)));
        }
    }
}

/// Merges the per-CPU files of one blktrace capture into one time-ordered request stream.
pub struct BlktraceReader {
    path: PathBuf,
    files: Vec<CpuFile>,
    /// Next request of each file, keyed for the merge: (time, file index, event number).
    heads: BinaryHeap<Reverse<(u64, usize, u64)>>,
    pending: Vec<Option<TraceRecord>>,
    primed: bool,
    wanted: u32,
    checks: RecordChecks,
    max_bad_lines: u64,
    bad_lines: u64,
    /// CPUs of the capture whose file is not read (see [`missing_cpus`]).
    missing_cpus: Vec<u32>,
}

impl BlktraceReader {
    /// Opens every per-CPU file of the capture named by `path` (see [`blktrace_files`]).
    pub fn open(path: &Path, options: &ReaderOptions) -> Result<Self, TraceError> {
        let paths = blktrace_files(path)?;
        let missing = missing_cpus(&paths);
        let mut files = Vec::new();
        for file in paths {
            files.push((open_decompressed(&file)?, file));
        }
        let mut reader = Self::from_files(path, files, options);
        reader.missing_cpus = missing;
        Ok(reader)
    }

    /// Reads one per-CPU file's events from an open (decompressed) stream, e.g. a pipe.
    pub fn from_stream(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        // A per-CPU file read alone: its capture's other files are not read.
        let missing = missing_cpus(std::slice::from_ref(&path));
        let mut reader = Self::from_files(&path.clone(), vec![(input, path)], options);
        reader.missing_cpus = missing;
        reader
    }

    fn from_files(
        path: &Path,
        inputs: Vec<(Box<dyn BufRead>, PathBuf)>,
        options: &ReaderOptions,
    ) -> Self {
        let files: Vec<CpuFile> = inputs
            .into_iter()
            .map(|(input, path)| CpuFile {
                input,
                path,
                big_endian: None,
                events: 0,
                byte_offset: 0,
                skipped_events: 0,
            })
            .collect();
        BlktraceReader {
            path: path.to_path_buf(),
            pending: vec![None; files.len()],
            files,
            heads: BinaryHeap::new(),
            primed: false,
            wanted: match options.block_event {
                BlockEvent::Issue => ACTION_ISSUE,
                BlockEvent::Queue => ACTION_QUEUE,
            },
            checks: RecordChecks::new(options.backstep_tolerance_ns),
            max_bad_lines: options.max_bad_lines,
            bad_lines: 0,
            missing_cpus: Vec::new(),
        }
    }

    /// Reads file `index` ahead by one request, spending the bad-event budget as needed.
    fn refill(&mut self, index: usize) -> Result<(), TraceError> {
        loop {
            match self.files[index].next_request(self.wanted) {
                Ok(Some((record, event))) => {
                    self.heads.push(Reverse((record.time_ns, index, event)));
                    self.pending[index] = Some(record);
                    return Ok(());
                }
                Ok(None) => return Ok(()),
                Err(fault) => self.bad_event(fault.error, fault.skippable)?,
            }
        }
    }

    fn bad_event(&mut self, error: TraceError, skippable: bool) -> Result<(), TraceError> {
        if skippable && self.bad_lines < self.max_bad_lines {
            self.bad_lines += 1;
            Ok(())
        } else {
            Err(error)
        }
    }
}

impl TraceReader for BlktraceReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if !self.primed {
            self.primed = true;
            for index in 0..self.files.len() {
                self.refill(index)?;
            }
        }
        loop {
            let Some(Reverse((_, index, event))) = self.heads.pop() else {
                return Ok(None);
            };
            let Some(mut record) = self.pending[index].take() else {
                continue;
            };
            self.refill(index)?;
            match self.checks.check(&mut record) {
                Ok(()) => return Ok(Some(record)),
                Err(message) => {
                    let file = &self.files[index];
                    let error = TraceError::Line {
                        path: file.path.clone(),
                        line: event,
                        text: format!(
                            "time={} sector={} bytes={} device={} pid={}",
                            record.time_ns,
                            record.offset_bytes / SECTOR_BYTES,
                            record.size_bytes,
                            record.device,
                            record.stream
                        ),
                        message: format!("event: {message}"),
                    };
                    self.bad_event(error, true)?;
                }
            }
        }
    }

    fn format(&self) -> TraceFormat {
        TraceFormat::Blktrace
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    fn skipped_events(&self) -> u64 {
        self.files.iter().map(|f| f.skipped_events).sum()
    }

    fn clamped_backsteps(&self) -> u64 {
        self.checks.clamped_backsteps()
    }

    fn notes(&self) -> super::ReaderNotes {
        super::ReaderNotes {
            missing_cpu_files: self.missing_cpus.clone(),
            ..self.checks.notes()
        }
    }
}
