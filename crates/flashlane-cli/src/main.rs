//! `flashlane`: the command-line front end of the simulator.

mod output;
mod trace_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use flashlane_core::config::{parse_override, preset_text, Config, PRESETS};
use flashlane_core::trace::TraceFormat;
use flashlane_core::{Error, RunSpec};

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
    /// List the bundled SSD presets.
    Presets,
    /// Print a preset's TOML (a starting point for your own config file).
    ShowPreset { name: String },
    /// Trace tools: workload statistics and layout conversion.
    Trace(trace_cmd::TraceArgs),
}

#[derive(Args)]
struct RunArgs {
    /// Bundled SSD preset (see `flashlane presets`).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    preset: Option<String>,
    /// SSD config file (TOML, same layout as the presets).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Block trace to replay (plain, gzip or zstd).
    #[arg(long)]
    trace: PathBuf,
    /// Trace layout; detected from the content when omitted.
    #[arg(long)]
    format: Option<String>,
    /// Override a config value, e.g. --set ftl.overprovisioning_fraction=0.2 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Simulate the first N requests but leave them out of every statistic.
    #[arg(long, default_value_t = 0)]
    warmup_requests: u64,
    /// Read at most N trace records.
    #[arg(long)]
    max_requests: Option<u64>,
    /// Seed of every random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the JSON summary to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Track a version per page and count reads that miss the latest write (slower).
    #[arg(long)]
    check_integrity: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn execute(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Presets => {
            for (name, _) in PRESETS {
                let config = Config::from_preset(name, &[])?;
                println!("{name:<16} {}", config.description);
            }
            Ok(())
        }
        Command::ShowPreset { name } => {
            let text = preset_text(&name).ok_or_else(|| {
                Error::Config(format!(
                    "unknown preset `{name}`; known presets: {}",
                    PRESETS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            print!("{text}");
            Ok(())
        }
        Command::Run(args) => run(args),
        Command::Trace(args) => trace_cmd::run(args),
    }
}

fn run(args: RunArgs) -> Result<(), Error> {
    let overrides = args
        .set
        .iter()
        .map(|s| parse_override(s))
        .collect::<Result<Vec<_>, _>>()?;
    let config = match (&args.preset, &args.config) {
        (Some(name), _) => Config::from_preset(name, &overrides)?,
        (None, Some(path)) => Config::from_file(path, &overrides)?,
        (None, None) => return Err(Error::Config("give --preset NAME or --config FILE".into())),
    };
    let trace_format = match &args.format {
        Some(name) => Some(TraceFormat::from_name(name).ok_or_else(|| {
            Error::Config(format!(
                "unknown trace format `{name}`; known formats: {}",
                TraceFormat::ALL
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?),
        None => None,
    };
    let spec = RunSpec {
        config,
        trace_path: args.trace.clone(),
        trace_format,
        warmup_requests: args.warmup_requests,
        max_requests: args.max_requests,
        seed: args.seed,
        check_integrity: args.check_integrity,
    };
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let summary = flashlane_core::run_with_progress(&spec, &mut |records| {
        bar.set_message(format!("{records} requests read"));
        bar.tick();
    });
    bar.finish_and_clear();
    let summary = summary?;
    print!("{}", output::render_text(&summary));
    if let Some(path) = &args.json {
        output::write_json(path, &summary)?;
    }
    Ok(())
}
