//! Writers for the text layouts that can hold a [`TraceRecord`] without guessing, and
//! [`convert`], which streams a trace from any reader into one of them.
//!
//! Output is written to a temporary file next to the target and renamed into place only when
//! the whole trace has been written, so an error never leaves a partial output file.
//!
//! What each layout can hold (everything else in a record is kept exactly):
//!
//! | layout | time unit | offset | size | device | stream |
//! |---|---|---|---|---|---|
//! | mqsim, ssdsim | 1 ns | sector | sector | yes | no |
//! | disksim | 1 ns (ms with 6 decimals) | sector | sector | yes | no |
//! | msr | 100 ns | byte | byte | yes | no |
//! | spc | 1 ns (s with 9 decimals) | sector | byte | yes | no |
//! | fio (v3) | 1 ms | byte | byte | by first appearance | no |

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::common::{MAX_REQUEST_BYTES, SECTOR_BYTES};
use super::{Op, TraceError, TraceFormat, TraceReader, TraceRecord};

/// Layouts [`convert`] can write.
pub const WRITABLE_FORMATS: &[TraceFormat] = &[
    TraceFormat::Mqsim,
    TraceFormat::Ssdsim,
    TraceFormat::Disksim,
    TraceFormat::Msr,
    TraceFormat::Spc,
    TraceFormat::Fio,
];

/// Hostname written in every MSR line (records carry no host).
pub const MSR_HOSTNAME: &str = "flashlane";

/// Settings of [`convert`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    /// Round what the target layout cannot hold (and count it) instead of refusing.
    pub allow_lossy: bool,
    /// Shift all times so that the first record is at 0 (not a loss: a deliberate change).
    pub rebase_time: bool,
}

/// What a conversion wrote and what it changed. Counts are records, not fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvertReport {
    /// Layout read.
    pub from: String,
    /// Layout written.
    pub to: String,
    /// Records written.
    pub records: u64,
    /// Times truncated to the layout's time unit (MSR: 100 ns, fio: 1 ms).
    pub times_truncated: u64,
    /// Offsets rounded down to a 512-byte sector (the size grows by the same amount).
    pub offsets_rounded: u64,
    /// Sizes rounded up so the request ends on a sector boundary.
    pub sizes_rounded: u64,
    /// Records whose device id reads back differently (fio numbers files by first appearance).
    pub devices_renumbered: u64,
    /// Records whose stream id differed from the device id (written layouts read stream =
    /// device).
    pub streams_dropped: u64,
    /// Nanoseconds subtracted from every time with `rebase_time` (0 otherwise).
    pub time_shift_ns: u64,
    /// Malformed lines the reader skipped (nothing written for them).
    pub bad_lines: u64,
    /// Non-data events the reader dropped (nothing written for them).
    pub skipped_events: u64,
    /// Records whose time the reader clamped (a small step back in time).
    pub clamped_backsteps: u64,
    /// Fixed facts about the target layout (placeholder columns, file names).
    pub notes: Vec<String>,
}

impl ConvertReport {
    /// True when every record reads back from the output exactly as it was read from the input
    /// (up to `time_shift_ns`).
    pub fn is_lossless(&self) -> bool {
        self.times_truncated == 0
            && self.offsets_rounded == 0
            && self.sizes_rounded == 0
            && self.devices_renumbered == 0
            && self.streams_dropped == 0
    }

    /// One line per kind of change made, e.g. `12 times truncated to 1 ms`.
    pub fn losses(&self) -> Vec<String> {
        let unit = match TraceFormat::from_name(&self.to) {
            Some(TraceFormat::Fio) => "1 ms",
            _ => "100 ns",
        };
        [
            (self.times_truncated, format!("times truncated to {unit}")),
            (
                self.offsets_rounded,
                "offsets rounded down to a 512-byte sector".to_string(),
            ),
            (
                self.sizes_rounded,
                "sizes rounded up to end on a sector boundary".to_string(),
            ),
            (
                self.devices_renumbered,
                "device ids renumbered (fio numbers files by first appearance)".to_string(),
            ),
            (
                self.streams_dropped,
                "stream ids dropped (read back as the device id)".to_string(),
            ),
        ]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{count} {what}"))
        .collect()
    }
}

