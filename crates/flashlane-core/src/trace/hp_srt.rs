//! HP Labs SRT binary disk traces: the 1990s HP-UX traces (cello, hplajw, snake) that DiskSim
//! reads as its `hpl` format (`hpl2` after `hplcomb` stripped the headers) and replays in its
//! validation suite (`hplajw.parv` with `ajw.1week.srt`).
//!
//! A file is an optional text header ended by a form feed (0x0C), then records of big-endian
//! 32-bit words. Every record starts with four words: its size in bytes (header included),
//! its id (`version << 16 | type`), and the time of the event in seconds and microseconds. A
//! short I/O record (type 1) goes on with nine words: start and stop of the traced service
//! (microseconds after the enqueue), size in bytes, sector number, device number, driver type,
//! cylinder, I/O flags (bit 0 = read) and origin info; version 4 adds a queue length word, and
//! a suspect I/O (type 4) a further word of error flags. Field meanings and their sources are
//! in docs/traces.md.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use super::common::{hex, read_full, RecordChecks, SECTOR_BYTES};
use super::{Op, ReaderOptions, TraceError, TraceFormat, TraceReader, TraceRecord};

/// The four words every record starts with: size, id, seconds, microseconds.
const RECORD_HEAD_BYTES: usize = 16;
/// A short I/O record of versions 1 to 3: thirteen words.
const SHORT_IO_BYTES: u32 = 52;
/// Largest record size taken as real: a larger size word means the record boundaries are lost.
const MAX_RECORD_BYTES: u32 = 4096;
/// Longest text header searched for its closing form feed.
const MAX_HEADER_BYTES: u64 = 1 << 20;
const FORM_FEED: u8 = 0x0c;

const TYPE_SHORT_IO: u32 = 1;
const TYPE_SUSPECT_IO: u32 = 4;
/// `HPL_READ` of the I/O flags; every other request is a write.
const FLAG_READ: u32 = 0x1;

/// Word `index` (0-based) of a record, big-endian.
fn word(record: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_be_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
}

/// What the first four words of a record say once checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RecordHead {
    size: u32,
    version: u32,
    kind: u32,
}

/// Checks the record's size and id words; an error means the record boundaries can no longer
/// be trusted (every later record would be misread).
fn record_head(head: &[u8]) -> Result<RecordHead, String> {
    let size = word(head, 0);
    let id = word(head, 1);
    let (version, kind) = (id >> 16, id & 0xffff);
    if !(1..=4).contains(&version) {
        return Err(format!(
            "id word {id:#010x} has version {version}, not 1 to 4: not an HP SRT record \
             (records are big-endian; is this file an SRT trace?)"
        ));
    }
    if !size.is_multiple_of(4) || !(RECORD_HEAD_BYTES as u32..=MAX_RECORD_BYTES).contains(&size) {
        return Err(format!(
            "record size {size} bytes is not a multiple of 4 between {RECORD_HEAD_BYTES} and \
             {MAX_RECORD_BYTES}"
        ));
    }
    if kind == TYPE_SHORT_IO || kind == TYPE_SUSPECT_IO {
        let expected = SHORT_IO_BYTES
            + if version == 4 { 4 } else { 0 }
            + if kind == TYPE_SUSPECT_IO { 4 } else { 0 };
        if size != expected {
            return Err(format!(
                "a version {version} {} record has {expected} bytes, but its size word says \
                 {size}",
                if kind == TYPE_SHORT_IO {
                    "short I/O"
                } else {
                    "suspect I/O"
                }
            ));
        }
    }
    Ok(RecordHead {
        size,
        version,
        kind,
    })
}

