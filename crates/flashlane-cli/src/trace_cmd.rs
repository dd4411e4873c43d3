//! `flashlane trace ...`: workload statistics and layout conversion of block traces.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use flashlane_core::config::{parse_override, Config};
use flashlane_core::trace::writer::{convert_into, ConvertOptions, WRITABLE_FORMATS};
use flashlane_core::trace::{self, TraceError, TraceFormat, TraceReader, TraceRecord, TraceStats};
use flashlane_core::workload::{touched_pages, ConditionsMeter, WorkloadConditions};
use flashlane_core::Error;

use crate::args::TraceReadArgs;
use crate::output;

#[derive(Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print a trace's workload statistics (sizes, arrivals, footprint, sequentiality).
    Stats(StatsArgs),
    /// Rewrite a trace in another layout, reporting anything rounded or dropped.
    Convert(ConvertArgs),
}

#[derive(Args)]
struct InputArgs {
    /// Trace file (plain, gzip or zstd; `-` or a pipe is read as it comes); for binary
    /// blktrace, the capture directory or the common prefix of its NAME.blktrace.N files.
    file: PathBuf,
    #[command(flatten)]
    reading: TraceReadArgs,
}

#[derive(Args)]
struct StatsArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Also write the statistics as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also measure the workload conditions under this preset's static allocation: page
    /// shares per channel and chip (whole trace and in 1 ms / 100 ms windows), peak-to-mean
    /// arrivals, offered load against the drive's bandwidth, sequential runs.
    #[arg(long, help_heading = "Conditions")]
    preset: Option<String>,
    /// Override a value of --preset's config (repeatable).
    #[arg(
        long = "set",
        value_name = "KEY=VALUE",
        requires = "preset",
        help_heading = "Conditions"
    )]
    set: Vec<String>,
    /// With --preset: renumber the pages the trace touches densely, as `run
    /// --remap-addresses` does (reads the trace twice; not for a pipe). Otherwise a page past
    /// the logical capacity is taken modulo it, as `run --fold-addresses` does.
    #[arg(long, requires = "preset", help_heading = "Conditions")]
    remap_addresses: bool,
}

/// The statistics, with the conditions when a preset was given.
#[derive(serde::Serialize)]
struct StatsOutput<'a> {
    #[serde(flatten)]
    stats: &'a TraceStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    conditions: Option<&'a WorkloadConditions>,
}

#[derive(Args)]
struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Layout to write: mqsim, ssdsim, disksim, msr, spc or fio.
    #[arg(long)]
    to: String,
    /// Output file (written atomically: nothing is left behind on error or signal; `-`, a
    /// FIFO or a device such as /dev/stdout is written in place).
    out: PathBuf,
    /// Round values the target layout cannot hold (sub-sector extents, finer times, stream or
    /// device ids) instead of refusing; every rounding is counted.
    #[arg(long)]
    allow_lossy: bool,
    /// Shift times so the first request is at 0.
    #[arg(long)]
    rebase_time: bool,
}

pub fn run(args: TraceArgs) -> Result<(), Error> {
    match args.command {
        TraceCommand::Stats(args) => stats(args),
        TraceCommand::Convert(args) => convert_cmd(args),
    }
}

fn format_names(formats: &[TraceFormat]) -> String {
    formats
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The opened trace as the commands read it: only the records of `--device`, each shown to
/// the conditions meter on its way when `trace stats --preset` asked for one.
struct Passing<'a> {
    inner: Box<dyn TraceReader>,
    device: Option<u32>,
    meter: Option<&'a mut ConditionsMeter>,
}

impl TraceReader for Passing<'_> {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        while let Some(record) = self.inner.next_record()? {
            if self.device.is_some_and(|d| d != record.device) {
                continue;
            }
            if let Some(meter) = &mut self.meter {
                meter.observe(&record);
            }
            return Ok(Some(record));
        }
        Ok(None)
    }
    fn format(&self) -> TraceFormat {
        self.inner.format()
    }
    fn path(&self) -> &Path {
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
    fn notes(&self) -> flashlane_core::trace::ReaderNotes {
        self.inner.notes()
    }
}

fn open_input<'a>(
    input: &InputArgs,
    meter: Option<&'a mut ConditionsMeter>,
) -> Result<Passing<'a>, Error> {
    let format = match input.reading.formats()?.as_slice() {
        [] => None,
        [one] => Some(*one),
        several => {
            return Err(Error::Config(format!(
                "{} --format values for one trace: give one",
                several.len()
            )))
        }
    };
    let options = input.reading.reader_options()?;
    // One open, detecting on the bytes the reader then reads: a pipe or `-` loses nothing.
    Ok(Passing {
        inner: trace::open_detected(&input.file, format, &options)?,
        device: input.reading.device,
        meter,
    })
}

