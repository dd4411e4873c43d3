//! Process variation between blocks (the VIOS paper's model): every block has a BER growth
//! rate drawn once from a bounded Gaussian; with its P/E count that gives the block's BER at
//! the reference ISPP step, the largest step dVp the ECC tolerates, and so its program latency.
//!
//! The chain (readings in docs/models/vios.md):
//! * `ber(g, N, dVp) = g * (N / 1000) * (dVp / dVp_ref)` with `g` the block's growth rate per
//!   thousand P/E cycles and `N` its P/E count (initial cycles plus erases in the run);
//! * `dVp = max_step - k * step_decrement` for the smallest `k >= 0` with
//!   `ber(g, N, dVp) <= ecc_limit_ber` (the largest safe step);
//! * `t_prog = timing.page_program_ns * dVp_ref / dVp`: ISPP needs `(V_target - V_start) / dVp`
//!   pulses of equal length, so the latency is inversely proportional to the step and equals the
//!   device's nominal program time at the reference step (the paper's 600 us at dVp = 0.3).
//!
//! A block keeps one byte (its step index) and one `f32` (its growth rate): O(1) per block.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// `[variation]`: process variation between blocks. Off by default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VariationConfig {
    /// Give every block its own program latency from the model above.
    pub enabled: bool,
    /// Mean of the per-block BER growth rate, BER per thousand P/E cycles (paper: 3.7e-4).
    pub ber_growth_per_kilocycle_mean: f64,
    /// Standard deviation of the growth rate (paper: 9e-5).
    pub ber_growth_per_kilocycle_sigma: f64,
    /// Lower bound of the bounded Gaussian (draws outside the bounds are redrawn).
    pub ber_growth_per_kilocycle_min: f64,
    /// Upper bound of the bounded Gaussian.
    pub ber_growth_per_kilocycle_max: f64,
    /// P/E cycles every block has already seen when the run starts (the paper's wear-out
    /// stages: 6000, 9000, 12000, 15000). Not simulated: only the starting count.
    pub initial_pe_cycles: u32,
    /// Largest raw BER the ECC corrects. Default: the BER of a mean-rate block at 12K P/E with
    /// the reference step (3.7e-4 * 12 = 4.44e-3), so that block programs in
    /// `timing.page_program_ns` at the paper's main wear-out stage.
    pub ecc_limit_ber: f64,
    /// Largest ISPP step dVp a block may use, volts (paper: 0.6).
    pub max_step_volts: f64,
    /// dVp goes down in steps of this size when the ECC limit requires it, volts (paper: 0.03).
    pub step_decrement_volts: f64,
    /// ISPP step at which a block programs in `timing.page_program_ns`, volts (paper: 0.3).
    pub reference_step_volts: f64,
}

impl Default for VariationConfig {
    fn default() -> Self {
        VariationConfig {
            enabled: false,
            ber_growth_per_kilocycle_mean: 3.7e-4,
            ber_growth_per_kilocycle_sigma: 9e-5,
            ber_growth_per_kilocycle_min: 1.0e-4,
            ber_growth_per_kilocycle_max: 6.4e-4,
            initial_pe_cycles: 0,
            ecc_limit_ber: 4.44e-3,
            max_step_volts: 0.6,
            step_decrement_volts: 0.03,
            reference_step_volts: 0.3,
        }
    }
}

