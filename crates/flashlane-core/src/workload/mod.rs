//! Synthetic workloads: a seeded, streaming generator of [`TraceRecord`]s from a small spec,
//! and named stand-ins for the workloads the papers characterise (see `docs/workloads.md`).
//!
//! A [`SyntheticSpec`] says how requests arrive, how big they are, where they land and how
//! many reads there are. [`SyntheticReader`] turns it into records on demand (constant
//! memory), the same records byte for byte for the same spec.
//!
//! [`SyntheticReader`] deliberately does **not** implement [`crate::trace::TraceReader`]: that
//! trait promises an on-disk layout (`format()`) and a file (`path()`), and a generator has
//! neither; answering with a made-up layout or path would mislead every summary that echoes
//! them. It offers the same `next_record()` signature instead (and `Iterator`), so it plugs
//! into anything that pulls records through a closure, e.g.
//! `let mut next = || reader.next_record();`.

mod export;
mod generator;
mod profiles;
mod zipf;

use serde::{Deserialize, Serialize};

use crate::trace::{TraceError, TraceReader, TraceRecord};
use crate::Error;

pub use export::{write_trace, ExportError, OutputFormat};
pub use generator::SyntheticReader;
pub use profiles::{profile, profiles, Profile, Published};
pub use zipf::Zipf;

/// Everything a synthetic workload needs. Keys carry their unit in their name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSpec {
    /// What this workload stands for; printed with anything produced from it.
    #[serde(default = "default_label")]
    pub label: String,
    /// Number of records to generate.
    pub requests: u64,
    /// Share of reads (0.36 = 36 % reads).
    pub read_fraction: f64,
    /// Device number every record carries.
    #[serde(default)]
    pub device: u32,
    /// Stream number every record carries.
    #[serde(default)]
    pub stream: u32,
    /// Streams the records are dealt to in turn: record i carries `stream + i mod
    /// stream_count` (one stream per thread of a multithreaded benchmark, for per-stream
    /// schedulers such as CFQ and AS). 1 = every record carries `stream`.
    #[serde(default = "default_stream_count", skip_serializing_if = "is_one")]
    pub stream_count: u32,
    /// Seed of every random stream of the generator.
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub arrival: ArrivalSpec,
    pub size: SizeSpec,
    pub address: AddressSpec,
}

fn default_label() -> String {
    "synthetic workload".into()
}
fn default_seed() -> u64 {
    1
}
fn default_stream_count() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn default_align() -> u64 {
    4096
}

/// When requests arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalSpec {
    /// Exponential gaps with this mean (a Poisson process); the first record arrives at 0.
    Poisson { mean_interarrival_ns: f64 },
    /// The same gap between every two records; the first record arrives at 0.
    Fixed { interarrival_ns: u64 },
    /// No arrival times: every record carries time 0, and a closed-loop replay keeps
    /// `queue_depth_requests` requests outstanding, issuing the next one when one completes.
    ClosedLoop { queue_depth_requests: u32 },
}

/// How many bytes a request moves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeSpec {
    /// Every request moves `bytes`.
    Fixed { bytes: u64 },
    /// Equally likely: every multiple of `align_bytes` from `min_bytes` to `max_bytes`.
    Uniform {
        min_bytes: u64,
        max_bytes: u64,
        align_bytes: u64,
    },
    /// `sizes_bytes[i]` with probability `weights[i] / sum(weights)`.
    Empirical {
        sizes_bytes: Vec<u64>,
        weights: Vec<f64>,
    },
}

