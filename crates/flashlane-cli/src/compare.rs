//! `flashlane compare` and `flashlane sweep`: many runs of one workload on all cores, one table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Args;
use flashlane_core::config::parse_override;
use flashlane_core::stats::Summary;
use flashlane_core::{Error, RunSpec};
use serde::Serialize;

use crate::args::{DeviceArgs, WorkloadArgs};
use crate::output::{bytes_fill, json_text, write_all_or_none, Fill};
use crate::progress::RunsProgress;

#[derive(Args)]
#[command(after_help = legend_help())]
pub struct CompareArgs {
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Host schedulers to compare, the first being the reference (e.g. noop,rws,piq_r,piq_w,piq).
    #[arg(
        long,
        value_delimiter = ',',
        required_unless_present_any = ["vary", "variant"],
        conflicts_with = "variant",
        help_heading = "Comparison"
    )]
    host_schedulers: Vec<String>,
    /// Compare values of another config key instead: KEY=V1,V2,... (the first is the
    /// reference). `--vary preset=A,B` compares whole presets (then --preset is not needed).
    #[arg(
        long,
        value_name = "KEY=V1,V2,...",
        conflicts_with_all = ["host_schedulers", "variant"],
        help_heading = "Comparison"
    )]
    vary: Option<String>,
    /// A named variant, each a set of settings: NAME:KEY=VALUE[,KEY=VALUE...] (repeatable; the
    /// first is the reference), e.g. --variant IOS:device.scheduler.kind=in_order --variant
    /// "SOS(QSL):device.scheduler.kind=sos,device.scheduler.write_hit_manager=false". The key
    /// `preset` picks a whole preset for the variant.
    #[arg(long, value_name = "NAME:KEY=V,...", help_heading = "Comparison")]
    variant: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
#[command(after_help = legend_help())]
pub struct SweepArgs {
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Config key to sweep.
    #[arg(
        long,
        default_value = "host.queue_length_requests",
        help_heading = "Sweep"
    )]
    key: String,
    /// Values of the key.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512",
        help_heading = "Sweep"
    )]
    values: Vec<String>,
    /// Host schedulers to run at every value (the first is the reference at each value).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "noop",
        help_heading = "Sweep"
    )]
    host_schedulers: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
struct OutputArgs {
    /// Write the table as CSV (`-`: standard output).
    #[arg(long, help_heading = "Outputs")]
    csv: Option<PathBuf>,
    /// Write every run's full summary: {"rows": [{"host_scheduler": NAME, "summary": {...}}, ...]}.
    #[arg(long, help_heading = "Outputs")]
    json: Option<PathBuf>,
    /// Simulations run at once (default: all cores).
    #[arg(long, help_heading = "Outputs")]
    jobs: Option<usize>,
}

/// One simulation of the comparison.
struct Job {
    /// Swept key and value, if any.
    swept: Option<(String, String)>,
    /// The variant's name (`--variant`).
    variant: Option<String>,
    /// A whole preset instead of --preset (`--vary preset=...`, or `preset=` in a variant).
    preset: Option<String>,
    overrides: Vec<(String, String)>,
    /// Index of the row this row is normalized to.
    reference: usize,
}

impl Job {
    fn new(overrides: Vec<(String, String)>, reference: usize) -> Job {
        Job {
            swept: None,
            variant: None,
            preset: None,
            overrides,
            reference,
        }
    }
}

#[derive(Serialize)]
struct Row<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'a str>,
    host_scheduler: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    summary: &'a Summary,
}

#[derive(Serialize)]
struct Rows<'a> {
    rows: Vec<Row<'a>>,
}

pub fn compare(args: CompareArgs) -> Result<(), Error> {
    let jobs: Vec<Job> = if let Some(vary) = &args.vary {
        let (key, values) = vary
            .split_once('=')
            .ok_or_else(|| Error::Config(format!("--vary {vary}: expected KEY=V1,V2,...")))?;
        let key = key.trim();
        values
            .split(',')
            .map(|v| {
                let mut job = if key == "preset" {
                    Job {
                        preset: Some(v.trim().to_string()),
                        ..Job::new(Vec::new(), 0)
                    }
                } else {
                    Job::new(vec![(key.to_string(), v.to_string())], 0)
                };
                job.swept = Some((key.to_string(), v.to_string()));
                job
            })
            .collect()
    } else if !args.variant.is_empty() {
        let jobs: Vec<Job> = args
            .variant
            .iter()
            .map(|text| parse_variant(text))
            .collect::<Result<_, _>>()?;
        // Rows are told apart by name: two of one name would be one row twice.
        for (i, job) in jobs.iter().enumerate() {
            if jobs[..i].iter().any(|other| other.variant == job.variant) {
                return Err(Error::Config(format!(
                    "--variant {}: the name is given twice; name each variant once",
                    job.variant.as_deref().unwrap_or_default()
                )));
            }
        }
        jobs
    } else {
        args.host_schedulers
            .iter()
            .map(|s| Job::new(vec![("host.scheduler.kind".into(), s.clone())], 0))
            .collect()
    };
    execute(&args.device, &args.workload, jobs, &args.output)
}

