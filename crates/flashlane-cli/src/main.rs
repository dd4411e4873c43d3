//! `flashlane`: the command-line front end of the simulator.

mod advise;
mod args;
mod compare;
mod gen;
mod output;
mod progress;
mod real;
mod reproduce;
mod signals;
mod trace_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use args::{DeviceArgs, WorkloadArgs};
use clap::{Args, Parser, Subcommand};
use flashlane_core::config::{preset, Config, PRESETS};
use flashlane_core::Error;

#[derive(Parser)]
#[command(
    name = "flashlane",
    version,
    about = "Trace-driven simulator of NAND-flash SSDs and SSD I/O schedulers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one trace on one SSD configuration and print a summary.
    Run(RunArgs),
    /// Run several host schedulers (or values of any config key) side by side on all cores and
    /// print a table normalized to the first.
    Compare(compare::CompareArgs),
    /// Sweep one config key over values (e.g. host.queue_length_requests 1..512) for one or more host
    /// schedulers.
    Sweep(compare::SweepArgs),
    /// List the bundled SSD presets.
    Presets,
    /// Print a preset's TOML (a starting point for your own config file).
    ShowPreset { name: String },
    /// Write a synthetic trace from a named profile or a workload spec.
    Gen(gen::GenArgs),
    /// Trace tools: workload statistics and layout conversion.
    Trace(trace_cmd::TraceArgs),
    /// Replay a trace onto a real file or block device through the simulator's host
    /// schedulers (io_uring, O_DIRECT) and print the same summary (docs/real-drive.md).
    /// Inputs only a simulation uses are refused: --precondition-cache, --check-integrity,
    /// --set precondition.* and SSDsim's hand-over keys (host.handover_*).
    Replay(real::ReplayArgs),
    /// Measure a drive's curves (PASS's Figs. 1-3: throughput against outstanding requests per
    /// region, sequential vs random, read/write interference) as JSON for
    /// device.region_contention.probe_path, and a figure (docs/real-drive.md).
    Probe(real::ProbeArgs),
    /// Redraw a paper's figures beside its claims: runs, runs.csv, PNG/SVG and report.html
    /// (forwards to `python3 -m flashlane.reproduce`; PAPER: piq, pass, vios, sos, venice, all,
    /// or combos, the five techniques alone and together).
    Reproduce(reproduce::ReproduceArgs),
    /// Which of the five papers' techniques, alone or together, helps a trace: its conditions,
    /// its place on the effect maps, and every technique and combination run on it, ranked
    /// (forwards to the Python package; docs/advise.md).
    Advise(advise::AdviseArgs),
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Write the JSON summary to this file (`-`: standard output).
    #[arg(long, help_heading = "Outputs")]
    json: Option<PathBuf>,
    /// Write the order in which the host scheduler handed requests to the device, as CSV
    /// (`command,seq,op,offset_bytes,size_bytes,dispatched_ns`; docs/summary.md).
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    dispatch_log: Option<PathBuf>,
}

fn main() -> ExitCode {
    restore_default_sigpipe();
    let cli = Cli::parse();
    // After parsing: --help and usage errors need no handler.
    signals::install();
    // The commands that run in the Python package: its exit status is ours (2 for its
    // errors, which it has already printed).
    let forwarded = match cli.command {
        Command::Reproduce(args) => reproduce::run(args),
        Command::Advise(args) => advise::run(args),
        command => return finish(execute(command)),
    };
    match forwarded {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            output::print_err(&format!("error: {e}\n"));
            ExitCode::from(2)
        }
    }
}

fn finish(result: Result<(), Error>) -> ExitCode {
    match result {
        // A message that could not reach standard error still fails the command.
        Ok(()) if !output::stderr_failed() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::from(2),
        Err(e) => {
            output::print_err(&format!("error: {e}\n"));
            ExitCode::from(2)
        }
    }
}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`flashlane ... | head`) would be an
/// error at every print; like other Unix tools, end quietly instead.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to its default at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn execute(command: Command) -> Result<(), Error> {
    match command {
        Command::Presets => {
            let mut text = String::new();
            for (name, _) in PRESETS {
                let config = Config::from_preset(name, &[])?;
                text.push_str(&format!("{name:<16} {}\n", config.description));
            }
            output::print_out(&text)
        }
        Command::ShowPreset { name } => output::print_out(preset(&name)?),
        Command::Run(args) => run(args),
        Command::Replay(args) => real::replay(args),
        Command::Probe(args) => real::probe(args),
        Command::Compare(args) => compare::compare(args),
        Command::Sweep(args) => compare::sweep(args),
        Command::Gen(args) => gen::run(args),
        Command::Trace(args) => trace_cmd::run(args),
        // main runs these (to pass Python's exit status on); these arms only complete the match.
        Command::Reproduce(args) => reproduce::run(args).map(|_| ()),
        Command::Advise(args) => advise::run(args).map(|_| ()),
    }
}

fn run(args: RunArgs) -> Result<(), Error> {
    let started = std::time::Instant::now();
    let outputs = [args.json.as_deref(), args.dispatch_log.as_deref()];
    let mut inputs = args.workload.input_files();
    inputs.extend(args.device.input_files());
    output::check_outputs(
        &[("--json", outputs[0]), ("--dispatch-log", outputs[1])],
        &inputs,
    )?;
    output::check_all_writable(outputs)?;
    let spec = args.workload.spec(args.device.config(&[])?)?;
    let mut display = progress::ProgressDisplay::new();
    let result = if args.dispatch_log.is_some() {
        flashlane_core::run_with_dispatch_log(&spec, &mut |p| display.update(p))
            .map(|(summary, log)| (summary, Some(log)))
    } else {
        flashlane_core::run_with_progress(&spec, &mut |p| display.update(p))
            .map(|summary| (summary, None))
    };
    display.finish();
    let (summary, log) = result?;
    let whole_run_s = started.elapsed().as_secs_f64();
    let mut text = output::render_text(&summary, whole_run_s);
    if let Some(changes) = args.device.changes_to_the_preset() {
        // Under the header's first line, which names the config as its `name` says.
        let at = text.find('\n').map_or(text.len(), |i| i + 1);
        text.insert_str(
            at,
            &format!("  {changes} (the config echo in --json holds it whole)\n"),
        );
    }
    output::print_report(&text, outputs)?;
    output::write_summary_outputs(
        args.json.as_deref(),
        &summary,
        args.dispatch_log.as_deref().zip(log.as_ref()),
    )
}