impl VariationConfig {
    /// Ranges serde cannot check; messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let c = self;
        if !(positive(c.ber_growth_per_kilocycle_mean)
            && c.ber_growth_per_kilocycle_sigma.is_finite()
            && c.ber_growth_per_kilocycle_sigma >= 0.0)
        {
            return Err("variation.ber_growth_per_kilocycle_mean must be > 0 and variation.ber_growth_per_kilocycle_sigma >= 0".into());
        }
        if !(positive(c.ber_growth_per_kilocycle_min)
            && c.ber_growth_per_kilocycle_min <= c.ber_growth_per_kilocycle_mean
            && c.ber_growth_per_kilocycle_mean <= c.ber_growth_per_kilocycle_max
            && c.ber_growth_per_kilocycle_max.is_finite())
        {
            return Err(
                "variation.ber_growth_per_kilocycle_min <= _mean <= _max must hold, with min > 0"
                    .into(),
            );
        }
        if !(positive(c.ecc_limit_ber) && c.ecc_limit_ber < 1.0) {
            return Err("variation.ecc_limit_ber must be in (0, 1)".into());
        }
        if !(positive(c.max_step_volts)
            && positive(c.step_decrement_volts)
            && positive(c.reference_step_volts))
        {
            return Err("variation.max_step_volts, step_decrement_volts and reference_step_volts must be > 0".into());
        }
        if c.max_step_volts / c.step_decrement_volts > 250.0 {
            return Err("variation.max_step_volts / variation.step_decrement_volts must be at most 250 (steps are kept in one byte)".into());
        }
        Ok(())
    }

    /// Number of usable steps: max, max - dec, ... down to the last step > 0.
    fn step_count(&self) -> usize {
        // Tolerance: 0.6 / 0.03 is 19.999... in floating point.
        let n = (self.max_step_volts / self.step_decrement_volts + 1e-9).floor() as usize;
        if self.max_step_volts - n as f64 * self.step_decrement_volts > 1e-9 {
            n + 1
        } else {
            n.max(1)
        }
    }

    /// ISPP step of index `k` (0 = largest), volts.
    pub fn step_volts(&self, k: usize) -> f64 {
        self.max_step_volts - k as f64 * self.step_decrement_volts
    }

    /// Raw BER of a block with growth rate `g` after `pe_cycles`, programmed with `step_volts`.
    pub fn ber(&self, g: f64, pe_cycles: u64, step_volts: f64) -> f64 {
        g * (pe_cycles as f64 / 1000.0) * (step_volts / self.reference_step_volts)
    }

    /// Index of the largest safe step for growth rate `g` at `pe_cycles`, and whether even the
    /// smallest step exceeds the ECC limit (then the smallest step is used).
    pub fn safe_step(&self, g: f64, pe_cycles: u64) -> (usize, bool) {
        let steps = self.step_count();
        for k in 0..steps {
            if self.ber(g, pe_cycles, self.step_volts(k)) <= self.ecc_limit_ber * (1.0 + 1e-12) {
                return (k, false);
            }
        }
        (steps - 1, true)
    }

    /// Program latency with step `step_volts` when the reference step takes `nominal_ns`.
    pub fn program_ns(&self, nominal_ns: u64, step_volts: f64) -> u64 {
        (nominal_ns as f64 * self.reference_step_volts / step_volts).round() as u64
    }
}

/// How a write picks the block it lands in (`ftl.block_choice`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockChoice {
    /// Today's behaviour: one open block per plane, free blocks least-erased first.
    #[default]
    InOrder,
    /// VIOS: free blocks ordered by program latency; a write whose chip has other requests
    /// waiting or in service goes to the fastest free block of its plane, any other write
    /// (and GC) to the slowest. Same as `in_order` without `[variation]`.
    FastestForConflicts,
}

/// Class of a block's speed against the device's median program latency at the start of the
/// run: faster than the median, at it, slower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeedClass {
    Fast,
    Medium,
    Slow,
}

/// Cumulative counters of the variation model (host page writes only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VariationCounters {
    /// Host page writes that landed in fast / medium / slow blocks (see [`SpeedClass`]).
    pub writes_by_class: [u64; 3],
    /// Host page writes whose chip had other requests waiting or in service (the allocation
    /// conflict: `claims_per_chip[chip] > 1`).
    pub conflict_writes: u64,
    /// Host page writes that asked for a fast block (conflicting writes under
    /// `fastest_for_conflicts`; such a write that opens a block opens the fastest free one).
    pub fast_stream_writes: u64,
    /// Sum of the program latencies of host page writes, ns.
    pub host_program_ns_sum: u64,
    /// Times an erase lowered a block's step (the block was re-sorted among free blocks).
    pub step_drops: u64,
}

/// Per-block variation state of the whole device.
#[derive(Debug)]
pub struct Variation {
    pub(super) config: VariationConfig,
    /// Growth rate per block (global block index).
    pub(super) growth: Vec<f32>,
    /// Index of the block's current ISPP step.
    pub(super) step: Vec<u8>,
    /// Program latency of each step index, ns.
    pub(super) program_ns_by_step: Vec<u32>,
    /// Median step index at the start of the run (speed classes are relative to it).
    pub(super) median_step: u8,
    /// Blocks whose smallest step still exceeded the ECC limit at some point.
    pub(super) beyond_ecc: u64,
    pub(crate) counters: VariationCounters,
}

