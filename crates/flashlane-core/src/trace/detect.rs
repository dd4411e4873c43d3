//! Layout detection from content: every layout's reader is run over the first lines and the
//! layouts that read them without error are the candidates. Exactly one must remain.

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

/// Runs one layout over the sample; `Ok` if every line reads and at least one is recognised.
fn trial<L: LineLayout>(path: &Path, sample: &[u8], layout: L) -> Result<(), String> {
    let input = Box::new(Cursor::new(sample.to_vec()));
    let mut reader = LineReader::new(path.to_path_buf(), input, layout, &ReaderOptions::default());
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
    Ok(())
}

fn trial_format(path: &Path, sample: &[u8], format: TraceFormat) -> Result<(), String> {
    match format {
        TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim => {
            trial(path, sample, AsciiLayout::new(format))
        }
        TraceFormat::Msr => trial(path, sample, MsrLayout::new()),
        TraceFormat::Spc => trial(path, sample, SpcLayout),
        TraceFormat::Blkparse => trial(path, sample, BlkparseLayout::new(BlockEvent::Issue)),
        TraceFormat::Fio => trial(path, sample, FioLayout::new()),
        TraceFormat::Diskmon => trial(path, sample, DiskmonLayout::new()),
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
/// (after an optional text header) is `hp-srt`. Text is tried against every text
/// layout (all but generic-csv). No fit, or several fits that the file extension does not
/// settle, is an error that names the layouts.
///
/// This reads the start of `path`: for a pipe or standard input, whose bytes can be read only
/// once, open the trace with [`super::open_detected`], which detects on the same bytes it
/// then reads.
pub fn detect(path: &Path) -> Result<TraceFormat, TraceError> {
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
    detect_sample(path, &sample)
}

/// Decides the layout of `path` from `sample`, its first (at most [`SNIFF_BYTES`])
/// decompressed bytes.
pub(crate) fn detect_sample(path: &Path, sample: &[u8]) -> Result<TraceFormat, TraceError> {
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
    let candidates = [
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Fio,
        TraceFormat::Diskmon,
        TraceFormat::Mqsim,
        TraceFormat::Ssdsim,
        TraceFormat::Disksim,
    ];
    let mut fits = Vec::new();
    let mut tried = Vec::new();
    for format in candidates {
        match trial_format(path, sample, format) {
            Ok(()) => fits.push(format),
            Err(why) => tried.push(format!("{format} ({why})")),
        }
    }
    match fits.as_slice() {
        [one] => Ok(*one),
        [] => Err(error(format!(
            "no known layout fits the first lines; tried: {}; for other layouts use \
             --format generic-csv with a column spec",
            tried.join("; ")
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
