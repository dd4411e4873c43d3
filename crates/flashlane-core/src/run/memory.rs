//! The memory a run allocates up front, estimated from its config before anything is
//! allocated, so that a config too large for the machine is refused with the estimate instead
//! of aborting on a failed allocation (or swapping the machine to a halt).

use super::RunSpec;
use crate::device::WriteBuffer;
use crate::ftl::Plane;
use crate::Error;

/// The most a run may allocate up front whatever the machine has: 64 GiB. Far above any
/// preset (mqsim-ssd's FTL records are about 15 MiB); a config past it is a typo.
pub const MAX_UPFRONT_BYTES: u64 = 64 << 30;

/// Bytes a run allocates before its first request, by part (parts of 0 bytes left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEstimate {
    pub parts: Vec<(&'static str, u64)>,
}

impl MemoryEstimate {
    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |sum, (_, bytes)| sum.saturating_add(*bytes))
    }
}

/// What `spec` allocates up front: the FTL's per-block and per-plane records, the footprint
/// bitmap of the preconditioning pass, the write buffer's slots, the process-variation and
/// cached-mapping-table tables, and the integrity shadow. Memory that grows with the pages a
/// trace touches (mapping chunks, reverse maps) is not in it. Call after `Config::validate`.
pub fn upfront_memory(spec: &RunSpec) -> MemoryEstimate {
    let config = &spec.config;
    let g = &config.geometry;
    let planes = u64::from(g.planes());
    let blocks = planes * u64::from(g.blocks_per_plane);
    let physical = g.physical_pages();
    let logical = (physical as f64 * (1.0 - config.ftl.overprovisioning_fraction)).floor() as u64;
    let mut parts = vec![
        (
            "FTL block and plane records",
            planes.saturating_mul(Plane::upfront_bytes(g.blocks_per_plane, g.pages_per_block))
                + planes * 8
                + u64::from(g.chips()) * 4,
        ),
        (
            "preconditioning footprint bitmap",
            if config.precondition.write_trace_footprint {
                logical.div_ceil(64) * 8
            } else {
                0
            },
        ),
        (
            "write buffer slots",
            match config.device.write_buffer_bytes / u64::from(g.page_bytes) {
                0 => 0,
                pages => WriteBuffer::upfront_bytes(pages),
            },
        ),
        (
            "process-variation block table",
            if config.variation.enabled {
                blocks * 5
            } else {
                0
            },
        ),
        (
            "cached mapping table's translation-page tables",
            if config.ftl.mapping_cache_bytes > 0 {
                // At least one entry per translation page (entries are at least 8 bytes).
                logical.div_ceil(u64::from(g.page_bytes) / 8) * 5
            } else {
                0
            },
        ),
        (
            "integrity shadow (--check-integrity)",
            if spec.check_integrity {
                physical * 4
            } else {
                0
            },
        ),
    ];
    parts.retain(|(_, bytes)| *bytes > 0);
    MemoryEstimate { parts }
}

/// The machine's available memory (`MemAvailable` of /proc/meminfo), if known.
fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The limit up-front memory is held to, and what it is.
fn limit() -> (u64, &'static str) {
    match available_bytes() {
        Some(available) if available < MAX_UPFRONT_BYTES => (
            available,
            "the memory available on this machine (MemAvailable)",
        ),
        _ => (
            MAX_UPFRONT_BYTES,
            "flashlane's limit for up-front memory (run::MAX_UPFRONT_BYTES)",
        ),
    }
}

/// Refuse runs made `at_once` at a time (`compare`, `sweep` on several threads) when the
/// largest `at_once` of them together exceed the limit of [`check_memory`].
pub fn check_parallel_memory(specs: &[RunSpec], at_once: usize) -> Result<(), Error> {
    let mut totals: Vec<u64> = specs.iter().map(|s| upfront_memory(s).total()).collect();
    totals.sort_unstable_by(|a, b| b.cmp(a));
    let together = totals
        .iter()
        .take(at_once.max(1))
        .fold(0u64, |sum, t| sum.saturating_add(*t));
    let (limit, what) = limit();
    if at_once < 2 || together <= limit {
        return Ok(());
    }
    Err(Error::Config(format!(
        "{} runs at once need about {} before their first requests, more than the {} of \
         {what}; nothing was allocated. Run fewer at once (--jobs) or shrink the config",
        at_once.min(specs.len()),
        gib(together),
        gib(limit)
    )))
}

/// Refuse `spec` when its up-front memory exceeds [`MAX_UPFRONT_BYTES`] or the machine's
/// available memory, naming the estimate and its largest parts.
pub fn check_memory(spec: &RunSpec) -> Result<(), Error> {
    let estimate = upfront_memory(spec);
    let total = estimate.total();
    let (limit, what) = limit();
    if total <= limit {
        return Ok(());
    }
    let parts: Vec<String> = estimate
        .parts
        .iter()
        .map(|(name, bytes)| format!("{name} {}", gib(*bytes)))
        .collect();
    Err(Error::Config(format!(
        "this config needs about {} before the first request ({}), more than the {} of {what}; \
         nothing was allocated. Shrink the geometry (geometry.blocks_per_plane, \
         geometry.pages_per_block, ...) or device.write_buffer_bytes",
        gib(total),
        parts.join(", "),
        gib(limit)
    )))
}
