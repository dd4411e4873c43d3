//! The streaming generator behind [`SyntheticReader`].

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use std::collections::VecDeque;

use super::{
    sequential_region_bytes, AddressSpec, ArrivalSpec, RewriteSpec, SizeSpec, SyntheticSpec, Zipf,
};
use crate::trace::{Op, TraceError, TraceRecord};
use crate::Error;

/// Generates the records of a [`SyntheticSpec`] one at a time (constant memory).
///
/// Arrival times, read/write choices, sizes and addresses each draw from their own ChaCha8
/// stream of the one seed, so changing e.g. the size distribution leaves the arrival times
/// and the read/write sequence unchanged.
#[derive(Debug, Clone)]
pub struct SyntheticReader {
    spec: SyntheticSpec,
    emitted: u64,
    time_ns: u64,
    arrival_rng: ChaCha8Rng,
    op_rng: ChaCha8Rng,
    size_rng: ChaCha8Rng,
    address_rng: ChaCha8Rng,
    size: SizeSampler,
    address: AddressSampler,
    rewrite: Option<RewriteSampler>,
}

impl SyntheticReader {
    /// Check `spec` and prepare to generate it.
    pub fn new(spec: &SyntheticSpec) -> Result<SyntheticReader, Error> {
        spec.validate().map_err(Error::Config)?;
        let rng = |stream: u64| {
            let mut r = ChaCha8Rng::seed_from_u64(spec.seed);
            r.set_stream(stream);
            r
        };
        Ok(SyntheticReader {
            spec: spec.clone(),
            emitted: 0,
            time_ns: 0,
            arrival_rng: rng(0),
            op_rng: rng(1),
            size_rng: rng(2),
            address_rng: rng(3),
            size: SizeSampler::new(&spec.size),
            address: AddressSampler::new(&spec.address).map_err(Error::Config)?,
            // Its own stream (4), so a spec without `rewrite` gives the bytes it always gave.
            rewrite: spec
                .rewrite
                .as_ref()
                .map(|r| RewriteSampler::new(r, rng(4))),
        })
    }

    /// The spec being generated.
    pub fn spec(&self) -> &SyntheticSpec {
        &self.spec
    }

    /// What the workload stands for; show it with anything produced from it.
    pub fn label(&self) -> &str {
        &self.spec.label
    }

    /// The next record, `Ok(None)` after `requests` records. Never fails: the signature is
    /// that of [`crate::trace::TraceReader::next_record`] so both plug into the same closures.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        Ok(self.generate())
    }

    fn generate(&mut self) -> Option<TraceRecord> {
        if self.emitted >= self.spec.requests {
            return None;
        }
        // Streams are dealt in turn; `stream_count` >= 1 is checked by `validate`.
        let stream = self
            .spec
            .stream
            .wrapping_add((self.emitted % u64::from(self.spec.stream_count.max(1))) as u32);
        if self.emitted > 0 {
            let gap = match self.spec.arrival {
                ArrivalSpec::Poisson {
                    mean_interarrival_ns,
                } => {
                    // Inversion of the exponential; 1 - u is in (0, 1], so ln is finite.
                    let u = unit_f64(&mut self.arrival_rng);
                    (-mean_interarrival_ns * (1.0 - u).ln()).round() as u64
                }
                ArrivalSpec::Fixed { interarrival_ns } => interarrival_ns,
                ArrivalSpec::ClosedLoop { .. } => 0,
                ArrivalSpec::OnOff {
                    on_interarrival_ns, ..
                } => {
                    let u = unit_f64(&mut self.arrival_rng);
                    (-on_interarrival_ns * (1.0 - u).ln()).round() as u64
                }
            };
            self.time_ns = self.time_ns.saturating_add(gap);
            if let ArrivalSpec::OnOff {
                on_duration_ns,
                off_duration_ns,
                ..
            } = self.spec.arrival
            {
                // Time spent in OFF periods is skipped: the ON clock runs only while ON.
                let period = on_duration_ns + off_duration_ns;
                let into = self.time_ns % period;
                if into >= on_duration_ns {
                    self.time_ns += period - into;
                }
            }
        }
        self.emitted += 1;
        let op = if unit_f64(&mut self.op_rng) < self.spec.read_fraction {
            Op::Read
        } else {
            Op::Write
        };
        let mut size_bytes = self.size.sample(&mut self.size_rng);
        let mut offset_bytes = self.address.sample(&mut self.address_rng, size_bytes);
        if op == Op::Write {
            if let Some(rewrite) = &mut self.rewrite {
                // Sizes and addresses are drawn first either way, so their streams stay in step.
                (offset_bytes, size_bytes) = rewrite.place(offset_bytes, size_bytes);
            }
        }
        Some(TraceRecord {
            time_ns: self.time_ns,
            device: self.spec.device,
            stream,
            offset_bytes,
            size_bytes,
            op,
        })
    }
}

