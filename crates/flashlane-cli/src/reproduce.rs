//! `flashlane reproduce`: forwards to the Python package (`python3 -m flashlane.reproduce`),
//! where the papers' experiment sets, figures (matplotlib) and report live. [`forward`] is
//! shared with `flashlane advise` (advise.rs).
//!
//! `--help` / `-h` (alone or after PAPER) is forwarded too when the package is importable
//! (Python's help names the exact options, PAPER's included); without it, [`HELP`] is printed
//! from here, so that the help works before the package is installed.

use std::ffi::OsString;
use std::process::Command;

use clap::Args;
use flashlane_core::Error;

#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct ReproduceArgs {
    /// PAPER [--quick] [--results [PAPER's options]] [--out DIR] [--jobs N] [--traces DIR]
    /// [--precondition-cache DIR] [--reuse | --render-only]: see `flashlane reproduce --help`
    /// (PAPER: piq, pass, vios, sos, venice, all, or the study combos).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

/// The help of `flashlane reproduce` without the Python package: the options of
/// `python -m flashlane.reproduce --help` (python/flashlane/reproduce/__main__.py), the
/// results sets' included. tests/python/test_reproduce.py checks that every option the
/// Python parser defines is named here.
pub const HELP: &str = "\
Run a paper's experiment set and write runs.csv, the JSON summaries, one PNG+SVG per paper
figure and report.html; with --results, the set behind docs/results/PAPER.md and its
Markdown tables (OUT/PAPER.md).

Usage: flashlane reproduce PAPER [--quick] [--out DIR] [--jobs N] [--traces DIR]
                           [--precondition-cache DIR] [--reuse | --render-only]
       flashlane reproduce PAPER --results [--quick] [PAPER's options] [--out DIR] ...

PAPER: piq, pass, vios, sos, venice, all or combos
       (all: the five papers; combos: their techniques alone and together on combined-8x8,
       docs/results/combinations.md)

Options:
  --quick          the reduced set the tests run
  --results        the results set: every platform, variant and sweep behind
                   docs/results/PAPER.md; writes its Markdown tables (OUT/PAPER.md) instead
                   of the figures and report
  --out DIR        output folder (default out/reproduce-PAPER[-results][-quick])
  --jobs N         runs at once (default 2)
  --traces DIR     the repository's traces/ folder (default: $FLASHLANE_TRACES, else traces/
                   in the current directory or one of its parents)
  --precondition-cache DIR
                   keep snapshots of preconditioned drives in DIR and load them in every run
                   of the same drive (docs/sweeps.md); runs.csv is the same with or without
                   (default: a temporary folder, removed when the call ends)
  --reuse          do not rerun a point whose summary (same command) an earlier run left in
                   --out
  --render-only    run nothing: rewrite the tables (or figures) from the summaries in --out
  -h, --help       this help; with the Python package installed, Python's, and
                   `flashlane reproduce PAPER --help` adds PAPER's results-set options

Options of the results sets (with --results; one PAPER, not all):
  piq     --platforms LIST     comma-separated platforms (default: all)
  vios    --platforms LIST     comma-separated platforms
          --stages LIST        initial wear stages (P/E cycles), e.g. 6000,12000
          --no-stand-ins       the shipped traces only (no vios_* stand-ins)
          --no-map             without the effect map (hot chips x load on ssdsim-platform)
          --max-requests N     requests per run
  venice  --requests N         requests per workload
  pass, sos, combos: none

The runs need the flashlane Python package with its reproduce extra (matplotlib, tqdm):
from the repository, `pip install \".[reproduce]\"` (or `pip install \"flashlane[reproduce]\"`).
This command forwards to `python3 -m flashlane.reproduce` (the interpreter of an active
virtual environment, or of the repository's .venv that ./scripts/test.sh makes, when there is
one); FLASHLANE_PYTHON names another interpreter. docs/reproducing.md describes the outputs.
";

/// True when the arguments ask for help: `--help` or `-h`, alone or after PAPER (or anywhere,
/// as Python's argparse reads them).
fn wants_help(args: &[OsString]) -> bool {
    args.iter().any(|a| a == "--help" || a == "-h")
}

/// The Python interpreter: $FLASHLANE_PYTHON; else the active virtual environment's
/// ($VIRTUAL_ENV); else the `.venv` that `./scripts/test.sh` makes, in the current directory or
/// one of its parents (the package is installed there); else `python3` on PATH.
fn python() -> OsString {
    if let Some(chosen) = std::env::var_os("FLASHLANE_PYTHON") {
        return chosen;
    }
    let in_venv = |dir: &std::path::Path| {
        let python = dir.join("bin").join("python");
        python.is_file().then(|| python.into_os_string())
    };
    if let Some(found) = std::env::var_os("VIRTUAL_ENV").and_then(|v| in_venv(v.as_ref())) {
        return found;
    }
    std::env::current_dir()
        .ok()
        .and_then(|dir| dir.ancestors().find_map(|d| in_venv(&d.join(".venv"))))
        .unwrap_or_else(|| OsString::from("python3"))
}

