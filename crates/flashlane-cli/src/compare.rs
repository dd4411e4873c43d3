//! `flashlane compare` and `flashlane sweep`: many runs of one workload on all cores, one table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Args;
use flashlane_core::stats::Summary;
use flashlane_core::{Error, RunSpec};
use serde::Serialize;

use crate::args::{DeviceArgs, WorkloadArgs};
use crate::output::{bytes_fill, json_text, write_all_or_none, Fill};

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Host schedulers to compare, the first being the reference (e.g. noop,rws,piq_r,piq_w,piq).
    #[arg(long, value_delimiter = ',', required_unless_present = "vary")]
    host_schedulers: Vec<String>,
    /// Compare values of another config key instead: KEY=V1,V2,... (the first is the reference).
    #[arg(long, value_name = "KEY=V1,V2,...", conflicts_with = "host_schedulers")]
    vary: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Config key to sweep.
    #[arg(long, default_value = "host.queue_length_requests")]
    key: String,
    /// Values of the key.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512"
    )]
    values: Vec<String>,
    /// Host schedulers to run at every value (the first is the reference at each value).
    #[arg(long, value_delimiter = ',', default_value = "noop")]
    host_schedulers: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
struct OutputArgs {
    /// Write the table as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write every run's full summary: {"rows": [{"host_scheduler": NAME, "summary": {...}}, ...]}.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Simulations run at once (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// One simulation of the comparison.
struct Job {
    /// Swept key and value, if any.
    swept: Option<(String, String)>,
    overrides: Vec<(String, String)>,
    /// Index of the row this row is normalized to.
    reference: usize,
}

#[derive(Serialize)]
struct Row<'a> {
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
    let jobs: Vec<Job> = match &args.vary {
        Some(vary) => {
            let (key, values) = vary
                .split_once('=')
                .ok_or_else(|| Error::Config(format!("--vary {vary}: expected KEY=V1,V2,...")))?;
            values
                .split(',')
                .map(|v| Job {
                    swept: Some((key.to_string(), v.to_string())),
                    overrides: vec![(key.to_string(), v.to_string())],
                    reference: 0,
                })
                .collect()
        }
        None => args
            .host_schedulers
            .iter()
            .map(|s| Job {
                swept: None,
                overrides: vec![("host.scheduler.kind".into(), s.clone())],
                reference: 0,
            })
            .collect(),
    };
    execute(&args.device, &args.workload, jobs, &args.output)
}

pub fn sweep(args: SweepArgs) -> Result<(), Error> {
    let mut jobs = Vec::new();
    for value in &args.values {
        let reference = jobs.len();
        for scheduler in &args.host_schedulers {
            jobs.push(Job {
                swept: Some((args.key.clone(), value.clone())),
                overrides: vec![
                    ("host.scheduler.kind".into(), scheduler.clone()),
                    (args.key.clone(), value.clone()),
                ],
                reference,
            });
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
    crate::output::check_all_writable([output.csv.as_deref(), output.json.as_deref()])?;
    // Resolve every config first, so a bad key or value stops the run before any simulation.
    let configs = jobs
        .iter()
        .map(|job| device.config(&job.overrides))
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
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(spec) = specs.get(i) else { break };
                let result = flashlane_core::run(spec);
                if let Ok(mut slots) = results.lock() {
                    slots[i] = Some(result);
                }
            });
        }
    });
    let summaries = results
        .into_inner()
        .map_err(|_| Error::Workload("a simulation thread panicked".into()))?
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Workload("a simulation did not run".into()))))
        .collect::<Result<Vec<Summary>, Error>>()?;
    crate::output::print_report(
        &table_text(&jobs, &summaries),
        [output.csv.as_deref(), output.json.as_deref()],
    );
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

/// The compared figures of one summary, each defined in docs/summary.md.
/// Conflict waiting time is chip wait plus path wait, per page operation.
fn figures(s: &Summary) -> [f64; COLUMNS] {
    [
        s.latency_us.read.mean,
        s.latency_us.write.mean,
        s.conflicts.read_chip_wait_us + s.conflicts.read_path_wait_us,
        s.conflicts.write_chip_wait_us + s.conflicts.write_path_wait_us,
        s.chips.utilization,
        s.chips.active_utilization,
        s.conflicts.read as f64,
        s.conflicts.write as f64,
    ]
}

const COLUMNS: usize = 8;

const NAMES: [&str; COLUMNS] = [
    "read_latency_us",
    "write_latency_us",
    "read_conflict_wait_us",
    "write_conflict_wait_us",
    "chip_utilization",
    "chip_active_utilization",
    "read_conflicts",
    "write_conflicts",
];

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
    match &job.swept {
        Some((key, value)) if key == "host.scheduler.kind" => value.clone(),
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
    let _ = writeln!(
        out,
        "normalized to the reference row (absolute values below)"
    );
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "",
        "read_lat",
        "write_lat",
        "rd_cwait",
        "wr_cwait",
        "chip_util",
        "act_util",
        "rd_confl",
        "wr_confl"
    );
    for (job, s) in jobs.iter().zip(summaries) {
        let f = figures(s);
        let r = figures(&summaries[job.reference]);
        let _ = write!(out, "{:<width$}", label(job, s));
        for i in 0..COLUMNS {
            let _ = write!(out, " {:>9.3}", ratio(f[i], r[i]));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "",
        "read_us",
        "write_us",
        "rd_cw_us",
        "wr_cw_us",
        "chip_util",
        "act_util",
        "rd_confl",
        "wr_confl"
    );
    for (job, s) in jobs.iter().zip(summaries) {
        let f = figures(s);
        let _ = writeln!(
            out,
            "{:<width$} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.4} {:>9.4} {:>9} {:>9}",
            label(job, s),
            f[0],
            f[1],
            f[2],
            f[3],
            f[4],
            f[5],
            f[6],
            f[7]
        );
    }
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
    let mut out = String::from("host_scheduler,key,value");
    for name in NAMES {
        let _ = write!(out, ",{name}");
    }
    for name in NAMES {
        let _ = write!(out, ",{name}_normalized");
    }
    out.push('\n');
    for (job, s) in jobs.iter().zip(summaries) {
        let (key, value) = job.swept.clone().unwrap_or_default();
        let _ = write!(out, "{},{key},{value}", s.host_scheduler.name);
        let f = figures(s);
        let r = figures(&summaries[job.reference]);
        for v in f {
            let _ = write!(out, ",{v}");
        }
        for i in 0..COLUMNS {
            let _ = write!(out, ",{}", ratio(f[i], r[i]));
        }
        out.push('\n');
    }
    out
}
