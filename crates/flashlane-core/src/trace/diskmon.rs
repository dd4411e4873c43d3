//! Windows Sysinternals DiskMon log, as saved from its list view: seven tab-separated columns
//! `#  Time  Duration  Disk  Request  Sector  Length`.
//!
//! `#` is DiskMon's sequence number (ignored); `Time` is seconds since capture start as a
//! decimal (`12.345678`) or, when DiskMon stamps absolute times, a clock time
//! `H:MM:SS[.frac]` with an optional ` AM`/` PM` (taken as time since midnight; a log crossing
//! midnight steps back and is refused by the back-step check); `Duration` is the service time
//! in seconds (ignored: flashlane simulates it); `Disk` the disk number; `Request` `Read` or
//! `Write` (any case); `Sector` the first 512-byte sector; `Length` the size in sectors.
//! The column header, if saved, is accepted as the first line only.

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_decimal_scaled, parse_u32, parse_u64, sectors_to_bytes, show, trim,
    LineError, LineLayout, LineReader, Parsed,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

const FIELDS: usize = 7;
const NS_PER_SECOND: u64 = 1_000_000_000;

pub(crate) struct DiskmonLayout {
    /// The column header is accepted only as the first non-blank line.
    first_line_seen: bool,
}

impl DiskmonLayout {
    pub fn new() -> Self {
        DiskmonLayout {
            first_line_seen: false,
        }
    }
}

/// `H:MM:SS[.frac][ AM|PM]` as nanoseconds since midnight.
fn parse_clock_time(text: &[u8]) -> Option<u64> {
    let (clock, half_day) = match text.len().checked_sub(2).map(|i| text.split_at(i)) {
        Some((rest, suffix)) if suffix.eq_ignore_ascii_case(b"am") => (trim(rest), Some(0)),
        Some((rest, suffix)) if suffix.eq_ignore_ascii_case(b"pm") => (trim(rest), Some(12)),
        _ => (text, None),
    };
    let mut parts = clock.splitn(3, |&b| b == b':');
    let hours = parse_u64(parts.next()?)?;
    let minutes = parse_u64(parts.next()?)?;
    let seconds_ns = parse_decimal_scaled(parts.next()?, 9)?;
    let hours = match half_day {
        // 12 AM is midnight, 12 PM noon.
        Some(offset) if (1..=12).contains(&hours) => hours % 12 + offset,
        Some(_) => return None,
        None if hours < 24 => hours,
        None => return None,
    };
    if minutes >= 60 || seconds_ns >= 60 * NS_PER_SECOND {
        return None;
    }
    Some((hours * 60 + minutes) * 60 * NS_PER_SECOND + seconds_ns)
}

impl LineLayout for DiskmonLayout {
    fn format(&self) -> TraceFormat {
        TraceFormat::Diskmon
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        let mut fields: [&[u8]; FIELDS] = [&[]; FIELDS];
        let mut count = 0;
        // DiskMon's "Save" ends every line with a tab (and maybe spaces): an empty last column,
        // not an eighth one.
        let line = line.trim_ascii_end();
        for field in line.split(|&b| b == b'\t') {
            if count == FIELDS {
                return Err(LineError::bad(format!(
                    "expected {FIELDS} tab-separated columns, found more"
                )));
            }
            fields[count] = trim(field);
            count += 1;
        }
        if count != FIELDS {
            return Err(LineError::bad(format!(
                "expected {FIELDS} tab-separated columns \
                 (#, Time, Duration, Disk, Request, Sector, Length), found {count}"
            )));
        }
        let [sequence, time, _duration, disk, request, sector, length] = fields;
        let is_first_line = !std::mem::replace(&mut self.first_line_seen, true);
        if is_first_line && request.eq_ignore_ascii_case(b"request") {
            return Ok(Parsed::Ignored);
        }
        let not_integer = |name: &str, text: &[u8]| {
            LineError::bad(format!(
                "column `{name}` is not a non-negative integer: {:?}",
                show(text)
            ))
        };
        parse_u64(sequence).ok_or_else(|| not_integer("#", sequence))?;
        let time_ns = if memchr::memchr(b':', time).is_some() {
            parse_clock_time(time)
        } else {
            parse_decimal_scaled(time, 9)
        }
        .ok_or_else(|| {
            LineError::bad(format!(
                "column `Time` is neither decimal seconds nor a clock time H:MM:SS[.frac] \
                 [AM|PM]: {:?}",
                show(time)
            ))
        })?;
        let device = parse_u32(disk).ok_or_else(|| not_integer("Disk", disk))?;
        let op = if request.eq_ignore_ascii_case(b"read") {
            Op::Read
        } else if request.eq_ignore_ascii_case(b"write") {
            Op::Write
        } else {
            return Err(LineError::bad(format!(
                "column `Request` must be Read or Write: {:?}",
                show(request)
            )));
        };
        let offset_bytes = sectors_to_bytes(
            parse_u64(sector).ok_or_else(|| not_integer("Sector", sector))?,
            "Sector",
        )?;
        let size_bytes = sectors_to_bytes(
            parse_u64(length).ok_or_else(|| not_integer("Length (sectors)", length))?,
            "Length",
        )?;
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

/// Streaming reader for DiskMon logs.
pub struct DiskmonReader {
    inner: LineReader<DiskmonLayout>,
}

impl DiskmonReader {
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, options: &ReaderOptions) -> Self {
        DiskmonReader {
            inner: LineReader::new(path, input, DiskmonLayout::new(), options),
        }
    }
}

line_reader_impl!(DiskmonReader);

#[cfg(test)]
mod tests {
    use super::parse_clock_time;

    #[test]
    fn clock_times() {
        let s = 1_000_000_000u64;
        assert_eq!(parse_clock_time(b"0:00:01.5"), Some(s + s / 2));
        assert_eq!(
            parse_clock_time(b"13:02:03"),
            Some((13 * 3600 + 2 * 60 + 3) * s)
        );
        assert_eq!(
            parse_clock_time(b"1:02:03 PM"),
            Some((13 * 3600 + 2 * 60 + 3) * s)
        );
        assert_eq!(parse_clock_time(b"12:00:00 AM"), Some(0));
        assert_eq!(parse_clock_time(b"12:00:00 pm"), Some(12 * 3600 * s));
        assert_eq!(parse_clock_time(b"13:00:00 PM"), None);
        assert_eq!(parse_clock_time(b"24:00:00"), None);
        assert_eq!(parse_clock_time(b"1:60:00"), None);
        assert_eq!(parse_clock_time(b"1:00"), None);
    }
}