/// One standard normal draw (Box-Muller; one of the pair is used so each draw is independent
/// of how many were rejected before).
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl Variation {
    /// Draw the growth rate of `blocks` blocks from the run seed's own stream and set every
    /// block at `initial_pe_cycles`. `nominal_program_ns` is `timing.page_program_ns`.
    pub fn new(
        config: &VariationConfig,
        blocks: u64,
        nominal_program_ns: u64,
        seed: u64,
    ) -> Result<Variation, String> {
        config.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5641_5249_4154_494f); // "VARIATIO"
        let (mu, sigma) = (
            config.ber_growth_per_kilocycle_mean,
            config.ber_growth_per_kilocycle_sigma,
        );
        let (lo, hi) = (
            config.ber_growth_per_kilocycle_min,
            config.ber_growth_per_kilocycle_max,
        );
        let steps = config.step_count();
        let program_ns_by_step = (0..steps)
            .map(|k| {
                let ns = config.program_ns(nominal_program_ns, config.step_volts(k));
                u32::try_from(ns).map_err(|_| {
                    format!(
                        "variation: program latency {ns} ns at step {:.3} V does not fit in u32 ns",
                        config.step_volts(k)
                    )
                })
            })
            .collect::<Result<Vec<u32>, String>>()?;
        let mut growth = Vec::with_capacity(blocks as usize);
        let mut step = Vec::with_capacity(blocks as usize);
        let mut beyond_ecc = 0;
        let mut histogram = vec![0u64; steps];
        for _ in 0..blocks {
            let g = loop {
                let g = mu + sigma * standard_normal(&mut rng);
                if (lo..=hi).contains(&g) {
                    break g;
                }
            };
            let (k, beyond) = config.safe_step(g, config.initial_pe_cycles as u64);
            beyond_ecc += u64::from(beyond);
            histogram[k] += 1;
            growth.push(g as f32);
            step.push(k as u8);
        }
        let mut seen = 0;
        let mut median_step = 0u8;
        for (k, count) in histogram.iter().enumerate() {
            seen += count;
            if seen * 2 >= blocks {
                median_step = k as u8;
                break;
            }
        }
        Ok(Variation {
            config: config.clone(),
            growth,
            step,
            program_ns_by_step,
            median_step,
            beyond_ecc,
            counters: VariationCounters::default(),
        })
    }

    /// Program latency of global block `block`, ns.
    #[inline]
    pub fn program_ns(&self, block: usize) -> u32 {
        self.program_ns_by_step[self.step[block] as usize]
    }

    /// Sort key among free blocks: smaller is faster.
    #[inline]
    pub fn speed_key(&self, block: usize) -> u32 {
        self.step[block] as u32
    }

    pub fn class(&self, block: usize) -> SpeedClass {
        let k = self.step[block];
        match k.cmp(&self.median_step) {
            std::cmp::Ordering::Less => SpeedClass::Fast,
            std::cmp::Ordering::Equal => SpeedClass::Medium,
            std::cmp::Ordering::Greater => SpeedClass::Slow,
        }
    }

    /// Write-speed detection after an erase: the block now has `erase_count` erases on top of
    /// the initial cycles. The step never grows back (a block never gets faster).
    pub fn on_erase(&mut self, block: usize, erase_count: u32) {
        let pe = self.config.initial_pe_cycles as u64 + erase_count as u64;
        let (k, beyond) = self.config.safe_step(self.growth[block] as f64, pe);
        let k = (k as u8).max(self.step[block]);
        if k > self.step[block] {
            self.counters.step_drops += 1;
            self.beyond_ecc += u64::from(beyond);
            self.step[block] = k;
        }
    }

    /// Blocks per program latency now: (latency in us, blocks), fastest first, empty steps
    /// left out.
    pub fn latency_histogram(&self) -> Vec<(f64, u64)> {
        let mut counts = vec![0u64; self.program_ns_by_step.len()];
        for &k in &self.step {
            counts[k as usize] += 1;
        }
        counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(k, c)| (self.program_ns_by_step[k] as f64 / 1000.0, *c))
            .collect()
    }

    pub fn median_program_ns(&self) -> u32 {
        self.program_ns_by_step[self.median_step as usize]
    }

    pub fn beyond_ecc_blocks(&self) -> u64 {
        self.beyond_ecc
    }

    pub fn counters(&self) -> VariationCounters {
        self.counters
    }
}

/// `variation` in the summary (docs/summary.md). Write counts are host page writes in the
/// measured window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VariationStats {
    /// Median block program latency at the start of the run, us: fast blocks program faster
    /// than this, medium blocks at it, slow blocks slower.
    pub median_program_us: f64,
    /// Blocks per program latency at the end of the run: (program latency in us, blocks),
    /// fastest first.
    pub block_program_us_histogram: Vec<(f64, u64)>,
    /// Shares of host page writes that landed in fast / medium / slow blocks.
    pub write_fast_fraction: f64,
    pub write_medium_fraction: f64,
    pub write_slow_fraction: f64,
    /// Share of host page writes whose chip had other requests waiting or in service when the
    /// page was allocated (the allocation-time conflict).
    pub conflict_write_fraction: f64,
    /// Share of host page writes that asked for a fast block (`fastest_for_conflicts`).
    pub fast_stream_write_fraction: f64,
    /// Mean array program time of host page writes, us.
    pub mean_host_program_us: f64,
    /// Erases in the window that lowered a block's ISPP step (the block was re-sorted).
    pub step_drops: u64,
    /// Blocks whose smallest step exceeded the ECC limit (programmed with it anyway).
    pub beyond_ecc_blocks: u64,
}

