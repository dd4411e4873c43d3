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
    let status = command
        .status()
        .map_err(|e| Error::Config(format!("cannot start {shown}: {e}")))?;
    Ok(status.code().unwrap_or(2).clamp(0, 255) as u8)
}
