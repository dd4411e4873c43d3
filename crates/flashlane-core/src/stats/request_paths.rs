//! Per host request: did every one of its transfers get its path the moment it asked?

use serde::Serialize;

/// Counts measured requests at completion, with or without a path wait.
#[derive(Debug, Clone, Default)]
pub struct RequestPathRecorder {
    measured: u64,
    conflict_free: u64,
}

impl RequestPathRecorder {
    /// A measured request completed; `path_conflict`: one of its transfers waited for its path.
    pub fn complete(&mut self, path_conflict: bool) {
        self.measured += 1;
        self.conflict_free += u64::from(!path_conflict);
    }

    pub fn stats(&self) -> RequestPathStats {
        RequestPathStats {
            measured_requests: self.measured,
            conflict_free: self.conflict_free,
            conflict_free_fraction: if self.measured == 0 {
                0.0
            } else {
                self.conflict_free as f64 / self.measured as f64
            },
        }
    }
}

/// The Venice paper's Figure 13 counted per host request (definitions in docs/summary.md).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RequestPathStats {
    /// Measured host requests that completed.
    pub measured_requests: u64,
    /// Of those, requests none of whose transfers waited for its path.
    pub conflict_free: u64,
    /// `conflict_free / measured_requests` (0 without requests).
    pub conflict_free_fraction: f64,
}
