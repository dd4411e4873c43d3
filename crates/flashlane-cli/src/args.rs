//! Command-line arguments shared by `run`, `compare` and `sweep`: the SSD and the workload.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use clap::Args;
use flashlane_core::config::{parse_override, Config};
use flashlane_core::run::{AddressPolicy, Replay, TraceInput};
use flashlane_core::trace::{self, BlockEvent, GenericCsvSpec, ReaderOptions, TraceFormat};
use flashlane_core::workload::{self, ArrivalSpec, SyntheticSpec};
use flashlane_core::{Error, RunSpec};

#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    /// Bundled SSD preset (see `flashlane presets`).
    #[arg(long)]
    pub preset: Option<String>,
    /// SSD config file (TOML, same layout as the presets; `flashlane show-preset NAME` prints
    /// one). With --preset, a partial file merged over the preset.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a config value, e.g. --set ftl.overprovisioning_fraction=0.2 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// The --config file's text, read once: compare and sweep resolve one config per run,
    /// and the file may be a pipe (`--config <(...)`).
    #[arg(skip)]
    config_text: OnceLock<String>,
}

impl DeviceArgs {
    /// The files it reads (for the output checks, `output::check_outputs`).
    pub fn input_files(&self) -> Vec<(&'static str, &Path)> {
        self.config
            .iter()
            .map(|path| ("the config file", path.as_path()))
            .collect()
    }

    /// What was put over the preset, for the run's header: "config FILE merged over preset
    /// NAME", "N --set overrides", both or neither (a run labelled only with the preset's name
    /// would look like the preset).
    pub fn changes_to_the_preset(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let (Some(name), Some(path)) = (&self.preset, &self.config) {
            parts.push(format!(
                "config {} merged over preset {name}",
                path.display()
            ));
        }
        match self.set.len() {
            0 => {}
            1 => parts.push("1 --set override".to_string()),
            n => parts.push(format!("{n} --set overrides")),
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    pub fn overrides(&self) -> Result<Vec<(String, String)>, Error> {
        self.set.iter().map(|s| parse_override(s)).collect()
    }

    /// The resolved config with `extra` overrides applied after `--set`.
    pub fn config(&self, extra: &[(String, String)]) -> Result<Config, Error> {
        self.config_with(None, extra)
    }

    /// The same with `preset` in place of `--preset` (a compared preset), if given.
    pub fn config_with(
        &self,
        preset: Option<&str>,
        extra: &[(String, String)],
    ) -> Result<Config, Error> {
        let mut overrides = self.overrides()?;
        overrides.extend_from_slice(extra);
        let preset = preset.map(str::to_string).or_else(|| self.preset.clone());
        match (&preset, &self.config) {
            (Some(name), None) => Config::from_preset(name, &overrides),
            (Some(name), Some(path)) => Config::from_preset_and_text(
                name,
                self.config_text(path)?,
                &path.display().to_string(),
                &overrides,
            ),
            (None, Some(path)) => Config::from_text(
                self.config_text(path)?,
                &path.display().to_string(),
                &overrides,
            ),
            (None, None) => Err(Error::Config("give --preset NAME or --config FILE".into())),
        }
    }

    fn config_text(&self, path: &std::path::Path) -> Result<&str, Error> {
        if let Some(text) = self.config_text.get() {
            return Ok(text);
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("{}: cannot read config: {e}", path.display())))?;
        Ok(self.config_text.get_or_init(|| text))
    }
}

/// How to read a trace: the options every command that reads one (`run`, `compare`, `sweep`,
/// `trace stats`, `trace convert`) takes, defined once here.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Trace reading")]
pub struct TraceReadArgs {
    /// Trace layout (one for all traces, or one per --trace); detected from content if omitted.
    #[arg(long)]
    pub format: Vec<String>,
    /// Column mapping for --format generic-csv (see docs/traces.md).
    #[arg(long, value_name = "SPEC")]
    pub csv_columns: Option<String>,
    /// Take blkparse/blktrace queue (Q) events instead of issue (D) events.
    #[arg(long)]
    pub queue_events: bool,
    /// Skip and count up to N malformed lines per trace instead of stopping at the first.
    #[arg(long, default_value_t = 0)]
    pub max_bad_lines: u64,
    /// Keep only requests of this device / disk number.
    #[arg(long)]
    pub device: Option<u32>,
}

impl TraceReadArgs {
    /// The layouts named by `--format`, checked.
    pub fn formats(&self) -> Result<Vec<TraceFormat>, Error> {
        self.format.iter().map(|f| parse_format(f)).collect()
    }

