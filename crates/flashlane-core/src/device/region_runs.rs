//! A second reading of the drive behaviour PASS is built on: a region slows with the requests
//! sent to it *in a row*, not only with those outstanding in it (device/region_contention.rs).
//! PASS's Sec. 3.2: "It is better to dispatch N requests out of the N1 requests to region 1 and
//! switch to dispatch another N requests out of the N2 requests to region 2 in comparison to
//! first dispatching all of the N1 requests to region 1 and then all of the N2 requests to
//! region 2"; Sec. 3.3: a region's turn ends when "the number of requests it has already
//! dispatched exceeds the configured batch threshold", which "is to try to issue the most
//! suitable amount of requests to each of the region". Off by default (docs/models/pass.md,
//! "Drive behaviour: a long run to one region slows").
//!
//! The model: host requests are counted in the order they are handed to the device. A request
//! continues its region's run when the request handed over just before it has its first byte in
//! the same region and that region still has a host request outstanding; otherwise it starts a
//! run of 1 (a request to another region, or a region the drive has finished with, ends the
//! run). The array time (tR, tPROG) of each host page operation of a request is multiplied by
//! `service_time_factor(n)`, n the request's place in its run (1 for the first). The factor is
//! piecewise linear through the configured points and flat beyond them.

use serde::{Deserialize, Serialize};

use super::region_contention::piecewise_linear;
use super::MAX_SERVICE_TIME_FACTOR;

/// `[device.region_runs]`: the regions and the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionRunsConfig {
    /// Size of a region: contiguous logical bytes from 0.
    pub region_bytes: u64,
    /// Points of the curve: a request's place in its run of requests handed to the device in a
    /// row to its region (1 = the first), increasing.
    pub run_length_requests: Vec<u32>,
    /// Array-time factor at each point, in [1, 1000]: a run only slows its region.
    pub service_time_factor: Vec<f64>,
}

impl RegionRunsConfig {
    /// Messages name the key.
    pub fn validate(&self, page_bytes: u32) -> Result<(), String> {
        let key = "device.region_runs";
        if self.region_bytes < u64::from(page_bytes) {
            return Err(format!(
                "{key}.region_bytes {} is smaller than one page ({page_bytes} bytes)",
                self.region_bytes
            ));
        }
        let n = self.run_length_requests.len();
        if n == 0 || n != self.service_time_factor.len() {
            return Err(format!(
                "{key}: run_length_requests and service_time_factor must be lists of the same \
                 length, at least one point (got {n} and {})",
                self.service_time_factor.len()
            ));
        }
        if self.run_length_requests[0] == 0 {
            return Err(format!(
                "{key}.run_length_requests starts at 1 (a request's place in its run): {:?}",
                self.run_length_requests
            ));
        }
        if self.run_length_requests.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "{key}.run_length_requests must increase: {:?}",
                self.run_length_requests
            ));
        }
        if let Some(f) = self
            .service_time_factor
            .iter()
            .find(|f| !(f.is_finite() && **f >= 1.0 && **f <= MAX_SERVICE_TIME_FACTOR))
        {
            return Err(format!(
                "{key}.service_time_factor {f} must be a number in [1, {MAX_SERVICE_TIME_FACTOR}] \
                 (a run slows its region, it never speeds it up)"
            ));
        }
        Ok(())
    }
}

/// The run in progress, outstanding host requests per region, each live request's place in its
/// run, and the curve.
#[derive(Debug, Clone)]
pub struct RegionRuns {
    region_bytes: u64,
    /// Region of the request handed over last (`usize::MAX`: none yet).
    last_region: usize,
    /// Its place in its run.
    run: u32,
    outstanding: Vec<u32>,
    /// Place in its run of the request in each request slot (set when it is handed over).
    place: Vec<u32>,
    points: Vec<(f64, f64)>,
}

impl RegionRuns {
    pub fn new(config: &RegionRunsConfig, logical_bytes: u64) -> Self {
        let regions = logical_bytes.div_ceil(config.region_bytes).max(1);
        RegionRuns {
            region_bytes: config.region_bytes,
            last_region: usize::MAX,
            run: 0,
            outstanding: vec![0; regions as usize],
            place: Vec::new(),
            points: config
                .run_length_requests
                .iter()
                .zip(&config.service_time_factor)
                .map(|(&n, &f)| (f64::from(n), f))
                .collect(),
        }
    }

    fn region(&self, offset_bytes: u64) -> usize {
        ((offset_bytes / self.region_bytes) as usize).min(self.outstanding.len() - 1)
    }

