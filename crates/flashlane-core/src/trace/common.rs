//! Machinery shared by the text readers: bounded line reading, exact number parsing, the
//! sanity checks every record passes, and the bad-line policy.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::{TraceError, TraceFormat, TraceRecord};

pub(crate) const SECTOR_BYTES: u64 = 512;
/// Largest request accepted; anything bigger is a corrupt field, not a real I/O.
pub(crate) const MAX_REQUEST_BYTES: u64 = 1 << 30;
/// First byte offset treated as absurd (1 EiB): no real device is that large.
pub(crate) const MAX_OFFSET_BYTES: u64 = 1 << 60;
/// Longest line read; a longer one is a bad line (it keeps binary junk from filling memory).
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;
/// How much of an error's line text is kept in the message.
const MAX_ERROR_TEXT: usize = 256;

/// What one text line turned out to be.
pub(crate) enum Parsed {
    /// A block request.
    Record(TraceRecord),
    /// A line the layout knows and that carries no request (header, comment, other event type).
    Ignored,
    /// A request-like event that is not a read or a write (trim, flush, discard): dropped and
    /// counted so the caller can report how many.
    SkippedEvent,
}

/// Why a line was rejected. `fatal` errors end the trace even when bad lines may be skipped
/// (e.g. a missing header: every later line would be misread).
pub(crate) struct LineError {
    pub message: String,
    pub fatal: bool,
}

impl LineError {
    pub fn bad(message: impl Into<String>) -> Self {
        LineError {
            message: message.into(),
            fatal: false,
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        LineError {
            message: message.into(),
            fatal: true,
        }
    }
}

/// One line-oriented layout: turns a line (without its newline) into a [`Parsed`].
pub(crate) trait LineLayout {
    /// Once a record has been read, `parse` depends on the line alone and changes no state of
    /// the layout: the reader may parse a line, leave it unread and parse it again (see
    /// [`LineReader::next_records`], which reads in batches only after the first record).
    const PURE: bool = false;
    fn format(&self) -> TraceFormat;
    /// `line_number` is 1-based; blank lines never reach the layout.
    fn parse(&mut self, line_number: u64, line: &[u8]) -> Result<Parsed, LineError>;
    /// The record `parse` returns for the line at the start of `rest` (the input's buffer from
    /// a line's start) and the bytes the line takes with its newline, for lines of a shape
    /// the layout reads in one pass, newline included; `None` leaves the line to `parse`.
    /// Called only when [`LineLayout::PURE`].
    #[inline]
    fn parse_start(&self, rest: &[u8]) -> Option<(TraceRecord, usize)> {
        let _ = rest;
        None
    }
}

/// Checks every record passes, whatever its layout, and the time back-step policy.
#[derive(Debug, Clone)]
pub(crate) struct RecordChecks {
    last_time_ns: Option<u64>,
    backstep_tolerance_ns: u64,
    clamped_backsteps: u64,
    largest_clamped_backstep_ns: u64,
    /// Records refused as too far back from the current `last_time_ns`, and the largest such
    /// group so far (time of the record they stepped back from, count).
    backwards_now: u64,
    backwards_largest: Option<(u64, u64)>,
}

impl RecordChecks {
    pub fn new(backstep_tolerance_ns: u64) -> Self {
        RecordChecks {
            last_time_ns: None,
            backstep_tolerance_ns,
            clamped_backsteps: 0,
            largest_clamped_backstep_ns: 0,
            backwards_now: 0,
            backwards_largest: None,
        }
    }

    pub fn clamped_backsteps(&self) -> u64 {
        self.clamped_backsteps
    }

    /// The back-step figures of [`super::ReaderNotes`].
    pub fn notes(&self) -> super::ReaderNotes {
        super::ReaderNotes {
            largest_clamped_backstep_ns: self.largest_clamped_backstep_ns,
            backwards_after_one_record: self.backwards_largest,
            missing_cpu_files: Vec::new(),
        }
    }