impl Variation {
    /// Statistics of the window that began when the counters read `at_start`.
    pub fn stats(&self, at_start: &VariationCounters) -> VariationStats {
        let now = self.counters;
        let by_class: Vec<u64> = (0..3)
            .map(|i| now.writes_by_class[i] - at_start.writes_by_class[i])
            .collect();
        let writes: u64 = by_class.iter().sum();
        let share = |n: u64| {
            if writes == 0 {
                0.0
            } else {
                n as f64 / writes as f64
            }
        };
        VariationStats {
            median_program_us: self.median_program_ns() as f64 / 1000.0,
            block_program_us_histogram: self.latency_histogram(),
            write_fast_fraction: share(by_class[0]),
            write_medium_fraction: share(by_class[1]),
            write_slow_fraction: share(by_class[2]),
            conflict_write_fraction: share(now.conflict_writes - at_start.conflict_writes),
            fast_stream_write_fraction: share(now.fast_stream_writes - at_start.fast_stream_writes),
            mean_host_program_us: if writes == 0 {
                0.0
            } else {
                (now.host_program_ns_sum - at_start.host_program_ns_sum) as f64
                    / writes as f64
                    / 1000.0
            },
            step_drops: now.step_drops - at_start.step_drops,
            beyond_ecc_blocks: self.beyond_ecc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper() -> VariationConfig {
        VariationConfig {
            enabled: true,
            ..Default::default()
        }
    }

    #[test]
    fn reference_step_programs_in_nominal_time() {
        let c = paper();
        assert_eq!(c.program_ns(600_000, 0.3), 600_000);
        assert_eq!(c.program_ns(600_000, 0.6), 300_000);
        // 0.6 - 10 * 0.03 = 0.3: the eleventh step is the reference step.
        assert!((c.step_volts(10) - 0.3).abs() < 1e-12);
        assert_eq!(c.step_count(), 20);
        // A mean-rate block at 12K P/E needs exactly the reference step with the default ECC.
        let (k, beyond) = c.safe_step(3.7e-4, 12_000);
        assert_eq!((k, beyond), (10, false));
        let v = Variation::new(&c, 1, 600_000, 1).unwrap();
        assert_eq!(v.program_ns_by_step[10], 600_000);
    }

    #[test]
    fn latency_never_improves_with_wear() {
        let c = paper();
        for g in [1.0e-4, 2.5e-4, 3.7e-4, 5.0e-4, 6.4e-4] {
            let mut last = 0;
            for pe in (0..40_000u64).step_by(250) {
                let (k, _) = c.safe_step(g, pe);
                let ns = c.program_ns(600_000, c.step_volts(k));
                assert!(ns >= last, "g {g}: {ns} ns at {pe} P/E after {last} ns");
                last = ns;
            }
        }
        // Through the block state as well: erases never make a block faster.
        let mut v = Variation::new(&paper(), 64, 600_000, 7).unwrap();
        for block in 0..64 {
            let mut last = v.program_ns(block);
            for erases in 1..20_000 {
                v.on_erase(block, erases);
                assert!(v.program_ns(block) >= last);
                last = v.program_ns(block);
            }
        }
        assert!(v.counters.step_drops > 0, "20K erases lowered no step");
    }

    #[test]
    fn same_seed_same_map_and_bounds_hold() {
        let mut c = paper();
        c.initial_pe_cycles = 15_000;
        let a = Variation::new(&c, 10_000, 600_000, 42).unwrap();
        let b = Variation::new(&c, 10_000, 600_000, 42).unwrap();
        let other = Variation::new(&c, 10_000, 600_000, 43).unwrap();
        assert_eq!(a.growth, b.growth);
        assert_eq!(a.step, b.step);
        assert_ne!(a.growth, other.growth);
        assert!(a
            .growth
            .iter()
            .all(|g| (1.0e-4..=6.4e-4).contains(&(*g as f64))));
        let mean = a.growth.iter().map(|g| *g as f64).sum::<f64>() / a.growth.len() as f64;
        assert!((mean - 3.7e-4).abs() < 5e-6, "mean growth {mean}");
        // At 15K the spread of latencies is wide: several distinct steps are in use.
        assert!(
            a.latency_histogram().len() >= 5,
            "{:?}",
            a.latency_histogram()
        );
    }

    #[test]
    fn bad_bounds_are_refused_by_name() {
        let mut c = paper();
        c.ber_growth_per_kilocycle_min = 5e-4;
        let err = c.validate().unwrap_err();
        assert!(err.contains("ber_growth_per_kilocycle_min"), "{err}");
    }
}
