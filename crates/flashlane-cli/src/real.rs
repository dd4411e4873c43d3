//! `flashlane replay` and `flashlane probe`: the real-drive commands (Linux only; the work is
//! in the `flashlane-real` crate, docs/real-drive.md).

use std::fmt::Write as _;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

use clap::Args;
use flashlane_core::Error;

use crate::args::{DeviceArgs, WorkloadArgs};
use crate::output;

/// Where the run goes and what it may do there.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Target")]
pub struct TargetArgs {
    /// The file or block device to use. A path that does not exist becomes a new file,
    /// removed after the run (unless --keep); an existing file with data or a block device is
    /// written only with --allow-writes; a mounted block device is refused.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,
    /// Let flashlane overwrite an existing file with data, or a block device (not mounted).
    #[arg(long, conflicts_with = "reads_only")]
    pub allow_writes: bool,
    /// Leave out every write: the target is opened read-only and never written (it must exist
    /// and hold data).
    #[arg(long)]
    pub reads_only: bool,
    /// Keep a target file flashlane created, after the run.
    #[arg(long)]
    pub keep: bool,
    /// Size of a target file flashlane creates, bytes.
    #[arg(long, value_name = "BYTES")]
    pub size_bytes: Option<u64>,
}

impl TargetArgs {
    #[cfg(target_os = "linux")]
    fn options(&self) -> flashlane_real::TargetOptions {
        flashlane_real::TargetOptions {
            path: self.target.clone(),
            allow_writes: self.allow_writes,
            reads_only: self.reads_only,
            keep: self.keep,
        }
    }
}

#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Check every 512-byte block read against what flashlane wrote there (fio-style
    /// patterns); mismatches are counted in the summary.
    #[arg(long, help_heading = "Target")]
    verify: bool,
    /// Write the JSON summary to this file (`-`: standard output).
    #[arg(long, help_heading = "Outputs")]
    json: Option<PathBuf>,
    /// Write the order in which the host scheduler handed requests to the drive, as CSV (the
    /// layout of `flashlane run --dispatch-log`).
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    dispatch_log: Option<PathBuf>,
}

/// Plain progress lines on stderr, at most one per interval.
#[cfg(target_os = "linux")]
struct Lines {
    last: Instant,
}

#[cfg(target_os = "linux")]
impl Lines {
    const INTERVAL: Duration = Duration::from_secs(10);

    fn new() -> Lines {
        Lines {
            last: Instant::now(),
        }
    }

    fn say(&mut self, line: impl FnOnce() -> String) {
        if self.last.elapsed() >= Self::INTERVAL {
            self.last = Instant::now();
            output::print_err(&format!("flashlane: {}\n", line()));
        }
    }
}

