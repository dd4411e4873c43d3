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
            eprintln!("flashlane: {}", line());
        }
    }
}

#[cfg(target_os = "linux")]
pub fn replay(args: ReplayArgs) -> Result<(), Error> {
    use flashlane_real::{Callbacks, ReplayProgress, ReplaySpec};
    let outputs = [args.json.as_deref(), args.dispatch_log.as_deref()];
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
    output::print_report(&render_replay(&summary), outputs);
    output::write_summary_outputs(
        args.json.as_deref(),
        &summary,
        args.dispatch_log.as_deref().zip(log.as_ref()),
    )
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
    if let Some(l) = &s.device.assumed_chip_layout {
        let _ = writeln!(
            out,
            "  assumed chip layout (from {}): {} channels x {} chips, {} B pages; {}",
            l.from_config, l.channels, l.chips_per_channel, l.page_bytes, l.note
        );
    }
    let _ = writeln!(
        out,
        "requests: {} measured ({} reads, {} writes), {} warm-up, {} records read",
        s.requests.completed,
        s.requests.reads,
        s.requests.writes,
        s.requests.warmup,
        s.trace.records
    );
    output::input_line(&mut out, &s.sources);
    output::latency_table(&mut out, &s.latency_us);
    let _ = writeln!(
        out,
        "time split (mean us): host queue {:.1}, device {:.1}",
        s.time_split_us.host_queue, s.time_split_us.device
    );
    let q = &s.host_queue;
    let _ = writeln!(
        out,
        "host queue: mean {:.2} requests, max {} of {}, full {:.1} % of the time",
        q.length_mean,
        q.length_max,
        q.capacity_requests,
        q.full_fraction * 100.0
    );
    let _ = writeln!(
        out,
        "throughput: {:.0} IOPS, {:.2} MiB/s over {:.6} s (wall clock)",
        s.throughput.iops,
        s.throughput.mib_per_s,
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
            "--reads-only left out {} writes",
            r.writes_left_out
        ));
    }
    if r.realigned_requests > 0 {
        facts.push(format!(
            "{} requests widened to the {} B alignment",
            r.realigned_requests, d.direct_io_alignment_bytes
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