    /// The host request in slot `request`, whose first byte is at `offset_bytes`, was handed to
    /// the device.
    pub fn dispatched(&mut self, request: u32, offset_bytes: u64) {
        let r = self.region(offset_bytes);
        if r == self.last_region && self.outstanding[r] > 0 {
            self.run += 1;
        } else {
            self.last_region = r;
            self.run = 1;
        }
        self.outstanding[r] += 1;
        let slot = request as usize;
        if slot >= self.place.len() {
            self.place.resize(slot + 1, 0);
        }
        self.place[slot] = self.run;
    }

    /// That request completed.
    pub fn completed(&mut self, offset_bytes: u64) {
        let r = self.region(offset_bytes);
        self.outstanding[r] -= 1;
    }

    /// The factor on the array times of host request `request`'s page operations.
    #[inline]
    pub fn factor_of(&self, request: u32) -> f64 {
        self.factor(f64::from(self.place[request as usize]))
    }

    /// The curve at place `n` of a run.
    pub fn factor(&self, n: f64) -> f64 {
        piecewise_linear(&self.points, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn config() -> RegionRunsConfig {
        RegionRunsConfig {
            region_bytes: MIB,
            run_length_requests: vec![1, 8, 16, 64],
            service_time_factor: vec![1.0, 1.0, 1.25, 2.0],
        }
    }

    #[test]
    fn the_curve_is_piecewise_linear_and_flat_outside_its_points() {
        let c = RegionRuns::new(&config(), 4 * MIB);
        assert_eq!(c.factor(1.0), 1.0);
        assert_eq!(c.factor(8.0), 1.0);
        assert_eq!(c.factor(12.0), 1.125);
        assert_eq!(c.factor(40.0), 1.625);
        assert_eq!(c.factor(100.0), 2.0);
    }

    #[test]
    fn a_request_to_another_region_or_to_a_drained_one_ends_the_run() {
        let mut c = RegionRuns::new(&config(), 4 * MIB);
        // Twelve in a row to region 0: places 1..=12.
        for id in 0..12 {
            c.dispatched(id, 4096 * u64::from(id));
        }
        assert_eq!(c.factor_of(0), 1.0); // place 1
        assert_eq!(c.factor_of(7), 1.0); // place 8
        assert_eq!(c.factor_of(8), 1.03125); // place 9: 1 + 0.25 x 1/8
        assert_eq!(c.factor_of(11), 1.125); // place 12
                                            // One to region 1 ends it; the next to region 0 is first again.
        c.dispatched(12, MIB);
        c.dispatched(13, 0);
        assert_eq!(c.place[12], 1);
        assert_eq!(c.place[13], 1);
        // Region 0 drained: the next request there starts a new run though it follows one.
        for _ in 0..13 {
            c.completed(0);
        }
        c.dispatched(14, 0);
        assert_eq!(c.place[14], 1);
        c.dispatched(15, 8192);
        assert_eq!(c.place[15], 2);
        // The last byte of region 0 is region 0; the first of region 3 (and beyond the
        // logical space) is region 3.
        c.dispatched(16, MIB - 1);
        assert_eq!(c.place[16], 3);
        c.dispatched(17, 3 * MIB);
        c.dispatched(18, 100 * MIB);
        assert_eq!((c.place[17], c.place[18]), (1, 2));
    }

    #[test]
    fn bad_curves_are_errors_naming_the_key() {
        let error = |change: &dyn Fn(&mut RegionRunsConfig)| {
            let mut c = config();
            change(&mut c);
            c.validate(4096).unwrap_err()
        };
        let e = error(&|c| c.run_length_requests = vec![1, 16, 8, 64]);
        assert!(
            e.contains("device.region_runs.run_length_requests must increase"),
            "{e}"
        );
        let e = error(&|c| c.run_length_requests = vec![0, 8, 16, 64]);
        assert!(e.contains("starts at 1"), "{e}");
        let e = error(&|c| c.service_time_factor = vec![1.0, 2.0]);
        assert!(
            e.contains("same length") && e.contains("got 4 and 2"),
            "{e}"
        );
        let e = error(&|c| c.service_time_factor[0] = 0.5);
        assert!(
            e.contains("device.region_runs.service_time_factor 0.5 must be a number in [1, "),
            "{e}"
        );
        let e = error(&|c| c.service_time_factor[3] = f64::INFINITY);
        assert!(e.contains("service_time_factor inf"), "{e}");
        let e = error(&|c| c.region_bytes = 100);
        assert!(e.contains("device.region_runs.region_bytes 100"), "{e}");
        assert!(config().validate(4096).is_ok());
    }
}
