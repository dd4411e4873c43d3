//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

use flashlane_core::config::Config;
use flashlane_core::stats::Summary;
use flashlane_core::trace::TraceFormat;
use flashlane_core::RunSpec;
use rand::{Rng, SeedableRng};

/// (time ns, byte offset, bytes, is_read)
pub type Req = (u64, u64, u64, bool);

/// A fresh directory in the system's temporary directory, removed with everything in it when
/// dropped: at the end of the test that holds it, whether the test passes or fails. Derefs to
/// its path.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new empty directory `flashlane-{name}-{pid}-{n}`, unique per call.
    pub fn new(name: &str) -> ScratchDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("flashlane-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        ScratchDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Write `requests` as an MQSim trace in a fresh temporary file, unique per call (tests of one
/// process run in parallel and may reuse a name). The caller removes it; [`mqsim_trace_in`] a
/// [`ScratchDir`] is removed for it.
pub fn mqsim_trace(name: &str, requests: &[Req]) -> PathBuf {
    mqsim_trace_in(&std::env::temp_dir(), name, requests)
}

/// Write `requests` as an MQSim trace in `dir`, under a name unique per call.
pub fn mqsim_trace_in(dir: &Path, name: &str, requests: &[Req]) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("flashlane-{}-{n}-{name}.mqsim", std::process::id()));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for (t, offset, bytes, read) in requests {
        assert!(offset % 512 == 0 && bytes % 512 == 0);
        writeln!(
            file,
            "{t} 0 {} {} {}",
            offset / 512,
            bytes / 512,
            u8::from(*read)
        )
        .unwrap();
    }
    file.flush().unwrap();
    path
}

/// A trace shipped in the repository's `traces/`.
pub fn trace_path(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/")).join(name)
}

pub fn preset(name: &str, overrides: &[(&str, &str)]) -> Config {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_preset(name, &overrides).unwrap()
}

/// The error of a preset with overrides that must be refused.
pub fn preset_error(name: &str, overrides: &[(&str, &str)]) -> String {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_preset(name, &overrides)
        .unwrap_err()
        .to_string()
}

pub fn spec(config: Config, trace: PathBuf) -> RunSpec {
    RunSpec::new(config, trace, Some(TraceFormat::Mqsim))
}

/// A summary as JSON without what may differ between two runs of the same inputs (the wall
/// clock, the trace file's name).
pub fn comparable(s: &Summary) -> String {
    let mut v = serde_json::to_value(s).unwrap();
    v.as_object_mut().unwrap().remove("engine");
    v["precondition"].as_object_mut().unwrap().remove("wall_s");
    v["sources"][0].as_object_mut().unwrap().remove("path");
    v["trace"].as_object_mut().unwrap().remove("path");
    serde_json::to_string(&v).unwrap()
}

pub fn run(config: Config, name: &str, requests: &[Req]) -> Summary {
    let path = mqsim_trace(name, requests);
    let summary = flashlane_core::run(&spec(config, path.clone())).unwrap();
    let _ = std::fs::remove_file(path);
    summary
}

/// A small `sos` drive so garbage collection runs within a few thousand writes.
pub fn sos_small_drive(extra: &[(&str, &str)]) -> Config {
    let mut overrides = vec![
        ("geometry.channels", "2"),
        ("geometry.chips_per_channel", "2"),
        ("geometry.dies_per_chip", "1"),
        ("geometry.planes_per_die", "2"),
        ("geometry.blocks_per_plane", "32"),
        ("geometry.pages_per_block", "16"),
        ("geometry.page_bytes", "4096"),
        ("ftl.overprovisioning_fraction", "0.2"),
        ("ftl.gc_threshold_fraction", "0.1"),
        ("device.scheduler.kind", "sos"),
    ];
    overrides.extend_from_slice(extra);
    preset("mqsim-ssd", &overrides)
}

/// Random requests over `span_bytes`, up to `gap_ns` apart (a small span makes overwrites meet their queued
/// predecessors).
pub fn random_requests(
    seed: u64,
    n: usize,
    span_bytes: u64,
    read_share: f64,
    gap_ns: u64,
) -> Vec<Req> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut t = 0;
    (0..n)
        .map(|_| {
            t += rng.random_range(0..gap_ns);
            let pages = rng.random_range(1..=4u64);
            let offset = rng.random_range(0..span_bytes / 4096 - pages) * 4096;
            (t, offset, pages * 4096, rng.random_bool(read_share))
        })
        .collect()
}

/// Timings and a small drive of the `ssdsim-mlc-8x8` preset (the PIQ and VIOS papers' SSD),
/// for tests that derive latencies by hand: command 175 ns, tR 20 us, tPROG 200 us, channel
/// 0.04 bytes/ns (a 2 KiB page crosses in 51,200 ns, a 512-byte sector in 12,800 ns).
pub mod ssdsim_8x8 {
    use flashlane_core::config::Config;

    pub const CMD: u64 = 175;
    pub const T_R: u64 = 20_000;
    pub const T_PROG: u64 = 200_000;
    pub const PAGE: u64 = 2048;
    pub const SECTOR: u64 = 512;
    pub const XFER: u64 = 51_200;
    pub const SECTOR_XFER: u64 = 12_800;
    pub const READ: u64 = CMD + T_R + XFER;
    pub const WRITE: u64 = CMD + XFER + T_PROG;

    /// The preset with fewer blocks (quick to build) and no preconditioning, plus `extra`.
    pub fn drive(extra: &[(&str, &str)]) -> Config {
        let mut o = vec![
            ("geometry.blocks_per_plane", "32"),
            ("precondition.write_trace_footprint", "false"),
        ];
        o.extend_from_slice(extra);
        super::preset("ssdsim-mlc-8x8", &o)
    }

    /// Microseconds of a summary, as whole nanoseconds.
    pub fn ns(us: f64) -> u64 {
        (us * 1000.0).round() as u64
    }
}