fn stats(args: StatsArgs) -> Result<(), Error> {
    output::check_outputs(
        &[("--json", args.json.as_deref())],
        &[("the trace", args.input.file.as_path())],
    )?;
    output::check_all_writable([args.json.as_deref()])?;
    let mut meter = match &args.preset {
        Some(name) => Some(conditions_meter(name, &args)?),
        None => None,
    };
    let stats = TraceStats::from_reader(&mut open_input(&args.input, meter.as_mut())?)?;
    let conditions = meter.map(ConditionsMeter::finish);
    let mut text = render_stats(&stats);
    if let Some(c) = &conditions {
        text.push_str(&render_conditions(c));
    }
    output::print_report(&text, [args.json.as_deref()])?;
    if let Some(path) = &args.json {
        output::write_json(
            path,
            &StatsOutput {
                stats: &stats,
                conditions: conditions.as_ref(),
            },
        )?;
    }
    Ok(())
}

/// The meter for `--preset` (and `--set`), with the remapped pages when asked (a first pass).
fn conditions_meter(name: &str, args: &StatsArgs) -> Result<ConditionsMeter, Error> {
    let overrides = args
        .set
        .iter()
        .map(|s| parse_override(s))
        .collect::<Result<Vec<_>, _>>()?;
    let config = Config::from_preset(name, &overrides)?;
    let remap = if args.remap_addresses {
        if trace::is_stream(&args.input.file) {
            return Err(Error::Config(format!(
                "--remap-addresses reads {} twice; a pipe or standard input can be read once",
                args.input.file.display()
            )));
        }
        let mut reader = open_input(&args.input, None)?;
        Some(touched_pages(
            &mut reader,
            u64::from(config.geometry.page_bytes),
        )?)
    } else {
        None
    };
    Ok(ConditionsMeter::for_config(
        name,
        args.set.clone(),
        &config,
        remap,
    ))
}

fn render_conditions(c: &WorkloadConditions) -> String {
    let mut out = String::new();
    let pct = |v: &[f64]| {
        v.iter()
            .map(|s| format!("{:.1}", s * 100.0))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max) * 100.0;
    let _ = writeln!(
        out,
        "conditions under {}{} (addresses: {}):",
        c.preset,
        c.overrides
            .iter()
            .map(|o| format!(" --set {o}"))
            .collect::<String>(),
        c.addresses
    );
    if let Some(note) = &c.placement_note {
        let _ = writeln!(out, "  note: {note}");
    }
    let _ = writeln!(
        out,
        "  page share per channel (%): {}",
        pct(&c.channel_page_share)
    );
    let _ = writeln!(
        out,
        "  busiest chip: {:.1} % of pages ({} chips)",
        max(&c.chip_page_share),
        c.chip_page_share.len()
    );
    for w in &c.windows {
        // The two figures cover different windows (the mean every window, the max only those
        // with 8 pages per unit), so a max below the mean is possible: the labels say which.
        let _ = writeln!(
            out,
            "  {:>6} ms windows: peak-to-mean arrivals {:.2}; busiest channel {:.1} % (mean over \
             all windows), {} (max over windows with 8 pages per channel); busiest chip \
             {:.1} % (mean over all), {} (max over windows with 8 pages per chip)",
            w.window_ns as f64 / 1e6,
            w.peak_to_mean_arrivals,
            w.hottest_channel_share_mean * 100.0,
            window_max(w.hottest_channel_share_max),
            w.hottest_chip_share_mean * 100.0,
            window_max(w.hottest_chip_share_max),
        );
    }
    let _ = writeln!(
        out,
        "  offered load: {:.3} of the channels' bandwidth, {:.3} of the dies' array time; \
         {:.2} requests per sequential run",
        c.offered_load_channel_fraction, c.offered_load_array_fraction, c.mean_run_requests
    );
    out
}

/// A window figure's largest share, or `n/a` when no window had 8 pages per unit.
fn window_max(share: Option<f64>) -> String {
    share.map_or_else(|| "n/a".to_string(), |s| format!("{:.1} %", s * 100.0))
}