    /// [`RecordChecks::check`] for a record it passes unchanged: true, with the same change of
    /// state; otherwise false and nothing changed (the record is left to `check`).
    #[inline]
    pub fn check_unchanged(&mut self, record: &TraceRecord) -> bool {
        let passes = record.size_bytes != 0
            && record.size_bytes <= MAX_REQUEST_BYTES
            && record.offset_bytes < MAX_OFFSET_BYTES
            && self.last_time_ns.is_none_or(|last| record.time_ns >= last);
        if passes {
            if self.last_time_ns != Some(record.time_ns) {
                self.backwards_now = 0;
            }
            self.last_time_ns = Some(record.time_ns);
        }
        passes
    }

    /// Rejects absurd values; clamps a small step back in time to the previous time.
    pub fn check(&mut self, record: &mut TraceRecord) -> Result<(), String> {
        if record.size_bytes == 0 {
            return Err("request size is zero".into());
        }
        if record.size_bytes > MAX_REQUEST_BYTES {
            return Err(format!(
                "request size {} bytes exceeds the 1 GiB limit",
                record.size_bytes
            ));
        }
        if record.offset_bytes >= MAX_OFFSET_BYTES {
            return Err(format!(
                "offset {} bytes is at or beyond 2^60 bytes",
                record.offset_bytes
            ));
        }
        if let Some(last) = self.last_time_ns {
            if record.time_ns < last {
                let back = last - record.time_ns;
                if back > self.backstep_tolerance_ns {
                    // `last_time_ns` stays: every refusal until time catches up is against it.
                    self.backwards_now += 1;
                    if self
                        .backwards_largest
                        .is_none_or(|(_, n)| self.backwards_now > n)
                    {
                        self.backwards_largest = Some((last, self.backwards_now));
                    }
                    return Err(format!(
                        "time goes backwards by {back} ns (previous record at {last} ns, \
                         tolerance {} ns)",
                        self.backstep_tolerance_ns
                    ));
                }
                record.time_ns = last;
                self.clamped_backsteps += 1;
                self.largest_clamped_backstep_ns = self.largest_clamped_backstep_ns.max(back);
            }
        }
        if self.last_time_ns != Some(record.time_ns) {
            self.backwards_now = 0;
        }
        self.last_time_ns = Some(record.time_ns);
        Ok(())
    }
}

/// The UTF-8 byte order mark some tools (Windows editors, spreadsheet exports) put at the start
/// of a text file: skipped on a trace's first line by every text layout.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Result of reading one bounded line.
enum LineRead {
    Eof,
    Line,
    /// Longer than [`MAX_LINE_BYTES`]; the rest of it was consumed and dropped.
    TooLong,
}

/// Reads one line into `buf` (without the `\n`), never holding more than `MAX_LINE_BYTES`.
fn read_bounded_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<LineRead> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(if too_long {
                LineRead::TooLong
            } else if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        match memchr::memchr(b'\n', available) {
            Some(end) => {
                if !too_long {
                    buf.extend_from_slice(&available[..end]);
                }
                input.consume(end + 1);
                if too_long || buf.len() > MAX_LINE_BYTES {
                    return Ok(LineRead::TooLong);
                }
                return Ok(LineRead::Line);
            }
            None => {
                let taken = available.len();
                if !too_long {
                    buf.extend_from_slice(available);
                    if buf.len() > MAX_LINE_BYTES {
                        too_long = true;
                        buf.truncate(MAX_ERROR_TEXT);
                    }
                }
                input.consume(taken);
            }
        }
    }
}

/// Error text for a line: lossy UTF-8, cut to a readable length.
pub(crate) fn line_text(line: &[u8]) -> String {
    let cut = &line[..line.len().min(MAX_ERROR_TEXT)];
    String::from_utf8_lossy(cut).into_owned()
}

