//! A named workload stand-in and the figures it was built to match. Its own module so the
//! catalogue (`profiles.rs`) and the SOS stand-ins (`sos_profiles.rs`) share the type without
//! importing each other.

use super::SyntheticSpec;

/// The figures a profile was built to match, as published.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// Read share (0.36 for "36 %").
    pub read_fraction: f64,
    /// Mean request size in bytes (KB taken as 1024 bytes), when published.
    pub mean_size_bytes: Option<f64>,
    /// Mean inter-arrival time in nanoseconds, when published.
    pub mean_interarrival_ns: Option<f64>,
    /// Number of requests, when published.
    pub requests: Option<u64>,
}

/// A named workload stand-in.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Name as the paper spells it (e.g. `hm_0`, `YCSB_B`, `ssd-00`).
    pub name: String,
    /// Paper, table and row the figures come from.
    pub source: String,
    pub published: Published,
    /// The generator spec; `spec.label` is the profile's label.
    pub spec: SyntheticSpec,
}
