//! A real drive's parallelism curves as `flashlane probe` measures them (PASS's Fig. 2:
//! throughput against outstanding requests for a region of the drive), and their mapping to
//! the simulator's drive behaviour `device.region_contention` (docs/models/pass.md, "From a
//! measured curve"). The probe writes these types into its JSON; the config reads them back
//! (`device.region_contention.probe_path`), so the file has one definition.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Layout version of the probe JSON (`schema_version`).
pub const PROBE_SCHEMA_VERSION: u32 = 1;

/// Read or write (the probe's operations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeOperation {
    #[default]
    Read,
    Write,
}

impl ProbeOperation {
    pub fn name(&self) -> &'static str {
        match self {
            ProbeOperation::Read => "read",
            ProbeOperation::Write => "write",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == ProbeOperation::Read
    }
}

/// One measured point: `outstanding_requests` kept in flight for the point's duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub outstanding_requests: u32,
    /// Requests completed in the measured part of the point.
    pub requests: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    /// Mean submission-to-completion time, microseconds.
    pub mean_latency_us: f64,
}

/// Throughput against outstanding requests for random requests of `block_bytes` within the
/// first `region_bytes` of the target (PASS's Fig. 2, one line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParallelismCurve {
    pub operation: ProbeOperation,
    pub region_bytes: u64,
    pub block_bytes: u64,
    pub points: Vec<CurvePoint>,
    /// The point of highest throughput (the first of equals).
    pub peak_outstanding_requests: u32,
    /// The array-time factor `device.region_contention` takes from this curve, one per point
    /// ([`service_time_factors`]).
    pub service_time_factor: Vec<f64>,
}

impl ParallelismCurve {
    /// A curve from its measured points (sorted by outstanding requests), its peak and factors
    /// derived.
    pub fn new(
        operation: ProbeOperation,
        region_bytes: u64,
        block_bytes: u64,
        points: Vec<CurvePoint>,
    ) -> Self {
        let (peak, factors) = service_time_factors(&points);
        ParallelismCurve {
            operation,
            region_bytes,
            block_bytes,
            points,
            peak_outstanding_requests: peak,
            service_time_factor: factors,
        }
    }
}

/// The part of a probe JSON the simulator reads (the rest is for people and the figure).
#[derive(Debug, Clone, Deserialize)]
struct ProbeCurves {
    schema_version: u32,
    parallelism: Vec<ParallelismCurve>,
}

/// Largest factor `device.region_contention` accepts (a point of no throughput maps to it).
pub const MAX_SERVICE_TIME_FACTOR: f64 = 1000.0;

/// The mapping from a measured curve to the simulator's slowdown. Up to the peak, the
/// simulated drive's own parallelism gives the rise (factor 1); past it, k requests in the
/// region share a saturated drive whose throughput fell from X(peak) to X(k), so each
/// operation takes X(peak) / X(k) times as long (factor >= 1, at most
/// [`MAX_SERVICE_TIME_FACTOR`]). Returns the peak's outstanding requests and one factor per
/// point.
pub fn service_time_factors(points: &[CurvePoint]) -> (u32, Vec<f64>) {
    let Some(peak) =
        points
            .iter()
            .enumerate()
            .fold(None::<(usize, f64)>, |best, (i, p)| match best {
                Some((_, x)) if x >= p.mib_per_s => best,
                _ => Some((i, p.mib_per_s)),
            })
    else {
        return (0, Vec::new());
    };
    let factors = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i <= peak.0 {
                1.0
            } else if p.mib_per_s > 0.0 {
                (peak.1 / p.mib_per_s).clamp(1.0, MAX_SERVICE_TIME_FACTOR)
            } else {
                MAX_SERVICE_TIME_FACTOR
            }
        })
        .collect();
    (points[peak.0].outstanding_requests, factors)
}

/// The points `device.region_contention` takes from the probe JSON at `path`: the curve of
/// `operation` measured for `region_bytes`. Messages name the key and the file.
pub fn curve_from_probe(
    path: &Path,
    operation: ProbeOperation,
    region_bytes: u64,
) -> Result<(Vec<u32>, Vec<f64>), String> {
    let key = "device.region_contention.probe_path";
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{key} {}: cannot read: {e}", path.display()))?;
    let probe: ProbeCurves = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{key} {}: not a `flashlane probe` JSON: {e}",
            path.display()
        )
    })?;
    if probe.schema_version != PROBE_SCHEMA_VERSION {
        return Err(format!(
            "{key} {}: schema_version {} (this flashlane reads {PROBE_SCHEMA_VERSION})",
            path.display(),
            probe.schema_version
        ));
    }
    let Some(curve) = probe
        .parallelism
        .iter()
        .find(|c| c.operation == operation && c.region_bytes == region_bytes)
    else {
        let measured: Vec<String> = probe
            .parallelism
            .iter()
            .filter(|c| c.operation == operation)
            .map(|c| c.region_bytes.to_string())
            .collect();
        return Err(format!(
            "{key} {}: no {} curve for device.region_contention.region_bytes = {region_bytes}; \
             measured region_bytes: {}",
            path.display(),
            operation.name(),
            if measured.is_empty() {
                "none".to_string()
            } else {
                measured.join(", ")
            }
        ));
    };
    let (_, factors) = service_time_factors(&curve.points);
    Ok((
        curve
            .points
            .iter()
            .map(|p| p.outstanding_requests)
            .collect(),
        factors,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(k: u32, mib_per_s: f64) -> CurvePoint {
        CurvePoint {
            outstanding_requests: k,
            requests: 100,
            iops: mib_per_s * 256.0,
            mib_per_s,
            mean_latency_us: 1.0,
        }
    }

    #[test]
    fn factors_are_one_up_to_the_peak_then_the_throughput_lost() {
        let points = [
            point(1, 10.0),
            point(2, 20.0),
            point(4, 40.0),
            point(8, 30.0),
            point(16, 20.0),
            point(32, 45.0),
        ];
        // The peak is 32 here: nothing past it, every factor 1.
        assert_eq!(service_time_factors(&points), (32, vec![1.0; 6]));
        let (peak, f) = service_time_factors(&points[..5]);
        assert_eq!(peak, 4);
        assert_eq!(f, vec![1.0, 1.0, 1.0, 40.0 / 30.0, 2.0]);
        let (_, f) = service_time_factors(&[point(1, 5.0), point(2, 0.0)]);
        assert_eq!(f, vec![1.0, MAX_SERVICE_TIME_FACTOR]);
        assert_eq!(service_time_factors(&[]), (0, vec![]));
    }
}