impl Iterator for SyntheticReader {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        self.generate()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.spec.requests - self.emitted).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// Uniform in [0, 1) from the top 53 bits (our own, so the bytes never depend on how a
/// `rand` release maps integers to floats).
fn unit_f64(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform in [0, n), n > 0, exactly (Lemire's multiply-and-reject).
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

/// Discrete choice by weight: cumulative sums and a binary search.
#[derive(Debug, Clone)]
struct Weighted {
    cumulative: Vec<f64>,
}

impl Weighted {
    fn new(weights: impl Iterator<Item = f64>) -> Weighted {
        let mut total = 0.0;
        let cumulative = weights
            .map(|w| {
                total += w;
                total
            })
            .collect();
        Weighted { cumulative }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let x = unit_f64(rng) * total;
        // First entry whose cumulative weight exceeds x: zero-weight entries are never chosen.
        self.cumulative
            .partition_point(|c| *c <= x)
            .min(self.cumulative.len() - 1)
    }
}

#[derive(Debug, Clone)]
enum SizeSampler {
    Fixed(u64),
    Uniform { min: u64, align: u64, choices: u64 },
    Empirical { sizes: Vec<u64>, pick: Weighted },
}

impl SizeSampler {
    fn new(spec: &SizeSpec) -> SizeSampler {
        match spec {
            SizeSpec::Fixed { bytes } => SizeSampler::Fixed(*bytes),
            SizeSpec::Uniform {
                min_bytes,
                max_bytes,
                align_bytes,
            } => SizeSampler::Uniform {
                min: *min_bytes,
                align: *align_bytes,
                choices: (max_bytes - min_bytes) / align_bytes + 1,
            },
            SizeSpec::Empirical {
                sizes_bytes,
                weights,
            } => SizeSampler::Empirical {
                sizes: sizes_bytes.clone(),
                pick: Weighted::new(weights.iter().copied()),
            },
        }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            SizeSampler::Fixed(bytes) => *bytes,
            SizeSampler::Uniform {
                min,
                align,
                choices,
            } => min + align * below(rng, *choices),
            SizeSampler::Empirical { sizes, pick } => sizes[pick.sample(rng)],
        }
    }
}

#[derive(Debug, Clone)]
enum AddressSampler {
    Uniform {
        span: u64,
        align: u64,
        slots: u64,
    },
    Zipf {
        span: u64,
        align: u64,
        zipf: Zipf,
    },
    HotCold {
        span: u64,
        align: u64,
        hot_slots: u64,
        cold_slots: u64,
        hot_share: f64,
    },
    Sequential {
        region: u64,
        /// Next offset of each stream, relative to its region.
        cursors: Vec<u64>,
        turn: usize,
    },
    HotUnits {
        span: u64,
        align: u64,
        unit: u64,
        units: u64,
        hot_units: u64,
        /// Pieces per unit (whole rounds of `units` pieces in the span).
        rounds: u64,
        hot_share: f64,
    },
    Runs {
        span: u64,
        align: u64,
        slots: u64,
        /// Probability that a request ends its run (1 / mean run length).
        end_run: f64,
        /// Where the next request of the current run starts (`None`: start a new run).
        next: Option<u64>,
    },
    RegionBursts {
        align: u64,
        region: u64,
        regions: u64,
        /// `align` slots per region.
        slots: u64,
        burst: u64,
        /// The current burst's region (`None` before the first burst).
        current: Option<u64>,
        /// Requests the current burst still has to send.
        left: u64,
    },
    Mix {
        pick: Weighted,
        parts: Vec<AddressSampler>,
    },
}

impl AddressSampler {
    /// `spec` is validated, so the divisions are sound; the Zipf check repeats the
    /// validation rather than trusting it with a panic.
    fn new(spec: &AddressSpec) -> Result<AddressSampler, String> {
        Ok(match spec {
            AddressSpec::Uniform {
                span_bytes,
                align_bytes,
            } => AddressSampler::Uniform {
                span: *span_bytes,
                align: *align_bytes,
                slots: span_bytes / align_bytes,
            },
            AddressSpec::Zipf {
                span_bytes,
                align_bytes,
                theta,
            } => AddressSampler::Zipf {
                span: *span_bytes,
                align: *align_bytes,
                zipf: Zipf::new(span_bytes / align_bytes, *theta)
                    .ok_or_else(|| format!("address: invalid zipf parameters (theta {theta})"))?,
            },
            AddressSpec::HotCold {
                span_bytes,
                align_bytes,
                hot_fraction_of_span,
                hot_fraction_of_accesses,
            } => {
                let slots = span_bytes / align_bytes;
                // At least one hot and one cold slot, so both shares can be honoured.
                let hot =
                    ((slots as f64 * hot_fraction_of_span).round() as u64).clamp(1, slots - 1);
                AddressSampler::HotCold {
                    span: *span_bytes,
                    align: *align_bytes,
                    hot_slots: hot,
                    cold_slots: slots - hot,
                    hot_share: *hot_fraction_of_accesses,
                }
            }
            AddressSpec::Sequential {
                span_bytes,
                streams,
            } => AddressSampler::Sequential {
                region: sequential_region_bytes(*span_bytes, *streams),
                cursors: vec![0; *streams as usize],
                turn: 0,
            },
            AddressSpec::HotUnits {
                span_bytes,
                align_bytes,
                unit_bytes,
                units,
                hot_units,
                hot_fraction_of_accesses,
            } => AddressSampler::HotUnits {
                span: *span_bytes,
                align: *align_bytes,
                unit: *unit_bytes,
                units: u64::from(*units),
                hot_units: u64::from(*hot_units),
                rounds: span_bytes / unit_bytes / u64::from(*units),
                hot_share: *hot_fraction_of_accesses,
            },
            AddressSpec::Runs {
                span_bytes,
                align_bytes,
                mean_run_requests,
            } => AddressSampler::Runs {
                span: *span_bytes,
                align: *align_bytes,
                slots: span_bytes / align_bytes,
                end_run: 1.0 / mean_run_requests,
                next: None,
            },
            AddressSpec::RegionBursts {
                span_bytes,
                align_bytes,
                region_bytes,
                burst_requests,
            } => AddressSampler::RegionBursts {
                align: *align_bytes,
                region: *region_bytes,
                regions: span_bytes / region_bytes,
                slots: region_bytes / align_bytes,
                burst: *burst_requests,
                current: None,
                left: 0,
            },
            AddressSpec::Mix { components } => AddressSampler::Mix {
                pick: Weighted::new(components.iter().map(|c| c.weight)),
                parts: components
                    .iter()
                    .map(|c| AddressSampler::new(&c.pattern))
                    .collect::<Result<_, _>>()?,
            },
        })
    }

    fn sample(&mut self, rng: &mut ChaCha8Rng, size: u64) -> u64 {
        match self {
            AddressSampler::Uniform { span, align, slots } => {
                fit(below(rng, *slots) * *align, size, *span, *align)
            }
            AddressSampler::Zipf { span, align, zipf } => {
                let rank = zipf.sample(&mut || unit_f64(rng));
                fit((rank - 1) * *align, size, *span, *align)
            }
            AddressSampler::HotCold {
                span,
                align,
                hot_slots,
                cold_slots,
                hot_share,
            } => {
                let slot = if unit_f64(rng) < *hot_share {
                    below(rng, *hot_slots)
                } else {
                    *hot_slots + below(rng, *cold_slots)
                };
                fit(slot * *align, size, *span, *align)
            }
            AddressSampler::Sequential {
                region,
                cursors,
                turn,
            } => {
                let stream = *turn;
                *turn = (*turn + 1) % cursors.len();
                let cursor = &mut cursors[stream];
                if cursor.saturating_add(size) > *region {
                    *cursor = 0;
                }
                let offset = stream as u64 * *region + *cursor;
                *cursor += size;
                offset
            }
            AddressSampler::HotUnits {
                span,
                align,
                unit,
                units,
                hot_units,
                rounds,
                hot_share,
            } => {
                let u = if unit_f64(rng) < *hot_share {
                    below(rng, *hot_units)
                } else {
                    *hot_units + below(rng, *units - *hot_units)
                };
                let piece = below(rng, *rounds) * *units + u;
                let within = below(rng, *unit / *align) * *align;
                fit(piece * *unit + within, size, *span, *align)
            }
            AddressSampler::Runs {
                span,
                align,
                slots,
                end_run,
                next,
            } => {
                let offset = match *next {
                    Some(at) if at.saturating_add(size) <= *span => at,
                    _ => fit(below(rng, *slots) * *align, size, *span, *align),
                };
                // Geometric run length: after each request the run ends with this probability.
                *next = (unit_f64(rng) >= *end_run).then_some(offset + size);
                offset
            }
            AddressSampler::RegionBursts {
                align,
                region,
                regions,
                slots,
                burst,
                current,
                left,
            } => {
                if *left == 0 {
                    // A new burst, to any region but the previous burst's.
                    *current = Some(match *current {
                        Some(previous) if *regions > 1 => {
                            let r = below(rng, *regions - 1);
                            r + u64::from(r >= previous)
                        }
                        _ => below(rng, *regions),
                    });
                    *left = *burst;
                }
                *left -= 1;
                let start = current.unwrap_or(0) * *region;
                start + fit(below(rng, *slots) * *align, size, *region, *align)
            }
            AddressSampler::Mix { pick, parts } => {
                let i = pick.sample(rng);
                parts[i].sample(rng, size)
            }
        }
    }
}

/// Rewrite locality: remembers the last writes and sends a share of new writes back to one.
///
/// The drawn distance is the rewrite's *reuse* distance (writes since its address was last
/// written, as measured on traces): a remembered write whose address was written again
/// later is not a candidate, since copying it would give a shorter distance. The distance is
/// redrawn in its bucket up to `REDRAWS` times; then the write keeps its fresh address.
#[derive(Debug, Clone)]
struct RewriteSampler {
    /// Upper ends of the distance buckets (writes back).
    bounds: Vec<u64>,
    /// Cumulative share of writes up to and including each bucket.
    cumulative: Vec<f64>,
    rng: ChaCha8Rng,
    /// The latest writes, newest at the back, at most `bounds.last()`: offset, size, and
    /// whether a later write copied it (its address has a newer write).
    history: VecDeque<RememberedWrite>,
}

#[derive(Debug, Clone, Copy)]
struct RememberedWrite {
    offset: u64,
    size: u64,
    superseded: bool,
}

/// Draws of a distance within its bucket before a rewrite gives up (see `RewriteSampler`).
const REDRAWS: u32 = 8;

impl RewriteSampler {
    fn new(spec: &RewriteSpec, rng: ChaCha8Rng) -> RewriteSampler {
        let mut total = 0.0;
        let cumulative = spec
            .fraction_of_writes
            .iter()
            .map(|f| {
                total += f;
                total
            })
            .collect();
        RewriteSampler {
            bounds: spec.distance_upper_writes.clone(),
            cumulative,
            rng,
            history: VecDeque::new(),
        }
    }

    /// Where this write goes: `(offset, size)` of an earlier write, or the fresh pair given.
    fn place(&mut self, offset: u64, size: u64) -> (u64, u64) {
        let u = unit_f64(&mut self.rng);
        let bucket = self.cumulative.partition_point(|c| *c <= u);
        let mut chosen = (offset, size);
        if bucket < self.bounds.len() {
            let low = if bucket == 0 {
                0
            } else {
                self.bounds[bucket - 1]
            };
            for _ in 0..REDRAWS {
                let distance = low + 1 + below(&mut self.rng, self.bounds[bucket] - low);
                let Some(i) = self.history.len().checked_sub(distance as usize) else {
                    continue;
                };
                let earlier = &mut self.history[i];
                if !earlier.superseded {
                    earlier.superseded = true;
                    chosen = (earlier.offset, earlier.size);
                    break;
                }
            }
        }
        let keep = *self.bounds.last().unwrap_or(&0) as usize;
        if self.history.len() == keep {
            self.history.pop_front();
        }
        self.history.push_back(RememberedWrite {
            offset: chosen.0,
            size: chosen.1,
            superseded: false,
        });
        chosen
    }
}

/// Move a request that would run past the span down so it ends inside it, keeping alignment.
fn fit(offset: u64, size: u64, span: u64, align: u64) -> u64 {
    // Saturating: a span near u64::MAX must not wrap around to a small end.
    if offset.saturating_add(size) <= span {
        offset
    } else {
        (span - size) / align * align
    }
}