/// Why a conversion wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// The input could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The target layout has no writer.
    #[error("cannot write layout {0}; writable layouts: {list}", list = writable_names())]
    NotWritable(TraceFormat),
    /// A record the target layout cannot hold exactly, and lossy conversion was not allowed.
    #[error(
        "{path}: not written: record {index} (time {} ns, device {}, offset {} B, size {} B, {}) \
         cannot be written exactly as {to}: {reason}; pass --allow-lossy to round such values \
         (they are counted)",
        record.time_ns, record.device, record.offset_bytes, record.size_bytes,
        op_name(record.op)
    )]
    Lossy {
        path: PathBuf,
        /// 1-based position of the record in the input.
        index: u64,
        record: TraceRecord,
        to: TraceFormat,
        reason: String,
    },
    /// A record that no reader would accept after rounding (e.g. over the 1 GiB size limit).
    #[error("{path}: not written: record {index}: {reason}")]
    Unrepresentable {
        path: PathBuf,
        index: u64,
        reason: String,
    },
    /// The output could not be written.
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
}

impl From<ConvertError> for crate::Error {
    fn from(error: ConvertError) -> Self {
        match error {
            ConvertError::Trace(e) => crate::Error::Trace(e),
            ConvertError::Io { path, message } => crate::Error::Output {
                path: path.display().to_string(),
                message,
            },
            other => crate::Error::Config(other.to_string()),
        }
    }
}

fn writable_names() -> String {
    WRITABLE_FORMATS
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
    }
}

/// Whether [`convert`] can write `format`.
pub fn is_writable(format: TraceFormat) -> bool {
    WRITABLE_FORMATS.contains(&format)
}

/// Removes the temporary file unless the conversion got as far as renaming it.
struct TempFile {
    path: PathBuf,
    keep: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Fields of one output record, already fitted to the target layout.
struct Fitted {
    time_ns: u64,
    device: u32,
    offset_bytes: u64,
    size_bytes: u64,
    op: Op,
}

/// Per-layout encoder state.
struct Encoder {
    to: TraceFormat,
    /// fio only: device ids in order of first appearance (the reader renumbers them 0, 1, ...).
    fio_devices: Vec<u32>,
    last_time_ns: u64,
}

impl Encoder {
    fn header(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.to == TraceFormat::Fio {
            out.write_all(b"fio version 3 iolog\n")?;
        }
        Ok(())
    }

    fn record(&mut self, out: &mut dyn Write, r: &Fitted) -> std::io::Result<()> {
        self.last_time_ns = r.time_ns;
        let read = r.op == Op::Read;
        let sectors = |bytes: u64| bytes / SECTOR_BYTES;
        match self.to {
            TraceFormat::Mqsim | TraceFormat::Ssdsim => writeln!(
                out,
                "{} {} {} {} {}",
                r.time_ns,
                r.device,
                sectors(r.offset_bytes),
                sectors(r.size_bytes),
                u8::from(read)
            ),
            TraceFormat::Disksim => {
                // Milliseconds: 3 decimals when whole microseconds (as the DiskSim traces
                // themselves print them), otherwise the 6 that reach the nanosecond.
                let (ms, ns) = (r.time_ns / 1_000_000, r.time_ns % 1_000_000);
                if ns % 1000 == 0 {
                    write!(out, "{ms}.{:03}", ns / 1000)?;
                } else {
                    write!(out, "{ms}.{ns:06}")?;
                }
                writeln!(
                    out,
                    " {} {} {} {}",
                    r.device,
                    sectors(r.offset_bytes),
                    sectors(r.size_bytes),
                    u8::from(read)
                )
            }
            TraceFormat::Msr => writeln!(
                out,
                "{},{MSR_HOSTNAME},{},{},{},{},0",
                r.time_ns / 100,
                r.device,
                if read { "Read" } else { "Write" },
                r.offset_bytes,
                r.size_bytes
            ),
            TraceFormat::Spc => {
                write!(
                    out,
                    "{},{},{},{},",
                    r.device,
                    sectors(r.offset_bytes),
                    r.size_bytes,
                    if read { 'r' } else { 'w' }
                )?;
                // Seconds: 6 decimals when whole microseconds (as UMass prints them), else 9.
                let (s, ns) = (r.time_ns / 1_000_000_000, r.time_ns % 1_000_000_000);
                if ns % 1000 == 0 {
                    writeln!(out, "{s}.{:06}", ns / 1000)
                } else {
                    writeln!(out, "{s}.{ns:09}")
                }
            }
            TraceFormat::Fio => {
                let ms = r.time_ns / 1_000_000;
                if !self.fio_devices.contains(&r.device) {
                    self.fio_devices.push(r.device);
                    writeln!(out, "{ms} dev{} add", r.device)?;
                    writeln!(out, "{ms} dev{} open", r.device)?;
                }
                writeln!(
                    out,
                    "{ms} dev{} {} {} {}",
                    r.device,
                    op_name(r.op),
                    r.offset_bytes,
                    r.size_bytes
                )
            }
            _ => Ok(()),
        }
    }

