//! The three five-column ASCII layouts of the SSD simulators: MQSim, SSDsim and DiskSim.

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_decimal_scaled, parse_u64, sectors_to_bytes, show, whitespace_fields,
    LineError, LineLayout, LineReader, Parsed, SECTOR_BYTES,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

/// Line layout for MQSim, SSDsim and DiskSim (whitespace-separated, five columns).
pub(crate) struct AsciiLayout {
    format: TraceFormat,
}

impl AsciiLayout {
    pub fn new(format: TraceFormat) -> Self {
        AsciiLayout { format }
    }
}

impl LineLayout for AsciiLayout {
    const PURE: bool = true;

    fn format(&self) -> TraceFormat {
        self.format
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        if matches!(self.format, TraceFormat::Mqsim | TraceFormat::Ssdsim) {
            if let Some(record) = self.parse_plain_integers(line) {
                return Ok(Parsed::Record(record));
            }
        }
        self.parse_general(line)
    }

    #[inline]
    fn parse_start(&self, rest: &[u8]) -> Option<(TraceRecord, usize)> {
        if !matches!(self.format, TraceFormat::Mqsim | TraceFormat::Ssdsim) {
            return None;
        }
        let (values, len) = plain_line(rest)?;
        Some((plain_record(values)?, len))
    }
}