/// Where requests land. Every pattern picks a start offset inside `[0, span_bytes)`; a request
/// that would run past `span_bytes` is moved down (keeping its alignment) so that it ends
/// inside the span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AddressSpec {
    /// Every `align_bytes` slot of the span equally likely.
    Uniform { span_bytes: u64, align_bytes: u64 },
    /// Slot k (k = 1 at offset 0) with probability proportional to k^-theta.
    Zipf {
        span_bytes: u64,
        align_bytes: u64,
        theta: f64,
    },
    /// The first `hot_fraction_of_span` of the slots receive `hot_fraction_of_accesses` of the
    /// requests, uniformly; the other slots share the rest, uniformly.
    HotCold {
        span_bytes: u64,
        #[serde(default = "default_align")]
        align_bytes: u64,
        hot_fraction_of_span: f64,
        hot_fraction_of_accesses: f64,
    },
    /// `streams` sequential streams, each in its own equal region of the span, served in
    /// turn; each request starts where the stream's previous one ended, wrapping to the start
    /// of the region when the next request would not fit.
    Sequential { span_bytes: u64, streams: u32 },
    /// Each request picks one component with probability proportional to its weight.
    Mix { components: Vec<MixComponent> },
}

/// One weighted part of a [`AddressSpec::Mix`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixComponent {
    pub weight: f64,
    pub pattern: AddressSpec,
}

impl SyntheticSpec {
    /// Parse a TOML spec (named `origin` in errors) and check its values.
    pub fn from_toml(text: &str, origin: &str) -> Result<SyntheticSpec, Error> {
        let spec: SyntheticSpec =
            toml::from_str(text).map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        spec.validate()
            .map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        Ok(spec)
    }

    /// Read and parse a TOML spec file.
    pub fn from_file(path: &std::path::Path) -> Result<SyntheticSpec, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::Config(format!(
                "{}: cannot read workload spec: {e}",
                path.display()
            ))
        })?;
        SyntheticSpec::from_toml(&text, &path.display().to_string())
    }

    /// The spec as TOML (parses back to an equal spec).
    pub fn to_toml(&self) -> Result<String, Error> {
        toml::to_string(self).map_err(|e| Error::Config(format!("workload spec: {e}")))
    }

    /// Check what serde cannot. Messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.requests == 0 {
            return Err("requests must be at least 1".into());
        }
        if self.stream_count == 0 {
            return Err("stream_count must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.read_fraction) {
            return Err(format!(
                "read_fraction must be in [0, 1], got {}",
                self.read_fraction
            ));
        }
        match &self.arrival {
            ArrivalSpec::Poisson {
                mean_interarrival_ns,
            } => {
                if !(mean_interarrival_ns.is_finite() && *mean_interarrival_ns >= 0.0) {
                    return Err(format!(
                        "arrival.mean_interarrival_ns must be a non-negative number, got {mean_interarrival_ns}"
                    ));
                }
            }
            ArrivalSpec::Fixed { .. } => {}
            ArrivalSpec::ClosedLoop {
                queue_depth_requests,
            } => {
                if *queue_depth_requests == 0 {
                    return Err("arrival.queue_depth_requests must be at least 1".into());
                }
            }
        }
        self.size.validate()?;
        self.address.validate("address", self.size.max_bytes())
    }
}

impl SizeSpec {
    /// The largest size this distribution can give (0 if it is invalid).
    pub fn max_bytes(&self) -> u64 {
        match self {
            SizeSpec::Fixed { bytes } => *bytes,
            SizeSpec::Uniform { max_bytes, .. } => *max_bytes,
            SizeSpec::Empirical {
                sizes_bytes,
                weights,
            } => sizes_bytes
                .iter()
                .zip(weights)
                .filter(|(_, w)| **w > 0.0)
                .map(|(s, _)| *s)
                .max()
                .unwrap_or(0),
        }
    }

    /// The mean size in bytes.
    pub fn mean_bytes(&self) -> f64 {
        match self {
            SizeSpec::Fixed { bytes } => *bytes as f64,
            SizeSpec::Uniform {
                min_bytes,
                max_bytes,
                align_bytes,
            } => {
                let steps = (max_bytes - min_bytes) / align_bytes.max(&1);
                *min_bytes as f64 + (steps * align_bytes) as f64 / 2.0
            }
            SizeSpec::Empirical {
                sizes_bytes,
                weights,
            } => {
                let total: f64 = weights.iter().sum();
                sizes_bytes
                    .iter()
                    .zip(weights)
                    .map(|(s, w)| *s as f64 * w)
                    .sum::<f64>()
                    / total
            }
        }
    }