    fn footer(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.to == TraceFormat::Fio {
            let ms = self.last_time_ns / 1_000_000;
            for device in &self.fio_devices {
                writeln!(out, "{ms} dev{device} close")?;
            }
        }
        Ok(())
    }
}

/// Time unit of a layout in nanoseconds.
fn time_unit_ns(to: TraceFormat) -> u64 {
    match to {
        TraceFormat::Msr => 100,
        TraceFormat::Fio => 1_000_000,
        _ => 1,
    }
}

/// Fits `record` to the layout `to`: time truncated to the layout's unit, the extent widened to
/// whole sectors where the layout counts sectors (so the rounded request still covers every byte
/// of the original). Counts every change in `report` and describes them (empty when exact).
fn fit(
    record: &TraceRecord,
    time_ns: u64,
    to: TraceFormat,
    fio_devices: &[u32],
    report: &mut ConvertReport,
) -> (Fitted, Vec<String>) {
    let mut changes: Vec<String> = Vec::new();
    let unit = time_unit_ns(to);
    let fitted_time = time_ns - time_ns % unit;
    if fitted_time != time_ns {
        report.times_truncated += 1;
        changes.push(format!(
            "time {time_ns} ns is not a multiple of the layout's {unit} ns unit"
        ));
    }
    let (sector_offset, sector_size) = match to {
        TraceFormat::Mqsim | TraceFormat::Ssdsim | TraceFormat::Disksim => (true, true),
        TraceFormat::Spc => (true, false),
        _ => (false, false),
    };
    let mut offset = record.offset_bytes;
    let mut size = record.size_bytes;
    if sector_offset && !offset.is_multiple_of(SECTOR_BYTES) {
        report.offsets_rounded += 1;
        changes.push(format!(
            "offset {offset} B is not a multiple of the 512-byte sector"
        ));
        size = size.saturating_add(offset % SECTOR_BYTES);
        offset -= offset % SECTOR_BYTES;
    }
    if sector_size && !size.is_multiple_of(SECTOR_BYTES) {
        report.sizes_rounded += 1;
        if !record.size_bytes.is_multiple_of(SECTOR_BYTES) {
            changes.push(format!(
                "size {} B is not a multiple of the 512-byte sector",
                record.size_bytes
            ));
        }
        size = size.saturating_add(SECTOR_BYTES - size % SECTOR_BYTES);
    }
    if to == TraceFormat::Fio {
        let read_back = fio_devices
            .iter()
            .position(|&d| d == record.device)
            .unwrap_or(fio_devices.len());
        if read_back as u64 != u64::from(record.device) {
            report.devices_renumbered += 1;
            changes.push(format!(
                "device {} would read back as device {read_back} (fio numbers files by first \
                 appearance)",
                record.device
            ));
        }
    }
    if record.stream != record.device {
        report.streams_dropped += 1;
        changes.push(format!(
            "stream {} differs from the device and the layout has no stream column",
            record.stream
        ));
    }
    let fitted = Fitted {
        time_ns: fitted_time,
        device: record.device,
        offset_bytes: offset,
        size_bytes: size,
        op: record.op,
    };
    (fitted, changes)
}

/// Streams every record of `reader` into `out_path` in layout `to`.
///
/// Records the layout cannot hold exactly are refused (the error names the first one) unless
/// `options.allow_lossy`; then they are rounded as documented on [`ConvertReport`] and counted.
/// On any error, `out_path` is left as it was.
pub fn convert(
    reader: &mut dyn TraceReader,
    to: TraceFormat,
    out_path: &Path,
    options: &ConvertOptions,
) -> Result<ConvertReport, ConvertError> {
    if !is_writable(to) {
        return Err(ConvertError::NotWritable(to));
    }
    let io_error = |e: std::io::Error| ConvertError::Io {
        path: out_path.to_path_buf(),
        message: e.to_string(),
    };
    let file_name = out_path.file_name().ok_or_else(|| ConvertError::Io {
        path: out_path.to_path_buf(),
        message: "not a file path".into(),
    })?;
    let dir = out_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Same directory as the target, so the final rename cannot cross file systems; unique per
    // process and call, so two conversions to one target never share a temporary.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut temp = TempFile {
        path: dir.join(format!(
            ".{}.{}.{}.tmp",
            file_name.to_string_lossy(),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        )),
        keep: false,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp.path)
        .map_err(io_error)?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let report = convert_into(reader, to, &mut out, out_path, options)?;
    let file = out.into_inner().map_err(|e| io_error(e.into_error()))?;
    file.sync_all().map_err(io_error)?;
    drop(file);
    std::fs::rename(&temp.path, out_path).map_err(io_error)?;
    temp.keep = true;
    Ok(report)
}

