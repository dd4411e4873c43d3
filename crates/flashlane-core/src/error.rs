//! The crate's error type: every failure names what was wrong and where.

use crate::trace::TraceError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config file, preset or override that cannot be used.
    #[error("{0}")]
    Config(String),
    /// A trace that cannot be read correctly.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A request the simulated device cannot serve (e.g. past its capacity).
    #[error("{0}")]
    Workload(String),
    /// A real-drive target that may not or cannot be used (flashlane replay / probe).
    #[error("{0}")]
    Target(String),
    /// An output file that cannot be written.
    #[error("{path}: {message}")]
    Output { path: String, message: String },
    /// The caller asked the run to stop (a signal); nothing was measured.
    #[error("interrupted after {records} trace records")]
    Interrupted { records: u64 },
}