/// The digits at the start of `chunk` (eight bytes of text, the first in the low byte): how
/// many (0 to 8) and their value. Eight bytes at a time: the time and address columns run to
/// ten digits, and the loop a byte at a time cost about ten instructions a digit.
#[inline]
fn leading_digits(chunk: u64) -> (usize, u64) {
    // A byte's value as a digit; a borrow from a byte below '0' only reaches later bytes.
    let d = chunk.wrapping_sub(0x3030_3030_3030_3030);
    // The high bit of each byte that is no digit (below '0', or above '9': past 9 once 0x76
    // is added); in the bytes before the first such, the add carries nothing.
    let not_digit = (d | d.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080;
    let n = (not_digit.trailing_zeros() / 8) as usize;
    // Three of the five columns of a usual line are one digit.
    if n <= 1 {
        return (n, if n == 1 { d & 0xff } else { 0 });
    }
    // The digits to the high bytes, zeros (leading zeros of the number) below them, then
    // pairs, fours and the eight combined.
    let v = d << (64 - 8 * n);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let v = (v & 0x0000_00FF_0000_00FF)
        .wrapping_mul(0x000F_4240_0000_0064)
        .wrapping_add(((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(0x0000_2710_0000_0001))
        >> 32;
    (n, v)
}

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The integer of 1 to 19 digits at `rest[at..]` and where it ends; `None` for anything else,
/// or when fewer than eight bytes of `rest` follow a digit read.
#[inline]
fn integer_at(rest: &[u8], at: usize) -> Option<(u64, usize)> {
    let chunk = |at: usize| {
        rest.get(at..at + 8)
            .map(|bytes| u64::from_le_bytes(bytes.try_into().expect("eight bytes")))
    };
    let (n, value) = leading_digits(chunk(at)?);
    if n < 8 {
        return (n > 0).then_some((value, at + n));
    }
    let (n, low) = leading_digits(chunk(at + 8)?);
    let value = value * POW10[n] + low;
    if n < 8 {
        return Some((value, at + 8 + n));
    }
    // Up to 19 digits: no overflow.
    let (n, low) = leading_digits(chunk(at + 16)?);
    (n <= 3).then(|| (value * POW10[n] + low, at + 16 + n))
}

/// The five columns of the line at the start of `rest` and the bytes it takes with its
/// newline, when it is five integers of 1 to 19 digits, one space or tab between two, and
/// `\n` or `\r\n` after the last (a line [`five_integers`] reads the same); `None` for
/// anything else, which is left to [`AsciiLayout::parse`].
#[inline]
fn plain_line(rest: &[u8]) -> Option<([u64; 5], usize)> {
    let mut values = [0u64; 5];
    let mut at = 0;
    for (i, value) in values.iter_mut().enumerate() {
        let (v, end) = integer_at(rest, at)?;
        *value = v;
        let after = *rest.get(end)?;
        at = end + 1;
        if i < 4 {
            if !is_blank(after) {
                return None;
            }
        } else if after == b'\r' {
            if rest.get(at) != Some(&b'\n') {
                return None;
            }
            at += 1;
        } else if after != b'\n' {
            return None;
        }
    }
    Some((values, at))
}

/// The record of an MQSim or SSDsim line's five integers, when they make one.
#[inline]
fn plain_record([time_ns, device, address, size, code]: [u64; 5]) -> Option<TraceRecord> {
    let device = u32::try_from(device).ok()?;
    let op = match code {
        0 => Op::Write,
        1 => Op::Read,
        _ => return None,
    };
    Some(TraceRecord {
        time_ns,
        device,
        stream: device,
        offset_bytes: address.checked_mul(SECTOR_BYTES)?,
        size_bytes: size.checked_mul(SECTOR_BYTES)?,
        op,
    })
}

/// Field separators of the fast path (other ASCII whitespace takes the general path).
#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The five fields of a line made only of unsigned integers of at most 19 digits (so no
/// overflow) separated by spaces or tabs; `None` for anything else. One pass over the bytes,
/// each a digit, a blank or the end of the fast path.
#[inline]
fn five_integers(line: &[u8]) -> Option<[u64; 5]> {
    let mut values = [0u64; 5];
    let mut fields = 0;
    let mut value = 0u64;
    let mut digits = 0;
    for &b in line {
        let digit = b.wrapping_sub(b'0');
        if digit <= 9 {
            // Wraps only past 19 digits, and such a field is refused below.
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
            digits += 1;
        } else if is_blank(b) {
            if digits > 0 {
                if digits > 19 || fields == values.len() {
                    return None;
                }
                values[fields] = value;
                fields += 1;
                value = 0;
                digits = 0;
            }
        } else {
            return None;
        }
    }
    if digits > 0 {
        if digits > 19 || fields == values.len() {
            return None;
        }
        values[fields] = value;
        fields += 1;
    }
    (fields == values.len()).then_some(values)
}

impl AsciiLayout {
    /// Fast path for MQSim and SSDsim lines (most trace lines): one pass over the bytes. It
    /// returns a record only when the general path would return the same one; anything else
    /// (including every error) goes to [`AsciiLayout::parse_general`], which words the errors.
    #[inline]
    fn parse_plain_integers(&self, line: &[u8]) -> Option<TraceRecord> {
        plain_record(five_integers(line)?)
    }

    fn parse_general(&self, line: &[u8]) -> Result<Parsed, LineError> {
        let mut fields = whitespace_fields(line);
        let mut next = |name: &str| {
            fields
                .next()
                .ok_or_else(|| LineError::bad(format!("missing column `{name}`")))
        };
        let time = next("time")?;
        let device = next("device")?;
        let address = next("address")?;
        let size = next("size")?;
        let kind = next("type")?;
        if fields.next().is_some() {
            return Err(LineError::bad("more than five columns"));
        }
        let int = |text: &[u8], name: &str| {
            parse_u64(text).ok_or_else(|| {
                LineError::bad(format!(
                    "column `{name}` is not a non-negative integer: {:?}",
                    show(text)
                ))
            })
        };
        let time_ns = match self.format {
            // DiskSim times are decimal milliseconds; six decimals reach the nanosecond.
            TraceFormat::Disksim => parse_decimal_scaled(time, 6).ok_or_else(|| {
                LineError::bad(format!(
                    "column `time` is not a non-negative decimal number of milliseconds: {:?}",
                    show(time)
                ))
            })?,
            _ => int(time, "time (ns)")?,
        };
        let device = u32::try_from(int(device, "device")?)
            .map_err(|_| LineError::bad("device number does not fit in 32 bits"))?;
        let offset_bytes = sectors_to_bytes(int(address, "address (sectors)")?, "address")?;
        let size_bytes = sectors_to_bytes(int(size, "size (sectors)")?, "size")?;
        let code = int(kind, "type")?;
        let op = match self.format {
            TraceFormat::Mqsim | TraceFormat::Ssdsim => match code {
                0 => Op::Write,
                1 => Op::Read,
                _ => {
                    return Err(LineError::bad(
                        "column `type` must be 0 (write) or 1 (read)",
                    ))
                }
            },
            _ => {
                if code & 1 == 1 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
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

/// Reader for MQSim, SSDsim and DiskSim ASCII traces.
pub struct AsciiReader {
    inner: LineReader<AsciiLayout>,
}

impl AsciiReader {
    /// `format` must be one of the three ASCII layouts; any other value reads as DiskSim flags.
    pub fn new(path: PathBuf, input: Box<dyn BufRead>, format: TraceFormat) -> Self {
        Self::with_options(path, input, format, &ReaderOptions::default())
    }

    pub fn with_options(
        path: PathBuf,
        input: Box<dyn BufRead>,
        format: TraceFormat,
        options: &ReaderOptions,
    ) -> Self {
        AsciiReader {
            inner: LineReader::new(path, input, AsciiLayout::new(format), options),
        }
    }
}

line_reader_impl!(AsciiReader);

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path returns exactly what the general path returns, or leaves the line to it.
    #[test]
    fn fast_path_agrees_with_the_general_path() {
        let lines: [&[u8]; 22] = [
            b"0 0 0 8 1",
            b"1234567890123456789 0 8 8 1",
            b"12345678901234567890 0 8 8 1",
            b"1 0 8 8 1 ",
            b" 1 0 8 8 1 \t",
            b"1 0 8 8 1 1",
            b"",
            b"7657 0 127543800 8 1",
            b"\t12  3\t4 8 0  ",
            b"1 4294967295 8 8 0",
            b"1 4294967296 8 8 0",
            b"1 0 8 8 2",
            b"1 0 8 8",
            b"1 0 8 8 1 9",
            b"1 0 -8 8 1",
            b"1 0 8x 8 1",
            b"1.5 0 8 8 1",
            b"18446744073709551615 0 8 8 1",
            b"1 0 36028797018963968 8 1",
            b"1 0 8 8 1\x0c",
            b"99999999999999999999 0 8 8 1",
            b"1 0 0000000000000000000008 8 1",
        ];
        for format in [TraceFormat::Mqsim, TraceFormat::Ssdsim] {
            let layout = AsciiLayout::new(format);
            for line in lines {
                let general = match layout.parse_general(line) {
                    Ok(Parsed::Record(r)) => Some(r),
                    _ => None,
                };
                if let Some(fast) = layout.parse_plain_integers(line) {
                    assert_eq!(Some(fast), general, "{:?}", show(line));
                }
            }
            // The common shape does take the fast path, with the same values.
            assert_eq!(
                five_integers(b"7657 0 127543800 8 1"),
                Some([7657, 0, 127_543_800, 8, 1])
            );
            assert!(layout
                .parse_plain_integers(b"7657 0 127543800 8 1")
                .is_some());
        }
    }

    /// Reading in batches gives the records reading one at a time gives, and after each batch
    /// the counters and notes reading its first record gave (or the same error where the
    /// record would have been): blank lines, CRLF, a byte-order mark, bad lines, clamped and
    /// refused steps back, lines across the input buffer's end, an overlong line, no last
    /// newline.
    #[test]
    fn batches_read_what_single_records_read() {
        let mut text = String::from("\u{feff}");
        for i in 0..2000u64 {
            let t = i * 10_000_000;
            if i == 500 {
                // Far ahead: the next 150 records step back past the tolerance.
                text.push_str(&format!("{} 0 8 8 1\n", t + 1_500_000_000));
            }
            text.push_str(&match i % 53 {
                3 => "\n".to_string(),
                5 => "  \t\r\n".to_string(),
                7 => format!("{t} 0 {} 8 1\r\n", i * 8),
                11 => "not a record\n".to_string(),
                13 => format!("{} 0 8 8 1\n", t - 500),
                17 => format!("{} 1 8 8 0\n", t.saturating_sub(1_500_000_000)),
                19 => format!("{t}\t1  {} 16 0 \n", i * 16),
                23 => format!("{t} 0 8 0 1\n"),
                29 if i < 1000 => format!("{}\n", "9".repeat(70_000)),
                _ => format!("{t} {} {} 8 {}\n", i % 3, i * 8, i % 2),
            });
        }
        text.push_str("20000000000 0 8 8 1");
        crate::trace::common::assert_batches_read_what_single_records_read(
            &text,
            |input, options| {
                AsciiReader::with_options(
                    PathBuf::from("t.mqsim"),
                    input,
                    TraceFormat::Mqsim,
                    options,
                )
            },
        );
    }

    /// The one-pass line reader returns what `parse` returns for the line before the newline,
    /// and the line's length with its newline; it leaves to `parse` what it does not take.
    #[test]
    fn a_line_read_in_one_pass_is_the_line_parse_reads() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
        let mut lines: Vec<Vec<u8>> = [
            &b"7657 0 127543800 8 1\n"[..],
            b"0 0 0 1 0\n",
            b"1234567890123456789 4294967295 9999999999999999 99999999 1\r\n",
            b"12345678901234567890 0 8 8 1\n",
            b"1 4294967296 8 8 0\n",
            b"1 0 36028797018963968 8 1\n",
            b"1 0 36028797018963967 36028797018963967 1\n",
            b"1 0 8 8 2\n",
            b"1 0 8 8\n",
            b"1 0 8 8 1 \n",
            b"1  0 8 8 1\n",
            b"1\t0\t8\t8\t1\n",
            b" 1 0 8 8 1\n",
            b"1 0 8 8 1\r\r\n",
            b"1 0 8 8 1\r",
            b"1 0 8 8 1",
            b"1 0 -8 8 1\n",
            b"1 0 8x 8 1\n",
            b"1.5 0 8 8 1\n",
            b"00000000000000000001 0 8 8 1\n",
            b"0000000000000000001 0 8 8 1\n",
            b"1 0 8 8 1\x0c\n",
        ]
        .iter()
        .map(|l| l.to_vec())
        .collect();
        for _ in 0..20_000 {
            let mut line = Vec::new();
            for column in 0..5 {
                if column > 0 {
                    line.push(if rng.random_bool(0.9) { b' ' } else { b'\t' });
                }
                // The type column mostly 0 or 1, the device mostly short: records, not errors.
                let most = match column {
                    1 => 11,
                    4 if rng.random_bool(0.9) => 1,
                    _ => 21,
                };
                for _ in 0..rng.random_range(1..=most) {
                    let top = if column == 4 { 2 } else { 10 };
                    line.push(b'0' + rng.random_range(0..top));
                }
                if rng.random_bool(0.01) {
                    line.push(b"x:/ \x80"[rng.random_range(0..5)]);
                }
            }
            line.extend_from_slice(if rng.random_bool(0.9) { b"\n" } else { b"\r\n" });
            lines.push(line);
        }
        for format in [
            TraceFormat::Mqsim,
            TraceFormat::Ssdsim,
            TraceFormat::Disksim,
        ] {
            let mut layout = AsciiLayout::new(format);
            let mut taken = 0;
            for line in &lines {
                // As in the input's buffer: the next line follows.
                let mut rest = line.clone();
                rest.extend_from_slice(b"1 0 8 8 1\n");
                let Some((record, len)) = layout.parse_start(&rest) else {
                    continue;
                };
                taken += 1;
                assert_eq!(&rest[len - 1..len], b"\n", "{:?}", show(line));
                assert_eq!(len, line.len(), "{:?}", show(line));
                let text = line.strip_suffix(b"\n").unwrap();
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                match layout.parse(1, text) {
                    Ok(Parsed::Record(expected)) => assert_eq!(record, expected),
                    _ => panic!("{:?}: parse refuses it", show(line)),
                }
            }
            // Most generated lines have columns of at most 19 digits and take the one pass.
            let plain = format != TraceFormat::Disksim;
            assert_eq!(taken > 2_000, plain, "{format:?}: {taken}");
        }
    }
}
