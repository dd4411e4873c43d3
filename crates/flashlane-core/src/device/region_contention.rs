//! A drive behaviour the PASS paper measured (its Fig. 2): a region of the logical space serves
//! best with some number of requests outstanding to it, and more make every operation there
//! slower ("overcrowding more requests further is only rewarded by diminished performance",
//! Sec. 2; "limited shared resources", bus arbitration and buffer allocation). Off by default:
//! our flash model has no such resource, and PASS's gain rests on it (docs/models/pass.md,
//! "Drive behaviour").
//!
//! The model: the array time (tR, tPROG) of a host page operation is multiplied by
//! `service_time_factor(k)`, where k is the number of host requests handed to the device and
//! not yet complete whose first byte lies in the operation's region, when the operation's
//! array part starts. The factor is piecewise linear through the configured points and flat
//! beyond them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::drive_probe::{curve_from_probe, ProbeOperation};

/// `[device.region_contention]`: the regions and the curve (given, or measured on a real drive
/// by `flashlane probe` and read from its JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionContentionConfig {
    /// Size of a region: contiguous logical bytes from 0 (PASS's Fig. 2 working set).
    pub region_bytes: u64,
    /// Points of the curve: outstanding requests in the region, increasing.
    #[serde(default)]
    pub outstanding_requests: Vec<u32>,
    /// Array-time factor at each point (>= 1 past the best point: the region slows).
    #[serde(default)]
    pub service_time_factor: Vec<f64>,
    /// A `flashlane probe` JSON: the points come from its curve of `probe_operation` measured
    /// for `region_bytes` (device/drive_probe.rs), read when the config is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_path: Option<PathBuf>,
    /// Which of the probe's curves: `read` (the default) or `write`.
    #[serde(default, skip_serializing_if = "ProbeOperation::is_default")]
    pub probe_operation: ProbeOperation,
}

impl RegionContentionConfig {
    /// With `probe_path`: read the measured curve into the points. Points given as well must be
    /// that curve's (a summary's config read back), else it is an error: give one or the other.
    pub fn load_probe(&mut self) -> Result<(), String> {
        let key = "device.region_contention";
        let Some(path) = &self.probe_path else {
            return Ok(());
        };
        let (outstanding, factors) =
            curve_from_probe(path, self.probe_operation, self.region_bytes)?;
        let given = !self.outstanding_requests.is_empty() || !self.service_time_factor.is_empty();
        if given
            && (self.outstanding_requests != outstanding || self.service_time_factor != factors)
        {
            return Err(format!(
                "{key}: outstanding_requests and service_time_factor are given and differ from \
                 the curve in probe_path {} ({outstanding:?}, {factors:?}); give one or the other",
                path.display()
            ));
        }
        self.outstanding_requests = outstanding;
        self.service_time_factor = factors;
        Ok(())
    }

    /// Messages name the key.
    pub fn validate(&self, page_bytes: u32) -> Result<(), String> {
        let key = "device.region_contention";
        if self.probe_path.is_none() && !self.probe_operation.is_default() {
            return Err(format!(
                "{key}.probe_operation applies only with {key}.probe_path; leave it out"
            ));
        }
        if self.region_bytes < u64::from(page_bytes) {
            return Err(format!(
                "{key}.region_bytes {} is smaller than one page ({page_bytes} bytes)",
                self.region_bytes
            ));
        }
        let n = self.outstanding_requests.len();
        if n == 0 || n != self.service_time_factor.len() {
            return Err(format!(
                "{key}: outstanding_requests and service_time_factor must be lists of the same \
                 length, at least one point (got {n} and {}), or give probe_path",
                self.service_time_factor.len()
            ));
        }
        if self.outstanding_requests.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "{key}.outstanding_requests must increase: {:?}",
                self.outstanding_requests
            ));
        }
        if let Some(f) = self
            .service_time_factor
            .iter()
            .find(|f| !(f.is_finite() && **f > 0.0 && **f <= 1000.0))
        {
            return Err(format!(
                "{key}.service_time_factor {f} must be a number in (0, 1000]"
            ));
        }
        Ok(())
    }
}

/// Outstanding host requests per region, and the curve.
#[derive(Debug, Clone)]
pub struct RegionContention {
    region_bytes: u64,
    page_bytes: u64,
    outstanding: Vec<u32>,
    points: Vec<(f64, f64)>,
}

