//! How much PASS's drive behaviour slowed the host's page operations
//! (`device.region_contention`, `device.region_runs`; docs/models/pass.md): the crowding of
//! regions that PASS's scheduler is built to avoid, as the array time it cost.

use serde::Serialize;

/// Present in the summary only when a region key is on.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RegionSlowdownStats {
    /// Host page operations (reads and programs) whose array time started in the measured
    /// window.
    pub host_operations: u64,
    /// Of those, the operations the behaviour slowed (factor above 1).
    pub slowed_operations: u64,
    /// Their array time as slowed over their array time as the timing gives it (sums over
    /// `host_operations`; 1 = nothing slowed, 0 without operations).
    pub array_time_factor: f64,
}

/// Sums of the host page operations' nominal and slowed array times.
#[derive(Debug, Clone, Default)]
pub struct RegionSlowdownRecorder {
    operations: u64,
    slowed: u64,
    nominal_ns: u128,
    actual_ns: u128,
}

impl RegionSlowdownRecorder {
    #[inline]
    pub fn host_array_time(&mut self, nominal_ns: u64, actual_ns: u64) {
        self.operations += 1;
        self.slowed += u64::from(actual_ns > nominal_ns);
        self.nominal_ns += u128::from(nominal_ns);
        self.actual_ns += u128::from(actual_ns);
    }

    pub fn stats(&self) -> RegionSlowdownStats {
        RegionSlowdownStats {
            host_operations: self.operations,
            slowed_operations: self.slowed,
            array_time_factor: if self.nominal_ns > 0 {
                self.actual_ns as f64 / self.nominal_ns as f64
            } else {
                0.0
            },
        }
    }
}
