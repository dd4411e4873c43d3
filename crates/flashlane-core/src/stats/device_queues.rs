//! Device-queue figures: per-chip queue lengths, per-chip idle share, and the writes SOS moved
//! or cancelled. Definitions are next to each field and in `docs/summary.md`.

use serde::Serialize;

/// Device-queue statistics over the measured window.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DeviceQueueStats {
    /// Per chip, time-weighted mean number of transactions waiting (enqueued, not yet started)
    /// in the chip's device queue over the window. Chip index as in `chips.per_chip_utilization`.
    pub per_chip_queue_length_mean: Vec<f64>,
    /// Per chip, the largest number of transactions waiting at once during the window.
    pub per_chip_queue_length_max: Vec<u32>,
    /// Mean of `per_chip_queue_length_mean` over chips.
    pub queue_length_mean: f64,
    /// Largest of `per_chip_queue_length_max`.
    pub queue_length_max: u32,
    /// Per chip, the SOS paper's per-chip idle time ratio: time in the window during which
    /// the chip was idle while at least one other chip was busy, divided by the window.
    pub per_chip_idle_fraction: Vec<f64>,
    /// Mean of `per_chip_idle_fraction` over chips (the paper's "per-chip average idle time
    /// ratio").
    pub idle_fraction_mean: f64,
    /// Host page writes that SOS's queue-size leveller moved to another chip, started in the
    /// window.
    pub moved_writes: u64,
    /// Host page writes that SOS's write-hit manager cancelled in the window (superseded while
    /// still queued; never programmed).
    pub write_hits: u64,
    /// `write_hits` / host page writes translated in the window (the paper's write hit ratio);
    /// 0 when no page was written.
    pub write_hit_ratio: f64,
}

/// Collects [`DeviceQueueStats`]: the simulation reports every change of a chip's queue length
/// and every moved or cancelled write.
#[derive(Debug, Clone)]
pub struct DeviceQueueRecorder {
    window_start_ns: u64,
    /// Per chip, together: a change touches one record (one bounds check, one cache line).
    chips: Vec<ChipQueue>,
    moved_writes: u64,
    write_hits: u64,
}

/// One chip's queue figures.
#[derive(Debug, Clone, Copy, Default)]
struct ChipQueue {
    /// Integral of the queue length over window time (transaction-ns).
    area: u128,
    last_change_ns: u64,
    last_len: u32,
    max: u32,
}

impl DeviceQueueRecorder {
    pub fn new(chips: usize) -> Self {
        DeviceQueueRecorder {
            window_start_ns: u64::MAX,
            chips: vec![ChipQueue::default(); chips],
            moved_writes: 0,
            write_hits: 0,
        }
    }

    /// The measured window starts: forget what came before.
    pub fn start_window(&mut self, now: u64) {
        self.window_start_ns = now;
        for chip in &mut self.chips {
            chip.area = 0;
            chip.last_change_ns = now;
            chip.max = chip.last_len;
        }
        self.moved_writes = 0;
        self.write_hits = 0;
    }

    /// `chip`'s queue holds `len` waiting transactions from `now` on.
    #[inline]
    pub fn queue_length(&mut self, now: u64, chip: u32, len: u32) {
        let window_start_ns = self.window_start_ns;
        let c = &mut self.chips[chip as usize];
        if c.last_len == len {
            return;
        }
        if now >= window_start_ns {
            c.area += u128::from(c.last_len) * u128::from(now - c.last_change_ns);
            c.last_change_ns = now;
            c.max = c.max.max(len);
        }
        c.last_len = len;
    }

    pub fn moved_write(&mut self, now: u64) {
        self.moved_writes += u64::from(now >= self.window_start_ns);
    }

    pub fn write_hit(&mut self, now: u64) {
        self.write_hits += u64::from(now >= self.window_start_ns);
    }

    /// Figures for the window `[start, end)`; `chip_busy_ns` and `active_ns` as in
    /// [`super::ChipStats`]; `host_page_writes` translated in the window.
    pub fn stats(
        &self,
        end: u64,
        chip_busy_ns: &[u64],
        active_ns: u64,
        host_page_writes: u64,
    ) -> DeviceQueueStats {
        let start = self.window_start_ns.min(end);
        let window = end - start;
        let per_chip_queue_length_mean: Vec<f64> = self
            .chips
            .iter()
            .map(|c| {
                if window == 0 {
                    return 0.0;
                }
                let tail = u128::from(c.last_len)
                    * u128::from(end.saturating_sub(c.last_change_ns.max(start)));
                (c.area + tail) as f64 / window as f64
            })
            .collect();
        let per_chip_queue_length_max: Vec<u32> = self.chips.iter().map(|c| c.max).collect();
        // A chip busy in the window implies some chip was busy, so active >= busy.
        let per_chip_idle_fraction: Vec<f64> = chip_busy_ns
            .iter()
            .map(|busy| {
                if window == 0 {
                    0.0
                } else {
                    active_ns.saturating_sub(*busy) as f64 / window as f64
                }
            })
            .collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        DeviceQueueStats {
            queue_length_mean: mean(&per_chip_queue_length_mean),
            queue_length_max: per_chip_queue_length_max.iter().copied().max().unwrap_or(0),
            per_chip_queue_length_mean,
            per_chip_queue_length_max,
            idle_fraction_mean: mean(&per_chip_idle_fraction),
            per_chip_idle_fraction,
            moved_writes: self.moved_writes,
            write_hits: self.write_hits,
            write_hit_ratio: if host_page_writes == 0 {
                0.0
            } else {
                self.write_hits as f64 / host_page_writes as f64
            },
        }
    }
}
