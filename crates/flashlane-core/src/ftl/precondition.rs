//! Preconditioning: put the drive in a stated state before the trace starts, in bulk (no
//! event simulation), so a 128 GB drive takes seconds.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::Ftl;
use crate::Error;

/// Drive state before the trace starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    /// Write every logical page the trace touches before it starts (so reads hit mapped data).
    #[serde(default = "yes")]
    pub write_trace_footprint: bool,
    /// Fill the drive to this share of its logical capacity (trace footprint first, then random
    /// pages). 0 = only the footprint.
    #[serde(default)]
    pub fill_fraction: f64,
    /// Age the drive with random overwrites of the filled pages until garbage collection is in
    /// steady state (write amplification of two successive rounds within 2 %).
    #[serde(default)]
    pub age: bool,
    /// Upper bound on aging rounds; each round overwrites a tenth of the filled pages.
    #[serde(default = "default_age_rounds")]
    pub age_max_rounds: u32,
    /// Which requests' pages the footprint holds: `all` (the default) or `reads` (SSDsim's
    /// `pre_process_page`: only what the trace reads exists before it starts; with
    /// `ftl.partial_page_writes = "read_modify_write"` only the sectors read).
    #[serde(default, skip_serializing_if = "FootprintRequests::is_default")]
    pub footprint_requests: FootprintRequests,
}

fn yes() -> bool {
    true
}
fn default_age_rounds() -> u32 {
    50
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            write_trace_footprint: true,
            fill_fraction: 0.0,
            age: false,
            age_max_rounds: 50,
            footprint_requests: FootprintRequests::All,
        }
    }
}

/// Which requests of the trace make up the footprint written before it starts
/// (`precondition.footprint_requests`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FootprintRequests {
    /// Every page the trace touches.
    #[default]
    All,
    /// Only the pages the trace reads (SSDsim's `pre_process_page`).
    Reads,
}

impl FootprintRequests {
    pub fn is_default(&self) -> bool {
        *self == FootprintRequests::All
    }
}

/// Set of logical pages a trace touches, one bit per logical page.
#[derive(Debug, Clone)]
pub struct Footprint {
    words: Vec<u64>,
    pages: u64,
}

impl Footprint {
    pub fn new(logical_pages: u64) -> Self {
        Footprint {
            words: vec![0; logical_pages.div_ceil(64) as usize],
            pages: 0,
        }
    }

    /// Mark `lpn`; returns false if it is past the end.
    pub fn insert(&mut self, lpn: u64) -> bool {
        let Some(word) = self.words.get_mut((lpn / 64) as usize) else {
            return false;
        };
        let bit = 1u64 << (lpn % 64);
        if *word & bit == 0 {
            *word |= bit;
            self.pages += 1;
        }
        true
    }

    /// Start loading the word of `lpn`'s bit (a performance hint).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        if let Some(word) = self.words.get((lpn / 64) as usize) {
            super::slot_index::prefetch(word);
        }
    }

    pub fn contains(&self, lpn: u64) -> bool {
        self.words
            .get((lpn / 64) as usize)
            .is_some_and(|w| w & (1 << (lpn % 64)) != 0)
    }

    /// Distinct logical pages marked.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(i, w)| {
            let mut bits = *w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as u64;
                bits &= bits - 1;
                Some(i as u64 * 64 + b)
            })
        })
    }
}

/// What preconditioning did (reported in the summary).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PreconditionReport {
    /// Logical pages of the trace's footprint written before the run.
    pub footprint_pages: u64,
    /// Further logical pages written to reach `fill_fraction`.
    pub fill_pages: u64,
    /// Aging rounds run (each overwrites a tenth of the filled pages at random).
    pub age_rounds: u32,
    /// Write amplification of the last aging round (0 when not aged).
    pub age_final_waf: f64,
    /// Wall-clock seconds spent preconditioning.
    pub wall_s: f64,
}

/// Fill the drive: the footprint first (in logical order), then pages from a seeded random
/// start up to `fill_fraction` of logical capacity; then optionally age it.
pub fn precondition(
    ftl: &mut Ftl,
    config: &PreconditionConfig,
    footprint: Option<&Footprint>,
    seed: u64,
) -> Result<PreconditionReport, Error> {
    let started = std::time::Instant::now();
    let mut report = PreconditionReport::default();
    let logical = ftl.logical_pages();
    let chips = ftl.geometry.chips() as usize;
    let no_load = vec![0u32; chips];
    let mut gc_ops = Vec::new();
    let mut written = Footprint::new(logical);
    if let Some(footprint) = footprint.filter(|_| config.write_trace_footprint) {
        for lpn in footprint.iter() {
            ftl.write(lpn, &no_load, &mut gc_ops)?;
            gc_ops.clear();
            written.insert(lpn);
        }
        report.footprint_pages = written.pages();
    }
    let target = (config.fill_fraction * logical as f64) as u64;
    if written.pages() < target {
        // The rest of the fill goes to the logical pages after a seeded random start, in
        // address order (wrapping): static striping still spreads it evenly over the planes,
        // and the mapping table grows only with the pages filled.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5052_4543_4f4e_4431);
        let start = rng.random_range(0..logical);
        for i in 0..logical {
            if written.pages() >= target {
                break;
            }
            let lpn = (start + i) % logical;
            if !written.contains(lpn) {
                ftl.write(lpn, &no_load, &mut gc_ops)?;
                gc_ops.clear();
                written.insert(lpn);
                report.fill_pages += 1;
            }
        }
    }
    if config.age && written.pages() > 0 {
        // Random filled pages: by rejection on the bitset when it is dense enough (no extra
        // memory), else from a list of them.
        let dense = written.pages() * 4 >= logical;
        let filled: Vec<u32> = if dense {
            Vec::new()
        } else {
            written.iter().map(|l| l as u32).collect()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4147_494e_4721);
        let pick = |rng: &mut ChaCha8Rng| -> u64 {
            if dense {
                loop {
                    let lpn = rng.random_range(0..logical);
                    if written.contains(lpn) {
                        return lpn;
                    }
                }
            } else {
                filled[rng.random_range(0..filled.len())] as u64
            }
        };
        let round_writes = (written.pages() / 10).max(1);
        let mut last_waf = 0.0;
        for round in 0..config.age_max_rounds {
            let before = ftl.counters();
            for _ in 0..round_writes {
                let lpn = pick(&mut rng);
                ftl.write(lpn, &no_load, &mut gc_ops)?;
                gc_ops.clear();
            }
            let after = ftl.counters();
            let host = (after.host_page_writes - before.host_page_writes) as f64;
            let moved = (after.gc_pages_moved - before.gc_pages_moved) as f64;
            let waf = (host + moved) / host;
            report.age_rounds = round + 1;
            report.age_final_waf = waf;
            // Steady state: GC is running and write amplification has stopped moving.
            if moved > 0.0 && (waf - last_waf).abs() <= 0.02 * waf {
                break;
            }
            last_waf = waf;
        }
    }
    ftl.reset_counters();
    report.wall_s = started.elapsed().as_secs_f64();
    Ok(report)
}