pub fn run(args: ReproduceArgs) -> Result<u8, Error> {
    forward(
        &PythonCommand {
            name: "flashlane reproduce",
            module: "flashlane.reproduce",
            launch: &["-m", "flashlane.reproduce"],
            package: "the flashlane Python package with its plotting extra",
            install: "pip install \"flashlane[reproduce]\"",
            install_here: "pip install \".[reproduce]\"",
            help: HELP,
        },
        &args.args,
    )
}

/// A command that runs in the Python package: how to start it and what to say without it.
pub struct PythonCommand<'a> {
    /// As the user typed it, for messages ("flashlane reproduce").
    pub name: &'a str,
    /// The module whose import shows the package is there.
    pub module: &'a str,
    /// The interpreter's arguments before the user's (`-m MODULE`, or `-c CODE`).
    pub launch: &'a [&'a str],
    /// What must be installed, and the commands that install it (from the index, from the
    /// repository).
    pub package: &'a str,
    pub install: &'a str,
    pub install_here: &'a str,
    /// Our own help, printed when the package is missing.
    pub help: &'a str,
}

/// Run `command` in the Python package with `args`, passing its exit status on.
pub fn forward(command: &PythonCommand<'_>, args: &[OsString]) -> Result<u8, Error> {
    let python = python();
    let shown = python.to_string_lossy().into_owned();
    let print_help = |why: &str| {
        let _ = crate::output::print_out(&format!(
            "{}\n(This is flashlane's own help: {why}.)\n",
            command.help
        ));
    };
    // Ask first whether the package is importable, so that a missing package gets a clear
    // message rather than Python's traceback.
    let help = wants_help(args);
    let probe = match Command::new(&python)
        .args(["-c", &format!("import {}", command.module)])
        .output()
    {
        Ok(probe) => probe,
        Err(e) if help => {
            print_help(&format!("{shown} cannot be started: {e}"));
            return Ok(0);
        }
        Err(e) => {
            return Err(Error::Config(format!(
                "{} needs Python 3 ({shown}: {e}); set FLASHLANE_PYTHON to the interpreter \
                 that has the flashlane package",
                command.name
            )))
        }
    };
    if !probe.status.success() && help {
        print_help(&format!(
            "{shown} cannot import {}; with the package installed, Python prints the exact \
             options",
            command.module
        ));
        return Ok(0);
    }
    if !probe.status.success() {
        return Err(Error::Config(format!(
            "{} needs {} in {shown}: `{}` (from the repository: `{}`; ./scripts/test.sh \
             installs it into the repository's .venv, which this command uses when run from \
             the repository), or set FLASHLANE_PYTHON to the interpreter that has it. Python \
             said: {}",
            command.name,
            command.package,
            command.install,
            command.install_here,
            String::from_utf8_lossy(&probe.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )));
    }
    // The runs go through the package's engine (flashlane.sweep, the simulator in-process
    // through its native module), not through this binary.
    let mut child_command = Command::new(&python);
    child_command.args(command.launch).args(args);
    // Its own process group, so that SIGINT/SIGTERM reach it and its pool's workers once,
    // through us: we forward them and wait, rather than end and leave it writing files.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut child_command, 0);
    crate::signals::child_starting();
    let mut child = match child_command.spawn() {
        Ok(child) => child,
        Err(e) => {
            crate::signals::child_finished();
            return Err(Error::Config(format!("cannot start {shown}: {e}")));
        }
    };
    crate::signals::child_started(child.id());
    let status = child.wait();
    let forwarded = crate::signals::child_finished();
    let status = status.map_err(|e| Error::Config(format!("waiting for {shown}: {e}")))?;
    Ok(exit_code(status, forwarded))
}

/// Our exit status: Python's, or 128 + the signal that ended it (or that we passed on).
fn exit_code(status: std::process::ExitStatus, forwarded: Option<i32>) -> u8 {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status).or(forwarded);
    #[cfg(not(unix))]
    let signal = forwarded;
    match (status.code(), signal) {
        (Some(code), None) => code.clamp(0, 255) as u8,
        (_, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn help_alone_or_after_paper() {
        assert!(wants_help(&args(&["--help"])));
        assert!(wants_help(&args(&["-h"])));
        assert!(wants_help(&args(&["piq", "--help"])));
        assert!(wants_help(&args(&["vios", "--results", "-h"])));
        assert!(!wants_help(&args(&["piq", "--quick"])));
        assert!(!wants_help(&args(&[])));
        assert!(!wants_help(&args(&["piq", "--out", "help"])));
    }
}