/// Where the records start when `sample` (the first bytes of a file) is an SRT trace: 0
/// without a header, just past the form feed with one. A header must read as text and hold
/// the `tracedate` line DiskSim looks for.
fn records_start(sample: &[u8]) -> Option<usize> {
    if sample.first() == Some(&0) {
        return Some(0);
    }
    let end = memchr::memchr(FORM_FEED, sample)?;
    let header = &sample[..end];
    let text = header
        .iter()
        .all(|&b| b == b'\t' || b == b'\n' || b == b'\r' || (b' '..0x7f).contains(&b));
    (text && memchr::memmem::find(header, b"tracedate").is_some()).then_some(end + 1)
}

/// True when `sample`, the first bytes of a file, is an HP SRT trace: an optional header as
/// above, then at least one whole record, and every whole record in the sample a short or
/// suspect I/O record with consistent size and version words and microseconds below a second.
pub(crate) fn has_hp_srt_records(sample: &[u8]) -> bool {
    let Some(mut at) = records_start(sample) else {
        return false;
    };
    let mut whole = 0;
    while at + RECORD_HEAD_BYTES <= sample.len() {
        let Ok(head) = record_head(&sample[at..]) else {
            return false;
        };
        if head.kind != TYPE_SHORT_IO && head.kind != TYPE_SUSPECT_IO {
            return false;
        }
        let end = at + head.size as usize;
        if end > sample.len() {
            break;
        }
        if word(&sample[at..end], 3) >= 1_000_000 {
            return false;
        }
        whole += 1;
        at = end;
    }
    whole > 0
}

/// Why a record could not be read; `skippable` ones count against `max_bad_lines`.
struct Fault {
    error: TraceError,
    skippable: bool,
}

/// Streaming reader of an HP SRT trace (see the module documentation).
pub struct HpSrtReader {
    path: PathBuf,
    input: Box<dyn BufRead>,
    header_read: bool,
    /// Records read so far (the 1-based number of the last one read).
    records: u64,
    /// Offset of the next record in the file (the header included) ...
    byte_offset: u64,
    /// ... and of the record in `record`, the one errors are about.
    record_offset: u64,
    record: Vec<u8>,
    checks: RecordChecks,
    max_bad_lines: u64,
    bad_lines: u64,
    skipped_events: u64,
}