/// Drives a [`LineLayout`] over a stream: line numbering, blank lines, checks, bad lines.
pub(crate) struct LineReader<L: LineLayout> {
    path: PathBuf,
    input: Box<dyn BufRead>,
    layout: L,
    buf: Vec<u8>,
    line_number: u64,
    checks: RecordChecks,
    max_bad_lines: u64,
    bad_lines: u64,
    skipped_events: u64,
    /// Lines the layout recognised (requests or known non-request events); used by detection.
    recognised_lines: u64,
}

impl<L: LineLayout> LineReader<L> {
    pub fn new(
        path: PathBuf,
        input: Box<dyn BufRead>,
        layout: L,
        options: &super::ReaderOptions,
    ) -> Self {
        LineReader {
            path,
            input,
            layout,
            buf: Vec::with_capacity(256),
            line_number: 0,
            checks: RecordChecks::new(options.backstep_tolerance_ns),
            max_bad_lines: options.max_bad_lines,
            bad_lines: 0,
            skipped_events: 0,
            recognised_lines: 0,
        }
    }

    pub fn layout(&self) -> &L {
        &self.layout
    }

    fn line_error(&self, message: String) -> TraceError {
        TraceError::Line {
            path: self.path.clone(),
            line: self.line_number,
            text: line_text(&self.buf),
            message,
        }
    }