    /// Reader settings from `--max-bad-lines`, `--queue-events` and `--csv-columns`.
    pub fn reader_options(&self) -> Result<ReaderOptions, Error> {
        let generic_csv = match &self.csv_columns {
            Some(text) => Some(
                text.parse::<GenericCsvSpec>()
                    .map_err(|e| Error::Config(format!("--csv-columns {text}: {e}")))?,
            ),
            None => None,
        };
        Ok(ReaderOptions {
            max_bad_lines: self.max_bad_lines,
            block_event: if self.queue_events {
                BlockEvent::Queue
            } else {
                BlockEvent::Issue
            },
            generic_csv,
            ..ReaderOptions::default()
        })
    }
}

#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Block trace to replay (plain, gzip or zstd; `-` is standard input, and a pipe or FIFO
    /// works too). Repeat (or add --profile/--synthetic) to mix workloads, each in its own
    /// equal share of the logical space.
    #[arg(long, required_unless_present_any = ["profile", "synthetic"])]
    pub trace: Vec<PathBuf>,
    /// A named synthetic stand-in generated on the fly (`flashlane gen --list`).
    #[arg(long, value_name = "NAME")]
    pub profile: Vec<String>,
    /// A synthetic workload spec (TOML, docs/workloads.md) generated on the fly.
    #[arg(long, value_name = "SPEC")]
    pub synthetic: Vec<PathBuf>,
    #[command(flatten)]
    pub reading: TraceReadArgs,
    /// Take addresses past the capacity modulo the capacity.
    #[arg(
        long,
        conflicts_with = "remap_addresses",
        help_heading = "Addresses and replay"
    )]
    pub fold_addresses: bool,
    /// Renumber the pages the trace touches densely (a pre-pass) so its footprint fits.
    #[arg(long, help_heading = "Addresses and replay")]
    pub remap_addresses: bool,
    /// Open loop: multiply trace times by X (0.5 = twice as fast).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "X",
        help_heading = "Addresses and replay"
    )]
    pub time_scale: f64,
    /// Closed loop: ignore timestamps, keep N requests in the system.
    #[arg(long, value_name = "N", conflicts_with_all = ["afap"], help_heading = "Addresses and replay")]
    pub closed_loop: Option<u32>,
    /// Ignore timestamps; a request arrives as soon as the host queue has room.
    #[arg(long, help_heading = "Addresses and replay")]
    pub afap: bool,
    /// Simulate the first N requests but leave them out of every statistic.
    #[arg(long, default_value_t = 0, help_heading = "Addresses and replay")]
    pub warmup_requests: u64,
    /// Read at most N trace records (over all traces).
    #[arg(long, help_heading = "Addresses and replay")]
    pub max_requests: Option<u64>,
    /// Seed of every random stream.
    #[arg(long, default_value_t = 1, help_heading = "Addresses and replay")]
    pub seed: u64,
    /// Track a version per page and count reads that miss the latest write (slower).
    #[arg(long, help_heading = "Addresses and replay")]
    pub check_integrity: bool,
    /// Keep a snapshot of the preconditioned drive in DIR (created if missing) and load it,
    /// instead of preconditioning, in every later run of the same drive: same geometry,
    /// [ftl], [precondition], [variation], seed and trace footprint; schedulers, interconnect
    /// and timing may differ (docs/sweeps.md, "Precondition cache").
    #[arg(long, value_name = "DIR", help_heading = "Preconditioning")]
    pub precondition_cache: Option<PathBuf>,
}