/// `NAME:KEY=VALUE[,KEY=VALUE...]`; the key `preset` names a whole preset.
fn parse_variant(text: &str) -> Result<Job, Error> {
    let bad = |why: &str| {
        Error::Config(format!(
            "--variant {text}: {why}; expected NAME:KEY=VALUE[,KEY=VALUE...]"
        ))
    };
    let (name, settings) = text
        .split_once(':')
        .ok_or_else(|| bad("no `:` after the name"))?;
    if name.trim().is_empty() {
        return Err(bad("empty name"));
    }
    let mut job = Job::new(Vec::new(), 0);
    job.variant = Some(name.trim().to_string());
    for setting in settings.split(',').filter(|s| !s.trim().is_empty()) {
        let (key, value) =
            parse_override(setting).map_err(|_| bad(&format!("`{setting}` is not KEY=VALUE")))?;
        if key == "preset" {
            job.preset = Some(value);
        } else {
            job.overrides.push((key, value));
        }
    }
    Ok(job)
}

pub fn sweep(args: SweepArgs) -> Result<(), Error> {
    let mut jobs = Vec::new();
    for value in &args.values {
        let reference = jobs.len();
        for scheduler in &args.host_schedulers {
            let mut job = Job::new(
                vec![
                    ("host.scheduler.kind".into(), scheduler.clone()),
                    (args.key.clone(), value.clone()),
                ],
                reference,
            );
            job.swept = Some((args.key.clone(), value.clone()));
            jobs.push(job);
        }
    }
    execute(&args.device, &args.workload, jobs, &args.output)
}

fn execute(
    device: &DeviceArgs,
    workload: &WorkloadArgs,
    jobs: Vec<Job>,
    output: &OutputArgs,
) -> Result<(), Error> {
    if jobs.is_empty() {
        return Err(Error::Config("nothing to compare".into()));
    }
    let mut inputs = workload.input_files();
    inputs.extend(device.input_files());
    crate::output::check_outputs(
        &[
            ("--csv", output.csv.as_deref()),
            ("--json", output.json.as_deref()),
        ],
        &inputs,
    )?;
    crate::output::check_all_writable([output.csv.as_deref(), output.json.as_deref()])?;
    // Resolve every config first, so a bad key or value stops the run before any simulation.
    let configs = jobs
        .iter()
        .map(|job| device.config_with(job.preset.as_deref(), &job.overrides))
        .collect::<Result<Vec<_>, Error>>()?;
    // One workload for every run, its files read once (a `--synthetic` spec may be a pipe);
    // a piped trace is copied once here and each run reads the copy.
    let mut base = workload.spec(configs[0].clone())?;
    for input in &mut base.traces {
        input.spill_if_stream()?;
    }
    let specs: Vec<RunSpec> = configs
        .into_iter()
        .map(|config| RunSpec {
            config,
            ..base.clone()
        })
        .collect();
    let workers = output
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, specs.len());
    // Each run checks its own memory; the runs on parallel threads are checked together.
    flashlane_core::run::check_parallel_memory(&specs, workers)?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Summary, Error>>>> =
        Mutex::new((0..specs.len()).map(|_| None).collect());
    let progress = RunsProgress::new(specs.len() as u64);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(spec) = specs.get(i) else { break };
                let result = flashlane_core::run(spec);
                progress.run_finished();
                if let Ok(mut slots) = results.lock() {
                    slots[i] = Some(result);
                }
            });
        }
    });
    progress.finish();
    let summaries = results
        .into_inner()
        .map_err(|_| Error::Workload("a simulation thread panicked".into()))?
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Workload("a simulation did not run".into()))))
        .collect::<Result<Vec<Summary>, Error>>()?;
    crate::output::print_report(
        &table_text(&jobs, &summaries),
        [output.csv.as_deref(), output.json.as_deref()],
    )?;
    // The table and the summaries are one result: both files are written, or neither.
    let csv_text = table_csv(&jobs, &summaries);
    let json_text = match &output.json {
        Some(path) => Some(json_text(
            path,
            &Rows {
                rows: jobs
                    .iter()
                    .zip(&summaries)
                    .map(|(job, summary)| Row {
                        variant: job.variant.as_deref(),
                        host_scheduler: &summary.host_scheduler.name,
                        key: job.swept.as_ref().map(|(k, _)| k.as_str()),
                        value: job.swept.as_ref().map(|(_, v)| v.as_str()),
                        summary,
                    })
                    .collect(),
            },
        )?),
        None => None,
    };
    let mut outputs: Vec<(&Path, Fill)> = Vec::new();
    if let Some(path) = &output.csv {
        outputs.push((path, Box::new(bytes_fill(path, csv_text.as_bytes()))));
    }
    if let (Some(path), Some(text)) = (&output.json, &json_text) {
        outputs.push((path, Box::new(bytes_fill(path, text.as_bytes()))));
    }
    write_all_or_none(outputs)
}