    /// Counts a bad line if the budget allows, else turns it into the error to return.
    fn bad_line(&mut self, error: LineError) -> Result<(), TraceError> {
        if !error.fatal && self.bad_lines < self.max_bad_lines {
            self.bad_lines += 1;
            return Ok(());
        }
        let message = if self.max_bad_lines > 0 && !error.fatal {
            format!(
                "{} (bad line {} of at most {} allowed)",
                error.message,
                self.bad_lines + 1,
                self.max_bad_lines
            )
        } else {
            error.message
        };
        Err(self.line_error(message))
    }

    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            // Fast path: the whole line sits in the input's buffer, so it is parsed in place,
            // without copying it out first. Errors copy the line (their message quotes it) and
            // go the common way; lines across the buffer's end take the slow path below.
            let Ok(available) = self.input.fill_buf() else {
                return self.next_record_copied();
            };
            let Some(end) = memchr::memchr(b'\n', available) else {
                return self.next_record_copied();
            };
            if end > MAX_LINE_BYTES {
                return self.next_record_copied();
            }
            self.line_number += 1;
            let mut line = &available[..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            if self.line_number == 1 {
                line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                self.input.consume(end + 1);
                continue;
            }
            let outcome = match self.layout.parse(self.line_number, line) {
                Ok(Parsed::Record(mut record)) => match self.checks.check(&mut record) {
                    Ok(()) => Ok(Some(record)),
                    Err(message) => Err(LineError::bad(message)),
                },
                Ok(Parsed::Ignored) => Ok(None),
                Ok(Parsed::SkippedEvent) => {
                    self.skipped_events += 1;
                    Ok(None)
                }
                Err(error) => Err(error),
            };
            match outcome {
                Ok(record) => {
                    self.input.consume(end + 1);
                    self.recognised_lines += 1;
                    if record.is_some() {
                        return Ok(record);
                    }
                }
                Err(error) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(line);
                    self.input.consume(end + 1);
                    self.bad_line(error)?;
                }
            }
        }
    }

    /// [`super::TraceReader::next_records`]: with a pure layout (and past the first line,
    /// which may carry a byte-order mark), the whole lines in the input's buffer that are
    /// blank, ignored, or records the checks pass unchanged, up to `max` records: none of them
    /// moves a counter. The first line that is anything else is left unread; when no record
    /// came before it, it goes through [`LineReader::next_record`] alone, which words any error.
    pub fn next_records(
        &mut self,
        out: &mut Vec<TraceRecord>,
        max: usize,
    ) -> Result<(), TraceError> {
        if L::PURE && self.line_number > 0 {
            let Ok(available) = self.input.fill_buf() else {
                // As `next_record` does on a failed read.
                out.extend(self.next_record_copied()?);
                return Ok(());
            };
            let mut used = 0;
            let mut taken = 0;
            while taken < max {
                let rest = &available[used..];
                if let Some((record, len)) = self.layout.parse_start(rest) {
                    if !self.checks.check_unchanged(&record) {
                        break;
                    }
                    out.push(record);
                    taken += 1;
                    self.recognised_lines += 1;
                    self.line_number += 1;
                    used += len;
                    continue;
                }
                let Some(end) = memchr::memchr(b'\n', rest) else {
                    break;
                };
                if end > MAX_LINE_BYTES {
                    break;
                }
                let mut line = &rest[..end];
                if let [head @ .., b'\r'] = line {
                    line = head;
                }
                if !line.iter().all(u8::is_ascii_whitespace) {
                    match self.layout.parse(self.line_number + 1, line) {
                        Ok(Parsed::Record(record)) if self.checks.check_unchanged(&record) => {
                            out.push(record);
                            taken += 1;
                        }
                        Ok(Parsed::Ignored) => {}
                        _ => break,
                    }
                    self.recognised_lines += 1;
                }
                self.line_number += 1;
                used += end + 1;
            }
            self.input.consume(used);
            if taken > 0 {
                return Ok(());
            }
        }
        out.extend(self.next_record()?);
        Ok(())
    }

    /// The next record, reading lines through [`read_bounded_line`] (a copy per line): for
    /// lines that cross the end of the input's buffer, overlong lines and the last line.
    #[cold]
    fn next_record_copied(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            let read = read_bounded_line(&mut *self.input, &mut self.buf);
            self.line_number += 1;
            match read {
                Err(e) => {
                    self.buf.clear();
                    return Err(self.line_error(format!("read error: {e}")));
                }
                Ok(LineRead::Eof) => return Ok(None),
                Ok(LineRead::TooLong) => {
                    self.bad_line(LineError::bad(format!(
                        "line longer than {MAX_LINE_BYTES} bytes"
                    )))?;
                    continue;
                }
                Ok(LineRead::Line) => {}
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            if self.line_number == 1 && self.buf.starts_with(UTF8_BOM) {
                self.buf.drain(..UTF8_BOM.len());
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match self.layout.parse(self.line_number, &self.buf) {
                Ok(Parsed::Record(mut record)) => match self.checks.check(&mut record) {
                    Ok(()) => {
                        self.recognised_lines += 1;
                        return Ok(Some(record));
                    }
                    Err(message) => self.bad_line(LineError::bad(message))?,
                },
                Ok(Parsed::Ignored) => self.recognised_lines += 1,
                Ok(Parsed::SkippedEvent) => {
                    self.recognised_lines += 1;
                    self.skipped_events += 1;
                }
                Err(error) => self.bad_line(error)?,
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    pub fn skipped_events(&self) -> u64 {
        self.skipped_events
    }

    pub fn clamped_backsteps(&self) -> u64 {
        self.checks.clamped_backsteps()
    }

    pub fn notes(&self) -> super::ReaderNotes {
        self.checks.notes()
    }

    pub fn recognised_lines(&self) -> u64 {
        self.recognised_lines
    }
}

/// Implements [`super::TraceReader`] for a wrapper `struct $name { inner: LineReader<_> }`.
macro_rules! line_reader_impl {
    ($name:ident) => {
        impl $crate::trace::TraceReader for $name {
            fn next_record(
                &mut self,
            ) -> Result<Option<$crate::trace::TraceRecord>, $crate::trace::TraceError> {
                self.inner.next_record()
            }
            fn next_records(
                &mut self,
                out: &mut Vec<$crate::trace::TraceRecord>,
                max: usize,
            ) -> Result<(), $crate::trace::TraceError> {
                self.inner.next_records(out, max)
            }
            fn format(&self) -> $crate::trace::TraceFormat {
                $crate::trace::common::LineLayout::format(self.inner.layout())
            }
            fn path(&self) -> &std::path::Path {
                self.inner.path()
            }
            fn bad_lines(&self) -> u64 {
                self.inner.bad_lines()
            }
            fn skipped_events(&self) -> u64 {
                self.inner.skipped_events()
            }
            fn clamped_backsteps(&self) -> u64 {
                self.inner.clamped_backsteps()
            }
            fn notes(&self) -> $crate::trace::ReaderNotes {
                self.inner.notes()
            }
        }
    };
}
pub(crate) use line_reader_impl;

/// Parses a non-empty run of ASCII digits. `None` on anything else or on overflow.
#[inline]
pub(crate) fn parse_u64(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    // 19 digits cannot overflow u64, so the common case skips the checked arithmetic.
    if text.len() <= 19 {
        let mut value: u64 = 0;
        for &b in text {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value * 10 + u64::from(digit);
        }
        return Some(value);
    }
    let mut value: u64 = 0;
    for &b in text {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some(value)
}

pub(crate) fn parse_u32(text: &[u8]) -> Option<u32> {
    parse_u64(text).and_then(|v| u32::try_from(v).ok())
}

/// Parses a non-negative decimal `I[.F]` exactly as the integer `I * 10^scale + F'` where `F'`
/// is `F` padded or truncated to `scale` digits (digits finer than the target unit are dropped).
/// No signs, exponents or spaces: those are errors, not guesses.
pub(crate) fn parse_decimal_scaled(text: &[u8], scale: u32) -> Option<u64> {
    let (int_part, frac_part) = match memchr::memchr(b'.', text) {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &[][..]),
    };
    if int_part.is_empty() {
        return None;
    }
    let mut value = parse_u64(int_part)?.checked_mul(10u64.checked_pow(scale)?)?;
    let mut place = 10u64.pow(scale);
    for &b in frac_part {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        place /= 10;
        value = value.checked_add(u64::from(digit) * place)?;
    }
    Some(value)
}

/// Splits on runs of ASCII whitespace.
pub(crate) fn whitespace_fields(line: &[u8]) -> WhitespaceFields<'_> {
    WhitespaceFields { rest: line }
}

/// Iterator of [`whitespace_fields`]: the non-empty runs between ASCII whitespace. A plain
/// byte loop (every trace line goes through it; `split` + `filter` was slower).
pub(crate) struct WhitespaceFields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for WhitespaceFields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest;
        let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let len = rest[start..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len() - start);
        self.rest = &rest[start + len..];
        Some(&rest[start..start + len])
    }
}