impl HpSrtReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        HpSrtReader {
            path,
            input,
            header_read: false,
            records: 0,
            byte_offset: 0,
            record_offset: 0,
            record: Vec::with_capacity(64),
            checks: RecordChecks::new(options.backstep_tolerance_ns),
            max_bad_lines: options.max_bad_lines,
            bad_lines: 0,
            skipped_events: 0,
        }
    }

    fn file_error(&self, message: String) -> TraceError {
        TraceError::File {
            path: self.path.clone(),
            message,
        }
    }

    fn fault(&self, message: String, skippable: bool) -> Fault {
        Fault {
            error: TraceError::Line {
                path: self.path.clone(),
                line: self.records,
                text: hex(&self.record),
                message: format!("record at byte offset {}: {message}", self.record_offset),
            },
            skippable,
        }
    }

    /// Passes over the text header, if the file has one: everything up to and including the
    /// first form feed. A record starts with a zero byte (its size word is small), a header
    /// with text.
    fn skip_header(&mut self) -> Result<(), TraceError> {
        self.header_read = true;
        let first = match self.input.fill_buf() {
            Ok(buffered) => buffered.first().copied(),
            Err(e) => return Err(self.file_error(format!("read error: {e}"))),
        };
        if first.is_none_or(|b| b == 0) {
            return Ok(());
        }
        let mut header = Vec::new();
        let read = (&mut self.input)
            .take(MAX_HEADER_BYTES)
            .read_until(FORM_FEED, &mut header)
            .map_err(|e| self.file_error(format!("read error in the text header: {e}")))?;
        if header.last() != Some(&FORM_FEED) {
            return Err(self.file_error(format!(
                "not an HP SRT trace: it starts with a nonzero byte, so with a text header, but \
                 no form feed (0x0C) ends a header in the first {read} bytes (a headerless \
                 file starts with a record, whose first byte is 0)"
            )));
        }
        self.byte_offset = read as u64;
        Ok(())
    }

    /// The next short I/O record as a request.
    fn next_request(&mut self) -> Result<Option<TraceRecord>, Fault> {
        loop {
            self.record_offset = self.byte_offset;
            self.record.clear();
            self.record.resize(RECORD_HEAD_BYTES, 0);
            let filled = read_full(&mut *self.input, &mut self.record)
                .map_err(|e| self.fault(format!("read error: {e}"), false))?;
            if filled == 0 {
                return Ok(None);
            }
            self.records += 1;
            if filled < RECORD_HEAD_BYTES {
                self.record.truncate(filled);
                return Err(self.fault(
                    format!("truncated record ({filled} of at least {RECORD_HEAD_BYTES} bytes)"),
                    true,
                ));
            }
            let head = record_head(&self.record).map_err(|m| self.fault(m, false))?;
            self.record.resize(head.size as usize, 0);
            let body = read_full(&mut *self.input, &mut self.record[RECORD_HEAD_BYTES..])
                .map_err(|e| self.fault(format!("read error: {e}"), false))?;
            if body < head.size as usize - RECORD_HEAD_BYTES {
                let got = RECORD_HEAD_BYTES + body;
                self.record.truncate(got);
                return Err(self.fault(
                    format!("truncated record ({got} of {} bytes)", head.size),
                    true,
                ));
            }
            self.byte_offset += u64::from(head.size);
            match head.kind {
                TYPE_SHORT_IO => {}
                TYPE_SUSPECT_IO => {
                    // An I/O the tracer flagged as failed or dubious; DiskSim passes over it.
                    self.skipped_events += 1;
                    continue;
                }
                other => {
                    return Err(self.fault(
                        format!(
                            "record type {other} (version {}) is not an I/O record (short I/O \
                             = 1, suspect I/O = 4)",
                            head.version
                        ),
                        true,
                    ))
                }
            }
            let r = &self.record;
            let (seconds, micros) = (word(r, 2), word(r, 3));
            if micros >= 1_000_000 {
                return Err(self.fault(
                    format!("microseconds word {micros} is not below one second"),
                    true,
                ));
            }
            let flags = word(r, 11);
            return Ok(Some(TraceRecord {
                time_ns: u64::from(seconds) * 1_000_000_000 + u64::from(micros) * 1_000,
                // DiskSim's reading of the HP-UX device number: bits 8 to 15.
                device: (word(r, 8) >> 8) & 0xff,
                stream: (word(r, 8) >> 8) & 0xff,
                offset_bytes: u64::from(word(r, 7)) * SECTOR_BYTES,
                size_bytes: u64::from(word(r, 6)),
                op: if flags & FLAG_READ != 0 {
                    Op::Read
                } else {
                    Op::Write
                },
            }));
        }
    }

    fn bad_record(&mut self, fault: Fault) -> Result<(), TraceError> {
        if fault.skippable && self.bad_lines < self.max_bad_lines {
            self.bad_lines += 1;
            Ok(())
        } else {
            Err(fault.error)
        }
    }
}

impl TraceReader for HpSrtReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if !self.header_read {
            self.skip_header()?;
        }
        loop {
            match self.next_request() {
                Ok(None) => return Ok(None),
                Ok(Some(mut record)) => match self.checks.check(&mut record) {
                    Ok(()) => return Ok(Some(record)),
                    Err(message) => {
                        let fault = self.fault(message, true);
                        self.bad_record(fault)?;
                    }
                },
                Err(fault) => self.bad_record(fault)?,
            }
        }
    }

    fn format(&self) -> TraceFormat {
        TraceFormat::HpSrt
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    fn skipped_events(&self) -> u64 {
        self.skipped_events
    }

    fn clamped_backsteps(&self) -> u64 {
        self.checks.clamped_backsteps()
    }

    fn notes(&self) -> super::ReaderNotes {
        self.checks.notes()
    }
}