/// One column of the compare / sweep tables: its CSV name, its short header, what it is (the
/// legend under the table and in `--help`), its decimals and how it is read from a summary.
struct Column {
    csv: &'static str,
    header: &'static str,
    legend: &'static str,
    decimals: usize,
    value: fn(&Summary) -> f64,
}

/// Every figure of the tables, each defined in docs/summary.md.
const COLUMNS: [Column; 11] = [
    Column {
        csv: "read_latency_us",
        header: "read_us",
        legend: "mean read latency, arrival to completion (us; latency_us.read.mean)",
        decimals: 1,
        value: |s| s.figures.latency_us.read.mean,
    },
    Column {
        csv: "write_latency_us",
        header: "write_us",
        legend: "mean write latency (us; latency_us.write.mean)",
        decimals: 1,
        value: |s| s.figures.latency_us.write.mean,
    },
    Column {
        csv: "read_conflict_wait_us",
        header: "rd_cw_us",
        legend: "conflict wait of a read page: mean wait for its chip plus for its path (us; \
                 conflicts.read_chip_wait_us + read_path_wait_us)",
        decimals: 1,
        value: |s| s.conflicts.read_chip_wait_us + s.conflicts.read_path_wait_us,
    },
    Column {
        csv: "write_conflict_wait_us",
        header: "wr_cw_us",
        legend: "the same for a write page (us)",
        decimals: 1,
        value: |s| s.conflicts.write_chip_wait_us + s.conflicts.write_path_wait_us,
    },
    Column {
        csv: "chip_utilization",
        header: "chip_util",
        legend: "mean share of chips busy over the measured window (fraction; chips.utilization)",
        decimals: 4,
        value: |s| s.chips.utilization,
    },
    Column {
        csv: "chip_active_utilization",
        header: "act_util",
        legend: "the same over only the time some chip was busy (fraction; \
                 chips.active_utilization, PIQ's utilized chips / chips)",
        decimals: 4,
        value: |s| s.chips.active_utilization,
    },
    Column {
        csv: "read_conflicts",
        header: "rd_confl",
        legend: "measured reads sharing a chip with a request ahead of them (count; \
                 conflicts.read, PIQ's definition)",
        decimals: 0,
        value: |s| s.conflicts.read as f64,
    },
    Column {
        csv: "write_conflicts",
        header: "wr_confl",
        legend: "the same for writes (count; conflicts.write)",
        decimals: 0,
        value: |s| s.conflicts.write as f64,
    },
    Column {
        csv: "host_queue_length_mean",
        header: "hq_mean",
        legend: "time-weighted mean requests in the host queue (requests; \
                 host_queue.length_mean)",
        decimals: 2,
        value: |s| s.figures.host_queue.length_mean,
    },
    Column {
        csv: "host_queue_length_max",
        header: "hq_max",
        legend: "most requests in the host queue at once (requests; host_queue.length_max)",
        decimals: 0,
        value: |s| s.figures.host_queue.length_max as f64,
    },
    Column {
        csv: "host_queue_full_fraction",
        header: "hq_full",
        legend: "share of the window the host queue was full (fraction; \
                 host_queue.full_fraction)",
        decimals: 4,
        value: |s| s.figures.host_queue.full_fraction,
    },
];

fn figures(s: &Summary) -> [f64; COLUMNS.len()] {
    COLUMNS.map(|c| (c.value)(s))
}

/// The legend: one line per column.
fn legend() -> String {
    let mut out = String::from("Columns (the first table divides each by the reference row's):\n");
    for c in &COLUMNS {
        let _ = writeln!(out, "  {:<9} {}", c.header, c.legend);
    }
    out
}

fn legend_help() -> clap::builder::StyledStr {
    legend().into()
}

fn ratio(value: f64, reference: f64) -> f64 {
    if reference == 0.0 {
        if value == 0.0 {
            1.0
        } else {
            f64::NAN
        }
    } else {
        value / reference
    }
}