/// As [`convert`], into `out` (which the caller flushes and commits); `out_path` names the
/// output in errors. On an error, what was written to `out` is to be discarded.
pub fn convert_into(
    reader: &mut dyn TraceReader,
    to: TraceFormat,
    out: &mut dyn Write,
    out_path: &Path,
    options: &ConvertOptions,
) -> Result<ConvertReport, ConvertError> {
    if !is_writable(to) {
        return Err(ConvertError::NotWritable(to));
    }
    let io_error = |e: std::io::Error| ConvertError::Io {
        path: out_path.to_path_buf(),
        message: e.to_string(),
    };
    let mut report = ConvertReport {
        from: reader.format().name().to_string(),
        to: to.name().to_string(),
        notes: notes(to),
        ..ConvertReport::default()
    };
    let mut encoder = Encoder {
        to,
        fio_devices: Vec::new(),
        last_time_ns: 0,
    };
    encoder.header(out).map_err(io_error)?;
    let mut shift = None;
    while let Some(record) = reader.next_record()? {
        report.records += 1;
        let shift = *shift.get_or_insert(if options.rebase_time {
            record.time_ns
        } else {
            0
        });
        // Readers never go back in time, so the shift never underflows; saturate regardless.
        let time_ns = record.time_ns.saturating_sub(shift);
        let (fitted, changes) = fit(&record, time_ns, to, &encoder.fio_devices, &mut report);
        if !changes.is_empty() && !options.allow_lossy {
            return Err(ConvertError::Lossy {
                path: reader.path().to_path_buf(),
                index: report.records,
                record,
                to,
                reason: changes.join("; "),
            });
        }
        if fitted.size_bytes > MAX_REQUEST_BYTES {
            return Err(ConvertError::Unrepresentable {
                path: reader.path().to_path_buf(),
                index: report.records,
                reason: format!(
                    "rounded to whole sectors, its size ({} B) exceeds the 1 GiB that readers accept",
                    fitted.size_bytes
                ),
            });
        }
        encoder.record(out, &fitted).map_err(io_error)?;
    }
    report.time_shift_ns = shift.unwrap_or(0);
    report.bad_lines = reader.bad_lines();
    report.skipped_events = reader.skipped_events();
    report.clamped_backsteps = reader.clamped_backsteps();
    encoder.footer(out).map_err(io_error)?;
    Ok(report)
}

/// Fixed facts about what a layout's output holds beyond the records.
fn notes(to: TraceFormat) -> Vec<String> {
    match to {
        TraceFormat::Msr => vec![format!(
            "Hostname is written as `{MSR_HOSTNAME}` and ResponseTime as 0 (records carry neither)"
        )],
        TraceFormat::Fio => vec![
            "files are named devN after the device id, with add/open lines at first use and \
             close lines at the end; a reader numbers them by first appearance"
                .to_string(),
            "times are whole milliseconds (fio iolog v3)".to_string(),
        ],
        _ => Vec::new(),
    }
}