/// Strips leading and trailing ASCII whitespace.
pub(crate) fn trim(field: &[u8]) -> &[u8] {
    let start = field
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(field.len());
    let end = field
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &field[start..end.max(start)]
}

/// `sectors * 512`, or an error naming the field.
pub(crate) fn sectors_to_bytes(sectors: u64, what: &str) -> Result<u64, LineError> {
    sectors
        .checked_mul(SECTOR_BYTES)
        .ok_or_else(|| LineError::bad(format!("{what} overflows 64-bit bytes")))
}

/// Fills `buf` from `input` as far as the input goes; returns the bytes read (fewer than
/// `buf.len()` only at the end of the input). For the binary layouts' fixed-size records.
pub(crate) fn read_full(input: &mut dyn BufRead, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Bytes as lowercase hex: a binary record's text in an error message.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Shows a field in an error message.
pub(crate) fn show(field: &[u8]) -> String {
    line_text(field)
}

/// Test helper: reading `text` in batches gives the records reading one at a time gives, and
/// after each batch the counters and notes reading its first record gave (or the same error
/// where the record would have been), under several `max_bad_lines`, input buffer sizes and
/// batch limits. `open(input, options)` opens a reader of the layout under test.
#[cfg(test)]
pub(crate) fn assert_batches_read_what_single_records_read<R: super::TraceReader>(
    text: &str,
    open: impl Fn(Box<dyn BufRead>, &super::ReaderOptions) -> R,
) {
    for max_bad_lines in [0, 30, 1000] {
        let options = super::ReaderOptions {
            max_bad_lines,
            ..super::ReaderOptions::default()
        };
        let input = |capacity: usize| -> Box<dyn BufRead> {
            Box::new(std::io::BufReader::with_capacity(
                capacity,
                std::io::Cursor::new(text.as_bytes().to_vec()),
            ))
        };
        assert_batches_match(|capacity| open(input(capacity), &options));
    }
}

/// [`assert_batches_read_what_single_records_read`] for one reader: `open(capacity)` opens the
/// trace over an input buffer of that many bytes.
#[cfg(test)]
fn assert_batches_match<R: super::TraceReader>(open: impl Fn(usize) -> R) {
    let state = |reader: &R| (reader.counters(), reader.notes());
    // One at a time: each record, and the state after it; then the end or the error.
    let mut single = open(1 << 16);
    let mut expected = Vec::new();
    let end = loop {
        match single.next_record() {
            Ok(Some(record)) => expected.push((record, state(&single))),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    for (capacity, max) in [(1 << 16, 128), (1 << 16, 1), (100, 3), (4096, 128)] {
        let mut batched = open(capacity);
        let mut got = 0;
        let mut out = Vec::new();
        let batch_end = loop {
            out.clear();
            match batched.next_records(&mut out, max) {
                Ok(()) if out.is_empty() => break Ok(()),
                Ok(()) => {
                    assert!(out.len() <= max);
                    let (_, first_state) = &expected[got];
                    assert_eq!(&state(&batched), first_state, "record {got}");
                    for record in &out {
                        assert_eq!(*record, expected[got].0, "record {got}");
                        got += 1;
                    }
                }
                Err(e) => break Err(e),
            }
        };
        assert_eq!(got, expected.len(), "capacity {capacity}, max {max}");
        assert_eq!(batch_end, end, "capacity {capacity}, max {max}");
        assert_eq!(state(&batched), state(&single));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_scaling_is_exact() {
        assert_eq!(
            parse_decimal_scaled(b"259.581547", 9),
            Some(259_581_547_000)
        );
        assert_eq!(parse_decimal_scaled(b"0.000000001", 9), Some(1));
        assert_eq!(
            parse_decimal_scaled(b"1.23456789012", 9),
            Some(1_234_567_890)
        );
        assert_eq!(parse_decimal_scaled(b"7", 6), Some(7_000_000));
        assert_eq!(parse_decimal_scaled(b"7.", 6), Some(7_000_000));
        assert_eq!(parse_decimal_scaled(b".5", 6), None);
        assert_eq!(parse_decimal_scaled(b"-1", 6), None);
        assert_eq!(parse_decimal_scaled(b"1e3", 6), None);
        assert_eq!(parse_decimal_scaled(b"99999999999999999999", 0), None);
        assert_eq!(parse_decimal_scaled(b"18446744073.709551616", 9), None);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"12a"), None);
        assert_eq!(trim(b"  a b \t"), b"a b");
        assert_eq!(trim(b"   "), b"");
    }

    #[test]
    fn whitespace_fields_match_split_and_filter() {
        for line in [
            &b""[..],
            b"   ",
            b"a",
            b" a",
            b"a ",
            b"1 0 2 8 1",
            b"\t12  34\t\t5 \x0c6\r",
            b"x\x0by",
        ] {
            let ours: Vec<&[u8]> = whitespace_fields(line).collect();
            let reference: Vec<&[u8]> = line
                .split(u8::is_ascii_whitespace)
                .filter(|f| !f.is_empty())
                .collect();
            assert_eq!(ours, reference, "{line:?}");
        }
    }
}
