//! `flashlane advise`: forwards to the Python package (`flashlane._advise`), which measures a
//! trace's conditions, runs every technique and combination on it and ranks them
//! (docs/advise.md).

use std::ffi::OsString;

use clap::Args;
use flashlane_core::Error;

use crate::reproduce::{forward, PythonCommand};

#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct AdviseArgs {
    /// --trace T [--preset P] [--quick] [--time-scale S] [--max-requests N] [--jobs N]
    /// [--json FILE]: see `flashlane advise --help`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

/// The help of `flashlane advise` without the Python package (the options of
/// `flashlane._advise.main`).
pub const HELP: &str = "\
Which of the five papers' techniques, alone or together, helps this trace: its conditions,
where they put it on the effect maps, and every technique and combination run on the trace
itself, ranked (docs/advise.md).

Usage: flashlane advise --trace T [--preset P] [--format F] [--quick] [--time-scale S]
                        [--max-requests N] [--jobs N] [--json FILE]

Options:
  --trace T          the trace file
  --preset P         the drive (default combined-8x8)
  --format F         the trace's layout (default: detected)
  --quick            the techniques alone and all together, on the first 5000 requests
  --time-scale S     arrival times x S (as flashlane run)
  --max-requests N   replay the first N requests
  --jobs N           runs at once (default 2)
  --json FILE        also write the advice as JSON
  -h, --help         this help; with the Python package installed, Python's

The runs need the flashlane Python package: from the repository, `pip install .`.
";

pub fn run(args: AdviseArgs) -> Result<u8, Error> {
    forward(
        &PythonCommand {
            name: "flashlane advise",
            module: "flashlane._advise",
            launch: &[
                "-c",
                "import sys; from flashlane._advise import main; sys.exit(main(sys.argv[1:]))",
            ],
            package: "the flashlane Python package",
            install: "pip install flashlane",
            install_here: "pip install .",
            help: HELP,
        },
        &args.args,
    )
}