impl RegionContention {
    pub fn new(config: &RegionContentionConfig, page_bytes: u32, logical_bytes: u64) -> Self {
        let regions = logical_bytes.div_ceil(config.region_bytes).max(1);
        RegionContention {
            region_bytes: config.region_bytes,
            page_bytes: u64::from(page_bytes),
            outstanding: vec![0; regions as usize],
            points: config
                .outstanding_requests
                .iter()
                .zip(&config.service_time_factor)
                .map(|(&k, &f)| (f64::from(k), f))
                .collect(),
        }
    }

    fn region(&self, offset_bytes: u64) -> usize {
        ((offset_bytes / self.region_bytes) as usize).min(self.outstanding.len() - 1)
    }

    /// A host request whose first byte is at `offset_bytes` was handed to the device.
    pub fn dispatched(&mut self, offset_bytes: u64) {
        let r = self.region(offset_bytes);
        self.outstanding[r] += 1;
    }

    /// That request completed.
    pub fn completed(&mut self, offset_bytes: u64) {
        let r = self.region(offset_bytes);
        self.outstanding[r] -= 1;
    }

    /// Array time of an operation on logical page `lpn` whose nominal array time is `ns`.
    pub fn array_ns(&self, ns: u64, lpn: u32) -> u64 {
        (ns as f64 * self.factor_at(lpn)).round() as u64
    }

    /// The curve at `k` outstanding requests.
    pub fn factor(&self, k: f64) -> f64 {
        piecewise_linear(&self.points, k)
    }

    /// The factor on the array time of an operation on logical page `lpn`, now.
    #[inline]
    pub fn factor_at(&self, lpn: u32) -> f64 {
        let k = self.outstanding[self.region(u64::from(lpn) * self.page_bytes)];
        self.factor(f64::from(k))
    }
}

/// The curve through `points` (x increasing, at least one) at `x`: linear between points, flat
/// beyond the first and the last. Also `device.region_runs`'s curve (device/region_runs.rs).
pub(super) fn piecewise_linear(points: &[(f64, f64)], x: f64) -> f64 {
    let p = points;
    if x <= p[0].0 {
        return p[0].1;
    }
    for w in p.windows(2) {
        let ((x0, f0), (x1, f1)) = (w[0], w[1]);
        if x <= x1 {
            return f0 + (f1 - f0) * (x - x0) / (x1 - x0);
        }
    }
    p[p.len() - 1].1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> RegionContentionConfig {
        RegionContentionConfig {
            region_bytes: 1 << 20,
            outstanding_requests: vec![8, 16, 32],
            service_time_factor: vec![1.0, 1.5, 2.0],
            probe_path: None,
            probe_operation: ProbeOperation::Read,
        }
    }

    #[test]
    fn the_curve_is_piecewise_linear_and_flat_outside_its_points() {
        let c = RegionContention::new(&config(), 4096, 4 << 20);
        assert_eq!(c.factor(1.0), 1.0);
        assert_eq!(c.factor(8.0), 1.0);
        assert_eq!(c.factor(12.0), 1.25);
        assert_eq!(c.factor(24.0), 1.75);
        assert_eq!(c.factor(64.0), 2.0);
    }

    #[test]
    fn only_requests_of_the_operations_region_count() {
        let mut c = RegionContention::new(&config(), 4096, 4 << 20);
        for _ in 0..16 {
            c.dispatched(0); // region 0
        }
        c.dispatched(1 << 20); // region 1
        assert_eq!(c.array_ns(1000, 0), 1500); // 16 outstanding in region 0
        assert_eq!(c.array_ns(1000, 255), 1500); // last page of region 0
        assert_eq!(c.array_ns(1000, 256), 1000); // region 1: one outstanding
        for _ in 0..8 {
            c.completed(0);
        }
        assert_eq!(c.array_ns(1000, 0), 1000);
    }

    #[test]
    fn bad_curves_are_errors_naming_the_key() {
        let mut bad = config();
        bad.outstanding_requests = vec![8, 8, 32];
        assert!(bad
            .validate(4096)
            .unwrap_err()
            .contains("outstanding_requests must increase"));
        let mut bad = config();
        bad.service_time_factor = vec![1.0];
        assert!(bad.validate(4096).unwrap_err().contains("same length"));
        let mut bad = config();
        bad.service_time_factor[1] = f64::NAN;
        assert!(bad
            .validate(4096)
            .unwrap_err()
            .contains("service_time_factor"));
        let mut bad = config();
        bad.region_bytes = 100;
        assert!(bad.validate(4096).unwrap_err().contains("region_bytes"));
        assert!(config().validate(4096).is_ok());
    }
}