    /// Check the values. Messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            SizeSpec::Fixed { bytes } => {
                if *bytes == 0 {
                    return Err("size.bytes must be at least 1".into());
                }
            }
            SizeSpec::Uniform {
                min_bytes,
                max_bytes,
                align_bytes,
            } => {
                if *align_bytes == 0 {
                    return Err("size.align_bytes must be at least 1".into());
                }
                if *min_bytes == 0 {
                    return Err("size.min_bytes must be at least 1".into());
                }
                if min_bytes > max_bytes {
                    return Err(format!(
                        "size.min_bytes ({min_bytes}) must not exceed size.max_bytes ({max_bytes})"
                    ));
                }
                if min_bytes % align_bytes != 0 || max_bytes % align_bytes != 0 {
                    return Err(format!(
                        "size.min_bytes and size.max_bytes must be multiples of size.align_bytes ({align_bytes})"
                    ));
                }
            }
            SizeSpec::Empirical {
                sizes_bytes,
                weights,
            } => {
                if sizes_bytes.is_empty() {
                    return Err("size.sizes_bytes must not be empty".into());
                }
                if sizes_bytes.len() != weights.len() {
                    return Err(format!(
                        "size.weights must have one entry per size.sizes_bytes entry ({} vs {})",
                        weights.len(),
                        sizes_bytes.len()
                    ));
                }
                if let Some(i) = sizes_bytes.iter().position(|s| *s == 0) {
                    return Err(format!("size.sizes_bytes[{i}] must be at least 1"));
                }
                if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
                    return Err(format!(
                        "size.weights[{i}] must be a non-negative number, got {}",
                        weights[i]
                    ));
                }
                if weights.iter().sum::<f64>() <= 0.0 {
                    return Err("size.weights must not all be zero".into());
                }
            }
        }
        Ok(())
    }

    /// An empirical distribution of the request sizes of a trace, streamed through `reader`
    /// (memory grows with the number of distinct sizes, not with the trace). Reads at most
    /// `max_records` records when given.
    pub fn empirical_from_trace(
        reader: &mut dyn TraceReader,
        max_records: Option<u64>,
    ) -> Result<SizeSpec, Error> {
        let mut counts = std::collections::BTreeMap::<u64, u64>::new();
        let mut n = 0u64;
        loop {
            // Not `is_none_or`: the crate's rust-version (1.80) predates it.
            if max_records.is_some_and(|max| n >= max) {
                break;
            }
            let Some(record) = reader.next_record()? else {
                break;
            };
            *counts.entry(record.size_bytes).or_default() += 1;
            n += 1;
        }
        if counts.is_empty() {
            return Err(Error::Workload(format!(
                "{}: no records to build a size distribution from",
                reader.path().display()
            )));
        }
        Ok(SizeSpec::Empirical {
            sizes_bytes: counts.keys().copied().collect(),
            weights: counts.values().map(|c| *c as f64).collect(),
        })
    }
}