fn label(job: &Job, s: &Summary) -> String {
    if let Some(name) = &job.variant {
        return name.clone();
    }
    match &job.swept {
        Some((key, value)) if key == "host.scheduler.kind" || key == "preset" => value.clone(),
        Some((key, value)) => format!("{} {key}={value}", s.host_scheduler.name),
        None => s.host_scheduler.name.clone(),
    }
}

fn table_text(jobs: &[Job], summaries: &[Summary]) -> String {
    let mut out = String::new();
    let width = jobs
        .iter()
        .zip(summaries)
        .map(|(j, s)| label(j, s).len())
        .max()
        .unwrap_or(8)
        .max(8);
    let header = |out: &mut String| {
        let _ = write!(out, "{:<width$}", "");
        for c in &COLUMNS {
            let _ = write!(out, " {:>9}", c.header);
        }
        let _ = writeln!(out);
    };
    let _ = writeln!(
        out,
        "normalized to the reference row (absolute values below)"
    );
    header(&mut out);
    for (job, s) in jobs.iter().zip(summaries) {
        let f = figures(s);
        let r = figures(&summaries[job.reference]);
        let _ = write!(out, "{:<width$}", label(job, s));
        for i in 0..COLUMNS.len() {
            let _ = write!(out, " {:>9.3}", ratio(f[i], r[i]));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
    header(&mut out);
    for (job, s) in jobs.iter().zip(summaries) {
        let _ = write!(out, "{:<width$}", label(job, s));
        for (c, v) in COLUMNS.iter().zip(figures(s)) {
            let _ = write!(out, " {:>9.*}", c.decimals, v);
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
    out.push_str(&legend());
    // Each distinct warning once, with the rows that carry it (a host queue that never held
    // two requests means these rows could not differ by their host scheduler).
    let mut seen: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for (job, s) in jobs.iter().zip(summaries) {
        for w in &s.warnings {
            match seen
                .iter_mut()
                .find(|(c, m, _)| *c == w.code && *m == w.message)
            {
                Some((_, _, rows)) => rows.push(label(job, s)),
                None => seen.push((w.code, &w.message, vec![label(job, s)])),
            }
        }
    }
    for (code, message, rows) in seen {
        let _ = writeln!(out, "warning [{code}] ({}): {message}", rows.join(", "));
    }
    out
}

fn table_csv(jobs: &[Job], summaries: &[Summary]) -> String {
    let mut out = String::from("variant,host_scheduler,key,value");
    for c in &COLUMNS {
        let _ = write!(out, ",{}", c.csv);
    }
    for c in &COLUMNS {
        let _ = write!(out, ",{}_normalized", c.csv);
    }
    out.push('\n');
    for (job, s) in jobs.iter().zip(summaries) {
        let (key, value) = job.swept.clone().unwrap_or_default();
        let variant = csv_field(job.variant.as_deref().unwrap_or(""));
        let _ = write!(
            out,
            "{variant},{},{},{}",
            s.host_scheduler.name,
            csv_field(&key),
            csv_field(&value)
        );
        let f = figures(s);
        let r = figures(&summaries[job.reference]);
        for v in f {
            let _ = write!(out, ",{v}");
        }
        for i in 0..COLUMNS.len() {
            let _ = write!(out, ",{}", ratio(f[i], r[i]));
        }
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_and_the_csv_header_name_every_column() {
        let legend = legend();
        let csv = table_csv(&[], &[]);
        for c in &COLUMNS {
            assert!(
                legend.contains(&format!("  {:<9} ", c.header)),
                "{} missing from the legend",
                c.header
            );
            assert!(!c.legend.is_empty());
            assert!(
                csv.contains(&format!(",{},", c.csv)) || csv.contains(&format!(",{}\n", c.csv))
            );
        }
        assert_eq!(legend.lines().count(), COLUMNS.len() + 1);
    }

    #[test]
    fn variants_parse_names_settings_and_presets() {
        let job = parse_variant("SOS(QSL):device.scheduler.kind=sos, preset=sos-4x4").unwrap();
        assert_eq!(job.variant.as_deref(), Some("SOS(QSL)"));
        assert_eq!(job.preset.as_deref(), Some("sos-4x4"));
        assert_eq!(
            job.overrides,
            vec![("device.scheduler.kind".to_string(), "sos".to_string())]
        );
        for bad in ["noname", ":a=b", "x:novalue"] {
            let e = parse_variant(bad).err().expect(bad).to_string();
            assert!(e.contains(&format!("--variant {bad}")), "{e}");
        }
    }

    #[test]
    fn csv_fields_with_commas_are_quoted() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