fn parse_format(name: &str) -> Result<TraceFormat, Error> {
    TraceFormat::from_name(name).ok_or_else(|| {
        Error::Config(format!(
            "unknown trace format `{name}`; known formats: {}",
            TraceFormat::ALL
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

impl WorkloadArgs {
    /// The files it reads (for the output checks, `output::check_outputs`).
    pub fn input_files(&self) -> Vec<(&'static str, &Path)> {
        let traces = self.trace.iter().map(|path| ("the trace", path.as_path()));
        let specs = self
            .synthetic
            .iter()
            .map(|path| ("the workload spec", path.as_path()));
        traces.chain(specs).collect()
    }

    pub fn spec(&self, config: Config) -> Result<RunSpec, Error> {
        let formats = self.reading.formats()?;
        if formats.len() > 1 && formats.len() != self.trace.len() {
            return Err(Error::Config(format!(
                "{} --format values for {} --trace files: give one for all or one per trace",
                formats.len(),
                self.trace.len()
            )));
        }
        // A pipe read by one trace is empty for the next: refuse rather than replay nothing.
        for (i, path) in self.trace.iter().enumerate() {
            if self.trace[..i].contains(path) && trace::is_stream(path) {
                return Err(Error::Config(format!(
                    "--trace {} given twice: it is a pipe or standard input, which can be read only once",
                    path.display()
                )));
            }
        }
        let options = self.reading.reader_options()?;
        let mut traces: Vec<TraceInput> = self
            .trace
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let mut input =
                    TraceInput::new(path.clone(), formats.get(i).or(formats.first()).copied());
                input.device = self.reading.device;
                input.options = options.clone();
                input
            })
            .collect();
        let mut synthetic: Vec<(String, SyntheticSpec)> = Vec::new();
        for name in &self.profile {
            let profile = workload::profile(name).ok_or_else(|| {
                Error::Config(format!(
                    "--profile {name}: unknown profile; `flashlane gen --list` lists them"
                ))
            })?;
            synthetic.push((format!("profile {}", profile.name), profile.spec));
        }
        for path in &self.synthetic {
            synthetic.push((path.display().to_string(), SyntheticSpec::from_file(path)?));
        }
        // A closed-loop spec asks for closed-loop replay at its depth unless the user chose.
        let spec_depth = synthetic.iter().find_map(|(_, spec)| match spec.arrival {
            ArrivalSpec::ClosedLoop {
                queue_depth_requests,
            } => Some(queue_depth_requests),
            _ => None,
        });
        for (name, spec) in synthetic {
            let mut input = TraceInput::synthetic(name, spec);
            input.device = self.reading.device;
            traces.push(input);
        }
        let replay = match (self.closed_loop, self.afap, spec_depth) {
            (Some(outstanding), _, _) => Replay::ClosedLoop { outstanding },
            (None, true, _) => Replay::AsFastAsPossible,
            (None, false, Some(outstanding)) => Replay::ClosedLoop { outstanding },
            (None, false, None) => Replay::OpenLoop {
                time_scale: self.time_scale,
            },
        };
        let addresses = if self.fold_addresses {
            AddressPolicy::Fold
        } else if self.remap_addresses {
            AddressPolicy::Remap
        } else {
            AddressPolicy::Strict
        };
        Ok(RunSpec {
            config,
            traces,
            replay,
            addresses,
            warmup_requests: self.warmup_requests,
            max_requests: self.max_requests,
            seed: self.seed,
            check_integrity: self.check_integrity,
            precondition_cache: self.precondition_cache.clone(),
        })
    }
}
