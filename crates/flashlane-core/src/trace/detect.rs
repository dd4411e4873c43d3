//! Layout detection from content: binary layouts are recognised by their first bytes; for text,
//! every layout's reader is run over the first lines and the layouts that read them without
//! error are the candidates. Exactly one must remain. Binary content of no supported layout,
//! and text no reader fits, are errors that say which layouts flashlane reads.

use std::io::{Cursor, Read};
use std::path::Path;

use super::ascii::AsciiLayout;
use super::blkparse::BlkparseLayout;
use super::blktrace::{blktrace_files, has_blktrace_magic};
use super::common::{LineLayout, LineReader};
use super::diskmon::DiskmonLayout;
use super::fio::FioLayout;
use super::hp_srt::has_hp_srt_records;
use super::msr::MsrLayout;
use super::spc::SpcLayout;
use super::{open_decompressed, BlockEvent, ReaderOptions, TraceError, TraceFormat};

/// At most this much decompressed text is examined ...
pub(crate) const SNIFF_BYTES: u64 = 64 * 1024;
/// ... and at most this many lines of it.
const SNIFF_LINES: usize = 100;

/// Layouts whose file-name extension may break a tie between layouts that all fit the content.
const EXTENSION_TIE_BREAKERS: &[TraceFormat] = &[
    TraceFormat::Mqsim,
    TraceFormat::Ssdsim,
    TraceFormat::Disksim,
];

/// Runs one layout over the sample; `Ok` with the malformed lines it skipped if every other
/// line reads (up to `max_bad_lines` may be skipped, as the reader would) and at least one is
/// recognised.
fn trial<L: LineLayout>(
    path: &Path,
    sample: &[u8],
    layout: L,
    max_bad_lines: u64,
) -> Result<u64, String> {
    let input = Box::new(Cursor::new(sample.to_vec()));
    let options = ReaderOptions {
        max_bad_lines,
        ..ReaderOptions::default()
    };
    let mut reader = LineReader::new(path.to_path_buf(), input, layout, &options);
    loop {
        match reader.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(TraceError::Line { line, message, .. }) => {
                return Err(format!("line {line}: {message}"))
            }
            Err(TraceError::File { message, .. }) => return Err(message),
        }
    }
    if reader.recognised_lines() == 0 {
        return Err("no line recognised".into());
    }
    Ok(reader.bad_lines())
}

fn trial_format(path: &Path, sample: &[u8], format: TraceFormat, bad: u64) -> Result<u64, String> {
    match format {
        TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim => {
            trial(path, sample, AsciiLayout::new(format), bad)
        }
        TraceFormat::Msr => trial(path, sample, MsrLayout::new(), bad),
        TraceFormat::Spc => trial(path, sample, SpcLayout, bad),
        TraceFormat::Blkparse => trial(path, sample, BlkparseLayout::new(BlockEvent::Issue), bad),
        TraceFormat::Fio => trial(path, sample, FioLayout::new(), bad),
        TraceFormat::Diskmon => trial(path, sample, DiskmonLayout::new(), bad),
        TraceFormat::Blktrace | TraceFormat::HpSrt | TraceFormat::GenericCsv => {
            Err("not detected from text".to_owned())
        }
    }
}

