//! Host-queue occupancy over the measured window: how full the queue in front of the device
//! was, and for how long it could take no more requests.

use serde::Serialize;

/// Host-queue figures over the measured window (definitions in docs/summary.md).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct HostQueueStats {
    /// `host.queue_length_requests`: the requests the queue holds at most.
    pub capacity_requests: u64,
    /// Time-weighted mean number of requests in the queue over the window: waiting for the host
    /// scheduler, plus those in the device under `host.queue_includes_outstanding` (SSDsim's
    /// request queue, where they keep their place until they complete).
    pub length_mean: f64,
    /// Most requests in the queue at once during the window.
    pub length_max: u64,
    /// Share of the window during which the queue held `capacity_requests` (an arriving
    /// request had to wait outside it).
    pub full_fraction: f64,
}

/// The flow reports every change of the queue's occupancy.
#[derive(Debug, Clone)]
pub struct HostQueueRecorder {
    capacity: u64,
    window_start_ns: u64,
    len: u64,
    last_change_ns: u64,
    /// Integral of the length over window time (request-ns), and of the time spent full.
    area: u128,
    full_ns: u64,
    max: u64,
}

impl HostQueueRecorder {
    pub fn new(capacity: u64) -> Self {
        HostQueueRecorder {
            capacity,
            window_start_ns: u64::MAX,
            len: 0,
            last_change_ns: 0,
            area: 0,
            full_ns: 0,
            max: 0,
        }
    }

    pub fn start_window(&mut self, now: u64) {
        self.window_start_ns = now;
        self.last_change_ns = now;
        self.area = 0;
        self.full_ns = 0;
        self.max = self.len;
    }

    /// The queue holds `len` requests from `now` on.
    #[inline]
    pub fn length(&mut self, now: u64, len: u64) {
        if len == self.len {
            return;
        }
        if now >= self.window_start_ns {
            self.accumulate(now);
            self.max = self.max.max(len);
        }
        self.len = len;
    }

    fn accumulate(&mut self, now: u64) {
        let span = now - self.last_change_ns;
        self.area += u128::from(self.len) * u128::from(span);
        if self.len >= self.capacity {
            self.full_ns += span;
        }
        self.last_change_ns = now;
    }

    /// Figures for the window that ends at `end` (nothing measured: all zero).
    pub fn stats(&self, end: u64) -> HostQueueStats {
        let mut tail = self.clone();
        if self.window_start_ns == u64::MAX || end <= self.window_start_ns {
            return HostQueueStats {
                capacity_requests: self.capacity,
                ..HostQueueStats::default()
            };
        }
        if end > tail.last_change_ns {
            tail.accumulate(end);
        }
        let window = (end - self.window_start_ns) as f64;
        HostQueueStats {
            capacity_requests: self.capacity,
            length_mean: tail.area as f64 / window,
            length_max: tail.max,
            full_fraction: tail.full_ns as f64 / window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_is_weighted_by_time_inside_the_window_only() {
        let mut r = HostQueueRecorder::new(2);
        r.length(0, 2); // full before the window: not counted
        r.start_window(10);
        r.length(20, 1); // 10 ns full at 2
        r.length(30, 2); // 10 ns at 1
        r.length(50, 0); // 20 ns full at 2
        let s = r.stats(60); // 10 ns at 0
        assert_eq!(s.capacity_requests, 2);
        assert_eq!(s.length_max, 2);
        assert!((s.length_mean - (20.0 + 10.0 + 40.0) / 50.0).abs() < 1e-12);
        assert!((s.full_fraction - 30.0 / 50.0).abs() < 1e-12);
    }

    #[test]
    fn a_run_without_a_window_reports_zeros() {
        let mut r = HostQueueRecorder::new(4);
        r.length(5, 3);
        let s = r.stats(100);
        assert_eq!(
            (s.length_max, s.length_mean, s.full_fraction),
            (0, 0.0, 0.0)
        );
    }
}