#[cfg(target_os = "linux")]
pub fn replay(args: ReplayArgs) -> Result<(), Error> {
    use flashlane_real::{Callbacks, ReplayProgress, ReplaySpec};
    // Simulator-only inputs are refused, not ignored.
    if let Some(dir) = &args.workload.precondition_cache {
        return Err(Error::Config(format!(
            "--precondition-cache {}: it holds simulated drives; a real replay has no \
             simulated drive to precondition or load",
            dir.display()
        )));
    }
    if let Some((key, _)) = args
        .device
        .overrides()?
        .into_iter()
        .find(|(key, _)| key.starts_with("precondition."))
    {
        return Err(Error::Config(format!(
            "--set {key}: preconditioning fills the simulated drive; a real replay fills a \
             target it creates with the data the trace reads, and uses an existing drive as it \
             is (docs/real-drive.md)"
        )));
    }
    let outputs = [args.json.as_deref(), args.dispatch_log.as_deref()];
    let mut inputs = args.workload.input_files();
    inputs.extend(args.device.input_files());
    inputs.push(("the target", args.target.target.as_path()));
    output::check_outputs(
        &[("--json", outputs[0]), ("--dispatch-log", outputs[1])],
        &inputs,
    )?;
    output::check_all_writable(outputs)?;
    let spec = ReplaySpec {
        run: args.workload.spec(args.device.config(&[])?)?,
        target: args.target.options(),
        size_bytes: args.target.size_bytes,
        verify: args.verify,
        dispatch_log: args.dispatch_log.is_some(),
    };
    let mut created = None;
    let mut lines = Lines::new();
    let result = flashlane_real::replay(
        &spec,
        Callbacks {
            created: &mut |path| {
                output::remove_on_signal(path);
                created = Some(path.to_path_buf());
            },
            progress: &mut |p| {
                lines.say(|| match p {
                    ReplayProgress::Filling {
                        done_bytes,
                        total_bytes,
                    } => format!(
                        "filling the target: {:.0} of {:.0} MiB",
                        done_bytes as f64 / 1048576.0,
                        total_bytes as f64 / 1048576.0
                    ),
                    ReplayProgress::Replaying {
                        records,
                        total_records,
                    } => format!("replaying: {records} of {total_records} requests"),
                })
            },
        },
    );
    if let Some(path) = &created {
        output::forget_on_signal(path);
    }
    let (summary, log) = result?;
    output::print_report(&render_replay(&summary), outputs)?;
    output::write_summary_outputs(
        args.json.as_deref(),
        &summary,
        args.dispatch_log.as_deref().zip(log.as_ref()),
    )?;
    // Data that did not read back as written fails the command (the summary is written).
    match &summary.replay.verify {
        Some(v) if v.mismatched_blocks > 0 => Err(Error::Workload(format!(
            "--verify: {} of {} blocks read did not hold data flashlane wrote there \
             (verify.mismatched_blocks)",
            v.mismatched_blocks, v.checked_blocks
        ))),
        _ => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn replay(_args: ReplayArgs) -> Result<(), Error> {
    Err(Error::Config(
        "flashlane replay needs Linux (io_uring with O_DIRECT)".into(),
    ))
}

#[cfg(target_os = "linux")]
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

/// The text summary of a real replay.
#[cfg(target_os = "linux")]
pub fn render_replay(s: &flashlane_real::ReplaySummary) -> String {
    let mut out = String::new();
    let d = &s.device.target;
    let mut about = vec![d.target.replace('_', " ")];
    if let Some(disk) = &d.disk {
        about.push(format!("on {disk}"));
    }
    if let Some(fs) = &d.filesystem {
        about.push(fs.clone());
    }
    if let Some(model) = &d.model {
        about.push(format!("model {model}"));
    }
    if d.created {
        about.push(format!("created, {}", mib(d.size_bytes)));
    }
    let _ = writeln!(
        out,
        "flashlane replay: {} onto {} ({}) ({})",
        s.trace.path,
        d.path,
        about.join(", "),
        s.trace.format
    );
    let _ = writeln!(
        out,
        "  host scheduler {} | device queue depth {} | io_uring, O_DIRECT, {} B aligned | \
         kernel scheduler {}",
        s.host_scheduler.name,
        s.config.device.queue_depth_requests,
        d.direct_io_alignment_bytes,
        d.kernel_scheduler.as_deref().unwrap_or("unknown")
    );
    output::workload_labels(&mut out, &s.sources);
    if let Some(l) = &s.device.assumed_chip_layout {
        let _ = writeln!(
            out,
            "  assumed chip layout (from {}): {} channels x {} chips, {} B pages; {}",
            l.from_config, l.channels, l.chips_per_channel, l.page_bytes, l.note
        );
    }
    s.figures
        .write_text(&mut out, s.trace.records, &output::input_line(&s.sources));
    let _ = writeln!(
        out,
        "throughput: {:.0} IOPS, {:.2} MiB/s over {:.6} s (wall clock)",
        s.figures.throughput.iops,
        s.figures.throughput.mib_per_s,
        s.window_ns as f64 / 1e9
    );
    let r = &s.replay;
    let mut facts = Vec::new();
    if r.fill_bytes > 0 {
        facts.push(format!(
            "filled {} in {:.2} s before",
            mib(r.fill_bytes),
            s.engine.fill_wall_s
        ));
    }
    if let Some(lag) = &r.arrival_lag_us {
        facts.push(format!(
            "arrivals noticed {:.1} us late on average ({:.1} max)",
            lag.mean, lag.max
        ));
    }
    if r.reads_only {
        facts.push(format!(
            "--reads-only left out {}",
            crate::output::count(r.writes_left_out, "write")
        ));
    }
    if r.realigned_requests > 0 {
        facts.push(format!(
            "{} widened to the {} B alignment",
            crate::output::count(r.realigned_requests, "request"),
            d.direct_io_alignment_bytes
        ));
    }
    facts.push(format!(
        "{} I/Os in {:.3} s",
        s.engine.ios_submitted, s.engine.wall_s
    ));
    let _ = writeln!(out, "replay: {}", facts.join("; "));
    if let Some(v) = &r.verify {
        let _ = writeln!(
            out,
            "verify: {} blocks of 512 B checked, {} mismatched",
            v.checked_blocks, v.mismatched_blocks
        );
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning [{}, {}]: {}", w.code, w.count, w.message);
    }
    out
}

#[derive(Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Measured time of each point, ms (after a warm-up of a fifth of it).
    #[arg(long, default_value_t = 250, help_heading = "Points")]
    point_ms: u64,
    /// Request size of the parallelism and interference curves, bytes.
    #[arg(long, default_value_t = 4096, help_heading = "Points")]
    block_bytes: u64,
    /// Outstanding requests of the parallelism curves (increasing).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64",
        help_heading = "Points"
    )]
    outstanding: Vec<u32>,
    /// Region sizes of the parallelism curves, bytes [default: the target's size / 16, 8, 4,
    /// 2 and 1].
    #[arg(long, value_delimiter = ',', help_heading = "Points")]
    region_bytes: Vec<u64>,
    /// Request sizes of the sequential / random curves, bytes.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4096,8192,16384,32768,65536,131072,262144",
        help_heading = "Points"
    )]
    request_bytes: Vec<u64>,
    /// Shares of the second kind of request in the interference curves, percent.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,10,25,50,75,90,100",
        help_heading = "Points"
    )]
    mix_percent: Vec<u32>,
    /// Seed of the random addresses and mixes.
    #[arg(long, default_value_t = 1, help_heading = "Points")]
    seed: u64,
    /// Write the curves as JSON (what device.region_contention.probe_path reads).
    #[arg(long, help_heading = "Outputs")]
    json: PathBuf,
    /// Write the figure (SVG, three panels after PASS's Figs. 1-3).
    #[arg(long, help_heading = "Outputs")]
    svg: Option<PathBuf>,
}