/// The `.mqsim`/`.ssdsim`/`.disksim` extension of `path`, ignoring a `.gz`/`.zst` suffix.
fn extension_format(path: &Path) -> Option<TraceFormat> {
    let name = path.file_name()?.to_str()?;
    let name = [".gz", ".zst", ".zstd"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(name);
    let (_, extension) = name.rsplit_once('.')?;
    EXTENSION_TIE_BREAKERS
        .iter()
        .copied()
        .find(|f| f.name() == extension)
}

/// Decides the layout of `path` from its content (after decompression).
///
/// A directory, or a prefix `DIR/NAME` of `NAME.blktrace.N` files, is a binary blktrace
/// capture; so is a file starting with the blktrace magic. A file of whole HP SRT records
/// (after an optional text header) is `hp-srt`. Other binary content (NUL bytes, or mostly
/// control and invalid UTF-8 bytes) is an error saying it is no supported layout. Text is
/// tried against every text layout (all but generic-csv). No fit, or several fits that the
/// file extension does not settle, is an error that names the layouts; generic-csv is
/// suggested only when the text is delimited columns.
///
/// This reads the start of `path`: for a pipe or standard input, whose bytes can be read only
/// once, open the trace with [`super::open_detected`], which detects on the same bytes it
/// then reads.
pub fn detect(path: &Path) -> Result<TraceFormat, TraceError> {
    detect_tolerating(path, 0)
}

/// As [`detect`], skipping up to `max_bad_lines` malformed lines of the sample per layout, as
/// the reader of that layout then does (`--max-bad-lines`).
pub fn detect_tolerating(path: &Path, max_bad_lines: u64) -> Result<TraceFormat, TraceError> {
    let error = |message: String| TraceError::File {
        path: path.to_path_buf(),
        message,
    };
    if !path.is_file() && (path.is_dir() || blktrace_files(path).is_ok()) {
        blktrace_files(path)?;
        return Ok(TraceFormat::Blktrace);
    }
    let input = open_decompressed(path)?;
    let mut sample = Vec::new();
    input
        .take(SNIFF_BYTES)
        .read_to_end(&mut sample)
        .map_err(|e| error(format!("read error: {e}")))?;
    detect_sample(path, &sample, max_bad_lines)
}

/// Decides the layout of `path` from `sample`, its first (at most [`SNIFF_BYTES`])
/// decompressed bytes.
pub(crate) fn detect_sample(
    path: &Path,
    sample: &[u8],
    max_bad_lines: u64,
) -> Result<TraceFormat, TraceError> {
    let error = |message: String| TraceError::File {
        path: path.to_path_buf(),
        message,
    };
    let mut sample = sample;
    if has_blktrace_magic(sample) {
        return Ok(TraceFormat::Blktrace);
    }
    if has_hp_srt_records(sample) {
        return Ok(TraceFormat::HpSrt);
    }
    if let Some(what) = binary_content(sample) {
        let hint = if what.contains("compressed") {
            "flashlane decompresses gzip and zstd only: decompress it first"
        } else {
            "gzip and zstd files are decompressed as they are read"
        };
        return Err(error(format!(
            "{what}: not a supported layout (binary layouts: {}; text layouts: {}; \
             docs/traces.md); {hint}",
            names(BINARY_LAYOUTS),
            names(TEXT_LAYOUTS),
        )));
    }
    // A text file may start with a byte order mark; the readers skip it too.
    sample = sample
        .strip_prefix(super::common::UTF8_BOM)
        .unwrap_or(sample);
    if sample.len() as u64 == SNIFF_BYTES {
        // The sample may end mid-line; judge whole lines only.
        let end = memchr::memrchr(b'\n', sample).map_or(0, |i| i + 1);
        sample = &sample[..end];
    }
    if let Some(end) = memchr::memchr_iter(b'\n', sample).nth(SNIFF_LINES - 1) {
        sample = &sample[..end + 1];
    }
    if sample.iter().all(u8::is_ascii_whitespace) {
        return Err(error(
            "cannot detect the layout: no complete text line in the first 64 KiB".into(),
        ));
    }
    let mut fits = Vec::new();
    let mut tried = Vec::new();
    for &format in DETECTED_TEXT_LAYOUTS {
        match trial_format(path, sample, format, max_bad_lines) {
            Ok(bad) => fits.push((format, bad)),
            Err(why) => tried.push(format!("{format} ({why})")),
        }
    }
    // Tolerating bad lines may let more layouts fit: the ones that skip the fewest stay.
    let fewest = fits.iter().map(|&(_, bad)| bad).min().unwrap_or(0);
    let fits: Vec<TraceFormat> = fits
        .into_iter()
        .filter(|&(_, bad)| bad == fewest)
        .map(|(format, _)| format)
        .collect();
    match fits.as_slice() {
        [one] => Ok(*one),
        [] => Err(error(format!(
            "no known layout fits the first lines; tried: {}; {}",
            tried.join("; "),
            match delimited_columns(sample) {
                Some((delimiter, columns)) => format!(
                    "the lines look like {columns} {delimiter}-separated columns: read them \
                     with --format generic-csv and a column spec (--csv-columns, \
                     docs/traces.md)"
                ),
                None => "the lines are not delimited columns either, so generic-csv cannot \
                         read them"
                    .to_owned(),
            }
        ))),
        several => {
            if let Some(by_name) = extension_format(path).filter(|f| several.contains(f)) {
                return Ok(by_name);
            }
            let names: Vec<&str> = several.iter().map(|f| f.name()).collect();
            Err(error(format!(
                "ambiguous layout: {} all fit the first lines (their units differ); \
                 pass --format NAME with one of them",
                names.join(", ")
            )))
        }
    }
}

/// The text layouts detection tries, in order.
const DETECTED_TEXT_LAYOUTS: &[TraceFormat] = &[
    TraceFormat::Msr,
    TraceFormat::Spc,
    TraceFormat::Blkparse,
    TraceFormat::Fio,
    TraceFormat::Diskmon,
    TraceFormat::Mqsim,
    TraceFormat::Ssdsim,
    TraceFormat::Disksim,
];

/// Every text layout, as error messages list them.
const TEXT_LAYOUTS: &[TraceFormat] = &[
    TraceFormat::Msr,
    TraceFormat::Spc,
    TraceFormat::Blkparse,
    TraceFormat::Fio,
    TraceFormat::Diskmon,
    TraceFormat::Mqsim,
    TraceFormat::Ssdsim,
    TraceFormat::Disksim,
    TraceFormat::GenericCsv,
];

/// Every binary layout.
const BINARY_LAYOUTS: &[TraceFormat] = &[TraceFormat::Blktrace, TraceFormat::HpSrt];

fn names(formats: &[TraceFormat]) -> String {
    formats
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Magic bytes of compressed or archive formats flashlane does not open (gzip and zstd are
/// decompressed before detection sees the bytes).
const OTHER_COMPRESSIONS: &[(&[u8], &str)] = &[
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"PK\x03\x04", "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x1f\x9d", "compress (.Z)"),
];

/// What makes `sample` binary rather than text, or `None` for text: the magic of a
/// compression flashlane does not read, a NUL byte (no text layout has one), or more than
/// one byte in ten that text does not hold (control characters, invalid UTF-8).
fn binary_content(sample: &[u8]) -> Option<String> {
    for (magic, name) in OTHER_COMPRESSIONS {
        // bzip2's magic is text ("BZh"); its block header follows at byte 4.
        let bzip2_block = *name != "bzip2" || sample.get(4..10) == Some(b"1AY&SY");
        if sample.starts_with(magic) && bzip2_block {
            return Some(format!("content compressed with {name}"));
        }
    }
    if let Some(at) = memchr::memchr(0, sample) {
        return Some(format!("binary content (a NUL byte at offset {at})"));
    }
    let control = sample
        .iter()
        .filter(|&&b| {
            (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0x1b)) || b == 0x7f
        })
        .count();
    // A sample cut in the middle of a UTF-8 sequence is still text.
    let invalid_utf8 = match std::str::from_utf8(sample) {
        Ok(_) => 0,
        Err(e) if e.error_len().is_none() => 0,
        Err(_) => sample.iter().filter(|&&b| b >= 0x80).count(),
    };
    let odd = control + invalid_utf8;
    (odd * 10 > sample.len()).then(|| {
        format!(
            "binary content ({odd} of the first {} bytes are control bytes or invalid UTF-8)",
            sample.len()
        )
    })
}

/// `Some((delimiter name, columns))` when at least half of the sample's non-blank lines split
/// on one delimiter into the same number (at least three) of columns, two or more of them
/// numbers (a request has a time, an offset and a size): text that generic-csv can read.
/// Prose splits into words, not numbers, and is not delimited columns.
fn delimited_columns(sample: &[u8]) -> Option<(&'static str, usize)> {
    let lines: Vec<&[u8]> = sample
        .split(|&b| b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .collect();
    let delimiters = [
        ("comma", Some(b',')),
        ("tab", Some(b'\t')),
        ("semicolon", Some(b';')),
        ("|", Some(b'|')),
        ("whitespace", None),
    ];
    delimiters.into_iter().find_map(|(name, delimiter)| {
        let rows: Vec<(usize, usize)> = lines
            .iter()
            .map(|line| match delimiter {
                Some(d) => columns_and_numbers(line.split(|&b| b == d)),
                None => columns_and_numbers(super::common::whitespace_fields(line)),
            })
            .collect();
        let mut counts: Vec<usize> = rows.iter().map(|&(columns, _)| columns).collect();
        counts.sort_unstable();
        // The most common column count.
        let (mode, _) = counts
            .chunk_by(|a, b| a == b)
            .map(|run| (run[0], run.len()))
            .max_by_key(|&(columns, lines)| (lines, columns))?;
        let data_rows = rows
            .iter()
            .filter(|&&(columns, numbers)| columns == mode && numbers >= 2)
            .count();
        (mode >= 3 && data_rows > 0 && data_rows * 2 >= lines.len()).then_some((name, mode))
    })
}

/// (fields, fields that are numbers: decimal, or hex with `0x`).
fn columns_and_numbers<'a>(fields: impl Iterator<Item = &'a [u8]>) -> (usize, usize) {
    fields.fold((0, 0), |(columns, numbers), field| {
        let field = super::common::trim(field);
        let number = field.first().is_some_and(u8::is_ascii_digit)
            && field
                .iter()
                .all(|&b| b.is_ascii_hexdigit() || b == b'.' || b == b'x');
        (columns + 1, numbers + usize::from(number))
    })
}