fn convert_cmd(args: ConvertArgs) -> Result<(), Error> {
    let to = TraceFormat::from_name(&args.to)
        .filter(|f| WRITABLE_FORMATS.contains(f))
        .ok_or_else(|| {
            Error::Config(format!(
                "cannot write layout `{}`; writable layouts: {}",
                args.to,
                format_names(WRITABLE_FORMATS)
            ))
        })?;
    output::check_outputs(
        &[("the output", Some(args.out.as_path()))],
        &[("the trace", args.input.file.as_path())],
    )?;
    output::check_writable(&args.out)?;
    let mut reader = open_input(&args.input, None)?;
    let options = ConvertOptions {
        allow_lossy: args.allow_lossy,
        rebase_time: args.rebase_time,
    };
    let mut report = None;
    output::write_atomically(&args.out, |out| {
        report = Some(convert_into(&mut reader, to, out, &args.out, &options)?);
        Ok(())
    })?;
    let report = report.ok_or_else(|| Error::Workload("conversion did not run".into()))?;
    // Into a pipe or device such as /dev/stdout, the report goes to stderr, off the data.
    let through = output::writes_through(&args.out);
    // Printed at the end in one write: a failing standard output is the command's error.
    let mut text = String::new();
    let mut say = |line: String| {
        text.push_str(&line);
        text.push('\n');
    };
    say(format!(
        "{} ({}) -> {} ({}): {}",
        args.input.file.display(),
        report.from,
        args.out.display(),
        report.to,
        crate::output::count(report.records, "record")
    ));
    let losses = report.losses();
    if losses.is_empty() {
        say("  exact: every record reads back unchanged".into());
    }
    for loss in losses {
        say(format!("  rounded: {loss}"));
    }
    if report.time_shift_ns > 0 {
        say(format!("  times shifted by -{} ns", report.time_shift_ns));
    }
    for (count, what) in [
        (report.bad_lines, "malformed input lines skipped"),
        (
            report.skipped_events,
            "non-data events (trim, flush, ...) dropped",
        ),
        (report.clamped_backsteps, "times clamped by the reader"),
    ] {
        if count > 0 {
            say(format!("  input: {count} {what}"));
        }
    }
    for note in &report.notes {
        say(format!("  note: {note}"));
    }
    if through {
        output::print_err(&text);
        Ok(())
    } else {
        output::print_out(&text)
    }
}

fn seconds(ns: u64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.2} {} ({n} B)", UNITS[unit])
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The statistics as an aligned, human-readable table.
fn render_stats(s: &TraceStats) -> String {
    let mut out = String::new();
    let mut row = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:<22} {value}");
    };
    row("trace", format!("{} ({})", s.path, s.format));
    row(
        "requests",
        format!(
            "{} ({} reads {:.1} %, {} writes {:.1} %)",
            s.requests,
            s.reads,
            percent(s.reads, s.requests),
            s.writes,
            percent(s.writes, s.requests)
        ),
    );
    row("bytes read", bytes(s.bytes_read));
    row("bytes written", bytes(s.bytes_written));
    row("footprint (4 KiB)", bytes(s.footprint_bytes));
    row("span", seconds(s.span_ns));
    if let Some(size) = &s.size {
        row(
            "size (B)",
            format!(
                "min {} mean {:.1} p50 {} p90 {} p99 {} max {}",
                size.min, size.mean, size.p50, size.p90, size.p99, size.max
            ),
        );
        for bucket in &size.histogram {
            row(
                "",
                format!(
                    "{:>10} .. {:>10} B {:>10} {:5.1} %",
                    bucket.min_bytes,
                    bucket.max_bytes,
                    bucket.count,
                    percent(bucket.count, s.requests)
                ),
            );
        }
    }
    if let Some(gap) = &s.inter_arrival {
        row(
            "inter-arrival (ns)",
            format!(
                "mean {:.1} p50 {} p99 {} max {} cv {:.3}",
                gap.mean, gap.p50, gap.p99, gap.max, gap.cv
            ),
        );
    }
    let q = &s.sequential;
    row(
        "sequential",
        format!(
            "{:.1} % of requests, {:.1} % of reads, {:.1} % of writes",
            100.0 * q.fraction,
            100.0 * q.read_fraction,
            100.0 * q.write_fraction
        ),
    );
    let shown: Vec<String> = s
        .devices
        .iter()
        .take(16)
        .map(|d| format!("{}:{}", d.device, d.requests))
        .collect();
    let more = if s.devices.len() > shown.len() {
        format!(" ... ({} more)", s.devices.len() - shown.len())
    } else {
        String::new()
    };
    row(
        "devices",
        format!("{} [{}{more}]", s.device_count, shown.join(" ")),
    );
    row(
        "skipped",
        format!(
            "{} bad lines, {} non-data events, {} clamped times",
            s.bad_lines, s.skipped_events, s.clamped_backsteps
        ),
    );
    out
}