#[cfg(target_os = "linux")]
pub fn probe(args: ProbeArgs) -> Result<(), Error> {
    use flashlane_real::ProbeSpec;
    let outputs = [Some(args.json.as_path()), args.svg.as_deref()];
    output::check_outputs(
        &[("--json", outputs[0]), ("--svg", outputs[1])],
        &[("the target", args.target.target.as_path())],
    )?;
    output::check_all_writable(outputs)?;
    let mut spec = ProbeSpec::new(args.target.options());
    spec.size_bytes = args.target.size_bytes;
    spec.point_ms = args.point_ms;
    spec.block_bytes = args.block_bytes;
    spec.outstanding_requests = args.outstanding;
    spec.region_bytes = args.region_bytes;
    spec.request_bytes = args.request_bytes;
    spec.mix_percent = args.mix_percent;
    spec.seed = args.seed;
    let mut created = None;
    let mut lines = Lines::new();
    let result = flashlane_real::probe(
        &spec,
        &mut |path| {
            output::remove_on_signal(path);
            created = Some(path.to_path_buf());
        },
        &mut |done, total| lines.say(|| format!("probing: {done} of {total} points")),
    );
    if let Some(path) = &created {
        output::forget_on_signal(path);
    }
    let report = result?;
    output::print_report(&render_probe(&report), outputs)?;
    let json = output::json_text(&args.json, &report)?;
    let svg = flashlane_real::figure::svg(&report);
    let mut files: Vec<(&std::path::Path, output::Fill<'_>)> = vec![(
        &args.json,
        Box::new(output::bytes_fill(&args.json, json.as_bytes())),
    )];
    if let Some(path) = &args.svg {
        files.push((path, Box::new(output::bytes_fill(path, svg.as_bytes()))));
    }
    output::write_all_or_none(files)
}

#[cfg(not(target_os = "linux"))]
pub fn probe(_args: ProbeArgs) -> Result<(), Error> {
    Err(Error::Config(
        "flashlane probe needs Linux (io_uring with O_DIRECT)".into(),
    ))
}

/// The text of a probe: the parallelism curves in full (the simulator's input), the others
/// in brief.
#[cfg(target_os = "linux")]
fn render_probe(r: &flashlane_real::ProbeReport) -> String {
    let mut out = String::new();
    let path = r.target["path"].as_str().unwrap_or("?");
    let _ = writeln!(
        out,
        "flashlane probe: {path} ({} bytes; {} ms per point) in {:.1} s",
        r.target["size_bytes"], r.settings.point_ms, r.wall_s
    );
    let ks: Vec<String> = r
        .settings
        .outstanding_requests
        .iter()
        .map(|k| format!("{k:>7}"))
        .collect();
    let _ = writeln!(
        out,
        "parallelism, MiB/s of random {} B requests by outstanding requests:",
        r.settings.block_bytes
    );
    let _ = writeln!(
        out,
        "  {:<6} {:>12} {}  peak  factor at the last",
        "op",
        "region",
        ks.join("")
    );
    for c in &r.parallelism {
        let xs: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("{:>7.1}", p.mib_per_s))
            .collect();
        let _ = writeln!(
            out,
            "  {:<6} {:>12} {}  {:>4}  {:.2}",
            c.operation.name(),
            mib(c.region_bytes),
            xs.join(""),
            c.peak_outstanding_requests,
            c.service_time_factor.last().copied().unwrap_or(1.0)
        );
    }
    for c in &r.sizes {
        let xs: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("{} KiB {:.1}", p.request_bytes / 1024, p.measured.mib_per_s))
            .collect();
        let _ = writeln!(
            out,
            "sizes, {} {} (MiB/s): {}",
            c.pattern,
            c.operation.name(),
            xs.join(", ")
        );
    }
    for c in &r.interference {
        let xs: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("{} % {:.1}", p.second_percent, p.measured.mib_per_s))
            .collect();
        let _ = writeln!(out, "interference, {} (MiB/s): {}", c.mix, xs.join(", "));
    }
    out
}