impl AddressSpec {
    /// Check the values; `key` is this pattern's place in the spec, `max_size` the largest
    /// request it must hold. Messages name the key.
    fn validate(&self, key: &str, max_size: u64) -> Result<(), String> {
        let span_and_align = |span: u64, align: u64| -> Result<(), String> {
            if align == 0 {
                return Err(format!("{key}.align_bytes must be at least 1"));
            }
            if span < align {
                return Err(format!(
                    "{key}.span_bytes ({span}) must be at least {key}.align_bytes ({align})"
                ));
            }
            if span < max_size {
                return Err(format!(
                    "{key}.span_bytes ({span}) must hold the largest request ({max_size} bytes)"
                ));
            }
            Ok(())
        };
        match self {
            AddressSpec::Uniform {
                span_bytes,
                align_bytes,
            } => span_and_align(*span_bytes, *align_bytes),
            AddressSpec::Zipf {
                span_bytes,
                align_bytes,
                theta,
            } => {
                span_and_align(*span_bytes, *align_bytes)?;
                if !(theta.is_finite() && *theta > 0.0 && *theta <= 100.0) {
                    return Err(format!(
                        "{key}.theta must be in (0, 100] (use kind = \"uniform\" for 0), got {theta}"
                    ));
                }
                Ok(())
            }
            AddressSpec::HotCold {
                span_bytes,
                align_bytes,
                hot_fraction_of_span,
                hot_fraction_of_accesses,
            } => {
                span_and_align(*span_bytes, *align_bytes)?;
                if span_bytes / align_bytes < 2 {
                    return Err(format!(
                        "{key}.span_bytes must hold at least two {key}.align_bytes slots (one hot, one cold)"
                    ));
                }
                if !(*hot_fraction_of_span > 0.0 && *hot_fraction_of_span < 1.0) {
                    return Err(format!(
                        "{key}.hot_fraction_of_span must be in (0, 1), got {hot_fraction_of_span}"
                    ));
                }
                if !(0.0..=1.0).contains(hot_fraction_of_accesses) {
                    return Err(format!(
                        "{key}.hot_fraction_of_accesses must be in [0, 1], got {hot_fraction_of_accesses}"
                    ));
                }
                Ok(())
            }
            AddressSpec::Sequential {
                span_bytes,
                streams,
            } => {
                if *streams == 0 {
                    return Err(format!("{key}.streams must be at least 1"));
                }
                let region = sequential_region_bytes(*span_bytes, *streams);
                if region == 0 || region < max_size {
                    return Err(format!(
                        "{key}.span_bytes ({span_bytes}) split into {streams} streams gives regions of {region} bytes; each must hold the largest request ({max_size} bytes)"
                    ));
                }
                Ok(())
            }
            AddressSpec::Mix { components } => {
                if components.is_empty() {
                    return Err(format!("{key}.components must not be empty"));
                }
                for (i, c) in components.iter().enumerate() {
                    if !(c.weight.is_finite() && c.weight >= 0.0) {
                        return Err(format!(
                            "{key}.components[{i}].weight must be a non-negative number, got {}",
                            c.weight
                        ));
                    }
                    c.pattern
                        .validate(&format!("{key}.components[{i}].pattern"), max_size)?;
                }
                if components.iter().map(|c| c.weight).sum::<f64>() <= 0.0 {
                    return Err(format!("{key}.components weights must not all be zero"));
                }
                Ok(())
            }
        }
    }
}

/// Size of one sequential stream's region: an equal share of the span, rounded down to whole
/// 512-byte sectors so every stream starts on a sector (sector-based layouts can hold it).
pub(crate) fn sequential_region_bytes(span_bytes: u64, streams: u32) -> u64 {
    (span_bytes / u64::from(streams.max(1))) / 512 * 512
}

/// Measured characteristics of a record stream, in the units the papers report.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Characteristics {
    pub records: u64,
    pub reads: u64,
    /// Mean request size in bytes.
    pub mean_size_bytes: f64,
    /// (last arrival - first arrival) / (records - 1); 0 for fewer than two records.
    pub mean_interarrival_ns: f64,
}

impl Characteristics {
    /// Share of reads.
    pub fn read_fraction(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.reads as f64 / self.records as f64
        }
    }

    /// Stream every record of `next` (until it returns `Ok(None)`) and measure it.
    pub fn measure(
        next: &mut dyn FnMut() -> Result<Option<TraceRecord>, TraceError>,
    ) -> Result<Characteristics, TraceError> {
        let mut c = Characteristics::default();
        let mut bytes = 0u128;
        let (mut first, mut last) = (0u64, 0u64);
        while let Some(r) = next()? {
            if c.records == 0 {
                first = r.time_ns;
            }
            last = r.time_ns;
            c.records += 1;
            c.reads += u64::from(r.op == crate::trace::Op::Read);
            bytes += u128::from(r.size_bytes);
        }
        if c.records > 0 {
            c.mean_size_bytes = bytes as f64 / c.records as f64;
        }
        if c.records > 1 {
            c.mean_interarrival_ns = last.saturating_sub(first) as f64 / (c.records - 1) as f64;
        }
        Ok(c)
    }
}
