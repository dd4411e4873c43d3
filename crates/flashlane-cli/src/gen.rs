//! `flashlane gen`: write a synthetic trace from a named profile or a spec file.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use flashlane_core::workload::{self, OutputFormat, SyntheticReader, SyntheticSpec};
use flashlane_core::Error;

use crate::output::{bytes_fill, write_all_or_none, Fill};

#[derive(Args)]
pub struct GenArgs {
    /// List the named profiles with their labels and exit.
    #[arg(long, conflicts_with_all = ["profile", "spec", "out"])]
    list: bool,
    /// Named profile (see `flashlane gen --list`).
    #[arg(long, conflicts_with = "spec", required_unless_present_any = ["spec", "list"])]
    profile: Option<String>,
    /// Workload spec file (TOML; see docs/workloads.md).
    #[arg(long)]
    spec: Option<PathBuf>,
    /// Generate N requests instead of the spec's count.
    #[arg(long)]
    requests: Option<u64>,
    /// Seed instead of the spec's.
    #[arg(long)]
    seed: Option<u64>,
    /// Trace file to write (replaced atomically; `-`, a FIFO or a device such as /dev/stdout is
    /// written in place). The resolved spec goes to FILE.spec.toml (not beside a FIFO or
    /// device).
    #[arg(long, required_unless_present = "list")]
    out: Option<PathBuf>,
    /// Layout of the written trace: mqsim or msr.
    #[arg(long = "to", default_value = "mqsim")]
    to: String,
}

pub fn run(args: GenArgs) -> Result<(), Error> {
    if args.list {
        let mut text = String::new();
        for p in workload::profiles() {
            text.push_str(&format!("{:<24} {}\n", p.name, p.spec.label));
        }
        return crate::output::print_out(&text);
    }
    let format = OutputFormat::from_name(&args.to).ok_or_else(|| {
        Error::Config(format!(
            "--to {}: unknown layout; known layouts: {}",
            args.to,
            OutputFormat::ALL
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let mut spec = match (&args.profile, &args.spec) {
        (Some(name), _) => {
            workload::profile(name)
                .ok_or_else(|| {
                    Error::Config(format!(
                        "unknown profile `{name}`; `flashlane gen --list` shows them"
                    ))
                })?
                .spec
        }
        (None, Some(path)) => SyntheticSpec::from_file(path)?,
        (None, None) => return Err(Error::Config("give --profile NAME or --spec FILE".into())),
    };
    if let Some(n) = args.requests {
        spec.requests = n;
    }
    if let Some(seed) = args.seed {
        spec.seed = seed;
    }
    let out = args
        .out
        .ok_or_else(|| Error::Config("give --out FILE".into()))?;
    // Into a pipe or device (e.g. /dev/stdout) the trace is written in place, no spec file is
    // put beside it (that would be /dev/stdout.spec.toml), and messages go to stderr.
    let through = crate::output::writes_through(&out);
    let spec_path = (!through).then(|| sidecar_path(&out));
    let spec_input: Vec<(&str, &std::path::Path)> = args
        .spec
        .iter()
        .map(|path| ("the workload spec", path.as_path()))
        .collect();
    crate::output::check_outputs(
        &[
            ("--out", Some(out.as_path())),
            (
                "the resolved spec (--out's .spec.toml)",
                spec_path.as_deref(),
            ),
        ],
        &spec_input,
    )?;
    crate::output::check_all_writable([Some(out.as_path()), spec_path.as_deref()])?;
    // Checks the overridden values too (e.g. --requests 0).
    let mut reader = SyntheticReader::new(&spec).map_err(|e| match e {
        Error::Config(m) => Error::Config(format!("workload spec: {m}")),
        other => other,
    })?;
    let spec_text = spec.to_toml()?;
    let mut written = 0;
    let trace_fill = |file: &mut dyn Write| {
        let mut next = || reader.next_record();
        written = workload::write_trace(&mut next, file, format).map_err(|e| Error::Output {
            path: out.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(())
    };
    // The trace and its spec are one result: both are written, or neither.
    let mut outputs: Vec<(&Path, Fill)> = vec![(out.as_path(), Box::new(trace_fill))];
    if let Some(path) = &spec_path {
        outputs.push((path, Box::new(bytes_fill(path, spec_text.as_bytes()))));
    }
    write_all_or_none(outputs)?;
    // Printed at the end in one write: a failing standard output is the command's error.
    let mut text = String::new();
    let mut say = |line: String| {
        text.push_str(&line);
        text.push('\n');
    };
    say(spec.label.clone());
    say(format!(
        "wrote {} to {} ({}){}",
        crate::output::count(written, "request"),
        out.display(),
        format.name(),
        match &spec_path {
            Some(path) => format!("; spec in {}", path.display()),
            None => " (not a regular file: no spec file beside it)".into(),
        }
    ));
    if through {
        crate::output::print_err(&text);
        Ok(())
    } else {
        crate::output::print_out(&text)
    }
}

/// `trace.mqsim` -> `trace.mqsim.spec.toml`.
fn sidecar_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".spec.toml");
    PathBuf::from(name)
}
