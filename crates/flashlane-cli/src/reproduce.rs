//! `flashlane reproduce`: forwards to the Python package (`python3 -m flashlane.reproduce`),
//! where the papers' experiment sets, figures (matplotlib) and report live.

use std::ffi::OsString;
use std::process::Command;

use clap::Args;
use flashlane_core::Error;

#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct ReproduceArgs {
    /// PAPER [--quick] [--out DIR] [--jobs N] [--traces DIR]: see `flashlane reproduce --help`
    /// (PAPER: piq, pass, vios, sos, venice or all).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

/// The Python interpreter: $FLASHLANE_PYTHON, else `python3` on PATH.
fn python() -> OsString {
    std::env::var_os("FLASHLANE_PYTHON").unwrap_or_else(|| OsString::from("python3"))
}

pub fn run(args: ReproduceArgs) -> Result<u8, Error> {
    let python = python();
    let shown = python.to_string_lossy().into_owned();
    // Ask first whether the package is importable, so that a missing package gets a clear
    // message rather than Python's traceback.
    let probe = Command::new(&python)
        .args(["-c", "import flashlane.reproduce"])
        .output()
        .map_err(|e| {
            Error::Config(format!(
                "flashlane reproduce needs Python 3 ({shown}: {e}); set FLASHLANE_PYTHON to \
                 the interpreter that has the flashlane package"
            ))
        })?;
    if !probe.status.success() {
        return Err(Error::Config(format!(
            "flashlane reproduce needs the flashlane Python package with its plotting extra in \
             {shown}: `pip install \"flashlane[reproduce]\"` (from the repository: \
             `pip install \".[reproduce]\"`), or set FLASHLANE_PYTHON to the interpreter that \
             has it. Python said: {}",
            String::from_utf8_lossy(&probe.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )));
    }
    // The runs go through the package's engine (flashlane.sweep, the simulator in-process
    // through its native module), not through this binary.
    let mut command = Command::new(&python);
    command.args(["-m", "flashlane.reproduce"]).args(&args.args);
    // Its own process group, so that SIGINT/SIGTERM reach it and its pool's workers once,
    // through us: we forward them and wait, rather than end and leave it writing files.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    crate::signals::child_starting();
    let mut child = match command.spawn() {
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
